/* supervox-cli slic under mpirun: the MPI side of SvStreamRanks and the
 * loop over the files on every rank. Only the main thread calls MPI. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-mpi.h"

#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-common.h"
#include "supervox/sv-error.h"
#include "slic-batch.h"
#include "slic-stream.h"

/* Messages carry at most this many labels: MPI counts are ints. */
#define SV_MPI_MAX_LABELS ((gsize)1 << 28)

enum
{
  TAG_LABELS = 1,
  TAG_FAILED = 2,
};

static struct
{
  gboolean initialized;
  /* The ranks that run a file together: every rank, or the group of a
   * batch's files (rank and size within it). */
  MPI_Comm comm;
  int rank, size;
  int world_rank, world_size;
  gboolean met;   /* the ranks agreed once: the first meeting is behind */
  int cores;      /* this rank's share of the host's cores */
  int local_size; /* the ranks on this host */
  SvStreamRanks ranks;
} mpi;

static gboolean
mpi_agree (gpointer self, const GError *local, GError **error)
{
  int mine = local == NULL ? mpi.size : mpi.rank;
  int first, header[3] = { 0, 0, 0 };
  g_autofree char *message = NULL;

  /* The lowest failed rank speaks for all. */
  MPI_Allreduce (&mine, &first, 1, MPI_INT, MPI_MIN, mpi.comm);
  if (first == mpi.size)
    return TRUE;
  if (mpi.rank == first)
    {
      header[0] = (int)strlen (local->message) + 1;
      header[1] = g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      header[2] = local->domain == SV_ENGINE_ERROR ? local->code : SV_ENGINE_ERROR_IO;
      message = g_strdup (local->message);
    }
  MPI_Bcast (header, 3, MPI_INT, first, mpi.comm);
  if (mpi.rank != first)
    message = g_malloc (header[0]);
  MPI_Bcast (message, header[0], MPI_CHAR, first, mpi.comm);
  if (header[1])
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "rank %d: %s", first, message);
  else
    g_set_error (error, SV_ENGINE_ERROR, header[2], "rank %d: %s", first, message);
  return FALSE;
}

static void
mpi_sum_int64 (gpointer self, gint64 *values, gsize n)
{
  for (gsize done = 0; done < n; done += SV_MPI_MAX_LABELS)
    MPI_Allreduce (MPI_IN_PLACE, values + done, (int)MIN (n - done, SV_MPI_MAX_LABELS), MPI_INT64_T,
                   MPI_SUM, mpi.comm);
}

static void
mpi_max_int64 (gpointer self, gint64 *values, gsize n)
{
  for (gsize done = 0; done < n; done += SV_MPI_MAX_LABELS)
    MPI_Allreduce (MPI_IN_PLACE, values + done, (int)MIN (n - done, SV_MPI_MAX_LABELS), MPI_INT64_T,
                   MPI_MAX, mpi.comm);
}

static void
mpi_max_float (gpointer self, float *values, gsize n)
{
  for (gsize done = 0; done < n; done += SV_MPI_MAX_LABELS)
    MPI_Allreduce (MPI_IN_PLACE, values + done, (int)MIN (n - done, SV_MPI_MAX_LABELS), MPI_FLOAT,
                   MPI_MAX, mpi.comm);
}

static void
mpi_gather (gpointer self, gconstpointer mine, gsize bytes, gpointer all)
{
  MPI_Allgather (mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, mpi.comm);
}

static void
mpi_send_labels (gpointer self, const gint32 *labels, gsize n, gboolean ok)
{
  if (!ok)
    {
      MPI_Send (NULL, 0, MPI_INT32_T, 0, TAG_FAILED, mpi.comm);
      return;
    }
  for (gsize done = 0; done < n; done += SV_MPI_MAX_LABELS)
    MPI_Send (labels + done, (int)MIN (n - done, SV_MPI_MAX_LABELS), MPI_INT32_T, 0, TAG_LABELS,
              mpi.comm);
}

/* In pieces that MPI's int count can hold. */
static void
mpi_broadcast (gpointer self, guint root, gpointer data, gsize bytes)
{
  for (gsize done = 0; done < bytes; done += (gsize)G_MAXINT32)
    MPI_Bcast ((guint8 *)data + done, (int)MIN (bytes - done, (gsize)G_MAXINT32), MPI_BYTE,
               (int)root, mpi.comm);
}

static void
mpi_exchange (gpointer self, gconstpointer send, const gsize *send_bytes, gpointer recv,
              const gsize *recv_bytes)
{
  g_autofree int *counts = g_new (int, 4 * (gsize)mpi.size);
  int *send_counts = counts, *send_at = counts + mpi.size;
  int *recv_counts = counts + 2 * mpi.size, *recv_at = counts + 3 * mpi.size;
  gsize s = 0, r = 0;

  for (int i = 0; i < mpi.size; i++)
    {
      send_counts[i] = (int)send_bytes[i];
      recv_counts[i] = (int)recv_bytes[i];
      send_at[i] = (int)s;
      recv_at[i] = (int)r;
      s += send_bytes[i];
      r += recv_bytes[i];
    }
  MPI_Alltoallv (send, send_counts, send_at, MPI_BYTE, recv, recv_counts, recv_at, MPI_BYTE,
                 mpi.comm);
}

static gboolean
mpi_recv_labels (gpointer self, guint from, gint32 *labels, gsize n)
{
  for (gsize done = 0; done < n; done += SV_MPI_MAX_LABELS)
    {
      MPI_Status status;

      MPI_Recv (labels + done, (int)MIN (n - done, SV_MPI_MAX_LABELS), MPI_INT32_T, (int)from,
                MPI_ANY_TAG, mpi.comm, &status);
      if (status.MPI_TAG == TAG_FAILED)
        return FALSE;
    }
  return TRUE;
}

/* Each rank takes an equal share of its host's cores. mpirun binds a rank
 * to one core by default when it starts two or fewer, and to a socket
 * otherwise: the rank's threads then share that one core or crowd the
 * other ranks' threads. A rank bound to fewer cores than its share is
 * widened to a block of the host's cores of its own. */
static void
share_cores (void)
{
  MPI_Comm host;
  int local_rank = 0, local_size = 1;
  const long online = sysconf (_SC_NPROCESSORS_ONLN);
  cpu_set_t bound, share;

  if (MPI_Comm_split_type (MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host)
      == MPI_SUCCESS)
    {
      MPI_Comm_rank (host, &local_rank);
      MPI_Comm_size (host, &local_size);
      MPI_Comm_free (&host);
    }
  mpi.cores = (int)MAX (online / MAX (local_size, 1), 1);
  mpi.local_size = MAX (local_size, 1);
  if (online >= 1 && online <= CPU_SETSIZE && sched_getaffinity (0, sizeof bound, &bound) == 0
      && CPU_COUNT (&bound) < mpi.cores)
    {
      CPU_ZERO (&share);
      for (long c = (long)local_rank * mpi.cores;
           c < (long)(local_rank + 1) * mpi.cores && c < online; c++)
        CPU_SET ((int)c, &share);
      /* A container may not allow those cores: the rank keeps its binding
       * and runs as many threads as it has cores. */
      if (sched_setaffinity (0, sizeof share, &share) != 0)
        mpi.cores = CPU_COUNT (&bound);
    }
  if (sched_getaffinity (0, sizeof bound, &bound) != 0)
    CPU_ZERO (&bound);
  g_debug ("rank %d of %d on this host: %d threads on %d cores", local_rank, local_size, mpi.cores,
           CPU_COUNT (&bound));
}

/* When every rank runs on this host, MPI's messages need shared memory
 * alone: probing the network transports (UCX, OFI, InfiniBand) made
 * MPI_Init take 0.3 s instead of 0.1 s, a fifth of a small run. A choice
 * the user made (OMPI_MCA_pml or OMPI_MCA_btl) is kept. */
static void
one_host_transport (void)
{
  const char *world = g_getenv ("OMPI_COMM_WORLD_SIZE");
  const char *local = g_getenv ("OMPI_COMM_WORLD_LOCAL_SIZE");

  if (world == NULL || local == NULL || strcmp (world, local) != 0
      || g_getenv ("OMPI_MCA_pml") != NULL || g_getenv ("OMPI_MCA_btl") != NULL)
    return;
  g_setenv ("OMPI_MCA_pml", "ob1", FALSE);
  g_setenv ("OMPI_MCA_btl", "self,vader", FALSE);
}

void
sv_cli_mpi_init (int *argc, char ***argv)
{
  int provided;

  /* Only a process that mpirun started joins a job: a plain run stays
   * one process without touching MPI. */
  if (g_getenv ("OMPI_COMM_WORLD_SIZE") == NULL && g_getenv ("PMIX_RANK") == NULL
      && g_getenv ("PMI_SIZE") == NULL)
    return;
  one_host_transport ();
  MPI_Init_thread (argc, argv, MPI_THREAD_FUNNELED, &provided);
  mpi.initialized = TRUE;
  MPI_Comm_rank (MPI_COMM_WORLD, &mpi.rank);
  MPI_Comm_size (MPI_COMM_WORLD, &mpi.size);
  mpi.comm = MPI_COMM_WORLD;
  mpi.world_rank = mpi.rank;
  mpi.world_size = mpi.size;
  share_cores ();
  sv_cli_set_n_cores (mpi.cores);
  mpi.ranks = (SvStreamRanks){
    .rank = (guint)mpi.rank,
    .n_ranks = (guint)mpi.size,
    .agree = mpi_agree,
    .sum_int64 = mpi_sum_int64,
    .max_int64 = mpi_max_int64,
    .max_float = mpi_max_float,
    .gather = mpi_gather,
    .send_labels = mpi_send_labels,
    .recv_labels = mpi_recv_labels,
    .broadcast = mpi_broadcast,
    .exchange = mpi_exchange,
  };
  if (mpi.size > 1 && mpi.rank > 0)
    sv_cli_hold_messages ();
}

gboolean
sv_cli_mpi_active (void)
{
  return mpi.initialized && mpi.size > 1;
}

/* The ranks' first meeting: whether every rank got as far as the files. */
static gboolean
meet (gboolean ok, GError **error)
{
  g_autoptr (GError) local = NULL;

  mpi.met = TRUE;
  if (!ok)
    local = g_error_new_literal (SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                                 sv_cli_held_message () != NULL ? sv_cli_held_message ()
                                                                : "stopped before the run");
  return mpi_agree (NULL, local, error);
}

int
sv_cli_mpi_finish (int status)
{
  if (!mpi.initialized)
    return status;
  if (mpi.size > 1 && !mpi.met)
    {
      g_autoptr (GError) error = NULL;

      /* Rank 0 has printed its own failure; another rank's is said here. */
      if (!meet (status == 0, &error) && mpi.rank == 0 && status == 0)
        sv_cli_report (error);
      if (error != NULL && status == 0)
        status = 1;
    }
  if (mpi.comm != MPI_COMM_WORLD)
    MPI_Comm_free (&mpi.comm);
  MPI_Finalize ();
  return status;
}

/* One file on every rank of the group: the header, the streamed run, the
 * group's first rank's sidecar; the ranks agree after each, so that all of
 * them go on to the next file together. */
static gboolean
run_file (SvCliSlicFile *file, SvCliSlicContext *ctx, GError **error)
{
  g_autoptr (GError) local = NULL;
  gboolean ok;

  ok = sv_cli_slic_file_load (file, ctx, &local);
  if (ok && !file->streaming)
    {
      g_clear_pointer (&file->volume, sv_volume_free);
      g_set_error (&local, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: only TIFF stacks can be split across MPI ranks", file->input);
      ok = FALSE;
    }
  if (!sv_stream_ranks_agree (ctx->ranks, ok, &local))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (!sv_cli_slic_file_stream (file, ctx, error))
    return FALSE;
  ok = mpi.rank != 0 || sv_cli_slic_file_write (file, ctx, &local);
  if (!sv_stream_ranks_agree (ctx->ranks, ok, &local))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  return TRUE;
}

/* The files split across the ranks of the group, one after the other; its
 * first rank reports them. */
static int
run_files_together (SvCliSlicContext *ctx, SvCliSlicFile *const *files, guint n_files,
                    gboolean json, SvCliSlicBatchTally *tally)
{
  ctx->ranks = &mpi.ranks;
  for (guint i = 0; i < n_files; i++)
    {
      SvCliSlicFile *file = files[i];

      if (!run_file (file, ctx, &file->error))
        {
          if (g_error_matches (file->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            {
              tally->cancelled += n_files - i;
              break;
            }
          tally->failed++;
          if (mpi.rank == 0)
            sv_cli_report (file->error);
          continue;
        }
      tally->written++;
      if (mpi.rank != 0)
        continue;
      {
        g_autofree char *how = g_strdup_printf (" with %d MPI ranks", mpi.size);
        sv_cli_slic_file_print_result (file, json, how);
      }
      fflush (stdout);
    }
  ctx->ranks = NULL;
  if (g_cancellable_is_cancelled (ctx->cancellable))
    return 130;
  return tally->failed > 0 ? 1 : 0;
}

/* How many groups of ranks share a batch: a group a file, up to one rank
 * a group; one group (every rank on every file) for a single file or with
 * SV_BATCH_LANES=0 (for measuring). */
static int
batch_groups (guint n_files)
{
  if (n_files < 2 || g_strcmp0 (g_getenv ("SV_BATCH_LANES"), "0") == 0)
    return 1;
  return (int)MIN ((guint)mpi.world_size, n_files);
}

/* This rank joins group (world rank mod n_groups); the group's first rank
 * speaks for it. */
static void
join_group (int n_groups)
{
  const int group = mpi.world_rank % n_groups;

  MPI_Comm_split (MPI_COMM_WORLD, group, mpi.world_rank, &mpi.comm);
  MPI_Comm_rank (mpi.comm, &mpi.rank);
  MPI_Comm_size (mpi.comm, &mpi.size);
  mpi.ranks.rank = (guint)mpi.rank;
  mpi.ranks.n_ranks = (guint)mpi.size;
  if (mpi.rank == 0)
    sv_cli_release_messages ();
  else
    sv_cli_hold_messages ();
  g_debug ("rank %d of %d: group %d of %d, rank %d of %d in it", mpi.world_rank, mpi.world_size,
           group, n_groups, mpi.rank, mpi.size);
}

/* A rank alone with the CUDA backend drives the one GPU it was narrowed
 * to (its local rank's) as a batch's lane does its device: listed (with
 * cuda opening beside its first file), its files streamed through it.
 * Left as it was, the plan held each file in memory, and the ranks' batch
 * of eight 1024³ files took 9.7 s on four GPUs against 7.5 s for the
 * lanes. */
static void
run_alone_on_own_device (SvCliSlicContext *ctx)
{
  const int first = 0;
  SvRunDevices own;

  if (!(ctx->backend_choice.is_auto || ctx->backend_choice.wants_device)
      || ctx->backend_choice.device == NULL || ctx->devices.list != NULL
      || ctx->devices.n_visible != 1 || ctx->devices.n_backends > 0
      || g_strcmp0 (g_getenv ("SV_BATCH_LANES"), "0") == 0)
    return;
  sv_run_devices_init_some (&own, &ctx->devices, &first, 1);
  sv_run_devices_clear (&ctx->devices);
  ctx->devices = own;
  if (sv_run_devices_start (&ctx->devices, &ctx->backend_choice))
    g_debug ("rank %d: its GPU opening beside its first file", mpi.world_rank);
}

int
sv_cli_slic_mpi_run (SvCliSlicContext *ctx, SvCliSlicFile *const *files, guint n_files,
                     const SvCliSlicBatchOptions *options)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) mine = g_ptr_array_new ();
  const double t_start = sv_cli_now ();
  const int n_groups = batch_groups (n_files);
  SvCliSlicBatchTally tally = { 0 }, total = { 0 };
  guint counts[4];
  int status, worst;

  if (!meet (TRUE, &error))
    {
      if (mpi.rank == 0)
        sv_cli_report (error);
      return 1;
    }
  if (n_groups > 1)
    join_group (n_groups);
  for (guint i = mpi.world_rank % n_groups; i < n_files; i += (guint)n_groups)
    g_ptr_array_add (mine, files[i]);
  tally.files = mine->len;
  if (mpi.size == 1)
    {
      /* Alone: the group's files as one process runs them, within this
       * rank's share of the host's memory. */
      SvCliSlicBatchOptions alone = *options;

      g_debug ("rank %d: %u files alone", mpi.world_rank, mine->len);
      alone.tally = &tally;
      run_alone_on_own_device (ctx);
      if (ctx->memory_limit == 0)
        ctx->memory_limit = MAX (sv_cli_memory_available () / (guint64)mpi.local_size, 1);
      status = sv_cli_slic_batch_run (ctx, (SvCliSlicFile *const *)mine->pdata, mine->len, &alone);
    }
  else
    status = run_files_together (ctx, (SvCliSlicFile *const *)mine->pdata, mine->len, options->json,
                                 &tally);

  /* Every group's first rank counts its files for the totals. */
  counts[0] = mpi.rank == 0 ? tally.files : 0;
  counts[1] = mpi.rank == 0 ? tally.written : 0;
  counts[2] = mpi.rank == 0 ? tally.failed : 0;
  counts[3] = mpi.rank == 0 ? tally.cancelled : 0;
  MPI_Allreduce (MPI_IN_PLACE, counts, 4, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce (&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  total = (SvCliSlicBatchTally){ counts[0], counts[1], counts[2], counts[3] };
  if (mpi.world_rank == 0 && options->summary)
    sv_cli_slic_batch_print_totals (&total,
                                    ctx->backend != NULL
                                        ? sv_backend_get_name (ctx->backend)
                                        : sv_backend_class_name (ctx->devices.klass),
                                    sv_cli_now () - t_start, options->json);
  if (worst == 130 && mpi.world_rank == 0)
    {
      if (total.written == 0)
        sv_cli_error ("interrupted; no output written");
      else
        sv_cli_error ("interrupted; %u of %u files written, the others not", total.written,
                      n_files);
    }
  return worst;
}

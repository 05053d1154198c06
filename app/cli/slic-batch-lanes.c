/* supervox-cli slic: a batch over several GPUs, a file a GPU at a time
 * (slic-batch-lanes.h). Each lane takes the next file not yet taken, so
 * that a lane whose files are small takes more of them; the calling
 * thread reports each file once it and every file before it are done.
 * A lane leaves its label file's last step, the sync of its data and its
 * rename (SvFileFinish), to a finisher thread and takes its next file
 * meanwhile: on the GPU machine four 1024³ files' syncs took 0.76 s at
 * the end of their 4.4 s batch. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-batch-lanes.h"

#include "slic-stream.h"

typedef struct _Lanes Lanes;

typedef struct
{
  Lanes *lanes;
  int device; /* its first device (of sv_run_devices_distinct) */
  /* The batch's context with the lane's own device, backend, memory and
   * threads. */
  SvCliSlicContext ctx;
  SvCliSlicRequest request;
  GThread *thread;
} Lane;

struct _Lanes
{
  SvCliSlicFile *const *files;
  guint n_files;
  const SvCliSlicBatchEvents *events;
  gint next; /* the next file a lane takes */
  GMutex lock;
  GCond done_cond;
  gboolean *done; /* per file, under lock */
  /* Files whose label file the finisher completes (Finishing), then their
   * sidecar; at most max_pending at once (each holds a descriptor and
   * unsynced data), under lock. */
  GAsyncQueue *finishing;
  GThread *finisher;
  guint pending, max_pending;
};

typedef struct
{
  Lane *lane;
  guint index;
} Finishing;

/* Tells the finisher that no more files come. */
static Finishing no_more;

guint
sv_cli_slic_batch_lanes (const SvCliSlicContext *ctx, guint n_files)
{
  const SvBackendChoice *choice = &ctx->backend_choice;
  const SvRunDevices *devices = &ctx->devices;
  g_autoptr (GArray) distinct = NULL;

  if (n_files < 2 || ctx->ranks != NULL || !(choice->is_auto || choice->wants_device)
      || choice->device == NULL || devices->klass != choice->device || devices->list == NULL
      || devices->local_rank >= 0 || devices->opening != NULL || devices->n_backends > 0
      || g_strcmp0 (g_getenv ("SV_BATCH_LANES"), "0") == 0)
    return 0;
  distinct = sv_run_devices_distinct (devices);
  if (distinct == NULL || distinct->len < 2)
    return 0;
  return MIN (distinct->len, n_files);
}

static gboolean
skipping (const Lane *lane)
{
  return g_cancellable_is_cancelled (lane->ctx.cancellable);
}

/* An in-memory file (a photo; the files read from disk stream through the
 * lane's devices) runs on the lane's first device too; under auto, on the
 * CPU when that device cannot be had. */
static gboolean
open_backend (Lane *lane, GError **error)
{
  g_autoptr (GError) local = NULL;

  lane->ctx.backend = sv_backend_new_on_device (lane->ctx.devices.klass, lane->device, &local);
  if (lane->ctx.backend == NULL && lane->ctx.backend_choice.is_auto)
    lane->ctx.backend = sv_backend_new_of_class (sv_backend_cpu_class (), NULL);
  if (lane->ctx.backend == NULL)
    g_propagate_error (error, g_steal_pointer (&local));
  return lane->ctx.backend != NULL;
}

static void
run_file (Lane *lane, SvCliSlicFile *file)
{
  const SvCliSlicBatchEvents *events = lane->lanes->events;

  g_debug ("%s: on devices %s", file->input, lane->ctx.devices.list);
  if (sv_cli_slic_file_load (file, &lane->ctx, &file->error) && file->volume != NULL
      && lane->ctx.backend == NULL && !skipping (lane))
    open_backend (lane, &file->error);
  if ((file->volume != NULL || file->streaming) && file->error == NULL && !skipping (lane))
    {
      if (events->started != NULL)
        events->started (file, events->user_data);
      sv_cli_slic_file_compute (file, &lane->ctx, &file->error);
    }
  g_clear_pointer (&file->volume, sv_volume_free);
}

/* File i is done; `finished`: it was one the finisher held. */
static void
mark_done (Lanes *lanes, guint i, gboolean finished)
{
  g_mutex_lock (&lanes->lock);
  lanes->done[i] = TRUE;
  if (finished)
    lanes->pending--;
  g_cond_broadcast (&lanes->done_cond);
  g_mutex_unlock (&lanes->lock);
}

static gpointer
lane_thread (gpointer data)
{
  Lane *lane = data;
  Lanes *lanes = lane->lanes;
  guint i;

  while ((i = (guint)g_atomic_int_add (&lanes->next, 1)) < lanes->n_files)
    {
      SvCliSlicFile *file = lanes->files[i];
      Finishing *f;

      if (!skipping (lane))
        run_file (lane, file);
      if (file->finish == NULL)
        {
          sv_cli_slic_batch_write (file, &lane->ctx, skipping (lane));
          mark_done (lanes, i, FALSE);
          continue;
        }
      f = g_new (Finishing, 1);
      f->lane = lane;
      f->index = i;
      g_mutex_lock (&lanes->lock);
      while (lanes->pending >= lanes->max_pending)
        g_cond_wait (&lanes->done_cond, &lanes->lock);
      lanes->pending++;
      g_mutex_unlock (&lanes->lock);
      g_async_queue_push (lanes->finishing, f);
    }
  return NULL;
}

/* The write step of each file left to finish, in the order they come:
 * its label file completed, then its sidecar; after a cancel the file
 * goes instead. */
static gpointer
finisher_thread (gpointer data)
{
  Lanes *lanes = data;
  Finishing *f;

  while ((f = g_async_queue_pop (lanes->finishing)) != &no_more)
    {
      const Lane *lane = f->lane;

      sv_cli_slic_batch_write (lanes->files[f->index], &lane->ctx, skipping (lane));
      mark_done (lanes, f->index, TRUE);
      g_free (f);
    }
  return NULL;
}

/* The lane's context: the batch's, with the `n` devices `devices` alone
 * (opening beside its first file where the driver was narrowed), no
 * backend yet, and a lane's share of the host's memory and of the
 * threads. */
static void
lane_init (Lane *lane, Lanes *lanes, const SvCliSlicContext *ctx, const int *devices, guint n,
           guint n_lanes, guint64 host_bytes)
{
  lane->lanes = lanes;
  lane->device = devices[0];
  lane->ctx = *ctx;
  lane->request = *ctx->request;
  lane->request.n_threads = MAX (1, ctx->request->n_threads / (int)n_lanes);
  lane->ctx.request = &lane->request;
  lane->ctx.backend = NULL;
  lane->ctx.memory_limit = MAX (host_bytes / n_lanes, 1);
  lane->ctx.finish_later = TRUE;
  sv_run_devices_init_some (&lane->ctx.devices, &ctx->devices, devices, n);
  if (sv_run_devices_start (&lane->ctx.devices, &ctx->backend_choice))
    g_debug ("devices: %s opening beside its lane's first file", lane->ctx.devices.list);
}

static void
lane_clear (Lane *lane)
{
  g_clear_pointer (&lane->ctx.backend, sv_backend_free);
  sv_run_devices_clear (&lane->ctx.devices);
}

gboolean
sv_cli_slic_batch_lanes_run (SvCliSlicContext *ctx, guint n_lanes, SvCliSlicFile *const *files,
                             guint n_files, const SvCliSlicBatchEvents *events, GError **error)
{
  g_autoptr (GArray) distinct = sv_run_devices_distinct (&ctx->devices);
  const guint64 host_bytes = ctx->memory_limit > 0 ? ctx->memory_limit : sv_cli_memory_available ();
  g_autofree Lane *lane = NULL;
  Lanes lanes = { 0 };
  guint per_lane;

  g_return_val_if_fail (distinct != NULL && n_lanes >= 1 && n_lanes <= distinct->len, FALSE);
  lanes.files = files;
  lanes.n_files = n_files;
  lanes.events = events;
  lanes.done = g_new0 (gboolean, n_files);
  g_mutex_init (&lanes.lock);
  g_cond_init (&lanes.done_cond);

  /* Fewer files than devices: each lane drives an even share of them. */
  per_lane = distinct->len / n_lanes;
  g_debug ("batch: %u files on %u lanes of %u device%s", n_files, n_lanes, per_lane,
           per_lane == 1 ? "" : "s");
  lanes.finishing = g_async_queue_new ();
  lanes.max_pending = 2 * n_lanes;
  lanes.finisher = g_thread_new ("sv-cli-finisher", finisher_thread, &lanes);
  lane = g_new0 (Lane, n_lanes);
  for (guint l = 0; l < n_lanes; l++)
    lane_init (&lane[l], &lanes, ctx, (const int *)distinct->data + l * per_lane, per_lane, n_lanes,
               host_bytes);
  for (guint l = 0; l < n_lanes; l++)
    lane[l].thread = g_thread_new ("sv-cli-lane", lane_thread, &lane[l]);

  /* Reported in input order, each as soon as the files before it are. */
  for (guint i = 0; i < n_files; i++)
    {
      g_mutex_lock (&lanes.lock);
      while (!lanes.done[i])
        g_cond_wait (&lanes.done_cond, &lanes.lock);
      g_mutex_unlock (&lanes.lock);
      if (events->finished != NULL)
        events->finished (files[i], events->user_data);
    }

  for (guint l = 0; l < n_lanes; l++)
    g_thread_join (lane[l].thread);
  g_async_queue_push (lanes.finishing, &no_more);
  g_thread_join (lanes.finisher);
  g_async_queue_unref (lanes.finishing);
  for (guint l = 0; l < n_lanes; l++)
    lane_clear (&lane[l]);
  g_mutex_clear (&lanes.lock);
  g_cond_clear (&lanes.done_cond);
  g_free (lanes.done);
  (void)error;
  return TRUE;
}

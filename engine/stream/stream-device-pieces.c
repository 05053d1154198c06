/* Supervox engine: the connectivity rule shared by the devices that kept
 * the labels, with no device gathering the volume. The first device
 * labels its slices as the one device's rule would (its pieces are the
 * volume's first) and hands them to the label file window by window;
 * meanwhile each other device numbers the pieces that start in its own
 * slices, on the device, with for each small piece the earlier piece it
 * joins. Then, in z order, each of those takes the labels before it as
 * its offset, learns the labels of the pieces below its slices that its
 * pieces may join (by their first voxels, from the devices before it,
 * which are final by then), labels its pieces by following what they
 * join, and hands its slices to the file; or, where the file has parts
 * (an OME-Zarr store whose rows of chunks begin at every device's first
 * slice, or a TIFF whose later pages wait in memory for their turn),
 * once all are labelled each hands its slices to a part of its own, at
 * once (SvShareParts). The labels are sv_connectivity_enforce's connected
 * rule over the whole volume, bit for bit.
 *
 * Why a device's pieces are exact (stream-pieces.c says it for ranks):
 * the sequential rule cuts each 6-connected component of one input label
 * into pieces that depend on that component alone, and a component spans
 * at most E + 1 slices (E: the label extent). A device with slices
 * [a, b) runs the rule over the volume from a0 = a − 1 − E on, up to the
 * pieces that start before b (which read slices up to b + E). Every
 * component that reaches [a, b), and every component that a BFS from
 * there touches (slices a − 1 on), starts at a0 or later, so it is cut as
 * in the whole volume, with the same first voxels; components cut short
 * at a0 touch neither. A piece there takes a new label when it is large
 * or joins none, numbered in raster order after every earlier device's
 * new labels; else the label of the piece it joins, which starts earlier:
 * one of the device's own, or one below a, whose label the device that
 * holds its first voxel has written there. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "backend-private.h"
#include "internal.h"
#include "stream-run-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-memory.h"

typedef struct
{
  SvBackend *backend;
  guint z0, z1;         /* its kept slices */
  GArray *warm_starts;  /* first voxels of its warm-up's pieces (gint64) */
  gint64 n_new;         /* its new labels */
  gint64 usec;          /* its windows' time */
  GError *error;
} Share;

typedef struct
{
  Share *shares;
  guint n;
  gint64 min_size, max_size;
  int start_label;
  guint depth;
  SvSlabSink sink;
  gpointer user_data;
  const SvStripSink *strips;
  const SvShareParts *parts; /* each later share writes a part at once; NULL: in z order */
  guint nz, ny, nx;
} Job;

/* The workers' kept slices, those that have any: NULL when the shared
 * rule does not apply (nothing done). */
static Share *
shares_of (const Run *run, guint *n_shares)
{
  const SvSlabPlan *plan = &run->plan;
  Share *shares = g_new0 (Share, MAX (plan->n_workers, 1));
  guint n = 0;

  for (guint w = 0; w < plan->n_workers; w++)
    {
      const SvSlabSteps *steps = plan->workers[w]->klass->slab_steps;
      guint z0, z1;

      if (steps == NULL || steps->pieces_prepare == NULL || steps->pieces_label == NULL
          || steps->pieces_number == NULL || steps->labels_at == NULL
          || steps->pieces_relabel == NULL || steps->emit_kept == NULL)
        {
          g_free (shares);
          return NULL;
        }
      sv__slab_plan_worker_slices (plan, w, &z0, &z1);
      if (z0 >= z1)
        continue;
      shares[n].backend = plan->workers[w];
      shares[n].z0 = z0;
      shares[n].z1 = z1;
      shares[n].warm_starts = g_array_new (FALSE, FALSE, sizeof (gint64));
      n++;
    }
  *n_shares = n;
  return shares;
}

/* The first share labels its slices and writes them; the others number
 * their pieces. */
static void
run_share (gpointer data, int thread)
{
  Job *job = data;
  Share *share = &job->shares[thread];
  const SvSlabSteps *steps = share->backend->klass->slab_steps;
  const gint64 t0 = g_get_monotonic_time ();
  gboolean ok;

  if (thread == 0)
    ok = steps->pieces_label (share->backend, job->min_size, job->max_size, job->start_label,
                              job->depth, job->sink, job->user_data, job->strips, &share->n_new,
                              &share->error);
  else
    ok = steps->pieces_number (share->backend, job->min_size, job->max_size, job->start_label,
                               share->warm_starts, &share->n_new, &share->error);
  if (!ok && share->error == NULL)
    g_set_error (&share->error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                 "connectivity: device %u of %u failed on its slices", thread + 1, job->n);
  share->usec = g_get_monotonic_time () - t0;
}

/* A later share's slices to a part of the file of its own, while the
 * other shares write theirs. */
static void
emit_share (gpointer data, int thread)
{
  Job *job = data;
  Share *share = &job->shares[thread + 1];
  const SvSlabSteps *steps = share->backend->klass->slab_steps;
  SvStripSink strips = { 0 };
  const gint64 t0 = g_get_monotonic_time ();
  gpointer part;
  gboolean ok;

  if (job->strips != NULL)
    strips = *job->strips;
  part = job->parts->open (share->z0, job->parts->user_data, &strips, &share->error);
  if (part == NULL)
    return;
  ok = steps->emit_kept (share->backend, job->nz, job->ny, job->nx, job->depth, job->sink, part,
                         job->strips != NULL ? &strips : NULL, &share->error);
  ok = job->parts->close (part, ok, ok ? &share->error : NULL) && ok;
  if (!ok && share->error == NULL)
    g_set_error (&share->error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                 "connectivity: device %u of %u failed to write its slices", thread + 2, job->n);
  share->usec += g_get_monotonic_time () - t0;
}

/* Whether each share's slices begin at a part's row. */
static gboolean
shares_at_rows (const Job *job)
{
  for (guint i = 0; i < job->n; i++)
    if (job->parts->row_depth == 0 || job->shares[i].z0 % job->parts->row_depth != 0)
      return FALSE;
  return TRUE;
}

/* The first error of the shares, moved to `error`; TRUE when none. */
static gboolean
shares_ok (Job *job, GError **error)
{
  gboolean ok = TRUE;

  for (guint i = 0; i < job->n; i++)
    if (job->shares[i].error != NULL)
      {
        if (ok)
          g_propagate_error (error, g_steal_pointer (&job->shares[i].error));
        g_clear_error (&job->shares[i].error);
        ok = FALSE;
      }
  return ok;
}

/* The labels of share d's warm-up pieces, from the shares before it that
 * hold their first voxels (sorted, as the pieces are). */
static gint32 *
warm_labels (Job *job, guint d, gsize plane, GError **error)
{
  const Share *share = &job->shares[d];
  const gint64 *starts = (const gint64 *)share->warm_starts->data;
  const guint n = share->warm_starts->len;
  gint32 *labels = g_try_new (gint32, MAX (n, 1));
  guint i = 0;

  if (labels == NULL)
    {
      sv_set_no_memory (error, "the labels of %u pieces", n);
      return NULL;
    }
  for (guint e = 0; e < d && i < n; e++)
    {
      const Share *earlier = &job->shares[e];
      const gint64 from = (gint64)earlier->z0 * (gint64)plane;
      const gint64 to = (gint64)earlier->z1 * (gint64)plane;
      guint j;

      /* A piece cut short at the warm-up's bottom has no voxel in the
       * share's slices: any label does. */
      for (; i < n && starts[i] < from; i++)
        labels[i] = job->start_label - 1;
      for (j = i; j < n && starts[j] < to; j++)
        ;
      if (j > i
          && !earlier->backend->klass->slab_steps->labels_at (earlier->backend, starts + i, j - i,
                                                               labels + i, error))
        {
          g_free (labels);
          return NULL;
        }
      i = j;
    }
  for (; i < n; i++)
    labels[i] = job->start_label - 1;
  return labels;
}

static void
shares_free (Share *shares, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      if (shares[i].warm_starts != NULL)
        g_array_free (shares[i].warm_starts, TRUE);
      g_clear_error (&shares[i].error);
    }
  g_free (shares);
}

gint64
sv__stream_device_pieces (Run *run, guint extent, gint64 min_size, gint64 max_size,
                          SvSlabSource source, SvSlabDeviceSource device_source, SvSlabSink sink,
                          const SvStripSink *strips, const SvShareParts *parts,
                          gpointer user_data, guint *n_devices, guint *held, GError **error)
{
  const char *forced = g_getenv ("SV_DEVICE_PIECES");
  Job job = { NULL, 0, min_size, max_size, run->params->start_label, run->depth, sink, user_data,
              strips, parts, run->nz, run->ny, run->nx };
  const gboolean chunks = strips != NULL && strips->chunks[0] > 0;
  gint64 counter, t0 = g_get_monotonic_time (), t1, t2, t3;

  *n_devices = 0;
  *held = 0;
  if ((forced != NULL && forced[0] == '0') || run->plan.n_workers < 2
      || !run->plan.assignment_kept || extent == G_MAXUINT
      || run->params->connectivity_rule != SV_CONNECTIVITY_RULE_CONNECTED
      || (run->ranks != NULL && run->ranks->n_ranks > 1) || run->z_begin != 0
      || run->z_end != run->nz || (chunks && parts == NULL))
    return -1;
  job.shares = shares_of (run, &job.n);
  if (job.parts != NULL && job.shares != NULL && !shares_at_rows (&job))
    job.parts = NULL;
  /* A row of a store's compressed chunks cut by a share's end would need
   * both devices' labels. */
  if (job.shares == NULL || job.n < 2 || (chunks && job.parts == NULL))
    {
      shares_free (job.shares, job.n);
      return -1;
    }
  /* Every device copies what it reads of the others before any writes
   * over its own. */
  for (guint i = 0; i < job.n; i++)
    {
      SvBackend *backend = job.shares[i].backend;
      guint share_held = 0;
      int ready = backend->klass->slab_steps->pieces_prepare (backend, run->nz, run->ny, run->nx,
                                                              extent, source, device_source,
                                                              user_data, &share_held, error);

      *held = MAX (*held, share_held);
      if (ready <= 0)
        {
          shares_free (job.shares, job.n);
          return ready < 0 ? -2 : -1;
        }
    }
  t1 = g_get_monotonic_time ();
  sv__run_parallel ((int)job.n, run_share, &job);
  if (!shares_ok (&job, error))
    goto fail;
  t2 = g_get_monotonic_time ();
  /* In z order: each share's labels follow the earlier shares', and its
   * slices go to the file after theirs, or to a part of it of their own
   * once every share is labelled. */
  counter = job.shares[0].n_new;
  for (guint d = 1; d < job.n; d++)
    {
      Share *share = &job.shares[d];
      const SvSlabSteps *steps = share->backend->klass->slab_steps;
      g_autofree gint32 *warm = NULL;

      if (counter > (gint64)G_MAXINT32 - job.start_label)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                       "connectivity: more labels than an int32 holds");
          goto fail;
        }
      warm = warm_labels (&job, d, run->plane, error);
      if (warm == NULL
          || !steps->pieces_relabel (share->backend, (int)(job.start_label + counter), warm,
                                     share->warm_starts->len, job.start_label, error)
          || (job.parts == NULL
              && !steps->emit_kept (share->backend, run->nz, run->ny, run->nx, run->depth, sink,
                                    user_data, strips, error)))
        goto fail;
      counter += share->n_new;
    }
  t3 = g_get_monotonic_time ();
  if (job.parts != NULL)
    {
      sv__run_parallel ((int)job.n - 1, emit_share, &job);
      if (!shares_ok (&job, error))
        goto fail;
    }
  g_debug ("connectivity on %u devices: copies %.3f s, shares %.3f s, the later shares' labels "
           "and file %.3f s%s",
           job.n, (t1 - t0) / 1e6, (t2 - t1) / 1e6, (g_get_monotonic_time () - t2) / 1e6,
           job.parts != NULL ? " (each share its own part, at once)" : "");
  if (job.parts != NULL)
    g_debug ("connectivity on %u devices: the later shares' labels %.3f s, their parts %.3f s",
             job.n, (t3 - t2) / 1e6, (g_get_monotonic_time () - t3) / 1e6);
  for (guint i = 0; i < job.n; i++)
    g_debug ("connectivity share %u: slices %u to %u, %" G_GINT64_FORMAT
             " new labels, %u warm-up pieces, %.3f s",
             i, job.shares[i].z0, job.shares[i].z1, job.shares[i].n_new,
             job.shares[i].warm_starts->len, job.shares[i].usec / 1e6);
  *n_devices = job.n;
  shares_free (job.shares, job.n);
  return counter;
fail:
  if (error != NULL && *error == NULL)
    g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                         "connectivity: a device failed on its slices");
  shares_free (job.shares, job.n);
  return -2;
}

/* Supervox engine: the end of a streamed run (stream-slic.c): the last
 * assignment made labels (the fill of unreached voxels, indices to
 * labels, the tally of what they add up to), on the device that kept the
 * assignment or slab by slab through the spill file; then the connectivity
 * (on the device when the label volume fits there, else over a ring of
 * slices on the host) or a plain copy into the label file. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "supervox/sv-memory.h"
#include "internal.h"
#include "backend-private.h"
#include "io-tiff-private.h"
#include "stream-run-private.h"

/* The ranks' label summaries (each over its own slices) as one over the
 * whole volume; zmin and zmax hold k extents. */
static void
combine_summaries (const SvStreamRanks *ranks, LabelSummary *sum, guint *zmin, guint *zmax, gsize k)
{
  g_autofree gint64 *extents = g_new (gint64, 2 * MAX (k, 1) + 2);

  /* Minima as maxima of the negated values. */
  for (gsize i = 0; i < k; i++)
    {
      extents[2 * i] = -(gint64)zmin[i];
      extents[2 * i + 1] = zmax[i];
    }
  extents[2 * k] = sum->negative;
  ranks->max_int64 (ranks->self, extents, 2 * k + 1);
  for (gsize i = 0; i < k; i++)
    {
      zmin[i] = (guint)-extents[2 * i];
      zmax[i] = (guint)extents[2 * i + 1];
    }
  sum->negative = extents[2 * k] != 0;
  extents[0] = (gint64)sum->n_in;
  ranks->sum_int64 (ranks->self, extents, 1);
  sum->n_in = (gsize)extents[0];
}

/* The host's labels made by every worker at once: each reads its own run
 * of slabs from the spill, has its backend fill them, tallies them in
 * slots of the tally of its own and writes them back. */
typedef struct
{
  Run *run;
  SvLabelTally *tally;
  int slots; /* a worker's tally slots */
  GError **errors; /* one per worker */
} HostFill;

static void
host_fill_worker (gpointer data, int w)
{
  HostFill *f = data;
  Run *run = f->run;
  const SvSlabPlan *plan = &run->plan;
  SvBackend *backend = plan->workers[w];
  const SvSlabSteps *steps = backend->klass->slab_steps;
  GError **error = &f->errors[w];
  g_autofree gint32 *nearest = sv_try_alloc_n ((gsize)run->depth * run->plane, sizeof (gint32),
                                               FALSE, error, "the labels of %u slices",
                                               run->depth);
  guint slab = 0;

  for (guint z0 = plan->z_begin; nearest != NULL && z0 < plan->z_end; z0 += plan->depth, slab++)
    {
      const guint z1 = MIN (z0 + plan->depth, plan->z_end);

      if (sv__slab_plan_worker (plan, slab) != (guint)w)
        continue;
      if (g_cancellable_set_error_if_cancelled (run->options->cancellable, error)
          || !sv__spill_read (run->spill, z0, z1, nearest, error)
          || !steps->fill_unassigned (backend, z0, z1, NULL, nearest, error))
        return;
      sv__label_tally_slab_in (f->tally, w * f->slots, f->slots, z0, z1, run->plane, NULL,
                               run->params->start_label, nearest);
      if (!sv__spill_write (run->spill, z0, z1, nearest, error))
        return;
    }
}

/* The labels kept on the devices made by every device at once: each
 * gets the final centres, labels its own slabs and tallies them into a
 * slot of its own. In turn, four devices at 2048³ took 1.1 s for what
 * one device does in 0.4 s. */
static void
kept_labels_worker (gpointer data, int w)
{
  HostFill *f = data;
  Run *run = f->run;
  const SvSlabPlan *plan = &run->plan;
  SvBackend *backend = plan->workers[w];
  const SvSlabSteps *steps = backend->klass->slab_steps;
  const gsize k = run->clusters.k;
  GError **error = &f->errors[w];
  guint64 n_in = 0;
  guint z_first, z_end;
  gboolean ok;

  sv__slab_plan_worker_slices (plan, (guint)w, &z_first, &z_end);
  ok = steps->begin_pass (backend, &run->ctx, &run->clusters, 0, k, error);
  for (guint z0 = z_first; ok && z0 < z_end; z0 += plan->depth)
    ok = !g_cancellable_set_error_if_cancelled (run->options->cancellable, error)
         && steps->label_kept_slab (backend, z0, MIN (z0 + plan->depth, z_end), NULL,
                                    run->params->start_label, error);
  if (ok && steps->end_pass (backend, NULL, NULL, 0, 0, error)
      && steps->kept_tally (backend, f->tally->zmin + (gsize)w * k, f->tally->zmax + (gsize)w * k,
                            &n_in, &f->tally->negative[w], error))
    f->tally->n_in[w] = (gsize)n_in;
}

/* `worker` on every worker; the first worker's error is the one told. */
static gboolean
on_workers (Run *run, SvLabelTally *tally, SvWorkFunc worker, GError **error)
{
  const guint n = run->plan.n_workers;
  g_autofree GError **errors = g_new0 (GError *, n);
  HostFill f = { run, tally, tally->n_threads / (int)n, errors };
  gboolean ok = TRUE;

  sv__run_parallel ((int)n, worker, &f);
  for (guint w = 0; w < n; w++)
    if (errors[w] != NULL)
      {
        if (ok)
          g_propagate_error (error, errors[w]);
        else
          g_error_free (errors[w]);
        ok = FALSE;
      }
  return ok;
}

/* The last assignment becomes labels: unreached voxels take the nearest
 * live centre, indices become labels, on the device that keeps them or
 * written back to the spill file. */
gboolean
sv__stream_run_final_labels (Run *run, gboolean iterated, LabelSummary *sum, GError **error)
{
  const gsize k = run->clusters.k;
  const SvSlabPlan *plan = &run->plan;
  /* Labels are made by every worker at once where no mask is read (the
   * mask's reader serves one slab at a time), each worker with slots of
   * the tally of its own (eight at most): at 4096³ one device of four
   * took 98 s for the labels the host holds. */
  const gboolean at_once = iterated && plan->n_workers > 1
                           && plan->n_workers <= SV_LABEL_TALLY_MAX_SLOTS
                           && !sv__stream_mask_any (&run->mask);
  /* So are kept labels, each device's slot the tally's. */
  const gboolean kept_at_once = at_once && plan->assignment_kept;
  /* Kept labels are made by the worker that keeps each slab; the host's
   * fill otherwise goes through the first. */
  const guint n_fillers = plan->assignment_kept || at_once ? plan->n_workers : 1;
  SvBackend *filler = plan->workers[0];
  const SvSlabSteps *steps = filler->klass->slab_steps;
  SvLabelTally tally;
  gboolean ok = TRUE;

  memset (sum, 0, sizeof *sum);
  /* Kept labels are tallied on their devices, into the first slot: more
   * slots only cost their clearing and merging (at 2048³, 8.6 M clusters
   * in 8 slots: 0.3 s of the final labels on one thread). */
  sv__label_tally_init (&tally, k,
                        kept_at_once ? (int)plan->n_workers
                        : plan->assignment_kept
                            ? 1
                            : at_once ? MAX (sv__resolve_threads (run->options->n_threads),
                                             (int)plan->n_workers)
                                      : run->options->n_threads);
  if (kept_at_once)
    ok = on_workers (run, &tally, kept_labels_worker, error);
  for (guint w = 0; ok && iterated && !kept_at_once && w < n_fillers; w++)
    ok = plan->workers[w]->klass->slab_steps->begin_pass (plan->workers[w], &run->ctx,
                                                          &run->clusters, 0, run->clusters.k,
                                                          error);
  g_debug ("final labels: the centres given to %u backends", n_fillers);
  /* Labels kept on the device are made and tallied there. */
  for (guint z0 = run->z_begin; ok && plan->assignment_kept && !kept_at_once && z0 < run->z_end;
       z0 += run->depth)
    {
      guint z1 = MIN (z0 + run->depth, run->z_end);
      SvBackend *owner = sv__slab_plan_owner (plan, z0);

      ok = !g_cancellable_set_error_if_cancelled (run->options->cancellable, error)
           && sv__stream_run_mask_slab (run, z0, z1, error)
           && owner->klass->slab_steps->label_kept_slab (owner, z0, z1, run->ctx.mask,
                                                         run->params->start_label, error);
    }
  if (ok && at_once && !kept_at_once)
    ok = on_workers (run, &tally, host_fill_worker, error);
  for (guint z0 = run->z_begin; ok && !run->plan.assignment_kept && !at_once && z0 < run->z_end;
       z0 += run->depth)
    {
      guint z1 = MIN (z0 + run->depth, run->z_end);
      gsize n = (gsize)(z1 - z0) * run->plane;

      if (g_cancellable_set_error_if_cancelled (run->options->cancellable, error))
        {
          ok = FALSE;
          break;
        }

      if (!sv__stream_run_mask_slab (run, z0, z1, error))
        {
          ok = FALSE;
          break;
        }
      if (!iterated)
        for (gsize i = 0; i < n; i++)
          run->nearest[i] = -1;
      else if (!sv__spill_read (run->spill, z0, z1, run->nearest, error)
               || !steps->fill_unassigned (filler, z0, z1, run->ctx.mask, run->nearest, error))
        {
          ok = FALSE;
          break;
        }
      sv__label_tally_slab (&tally, z0, z1, run->plane, run->ctx.mask, run->params->start_label,
                            run->nearest);
      ok = sv__spill_write (run->spill, z0, z1, run->nearest, error);
    }
  g_debug ("final labels: slabs handed over");
  for (guint w = 0; ok && iterated && !kept_at_once && w < n_fillers; w++)
    ok = plan->workers[w]->klass->slab_steps->end_pass (plan->workers[w], NULL, NULL, 0, 0, error);
  g_debug ("final labels: made");
  for (guint w = 0; ok && plan->assignment_kept && !kept_at_once && w < plan->n_workers; w++)
    ok = sv__label_tally_from_backend (&tally, plan->workers[w], error);
  sv__label_tally_finish (&tally, &sum->n_in, &sum->negative);
  g_debug ("final labels: tallied");
  if (!sv_stream_ranks_agree (run->ranks, ok, error))
    {
      sv__label_tally_clear (&tally);
      return FALSE;
    }
  if (run->ranks != NULL && run->ranks->n_ranks > 1)
    combine_summaries (run->ranks, sum, tally.zmin, tally.zmax, k);
  for (gsize i = 0; i < k; i++)
    if (tally.zmin[i] != G_MAXUINT)
      {
        sum->n_distinct++;
        sum->max_extent = MAX (sum->max_extent, tally.zmax[i] - tally.zmin[i]);
      }
  sv__label_tally_clear (&tally);
  return TRUE;
}

/* Slices [z0, z1) of the labels: from the backend that keeps them, or
 * from the spill file. */
static gboolean
run_read_labels (Run *run, guint z0, guint z1, gint32 *labels, GError **error)
{
  if (!run->plan.assignment_kept)
    return sv__spill_read (run->spill, z0, z1, labels, error);
  /* One device keeps every slice it has: under MPI rank 0's also holds
   * the other ranks' after the gather. */
  if (run->plan.n_workers == 1)
    return run->plan.workers[0]->klass->slab_steps->read_kept (run->plan.workers[0], z0, z1,
                                                                labels, error);
  /* Each slab from the device that kept it: a range may cross owners. */
  for (guint c0 = z0, c1; c0 < z1; c0 = c1)
    {
      SvBackend *keeper = sv__slab_plan_owner (&run->plan, c0);
      c1 = MIN (z1, (c0 / run->depth + 1) * run->depth);
      if (!keeper->klass->slab_steps->read_kept (
              keeper, c0, c1, labels + (gsize)(c0 - z0) * run->ny * run->nx, error))
        return FALSE;
    }
  return TRUE;
}

/* run_read_labels as an SvSlabSource (user_data: the run). */
static gboolean
labels_source (guint z0, guint z1, gint32 *labels, gpointer user_data, GError **error)
{
  return run_read_labels (user_data, z0, z1, labels, error);
}

/* Rank 0's side of the gather: labels from another rank go where the run
 * keeps its own. */
static gboolean
store_received (guint z0, guint z1, const gint32 *labels, gpointer user_data, GError **error)
{
  Run *run = user_data;
  SvBackend *keeper = run->plan.n_workers > 0 ? run->plan.workers[0] : NULL;

  if (!run->plan.assignment_kept)
    return sv__spill_write (run->spill, z0, z1, labels, error);
  return keeper->klass->slab_steps->store_kept (keeper, z0, z1, labels, error);
}

/* What a rank tells the others of the labels its device keeps. */
typedef struct
{
  gint32 exported;
  char host[64];
  guint8 handle[SV_KEPT_HANDLE_BYTES];
} KeptNote;

/* Ranks on one host whose devices keep their labels: rank 0's device reads
 * the others' from their memory (SvSlabSteps.export_kept, import_kept)
 * while they wait, and marks them in `taken`; only the others send theirs
 * through the host. (24 GiB at 2048³ on four ranks took 7 s through MPI
 * and host memory.) Every rank calls it; FALSE with `error` set on rank 0
 * when a copy failed. */
static gboolean
take_from_devices (Run *run, guint8 *taken, GError **error)
{
  const SvStreamRanks *ranks = run->ranks;
  SvBackend *worker = run->plan.n_workers == 1 ? run->plan.workers[0] : NULL;
  const SvSlabSteps *steps = worker != NULL ? worker->klass->slab_steps : NULL;
  const guint n = ranks->n_ranks;
  g_autofree KeptNote *notes = g_new0 (KeptNote, n);
  KeptNote mine = { 0 };
  gboolean ok = TRUE;

  if (ranks->gather == NULL || ranks->broadcast == NULL)
    return TRUE;
  g_strlcpy (mine.host, g_get_host_name (), sizeof mine.host);
  if (run->plan.assignment_kept && steps != NULL && steps->export_kept != NULL
      && steps->import_kept != NULL)
    mine.exported = steps->export_kept (worker, mine.handle, NULL);
  ranks->gather (ranks->self, &mine, sizeof mine, notes);
  if (ranks->rank == 0 && notes[0].exported)
    for (guint r = 1; r < n; r++)
      {
        guint z0, z1;
        int got;

        if (!notes[r].exported || strcmp (notes[r].host, mine.host) != 0)
          continue;
        sv_stream_rank_range (run->nz, r, n, &z0, &z1);
        got = ok ? steps->import_kept (worker, notes[r].handle, z0, z1, error) : 1;
        ok = ok && got >= 0;
        /* After a failure nobody sends: the ranks agree on it at once. */
        taken[r] = got != 0;
      }
  ranks->broadcast (ranks->self, 0, taken, n);
  if (ranks->rank == 0)
    {
      guint n_taken = 0;

      for (guint r = 1; r < n; r++)
        n_taken += taken[r] != 0;
      g_debug ("labels of %u of %u ranks taken from their devices", n_taken, n - 1);
    }
  return ok;
}

gboolean
sv__stream_run_gather_labels (Run *run, GError **error)
{
  g_autofree guint8 *taken = NULL;
  gboolean ok = TRUE;

  if (run->ranks != NULL && run->ranks->n_ranks > 1)
    {
      taken = g_new0 (guint8, run->ranks->n_ranks);
      ok = take_from_devices (run, taken, error);
    }
  return sv__stream_gather_labels (run->ranks, taken, ok, labels_source, store_received, run,
                                   run->nz, run->plane, run->nearest, run->depth, error);
}

/* Copies the labels to the writer, slab by slab. */
static gboolean
run_copy_labels (Run *run, SvTiffLabelWriter *writer, GError **error)
{
  for (guint z0 = 0; z0 < run->nz; z0 += run->depth)
    {
      guint z1 = MIN (z0 + run->depth, run->nz);
      if (!run_read_labels (run, z0, z1, run->nearest, error)
          || !sv_tiff_label_writer_append (writer, run->nearest, z1 - z0, error))
        return FALSE;
    }
  return TRUE;
}

/* Where a device's connectivity reads the labels and writes the result. */
typedef struct _LabelRoute
{
  Run *run;
  SvTiffLabelWriter *writer;
  gint64 usec_sink; /* in the label file's appends */
  gboolean chunks;  /* the file is a store that takes compressed chunks */
  guint compressed; /* slices that came compressed */
  /* A device's part of the file (route_part_open): the route whose
   * counts it joins. */
  struct _LabelRoute *owner;
} LabelRoute;

/* The parts' counts join their route's as they finish, at once. */
static GMutex parts_lock;

static gboolean
route_source (guint z0, guint z1, gint32 *labels, gpointer user_data, GError **error)
{
  return run_read_labels (((LabelRoute *)user_data)->run, z0, z1, labels, error);
}

/* Kept slabs straight into the connecting device's memory, slab by slab
 * (a range may cross keepers, the connecting device among them). */
static int
route_device_source (guint z0, guint z1, SvBackend *target, gpointer dst, gpointer user_data,
                     GError **error)
{
  Run *run = ((LabelRoute *)user_data)->run;
  const gsize plane = run->plane;

  if (!run->plan.assignment_kept)
    return 0;
  for (guint c0 = z0, c1; c0 < z1; c0 = c1)
    {
      SvBackend *keeper = sv__slab_plan_owner (&run->plan, c0);
      const SvSlabSteps *steps = keeper->klass->slab_steps;

      c1 = MIN (z1, (c0 / run->depth + 1) * run->depth);
      if (keeper->klass != target->klass || steps->copy_kept_to == NULL)
        return 0;
    }
  for (guint c0 = z0, c1; c0 < z1; c0 = c1)
    {
      SvBackend *keeper = sv__slab_plan_owner (&run->plan, c0);
      int done;

      c1 = MIN (z1, (c0 / run->depth + 1) * run->depth);
      done = keeper->klass->slab_steps->copy_kept_to (
          keeper, c0, c1, target, (gint32 *)dst + (gsize)(c0 - z0) * plane, error);
      if (done <= 0)
        return done;
    }
  return 1;
}

/* A cancel ends a device's connectivity at its next slab, as the host's
 * window checks it at every slice. */
static gboolean
writer_sink (guint z0, guint z1, const gint32 *labels, gpointer user_data, GError **error)
{
  LabelRoute *route = user_data;
  const gint64 t0 = g_get_monotonic_time ();
  gboolean ok;

  if (g_cancellable_set_error_if_cancelled (route->run->options->cancellable, error))
    return FALSE;
  ok = sv_tiff_label_writer_append (route->writer, labels, z1 - z0, error);
  route->usec_sink += g_get_monotonic_time () - t0;
  return ok;
}

/* Strips compressed on the device go straight to the file. */
static gboolean
strips_sink (guint z0, guint z1, const guint64 *sizes, const guint8 *bytes, gint64 negative_slice,
             gpointer user_data, GError **error)
{
  LabelRoute *route = user_data;
  const gint64 t0 = g_get_monotonic_time ();
  gboolean ok;

  if (g_cancellable_set_error_if_cancelled (route->run->options->cancellable, error))
    return FALSE;
  ok = route->chunks
           ? sv_tiff_label_writer_append_chunks (route->writer, z1 - z0, sizes, bytes,
                                                 negative_slice, error)
           : sv_tiff_label_writer_append_strips (route->writer, z1 - z0, sizes, bytes,
                                                 negative_slice, error);
  route->usec_sink += g_get_monotonic_time () - t0;
  route->compressed += z1 - z0;
  return ok;
}

/* A device's own part of the file: a route to a writer of its slices
 * from z0 on. */
static gpointer
route_part_open (guint z0, gpointer user_data, SvStripSink *strips, GError **error)
{
  LabelRoute *route = user_data;
  LabelRoute *part = g_new0 (LabelRoute, 1);

  part->run = route->run;
  part->chunks = route->chunks;
  part->owner = route;
  /* The later devices' parts share what the run's memory limit leaves. */
  part->writer = sv__tiff_label_writer_new_share (
      route->writer, z0, route->run->room.left / MAX (route->run->plan.n_workers - 1, 1), error);
  if (part->writer == NULL)
    {
      g_free (part);
      return NULL;
    }
  strips->user_data = part;
  return part;
}

static gboolean
route_part_close (gpointer data, gboolean ok, GError **error)
{
  LabelRoute *part = data;
  LabelRoute *owner = part->owner;

  const gint64 t0 = g_get_monotonic_time ();

  ok = ok && sv__tiff_label_writer_finish_share (part->writer, error);
  g_debug ("a device's part of the label file: %.3f s in its appends, %.3f s to finish it",
           part->usec_sink / 1e6, (g_get_monotonic_time () - t0) / 1e6);
  /* The parts write at once: the file's time is the longest part's. */
  g_mutex_lock (&parts_lock);
  owner->usec_sink = MAX (owner->usec_sink, part->usec_sink);
  owner->compressed += part->compressed;
  g_mutex_unlock (&parts_lock);
  sv_tiff_label_writer_free (part->writer);
  g_free (part);
  return ok;
}

/* Connectivity on the first backend's device, at once or window by window
 * (`extent` bounds a window; the same labels as the host's ring): the
 * number of labels, −1 when not even a window fits, −2 on error. */
static gint64
connect_on_device (Run *run, guint extent, gint64 min_size, gint64 max_size,
                   SvTiffLabelWriter *writer, SvStreamReport *report, GError **error)
{
  SvBackend *backend = run->plan.n_workers > 0 ? run->plan.workers[0] : NULL;
  const SvSlabSteps *steps = backend != NULL ? backend->klass->slab_steps : NULL;
  LabelRoute route = { run, writer, 0 };
  /* A store's rows, or a TIFF's pages, may come from each device at
   * once. */
  const SvShareParts parts
      = { sv__tiff_label_writer_share_depth (writer), route_part_open, route_part_close, &route };
  /* The device compresses the label file's strips, or an OME-Zarr store's
   * chunks, when the file takes them so (SV_DEVICE_STRIPS=0 sends it
   * labels, for comparison). */
  SvStripSink strips = { sv_tiff_label_writer_strip_rows (writer), strips_sink, &route };
  gboolean device_strips;
  gint64 n_labels = 0;
  guint held = run->nz;
  const gint64 t0 = g_get_monotonic_time ();
  int done;

  if (steps == NULL || steps->connect_volume == NULL)
    return -1;
  route.chunks
      = steps->compresses_chunks && sv_tiff_label_writer_chunk_shape (writer, strips.chunks);
  device_strips = (strips.rows_per_strip > 0 || route.chunks)
                  && g_strcmp0 (g_getenv ("SV_DEVICE_STRIPS"), "0") != 0;
  /* Several devices share the rule, each its own slices, when they can. */
  n_labels = sv__stream_device_pieces (run, extent, min_size, max_size, route_source,
                                       route_device_source, writer_sink,
                                       device_strips ? &strips : NULL,
                                       parts.row_depth > 0 ? &parts : NULL, &route,
                                       &report->connect_devices, &held, error);
  if (n_labels < -1)
    return -2;
  if (n_labels >= 0)
    {
      g_debug ("connectivity on %u devices: %.3f s, of it %.3f s in the label file's appends",
               report->connect_devices, (g_get_monotonic_time () - t0) / 1e6,
               route.usec_sink / 1e6);
      report->connect_on_device = TRUE;
      report->slices_compressed_on_device = route.compressed;
      report->connect_window = held;
      return n_labels;
    }
  done = steps->connect_volume (
      backend, run->nz, run->ny, run->nx, run->depth, extent, min_size, max_size,
      run->params->start_label, run->params->connectivity_rule,
      run->plan.assignment_kept && run->plan.n_workers == 1 ? NULL : route_source,
      run->plan.n_workers > 1 ? route_device_source : NULL, writer_sink, &route,
      device_strips ? &strips : NULL, &n_labels, &held, error);
  if (done < 0)
    return -2;
  g_debug ("connectivity on the device: %.3f s, of it %.3f s in the label file's appends",
           (g_get_monotonic_time () - t0) / 1e6, route.usec_sink / 1e6);
  report->connect_on_device = done == 1;
  report->connect_devices = done == 1 ? 1 : 0;
  report->slices_compressed_on_device = route.compressed;
  if (done == 1)
    report->connect_window = held;
  return done == 1 ? n_labels : -1;
}

/* Connectivity (or a copy) of the labels into the label file. */
gboolean
sv__stream_run_write_labels (Run *run, const char *output, const double spacing[3],
                             const char *unit, const LabelSummary *summary, SvRunStats *stats,
                             SvStreamReport *report, GError **error)
{
  const SvStreamOptions *options = run->options;
  const SvSlicParams *params = run->params;
  g_autoptr (SvTiffLabelWriter) writer = NULL;
  double label_spacing[3];
  const char *label_unit
      = sv_label_calibration (spacing, unit, options->label_spacing, label_spacing);

  writer = sv_tiff_label_writer_new (output, run->nz, run->ny, run->nx, summary->negative,
                                     label_spacing, label_unit, &options->write_options, error);
  if (writer == NULL)
    return FALSE;
  if (run->connected_labels >= 0)
    {
      /* The ranks ran the connectivity (stream-pieces.c). */
      if (!run_copy_labels (run, writer, error))
        return FALSE;
      stats->n_labels = (gsize)run->connected_labels;
    }
  else if (params->enforce_connectivity)
    {
      gint64 min_size, max_size, n_labels;

      sv_connectivity_sizes (summary->n_in, run->clusters.k, params->min_size_factor,
                             params->max_size_factor, &min_size, &max_size);
      n_labels
          = connect_on_device (run, summary->max_extent, min_size, max_size, writer, report, error);
      if (n_labels < -1)
        return FALSE;
      /* The host's window reads the labels a slice at a time from where
       * they are: the device that kept them, or the spill file. */
      if (n_labels < 0)
        {
          report->connect_window = (guint)MIN ((guint64)summary->max_extent + 3, (guint64)run->nz);
          n_labels = sv__stream_connectivity (
              labels_source, run, run->nz, run->ny, run->nx, report->connect_window, min_size,
              max_size, params->start_label, params->connectivity_rule, writer, run->depth,
              options->cancellable, error);
        }
      if (n_labels < 0)
        return FALSE;
      stats->n_labels = (gsize)n_labels;
    }
  else
    {
      if (!run_copy_labels (run, writer, error))
        return FALSE;
      stats->n_labels = (gsize)summary->n_distinct;
    }
  {
    const gint64 t0 = g_get_monotonic_time ();
    gboolean ok = options->finish_later && run->ranks == NULL
                      ? sv_tiff_label_writer_finish_later (writer, &report->finish, error)
                      : sv_tiff_label_writer_finish (writer, error);

    g_debug ("label file finished in %.3f s%s", (g_get_monotonic_time () - t0) / 1e6,
             report->finish != NULL ? ", its sync and rename left to the caller" : "");
    return ok;
  }
}

/* Supervox engine: the streamed SLIC run. It is the SLIC run (slic-pipeline.c)
 * with the volume cut into z-slabs: each slab goes through the slab steps
 * (SvSlabSteps: assignment, exact integer sums, the fill of unreached
 * voxels; stream-steps-cpu.c on the CPU) that a GPU or an MPI rank can run
 * on its own slabs, and the centres come from
 * the sums of all slabs, whose order does not matter. A slab needs no halo
 * for assignment: a voxel's cluster depends only on the centres and the
 * voxel. Assignments that are needed again (the last one, and SLIC-zero's)
 * go to a temporary file; so do the labels before connectivity, which then
 * runs over a window of slices (stream-connectivity.c). With several
 * ranks (stream-ranks.c) each runs the slab steps over its own z range,
 * the sums and maxima are combined after each pass, and rank 0 gathers
 * the labels and runs connectivity over the whole volume. The end of the
 * run, from the last assignment to the label file, is stream-labels.c. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-memory.h"
#include "supervox/sv-stream.h"

#include <string.h>

#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "supervox/sv-seeds.h"
#include "internal.h"
#include "supervox/sv-slic.h"
#include "backend-private.h"
#include "io-zarr-private.h"
#include "stream-run-private.h"
#include "run-iterations.h"

void
sv_stream_options_init_defaults (SvStreamOptions *options)
{
  memset (options, 0, sizeof *options);
  options->channel = -1;
  options->n_threads = 1;
  sv_tiff_write_options_init_defaults (&options->write_options);
}

guint64
sv_stream_in_memory_bytes (guint nz, guint ny, guint nx, guint nc, gboolean mask)
{
  guint64 n = (guint64)nz * ny * nx;

  /* The image and its prepared copy as float32, the assignment and the
   * labels as int32, the mask as bytes. */
  return n * (8 * (guint64)nc + 8 + (mask ? 1 : 0));
}

/* Points the context's mask at slab [z0, z1) (a mask file is read a slab
 * at a time). */
gboolean
sv__stream_run_mask_slab (Run *run, guint z0, guint z1, GError **error)
{
  if (!sv__stream_mask_any (&run->mask))
    return TRUE;
  run->ctx.mask = sv__stream_mask_slab (&run->mask, z0, z1, error);
  return run->ctx.mask != NULL;
}

/* One iteration: assignment and sums slab by slab, the centres from the
 * sums, then SLIC-zero's maxima with the new centres. */
static gboolean
run_iteration (Run *run, gboolean keep, GError **error)
{
  const gsize ns = 4 + run->nc, n_sums = MAX (run->clusters.k, 1) * ns;
  const gboolean slic_zero = run->ctx.slic_zero;
  const gboolean several = run->ranks != NULL && run->ranks->n_ranks > 1;
  gboolean ok = !g_cancellable_set_error_if_cancelled (run->options->cancellable, error);
  gint64 *sums;

  gsize b0 = 0, b1 = run->clusters.k;

  /* The clusters this rank's slabs reach, from the centres they use. */
  if (several)
    sv__stream_rank_band (run, &b0, &b1);

  /* One buffer for every pass: with millions of clusters it is hundreds of
   * MiB, and a fresh one costs its page faults every pass. A rank clears
   * only what it adds to: its band and the clusters it owns. */
  if (run->sums == NULL)
    run->sums = sv_try_alloc_n (n_sums, sizeof (gint64), TRUE, error,
                                "the sums of %" G_GSIZE_FORMAT " clusters", run->clusters.k);
  else if (several)
    sv__stream_rank_sums_zero (run, run->sums, b0, b1);
  else
    sv__clear_parallel (run->sums, n_sums * sizeof (gint64), run->options->n_threads);
  if (run->sums == NULL)
    ok = FALSE;
  sums = run->sums;

  /* From the second pass on: the first one decided which slabs the
   * device keeps, and they come first. */
  if (ok && (keep || slic_zero) && run->passes_done > 0)
    ok = sv__stream_run_try_keep (run, error);
  const gint64 t0 = g_get_monotonic_time ();
  ok = ok
       && sv__slab_pass (&run->plan, SV_SLAB_ASSIGN, keep || slic_zero, &run->ctx, &run->clusters,
                         sums, NULL, error);
  if (!sv_stream_ranks_agree (run->ranks, ok, error))
    return FALSE;
  const gint64 t1 = g_get_monotonic_time ();
  /* Ranks that summed other slabs add their sums: where the slabs reach
   * (stream-rank-sums.c), or over every cluster. Exact integers either
   * way, so the centres do not depend on how the volume was cut. */
  gboolean made = several && sv__stream_rank_sums_apply (run, sums, b0, b1);
  if (several && !made)
    {
      /* Every cluster's sums, over all ranks: outside the band they are
       * this rank's zeros. */
      const gsize ns_band0 = b0 < b1 ? b0 * ns : 0, ns_band1 = b0 < b1 ? b1 * ns : 0;

      memset (sums, 0, ns_band0 * sizeof (gint64));
      memset (sums + ns_band1, 0, (n_sums - ns_band1) * sizeof (gint64));
      run->ranks->sum_int64 (run->ranks->self, sums, n_sums);
    }
  const gint64 t2 = g_get_monotonic_time ();
  if (!made)
    sv__slic_centres_from_sums (&run->ctx, sums, &run->clusters);
  g_debug ("iteration: slab pass %.1f ms, ranks' sums %.1f ms, centres %.1f ms", (t1 - t0) / 1e3,
           (t2 - t1) / 1e3, (g_get_monotonic_time () - t2) / 1e3);
  run->passes_done++;
  if (!slic_zero)
    return TRUE;

  ok = sv__slab_pass (&run->plan, SV_SLAB_MAXIMA, FALSE, &run->ctx, &run->clusters, NULL,
                      run->clusters.max_dist_colour, error);
  if (!sv_stream_ranks_agree (run->ranks, ok, error))
    return FALSE;
  /* The maxima start at 1 and only rise: the largest is the same whichever
   * rank saw it. */
  if (several && run->clusters.k > 0)
    run->ranks->max_float (run->ranks->self, run->clusters.max_dist_colour, run->clusters.k);
  return TRUE;
}

/* Seeds, clusters, the slab's assignment and the labels' spill file. */
static gboolean
start_labels (Run *run, SvSeeds *seeds, SvSpill **spill, gint32 **nearest, GError **error)
{
  const guint shape[3] = { run->nz, run->ny, run->nx };
  const SvSlicParams *params = run->params;

  if (sv__stream_mask_any (&run->mask)
          ? !sv__stream_mask_seeds (&run->mask, shape, params->n_segments, run->depth, seeds, error)
          : !sv_seeds_grid (shape, params->n_segments, seeds, error))
    return FALSE;
  if (!sv_clusters_init (&run->clusters, seeds, run->nc, error))
    return FALSE;
  /* The mask is pointed at each slab before its steps (run_mask_slab). */
  sv_slic_context_init (&run->ctx, &run->view, run->mask.whole, seeds, params,
                        run->options->n_threads);
  *spill = run->spill
      = sv__spill_new (run->output, "labels", run->nz, run->plane * sizeof (gint32), run->z_begin,
                       (guint)(run->room.labels_host / (run->plane * sizeof (gint32))), error);
  if (*spill == NULL)
    return FALSE;
  sv__spill_set_threads (*spill, run->options->n_threads);
  *nearest = run->nearest = sv_try_alloc_n ((gsize)run->depth * run->plane, sizeof (gint32),
                                            FALSE, error, "the labels of %u slices", run->depth);
  return *nearest != NULL;
}

/* Reading ahead unless the options or SV_STREAM_READ_AHEAD=off (for
 * measuring what it gains) say no. */
static gboolean
read_ahead_wanted (const SvStreamOptions *options)
{
  return !options->no_read_ahead && g_strcmp0 (g_getenv ("SV_STREAM_READ_AHEAD"), "off") != 0;
}

static void
report_progress (const SvStreamOptions *o, SvStage stage, guint i, guint n)
{
  if (o->progress != NULL)
    o->progress (stage, i, n, o->user_data);
}

/* The streamed schedule of the one loop (run-iterations.c): an iteration
 * is a pass over the slabs. */
typedef struct
{
  Run *run;
  SvStreamReport *report;
  /* The clusters the last iteration started from, and whether it gave
   * them back unchanged on every rank. */
  SvClusters seen;
  gboolean settled;
} SlabPasses;

static gboolean
slab_passes_begin (gpointer self, guint pass, GError **error)
{
  ((SlabPasses *)self)->settled = FALSE;
  return TRUE;
}

/* SV_STREAM_SETTLE=off runs every iteration, for comparison. */
static gboolean
settling_wanted (void)
{
  return g_strcmp0 (g_getenv ("SV_STREAM_SETTLE"), "off") != 0;
}

/* Within a pass an iteration is a function of the clusters alone, as on
 * the CPU backend (backend-cpu.c): once an iteration gives back, bit for
 * bit, the clusters it started from (on every rank), every later one
 * would compute the same assignment and clusters again. They are skipped
 * up to the run's last, which runs to keep its assignment for the labels
 * (the same assignment again). */
static gboolean
slab_passes_iterate (gpointer self, guint iteration, guint n_total, GError **error)
{
  SlabPasses *passes = self;
  Run *run = passes->run;
  const gboolean last = iteration + 1 == n_total;
  const gint64 t0 = g_get_monotonic_time ();

  if (passes->settled && !last)
    {
      passes->report->iterations_settled++;
      return TRUE;
    }
  const gboolean remembered
      = !last && settling_wanted ()
        && sv__clusters_remember (&passes->seen, &run->clusters, run->options->n_threads);

  /* The last assignment makes the labels: it is kept. */
  if (!run_iteration (run, last, error))
    return FALSE;
  if (iteration == 0)
    {
      passes->report->seconds_first_pass
          = (double)(g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
      /* The slabs are on the devices or kept by now. */
      sv__slab_plan_close_readers (&run->plan);
      g_debug ("first pass: %.3f s, %" G_GUINT64_FORMAT " slabs read by the workers",
               passes->report->seconds_first_pass, run->image.slabs_read_by_workers);
    }
  if (!last)
    {
      /* Every rank settles or none: the ranks meet in every pass. */
      gint64 changed = !remembered
                       || !sv__clusters_same (&passes->seen, &run->clusters,
                                              run->options->n_threads);

      if (run->ranks != NULL && run->ranks->n_ranks > 1)
        run->ranks->max_int64 (run->ranks->self, &changed, 1);
      passes->settled = changed == 0;
    }
  return TRUE;
}

/* Every pass and iteration, with the options' progress, cancellation and
 * iteration hook; *done: how many iterations that was. */
static gboolean
run_passes (Run *run, SvStreamReport *report, guint *done, GError **error)
{
  const SvStreamOptions *options = run->options;
  SlabPasses passes = { run, report, { 0 }, FALSE };
  const SvIterationView view = { run->plan.workers[0], NULL, &run->clusters };
  const SvIterationSchedule schedule = {
    .ctx = &run->ctx,
    .clusters = &run->clusters,
    .n_passes = sv__stream_mask_any (&run->mask) ? 2 : 1,
    .n_iterations = (guint)run->params->max_num_iter,
    .self = &passes,
    .begin_pass = slab_passes_begin,
    .iterate = slab_passes_iterate,
    .view = &view,
  };
  /* Ranks stop together: each checks in run_iteration, and they agree. */
  const SvRunControl control = {
    .progress = options->progress,
    .user_data = options->user_data,
    .cancellable = run->ranks != NULL && run->ranks->n_ranks > 1 ? NULL : options->cancellable,
    .iteration = options->iteration,
  };

  gboolean ok;

  *done = schedule.n_passes * schedule.n_iterations;
  ok = sv__run_iterations (&schedule, &control, error);
  sv_clusters_clear (&passes.seen);
  if (report->iterations_settled > 0)
    g_debug ("streamed run: %u iterations not run, their pass settled", report->iterations_settled);
  return ok;
}

G_DEFINE_QUARK (sv-stream-shallower, sv__stream_shallower)

/* The devices that opened while the statistics and seeds ran: the slabs
 * the run chose must fit them, as the plan would have checked. */
static gboolean
await_backends (Run *run, gboolean mask_in_memory, GError **error)
{
  const SvStreamOptions *options = run->options;
  const SvBackendClass *klass;
  guint64 least_free = 0;
  guint n = options->n_backends;

  if (!options->await_backends (options->await_data, &run->backends, &least_free, error))
    return FALSE;
  if (run->backends == NULL || n == 0)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                           "the devices awaited gave no backend");
      return FALSE;
    }
  run->n_backends = n;
  klass = run->backends[0]->klass;
  if (options->slab_depth == 0 && least_free > 0 && klass->stream_max_depth != NULL)
    {
      const guint cap = klass->stream_max_depth (least_free, run->ny, run->nx, run->nc,
                                                 run->params->n_segments, mask_in_memory);

      g_debug ("streamed run: the devices hold slabs of %u slices, %u chosen", cap,
               run->depth_chosen);
      if (cap < run->depth_chosen)
        {
          g_set_error (error, SV__STREAM_SHALLOWER, (gint)cap,
                       "the devices hold slabs of %u slices, not %u", cap, run->depth_chosen);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
sv_stream_slic_run (const char *input, const char *output, const SvSlicParams *params,
                    const guint8 *mask, const SvStreamOptions *options, SvRunStats *stats,
                    SvStreamReport *report, GError **error)
{
  g_autoptr (SvTiffSlabReader) own_reader = NULL;
  SvTiffSlabReader *reader;
  g_autoptr (SvSpill) spill = NULL;
  g_autofree gint32 *nearest = NULL;
  const SvTiffSlabInfo *info;
  SvTiffReadOptions read_options;
  SvSeeds seeds = { 0 };
  SvRunStats local_stats = { 0 };
  SvStreamReport local_report = { 0 };
  LabelSummary summary;
  Run run = { 0 };
  guint done = 0, scan_depth;
  gint64 t0, t1, t2;
  double seconds_pieces = 0;
  gboolean ok = FALSE;

  g_return_val_if_fail (input != NULL && output != NULL && params != NULL, FALSE);
  g_return_val_if_fail (options != NULL, FALSE);
  g_return_val_if_fail ((mask != NULL) + (options->mask_path != NULL)
                            + (options->mask_source != NULL)
                        <= 1,
                        FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (stats == NULL)
    stats = &local_stats;
  if (report == NULL)
    report = &local_report;
  memset (stats, 0, sizeof *stats);
  memset (report, 0, sizeof *report);
  if (!sv_slic_params_validate (params, error))
    return FALSE;

  t0 = g_get_monotonic_time ();
  g_debug ("streamed run: starts");
  report_progress (options, SV_STAGE_PREPARE, 0, 0);
  sv_tiff_read_options_init_defaults (&read_options);
  read_options.channel = options->channel;
  read_options.n_threads = options->n_threads;
  if (options->source != NULL)
    reader = options->source;
  else
    reader = own_reader = sv_tiff_slab_reader_open (input, &read_options, error);
  if (!sv_stream_ranks_agree (options->ranks, reader != NULL, error))
    return FALSE;
  info = sv_tiff_slab_reader_info (reader);
  run.params = params;
  run.options = options;
  run.connected_labels = -1;
  run.output = output;
  run.input = input;
  run.nz = info->nz;
  run.ny = info->ny;
  run.nx = info->nx;
  run.nc = info->nc;
  run.plane = (gsize)info->ny * info->nx;
  run.ranks = options->ranks;
  run.backends = options->backends;
  run.n_backends = options->await_backends != NULL ? 0 : options->n_backends;
  run.z_end = run.nz;
  if (run.ranks != NULL && run.ranks->n_ranks > 1)
    sv_stream_rank_range (run.nz, run.ranks->rank, run.ranks->n_ranks, &run.z_begin, &run.z_end);
  if (!sv_stream_ranks_agree (run.ranks,
                              sv__stream_mask_open (&run.mask, mask, options->mask_path,
                                                    options->mask_source,
                                                    options->mask_source_name, run.nz,
                                                    run.ny, run.nx, options->n_threads, error),
                              error))
    goto out;
  {
    float sigma[3];
    sv_slic_params_effective_sigma (params, sigma);
    /* The iterations read the smoothed image back without a halo. */
    run.depth = options->slab_depth > 0
                    ? MIN (options->slab_depth, run.nz)
                    : sv__stream_choose_depth (reader, sv__stream_mask_any (&run.mask),
                                               run.mask.reader != NULL, params->n_segments,
                                               options->memory_limit);
    if (options->slab_depth == 0 && options->max_slab_depth > 0)
      run.depth = MIN (run.depth, options->max_slab_depth);
    run.depth_chosen = run.depth;
    /* Several devices take runs of neighbouring slabs: slabs of one depth
     * that the devices share evenly (1024 slices in slabs of 146 left the
     * last device 148 slices against 292 for the others, and every pass
     * waited for those). Never deeper than the memory allows. */
    if (options->slab_depth == 0 && options->n_backends > 1)
      {
        const guint n = run.z_end - run.z_begin, w = options->n_backends;
        /* Slabs of whole rows of a store's chunks where they fit, so that
         * every device's slices begin at a row and each writes its own
         * rows (stream-device-pieces.c). */
        const guint row = options->write_options.zarr != NULL
                              ? sv__zarr_label_chunk_depth (run.nz, run.ny, run.nx,
                                                            &options->write_options)
                              : 1;
        const guint unit = run.depth >= row ? row : 1;
        const guint depth = run.depth / unit * unit;
        const guint per_worker = (n + depth * w - 1) / (depth * w);
        const guint even = (n + per_worker * w - 1) / (per_worker * w);

        run.depth = MAX ((even + unit - 1) / unit * unit, 1);
      }
    sv__stream_run_room (
        reader, sv__stream_mask_any (&run.mask), run.mask.reader != NULL, params, run.depth,
        options->memory_limit, run.z_end - run.z_begin,
        run.ranks == NULL || run.ranks->rank == 0 ? run.nz : run.z_end - run.z_begin, &run.room);
    /* The statistics passes fill the smoothed image's part in memory. */
    scan_depth = options->slab_depth > 0
                     ? run.depth
                     : sv__stream_choose_scan_depth (
                         reader, sv__stream_halo (sigma[0]),
                         sv__stream_room_scan_limit (&run.room, options->memory_limit));
  }

  /* Ranks size their slabs from their own free memory; they take the
   * smallest, so that the labels they hand over come in the same slabs. */
  if (run.ranks != NULL && run.ranks->n_ranks > 1)
    {
      gint64 depths[2] = { -(gint64)run.depth, -(gint64)scan_depth };

      run.ranks->max_int64 (run.ranks->self, depths, 2);
      run.depth = (guint)-depths[0];
      scan_depth = (guint)-depths[1];
    }

  if (!sv__stream_image_init (&run.image, reader, &run.mask, params, scan_depth, run.depth,
                              options->n_threads, read_ahead_wanted (options),
                              run.room.prepared_host, output, options->ranks, error))
    goto out;
  run.view.nz = run.nz;
  run.view.ny = run.ny;
  run.view.nx = run.nx;
  run.view.nc = run.nc;
  run.view.max_abs = run.image.max_abs;
  run.view.is_lab = run.image.lab;
  t1 = g_get_monotonic_time ();
  stats->seconds_prepare = (double)(t1 - t0) / G_USEC_PER_SEC;
  g_debug ("streamed run: statistics in %.3f s", (double)(t1 - t0) / G_USEC_PER_SEC);

  if (!sv_stream_ranks_agree (run.ranks, start_labels (&run, &seeds, &spill, &nearest, error),
                              error))
    goto out;
  g_debug ("streamed run: seeds in %.3f s",
           (double)(g_get_monotonic_time () - t1) / G_USEC_PER_SEC);
  if (options->await_backends != NULL && !await_backends (&run, mask != NULL, error))
    goto out;
  if (!sv__stream_run_plan_workers (&run, &read_options, error))
    goto out;

  g_debug ("streamed run: prepared, first pass starts");
  if (!run_passes (&run, report, &done, error))
    goto out;
  t2 = g_get_monotonic_time ();
  g_debug ("streamed run: passes done");
  sv__stream_rank_centres_all (&run);
  if (!sv__stream_run_final_labels (&run, params->max_num_iter > 0, &summary, error))
    goto out;
  g_debug ("streamed run: final labels made");
  if (sv__stream_pieces_applies (&run, summary.max_extent))
    {
      gint64 min_size, max_size;
      const gint64 t_pieces = g_get_monotonic_time ();

      sv_connectivity_sizes (summary.n_in, run.clusters.k, params->min_size_factor,
                             params->max_size_factor, &min_size, &max_size);
      run.connected_labels
          = sv__stream_pieces_connect (&run, summary.max_extent, min_size, max_size, error);
      if (run.connected_labels < 0)
        goto out;
      seconds_pieces = (double)(g_get_monotonic_time () - t_pieces) / G_USEC_PER_SEC;
      report->connect_by_ranks = TRUE;
      report->connect_window
          = (guint)MIN ((guint64)(run.z_end - run.z_begin) + 3 * (guint64)summary.max_extent + 2,
                        (guint64)run.nz);
    }
  report->seconds_labels = (double)(g_get_monotonic_time () - t2) / G_USEC_PER_SEC;
  /* Without a gatherer the ranks write their own pages of the file. */
  if (!sv__stream_rank_file_applies (&run) && !sv__stream_rank_zarr_applies (&run)
      && !sv__stream_run_gather_labels (&run, error))
    goto out;
  g_debug ("streamed run: labels made and connected or gathered in %.3f s (pieces %.3f s)",
           (g_get_monotonic_time () - t2) / 1e6, seconds_pieces);
  t2 = g_get_monotonic_time ();
  stats->seconds_iterate = (double)(t2 - t1) / G_USEC_PER_SEC - seconds_pieces;
  report_progress (options, SV_STAGE_CONNECT, done, done);
  stats->n_clusters = run.clusters.k;
  stats->iterations = done;

  /* Rank 0 writes the file and the others wait to hear how that went, or
   * every rank writes its pages. */
  if (sv__stream_rank_file_applies (&run))
    {
      ok = sv__stream_rank_file_write (&run, output, info->spacing, info->unit, &summary, stats,
                                       error);
      report->file_by_ranks = ok;
    }
  else if (sv__stream_rank_zarr_applies (&run))
    {
      ok = sv__stream_rank_zarr_write (&run, output, info->spacing, info->unit, &summary, stats,
                                       error);
      report->file_by_ranks = ok;
    }
  else if (run.ranks != NULL && run.ranks->rank > 0)
    ok = TRUE;
  else
    ok = sv__stream_run_write_labels (&run, output, info->spacing, info->unit, &summary, stats,
                                      report, error);
  ok = sv_stream_ranks_agree (run.ranks, ok, error);
  if (ok)
    {
      stats->seconds_connect
          = (double)(g_get_monotonic_time () - t2) / G_USEC_PER_SEC + seconds_pieces;
      report_progress (options, SV_STAGE_DONE, done, done);
    }

out:
  g_debug ("streamed run: ends");
  for (guint w = 0; w < run.plan.n_workers; w++)
    {
      const SvSlabSteps *steps = run.plan.workers[w]->klass->slab_steps;

      if (steps->peak_device_bytes != NULL)
        report->device_peak_bytes += steps->peak_device_bytes (run.plan.workers[w]);
      steps->release (run.plan.workers[w]);
    }
  report->n_workers = run.plan.n_workers;
  sv__stream_run_plan_clear (&run.plan);
  g_clear_pointer (&run.own_cpu, sv_backend_free);
  report->slab_depth = run.depth;
  report->n_slabs = run.depth > 0 ? (run.nz + run.depth - 1) / run.depth : 0;
  report->halo = run.image.halo;
  report->image_passes = run.nz > 0 ? run.image.slices_read / run.nz : 0;
  report->kept_host_bytes = run.image.kept_bytes + sv__spill_host_bytes (run.image.prepared);
  report->resident_slabs = run.image.n_resident;
  report->labels_on_device = run.plan.assignment_kept;
  report->kept_file_bytes = sv__spill_file_bytes (run.image.prepared);
  report->labels_host_bytes = sv__spill_host_bytes (spill);
  report->labels_file_bytes = sv__spill_file_bytes (spill);
  sv__stream_image_clear (&run.image);
  report->slabs_read_ahead = run.image.slabs_read_ahead;
  report->slabs_read_by_workers = run.image.slabs_read_by_workers;
  sv__stream_mask_clear (&run.mask);
  g_clear_pointer (&run.sums, g_free);
  sv_clusters_clear (&run.clusters);
  sv_seeds_clear (&seeds);
  g_debug ("streamed run: released");
  /* A caller that wants no report gets its file finished here. */
  if (report == &local_report && report->finish != NULL)
    ok = sv_file_finish_complete (g_steal_pointer (&report->finish), ok ? error : NULL) && ok;
  else if (!ok && report->finish != NULL)
    sv_file_finish_abort (g_steal_pointer (&report->finish));
  return ok;
}

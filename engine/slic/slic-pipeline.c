/* Supervox engine: one SLIC run, driven stage by stage on any backend.
 *
 * Everything that does not depend on where the voxels live happens here,
 * once: validation, seeding, the teaching rule, the connectivity sizes,
 * the centres (NaN for dead clusters) and the stage times. The passes and
 * iterations, with progress, cancellation and the iteration hook, are the
 * loop that the streamed run shares (run-iterations.c); here they are the
 * whole-volume schedule. The backends implement the stages
 * (supervox/sv-backend-class.h). */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "backend-private.h"
#include "internal.h"
#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "run-iterations.h"

static gint64
now (SvBackend *backend)
{
  return backend->klass->clock != NULL ? backend->klass->clock (backend) : g_get_monotonic_time ();
}

static double
seconds (gint64 from, gint64 to)
{
  return (double)(to - from) / G_USEC_PER_SEC;
}

static void
report (const SvRunControl *control, SvStage stage, guint i, guint n)
{
  if (control->progress != NULL)
    control->progress (stage, i, n, control->user_data);
}

/* The in-memory schedule of the one loop (run-iterations.c): each
 * iteration is the backend's whole-volume stages. */
typedef struct
{
  SvBackend *backend;
  SvSlicRun *run;
} WholeVolume;

static gboolean
whole_volume_begin_pass (gpointer self, guint pass, GError **error)
{
  WholeVolume *w = self;

  w->run->pass = pass;
  return w->backend->klass->begin_pass (w->backend, w->run, error);
}

static gboolean
whole_volume_iterate (gpointer self, guint iteration, guint n_total, GError **error)
{
  WholeVolume *w = self;

  if (!w->backend->klass->iterate (w->backend, w->run, error))
    return FALSE;
  w->run->iteration++;
  return TRUE;
}

static gboolean
whole_volume_sync (gpointer self, GError **error)
{
  WholeVolume *w = self;

  return w->backend->klass->sync (w->backend, error);
}

/* The passes and their iterations, through the one loop. */
static gboolean
iterate (SvBackend *backend, SvSlicRun *run, const SvRunControl *control, GError **error)
{
  WholeVolume whole = { backend, run };
  const SvIterationView view = { backend, run, &run->clusters };
  const SvIterationSchedule schedule = {
    .ctx = &run->ctx,
    .clusters = &run->clusters,
    .n_passes = run->n_passes,
    .n_iterations = (guint)run->params->max_num_iter,
    .self = &whole,
    .begin_pass = whole_volume_begin_pass,
    .iterate = whole_volume_iterate,
    .sync = backend->klass->sync != NULL ? whole_volume_sync : NULL,
    .view = &view,
  };

  return sv__run_iterations (&schedule, control, error);
}

void
sv__slic_pass_start (SvSlicContext *ctx, SvClusters *clusters, guint pass, guint n_passes)
{
  ctx->ignore_colour = pass + 1 < n_passes;
  for (gsize k = 0; k < clusters->k; k++)
    clusters->max_dist_colour[k] = 1.0f;
}

gboolean
sv__slic_seed (const guint shape[3], const guint8 *mask, gint64 n_segments, SvSeeds *seeds,
               GError **error)
{
  if (mask != NULL)
    return sv_seeds_mask (shape, mask, n_segments, seeds, error);
  return sv_seeds_grid (shape, n_segments, seeds, error);
}

static gboolean
run_stages (SvBackend *backend, const SvSlicParams *params, const SvRunControl *control,
            SvSlicRun *run, SvSeeds *seeds, SvRunStats *stats, GError **error)
{
  const SvBackendClass *klass = backend->klass;
  const SvPrepared *image;
  gint64 t0, t1, t2, t3, n_labels = 0;

  report (control, SV_STAGE_PREPARE, 0, 0);
  t0 = now (backend);
  image = klass->prepare (backend, params, control->n_threads, &stats->prepare_reused, error);
  if (image == NULL)
    return FALSE;
  t1 = now (backend);
  stats->seconds_prepare = seconds (t0, t1);
  if (g_cancellable_set_error_if_cancelled (control->cancellable, error))
    return FALSE;

  const guint shape[3] = { backend->volume->nz, backend->volume->ny, backend->volume->nx };

  if (!sv__slic_seed (shape, backend->mask, params->n_segments, seeds, error)
      || !sv_clusters_init (&run->clusters, seeds, image->nc, error))
    return FALSE;
  run->seeds = seeds;
  run->n_passes = backend->mask != NULL ? 2 : 1;
  sv_slic_context_init (&run->ctx, image, backend->mask, seeds, params, control->n_threads);
  backend->has_result = FALSE;
  if (!klass->start (backend, run, error) || !iterate (backend, run, control, error)
      || !klass->assignment_labels (backend, run, params->max_num_iter > 0, error))
    return FALSE;
  t2 = now (backend);

  if (params->enforce_connectivity)
    {
      gint64 min_size, max_size;

      sv_connectivity_sizes (backend->n_mask_in, run->clusters.k, params->min_size_factor,
                             params->max_size_factor, &min_size, &max_size);
      if (!klass->connect (backend, run, min_size, max_size, &n_labels, error))
        return FALSE;
    }
  else if (!klass->count_labels (backend, run, &n_labels, error))
    return FALSE;
  t3 = now (backend);
  if (params->enforce_connectivity)
    report (control, SV_STAGE_CONNECT, run->iteration, run->iteration);

  if (klass->read_clusters != NULL && !klass->read_clusters (backend, run, error))
    return FALSE;
  g_free (backend->centres);
  backend->centres = sv__clusters_centres_zyx (&run->clusters);
  backend->k = run->clusters.k;
  backend->has_result = TRUE;

  stats->n_clusters = run->clusters.k;
  stats->n_labels = (gsize)MAX (n_labels, 0);
  stats->iterations = run->iteration;
  stats->seconds_iterate = seconds (t1, t2);
  stats->seconds_connect = seconds (t2, t3);
  report (control, SV_STAGE_DONE, run->iteration, run->iteration);
  return TRUE;
}

gboolean
sv__slic_pipeline_run (SvBackend *backend, const SvSlicParams *params, const SvRunControl *control,
                       SvRunStats *stats, GError **error)
{
  SvSlicParams run_params;
  SvSeeds seeds = { 0 };
  SvSlicRun run;
  gboolean ok;

  memset (stats, 0, sizeof *stats);
  if (backend->volume == NULL)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "no volume is loaded");
      return FALSE;
    }
  if (!sv_slic_params_validate (params, error))
    return FALSE;
  sv_slic_params_apply_teaching (params, control->stop_after_iteration, &run_params);

  memset (&run, 0, sizeof run);
  run.params = &run_params;
  run.cancellable = control->cancellable;
  ok = run_stages (backend, &run_params, control, &run, &seeds, stats, error);
  if (backend->klass->finish != NULL)
    backend->klass->finish (backend, ok);
  sv_clusters_clear (&run.clusters);
  sv_seeds_clear (&seeds);
  return ok;
}

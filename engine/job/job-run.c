/* Supervox engine: what a job's worker does with one request: the run on
 * the exact or the preview volume, teaching steps from snapshots, live
 * iterations of long runs, and the result. */
#define G_LOG_DOMAIN "sv-job"

#include "job-private.h"

#include <math.h>
#include <string.h>

#include "job-result.h"
#include "preview.h"

/* An exact run expected to take longer than this shows its iterations as
 * they complete, at most one every LIVE_ITERATION_GAP_SECONDS. */
#define LIVE_ITERATIONS_MIN_SECONDS 0.3
#define LIVE_ITERATION_GAP_SECONDS 0.1
/* A preview keeps at least this many voxels per supervoxel. */
#define PREVIEW_MIN_VOXELS_PER_SEGMENT 27
#define PREVIEW_MAX_FACTOR 16

/* A teaching run that keeps its iterations: the step asked for is delivered
 * from the hook as soon as it is reached, and the run goes on to the last
 * iteration for the steps after it. */
typedef struct
{
  const SvJobRequest *request;
  const char *backend; /* the name the run was asked on */
  guint step;
  gint64 t0;
  gboolean delivered;
} TeachingRun;

/* A long exact run whose iterations are delivered as they complete. */
typedef struct
{
  const SvJobRequest *request;
  gint64 t0, last_us;
  gint64 gap_us; /* between two deliveries */
} LiveRun;

/* The environment variable SV_JOB_LIVE_ITERATIONS=always shows every
 * iteration of every exact run (for testing the path on small volumes). */
static gboolean
live_iterations_always (void)
{
  return g_strcmp0 (g_getenv ("SV_JOB_LIVE_ITERATIONS"), "always") == 0;
}

typedef struct
{
  SvJob *job;
  guint64 generation;
  TeachingRun *teaching; /* NULL for other runs */
  LiveRun *live;         /* NULL for other runs */
} ProgressData;

static void
job_progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  ProgressData *p = user_data;
  g_mutex_lock (&p->job->lock);
  sv__job_run_progress (&p->job->run, stage, iteration, n_iterations, g_get_monotonic_time ());
  g_mutex_unlock (&p->job->lock);

  sv__job_deliver_progress (p->job->sink, p->generation, stage, iteration, n_iterations);
}

/* Makes slot->backend the one `name` asks for. */
static gboolean
job_ensure_backend (SvJobSlot *slot, const char *name, GError **error)
{
  if (slot->backend && g_strcmp0 (slot->request, name) == 0)
    return TRUE;
  g_clear_pointer (&slot->backend, sv_backend_free);
  slot->request[0] = '\0';
  slot->backend = sv_backend_new (name, error);
  if (!slot->backend)
    return FALSE;
  g_strlcpy (slot->request, name, sizeof slot->request);
  return TRUE;
}

/* The preview factor for `request`: from the last preview's time when there
 * is one, else from the exact run's; 1 when the volume is too small for a
 * coarser copy to keep enough voxels per supervoxel. */
static guint
job_preview_factor (SvJob *job, const SvJobRequest *request)
{
  const SvVolume *v = job->volume;
  double target = request->preview_seconds;
  gsize n = sv_volume_n_voxels (v);
  guint f = job->preview_factor ? job->preview_factor : 2;
  double est;

  g_mutex_lock (&job->lock);
  /* Only the stages shrink with the factor (cubically: fewer voxels along
   * every axis); handing the result over does not. */
  if (job->preview_timing.valid && job->preview_factor)
    {
      est = sv__job_estimate_locked (job, request) - job->preview_timing.other_s;
      /* A band of 4× around the target keeps the factor, and the prepared
       * preview, stable. */
      if (est > 2.0 * target)
        f++;
      else if (est < target / 2.0 && f > 2)
        f--;
    }
  else if (job->exact_timing.valid)
    {
      SvJobRequest r = *request;
      r.preview_seconds = 0;
      est = sv__job_estimate_locked (job, &r) - job->exact_timing.other_s;
      f = (guint)ceil (cbrt (MAX (est, 0.0) / target));
    }
  g_mutex_unlock (&job->lock);

  f = CLAMP (f, 2, PREVIEW_MAX_FACTOR);
  while (f >= 2)
    {
      guint s[3];
      sv_preview_shape (v, f, s);
      if ((double)s[0] * s[1] * s[2] / MAX (request->params.n_segments, 1)
          >= PREVIEW_MIN_VOXELS_PER_SEGMENT)
        break;
      f--;
    }
  return f < 2 || n < 2 ? 1 : f;
}

/* Makes job->preview hold the volume downsampled by `factor`. */
static gboolean
job_ensure_preview (SvJob *job, guint factor, GError **error)
{
  g_autofree guint8 *mask = NULL;
  SvVolume *small;

  if (job->preview_factor == factor)
    return TRUE;
  small = sv_preview_volume_new (job->volume, job->mask, factor, job->mask ? &mask : NULL, error);
  if (!small)
    return FALSE;
  g_clear_pointer (&job->preview.backend, sv_backend_free);
  g_clear_pointer (&job->preview_volume, sv_volume_free);
  g_clear_pointer (&job->preview_mask, g_free);
  job->preview_volume = small;
  job->preview_mask = g_steal_pointer (&mask);
  job->preview.volume = job->preview_volume;
  job->preview.mask = job->preview_mask;
  job->preview_factor = factor;
  g_mutex_lock (&job->lock);
  memset (&job->preview_timing, 0, sizeof job->preview_timing);
  g_mutex_unlock (&job->lock);
  return TRUE;
}

/* Runs on the slot's backend for `name`, as sv_run_execute runs an
 * in-memory plan. A device failure, also of a device backend that cannot
 * start, reruns on the CPU; the CPU backend then takes the slot and
 * *device_error says why. The window falls back whatever the panel asked
 * for: its user gets labels and a note rather than an empty view. */
static gboolean
job_run_on (SvJob *job, SvJobSlot *slot, const char *name, const SvSlicParams *params,
            const SvRunControl *control, SvRunStats *stats, GError **device_error,
            GError **error)
{
  SvRunPlan plan = { .mode = SV_RUN_IN_MEMORY, .n_workers = 1 };
  SvRunJobSpec spec = { .plan = &plan, .params = params, .control = control,
                        .devices = &job->devices, .reuse_loaded = TRUE };
  SvRunReport report;
  GError *local = NULL;
  gboolean ok;

  if (!job_ensure_backend (slot, name, &local))
    {
      if (sv_backend_class_lookup (name) == sv_backend_cpu_class ()
          || !sv_backend_error_is_device_failure (local))
        {
          g_propagate_error (error, local);
          return FALSE;
        }
      g_propagate_error (device_error, local);
      if (!job_ensure_backend (slot, sv_backend_class_name (sv_backend_cpu_class ()), error))
        return FALSE;
    }
  plan.backend = sv_backend_get_class (slot->backend);
  plan.on_device = sv_backend_class_is_device (plan.backend);
  plan.falls_back = plan.on_device;
  spec.volume = slot->volume;
  spec.mask = slot->mask;
  spec.backend = slot->backend;
  ok = sv_run_execute (&spec, &report, error);
  if (ok)
    *stats = report.stats;
  if (report.device_error != NULL)
    g_propagate_error (device_error, g_steal_pointer (&report.device_error));
  if (ok && report.own_backend != NULL)
    {
      g_clear_pointer (&slot->backend, sv_backend_free);
      slot->backend = g_steal_pointer (&report.own_backend);
      g_strlcpy (slot->request, sv_backend_class_name (sv_backend_cpu_class ()),
                 sizeof slot->request);
    }
  sv_run_report_clear (&report);
  return ok;
}

/* The labels of a host-path result: the backend's own host buffer when it
 * has one (a 512³ volume's labels are 512 MiB), else a copy. */
static gboolean
job_take_host_labels (SvJobResult *result, SvBackend *backend, GError **error)
{
  const guint *n = result->labels_shape;
  gint32 *data = sv_backend_take_labels (backend, (gsize)n[0] * n[1] * n[2], error);

  if (data == NULL)
    return FALSE;
  sv__job_result_set_host_labels (result, data);
  return TRUE;
}

/* The SV_JOB_HOST_LABELS=always environment variable copies a device
 * result's labels to the host as every run did before they stayed on the
 * device (to measure what that saves). */
static gboolean
host_labels_always (void)
{
  return g_strcmp0 (g_getenv ("SV_JOB_HOST_LABELS"), "always") == 0;
}

/* The result of the run that `slot` just made. The result hook sees it
 * first (exact runs only: a preview's labels are of another shape); when
 * the hook keeps the labels on the device, no host copy is made. */
static SvJobResult *
job_collect (SvJob *job, SvJobSlot *slot, guint factor, const SvJobRequest *request,
             const SvRunStats *stats, GError **error)
{
  const SvVolume *v = job->volume;
  const SvVolume *ran = slot->volume;
  const guint shape[3] = { ran->nz, ran->ny, ran->nx };
  g_autoptr (SvJobResult) result = NULL;
  SvJobResultHook hook;
  gpointer hook_data;
  gsize k;

  /* A preview keeps its coarse labels: drawing looks them up block by
   * block, and upsampling a big volume's would cost more than the run. */
  result = sv__job_result_new (request->generation, &request->params,
                               sv_backend_get_name (slot->backend), shape,
                               ran == v ? request->params.spacing : ran->spacing);
  result->stop_after_iteration = request->stop_after_iteration;
  result->stats = *stats;
  result->preview_factor = factor;

  g_mutex_lock (&job->lock);
  hook = job->hook;
  hook_data = job->hook_data;
  g_mutex_unlock (&job->lock);
  if (hook && factor == 1)
    hook (slot->backend, result, hook_data);
  if ((result->device_labels == NULL || host_labels_always ())
      && !job_take_host_labels (result, slot->backend, error))
    return NULL;

  k = stats->n_clusters;
  result->centres = g_new0 (float, MAX (k, 1) * 3);
  if (k > 0 && !sv_backend_get_centres (slot->backend, result->centres, &k, error))
    return NULL;
  result->n_centres = MIN (k, stats->n_clusters);
  if (factor > 1)
    {
      const guint n[3] = { v->nz, v->ny, v->nx };
      /* A coarse voxel i covers fine voxels [i·f, i·f + f). */
      for (gsize i = 0; i < result->n_centres * 3; i++)
        if (n[i % 3] > 1)
          result->centres[i] = result->centres[i] * factor + (factor - 1) / 2.0f;
    }
  return g_steal_pointer (&result);
}

/* A result for a teaching step from copies of a snapshot's labels and
 * centres. */
static SvJobResult *
teaching_result (SvJob *job, const SvJobRequest *request, const SvTeachingStep *step)
{
  const gsize n = sv_volume_n_voxels (job->volume);
  SvJobResult *result = sv__job_step_result_new (
      request, job->volume, step->backend, g_memdup2 (step->labels, MAX (n, 1) * sizeof (gint32)),
      g_memdup2 (step->centres, MAX (step->n_centres, 1) * 3 * sizeof (float)), step->n_centres,
      (guint)MIN (request->stop_after_iteration, request->params.max_num_iter));

  result->stop_after_iteration = request->stop_after_iteration;
  result->stats.n_labels = step->n_labels;
  return result;
}

/* Delivers the labels after `iteration` of a long exact run (not the
 * last: the final result follows it at once). */
static void
job_live_iteration (SvJob *job, LiveRun *live, const SvIterationView *view, guint iteration,
                    guint n_iterations)
{
  const SvVolume *v = job->volume;
  const gint64 now = g_get_monotonic_time ();
  g_autofree gint32 *labels = NULL;
  g_autofree float *centres = NULL;
  g_autoptr (GError) error = NULL;
  SvJobResult *result;
  gsize k = 0;

  if (iteration >= n_iterations || now - live->last_us < live->gap_us)
    return;
  labels = g_new (gint32, MAX (sv_volume_n_voxels (v), 1));
  if (!sv_iteration_view_get_labels (view, labels, &error)
      || !sv_iteration_view_get_centres (view, NULL, &k, &error))
    {
      g_debug ("iteration %u not shown: %s", iteration, error->message);
      return;
    }
  centres = g_new0 (float, MAX (k, 1) * 3);
  if (k > 0 && !sv_iteration_view_get_centres (view, centres, &k, &error))
    {
      g_debug ("iteration %u not shown: %s", iteration, error->message);
      return;
    }
  result = sv__job_step_result_new (live->request, v, sv_iteration_view_get_backend_name (view),
                                    g_steal_pointer (&labels), g_steal_pointer (&centres), k,
                                    iteration);
  result->in_progress_iteration = iteration;
  result->stats.n_labels = k;
  result->seconds_total = (double)(now - live->t0) / G_USEC_PER_SEC;
  live->last_us = g_get_monotonic_time ();
  sv__job_deliver_result (job->sink, result);
}

/* The iteration hook of a teaching run: keeps every iteration and
 * delivers the step asked for once it is there. */
static void
job_iteration_cb (const SvIterationView *view, guint iteration, guint n_iterations,
                  gpointer user_data)
{
  ProgressData *p = user_data;
  TeachingRun *t = p->teaching;
  g_autoptr (GError) error = NULL;
  const SvTeachingStep *step;
  SvJobResult *result;

  if (p->live != NULL)
    {
      job_live_iteration (p->job, p->live, view, iteration, n_iterations);
      return;
    }
  if (t == NULL)
    return;
  if (!sv__teaching_cache_store (p->job->teaching, view, iteration, &error))
    {
      g_debug ("teaching snapshot of iteration %u: %s", iteration, error->message);
      return;
    }
  if (iteration != t->step || t->delivered)
    return;
  step = sv__teaching_cache_lookup (p->job->teaching, &t->request->params, t->backend, iteration);
  if (step == NULL)
    return;
  result = teaching_result (p->job, t->request, step);
  result->seconds_total = (double)(g_get_monotonic_time () - t->t0) / G_USEC_PER_SEC;
  t->delivered = TRUE;
  sv__job_deliver_result (p->job->sink, result);
}

void
sv__job_process (SvJob *job, const SvJobRequest *request, GCancellable *cancellable)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) device_error = NULL;
  g_autofree char *fallback = NULL;
  SvRunStats stats;
  SvJobResult *result;
  SvSlicParams params = request->params;
  SvJobSlot *slot = &job->exact;
  const char *name = request->backend;
  gint64 t0 = g_get_monotonic_time ();
  guint factor = 1;
  ProgressData progress = { job, request->generation, NULL };
  TeachingRun teaching = { request, NULL, 0, t0, FALSE };
  LiveRun live = { request, t0, t0, (gint64)(LIVE_ITERATION_GAP_SECONDS * G_USEC_PER_SEC) };
  double estimate;
  SvJobRequest as_run = *request;
  SvRunControl control = {
    .n_threads = 0,
    .stop_after_iteration = request->stop_after_iteration,
    .progress = job_progress_cb,
    .user_data = &progress,
    .cancellable = cancellable,
  };
  gboolean ok;

  /* After a CUDA failure the CPU takes every run: retrying the GPU on each
   * slider step would repeat the failure and its delay. */
  if (job->devices.broken)
    name = sv_backend_class_name (sv_backend_cpu_class ());

  if (request->preview_seconds > 0)
    factor = job_preview_factor (job, request);
  if (factor > 1)
    {
      if (!job_ensure_preview (job, factor, &error))
        {
          sv__job_deliver_error (job->sink, request->generation, g_steal_pointer (&error));
          return;
        }
      slot = &job->preview;
      sv_preview_params (&request->params, job->volume, factor, &params);
    }

  /* A teaching step: a stored one is copied at once; otherwise the run goes
   * on to the last iteration and keeps them all for the next steps.
   * maskSLIC's two passes stop early in each pass, so its steps are not
   * iterations of one run: they are computed per step. */
  if (factor == 1 && request->stop_after_iteration > 0 && job->mask == NULL
      && request->params.max_num_iter > 0)
    {
      const guint step = (guint)MIN (request->stop_after_iteration, request->params.max_num_iter);
      const SvTeachingStep *stored
          = sv__teaching_cache_lookup (job->teaching, &request->params, name, step);
      if (stored != NULL)
        {
          result = teaching_result (job, request, stored);
          result->from_snapshot = TRUE;
          result->seconds_total = (double)(g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
          sv__job_deliver_result (job->sink, result);
          return;
        }
      if (sv__teaching_cache_begin (job->teaching, &request->params, name))
        {
          teaching.backend = name;
          teaching.step = step;
          progress.teaching = &teaching;
          as_run.stop_after_iteration = request->params.max_num_iter;
          control.stop_after_iteration = as_run.stop_after_iteration;
          control.iteration = job_iteration_cb;
        }
    }

  g_mutex_lock (&job->lock);
  {
    if (factor == 1)
      as_run.preview_seconds = 0;
    job->run.preview = factor > 1;
    job->run.prepare_s = sv__job_timing_prepare (
        factor > 1 ? &job->preview_timing : &job->exact_timing, &request->params);
    job->run.iterations = sv__job_request_iterations (&as_run);
    job->run.connect = sv__job_request_connects (&as_run);
    job->run.stage = SV_STAGE_PREPARE;
    job->run.iteration = 0;
    job->run.stage_t0 = job->run.t0 = t0;
    job->run.first_iteration_t = 0;
    job->run.n_reported = 0;
    job->run.estimate = sv__job_estimate_locked (job, &as_run);
    estimate = job->run.estimate;
  }
  g_mutex_unlock (&job->lock);

  /* A long exact run shows its iterations as they complete. */
  if (live_iterations_always ())
    live.gap_us = 0;
  if (factor == 1 && request->stop_after_iteration < 0 && progress.teaching == NULL
      && (estimate > LIVE_ITERATIONS_MIN_SECONDS || live_iterations_always ()))
    {
      progress.live = &live;
      control.iteration = job_iteration_cb;
    }

  ok = job_run_on (job, slot, name, &params, &control, &stats, &device_error, &error);
  if (ok && device_error != NULL)
    {
      fallback = g_strdup_printf ("The GPU run failed (%s); computing on the CPU instead.",
                                  device_error->message);
      g_message ("%s", fallback);
      /* The volume stays the same for the job's life: whatever failed on
       * the device (its memory too) would fail again. */
      job->devices.broken = TRUE;
      /* The other slot's device backend goes too: the device is not trusted again. */
      g_clear_pointer (slot == &job->exact ? &job->preview.backend : &job->exact.backend,
                       sv_backend_free);
    }

  if (teaching.delivered)
    {
      /* The step is on its way; the rest of the run only filled the
       * snapshots, and its own labels are the last iteration's. */
      if (!ok && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("teaching run after step %u: %s", teaching.step, error->message);
      if (ok)
        {
          g_mutex_lock (&job->lock);
          sv__job_timing_record (&job->exact_timing, &as_run, &stats,
                                 (double)(g_get_monotonic_time () - t0) / G_USEC_PER_SEC,
                                 sv_volume_n_voxels (slot->volume));
          g_mutex_unlock (&job->lock);
        }
      return;
    }
  if (ok && progress.teaching != NULL)
    {
      /* No snapshot of the step could be kept: the step's own run. */
      progress.teaching = NULL;
      control.iteration = NULL;
      control.stop_after_iteration = request->stop_after_iteration;
      ok = job_run_on (job, slot, name, &params, &control, &stats, &device_error, &error);
    }

  if (!ok)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      sv__job_deliver_error (job->sink, request->generation, g_steal_pointer (&error));
      return;
    }

  result = job_collect (job, slot, factor, request, &stats, &error);
  if (!result)
    {
      sv__job_deliver_error (job->sink, request->generation, g_steal_pointer (&error));
      return;
    }
  result->seconds_total = (double)(g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  g_mutex_lock (&job->lock);
  sv__job_timing_record (factor > 1 ? &job->preview_timing : &job->exact_timing, request, &stats,
                         result->seconds_total, sv_volume_n_voxels (slot->volume));
  g_mutex_unlock (&job->lock);
  if (fallback && !job->fallback_reported)
    {
      result->fallback_message = g_steal_pointer (&fallback);
      job->fallback_reported = TRUE;
    }

  sv__job_deliver_result (job->sink, result);
}

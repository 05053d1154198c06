/* Supervox engine: the worker thread that runs SLIC for one open volume. */
#define G_LOG_DOMAIN "sv-job"

#include "supervox/sv-job.h"

#include <math.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "job-teaching.h"
#include "job-timing.h"
#include "preview.h"

/* A run this close to its end is never cancelled: about two frames. */
#define FINISH_GRACE_SECONDS 0.035
/* Nor one that ends before the new request could, up to this long: a drag
 * over runs of a few frames then shows every run instead of none, while a
 * long run still gives way to new parameters at once. */
#define FINISH_BEFORE_NEXT_LIMIT_SECONDS 1.0
/* An exact run expected to take longer than this shows its iterations as
 * they complete, at most one every LIVE_ITERATION_GAP_SECONDS. */
#define LIVE_ITERATIONS_MIN_SECONDS 0.3
#define LIVE_ITERATION_GAP_SECONDS 0.1
/* A preview keeps at least this many voxels per supervoxel. */
#define PREVIEW_MIN_VOXELS_PER_SEGMENT 27
#define PREVIEW_MAX_FACTOR 16

/* The part of a job that queued main-context invocations may still touch
 * after sv_job_free: reference counted, and `closed` (main thread only)
 * stops every later callback. */
typedef struct
{
  gatomicrefcount ref;
  SvJobCallbacks callbacks;
  gpointer user_data;
  gboolean closed;
  GMutex lock;
  guint64 latest_generation;    /* newest request submitted, under lock */
  guint64 cancelled_generation; /* requests up to this one were cancelled, under lock */
  guint64 delivered_generation; /* newest result delivered (main context only) */
} SvJobSink;

/* One backend with its volume: the exact one, or the preview's. */
typedef struct
{
  SvBackend *backend;
  char request[16]; /* the name the backend was created for */
  const SvVolume *volume;
  const guint8 *mask;
} JobSlot;

struct _SvJob
{
  const SvVolume *volume;
  const guint8 *mask;
  GMainContext *context;
  SvJobSink *sink;
  GThread *thread;

  GMutex lock;
  GCond cond;
  SvJobRequest *pending; /* owned, under lock */
  GCancellable *running; /* the running request's, under lock */
  gboolean quit;         /* under lock */
  gboolean busy;         /* under lock */
  SvJobResultHook hook;  /* under lock */
  gpointer hook_data;    /* under lock */

  /* Timings and the running request's place, under lock (job-timing.h). */
  SvJobTiming exact_timing, preview_timing;
  SvJobRun run;

  /* Worker thread only. */
  JobSlot exact, preview;
  SvVolume *preview_volume; /* owned; preview.volume points here */
  guint8 *preview_mask;     /* owned */
  guint preview_factor;     /* of preview_volume; 0 when none */
  SvTeachingCache *teaching; /* the teaching steps of the exact volume */
  gboolean cuda_failed;     /* after one CUDA failure every run goes to the CPU */
  gboolean fallback_reported;
};

static guint64
sink_latest (SvJobSink *sink)
{
  guint64 g;

  g_mutex_lock (&sink->lock);
  g = sink->latest_generation;
  g_mutex_unlock (&sink->lock);
  return g;
}

static SvJobSink *
sink_ref (SvJobSink *sink)
{
  g_atomic_ref_count_inc (&sink->ref);
  return sink;
}

static void
sink_unref (SvJobSink *sink)
{
  if (g_atomic_ref_count_dec (&sink->ref))
    {
      g_mutex_clear (&sink->lock);
      g_free (sink);
    }
}

void
sv_job_request_init (SvJobRequest *request)
{
  memset (request, 0, sizeof *request);
  sv_slic_params_init_defaults (&request->params);
  g_strlcpy (request->backend, "auto", sizeof request->backend);
  request->stop_after_iteration = -1;
}

SvJobResult *
sv_job_result_ref (SvJobResult *result)
{
  g_return_val_if_fail (result != NULL, NULL);
  return g_atomic_rc_box_acquire (result);
}

static void
job_result_clear (gpointer data)
{
  SvJobResult *result = data;

  g_clear_pointer (&result->labels, sv_labels_free);
  g_clear_pointer (&result->centres, g_free);
  g_clear_pointer (&result->backend_name, g_free);
  g_clear_pointer (&result->fallback_message, g_free);
  if (result->device_data && result->device_data_free)
    result->device_data_free (result->device_data);
  result->device_data = NULL;
}

void
sv_job_result_unref (SvJobResult *result)
{
  g_return_if_fail (result != NULL);
  g_atomic_rc_box_release_full (result, job_result_clear);
}

/* ---- delivery to the main context ---- */

typedef enum
{
  DELIVER_PROGRESS,
  DELIVER_RESULT,
  DELIVER_ERROR,
} DeliverKind;

typedef struct
{
  SvJobSink *sink;
  DeliverKind kind;
  guint64 generation;
  SvStage stage;
  guint iteration, n_iterations;
  SvJobResult *result;
  GError *error;
} Delivery;

static void
delivery_free (gpointer data)
{
  Delivery *d = data;

  g_clear_pointer (&d->result, sv_job_result_unref);
  g_clear_error (&d->error);
  sink_unref (d->sink);
  g_free (d);
}

static gboolean
deliver_cb (gpointer data)
{
  Delivery *d = data;
  SvJobSink *sink = d->sink;
  guint64 latest, cancelled;

  if (sink->closed)
    return G_SOURCE_REMOVE;
  g_mutex_lock (&sink->lock);
  latest = sink->latest_generation;
  cancelled = sink->cancelled_generation;
  g_mutex_unlock (&sink->lock);
  if (d->generation <= cancelled)
    return G_SOURCE_REMOVE;

  switch (d->kind)
    {
    case DELIVER_PROGRESS:
      /* Progress of a run older than the labels on screen is of no interest. */
      if (d->generation < sink->delivered_generation)
        break;
      if (sink->callbacks.progress)
        sink->callbacks.progress (d->generation, d->stage, d->iteration, d->n_iterations,
                                  sink->user_data);
      break;
    case DELIVER_RESULT:
      /* A run allowed to finish although superseded is still the newest
       * result there is; results never go back in time. */
      if (d->generation <= sink->delivered_generation)
        break;
      /* An iteration of a run still going leaves room for its final result. */
      if (d->result->in_progress_iteration == 0)
        sink->delivered_generation = d->generation;
      if (sink->callbacks.result)
        sink->callbacks.result (d->result, sink->user_data);
      break;
    case DELIVER_ERROR:
      /* A request superseded while its message was queued is of no interest. */
      if (d->generation < latest)
        break;
      if (sink->callbacks.error)
        sink->callbacks.error (d->generation, d->error, sink->user_data);
      break;
    }
  return G_SOURCE_REMOVE;
}

static void
job_deliver (SvJob *job, Delivery *d)
{
  g_autoptr (GSource) source = g_idle_source_new ();

  d->sink = sink_ref (job->sink);
  /* Always queue: g_main_context_invoke would run the callback right here on
   * the worker when the context is the global default and nobody holds it. */
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, deliver_cb, d, delivery_free);
  g_source_set_static_name (source, "sv-job delivery");
  g_source_attach (source, job->context);
}

/* ---- timings (job-timing.c) ---- */

/* Under lock. Seconds `request` would take; negative when unknown. */
static double
estimate_locked (SvJob *job, const SvJobRequest *request)
{
  if (request->preview_seconds > 0)
    {
      if (job->preview_timing.valid)
        return sv__job_timing_estimate (&job->preview_timing, request);
      /* No preview has run yet: it aims at its target. */
      return request->preview_seconds;
    }
  return sv__job_timing_estimate (&job->exact_timing, request);
}

/* Under lock. */
static double
seconds_left_locked (SvJob *job)
{
  if (!job->running)
    return -1.0;
  return sv__job_run_left (&job->run, job->run.preview ? &job->preview_timing : &job->exact_timing,
                           g_get_monotonic_time ());
}

/* ---- the worker ---- */

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
  Delivery *d = g_new0 (Delivery, 1);

  g_mutex_lock (&p->job->lock);
  p->job->run.stage = stage;
  p->job->run.iteration = iteration;
  p->job->run.stage_t0 = g_get_monotonic_time ();
  g_mutex_unlock (&p->job->lock);

  d->kind = DELIVER_PROGRESS;
  d->generation = p->generation;
  d->stage = stage;
  d->iteration = iteration;
  d->n_iterations = n_iterations;
  job_deliver (p->job, d);
}

/* Makes slot->backend the one `name` asks for. */
static gboolean
job_ensure_backend (JobSlot *slot, const char *name, GError **error)
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
      est = estimate_locked (job, request) - job->preview_timing.other_s;
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
      est = estimate_locked (job, &r) - job->exact_timing.other_s;
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

/* Runs on the slot's backend for `name`. A device failure, also of a
 * device backend that cannot start, reruns on the CPU
 * (sv_backend_run_with_fallback); the CPU backend then takes the slot and
 * *device_error says why. */
static gboolean
job_run_on (JobSlot *slot, const char *name, const SvSlicParams *params,
            const SvRunControl *control, SvRunStats *stats, GError **device_error, GError **error)
{
  g_autoptr (SvBackend) cpu = NULL;
  GError *local = NULL;

  if (!job_ensure_backend (slot, name, &local))
    {
      if (g_strcmp0 (name, "cpu") == 0 || !sv_backend_error_is_device_failure (local))
        {
          g_propagate_error (error, local);
          return FALSE;
        }
      g_propagate_error (device_error, local);
      if (!job_ensure_backend (slot, "cpu", error))
        return FALSE;
    }
  if (!sv_backend_run_with_fallback (slot->backend, slot->volume, slot->mask, params, control,
                                     stats, &cpu, device_error, error))
    return FALSE;
  if (cpu != NULL)
    {
      g_clear_pointer (&slot->backend, sv_backend_free);
      slot->backend = g_steal_pointer (&cpu);
      g_strlcpy (slot->request, "cpu", sizeof slot->request);
    }
  return TRUE;
}

static SvJobResult *
job_collect (SvJob *job, JobSlot *slot, guint factor, const SvJobRequest *request,
             const SvRunStats *stats, GError **error)
{
  const SvVolume *v = job->volume;
  const SvVolume *ran = slot->volume;
  g_autoptr (SvJobResult) result = g_atomic_rc_box_new0 (SvJobResult);
  gsize k;

  result->generation = request->generation;
  result->params = request->params;
  result->stop_after_iteration = request->stop_after_iteration;
  result->stats = *stats;
  result->preview_factor = factor;
  result->backend_name = g_strdup (sv_backend_get_name (slot->backend));

  /* The result takes the backend's host labels rather than a copy: a
   * 512³ volume's labels are 512 MiB. */
  gint32 *data = sv_backend_take_labels (slot->backend, (gsize)ran->nz * ran->ny * ran->nx, error);
  if (data == NULL)
    return NULL;
  /* A preview keeps its coarse labels: drawing looks them up block by
   * block, and upsampling a big volume's would cost more than the run. */
  result->labels = g_new0 (SvLabels, 1);
  result->labels->nz = ran->nz;
  result->labels->ny = ran->ny;
  result->labels->nx = ran->nx;
  result->labels->data = data;
  memcpy (result->labels->spacing, ran == v ? request->params.spacing : ran->spacing,
          sizeof result->labels->spacing);

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

static void
job_deliver_error (SvJob *job, guint64 generation, GError *error)
{
  Delivery *d = g_new0 (Delivery, 1);

  d->kind = DELIVER_ERROR;
  d->generation = generation;
  d->error = error;
  job_deliver (job, d);
}

/* A result for a teaching step from copies of a snapshot's labels and
 * centres. */
static SvJobResult *
teaching_result (SvJob *job, const SvJobRequest *request, const SvTeachingStep *step)
{
  const SvVolume *v = job->volume;
  const gsize n = sv_volume_n_voxels (v);
  SvJobResult *result = g_atomic_rc_box_new0 (SvJobResult);

  result->generation = request->generation;
  result->params = request->params;
  result->stop_after_iteration = request->stop_after_iteration;
  result->preview_factor = 1;
  result->backend_name = g_strdup (step->backend);
  result->labels = g_new0 (SvLabels, 1);
  result->labels->nz = v->nz;
  result->labels->ny = v->ny;
  result->labels->nx = v->nx;
  result->labels->data = g_memdup2 (step->labels, MAX (n, 1) * sizeof (gint32));
  memcpy (result->labels->spacing, request->params.spacing, sizeof result->labels->spacing);
  result->centres = g_memdup2 (step->centres, MAX (step->n_centres, 1) * 3 * sizeof (float));
  result->n_centres = step->n_centres;
  result->stats.n_clusters = step->n_centres;
  result->stats.n_labels = step->n_labels;
  result->stats.iterations = MIN (request->stop_after_iteration, request->params.max_num_iter);
  return result;
}

static void
job_deliver_result (SvJob *job, SvJobResult *result)
{
  Delivery *d = g_new0 (Delivery, 1);

  d->kind = DELIVER_RESULT;
  d->generation = result->generation;
  d->result = result;
  job_deliver (job, d);
}

/* Delivers the labels after `iteration` of a long exact run (not the
 * last: the final result follows it at once). */
static void
job_live_iteration (SvJob *job, LiveRun *live, const SvIterationView *view, guint iteration,
                    guint n_iterations)
{
  const SvVolume *v = job->volume;
  const gint64 now = g_get_monotonic_time ();
  g_autoptr (SvJobResult) result = NULL;
  g_autoptr (GError) error = NULL;
  gsize k = 0;

  if (iteration >= n_iterations || now - live->last_us < live->gap_us)
    return;
  result = g_atomic_rc_box_new0 (SvJobResult);
  result->generation = live->request->generation;
  result->params = live->request->params;
  result->stop_after_iteration = -1;
  result->preview_factor = 1;
  result->in_progress_iteration = iteration;
  result->backend_name = g_strdup (sv_iteration_view_get_backend_name (view));
  result->labels = g_new0 (SvLabels, 1);
  result->labels->nz = v->nz;
  result->labels->ny = v->ny;
  result->labels->nx = v->nx;
  result->labels->data = g_new (gint32, MAX (sv_volume_n_voxels (v), 1));
  memcpy (result->labels->spacing, live->request->params.spacing,
          sizeof result->labels->spacing);
  if (!sv_iteration_view_get_labels (view, result->labels->data, &error)
      || !sv_iteration_view_get_centres (view, NULL, &k, &error))
    {
      g_debug ("iteration %u not shown: %s", iteration, error->message);
      return;
    }
  result->centres = g_new0 (float, MAX (k, 1) * 3);
  if (k > 0 && !sv_iteration_view_get_centres (view, result->centres, &k, &error))
    {
      g_debug ("iteration %u not shown: %s", iteration, error->message);
      return;
    }
  result->n_centres = k;
  result->stats.n_clusters = k;
  result->stats.n_labels = k;
  result->stats.iterations = iteration;
  result->seconds_total = (double)(now - live->t0) / G_USEC_PER_SEC;
  live->last_us = g_get_monotonic_time ();
  job_deliver_result (job, g_steal_pointer (&result));
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
  job_deliver_result (p->job, result);
}

static void
job_process (SvJob *job, const SvJobRequest *request, GCancellable *cancellable)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) device_error = NULL;
  g_autofree char *fallback = NULL;
  SvRunStats stats;
  SvJobResult *result;
  SvSlicParams params = request->params;
  JobSlot *slot = &job->exact;
  Delivery *d;
  const char *name = request->backend;
  gint64 t0 = g_get_monotonic_time ();
  SvJobResultHook hook;
  gpointer hook_data;
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
  if (job->cuda_failed && g_strcmp0 (name, "cpu") != 0)
    name = "cpu";

  if (request->preview_seconds > 0)
    factor = job_preview_factor (job, request);
  if (factor > 1)
    {
      if (!job_ensure_preview (job, factor, &error))
        {
          job_deliver_error (job, request->generation, g_steal_pointer (&error));
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
          job_deliver_result (job, result);
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
    job->run.estimate = estimate_locked (job, &as_run);
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

  ok = job_run_on (slot, name, &params, &control, &stats, &device_error, &error);
  if (ok && device_error != NULL)
    {
      fallback = g_strdup_printf ("The GPU run failed (%s); computing on the CPU instead.",
                                  device_error->message);
      g_message ("%s", fallback);
      job->cuda_failed = TRUE;
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
      ok = job_run_on (slot, name, &params, &control, &stats, &device_error, &error);
    }

  if (!ok)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      job_deliver_error (job, request->generation, g_steal_pointer (&error));
      return;
    }

  result = job_collect (job, slot, factor, request, &stats, &error);
  if (!result)
    {
      job_deliver_error (job, request->generation, g_steal_pointer (&error));
      return;
    }
  g_mutex_lock (&job->lock);
  hook = job->hook;
  hook_data = job->hook_data;
  g_mutex_unlock (&job->lock);
  /* The hook publishes the backend's labels: a preview's are of another shape. */
  if (hook && factor == 1)
    hook (slot->backend, result, hook_data);
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

  d = g_new0 (Delivery, 1);
  d->kind = DELIVER_RESULT;
  d->generation = request->generation;
  d->result = result;
  job_deliver (job, d);
}

static gpointer
job_thread (gpointer data)
{
  SvJob *job = data;

  g_mutex_lock (&job->lock);
  for (;;)
    {
      g_autofree SvJobRequest *request = NULL;
      g_autoptr (GCancellable) cancellable = NULL;

      while (!job->pending && !job->quit)
        g_cond_wait (&job->cond, &job->lock);
      if (job->quit)
        break;

      request = g_steal_pointer (&job->pending);
      cancellable = g_cancellable_new ();
      job->running = g_object_ref (cancellable);
      job->busy = TRUE;
      g_mutex_unlock (&job->lock);

      job_process (job, request, cancellable);

      g_mutex_lock (&job->lock);
      g_clear_object (&job->running);
      job->busy = job->pending != NULL;
    }
  job->busy = FALSE;
  g_mutex_unlock (&job->lock);

  g_clear_pointer (&job->exact.backend, sv_backend_free);
  g_clear_pointer (&job->preview.backend, sv_backend_free);
  g_clear_pointer (&job->preview_volume, sv_volume_free);
  g_clear_pointer (&job->preview_mask, g_free);
  g_clear_pointer (&job->teaching, sv__teaching_cache_free);
  return NULL;
}

SvJob *
sv_job_new (const SvVolume *volume, const guint8 *mask, const SvJobCallbacks *callbacks,
            gpointer user_data)
{
  SvJob *job;

  g_return_val_if_fail (volume != NULL, NULL);
  g_return_val_if_fail (callbacks != NULL, NULL);

  job = g_new0 (SvJob, 1);
  job->volume = volume;
  job->mask = mask;
  job->exact.volume = volume;
  job->exact.mask = mask;
  job->teaching = sv__teaching_cache_new (sv_volume_n_voxels (volume));
  job->context = g_main_context_ref_thread_default ();
  job->sink = g_new0 (SvJobSink, 1);
  g_atomic_ref_count_init (&job->sink->ref);
  g_mutex_init (&job->sink->lock);
  job->sink->callbacks = *callbacks;
  job->sink->user_data = user_data;
  g_mutex_init (&job->lock);
  g_cond_init (&job->cond);
  job->thread = g_thread_new ("sv-job", job_thread, job);
  return job;
}

void
sv_job_set_result_hook (SvJob *job, SvJobResultHook hook, gpointer user_data)
{
  g_return_if_fail (job != NULL);

  g_mutex_lock (&job->lock);
  job->hook = hook;
  job->hook_data = user_data;
  g_mutex_unlock (&job->lock);
}

void
sv_job_submit (SvJob *job, const SvJobRequest *request)
{
  g_return_if_fail (job != NULL);
  g_return_if_fail (request != NULL);

  g_mutex_lock (&job->lock);
  g_free (job->pending);
  job->pending = g_memdup2 (request, sizeof *request);
  job->pending->backend[sizeof job->pending->backend - 1] = '\0';
  g_mutex_lock (&job->sink->lock);
  job->sink->latest_generation = MAX (job->sink->latest_generation, request->generation);
  g_mutex_unlock (&job->sink->lock);
  if (job->running)
    {
      /* Let a run finish when it will be done within two frames, or before
       * the new request could be (when that is short): cancelling it would
       * only delay labels. */
      double left = seconds_left_locked (job);
      double next = MIN (estimate_locked (job, job->pending), FINISH_BEFORE_NEXT_LIMIT_SECONDS);
      if (!(left >= 0 && left <= MAX (FINISH_GRACE_SECONDS, next)))
        g_cancellable_cancel (job->running);
    }
  job->busy = TRUE;
  g_cond_signal (&job->cond);
  g_mutex_unlock (&job->lock);
}

void
sv_job_cancel (SvJob *job)
{
  g_return_if_fail (job != NULL);

  g_mutex_lock (&job->lock);
  g_clear_pointer (&job->pending, g_free);
  if (job->running)
    g_cancellable_cancel (job->running);
  g_mutex_lock (&job->sink->lock);
  job->sink->cancelled_generation = job->sink->latest_generation;
  g_mutex_unlock (&job->sink->lock);
  g_mutex_unlock (&job->lock);
}

double
sv_job_estimate_seconds (SvJob *job, const SvJobRequest *request)
{
  double s;

  g_return_val_if_fail (job != NULL && request != NULL, -1.0);
  g_mutex_lock (&job->lock);
  s = estimate_locked (job, request);
  g_mutex_unlock (&job->lock);
  return s;
}

double
sv_job_get_seconds_left (SvJob *job)
{
  double s;

  g_return_val_if_fail (job != NULL, -1.0);
  g_mutex_lock (&job->lock);
  s = seconds_left_locked (job);
  g_mutex_unlock (&job->lock);
  return s;
}

guint64
sv_job_get_latest_generation (SvJob *job)
{
  g_return_val_if_fail (job != NULL, 0);
  return sink_latest (job->sink);
}

gboolean
sv_job_is_busy (SvJob *job)
{
  gboolean busy;

  g_return_val_if_fail (job != NULL, FALSE);
  g_mutex_lock (&job->lock);
  busy = job->busy;
  g_mutex_unlock (&job->lock);
  return busy;
}

void
sv_job_free (SvJob *job)
{
  if (!job)
    return;

  g_mutex_lock (&job->lock);
  job->quit = TRUE;
  g_clear_pointer (&job->pending, g_free);
  if (job->running)
    g_cancellable_cancel (job->running);
  g_cond_signal (&job->cond);
  g_mutex_unlock (&job->lock);
  g_thread_join (job->thread);

  /* Queued deliveries still hold the sink; they see `closed` and do nothing. */
  job->sink->closed = TRUE;
  sink_unref (job->sink);
  g_main_context_unref (job->context);
  g_mutex_clear (&job->lock);
  g_cond_clear (&job->cond);
  g_free (job);
}

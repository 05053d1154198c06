/* Supervox engine: the worker thread that runs SLIC for one open volume. */
#define G_LOG_DOMAIN "sv-job"

#include "job.h"

#include <math.h>
#include <string.h>

#include "error.h"

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
  guint64 latest_generation; /* newest request submitted, under lock */
} SvJobSink;

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

  /* Worker thread only. */
  SvBackend *backend;
  char backend_request[16]; /* the name the backend was created for */
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

  if (sink->closed)
    return G_SOURCE_REMOVE;
  /* A request superseded while its message was queued is of no interest. */
  if (d->generation < sink_latest (sink))
    return G_SOURCE_REMOVE;

  switch (d->kind)
    {
    case DELIVER_PROGRESS:
      if (sink->callbacks.progress)
        sink->callbacks.progress (d->generation, d->stage, d->iteration, d->n_iterations,
                                  sink->user_data);
      break;
    case DELIVER_RESULT:
      if (sink->callbacks.result)
        sink->callbacks.result (d->result, sink->user_data);
      break;
    case DELIVER_ERROR:
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

/* ---- the worker ---- */

typedef struct
{
  SvJob *job;
  guint64 generation;
} ProgressData;

static void
job_progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  ProgressData *p = user_data;
  Delivery *d = g_new0 (Delivery, 1);

  d->kind = DELIVER_PROGRESS;
  d->generation = p->generation;
  d->stage = stage;
  d->iteration = iteration;
  d->n_iterations = n_iterations;
  job_deliver (p->job, d);
}

/* Makes job->backend the one `name` asks for, with the volume loaded. */
static gboolean
job_ensure_backend (SvJob *job, const char *name, GError **error)
{
  g_autoptr (SvBackend) backend = NULL;

  if (job->backend && g_strcmp0 (job->backend_request, name) == 0)
    return TRUE;
  g_clear_pointer (&job->backend, sv_backend_free);
  job->backend_request[0] = '\0';

  backend = sv_backend_new (name, error);
  if (!backend)
    return FALSE;
  if (!sv_backend_set_volume (backend, job->volume, job->mask, error))
    return FALSE;
  job->backend = g_steal_pointer (&backend);
  g_strlcpy (job->backend_request, name, sizeof job->backend_request);
  return TRUE;
}

static gboolean
job_run_on (SvJob *job, const char *name, const SvJobRequest *request, GCancellable *cancellable,
            SvRunStats *stats, GError **error)
{
  ProgressData progress = { job, request->generation };
  SvRunControl control = {
    .n_threads = 0,
    .stop_after_iteration = request->stop_after_iteration,
    .progress = job_progress_cb,
    .user_data = &progress,
    .cancellable = cancellable,
  };

  if (!job_ensure_backend (job, name, error))
    return FALSE;
  memset (stats, 0, sizeof *stats);
  return sv_backend_run (job->backend, &request->params, &control, stats, error);
}

static SvJobResult *
job_collect (SvJob *job, const SvJobRequest *request, const SvRunStats *stats, GError **error)
{
  const SvVolume *v = job->volume;
  g_autoptr (SvJobResult) result = g_atomic_rc_box_new0 (SvJobResult);
  gsize k;

  result->generation = request->generation;
  result->params = request->params;
  result->stop_after_iteration = request->stop_after_iteration;
  result->stats = *stats;
  result->backend_name = g_strdup (sv_backend_get_name (job->backend));

  /* The result takes the backend's host labels rather than a copy: a
   * 512³ volume's labels are 512 MiB. */
  gint32 *data = sv_backend_take_labels (job->backend, (gsize)v->nz * v->ny * v->nx, error);
  if (data == NULL)
    return NULL;
  result->labels = g_new0 (SvLabels, 1);
  result->labels->nz = v->nz;
  result->labels->ny = v->ny;
  result->labels->nx = v->nx;
  result->labels->data = data;
  memcpy (result->labels->spacing, request->params.spacing, sizeof result->labels->spacing);

  k = stats->n_clusters;
  result->centres = g_new0 (float, MAX (k, 1) * 3);
  if (k > 0 && !sv_backend_get_centres (job->backend, result->centres, &k, error))
    return NULL;
  result->n_centres = MIN (k, stats->n_clusters);
  return g_steal_pointer (&result);
}

static void
job_process (SvJob *job, const SvJobRequest *request, GCancellable *cancellable)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *fallback = NULL;
  SvRunStats stats;
  SvJobResult *result;
  Delivery *d;
  const char *name = request->backend;
  gint64 t0 = g_get_monotonic_time ();
  SvJobResultHook hook;
  gpointer hook_data;
  gboolean ok;

  /* After a CUDA failure the CPU takes every run: retrying the GPU on each
   * slider step would repeat the failure and its delay. */
  if (job->cuda_failed && g_strcmp0 (name, "cpu") != 0)
    name = "cpu";

  ok = job_run_on (job, name, request, cancellable, &stats, &error);

  if (!ok && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
      && g_strcmp0 (name, "cpu") != 0
      && (job->backend == NULL || g_strcmp0 (sv_backend_get_name (job->backend), "cpu") != 0))
    {
      fallback = g_strdup_printf ("The GPU run failed (%s); computing on the CPU instead.",
                                  error->message);
      g_message ("%s", fallback);
      g_clear_error (&error);
      job->cuda_failed = TRUE;
      g_clear_pointer (&job->backend, sv_backend_free);
      ok = job_run_on (job, "cpu", request, cancellable, &stats, &error);
    }

  if (!ok)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      d = g_new0 (Delivery, 1);
      d->kind = DELIVER_ERROR;
      d->generation = request->generation;
      d->error = g_steal_pointer (&error);
      job_deliver (job, d);
      return;
    }

  result = job_collect (job, request, &stats, &error);
  if (!result)
    {
      d = g_new0 (Delivery, 1);
      d->kind = DELIVER_ERROR;
      d->generation = request->generation;
      d->error = g_steal_pointer (&error);
      job_deliver (job, d);
      return;
    }
  g_mutex_lock (&job->lock);
  hook = job->hook;
  hook_data = job->hook_data;
  g_mutex_unlock (&job->lock);
  if (hook)
    hook (job->backend, result, hook_data);
  result->seconds_total = (double)(g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
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

  g_clear_pointer (&job->backend, sv_backend_free);
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
    g_cancellable_cancel (job->running);
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
  g_mutex_unlock (&job->lock);
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

/* Supervox engine: the worker thread that runs SLIC for one open volume,
 * and the requests it takes (what it does with one: job-run.c). */
#define G_LOG_DOMAIN "sv-job"

#include "job-private.h"

#include <string.h>

/* A run this close to its end is never cancelled: about two frames. */
#define FINISH_GRACE_SECONDS 0.035
/* Nor one that ends before the new request could, up to this long: a drag
 * over runs of a few frames then shows every run instead of none, while a
 * long run still gives way to new parameters at once. */
#define FINISH_BEFORE_NEXT_LIMIT_SECONDS 1.0

void
sv_job_request_init (SvJobRequest *request)
{
  memset (request, 0, sizeof *request);
  sv_slic_params_init_defaults (&request->params);
  g_strlcpy (request->backend, "auto", sizeof request->backend);
  request->stop_after_iteration = -1;
  request->channel = -1;
}

double
sv__job_estimate_locked (SvJob *job, const SvJobRequest *request)
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

      if (job->stream_input != NULL)
        sv__job_process_streamed (job, request, cancellable);
      else
        sv__job_process (job, request, cancellable);

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
  sv_run_devices_clear (&job->devices);
  return NULL;
}

/* Starts the thread of a job whose fields say what it runs. */
static SvJob *
job_start (SvJob *job, const SvJobCallbacks *callbacks, gpointer user_data)
{
  GMainContext *context = g_main_context_ref_thread_default ();

  job->sink = sv__job_sink_new (context, callbacks, user_data);
  g_main_context_unref (context);
  g_mutex_init (&job->lock);
  g_cond_init (&job->cond);
  job->thread = g_thread_new ("sv-job", job_thread, job);
  return job;
}

static SvJob *
job_alloc (void)
{
  SvJob *job = g_new0 (SvJob, 1);

  sv_run_devices_init (&job->devices, NULL, NULL, -1, 0);
  return job;
}

SvJob *
sv_job_new (const SvVolume *volume, const guint8 *mask, const SvJobCallbacks *callbacks,
            gpointer user_data)
{
  SvJob *job;

  g_return_val_if_fail (volume != NULL, NULL);
  g_return_val_if_fail (callbacks != NULL, NULL);
  job = job_alloc ();
  job->volume = job->exact.volume = volume;
  job->mask = job->exact.mask = mask;
  job->teaching = sv__teaching_cache_new (sv_volume_n_voxels (volume));
  return job_start (job, callbacks, user_data);
}

SvJob *
sv_job_new_streamed (const char *input, const char *scratch_dir, const SvJobCallbacks *callbacks,
                     gpointer user_data)
{
  SvJob *job;

  g_return_val_if_fail (input != NULL && scratch_dir != NULL, NULL);
  g_return_val_if_fail (callbacks != NULL, NULL);
  job = job_alloc ();
  job->stream_input = g_strdup (input);
  job->scratch_dir = g_strdup (scratch_dir);
  return job_start (job, callbacks, user_data);
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
  sv__job_sink_submitted (job->sink, request->generation);
  if (job->running)
    {
      /* Let a run finish when it will be done within two frames, or before
       * the new request could be (when that is short): cancelling it would
       * only delay labels. */
      double left = seconds_left_locked (job);
      double next
          = MIN (sv__job_estimate_locked (job, job->pending), FINISH_BEFORE_NEXT_LIMIT_SECONDS);
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
  sv__job_sink_cancel_all (job->sink);
  g_mutex_unlock (&job->lock);
}

double
sv_job_estimate_seconds (SvJob *job, const SvJobRequest *request)
{
  double s;

  g_return_val_if_fail (job != NULL && request != NULL, -1.0);
  g_mutex_lock (&job->lock);
  s = sv__job_estimate_locked (job, request);
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

gboolean
sv_job_deliver_when_ready (SvJob *job, guint64 generation, gint64 timeout_us)
{
  g_return_val_if_fail (job != NULL, FALSE);
  return sv__job_sink_deliver_when_ready (job->sink, generation, timeout_us);
}

guint64
sv_job_get_latest_generation (SvJob *job)
{
  g_return_val_if_fail (job != NULL, 0);
  return sv__job_sink_latest (job->sink);
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

  sv__job_sink_close (job->sink);
  g_free (job->stream_input);
  g_free (job->scratch_dir);
  g_mutex_clear (&job->lock);
  g_cond_clear (&job->cond);
  g_free (job);
}

/* Supervox GUI: the main window's engine job: requests, progress and results. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <math.h>
#include <string.h>

/* ---- the engine job ---- */

void
sv_window_submit (SvWindow *self)
{
  SvJobRequest request;

  if (!self->job)
    return;
  sv_job_request_init (&request);
  sv_params_panel_get_params (self->params_panel, &request.params);
  g_strlcpy (request.backend, sv_params_panel_get_backend (self->params_panel),
             sizeof request.backend);
  request.stop_after_iteration = sv_params_panel_get_stop_after_iteration (self->params_panel);
  request.generation = ++self->generation;
  sv_job_submit (self->job, &request);
  gtk_label_set_text (self->progress_label, "starting…");
}

static const char *
stage_name (SvStage stage)
{
  switch (stage)
    {
    case SV_STAGE_PREPARE:
      return "preparing";
    case SV_STAGE_ITERATE:
      return "iteration";
    case SV_STAGE_CONNECT:
      return "connectivity";
    case SV_STAGE_DONE:
    default:
      return "done";
    }
}

static void
job_progress_cb (guint64 generation, SvStage stage, guint iteration, guint n_iterations,
                 gpointer user_data)
{
  SvWindow *self = user_data;
  g_autofree char *text = NULL;

  if (stage == SV_STAGE_ITERATE)
    text = g_strdup_printf ("iteration %u of %u", iteration, n_iterations);
  else
    text = g_strdup (stage_name (stage));
  gtk_label_set_text (self->progress_label, text);
}

static void
job_result_cb (SvJobResult *result, gpointer user_data)
{
  SvWindow *self = user_data;
  g_autofree char *progress = NULL;
  g_autofree char *text = NULL;

  g_clear_pointer (&self->result, sv_job_result_unref);
  self->result = sv_job_result_ref (result);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_result (sv_window_view (self, i), result);

  if (result->stop_after_iteration >= 0)
    progress = g_strdup_printf ("iteration %u of %d", result->stats.iterations,
                                result->params.max_num_iter);
  else
    progress = g_strdup_printf ("iteration %u of %u", result->stats.iterations,
                                result->stats.iterations);
  gtk_label_set_text (self->progress_label, progress);
  text = g_strdup_printf ("%.2f s · %" G_GSIZE_FORMAT " labels · %s", result->seconds_total,
                          result->stats.n_labels, result->backend_name);
  gtk_label_set_text (self->result_label, text);
  gtk_label_set_text (self->path_label, sv_slice_view_get_label_path (self->xy_view));
  if (sv_window_verbose (self))
    g_message (
        "generation %" G_GUINT64_FORMAT ": %" G_GSIZE_FORMAT
        " labels, %u iterations, %.3f s (prepare %.3f%s, iterate %.3f, connect %.3f) on %s; %s",
        result->generation, result->stats.n_labels, result->stats.iterations, result->seconds_total,
        result->stats.seconds_prepare, result->stats.prepare_reused ? " reused" : "",
        result->stats.seconds_iterate, result->stats.seconds_connect, result->backend_name,
        sv_slice_view_get_label_path (self->xy_view));
  if (result->fallback_message)
    {
      GtkWidget *dialog;
      G_GNUC_BEGIN_IGNORE_DEPRECATIONS
      dialog = gtk_message_dialog_new (GTK_WINDOW (self), GTK_DIALOG_DESTROY_WITH_PARENT,
                                       GTK_MESSAGE_WARNING, GTK_BUTTONS_CLOSE, "%s",
                                       result->fallback_message);
      G_GNUC_END_IGNORE_DEPRECATIONS
      g_signal_connect (dialog, "response", G_CALLBACK (gtk_window_destroy), NULL);
      gtk_window_present (GTK_WINDOW (dialog));
    }
  sv_window_update_hover_status (self);
  sv_window_update_search_window (self);
}

static void
job_error_cb (guint64 generation, const GError *error, gpointer user_data)
{
  SvWindow *self = user_data;

  gtk_label_set_text (self->progress_label, "failed");
  gtk_label_set_text (self->result_label, error->message);
}

static const SvJobCallbacks job_callbacks = { job_progress_cb, job_result_cb, job_error_cb };

#if SV_HAVE_CUDA
/* Worker thread, after a run: a CUDA result also carries a snapshot of its
 * labels on the device, in a buffer no shown result uses, when a view can
 * take them through CUDA–GL interop. */
static void
publish_cuda_labels (SvBackend *backend, SvJobResult *result, gpointer user_data)
{
  SvCudaLabelsPool *pool = user_data;
  g_autoptr (GError) error = NULL;
  SvCudaLabels *labels;

  if (g_strcmp0 (sv_backend_get_name (backend), "cuda") != 0
      || !sv_slice_view_cuda_interop_active ())
    return;
  labels = sv_cuda_labels_publish (pool, sv_backend_get_instance (backend), &error);
  if (!labels)
    {
      /* Both buffers still shown, or no device memory: the host path draws this result. */
      if (error)
        g_debug ("labels stay on the host path: %s", error->message);
      return;
    }
  result->device_data = labels;
  result->device_data_free = (GDestroyNotify)sv_cuda_labels_unref;
}
#endif

/* A job for the volume (and mask) shown, and its first request. */
void
sv_window_start_job (SvWindow *self)
{
  g_clear_pointer (&self->job, sv_job_free);
  self->job = sv_job_new (self->volume, self->mask, &job_callbacks, self);
#if SV_HAVE_CUDA
  if (!self->cuda_labels)
    self->cuda_labels = sv_cuda_labels_pool_new ();
  sv_job_set_result_hook (self->job, publish_cuda_labels, self->cuda_labels);
#endif
  sv_window_submit (self);
}

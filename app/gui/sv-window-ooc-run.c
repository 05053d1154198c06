/* Supervox GUI: the streamed SLIC runs of a volume larger than memory.
 * They are a streamed SvJob's (sv_job_new_streamed): one run at a time on
 * its worker thread writes its labels into the window's scratch folder,
 * and a newer request cancels it (newest wins, the in-memory job's rule,
 * in one place). A finished run's result owns its file and replaces the
 * labels shown; a cancelled run leaves no file (the engine writes through
 * a temporary name), and a result that is not wanted (after Stop or a
 * newer request) is dropped with its file. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <glib/gstdio.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-job.h"

#define TICK_MS 100

static void show_progress (SvWindow *self);

int
sv_window_ooc_labels_channel (SvWindow *self)
{
  return self->ooc->labels_path ? self->ooc->labels_channel : self->segment_channel;
}

static void
job_progress_cb (guint64 generation, SvStage stage, guint iteration, guint n_iterations,
                 gpointer user_data)
{
  SvWindowOoc *ooc = SV_WINDOW (user_data)->ooc;

  if (ooc == NULL || generation != ooc->generation)
    return;
  ooc->stage = stage;
  ooc->iteration = iteration;
  ooc->n_iterations = n_iterations;
}

/* A finished run's file becomes the labels shown; the result keeps it. */
static void
show_labels (SvWindow *self, SvJobResult *result)
{
  SvWindowOoc *ooc = self->ooc;
  g_autoptr (GError) error = NULL;
  SvSliceCache *labels
      = sv_slice_cache_new (result->labels_path, NULL, ooc->budget / SV_OOC_CACHE_SHARE, &error);
  g_autofree char *words = NULL;

  if (labels == NULL)
    {
      ooc->error = g_strdup (error->message);
      return;
    }
  g_clear_pointer (&ooc->labels, sv_slice_cache_free);
  g_clear_pointer (&ooc->labels_result, sv_job_result_unref);
  ooc->labels_result = sv_job_result_ref (result);
  ooc->labels_path = result->labels_path;
  ooc->labels = labels;
  /* A slice in the widest label type. */
  ooc->raw = g_realloc (ooc->raw, (gsize)ooc->shape->ny * ooc->shape->nx * sizeof (gint32));
  ooc->labels_params = result->params;
  ooc->labels_stats = result->stats;
  ooc->labels_report = result->stream;
  ooc->labels_temp_planned = result->temp_planned;
  ooc->labels_backend = result->backend_name;
  ooc->labels_channel = ooc->running_channel;
  if (result->fallback_message != NULL)
    g_message ("%s", result->fallback_message);
  words = g_strdup_printf ("%" G_GSIZE_FORMAT " supervoxels · streamed from the file in %.1f s",
                           result->stats.n_labels, result->seconds_total);
  sv_window_set_status (self, self->result_label, words);
  sv_slice_view_source_changed (self->xy_view);
  sv_window_update_hover_status (self);
}

static void
run_over (SvWindow *self)
{
  self->ooc->running = FALSE;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", FALSE);
  show_progress (self);
}

static void
job_result_cb (SvJobResult *result, gpointer user_data)
{
  SvWindow *self = SV_WINDOW (user_data);
  SvWindowOoc *ooc = self->ooc;

  /* An older run that finished, or one after Stop, is dropped (its file
   * goes with the result). */
  if (ooc == NULL || result->generation != ooc->generation || ooc->stopped)
    return;
  g_clear_pointer (&ooc->error, g_free);
  show_labels (self, result);
  run_over (self);
}

static void
job_error_cb (guint64 generation, const GError *error, gpointer user_data)
{
  SvWindow *self = SV_WINDOW (user_data);
  SvWindowOoc *ooc = self->ooc;

  if (ooc == NULL || generation != ooc->generation)
    return;
  g_free (ooc->error);
  ooc->error = g_strdup (error->message);
  run_over (self);
}

/* The progress bar: the stage and the iteration, or the outcome. */
static void
show_progress (SvWindow *self)
{
  SvWindowOoc *ooc = self->ooc;
  g_autofree char *text = NULL;
  double fraction = 0.0;

  if (ooc->running && !ooc->stopped)
    {
      SvStage stage = ooc->stage;
      guint k = ooc->iteration;
      guint n = ooc->n_iterations;
      if (stage == SV_STAGE_ITERATE && n > 0)
        {
          text = g_strdup_printf ("Streaming SLIC: iteration %u of %u", MIN (k + 1, n), n);
          fraction = (double)k / n;
        }
      else if (stage == SV_STAGE_CONNECT || stage == SV_STAGE_DONE)
        {
          text = g_strdup ("Streaming SLIC: connectivity and labels");
          fraction = 1.0;
        }
      else
        text = g_strdup ("Streaming SLIC: preparing");
    }
  else if (ooc->stopped)
    text = g_strdup (ooc->labels ? "Stopped: the labels shown are of an earlier run" : "Stopped");
  else if (ooc->error)
    text = g_strdup_printf ("Failed: %s", ooc->error);
  else if (ooc->labels)
    {
      text = g_strdup_printf ("Done: %" G_GSIZE_FORMAT " supervoxels, streamed in %u slabs%s",
                              ooc->labels_stats.n_labels, ooc->labels_report.n_slabs,
                              sv_backend_class_is_device (
                                  sv_backend_class_lookup (ooc->labels_backend))
                                  ? " through the GPU"
                                  : "");
      fraction = 1.0;
    }
  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  gtk_progress_bar_set_text (self->progress_bar, text ? text : "");
}

static gboolean
tick_cb (gpointer data)
{
  SvWindow *self = data;

  if (self->ooc == NULL)
    return G_SOURCE_REMOVE;
  show_progress (self);
  if (!self->ooc->running)
    {
      self->ooc->tick_source = 0;
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

static const SvJobCallbacks job_callbacks = {
  .progress = job_progress_cb,
  .result = job_result_cb,
  .error = job_error_cb,
};

void
sv_window_ooc_submit (SvWindow *self)
{
  SvWindowOoc *ooc = self->ooc;
  g_autoptr (GError) error = NULL;
  SvJobRequest request;

  if (ooc->job == NULL)
    {
      if (ooc->scratch_dir == NULL)
        ooc->scratch_dir = g_dir_make_tmp ("supervox-labels-XXXXXX", &error);
      if (ooc->scratch_dir == NULL)
        {
          g_free (ooc->error);
          ooc->error = g_strdup (error->message);
          show_progress (self);
          return;
        }
      ooc->job = sv_job_new_streamed (ooc->path, ooc->scratch_dir, &job_callbacks, self);
    }
  sv_job_request_init (&request);
  sv_params_panel_get_params (self->params_panel, &request.params);
  g_strlcpy (request.backend, sv_params_panel_get_backend (self->params_panel),
             sizeof request.backend);
  request.generation = ++ooc->generation;
  request.channel = self->segment_channel;
  request.memory_limit = MAX (ooc->budget / SV_OOC_RUN_SHARE, 1);
  ooc->running_channel = self->segment_channel;
  ooc->stopped = FALSE;
  ooc->running = TRUE;
  ooc->stage = SV_STAGE_PREPARE;
  ooc->iteration = ooc->n_iterations = 0;
  sv_job_submit (ooc->job, &request);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", TRUE);
  if (!ooc->tick_source)
    ooc->tick_source = g_timeout_add (TICK_MS, tick_cb, self);
  show_progress (self);
}

void
sv_window_ooc_stop (SvWindow *self)
{
  SvWindowOoc *ooc = self->ooc;

  ooc->stopped = TRUE;
  ooc->running = FALSE;
  if (ooc->job != NULL)
    sv_job_cancel (ooc->job);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", FALSE);
  show_progress (self);
}

gboolean
sv_window_ooc_busy (SvWindow *self)
{
  return self->ooc != NULL && self->ooc->running;
}

gboolean
sv_window_ooc_read_labels (SvWindowOoc *ooc, guint z, gint32 *out, GError **error)
{
  const SvTiffSlabInfo *info;
  gsize n = (gsize)ooc->shape->ny * ooc->shape->nx;

  if (ooc->labels == NULL)
    return FALSE;
  if (!sv_slice_cache_read (ooc->labels, z, ooc->raw, error))
    return FALSE;
  info = sv_slice_cache_info (ooc->labels);
  /* The label writer picks the narrowest type the labels fit. */
  for (gsize i = 0; i < n; i++)
    switch (info->sample_type)
      {
      case SV_SAMPLE_U8:
        out[i] = ((const guint8 *)ooc->raw)[i];
        break;
      case SV_SAMPLE_U16:
        out[i] = ((const guint16 *)ooc->raw)[i];
        break;
      case SV_SAMPLE_U32:
        out[i] = (gint32)((const guint32 *)ooc->raw)[i];
        break;
      case SV_SAMPLE_I32:
        out[i] = ((const gint32 *)ooc->raw)[i];
        break;
      default:
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                     "%s holds %s samples, not labels", ooc->labels_path,
                     sv_sample_type_to_string (info->sample_type));
        return FALSE;
      }
  return TRUE;
}

gboolean
sv_window_ooc_check_exportable (SvWindow *self, GError **error)
{
  SvWindowOoc *ooc = self->ooc;

  if (ooc->error)
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                 "the segmentation failed: %s", ooc->error);
  else if (ooc->labels == NULL || ooc->running)
    g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                         "no labels for these parameters yet: wait for the streamed run to "
                         "finish");
  return ooc->error == NULL && ooc->labels != NULL && !ooc->running;
}

gboolean
sv_window_ooc_export (SvWindow *self, const char *path, GError **error)
{
  SvWindowOoc *ooc = self->ooc;
  g_autoptr (GFile) from = NULL;
  g_autoptr (GFile) to = NULL;
  gint64 start;
  double write;

  if (!sv_window_ooc_check_exportable (self, error))
    return FALSE;
  /* The run's file is the export: copied in blocks, never held whole. */
  from = g_file_new_for_path (ooc->labels_path);
  to = g_file_new_for_path (path);
  start = g_get_monotonic_time ();
  if (!g_file_copy (from, to, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, error))
    return FALSE;
  write = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  {
    const SvRunStats *st = &ooc->labels_stats;
    SvSidecar sidecar = {
      .backend = ooc->labels_backend,
      .mode = "streaming",
      .memory_limit_bytes = ooc->budget,
      .slab_depth = ooc->labels_report.slab_depth,
      .connectivity_window = ooc->labels_report.connect_window,
      .temporary_bytes_planned = ooc->labels_temp_planned,
      .temporary_bytes = ooc->labels_report.kept_file_bytes + ooc->labels_report.labels_file_bytes,
      .seconds = { ooc->open_seconds, st->seconds_prepare, st->seconds_iterate, st->seconds_connect,
                   write, st->seconds_prepare + st->seconds_iterate + st->seconds_connect + write },
      .params = &ooc->labels_params,
    };
    return sv_window_write_sidecar (self, ooc->shape, st, path, &sidecar, error);
  }
}

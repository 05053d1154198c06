/* Supervox GUI: the main window's export of labels: the label TIFF with the
 * volume's calibration, its JSON sidecar (supervox-cli's schema),
 * the default name derived from the input, and the confirmation. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-sidecar.h"

#define TOAST_SECONDS 2

const char *
sv_window_export_compression (void)
{
  static char *text = NULL;

  if (g_once_init_enter (&text))
    {
      SvTiffWriteOptions options;

      sv_tiff_write_options_init_defaults (&options);
      g_once_init_leave (&text, sv_tiff_write_options_to_string (&options));
    }
  return text;
}

char *
sv_window_default_export_name (SvWindow *self)
{
  g_autofree char *base = NULL;
  char *dot;

  g_return_val_if_fail (SV_IS_WINDOW (self), NULL);
  if (!self->volume_path)
    return g_strdup ("sample-labels.tif");
  /* A level's folder is a number: the image names the labels. */
  base = g_path_get_basename (self->zarr_image != NULL ? self->zarr_image : self->volume_path);
  /* brain.ome.tif and brain.tif both give brain-labels.tif. */
  dot = strchr (base, '.');
  if (dot && dot != base)
    *dot = '\0';
  return g_strconcat (base, "-labels.tif", NULL);
}

gboolean
sv_window_write_sidecar (SvWindow *self, const SvVolume *v, const SvRunStats *stats,
                         const char *path, SvSidecar *sidecar, GError **error)
{
  /* The line that makes this very file, not the default name. */
  g_autofree char *command = sv_window_build_command_writing (self, path);
  g_autofree char *json = NULL;
  g_autofree char *text = NULL;
  g_autofree char *json_path = sv_sidecar_path (path);

  sidecar->input = self->volume_path ? self->volume_path : "sample.tif";
  sidecar->output = path;
  sidecar->shape[0] = v->nz;
  sidecar->shape[1] = v->ny;
  sidecar->shape[2] = v->nx;
  sidecar->channel = sv_window_labels_channel (self);
  /* As supervox-cli writes it: in memory the channels it segmented, when
   * streamed the file's. */
  sidecar->channels = sidecar->channel >= 0 && sidecar->mode == NULL ? 1 : v->nc;
  sidecar->compression = sv_window_export_compression ();
  sidecar->sample_type = v->source_type;
  sidecar->spacing_unit = v->unit;
  sidecar->n_labels = stats->n_labels;
  sidecar->n_clusters = stats->n_clusters;
  sidecar->iterations = stats->iterations;
  sidecar->threads = (int)g_get_num_processors ();
  sidecar->command = command;
  sidecar->program = "supervox";
  json = sv_sidecar_to_json (sidecar);
  text = g_strconcat (json, "\n", NULL);
  if (!g_file_set_contents (json_path, text, -1, error))
    return FALSE;
  g_free (self->export_path);
  self->export_path = g_strdup (path);
  return TRUE;
}

gboolean
sv_window_check_exportable (SvWindow *self, GError **error)
{
  SvJobResult *r = self->result;

  if (self->ooc)
    return sv_window_ooc_check_exportable (self, error);
  /* The newest run failed: the labels on screen (if any) are not what the
   * panel asks for, and the user needs the reason, not a file chooser. */
  if (self->run_error)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "the segmentation failed: %s", self->run_error);
      return FALSE;
    }
  if (!r)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "no labels yet: wait for the segmentation to finish");
      return FALSE;
    }
  if (r->preview_factor > 1)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "a coarse preview is on screen: let go of the slider and wait for "
                           "the exact result");
      return FALSE;
    }
  if (r->in_progress_iteration > 0 && self->stopped)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "the run was stopped after iteration %u of %d: the clusters on screen are "
                   "not a finished segmentation; change a value to run again",
                   r->in_progress_iteration, r->params.max_num_iter);
      return FALSE;
    }
  if (r->in_progress_iteration > 0)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "the run is still going (an iteration is on screen): wait for its "
                           "final result");
      return FALSE;
    }
  if (r->region)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "the labels on screen cover the region only: choose Run on Whole "
                           "Volume and wait for its result");
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_window_export_labels (SvWindow *self, const char *path, GError **error)
{
  SvJobResult *r = self->result;
  const SvLabels *host;
  SvLabels labels;
  gint64 start;
  double write;

  if (self->ooc)
    return sv_window_ooc_export (self, path, error);
  if (!sv_window_check_exportable (self, error))
    return FALSE;
  /* A CUDA result's labels come to the host here, once. */
  host = sv_job_result_get_labels (r, error);
  if (host == NULL)
    return FALSE;
  /* As supervox-cli writes them, so that "Copy as command" makes the same
   * file. */
  labels = *host;
  labels.unit = (char *)sv_label_calibration (self->volume->spacing, self->volume->unit,
                                              r->params.spacing, labels.spacing);
  start = g_get_monotonic_time ();
  if (!sv_tiff_write_labels (path, &labels, error))
    return FALSE;
  write = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  {
    SvSidecar sidecar = {
      .mask = self->mask_path,
      .backend = r->backend_name,
      .seconds = { self->load_seconds, r->stats.seconds_prepare, r->stats.seconds_iterate,
                   r->stats.seconds_connect, write, r->seconds_total + write },
      .params = &r->params,
    };
    return sv_window_write_sidecar (self, self->volume, &r->stats, path, &sidecar, error);
  }
}

static gboolean
toast_hide_cb (gpointer data)
{
  SvWindow *self = data;

  self->toast_source = 0;
  gtk_revealer_set_reveal_child (self->toast_revealer, FALSE);
  return G_SOURCE_REMOVE;
}

void
sv_window_show_toast (SvWindow *self, const char *text)
{
  gtk_label_set_text (self->toast_label, text);
  gtk_revealer_set_reveal_child (self->toast_revealer, TRUE);
  g_clear_handle_id (&self->toast_source, g_source_remove);
  self->toast_source = g_timeout_add_seconds (TOAST_SECONDS, toast_hide_cb, self);
}

const char *
sv_window_get_toast_text (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), NULL);
  return gtk_revealer_get_reveal_child (self->toast_revealer)
             ? gtk_label_get_text (self->toast_label)
             : NULL;
}

static void
export_chosen (SvWindow *self, GFile *file, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *text = NULL;

  if (!path)
    return;
  if (!sv_window_export_labels (self, path, &error))
    {
      sv_window_show_error (self, "Cannot export the labels", error);
      return;
    }
  text = g_strdup_printf ("labels saved to %s (and its .json)", path);
  sv_window_show_toast (self, text);
}

static void
export_labels_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", NULL };
  SvWindow *self = SV_WINDOW (widget);
  g_autoptr (GError) error = NULL;
  g_autofree char *initial = NULL;

  /* Why not, before any dialog. */
  if (!sv_window_check_exportable (self, &error))
    {
      sv_window_show_error (self, "Cannot export the labels", error);
      return;
    }
  initial = sv_window_default_export_name (self);
  sv_window_choose_file (self, "Export Labels", TRUE, "TIFF", patterns, initial, export_chosen,
                         NULL);
}

void
sv_window_class_add_export_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.export-labels", NULL, export_labels_action);
}

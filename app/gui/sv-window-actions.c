/* Supervox GUI: the main window's view and teaching actions, "Copy as
 * command" and "Copy as Python", and Run Batch…'s settings (the same
 * parameters). */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <string.h>

#include "supervox/sv-sidecar.h"

/* A Python string literal of a path, for a one-line program. */
static void
append_python_path (GString *code, const char *path)
{
  g_string_append_c (code, '"');
  for (const char *c = path; *c; c++)
    {
      if (*c == '\\' || *c == '"')
        g_string_append_c (code, '\\');
      g_string_append_c (code, *c);
    }
  g_string_append_c (code, '"');
}

/* The mask the window made of the finite voxels has no file: the line
 * makes it first, as the window did (inside any mask file opened too). */
static char *
finite_mask_command (SvWindow *self, const char *input, const char *mask_out)
{
  const SvVolume *v = self->volume;
  GString *code = g_string_new ("import numpy as np, tifffile; i = tifffile.imread(");
  g_autofree char *quoted = NULL;

  append_python_path (code, input);
  g_string_append_printf (code, "); m = np.isfinite(i).reshape(%u, %u, %u, -1).all(-1)", v->nz,
                          v->ny, v->nx);
  if (self->mask_path)
    {
      g_string_append_printf (code, " & (tifffile.imread(");
      append_python_path (code, self->mask_path);
      g_string_append_printf (code, ").reshape(%u, %u, %u) != 0)", v->nz, v->ny, v->nx);
    }
  g_string_append (code, "; tifffile.imwrite(");
  append_python_path (code, mask_out);
  g_string_append (code, ", m.astype(np.uint8))");
  quoted = g_shell_quote (code->str);
  g_string_free (code, TRUE);
  return g_strdup_printf ("python3 -c %s", quoted);
}

/* What reproduces the labels on screen, for both "Copy as" forms: the
 * input, mask, parameters and backend of the run, and for the sample the
 * supervox-cli line that makes it again, byte for byte. Free the strings it
 * points to with g_free (synth, output). */
static void
describe_labels (SvWindow *self, const char *written, SvSlicCommand *line, SvSlicParams *params,
                 char **synth, char **output, char **finite_mask)
{
  /* The file written, else the name Export Labels offers, in the folder
   * the line runs in. */
  *output = written != NULL ? g_strdup (written) : sv_window_default_export_name (self);
  *synth = NULL;
  if (!self->volume_path)
    {
      char radius[G_ASCII_DTOSTR_BUF_SIZE], blur[G_ASCII_DTOSTR_BUF_SIZE],
          noise[G_ASCII_DTOSTR_BUF_SIZE];

      *synth = g_strdup_printf (
          "supervox-cli synth -o sample.tif --shape %u,%u,%u --cells %u --nucleus-radius %s "
          "--blur %s --noise %s --seed %" G_GUINT64_FORMAT,
          self->sample.nz, self->sample.ny, self->sample.nx, self->sample.n_cells,
          sv_format_double (radius, self->sample.nucleus_radius),
          sv_format_double (blur, self->sample.blur_sigma),
          sv_format_double (noise, self->sample.noise_sigma), self->sample.seed);
    }
  *line = (SvSlicCommand){
    .input = self->volume_path ? self->volume_path : "sample.tif",
    .output = *output,
    .mask = self->mask_path,
    .params = params,
    .channel = sv_window_labels_channel (self),
    /* A level of an OME-Zarr image: the image and its level, as the user
     * names them to supervox-cli (the level's folder alone reads the same
     * voxels, but says nothing of the pyramid). */
    .zarr_image = self->volume_path != NULL && self->zarr_image != NULL,
    .zarr_level = self->zarr_level,
    /* The backend that made the labels on screen: "auto" could pick another
     * one on the machine the line runs on, or after a fallback here. */
    .backend
    = self->result ? self->result->backend_name : sv_params_panel_get_backend (self->params_panel),
    .before = *synth,
    /* An export's sidecar names its codec, as supervox-cli's does. */
    .compression = written != NULL ? sv_window_export_compression () : NULL,
  };
  if (line->zarr_image)
    line->input = self->zarr_image;
  *finite_mask = NULL;
  if (self->mask_nonfinite && self->volume && self->volume_path)
    {
      g_autofree char *base = g_path_get_basename (self->volume_path);
      char *dot = strrchr (base, '.');
      if (dot)
        *dot = '\0';
      *finite_mask = g_strdup_printf ("%s-finite-mask.tif", base);
      line->mask = *finite_mask;
      /* The synth line and this one never meet: the sample is finite. */
      *synth = finite_mask_command (self, self->volume_path, *finite_mask);
      line->before = *synth;
    }
  if (self->volume)
    {
      line->shape[0] = self->volume->nz;
      line->shape[1] = self->volume->ny;
      line->shape[2] = self->volume->nx;
      line->channels = self->volume->nc;
    }

  if (self->result && !self->result->region)
    {
      /* A teaching step is the same as a full run with the teaching
       * rule's parameters. */
      sv_slic_params_apply_teaching (&self->result->params, self->result->stop_after_iteration,
                                     params);
    }
  else
    {
      /* A region's run had its share of the segments: the whole volume's
       * command asks for all of them. */
      SvSlicParams panel;

      sv_params_panel_get_params (self->params_panel, &panel);
      sv_slic_params_apply_teaching (&panel, self->result ? self->result->stop_after_iteration : -1,
                                     params);
    }
}

/* The labels on screen as a supervox-cli line writing `written` (NULL:
 * the default name), or as Python code (none before a volume is shown). */
static char *
build_text (SvWindow *self, const char *written, gboolean python)
{
  GString *text = g_string_new (NULL);
  g_autofree char *synth = NULL, *output = NULL, *finite_mask = NULL;
  SvSlicParams params;
  SvSlicCommand line;

  describe_labels (self, written, &line, &params, &synth, &output, &finite_mask);
  if (!python)
    sv_slic_command_append (&line, text);
  else if (line.channels > 0)
    sv_slic_python_append (&line, text);
  return g_string_free (text, FALSE);
}

char *
sv_window_build_command (SvWindow *self)
{
  return build_text (self, NULL, FALSE);
}

char *
sv_window_build_command_writing (SvWindow *self, const char *output)
{
  return build_text (self, output, FALSE);
}

void
sv_window_get_batch_settings (SvWindow *self, SvBatchSettings *settings)
{
  g_autofree char *synth = NULL, *output = NULL, *finite_mask = NULL;
  SvSlicCommand line;

  describe_labels (self, NULL, &line, &settings->params, &synth, &output, &finite_mask);
  /* The mask file opened; the window's own mask of this volume's
   * non-finite voxels has no file and means nothing for other files. */
  settings->mask = g_strdup (self->mask_path);
  settings->backend = g_strdup (line.backend);
}

char *
sv_window_build_python (SvWindow *self)
{
  return build_text (self, NULL, TRUE);
}

static void
copy_command_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  gboolean python = g_str_equal (name, "win.copy-python");
  g_autofree char *text = build_text (self, NULL, python);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), text);
  /* A toast over the views: the timings in the status bar stay. */
  sv_window_show_toast (self, python ? "Python copied: run it to make the same labels"
                                     : "command copied: paste it into a terminal to make the "
                                       "same labels");
  if (sv_window_verbose (self))
    g_message ("%s", text);
}

static void
slice_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  int delta = g_str_equal (name, "win.slice-next") ? 1 : -1;

  sv_slice_view_step_slice (self->active_view, delta);
}

static void
auto_contrast_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  if (self->volume || self->ooc)
    sv_window_auto_contrast (self);
}

static void
overlay_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  const char *mode = g_variant_get_string (param, NULL);

  sv_params_panel_set_overlay (self->params_panel, g_str_equal (mode, "filled") ? SV_OVERLAY_FILLED
                                                   : g_str_equal (mode, "off")
                                                       ? SV_OVERLAY_OFF
                                                       : SV_OVERLAY_BOUNDARIES);
}

static void
cycle_overlay_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  sv_params_panel_set_overlay (self->params_panel, (self->display.overlay + 1) % 3);
}

static void
teach_step (SvWindow *self, int delta)
{
  SvSlicParams p;
  int it = sv_params_panel_get_stop_after_iteration (self->params_panel);

  sv_params_panel_get_params (self->params_panel, &p);
  if (it < 0)
    {
      sv_params_panel_set_teaching (self->params_panel, TRUE);
      it = 0;
      delta = MAX (delta, 0);
    }
  sv_params_panel_set_iteration (self->params_panel, CLAMP (it + delta, 0, p.max_num_iter));
}

static gboolean
play_tick_cb (gpointer data)
{
  SvWindow *self = data;
  SvSlicParams p;

  /* Advance only once the last step is on screen. */
  if (self->job && sv_job_is_busy (self->job))
    return G_SOURCE_CONTINUE;
  sv_params_panel_get_params (self->params_panel, &p);
  if (sv_params_panel_get_stop_after_iteration (self->params_panel) >= p.max_num_iter)
    {
      self->play_source = 0;
      return G_SOURCE_REMOVE;
    }
  teach_step (self, 1);
  return G_SOURCE_CONTINUE;
}

static void
teach_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);

  if (g_str_equal (name, "win.teach-step"))
    teach_step (self, 1);
  else if (g_str_equal (name, "win.teach-back"))
    teach_step (self, -1);
  else if (self->play_source)
    g_clear_handle_id (&self->play_source, g_source_remove);
  else
    {
      if (sv_params_panel_get_stop_after_iteration (self->params_panel) < 0)
        teach_step (self, 0);
      self->play_source = g_timeout_add (600, play_tick_cb, self);
    }
}

void
sv_window_class_add_view_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.copy-command", NULL, copy_command_action);
  gtk_widget_class_install_action (widget_class, "win.copy-python", NULL, copy_command_action);
  gtk_widget_class_install_action (widget_class, "win.slice-next", NULL, slice_action);
  gtk_widget_class_install_action (widget_class, "win.slice-prev", NULL, slice_action);
  gtk_widget_class_install_action (widget_class, "win.auto-contrast", NULL, auto_contrast_action);
  gtk_widget_class_install_action (widget_class, "win.overlay", "s", overlay_action);
  gtk_widget_class_install_action (widget_class, "win.cycle-overlay", NULL, cycle_overlay_action);
  gtk_widget_class_install_action (widget_class, "win.teach-step", NULL, teach_action);
  gtk_widget_class_install_action (widget_class, "win.teach-back", NULL, teach_action);
  gtk_widget_class_install_action (widget_class, "win.teach-play", NULL, teach_action);
}

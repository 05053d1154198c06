/* Supervox GUI: the main window's files: opening, masks, export, screenshots and presets. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <string.h>

#include "error.h"
#include "io.h"
#include "sv-image-pixbuf.h"

static void
error_dialog_response_cb (GtkDialog *dialog, int response, SvWindow *self)
{
  gtk_window_destroy (GTK_WINDOW (dialog));
}

void
sv_window_show_error (SvWindow *self, const char *primary, const GError *error)
{
  GtkWidget *dialog;
  g_autofree char *line = g_strdup (error->message);
  char *nl = strchr (line, '\n');

  if (nl)
    *nl = '\0';
  if (self->error_dialog)
    gtk_window_destroy (self->error_dialog);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  dialog = gtk_message_dialog_new (GTK_WINDOW (self),
                                   GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                   GTK_MESSAGE_ERROR, GTK_BUTTONS_CLOSE, "%s", primary);
  gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog), "%s", line);
  G_GNUC_END_IGNORE_DEPRECATIONS
  g_signal_connect (dialog, "response", G_CALLBACK (error_dialog_response_cb), self);
  self->error_dialog = GTK_WINDOW (dialog);
  g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *)&self->error_dialog);
  gtk_window_present (GTK_WINDOW (dialog));
}

void
sv_window_rebuild_recent_menu (SvWindow *self)
{
  GtkRecentManager *manager = gtk_recent_manager_get_default ();
  GList *items = gtk_recent_manager_get_items (manager);
  guint n = 0;

  g_menu_remove_all (self->recent_section);
  for (GList *l = items; l && n < 8; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      g_autoptr (GMenuItem) item = NULL;
      if (!gtk_recent_info_has_application (info, g_get_application_name ()))
        continue;
      item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);
      g_menu_item_set_action_and_target (item, "win.open-recent", "s",
                                         gtk_recent_info_get_uri (info));
      g_menu_append_item (self->recent_section, item);
      n++;
    }
  g_list_free_full (items, (GDestroyNotify)gtk_recent_info_unref);
}

/* ---- opening a file on a worker thread ---- */

#define LOAD_CHUNK (4 << 20)
#define LOAD_TICK_MS 100

/* Shared by the reader thread and the main thread. */
typedef struct
{
  GFile *file;
  char *path;
  gint percent; /* atomic: 0..100 while reading, -1 while decoding */
} Load;

static void
load_free (gpointer data)
{
  Load *load = data;

  g_object_unref (load->file);
  g_free (load->path);
  g_free (load);
}

/* Reads the file once through the page cache, in chunks, for the percentage
 * and for Stop; then the reader decodes it from memory speed. */
static gboolean
read_ahead (Load *load, GCancellable *cancellable, GError **error)
{
  g_autoptr (GFileInputStream) in = g_file_read (load->file, cancellable, error);
  g_autoptr (GFileInfo) info = NULL;
  g_autofree guint8 *buffer = NULL;
  goffset size, done = 0;
  gssize n;

  if (!in)
    return FALSE;
  info = g_file_input_stream_query_info (in, G_FILE_ATTRIBUTE_STANDARD_SIZE, cancellable, NULL);
  size = info ? g_file_info_get_size (info) : 0;
  buffer = g_malloc (LOAD_CHUNK);
  while ((n = g_input_stream_read (G_INPUT_STREAM (in), buffer, LOAD_CHUNK, cancellable, error))
         > 0)
    {
      done += n;
      if (size > 0)
        g_atomic_int_set (&load->percent, (gint)MIN (done * 100 / size, 100));
    }
  return n == 0;
}

static void
load_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Load *load = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *lower = g_ascii_strdown (load->path, -1);
  SvVolume *volume;

  if (!read_ahead (load, cancellable, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_atomic_int_set (&load->percent, -1);
  if (g_str_has_suffix (lower, ".tif") || g_str_has_suffix (lower, ".tiff")
      || g_str_has_suffix (lower, ".btf") || g_str_has_suffix (lower, ".tf8"))
    volume = sv_tiff_read_volume (load->path, &error);
  else
    volume = sv_image_read_pixbuf (load->path, &error);
  if (!volume)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, volume, (GDestroyNotify)sv_volume_free);
}

static void
show_loading (SvWindow *self, Load *load)
{
  gint percent = g_atomic_int_get (&load->percent);
  g_autofree char *text = NULL;

  if (percent >= 0)
    text = g_strdup_printf ("Loading… %d %%", percent);
  else
    text = g_strdup ("Loading… decoding");
  gtk_progress_bar_set_fraction (self->progress_bar, percent >= 0 ? percent / 100.0 : 1.0);
  gtk_progress_bar_set_text (self->progress_bar, text);
}

static gboolean
load_tick_cb (gpointer data)
{
  GTask *task = data;
  SvWindow *self = g_task_get_source_object (task);

  if (!self->loading || g_task_get_cancellable (task) != self->load_cancellable)
    return G_SOURCE_REMOVE;
  show_loading (self, g_task_get_task_data (task));
  return G_SOURCE_CONTINUE;
}

/* Shows the volume read from `file`. */
static void
open_volume (SvWindow *self, SvVolume *volume, GFile *file, const char *path)
{
  g_autofree char *base = g_file_get_basename (file);
  g_autofree char *uri = g_file_get_uri (file);

  g_free (self->volume_path);
  self->volume_path = g_strdup (path);
  if (volume->nz == 1 && volume->nc == 3)
    {
      /* Colour images are clustered in Lab, where scikit-image's default
       * compactness of 10 is the sensible start. */
      SvSlicParams p;
      sv_params_panel_get_params (self->params_panel, &p);
      if (p.compactness < 1.0)
        {
          sv_window_stop_job (self);
          sv_params_panel_set_compactness (self->params_panel, 10.0);
        }
    }
  sv_window_set_volume (self, volume, base);
  gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
  sv_window_rebuild_recent_menu (self);
}

static void
load_done_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  SvWindow *self = SV_WINDOW (source);
  GTask *task = G_TASK (res);
  Load *load = g_task_get_task_data (task);
  g_autoptr (GError) error = NULL;
  SvVolume *volume;

  /* Stopped, or replaced by a newer load: its volume is dropped. */
  if (g_task_get_cancellable (task) != self->load_cancellable
      || g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    return;
  self->loading = FALSE;
  g_clear_object (&self->load_cancellable);
  volume = g_task_propagate_pointer (task, &error);
  if (!volume)
    {
      g_autofree char *base = g_file_get_basename (load->file);
      g_autofree char *primary = g_strdup_printf ("Cannot open “%s”", base);
      gtk_progress_bar_set_fraction (self->progress_bar, 0.0);
      gtk_progress_bar_set_text (self->progress_bar, "");
      sv_window_show_error (self, primary, error);
      /* Something to look at behind the dialog when nothing was open. */
      if (!self->volume)
        sv_window_load_sample (self, SAMPLE_NZ, SAMPLE_NY, SAMPLE_NX, NULL);
      return;
    }
  open_volume (self, volume, load->file, load->path);
}

gboolean
sv_window_open_file (SvWindow *self, GFile *file)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GTask) task = NULL;
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *base = g_file_get_basename (file);
  Load *load;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (!path)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s is not a local file",
                   base ? base : "the file");
      sv_window_show_error (self, "Cannot open the file", error);
      return FALSE;
    }

  sv_window_cancel_loading (self);
  load = g_new0 (Load, 1);
  load->file = g_object_ref (file);
  load->path = g_steal_pointer (&path);
  self->loading = TRUE;
  self->load_cancellable = g_cancellable_new ();
  task = g_task_new (self, self->load_cancellable, load_done_cb, NULL);
  g_task_set_task_data (task, load, load_free);
  /* Stop answers at once; a reader still decoding finishes on its own and
   * its volume is freed unseen. */
  g_task_set_return_on_cancel (task, TRUE);
  g_task_set_name (task, "sv-window load");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", TRUE);
  show_loading (self, load);
  g_timeout_add_full (G_PRIORITY_DEFAULT, LOAD_TICK_MS, load_tick_cb, g_object_ref (task),
                      g_object_unref);
  g_task_run_in_thread (task, load_thread);
  return TRUE;
}

/* ---- actions ---- */

/* What to do with the file the user picked. */
typedef void (*SvFileChosenFunc) (SvWindow *self, GFile *file, gpointer data);

typedef struct
{
  SvWindow *self; /* a reference while the dialog is up */
  SvFileChosenFunc func;
  gpointer data;
} ChooseData;

static void
choose_data_free (gpointer p)
{
  ChooseData *c = p;
  g_object_unref (c->self);
  g_free (c);
}

#if GTK_CHECK_VERSION(4, 10, 0)
static void
file_dialog_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  ChooseData *c = user_data;
  GtkFileDialog *dialog = GTK_FILE_DIALOG (source);
  g_autoptr (GFile) file = NULL;

  if (g_object_get_data (source, "save"))
    file = gtk_file_dialog_save_finish (dialog, result, NULL);
  else
    file = gtk_file_dialog_open_finish (dialog, result, NULL);
  if (file)
    c->func (c->self, file, c->data);
  choose_data_free (c);
}
#else
static void
native_response_cb (GtkNativeDialog *dialog, int response, ChooseData *c)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (file)
        c->func (c->self, file, c->data);
    }
  g_object_unref (dialog);
}
#endif

/* Asks for a file to open or save: GtkFileDialog on GTK 4.10 and later,
 * GtkFileChooserNative before (Debian 12 has GTK 4.8). */
static void
choose_file (SvWindow *self, const char *title, gboolean save, const char *filter_name,
             const char *const *patterns, const char *initial_name, SvFileChosenFunc func,
             gpointer data)
{
  ChooseData *c = g_new0 (ChooseData, 1);
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();

  c->self = g_object_ref (self);
  c->func = func;
  c->data = data;
  gtk_file_filter_set_name (filter, filter_name);
  for (guint i = 0; patterns[i]; i++)
    gtk_file_filter_add_pattern (filter, patterns[i]);

#if GTK_CHECK_VERSION(4, 10, 0)
  {
    g_autoptr (GtkFileDialog) dialog = gtk_file_dialog_new ();
    g_autoptr (GListStore) filters = g_list_store_new (GTK_TYPE_FILE_FILTER);

    g_list_store_append (filters, filter);
    gtk_file_dialog_set_title (dialog, title);
    gtk_file_dialog_set_modal (dialog, TRUE);
    gtk_file_dialog_set_filters (dialog, G_LIST_MODEL (filters));
    if (save)
      {
        g_object_set_data (G_OBJECT (dialog), "save", GINT_TO_POINTER (1));
        if (initial_name)
          gtk_file_dialog_set_initial_name (dialog, initial_name);
        gtk_file_dialog_save (dialog, GTK_WINDOW (self), NULL, file_dialog_done_cb, c);
      }
    else
      gtk_file_dialog_open (dialog, GTK_WINDOW (self), NULL, file_dialog_done_cb, c);
  }
#else
  {
    GtkFileChooserNative *chooser = gtk_file_chooser_native_new (
        title, GTK_WINDOW (self),
        save ? GTK_FILE_CHOOSER_ACTION_SAVE : GTK_FILE_CHOOSER_ACTION_OPEN,
        save ? "_Save" : "_Open", "_Cancel");

    gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
    if (save && initial_name)
      gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), initial_name);
    gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
    g_object_set_data_full (G_OBJECT (chooser), "sv-choose", c, choose_data_free);
    g_signal_connect (chooser, "response", G_CALLBACK (native_response_cb), c);
    gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
  }
#endif
}

static void
open_chosen (SvWindow *self, GFile *file, gpointer data)
{
  sv_window_open_file (self, file);
}

static void
open_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", "*.TIF",  "*.TIFF", "*.png",
                                          "*.PNG", "*.jpg",  "*.jpeg", "*.JPG",  NULL };

  choose_file (SV_WINDOW (widget), "Open Volume", FALSE, "TIFF, PNG and JPEG images", patterns,
               NULL, open_chosen, NULL);
}

gboolean
sv_window_open_mask (SvWindow *self, GFile *file)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *base = g_file_get_basename (file);
  g_autofree char *primary
      = g_strdup_printf ("Cannot use “%s” as a mask", base ? base : "the file");
  g_autofree guint8 *mask = NULL;
  const SvVolume *v = self->volume;
  guint nz = 0, ny = 0, nx = 0;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (!v)
    g_set_error_literal (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                         "open a volume first");
  else if (!path)
    g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s is not a local file",
                 base ? base : "the file");
  else if ((mask = sv_tiff_read_mask (path, &nz, &ny, &nx, &error))
           && (nz != v->nz || ny != v->ny || nx != v->nx))
    g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                 "the mask is %u×%u×%u (z×y×x) but the volume is %u×%u×%u", nz, ny, nx, v->nz,
                 v->ny, v->nx);
  if (error)
    {
      sv_window_show_error (self, primary, error);
      return FALSE;
    }

  /* The job borrows the mask: stop it before the old mask goes. */
  sv_window_stop_job (self);
  g_free (self->mask);
  self->mask = g_steal_pointer (&mask);
  g_free (self->mask_path);
  self->mask_path = g_steal_pointer (&path);
  sv_window_start_job (self);
  return TRUE;
}

static void
open_mask_chosen (SvWindow *self, GFile *file, gpointer data)
{
  sv_window_open_mask (self, file);
}

static void
open_mask_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", "*.TIF", "*.TIFF", NULL };

  choose_file (SV_WINDOW (widget), "Open Mask", FALSE, "TIFF masks (nonzero = inside)", patterns,
               NULL, open_mask_chosen, NULL);
}

static void
open_recent_action (GtkWidget *widget, const char *name, GVariant *param)
{
  g_autoptr (GFile) file = g_file_new_for_uri (g_variant_get_string (param, NULL));
  sv_window_open_file (SV_WINDOW (widget), file);
}

static void
open_sample_action (GtkWidget *widget, const char *name, GVariant *param)
{
  g_autoptr (GError) error = NULL;
  SvWindow *self = SV_WINDOW (widget);

  if (!sv_window_load_sample (self, SAMPLE_NZ, SAMPLE_NY, SAMPLE_NX, &error))
    sv_window_show_error (self, "Cannot make the sample", error);
}

/* Quotes a path for the shell only when it needs quoting. */

static char *
with_extension (const char *path, const char *ext)
{
  const char *dot = strrchr (path, '.');
  const char *slash = strrchr (path, '/');

  if (dot && (!slash || dot > slash))
    {
      g_autofree char *stem = g_strndup (path, (gsize)(dot - path));
      return g_strconcat (stem, ext, NULL);
    }
  return g_strconcat (path, ext, NULL);
}

gboolean
sv_window_export_labels (SvWindow *self, const char *path, GError **error)
{
  g_autofree char *params_json = NULL;
  g_autofree char *json_path = NULL;
  g_autofree char *json = NULL;
  SvJobResult *r = self->result;

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
  if (!sv_tiff_write_labels (path, r->labels, error))
    return FALSE;
  params_json = sv_slic_params_to_json (&r->params);
  json = g_strdup_printf ("{\"program\": \"supervox\", \"version\": \"%s\", \"backend\": \"%s\", "
                          "\"n_labels\": %" G_GSIZE_FORMAT ", \"params\": %s}\n",
                          SV_VERSION, r->backend_name, r->stats.n_labels, params_json);
  json_path = with_extension (path, ".json");
  return g_file_set_contents (json_path, json, -1, error);
}

static void
export_chosen (SvWindow *self, GFile *file, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);

  if (path && !sv_window_export_labels (self, path, &error))
    sv_window_show_error (self, "Cannot export the labels", error);
}

static void
export_labels_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", NULL };

  choose_file (SV_WINDOW (widget), "Export Labels", TRUE, "TIFF", patterns, "labels.tif",
               export_chosen, NULL);
}

static void
screenshot_captured_cb (SvSliceView *view, GdkTexture *texture, gpointer user_data)
{
  char *path = user_data;

  if (!gdk_texture_save_to_png (texture, path))
    g_warning ("could not write %s", path);
  g_free (path);
}

static void
screenshot_chosen (SvWindow *self, GFile *file, gpointer data)
{
  if (g_file_peek_path (file))
    sv_slice_view_capture (self->active_view, screenshot_captured_cb,
                           g_strdup (g_file_peek_path (file)));
}

static void
screenshot_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.png", NULL };

  choose_file (SV_WINDOW (widget), "Save Screenshot", TRUE, "PNG", patterns, "supervox.png",
               screenshot_chosen, NULL);
}

gboolean
sv_window_save_preset (SvWindow *self, const char *path, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  SvSlicParams p;

  sv_params_panel_get_params (self->params_panel, &p);
  g_key_file_set_int64 (kf, "slic", "n_segments", p.n_segments);
  g_key_file_set_double (kf, "slic", "compactness", p.compactness);
  g_key_file_set_integer (kf, "slic", "max_num_iter", p.max_num_iter);
  g_key_file_set_double (kf, "slic", "sigma", p.sigma[0]);
  g_key_file_set_double_list (kf, "slic", "spacing", p.spacing, 3);
  g_key_file_set_boolean (kf, "slic", "enforce_connectivity", p.enforce_connectivity);
  g_key_file_set_double (kf, "slic", "min_size_factor", p.min_size_factor);
  g_key_file_set_double (kf, "slic", "max_size_factor", p.max_size_factor);
  g_key_file_set_boolean (kf, "slic", "slic_zero", p.slic_zero);
  g_key_file_set_integer (kf, "slic", "start_label", p.start_label);
  g_key_file_set_string (kf, "slic", "backend", sv_params_panel_get_backend (self->params_panel));
  return g_key_file_save_to_file (kf, path, error);
}

gboolean
sv_window_load_preset (SvWindow *self, const char *path, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree double *spacing = NULL;
  g_autofree char *backend = NULL;
  g_autoptr (GError) local = NULL;
  gsize n = 0;
  SvSlicParams p;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, error))
    return FALSE;
  sv_params_panel_get_params (self->params_panel, &p);
#define GET(field, getter, key)                                                                    \
  do                                                                                               \
    {                                                                                              \
      if (g_key_file_has_key (kf, "slic", key, NULL))                                              \
        {                                                                                          \
          p.field = getter (kf, "slic", key, &local);                                              \
          if (local)                                                                               \
            {                                                                                      \
              g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ", path);          \
              return FALSE;                                                                        \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
  while (0)
  GET (n_segments, g_key_file_get_int64, "n_segments");
  GET (compactness, g_key_file_get_double, "compactness");
  GET (max_num_iter, g_key_file_get_integer, "max_num_iter");
  GET (sigma[0], g_key_file_get_double, "sigma");
  GET (enforce_connectivity, g_key_file_get_boolean, "enforce_connectivity");
  GET (min_size_factor, g_key_file_get_double, "min_size_factor");
  GET (max_size_factor, g_key_file_get_double, "max_size_factor");
  GET (slic_zero, g_key_file_get_boolean, "slic_zero");
  GET (start_label, g_key_file_get_integer, "start_label");
#undef GET
  spacing = g_key_file_get_double_list (kf, "slic", "spacing", &n, NULL);
  if (spacing && n == 3)
    memcpy (p.spacing, spacing, sizeof p.spacing);
  if (!sv_slic_params_validate (&p, error))
    {
      g_prefix_error (error, "%s: ", path);
      return FALSE;
    }
  backend = g_key_file_get_string (kf, "slic", "backend", NULL);
  if (backend)
    sv_params_panel_set_backend (self->params_panel, backend);
  sv_params_panel_set_params (self->params_panel, &p);
  return TRUE;
}

static void
preset_chosen (SvWindow *self, GFile *file, gpointer data)
{
  gboolean save = GPOINTER_TO_INT (data);
  g_autoptr (GError) error = NULL;
  const char *path = g_file_peek_path (file);
  gboolean ok;

  if (!path)
    return;
  ok = save ? sv_window_save_preset (self, path, &error)
            : sv_window_load_preset (self, path, &error);
  if (!ok)
    sv_window_show_error (self, save ? "Cannot save the preset" : "Cannot load the preset", error);
}

static void
preset_action (GtkWidget *widget, const char *name, GVariant *param)
{
  gboolean save = g_str_equal (name, "win.save-preset");
  static const char *const patterns[] = { "*.svpreset", "*.ini", NULL };

  choose_file (SV_WINDOW (widget), save ? "Save Preset" : "Load Preset", save, "Supervox presets",
               patterns, save ? "preset.svpreset" : NULL, preset_chosen, GINT_TO_POINTER (save));
}

void
sv_window_class_add_file_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "win.open-sample", NULL, open_sample_action);
  gtk_widget_class_install_action (widget_class, "win.open-mask", NULL, open_mask_action);
  gtk_widget_class_install_action (widget_class, "win.export-labels", NULL, export_labels_action);
  gtk_widget_class_install_action (widget_class, "win.screenshot", NULL, screenshot_action);
  gtk_widget_class_install_action (widget_class, "win.save-preset", NULL, preset_action);
  gtk_widget_class_install_action (widget_class, "win.load-preset", NULL, preset_action);
}

void
sv_window_cancel_loading (SvWindow *self)
{
  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->loading = FALSE;
}

/* Supervox GUI: the main window's files out: screenshots and presets;
 * and the file chooser and error dialog that opening shares. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io.h"

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

/* ---- actions ---- */

/* What to do with the file the user picked. */

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
void
sv_window_choose_file (SvWindow *self, const char *title, gboolean save, const char *filter_name,
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

/* ---- screenshots ---- */

/* What the user sees of the volume: every view shown (all three in the
 * orthogonal layout) with their sliders, at the size of the views' area. */

typedef struct
{
  SvWindow *self; /* a reference */
  GdkPaintable *paintable;
  char *path;
  gulong handler;
} Screenshot;

static void
screenshot_free (Screenshot *s)
{
  g_clear_signal_handler (&s->handler, s->paintable);
  g_object_unref (s->paintable);
  g_object_unref (s->self);
  g_free (s->path);
  g_free (s);
}

static gboolean
screenshot_save_cb (gpointer data)
{
  Screenshot *s = data;
  GtkWidget *area = GTK_WIDGET (s->self->views_grid);
  int w = gtk_widget_get_width (area), h = gtk_widget_get_height (area);
  g_autoptr (GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr (GskRenderNode) node = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (s->self));
  g_autoptr (GError) error = NULL;

  gdk_paintable_snapshot (s->paintable, snapshot, w, h);
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  if (node && renderer)
    texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  if (!texture || !gdk_texture_save_to_png (texture, s->path))
    {
      g_set_error (&error, G_IO_ERROR, G_IO_ERROR_FAILED, "could not write %s", s->path);
      sv_window_show_error (s->self, "Cannot save the screenshot", error);
    }
  else
    {
      g_autofree char *text = g_strdup_printf ("screenshot saved to %s", s->path);
      sv_window_show_toast (s->self, text);
    }
  screenshot_free (s);
  return G_SOURCE_REMOVE;
}

static void
screenshot_drawn_cb (GdkPaintable *paintable, Screenshot *s)
{
  /* Once: the views' next frame is what the user sees. */
  g_clear_signal_handler (&s->handler, paintable);
  g_idle_add (screenshot_save_cb, s);
}

void
sv_window_save_screenshot (SvWindow *self, const char *path)
{
  Screenshot *s = g_new0 (Screenshot, 1);

  g_return_if_fail (SV_IS_WINDOW (self));
  s->self = g_object_ref (self);
  s->path = g_strdup (path);
  /* A widget paintable holds an image only after the widget drew again. */
  s->paintable = gtk_widget_paintable_new (GTK_WIDGET (self->views_grid));
  s->handler
      = g_signal_connect (s->paintable, "invalidate-contents", G_CALLBACK (screenshot_drawn_cb), s);
  for (guint i = 0; i < 3; i++)
    gtk_gl_area_queue_render (sv_slice_view_get_gl_area (sv_window_view (self, i)));
  gtk_widget_queue_draw (GTK_WIDGET (self->views_grid));
}

static void
screenshot_chosen (SvWindow *self, GFile *file, gpointer data)
{
  if (g_file_peek_path (file))
    sv_window_save_screenshot (self, g_file_peek_path (file));
}

static void
screenshot_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.png", NULL };

  sv_window_choose_file (SV_WINDOW (widget), "Save Screenshot", TRUE, "PNG", patterns,
                         "supervox.png", screenshot_chosen, NULL);
}

/* ---- presets ---- */

char *
sv_window_preset_path (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);

  /* The open dialog lists *.svpreset and *.ini: a name without either
   * would be saved where the user cannot pick it again. */
  if (g_str_has_suffix (base, SV_PRESET_EXTENSION) || g_str_has_suffix (base, ".ini"))
    return g_strdup (path);
  return g_strconcat (path, SV_PRESET_EXTENSION, NULL);
}

gboolean
sv_window_save_preset (SvWindow *self, const char *path, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *full = sv_window_preset_path (path);
  SvSlicParams p;

  sv_params_panel_get_params (self->params_panel, &p);
  sv_slic_params_to_keyfile (&p, kf, "slic");
  g_key_file_set_string (kf, "slic", "backend", sv_params_panel_get_backend (self->params_panel));
  return g_key_file_save_to_file (kf, full, error);
}

gboolean
sv_window_load_preset (SvWindow *self, const char *path, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *backend = NULL;
  g_autoptr (GError) local = NULL;
  SvSlicParams p;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, error))
    return FALSE;
  sv_params_panel_get_params (self->params_panel, &p);
  if (!sv_slic_params_from_keyfile (&p, kf, "slic", &local))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ", path);
      return FALSE;
    }
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
  static const char *const patterns[] = { "*" SV_PRESET_EXTENSION, "*.ini", NULL };

  sv_window_choose_file (SV_WINDOW (widget), save ? "Save Preset" : "Load Preset", save,
                         "Supervox presets", patterns, save ? "preset" SV_PRESET_EXTENSION : NULL,
                         preset_chosen, GINT_TO_POINTER (save));
}

void
sv_window_class_add_file_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.screenshot", NULL, screenshot_action);
  gtk_widget_class_install_action (widget_class, "win.save-preset", NULL, preset_action);
  gtk_widget_class_install_action (widget_class, "win.load-preset", NULL, preset_action);
}

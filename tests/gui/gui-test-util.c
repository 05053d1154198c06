/* Helpers shared by the GUI tests: the window fixture, waiting on the main
 * loop, GL captures, screenshots, finding widgets and controllers. */
#define G_LOG_DOMAIN "test-gui"

#include "gui-test-util.h"

#include "sv-application.h"

#include <glib/gstdio.h>
#include <string.h>

#define WAIT_LIMIT_US (90 * G_USEC_PER_SEC)

/* Runs the main loop until `done` says so; fails after WAIT_LIMIT_US. */
void
wait_until (gboolean (*done) (gpointer), gpointer data, const char *what)
{
  gint64 end = g_get_monotonic_time () + WAIT_LIMIT_US;

  while (!done (data))
    {
      if (g_get_monotonic_time () > end)
        g_error ("timed out waiting for %s", what);
      g_main_context_iteration (NULL, FALSE);
      if (!done (data))
        g_main_context_iteration (NULL, TRUE);
    }
}

static gboolean
wake_cb (gpointer data)
{
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

gboolean
wait_within (gboolean (*done) (gpointer), gpointer data, guint ms)
{
  gboolean expired = FALSE;
  guint source = g_timeout_add (ms, wake_cb, &expired);

  while (!done (data) && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (source);
  return done (data);
}

/* The exact labels of the newest request are on screen (not a preview). */
gboolean
result_is_current (gpointer data)
{
  return sv_window_is_settled (data);
}

void
wait_for_current_result (SvWindow *w)
{
  wait_until (result_is_current, w, "the current segmentation");
}

gboolean
not_busy (gpointer data)
{
  return !sv_window_is_busy (data);
}

/* Opens a file (read on a worker thread) and runs the main loop until it
 * is shown or refused and its first segmentation, if any, is done. */
void
open_and_wait (SvWindow *w, GFile *file)
{
  g_assert_true (sv_window_open_file (w, file));
  wait_until (not_busy, w, "the file to load and segment");
}

typedef struct
{
  GdkTexture *texture;
} Capture;

static void
captured_cb (SvSliceView *view, GdkTexture *texture, gpointer user_data)
{
  Capture *c = user_data;
  c->texture = g_object_ref (texture);
}

static gboolean
capture_done (gpointer data)
{
  return ((Capture *)data)->texture != NULL;
}

/* The XY view's pixels as RGBA bytes, as GL drew them. */
GdkTexture *
capture_xy (SvWindow *w)
{
  Capture c = { NULL };
  SvSliceView *view = sv_window_get_slice_view (w, SV_AXIS_XY);

  sv_slice_view_capture (view, captured_cb, &c);
  wait_until (capture_done, &c, "a GL capture");
  return c.texture;
}

guint8 *
texture_bytes (GdkTexture *t, gsize *stride)
{
  int w = gdk_texture_get_width (t), h = gdk_texture_get_height (t);
  guint8 *data = g_malloc ((gsize)w * h * 4);

  *stride = (gsize)w * 4;
  gdk_texture_download (t, data, *stride);
  return data;
}

void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  f->window = SV_WINDOW (sv_window_new (f->app));
  f->weak_window = f->window;
  f->weak_xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  f->weak_panel = sv_window_get_params_panel (f->window);
  g_object_add_weak_pointer (G_OBJECT (f->window), &f->weak_window);
  g_object_add_weak_pointer (G_OBJECT (f->weak_xy), &f->weak_xy);
  g_object_add_weak_pointer (G_OBJECT (f->weak_panel), &f->weak_panel);
  gtk_window_present (GTK_WINDOW (f->window));
  g_assert_true (sv_window_load_sample (f->window, NZ, NY, NX, &error));
  g_assert_no_error (error);
  wait_for_current_result (f->window);
}

static gboolean
all_finalised (gpointer data)
{
  Fixture *f = data;
  return !f->weak_window && !f->weak_xy && !f->weak_panel;
}

void
fixture_setup_app (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  f->app = GTK_APPLICATION (sv_application_new ());
  g_application_set_flags (G_APPLICATION (f->app), g_application_get_flags (G_APPLICATION (f->app))
                                                       | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (f->app), NULL, &error));
  g_assert_no_error (error);
  fixture_setup (f, data);
}

void
fixture_teardown (Fixture *f, gconstpointer data)
{
  gtk_window_destroy (GTK_WINDOW (f->window));
  wait_until (all_finalised, f, "the window, its views and panel to be finalised");
  g_clear_object (&f->app);
}

gboolean
has_result (gpointer data)
{
  return sv_window_get_result (data) != NULL && result_is_current (data);
}

static void
set_true (gboolean *flag)
{
  *flag = TRUE;
}

static gboolean
is_true (gpointer flag)
{
  return *(gboolean *)flag;
}

/* Renders the window's content (views, panel, status) into a PNG in the
 * build's log folder and prints its path. */
void
save_window_png (SvWindow *window, const char *name)
{
  save_toplevel_png (GTK_WINDOW (window), name);
}

void
save_toplevel_png (GtkWindow *window, const char *name)
{
  const char *dir = g_getenv ("SV_LOG_DIR");
  g_autofree char *path = g_build_filename (dir ? dir : ".", name, NULL);
  GtkWidget *content = gtk_window_get_child (window);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (content);
  g_autoptr (GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr (GskRenderNode) node = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (window));
  int w = gtk_widget_get_width (content);
  int h = gtk_widget_get_height (content);
  gboolean drawn = FALSE;

  g_mkdir_with_parents (dir ? dir : ".", 0755);
  /* A widget paintable holds an image only after the widget drew again. */
  g_signal_connect_swapped (paintable, "invalidate-contents", G_CALLBACK (set_true), &drawn);
  gtk_widget_queue_draw (content);
  wait_until (is_true, &drawn, "the window to redraw");
  gdk_paintable_snapshot (paintable, snapshot, w, h);
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("screenshot: %s", path);
}

GtkWidget *
find_by_tooltip (GtkWidget *root, GType type, const char *prefix)
{
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      const char *tip = gtk_widget_get_tooltip_text (c);
      GtkWidget *found;
      if (G_TYPE_CHECK_INSTANCE_TYPE (c, type) && tip && g_str_has_prefix (tip, prefix))
        return c;
      if ((found = find_by_tooltip (c, type, prefix)))
        return found;
    }
  return NULL;
}

GtkEventController *
find_controller (GtkWidget *widget, const char *name)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GtkEventController) c = g_list_model_get_item (controllers, i);
      if (g_strcmp0 (gtk_event_controller_get_name (c), name) == 0)
        return c;
    }
  return NULL;
}

gboolean
window_settled (gpointer data)
{
  return sv_window_is_settled (data);
}

/* ---- layout ---- */

static gboolean
drawn (gpointer data)
{
  return *(guint *)data >= 2;
}

static gboolean
count_frame_cb (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  (*(guint *)data)++;
  return *(guint *)data >= 2 ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

/* Two frames later: any resize the last change asked for is done. */
void
wait_for_layout (SvWindow *w)
{
  guint frames = 0;

  gtk_widget_queue_resize (GTK_WIDGET (w));
  gtk_widget_add_tick_callback (GTK_WIDGET (w), count_frame_cb, &frames, NULL);
  wait_until (drawn, &frames, "two frames");
}

/* The window keeps its width and could keep it: its minimum fits. */
void
assert_width (SvWindow *w, int width, const char *after)
{
  int min = 0;

  wait_for_layout (w);
  gtk_widget_measure (GTK_WIDGET (w), GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  g_test_message ("after %s: width %d, minimum %d", after, gtk_widget_get_width (GTK_WIDGET (w)),
                  min);
  g_assert_cmpint (min, <=, width);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (w)), ==, width);
}

/* A laptop's width, narrower than the default: room for the views, the
 * panel and the status bar, not for status words laid end to end. */
int
narrow_window (SvWindow *w)
{
  gtk_window_set_default_size (GTK_WINDOW (w), 1024, 740);
  wait_for_layout (w);
  return gtk_widget_get_width (GTK_WIDGET (w));
}

gboolean
quality_current (gpointer window)
{
  SvWindow *w = window;
  SvQuality *q = sv_quality_panel_get_quality (sv_window_get_quality_panel (w));
  SvJobResult *r = sv_window_get_result (w);

  return sv_window_is_settled (w) && q && r && q->generation == r->generation;
}

gboolean
pick_has_count (gpointer window)
{
  const char *t = sv_pick_panel_get_text (sv_window_get_pick_panel (window), "voxels");
  return t && g_ascii_isdigit (t[0]);
}

void
show_side_panel (GtkWidget *panel)
{
  GtkWidget *notebook = gtk_widget_get_ancestor (panel, GTK_TYPE_NOTEBOOK);
  GtkWidget *paned = gtk_widget_get_ancestor (notebook, GTK_TYPE_PANED);

  gtk_notebook_set_current_page (GTK_NOTEBOOK (notebook),
                                 gtk_notebook_page_num (GTK_NOTEBOOK (notebook), panel));
  gtk_paned_set_position (GTK_PANED (paned), 120);
}

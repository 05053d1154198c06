/* Tests of what a newcomer reads in the window under Xvfb: the orthogonal
 * layout as in Fiji, the status bar's words and its toast, teaching mode's
 * legend and centres, the About dialog's icon. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-util.h"
#include "sv-application.h"
#include "supervox/sv-memory.h"

static gboolean
views_share_scale (gpointer window)
{
  double s[3];

  for (guint a = 0; a < 3; a++)
    s[a] = sv_slice_view_get_scale (sv_window_get_slice_view (window, (SvAxis)a));
  return s[0] > 0 && fabs (s[0] - s[1]) < 1e-9 && fabs (s[0] - s[2]) < 1e-9;
}

static void
test_orthogonal_like_fiji (Fixture *f, gconstpointer data)
{
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  SvSliceView *yz = sv_window_get_slice_view (f->window, SV_AXIS_YZ);
  SvSliceView *xz = sv_window_get_slice_view (f->window, SV_AXIS_XZ);
  GtkWidget *xy_area = GTK_WIDGET (sv_slice_view_get_gl_area (xy));
  GtkWidget *yz_area = GTK_WIDGET (sv_slice_view_get_gl_area (yz));
  GtkWidget *xz_area = GTK_WIDGET (sv_slice_view_get_gl_area (xz));
  g_autofree char *text = sv_slice_view_format_slice (xy, 24);
  guint n_rows = 0, n_columns = 0;

  g_assert_cmpstr (text, ==, "25 / 32");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.orthogonal", NULL));
  g_object_unref (capture_xy (f->window));
  wait_until (views_share_scale, f->window, "one scale for the three views");

  /* YZ beside XY: same rows (y), z across. */
  for (double py = 0; py < gtk_widget_get_height (xy_area); py += 7)
    {
      guint a[3], b[3];
      graphene_point_t p = GRAPHENE_POINT_INIT (gtk_widget_get_width (xy_area) / 2.0, py), q;

      if (!sv_slice_view_pixel_to_voxel (xy, p.x, p.y, a))
        continue;
      g_assert_true (gtk_widget_compute_point (xy_area, yz_area, &p, &q));
      g_assert_true (
          sv_slice_view_pixel_to_voxel (yz, gtk_widget_get_width (yz_area) / 2.0, q.y, b));
      g_assert_cmpuint (a[1], ==, b[1]);
      n_rows++;
    }
  g_assert_cmpuint (n_rows, >, 5);
  {
    guint a[3], b[3];
    double y = gtk_widget_get_height (yz_area) / 2.0, w = gtk_widget_get_width (yz_area);
    /* Left to right in YZ is z upwards. */
    g_assert_true (sv_slice_view_pixel_to_voxel (yz, w / 2.0 - 20, y, a));
    g_assert_true (sv_slice_view_pixel_to_voxel (yz, w / 2.0 + 20, y, b));
    g_assert_cmpuint (a[0], <, b[0]);
    g_assert_cmpuint (a[1], ==, b[1]);
  }

  /* XZ below XY: same columns (x). */
  for (double px = 0; px < gtk_widget_get_width (xy_area); px += 7)
    {
      guint a[3], b[3];
      graphene_point_t p = GRAPHENE_POINT_INIT (px, gtk_widget_get_height (xy_area) / 2.0), q;

      if (!sv_slice_view_pixel_to_voxel (xy, p.x, p.y, a))
        continue;
      g_assert_true (gtk_widget_compute_point (xy_area, xz_area, &p, &q));
      g_assert_true (
          sv_slice_view_pixel_to_voxel (xz, q.x, gtk_widget_get_height (xz_area) / 2.0, b));
      g_assert_cmpuint (a[2], ==, b[2]);
      n_columns++;
    }
  g_assert_cmpuint (n_columns, >, 5);
  save_window_png (f->window, "gui-orthogonal-fiji.png");
}

static gboolean
toast_gone (gpointer window)
{
  return sv_window_get_toast_text (window) == NULL;
}

static void
test_status_words_and_toast (Fixture *f, gconstpointer data)
{
  g_autofree char *timings = g_strdup (sv_window_get_result_text (f->window));
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);

  g_test_message ("status: %s · %s", timings, sv_slice_view_get_label_path (xy));
  g_assert_true (g_str_has_prefix (timings, "exact · "));
  g_assert_nonnull (strstr (timings, " supervoxels in "));
  g_assert_true (g_str_has_suffix (timings, " on the CPU"));
  g_assert_cmpstr (sv_slice_view_get_label_path (xy), ==, "drawn from memory");

  g_assert_null (sv_window_get_toast_text (f->window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.copy-command", NULL));
  g_assert_nonnull (sv_window_get_toast_text (f->window));
  g_assert_true (g_str_has_prefix (sv_window_get_toast_text (f->window), "command copied"));
  /* The timings stay, and the toast goes by itself. */
  g_assert_cmpstr (sv_window_get_result_text (f->window), ==, timings);
  wait_until (toast_gone, f->window, "the toast to hide");
  g_assert_cmpstr (sv_window_get_result_text (f->window), ==, timings);
}

static void
test_teaching_explains_itself (Fixture *f, gconstpointer data)
{
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  g_autoptr (GdkTexture) t = NULL;
  g_autofree guint8 *px = NULL;
  g_autofree char *legend = NULL;
  gsize stride, n_red = 0, n_on_slice = 0;

  g_assert_null (sv_window_get_teaching_legend (f->window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-step", NULL));
  wait_for_current_result (f->window);
  legend = sv_window_get_teaching_legend (f->window);
  g_assert_nonnull (legend);
  g_test_message ("%s", legend);
  g_assert_nonnull (strstr (legend, "cluster centre"));
  g_assert_nonnull (strstr (legend, "search window"));
  g_assert_nonnull (strstr (legend, "colour 0"));
  g_assert_nonnull (strstr (legend, "scikit-image"));
  g_assert_nonnull (strstr (legend, "skip the connectivity"));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (f->window), "teaching step 1 of "));

  /* Zoomed far out a voxel is under a pixel; each centre on the slice still
   * covers a SV_CENTRE_MIN_PX square. */
  sv_slice_view_zoom_at (xy, 0.25,
                         gtk_widget_get_width (GTK_WIDGET (sv_slice_view_get_gl_area (xy))) / 2.0,
                         gtk_widget_get_height (GTK_WIDGET (sv_slice_view_get_gl_area (xy))) / 2.0);
  {
    /* A slice through a centre. */
    SvJobResult *r = sv_window_get_result (f->window);
    g_assert_cmpuint (r->n_centres, >, 0);
    sv_slice_view_set_slice (xy, (guint)lrintf (r->centres[0]));
  }
  {
    /* The marks of centres on the slice, at full strength (those of
     * neighbouring slices are fainter and smaller); two may land on one
     * point: count points. */
    g_autoptr (GHashTable) points = g_hash_table_new (NULL, NULL);
    gsize n_marks;
    g_autofree SvCentreMark *marks = sv_slice_view_collect_centre_marks (xy, &n_marks);
    for (gsize k = 0; k < n_marks; k++)
      if (marks[k].strength == 1.0f)
        g_hash_table_add (points, GUINT_TO_POINTER ((guint)marks[k].v << 16 | (guint)marks[k].u));
    n_on_slice = g_hash_table_size (points);
  }
  g_assert_cmpuint (n_on_slice, >, 0);
  t = capture_xy (f->window);
  px = texture_bytes (t, &stride);
  for (int y = 0; y < gdk_texture_get_height (t); y++)
    for (int x = 0; x < gdk_texture_get_width (t); x++)
      {
        /* gdk_texture_download gives B, G, R, A bytes. */
        const guint8 *p = px + (gsize)y * stride + (gsize)x * 4;
        n_red += p[2] > 200 && p[1] > 30 && p[1] < 90 && p[0] > 50 && p[0] < 110;
      }
  g_test_message ("%" G_GSIZE_FORMAT " centre pixels for %" G_GSIZE_FORMAT " points", n_red,
                  n_on_slice);
  save_window_png (f->window, "gui-teach-legend.png");
  g_assert_cmpuint (n_red, >=, n_on_slice * (gsize)(SV_CENTRE_MIN_PX * SV_CENTRE_MIN_PX) * 9 / 10);

  sv_params_panel_set_teaching (sv_window_get_params_panel (f->window), FALSE);
  wait_for_current_result (f->window);
  g_assert_null (sv_window_get_teaching_legend (f->window));
}

static void
test_about_shows_icon (Fixture *f, gconstpointer data)
{
  GtkWindow *about = sv_application_show_about (GTK_WINDOW (f->window));
  GtkIconTheme *theme
      = gtk_icon_theme_get_for_display (gtk_widget_get_display (GTK_WIDGET (about)));
  g_autoptr (GtkIconPaintable) icon = NULL;
  g_autoptr (GFile) file = NULL;
  g_autofree char *uri = NULL;

  g_assert_true (gtk_icon_theme_has_icon (theme, "org.supervox.Supervox"));
  g_assert_cmpstr (gtk_about_dialog_get_logo_icon_name (GTK_ABOUT_DIALOG (about)), ==,
                   "org.supervox.Supervox");
  icon = gtk_icon_theme_lookup_icon (theme, "org.supervox.Supervox", NULL, 128, 1,
                                     GTK_TEXT_DIR_NONE, 0);
  file = gtk_icon_paintable_get_file (icon);
  g_assert_nonnull (file);
  uri = g_file_get_uri (file);
  g_test_message ("icon: %s", uri);
  g_assert_true (g_str_has_suffix (uri, "org.supervox.Supervox.svg"));
  gtk_window_destroy (about);
}

/* The memory the status bar shows, in bytes ("312.4 MiB in memory"). */
static double
shown_memory (SvWindow *w)
{
  const char *text = sv_window_get_memory_text (w);
  char *end = NULL;
  double value = g_ascii_strtod (text, &end);

  if (end == text || !g_str_has_suffix (text, " in memory"))
    return -1.0;
  /* g_format_size puts a no-break space before the unit. */
  if (g_str_has_prefix (end, "\u00a0"))
    end += strlen ("\u00a0");
  else if (*end == ' ')
    end++;
  if (g_str_has_prefix (end, "KiB"))
    return value * 1024.0;
  if (g_str_has_prefix (end, "MiB"))
    return value * 1024.0 * 1024.0;
  if (g_str_has_prefix (end, "GiB"))
    return value * 1024.0 * 1024.0 * 1024.0;
  return -1.0;
}

/* Within a quarter of what this process holds now (the test runs in the
 * window's process; the label follows it each second). */
static gboolean
memory_matches (gpointer data)
{
  double shown = shown_memory (data), resident = (double)sv_memory_resident ();

  return shown > 0.8 * resident && shown < 1.25 * resident;
}

static void
test_status_memory (Fixture *f, gconstpointer data)
{
  g_autofree guint8 *held = NULL;
  double before;

  (void)data;
  wait_until (memory_matches, f->window, "the memory in use");
  before = shown_memory (f->window);
  /* 256 MiB more, touched so that it is resident: the label follows. */
  held = g_malloc (256 << 20);
  memset (held, 1, 256 << 20);
  wait_until (memory_matches, f->window, "the memory in use after 256 MiB more");
  g_assert_cmpfloat (shown_memory (f->window), >, before + (200 << 20));
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/orthogonal/rows-and-columns-line-up-as-in-fiji", Fixture, NULL, fixture_setup,
              test_orthogonal_like_fiji, fixture_teardown);
  g_test_add ("/gui/status/memory-in-use", Fixture, NULL, fixture_setup, test_status_memory,
              fixture_teardown);
  g_test_add ("/gui/status/words-and-a-transient-toast", Fixture, NULL, fixture_setup,
              test_status_words_and_toast, fixture_teardown);
  g_test_add ("/gui/teach/legend-note-and-visible-centres", Fixture, NULL, fixture_setup,
              test_teaching_explains_itself, fixture_teardown);
  g_test_add ("/gui/about/shows-the-icon", Fixture, NULL, fixture_setup, test_about_shows_icon,
              fixture_teardown);
  return g_test_run ();
}

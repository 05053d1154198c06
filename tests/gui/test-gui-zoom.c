/* Tests of the views' zoom in the orthogonal layout under Xvfb, on an
 * anisotropic stack (z spacing 10× x, as 40×4×4 nm EM): linked, the three
 * views share one scale and a Ctrl+wheel zooms them all, rows and columns
 * lined up; unlinked (a real click on the Link Zoom toggle), XY fits its
 * own tile and a Ctrl+wheel zooms the view under the pointer alone; linked
 * again, the views take the scale of the one zoomed last. The scale bars
 * follow each view's scale. Real pointer events come from xdotool (the
 * tests skip without it). */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-pointer.h"
#include "gui-test-util.h"
#include "supervox/sv-io.h"
#include "supervox/sv-synth.h"

/* 0.96 µm deep, 0.192 µm across: XZ and YZ are five times taller or wider
 * than XY. */
#define ANISO_NZ 24
#define ANISO_NY 48
#define ANISO_NX 48
#define SPACING_Z 0.04
#define SPACING_XY 0.004

static SvSliceView *
view (SvWindow *w, SvAxis axis)
{
  return sv_window_get_slice_view (w, axis);
}

static GtkWidget *
area (SvWindow *w, SvAxis axis)
{
  return GTK_WIDGET (sv_slice_view_get_gl_area (view (w, axis)));
}

static double
scale_of (SvWindow *w, SvAxis axis)
{
  return sv_slice_view_get_scale (view (w, axis));
}

static gboolean
link_zoom (SvWindow *w)
{
  gboolean link;

  g_object_get (w, "link-zoom", &link, NULL);
  return link;
}

/* A window showing the anisotropic stack in the orthogonal layout. */
static void
open_stack (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "em-stack.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (GError) error = NULL;
  SvSynthParams p;

  fixture_setup (f, data);
  sv_synth_params_init_defaults (&p);
  p.nz = ANISO_NZ;
  p.ny = ANISO_NY;
  p.nx = ANISO_NX;
  p.n_cells = 12;
  p.nucleus_radius = 3.0;
  v = sv_synth_cells (&p, NULL, &error);
  g_assert_no_error (error);
  v->spacing[0] = SPACING_Z;
  v->spacing[1] = v->spacing[2] = SPACING_XY;
  v->unit = g_strdup ("micron");
  g_assert_true (sv_tiff_write_volume_full (path, v, SV_SAMPLE_U16, NULL, &error));
  g_assert_no_error (error);
  open_and_wait (f->window, file);
  wait_for_current_result (f->window);
  g_unlink (path);
  g_rmdir (dir);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.orthogonal", NULL));
  wait_for_layout (f->window);
  wait_for_layout (f->window);
}

/* The scale bar's length in µm, from its text ("0.05 µm"). */
static double
bar_length (SvWindow *w, SvAxis axis)
{
  const char *text = sv_slice_view_get_scale_bar_text (view (w, axis));
  char *end = NULL;
  double length;

  g_assert_nonnull (text);
  length = g_ascii_strtod (text, &end);
  g_assert_cmpstr (end, ==, " µm");
  return length;
}

/* Each bar, drawn at its view's scale, is a round length a fifth of the
 * view wide or less, and more than a fifth over 2.5 (the step between
 * 1, 2 and 5). */
static void
assert_bars_follow_scales (SvWindow *w)
{
  for (guint a = 0; a < 3; a++)
    {
      double px = bar_length (w, (SvAxis)a) * scale_of (w, (SvAxis)a);
      double width = gtk_widget_get_width (area (w, (SvAxis)a));

      g_test_message ("axis %u: scale %.1f px/µm, bar %s = %.1f px of %.0f", a,
                      scale_of (w, (SvAxis)a),
                      sv_slice_view_get_scale_bar_text (view (w, (SvAxis)a)), px, width);
      g_assert_cmpfloat (px, <=, 0.2 * width + 1e-6);
      g_assert_cmpfloat (px, >, 0.2 * width / 2.5);
    }
}

/* XY's rows continue in YZ beside it and its columns in XZ below, where
 * both show them. */
static void
assert_lined_up (SvWindow *w)
{
  GtkWidget *xy = area (w, SV_AXIS_XY), *yz = area (w, SV_AXIS_YZ), *xz = area (w, SV_AXIS_XZ);
  guint n_rows = 0, n_columns = 0;

  for (double py = 0; py < gtk_widget_get_height (xy); py += 5)
    for (double px = 0; px < gtk_widget_get_width (yz); px += 20)
      {
        graphene_point_t p = GRAPHENE_POINT_INIT (0, py), q;
        guint a[3], b[3];

        g_assert_true (gtk_widget_compute_point (xy, yz, &p, &q));
        if (!sv_slice_view_pixel_to_voxel (view (w, SV_AXIS_YZ), px, q.y, b))
          continue;
        for (double x = 0; x < gtk_widget_get_width (xy); x += 20)
          if (sv_slice_view_pixel_to_voxel (view (w, SV_AXIS_XY), x, py, a))
            {
              g_assert_cmpuint (a[1], ==, b[1]);
              n_rows++;
            }
      }
  for (double px = 0; px < gtk_widget_get_width (xy); px += 5)
    for (double py = 0; py < gtk_widget_get_height (xz); py += 20)
      {
        graphene_point_t p = GRAPHENE_POINT_INIT (px, 0), q;
        guint a[3], b[3];

        g_assert_true (gtk_widget_compute_point (xy, xz, &p, &q));
        if (!sv_slice_view_pixel_to_voxel (view (w, SV_AXIS_XZ), q.x, py, b))
          continue;
        for (double y = 0; y < gtk_widget_get_height (xy); y += 20)
          if (sv_slice_view_pixel_to_voxel (view (w, SV_AXIS_XY), px, y, a))
            {
              g_assert_cmpuint (a[2], ==, b[2]);
              n_columns++;
            }
      }
  g_assert_cmpuint (n_rows, >, 5);
  g_assert_cmpuint (n_columns, >, 5);
}

/* Some point of the view shows the crosshair's voxel coordinate along
 * axis a (z, y or x), so that its line is on screen. */
static gboolean
shows_coordinate (SvWindow *w, SvAxis axis, int a, guint value)
{
  GtkWidget *gl = area (w, axis);

  for (double y = 0; y < gtk_widget_get_height (gl); y += 1)
    for (double x = 0; x < gtk_widget_get_width (gl); x += 1)
      {
        guint zyx[3];
        if (sv_slice_view_pixel_to_voxel (view (w, axis), x, y, zyx) && zyx[a] == value)
          return TRUE;
      }
  return FALSE;
}

typedef struct
{
  SvWindow *window;
  gboolean want;
} LinkWait;

static gboolean
link_is (gpointer data)
{
  LinkWait *l = data;
  return link_zoom (l->window) == l->want;
}

/* A real click on the header bar's Link Zoom toggle. */
static void
click_link_toggle (SvWindow *w)
{
  GtkWidget *toggle = find_by_tooltip (GTK_WIDGET (w), GTK_TYPE_TOGGLE_BUTTON, "Link zoom");
  LinkWait l = { w, !link_zoom (w) };
  int x, y;

  g_assert_nonnull (toggle);
  g_assert_true (gtk_widget_get_sensitive (toggle));
  g_assert_true (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (toggle)) == link_zoom (w));
  surface_point (w, toggle, gtk_widget_get_width (toggle) / 2.0,
                 gtk_widget_get_height (toggle) / 2.0, &x, &y);
  xdotool (w, "mousemove --window WINDOW %d %d click 1", x, y);
  wait_until (link_is, &l, "the Link Zoom toggle to flip");
  g_assert_true (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (toggle)) == l.want);
  wait_for_layout (w);
}

typedef struct
{
  SvWindow *window;
  SvAxis axis;
  double before;
} ScaleWait;

static gboolean
scale_changed (gpointer data)
{
  ScaleWait *s = data;
  return scale_of (s->window, s->axis) != s->before;
}

static gboolean
has_pointer (gpointer slice_view)
{
  return sv_slice_view_has_pointer (slice_view);
}

/* The real pointer over a view, off its middle. */
static void
point_at (SvWindow *w, SvAxis axis)
{
  GtkWidget *gl = area (w, axis);
  int x, y;

  surface_point (w, gl, gtk_widget_get_width (gl) * 0.4, gtk_widget_get_height (gl) * 0.45, &x, &y);
  xdotool (w, "mousemove --window WINDOW %d %d", x, y);
  wait_until (has_pointer, view (w, axis), "the pointer over the view");
}

/* A real Ctrl+wheel notch over a view: button 4 zooms in, 5 out. */
static void
ctrl_wheel (SvWindow *w, SvAxis axis, int button)
{
  ScaleWait s = { w, axis, scale_of (w, axis) };

  point_at (w, axis);
  xdotool (w, "keydown ctrl click %d keyup ctrl", button);
  wait_until (scale_changed, &s, "a Ctrl+wheel zoom");
  wait_for_layout (w);
}

typedef struct
{
  SvWindow *window;
  guint z;
} SliceWait;

static gboolean
xy_slice_is (gpointer data)
{
  SliceWait *s = data;
  return sv_slice_view_get_slice (view (s->window, SV_AXIS_XY)) == s->z;
}

/* A real click on slice z in XZ, in its middle column: a pick, which
 * moves the crosshair and XY's slice there. */
static void
click_slice (SvWindow *w, guint z)
{
  GtkWidget *gl = area (w, SV_AXIS_XZ);
  SliceWait s = { w, z };
  guint x = sv_slice_view_get_slice (view (w, SV_AXIS_YZ));

  for (double py = 0; py < gtk_widget_get_height (gl); py++)
    for (double px = 0; px < gtk_widget_get_width (gl); px++)
      {
        guint zyx[3];
        int sx, sy;

        if (!sv_slice_view_pixel_to_voxel (view (w, SV_AXIS_XZ), px, py, zyx) || zyx[0] != z
            || zyx[2] != x)
          continue;
        surface_point (w, gl, px + 1, py + 1, &sx, &sy);
        xdotool (w, "mousemove --window WINDOW %d %d click 1", sx, sy);
        wait_until (xy_slice_is, &s, "the click to move the crosshair");
        return;
      }
  g_error ("slice %u is not in view in XZ", z);
}

static void
test_unlinked_xy_fills_its_tile (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  const SvVolume *v = sv_window_get_volume (w);
  double linked[3], fill;

  if (!have_xdotool ())
    return;
  /* Linked (the default): one scale, held down by the tall XZ and YZ. */
  g_assert_true (link_zoom (w));
  for (guint a = 0; a < 3; a++)
    linked[a] = scale_of (w, (SvAxis)a);
  g_assert_cmpfloat (linked[0], >, 0);
  g_assert_cmpfloat_with_epsilon (linked[1], linked[0], 1e-9);
  g_assert_cmpfloat_with_epsilon (linked[2], linked[0], 1e-9);
  g_assert_cmpstr (sv_slice_view_get_scale_bar_text (view (w, SV_AXIS_XY)), ==,
                   sv_slice_view_get_scale_bar_text (view (w, SV_AXIS_XZ)));
  assert_bars_follow_scales (w);
  save_window_png (w, "gui-zoom-linked.png");

  click_link_toggle (w);
  g_assert_false (link_zoom (w));
  /* XY at its own fit: several times the linked scale, the slice as high or
   * as wide as its tile. */
  g_test_message ("XY: %.1f px/µm linked, %.1f unlinked", linked[0], scale_of (w, SV_AXIS_XY));
  g_assert_cmpfloat (scale_of (w, SV_AXIS_XY), >, 3.0 * linked[0]);
  fill = MAX (v->nx * v->spacing[2] * scale_of (w, SV_AXIS_XY)
                  / gtk_widget_get_width (area (w, SV_AXIS_XY)),
              v->ny * v->spacing[1] * scale_of (w, SV_AXIS_XY)
                  / gtk_widget_get_height (area (w, SV_AXIS_XY)));
  g_assert_cmpfloat_with_epsilon (fill, 1.0, 1e-9);
  for (guint a = 0; a < 3; a++)
    g_assert_cmpfloat_with_epsilon (scale_of (w, (SvAxis)a),
                                    sv_slice_view_get_fit_scale (view (w, (SvAxis)a)), 1e-9);
  /* Each bar tells its own view's scale: XY's is the shortest. */
  assert_bars_follow_scales (w);
  g_assert_cmpfloat (bar_length (w, SV_AXIS_XY), <, bar_length (w, SV_AXIS_XZ));
  save_window_png (w, "gui-zoom-unlinked.png");
}

static void
test_ctrl_wheel_zooms_one_or_all (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  double before[3], relinked;
  guint xy_voxels[4][3];

  if (!have_xdotool ())
    return;
  /* Linked: a notch over XY zooms the three views alike, lined up. */
  for (guint a = 0; a < 3; a++)
    before[a] = scale_of (w, (SvAxis)a);
  ctrl_wheel (w, SV_AXIS_XY, 4);
  for (guint a = 0; a < 3; a++)
    {
      g_test_message ("linked, axis %u: %.2f -> %.2f px/µm", a, before[a], scale_of (w, (SvAxis)a));
      g_assert_cmpfloat_with_epsilon (scale_of (w, (SvAxis)a), before[a] * 1.2, 1e-9 * before[a]);
    }
  assert_lined_up (w);
  assert_bars_follow_scales (w);

  /* Unlinked: a notch over XY zooms XY alone, one over YZ YZ alone. */
  click_link_toggle (w);
  for (guint a = 0; a < 3; a++)
    before[a] = scale_of (w, (SvAxis)a);
  ctrl_wheel (w, SV_AXIS_XY, 4);
  g_assert_cmpfloat_with_epsilon (scale_of (w, SV_AXIS_XY), before[0] * 1.2, 1e-9 * before[0]);
  g_assert_cmpfloat (scale_of (w, SV_AXIS_XZ), ==, before[1]);
  g_assert_cmpfloat (scale_of (w, SV_AXIS_YZ), ==, before[2]);
  ctrl_wheel (w, SV_AXIS_YZ, 5);
  g_assert_cmpfloat_with_epsilon (scale_of (w, SV_AXIS_YZ), before[2] / 1.2, 1e-9 * before[2]);
  g_assert_cmpfloat_with_epsilon (scale_of (w, SV_AXIS_XY), before[0] * 1.2, 1e-9 * before[0]);
  g_assert_cmpfloat (scale_of (w, SV_AXIS_XZ), ==, before[1]);
  assert_bars_follow_scales (w);

  /* Zoom 1:1 with the pointer over XZ (zoomed there off its middle first,
   * so that it is panned): one screen pixel per x voxel in XZ, the others
   * as they were. */
  ctrl_wheel (w, SV_AXIS_XZ, 4);
  for (guint a = 0; a < 3; a++)
    before[a] = scale_of (w, (SvAxis)a);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.zoom-one", NULL));
  g_assert_cmpfloat_with_epsilon (scale_of (w, SV_AXIS_XZ), 1.0 / SPACING_XY, 1e-6);
  g_assert_cmpfloat (scale_of (w, SV_AXIS_XY), ==, before[0]);
  g_assert_cmpfloat (scale_of (w, SV_AXIS_YZ), ==, before[2]);
  assert_bars_follow_scales (w);
  save_window_png (w, "gui-zoom-unlinked-zoomed.png");

  /* A real click in XZ on slice 3, far from the middle: the crosshair and
   * XY's slice go there. Then XY, zoomed last, far in. */
  click_slice (w, 3);
  ctrl_wheel (w, SV_AXIS_XY, 4);
  for (guint k = 0; k < 4; k++)
    g_assert_true (sv_slice_view_pixel_to_voxel (
        view (w, SV_AXIS_XY), gtk_widget_get_width (area (w, SV_AXIS_XY)) * (0.3 + 0.1 * k),
        gtk_widget_get_height (area (w, SV_AXIS_XY)) * (0.6 - 0.1 * k), xy_voxels[k]));
  relinked = scale_of (w, SV_AXIS_XY);

  /* Linked again: XY keeps what it shows; the others take its scale, lined
   * up with it, their z axis placed as the fit places the crosshair's slice
   * (so that it stays in view: XZ and YZ are now five tiles long). */
  click_link_toggle (w);
  g_assert_cmpfloat_with_epsilon (scale_of (w, SV_AXIS_XY), relinked, 1e-9 * relinked);
  for (guint k = 0; k < 4; k++)
    {
      guint zyx[3];
      g_assert_true (sv_slice_view_pixel_to_voxel (
          view (w, SV_AXIS_XY), gtk_widget_get_width (area (w, SV_AXIS_XY)) * (0.3 + 0.1 * k),
          gtk_widget_get_height (area (w, SV_AXIS_XY)) * (0.6 - 0.1 * k), zyx));
      g_assert_cmpmem (zyx, sizeof zyx, xy_voxels[k], sizeof zyx);
    }
  g_assert_cmpfloat_with_epsilon (scale_of (w, SV_AXIS_XZ), relinked, 1e-9 * relinked);
  g_assert_cmpfloat_with_epsilon (scale_of (w, SV_AXIS_YZ), relinked, 1e-9 * relinked);
  assert_lined_up (w);
  g_assert_false (shows_coordinate (w, SV_AXIS_XZ, 0, ANISO_NZ / 2 + 6));
  g_assert_true (shows_coordinate (w, SV_AXIS_XZ, 0, 3));
  g_assert_true (shows_coordinate (w, SV_AXIS_YZ, 0, 3));
  assert_bars_follow_scales (w);
  g_assert_cmpstr (sv_slice_view_get_scale_bar_text (view (w, SV_AXIS_XY)), ==,
                   sv_slice_view_get_scale_bar_text (view (w, SV_AXIS_YZ)));
  save_window_png (w, "gui-zoom-relinked.png");
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/zoom/unlinked-xy-fills-its-tile", Fixture, NULL, open_stack,
              test_unlinked_xy_fills_its_tile, fixture_teardown);
  g_test_add ("/gui/zoom/ctrl-wheel-zooms-one-view-or-all", Fixture, NULL, open_stack,
              test_ctrl_wheel_zooms_one_or_all, fixture_teardown);
  return g_test_run ();
}

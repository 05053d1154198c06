/* Tests of the window without OpenGL (run with GDK_DEBUG=gl-disable, as on
 * a remote desktop or a broken driver): the slices and overlays are still
 * drawn, in software, with the intensity mapping the shader uses. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-util.h"

/* The grey the shader gives a held value under the display's window. */
static int
expected_grey (const SvDisplay *d, float value)
{
  float t = CLAMP ((value - d->low) / (d->high - d->low), 0.0f, 1.0f);
  return (int)lrintf (powf (t, 1.0f / d->gamma) * 255.0f);
}

static void
test_soft_draws_slice (Fixture *f, gconstpointer data)
{
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  const SvVolume *v = sv_window_get_volume (f->window);
  SvJobResult *r = sv_window_get_result (f->window);
  g_autoptr (GdkTexture) t = NULL;
  g_autofree guint8 *px = NULL;
  guint z = sv_slice_view_get_slice (xy);
  gsize stride, n_checked = 0, n_boundary = 0;
  SvDisplay d;

  g_assert_true (sv_slice_view_is_software (xy));
  g_assert_cmpstr (sv_slice_view_get_label_path (xy), ==, "drawn without OpenGL");
  g_test_message ("%s", sv_slice_view_get_gl_off_reason (xy));
  g_assert_nonnull (strstr (sv_slice_view_get_gl_off_reason (xy), "GDK_DEBUG"));
  sv_params_panel_get_display (sv_window_get_params_panel (f->window), &d);
  t = capture_xy (f->window);
  px = texture_bytes (t, &stride);

  /* Voxels inside a supervoxel (no other label within one voxel) show
   * their windowed intensity at their centre; boundaries show in yellow. */
  for (int py = 0; py < gdk_texture_get_height (t); py += 3)
    for (int pxx = 0; pxx < gdk_texture_get_width (t); pxx += 3)
      {
        const guint8 *p = px + (gsize)py * stride + (gsize)pxx * 4;
        guint zyx[3];
        gboolean inside = TRUE;
        gint32 l;

        n_boundary += p[2] > 200 && p[1] > 170 && p[0] < 60;
        if (!sv_slice_view_pixel_to_voxel (xy, pxx + 0.5, py + 0.5, zyx))
          continue;
        g_assert_cmpuint (zyx[0], ==, z);
        l = sv_job_result_label_at (r, zyx[0], zyx[1], zyx[2]);
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++)
            {
              int yy = CLAMP ((int)zyx[1] + dy, 0, (int)v->ny - 1);
              int xx = CLAMP ((int)zyx[2] + dx, 0, (int)v->nx - 1);
              inside &= sv_job_result_label_at (r, z, (guint)yy, (guint)xx) == l;
            }
        if (!inside)
          continue;
        {
          int want = expected_grey (&d, v->data[((gsize)z * v->ny + zyx[1]) * v->nx + zyx[2]]);
          g_assert_cmpint (abs ((int)p[0] - want), <=, 1);
          g_assert_cmpint (abs ((int)p[1] - want), <=, 1);
          g_assert_cmpint (abs ((int)p[2] - want), <=, 1);
          n_checked++;
        }
      }
  g_test_message ("%" G_GSIZE_FORMAT " pixels match the shader's grey, %" G_GSIZE_FORMAT
                  " boundary pixels",
                  n_checked, n_boundary);
  g_assert_cmpuint (n_checked, >, 1000);
  g_assert_cmpuint (n_boundary, >, 500);
  save_window_png (f->window, "gui-software-path.png");
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/soft/draws-slice-and-boundaries-without-gl", Fixture, NULL, fixture_setup,
              test_soft_draws_slice, fixture_teardown);
  return g_test_run ();
}

/* Tests of the Supervox window under Xvfb with software OpenGL. */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-io.h"
#include "gui-test-util.h"
#include "sv-test-files.h"
#include "supervox/sv-synth.h"

static void
test_sample_overlay (Fixture *f, gconstpointer data)
{
  SvSliceView *view = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  SvJobResult *r = sv_window_get_result (f->window);
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  g_autoptr (GdkTexture) with = NULL;
  g_autoptr (GdkTexture) bare = NULL;
  g_autofree guint8 *a = NULL;
  g_autofree guint8 *b = NULL;
  gsize stride, n_diff = 0, n_edge = 0, n_diff_on_edge = 0;
  int w, h;
  guint slice = sv_slice_view_get_slice (view);

  g_assert_nonnull (r);
  g_assert_cmpuint (sv_job_result_get_labels (r, NULL)->nz, ==, NZ);
  g_assert_cmpuint (r->stats.n_labels, >, 4);
  g_assert_cmpstr (sv_slice_view_get_label_path (view), ==, "drawn from memory");

  sv_params_panel_set_overlay (panel, SV_OVERLAY_BOUNDARIES);
  with = capture_xy (f->window);
  sv_params_panel_set_overlay (panel, SV_OVERLAY_OFF);
  bare = capture_xy (f->window);
  sv_params_panel_set_overlay (panel, SV_OVERLAY_BOUNDARIES);

  w = gdk_texture_get_width (with);
  h = gdk_texture_get_height (with);
  g_assert_cmpint (w, ==, gdk_texture_get_width (bare));
  g_assert_cmpint (w, >, 100);
  a = texture_bytes (with, &stride);
  b = texture_bytes (bare, &stride);

  /* A pixel is on a boundary when the voxel under it and the voxel one pixel
   * right or below carry different labels: the shader's rule, recomputed
   * here from the labels through the view's own pixel→voxel mapping. */
  for (int y = 0; y < h - 1; y++)
    for (int x = 0; x < w - 1; x++)
      {
        guint p[3], q[3], s[3];
        gboolean diff = memcmp (a + y * stride + x * 4, b + y * stride + x * 4, 3) != 0;
        gboolean edge = FALSE;

        if (!sv_slice_view_pixel_to_voxel (view, x + 0.5, y + 0.5, p))
          {
            g_assert_false (diff);
            continue;
          }
        g_assert_cmpuint (p[0], ==, slice);
        if (sv_slice_view_pixel_to_voxel (view, x + 1.5, y + 0.5, q)
            && sv_job_result_get_labels (r, NULL)->data[(p[1] * NX) + p[2] + (gsize)slice * NY * NX]
                   != sv_job_result_get_labels (r, NULL)
                          ->data[(q[1] * NX) + q[2] + (gsize)slice * NY * NX])
          edge = TRUE;
        if (sv_slice_view_pixel_to_voxel (view, x + 0.5, y + 1.5, s)
            && sv_job_result_get_labels (r, NULL)->data[(p[1] * NX) + p[2] + (gsize)slice * NY * NX]
                   != sv_job_result_get_labels (r, NULL)
                          ->data[(s[1] * NX) + s[2] + (gsize)slice * NY * NX])
          edge = TRUE;
        n_diff += diff;
        n_edge += edge;
        n_diff_on_edge += diff && edge;
      }
  g_test_message ("%" G_GSIZE_FORMAT " pixels differ, %" G_GSIZE_FORMAT
                  " boundary pixels, %" G_GSIZE_FORMAT " both",
                  n_diff, n_edge, n_diff_on_edge);
  g_assert_cmpuint (n_edge, >, 200);
  /* The overlay changes boundary pixels, and (almost) only those: rounding
   * at texel edges may move a line by a pixel. */
  g_assert_cmpfloat ((double)n_diff_on_edge / n_edge, >, 0.9);
  g_assert_cmpfloat ((double)n_diff_on_edge / n_diff, >, 0.9);
}

static gboolean
labels_differ (const SvJobResult *a, const SvJobResult *b)
{
  return memcmp (sv_job_result_get_labels (a, NULL)->data, sv_job_result_get_labels (b, NULL)->data,
                 sizeof (gint32) * NZ * NY * NX)
         != 0;
}

static void
test_compactness_restarts_job (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  g_autoptr (SvJobResult) before = sv_job_result_ref (sv_window_get_result (f->window));
  g_autoptr (GdkTexture) t0 = capture_xy (f->window);
  g_autoptr (GdkTexture) t1 = NULL;
  g_autofree guint8 *a = NULL;
  g_autofree guint8 *b = NULL;
  guint64 gen = sv_window_get_generation (f->window);
  SvJobResult *after;
  gsize stride;

  sv_params_panel_set_compactness (panel, 5.0);
  g_assert_cmpuint (sv_window_get_generation (f->window), ==, gen + 1);
  wait_for_current_result (f->window);
  after = sv_window_get_result (f->window);
  g_assert_cmpfloat (after->params.compactness, ==, 5.0);
  g_assert_cmpfloat (before->params.compactness, !=, 5.0);
  g_assert_true (labels_differ (before, after));

  t1 = capture_xy (f->window);
  a = texture_bytes (t0, &stride);
  b = texture_bytes (t1, &stride);
  g_assert_cmpint (memcmp (a, b, stride * gdk_texture_get_height (t0)), !=, 0);
}

static void
test_rapid_changes (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = NULL;
  g_autofree gint32 *expected = NULL;
  SvSlicParams p, last;
  SvRunControl control = { 0 };
  SvRunStats stats;
  SvJobResult *r;

  for (guint i = 0; i < 500; i++)
    {
      sv_params_panel_set_compactness (panel, 0.05 + 0.01 * (i % 97));
      /* A slider drag lets the main loop run now and then. */
      if (i % 25 == 0)
        g_main_context_iteration (NULL, FALSE);
    }
  sv_params_panel_get_params (panel, &last);
  g_assert_cmpuint (sv_window_get_generation (f->window), >=, 500);
  wait_for_current_result (f->window);
  r = sv_window_get_result (f->window);
  g_assert_cmpfloat (r->params.compactness, ==, last.compactness);
  g_assert_true (sv_slice_view_get_result (sv_window_get_slice_view (f->window, SV_AXIS_XY)) == r);

  /* The labels on screen are those of the last parameters, computed anew. */
  p = last;
  backend = sv_backend_new ("cpu", &error);
  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, sv_window_get_volume (f->window), NULL, &error));
  control.stop_after_iteration = -1;
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  expected = g_new (gint32, NZ * NY * NX);
  g_assert_true (sv_backend_get_labels (backend, expected, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (sv_job_result_get_labels (r, NULL)->data, sizeof (gint32) * NZ * NY * NX,
                   expected, sizeof (gint32) * NZ * NY * NX);
}

static void
test_bad_file (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "broken.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  const SvVolume *before = sv_window_get_volume (f->window);
  SvJobResult *result = sv_window_get_result (f->window);
  GtkWindow *dialog;

  g_assert_true (g_file_set_contents (path, "II*\0garbage that is no TIFF", 28, NULL));
  open_and_wait (f->window, file);
  dialog = sv_window_get_error_dialog (f->window);
  g_assert_nonnull (dialog);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
  g_assert_true (sv_window_get_volume (f->window) == before);
  g_assert_true (sv_window_get_result (f->window) == result);
  gtk_window_destroy (dialog);
  g_assert_null (sv_window_get_error_dialog (f->window));
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_hover_status (Fixture *f, gconstpointer data)
{
  SvSliceView *view = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  SvJobResult *r = sv_window_get_result (f->window);
  const SvVolume *v = sv_window_get_volume (f->window);
  g_autofree char *expected = NULL;
  guint z = 5, y = 17, x = 40;
  gsize idx = ((gsize)z * NY + y) * NX + x;

  g_signal_emit_by_name (view, "hover", (int)z, (int)y, (int)x);
  expected = g_strdup_printf ("x %u  y %u  z %u  ·  I %.4g  ·  label %d", x, y, z, v->data[idx],
                              sv_job_result_get_labels (r, NULL)->data[idx]);
  g_assert_cmpstr (sv_window_get_hover_text (f->window), ==, expected);
  g_signal_emit_by_name (view, "hover", -1, -1, -1);
  g_assert_cmpstr (sv_window_get_hover_text (f->window), ==, "");
}

/* The filled overlay's colour of a label, as shaders/slice.frag computes it:
 * a hash of the label picks hue, saturation and value. */
static guint32
hash_label (guint32 x)
{
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

static void
label_colour (guint32 label, guint32 shuffle, float rgb[3])
{
  guint32 hh = hash_label (label ^ shuffle);
  float hue = (float)(hh & 0xffffu) / 65535.0f;
  float sat = 0.55f + 0.4f * (float)((hh >> 16) & 0xffu) / 255.0f;
  float val = 0.75f + 0.25f * (float)(hh >> 24) / 255.0f;
  static const float k[3] = { 1.0f, 2.0f / 3.0f, 1.0f / 3.0f };

  for (int c = 0; c < 3; c++)
    {
      float t = hue + k[c];
      float p = fabsf ((t - floorf (t)) * 6.0f - 3.0f);
      float q = CLAMP (p - 1.0f, 0.0f, 1.0f);
      rgb[c] = val * (1.0f + (q - 1.0f) * sat);
    }
}

static void
test_orthogonal_and_filled (Fixture *f, gconstpointer data)
{
  SvSliceView *xz = sv_window_get_slice_view (f->window, SV_AXIS_XZ);
  SvSliceView *yz = sv_window_get_slice_view (f->window, SV_AXIS_YZ);
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);

  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (xz)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.orthogonal", NULL));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (xz)));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (yz)));
  g_assert_cmpuint (sv_slice_view_get_n_slices (xz), ==, NY);
  g_assert_cmpuint (sv_slice_view_get_n_slices (yz), ==, NX);

  /* A click in XY moves the other views to the clicked voxel. */
  g_signal_emit_by_name (xy, "pick", 3, 20, 45);
  g_assert_cmpuint (sv_slice_view_get_slice (xy), ==, 3);
  g_assert_cmpuint (sv_slice_view_get_slice (xz), ==, 20);
  g_assert_cmpuint (sv_slice_view_get_slice (yz), ==, 45);
  g_assert_true (sv_slice_view_get_result (xz) == sv_window_get_result (f->window));

  /* Filled: inside a supervoxel each pixel is the bare slice blended with the
   * label's hashed colour at the fill opacity. */
  {
    SvJobResult *r = sv_window_get_result (f->window);
    guint slice = sv_slice_view_get_slice (xy);
    g_autoptr (GdkTexture) filled = NULL;
    g_autoptr (GdkTexture) bare = NULL;
    g_autoptr (GdkTexture) edges = NULL;
    g_autofree guint8 *a = NULL;
    g_autofree guint8 *b = NULL;
    g_autofree guint8 *e = NULL;
    gsize stride, n_inside = 0, n_match = 0, n_tinted = 0, n_modes_differ = 0;
    int w, h;
    SvDisplay d;

    sv_params_panel_set_overlay (panel, SV_OVERLAY_OFF);
    bare = capture_xy (f->window);
    sv_params_panel_set_overlay (panel, SV_OVERLAY_BOUNDARIES);
    edges = capture_xy (f->window);
    sv_params_panel_set_overlay (panel, SV_OVERLAY_FILLED);
    filled = capture_xy (f->window);
    sv_params_panel_get_display (panel, &d);
    g_assert_cmpfloat (d.fill_opacity, >, 0.1);
    w = gdk_texture_get_width (filled);
    h = gdk_texture_get_height (filled);
    g_assert_cmpint (w, ==, gdk_texture_get_width (bare));
    g_assert_cmpint (h, ==, gdk_texture_get_height (bare));
    a = texture_bytes (filled, &stride);
    b = texture_bytes (bare, &stride);
    e = texture_bytes (edges, &stride);

    for (int y = 1; y < h - 1; y++)
      for (int x = 1; x < w - 1; x++)
        {
          const guint8 *pa = a + (gsize)y * stride + (gsize)x * 4;
          const guint8 *pb = b + (gsize)y * stride + (gsize)x * 4;
          const guint8 *pe = e + (gsize)y * stride + (gsize)x * 4;
          guint v[3], n[3];
          gint32 label;
          gboolean interior = TRUE, close = TRUE;
          float rgb[3];

          n_modes_differ += memcmp (pa, pe, 3) != 0;
          if (!sv_slice_view_pixel_to_voxel (xy, x + 0.5, y + 0.5, v))
            continue;
          g_assert_cmpuint (v[0], ==, slice);
          label = sv_job_result_get_labels (r, NULL)->data[((gsize)slice * NY + v[1]) * NX + v[2]];
          /* Away from boundaries (darkened) and the crosshair through the
           * picked voxel (20, 45). */
          for (int k = 0; k < 4 && interior; k++)
            {
              static const int dx[4] = { 1, -1, 0, 0 }, dy[4] = { 0, 0, 1, -1 };
              interior = sv_slice_view_pixel_to_voxel (xy, x + dx[k] + 0.5, y + dy[k] + 0.5, n)
                         && sv_job_result_get_labels (r, NULL)
                                    ->data[((gsize)slice * NY + n[1]) * NX + n[2]]
                                == label;
            }
          /* The picked supervoxel is tinted as the selection, not filled. */
          if (!interior || ABS ((int)v[1] - 20) <= 1 || ABS ((int)v[2] - 45) <= 1
              || label == sv_job_result_label_at (r, 3, 20, 45))
            continue;
          label_colour ((guint32)label, d.shuffle, rgb);
          for (int c = 0; c < 3; c++)
            {
              /* gdk_texture_download gives B, G, R, A bytes. */
              double want = pb[2 - c] * (1.0 - d.fill_opacity) + rgb[c] * 255.0 * d.fill_opacity;
              close = close && fabs (pa[2 - c] - want) <= 3.0;
            }
          n_inside++;
          n_match += close;
          n_tinted += memcmp (pa, pb, 3) != 0;
        }
    g_test_message ("%" G_GSIZE_FORMAT " interior pixels, %" G_GSIZE_FORMAT
                    " with the label's colour, %" G_GSIZE_FORMAT " tinted; %" G_GSIZE_FORMAT
                    " differ from boundaries mode",
                    n_inside, n_match, n_tinted, n_modes_differ);
    g_assert_cmpuint (n_inside, >, 1000);
    g_assert_cmpfloat ((double)n_match / n_inside, >, 0.98);
    g_assert_cmpfloat ((double)n_tinted / n_inside, >, 0.9);
    g_assert_cmpuint (n_modes_differ, >, n_inside / 2);
  }
  save_window_png (f->window, "gui-orthogonal-filled.png");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.orthogonal", NULL));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (xz)));
}

static void
test_teach_mode (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvJobResult *r;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-step", NULL));
  wait_for_current_result (f->window);
  r = sv_window_get_result (f->window);
  g_assert_cmpint (r->stop_after_iteration, ==, 1);
  g_assert_cmpuint (r->stats.iterations, ==, 1);
  g_assert_cmpuint (r->n_centres, >, 0);
  g_assert_cmpuint (r->n_centres, ==, r->stats.n_clusters);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-step", NULL));
  wait_for_current_result (f->window);
  r = sv_window_get_result (f->window);
  g_assert_cmpint (r->stop_after_iteration, ==, 2);
  g_assert_cmpuint (r->stats.iterations, ==, 2);
  /* Without connectivity, labels are cluster index + start_label. */
  for (gsize i = 0; i < (gsize)NZ * NY * NX; i++)
    g_assert_cmpint (sv_job_result_get_labels (r, NULL)->data[i] - r->params.start_label, <,
                     (gint64)r->n_centres);

  g_signal_emit_by_name (sv_window_get_slice_view (f->window, SV_AXIS_XY), "hover", NZ / 2, NY / 2,
                         NX / 2);
  g_object_unref (capture_xy (f->window));
  save_window_png (f->window, "gui-teach.png");
  sv_params_panel_set_teaching (panel, FALSE);
  wait_for_current_result (f->window);
  g_assert_cmpint (sv_window_get_result (f->window)->stop_after_iteration, ==, -1);
}

static void
test_export_and_presets (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *tif = g_build_filename (dir, "labels.tif", NULL);
  g_autofree char *json = g_build_filename (dir, "labels.json", NULL);
  g_autofree char *preset = g_build_filename (dir, "p.svpreset", NULL);
  g_autofree char *json_text = NULL;
  g_autofree char *cmd = NULL;
  g_autoptr (SvLabels) back = NULL;
  g_autoptr (GError) error = NULL;
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvJobResult *r = sv_window_get_result (f->window);
  SvSlicParams p, q;

  g_assert_true (sv_window_export_labels (f->window, tif, &error));
  g_assert_no_error (error);
  back = sv_tiff_read_labels (tif, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (back->data, sizeof (gint32) * NZ * NY * NX,
                   sv_job_result_get_labels (r, NULL)->data, sizeof (gint32) * NZ * NY * NX);
  g_assert_true (g_file_get_contents (json, &json_text, NULL, NULL));
  g_assert_nonnull (strstr (json_text, "\"n_segments\""));
  g_assert_nonnull (strstr (json_text, "\"backend\":\"cpu\""));

  cmd = sv_window_build_command (f->window);
  g_test_message ("command: %s", cmd);
  g_assert_true (g_str_has_prefix (cmd, "supervox-cli synth -o sample.tif --shape 32,64,64"));
  g_assert_nonnull (strstr (cmd, " && supervox-cli slic sample.tif -o sample-labels.tif"));
  {
    /* The backend that made the labels on screen, not the panel's choice. */
    g_autofree char *backend = g_strdup_printf ("--backend %s", r->backend_name);
    g_assert_true (g_str_has_suffix (cmd, backend));
  }

  sv_params_panel_get_params (panel, &p);
  g_assert_true (sv_window_save_preset (f->window, preset, &error));
  g_assert_no_error (error);
  sv_params_panel_set_compactness (panel, 3.0);
  wait_for_current_result (f->window);
  g_assert_true (sv_window_load_preset (f->window, preset, &error));
  g_assert_no_error (error);
  sv_params_panel_get_params (panel, &q);
  g_assert_cmpfloat (q.compactness, ==, p.compactness);
  g_assert_cmpint (q.n_segments, ==, p.n_segments);
  wait_for_current_result (f->window);
  g_assert_cmpfloat (sv_window_get_result (f->window)->params.compactness, ==, p.compactness);

  g_unlink (tif);
  g_unlink (json);
  g_unlink (preset);
  g_rmdir (dir);
}

/* Where the slice lies in the view, found by probing the view's own
 * pixel→voxel mapping every quarter pixel along the middle row and column:
 * the first and last view coordinate over the slice and the voxels there. */
static void
visible_extent (SvSliceView *view, gboolean across, double *first, double *last, guint *v_first,
                guint *v_last)
{
  GtkWidget *area = GTK_WIDGET (sv_slice_view_get_gl_area (view));
  double W = gtk_widget_get_width (area), H = gtk_widget_get_height (area);
  double end = across ? W : H;

  *first = *last = -1.0;
  for (double t = 0.125; t < end; t += 0.25)
    {
      guint zyx[3];
      gboolean in = across ? sv_slice_view_pixel_to_voxel (view, t, H / 2.0, zyx)
                           : sv_slice_view_pixel_to_voxel (view, W / 2.0, t, zyx);
      if (!in)
        continue;
      if (*first < 0)
        {
          *first = t;
          *v_first = across ? zyx[2] : zyx[1];
        }
      *last = t;
      *v_last = across ? zyx[2] : zyx[1];
    }
}

/* What fit means: every voxel of the slice is inside the view (its corners
 * map to the slice's corner voxels) and the slice spans the view along its
 * limiting axis within a pixel. */
static gboolean
slice_fits (SvSliceView *view)
{
  GtkWidget *area = GTK_WIDGET (sv_slice_view_get_gl_area (view));
  double W = gtk_widget_get_width (area), H = gtk_widget_get_height (area);
  double x0, x1, y0, y1;
  guint vx0 = G_MAXUINT, vx1 = G_MAXUINT, vy0 = G_MAXUINT, vy1 = G_MAXUINT, c[3];
  gboolean whole, fills;

  visible_extent (view, TRUE, &x0, &x1, &vx0, &vx1);
  visible_extent (view, FALSE, &y0, &y1, &vy0, &vy1);
  g_assert_cmpfloat (x0, >=, 0.0);
  g_assert_cmpfloat (y0, >=, 0.0);
  g_test_message ("view %g×%g: slice over x [%g, %g] (voxels %u..%u), y [%g, %g] (voxels %u..%u)",
                  W, H, x0, x1, vx0, vx1, y0, y1, vy0, vy1);
  whole = vx0 == 0 && vx1 == NX - 1 && vy0 == 0 && vy1 == NY - 1;
  if (whole)
    {
      /* The corners themselves, not only the middle row and column. */
      g_assert_true (sv_slice_view_pixel_to_voxel (view, x0, y0, c));
      g_assert_cmpuint (c[1], ==, 0);
      g_assert_cmpuint (c[2], ==, 0);
      g_assert_true (sv_slice_view_pixel_to_voxel (view, x1, y1, c));
      g_assert_cmpuint (c[1], ==, NY - 1);
      g_assert_cmpuint (c[2], ==, NX - 1);
    }
  fills = (x0 <= 1.0 && x1 >= W - 1.0) || (y0 <= 1.0 && y1 >= H - 1.0);
  return whole && fills;
}

static void
test_zoom_and_contrast (Fixture *f, gconstpointer data)
{
  SvSliceView *view = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  const SvVolume *v = sv_window_get_volume (f->window);
  guint a[3], b[3];
  double px = 200.5, py = 150.5;
  gsize n = sv_volume_n_voxels (v), below = 0, above = 0;
  SvDisplay d;

  /* Zoom to the cursor keeps the voxel under it. */
  g_assert_true (sv_slice_view_pixel_to_voxel (view, px, py, a));
  sv_slice_view_zoom_at (view, 3.0, px, py);
  g_assert_true (sv_slice_view_pixel_to_voxel (view, px, py, b));
  g_assert_cmpmem (a, sizeof a, b, sizeof b);

  /* 1:1 puts one voxel on one pixel. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.zoom-one", NULL));
  px = floor (gtk_widget_get_width (GTK_WIDGET (sv_slice_view_get_gl_area (view))) / 2.0) + 0.5;
  py = floor (gtk_widget_get_height (GTK_WIDGET (sv_slice_view_get_gl_area (view))) / 2.0) + 0.5;
  g_assert_true (sv_slice_view_pixel_to_voxel (view, px, py, a));
  g_assert_true (sv_slice_view_pixel_to_voxel (view, px + 1.0, py + 1.0, b));
  g_assert_cmpuint (b[2], ==, a[2] + 1);
  g_assert_cmpuint (b[1], ==, a[1] + 1);

  /* 1:1 shows the 64×64 slice smaller than the view: it does not fill it. */
  g_assert_false (slice_fits (view));

  /* Fit shows the whole slice and fills the view along one axis. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.zoom-fit", NULL));
  g_assert_true (slice_fits (view));

  /* Zoomed in from there, it no longer fits; fit again brings it back. */
  sv_slice_view_zoom_at (view, 1.25, px, py);
  g_assert_false (slice_fits (view));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.zoom-fit", NULL));
  g_assert_true (slice_fits (view));

  /* Auto contrast saturates about 0.35 % of the voxels, half on each side. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.auto-contrast", NULL));
  sv_params_panel_get_display (panel, &d);
  for (gsize i = 0; i < n; i++)
    {
      below += v->data[i] < d.low;
      above += v->data[i] > d.high;
    }
  g_test_message ("window [%g, %g]: %" G_GSIZE_FORMAT " below, %" G_GSIZE_FORMAT
                  " above of %" G_GSIZE_FORMAT,
                  d.low, d.high, below, above, n);
  g_assert_cmpfloat (d.low, <, d.high);
  g_assert_cmpuint (below, <=, (gsize)(n * 0.00175) + 1);
  g_assert_cmpuint (above, <=, (gsize)(n * 0.00175) + 1);
  g_assert_cmpuint (below, >, (gsize)(n * 0.0005));
  g_assert_cmpuint (above, >, (gsize)(n * 0.0005));
}

static gboolean
played_to_end (gpointer data)
{
  SvWindow *w = data;
  SvJobResult *r = sv_window_get_result (w);
  return r && r->stop_after_iteration == 3 && result_is_current (w);
}

static void
test_teach_play (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvSlicParams p;
  SvJobResult *r;

  sv_params_panel_get_params (panel, &p);
  p.max_num_iter = 3;
  sv_params_panel_set_params (panel, &p);
  wait_for_current_result (f->window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-play", NULL));
  wait_until (played_to_end, f->window, "play to reach the last iteration");
  r = sv_window_get_result (f->window);
  g_assert_cmpuint (r->stats.iterations, ==, 3);
  /* Playing went through every iteration on its way. */
  g_assert_cmpuint (sv_window_get_generation (f->window), >=, 5);
}

/* Pixels along a line through the view's centre that land on the same voxel
 * as the centre pixel: the on-screen size of a voxel. */
static guint
voxel_run (SvSliceView *view, gboolean horizontal)
{
  GtkWidget *area = GTK_WIDGET (sv_slice_view_get_gl_area (view));
  double cx = floor (gtk_widget_get_width (area) / 2.0) + 0.5;
  double cy = floor (gtk_widget_get_height (area) / 2.0) + 0.5;
  guint c[3], q[3], n = 0;

  g_assert_true (sv_slice_view_pixel_to_voxel (view, cx, cy, c));
  for (int d = -200; d <= 200; d++)
    if (sv_slice_view_pixel_to_voxel (view, horizontal ? cx + d : cx, horizontal ? cy : cy + d, q)
        && memcmp (q, c, sizeof q) == 0)
      n++;
  return n;
}

static void
test_anisotropic_aspect (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  SvVolume *v = sv_volume_new (8, 16, 32, 1, &error);
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  SvSliceView *xz = sv_window_get_slice_view (f->window, SV_AXIS_XZ);
  guint wx, hy, wx2, hz;

  g_assert_no_error (error);
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = (float)((i * 7919) % 101) / 100.0f;
  v->spacing[0] = 4.0;
  v->spacing[1] = 1.0;
  v->spacing[2] = 0.5;
  sv_window_set_volume (f->window, v, "anisotropic");
  wait_until (has_result, f->window, "the anisotropic volume's labels");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.orthogonal", NULL));
  g_object_unref (capture_xy (f->window));

  /* A voxel is twice as tall as wide in XY (y 1 vs x 0.5), eight times in
   * XZ (z 4 vs x 0.5); a pixel of rounding either way. */
  wx = voxel_run (xy, TRUE);
  hy = voxel_run (xy, FALSE);
  wx2 = voxel_run (xz, TRUE);
  hz = voxel_run (xz, FALSE);
  g_test_message ("XY voxel %u×%u px, XZ voxel %u×%u px", wx, hy, wx2, hz);
  g_assert_cmpuint (wx, >=, 4);
  g_assert_cmpfloat (fabs ((double)hy / wx - 2.0), <, 2.0 / wx + 0.01);
  g_assert_cmpfloat (fabs ((double)hz / wx2 - 8.0), <, 8.0 / wx2 + 0.01);
  g_assert_cmpuint (sv_job_result_get_labels (sv_window_get_result (f->window), NULL)->nx, ==, 32);
  /* SLIC gets the spacing relative to the finest axis (x, 0.5). */
  g_assert_cmpfloat (sv_window_get_result (f->window)->params.spacing[0], ==, 8.0);
  g_assert_cmpfloat (sv_window_get_result (f->window)->params.spacing[2], ==, 1.0);
}

/* Runs the window's "Copy as command" line with /bin/sh in a fresh folder,
 * with the built supervox-cli first on PATH, and checks that the labels it
 * writes (the export's default name in that folder) equal the labels on
 * screen, bit for bit. */
static void
assert_command_reproduces_labels (SvWindow *w)
{
  const char *build = g_getenv ("SV_BUILD_DIR");
  g_autofree char *cli_dir = NULL;
  g_autofree char *cli = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-cmd-XXXXXX", NULL);
  g_autofree char *labels_path = NULL;
  g_autofree char *cmd = sv_window_build_command (w);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *path_env = NULL;
  g_auto (GStrv) envp = g_get_environ ();
  g_autoptr (SvLabels) back = NULL;
  g_autoptr (GError) error = NULL;
  const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
  SvJobResult *r = sv_window_get_result (w);
  const SvVolume *v = sv_window_get_volume (w);
  gsize n = sv_volume_n_voxels (v), n_diff = 0;
  int status = -1;

  g_assert_nonnull (build);
  g_assert_nonnull (r);
  cli_dir = g_build_filename (build, "app", "cli", NULL);
  cli = g_build_filename (cli_dir, "supervox-cli", NULL);
  g_assert_true (g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE));
  path_env = g_strconcat (cli_dir, ":", g_environ_getenv (envp, "PATH"), NULL);
  envp = g_environ_setenv (envp, "PATH", path_env, TRUE);
  g_test_message ("command: %s", cmd);
  g_assert_true (g_str_has_prefix (cmd, "supervox-cli "));

  g_assert_true (g_spawn_sync (dir, (char **)argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, &error))
    g_error ("the command failed: %s\n%s%s", error->message, out, err);

  {
    g_autofree char *name = sv_window_default_export_name (w);
    labels_path = g_build_filename (dir, name, NULL);
  }
  back = sv_tiff_read_labels (labels_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->nz, ==, v->nz);
  g_assert_cmpuint (back->ny, ==, v->ny);
  g_assert_cmpuint (back->nx, ==, v->nx);
  for (gsize i = 0; i < n; i++)
    n_diff += back->data[i] != sv_job_result_get_labels (r, NULL)->data[i];
  g_test_message ("%" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " labels differ", n_diff, n);
  g_assert_cmpuint (n_diff, ==, 0);

  /* Leave nothing behind: the command may also write sample.tif and a sidecar. */
  sv_test_remove_tree (dir);
}

/* Parameters off every default the panel has; spacing NULL keeps the
 * panel's (the file's). */
static void
set_unusual_params (SvWindow *w, const double spacing[3])
{
  SvParamsPanel *panel = sv_window_get_params_panel (w);
  SvSlicParams p;

  sv_params_panel_get_params (panel, &p);
  p.compactness = 0.37;
  p.n_segments = 37;
  p.sigma[0] = p.sigma[1] = p.sigma[2] = 0.7;
  if (spacing)
    memcpy (p.spacing, spacing, sizeof p.spacing);
  p.slic_zero = TRUE;
  p.start_label = 0;
  p.enforce_connectivity = TRUE;
  p.min_size_factor = 0.3;
  p.max_size_factor = 2.5;
  p.max_num_iter = 7;
  sv_params_panel_set_params (panel, &p);
  wait_for_current_result (w);
}

static void
test_command_reproduces_sample (Fixture *f, gconstpointer data)
{
  static const double spacing[3] = { 1.7, 0.9, 1.1 };
  SvJobResult *r;

  set_unusual_params (f->window, spacing);
  r = sv_window_get_result (f->window);
  g_assert_true (r->params.slic_zero);
  g_assert_cmpint (r->params.start_label, ==, 0);
  {
    g_autofree char *cmd = sv_window_build_command (f->window);
    g_assert_true (g_str_has_prefix (cmd, "supervox-cli synth -o sample.tif "));
    g_assert_nonnull (strstr (cmd, " && supervox-cli slic sample.tif "));
  }
  assert_command_reproduces_labels (f->window);

  /* Teaching mode: the labels after two iterations, no connectivity. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-step", NULL));
  wait_for_current_result (f->window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-step", NULL));
  wait_for_current_result (f->window);
  g_assert_cmpint (sv_window_get_result (f->window)->stop_after_iteration, ==, 2);
  assert_command_reproduces_labels (f->window);
}

static void
test_command_reproduces_tiff (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "small volume.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = NULL;
  SvSynthParams sp;
  /* Spacing with more digits than any spin button shows, from the file. */
  static const double spacing[3] = { 2.0 / 3.0, 0.123456789, 1.0 / 7.0 };
  SvJobResult *r;
  SvSlicParams p;

  sv_synth_params_init_defaults (&sp);
  sp.nz = 20;
  sp.ny = 36;
  sp.nx = 44;
  sp.n_cells = 9;
  sp.nucleus_radius = 2.5;
  sp.seed = 7;
  v = sv_synth_cells (&sp, NULL, &error);
  g_assert_no_error (error);
  memcpy (v->spacing, spacing, sizeof v->spacing);
  v->unit = g_strdup ("micron");
  g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);
  open_and_wait (f->window, file);
  wait_until (has_result, f->window, "the TIFF's labels");
  sv_params_panel_get_params (sv_window_get_params_panel (f->window), &p);
  g_test_message ("spacing from the file: %.17g %.17g %.17g", p.spacing[0], p.spacing[1],
                  p.spacing[2]);
  /* Relative to the finest axis (y here) by default, the unit beside it. */
  g_assert_true (sv_params_panel_get_spacing_relative (sv_window_get_params_panel (f->window)));
  g_assert_cmpfloat (p.spacing[1], ==, 1.0);
  /* (The file holds y and x as float resolutions: not quite 5.4.) */
  g_assert_cmpfloat (fabs (p.spacing[0] - 5.4), <, 1e-4);
  g_assert_cmpfloat (fabs (p.spacing[2] - 1.15714), <, 1e-4);
  g_test_message ("unit line: %s",
                  sv_params_panel_get_spacing_unit_text (sv_window_get_params_panel (f->window)));
  g_assert_nonnull (
      strstr (sv_params_panel_get_spacing_unit_text (sv_window_get_params_panel (f->window)),
              "finest axis, 0.123457 micron"));
  /* The file's own values one click away, exactly. */
  sv_params_panel_set_spacing_relative (sv_window_get_params_panel (f->window), FALSE);
  sv_params_panel_get_params (sv_window_get_params_panel (f->window), &p);
  g_assert_cmpfloat (fabs (p.spacing[0] - spacing[0]), <, 1e-6);
  g_assert_cmpfloat (fabs (p.spacing[1] - spacing[1]), <, 1e-6);
  g_assert_nonnull (strstr (
      sv_params_panel_get_spacing_unit_text (sv_window_get_params_panel (f->window)), "in micron"));
  sv_params_panel_set_spacing_relative (sv_window_get_params_panel (f->window), TRUE);
  sv_params_panel_get_params (sv_window_get_params_panel (f->window), &p);
  g_assert_cmpfloat (p.spacing[1], ==, 1.0);

  /* A 16-bit file's voxels read in its own values. */
  {
    g_autofree char *expected = NULL;
    const SvVolume *shown = sv_window_get_volume (f->window);
    gsize idx = ((gsize)3 * 36 + 5) * 44 + 7;
    g_signal_emit_by_name (sv_window_get_slice_view (f->window, SV_AXIS_XY), "hover", 3, 5, 7);
    expected = g_strdup_printf ("I %.0f  ·", round (shown->data[idx] * 65535.0));
    g_test_message ("hover: %s", sv_window_get_hover_text (f->window));
    g_assert_nonnull (strstr (sv_window_get_hover_text (f->window), expected));
  }
  /* So do the black and white points. */
  {
    GtkWidget *black = find_by_tooltip (GTK_WIDGET (sv_window_get_params_panel (f->window)),
                                        GTK_TYPE_SCALE, "black point");
    g_autofree char *expected = NULL;
    g_assert_nonnull (black);
    expected = g_strdup_printf ("%.0f", round (gtk_range_get_value (GTK_RANGE (black)) * 65535.0));
    g_test_message ("black point: %s",
                    pango_layout_get_text (gtk_scale_get_layout (GTK_SCALE (black))));
    g_assert_cmpstr (pango_layout_get_text (gtk_scale_get_layout (GTK_SCALE (black))), ==,
                     expected);
  }
  set_unusual_params (f->window, NULL);
  r = sv_window_get_result (f->window);
  g_assert_cmpuint (sv_job_result_get_labels (r, NULL)->nx, ==, 44);
  g_assert_cmpint (r->params.start_label, ==, 0);
  g_assert_cmpint (r->params.n_segments, ==, 37);
  assert_command_reproduces_labels (f->window);
  g_unlink (path);

  /* Photos: the GUI reads them through GdkPixbuf and so must the copied
   * command, to the same floats (grey, then colour with an alpha to drop). */
  for (int colour = 0; colour < 2; colour++)
    {
      g_autofree char *png = g_build_filename (dir, colour ? "a photo.png" : "grey.png", NULL);
      g_autoptr (GFile) png_file = g_file_new_for_path (png);
      g_autoptr (GdkPixbuf) pb = gdk_pixbuf_new (GDK_COLORSPACE_RGB, colour, 8, 57, 43);
      int stride = gdk_pixbuf_get_rowstride (pb), nch = gdk_pixbuf_get_n_channels (pb);
      guint8 *px = gdk_pixbuf_get_pixels (pb);
      const SvVolume *shown;

      for (int y = 0; y < 43; y++)
        for (int x = 0; x < 57; x++)
          {
            guint8 *q = px + (gsize)y * stride + (gsize)x * nch;
            double g = 120 + 90 * sin (0.29 * x) * cos (0.21 * y) + 30 * ((x / 8 + y / 6) % 2);
            q[0] = (guint8)CLAMP (g, 0, 255);
            q[1] = colour ? (guint8)((x * 5 + y * 3) % 256) : q[0];
            q[2] = colour ? (guint8)(250 - (x * 2 + y * 4) % 200) : q[0];
            if (colour)
              q[3] = (guint8)((x * 31 + y * 17) % 256);
          }
      g_assert_true (gdk_pixbuf_save (pb, png, "png", &error, NULL));
      g_assert_no_error (error);
      open_and_wait (f->window, png_file);
      shown = sv_window_get_volume (f->window);
      g_assert_cmpuint (shown->nz, ==, 1);
      g_assert_cmpuint (shown->nx, ==, 57);
      g_assert_cmpuint (shown->nc, ==, colour ? 3 : 1);
      wait_until (has_result, f->window, "the photo's labels");
      set_unusual_params (f->window, NULL);
      r = sv_window_get_result (f->window);
      g_assert_cmpuint (sv_job_result_get_labels (r, NULL)->nx, ==, 57);
      g_assert_cmpint (r->params.n_segments, ==, 37);
      {
        g_autofree char *cmd = sv_window_build_command (f->window);
        g_assert_nonnull (strstr (cmd, colour ? "'" : "grey.png -o grey-labels.tif"));
      }
      assert_command_reproduces_labels (f->window);
      g_unlink (png);
    }
  g_rmdir (dir);
}

/* A 0/1 mask TIFF: a ball in the middle of the volume. */
static void
write_ball_mask (const char *path, guint nz, guint ny, guint nx)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) m = sv_labels_new (nz, ny, nx, &error);

  g_assert_no_error (error);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        {
          double dz = (z - nz / 2.0) / (nz / 2.0), dy = (y - ny / 2.0) / (ny / 2.0),
                 dx = (x - nx / 2.0) / (nx / 2.0);
          m->data[((gsize)z * ny + y) * nx + x] = dz * dz + dy * dy + dx * dx < 0.8;
        }
  g_assert_true (sv_tiff_write_labels (path, m, &error));
  g_assert_no_error (error);
}

static void
test_mask (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *vol_path = g_build_filename (dir, "vol.tif", NULL);
  g_autofree char *mask_path = g_build_filename (dir, "mask.tif", NULL);
  g_autofree char *bad_path = g_build_filename (dir, "wrong shape.tif", NULL);
  g_autoptr (GFile) vol_file = g_file_new_for_path (vol_path);
  g_autoptr (GFile) mask_file = g_file_new_for_path (mask_path);
  g_autoptr (GFile) bad_file = g_file_new_for_path (bad_path);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = NULL;
  g_autofree guint8 *mask = NULL;
  g_autofree char *cmd = NULL;
  SvSynthParams sp;
  SvJobResult *r, *before;
  guint mz, my, mx;
  gsize n, n_in = 0;
  GtkWindow *dialog;

  sv_synth_params_init_defaults (&sp);
  sp.nz = 16;
  sp.ny = 40;
  sp.nx = 36;
  sp.n_cells = 8;
  sp.nucleus_radius = 2.0;
  v = sv_synth_cells (&sp, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sv_tiff_write_volume (vol_path, v, SV_SAMPLE_F32, &error));
  g_assert_no_error (error);
  write_ball_mask (mask_path, 16, 40, 36);
  write_ball_mask (bad_path, 16, 36, 40);

  open_and_wait (f->window, vol_file);
  wait_until (has_result, f->window, "the volume's labels");

  /* A mask of another shape: a dialog, and nothing changes. */
  before = sv_window_get_result (f->window);
  g_assert_false (sv_window_open_mask (f->window, bad_file));
  dialog = sv_window_get_error_dialog (f->window);
  g_assert_nonnull (dialog);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
  g_assert_true (sv_window_get_result (f->window) == before);
  cmd = sv_window_build_command (f->window);
  g_assert_null (strstr (cmd, "--mask"));
  g_clear_pointer (&cmd, g_free);
  gtk_window_destroy (dialog);

  /* The right mask: voxels outside get start_label − 1, inside a label ≥ start_label. */
  g_assert_true (sv_window_open_mask (f->window, mask_file));
  g_assert_null (sv_window_get_error_dialog (f->window));
  wait_until (has_result, f->window, "the masked labels");
  r = sv_window_get_result (f->window);
  mask = sv_tiff_read_mask (mask_path, &mz, &my, &mx, &error);
  g_assert_no_error (error);
  n = sv_volume_n_voxels (v);
  for (gsize i = 0; i < n; i++)
    {
      if (mask[i])
        g_assert_cmpint (sv_job_result_get_labels (r, NULL)->data[i], >=, r->params.start_label);
      else
        g_assert_cmpint (sv_job_result_get_labels (r, NULL)->data[i], ==,
                         r->params.start_label - 1);
      n_in += mask[i];
    }
  g_assert_cmpuint (n_in, >, n / 4);
  g_assert_cmpuint (n_in, <, n);

  cmd = sv_window_build_command (f->window);
  g_assert_nonnull (strstr (cmd, " --mask "));
  g_assert_nonnull (strstr (cmd, mask_path));
  set_unusual_params (f->window, NULL);
  assert_command_reproduces_labels (f->window);

  /* Another volume drops the mask. */
  open_and_wait (f->window, vol_file);
  wait_until (has_result, f->window, "the unmasked labels");
  g_clear_pointer (&cmd, g_free);
  cmd = sv_window_build_command (f->window);
  g_assert_null (strstr (cmd, "--mask"));

  g_unlink (vol_path);
  g_unlink (mask_path);
  g_unlink (bad_path);
  g_rmdir (dir);
}

static void
test_shortcuts_window (void)
{
  g_autoptr (GtkBuilder) builder
      = gtk_builder_new_from_resource ("/org/supervox/Supervox/gtk/help-overlay.ui");
  GObject *overlay = gtk_builder_get_object (builder, "help_overlay");

  g_assert_true (GTK_IS_SHORTCUTS_WINDOW (overlay));
  gtk_window_destroy (GTK_WINDOW (overlay));
}

static gboolean
screenshot_written (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static void
test_screenshot (Fixture *f, gconstpointer data)
{
  const char *log_dir = g_getenv ("SV_LOG_DIR");
  g_autofree char *path
      = g_build_filename (log_dir ? log_dir : ".", "gui-screenshot-single.png", NULL);
  GtkWidget *area = sv_window_get_views_area (f->window);
  GtkWidget *gl = GTK_WIDGET (sv_slice_view_get_gl_area (sv_window_get_slice_view (f->window,
                                                                                   SV_AXIS_XY)));
  int scale = gtk_widget_get_scale_factor (area);
  g_autoptr (GdkTexture) xy = NULL;
  g_autoptr (GdkTexture) shot = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) colours = g_hash_table_new (NULL, NULL);
  g_autofree guint8 *a = NULL;
  g_autofree guint8 *b = NULL;
  graphene_rect_t box;
  gsize stride_a, stride_b, n = 0, n_same = 0;
  int w, h, ox, oy;

  /* Make sure the last result is drawn before the snapshot. */
  xy = capture_xy (f->window);
  save_window_png (f->window, "gui-window.png");

  /* The window's own screenshot (the single XY view here): the views' area
   * at device size, with the slice as GL drew it where the view is. */
  g_unlink (path);
  sv_window_save_screenshot (f->window, path);
  wait_until (screenshot_written, path, "the screenshot");
  shot = gdk_texture_new_from_filename (path, &error);
  g_assert_no_error (error);
  w = gdk_texture_get_width (shot);
  h = gdk_texture_get_height (shot);
  g_test_message ("screenshot %d×%d, views' area %d×%d", w, h, gtk_widget_get_width (area),
                  gtk_widget_get_height (area));
  g_assert_cmpint (w, ==, gtk_widget_get_width (area) * scale);
  g_assert_cmpint (h, ==, gtk_widget_get_height (area) * scale);

  g_assert_true (gtk_widget_compute_bounds (gl, area, &box));
  ox = (int)lround (box.origin.x * scale);
  oy = (int)lround (box.origin.y * scale);
  g_assert_cmpint (ox + gdk_texture_get_width (xy), <=, w);
  g_assert_cmpint (oy + gdk_texture_get_height (xy), <=, h);
  a = texture_bytes (xy, &stride_a);
  b = texture_bytes (shot, &stride_b);
  for (int y = 0; y < gdk_texture_get_height (xy); y++)
    for (int x = 0; x < gdk_texture_get_width (xy); x++)
      {
        const guint8 *pa = a + (gsize)y * stride_a + (gsize)x * 4;
        const guint8 *pb = b + (gsize)(y + oy) * stride_b + (gsize)(x + ox) * 4;
        gboolean same = TRUE;

        for (int c = 0; c < 3; c++)
          same = same && ABS ((int)pa[c] - (int)pb[c]) <= 2;
        n_same += same;
        n++;
        g_hash_table_add (colours, GUINT_TO_POINTER ((guint)pb[0] << 16 | (guint)pb[1] << 8 | pb[2]));
      }
  g_test_message ("%" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " view pixels as drawn, %u colours",
                  n_same, n, g_hash_table_size (colours));
  g_assert_cmpuint (g_hash_table_size (colours), >, 50);
  g_assert_cmpfloat ((double)n_same / n, >, 0.95);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/window/sample-shows-boundaries", Fixture, NULL, fixture_setup,
              test_sample_overlay, fixture_teardown);
  g_test_add ("/gui/params/compactness-restarts-job", Fixture, NULL, fixture_setup,
              test_compactness_restarts_job, fixture_teardown);
  g_test_add ("/gui/params/rapid-changes-end-with-last", Fixture, NULL, fixture_setup,
              test_rapid_changes, fixture_teardown);
  g_test_add ("/gui/window/bad-file-keeps-volume", Fixture, NULL, fixture_setup, test_bad_file,
              fixture_teardown);
  g_test_add ("/gui/window/screenshot", Fixture, NULL, fixture_setup, test_screenshot,
              fixture_teardown);
  g_test_add ("/gui/window/hover-shows-voxel-and-label", Fixture, NULL, fixture_setup,
              test_hover_status, fixture_teardown);
  g_test_add ("/gui/window/orthogonal-views-and-filled", Fixture, NULL, fixture_setup,
              test_orthogonal_and_filled, fixture_teardown);
  g_test_add ("/gui/teach/step-through-iterations", Fixture, NULL, fixture_setup, test_teach_mode,
              fixture_teardown);
  g_test_add ("/gui/keep/export-command-presets", Fixture, NULL, fixture_setup,
              test_export_and_presets, fixture_teardown);
  g_test_add ("/gui/view/zoom-fit-one-and-auto-contrast", Fixture, NULL, fixture_setup,
              test_zoom_and_contrast, fixture_teardown);
  g_test_add ("/gui/teach/play-to-the-end", Fixture, NULL, fixture_setup, test_teach_play,
              fixture_teardown);
  g_test_add ("/gui/view/anisotropic-aspect", Fixture, NULL, fixture_setup, test_anisotropic_aspect,
              fixture_teardown);
  g_test_add ("/gui/window/copy-as-command-reproduces-labels", Fixture, NULL, fixture_setup,
              test_command_reproduces_tiff, fixture_teardown);
  g_test_add ("/gui/window/copy-as-command-reproduces-sample", Fixture, NULL, fixture_setup,
              test_command_reproduces_sample, fixture_teardown);
  g_test_add ("/gui/window/mask-restricts-labels-and-command", Fixture, NULL, fixture_setup,
              test_mask, fixture_teardown);
  g_test_add_func ("/gui/keep/shortcuts-window", test_shortcuts_window);
  return g_test_run ();
}

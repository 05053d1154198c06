/* Tests of the window's measures under Xvfb, each against numbers the
 * test works out itself: the teaching convergence plot against runs
 * stopped after each iteration, and the scale bar's length and unit (and
 * a picked supervoxel's volume) in the file's unit. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-util.h"
#include "supervox/sv-backend.h"
#include "supervox/sv-io.h"
#include "sv-test-files.h"

/* ---- convergence ---- */

static gboolean
convergence_shown (gpointer data)
{
  SvQualityPanel *panel = sv_window_get_quality_panel (data);
  return sv_window_is_settled (data) && sv_quality_panel_get_convergence (panel) != NULL;
}

static void
test_convergence_follows_steps (Fixture *f, gconstpointer data)
{
  SvQualityPanel *panel = sv_window_get_quality_panel (f->window);
  g_autoptr (GError) error = NULL;
  SvConvergence *shown;
  SvJobResult *r;

  g_assert_null (sv_quality_panel_get_convergence (panel));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-step", NULL));
  wait_for_current_result (f->window);
  wait_until (convergence_shown, f->window, "the convergence plot");
  r = sv_window_get_result (f->window);
  g_assert_cmpint (r->stop_after_iteration, ==, 1);
  g_assert_cmpint (sv_quality_panel_get_convergence_step (panel), ==, 1);

  /* The numbers counted here, from runs stopped after 0, 1, … iterations
   * on the CPU: the labels that differ from the run one shorter, and how
   * far its live centres moved. */
  shown = sv_quality_panel_get_convergence (panel);
  g_assert_cmpuint (shown->n_iterations, ==, (guint)r->params.max_num_iter);
  {
    g_autoptr (SvBackend) cpu = sv_backend_new ("cpu", &error);
    const gsize n = (gsize)NZ * NY * NX;
    g_autofree gint32 *before = g_new (gint32, n), *after = g_new (gint32, n);
    g_autofree float *centres_before = NULL, *centres_after = NULL;
    gsize k_before = 0;

    g_assert_no_error (error);
    g_assert_true (sv_backend_set_volume (cpu, sv_window_get_volume (f->window), NULL, &error));
    for (guint i = 0; i <= shown->n_iterations; i++)
      {
        SvRunControl control = { 0 };
        SvRunStats stats;
        gsize k = 0;
        guint64 changed = 0;
        double moved = 0.0;

        control.stop_after_iteration = (int)i;
        g_assert_true (sv_backend_run (cpu, &r->params, &control, &stats, &error));
        g_assert_true (sv_backend_get_labels (cpu, after, &error));
        centres_after = g_renew (float, centres_after, MAX (stats.n_clusters, 1) * 3);
        g_assert_true (sv_backend_get_centres (cpu, centres_after, &k, &error));
        g_assert_no_error (error);
        if (i > 0)
          {
            for (gsize v = 0; v < n; v++)
              changed += after[v] != before[v];
            for (gsize j = 0; j < MIN (k, k_before); j++)
              {
                const float *a = centres_before + 3 * j, *b = centres_after + 3 * j;
                double d2 = 0.0;

                if (isnan (a[0]) || isnan (b[0]))
                  continue;
                for (int c = 0; c < 3; c++)
                  d2 += (double)(a[c] - b[c]) * (a[c] - b[c]);
                moved += sqrt (d2);
              }
            g_test_message ("iteration %u: %" G_GUINT64_FORMAT
                            " changed (counted %" G_GUINT64_FORMAT "), moved %.4f (counted %.4f)",
                            i, shown->changed[i - 1], changed, shown->moved[i - 1], moved);
            g_assert_cmpuint (shown->changed[i - 1], ==, changed);
            g_assert_cmpfloat (shown->moved[i - 1], ==, moved);
          }
        memcpy (before, after, n * sizeof (gint32));
        centres_before = g_memdup2 (centres_after, MAX (k, 1) * 3 * sizeof (float));
        g_clear_pointer (&centres_after, g_free);
        k_before = k;
      }
  }
  /* Every voxel gets its first label in iteration 1; fewer change later. */
  g_assert_cmpuint (shown->changed[0], ==, (guint64)NZ * NY * NX);
  g_assert_cmpuint (shown->changed[shown->n_iterations - 1], <, shown->changed[1]);

  /* The next step moves the marker, and the text with it. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-step", NULL));
  wait_for_current_result (f->window);
  g_assert_cmpint (sv_quality_panel_get_convergence_step (panel), ==, 2);
  g_assert_true (
      g_str_has_prefix (sv_quality_panel_get_text (panel, "convergence"), "iteration 2 of "));
  g_assert_true (sv_quality_panel_get_convergence (panel) == shown);
  show_side_panel (GTK_WIDGET (panel));
  save_window_png (f->window, "gui-convergence.png");

  /* Out of teaching mode the plot goes. */
  sv_params_panel_set_teaching (sv_window_get_params_panel (f->window), FALSE);
  wait_for_current_result (f->window);
  g_assert_null (sv_quality_panel_get_convergence (panel));
}

/* ---- scale bar ---- */

static void
test_scale_bar_in_file_unit (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "cells.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (SvVolume) copy = NULL;
  g_autoptr (GError) error = NULL;
  const SvVolume *v = sv_window_get_volume (f->window);
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  const char *text;
  double length, width;

  /* The sample has no unit: lengths in voxels. */
  text = sv_slice_view_get_scale_bar_text (xy);
  g_assert_nonnull (text);
  g_assert_true (g_str_has_suffix (text, " voxels"));

  /* The same voxels at 0.5 µm from a file. */
  copy = sv_volume_new (v->nz, v->ny, v->nx, v->nc, &error);
  g_assert_no_error (error);
  memcpy (copy->data, v->data, sv_volume_n_voxels (v) * v->nc * sizeof (float));
  copy->spacing[0] = 1.0;
  copy->spacing[1] = copy->spacing[2] = 0.5;
  copy->unit = g_strdup ("micron");
  g_assert_true (sv_tiff_write_volume (path, copy, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);
  open_and_wait (f->window, file);
  text = sv_slice_view_get_scale_bar_text (xy);
  g_test_message ("scale bar: %s at %.2f px/µm", text, sv_slice_view_get_scale (xy));
  g_assert_true (g_str_has_suffix (text, " µm"));
  /* A round length about a fifth of the view wide. */
  length = g_ascii_strtod (text, NULL);
  width = gtk_widget_get_width (GTK_WIDGET (sv_slice_view_get_gl_area (xy)));
  /* The longest 1, 2 or 5 × 10^e µm that fits in a fifth of the view,
   * found here by trying each. */
  {
    const double fifth = width * 0.2 / sv_slice_view_get_scale (xy);
    double best = 0.0;
    g_autofree char *best_text = NULL;

    for (int e = -6; e <= 9; e++)
      for (int m = 1; m <= 5; m++)
        {
          g_autofree char *number = g_strdup_printf ("%de%d", m, e);
          const double candidate = g_ascii_strtod (number, NULL);

          if ((m == 1 || m == 2 || m == 5) && candidate <= fifth * (1 + 1e-12) && candidate > best)
            best = candidate;
        }
    best_text = g_strdup_printf ("%g µm", best);
    g_assert_cmpstr (text, ==, best_text);
  }
  g_assert_cmpfloat (length * sv_slice_view_get_scale (xy), >, width * 0.2 / 5.01);
  g_assert_cmpfloat (length * sv_slice_view_get_scale (xy), <=, width * 0.2 + 1e-6);
  /* A picked supervoxel's volume in µm³: voxels × 1 × 0.5 × 0.5. */
  {
    SvJobResult *r;
    gint32 label;
    gsize count = 0;
    g_autofree char *expected = NULL;

    wait_until (quality_current, f->window, "the file's supervoxel statistics");
    r = sv_window_get_result (f->window);
    label = sv_job_result_label_at (r, NZ / 2, NY / 2, NX / 2);
    for (gsize i = 0; i < sv_labels_n_voxels (sv_job_result_get_labels (r, NULL)); i++)
      count += sv_job_result_get_labels (r, NULL)->data[i] == label;
    g_signal_emit_by_name (xy, "pick", (int)(NZ / 2), (int)(NY / 2), (int)(NX / 2));
    wait_until (pick_has_count, f->window, "the picked supervoxel's numbers");
    expected = g_strdup_printf ("%.4g µm³", count * 0.25);
    g_test_message ("volume: %s",
                    sv_pick_panel_get_text (sv_window_get_pick_panel (f->window), "volume"));
    g_assert_cmpstr (sv_pick_panel_get_text (sv_window_get_pick_panel (f->window), "volume"), ==,
                     expected);
  }

  /* Zoomed in four times, the bar stands for a shorter length. */
  sv_slice_view_zoom_at (xy, 4.0, width / 2, 100);
  g_assert_cmpfloat (g_ascii_strtod (sv_slice_view_get_scale_bar_text (xy), NULL), <, length);
  save_window_png (f->window, "gui-scale-bar.png");
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/teach/convergence-plot-follows-steps", Fixture, NULL, fixture_setup,
              test_convergence_follows_steps, fixture_teardown);
  g_test_add ("/gui/scale-bar/in-the-file-unit", Fixture, NULL, fixture_setup,
              test_scale_bar_in_file_unit, fixture_teardown);
  return g_test_run ();
}

/* Tests of the window as a tuning bench under Xvfb: the quality panel's
 * numbers against the engine's metrics (also with a ground truth),
 * picking a supervoxel, the contrast histogram's handles and colormaps,
 * and comparing a pinned result with the live one. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-util.h"
#include "supervox/sv-backend.h"
#include "supervox/sv-io.h"
#include "supervox/sv-metrics.h"
#include "sv-element-words.h"
#include "sv-test-files.h"

static gboolean
error_dialog_shown (gpointer data)
{
  return sv_window_get_error_dialog (data) != NULL;
}

static gboolean
quality_with_truth (gpointer data)
{
  SvWindow *w = data;
  return quality_current (w)
         && sv_quality_panel_get_quality (sv_window_get_quality_panel (w))->has_truth;
}

static char *
format3 (double value)
{
  return g_strdup_printf ("%.3f", value);
}

static void
assert_row_is (SvWindow *w, const char *row, const char *expected)
{
  const char *text = sv_quality_panel_get_text (sv_window_get_quality_panel (w), row);

  g_test_message ("%s: %s (expected: %s)", row, text, expected);
  g_assert_cmpstr (text, ==, expected);
}

static int
compare_counts (gconstpointer a, gconstpointer b)
{
  const guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;

  return x < y ? -1 : x > y;
}

/* The labels' count and their sizes (smallest, median, largest) counted
 * here from the labels, apart from the engine's metrics. */
static void
count_labels (const SvLabels *labels, gsize *n_labels, char **sizes)
{
  g_autoptr (GHashTable) counts = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GArray) sorted = g_array_new (FALSE, FALSE, sizeof (guint64));
  const gsize n = sv_labels_n_voxels (labels);
  GHashTableIter iter;
  gpointer value;
  double median;
  guint64 c;

  for (gsize i = 0; i < n; i++)
    {
      gpointer key = GINT_TO_POINTER (labels->data[i]);
      g_hash_table_insert (counts, key,
                           GSIZE_TO_POINTER (GPOINTER_TO_SIZE (g_hash_table_lookup (counts, key)) + 1));
    }
  g_hash_table_iter_init (&iter, counts);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      c = GPOINTER_TO_SIZE (value);
      g_array_append_val (sorted, c);
    }
  g_array_sort (sorted, compare_counts);
  *n_labels = sorted->len;
  median = sorted->len % 2 ? (double)g_array_index (sorted, guint64, sorted->len / 2)
                           : 0.5 * (g_array_index (sorted, guint64, sorted->len / 2 - 1)
                                    + g_array_index (sorted, guint64, sorted->len / 2));
  *sizes = g_strdup_printf ("%" G_GUINT64_FORMAT " · %.0f · %" G_GUINT64_FORMAT,
                            g_array_index (sorted, guint64, 0), median,
                            g_array_index (sorted, guint64, sorted->len - 1));
}

static void
test_quality_equals_engine_metrics (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *truth_path = g_build_filename (dir, "truth.tif", NULL);
  g_autoptr (GFile) truth_file = g_file_new_for_path (truth_path);
  g_autoptr (SvLabels) truth = NULL;
  g_autoptr (GError) error = NULL;
  const SvVolume *v = sv_window_get_volume (f->window);
  SvJobResult *r;
  SvMetrics m;
  g_autofree char *n = NULL, *ev = NULL, *co = NULL, *br = NULL, *ue = NULL, *asa = NULL;
  g_autofree char *sizes = NULL;

  wait_until (quality_current, f->window, "the quality of the first result");
  r = sv_window_get_result (f->window);
  g_assert_true (sv_metrics_compute (sv_job_result_get_labels (r, NULL), NULL, v, 2, &m, &error));
  g_assert_no_error (error);
  {
    gsize counted;

    /* Every voxel is labelled here (no mask): the count is the metrics'. */
    count_labels (sv_job_result_get_labels (r, NULL), &counted, &sizes);
    g_assert_cmpuint (counted, ==, m.n_labels);
    n = g_strdup_printf ("%" G_GSIZE_FORMAT, counted);
  }
  ev = format3 (m.explained_variation);
  co = format3 (m.compactness);
  assert_row_is (f->window, "labels", n);
  assert_row_is (f->window, "explained-variation", ev);
  assert_row_is (f->window, "compactness", co);
  assert_row_is (f->window, "sizes", sizes);
  g_assert_nonnull (
      strstr (sv_quality_panel_get_text (sv_window_get_quality_panel (f->window), "time"),
              " s on the CPU"));
  assert_row_is (f->window, "truth", "No ground truth (menu ▸ Open Ground Truth)");

  /* A truth of another shape is refused and changes nothing. */
  {
    g_autofree char *wrong_path = g_build_filename (dir, "wrong.tif", NULL);
    g_autoptr (GFile) wrong_file = g_file_new_for_path (wrong_path);
    g_autoptr (SvLabels) wrong = sv_labels_new (NZ, NY, NX + 1, &error);
    GtkWindow *dialog;

    g_assert_no_error (error);
    g_assert_true (sv_tiff_write_labels (wrong_path, wrong, &error));
    g_assert_no_error (error);
    g_assert_true (sv_window_open_ground_truth (f->window, wrong_file));
    wait_until (error_dialog_shown, f->window, "the refusal");
    dialog = sv_window_get_error_dialog (f->window);
    {
      g_autofree char *secondary = NULL;
      g_object_get (dialog, "secondary-text", &secondary, NULL);
      g_test_message ("%s", secondary);
      g_assert_nonnull (strstr (secondary, "65"));
    }
    gtk_window_destroy (dialog);
    g_assert_false (sv_window_has_ground_truth (f->window));
  }

  /* A ground truth of four quadrants in y and x, split at z = NZ / 3. */
  truth = sv_labels_new (NZ, NY, NX, &error);
  g_assert_no_error (error);
  for (guint z = 0; z < NZ; z++)
    for (guint y = 0; y < NY; y++)
      for (guint x = 0; x < NX; x++)
        truth->data[((gsize)z * NY + y) * NX + x]
            = 1 + (x >= NX / 2) + 2 * (y >= NY / 3) + 4 * (z >= NZ / 3);
  g_assert_true (sv_tiff_write_labels (truth_path, truth, &error));
  g_assert_no_error (error);
  g_assert_true (sv_window_open_ground_truth (f->window, truth_file));
  wait_until (quality_with_truth, f->window, "the quality against the truth");
  g_assert_true (sv_window_has_ground_truth (f->window));

  g_assert_true (sv_metrics_compute (sv_job_result_get_labels (r, NULL), truth, v, 2, &m, &error));
  g_assert_no_error (error);
  br = format3 (m.boundary_recall);
  ue = format3 (m.undersegmentation);
  asa = format3 (m.asa);
  assert_row_is (f->window, "boundary-recall", br);
  assert_row_is (f->window, "undersegmentation", ue);
  assert_row_is (f->window, "achievable-accuracy", asa);
  g_assert_cmpfloat (m.asa, <, 1.0);

  show_side_panel (GTK_WIDGET (sv_window_get_quality_panel (f->window)));
  save_window_png (f->window, "gui-quality-panel.png");
  sv_test_remove_tree (dir);
}

/* ---- picking ---- */

/* How many pixels of two captures of one size differ. */
static gsize
n_differing (GdkTexture *a, GdkTexture *b)
{
  gsize sa, sb, n = 0;
  g_autofree guint8 *pa = texture_bytes (a, &sa);
  g_autofree guint8 *pb = texture_bytes (b, &sb);

  g_assert_cmpint (gdk_texture_get_width (a), ==, gdk_texture_get_width (b));
  g_assert_cmpint (gdk_texture_get_height (a), ==, gdk_texture_get_height (b));
  for (int y = 0; y < gdk_texture_get_height (a); y++)
    for (int x = 0; x < gdk_texture_get_width (a); x++)
      n += memcmp (pa + (gsize)y * sa + (gsize)x * 4, pb + (gsize)y * sb + (gsize)x * 4, 3) != 0;
  return n;
}

static void
test_pick_shows_id_and_count (Fixture *f, gconstpointer data)
{
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  SvPickPanel *panel = sv_window_get_pick_panel (f->window);
  SvJobResult *r = sv_window_get_result (f->window);
  guint z = sv_slice_view_get_slice (xy), y = 0, x = 0;
  gint32 label = 0, selected = -1;
  g_autofree char *id = NULL;
  g_autofree char *count_text = NULL;
  g_autoptr (GdkTexture) before = NULL, picked = NULL, only = NULL, cleared = NULL;
  guint lo[3] = { G_MAXUINT, G_MAXUINT, G_MAXUINT }, hi[3] = { 0, 0, 0 };
  gsize count = 0, i = 0;
  g_autofree char *bounds = NULL;

  /* The supervoxel with the most voxels on the slice shown, at one of them. */
  {
    g_autoptr (GHashTable) on_slice = g_hash_table_new (NULL, NULL);
    guint most = 0;
    for (guint yy = 0; yy < NY; yy++)
      for (guint xx = 0; xx < NX; xx++)
        {
          gint32 l = sv_job_result_label_at (r, z, yy, xx);
          guint n = GPOINTER_TO_UINT (g_hash_table_lookup (on_slice, GINT_TO_POINTER (l))) + 1;
          g_hash_table_insert (on_slice, GINT_TO_POINTER (l), GUINT_TO_POINTER (n));
          if (n > most)
            most = n, label = l, y = yy, x = xx;
        }
  }
  id = g_strdup_printf ("%d", label);
  for (guint zz = 0; zz < NZ; zz++)
    for (guint yy = 0; yy < NY; yy++)
      for (guint xx = 0; xx < NX; xx++, i++)
        if (sv_job_result_get_labels (r, NULL)->data[i] == label)
          {
            guint p[3] = { zz, yy, xx };
            count++;
            for (guint d = 0; d < 3; d++)
              {
                lo[d] = MIN (lo[d], p[d]);
                hi[d] = MAX (hi[d], p[d]);
              }
          }
  count_text = g_strdup_printf ("%" G_GSIZE_FORMAT, count);
  bounds
      = g_strdup_printf ("x %u–%u · y %u–%u · z %u–%u", lo[2], hi[2], lo[1], hi[1], lo[0], hi[0]);

  wait_until (quality_current, f->window, "the supervoxel statistics");
  before = capture_xy (f->window);
  g_assert_false (sv_window_get_selected (f->window, NULL));
  /* What a click on that voxel emits. */
  g_signal_emit_by_name (xy, "pick", (int)z, (int)y, (int)x);
  g_assert_true (sv_window_get_selected (f->window, &selected));
  g_assert_cmpint (selected, ==, label);
  wait_until (pick_has_count, f->window, "the selection's numbers");
  g_test_message (
      "picked %s: %s voxels, %s, %s, %s", sv_pick_panel_get_text (panel, "id"),
      sv_pick_panel_get_text (panel, "voxels"), sv_pick_panel_get_text (panel, "volume"),
      sv_pick_panel_get_text (panel, "intensity"), sv_pick_panel_get_text (panel, "bounds"));
  g_assert_cmpstr (sv_pick_panel_get_text (panel, "id"), ==, id);
  g_assert_cmpstr (sv_pick_panel_get_text (panel, "voxels"), ==, count_text);
  g_assert_cmpstr (sv_pick_panel_get_text (panel, "bounds"), ==, bounds);
  g_assert_true (g_str_has_prefix (sv_pick_panel_get_text (panel, "intensity"), "mean "));

  /* Tinted on screen; "selected only" dims the rest. */
  picked = capture_xy (f->window);
  g_assert_cmpuint (n_differing (before, picked), >, 20);
  sv_pick_panel_set_selected_only (panel, TRUE);
  only = capture_xy (f->window);
  g_assert_cmpuint (n_differing (picked, only), >, n_differing (before, picked));
  save_window_png (f->window, "gui-pick-selected-only.png");
  sv_pick_panel_set_selected_only (panel, FALSE);

  /* Escape with nothing running clears the selection. */
  g_assert_false (sv_window_is_busy (f->window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.escape", NULL));
  g_assert_false (sv_window_get_selected (f->window, NULL));
  g_assert_cmpstr (sv_pick_panel_get_text (panel, "id"), ==, "—");
  cleared = capture_xy (f->window);
  g_assert_cmpuint (n_differing (before, cleared), ==, 0);
}

/* ---- contrast ---- */

static double
mean_grey (GdkTexture *t, double *colourfulness)
{
  gsize stride;
  g_autofree guint8 *px = texture_bytes (t, &stride);
  double sum = 0, spread = 0;
  gsize n = 0;

  for (int y = 0; y < gdk_texture_get_height (t); y++)
    for (int x = 0; x < gdk_texture_get_width (t); x++)
      {
        const guint8 *p = px + (gsize)y * stride + (gsize)x * 4;
        sum += (p[0] + p[1] + p[2]) / 3.0;
        spread += MAX (MAX (p[0], p[1]), p[2]) - MIN (MIN (p[0], p[1]), p[2]);
        n++;
      }
  if (colourfulness)
    *colourfulness = spread / n;
  return sum / n;
}

static void
test_histogram_handles_change_pixels (Fixture *f, gconstpointer data)
{
  SvContrastPanel *contrast = sv_window_get_contrast_panel (f->window);
  SvParamsPanel *params = sv_window_get_params_panel (f->window);
  GtkWidget *plot = sv_contrast_panel_get_plot (contrast);
  g_autoptr (GdkTexture) before = NULL, brighter = NULL, viridis = NULL;
  double grey_before, grey_after, colour_before, colour_after, width;
  SvDisplay d;

  g_assert_nonnull (sv_contrast_panel_get_histogram (contrast));
  /* Only the image: the overlay would add its own colours. */
  sv_params_panel_set_overlay (params, SV_OVERLAY_OFF);
  gtk_notebook_set_current_page (
      GTK_NOTEBOOK (gtk_widget_get_ancestor (GTK_WIDGET (contrast), GTK_TYPE_NOTEBOOK)), 2);
  before = capture_xy (f->window);
  grey_before = mean_grey (before, &colour_before);
  width = gtk_widget_get_width (plot);
  g_assert_cmpfloat (width, >, 20);

  /* The white handle dragged to a quarter of the range. */
  sv_contrast_panel_move_handle (contrast, SV_HANDLE_WHITE, width / 4);
  sv_params_panel_get_display (params, &d);
  g_assert_cmpfloat (fabs (d.high - sv_contrast_panel_x_to_value (contrast, width / 4)), <, 1e-3);
  brighter = capture_xy (f->window);
  grey_after = mean_grey (brighter, NULL);
  g_test_message ("mean grey %.1f -> %.1f", grey_before, grey_after);
  g_assert_cmpfloat (grey_after, >, grey_before + 10);

  /* Viridis colours what grey left grey. */
  sv_contrast_panel_set_colormap (contrast, SV_COLORMAP_VIRIDIS);
  viridis = capture_xy (f->window);
  mean_grey (viridis, &colour_after);
  g_test_message ("colourfulness %.1f -> %.1f", colour_before, colour_after);
  g_assert_cmpfloat (colour_before, <, 1.0);
  g_assert_cmpfloat (colour_after, >, 20.0);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.auto-contrast", NULL));
  save_window_png (f->window, "gui-contrast-histogram.png");

  /* Reset: the full range again. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.reset-contrast", NULL));
  sv_params_panel_get_display (params, &d);
  g_assert_cmpfloat (d.low, ==, (float)sv_contrast_panel_get_histogram (contrast)->min);
  g_assert_cmpfloat (d.high, ==, (float)sv_contrast_panel_get_histogram (contrast)->max);
}

/* ---- compare ---- */

static gboolean
pinned_quality_current (gpointer data)
{
  SvWindow *w = data;
  const char *t = sv_quality_panel_get_text (sv_window_get_quality_panel (w), "labels");
  return quality_current (w) && t && strstr (t, "Δ") != NULL;
}

static void
test_compare_flips_overlay (Fixture *f, gconstpointer data)
{
  SvParamsPanel *params = sv_window_get_params_panel (f->window);
  SvQualityPanel *quality = sv_window_get_quality_panel (f->window);
  g_autoptr (SvJobResult) pinned = NULL;
  g_autoptr (GdkTexture) live = NULL, flipped = NULL, back = NULL;

  wait_until (quality_current, f->window, "the first result's quality");
  pinned = sv_job_result_ref (sv_window_get_result (f->window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.pin", NULL));
  sv_params_panel_set_compactness (params, 0.5);
  wait_for_current_result (f->window);
  wait_until (pinned_quality_current, f->window, "the live result's numbers beside the pinned");
  g_assert_true (sv_window_get_result (f->window) != pinned);
  g_test_message ("live: %s · %s", sv_quality_panel_get_text (quality, "labels"),
                  sv_quality_panel_get_text (quality, "compare"));
  g_assert_true (g_str_has_prefix (sv_quality_panel_get_text (quality, "compare"), "live shown"));
  live = capture_xy (f->window);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.flip-pinned", NULL));
  g_assert_true (sv_window_get_showing_pinned (f->window));
  g_assert_true (sv_slice_view_get_result (sv_window_get_slice_view (f->window, SV_AXIS_XY))
                 == pinned);
  g_assert_true (g_str_has_prefix (sv_quality_panel_get_text (quality, "compare"), "pinned shown"));
  g_assert_nonnull (strstr (sv_quality_panel_get_text (quality, "labels"), "Δ"));
  flipped = capture_xy (f->window);
  g_assert_cmpuint (n_differing (live, flipped), >, 50);
  show_side_panel (GTK_WIDGET (quality));
  save_window_png (f->window, "gui-compare-pinned.png");

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.flip-pinned", NULL));
  g_assert_false (sv_window_get_showing_pinned (f->window));
  back = capture_xy (f->window);
  g_assert_cmpuint (n_differing (live, back), ==, 0);
}

/* ---- region preview ---- */

static void
test_region_equals_cropped_run (Fixture *f, gconstpointer data)
{
  const guint lo[3] = { 8, 10, 12 }, hi[3] = { 24, 50, 44 };
  const SvVolume *v = sv_window_get_volume (f->window);
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  g_autofree char *whole_command = sv_window_build_command (f->window);
  g_autofree char *command = NULL;
  g_autoptr (SvVolume) crop = NULL;
  g_autoptr (SvBackend) backend = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree gint32 *expected = NULL;
  g_autoptr (GdkTexture) t = NULL;
  g_autofree guint8 *px = NULL;
  SvRunControl control = { 0 };
  SvRunStats stats;
  SvJobResult *r;
  guint got_lo[3], got_hi[3];
  gsize n, stride, inside = 0, outside = 0;

  /* What a Shift-drag in XY and then in XZ leaves: a box. */
  g_signal_emit_by_name (xy, "region", lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
  g_assert_true (sv_window_get_region (f->window, got_lo, got_hi));
  g_assert_cmpmem (got_lo, sizeof got_lo, lo, sizeof lo);
  g_assert_cmpmem (got_hi, sizeof got_hi, hi, sizeof hi);
  wait_for_current_result (f->window);
  r = sv_window_get_result (f->window);
  g_assert_true (r->region);
  g_assert_cmpuint (sv_job_result_get_labels (r, NULL)->nz, ==, hi[0] - lo[0]);
  g_assert_cmpuint (sv_job_result_get_labels (r, NULL)->ny, ==, hi[1] - lo[1]);
  g_assert_cmpuint (sv_job_result_get_labels (r, NULL)->nx, ==, hi[2] - lo[2]);

  /* The region's share of the segments: supervoxels of the whole volume's size. */
  {
    SvSlicParams asked;
    double share
        = (double)(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]) / ((double)NZ * NY * NX);
    sv_params_panel_get_params (sv_window_get_params_panel (f->window), &asked);
    g_assert_cmpint (r->params.n_segments, ==, llround (asked.n_segments * share));
  }

  /* The same parameters on the cropped voxels, on the engine as the CLI runs it. */
  crop = sv_volume_new (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1, &error);
  g_assert_no_error (error);
  for (guint z = 0; z < crop->nz; z++)
    for (guint y = 0; y < crop->ny; y++)
      for (guint x = 0; x < crop->nx; x++)
        crop->data[((gsize)z * crop->ny + y) * crop->nx + x]
            = v->data[((gsize)(z + lo[0]) * v->ny + y + lo[1]) * v->nx + x + lo[2]];
  backend = sv_backend_new ("cpu", &error);
  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, crop, NULL, &error));
  control.stop_after_iteration = -1;
  g_assert_true (sv_backend_run (backend, &r->params, &control, &stats, &error));
  g_assert_no_error (error);
  n = sv_volume_n_voxels (crop);
  expected = g_new (gint32, n);
  g_assert_true (sv_backend_get_labels (backend, expected, &error));
  g_assert_cmpmem (sv_job_result_get_labels (r, NULL)->data, n * sizeof (gint32), expected,
                   n * sizeof (gint32));

  /* Labels only inside the box; the command is still the whole volume's. */
  g_assert_cmpint (sv_job_result_label_at (r, 0, 0, 0), ==, r->params.start_label - 1);
  g_assert_cmpint (sv_job_result_label_at (r, lo[0], lo[1], lo[2]), ==, expected[0]);
  command = sv_window_build_command (f->window);
  g_assert_cmpstr (command, ==, whole_command);
  g_assert_false (sv_window_export_labels (f->window, "region-labels.tif", &error));
  g_assert_nonnull (strstr (error->message, "region"));
  g_assert_false (g_file_test ("region-labels.tif", G_FILE_TEST_EXISTS));
  g_clear_error (&error);
  t = capture_xy (f->window);
  px = texture_bytes (t, &stride);
  for (int y = 0; y < gdk_texture_get_height (t); y += 2)
    for (int x = 0; x < gdk_texture_get_width (t); x += 2)
      {
        const guint8 *p = px + (gsize)y * stride + (gsize)x * 4;
        guint zyx[3];
        gboolean in;
        /* Boundary yellow (B, G, R bytes). */
        if (!(p[2] > 200 && p[1] > 170 && p[0] < 60)
            || !sv_slice_view_pixel_to_voxel (xy, x + 0.5, y + 0.5, zyx))
          continue;
        in = zyx[1] >= lo[1] && zyx[1] < hi[1] && zyx[2] >= lo[2] && zyx[2] < hi[2];
        inside += in;
        /* The box's edge shows on the voxels just outside it, as any edge. */
        outside += zyx[1] + 1 < lo[1] || zyx[1] > hi[1] || zyx[2] + 1 < lo[2] || zyx[2] > hi[2];
      }
  g_test_message ("boundary pixels: %" G_GSIZE_FORMAT " inside, %" G_GSIZE_FORMAT
                  " away from the box",
                  inside, outside);
  g_assert_cmpuint (inside, >, 100);
  g_assert_cmpuint (outside, ==, 0);
  save_window_png (f->window, "gui-region-preview.png");

  /* Run on Whole Volume. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.run-whole-volume", NULL));
  g_assert_false (sv_window_get_region (f->window, got_lo, got_hi));
  wait_for_current_result (f->window);
  r = sv_window_get_result (f->window);
  g_assert_false (r->region);
  g_assert_cmpuint (sv_job_result_get_labels (r, NULL)->nz, ==, v->nz);
}

/* ---- 3D view ---- */

typedef struct
{
  GdkTexture *texture;
} VolumeCapture;

static void
volume_captured_cb (SvVolumeView *view, GdkTexture *texture, gpointer data)
{
  ((VolumeCapture *)data)->texture = g_object_ref (texture);
}

static gboolean
volume_capture_done (gpointer data)
{
  return ((VolumeCapture *)data)->texture != NULL;
}

static GdkTexture *
capture_volume (SvWindow *w)
{
  VolumeCapture c = { NULL };

  sv_volume_view_capture (sv_window_get_volume_view (w), volume_captured_cb, &c);
  wait_until (volume_capture_done, &c, "a capture of the 3D view");
  return c.texture;
}

/* Pixels that are not the empty background (0.12, 0.12, 0.13). */
static gsize
n_drawn (GdkTexture *t)
{
  gsize stride, n = 0;
  g_autofree guint8 *px = texture_bytes (t, &stride);

  for (int y = 0; y < gdk_texture_get_height (t); y++)
    for (int x = 0; x < gdk_texture_get_width (t); x++)
      {
        const guint8 *p = px + (gsize)y * stride + (gsize)x * 4;
        n += abs (p[0] - 33) + abs (p[1] - 31) + abs (p[2] - 31) > 12;
      }
  return n;
}

static void
test_volume_view_renders_and_rotates (Fixture *f, gconstpointer data)
{
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  SvVolumeView *view = sv_window_get_volume_view (f->window);
  g_autoptr (GdkTexture) first = NULL, turned = NULL, picked = NULL;
  gsize drawn;

  if (sv_slice_view_is_software (xy))
    {
      g_test_skip ("the 3D view needs OpenGL");
      return;
    }
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (view)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.orthogonal", NULL));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (view)));
  first = capture_volume (f->window);
  drawn = n_drawn (first);
  g_test_message ("3D view: %" G_GSIZE_FORMAT " of %d pixels drawn", drawn,
                  gdk_texture_get_width (first) * gdk_texture_get_height (first));
  g_assert_cmpuint (drawn, >, 2000);

  sv_volume_view_rotate (view, 60.0, 15.0);
  turned = capture_volume (f->window);
  g_assert_cmpuint (n_differing (first, turned), >, 1000);

  /* A picked supervoxel is tinted in it too. */
  g_signal_emit_by_name (xy, "pick", (int)(NZ / 2), (int)(NY / 2), (int)(NX / 2));
  picked = capture_volume (f->window);
  g_test_message ("%" G_GSIZE_FORMAT " pixels tinted", n_differing (turned, picked));
  g_assert_cmpuint (n_differing (turned, picked), >, 50);
  save_window_png (f->window, "gui-3d-view.png");
}

/* With a mask, the quality panel counts the supervoxels the status bar
 * counts: the masked-out voxels are no supervoxel and not the largest. */
static void
test_quality_leaves_mask_out (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *mask_path = g_build_filename (dir, "mask.tif", NULL);
  g_autoptr (GFile) mask_file = g_file_new_for_path (mask_path);
  g_autoptr (SvLabels) mask = sv_labels_new (NZ, NY, NX, NULL);
  g_autoptr (GError) error = NULL;
  SvQuality *q;
  SvJobResult *r;
  gsize outside = 0;

  /* The left third of x is masked out. */
  for (gsize i = 0; i < sv_labels_n_voxels (mask); i++)
    {
      mask->data[i] = i % NX >= NX / 3;
      outside += mask->data[i] == 0;
    }
  g_assert_true (sv_tiff_write_labels (mask_path, mask, &error));
  g_assert_no_error (error);
  g_assert_true (sv_window_open_mask (f->window, mask_file));
  wait_until (quality_current, f->window, "the quality with the mask");
  r = sv_window_get_result (f->window);
  q = sv_quality_panel_get_quality (sv_window_get_quality_panel (f->window));
  g_test_message ("status: %s · quality: %s · sizes %s", sv_window_get_result_text (f->window),
                  sv_quality_panel_get_text (sv_window_get_quality_panel (f->window), "labels"),
                  sv_quality_panel_get_text (sv_window_get_quality_panel (f->window), "sizes"));
  g_assert_cmpuint (q->metrics.n_labels, ==, r->stats.n_labels);
  g_assert_cmpfloat (q->metrics.size_max, <, (double)outside);
  /* The size asked for is of the voxels inside. */
  g_assert_cmpfloat_with_epsilon (q->target_size,
                                  (double)(sv_labels_n_voxels (mask) - outside) / r->params.n_segments,
                                  1e-9);
  sv_test_remove_tree (dir);
}

/* The quality panel's sizes from 100 000 voxels on: five characters at
 * most, three significant digits, rounding carried into the next unit. */
static void
test_short_counts (void)
{
  static const struct
  {
    guint64 n;
    const char *text;
  } cases[] = {
    { 99999, "99\u202f999" },      { 100000, "100\u202fk" },       { 171606, "172\u202fk" },
    { 999499, "999\u202fk" },      { 999500, "1.00\u202fM" },      { 1234567, "1.23\u202fM" },
    { 9995000, "10.0\u202fM" },    { 446784000, "447\u202fM" },    { 8589934592, "8.59\u202fG" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = sv_format_count_short (cases[i].n);
      g_assert_cmpstr (text, ==, cases[i].text);
    }
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gui/quality/short-counts", test_short_counts);
  g_test_add ("/gui/quality/mask-out-is-no-supervoxel", Fixture, NULL, fixture_setup,
              test_quality_leaves_mask_out, fixture_teardown);
  g_test_add ("/gui/quality/numbers-equal-engine-metrics", Fixture, NULL, fixture_setup,
              test_quality_equals_engine_metrics, fixture_teardown);
  g_test_add ("/gui/pick/shows-id-count-and-clears-on-escape", Fixture, NULL, fixture_setup,
              test_pick_shows_id_and_count, fixture_teardown);
  g_test_add ("/gui/contrast/handles-and-colormap-change-pixels", Fixture, NULL, fixture_setup,
              test_histogram_handles_change_pixels, fixture_teardown);
  g_test_add ("/gui/compare/flip-shows-pinned-labels", Fixture, NULL, fixture_setup,
              test_compare_flips_overlay, fixture_teardown);
  g_test_add ("/gui/region/run-equals-the-cropped-volume", Fixture, NULL, fixture_setup,
              test_region_equals_cropped_run, fixture_teardown);
  g_test_add ("/gui/volume-view/renders-and-turns", Fixture, NULL, fixture_setup,
              test_volume_view_renders_and_rotates, fixture_teardown);
  return g_test_run ();
}

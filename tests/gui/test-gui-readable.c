/* Tests that the window reads well at its default size under Xvfb: the
 * quality tab fits without scrolling (with and without a ground truth), its
 * legends and axis numbers never run into each other, the status line
 * describes the labels on screen (pinned, region), and a 2D image speaks of
 * pixels with no z controls. */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <string.h>

#include "gui-test-util.h"
#include "supervox/sv-io.h"
#include "supervox/sv-params.h"
#include "sv-axis-labels.h"
#include "sv-pick-panel.h"
#include "sv-test-files.h"

static gboolean
quality_with_truth (gpointer data)
{
  SvWindow *w = data;
  return quality_current (w)
         && sv_quality_panel_get_quality (sv_window_get_quality_panel (w))->has_truth;
}

static gboolean
count_three_frames_cb (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  (*(guint *)data)++;
  return *(guint *)data >= 3 ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

static gboolean
three_frames (gpointer data)
{
  return *(guint *)data >= 3;
}

/* A few frames later: the layout the last change asked for is done. */
static void
settle_layout (SvWindow *w)
{
  guint frames = 0;

  gtk_widget_queue_resize (GTK_WIDGET (w));
  gtk_widget_add_tick_callback (GTK_WIDGET (w), count_three_frames_cb, &frames, NULL);
  wait_until (three_frames, &frames, "three frames");
}

/* The quality tab, shown, needs no scrolling: its content is no taller
 * than the room the window's default size gives it. */
static void
assert_quality_fits (SvWindow *w, const char *when)
{
  GtkWidget *panel = GTK_WIDGET (sv_window_get_quality_panel (w));
  GtkWidget *scroller = gtk_widget_get_first_child (panel);
  GtkWidget *content;
  GtkAdjustment *adj;
  int natural = 0;

  g_assert_true (GTK_IS_SCROLLED_WINDOW (scroller));
  settle_layout (w);
  content = gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (scroller));
  gtk_widget_measure (content, GTK_ORIENTATION_VERTICAL, gtk_widget_get_width (content), NULL,
                      &natural, NULL, NULL);
  adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
  g_test_message ("%s: the quality tab's content %d px, its room %.0f px", when, natural,
                  gtk_adjustment_get_page_size (adj));
  g_assert_cmpfloat (gtk_adjustment_get_page_size (adj), >, 0);
  g_assert_cmpfloat (natural, <=, gtk_adjustment_get_page_size (adj));
  g_assert_cmpfloat (gtk_adjustment_get_upper (adj), <=, gtk_adjustment_get_page_size (adj));
}

static GtkLabel *
find_label_starting (GtkWidget *root, const char *prefix)
{
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkLabel *found;
      if (GTK_IS_LABEL (c) && g_str_has_prefix (gtk_label_get_text (GTK_LABEL (c)), prefix))
        return GTK_LABEL (c);
      if ((found = find_label_starting (c, prefix)))
        return found;
    }
  return NULL;
}

/* Each colour of the time legend is on the line of the stage it names. */
static void
assert_legend_swatches_lead (SvWindow *w)
{
  GtkLabel *legend = find_label_starting (GTK_WIDGET (sv_window_get_quality_panel (w)), "■");
  PangoLayout *layout;
  const char *text;
  static const char *const stages[] = { "prepare", "iterate", "connect" };

  g_assert_nonnull (legend);
  layout = gtk_label_get_layout (legend);
  text = pango_layout_get_text (layout);
  g_test_message ("legend: %s (%d lines)", text, pango_layout_get_line_count (layout));
  for (guint i = 0; i < G_N_ELEMENTS (stages); i++)
    {
      const char *word = strstr (text, stages[i]);
      const char *swatch;
      int swatch_line, word_line, x;

      g_assert_nonnull (word);
      /* The swatch nearest before the word is its own. */
      swatch = g_utf8_strrchr (text, word - text, g_utf8_get_char ("■"));
      g_assert_nonnull (swatch);
      g_assert_cmpint (g_utf8_strlen (swatch, word - swatch), <=, 2);
      pango_layout_index_to_line_x (layout, swatch - text, FALSE, &swatch_line, &x);
      pango_layout_index_to_line_x (layout, word - text, FALSE, &word_line, &x);
      g_assert_cmpint (swatch_line, ==, word_line);
    }
}

static void
test_quality_fits (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-readable-XXXXXX", NULL);
  g_autofree char *truth_path = g_build_filename (dir, "truth.tif", NULL);
  g_autoptr (GFile) truth_file = g_file_new_for_path (truth_path);
  g_autoptr (SvLabels) truth = NULL;
  g_autoptr (GError) error = NULL;
  GtkNotebook *notebook;
  int width, height;

  /* The window's default size, as a new user sees it. */
  gtk_window_get_default_size (GTK_WINDOW (f->window), &width, &height);
  g_assert_cmpint (width, ==, 1180);
  g_assert_cmpint (height, ==, 780);
  notebook = GTK_NOTEBOOK (gtk_widget_get_ancestor (
      GTK_WIDGET (sv_window_get_quality_panel (f->window)), GTK_TYPE_NOTEBOOK));
  g_assert_cmpint (gtk_notebook_get_current_page (notebook), ==, 0);
  wait_until (quality_current, f->window, "the quality of the first result");
  g_assert_true (g_str_has_prefix (
      sv_quality_panel_get_text (sv_window_get_quality_panel (f->window), "truth"),
      "No ground truth"));
  assert_quality_fits (f->window, "without a ground truth");
  assert_legend_swatches_lead (f->window);
  save_window_png (f->window, "gui-quality-fits.png");

  /* A ground truth adds its three rows: they fit too. */
  truth = sv_labels_new (NZ, NY, NX, &error);
  g_assert_no_error (error);
  for (guint z = 0; z < NZ; z++)
    for (guint y = 0; y < NY; y++)
      for (guint x = 0; x < NX; x++)
        truth->data[((gsize)z * NY + y) * NX + x] = 1 + (x >= NX / 2) + 2 * (y >= NY / 3);
  g_assert_true (sv_tiff_write_labels (truth_path, truth, &error));
  g_assert_no_error (error);
  g_assert_true (sv_window_open_ground_truth (f->window, truth_file));
  wait_until (quality_with_truth, f->window, "the quality against the truth");
  assert_quality_fits (f->window, "with a ground truth");
  save_window_png (f->window, "gui-quality-fits-truth.png");

  /* Pinned and flipped: the compare row's longer words fit as well. */
  sv_window_pin (f->window);
  sv_window_flip_pinned (f->window);
  wait_until (quality_current, f->window, "the pinned quality");
  save_window_png (f->window, "gui-quality-fits-pinned.png");
  assert_quality_fits (f->window, "pinned and flipped");
  sv_test_remove_tree (dir);
}

/* The size histogram's numbers: sizes bunched far from the size asked for
 * ("120000" twice at the right end) are not drawn over each other. */
static void
test_axis_labels_apart (void)
{
  /* smallest, largest, target: as the panel asks for them */
  SvAxisLabel labels[3] = {
    { .x = 262.0, .width = 40.0, .anchor = 0.0 },
    { .x = 268.0, .width = 40.0, .anchor = 1.0 },
    { .x = 12.0, .width = 26.0, .anchor = 0.5 },
  };
  const double axis = 280.0, gap = 6.0;
  guint shown = sv_axis_labels_place (labels, 3, axis, gap);

  g_assert_cmpuint (shown, ==, 2);
  g_assert_true (labels[0].shown);
  g_assert_false (labels[1].shown);
  g_assert_true (labels[2].shown);
  for (guint i = 0; i < 3; i++)
    {
      if (!labels[i].shown)
        continue;
      g_assert_cmpfloat (labels[i].left, >=, 0.0);
      g_assert_cmpfloat (labels[i].left + labels[i].width, <=, axis);
      for (guint j = 0; j < i; j++)
        if (labels[j].shown)
          g_assert_true (labels[i].left >= labels[j].left + labels[j].width + gap
                         || labels[j].left >= labels[i].left + labels[i].width + gap);
    }
  /* Spread out, all three show where they were asked for. */
  labels[0] = (SvAxisLabel){ .x = 10.0, .width = 30.0, .anchor = 0.0 };
  labels[1] = (SvAxisLabel){ .x = 270.0, .width = 40.0, .anchor = 1.0 };
  labels[2] = (SvAxisLabel){ .x = 140.0, .width = 30.0, .anchor = 0.5 };
  g_assert_cmpuint (sv_axis_labels_place (labels, 3, axis, gap), ==, 3);
  g_assert_cmpfloat (labels[0].left, ==, 10.0);
  g_assert_cmpfloat (labels[1].left, ==, 230.0);
  g_assert_cmpfloat (labels[2].left, ==, 125.0);
}

/* ---- the status line ---- */

static void
test_status_pinned_and_region (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  SvParamsPanel *panel = sv_window_get_params_panel (w);
  SvJobResult *pinned, *live;
  g_autofree char *pinned_words = NULL, *live_words = NULL, *region_words = NULL;
  const guint lo[3] = { 4, 10, 12 }, hi[3] = { 20, 40, 52 };
  g_autoptr (GError) error = NULL;
  SvSlicParams p;

  /* Pin, then change two values: the live run gives another count. */
  pinned = sv_job_result_ref (sv_window_get_result (w));
  sv_window_pin (w);
  sv_params_panel_get_params (panel, &p);
  p.compactness = 3.0;
  p.n_segments = pinned->params.n_segments * 2;
  sv_params_panel_set_params (panel, &p);
  wait_for_current_result (w);
  live = sv_window_get_result (w);
  g_assert_cmpuint (live->stats.n_labels, !=, pinned->stats.n_labels);

  /* Flipped to the pinned labels: which pin, the pinned run's count and values. */
  sv_window_flip_pinned (w);
  g_assert_true (sv_window_get_showing_pinned (w));
  {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    pinned_words = g_strdup_printf ("pin 1 · %" G_GSIZE_FORMAT " supervoxels · %" G_GINT64_FORMAT
                                    " segments, compactness %s",
                                    pinned->stats.n_labels, pinned->params.n_segments,
                                    sv_format_double (buf, pinned->params.compactness));
  }
  g_test_message ("flipped: %s", sv_window_get_result_text (w));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), pinned_words));
  {
    g_autofree char *live_count
        = g_strdup_printf (" %" G_GSIZE_FORMAT " supervoxels", live->stats.n_labels);
    g_assert_null (strstr (sv_window_get_result_text (w), live_count));
  }

  /* And back: the live run's words. */
  sv_window_flip_pinned (w);
  live_words = g_strdup_printf ("exact · %" G_GSIZE_FORMAT " supervoxels", live->stats.n_labels);
  g_test_message ("live: %s", sv_window_get_result_text (w));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), live_words));
  sv_job_result_unref (pinned);

  /* A region's run: "region preview" and the region's size, z×y×x. */
  g_assert_true (sv_window_set_region (w, lo, hi, &error));
  g_assert_no_error (error);
  wait_for_current_result (w);
  g_test_message ("region: %s", sv_window_get_result_text (w));
  region_words = g_strdup_printf (
      "region preview %u×%u×%u voxels · exact · %" G_GSIZE_FORMAT " supervoxels", hi[0] - lo[0],
      hi[1] - lo[1], hi[2] - lo[2], sv_window_get_result (w)->stats.n_labels);
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), region_words));
  sv_window_run_whole_volume (w);
  wait_for_current_result (w);
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), "exact · "));
}

/* ---- 2D images ---- */

static gboolean
teaching_note_measured (gpointer window)
{
  g_autofree char *legend = sv_window_get_teaching_legend (window);
  return sv_window_is_settled (window) && legend && strstr (legend, "changed cluster");
}

static gboolean
pick_has_numbers (gpointer window)
{
  const char *n = sv_pick_panel_get_text (sv_window_get_pick_panel (window), "voxels");
  return n && g_ascii_isdigit (n[0]);
}

static void
test_planar_says_pixels (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  SvSliceView *xy = sv_window_get_slice_view (w, SV_AXIS_XY);
  SvParamsPanel *panel = sv_window_get_params_panel (w);
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-planar-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "one-slice.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (SvVolume) v = sv_volume_new (1, 96, 128, 1, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *legend = NULL;
  GtkWidget *slider, *spacing_z, *whole;
  const char *text;

  /* The 3D sample first: z is there. */
  slider = find_by_tooltip (GTK_WIDGET (xy), GTK_TYPE_SCALE, "Slice");
  spacing_z = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "voxel size along z");
  g_assert_nonnull (slider);
  g_assert_nonnull (spacing_z);
  g_assert_true (gtk_widget_is_visible (slider));
  g_assert_true (gtk_widget_is_visible (spacing_z));
  whole = find_by_tooltip (gtk_window_get_titlebar (GTK_WINDOW (w)), GTK_TYPE_BUTTON,
                           "Run on the whole volume");
  g_assert_nonnull (whole);
  g_assert_cmpstr (gtk_button_get_label (GTK_BUTTON (whole)), ==, "Whole Volume");

  /* A one-slice TIFF with no calibration. */
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = (float)(((i % 128) / 32 + (i / 128) / 24) % 2) * 0.6f + 0.2f;
  g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U8, &error));
  g_assert_no_error (error);
  open_and_wait (w, file);
  wait_for_current_result (w);
  g_assert_cmpuint (sv_window_get_volume (w)->nz, ==, 1);
  settle_layout (w);

  /* No z controls. */
  g_assert_false (gtk_widget_is_visible (slider));
  g_assert_false (gtk_widget_is_visible (spacing_z));
  /* The orthogonal views' button follows its action, off. */
  g_assert_false (gtk_widget_get_sensitive (find_by_tooltip (
      gtk_window_get_titlebar (GTK_WINDOW (w)), GTK_TYPE_TOGGLE_BUTTON, "Orthogonal")));
  g_assert_true (g_str_has_suffix (gtk_window_get_title (GTK_WINDOW (w)), " — 96×128"));
  whole = find_by_tooltip (gtk_window_get_titlebar (GTK_WINDOW (w)), GTK_TYPE_BUTTON,
                           "Run on the whole image");
  g_assert_nonnull (whole);
  g_assert_cmpstr (gtk_button_get_label (GTK_BUTTON (whole)), ==, "Whole Image");

  /* Pixels in the status bar, the scale bar and the hover. */
  text = sv_window_get_result_text (w);
  g_test_message ("status: %s", text);
  g_assert_nonnull (strstr (text, " superpixels in "));
  text = sv_slice_view_get_scale_bar_text (xy);
  g_test_message ("scale bar: %s", text);
  g_assert_true (g_str_has_suffix (text, " px"));
  g_signal_emit_by_name (xy, "hover", 0, 5, 7);
  text = sv_window_get_hover_text (w);
  g_test_message ("hover: %s", text);
  g_assert_true (g_str_has_prefix (text, "x 7  y 5  ·"));
  g_assert_null (strstr (text, "z "));

  /* The quality tab's rows and the selection: pixels, an area, no z. */
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (find_by_tooltip (
                       GTK_WIDGET (sv_window_get_quality_panel (w)), GTK_TYPE_LABEL, "distinct"))),
                   ==, "Superpixels");
  g_signal_emit_by_name (xy, "pick", 0, 20, 30);
  wait_until (pick_has_numbers, w, "the picked superpixel's numbers");
  text = sv_pick_panel_get_text (sv_window_get_pick_panel (w), "volume");
  g_test_message ("area: %s", text);
  g_assert_true (g_str_has_suffix (text, " square pixels (the file gives no pixel size)"));
  g_assert_null (strstr (sv_pick_panel_get_text (sv_window_get_pick_panel (w), "bounds"), "z"));
  g_assert_null (strstr (sv_pick_panel_get_text (sv_window_get_pick_panel (w), "centre"), "z"));
  save_window_png (w, "gui-planar.png");

  /* Teaching's note. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.teach-step", NULL));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.teach-step", NULL));
  wait_until (teaching_note_measured, w, "teaching's note with its numbers");
  legend = sv_window_get_teaching_legend (w);
  g_test_message ("teaching: %s", legend);
  g_assert_nonnull (strstr (legend, "pixels (y × x)"));
  g_assert_nonnull (strstr (legend, "each pixel joins"));
  g_assert_null (strstr (legend, "voxel"));
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/readable/quality-fits-the-default-window", Fixture, NULL, fixture_setup,
              test_quality_fits, fixture_teardown);
  g_test_add_func ("/gui/readable/size-axis-numbers-apart", test_axis_labels_apart);
  g_test_add ("/gui/readable/status-says-pinned-and-region", Fixture, NULL, fixture_setup,
              test_status_pinned_and_region, fixture_teardown);
  g_test_add ("/gui/readable/a-2d-image-says-pixels", Fixture, NULL, fixture_setup,
              test_planar_says_pixels, fixture_teardown);
  return g_test_run ();
}

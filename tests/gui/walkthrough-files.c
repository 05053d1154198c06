/* The new user's pass (test-gui-walkthrough.c) after the EM stack: a float
 * MRI in mm with a NaN, a run with few labels on it, the quality tab, and
 * an RGB photo with no calibration. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-command.h"
#include "gui-test-pointer.h"
#include "gui-test-util.h"
#include "walkthrough.h"

static const guint mri_shape[3] = { 20, 80, 80 };

static gboolean
masked_run_shown (gpointer data)
{
  return !sv_window_is_busy (walk.window) && sv_window_get_result (walk.window) != NULL;
}

static GtkWidget *
find_button (GtkWidget *root, const char *prefix)
{
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found;
      if (GTK_IS_BUTTON (c) && gtk_button_get_label (GTK_BUTTON (c))
          && g_str_has_prefix (gtk_button_get_label (GTK_BUTTON (c)), prefix))
        return c;
      if ((found = find_button (c, prefix)))
        return found;
    }
  return NULL;
}

/* Trap 5: a float MRI with one NaN opens, says where it is, and runs once
 * it is masked out; trap 6: the compactness the drag set is kept and said,
 * the segments are this file's, with its size in mm³. */
void
step_float_file_with_nan (void)
{
  static const double mm[3] = { 1.2, 0.9, 0.9 };
  g_autofree char *path = NULL, *kept = NULL;
  char c[G_ASCII_DTOSTR_BUF_SIZE];
  const char *bar, *size;
  GtkWidget *button;
  SvJobResult *r;
  SvSlicParams p;

  if (!have_xdotool ())
    return;
  path = walk_write_stack ("mri.tif", mri_shape, mm, "mm", SV_SAMPLE_F32, 900.0);
  walk_open (path);
  g_assert_cmpuint (sv_window_get_volume (walk.window)->nx, ==, mri_shape[2]);
  g_assert_cmpuint (sv_window_get_n_nonfinite (walk.window), ==, 1);
  bar = sv_window_get_nonfinite_text (walk.window);
  g_test_message ("bar: %s\nstatus: %s", bar, sv_window_get_result_text (walk.window));
  g_assert_nonnull (strstr (bar, "1 voxel holds NaN"));
  g_assert_nonnull (strstr (bar, "x 41, y 30, z 7"));
  g_assert_cmpstr (sv_window_get_progress_text (walk.window), ==, "failed");
  g_assert_nonnull (strstr (sv_window_get_result_text (walk.window), "NaN values at 1 voxel"));

  sv_params_panel_get_params (walk_panel (), &p);
  g_assert_cmpfloat (p.compactness, ==, walk.compactness);
  kept = g_strdup_printf ("Kept compactness %s from the last file.",
                          sv_format_double (c, walk.compactness));
  g_assert_cmpstr (sv_params_panel_get_kept_text (walk_panel ()), ==, kept);
  g_assert_cmpint (p.n_segments, ==,
                   sv_params_default_n_segments (mri_shape[0], mri_shape[1], mri_shape[2], 1e6));
  size = sv_params_panel_get_segment_size_text (walk_panel ());
  g_test_message ("%" G_GINT64_FORMAT " segments: %s", p.n_segments, size);
  g_assert_true (g_str_has_suffix (size, " mm³"));
  walk_assert_width ("the NaN bar");
  walk_shoot ("12-nan-file");

  /* The bar's button, clicked. */
  button = find_button (GTK_WIDGET (walk.window), "Mask out the 1 non-finite voxel");
  g_assert_nonnull (button);
  click_widget (GTK_WINDOW (walk.window), button);
  wait_until (masked_run_shown, NULL, "the run with the NaN masked out");
  r = sv_window_get_result (walk.window);
  g_test_message ("status: %s", sv_window_get_result_text (walk.window));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (walk.window), "exact"));
  g_assert_cmpint (sv_job_result_label_at (r, 7, 30, 41), ==, r->params.start_label - 1);
  g_assert_cmpint (sv_job_result_label_at (r, 7, 30, 42), >=, r->params.start_label);
  g_assert_nonnull (strstr (sv_window_get_nonfinite_text (walk.window), "masked out"));
  /* The bar without its button: measured as tall for any width as for
   * none (a critical otherwise, fatal here). */
  wait_for_layout (walk.window);
  walk_assert_width ("the NaN masked out");
  walk_shoot ("13-nan-masked");
}

/* Trap 8: with few labels the hint leaves out what is ticked already; a
 * typed compactness shows, travels and is kept in its shortest form. */
void
step_few_labels (void)
{
  GtkWidget *compactness = walk_field (GTK_TYPE_SPIN_BUTTON, "compactness, typed");
  g_autofree char *line = NULL;
  const char *hint;
  SvJobResult *r;

  if (!have_xdotool ())
    return;
  enter_number (walk.window, compactness, "0.001");
  wait_for_current_result (walk.window);
  r = sv_window_get_result (walk.window);
  hint = sv_window_get_warning_text (walk.window);
  g_test_message ("%" G_GSIZE_FORMAT " labels of %" G_GINT64_FORMAT ": %s", r->stats.n_labels,
                  r->params.n_segments, hint);
  g_assert_nonnull (hint);
  g_assert_true (sv_params_panel_get_spacing_relative (walk_panel ()));
  g_assert_null (strstr (hint, "spacing relative"));
  g_assert_nonnull (strstr (hint, "Try a compactness ten times higher (0.01)"));
  walk_assert_width ("the hint");
  walk_shoot ("14-few-labels");

  enter_number (walk.window, compactness, "0.2");
  wait_for_current_result (walk.window);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (compactness)), ==, "0.2");
  line = sv_window_build_command (walk.window);
  g_assert_nonnull (strstr (line, " --compactness 0.2 "));
  g_assert_null (sv_window_get_warning_text (walk.window));

  /* A value %g would round: the next file says it as it is. */
  enter_number (walk.window, compactness, "0.123456789");
  wait_for_current_result (walk.window);
  g_clear_pointer (&line, g_free);
  line = sv_window_build_command (walk.window);
  g_assert_nonnull (strstr (line, " --compactness 0.123456789 "));
  walk.compactness = 0.123456789;
}

/* Trap 9: the quality tab, clicked, needs no scrolling in the window's
 * size, and its numbers have no exponent. */
void
step_quality_fits (void)
{
  GtkWidget *quality = GTK_WIDGET (sv_window_get_quality_panel (walk.window));
  GtkWidget *scroller = gtk_widget_get_first_child (quality);
  GtkAdjustment *adj;
  int natural = 0;

  if (!have_xdotool ())
    return;
  click_tab (walk.window, quality);
  wait_until (walk_quality_current, NULL, "the quality of the labels");
  wait_for_layout (walk.window);
  g_assert_true (gtk_widget_get_mapped (quality));
  g_assert_true (GTK_IS_SCROLLED_WINDOW (scroller));
  gtk_widget_measure (gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (scroller)),
                      GTK_ORIENTATION_VERTICAL, gtk_widget_get_width (scroller), NULL, &natural,
                      NULL, NULL);
  adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
  g_test_message ("the quality tab: %d px of content, %.0f px of room", natural,
                  gtk_adjustment_get_page_size (adj));
  g_assert_cmpfloat (gtk_adjustment_get_page_size (adj), >, 0);
  g_assert_cmpfloat (natural, <=, gtk_adjustment_get_page_size (adj));
  g_assert_null (strstr (sv_quality_panel_get_text (SV_QUALITY_PANEL (quality), "labels"), "e+"));
  walk_assert_width ("the quality tab");
  walk_shoot ("15-quality");
}

/* Colour blocks with a soft gradient, as a photo of a few objects. */
static char *
write_photo (void)
{
  g_autofree char *path = g_build_filename (walk.dir, "photo.tif", NULL);
  g_autoptr (SvVolume) v = sv_volume_new (1, 120, 160, 3, NULL);
  g_autoptr (GError) error = NULL;

  for (guint y = 0; y < 120; y++)
    for (guint x = 0; x < 160; x++)
      {
        float *px = v->data + ((gsize)y * 160 + x) * 3;
        guint block = (x / 40) + 4 * (y / 40);
        px[0] = (float)((block * 37) % 11) / 11.0f;
        px[1] = (float)((block * 53) % 7) / 7.0f * 0.8f + (float)y / 600.0f;
        px[2] = (float)((block * 71) % 5) / 5.0f * 0.7f + (float)x / 800.0f;
      }
  g_assert_true (sv_tiff_write_volume_full (path, v, SV_SAMPLE_U8, NULL, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

static gboolean
rects_meet (const graphene_rect_t *a, const graphene_rect_t *b)
{
  return a->origin.x < b->origin.x + b->size.width && b->origin.x < a->origin.x + a->size.width
         && a->origin.y < b->origin.y + b->size.height
         && b->origin.y < a->origin.y + a->size.height;
}

/* Trap 9: a photo has no z controls and speaks of pixels; trap 3: with no
 * calibration the window uses ones, as supervox-cli's file-relative does,
 * with a note; trap 2: the copied line writes the exported file; trap 8:
 * the kept compactness as it was typed. A note on a value is in view and
 * over no other field. */
void
step_photo (void)
{
  SvSliceView *xy = sv_window_get_slice_view (walk.window, SV_AXIS_XY);
  GtkWidget *slider = find_by_tooltip (GTK_WIDGET (xy), GTK_TYPE_SCALE, "Slice");
  g_autofree char *path = NULL, *photo_dir = NULL, *from_cli = NULL, *relative = NULL, *line = NULL,
                  *kept = NULL;
  g_autoptr (GError) error = NULL;
  char c[G_ASCII_DTOSTR_BUF_SIZE];
  SvTestRun run;
  SvSlicParams p;

  if (!have_xdotool ())
    return;
  path = write_photo ();
  walk_open (path);
  wait_for_layout (walk.window);
  g_assert_nonnull (slider);
  g_assert_false (gtk_widget_is_visible (slider));
  g_assert_false (gtk_widget_is_visible (walk_field (GTK_TYPE_SPIN_BUTTON, "voxel size along z")));
  g_assert_nonnull (strstr (sv_window_get_result_text (walk.window), " superpixels in "));
  g_assert_true (g_str_has_suffix (sv_slice_view_get_scale_bar_text (xy), " px"));
  sv_params_panel_get_params (walk_panel (), &p);
  g_assert_cmpfloat (p.spacing[1], ==, 1.0);
  g_assert_cmpfloat (p.spacing[2], ==, 1.0);
  kept = g_strdup_printf ("Kept compactness %s from the last file.",
                          sv_format_double (c, walk.compactness));
  g_assert_cmpstr (sv_params_panel_get_kept_text (walk_panel ()), ==, kept);
  walk_assert_width ("a photo");
  walk_shoot ("16-photo");

  photo_dir = g_build_filename (walk.dir, "photo", NULL);
  from_cli = assert_copied_command_writes_export (walk.window, photo_dir);
  /* file-relative on a file with no spacing: ones, with a note, and the
   * same labels. */
  relative = g_build_filename (photo_dir, "relative.tif", NULL);
  line = g_strdup_printf ("supervox-cli slic photo.tif -o '%s' --n-segments %" G_GINT64_FORMAT
                          " --compactness %s --spacing file-relative",
                          relative, p.n_segments, sv_format_double (c, p.compactness));
  run = run_shell (walk.dir, line);
  g_test_message ("%s", run.err);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "--spacing file-relative uses ones"));
  sv_test_run_clear (&run);
  {
    g_autoptr (SvLabels) a = sv_tiff_read_labels (from_cli, &error);
    g_autoptr (SvLabels) b = sv_tiff_read_labels (relative, &error);
    g_assert_no_error (error);
    g_assert_cmpmem (a->data, sv_labels_n_voxels (a) * sizeof (gint32), b->data,
                     sv_labels_n_voxels (b) * sizeof (gint32));
  }

  /* A value refused: the note is in view, and with three channels (the
   * "Segment on" row shown) over no other field. */
  type_into (walk.window, walk_field (GTK_TYPE_SPIN_BUTTON, "compactness, typed"), "0");
  xdotool (walk.window, "key Return");
  wait_until (walk_note_shown, NULL, "the note on the compactness");
  g_test_message ("note: %s", sv_params_panel_get_note (walk_panel ()));
  walk_assert_in_view (walk_note_label (), "the note");
  {
    GtkWidget *segment_on = walk_field (GTK_TYPE_DROP_DOWN, "Segment on");
    graphene_rect_t note_box, other_box;

    g_assert_true (gtk_widget_is_visible (segment_on));
    g_assert_true (
        gtk_widget_compute_bounds (walk_note_label (), GTK_WIDGET (walk_panel ()), &note_box));
    g_assert_true (gtk_widget_compute_bounds (segment_on, GTK_WIDGET (walk_panel ()), &other_box));
    g_assert_false (rects_meet (&note_box, &other_box));
  }
  walk_shoot ("17-photo-note");
}

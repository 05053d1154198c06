/* The new user's pass (test-gui-walkthrough.c) on a 40×4×4 nm EM stack:
 * opening it, hover, a pick and a drag, "Copy as command", the spacing
 * defaults, Stop. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-command.h"
#include "gui-test-pointer.h"
#include "gui-test-util.h"
#include "walkthrough.h"

/* A stack whose exact run takes long enough on two cores that a drag
 * shows coarse previews, with their long status words. */
static const guint em_shape[3] = { 24, 160, 160 };
#define EM_NAME                                                                                    \
  "a-very-long-file-name-as-microscopes-write-them-2024-11-26-session-3-stack-0042-"               \
  "40x4x4nm-aligned-cropped.tif"

void
step_em_stack_opens (void)
{
  static const double nm[3] = { 40.0, 4.0, 4.0 };
  g_autofree char *path = NULL;
  const char *size;
  double each;
  SvSlicParams p;

  if (!have_xdotool ())
    return;
  path = walk_write_stack (EM_NAME, em_shape, nm, "nm", SV_SAMPLE_U8, 1.0);
  walk_open (path);
  g_assert_nonnull (strstr (gtk_window_get_title (GTK_WINDOW (walk.window)), EM_NAME));
  walk_assert_width ("a long file name");

  /* Relative to the finest axis, the window's default: 10, 1, 1 (nm). */
  sv_params_panel_get_params (walk_panel (), &p);
  g_assert_true (sv_params_panel_get_spacing_relative (walk_panel ()));
  g_assert_cmpfloat (p.spacing[0], ==, 10.0);
  g_assert_cmpfloat (p.spacing[1], ==, 1.0);
  g_assert_cmpfloat (p.spacing[2], ==, 1.0);
  g_assert_nonnull (strstr (sv_params_panel_get_spacing_unit_text (walk_panel ()), "nm"));

  g_assert_cmpint (p.n_segments, ==,
                   sv_params_default_n_segments (em_shape[0], em_shape[1], em_shape[2], 1e6));
  g_assert_cmpint (p.n_segments, !=, 400);
  size = sv_params_panel_get_segment_size_text (walk_panel ());
  g_test_message ("%" G_GINT64_FORMAT " segments: %s", p.n_segments, size);
  g_assert_true (g_str_has_prefix (size, "≈ "));
  each = walk_read_quantity (size + strlen ("≈ "));
  g_assert_cmpfloat (fabs (each - (double)em_shape[0] * em_shape[1] * em_shape[2] / p.n_segments),
                     <, 0.05 * each);
  /* The physical size on a line of its own, in nm³: 40·4·4 per voxel. */
  g_assert_nonnull (strstr (size, " voxels each\n"));
  g_assert_true (g_str_has_suffix (size, " nm³"));
  g_assert_cmpfloat (fabs (walk_read_quantity (strchr (size, '\n') + 1) - each * 640.0), <,
                     0.05 * each * 640.0);
  walk_shoot ("01-em-stack");
}

typedef struct
{
  GArray *values; /* compactness after each change */
  gboolean want_dragging;
} Drag;

static void
compactness_changed_cb (SvParamsPanel *panel, const SvSlicParams *p, Drag *d)
{
  if (g_array_index (d->values, double, d->values->len - 1) != p->compactness)
    g_array_append_val (d->values, p->compactness);
}

static gboolean
dragging_is (gpointer data)
{
  return sv_params_panel_get_dragging (walk_panel ()) == ((Drag *)data)->want_dragging;
}

static gboolean
n_values_reached (gpointer data)
{
  Drag *d = data;
  return d->values->len
         >= GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (walk_panel ()), "sv-test-want"));
}

static gboolean
slice_moved (gpointer from)
{
  return sv_slice_view_get_slice (sv_window_get_slice_view (walk.window, SV_AXIS_XY))
         != GPOINTER_TO_UINT (from);
}

static gboolean
pick_has_numbers (gpointer window)
{
  const char *voxels = sv_pick_panel_get_text (sv_window_get_pick_panel (window), "voxels");
  return voxels && g_ascii_isdigit (voxels[0]);
}

/* Where `widget` is in the panel, from its top. */
static double
panel_y (GtkWidget *widget)
{
  graphene_rect_t box;

  g_assert_true (gtk_widget_compute_bounds (widget, GTK_WIDGET (walk_panel ()), &box));
  return box.origin.y;
}

/* Trap 1: hover, a drag and a long note leave the window's width alone and
 * the panel still under the pointer; the value under the knob follows the
 * pointer one way. Trap 9: a picked supervoxel's volume without an
 * exponent. The hover follows the wheel through the slices. */
void
step_hover_pick_and_drag (void)
{
  SvWindow *w = walk.window;
  SvSliceView *xy = sv_window_get_slice_view (w, SV_AXIS_XY);
  GtkWidget *scale = walk_field (GTK_TYPE_SCALE, "compactness on a log");
  GtkWidget *segments = walk_field (GTK_TYPE_SPIN_BUTTON, "n_segments");
  GtkWidget *knob = find_knob (scale);
  Drag d = { g_array_new (FALSE, FALSE, sizeof (double)), FALSE };
  g_autofree char *count = NULL, *back = NULL;
  const char *volume;
  double knob_y;
  gulong changed;
  guint slice;
  gint32 label;
  gsize n = 0;
  SvSlicParams p;
  int x, y;

  if (!have_xdotool ())
    return;
  /* Hover: where the pointer is, the intensity and the label. */
  walk_point_at_view (0.4, 0.6);
  wait_until (walk_hover_on_slice_shown, NULL, "the hover readout");
  g_test_message ("hover: %s", sv_window_get_hover_text (w));
  g_assert_nonnull (strstr (sv_window_get_hover_text (w), "label "));
  walk_assert_width ("hover");

  /* A click selects the supervoxel under the pointer. */
  xdotool (w, "click 1");
  wait_until (pick_has_numbers, w, "the picked supervoxel's numbers");
  g_assert_true (sv_window_get_selected (w, &label));
  {
    const SvLabels *l = sv_job_result_get_labels (sv_window_get_result (w), NULL);
    for (gsize i = 0; i < sv_labels_n_voxels (l); i++)
      n += l->data[i] == label;
  }
  volume = sv_pick_panel_get_text (sv_window_get_pick_panel (w), "volume");
  g_test_message ("supervoxel %d: %" G_GSIZE_FORMAT " voxels, %s", label, n, volume);
  count = g_strdup_printf ("%" G_GSIZE_FORMAT, n);
  g_assert_cmpstr (sv_pick_panel_get_text (sv_window_get_pick_panel (w), "voxels"), ==, count);
  g_assert_null (strchr (volume, 'e'));
  g_assert_true (g_str_has_suffix (volume, " nm³"));
  g_assert_cmpfloat (fabs (walk_read_quantity (volume) - n * 640.0), <=, 0.001 * n * 640.0);
  walk_assert_width ("a pick");
  walk_shoot ("02-hover-and-pick");

  /* The wheel and the arrow keys, the pointer at rest: the readout is of
   * the slice shown, not of the one the pointer last moved over. */
  slice = sv_slice_view_get_slice (xy);
  xdotool (w, "click 5");
  wait_until (slice_moved, GUINT_TO_POINTER (slice), "the wheel to move the slice");
  wait_until (walk_hover_on_slice_shown, NULL, "the hover readout after the wheel");
  slice = sv_slice_view_get_slice (xy);
  xdotool (w, "key Up");
  wait_until (slice_moved, GUINT_TO_POINTER (slice), "Up to move the slice");
  g_test_message ("slice %u after Up: %s", sv_slice_view_get_slice (xy),
                  sv_window_get_hover_text (w));
  g_assert_true (walk_hover_on_slice_shown (NULL));

  /* A drag of the compactness knob, 12 steps of 5 px to the right, each
   * seen before the next. */
  sv_params_panel_get_params (walk_panel (), &p);
  g_array_append_val (d.values, p.compactness);
  changed
      = g_signal_connect (walk_panel (), "params-changed", G_CALLBACK (compactness_changed_cb), &d);
  surface_point (w, knob, gtk_widget_get_width (knob) / 2.0, gtk_widget_get_height (knob) / 2.0, &x,
                 &y);
  xdotool (w, "mousemove --window WINDOW %d %d mousedown 1", x, y);
  d.want_dragging = TRUE;
  wait_until (dragging_is, &d, "the press on the knob");
  for (guint step = 1; step <= 12; step++)
    {
      xdotool (w, "mousemove --window WINDOW %d %d", x + 5 * (int)step, y);
      g_object_set_data (G_OBJECT (walk_panel ()), "sv-test-want", GUINT_TO_POINTER (1 + step));
      wait_until (n_values_reached, &d, "the knob to follow the pointer");
    }
  walk_shoot ("03-dragging");
  xdotool (w, "mouseup 1");
  d.want_dragging = FALSE;
  wait_until (dragging_is, &d, "the release");
  wait_for_current_result (w);
  g_signal_handler_disconnect (walk_panel (), changed);
  for (guint i = 1; i < d.values->len; i++)
    {
      g_test_message ("compactness %g", g_array_index (d.values, double, i));
      g_assert_cmpfloat (g_array_index (d.values, double, i), >,
                         g_array_index (d.values, double, i - 1));
    }
  walk.compactness = g_array_index (d.values, double, d.values->len - 1);
  /* 60 px on a slider of seven decades: more than tenfold. */
  g_assert_cmpfloat (walk.compactness, >, 10 * p.compactness);
  walk_assert_width ("the drag");
  g_array_unref (d.values);

  /* A long note: more segments than the window computes. It is in view,
   * and nothing above it moved: not the size under the field either,
   * whose number of lines does not follow the count. */
  knob_y = panel_y (scale);
  type_into (w, segments, "100000000");
  xdotool (w, "key Return");
  wait_until (walk_note_shown, NULL, "the note on the segments");
  g_test_message ("note: %s", sv_params_panel_get_note (walk_panel ()));
  g_assert_nonnull (strstr (sv_params_panel_get_note (walk_panel ()), "lowered to 1000000"));
  walk_assert_in_view (walk_note_label (), "the note");
  g_assert_cmpfloat (panel_y (scale), ==, knob_y);
  walk_assert_width ("a long note");
  walk_shoot ("04-long-note");
  back = g_strdup_printf ("%" G_GINT64_FORMAT, p.n_segments);
  enter_number (w, segments, back);
  wait_for_current_result (w);
  g_assert_null (sv_params_panel_get_note (walk_panel ()));
  g_assert_cmpfloat (panel_y (scale), ==, knob_y);
  walk_assert_width ("the segments typed back");
}

/* Trap 2: "Copy as command" writes the file Export Labels writes, with the
 * input's calibration; trap 8: its numbers in their shortest form. */
void
step_copy_as_command (void)
{
  g_autofree char *em_dir = g_build_filename (walk.dir, "em", NULL);
  g_autofree char *labels_path = NULL, *line = NULL, *flag = NULL;
  g_autoptr (SvLabels) labels = NULL;
  g_autoptr (GError) error = NULL;
  char c[G_ASCII_DTOSTR_BUF_SIZE];

  if (!have_xdotool ())
    return;
  labels_path = assert_copied_command_writes_export (walk.window, em_dir);
  g_assert_cmpstr (sv_window_get_toast_text (walk.window), ==,
                   "command copied: paste it into a terminal to make the same labels");
  labels = sv_tiff_read_labels (labels_path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (labels->unit, ==, "nm");
  g_assert_cmpfloat_with_epsilon (labels->spacing[0], 40.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (labels->spacing[1], 4.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (labels->spacing[2], 4.0, 1e-6);

  line = sv_window_build_command (walk.window);
  flag = g_strdup_printf (" --compactness %s ", sv_format_double (c, walk.compactness));
  g_test_message ("%s", line);
  g_assert_nonnull (strstr (line, flag));
  g_assert_null (strstr (line, "0000000"));
  walk_shoot ("05-command-copied");
}

/* Trap 3: the two defaults side by side in supervox-cli slic --help (the
 * fallback on a file with none is step_photo's). */
void
step_spacing_defaults_said (void)
{
  SvTestRun run = run_shell (walk.dir, "supervox-cli slic --help");
  g_autofree char *flat = g_strdelimit (g_strdup (run.out), "\n", ' ');

  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (flat, "supervox-cli's default is ones"));
  g_assert_nonnull (strstr (flat, "the window's is file-relative"));
  g_assert_nonnull (strstr (flat, "ones for a file with none, with a note"));
  sv_test_run_clear (&run);
}

typedef struct
{
  GArray *at; /* seconds since t0, per text */
  GPtrArray *texts;
  gint64 t0;
} Progress;

static void
progress_text_cb (GtkProgressBar *bar, GParamSpec *pspec, Progress *pr)
{
  double t = (double)(g_get_monotonic_time () - pr->t0) / G_USEC_PER_SEC;

  g_array_append_val (pr->at, t);
  g_ptr_array_add (pr->texts, g_strdup (gtk_progress_bar_get_text (bar)));
}

static gboolean
iteration_reached (gpointer data)
{
  SvJobResult *r = sv_window_get_result (walk.window);
  return r && r->in_progress_iteration >= GPOINTER_TO_UINT (data);
}

static gboolean
stopped_measured (gpointer data)
{
  SvQuality *q = sv_quality_panel_get_quality (sv_window_get_quality_panel (walk.window));
  return q && q->generation == sv_window_get_result (walk.window)->generation;
}

/* Trap 9: the time left said once the run has timed a few iterations of
 * its own, beside the pace of the iterations after it, for the log. It is
 * not asserted: wall-clock pace on a shared machine is no oracle;
 * tests/engine/test-job-timing.c checks the estimate against a clock of
 * its own. */
static void
check_time_left (const Progress *pr, guint n_iter)
{
  double said = -1, t_said = 0, t_last = 0;
  guint k_said = 0, k_last = 0;

  for (guint i = 0; i < pr->texts->len; i++)
    {
      const char *text = g_ptr_array_index (pr->texts, i);
      guint k, n;
      double left;

      if (sscanf (text, "iteration %u of %u · about %lf s left", &k, &n, &left) == 3 && k >= 4
          && said < 0)
        said = left, k_said = k, t_said = g_array_index (pr->at, double, i);
      if (sscanf (text, "iteration %u of %u", &k, &n) == 2 && said >= 0)
        k_last = k, t_last = g_array_index (pr->at, double, i);
    }
  /* The bar's texts reach the main loop in bursts: a pace needs some. */
  if (said < 0 || k_last < k_said + 10 || t_last - t_said < 0.2)
    {
      g_test_message ("time left: not measurable here");
      return;
    }
  {
    double pace = (t_last - t_said) / (k_last - k_said);
    g_test_message ("at iteration %u: %.1f s left said, %.1f s at the pace seen after", k_said,
                    said, pace * (n_iter - k_said));
  }
}

/* Trap 4: Esc in the middle of a long run: the bar, the status line and
 * the quality tab say the same; trap 9: the time left, if measurable. */
void
step_stop_mid_run (void)
{
  SvWindow *w = walk.window;
  GtkWidget *bar = find_by_tooltip (GTK_WIDGET (w), GTK_TYPE_PROGRESS_BAR, "stage");
  GtkWidget *iterations = walk_field (GTK_TYPE_SPIN_BUTTON, "max_num_iter");
  SvQualityPanel *quality = sv_window_get_quality_panel (w);
  Progress pr = { g_array_new (FALSE, FALSE, sizeof (double)),
                  g_ptr_array_new_with_free_func (g_free), g_get_monotonic_time () };
  g_autofree char *stopped_at = NULL;
  const char *status, *state;
  SvJobResult *r;
  gulong handler;

  if (!have_xdotool ())
    return;
  g_assert_nonnull (bar);
  click_tab (w, GTK_WIDGET (sv_window_get_quality_panel (w)));
  /* Every iteration shown, as a long run's are. */
  g_setenv ("SV_JOB_LIVE_ITERATIONS", "always", TRUE);
  handler = g_signal_connect (bar, "notify::text", G_CALLBACK (progress_text_cb), &pr);
  enter_number (w, iterations, "100");
  wait_until (iteration_reached, GUINT_TO_POINTER (40), "iteration 40 of the long run");
  walk_point_at_view (0.5, 0.5);
  xdotool (w, "key Escape");
  wait_until (not_busy, w, "Stop");
  g_signal_handler_disconnect (bar, handler);
  g_unsetenv ("SV_JOB_LIVE_ITERATIONS");

  r = sv_window_get_result (w);
  g_assert_cmpuint (r->in_progress_iteration, <, 100);
  stopped_at = g_strdup_printf ("stopped after iteration %u of 100", r->in_progress_iteration);
  status = sv_window_get_result_text (w);
  g_test_message ("bar: %s; status: %s", sv_window_get_progress_text (w), status);
  g_assert_cmpstr (sv_window_get_progress_text (w), ==, "stopped");
  g_assert_true (g_str_has_prefix (status, stopped_at));
  g_assert_null (strstr (status, "running"));
  wait_until (stopped_measured, NULL, "the quality of the stopped labels");
  state = sv_quality_panel_get_state (quality);
  g_test_message ("quality: %s", state);
  g_assert_true (g_str_has_prefix (state, stopped_at));
  g_assert_null (strstr (state, "going"));
  /* Its stages were not timed: the legend gives no time for them. */
  g_test_message ("time: %s; %s", sv_quality_panel_get_text (quality, "time"),
                  sv_quality_panel_get_text (quality, "time-legend"));
  g_assert_null (strstr (sv_quality_panel_get_text (quality, "time-legend"), "ms"));
  walk_shoot ("06-stopped");
  check_time_left (&pr, 100);
  g_array_unref (pr.at);
  g_ptr_array_unref (pr.texts);

  /* Back to the default count: a run again, and "exact" again. */
  enter_number (w, iterations, "10");
  wait_for_current_result (w);
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), "exact"));
}

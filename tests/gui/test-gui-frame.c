/* Tests of the Supervox window under Xvfb: the frame that shows a changed
 * value shows its result too, when the last runs say that the run is
 * quick (sv-window-frame.c), for values set and for a real drag of the
 * compactness knob; without that wait it comes in a later frame.
 * The wait is given seconds here (SV_GUI_SAME_FRAME_MS), so that a slow
 * machine tests the mechanism and not its speed. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>

#include "gui-test-pointer.h"
#include "gui-test-util.h"

typedef struct
{
  SvSliceView *view;
  guint64 target;
  gint64 change_frame; /* the first frame painted after the change */
  gint64 drawn_frame;  /* the first frame painted with the target's labels */
} Watch;

/* A result set on the view before a frame's paint is drawn by that paint
 * (results arrive between frames, or in a frame's update phase). */
static void
after_paint_cb (GdkFrameClock *clock, Watch *w)
{
  SvJobResult *r = sv_slice_view_get_result (w->view);

  if (w->target == 0)
    return;
  if (w->change_frame < 0)
    w->change_frame = gdk_frame_clock_get_frame_counter (clock);
  if (w->drawn_frame < 0 && r != NULL && r->generation >= w->target)
    w->drawn_frame = gdk_frame_clock_get_frame_counter (clock);
}

static gboolean
target_drawn (gpointer data)
{
  return ((Watch *)data)->drawn_frame >= 0;
}

/* Sets the compactness and returns how many frames after the first one
 * painted after the change the new labels were drawn. */
static gint64
frames_to_result (SvWindow *window, Watch *w, double compactness)
{
  SvParamsPanel *panel = sv_window_get_params_panel (window);

  w->change_frame = w->drawn_frame = -1;
  sv_params_panel_set_compactness (panel, compactness);
  w->target = sv_window_get_generation (window);
  wait_until (target_drawn, w, "the new labels drawn");
  g_test_message ("compactness %g: changed in frame %" G_GINT64_FORMAT
                  ", its labels (a run of %.3f s) drawn in frame %" G_GINT64_FORMAT,
                  compactness, w->change_frame, sv_window_get_result (window)->seconds_total,
                  w->drawn_frame);
  g_assert_cmpint (w->change_frame, >=, 0);
  w->target = 0;
  wait_until (window_settled, window, "the run settled");
  return w->drawn_frame - w->change_frame;
}

static void
test_result_in_frame_of_change (Fixture *f, gconstpointer data)
{
  Watch w = { sv_window_get_slice_view (f->window, SV_AXIS_XY), 0, -1, -1 };
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (f->window));
  gulong handler = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &w);

  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvSlicParams params;

  /* Runs that take longer than the wait for a frame (200 iterations). */
  wait_until (window_settled, f->window, "the first run settled");
  sv_params_panel_get_params (panel, &params);
  params.max_num_iter = 200;
  sv_params_panel_set_params (panel, &params);
  wait_for_current_result (f->window);
  wait_until (window_settled, f->window, "the slower run settled");
  g_test_message ("a run of 200 iterations: %.3f s",
                  sv_window_get_result (f->window)->seconds_total);

  /* The last runs say the next takes well under the wait: the frame that
   * paints the moved slider draws its labels. */
  g_setenv ("SV_GUI_SAME_FRAME_MS", "5000", TRUE);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpint (frames_to_result (f->window, &w, 0.05 * (i + 1)), ==, 0);

  /* Not waiting, the run ends after that frame: its labels come later. */
  g_setenv ("SV_GUI_SAME_FRAME_MS", "0", TRUE);
  g_assert_cmpint (frames_to_result (f->window, &w, 0.02), >, 0);
  g_unsetenv ("SV_GUI_SAME_FRAME_MS");
  g_signal_handler_disconnect (clock, handler);
}

/* A real drag: each step's labels in the frame that moves the knob. */
typedef struct
{
  SvWindow *window;
  Watch watch;
  guint changes;
} DragWatch;

static void
drag_changed_cb (SvParamsPanel *panel, const SvSlicParams *params, DragWatch *d)
{
  d->changes++;
  d->watch.target = sv_window_get_generation (d->window);
  d->watch.change_frame = d->watch.drawn_frame = -1;
}

static gboolean
step_drawn (gpointer data)
{
  DragWatch *d = data;

  return d->changes > 0 && d->watch.drawn_frame >= 0;
}

static void
test_real_drag (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  GtkWidget *scale = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SCALE, "compactness on a log");
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (f->window));
  DragWatch d = { f->window, { sv_window_get_slice_view (f->window, SV_AXIS_XY), 0, -1, -1 }, 0 };
  gulong paint_handler, change_handler;
  GtkWidget *knob;
  int x, y;

  if (!have_xdotool ())
    return;
  wait_until (window_settled, f->window, "the first run settled");
  g_setenv ("SV_GUI_SAME_FRAME_MS", "5000", TRUE);
  knob = find_knob (scale);
  g_assert_nonnull (knob);
  paint_handler = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &d.watch);
  change_handler = g_signal_connect (panel, "params-changed", G_CALLBACK (drag_changed_cb), &d);
  /* The press takes the knob where it is drawn now; on a loaded machine a
   * press that missed it (the panel was laid out again between finding it
   * and pressing) moves nothing, and is made again. */
  for (guint attempt = 0;; attempt++)
    {
      surface_point (f->window, knob, gtk_widget_get_width (knob) / 2.0,
                     gtk_widget_get_height (knob) / 2.0, &x, &y);
      d.changes = 0;
      xdotool (f->window, "mousemove --window WINDOW %d %d mousedown 1", x, y);
      xdotool (f->window, "mousemove --window WINDOW %d %d", x + 6, y);
      if (wait_within (step_drawn, &d, 10000))
        break;
      g_test_message ("the press at (%d, %d) moved nothing: pressing again", x, y);
      g_assert_cmpuint (attempt, <, 3);
      xdotool (f->window, "mouseup 1");
      wait_until (window_settled, f->window, "the run settled");
    }
  for (guint step = 1; step <= 8; step++)
    {
      if (step > 1)
        {
          d.changes = 0;
          xdotool (f->window, "mousemove --window WINDOW %d %d", x + 6 * (int)step, y);
          wait_until (step_drawn, &d, "the step's labels drawn");
        }
      g_test_message ("step %u: moved in frame %" G_GINT64_FORMAT
                      ", labels drawn in frame %" G_GINT64_FORMAT,
                      step, d.watch.change_frame, d.watch.drawn_frame);
      g_assert_cmpint (d.watch.drawn_frame, ==, d.watch.change_frame);
    }
  xdotool (f->window, "mouseup 1");
  wait_for_current_result (f->window);
  save_window_png (f->window, "gui-frame-drag.png");
  g_unsetenv ("SV_GUI_SAME_FRAME_MS");
  g_signal_handler_disconnect (clock, paint_handler);
  g_signal_handler_disconnect (panel, change_handler);
}

/* By default a frame may wait for all of its refresh interval but a
 * millisecond; the variable decides when set, and 0 turns it off. */
static void
test_wait_of_a_frame (Fixture *f, gconstpointer data)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (f->window));
  gint64 refresh = 0;

  g_unsetenv ("SV_GUI_SAME_FRAME_MS");
  wait_until (window_settled, f->window, "the first run settled");
  gdk_frame_clock_get_refresh_info (clock, gdk_frame_clock_get_frame_time (clock), &refresh,
                                    NULL);
  g_test_message ("refresh interval %" G_GINT64_FORMAT " µs, a frame may wait %" G_GINT64_FORMAT
                  " µs",
                  refresh, sv_window_get_frame_wait_us (f->window));
  g_assert_cmpint (sv_window_get_frame_wait_us (f->window), ==,
                   (refresh > 0 ? refresh : 16667) - 1000);
  g_setenv ("SV_GUI_SAME_FRAME_MS", "7", TRUE);
  g_assert_cmpint (sv_window_get_frame_wait_us (f->window), ==, 7000);
  g_setenv ("SV_GUI_SAME_FRAME_MS", "0", TRUE);
  g_assert_cmpint (sv_window_get_frame_wait_us (f->window), ==, 0);
  g_unsetenv ("SV_GUI_SAME_FRAME_MS");
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/frame/result-in-frame-of-change", Fixture, NULL, fixture_setup,
              test_result_in_frame_of_change, fixture_teardown);
  g_test_add ("/gui/frame/real-drag", Fixture, NULL, fixture_setup, test_real_drag,
              fixture_teardown);
  g_test_add ("/gui/frame/wait-of-a-frame", Fixture, NULL, fixture_setup, test_wait_of_a_frame,
              fixture_teardown);
  return g_test_run ();
}

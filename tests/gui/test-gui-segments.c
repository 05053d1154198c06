/* Tests of the Segments slider under Xvfb: a real drag to the right gives
 * more segments at every step and the exact result on release, and a count typed in the entry moves the slider.
 * Real pointer and key events come from xdotool (the tests skip without
 * it). */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-pointer.h"
#include "gui-test-util.h"

/* A volume large enough that a drag on the CPU shows coarse previews. */
#define DRAG_NZ 48
#define DRAG_NY 224
#define DRAG_NX 224

typedef struct
{
  SvParamsPanel *panel;
  GArray *counts; /* the segment count after each change */
  guint want_counts;
  gboolean want_dragging;
} Drag;

static void
segments_changed_cb (SvParamsPanel *panel, const SvSlicParams *p, Drag *d)
{
  if (g_array_index (d->counts, gint64, d->counts->len - 1) != p->n_segments)
    g_array_append_val (d->counts, p->n_segments);
}

static gboolean
dragging_is (gpointer data)
{
  Drag *d = data;
  return sv_params_panel_get_dragging (d->panel) == d->want_dragging;
}

static gboolean
count_changes_reached (gpointer data)
{
  Drag *d = data;
  return d->counts->len >= d->want_counts;
}

static gint64
panel_segments (SvParamsPanel *panel)
{
  SvSlicParams p;

  sv_params_panel_get_params (panel, &p);
  return p.n_segments;
}

static GtkWidget *
segments_scale (SvParamsPanel *panel)
{
  GtkWidget *scale = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SCALE, "segments on a log");

  g_assert_nonnull (scale);
  return scale;
}

static void
test_segments_drag_monotonic (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  SvParamsPanel *panel = sv_window_get_params_panel (w);
  GtkWidget *scale = segments_scale (panel);
  GtkWidget *spin = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "n_segments");
  g_autoptr (GError) error = NULL;
  Drag d = { panel, g_array_new (FALSE, FALSE, sizeof (gint64)), 0, FALSE };
  g_autofree char *shown = NULL;
  GtkWidget *knob;
  gint64 start, last;
  int x, y, width;
  guint previews = 0;
  gulong handler;

  if (!have_xdotool ())
    return;
  g_assert_true (sv_window_load_sample (w, DRAG_NZ, DRAG_NY, DRAG_NX, &error));
  g_assert_no_error (error);
  wait_for_current_result (w);
  width = narrow_window (w);
  knob = find_knob (scale);
  g_assert_nonnull (knob);
  /* On the knob: a press there grabs it without moving it. */
  surface_point (w, knob, gtk_widget_get_width (knob) / 2.0, gtk_widget_get_height (knob) / 2.0,
                 &x, &y);
  start = panel_segments (panel);
  g_array_append_val (d.counts, start);
  handler = g_signal_connect (panel, "params-changed", G_CALLBACK (segments_changed_cb), &d);

  xdotool (w, "mousemove --window WINDOW %d %d mousedown 1", x, y);
  d.want_dragging = TRUE;
  wait_until (dragging_is, &d, "the press on the Segments slider");
  /* 12 steps of 5 pixels to the right, each seen before the next. */
  for (guint step = 1; step <= 12; step++)
    {
      xdotool (w, "mousemove --window WINDOW %d %d", x + 5 * (int)step, y);
      d.want_counts = 1 + step;
      wait_until (count_changes_reached, &d, "the segment count to follow the pointer");
      previews += sv_window_get_result (w)->preview_factor > 1;
    }
  /* Previews come while held only as long as a coarse volume still fits
   * the count, and the slider's rest gives the exact result: said, not
   * asserted. */
  g_test_message ("%u of 12 steps showed a coarse preview", previews);
  xdotool (w, "mouseup 1");
  d.want_dragging = FALSE;
  wait_until (dragging_is, &d, "the release");
  wait_for_current_result (w);
  g_signal_handler_disconnect (panel, handler);

  for (guint i = 0; i < d.counts->len; i++)
    g_test_message ("segments %u: %" G_GINT64_FORMAT, i, g_array_index (d.counts, gint64, i));
  for (guint i = 1; i < d.counts->len; i++)
    g_assert_cmpint (g_array_index (d.counts, gint64, i), >,
                     g_array_index (d.counts, gint64, i - 1));
  last = g_array_index (d.counts, gint64, d.counts->len - 1);
  /* 60 pixels on a slider of six decades: more than tenfold. */
  g_assert_cmpint (last, >, 10 * start);
  /* On release the exact result for the count the entry shows. */
  g_assert_cmpint (sv_window_get_result (w)->preview_factor, ==, 1);
  g_assert_cmpint (sv_window_get_result (w)->params.n_segments, ==, last);
  shown = g_strdup_printf ("%" G_GINT64_FORMAT, last);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, shown);
  assert_width (w, width, "the Segments drag");
  save_window_png (w, "gui-segments-drag.png");
  g_array_unref (d.counts);
}

static gboolean
has_focus (gpointer widget)
{
  return gtk_widget_has_focus (widget) || gtk_widget_get_focus_child (widget) != NULL;
}

static gboolean
segments_are_2500 (gpointer panel)
{
  return panel_segments (panel) == 2500;
}

/* The knob's centre in the scale's coordinates. */
static double
knob_x (GtkWidget *scale)
{
  GtkWidget *knob = find_knob (scale);
  graphene_point_t in = GRAPHENE_POINT_INIT (gtk_widget_get_width (knob) / 2.0, 0), out;

  g_assert_true (gtk_widget_compute_point (knob, scale, &in, &out));
  return out.x;
}

static void
test_segments_typed_moves_slider (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  SvParamsPanel *panel = sv_window_get_params_panel (w);
  GtkWidget *scale = segments_scale (panel);
  GtkWidget *spin = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "n_segments");
  double before;
  int x, y;

  if (!have_xdotool ())
    return;
  g_assert_nonnull (spin);
  g_assert_cmpint (panel_segments (panel), <, 2500);
  wait_for_layout (w);
  before = knob_x (scale);

  /* Keys go to the window under the pointer (no window manager). */
  surface_point (w, spin, 10, 10, &x, &y);
  xdotool (w, "mousemove --window WINDOW %d %d", x, y);
  gtk_widget_grab_focus (spin);
  wait_until (has_focus, spin, "the focus in Segments");
  xdotool (w, "key ctrl+a type 2500");
  xdotool (w, "key Return");
  wait_until (segments_are_2500, panel, "the typed 2500 segments");
  g_assert_cmpfloat_with_epsilon (gtk_range_get_value (GTK_RANGE (scale)), log10 (2500), 1e-9);
  wait_for_layout (w);
  g_test_message ("knob at %.1f before, %.1f after", before, knob_x (scale));
  g_assert_cmpfloat (knob_x (scale), >, before + 5);
  wait_for_current_result (w);
  g_assert_cmpint (sv_window_get_result (w)->params.n_segments, ==, 2500);

  /* A count set from outside (a preset, Reset) moves it too. */
  {
    SvSlicParams p;
    sv_params_panel_get_params (panel, &p);
    p.n_segments = 100;
    sv_params_panel_set_params (panel, &p);
  }
  g_assert_cmpfloat_with_epsilon (gtk_range_get_value (GTK_RANGE (scale)), 2.0, 1e-9);
  wait_for_current_result (w);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/segments/drag-monotonic", Fixture, NULL, fixture_setup,
              test_segments_drag_monotonic, fixture_teardown);
  g_test_add ("/gui/segments/typed-moves-slider", Fixture, NULL, fixture_setup,
              test_segments_typed_moves_slider, fixture_teardown);
  return g_test_run ();
}

/* Tests of the Quality tab's laziness under Xvfb: while the tab is hidden
 * a finished run hands nothing to the quality worker; opening the tab
 * measures the labels on screen, and the numbers are the engine's; with
 * the tab open a result is drawn before its quality is asked for. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <string.h>

#include "gui-test-util.h"
#include "supervox/sv-metrics.h"

/* Opens the side panel's tab that holds `widget`. */
static void
show_tab_of (SvWindow *w, GtkWidget *widget)
{
  GtkNotebook *notebook = GTK_NOTEBOOK (gtk_widget_get_ancestor (widget, GTK_TYPE_NOTEBOOK));
  GtkWidget *page = widget;

  while (page && gtk_notebook_page_num (notebook, page) < 0)
    page = gtk_widget_get_parent (page);
  gtk_notebook_set_current_page (notebook, gtk_notebook_page_num (notebook, page));
}

static void
test_hidden_tab_measures_nothing (Fixture *f, gconstpointer data)
{
  SvParamsPanel *params = sv_window_get_params_panel (f->window);
  SvQualityPanel *panel = sv_window_get_quality_panel (f->window);
  const SvVolume *v = sv_window_get_volume (f->window);
  const double compactness[] = { 0.5, 2.0 };
  SvJobResult *r;
  SvQuality *q;
  SvMetrics m;
  guint before;
  g_autoptr (GError) error = NULL;
  g_autofree char *count = NULL;

  /* The Quality tab is the first one, shown when the window opens. */
  wait_until (quality_current, f->window, "the first result's quality");
  before = sv_window_get_quality_submissions (f->window);
  g_assert_cmpuint (before, >=, 1);

  show_tab_of (f->window, GTK_WIDGET (sv_window_get_pick_panel (f->window)));
  sv_window_clear_selection (f->window);
  for (guint i = 0; i < G_N_ELEMENTS (compactness); i++)
    {
      sv_params_panel_set_compactness (params, compactness[i]);
      wait_for_current_result (f->window);
      wait_until (window_settled, f->window, "the run settled");
    }
  r = sv_window_get_result (f->window);
  q = sv_quality_panel_get_quality (panel);
  g_test_message ("%u analyses asked before, %u after two runs with the tab hidden", before,
                  sv_window_get_quality_submissions (f->window));
  g_assert_cmpuint (sv_window_get_quality_submissions (f->window), ==, before);
  g_assert_true (q == NULL || q->generation < r->generation);

  /* Opening the tab asks for the labels on screen, and says so. */
  show_tab_of (f->window, GTK_WIDGET (panel));
  g_assert_cmpuint (sv_window_get_quality_submissions (f->window), ==, before + 1);
  g_assert_cmpstr (sv_quality_panel_get_state (panel), ==, "computing…");
  wait_until (quality_current, f->window, "the quality once the tab is open");
  g_assert_cmpuint (sv_window_get_quality_submissions (f->window), ==, before + 1);

  q = sv_quality_panel_get_quality (panel);
  g_assert_cmpuint (q->generation, ==, r->generation);
  g_assert_true (sv_metrics_compute_background (sv_job_result_get_labels (r, NULL), NULL, v, 2,
                                                TRUE, r->params.start_label - 1, &m, &error));
  g_assert_no_error (error);
  g_test_message ("%" G_GSIZE_FORMAT " labels, EV %.6f, compactness %.6f", q->metrics.n_labels,
                  q->metrics.explained_variation, q->metrics.compactness);
  g_assert_cmpuint (q->metrics.n_labels, ==, m.n_labels);
  g_assert_cmpfloat (q->metrics.explained_variation, ==, m.explained_variation);
  g_assert_cmpfloat (q->metrics.compactness, ==, m.compactness);
  g_assert_cmpfloat (q->metrics.size_median, ==, m.size_median);
  count = g_strdup_printf ("%" G_GSIZE_FORMAT, m.n_labels);
  g_test_message ("labels row: %s", sv_quality_panel_get_text (panel, "labels"));
  g_assert_true (g_str_has_prefix (sv_quality_panel_get_text (panel, "labels"), count));
  g_assert_null (sv_quality_panel_get_state (panel));
  save_window_png (f->window, "gui-quality-lazy.png");
}

/* What the window's frames saw of one result: painted before its quality
 * was asked for, and asked for after all. */
typedef struct
{
  SvWindow *window;
  guint64 generation; /* the change's request */
  guint before;       /* the worker's submissions before it */
  guint paints_before_asked;
} PaintWatch;

static gboolean
result_of (SvWindow *w, guint64 generation)
{
  SvJobResult *r = sv_window_get_result (w);

  return r != NULL && r->generation == generation && sv_window_is_settled (w);
}

/* Connected before the window's own after-paint handler, so it sees each
 * paint before the window hands anything over in it. */
static void
watch_paint_cb (GdkFrameClock *clock, PaintWatch *watch)
{
  if (result_of (watch->window, watch->generation)
      && sv_window_get_quality_submissions (watch->window) == watch->before)
    watch->paints_before_asked++;
}

static gboolean
asked (gpointer data)
{
  PaintWatch *watch = data;

  return sv_window_get_quality_submissions (watch->window) > watch->before;
}

static void
test_result_drawn_before_quality (Fixture *f, gconstpointer data)
{
  SvParamsPanel *params = sv_window_get_params_panel (f->window);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (f->window));
  PaintWatch watch = { f->window, 0, 0, 0 };
  gulong handler;

  wait_until (quality_current, f->window, "the first result's quality");
  handler = g_signal_connect (clock, "after-paint", G_CALLBACK (watch_paint_cb), &watch);
  watch.before = sv_window_get_quality_submissions (f->window);
  sv_params_panel_set_compactness (params, 1.7);
  watch.generation = sv_window_get_generation (f->window);
  wait_until (asked, &watch, "the new result's quality to be asked for");
  g_signal_handler_disconnect (clock, handler);
  g_test_message ("%u paints showed the result before its quality was asked for",
                  watch.paints_before_asked);
  g_assert_true (result_of (f->window, watch.generation));
  g_assert_cmpuint (watch.paints_before_asked, >=, 1);
  g_assert_cmpuint (sv_window_get_quality_submissions (f->window), ==, watch.before + 1);
  wait_until (quality_current, f->window, "the new result's quality");
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/quality/hidden-tab-measures-nothing", Fixture, NULL, fixture_setup,
              test_hidden_tab_measures_nothing, fixture_teardown);
  g_test_add ("/gui/quality/result-drawn-before-its-quality", Fixture, NULL, fixture_setup,
              test_result_drawn_before_quality, fixture_teardown);
  return g_test_run ();
}

/* Tests of the Supervox window under Xvfb: live updates while a slider is
 * dragged, Stop, files read on a worker thread, and the panel's traps
 * (issue 12). */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "supervox/sv-backend.h"
#include "gui-test-util.h"
#include "supervox/sv-io.h"
#include "supervox/sv-metrics.h"
#include "supervox/sv-synth.h"

/* The wheel over a number field without focus scrolls the panel and
 * changes nothing; with focus the field takes it. */
static void
test_wheel_scrolls_panel (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  GtkWidget *spin = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "n_segments");
  GtkWidget *scale = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SCALE, "compactness on a log");
  GtkEventController *wheel;
  guint64 gen = sv_window_get_generation (f->window);
  SvSlicParams before, after;
  gboolean handled = FALSE;

  g_assert_nonnull (spin);
  g_assert_nonnull (scale);
  sv_params_panel_get_params (panel, &before);
  gtk_widget_grab_focus (GTK_WIDGET (sv_window_get_slice_view (f->window, SV_AXIS_XY)));
  for (GtkWidget *w = spin; w; w = w == spin ? scale : NULL)
    {
      wheel = find_controller (w, "sv-wheel-scrolls-panel");
      g_assert_nonnull (wheel);
      /* Before the field's own scroll handling. */
      g_assert_cmpint (gtk_event_controller_get_propagation_phase (wheel), ==, GTK_PHASE_CAPTURE);
      handled = FALSE;
      g_signal_emit_by_name (wheel, "scroll", 0.0, 3.0, &handled);
      g_assert_true (handled);
    }
  sv_params_panel_get_params (panel, &after);
  g_assert_cmpint (after.n_segments, ==, before.n_segments);
  g_assert_cmpfloat (after.compactness, ==, before.compactness);
  g_assert_cmpuint (sv_window_get_generation (f->window), ==, gen);

  gtk_widget_grab_focus (spin);
  handled = TRUE;
  g_signal_emit_by_name (find_controller (spin, "sv-wheel-scrolls-panel"), "scroll", 0.0, 1.0,
                         &handled);
  g_assert_false (handled);
}

/* Values the panel cannot take are not changed silently; compactness can
 * be typed; gamma reads 1.00 at its default. */
static void
test_values_said_and_typed (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  GtkWidget *spin = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "n_segments");
  GtkWidget *scale = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SCALE, "compactness on a log");
  GtkWidget *entry
      = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "compactness, typed");
  GtkWidget *gamma = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SCALE, "gamma");
  SvSlicParams p;

  g_assert_null (sv_params_panel_get_note (panel));
  gtk_editable_set_text (GTK_EDITABLE (spin), "100000000");
  gtk_spin_button_update (GTK_SPIN_BUTTON (spin));
  sv_params_panel_get_params (panel, &p);
  g_assert_cmpint (p.n_segments, ==, 1000000);
  g_assert_nonnull (sv_params_panel_get_note (panel));
  g_test_message ("note: %s", sv_params_panel_get_note (panel));
  g_assert_nonnull (strstr (sv_params_panel_get_note (panel), "100000000"));
  g_assert_nonnull (strstr (sv_params_panel_get_note (panel), "lowered to 1000000"));
  gtk_editable_set_text (GTK_EDITABLE (spin), "400");
  gtk_spin_button_update (GTK_SPIN_BUTTON (spin));
  g_assert_null (sv_params_panel_get_note (panel));

  /* Typed: exactly 0.1, and the slider follows. */
  gtk_editable_set_text (GTK_EDITABLE (entry), "0.1");
  gtk_spin_button_update (GTK_SPIN_BUTTON (entry));
  sv_params_panel_get_params (panel, &p);
  g_assert_cmpfloat (p.compactness, ==, 0.1);
  g_assert_cmpfloat (fabs (gtk_range_get_value (GTK_RANGE (scale)) + 1.0), <, 1e-12);
  /* Slid: three significant digits, and the entry follows. */
  gtk_range_set_value (GTK_RANGE (scale), log10 (0.0893));
  sv_params_panel_get_params (panel, &p);
  g_assert_cmpfloat (p.compactness, ==, 0.0893);
  g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (entry)), ==, 0.0893);
  wait_until (window_settled, f->window, "the typed compactness");
  g_assert_cmpfloat (sv_window_get_result (f->window)->params.compactness, ==, 0.0893);

  g_assert_nonnull (gamma);
  g_assert_cmpstr (pango_layout_get_text (gtk_scale_get_layout (GTK_SCALE (gamma))), ==, "1.00");
}

/* Compactness takes what supervox-cli takes down to 0.0001, shown as it
 * is; beyond the window's range, or not > 0 as the engine's table says,
 * the panel says what it did instead of clamping silently. */
static void
test_compactness_limits_said (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  GtkWidget *entry
      = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "compactness, typed");
  static const struct
  {
    const char *typed;
    double value;
    const char *shown;
    const char *note;
  } cases[] = {
    { "0.0001", 0.0001, "0.0001", NULL },
    { "0.00015", 0.00015, "0.00015", NULL },
    { "0.00001", 0.0001, "0.0001",
      "Compactness: 1e-05 is less than this window takes; raised to 0.0001. supervox-cli takes "
      "any value > 0." },
    { "0", 0.0001, "0.0001", "Compactness must be > 0, got 0; kept at 0.0001." },
    { "0.57", 0.57, "0.57", NULL },
  };
  SvSlicParams p;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gtk_editable_set_text (GTK_EDITABLE (entry), cases[i].typed);
      gtk_spin_button_update (GTK_SPIN_BUTTON (entry));
      sv_params_panel_get_params (panel, &p);
      g_test_message ("%s: %.17g, shown %s, note %s", cases[i].typed, p.compactness,
                      gtk_editable_get_text (GTK_EDITABLE (entry)),
                      sv_params_panel_get_note (panel));
      g_assert_cmpfloat (p.compactness, ==, cases[i].value);
      g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (entry)), ==, cases[i].shown);
      g_assert_cmpstr (sv_params_panel_get_note (panel), ==, cases[i].note);
    }
  /* A preset or sidecar beyond the range: said too, and the panel runs
   * what it shows. */
  p.compactness = 5000;
  sv_params_panel_set_params (panel, &p);
  sv_params_panel_get_params (panel, &p);
  g_assert_cmpfloat (p.compactness, ==, 1000);
  g_assert_cmpstr (sv_params_panel_get_note (panel), ==,
                   "Compactness: 5000 is more than this window takes; lowered to 1000. "
                   "supervox-cli takes any value > 0.");
}

/* A run with far fewer labels than asked for says why and what to try. */
static void
test_few_labels_warning (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvJobResult *r;
  SvSlicParams p;

  g_assert_null (sv_window_get_warning_text (f->window));
  sv_params_panel_get_params (panel, &p);
  p.spacing[0] = p.spacing[1] = p.spacing[2] = 0.001;
  p.compactness = 0.01;
  sv_params_panel_set_params (panel, &p);
  wait_until (window_settled, f->window, "the run with tiny spacing");
  r = sv_window_get_result (f->window);
  g_test_message ("%" G_GSIZE_FORMAT " labels of %" G_GINT64_FORMAT ": %s", r->stats.n_labels,
                  p.n_segments, sv_window_get_warning_text (f->window));
  g_assert_cmpfloat ((double)r->stats.n_labels, <, 0.05 * p.n_segments);
  g_assert_nonnull (sv_window_get_warning_text (f->window));
  g_assert_nonnull (strstr (sv_window_get_warning_text (f->window), "spacing is small"));
  g_assert_nonnull (strstr (sv_window_get_warning_text (f->window), "Try spacing relative"));

  p.spacing[0] = p.spacing[1] = p.spacing[2] = 1.0;
  p.compactness = 0.1;
  sv_params_panel_set_params (panel, &p);
  wait_until (window_settled, f->window, "the run with unit spacing");
  g_assert_cmpfloat ((double)sv_window_get_result (f->window)->stats.n_labels, >=,
                     0.05 * p.n_segments);
  g_assert_null (sv_window_get_warning_text (f->window));
}

/* The advice leaves out what the panel does already: with spacing relative
 * to the finest axis (the default) it does not offer it again. */
static void
test_few_labels_advice_follows_panel (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  const char *text;
  SvSlicParams p;

  g_assert_true (sv_params_panel_get_spacing_relative (panel));
  sv_params_panel_get_params (panel, &p);
  g_assert_cmpfloat (MIN (MIN (p.spacing[0], p.spacing[1]), p.spacing[2]), ==, 1.0);
  p.compactness = 0.001;
  sv_params_panel_set_params (panel, &p);
  wait_until (window_settled, f->window, "the run with a tiny compactness");
  text = sv_window_get_warning_text (f->window);
  g_test_message ("%s", text);
  g_assert_nonnull (text);
  g_assert_null (strstr (text, "spacing relative"));
  g_assert_nonnull (strstr (text, "Try a compactness ten times higher (0.01)"));
  g_assert_nonnull (strstr (text, "“Enforce connectivity”"));
}

/* Asked for CUDA where none runs: the CPU computes, and the dropdown and
 * the note say so. */
static void
test_backend_shows_what_ran (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) cuda = sv_backend_new ("cuda", &error);

  if (cuda)
    {
      g_test_skip ("CUDA runs here: no fallback to see");
      return;
    }
  sv_params_panel_set_backend (panel, "cuda");
  wait_until (window_settled, f->window, "the run asked of CUDA");
  g_assert_cmpstr (sv_window_get_result (f->window)->backend_name, ==, "cpu");
  g_assert_cmpstr (sv_params_panel_get_backend (panel), ==, "cpu");
  g_assert_nonnull (sv_params_panel_get_note (panel));
  g_assert_nonnull (strstr (sv_params_panel_get_note (panel), "cpu ran"));
  g_assert_true (g_str_has_suffix (sv_window_get_result_text (f->window), "on the CPU"));
}

/* Opening reads on a worker thread with a percentage, and Stop drops it. */
static void
test_open_on_thread (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "stack.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = NULL;
  const SvVolume *before = sv_window_get_volume (f->window);
  SvJobResult *result = sv_window_get_result (f->window);
  SvSynthParams sp;

  sv_synth_params_init_defaults (&sp);
  sp.nz = 24;
  sp.ny = 160;
  sp.nx = 200;
  v = sv_synth_cells (&sp, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);

  /* It returns before the file is read: nothing changed yet. */
  g_assert_true (sv_window_open_file (f->window, file));
  g_assert_true (sv_window_is_busy (f->window));
  g_assert_true (g_str_has_prefix (sv_window_get_progress_text (f->window), "Loading… "));
  g_assert_true (sv_window_get_volume (f->window) == before);

  /* Stop: the window is free at once and the load never lands. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.stop", NULL));
  g_assert_false (sv_window_is_busy (f->window));
  g_assert_cmpstr (sv_window_get_progress_text (f->window), ==, "stopped");
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_true (sv_window_get_volume (f->window) == before);
  g_assert_true (sv_window_get_result (f->window) == result);

  /* Loaded to the end, it is shown and segmented. */
  open_and_wait (f->window, file);
  g_assert_cmpuint (sv_window_get_volume (f->window)->nx, ==, 200);
  g_assert_cmpuint (sv_job_result_get_labels (sv_window_get_result (f->window), NULL)->nx, ==, 200);
  g_unlink (path);
  g_rmdir (dir);
}

/* ---- live: dragging and stopping ---- */

typedef struct
{
  SvWindow *window;
  guint64 last_generation;
  guint n_drawn, n_previews;
  gboolean preview_labelled; /* every preview on screen said so in the status bar */
  guint n_changes, n_wanted;
} Drag;

/* After each frame: a result the XY view did not show at the last frame
 * was drawn in this one. */
static void
after_paint_cb (GdkFrameClock *clock, Drag *d)
{
  SvJobResult *r = sv_slice_view_get_result (sv_window_get_slice_view (d->window, SV_AXIS_XY));

  if (!r || r->generation == d->last_generation)
    return;
  d->last_generation = r->generation;
  d->n_drawn++;
  if (r->preview_factor > 1)
    {
      d->n_previews++;
      if (!strstr (sv_window_get_result_text (d->window), "preview"))
        d->preview_labelled = FALSE;
    }
}

/* One slider value per 16 ms, as motion events of a drag bring them. */
static gboolean
drag_step_cb (gpointer data)
{
  Drag *d = data;
  SvParamsPanel *panel = sv_window_get_params_panel (d->window);

  sv_params_panel_set_compactness (panel, 0.05 + 0.01 * (d->n_changes % 97));
  d->n_changes++;
  return d->n_changes < d->n_wanted ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static gboolean
drag_done (gpointer data)
{
  Drag *d = data;
  return d->n_changes >= d->n_wanted;
}

static void
test_drag_draws_overlays (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (f->window));
  Drag d = { f->window, 0, 0, 0, TRUE, 0, 60 };
  SvJobResult *r;
  double exact_s;
  gulong handler;

  /* The bundled sample's size: a run takes a good part of a second on two
   * cores, so that every slider step used to cancel the last. */
  g_assert_true (sv_window_load_sample (f->window, 48, 160, 160, &error));
  g_assert_no_error (error);
  wait_until (window_settled, f->window, "the sample's labels");
  exact_s = sv_window_get_result (f->window)->seconds_total;
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (f->window), "exact"));
  d.last_generation = sv_window_get_generation (f->window);

  handler = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &d);
  g_object_set (panel, "dragging", TRUE, NULL);
  g_timeout_add (16, drag_step_cb, &d);
  wait_until (drag_done, &d, "the drag");
  g_test_message ("a drag of %u changes drew %u overlays, %u of them previews (exact run %.3f s)",
                  d.n_changes, d.n_drawn, d.n_previews, exact_s);
  g_assert_cmpuint (d.n_drawn, >=, 3);
  g_assert_true (d.preview_labelled);
  /* Runs slower than the live limit give way to previews while dragging. */
  if (exact_s > 0.3)
    g_assert_cmpuint (d.n_previews, >, 0);

  /* Release: the exact result of the last value. */
  g_object_set (panel, "dragging", FALSE, NULL);
  wait_until (window_settled, f->window, "the exact result after release");
  g_signal_handler_disconnect (clock, handler);
  r = sv_window_get_result (f->window);
  g_assert_cmpuint (r->preview_factor, ==, 1);
  g_assert_cmpfloat (fabs (r->params.compactness - (0.05 + 0.01 * ((d.n_changes - 1) % 97))), <,
                     1e-9);
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (f->window), "exact"));
}

static gboolean
window_idle (gpointer data)
{
  return !sv_window_is_busy (data);
}

/* Escape is bound to win.escape on the window, which stops a running job. */
static gboolean
escape_stops (GtkWidget *widget)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) c = g_list_model_get_item (controllers, i);
      if (!GTK_IS_SHORTCUT_CONTROLLER (c))
        continue;
      for (guint j = 0; j < g_list_model_get_n_items (G_LIST_MODEL (c)); j++)
        {
          g_autoptr (GtkShortcut) sc = g_list_model_get_item (G_LIST_MODEL (c), j);
          GtkShortcutTrigger *t = gtk_shortcut_get_trigger (sc);
          GtkShortcutAction *a = gtk_shortcut_get_action (sc);
          if (GTK_IS_KEYVAL_TRIGGER (t)
              && gtk_keyval_trigger_get_keyval (GTK_KEYVAL_TRIGGER (t)) == GDK_KEY_Escape
              && GTK_IS_NAMED_ACTION (a)
              && g_str_equal (gtk_named_action_get_action_name (GTK_NAMED_ACTION (a)),
                              "win.escape"))
            return TRUE;
        }
    }
  return FALSE;
}

static void
test_stop_keeps_labels (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  g_autoptr (SvJobResult) before = NULL;
  g_autofree gint32 *labels = NULL;
  gsize n;
  guint64 gen;

  g_assert_true (escape_stops (GTK_WIDGET (f->window)));
  g_assert_true (sv_window_load_sample (f->window, 48, 160, 160, &error));
  wait_until (window_settled, f->window, "the sample's labels");
  before = sv_job_result_ref (sv_window_get_result (f->window));
  n = (gsize)sv_job_result_get_labels (before, NULL)->nz
      * sv_job_result_get_labels (before, NULL)->ny * sv_job_result_get_labels (before, NULL)->nx;
  labels = g_memdup2 (sv_job_result_get_labels (before, NULL)->data, n * sizeof (gint32));

  sv_params_panel_set_compactness (panel, 4.0);
  gen = sv_window_get_generation (f->window);
  g_assert_true (sv_window_is_busy (f->window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.escape", NULL));
  g_assert_cmpstr (sv_window_get_progress_text (f->window), ==, "stopped");
  wait_until (window_idle, f->window, "the job to stop");
  /* Let anything the worker queued before it stopped arrive. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_true (sv_window_get_result (f->window) == before);
  g_assert_cmpmem (sv_job_result_get_labels (sv_window_get_result (f->window), NULL)->data,
                   n * sizeof (gint32), labels, n * sizeof (gint32));
  g_assert_cmpuint (sv_window_get_generation (f->window), ==, gen);
  g_assert_cmpstr (sv_window_get_progress_text (f->window), ==, "stopped");
  g_assert_false (sv_window_is_settled (f->window));

  /* The next change runs again. */
  sv_params_panel_set_compactness (panel, 3.0);
  wait_until (window_settled, f->window, "a run after Stop");
  g_assert_cmpfloat (sv_window_get_result (f->window)->params.compactness, ==, 3.0);
}

static gboolean
iteration_on_screen (gpointer data)
{
  SvJobResult *r = sv_window_get_result (data);
  return r && r->in_progress_iteration > 0;
}

static gboolean
stopped_iteration_measured (gpointer data)
{
  SvWindow *w = data;
  SvQuality *q = sv_quality_panel_get_quality (sv_window_get_quality_panel (w));
  return q && q->generation == sv_window_get_result (w)->generation;
}

/* Stopped in the middle of a long run: the progress bar, the status line,
 * the quality panel and export all say that the run was stopped and what
 * the labels on screen are (the iteration it reached), and the quality
 * numbers are those labels'. */
static void
test_stop_mid_run_agrees (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvQualityPanel *quality = sv_window_get_quality_panel (f->window);
  const char *status, *state;
  g_autofree char *stopped_at = NULL, *labels_text = NULL;
  SvJobResult *r;
  SvQuality *q;
  SvMetrics m;
  SvSlicParams p;

  /* Every iteration of every exact run is shown, as a long run's are. */
  g_setenv ("SV_JOB_LIVE_ITERATIONS", "always", TRUE);
  g_assert_true (sv_window_load_sample (f->window, 48, 160, 160, &error));
  wait_until (window_settled, f->window, "the sample's labels");
  sv_params_panel_get_params (panel, &p);
  p.max_num_iter = 100;
  sv_params_panel_set_params (panel, &p);
  wait_until (iteration_on_screen, f->window, "an iteration of the long run");
  g_assert_true (sv_window_is_busy (f->window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.escape", NULL));
  g_unsetenv ("SV_JOB_LIVE_ITERATIONS");
  r = sv_window_get_result (f->window);
  g_assert_cmpuint (r->in_progress_iteration, >, 0);
  g_assert_cmpuint (r->in_progress_iteration, <, 100);

  stopped_at = g_strdup_printf ("stopped after iteration %u of 100", r->in_progress_iteration);
  status = sv_window_get_result_text (f->window);
  g_test_message ("progress: %s; status: %s", sv_window_get_progress_text (f->window), status);
  g_assert_cmpstr (sv_window_get_progress_text (f->window), ==, "stopped");
  g_assert_true (g_str_has_prefix (status, stopped_at));
  g_assert_null (strstr (status, "still running"));

  wait_until (stopped_iteration_measured, f->window, "the quality of the stopped iteration");
  state = sv_quality_panel_get_state (quality);
  g_test_message ("quality: %s", state);
  g_assert_nonnull (state);
  g_assert_true (g_str_has_prefix (state, stopped_at));
  g_assert_null (strstr (state, "still going"));
  /* The numbers are the labels on screen. */
  q = sv_quality_panel_get_quality (quality);
  g_assert_true (sv_metrics_compute_background (sv_job_result_get_labels (r, NULL), NULL,
                                                sv_window_get_volume (f->window), 2, TRUE,
                                                r->params.start_label - 1, &m, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (q->metrics.n_labels, ==, m.n_labels);
  labels_text = g_strdup_printf ("%" G_GSIZE_FORMAT, m.n_labels);
  g_assert_true (g_str_has_prefix (sv_quality_panel_get_text (quality, "labels"), labels_text));
  g_assert_cmpfloat (q->metrics.explained_variation, ==, m.explained_variation);
  /* A click picks one of those clusters, with its numbers. */
  {
    gint32 label = sv_job_result_label_at (r, 20, 80, 80);
    gsize count = 0;
    g_autofree char *count_text = NULL;
    const SvLabels *l = sv_job_result_get_labels (r, NULL);
    for (gsize i = 0; i < sv_labels_n_voxels (l); i++)
      count += l->data[i] == label;
    count_text = g_strdup_printf ("%" G_GSIZE_FORMAT, count);
    g_signal_emit_by_name (sv_window_get_slice_view (f->window, SV_AXIS_XY), "pick", 20, 80, 80);
    g_assert_cmpstr (sv_pick_panel_get_text (sv_window_get_pick_panel (f->window), "voxels"), ==,
                     count_text);
  }

  /* Export says why not, without saying the run is still going. */
  g_assert_false (sv_window_export_labels (f->window, "never-written.tif", &error));
  g_assert_false (g_file_test ("never-written.tif", G_FILE_TEST_EXISTS));
  g_test_message ("export: %s", error->message);
  g_assert_nonnull (strstr (error->message, "stopped"));
  g_assert_null (strstr (error->message, "still going"));
  g_clear_error (&error);

  /* The next change runs again and the words follow. */
  sv_params_panel_set_compactness (panel, 3.0);
  wait_until (window_settled, f->window, "a run after Stop");
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (f->window), "exact"));
}

static void
progress_text_cb (GtkProgressBar *bar, GParamSpec *pspec, GPtrArray *texts)
{
  g_ptr_array_add (texts, g_strdup (gtk_progress_bar_get_text (bar)));
}

static gboolean
seen_prefix (GPtrArray *texts, const char *prefix)
{
  for (guint i = 0; i < texts->len; i++)
    if (g_str_has_prefix (g_ptr_array_index (texts, i), prefix))
      return TRUE;
  return FALSE;
}

/* The progress bar names the stage (preparing, iteration k of n,
 * connectivity) with the time left once a run has been timed. */
static void
test_progress_says_stage (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  GtkWidget *bar = find_by_tooltip (GTK_WIDGET (f->window), GTK_TYPE_PROGRESS_BAR, "stage");
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  gulong handler;
  SvSlicParams p;

  g_assert_nonnull (bar);
  g_assert_cmpstr (sv_window_get_progress_text (f->window), ==, "done");
  sv_params_panel_get_params (panel, &p);
  handler = g_signal_connect (bar, "notify::text", G_CALLBACK (progress_text_cb), texts);
  sv_params_panel_set_compactness (panel, 2.0);
  wait_until (window_settled, f->window, "the run");
  g_signal_handler_disconnect (bar, handler);
  for (guint i = 0; i < texts->len; i++)
    g_test_message ("progress: %s", (char *)g_ptr_array_index (texts, i));
  /* "· about x s left" follows only while the worker is still on the run
   * when the main loop shows the stage, which depends on the load; the
   * estimate itself is tested in the engine suite. */
  g_assert_true (seen_prefix (texts, "preparing"));
  {
    g_autofree char *last = g_strdup_printf ("iteration %d of %d", p.max_num_iter, p.max_num_iter);
    g_assert_true (seen_prefix (texts, last));
  }
  g_assert_true (seen_prefix (texts, "connectivity"));
  g_assert_cmpstr (g_ptr_array_index (texts, texts->len - 1), ==, "done");
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/live/progress-says-stage", Fixture, NULL, fixture_setup,
              test_progress_says_stage, fixture_teardown);
  g_test_add ("/gui/params/wheel-over-unfocused-field-scrolls-panel", Fixture, NULL, fixture_setup,
              test_wheel_scrolls_panel, fixture_teardown);
  g_test_add ("/gui/params/compactness-limits-said", Fixture, NULL, fixture_setup,
              test_compactness_limits_said, fixture_teardown);
  g_test_add ("/gui/params/values-said-and-typed", Fixture, NULL, fixture_setup,
              test_values_said_and_typed, fixture_teardown);
  g_test_add ("/gui/window/few-labels-advice-follows-panel", Fixture, NULL, fixture_setup,
              test_few_labels_advice_follows_panel, fixture_teardown);
  g_test_add ("/gui/window/few-labels-warning", Fixture, NULL, fixture_setup,
              test_few_labels_warning, fixture_teardown);
  g_test_add ("/gui/params/backend-shows-what-ran", Fixture, NULL, fixture_setup,
              test_backend_shows_what_ran, fixture_teardown);
  g_test_add ("/gui/window/open-loads-on-a-thread", Fixture, NULL, fixture_setup,
              test_open_on_thread, fixture_teardown);
  g_test_add ("/gui/live/stop-keeps-labels", Fixture, NULL, fixture_setup, test_stop_keeps_labels,
              fixture_teardown);
  g_test_add ("/gui/live/stop-mid-run-every-part-agrees", Fixture, NULL, fixture_setup,
              test_stop_mid_run_agrees, fixture_teardown);
  g_test_add ("/gui/live/drag-draws-overlays", Fixture, NULL, fixture_setup,
              test_drag_draws_overlays, fixture_teardown);
  return g_test_run ();
}

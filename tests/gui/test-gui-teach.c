/* Tests of teaching mode on a 3D volume under Xvfb: the seed grid at step
 * 0, the centres of nearby slices drawn faded in every view, the note that
 * follows the step with its numbers, and the convergence plot's axes. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-util.h"
#include "supervox/sv-seeds.h"
#include "supervox/sv-synth.h"
#include "sv-convergence-plot.h"
#include "sv-quality-panel.h"

/* Goes to teaching step `step` (from outside teaching mode: step 1 first)
 * and waits for it. */
static SvJobResult *
go_to_step (SvWindow *w, int step)
{
  SvJobResult *r;

  if (sv_params_panel_get_stop_after_iteration (sv_window_get_params_panel (w)) < 0)
    {
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.teach-step", NULL));
      wait_for_current_result (w);
    }
  for (int guard = 0; guard < 32; guard++)
    {
      int now = sv_window_get_result (w)->stop_after_iteration;
      if (now == step)
        break;
      g_assert_true (gtk_widget_activate_action (
          GTK_WIDGET (w), now < step ? "win.teach-step" : "win.teach-back", NULL));
      wait_for_current_result (w);
    }
  r = sv_window_get_result (w);
  g_assert_cmpint (r->stop_after_iteration, ==, step);
  return r;
}

static char *
note (SvWindow *w)
{
  g_autofree char *legend = sv_window_get_teaching_legend (w);

  g_assert_nonnull (legend);
  /* The legend is the first line, the step's note the second. */
  g_assert_nonnull (strchr (legend, '\n'));
  return g_strdup (strchr (legend, '\n') + 1);
}

static void
test_step_zero_draws_seed_grid (Fixture *f, gconstpointer data)
{
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  const guint shape[3] = { NZ, NY, NX };
  g_autofree char *count = NULL, *seeded = NULL, *text = NULL;
  SvSeeds seeds = { 0 };
  g_autoptr (GError) error = NULL;
  gsize drawn = 0;
  SvJobResult *r;

  r = go_to_step (f->window, 0);
  g_assert_true (sv_seeds_grid (shape, r->params.n_segments, &seeds, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (seeds.n, >, 8);
  g_assert_cmpuint (r->n_centres, ==, seeds.n);

  /* The status bar and the note count the seeds, not the (no) labels. */
  count = g_strdup_printf (" · %" G_GSIZE_FORMAT " clusters", seeds.n);
  g_test_message ("%s", sv_window_get_result_text (f->window));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (f->window), "teaching step 0 of "));
  g_assert_nonnull (strstr (sv_window_get_result_text (f->window), count));
  text = note (f->window);
  g_test_message ("%s", text);
  seeded = g_strdup_printf ("Step 0 of %d, seeding: %" G_GSIZE_FORMAT
                            " cluster centres on a regular grid",
                            r->params.max_num_iter, seeds.n);
  g_assert_true (g_str_has_prefix (text, seeded));

  /* Every seed is drawn at full strength on its own slice, where it is. */
  for (guint z = 0; z < NZ; z++)
    {
      gsize n = 0, on_slice = 0;
      g_autofree SvCentreMark *marks = NULL;

      sv_slice_view_set_slice (xy, z);
      marks = sv_slice_view_collect_centre_marks (xy, &n);
      for (gsize k = 0; k < seeds.n; k++)
        if (seeds.zyx[k * 3] == (float)z)
          on_slice++;
      for (gsize i = 0; i < n; i++)
        if (marks[i].strength == 1.0f)
          {
            gboolean at_a_seed = FALSE;
            for (gsize k = 0; k < seeds.n && !at_a_seed; k++)
              at_a_seed = seeds.zyx[k * 3] == (float)z && seeds.zyx[k * 3 + 1] + 0.5f == marks[i].v
                          && seeds.zyx[k * 3 + 2] + 0.5f == marks[i].u;
            g_assert_true (at_a_seed);
            drawn++;
            on_slice--;
          }
      g_assert_cmpuint (on_slice, ==, 0);
    }
  g_assert_cmpuint (drawn, ==, seeds.n);
  sv_seeds_clear (&seeds);
}

/* The centres whose search window reaches slice `s` along axis `w`,
 * counted with the engine's window. */
static gsize
centres_reaching (const SvJobResult *r, int w, guint s)
{
  gsize n = 0;

  for (gsize k = 0; k < r->n_centres; k++)
    {
      int lo[3], hi[3];
      if (isnan (r->centres[k * 3]))
        continue;
      sv_slic_search_window (r->labels_shape, r->n_centres, r->centres + k * 3, lo, hi);
      n += lo[w] <= (int)s && (int)s < hi[w];
    }
  return n;
}

static void
test_centres_off_the_slice_faded (Fixture *f, gconstpointer data)
{
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  g_autofree SvCentreMark *marks = NULL;
  g_autoptr (GdkTexture) t = NULL;
  g_autofree guint8 *px = NULL;
  gsize n = 0, stride, n_reddish = 0;
  int slice = -1;
  SvJobResult *r = go_to_step (f->window, 2);

  /* A slice with no centre on it (none within half a voxel), from the
   * middle of the volume on. */
  for (guint i = 0; i < NZ && slice < 0; i++)
    {
      guint z = (NZ / 2 + i) % NZ;
      gboolean any = FALSE;
      for (gsize k = 0; k < r->n_centres; k++)
        any |= !isnan (r->centres[k * 3]) && fabsf (r->centres[k * 3] - (float)z) <= 0.5f;
      if (!any)
        slice = (int)z;
    }
  g_assert_cmpint (slice, >=, 0);
  sv_slice_view_set_slice (xy, (guint)slice);
  marks = sv_slice_view_collect_centre_marks (xy, &n);
  g_test_message ("slice %d: %" G_GSIZE_FORMAT " marks", slice, n);
  g_assert_cmpuint (n, >, 0);
  g_assert_cmpuint (n, ==, centres_reaching (r, 0, (guint)slice));
  for (gsize i = 0; i < n; i++)
    {
      g_assert_cmpfloat (marks[i].strength, <, 1.0f);
      g_assert_cmpfloat (marks[i].strength, >, 0.0f);
      g_assert_cmpfloat (sv_centre_mark_alpha (marks[i].strength), <, sv_centre_mark_alpha (1.0f));
      g_assert_cmpfloat (sv_centre_mark_size (marks[i].strength, 10.0f), <, 10.0f);
      /* Weakest first: the nearest are drawn on top. */
      if (i > 0)
        g_assert_cmpfloat (marks[i - 1].strength, <=, marks[i].strength);
    }

  /* They reach the screen: reddish pixels on a grey image. */
  t = capture_xy (f->window);
  px = texture_bytes (t, &stride);
  for (int y = 0; y < gdk_texture_get_height (t); y++)
    for (int x = 0; x < gdk_texture_get_width (t); x++)
      {
        /* B, G, R, A bytes. */
        const guint8 *p = px + (gsize)y * stride + (gsize)x * 4;
        n_reddish += p[2] > p[1] + 15 && p[2] > p[0] + 10;
      }
  g_test_message ("%" G_GSIZE_FORMAT " reddish pixels", n_reddish);
  g_assert_cmpuint (n_reddish, >=, n);

  /* And in XZ and YZ of the orthogonal layout. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.orthogonal", NULL));
  for (SvAxis a = SV_AXIS_XZ; a <= SV_AXIS_YZ; a++)
    {
      SvSliceView *view = sv_window_get_slice_view (f->window, a);
      g_autofree SvCentreMark *side = NULL;
      gsize n_side = 0;
      int w = a == SV_AXIS_XZ ? 1 : 2;

      side = sv_slice_view_collect_centre_marks (view, &n_side);
      g_test_message ("%s slice %u: %" G_GSIZE_FORMAT " marks", a == SV_AXIS_XZ ? "XZ" : "YZ",
                      sv_slice_view_get_slice (view), n_side);
      g_assert_cmpuint (n_side, >, 0);
      g_assert_cmpuint (n_side, ==, centres_reaching (r, w, sv_slice_view_get_slice (view)));
    }
  save_window_png (f->window, "gui-teach-faded-centres.png");
}

static gboolean
note_has_numbers (gpointer data)
{
  g_autofree char *text = note (data);
  return strstr (text, "changed cluster") != NULL || strstr (text, "first cluster") != NULL;
}

static void
test_note_follows_step (Fixture *f, gconstpointer data)
{
  g_autofree char *zero = NULL, *one = NULL, *two = NULL, *changed = NULL, *moved = NULL,
                  *first = NULL;
  g_autoptr (SvConvergence) expected = NULL;
  g_autoptr (GError) error = NULL;
  SvJobResult *r;

  go_to_step (f->window, 0);
  zero = note (f->window);
  r = go_to_step (f->window, 1);
  wait_until (note_has_numbers, f->window, "step 1's numbers");
  one = note (f->window);
  r = go_to_step (f->window, 2);
  wait_until (note_has_numbers, f->window, "step 2's numbers");
  two = note (f->window);
  g_test_message ("0: %s\n1: %s\n2: %s", zero, one, two);
  g_assert_cmpstr (zero, !=, one);
  g_assert_cmpstr (one, !=, two);
  g_assert_true (g_str_has_prefix (zero, "Step 0 of "));
  g_assert_true (g_str_has_prefix (one, "Step 1 of "));
  g_assert_true (g_str_has_prefix (two, "Step 2 of "));
  g_assert_nonnull (strstr (two, "search window"));
  g_assert_nonnull (strstr (two, "mean of its voxels"));

  /* The numbers are the engine's for that step. */
  expected
      = sv_convergence_compute (sv_window_get_volume (f->window), NULL, &r->params, NULL, &error);
  g_assert_no_error (error);
  first = g_strdup_printf ("All %u voxels got their first cluster", NZ * NY * NX);
  g_assert_nonnull (strstr (one, first));
  changed = g_strdup_printf (" %" G_GUINT64_FORMAT " voxels changed cluster", expected->changed[1]);
  moved = g_strdup_printf ("a centre moved %.2f voxels on average", expected->mean_moved[1]);
  g_assert_cmpuint (expected->changed[1], >, 0);
  g_assert_nonnull (strstr (two, changed));
  g_assert_nonnull (strstr (two, moved));
}

/* The engine's record of a small run, for the plot. */
static SvConvergence *
small_convergence (void)
{
  SvSynthParams sp;
  SvSlicParams p;
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (GError) error = NULL;
  SvConvergence *c;

  sv_synth_params_init_defaults (&sp);
  sp.nz = 8;
  sp.ny = 32;
  sp.nx = 32;
  sp.n_cells = 6;
  sp.nucleus_radius = 2.0;
  v = sv_synth_cells (&sp, NULL, &error);
  g_assert_no_error (error);
  sv_slic_params_init_defaults (&p);
  p.n_segments = 40;
  p.max_num_iter = 10;
  c = sv_convergence_compute (v, NULL, &p, NULL, &error);
  g_assert_no_error (error);
  return c;
}

static void
check_ticks (const SvPlotAxis *a, gboolean along_x, double lo_px, double hi_px)
{
  g_assert_nonnull (a->title);
  g_assert_cmpuint (strlen (a->title), >, 3);
  g_assert_cmpuint (a->n_ticks, >=, 2);
  for (guint i = 0; i < a->n_ticks; i++)
    {
      g_assert_cmpuint (strlen (a->ticks[i].text), >, 0);
      g_assert_cmpfloat (a->ticks[i].value, >=, a->lo);
      g_assert_cmpfloat (a->ticks[i].value, <=, a->hi);
      g_assert_cmpfloat (a->ticks[i].pos, >=, lo_px - 0.5);
      g_assert_cmpfloat (a->ticks[i].pos, <=, hi_px + 0.5);
      if (i > 0)
        {
          g_assert_cmpfloat (a->ticks[i].value, >, a->ticks[i - 1].value);
          /* x grows rightwards, values upwards (y down). */
          if (along_x)
            g_assert_cmpfloat (a->ticks[i].pos, >, a->ticks[i - 1].pos);
          else
            g_assert_cmpfloat (a->ticks[i].pos, <, a->ticks[i - 1].pos);
        }
    }
}

static void
test_plot_has_axes (void)
{
  g_autoptr (SvConvergence) c = small_convergence ();
  const int width = 320, height = 190;
  const double ink[4] = { 0, 0, 0, 1 };
  SvConvergencePlot p;
  double most_changed = 0, most_shift = 0;
  cairo_surface_t *surface;
  cairo_t *cr;
  guint8 *data;
  int stride;
  guint axis_dark = 0, axis_len = 0, label_ink = 0;

  g_assert_true (sv_convergence_plot_layout (c, width, height, &p));
  g_test_message ("area %.0f,%.0f – %.0f,%.0f", p.x0, p.y0, p.x1, p.y1);
  /* Room for the tick labels on three sides. */
  g_assert_cmpfloat (p.x0, >, 10);
  g_assert_cmpfloat (p.x1, <, width - 10);
  g_assert_cmpfloat (p.y1, <, height - 15);
  g_assert_cmpfloat (p.y1 - p.y0, >, 100);

  g_assert_cmpstr (p.iteration.title, ==, "iteration");
  g_assert_nonnull (strstr (p.changed.title, "changed"));
  g_assert_nonnull (strstr (p.shift.title, "shift"));
  check_ticks (&p.iteration, TRUE, p.x0, p.x1);
  check_ticks (&p.changed, FALSE, p.y0, p.y1);
  check_ticks (&p.shift, FALSE, p.y0, p.y1);
  g_assert_cmpfloat (p.iteration.ticks[0].value, ==, 1);
  g_assert_cmpfloat (p.iteration.ticks[p.iteration.n_ticks - 1].value, ==, c->n_iterations);
  g_assert_cmpfloat (p.changed.ticks[0].value, ==, 0);
  g_assert_cmpfloat (p.shift.ticks[0].value, ==, 0);
  g_assert_true (p.changed.log);
  for (guint i = 0; i < c->n_iterations; i++)
    {
      most_changed = MAX (most_changed, (double)c->changed[i]);
      most_shift = MAX (most_shift, c->mean_moved[i]);
    }
  /* Both series fit their axes. */
  g_assert_cmpfloat (p.changed.hi, >=, most_changed);
  g_assert_cmpfloat (p.shift.hi, >=, most_shift);
  g_assert_cmpfloat (p.changed.hi, <=, 10.0 * most_changed);
  g_assert_cmpfloat (p.shift.hi, <=, 2.5 * most_shift);
  /* The log axis: 0, then powers of ten (10, 100, 1k …). */
  g_assert_cmpstr (p.changed.ticks[1].text, ==, "10");
  for (guint i = 1; i < p.changed.n_ticks; i++)
    g_assert_cmpfloat (
        fabs (log10 (p.changed.ticks[i].value) - round (log10 (p.changed.ticks[i].value))), <,
        1e-9);

  /* Drawn: the axis lines in ink, and tick labels below the x axis. */
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cr = cairo_create (surface);
  sv_convergence_plot_draw (cr, width, height, c, 3, ink);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  data = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);
  for (int y = (int)p.y0 + 1; y < (int)p.y1; y++, axis_len++)
    {
      guint32 px = ((guint32 *)(data + (gsize)y * stride))[(int)floor (p.x0)];
      axis_dark += (px >> 24) > 200 && ((px >> 16) & 0xff) < 80 && (px & 0xff) < 80;
    }
  /* The x axis: opaque all along (a converged series runs on it), with a
   * tick in ink under each iteration labelled. */
  for (int x = (int)p.x0 + 1; x < (int)p.x1; x++, axis_len++)
    axis_dark += (((guint32 *)(data + (gsize)floor (p.y1) * stride))[x] >> 24) > 200;
  for (guint i = 0; i < p.iteration.n_ticks; i++)
    {
      guint32 px = ((guint32 *)(data
                                + (gsize)(floor (p.y1) + 2)
                                      * stride))[(int)floor (p.iteration.ticks[i].pos)];
      g_assert_cmpuint (px >> 24, >, 200);
      g_assert_cmpuint ((px >> 16) & 0xff, <, 80);
    }
  for (int y = (int)p.y1 + 6; y < height; y++)
    for (int x = 0; x < width; x++)
      label_ink += (((guint32 *)(data + (gsize)y * stride))[x] >> 24) > 128;
  if (g_getenv ("SV_LOG_DIR"))
    {
      g_autofree char *path
          = g_build_filename (g_getenv ("SV_LOG_DIR"), "gui-convergence-plot.png", NULL);
      cairo_surface_write_to_png (surface, path);
    }
  cairo_surface_destroy (surface);
  g_test_message ("axes: %u of %u pixels dark; %u pixels of labels below", axis_dark, axis_len,
                  label_ink);
  g_assert_cmpuint (axis_dark, >=, axis_len * 9 / 10);
  g_assert_cmpuint (label_ink, >, 50);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/teach/step-zero-draws-the-seed-grid", Fixture, NULL, fixture_setup,
              test_step_zero_draws_seed_grid, fixture_teardown);
  g_test_add ("/gui/teach/centres-off-the-slice-drawn-faded", Fixture, NULL, fixture_setup,
              test_centres_off_the_slice_faded, fixture_teardown);
  g_test_add ("/gui/teach/note-follows-the-step", Fixture, NULL, fixture_setup,
              test_note_follows_step, fixture_teardown);
  g_test_add_func ("/gui/teach/convergence-plot-has-axes", test_plot_has_axes);
  return g_test_run ();
}

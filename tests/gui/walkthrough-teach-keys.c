/* The new user's pass (test-gui-walkthrough.c), still on the EM stack:
 * teaching steps through the algorithm in 3D, then keys in fields and in
 * the views, and the shortcuts window. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-pointer.h"
#include "gui-test-util.h"
#include "supervox/sv-seeds.h"
#include "walkthrough.h"

/* ---- teaching ---- */

static char *
teaching_note (void)
{
  g_autofree char *legend = sv_window_get_teaching_legend (walk.window);

  g_assert_nonnull (legend);
  g_assert_nonnull (strchr (legend, '\n'));
  return g_strdup (strchr (legend, '\n') + 1);
}

static gboolean
note_measured (gpointer data)
{
  g_autofree char *note = teaching_note ();
  return sv_window_is_settled (walk.window)
         && (strstr (note, "changed cluster") || strstr (note, "first cluster"));
}

static gboolean
step_shown (gpointer data)
{
  SvJobResult *r = sv_window_get_result (walk.window);
  return sv_params_panel_get_stop_after_iteration (walk_panel ()) == GPOINTER_TO_INT (data)
         && sv_window_is_settled (walk.window) && r->stop_after_iteration == GPOINTER_TO_INT (data);
}

/* Ctrl+] or Ctrl+[ until teaching shows `step` (Ctrl+] starts at step 1). */
static SvJobResult *
teach_to (int step)
{
  for (int now = sv_params_panel_get_stop_after_iteration (walk_panel ()); now != step;)
    {
      int next = now < 0 ? 1 : now < step ? now + 1 : now - 1;

      walk_point_at_view (0.5, 0.5);
      xdotool (walk.window, "key %s", next > now ? "ctrl+bracketright" : "ctrl+bracketleft");
      wait_until (step_shown, GINT_TO_POINTER (next), "the teaching step");
      now = next;
    }
  if (step > 0)
    wait_until (note_measured, NULL, "the step's numbers");
  return sv_window_get_result (walk.window);
}

/* Trap 10: step 0 draws the seed grid and says so; a slice with no centre
 * of its own shows the nearby ones, fainter; the note follows the step.
 * The supervoxel selected before is none at step 0, where no voxel has a
 * cluster, and comes back with the clusters. */
void
step_teaching_in_3d (void)
{
  SvWindow *w = walk.window;
  SvSliceView *xy = sv_window_get_slice_view (w, SV_AXIS_XY);
  SvPickPanel *pick = sv_window_get_pick_panel (w);
  g_autofree char *zero = NULL, *one = NULL, *two = NULL, *seeded = NULL, *count = NULL;
  SvSeeds seeds = { 0 };
  g_autoptr (GError) error = NULL;
  gsize drawn = 0;
  int empty_slice = -1;
  guint shape[3];
  SvJobResult *r;

  if (!have_xdotool ())
    return;
  shape[0] = sv_window_get_volume (w)->nz;
  shape[1] = sv_window_get_volume (w)->ny;
  shape[2] = sv_window_get_volume (w)->nx;
  g_assert_true (sv_window_get_selected (w, NULL));
  teach_to (1);
  r = teach_to (0);
  g_assert_true (sv_seeds_grid (shape, r->params.n_segments, &seeds, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (r->n_centres, ==, seeds.n);
  count = g_strdup_printf (" · %" G_GSIZE_FORMAT " clusters", seeds.n);
  g_test_message ("%s", sv_window_get_result_text (w));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), "teaching step 0 of 10"));
  g_assert_nonnull (strstr (sv_window_get_result_text (w), count));
  zero = teaching_note ();
  seeded = g_strdup_printf (
      "Step 0 of 10, seeding: %" G_GSIZE_FORMAT " cluster centres on a regular grid", seeds.n);
  g_assert_true (g_str_has_prefix (zero, seeded));
  g_assert_false (sv_window_get_selected (w, NULL));
  g_assert_cmpstr (sv_pick_panel_get_text (pick, "voxels"), !=, "computing…");
  /* Every seed drawn at full strength on its own slice. */
  for (guint z = 0; z < shape[0]; z++)
    {
      g_autofree SvCentreMark *marks = NULL;
      gsize n = 0;

      sv_slice_view_set_slice (xy, z);
      marks = sv_slice_view_collect_centre_marks (xy, &n);
      for (gsize i = 0; i < n; i++)
        drawn += marks[i].strength == 1.0f;
    }
  g_assert_cmpuint (drawn, ==, seeds.n);
  sv_slice_view_set_slice (xy, (guint)seeds.zyx[0]);
  walk_shoot ("07-teaching-seeds");

  teach_to (1);
  one = teaching_note ();
  g_assert_true (sv_window_get_selected (w, NULL));
  r = teach_to (2);
  two = teaching_note ();
  g_test_message ("1: %s\n2: %s", one, two);
  g_assert_true (g_str_has_prefix (one, "Step 1 of 10"));
  g_assert_true (g_str_has_prefix (two, "Step 2 of 10"));
  g_assert_nonnull (strstr (two, "voxels changed cluster"));
  g_assert_cmpstr (one, !=, two);

  /* A slice no centre lies on (within half a voxel): the nearby ones. */
  for (guint z = shape[0] / 2; z < shape[0] && empty_slice < 0; z++)
    {
      gboolean any = FALSE;
      for (gsize k = 0; k < r->n_centres; k++)
        any |= !isnan (r->centres[k * 3]) && fabsf (r->centres[k * 3] - (float)z) <= 0.5f;
      if (!any)
        empty_slice = (int)z;
    }
  g_assert_cmpint (empty_slice, >=, 0);
  sv_slice_view_set_slice (xy, (guint)empty_slice);
  {
    g_autofree SvCentreMark *marks = NULL;
    gsize n = 0;

    marks = sv_slice_view_collect_centre_marks (xy, &n);
    g_test_message ("slice %d: %" G_GSIZE_FORMAT " centres drawn", empty_slice, n);
    g_assert_cmpuint (n, >, 0);
    for (gsize i = 0; i < n; i++)
      g_assert_cmpfloat (marks[i].strength, <, 1.0f);
  }
  /* The hover follows the slice shown. */
  wait_until (walk_hover_on_slice_shown, NULL, "the hover readout of the slice shown");
  walk_shoot ("08-teaching-nearby-centres");
  sv_seeds_clear (&seeds);

  /* Out of teaching, as the panel's check box does it. */
  gtk_check_button_set_active (
      GTK_CHECK_BUTTON (walk_field (GTK_TYPE_CHECK_BUTTON, "stop after an")), FALSE);
  wait_for_current_result (w);
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), "exact"));
}

/* ---- keys ---- */

static gboolean
toast_says_pinned (gpointer data)
{
  const char *t = sv_window_get_toast_text (walk.window);
  return t && g_str_has_prefix (t, "pinned:");
}

static gboolean
showing_pinned_is (gpointer data)
{
  return sv_window_get_showing_pinned (walk.window) == GPOINTER_TO_INT (data);
}

static gboolean
has_focus (gpointer widget)
{
  return gtk_widget_has_focus (widget) || gtk_widget_get_focus_child (widget) != NULL;
}

static void
collect_shortcuts (GtkWidget *widget, GPtrArray *out)
{
  if (GTK_IS_SHORTCUTS_SHORTCUT (widget))
    g_ptr_array_add (out, widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    collect_shortcuts (c, out);
}

static gboolean
overlay_shown (gpointer data)
{
  GtkWidget *content = gtk_window_get_child (data);
  return gtk_widget_get_mapped (data) && content && gtk_widget_get_width (content) > 0;
}

/* The accelerator the shortcuts window lists for `action`, parsed. */
static void
listed_keys (GPtrArray *shortcuts, const char *action, guint *key, GdkModifierType *mods)
{
  for (guint i = 0; i < shortcuts->len; i++)
    {
      g_autofree char *name = NULL, *accelerator = NULL;

      g_object_get (shortcuts->pdata[i], "action-name", &name, "accelerator", &accelerator, NULL);
      if (g_strcmp0 (name, action) == 0)
        {
          g_assert_true (gtk_accelerator_parse (accelerator, key, mods));
          return;
        }
    }
  g_error ("%s is not in the shortcuts window", action);
}

/* The shortcuts window: Copy as Python is there with its keys, step and
 * step back differ, a click selects, and no line repeats its title. */
static void
check_shortcuts_window (void)
{
  GtkShortcutsWindow *overlay
      = gtk_application_window_get_help_overlay (GTK_APPLICATION_WINDOW (walk.window));
  g_autoptr (GPtrArray) shortcuts = g_ptr_array_new ();
  GdkModifierType mods, step_mods, back_mods;
  guint key, step_key, back_key;
  GLogLevelFlags fatal;
  gboolean click_selects = FALSE;

  /* GTK 4.8's own keycap labels warn about their sizes once it is shown:
   * warnings are not fatal meanwhile. */
  g_assert_nonnull (overlay);
  fatal = g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  walk_point_at_view (0.5, 0.5);
  xdotool (walk.window, "key ctrl+question");
  wait_until (overlay_shown, overlay, "the shortcuts window");
  collect_shortcuts (GTK_WIDGET (overlay), shortcuts);
  listed_keys (shortcuts, "win.copy-python", &key, &mods);
  g_assert_cmpuint (key, ==, GDK_KEY_y);
  g_assert_cmpuint (mods, ==, GDK_CONTROL_MASK | GDK_SHIFT_MASK);
  listed_keys (shortcuts, "win.teach-step", &step_key, &step_mods);
  listed_keys (shortcuts, "win.teach-back", &back_key, &back_mods);
  g_assert_cmpuint (step_key, !=, back_key);
  for (guint i = 0; i < shortcuts->len; i++)
    {
      g_autofree char *title = NULL, *subtitle = NULL;

      g_object_get (shortcuts->pdata[i], "title", &title, "subtitle", &subtitle, NULL);
      if (g_str_equal (title, "Click"))
        click_selects = g_str_has_prefix (subtitle, "selects");
      /* Not "Drag / Drag: pan" nor "Mouse wheel / Scroll: change slice":
       * the line under a title goes on from it. */
      if (subtitle && *subtitle)
        {
          g_assert_false (g_str_has_prefix (subtitle, title));
          g_assert_true (!strchr (subtitle, ':') || strchr (subtitle, ':') - subtitle > 20);
        }
    }
  g_assert_true (click_selects);
  save_toplevel_png (GTK_WINDOW (overlay), "walkthrough-11-shortcuts.png");
  gtk_window_close (GTK_WINDOW (overlay));
  wait_for_layout (walk.window);
  g_log_set_always_fatal (fatal);
}

/* Trap 7: P and C typed into a field are letters; in the views they pin
 * and flip; Ctrl+? lists the keys, Copy as Python among them. */
void
step_keys (void)
{
  SvWindow *w = walk.window;
  GtkWidget *segments = walk_field (GTK_TYPE_SPIN_BUTTON, "n_segments");
  guint pins = sv_window_get_n_pins (w);
  g_autofree char *pinned = NULL, *count = NULL;
  SvJobResult *live;
  SvSlicParams p;

  if (!have_xdotool ())
    return;
  sv_params_panel_get_params (walk_panel (), &p);
  type_into (w, segments, "10pc");
  g_assert_cmpuint (sv_window_get_n_pins (w), ==, pins);
  g_assert_false (sv_window_get_showing_pinned (w));
  g_assert_false (toast_says_pinned (NULL));
  walk_shoot ("09-typed-10pc");
  xdotool (w, "key Return");
  wait_until (walk_note_shown, NULL, "the note on the letters");
  g_test_message ("note: %s", sv_params_panel_get_note (walk_panel ()));
  g_assert_nonnull (strstr (sv_params_panel_get_note (walk_panel ()), "not a number"));
  {
    SvSlicParams now;
    sv_params_panel_get_params (walk_panel (), &now);
    g_assert_cmpint (now.n_segments, ==, p.n_segments);
  }
  count = g_strdup_printf ("%" G_GINT64_FORMAT, p.n_segments);
  enter_number (w, segments, count);

  /* In the views: P pins, C flips to the pin and back. */
  walk_point_at_view (0.5, 0.5);
  xdotool (w, "click 1");
  wait_until (has_focus, sv_window_get_slice_view (w, SV_AXIS_XY), "the focus in the views");
  wait_for_current_result (w);
  live = sv_window_get_result (w);
  xdotool (w, "key p");
  wait_until (toast_says_pinned, NULL, "P to pin");
  g_assert_cmpuint (sv_window_get_n_pins (w), ==, pins + 1);
  xdotool (w, "key c");
  wait_until (showing_pinned_is, GINT_TO_POINTER (TRUE), "C to flip to the pin");
  pinned = g_strdup_printf ("pin %u · %" G_GSIZE_FORMAT " supervoxels", pins + 1,
                            live->stats.n_labels);
  g_test_message ("%s", sv_window_get_result_text (w));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), pinned));
  walk_shoot ("10-pinned-shown");
  xdotool (w, "key c");
  wait_until (showing_pinned_is, GINT_TO_POINTER (FALSE), "C to flip back");

  check_shortcuts_window ();
}

/* Tests of the window's layout and keys under Xvfb: its width never follows
 * the text it shows, a real drag of the compactness slider moves the value
 * one way, single-letter keys leave text fields alone, and the shortcuts
 * window lists the keys the window has. Real pointer and key events come
 * from xdotool (the tests that need it skip without it). */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-util.h"
#include "gui-test-pointer.h"
#include "sv-application.h"
#include "sv-pick-panel.h"
#include "supervox/sv-io.h"

/* A volume large enough that a drag on the CPU shows coarse previews, with
 * their long status words. */
#define DRAG_NZ 48
#define DRAG_NY 224
#define DRAG_NX 224

static gboolean
preview_shown (gpointer window)
{
  SvJobResult *r = sv_window_get_result (window);
  return r && r->preview_factor > 1;
}

static gboolean
file_shown (gpointer window)
{
  return sv_window_get_volume (window) && !sv_window_is_busy (window);
}

static gboolean
pick_has_numbers (gpointer window)
{
  const char *voxels = sv_pick_panel_get_text (sv_window_get_pick_panel (window), "voxels");
  return voxels && g_ascii_isdigit (voxels[0]);
}

static void
test_width_stays (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  SvParamsPanel *panel = sv_window_get_params_panel (w);
  SvSliceView *xy = sv_window_get_slice_view (w, SV_AXIS_XY);
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-layout-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (
      dir,
      "a-very-long-file-name-as-microscopes-write-them-2024-11-26-session-3-stack-"
      "0042-40x4x4nm-16bit-aligned-cropped-denoised.tif",
      NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (SvVolume) v = sv_volume_new (DRAG_NZ, DRAG_NY, DRAG_NX, 1, NULL);
  g_autoptr (GError) error = NULL;
  SvSlicParams p;
  int width, height;

  width = narrow_window (w);
  g_assert_cmpint (width, <=, 1024);

  /* A picked supervoxel's numbers, some on two lines (the sample gives no
   * voxel size, and the panel says so): the Selection tab scrolls rather
   * than making the window taller. */
  height = gtk_widget_get_height (GTK_WIDGET (w));
  g_signal_emit_by_name (xy, "pick", NZ / 2, NY / 2, NX / 2);
  wait_until (pick_has_numbers, w, "the picked supervoxel's numbers");
  assert_width (w, width, "a pick");
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (w)), ==, height);

  /* A long file name in the title, 16-bit with nm spacing. */
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = (float)((i * 7919) % 1000) / 1000.0f;
  v->spacing[0] = 0.04;
  v->spacing[1] = v->spacing[2] = 0.004;
  v->unit = g_strdup ("micron");
  g_assert_true (sv_tiff_write_volume_full (path, v, SV_SAMPLE_U16, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sv_window_open_file (w, file));
  wait_until (file_shown, w, "the long-named file and its labels");
  assert_width (w, width, "a long file name");

  /* Hover: the voxel, its intensity and label in the status bar. */
  g_signal_emit_by_name (xy, "hover", DRAG_NZ - 1, DRAG_NY - 1, DRAG_NX - 1);
  g_assert_cmpstr (sv_window_get_hover_text (w), !=, "");
  assert_width (w, width, "hover");

  /* A drag on a volume that takes long: coarse previews, with their
   * status ("preview at 1/N scale · … · exact result on release"). */
  g_object_set (panel, "dragging", TRUE, NULL);
  sv_params_panel_set_compactness (panel, 0.2);
  sv_params_panel_set_compactness (panel, 0.3);
  wait_until (preview_shown, w, "a preview while dragging");
  g_assert_nonnull (strstr (sv_window_get_result_text (w), "exact result on release"));
  assert_width (w, width, "a preview's status");
  g_object_set (panel, "dragging", FALSE, NULL);
  wait_for_current_result (w);
  assert_width (w, width, "the exact result");

  /* A long note: more segments than the window computes. */
  sv_params_panel_get_params (panel, &p);
  p.n_segments = G_GINT64_CONSTANT (123456789012);
  sv_params_panel_set_params (panel, &p);
  wait_for_current_result (w);
  g_assert_nonnull (sv_params_panel_get_note (panel));
  assert_width (w, width, "a note");

  /* Teaching mode's legend under the views. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.teach-step", NULL));
  wait_for_current_result (w);
  g_assert_nonnull (sv_window_get_teaching_legend (w));
  assert_width (w, width, "teaching's legend");

  save_window_png (w, "gui-layout-long-texts.png");
  g_unlink (path);
  g_rmdir (dir);
}

/* ---- real pointer and keys ---- */

typedef struct
{
  SvParamsPanel *panel;
  GArray *values; /* compactness after each change */
  gboolean want_dragging;
} Drag;

static void
compactness_changed_cb (SvParamsPanel *panel, const SvSlicParams *p, Drag *d)
{
  if (d->values->len == 0 || g_array_index (d->values, double, d->values->len - 1) != p->compactness)
    g_array_append_val (d->values, p->compactness);
}

static gboolean
dragging_is (gpointer data)
{
  Drag *d = data;
  return sv_params_panel_get_dragging (d->panel) == d->want_dragging;
}

static gboolean
value_count_is (gpointer data)
{
  Drag *d = data;
  return d->values->len >= (guint)GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (d->panel),
                                                                       "sv-test-want"));
}

static void
test_compactness_drag_monotonic (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  SvParamsPanel *panel = sv_window_get_params_panel (w);
  GtkWidget *scale = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SCALE, "compactness on a log");
  g_autoptr (GError) error = NULL;
  Drag d = { panel, g_array_new (FALSE, FALSE, sizeof (double)), FALSE };
  GtkWidget *knob;
  int x, y, width;
  double start_value;
  gulong handler;

  if (!have_xdotool ())
    return;
  /* A volume whose drag on the CPU shows previews: their status must not
   * push the panel under the pointer. */
  g_assert_true (sv_window_load_sample (w, DRAG_NZ, DRAG_NY, DRAG_NX, &error));
  g_assert_no_error (error);
  wait_for_current_result (w);
  width = narrow_window (w);
  g_assert_nonnull (scale);
  knob = find_knob (scale);
  g_assert_nonnull (knob);
  /* On the knob: a press there grabs it without moving it. */
  surface_point (w, knob, gtk_widget_get_width (knob) / 2.0, gtk_widget_get_height (knob) / 2.0,
                 &x, &y);
  {
    SvSlicParams p;
    sv_params_panel_get_params (panel, &p);
    start_value = p.compactness;
  }
  g_array_append_val (d.values, start_value);
  handler = g_signal_connect (panel, "params-changed", G_CALLBACK (compactness_changed_cb), &d);

  xdotool (w, "mousemove --window WINDOW %d %d mousedown 1", x, y);
  d.want_dragging = TRUE;
  wait_until (dragging_is, &d, "the press on the slider");
  /* 12 steps of 5 pixels to the right, each seen before the next. */
  for (guint step = 1; step <= 12; step++)
    {
      xdotool (w, "mousemove --window WINDOW %d %d", x + 5 * (int)step, y);
      g_object_set_data (G_OBJECT (panel), "sv-test-want", GUINT_TO_POINTER (1 + step));
      wait_until (value_count_is, &d, "the slider to follow the pointer");
    }
  xdotool (w, "mouseup 1");
  d.want_dragging = FALSE;
  wait_until (dragging_is, &d, "the release");
  wait_for_current_result (w);
  g_signal_handler_disconnect (panel, handler);

  for (guint i = 0; i < d.values->len; i++)
    g_test_message ("compactness %u: %g", i, g_array_index (d.values, double, i));
  for (guint i = 1; i < d.values->len; i++)
    g_assert_cmpfloat (g_array_index (d.values, double, i), >,
                       g_array_index (d.values, double, i - 1));
  /* 60 pixels on a slider of six decades: more than tenfold. */
  g_assert_cmpfloat (g_array_index (d.values, double, d.values->len - 1), >, 10 * start_value);
  assert_width (w, width, "the drag");
  g_array_unref (d.values);
}

static gboolean
toast_says_pinned (gpointer window)
{
  const char *t = sv_window_get_toast_text (window);
  return t && g_str_has_prefix (t, "pinned:");
}

static gboolean
text_ends_with_p (gpointer editable)
{
  return g_str_has_suffix (gtk_editable_get_text (editable), "p");
}

static gboolean
has_focus (gpointer widget)
{
  return gtk_widget_has_focus (widget) || gtk_widget_get_focus_child (widget) != NULL;
}

static void
test_letters_in_fields (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  SvParamsPanel *panel = sv_window_get_params_panel (w);
  GtkWidget *spin = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "n_segments");
  GtkWidget *scale = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SCALE, "compactness on a log");
  SvSlicParams p;
  int x, y;

  if (!have_xdotool ())
    return;
  g_assert_nonnull (spin);
  sv_params_panel_get_params (panel, &p);
  p.n_segments = 40;
  sv_params_panel_set_params (panel, &p);
  wait_for_current_result (w);

  /* Keys go to the window under the pointer (no window manager). */
  surface_point (w, spin, 10, 10, &x, &y);
  xdotool (w, "mousemove --window WINDOW %d %d", x, y);
  gtk_widget_grab_focus (spin);
  gtk_editable_set_position (GTK_EDITABLE (spin), -1);
  wait_until (has_focus, spin, "the focus in Segments");
  xdotool (w, "key p");
  wait_until (text_ends_with_p, spin, "the p typed into Segments");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, "40p");
  g_assert_false (toast_says_pinned (w));

  /* Taken: not a number, so the count stays (not 1, GTK's fallback). */
  gtk_spin_button_update (GTK_SPIN_BUTTON (spin));
  wait_for_current_result (w);
  sv_params_panel_get_params (panel, &p);
  g_assert_cmpint (p.n_segments, ==, 40);
  g_assert_nonnull (strstr (sv_params_panel_get_note (panel), "not a number"));
  g_assert_false (toast_says_pinned (w));

  /* On a slider, which takes no letters, P pins. */
  gtk_widget_grab_focus (scale);
  wait_until (has_focus, scale, "the focus on the slider");
  xdotool (w, "key p");
  wait_until (toast_says_pinned, w, "P to pin with the slider focused");
}

/* ---- numbers ---- */

static void
test_quantities_readable (void)
{
  static const struct
  {
    double value;
    const char *text;
  } cases[] = {
    { 15640, "15\u202f640" },        { 15643.7, "15\u202f640" },  { 552960, "553\u202f000" },
    { 1234567, "1\u202f235\u202f000" }, { 1564, "1564" },         { 0.00064, "0.00064" },
    { 1.5, "1.5" },                   { 30, "30" },                { 9999.6, "10\u202f000" },
    { -24680, "-24\u202f680" },       { 0, "0" },                  { 0.123456, "0.1235" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = sv_format_quantity (cases[i].value);
      g_assert_cmpstr (text, ==, cases[i].text);
    }
}

/* ---- the shortcuts window ---- */

/* "<Control>bracketright" and "<Primary>bracketright" alike. */
static char *
normalise (const char *accelerator)
{
  guint key = 0;
  GdkModifierType mods = 0;

  g_assert_true (gtk_accelerator_parse (accelerator, &key, &mods));
  return gtk_accelerator_name (key, mods);
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
window_has_action (SvWindow *w, const char *name)
{
  const char *action, *property;
  const GVariantType *type;
  GType owner;
  GtkWidgetClass *klass = GTK_WIDGET_GET_CLASS (w);

  for (guint i = 0;
       gtk_widget_class_query_action (klass, i, &owner, &action, &type, &property); i++)
    if (g_str_equal (action, name))
      return TRUE;
  /* GtkApplicationWindow's own (show-help-overlay). */
  return g_str_has_prefix (name, "win.")
         && g_action_map_lookup_action (G_ACTION_MAP (w), name + strlen ("win.")) != NULL;
}

static void
test_shortcuts_match_actions (void)
{
  g_autoptr (SvApplication) app = sv_application_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) listed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GPtrArray) shortcuts = g_ptr_array_new ();
  g_auto (GStrv) described = NULL;
  GtkShortcutsWindow *overlay;
  const SvWindowKey *keys;
  guint n_keys;
  SvWindow *w;

  g_application_set_flags (G_APPLICATION (app),
                           g_application_get_flags (G_APPLICATION (app))
                               | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  w = SV_WINDOW (sv_window_new (GTK_APPLICATION (app)));
  overlay = gtk_application_window_get_help_overlay (GTK_APPLICATION_WINDOW (w));
  g_assert_nonnull (overlay);
  collect_shortcuts (GTK_WIDGET (overlay), shortcuts);
  g_assert_cmpuint (shortcuts->len, >, 10);

  /* Each key the overlay shows belongs to an action of the window or the
   * application, with the accelerator that action really has. */
  for (guint i = 0; i < shortcuts->len; i++)
    {
      g_autofree char *accelerator = NULL, *action = NULL, *title = NULL;
      GtkShortcutType type;

      g_object_get (shortcuts->pdata[i], "accelerator", &accelerator, "action-name", &action,
                    "shortcut-type", &type, "title", &title, NULL);
      if (type != GTK_SHORTCUT_ACCELERATOR)
        continue;
      g_test_message ("%s: %s (%s)", title, accelerator, action ? action : "window key");
      g_assert_nonnull (accelerator);
      if (action)
        {
          g_auto (GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app),
                                                                         action);
          g_autofree char *joined = NULL;
          g_autofree char *shown = NULL;
          g_auto (GStrv) shown_parts = g_strsplit (accelerator, " ", -1);

          g_assert_true (g_str_has_prefix (action, "app.")
                         || window_has_action (w, action));
          g_assert_nonnull (accels[0]);
          for (guint k = 0; accels[k]; k++)
            {
              char *n = normalise (accels[k]);
              g_free (accels[k]);
              accels[k] = n;
            }
          for (guint k = 0; shown_parts[k]; k++)
            {
              char *n = normalise (shown_parts[k]);
              g_free (shown_parts[k]);
              shown_parts[k] = n;
            }
          joined = g_strjoinv (" ", accels);
          shown = g_strjoinv (" ", shown_parts);
          g_assert_cmpstr (shown, ==, joined);
          g_hash_table_add (listed, g_strdup (action));
        }
      else
        {
          /* A window key: each of its accelerators is in the window's table. */
          g_auto (GStrv) parts = g_strsplit (accelerator, " ", -1);

          keys = sv_window_get_keys (&n_keys);
          for (guint k = 0; parts[k]; k++)
            {
              g_autofree char *shown = normalise (parts[k]);
              gboolean found = FALSE;

              for (guint j = 0; j < n_keys && !found; j++)
                {
                  g_autofree char *n = normalise (keys[j].accelerator);
                  if (g_str_equal (n, shown))
                    {
                      found = TRUE;
                      g_assert_true (window_has_action (w, keys[j].action));
                      g_hash_table_add (listed, g_strdup_printf ("%s %s", keys[j].action, n));
                    }
                }
              g_assert_true (found);
            }
        }
    }

  /* And every action with an accelerator, and every window key, is listed. */
  described = gtk_application_list_action_descriptions (GTK_APPLICATION (app));
  for (guint i = 0; described[i]; i++)
    {
      g_auto (GStrv) accels
          = gtk_application_get_accels_for_action (GTK_APPLICATION (app), described[i]);
      if (accels[0] && !g_hash_table_contains (listed, described[i]))
        g_error ("%s (%s) is missing from the shortcuts window", described[i], accels[0]);
    }
  g_assert_true (g_hash_table_contains (listed, "win.copy-python"));
  keys = sv_window_get_keys (&n_keys);
  for (guint j = 0; j < n_keys; j++)
    {
      g_autofree char *n = normalise (keys[j].accelerator);
      g_autofree char *key = g_strdup_printf ("%s %s", keys[j].action, n);
      if (!g_hash_table_contains (listed, key))
        g_error ("%s (%s) is missing from the shortcuts window", keys[j].action, n);
    }
  gtk_window_destroy (GTK_WINDOW (w));
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/layout/width-stays", Fixture, NULL, fixture_setup, test_width_stays,
              fixture_teardown);
  g_test_add ("/gui/layout/compactness-drag-monotonic", Fixture, NULL, fixture_setup,
              test_compactness_drag_monotonic, fixture_teardown);
  g_test_add ("/gui/layout/letters-stay-in-fields", Fixture, NULL, fixture_setup,
              test_letters_in_fields, fixture_teardown);
  g_test_add_func ("/gui/layout/shortcuts-match-actions", test_shortcuts_match_actions);
  g_test_add_func ("/gui/layout/quantities-readable", test_quantities_readable);
  return g_test_run ();
}

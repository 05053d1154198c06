/* A new user's pass through the window under Xvfb, as issue 20 ("The
 * window, round three") took it, with real pointer and keys from xdotool.
 * One window, opened as the application opens it, goes through a
 * 40×4×4 nm EM stack (walkthrough-em.c), is taught with it and keyed
 * (walkthrough-teach-keys.c), then takes a float MRI with a NaN and an RGB
 * photo (walkthrough-files.c); each step checks values that would be wrong
 * if one of the ten traps came back. The steps run in order, each
 * where the last left the window, and each saves a screenshot
 * (walkthrough-NN-….png) in the build's log folder. This file holds what
 * the steps share, the first and the last step, and their order. */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-pointer.h"
#include "gui-test-util.h"
#include "supervox/sv-synth.h"
#include "sv-test-files.h"
#include "walkthrough.h"

Walk walk;

/* ---- what the steps share ---- */

SvParamsPanel *
walk_panel (void)
{
  return sv_window_get_params_panel (walk.window);
}

GtkWidget *
walk_field (GType type, const char *tooltip)
{
  GtkWidget *w = find_by_tooltip (GTK_WIDGET (walk_panel ()), type, tooltip);

  g_assert_nonnull (w);
  return w;
}

void
walk_point_at_view (double fx, double fy)
{
  point_at_widget (walk.window, GTK_WIDGET (sv_window_get_slice_view (walk.window, SV_AXIS_XY)), fx,
                   fy);
}

void
walk_assert_width (const char *after)
{
  assert_width (walk.window, walk.width, after);
}

void
walk_shoot (const char *name)
{
  g_autofree char *file = g_strdup_printf ("walkthrough-%s.png", name);
  save_window_png (walk.window, file);
}

char *
walk_write_stack (const char *name, const guint shape[3], const double spacing[3], const char *unit,
                  SvSampleType type, double scale)
{
  g_autofree char *path = g_build_filename (walk.dir, name, NULL);
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (GError) error = NULL;
  SvSynthParams sp;

  sv_synth_params_init_defaults (&sp);
  sp.nz = shape[0];
  sp.ny = shape[1];
  sp.nx = shape[2];
  sp.n_cells = 40;
  sp.nucleus_radius = 4.0;
  sp.noise_sigma = 0.05;
  v = sv_synth_cells (&sp, NULL, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] *= (float)scale;
  if (spacing)
    {
      memcpy (v->spacing, spacing, sizeof v->spacing);
      v->unit = g_strdup (unit);
    }
  if (type == SV_SAMPLE_F32)
    v->data[((gsize)7 * shape[1] + 30) * shape[2] + 41] = NAN;
  g_assert_true (sv_tiff_write_volume_full (path, v, type, NULL, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

void
walk_open (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);

  open_and_wait (walk.window, file);
  g_assert_null (sv_window_get_error_dialog (walk.window));
}

double
walk_read_quantity (const char *text)
{
  g_autoptr (GString) digits = g_string_new (NULL);
  const char *p = text;

  while (g_ascii_isdigit (*p) || *p == '.' || g_str_has_prefix (p, "\u202f"))
    {
      if (g_str_has_prefix (p, "\u202f"))
        p += strlen ("\u202f");
      else
        g_string_append_c (digits, *p++);
    }
  g_assert_cmpuint (digits->len, >, 0);
  /* The unit or the next word follows a space or a line: "1.5e+04 mm³"
   * stops at the e. */
  g_assert_true (*p == ' ' || *p == '\n');
  return g_ascii_strtod (digits->str, NULL);
}

gboolean
walk_quality_current (gpointer unused)
{
  SvQuality *q = sv_quality_panel_get_quality (sv_window_get_quality_panel (walk.window));
  SvJobResult *r = sv_window_get_result (walk.window);

  return sv_window_is_settled (walk.window) && q && r && q->generation == r->generation;
}

static GtkWidget *
label_with_text (GtkWidget *root, const char *text)
{
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found;
      if (GTK_IS_LABEL (c) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (c)), text) == 0)
        return c;
      if ((found = label_with_text (c, text)))
        return found;
    }
  return NULL;
}

GtkWidget *
walk_note_label (void)
{
  const char *note = sv_params_panel_get_note (walk_panel ());

  g_assert_nonnull (note);
  return label_with_text (GTK_WIDGET (walk_panel ()), note);
}

void
walk_assert_in_view (GtkWidget *widget, const char *what)
{
  GtkWidget *scroller = gtk_widget_get_ancestor (widget, GTK_TYPE_SCROLLED_WINDOW);
  graphene_rect_t box;

  wait_for_layout (walk.window);
  g_assert_true (gtk_widget_get_mapped (widget));
  g_assert_true (gtk_widget_compute_bounds (widget, scroller, &box));
  g_test_message ("%s: y %.0f–%.0f of %d px in view", what, box.origin.y,
                  box.origin.y + box.size.height, gtk_widget_get_height (scroller));
  g_assert_cmpfloat (box.origin.y, >=, 0);
  g_assert_cmpfloat (box.origin.y + box.size.height, <=, gtk_widget_get_height (scroller));
}

gboolean
walk_hover_on_slice_shown (gpointer data)
{
  SvSliceView *xy = sv_window_get_slice_view (walk.window, SV_AXIS_XY);
  g_autofree char *z = g_strdup_printf ("  z %u  ·", sv_slice_view_get_slice (xy));
  const char *hover = sv_window_get_hover_text (walk.window);

  return g_str_has_prefix (hover, "x ") && strstr (hover, z);
}

gboolean
walk_note_shown (gpointer data)
{
  return sv_params_panel_get_note (walk_panel ()) != NULL;
}

/* ==== the pass ==== */

/* The application's window, as a new user gets it: the sample segmented. */
static void
step_window_opens (void)
{
  g_autoptr (GError) error = NULL;
  int width, height;

  walk.dir = sv_test_make_dir ("sv-gui-walkthrough");
  walk.app = sv_application_new ();
  g_assert_true (g_application_register (G_APPLICATION (walk.app), NULL, &error));
  g_assert_no_error (error);
  walk.window = SV_WINDOW (sv_window_new (GTK_APPLICATION (walk.app)));
  gtk_window_get_default_size (GTK_WINDOW (walk.window), &width, &height);
  g_assert_cmpint (width, ==, 1180);
  gtk_window_present (GTK_WINDOW (walk.window));
  g_assert_true (sv_window_load_sample (walk.window, NZ, NY, NX, &error));
  g_assert_no_error (error);
  wait_for_current_result (walk.window);
  wait_for_layout (walk.window);
  walk.width = gtk_widget_get_width (GTK_WIDGET (walk.window));
  g_test_message ("the window is %d px wide", walk.width);
  walk_shoot ("00-sample");
}

/* Trap 1: a long file name; trap 3: the spacing the window uses; trap 6:
 * segments from the file's size, the size shown in voxels and nm³. */

static void
step_close (void)
{
  gpointer weak = walk.window;

  if (walk.window)
    {
      g_object_add_weak_pointer (G_OBJECT (walk.window), &weak);
      gtk_window_destroy (GTK_WINDOW (walk.window));
      while (weak)
        g_main_context_iteration (NULL, TRUE);
    }
  g_clear_object (&walk.app);
  sv_test_remove_tree (walk.dir);
  g_free (walk.dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gui/walkthrough/00-the-window-opens", step_window_opens);
  g_test_add_func ("/gui/walkthrough/01-an-em-stack-in-nm", step_em_stack_opens);
  g_test_add_func ("/gui/walkthrough/02-hover-pick-and-drag", step_hover_pick_and_drag);
  g_test_add_func ("/gui/walkthrough/03-copy-as-command-is-export", step_copy_as_command);
  g_test_add_func ("/gui/walkthrough/04-spacing-defaults-said", step_spacing_defaults_said);
  g_test_add_func ("/gui/walkthrough/05-stop-mid-run", step_stop_mid_run);
  g_test_add_func ("/gui/walkthrough/06-teaching-in-3d", step_teaching_in_3d);
  g_test_add_func ("/gui/walkthrough/07-keys-in-fields-and-views", step_keys);
  g_test_add_func ("/gui/walkthrough/08-a-float-file-with-a-nan", step_float_file_with_nan);
  g_test_add_func ("/gui/walkthrough/09-few-labels", step_few_labels);
  g_test_add_func ("/gui/walkthrough/10-quality-fits", step_quality_fits);
  g_test_add_func ("/gui/walkthrough/11-a-photo", step_photo);
  g_test_add_func ("/gui/walkthrough/12-close", step_close);
  return g_test_run ();
}

/* GUI tests of an OME-Zarr image's resolution levels under Xvfb: a
 * three-level image written by the test offers its levels in the panel's
 * "Level" with their shapes and voxel sizes; a real pick of level 1 reads
 * it with the panel's values and "Segment on" kept and the slice shown at
 * the same depth; "Copy as command" names --zarr-level 1 and, run by
 * supervox-cli, writes the window's export byte for byte with the same
 * sidecar. A one-level image offers no choice. */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <string.h>

#include "gui-test-command.h"
#include "gui-test-pointer.h"
#include "gui-test-util.h"
#include "supervox/sv-sidecar.h"
#include "supervox/sv-synth.h"
#include "sv-test-files.h"
#include "sv-test-python.h"
#include "sv-test-zarr.h"

#define N_LEVELS 3

static GtkDropDown *
level_dropdown (Fixture *f)
{
  GtkWidget *w = find_by_tooltip (GTK_WIDGET (sv_window_get_params_panel (f->window)),
                                  GTK_TYPE_DROP_DOWN, "Level");

  if (w == NULL)
    g_error ("the parameter panel has no “Level” dropdown");
  return GTK_DROP_DOWN (w);
}

/* Two channels of cells, 16×64×64 voxels of 1×0.25×0.25 µm, and its
 * halves down to 4×16×16; returns the image's path. */
static char *
write_pyramid (const char *dir, guint n_levels)
{
  g_autoptr (GError) error = NULL;
  SvVolume *levels[N_LEVELS] = { NULL };
  SvSynthParams sp;
  char *image;

  sv_synth_params_init_defaults (&sp);
  sp.nz = 16;
  sp.ny = 64;
  sp.nx = 64;
  sp.n_cells = 8;
  levels[0] = sv_volume_new (sp.nz, sp.ny, sp.nx, 2, &error);
  g_assert_no_error (error);
  for (guint c = 0; c < 2; c++)
    {
      g_autoptr (SvVolume) one = NULL;
      sp.seed = 1 + c;
      one = sv_synth_cells (&sp, NULL, &error);
      g_assert_no_error (error);
      for (gsize k = 0; k < sv_volume_n_voxels (one); k++)
        levels[0]->data[k * 2 + c] = one->data[k];
    }
  levels[0]->spacing[0] = 1.0;
  levels[0]->spacing[1] = levels[0]->spacing[2] = 0.25;
  for (guint i = 1; i < n_levels; i++)
    levels[i] = sv_test_downsample (levels[i - 1]);
  image = sv_test_write_ome_zarr (dir, "cells.zarr", levels, n_levels, "micrometer", NULL);
  for (guint i = 0; i < n_levels; i++)
    sv_volume_free (levels[i]);
  return image;
}

static gboolean
shows_level_1 (gpointer window)
{
  const SvVolume *v = sv_window_get_volume (window);
  return !sv_window_is_busy (window) && v != NULL && v->nz == 8;
}

/* A json key's value as Python prints it. */
static char *
sidecar_value (const char *json_path, const char *key)
{
  return sv_test_python_args ("import json, sys\n"
                              "print(json.load(open(sys.argv[1]))[sys.argv[2]], end='')\n",
                              json_path, key);
}

static void
test_choose_level (Fixture *f, gconstpointer data)
{
  static const char *const words[N_LEVELS] = {
    "0: 16×64×64, 1×0.25×0.25 µm",
    "1: 8×32×32, 2×0.5×0.5 µm",
    "2: 4×16×16, 4×1×1 µm",
  };
  g_autofree char *dir = sv_test_make_dir ("sv-gui-zarr");
  g_autofree char *image = write_pyramid (dir, N_LEVELS);
  g_autofree char *level1 = g_build_filename (image, "1", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (image);
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  GtkDropDown *dropdown = level_dropdown (f), *segment_on;
  GListModel *names;
  SvSlicParams before, after;
  g_autofree char *line = NULL, *want = NULL, *from_cli = NULL, *name = NULL;
  g_autofree char *window_json = NULL, *cli_json = NULL, *same = NULL, *input = NULL;
  const SvVolume *v;

  if (!have_xdotool ())
    return;
  /* The sample has no levels: no choice. */
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (dropdown)));

  open_and_wait (f->window, file);
  g_assert_null (sv_window_get_error_dialog (f->window));
  wait_for_current_result (f->window);
  v = sv_window_get_volume (f->window);
  g_assert_cmpuint (v->nz, ==, 16);
  g_assert_cmpuint (v->nx, ==, 64);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dropdown)));
  names = gtk_drop_down_get_model (dropdown);
  g_assert_cmpuint (g_list_model_get_n_items (names), ==, N_LEVELS);
  for (guint i = 0; i < N_LEVELS; i++)
    g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (names), i), ==, words[i]);
  g_assert_cmpuint (gtk_drop_down_get_selected (dropdown), ==, 0);

  /* What the user set: channel 2 and a compactness of their own; the
   * segments left at level 0's default, and slice 12 of 16. */
  segment_on
      = GTK_DROP_DOWN (find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_DROP_DOWN, "Segment on"));
  g_assert_nonnull (segment_on);
  gtk_drop_down_set_selected (segment_on, 2);
  sv_params_panel_set_compactness (panel, 0.3);
  sv_slice_view_set_slice (xy, 12);
  wait_for_current_result (f->window);
  sv_params_panel_get_params (panel, &before);
  save_window_png (f->window, "zarr-level-0");

  choose_in_dropdown (f->window, dropdown, 1);
  wait_until (shows_level_1, f->window, "level 1 to load");
  wait_for_current_result (f->window);
  save_window_png (f->window, "zarr-level-1");

  /* Level 1's shape, and its spacing and unit from its scale. */
  v = sv_window_get_volume (f->window);
  g_assert_cmpuint (v->nz, ==, 8);
  g_assert_cmpuint (v->ny, ==, 32);
  g_assert_cmpuint (v->nx, ==, 32);
  g_assert_cmpuint (v->nc, ==, 2);
  g_assert_cmpfloat (v->spacing[0], ==, 2.0);
  g_assert_cmpfloat (v->spacing[1], ==, 0.5);
  g_assert_cmpfloat (v->spacing[2], ==, 0.5);
  g_assert_cmpstr (v->unit, ==, "µm");
  g_assert_cmpstr (sv_params_panel_get_spacing_unit_text (panel), ==,
                   "in multiples of the finest axis, 0.5 µm");
  g_assert_cmpuint (gtk_drop_down_get_selected (dropdown), ==, 1);
  g_assert_cmpuint (g_list_model_get_n_items (names), ==, N_LEVELS);
  /* Slice 12 of 16 is slice 6 of 8: the same depth. */
  g_assert_cmpuint (sv_slice_view_get_slice (xy), ==, 6);
  /* Every value stays, the segments too (the same µm each), and the channel. */
  sv_params_panel_get_params (panel, &after);
  g_assert_cmpint (after.n_segments, ==, before.n_segments);
  g_assert_cmpfloat (after.compactness, ==, 0.3);
  g_assert_cmpint (after.max_num_iter, ==, before.max_num_iter);
  g_assert_cmpfloat (after.sigma[0], ==, before.sigma[0]);
  g_assert_cmpint (sv_params_panel_get_channel (panel), ==, 1);
  g_assert_null (sv_params_panel_get_kept_text (panel));

  /* The line names the image and the level; supervox-cli writes the
   * window's export from it, with the same sidecar. */
  line = copy_command_with_keys (f->window);
  g_test_message ("copied: %s", line);
  want = g_strdup_printf ("supervox-cli slic %s -o ", image);
  g_assert_true (g_str_has_prefix (line, want));
  g_assert_nonnull (strstr (line, " --zarr-level 1 --channel 1"));
  g_assert_null (strstr (line, level1));
  name = sv_window_default_export_name (f->window);
  g_assert_cmpstr (name, ==, "cells-labels.tif");
  from_cli = assert_copied_command_writes_export (f->window, dir);
  {
    g_autofree char *exported = g_build_filename (dir, name, NULL);
    window_json = sv_sidecar_path (exported);
  }
  cli_json = sv_sidecar_path (from_cli);
  same = compare_sidecars (window_json, cli_json);
  g_assert_cmpstr (same, ==, "same");
  input = sidecar_value (window_json, "input");
  g_assert_cmpstr (input, ==, level1);
  sv_test_remove_tree (dir);
}

/* One level is nothing to choose: "Level" stays hidden; the line still
 * names the level the labels were made on. */
static void
test_one_level (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-zarr");
  g_autofree char *image = write_pyramid (dir, 1);
  g_autoptr (GFile) file = g_file_new_for_path (image);
  GtkDropDown *dropdown = level_dropdown (f);
  g_autofree char *line = NULL;

  open_and_wait (f->window, file);
  g_assert_null (sv_window_get_error_dialog (f->window));
  wait_for_current_result (f->window);
  g_assert_cmpuint (sv_window_get_volume (f->window)->nz, ==, 16);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (dropdown)));
  line = sv_window_build_command (f->window);
  g_assert_nonnull (strstr (line, " --zarr-level 0"));
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/zarr/levels/choose-level-as-the-command-does", Fixture, NULL, fixture_setup_app,
              test_choose_level, fixture_teardown);
  g_test_add ("/gui/zarr/levels/one-level-offers-none", Fixture, NULL, fixture_setup,
              test_one_level, fixture_teardown);
  return g_test_run ();
}

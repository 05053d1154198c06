/* GUI tests: "Copy as Python" gives code that, run for real by Debian's
 * /usr/bin/python3 with the built library and the source tree's package,
 * makes the labels on screen byte for byte: the sample (made again by
 * supervox-cli synth), a teaching step, a 16-bit TIFF with its spacing and a
 * mask, one channel of a 3-channel TIFF ("Segment on"), and one channel
 * of an OME-Zarr image's level 1 ("Level"). */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <string.h>

#include "gui-test-util.h"
#include "supervox/sv-io.h"
#include "supervox/sv-synth.h"
#include "sv-test-files.h"
#include "sv-test-python.h"
#include "sv-test-run.h"
#include "sv-test-volumes.h"
#include "sv-test-zarr.h"

/* Runs the window's Python with /usr/bin/python3 in a fresh folder (the
 * built supervox-cli first on PATH, the built libsupervox and the source
 * tree's package), the labels dumped as raw int32, and compares them with
 * the labels on screen. */
static void
assert_python_reproduces_labels (SvWindow *w)
{
  const char *build = g_getenv ("SV_BUILD_DIR");
  const char *source = g_getenv ("SV_SOURCE_DIR");
  g_autofree char *dir = sv_test_make_dir ("sv-gui-py");
  g_autofree char *code = sv_window_build_python (w);
  g_autofree char *script = g_build_filename (dir, "labels.py", NULL);
  g_autofree char *raw = g_build_filename (dir, "labels.raw", NULL);
  g_autofree char *cli_dir = NULL, *lib = NULL, *package = NULL, *path = NULL;
  g_autofree char *bytes = NULL;
  g_auto (GStrv) envp = g_get_environ ();
  g_autoptr (GError) error = NULL;
  const char *argv[] = { "/usr/bin/python3", "labels.py", NULL };
  SvJobResult *r = sv_window_get_result (w);
  const SvLabels *shown;
  gsize n, len = 0;
  SvTestRun run;

  g_assert_nonnull (build);
  g_assert_nonnull (source);
  g_assert_nonnull (r);
  g_test_message ("python:\n%s", code);
  g_assert_nonnull (strstr (code, "labels = supervox.slic(image, n_segments="));
  cli_dir = g_build_filename (build, "app", "cli", NULL);
  lib = g_build_filename (build, "lib", "libsupervox.so.0", NULL);
  package = g_build_filename (source, "python", NULL);
  path = g_strconcat (cli_dir, ":", g_environ_getenv (envp, "PATH"), NULL);
  envp = g_environ_setenv (envp, "PATH", path, TRUE);
  envp = g_environ_setenv (envp, "SUPERVOX_LIBRARY", lib, TRUE);
  envp = g_environ_setenv (envp, "PYTHONPATH", package, TRUE);
  envp = g_environ_setenv (envp, "PYTHONDONTWRITEBYTECODE", "1", TRUE);
  {
    g_autofree char *full
        = g_strconcat (code, "np.ascontiguousarray(labels, np.int32).tofile('labels.raw')\n", NULL);
    g_assert_true (g_file_set_contents (script, full, -1, &error));
    g_assert_no_error (error);
  }

  run = sv_test_run_argv (dir, envp, argv);
  if (run.status != 0)
    g_error ("the Python code failed (%d):\n%s%s", run.status, run.out, run.err);
  sv_test_run_clear (&run);

  shown = sv_job_result_get_labels (r, &error);
  g_assert_no_error (error);
  n = (gsize)shown->nz * shown->ny * shown->nx;
  g_assert_true (g_file_get_contents (raw, &bytes, &len, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (bytes, len, shown->data, n * sizeof (gint32));
  sv_test_remove_tree (dir);
}

static gboolean
python_ready (void)
{
  if (sv_test_python_has ("numpy, tifffile"))
    return TRUE;
  g_test_skip ("/usr/bin/python3 with numpy and tifffile is needed to run the copied code");
  return FALSE;
}

static void
test_python_reproduces_sample (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvSlicParams p;

  if (!python_ready ())
    return;
  /* Off the defaults: sigma, spacing, start label 0, SLIC-zero. */
  sv_params_panel_get_params (panel, &p);
  p.n_segments = 41;
  p.compactness = 0.23;
  p.sigma[0] = 0.5;
  p.sigma[1] = 0.9;
  p.sigma[2] = 0.7;
  p.sigma_per_axis = TRUE;
  p.spacing[0] = 1.3;
  p.spacing[1] = 1.0;
  p.spacing[2] = 0.8;
  p.start_label = 0;
  p.slic_zero = TRUE;
  p.min_size_factor = 0.4;
  p.max_num_iter = 6;
  sv_params_panel_set_params (panel, &p);
  wait_for_current_result (f->window);
  {
    g_autofree char *code = sv_window_build_python (f->window);
    g_autofree char *cmd = sv_window_build_command (f->window);
    /* The sample is made by the very line "Copy as command" starts with. */
    g_assert_true (g_str_has_prefix (cmd, "supervox-cli synth -o sample.tif "));
    g_assert_nonnull (
        strstr (code, "subprocess.run(shlex.split('supervox-cli synth -o sample.tif"));
    g_assert_nonnull (strstr (code, "start_label=0"));
    g_assert_nonnull (strstr (code, "slic_zero=True"));
    g_assert_nonnull (strstr (code, "convert2lab=False"));
  }
  assert_python_reproduces_labels (f->window);

  /* A teaching step: two iterations, no connectivity. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-step", NULL));
  wait_for_current_result (f->window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.teach-step", NULL));
  wait_for_current_result (f->window);
  g_assert_cmpint (sv_window_get_result (f->window)->stop_after_iteration, ==, 2);
  assert_python_reproduces_labels (f->window);
}

static void
test_python_reproduces_tiff_and_mask (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-py-tiff");
  g_autofree char *vol_path = g_build_filename (dir, "cells 16-bit.tif", NULL);
  g_autofree char *mask_path = g_build_filename (dir, "mask's half.tif", NULL);
  g_autoptr (GFile) vol_file = g_file_new_for_path (vol_path);
  g_autoptr (GFile) mask_file = g_file_new_for_path (mask_path);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (SvLabels) m = NULL;
  SvSynthParams sp;
  static const double spacing[3] = { 2.5, 0.4, 0.4 };

  if (!python_ready ())
    return;
  sv_synth_params_init_defaults (&sp);
  sp.nz = 12;
  sp.ny = 30;
  sp.nx = 34;
  sp.n_cells = 6;
  sp.nucleus_radius = 2.0;
  sp.seed = 11;
  v = sv_synth_cells (&sp, NULL, &error);
  g_assert_no_error (error);
  memcpy (v->spacing, spacing, sizeof v->spacing);
  v->unit = g_strdup ("micron");
  g_assert_true (sv_tiff_write_volume (vol_path, v, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);
  /* Inside: the voxels left of x = 22 below slice 10. */
  m = sv_labels_new (sp.nz, sp.ny, sp.nx, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    m->data[i] = i % sp.nx < 22 && i / ((gsize)sp.ny * sp.nx) < 10;
  g_assert_true (sv_tiff_write_labels (mask_path, m, &error));
  g_assert_no_error (error);

  open_and_wait (f->window, vol_file);
  wait_until (has_result, f->window, "the TIFF's labels");
  g_assert_true (sv_window_open_mask (f->window, mask_file));
  wait_until (has_result, f->window, "the masked labels");
  wait_for_current_result (f->window);
  {
    g_autofree char *code = sv_window_build_python (f->window);
    /* The spacing relative to the finest axis, as the window runs it. */
    g_assert_nonnull (strstr (code, "spacing=[6.2"));
    g_assert_nonnull (strstr (code, "mask=mask"));
    g_assert_nonnull (strstr (code, "/mask\\'s half.tif', (12, 30, 34, 1))"));
  }
  assert_python_reproduces_labels (f->window);
  sv_test_remove_tree (dir);
}

/* "Segment on: Channel 2": the code reads the file's three channels and
 * segments the second alone. */
static void
test_python_reproduces_one_channel (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-py-channel");
  g_autofree char *path = g_build_filename (dir, "three channels.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (8, 30, 34, 3, &error);
  GtkWidget *segment_on;
  SvSynthParams sp;

  if (!python_ready ())
    return;
  g_assert_no_error (error);
  sv_synth_params_init_defaults (&sp);
  sp.nz = 8;
  sp.ny = 30;
  sp.nx = 34;
  sp.n_cells = 6;
  for (guint c = 0; c < 3; c++)
    {
      g_autoptr (SvVolume) one = NULL;
      sp.seed = 21 + c;
      one = sv_synth_cells (&sp, NULL, &error);
      g_assert_no_error (error);
      for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
        v->data[i * 3 + c] = one->data[i];
    }
  g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);
  open_and_wait (f->window, file);
  segment_on = find_by_tooltip (GTK_WIDGET (sv_window_get_params_panel (f->window)),
                                GTK_TYPE_DROP_DOWN, "Segment on");
  g_assert_nonnull (segment_on);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (segment_on), 2);
  wait_for_current_result (f->window);
  {
    g_autofree char *code = sv_window_build_python (f->window);
    g_assert_nonnull (strstr (code, "(8, 30, 34, 3))[..., 1]"));
    g_assert_nonnull (strstr (code, "channel_axis=None"));
  }
  assert_python_reproduces_labels (f->window);
  sv_test_remove_tree (dir);
}

static gboolean
shows_level_1 (gpointer window)
{
  const SvVolume *v = sv_window_get_volume (window);
  return !sv_window_is_busy (window) && v != NULL && v->nz == 6;
}

/* Level 1 of a two-level OME-Zarr image, 2 channels, "Segment on" the
 * second: the code reads that level with zarr-python. */
static void
test_python_reproduces_zarr_level (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-py-zarr");
  g_autofree char *image = NULL;
  g_autoptr (GFile) file = NULL;
  SvVolume *levels[2];
  GtkWidget *level, *segment_on;

  if (!python_ready ())
    return;
  if (!sv_test_python_has ("zarr"))
    {
      g_test_skip ("/usr/bin/python3 with zarr is needed to run the copied code");
      return;
    }
  levels[0] = sv_test_textured_volume (12, 40, 36, 2);
  levels[1] = sv_test_downsample (levels[0]);
  image = sv_test_write_ome_zarr (dir, "cells.zarr", levels, 2, "micrometer", NULL);
  sv_volume_free (levels[0]);
  sv_volume_free (levels[1]);
  file = g_file_new_for_path (image);
  open_and_wait (f->window, file);
  level = find_by_tooltip (GTK_WIDGET (sv_window_get_params_panel (f->window)), GTK_TYPE_DROP_DOWN,
                           "Level");
  segment_on = find_by_tooltip (GTK_WIDGET (sv_window_get_params_panel (f->window)),
                                GTK_TYPE_DROP_DOWN, "Segment on");
  g_assert_nonnull (level);
  g_assert_nonnull (segment_on);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (segment_on), 2);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (level), 1);
  wait_until (shows_level_1, f->window, "level 1 to load");
  wait_for_current_result (f->window);
  {
    g_autofree char *code = sv_window_build_python (f->window);
    g_autofree char *read
        = g_strdup_printf ("read_zarr_level('%s', 1, (6, 20, 18, 2))[..., 1]", image);
    g_assert_nonnull (strstr (code, read));
  }
  assert_python_reproduces_labels (f->window);
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/python/copy-as-python-reproduces-sample", Fixture, NULL, fixture_setup,
              test_python_reproduces_sample, fixture_teardown);
  g_test_add ("/gui/python/copy-as-python-reproduces-tiff-and-mask", Fixture, NULL, fixture_setup,
              test_python_reproduces_tiff_and_mask, fixture_teardown);
  g_test_add ("/gui/python/copy-as-python-reproduces-one-channel", Fixture, NULL, fixture_setup,
              test_python_reproduces_one_channel, fixture_teardown);
  g_test_add ("/gui/python/copy-as-python-reproduces-zarr-level", Fixture, NULL, fixture_setup,
              test_python_reproduces_zarr_level, fixture_teardown);
  return g_test_run ();
}

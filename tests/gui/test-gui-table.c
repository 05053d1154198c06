/* Tests of the window's Export Table… under Xvfb: the CSV it writes for the
 * labels on screen equals, byte for byte, what `supervox-cli stats` writes
 * for the labels Export Labels writes and the input file, for a calibrated
 * 16-bit file and an uncalibrated float one. */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <string.h>

#include "gui-test-util.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "sv-test-files.h"
#include "sv-test-run.h"

static gboolean
table_written (gpointer window)
{
  return !sv_window_is_exporting_table (window);
}

/* `supervox-cli stats labels --image input -o out` with the built CLI. */
static void
run_cli_stats (const char *labels, const char *input, const char *out)
{
  const char *build = g_getenv ("SV_BUILD_DIR");
  g_autofree char *cli = NULL;
  const char *argv[] = { NULL, "stats", labels, "--image", input, "-o", out, NULL };
  SvTestRun run;

  g_assert_nonnull (build);
  cli = g_build_filename (build, "app", "cli", "supervox-cli", NULL);
  argv[0] = cli;
  run = sv_test_run_argv (NULL, NULL, argv);
  if (run.status != 0)
    g_error ("supervox-cli stats failed (%d):\n%s%s", run.status, run.out, run.err);
  sv_test_run_clear (&run);
}

static void
check_table_equals_cli (SvWindow *w, const char *dir, const char *name, SvSampleType type,
                        gboolean calibrated, const char *volume_column)
{
  g_autofree char *input = g_build_filename (dir, name, NULL);
  g_autofree char *labels = g_strconcat (input, "-labels.tif", NULL);
  g_autofree char *window_csv = g_strconcat (input, "-window.csv", NULL);
  g_autofree char *cli_csv = g_strconcat (input, "-cli.csv", NULL);
  g_autofree char *a = NULL, *b = NULL;
  g_autoptr (GFile) file = g_file_new_for_path (input);
  g_autoptr (SvVolume) copy = NULL;
  g_autoptr (GError) error = NULL;
  const SvVolume *v = sv_window_get_volume (w);
  gsize n_lines = 0;

  /* The window's sample, written as a file of that type and calibration. */
  copy = sv_volume_new (v->nz, v->ny, v->nx, v->nc, &error);
  g_assert_no_error (error);
  memcpy (copy->data, v->data, sv_volume_n_voxels (v) * v->nc * sizeof (float));
  if (calibrated)
    {
      copy->spacing[0] = 0.04;
      copy->spacing[1] = copy->spacing[2] = 0.004;
      copy->unit = g_strdup ("micron");
    }
  g_assert_true (sv_tiff_write_volume (input, copy, type, &error));
  g_assert_no_error (error);
  open_and_wait (w, file);
  wait_for_current_result (w);

  g_assert_true (sv_window_export_labels (w, labels, &error));
  g_assert_no_error (error);
  g_assert_true (sv_window_export_table (w, window_csv, &error));
  g_assert_no_error (error);
  wait_until (table_written, w, "the table");
  g_assert_true (g_file_get_contents (window_csv, &a, NULL, NULL));
  run_cli_stats (labels, input, cli_csv);
  g_assert_true (g_file_get_contents (cli_csv, &b, NULL, NULL));
  for (const char *p = a; (p = strchr (p, '\n')); p++)
    n_lines++;
  g_test_message ("%s: %" G_GSIZE_FORMAT " lines; header %.*s", name, n_lines,
                  (int)(strchr (a, '\n') - a), a);
  /* A row per supervoxel on screen, under a header. */
  g_assert_cmpuint (n_lines, ==, sv_window_get_result (w)->stats.n_labels + 1);
  g_assert_nonnull (strstr (a, volume_column));
  g_assert_cmpstr (a, ==, b);
}

static void
test_table_equals_cli_stats (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-table-XXXXXX", NULL);

  /* 0.04×0.004×0.004 µm: the physical columns in µm, the intensities in
   * 16-bit values. */
  check_table_equals_cli (f->window, dir, "em.tif", SV_SAMPLE_U16, TRUE, ",volume_um3,");
  /* No calibration: the labels carry the run's spacing, with no unit. */
  check_table_equals_cli (f->window, dir, "float.tif", SV_SAMPLE_F32, FALSE, ",volume_px3,");
  sv_test_remove_tree (dir);
}

/* Nothing to write while the labels on screen are not a finished run. */
static void
test_table_refused_during_preview (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-table-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "t.csv", NULL);
  g_autoptr (GError) error = NULL;
  const guint lo[3] = { 0, 0, 0 }, hi[3] = { NZ / 2, NY / 2, NX / 2 };

  g_assert_true (sv_window_set_region (f->window, lo, hi, &error));
  g_assert_no_error (error);
  wait_for_current_result (f->window);
  g_assert_false (sv_window_export_table (f->window, path, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_test_message ("%s", error->message);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/table/equals-supervox-cli-stats", Fixture, NULL, fixture_setup,
              test_table_equals_cli_stats, fixture_teardown);
  g_test_add ("/gui/table/refused-for-a-region", Fixture, NULL, fixture_setup,
              test_table_refused_during_preview, fixture_teardown);
  return g_test_run ();
}

/* Tests for a streamed run that leaves its label file's sync and rename to
 * its caller (SvStreamOptions.finish_later, io-file-finish.c): until the
 * caller completes it there is no file under the output's name, only the
 * temporary one; completed, it is the bytes the run writes itself;
 * aborted, nothing is left; a run that gives no report, and an OME-Zarr
 * store, finish as before. */
#include <string.h>

#include <glib/gstdio.h>

#include "stream-cases.h"
#include "supervox/sv-io-slab.h"
#include "sv-test-files.h"

/* The names in the folder that start with `prefix`. */
static guint
count_named (const char *dir, const char *prefix)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    n += g_str_has_prefix (name, prefix);
  return n;
}

/* A streamed run of DIR/in.tif into `output` with finish_later, giving
 * its report when `report` is not NULL. */
static gboolean
run_later (const char *input, const char *output, const SvSlicParams *params,
           const SvZarrWriteOptions *zarr, SvStreamReport *report, GError **error)
{
  SvStreamOptions options;

  sv_stream_options_init_defaults (&options);
  options.slab_depth = 3;
  options.finish_later = TRUE;
  options.write_options.zarr = zarr;
  return sv_stream_slic_run (input, output, params, NULL, &options, NULL, report, error);
}

static void
test_complete_and_abort (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *in = write_input (f, CASE_NZ, CASE_NY, CASE_NX);
  g_autofree char *expected = g_build_filename (f->dir, "expected.tif", NULL);
  g_autofree char *out = g_build_filename (f->dir, "out.tif", NULL);
  SvSlicParams params;
  SvStreamReport report;

  sv_slic_params_init_defaults (&params);
  params.n_segments = 30;
  one_process (in, expected, &params, NULL);

  /* Completed: the same bytes, under its name only then. */
  g_assert_true (run_later (in, out, &params, NULL, &report, &error));
  g_assert_no_error (error);
  g_assert_nonnull (report.finish);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (count_named (f->dir, "out.tif."), ==, 1);
  g_assert_true (sv_file_finish_complete (report.finish, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_named (f->dir, "out.tif."), ==, 0);
  sv_test_assert_same_file (expected, out);
  g_assert_cmpint (g_unlink (out), ==, 0);

  /* Aborted: nothing left. */
  g_assert_true (run_later (in, out, &params, NULL, &report, &error));
  g_assert_nonnull (report.finish);
  sv_file_finish_abort (report.finish);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (count_named (f->dir, "out."), ==, 0);

  /* No report: the run finishes its file itself. */
  g_assert_true (run_later (in, out, &params, NULL, NULL, &error));
  g_assert_no_error (error);
  sv_test_assert_same_file (expected, out);
  g_assert_cmpuint (count_named (f->dir, "out.tif."), ==, 0);
}

static void
test_store_finishes (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *in = write_input (f, CASE_NZ, CASE_NY, CASE_NX);
  g_autofree char *out = g_build_filename (f->dir, "out.zarr", NULL);
  SvZarrWriteOptions zarr;
  SvSlicParams params;
  SvStreamReport report;

  sv_zarr_write_options_init_defaults (&zarr);
  sv_slic_params_init_defaults (&params);
  params.n_segments = 30;
  g_assert_true (run_later (in, out, &params, &zarr, &report, &error));
  g_assert_no_error (error);
  g_assert_null (report.finish);
  g_assert_true (g_file_test (out, G_FILE_TEST_IS_DIR));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/engine/stream/finish-later/complete-and-abort", Fixture, NULL, fixture_setup,
              test_complete_and_abort, fixture_teardown);
  g_test_add ("/engine/stream/finish-later/store-finishes", Fixture, NULL, fixture_setup,
              test_store_finishes, fixture_teardown);
  return g_test_run ();
}

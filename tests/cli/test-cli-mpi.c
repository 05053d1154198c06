/* Supervox tests: supervox-cli slic under mpirun, with real ranks and real
 * TIFFs, writes the same label file, byte for byte, as one process does,
 * and a rank that fails stops them all with one clear line and no output. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <tiffio.h>

#include "supervox/sv-io.h"
#include "sv-config.h"
#include "sv-test-files.h"
#include "sv-test-run.h"
#include "sv-test-volumes.h"
#include "supervox/sv-volume.h"

static char *cli_path;
static const char *mpirun_path = SV_MPIRUN_PATH;

typedef struct
{
  char *dir;
} Fixture;

typedef SvTestRun Result;
#define result_clear sv_test_run_clear

/* The tests need ranks: an MPI build and mpirun. */
static gboolean
skip_without_mpi (void)
{
  if (!SV_HAVE_MPI)
    {
      g_test_skip ("supervox-cli was built without MPI (-Dmpi=disabled or no libopenmpi-dev)");
      return TRUE;
    }
  if (mpirun_path[0] == '\0')
    {
      g_test_skip ("mpirun not found (openmpi-bin)");
      return TRUE;
    }
  return FALSE;
}

/* Runs supervox-cli `slic IN -o OUT extra…` in `n_ranks` MPI ranks (0:
 * without mpirun), under mpirun's `--bind-to binding` (NULL: its
 * default), in `environ` (taken). A rank that hangs would hang mpirun:
 * `timeout` ends it and the test fails on its status. */
static Result
run_slic_bound (Fixture *f, guint n_ranks, const char *binding, char **environ_, const char *in,
                const char *out, const char *extra)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) words = g_strsplit (extra, " ", -1);
  g_auto (GStrv) env = environ_;

  if (n_ranks > 0)
    {
      g_ptr_array_add (argv, g_strdup ("timeout"));
      g_ptr_array_add (argv, g_strdup ("--kill-after=10"));
      g_ptr_array_add (argv, g_strdup ("240"));
      g_ptr_array_add (argv, g_strdup (mpirun_path));
      g_ptr_array_add (argv, g_strdup ("--oversubscribe"));
      if (binding != NULL)
        {
          g_ptr_array_add (argv, g_strdup ("--bind-to"));
          g_ptr_array_add (argv, g_strdup (binding));
        }
      g_ptr_array_add (argv, g_strdup ("-np"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", n_ranks));
    }
  g_ptr_array_add (argv, g_strdup (cli_path));
  g_ptr_array_add (argv, g_strdup ("slic"));
  g_ptr_array_add (argv, g_strdup (in));
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup (out));
  for (guint i = 0; words[i] != NULL; i++)
    if (words[i][0] != '\0')
      g_ptr_array_add (argv, g_strdup (words[i]));
  g_ptr_array_add (argv, NULL);
  /* CI runs as root, which OpenMPI refuses unless told. */
  env = g_environ_setenv (env, "OMPI_ALLOW_RUN_AS_ROOT", "1", TRUE);
  env = g_environ_setenv (env, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", TRUE);
  /* Under the sanitizer build, OpenMPI's own allocations outlive
   * MPI_Finalize; our leaks are checked by the single-process runs. */
  if (n_ranks > 0 && g_environ_getenv (env, "ASAN_OPTIONS") != NULL)
    {
      g_autofree char *asan
          = g_strconcat (g_environ_getenv (env, "ASAN_OPTIONS"), ":detect_leaks=0", NULL);
      env = g_environ_setenv (env, "ASAN_OPTIONS", asan, TRUE);
    }
  return sv_test_run_argv (f->dir, env, (const char *const *)argv->pdata);
}

/* Runs supervox-cli `slic IN -o OUT extra…` in `n_ranks` MPI ranks (0:
 * without mpirun), as mpirun binds them by default. */
static Result
run_slic (Fixture *f, guint n_ranks, const char *in, const char *out, const char *extra)
{
  return run_slic_bound (f, n_ranks, NULL, g_get_environ (), in, out, extra);
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-cli-mpi");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

static char *
path_in (Fixture *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
}

/* One process in memory, then 2, 3 and 4 ranks: the same bytes, and the
 * sidecar says how many ranks ran. */
static void
assert_ranks_identical (Fixture *f, const char *in, const char *params)
{
  static const guint n_ranks[] = { 2, 3, 4 };
  g_autofree char *expected = path_in (f, "one.tif");
  Result r = run_slic (f, 0, in, expected, params);

  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  for (guint i = 0; i < G_N_ELEMENTS (n_ranks); i++)
    {
      g_autofree char *out = path_in (f, "ranks.tif");
      g_autofree char *sidecar = path_in (f, "ranks.json");
      g_autofree char *json = NULL;
      g_autofree char *needle = g_strdup_printf ("\"mpi_ranks\":%u", n_ranks[i]);

      g_test_message ("%u ranks, %s", n_ranks[i], params);
      r = run_slic (f, n_ranks[i], in, out, params);
      if (r.status != 0)
        g_test_message ("stderr: %s", r.err);
      g_assert_cmpint (r.status, ==, 0);
      result_clear (&r);
      sv_test_assert_same_file (expected, out);
      g_assert_true (g_file_get_contents (sidecar, &json, NULL, NULL));
      g_assert_nonnull (strstr (json, needle));
      g_assert_nonnull (strstr (json, "\"mode\":\"streaming\""));
    }
}

static const char *const param_sets[] = {
  "--n-segments 40 --sigma 1",
  "--n-segments 30 --slic-zero --compactness 0.05 --start-label 0 --slab-depth 2",
  /* Splits (max 1.0 × segment) and merges (min 0.9 ×) across ranks. */
  "--n-segments 25 --compactness 1 --min-size-factor 0.9 --max-size-factor 1.0 --sigma 0.7,1,1",
  /* The legacy rule: rank 0 gathers the labels and runs it alone. */
  "--n-segments 35 --compactness 0.3 --connectivity-rule legacy",
};

static void
test_sample_type (Fixture *f, gconstpointer data)
{
  /* 13 slices: a multiple of neither 2 nor 3 ranks. */
  g_autoptr (SvVolume) v = sv_test_textured_volume (13, 19, 21, 1);
  g_autofree char *in = NULL;

  if (skip_without_mpi ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, GPOINTER_TO_INT (data));
  for (guint p = 0; p < G_N_ELEMENTS (param_sets); p++)
    assert_ranks_identical (f, in, param_sets[p]);
}

static void
test_mask (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (11, 20, 18, 1);
  g_autoptr (SvVolume) m = sv_test_textured_volume (11, 20, 18, 1);
  g_autofree char *in = NULL;
  g_autofree char *mask = NULL;
  g_autofree char *params = NULL;

  if (skip_without_mpi ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  /* A ball, whose slices grow and shrink across ranks. */
  for (guint z = 0; z < 11; z++)
    for (guint y = 0; y < 20; y++)
      for (guint x = 0; x < 18; x++)
        m->data[((gsize)z * 20 + y) * 18 + x]
            = (z - 5.0) * (z - 5.0) + (y - 10.0) * (y - 9.0) + (x - 9.0) * (x - 9.0) < 50 ? 1 : 0;
  mask = sv_test_write_volume (f->dir, "mask.tif", m, SV_SAMPLE_U8);
  params = g_strdup_printf ("--mask %s --n-segments 20 --sigma 0.8 --slic-zero --compactness 0.05",
                            mask);
  assert_ranks_identical (f, in, params);
}

static void
test_fewer_slices_than_ranks (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (2, 30, 28, 1);
  g_autoptr (SvVolume) flat = sv_test_textured_volume (1, 30, 28, 1);
  g_autofree char *in = NULL;
  g_autofree char *in_flat = NULL;

  if (skip_without_mpi ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_F32);
  in_flat = sv_test_write_volume (f->dir, "flat.tif", flat, SV_SAMPLE_U8);
  assert_ranks_identical (f, in, "--n-segments 20 --sigma 1");
  assert_ranks_identical (f, in_flat, "--n-segments 20");
}

/* An OME-Zarr store from 2, 3 and 4 ranks, each writing the chunk rows
 * that start in its slices: the one process's store, file for file. */
static void
test_zarr_store (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (11, 26, 24, 1);
  g_autofree char *in = NULL;
  g_autofree char *one_dir = path_in (f, "one");
  g_autofree char *one = g_build_filename (one_dir, "l.zarr", NULL);
  Result r;

  if (skip_without_mpi ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  g_assert_cmpint (g_mkdir (one_dir, 0700), ==, 0);
  r = run_slic (f, 0, in, one, "--n-segments 30");
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  for (guint n = 2; n <= 4; n++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/ranks%u", f->dir, n);
      g_autofree char *out = g_build_filename (dir, "l.zarr", NULL);

      g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
      r = run_slic (f, n, in, out, "--n-segments 30");
      if (r.status != 0)
        g_error ("%u ranks: %s", n, r.err);
      result_clear (&r);
      sv_test_assert_same_tree (one, out);
    }
}

/* mpirun binds each of one or two ranks to a single core unless told
 * otherwise; every rank still runs as many threads as its share of the
 * host's cores, on at least that many cores (a wider binding is kept). */
static void
test_share_of_cores (Fixture *f, gconstpointer data)
{
  static const char *const bindings[] = { "core", "none" };
  g_autoptr (SvVolume) v = sv_test_textured_volume (6, 20, 22, 1);
  g_autofree char *in = NULL;
  const long online = sysconf (_SC_NPROCESSORS_ONLN);

  if (skip_without_mpi ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
  for (guint n_ranks = 1; n_ranks <= 2; n_ranks++)
    for (guint b = 0; b < G_N_ELEMENTS (bindings); b++)
      {
        const long share = MAX (online / n_ranks, 1);
        g_autofree char *said = NULL;
        g_autofree char *json = NULL;
        g_autofree char *sidecar = path_in (f, "out.json");
        g_autofree char *threads = g_strdup_printf ("\"threads\":%ld,", share);
        Result r = run_slic_bound (
            f, n_ranks, bindings[b],
            g_environ_setenv (g_get_environ (), "G_MESSAGES_DEBUG", "sv-cli", TRUE), in, "out.tif",
            "--n-segments 20");

        if (r.status != 0)
          g_error ("binding %s, %u ranks: status %d:\n%s", bindings[b], n_ranks, r.status, r.err);
        /* GLib prints debug messages on stdout; rank 0's is the one kept. */
        said = g_strdup_printf ("rank 0 of %u on this host: %ld threads on %ld cores", n_ranks,
                                share, b == 0 ? share : online);
        if (strstr (r.out, said) == NULL)
          g_error ("binding %s, %u ranks: \"%s\" not in:\n%s%s", bindings[b], n_ranks, said, r.out,
                   r.err);
        g_assert_true (g_file_get_contents (sidecar, &json, NULL, NULL));
        g_assert_nonnull (strstr (json, threads));
        result_clear (&r);
      }
}

/* Overwrites the first strip of the last page, so that it no longer
 * inflates: only the rank that owns that page meets it. */
static void
break_last_page (const char *path)
{
  TIFF *tif = TIFFOpen (path, "r");
  guint64 *offsets = NULL, *counts = NULL;
  guint64 offset, count;
  FILE *file;

  g_assert_nonnull (tif);
  g_assert_true (TIFFSetDirectory (tif, (tdir_t)(TIFFNumberOfDirectories (tif) - 1)));
  g_assert_true (TIFFGetField (tif, TIFFTAG_STRIPOFFSETS, &offsets));
  g_assert_true (TIFFGetField (tif, TIFFTAG_STRIPBYTECOUNTS, &counts));
  offset = offsets[0];
  count = counts[0];
  TIFFClose (tif);
  file = fopen (path, "r+b");
  g_assert_nonnull (file);
  g_assert_cmpint (fseek (file, (long)offset, SEEK_SET), ==, 0);
  for (guint64 i = 0; i < count; i++)
    fputc (0xA5, file);
  fclose (file);
}

static void
test_failing_rank (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (10, 30, 32, 1);
  g_autofree char *in = NULL;
  g_autoptr (GDir) dir = NULL;
  g_auto (GStrv) lines = NULL;
  const char *name;
  guint n_ours = 0;
  Result r;

  if (skip_without_mpi ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  break_last_page (in);
  /* No smoothing: no halo, so ranks 0 and 1 never read the last page. */
  r = run_slic (f, 3, in, "out.tif", "--n-segments 30");
  g_test_message ("status %d, stderr: %s", r.status, r.err);
  g_assert_cmpint (r.status, !=, 0);
  g_assert_cmpint (r.status, !=, 124);
  g_assert_cmpint (r.status, !=, 137);
  /* One line of ours (mpirun may add its own), naming the rank and file. */
  lines = g_strsplit (r.err, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "supervox-cli: "))
      {
        n_ours++;
        g_assert_nonnull (strstr (lines[i], "rank 2"));
        g_assert_nonnull (strstr (lines[i], "in.tif"));
      }
  g_assert_cmpuint (n_ours, ==, 1);
  result_clear (&r);
  /* Nothing left: no output, no sidecar, no temporary file. */
  dir = g_dir_open (f->dir, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_assert_cmpstr (name, ==, "in.tif");
}

/* mpirun's MPMD form gives the last of 3 ranks other arguments: a mask
 * that does not exist or a bad option, so that it stops before the ranks
 * first meet, or an input that does not exist, so that it stops at the
 * file. Ranks 0 and 1 must not wait for it. */
static void
test_rank_stops_early (Fixture *f, gconstpointer data)
{
  static const char *const variants[][2] = {
    { "--mask", "missing-mask.tif" },
    { "--n-segments", "-3" },
  };
  g_autoptr (SvVolume) v = sv_test_textured_volume (6, 12, 14, 1);
  g_autofree char *in = NULL;

  if (skip_without_mpi ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
  for (guint i = 0; i < G_N_ELEMENTS (variants) + 1; i++)
    {
      g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "OMPI_ALLOW_RUN_AS_ROOT", "1", TRUE);
      const char *last_in = i < G_N_ELEMENTS (variants) ? in : "missing.tif";
      const char *opt = i < G_N_ELEMENTS (variants) ? variants[i][0] : "--n-segments";
      const char *value = i < G_N_ELEMENTS (variants) ? variants[i][1] : "10";
      const char *argv[] = { "timeout",
                             "--kill-after=10",
                             "240",
                             mpirun_path,
                             "--oversubscribe",
                             "-np",
                             "2",
                             cli_path,
                             "slic",
                             in,
                             "-o",
                             "out.tif",
                             "--n-segments",
                             "10",
                             ":",
                             "-np",
                             "1",
                             cli_path,
                             "slic",
                             last_in,
                             "-o",
                             "out.tif",
                             opt,
                             value,
                             NULL };
      g_autoptr (GError) error = NULL;
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      g_autofree char *output = path_in (f, "out.tif");
      int wait_status = 0;

      env = g_environ_setenv (env, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", TRUE);
      g_spawn_sync (f->dir, (char **)argv, env, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                    &wait_status, &error);
      g_assert_no_error (error);
      g_test_message ("%s %s on rank 2: %s", opt, value, err);
      g_assert_true (WIFEXITED (wait_status));
      g_assert_cmpint (WEXITSTATUS (wait_status), !=, 0);
      g_assert_cmpint (WEXITSTATUS (wait_status), !=, 124);
      g_assert_true (g_str_has_prefix (err, "supervox-cli: rank 2: "));
      g_assert_nonnull (strstr (err, i == 0 ? "missing-mask.tif" : i == 1 ? "-3" : "missing.tif"));
      g_assert_false (g_file_test (output, G_FILE_TEST_EXISTS));
    }
}

/* A NaN in the last rank's slices: the ranks' counts and first position
 * add up to the single process's message. */
static void
test_non_finite (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (9, 12, 14, 1);
  g_autofree char *in = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *out = path_in (f, "ranks.tif");
  Result one, ranks;

  if (skip_without_mpi ())
    return;
  v->data[(gsize)7 * 12 * 14 + 5] = NAN;
  v->data[(gsize)8 * 12 * 14 + 3] = INFINITY;
  v->data[(gsize)1 * 12 * 14 + 30] = NAN;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_F32);
  one = run_slic (f, 0, in, "one.tif", "--n-segments 10 --slab-depth 2");
  ranks = run_slic (f, 3, in, out, "--n-segments 10");
  g_test_message ("one: %s\nranks: %s", one.err, ranks.err);
  g_assert_cmpint (one.status, ==, 1);
  g_assert_cmpint (ranks.status, !=, 0);
  g_assert_true (g_str_has_prefix (one.err, "supervox-cli: "));
  expected = g_strndup (one.err + strlen ("supervox-cli: "),
                        strcspn (one.err + strlen ("supervox-cli: "), "\n"));
  g_assert_nonnull (strstr (ranks.err, expected));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  result_clear (&one);
  result_clear (&ranks);
}

/* A batch of `n` textured volumes of different shapes, in.0.tif …, with
 * the later inputs as the `extra` words that follow them. */
static char *
write_batch (Fixture *f, guint n, GString *more)
{
  char *first = NULL;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr (SvVolume) v = sv_test_textured_volume (9 + 2 * i, 17 + i, 19, 1);
      g_autofree char *name = g_strdup_printf ("in.%u.tif", i);
      char *path = sv_test_write_volume (f->dir, name, v, SV_SAMPLE_U16);

      if (i == 0)
        first = path;
      else
        {
          g_string_append_printf (more, " %s", path);
          g_free (path);
        }
    }
  return first;
}

/* A batch's files shared out among the ranks: each rank takes whole files
 * (`n_ranks` ranks, `n` files), with fewer files than ranks a group of
 * ranks a file; every label file is one process's, and the totals count
 * every rank's files. */
static void
assert_batch_shared (Fixture *f, guint n_ranks, guint n)
{
  g_autoptr (GString) more = g_string_new (NULL);
  g_autofree char *first = write_batch (f, n, more);
  g_autofree char *one = path_in (f, "one/");
  g_autofree char *ranks = path_in (f, "ranks/");
  g_autofree char *extra = g_strdup_printf ("--n-segments 20 --backend cpu%s", more->str);
  g_autofree char *totals = g_strdup_printf ("%u files: %u written, 0 failed", n, n);
  char **env = g_environ_setenv (g_get_environ (), "G_MESSAGES_DEBUG", "sv-cli", TRUE);
  Result r = run_slic (f, 0, first, one, extra);

  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  r = run_slic_bound (f, n_ranks, NULL, env, first, ranks, extra);
  if (r.status != 0)
    g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, totals));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("in.%u.tif", i);
      g_autofree char *a = g_build_filename (one, name, NULL);
      g_autofree char *b = g_build_filename (ranks, name, NULL);

      sv_test_assert_same_file (a, b);
    }
  /* Each rank says what it took. */
  if (n >= n_ranks)
    for (guint k = 0; k < n_ranks; k++)
      {
        g_autofree char *said
            = g_strdup_printf ("rank %u: %u files alone", k, (n - k + n_ranks - 1) / n_ranks);

        g_assert_nonnull (strstr (r.out, said));
      }
  else
    {
      g_autofree char *sidecar = g_build_filename (ranks, "in.0.json", NULL);
      g_autofree char *json = NULL;
      g_autofree char *needle = g_strdup_printf ("\"mpi_ranks\":%u", (n_ranks + n - 1) / n);

      /* File 0 ran on a group of ranks (0, n, 2n …). */
      g_assert_true (g_file_get_contents (sidecar, &json, NULL, NULL));
      g_assert_nonnull (strstr (json, needle));
    }
  result_clear (&r);
}

static void
test_batch_shared (Fixture *f, gconstpointer data)
{
  if (skip_without_mpi ())
    return;
  assert_batch_shared (f, 2, 3);
}

static void
test_batch_fewer_files (Fixture *f, gconstpointer data)
{
  if (skip_without_mpi ())
    return;
  assert_batch_shared (f, 3, 2);
}

/* A bad file among the ranks' files fails alone, with one line. */
static void
test_batch_bad_file (Fixture *f, gconstpointer data)
{
  g_autoptr (GString) more = g_string_new (NULL);
  g_autofree char *first = NULL;
  g_autofree char *bad = NULL;
  g_autofree char *ranks = NULL;
  g_autofree char *extra = NULL;
  Result r;

  if (skip_without_mpi ())
    return;
  first = write_batch (f, 2, more);
  bad = path_in (f, "bad.tif");
  g_assert_true (g_file_set_contents (bad, "not a TIFF", -1, NULL));
  ranks = path_in (f, "ranks/");
  extra = g_strdup_printf ("--n-segments 20 --backend cpu %s%s", bad, more->str);
  r = run_slic (f, 2, first, ranks, extra);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "bad.tif: not a TIFF file"));
  g_assert_nonnull (strstr (r.out, "3 files: 2 written, 1 failed"));
  {
    g_autofree char *a = g_build_filename (ranks, "in.0.tif", NULL);
    g_autofree char *b = g_build_filename (ranks, "in.1.tif", NULL);
    g_autofree char *c = g_build_filename (ranks, "bad.tif", NULL);

    g_assert_true (g_file_test (a, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_test (b, G_FILE_TEST_EXISTS));
    g_assert_false (g_file_test (c, G_FILE_TEST_EXISTS));
  }
  result_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cli_path = g_strdup (g_getenv ("SV_CLI") != NULL ? g_getenv ("SV_CLI") : SV_CLI_PATH);

#define ADD(path, func) g_test_add ((path), Fixture, NULL, fixture_setup, (func), fixture_teardown)
  g_test_add ("/cli/mpi/identical/uint8", Fixture, GINT_TO_POINTER (SV_SAMPLE_U8), fixture_setup,
              test_sample_type, fixture_teardown);
  g_test_add ("/cli/mpi/identical/uint16", Fixture, GINT_TO_POINTER (SV_SAMPLE_U16), fixture_setup,
              test_sample_type, fixture_teardown);
  g_test_add ("/cli/mpi/identical/float32", Fixture, GINT_TO_POINTER (SV_SAMPLE_F32), fixture_setup,
              test_sample_type, fixture_teardown);
  ADD ("/cli/mpi/identical/mask", test_mask);
  ADD ("/cli/mpi/identical/fewer-slices-than-ranks", test_fewer_slices_than_ranks);
  ADD ("/cli/mpi/share-of-cores", test_share_of_cores);
  ADD ("/cli/mpi/identical/zarr-store", test_zarr_store);
  ADD ("/cli/mpi/fails-cleanly/failing-rank", test_failing_rank);
  ADD ("/cli/mpi/fails-cleanly/non-finite", test_non_finite);
  ADD ("/cli/mpi/fails-cleanly/rank-stops-early", test_rank_stops_early);
  ADD ("/cli/mpi/batch/files-shared", test_batch_shared);
  ADD ("/cli/mpi/batch/fewer-files-than-ranks", test_batch_fewer_files);
  ADD ("/cli/mpi/batch/bad-file", test_batch_bad_file);
#undef ADD
  return g_test_run ();
}

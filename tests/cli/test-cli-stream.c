/* Supervox tests: supervox-cli slic streamed in z-slabs writes the same
 * label file, byte for byte, as the in-memory run, and fails as cleanly. */
#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include "supervox/sv-io.h"
#include "sv-test-files.h"
#include "sv-test-run.h"
#include "sv-test-volumes.h"
#include "sv-test-python.h"
#include "supervox/sv-volume.h"

static char *cli_path;

typedef struct
{
  char *dir;
} Fixture;

typedef SvTestRun Result;
#define result_clear sv_test_run_clear

/* The program with `args` in `dir`, with the environment `envp` (NULL:
 * this process's). */
static Result
run_cli_env (const char *dir, char **envp, GPtrArray *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();

  g_ptr_array_add (argv, cli_path);
  for (guint i = 0; i < args->len; i++)
    g_ptr_array_add (argv, args->pdata[i]);
  g_ptr_array_add (argv, NULL);
  return sv_test_run_argv (dir, envp, (const char *const *)argv->pdata);
}

static Result
run_cli_v (const char *dir, GPtrArray *args)
{
  return run_cli_env (dir, NULL, args);
}

/* Runs `slic IN -o OUT` with the space-separated `extra` arguments and
 * asserts success. */
static void
run_slic (Fixture *f, const char *in, const char *out, const char *extra)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) words = g_strsplit (extra, " ", -1);
  Result r;

  g_ptr_array_add (args, g_strdup ("slic"));
  g_ptr_array_add (args, g_strdup (in));
  g_ptr_array_add (args, g_strdup ("-o"));
  g_ptr_array_add (args, g_strdup (out));
  g_ptr_array_add (args, g_strdup ("--threads"));
  g_ptr_array_add (args, g_strdup ("2"));
  for (guint i = 0; words[i] != NULL; i++)
    if (words[i][0] != '\0')
      g_ptr_array_add (args, g_strdup (words[i]));
  r = run_cli_v (f->dir, args);
  if (r.status != 0)
    g_test_message ("slic %s: %s", extra, r.err);
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-cli-stream");
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

/* Not inlined: GCC 12 then takes the caller's strstr result for a pointer
 * into this function's local (-Wdangling-pointer). */
static G_GNUC_NO_INLINE char *
read_text (const char *path)
{
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

/* The in-memory run and streamed runs with slabs of 1, 2 and 7 slices
 * write the same bytes. */
static void
assert_stream_identical (Fixture *f, const char *in, const char *params)
{
  static const char *const depths[] = { "1", "2", "7" };
  g_autofree char *expected = path_in (f, "memory.tif");
  g_autofree char *sidecar = path_in (f, "memory.json");
  g_autofree char *json = NULL;

  run_slic (f, in, expected, params);
  json = read_text (sidecar);
  g_assert_nonnull (strstr (json, "\"mode\":\"in-memory\""));
  for (guint d = 0; d < G_N_ELEMENTS (depths); d++)
    {
      g_autofree char *out = path_in (f, "streamed.tif");
      g_autofree char *out_json = path_in (f, "streamed.json");
      g_autofree char *extra = g_strdup_printf ("%s --slab-depth %s", params, depths[d]);
      g_autofree char *text = NULL;

      g_test_message ("slab depth %s, %s", depths[d], params);
      run_slic (f, in, out, extra);
      sv_test_assert_same_file (expected, out);
      text = read_text (out_json);
      g_assert_nonnull (strstr (text, "\"mode\":\"streaming\""));
    }
}


static void
test_sample_type (Fixture *f, gconstpointer data)
{
  SvSampleType as = GPOINTER_TO_INT (data);
  g_autoptr (SvVolume) v = sv_test_textured_volume (23, 19, 21, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, as);

  for (guint p = 0; sv_test_stream_param_sets[p] != NULL; p++)
    assert_stream_identical (f, in, sv_test_stream_param_sets[p]);
}

static void
test_mask (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (17, 20, 18, 1);
  g_autoptr (SvVolume) m = sv_test_textured_volume (17, 20, 18, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  g_autofree char *mask = NULL;
  g_autofree char *params = NULL;

  /* A ball, whose slices grow and shrink across slabs. */
  for (guint z = 0; z < 17; z++)
    for (guint y = 0; y < 20; y++)
      for (guint x = 0; x < 18; x++)
        m->data[((gsize)z * 20 + y) * 18 + x]
            = (z - 8.0) * (z - 8.0) + (y - 10.0) * (y - 9.0) + (x - 9.0) * (x - 9.0) < 70 ? 1 : 0;
  mask = sv_test_write_volume (f->dir, "mask.tif", m, SV_SAMPLE_U8);
  params = g_strdup_printf ("--mask %s --n-segments 20 --start-label 0", mask);
  assert_stream_identical (f, in, params);
  g_free (params);
  params = g_strdup_printf ("--mask %s --n-segments 20 --sigma 0.8 --slic-zero --compactness 0.05",
                            mask);
  assert_stream_identical (f, in, params);
}

static void
test_odd_shapes (Fixture *f, gconstpointer data)
{
  /* Fewer slices than one slab. */
  g_autoptr (SvVolume) thin = sv_test_textured_volume (3, 25, 22, 1);
  g_autofree char *in_thin = sv_test_write_volume (f->dir, "thin.tif", thin, SV_SAMPLE_F32);
  /* 2D, grey and RGB (converted to Lab). */
  g_autoptr (SvVolume) flat = sv_test_textured_volume (1, 40, 37, 1);
  g_autofree char *in_flat = sv_test_write_volume (f->dir, "flat.tif", flat, SV_SAMPLE_U8);
  g_autoptr (SvVolume) rgb = sv_test_textured_volume (1, 33, 29, 3);
  g_autofree char *in_rgb = sv_test_write_volume (f->dir, "rgb.tif", rgb, SV_SAMPLE_U8);

  assert_stream_identical (f, in_thin, "--n-segments 20 --sigma 2");
  assert_stream_identical (f, in_flat, "--n-segments 30 --sigma 1");
  assert_stream_identical (f, in_rgb, "--n-segments 30");
  assert_stream_identical (f, in_rgb, "--n-segments 30 --channel 1");
}

/* Layouts the writer does not make: tiles, an ImageJ hyperstack with its
 * channels in pages, int16 and float64 samples (written by tifffile). */
static void
test_other_layouts (Fixture *f, gconstpointer data)
{
  static const char script[]
      = "import sys, numpy as np, tifffile\n"
        "d = sys.argv[1]\n"
        "rng = np.random.default_rng(1)\n"
        "z, y, x = 13, 50, 46\n"
        "yy, xx = np.mgrid[0:y, 0:x]\n"
        "base = (np.sin(xx * 0.3) * np.cos(yy * 0.2) * 1000 + 2000)[None] * np.ones((z, 1, 1))\n"
        "vol = (base + rng.integers(0, 300, (z, y, x))).astype(np.uint16)\n"
        "tifffile.imwrite(d + '/tiled.tif', vol, tile=(16, 16), compression='zlib')\n"
        "hs = np.stack([vol, vol[:, ::-1, :]], axis=1)\n"
        "tifffile.imwrite(d + '/hyper.tif', hs, imagej=True, metadata={'axes': 'ZCYX'})\n"
        "tifffile.imwrite(d + '/i16.tif', (vol.astype(np.int32) - 2500).astype(np.int16))\n"
        "tifffile.imwrite(d + '/f64.tif', vol / 7.0)\n";
  static const char *const names[] = { "tiled.tif", "hyper.tif", "i16.tif", "f64.tif" };
  g_autofree char *out = sv_test_python_args (script, f->dir);

  if (out == NULL)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *in = path_in (f, names[i]);
      assert_stream_identical (f, in, "--n-segments 40 --sigma 0.8");
    }
  {
    g_autofree char *in = path_in (f, "hyper.tif");
    assert_stream_identical (f, in, "--n-segments 40 --channel 1");
  }
}

static void
test_memory_limit (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (12, 30, 32, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
  g_autofree char *big = path_in (f, "big.tif");
  g_autofree char *small = path_in (f, "small.tif");
  g_autofree char *big_json = NULL;
  g_autofree char *small_json = NULL;
  g_autofree char *small_sidecar = path_in (f, "small.json");
  g_autofree char *big_sidecar = path_in (f, "big.json");

  /* 12 slices of 30×32 need about 200 KiB in memory. */
  run_slic (f, in, big, "--memory-limit 1G");
  run_slic (f, in, small, "--memory-limit 20K");
  sv_test_assert_same_file (big, small);
  big_json = read_text (big_sidecar);
  small_json = read_text (small_sidecar);
  g_assert_nonnull (strstr (big_json, "\"mode\":\"in-memory\""));
  g_assert_nonnull (strstr (big_json, "\"memory_limit_bytes\":1073741824"));
  g_assert_nonnull (strstr (small_json, "\"mode\":\"streaming\""));
  g_assert_nonnull (strstr (small_json, "\"slab_depth\":1,"));
  g_assert_nonnull (strstr (small_json, "\"peak_memory_bytes\":"));
}

/* The peak memory (ru_maxrss) a sidecar reports. */
static gint64
sidecar_peak (Fixture *f, const char *name)
{
  static const char key[] = "\"peak_memory_bytes\":";
  g_autofree char *path = path_in (f, name);
  char *text = read_text (path);
  char *hit = strstr (text, key);
  gint64 peak = hit != NULL ? g_ascii_strtoll (hit + strlen (key), NULL, 10) : -1;

  g_free (text);
  g_assert_cmpint (peak, >=, 0);
  return peak;
}

/* A volume whose in-memory run needs more than the limit streams and stays
 * under it. */
static void
test_stays_under_limit (Fixture *f, gconstpointer data)
{
  const gint64 limit = 24 << 20;
  g_autoptr (SvVolume) tiny = sv_test_textured_volume (2, 8, 8, 1);
  g_autoptr (SvVolume) v = sv_test_textured_volume (64, 160, 160, 1);
  g_autofree char *in_tiny = sv_test_write_volume (f->dir, "tiny.tif", tiny, SV_SAMPLE_F32);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_F32);
  g_autofree char *memory = path_in (f, "memory.tif");
  g_autofree char *streamed = path_in (f, "streamed.tif");
  gint64 base;

  /* What the program holds before any volume (much more under a
   * sanitizer) must leave room for slabs. */
  run_slic (f, in_tiny, memory, "--n-segments 4");
  base = sidecar_peak (f, "memory.json");
  g_test_message ("peak of a tiny run: %" G_GINT64_FORMAT " bytes", base);
  if (base > limit / 2)
    {
      g_test_skip ("the program alone uses more than half the limit here");
      return;
    }
  run_slic (f, in, memory, "--n-segments 200 --memory-limit 1G");
  g_assert_cmpint (sidecar_peak (f, "memory.json"), >, limit);
  run_slic (f, in, streamed, "--n-segments 200 --memory-limit 24M");
  g_assert_cmpint (sidecar_peak (f, "streamed.json"), <, limit);
  sv_test_assert_same_file (memory, streamed);
}

/* A failing streamed run says so on one line and leaves the folder as it
 * was: no output, no sidecar, no temporary file. envp: the environment
 * (NULL: this process's). */
static void
expect_failure_env (Fixture *f, char **envp, const char *in, const char *needle, const char *extra)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) words = g_strsplit (extra, " ", -1);
  g_autoptr (GDir) dir = NULL;
  const char *name;
  guint n_entries = 0;
  Result r;

  g_ptr_array_add (args, g_strdup ("slic"));
  g_ptr_array_add (args, g_strdup (in));
  g_ptr_array_add (args, g_strdup ("-o"));
  g_ptr_array_add (args, g_strdup ("out.tif"));
  for (guint i = 0; words[i] != NULL; i++)
    g_ptr_array_add (args, g_strdup (words[i]));
  r = run_cli_env (f->dir, envp, args);
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_true (g_str_has_prefix (r.err, "supervox-cli: "));
  g_assert_nonnull (strstr (r.err, needle));
  g_assert_null (strchr (r.err, '\n') == NULL ? NULL : strchr (strchr (r.err, '\n') + 1, '\n'));
  result_clear (&r);
  dir = g_dir_open (f->dir, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_assert_false (g_str_has_prefix (name, "out"));
      n_entries++;
    }
  g_assert_cmpuint (n_entries, ==, 1);
}

static void
expect_failure (Fixture *f, const char *in, const char *needle, const char *extra)
{
  expect_failure_env (f, NULL, in, needle, extra);
}

/* What a streamed run keeps between passes stays in memory as far as
 * --memory-limit goes, and only the rest goes to temporary files: a
 * uint8 volume as its samples, 1 byte a voxel. 12×30×32 under 20K (less
 * than the program holds): 11520 bytes of samples and 46080 of int32
 * labels, all in files; with 1G, none. The labels are the in-memory
 * run's either way, and the sidecar says what the plan allowed for and
 * what the run wrote. */
static void
test_temporary_files (Fixture *f, gconstpointer data)
{
  static const struct
  {
    const char *options;
    const char *planned, *written;
  } runs[] = {
    { "--memory-limit 20K", "\"temporary_bytes_planned\":57600,", "\"temporary_bytes\":57600," },
    { "--memory-limit 1G --slab-depth 2", "\"temporary_bytes_planned\":0,",
      "\"temporary_bytes\":0," },
  };
  g_autoptr (SvVolume) v = sv_test_textured_volume (12, 30, 32, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
  g_autofree char *memory = path_in (f, "memory.tif");
  g_autofree char *streamed = path_in (f, "streamed.tif");
  g_autofree char *sidecar = path_in (f, "streamed.json");

  run_slic (f, in, memory, "--memory-limit 1G");
  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      g_autofree char *json = NULL;

      run_slic (f, in, streamed, runs[i].options);
      sv_test_assert_same_file (memory, streamed);
      json = read_text (sidecar);
      g_test_message ("%s: %s", runs[i].options, json);
      g_assert_nonnull (strstr (json, "\"mode\":\"streaming\""));
      g_assert_nonnull (strstr (json, runs[i].planned));
      g_assert_nonnull (strstr (json, runs[i].written));
    }
}

/* A streamed run whose temporary files need more than the disk has free
 * fails before it starts, on one line that says how much and where, and
 * leaves nothing. SV_TEST_DISK_FREE stands in for the disk's free space:
 * no disk of the machine running the tests is small enough. */
static void
test_no_space (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (12, 30, 32, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "SV_TEST_DISK_FREE", "50K", TRUE);

  expect_failure_env (f, envp, in,
                      "in.tif: the streamed run needs 56.2 KiB of temporary files beside out.tif "
                      "but only 50.0 KiB is free there: free 6.2 KiB more there, or raise "
                      "--memory-limit to at least ",
                      "--memory-limit 20K");
  /* With memory for all of it, nothing goes to the disk: a full disk
   * does not matter. */
  {
    const char *const words[]
        = { "slic", "in.tif", "-o", "out.tif", "--memory-limit", "1G", "--slab-depth", "2" };
    g_autoptr (GPtrArray) args = g_ptr_array_new ();
    g_autofree char *out = path_in (f, "out.tif");
    Result r;

    g_strfreev (envp);
    envp = g_environ_setenv (g_get_environ (), "SV_TEST_DISK_FREE", "0", TRUE);
    for (guint i = 0; i < G_N_ELEMENTS (words); i++)
      g_ptr_array_add (args, (char *)words[i]);
    r = run_cli_env (f->dir, envp, args);
    g_test_message ("stderr: %s", r.err);
    g_assert_cmpint (r.status, ==, 0);
    g_assert_true (g_file_test (out, G_FILE_TEST_EXISTS));
    result_clear (&r);
  }
}

static void
test_truncated (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (10, 30, 32, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  g_autofree char *contents = NULL;
  gsize len = 0;

  g_assert_true (g_file_get_contents (in, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (in, contents, (gssize)(len * 2 / 3), NULL));
  expect_failure (f, in, "in.tif", "--slab-depth 2");
  expect_failure (f, in, "in.tif", "--memory-limit 1K");
}

/* A strip that no longer inflates, in a page after the first slab: the run
 * fails when it reaches it. */
static void
test_corrupt_page (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (10, 30, 32, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  g_autofree char *contents = NULL;
  gsize len = 0;

  g_assert_true (g_file_get_contents (in, &contents, &len, NULL));
  /* The pages follow each other; about 70 % in is page 8's data. */
  for (gsize i = len * 7 / 10; i < len * 7 / 10 + 64; i++)
    contents[i] = (char)0xA5;
  g_assert_true (g_file_set_contents (in, contents, (gssize)len, NULL));
  expect_failure (f, in, "in.tif", "--slab-depth 3");
}

static void
test_bad_options (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (4, 10, 10, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);

  expect_failure (f, in, "--memory-limit must be a size", "--memory-limit 12Q");
  expect_failure (f, in, "--memory-limit must be a size", "--memory-limit -5M");
  expect_failure (f, in, "--slab-depth", "--slab-depth 0");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cli_path = g_strdup (g_getenv ("SV_CLI") != NULL ? g_getenv ("SV_CLI") : SV_CLI_PATH);

#define ADD(path, func) g_test_add ((path), Fixture, NULL, fixture_setup, (func), fixture_teardown)
  g_test_add ("/cli/stream/identical/uint8", Fixture, GINT_TO_POINTER (SV_SAMPLE_U8), fixture_setup,
              test_sample_type, fixture_teardown);
  g_test_add ("/cli/stream/identical/uint16", Fixture, GINT_TO_POINTER (SV_SAMPLE_U16),
              fixture_setup, test_sample_type, fixture_teardown);
  g_test_add ("/cli/stream/identical/float32", Fixture, GINT_TO_POINTER (SV_SAMPLE_F32),
              fixture_setup, test_sample_type, fixture_teardown);
  ADD ("/cli/stream/identical/mask", test_mask);
  ADD ("/cli/stream/identical/odd-shapes", test_odd_shapes);
  ADD ("/cli/stream/identical/other-layouts", test_other_layouts);
  ADD ("/cli/stream/memory-limit-chooses", test_memory_limit);
  ADD ("/cli/stream/stays-under-limit", test_stays_under_limit);
  ADD ("/cli/stream/temporary-files", test_temporary_files);
  ADD ("/cli/stream/fails-cleanly/no-space", test_no_space);
  ADD ("/cli/stream/fails-cleanly/truncated", test_truncated);
  ADD ("/cli/stream/fails-cleanly/corrupt-page", test_corrupt_page);
  ADD ("/cli/stream/fails-cleanly/bad-options", test_bad_options);
#undef ADD
  return g_test_run ();
}

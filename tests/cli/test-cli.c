/* Tests of supervox-cli as a user runs it: the built binary is spawned on
 * real TIFF files; failures must give exit 1, one line on stderr naming the
 * problem and leave no output behind; successes are checked against the
 * engine called in-process. */
#define G_LOG_DOMAIN "sv-test-cli"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <tiffio.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-connectivity.h"
#include "supervox/sv-io.h"
#include "supervox/sv-params.h"
#include "supervox/sv-synth.h"
#include "sv-config.h"
#include "sv-test-files.h"
#include "sv-test-run.h"
#include "supervox/sv-volume.h"
#if SV_HAVE_PIXBUF
#include "sv-image-pixbuf.h"
#endif

static char *cli_path;

typedef struct
{
  char *dir;
} Fixture;

typedef SvTestRun Result;
#define result_clear sv_test_run_clear

/* Runs supervox-cli with the NULL-terminated arguments in `dir`, with the
 * environment `envp` (NULL: this process's). */
static Result
run_cli_env_v (const char *dir, char **envp, const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();

  g_ptr_array_add (argv, cli_path);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer)args[i]);
  g_ptr_array_add (argv, NULL);
  return sv_test_run_argv (dir, envp, (const char *const *)argv->pdata);
}

static Result
run_cli_v (const char *dir, const char *const *args)
{
  return run_cli_env_v (dir, NULL, args);
}

#define run_cli(dir, ...) run_cli_v ((dir), (const char *const[]){ __VA_ARGS__, NULL })

static char *
path_in (Fixture *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-cli");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *)a, *(const char *const *)b);
}

/* Names of the files in `dir`, sorted, joined by spaces. */
static char *
list_dir (const char *path)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  GDir *dir = g_dir_open (path, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_dir_close (dir);
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (char **)names->pdata);
}

static guint
count_entries (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  g_dir_close (dir);
  return n;
}

/* ------------------------------------------------------------------ */
/* Input files */

/* A small smooth float volume, deterministic. */
static SvVolume *
make_volume (guint nz, guint ny, guint nx)
{
  g_autoptr (GError) error = NULL;
  SvVolume *v = sv_volume_new (nz, ny, nx, 1, &error);

  g_assert_no_error (error);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        v->data[((gsize)z * ny + y) * nx + x]
            = (float)(0.5 + 0.25 * sin (0.7 * x + 0.3 * z) * cos (0.5 * y)
                      + 0.2 * ((x / 5 + y / 4 + z / 3) % 3));
  return v;
}

static char *
write_volume (Fixture *f, const char *name, const SvVolume *v)
{
  g_autoptr (GError) error = NULL;
  char *path = path_in (f, name);

  g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_F32, &error));
  g_assert_no_error (error);
  return path;
}

static char *
write_default_volume (Fixture *f)
{
  g_autoptr (SvVolume) v = make_volume (6, 20, 24);
  return write_volume (f, "in.tif", v);
}

static void
write_bytes (const char *path, const void *data, gsize len)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (path, data, (gssize)len, &error));
  g_assert_no_error (error);
}

/* Writes float32 pages through libtiff directly: uncompressed, one strip
 * per page, so that tests can corrupt known offsets. sizes: 2 per page. */
static void
write_raw_pages (const char *path, guint n_pages, const guint *sizes)
{
  TIFF *tif = TIFFOpen (path, "w");

  g_assert_nonnull (tif);
  for (guint p = 0; p < n_pages; p++)
    {
      guint ny = sizes[2 * p], nx = sizes[2 * p + 1];
      g_autofree float *row = g_new0 (float, nx);

      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, nx);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, ny);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 32);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, ny);
      for (guint y = 0; y < ny; y++)
        {
          for (guint x = 0; x < nx; x++)
            row[x] = (float)((x + y + p) % 7) / 7.0f;
          g_assert_cmpint (TIFFWriteScanline (tif, row, y, 0), ==, 1);
        }
      g_assert_true (TIFFWriteDirectory (tif));
    }
  TIFFClose (tif);
}

static guint32
read_u32 (const guint8 *p)
{
  return (guint32)p[0] | ((guint32)p[1] << 8) | ((guint32)p[2] << 16) | ((guint32)p[3] << 24);
}

static void
put_u32 (guint8 *p, guint32 v)
{
  p[0] = v & 0xff;
  p[1] = (v >> 8) & 0xff;
  p[2] = (v >> 16) & 0xff;
  p[3] = (v >> 24) & 0xff;
}

/* ------------------------------------------------------------------ */
/* Failure checks */

static int
count_lines (const char *text)
{
  int n = 0;

  for (const char *p = text; *p != '\0'; p++)
    if (*p == '\n')
      n++;
  return n;
}

/* Runs the CLI, expects exit 1, exactly one stderr line starting with
 * "supervox-cli: " and containing `needle`, nothing on stdout, and the
 * folder unchanged (no OUT, no sidecar, no temporary file). */
static void
expect_failure_env_v (Fixture *f, char **envp, const char *needle, const char *const *args)
{
  g_autofree char *before = list_dir (f->dir);
  g_autofree char *after = NULL;
  Result r = run_cli_env_v (f->dir, envp, args);

  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_cmpint (count_lines (r.err), ==, 1);
  g_assert_true (g_str_has_prefix (r.err, "supervox-cli: "));
  g_assert_nonnull (strstr (r.err, needle));
  g_assert_cmpstr (r.out, ==, "");
  after = list_dir (f->dir);
  g_assert_cmpstr (after, ==, before);
  result_clear (&r);
}

static void
expect_failure_v (Fixture *f, const char *needle, const char *const *args)
{
  expect_failure_env_v (f, NULL, needle, args);
}

#define expect_failure(f, needle, ...)                                                             \
  expect_failure_v ((f), (needle), (const char *const[]){ __VA_ARGS__, NULL })

static void
test_missing_input (Fixture *f, gconstpointer data)
{
  expect_failure (f, "nothere.tif: no such file", "slic", "nothere.tif", "-o", "out.tif");
}

static void
test_empty_file (Fixture *f, gconstpointer data)
{
  g_autofree char *in = path_in (f, "empty.tif");

  write_bytes (in, "", 0);
  expect_failure (f, in, "slic", in, "-o", "out.tif");
}

static void
test_not_tiff (Fixture *f, gconstpointer data)
{
  g_autofree char *in = path_in (f, "notes.tif");
  const char text[] = "this is a text file, not an image\n";

  write_bytes (in, text, sizeof text - 1);
  expect_failure (f, in, "slic", in, "-o", "out.tif");
}

static void
test_truncated (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_default_volume (f);
  g_autofree char *cut = path_in (f, "cut.tif");
  g_autofree char *contents = NULL;
  gsize len = 0;

  g_assert_true (g_file_get_contents (in, &contents, &len, NULL));
  write_bytes (cut, contents, len / 2);
  expect_failure (f, cut, "slic", cut, "-o", "out.tif");
  write_bytes (cut, contents, 12);
  expect_failure (f, cut, "slic", cut, "-o", "out.tif");
}

static void
test_corrupt_offsets (Fixture *f, gconstpointer data)
{
  g_autofree char *in = path_in (f, "raw.tif");
  g_autofree guint8 *bytes = NULL;
  gsize len = 0;
  guint sizes[] = { 8, 8, 8, 8 };
  guint32 ifd;
  guint16 n_entries;
  gboolean patched = FALSE;

  write_raw_pages (in, 2, sizes);
  g_assert_true (g_file_get_contents (in, (char **)&bytes, &len, NULL));
  g_assert_true (bytes[0] == 'I' && bytes[1] == 'I');

  /* The first page's strip offset points far beyond the end of the file. */
  ifd = read_u32 (bytes + 4);
  n_entries = (guint16)(bytes[ifd] | (bytes[ifd + 1] << 8));
  for (guint i = 0; i < n_entries; i++)
    {
      guint8 *e = bytes + ifd + 2 + 12 * i;
      if ((e[0] | (e[1] << 8)) == TIFFTAG_STRIPOFFSETS)
        {
          put_u32 (e + 8, 0x7ffff000u);
          patched = TRUE;
        }
    }
  g_assert_true (patched);
  write_bytes (in, bytes, len);
  expect_failure (f, in, "slic", in, "-o", "out.tif");

  /* The first directory offset points beyond the end of the file. */
  g_clear_pointer (&bytes, g_free);
  g_assert_true (g_file_get_contents (in, (char **)&bytes, &len, NULL));
  put_u32 (bytes + 4, (guint32)len + 4096);
  write_bytes (in, bytes, len);
  expect_failure (f, in, "slic", in, "-o", "out.tif");
}

static void
test_page_sizes (Fixture *f, gconstpointer data)
{
  g_autofree char *in = path_in (f, "pages.tif");
  guint sizes[] = { 8, 8, 8, 7, 8, 8 };

  write_raw_pages (in, 3, sizes);
  expect_failure (f, in, "slic", in, "-o", "out.tif");
}

static void
test_nonfinite (Fixture *f, gconstpointer data)
{
  static const float bad[] = { NAN, INFINITY, -INFINITY };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (SvVolume) v = make_volume (4, 10, 12);
      g_autoptr (SvLabels) m = NULL;
      g_autofree char *in = NULL;
      g_autofree char *mask = path_in (f, "mask.tif");
      g_autofree char *out = path_in (f, "out.tif");
      g_autofree char *sidecar = path_in (f, "out.json");
      g_autoptr (GError) error = NULL;
      Result r;

      v->data[(2 * 10 + 3) * 12 + 5] = bad[i];
      in = write_volume (f, "bad.tif", v);
      expect_failure (f, in, "slic", in, "-o", "out.tif", "--n-segments", "8");

      /* Masked out, the bad voxel is not used and the run succeeds. */
      m = sv_labels_new (4, 10, 12, &error);
      g_assert_no_error (error);
      for (gsize k = 0; k < sv_labels_n_voxels (m); k++)
        m->data[k] = 1;
      m->data[(2 * 10 + 3) * 12 + 5] = 0;
      g_assert_true (sv_tiff_write_labels (mask, m, &error));
      g_assert_no_error (error);
      r = run_cli (f->dir, "slic", in, "-o", "out.tif", "--n-segments", "8", "--mask", "mask.tif");
      g_test_message ("stderr: %s", r.err);
      g_assert_cmpint (r.status, ==, 0);
      g_assert_true (g_file_test (out, G_FILE_TEST_EXISTS));
      g_assert_true (g_file_test (sidecar, G_FILE_TEST_EXISTS));
      {
        g_autoptr (SvLabels) labels = sv_tiff_read_labels (out, &error);
        g_assert_no_error (error);
        /* start_label 1: the masked-out voxel is 0, all others >= 1. */
        for (gsize k = 0; k < sv_labels_n_voxels (labels); k++)
          g_assert_cmpint (labels->data[k], ==, m->data[k] ? MAX (labels->data[k], 1) : 0);
      }
      result_clear (&r);
      g_unlink (out);
      g_unlink (sidecar);
      g_unlink (mask);
      g_unlink (in);
    }
}

static void
test_bad_params (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_default_volume (f);
  g_autofree char *mask = path_in (f, "mask.tif");
  g_autoptr (SvLabels) m = NULL;
  g_autoptr (GError) error = NULL;

  expect_failure (f, "--n-segments must be >= 1, got 0", "slic", in, "-o", "out.tif",
                  "--n-segments", "0");
  expect_failure (f, "--n-segments must be >= 1, got -5", "slic", in, "-o", "out.tif",
                  "--n-segments=-5");
  expect_failure (f, "--n-segments expects a whole number, got 'many'", "slic", in, "-o", "out.tif",
                  "--n-segments", "many");
  expect_failure (f, "--compactness must be > 0, got 0", "slic", in, "-o", "out.tif",
                  "--compactness", "0");
  expect_failure (f, "--compactness must be > 0, got -1", "slic", in, "-o", "out.tif",
                  "--compactness", "-1");
  expect_failure (f, "--compactness expects a finite number, got 'nan'", "slic", in, "-o",
                  "out.tif", "--compactness", "nan");
  expect_failure (f, "--max-num-iter must be >= 0, got -1", "slic", in, "-o", "out.tif",
                  "--max-num-iter", "-1");
  expect_failure (f, "--spacing must be > 0", "slic", in, "-o", "out.tif", "--spacing", "0,1,1");
  expect_failure (f, "--spacing must be > 0", "slic", in, "-o", "out.tif", "--spacing", "1,-2,1");
  expect_failure (f, "--spacing needs 3 values", "slic", in, "-o", "out.tif", "--spacing", "1,1");
  expect_failure (f, "--spacing takes at most 3 values", "slic", in, "-o", "out.tif", "--spacing",
                  "1,1,1,1");
  expect_failure (f, "--spacing expects z,y,x", "slic", in, "-o", "out.tif", "--spacing", "2");
  {
    /* Plain libtiff pages carry no ImageJ or OME spacing. */
    g_autofree char *plain = path_in (f, "plain.tif");
    guint sizes[] = { 8, 8, 8, 8 };

    write_raw_pages (plain, 2, sizes);
    expect_failure (f, "no voxel spacing in the file", "slic", plain, "-o", "out.tif", "--spacing",
                    "file");
  }
  expect_failure (f, "--sigma must be >= 0", "slic", in, "-o", "out.tif", "--sigma", "-1");
  expect_failure (f, "--sigma needs one value or 3 values", "slic", in, "-o", "out.tif", "--sigma",
                  "1,2");
  expect_failure (f, "--start-label must be 0 or 1, got 2", "slic", in, "-o", "out.tif",
                  "--start-label", "2");
  expect_failure (f, "--min-size-factor must be >= 0", "slic", in, "-o", "out.tif",
                  "--min-size-factor", "-0.5");
  expect_failure (f, "--max-size-factor must be > 0", "slic", in, "-o", "out.tif",
                  "--max-size-factor", "0");
  expect_failure (f, "--threads must be between 1", "slic", in, "-o", "out.tif", "--threads", "0");
  expect_failure (f, "--backend must be cpu, cuda or auto, got gpu", "slic", in, "-o", "out.tif",
                  "--backend", "gpu");
  expect_failure (f, "cannot be used together", "slic", in, "-o", "out.tif", "--convert2lab",
                  "--no-convert2lab");
  /* Lab needs 3 channels. */
  expect_failure (f, in, "slic", in, "-o", "out.tif", "--convert2lab");

  m = sv_labels_new (6, 20, 23, &error);
  g_assert_no_error (error);
  for (gsize k = 0; k < sv_labels_n_voxels (m); k++)
    m->data[k] = 1;
  g_assert_true (sv_tiff_write_labels (mask, m, &error));
  g_assert_no_error (error);
  expect_failure (f, "mask is 6×20×23 but the image", "slic", in, "-o", "out.tif", "--mask", mask);
  expect_failure (f, "nomask.tif: no such file", "slic", in, "-o", "out.tif", "--mask",
                  "nomask.tif");
  g_clear_pointer (&m, sv_labels_free);
  m = sv_labels_new (6, 20, 24, &error);
  g_assert_no_error (error);
  g_assert_true (sv_tiff_write_labels (mask, m, &error));
  g_assert_no_error (error);
  expect_failure (f, "mask.tif: the mask is empty", "slic", in, "-o", "out.tif", "--mask", mask);
}

static void
test_bad_command_line (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_default_volume (f);

  expect_failure (f, "try 'supervox-cli slic --help'", "slic", in, "-o", "out.tif",
                  "--no-such-option");
  expect_failure (f, "--no-such-option", "slic", in, "-o", "out.tif", "--no-such-option");
  expect_failure (f, "missing -o OUT.tif", "slic", in);
  expect_failure (f, "missing input file", "slic", "-o", "out.tif");
  expect_failure (f, "2 inputs would all be written to out.tif", "slic", in, in, "-o", "out.tif");
  expect_failure (f, "--n-segments", "slic", in, "-o", "out.tif", "--n-segments");
  expect_failure (f, "unknown command 'slice'", "slice", in);
  expect_failure_v (f, "missing command", (const char *const[]){ NULL });
  expect_failure (f, "missing --max-size", "connect", in, "-o", "out.tif", "--min-size", "3");
  expect_failure (f, "missing -o VOL.tif", "synth");
  expect_failure (f, "--shape expects three sizes", "synth", "-o", "v.tif", "--shape", "4,4");
  expect_failure (f, "missing --truth", "eval", in);
}

static void
test_unwritable_output (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_default_volume (f);
  g_autofree char *ro = path_in (f, "readonly");
  g_autofree char *ro_out = g_build_filename (ro, "out.tif", NULL);
  g_autofree char *sidecar = g_build_filename (ro, "out.json", NULL);
  g_autofree char *listing = NULL;

  expect_failure (f, "does not exist", "slic", in, "-o", "missing-dir/out.tif");
  /* An existing folder takes FOLDER/{stem}.tif: here the input itself. */
  expect_failure (f, "would overwrite an input", "slic", in, "-o", f->dir);
  expect_failure (f, "would overwrite an input", "slic", in, "-o", in);
  expect_failure (f, "is not a folder", "slic", in, "-o", "in.tif/out.tif");
  if (geteuid () == 0)
    {
      /* root may write anywhere the permissions say; /proc still refuses,
       * which exercises the engine's failed write. */
      expect_failure (f, "/proc/out.tif", "slic", in, "-o", "/proc/out.tif");
      g_assert_false (g_file_test ("/proc/out.tif", G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test ("/proc/out.json", G_FILE_TEST_EXISTS));
    }

  g_assert_cmpint (g_mkdir (ro, 0555), ==, 0);
  if (geteuid () == 0)
    {
      g_test_message ("running as root: a read-only folder is writable, skipping that case");
      return;
    }
  expect_failure (f, "cannot write to folder", "slic", in, "-o", ro_out);
  g_assert_false (g_file_test (ro_out, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (sidecar, G_FILE_TEST_EXISTS));
  listing = list_dir (ro);
  g_assert_cmpstr (listing, ==, "");
}

/* ------------------------------------------------------------------ */
/* Successes */

/* Runs `load` (which binds d from the file sys.argv[1]) and then prints a
 * Python expression; returns what it prints, stripped. */
static char *
python_eval (const char *path, const char *load, const char *expr)
{
  g_autofree char *code = g_strdup_printf ("import json,sys\n"
                                           "%s\n"
                                           "print(%s)\n",
                                           load, expr);
  const char *argv[] = { "/usr/bin/python3", "-c", code, path, NULL };
  g_autoptr (GError) error = NULL;
  char *out = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("python failed on %s: %s", path, err);
  return g_strstrip (out);
}

/* The parsed JSON in `path` is bound to d. */
static char *
python_json (const char *path, const char *expr)
{
  return python_eval (path, "d=json.load(open(sys.argv[1]))", expr);
}

/* JSON lines: d is the list of the objects, one per line. */
static char *
python_json_lines (const char *path, const char *expr)
{
  return python_eval (path, "d=[json.loads(l) for l in open(sys.argv[1])]", expr);
}

/* Labels computed by the engine in-process with the same parameters. */
static SvLabels *
engine_labels (const char *in, const SvSlicParams *params, int threads)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_tiff_read_volume (in, &error);
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", &error);
  SvLabels *labels;
  SvRunControl control = { .n_threads = threads, .stop_after_iteration = -1 };
  SvRunStats stats = { 0 };

  g_assert_no_error (error);
  labels = sv_labels_new (v->nz, v->ny, v->nx, &error);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_true (sv_backend_run (backend, params, &control, &stats, &error));
  g_assert_true (sv_backend_get_labels (backend, labels->data, &error));
  g_assert_no_error (error);
  return labels;
}

static void
assert_labels_equal (const SvLabels *a, const SvLabels *b)
{
  g_assert_cmpuint (a->nz, ==, b->nz);
  g_assert_cmpuint (a->ny, ==, b->ny);
  g_assert_cmpuint (a->nx, ==, b->nx);
  g_assert_cmpmem (a->data, sv_labels_n_voxels (a) * sizeof (gint32), b->data,
                   sv_labels_n_voxels (b) * sizeof (gint32));
}

static gsize
count_distinct (const SvLabels *labels)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);

  for (gsize k = 0; k < sv_labels_n_voxels (labels); k++)
    g_hash_table_add (seen, GINT_TO_POINTER (labels->data[k] + 1));
  return g_hash_table_size (seen);
}

/* `--backend cuda` with no usable device: without CUDA in the build, or on a
 * CUDA build with the devices hidden from the child (CUDA_VISIBLE_DEVICES
 * empty), it fails with one line and exit 1; `--backend auto` then runs on
 * the CPU and the sidecar says so. */
static void
test_cuda_unavailable (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_default_volume (f);
  g_autofree char *out = path_in (f, "labels.tif");
  g_autofree char *sidecar = path_in (f, "labels.json");
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "CUDA_VISIBLE_DEVICES", "", TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) labels = NULL;
  g_autoptr (SvLabels) expected = NULL;
  g_autofree char *backend = NULL;
  SvSlicParams params;
  Result r;

  expect_failure_env_v (f, envp,
                        SV_HAVE_CUDA ? "no CUDA device: "
                                     : "no CUDA device: this build of supervox-cli has no CUDA "
                                       "backend",
                        (const char *const[]){ "slic", in, "-o", "out.tif", "--backend", "cuda",
                                               NULL });

  r = run_cli_env_v (f->dir, envp,
                     (const char *const[]){ "slic", in, "-o", out, "--backend", "auto",
                                            "--n-segments", "40", "--threads", "1", NULL });
  g_test_message ("stdout: %s\nstderr: %s", r.out, r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpint (count_lines (r.out), ==, 1);
  result_clear (&r);
  backend = python_json (sidecar, "d['backend']");
  g_assert_cmpstr (backend, ==, "cpu");

  labels = sv_tiff_read_labels (out, &error);
  g_assert_no_error (error);
  sv_slic_params_init_defaults (&params);
  params.n_segments = 40;
  expected = engine_labels (in, &params, 1);
  assert_labels_equal (labels, expected);
}

/* Parameter sets far from the defaults, one per way a flag could be lost or
 * misread between sv_slic_params_append_cli and the CLI's parser. */
static void
unusual_params (guint which, SvSlicParams *p)
{
  sv_slic_params_init_defaults (p);
  switch (which)
    {
    case 0:
      p->n_segments = 30;
      p->compactness = 0.1 + 0.2;
      p->max_num_iter = 7;
      p->slic_zero = TRUE;
      p->sigma_per_axis = TRUE;
      p->sigma[0] = 0.0;
      p->sigma[1] = 0.5;
      p->sigma[2] = 1.0 / 3.0;
      p->spacing[0] = 2.0;
      p->spacing[1] = 1.0;
      p->spacing[2] = 0.75;
      p->start_label = 0;
      p->enforce_connectivity = FALSE;
      p->convert2lab = SV_CONVERT2LAB_NO;
      break;
    case 1:
      p->n_segments = 25;
      p->compactness = 3.7;
      p->max_num_iter = 3;
      p->sigma[0] = 0.7;
      p->spacing[0] = 1.0;
      p->spacing[1] = 1.5;
      p->spacing[2] = 1.5;
      p->start_label = 0;
      p->min_size_factor = 0.3;
      p->max_size_factor = 12.0 / 7.0;
      break;
    case 2:
    default:
      p->n_segments = 50;
      p->compactness = 0.05;
      p->max_num_iter = 1;
      p->slic_zero = TRUE;
      p->sigma_per_axis = TRUE;
      p->sigma[0] = 1.25;
      p->sigma[1] = 0.0;
      p->sigma[2] = 0.0;
      p->min_size_factor = 0.05;
      p->max_size_factor = 1.5;
      break;
    }
}

/* The flags that sv_slic_params_append_cli writes (the GUI's "copy as
 * command") reach the real CLI unchanged: the sidecar's params equal the
 * originals and the labels equal the engine's with the same params. */
static void
test_append_cli_reproduces (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_default_volume (f);

  for (guint which = 0; which < 3; which++)
    {
      g_autofree char *out = g_strdup_printf ("%s/labels-%u.tif", f->dir, which);
      g_autofree char *sidecar = g_strdup_printf ("%s/labels-%u.json", f->dir, which);
      g_autofree char *expected_json = g_strdup_printf ("%s/expected-%u.json", f->dir, which);
      g_autofree char *params_json = NULL;
      g_autofree char *same = NULL;
      g_autoptr (GString) flags = g_string_new (NULL);
      g_autoptr (GPtrArray) args = g_ptr_array_new ();
      g_auto (GStrv) tokens = NULL;
      g_autoptr (GError) error = NULL;
      g_autoptr (SvLabels) labels = NULL;
      g_autoptr (SvLabels) expected = NULL;
      SvSlicParams p;
      Result r;

      unusual_params (which, &p);
      g_assert_true (sv_slic_params_validate (&p, &error));
      g_assert_no_error (error);
      sv_slic_params_append_cli (&p, flags);
      g_test_message ("set %u:%s", which, flags->str);
      g_assert_true (g_shell_parse_argv (flags->str, NULL, &tokens, &error));
      g_assert_no_error (error);
      g_ptr_array_add (args, "slic");
      g_ptr_array_add (args, in);
      g_ptr_array_add (args, "-o");
      g_ptr_array_add (args, out);
      g_ptr_array_add (args, "--threads");
      g_ptr_array_add (args, "1");
      for (guint i = 0; tokens[i] != NULL; i++)
        g_ptr_array_add (args, tokens[i]);
      g_ptr_array_add (args, NULL);

      r = run_cli_v (f->dir, (const char *const *)args->pdata);
      g_test_message ("stderr: %s", r.err);
      g_assert_cmpint (r.status, ==, 0);
      g_assert_cmpstr (r.err, ==, "");
      result_clear (&r);

      /* Compared as parsed JSON: every key and every number, exactly. */
      params_json = sv_slic_params_to_json (&p);
      g_assert_true (g_file_set_contents (expected_json, params_json, -1, &error));
      g_assert_no_error (error);
      same = python_eval (sidecar,
                          "d=json.load(open(sys.argv[1]))['params']\n"
                          "e=json.load(open(sys.argv[1].replace('labels-','expected-')))",
                          "'same' if d==e else "
                          "{k:(d.get(k),e.get(k)) for k in set(d)|set(e) if d.get(k)!=e.get(k)}");
      g_assert_cmpstr (same, ==, "same");

      labels = sv_tiff_read_labels (out, &error);
      g_assert_no_error (error);
      expected = engine_labels (in, &p, 1);
      assert_labels_equal (labels, expected);
    }
}

static void
test_slic_roundtrip (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_default_volume (f);
  g_autofree char *out = path_in (f, "labels.tif");
  g_autofree char *sidecar = path_in (f, "labels.json");
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) labels = NULL;
  g_autoptr (SvLabels) expected = NULL;
  g_autofree char *listing = NULL;
  g_autofree char *keys = NULL;
  g_autofree char *values = NULL;
  g_autofree char *n_labels = NULL;
  g_autofree char *expected_n = NULL;
  SvSlicParams params;
  Result r;

  r = run_cli (f->dir, "slic", in, "-o", out, "--n-segments", "40", "--compactness", "0.2",
               "--spacing", "2,1,1", "--sigma", "0.5", "--threads", "2");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.err, ==, "");
  g_assert_cmpint (count_lines (r.out), ==, 1);
  result_clear (&r);

  listing = list_dir (f->dir);
  g_assert_cmpstr (listing, ==, "in.tif labels.json labels.tif");

  labels = sv_tiff_read_labels (out, &error);
  g_assert_no_error (error);
  sv_slic_params_init_defaults (&params);
  params.n_segments = 40;
  params.compactness = 0.2;
  params.spacing[0] = 2.0;
  params.sigma[0] = params.sigma[1] = params.sigma[2] = 0.5;
  expected = engine_labels (in, &params, 1);
  assert_labels_equal (labels, expected);
  /* The label file carries the spacing of the run. */
  g_assert_cmpfloat (labels->spacing[0], ==, 2.0);
  g_assert_cmpfloat (labels->spacing[1], ==, 1.0);

  keys = python_json (sidecar, "' '.join(sorted(d.keys()))");
  g_assert_cmpstr (keys, ==,
                   "backend channel channels command compression input iterations mask "
                   "memory_limit_bytes mode n_clusters n_labels output params peak_memory_bytes "
                   "sample_type seconds shape spacing_unit threads version");
  values = python_json (sidecar,
                        "d['input']==sys.argv[1].replace('labels.json','in.tif'), d['shape'], "
                        "d['channels'], d['backend'], d['version'], d['params']['n_segments'], "
                        "d['params']['compactness'], d['threads'], "
                        "sorted(d['seconds'].keys()), "
                        "all(v >= 0 for v in d['seconds'].values()), "
                        "all(round(v, 6) == v for v in d['seconds'].values()), "
                        "d['compression'], d['channel'], d['command'].endswith(' deflate:runs')");
  expected_n = g_strdup_printf ("True [6, 20, 24] 1 cpu %s 40 0.2 2 ['connect', 'iterate', "
                                "'load', 'prepare', 'total', 'write'] True True deflate:runs None "
                                "True",
                                SV_VERSION);
  g_assert_cmpstr (values, ==, expected_n);
  n_labels = python_json (sidecar, "d['n_labels']");
  g_free (expected_n);
  expected_n = g_strdup_printf ("%" G_GSIZE_FORMAT, count_distinct (labels));
  g_assert_cmpstr (n_labels, ==, expected_n);
}

static void
test_sidecar_names (Fixture *f, gconstpointer data)
{
  static const struct
  {
    const char *output;
    const char *sidecar;
  } cases[] = {
    { "labels.tiff", "labels.json" },
    { "LABELS.TIF", "LABELS.json" },
    { "labels", "labels.json" },
    { "a.b.tif", "a.b.json" },
    { "we\"ird\\na\tme é.tif", "we\"ird\\na\tme é.json" },
  };
  g_autoptr (SvVolume) v = make_volume (2, 9, 10);
  g_autofree char *in = write_volume (f, "in.tif", v);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *out = path_in (f, cases[i].output);
      g_autofree char *sidecar = path_in (f, cases[i].sidecar);
      Result r = run_cli (f->dir, "slic", in, "-o", out, "--n-segments", "4");

      g_assert_cmpint (r.status, ==, 0);
      result_clear (&r);
      /* Exactly the labels, their sidecar and the input: no temporary left. */
      g_assert_cmpuint (count_entries (f->dir), ==, 3);
      g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
      g_assert_true (g_file_test (sidecar, G_FILE_TEST_IS_REGULAR));
      /* Names with quotes, backslashes and tabs survive the JSON escaping. */
      {
        g_autofree char *written = python_json (sidecar, "d['output']");
        g_assert_cmpstr (written, ==, out);
      }
      g_unlink (out);
      g_unlink (sidecar);
    }
}

static void
test_spacing_from_file (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = make_volume (4, 12, 14);
  g_autofree char *in = NULL;
  g_autofree char *sidecar = path_in (f, "out.json");
  g_autofree char *spacing = NULL;
  g_autofree char *out = path_in (f, "out.tif");
  g_autoptr (SvLabels) labels = NULL;
  g_autoptr (SvLabels) expected = NULL;
  g_autoptr (GError) error = NULL;
  SvSlicParams params;
  Result r;

  v->spacing[0] = 3.0;
  v->spacing[1] = v->spacing[2] = 0.75;
  v->spacing_from_file = TRUE;
  v->unit = g_strdup ("micron");
  in = write_volume (f, "in.tif", v);
  r = run_cli (f->dir, "slic", in, "-o", out, "--spacing", "file", "--n-segments", "20");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  spacing = python_json (sidecar, "[float(x) for x in d['params']['spacing']], d['spacing_unit']");
  g_assert_cmpstr (spacing, ==, "[3.0, 0.75, 0.75] micron");

  sv_slic_params_init_defaults (&params);
  params.n_segments = 20;
  params.spacing[0] = 3.0;
  params.spacing[1] = params.spacing[2] = 0.75;
  expected = engine_labels (in, &params, 2);
  labels = sv_tiff_read_labels (out, &error);
  g_assert_no_error (error);
  assert_labels_equal (labels, expected);
  g_assert_cmpfloat_with_epsilon (labels->spacing[0], 3.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (labels->spacing[2], 0.75, 1e-6);

  /* file-relative, the window's default: 3/0.75, 0.75/0.75, 0.75/0.75. */
  g_clear_pointer (&labels, sv_labels_free);
  g_clear_pointer (&expected, sv_labels_free);
  g_clear_pointer (&spacing, g_free);
  r = run_cli (f->dir, "slic", in, "-o", out, "--spacing", "file-relative", "--n-segments", "20",
               "--compactness", "0.05");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  spacing = python_json (sidecar, "[float(x) for x in d['params']['spacing']]");
  g_assert_cmpstr (spacing, ==, "[4.0, 1.0, 1.0]");
  params.compactness = 0.05;
  params.spacing[0] = 4.0;
  params.spacing[1] = params.spacing[2] = 1.0;
  expected = engine_labels (in, &params, 2);
  labels = sv_tiff_read_labels (out, &error);
  g_assert_no_error (error);
  assert_labels_equal (labels, expected);
}

/* Whatever spacing weighs the distances, a calibrated input's labels carry
 * its spacing and unit (in memory and streamed alike), and an uncalibrated
 * input's the spacing of the run, with no unit. */
static void
test_labels_carry_calibration (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = make_volume (6, 20, 24);
  g_autofree char *em = NULL;
  g_autofree char *plain = NULL;
  g_autofree char *whole = path_in (f, "whole.tif");
  g_autofree char *slabs = path_in (f, "slabs.tif");
  g_autoptr (GError) error = NULL;

  v->spacing[0] = 40.0;
  v->spacing[1] = v->spacing[2] = 4.0;
  v->spacing_from_file = TRUE;
  v->unit = g_strdup ("nm");
  em = write_volume (f, "em.tif", v);
  g_clear_pointer (&v->unit, g_free);
  v->spacing[0] = v->spacing[1] = v->spacing[2] = 1.0;
  plain = write_volume (f, "plain.tif", v);

  for (guint i = 0; i < 2; i++)
    {
      const char *in = i == 0 ? em : plain;
      g_autoptr (SvLabels) labels = NULL;
      Result r;

      r = run_cli (f->dir, "slic", in, "-o", whole, "--n-segments", "20", "--spacing", "10,1,1");
      g_assert_cmpint (r.status, ==, 0);
      result_clear (&r);
      r = run_cli (f->dir, "slic", in, "-o", slabs, "--n-segments", "20", "--spacing", "10,1,1",
                   "--slab-depth", "2");
      g_assert_cmpint (r.status, ==, 0);
      result_clear (&r);
      sv_test_assert_same_file (whole, slabs);
      labels = sv_tiff_read_labels (whole, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (labels->unit, ==, i == 0 ? "nm" : NULL);
      g_assert_cmpfloat_with_epsilon (labels->spacing[0], i == 0 ? 40.0 : 10.0, 1e-9);
      g_assert_cmpfloat_with_epsilon (labels->spacing[2], i == 0 ? 4.0 : 1.0, 1e-6);
    }
}

/* The window's default on a file with no spacing: ones, with one line on
 * stderr saying so (in --json, in the object's notes instead). */
static void
test_file_relative_without_spacing (Fixture *f, gconstpointer data)
{
  g_autofree char *plain = path_in (f, "plain.tif");
  g_autofree char *out = path_in (f, "out.tif");
  g_autofree char *ones = path_in (f, "ones.tif");
  g_autofree char *json_path = path_in (f, "out.json");
  g_autofree char *notes = NULL;
  const guint sizes[] = { 20, 24, 20, 24, 20, 24, 20, 24 };
  Result r;

  write_raw_pages (plain, 4, sizes);
  r = run_cli (f->dir, "slic", plain, "-o", out, "--n-segments", "12", "--spacing",
               "file-relative");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpint (count_lines (r.err), ==, 1);
  g_assert_nonnull (strstr (r.err, "no voxel spacing in the file"));
  g_assert_nonnull (strstr (r.err, "--spacing file-relative uses ones"));
  result_clear (&r);
  notes = python_json (json_path, "d['notes'], d['params']['spacing']");
  g_assert_nonnull (strstr (notes, "uses ones"));
  g_assert_true (g_str_has_suffix (notes, " [1, 1, 1]"));

  r = run_cli (f->dir, "slic", plain, "-o", ones, "--n-segments", "12", "--spacing", "1,1,1");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.err, ==, "");
  result_clear (&r);
  sv_test_assert_same_file (out, ones);

  r = run_cli (f->dir, "slic", plain, "-o", out, "--n-segments", "12", "--spacing",
               "file-relative", "--json");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.err, ==, "");
  g_assert_nonnull (strstr (r.out, "\"notes\":[\""));
  result_clear (&r);
}

/* Counts in words a person reads ("1 label"), and far fewer labels than
 * asked for come with why and the options to try, on one line of stderr,
 * leaving out what the command does already; the exit status stays 0. */
static void
test_few_labels_note (Fixture *f, gconstpointer data)
{
  g_autofree char *in = NULL;
  g_autofree char *out = path_in (f, "out.tif");
  g_autofree char *json_path = path_in (f, "out.json");
  g_autofree char *notes = NULL;
  g_autoptr (GError) error = NULL;
  SvSynthParams sp;
  Result r;

  /* Cells in noise: with a tiny compactness the clusters fray. */
  sv_synth_params_init_defaults (&sp);
  sp.nz = 10;
  sp.ny = sp.nx = 40;
  sp.n_cells = 5;
  {
    g_autoptr (SvVolume) v = sv_synth_cells (&sp, NULL, &error);
    g_assert_no_error (error);
    in = write_volume (f, "cells.tif", v);
  }
  r = run_cli (f->dir, "slic", in, "-o", out, "--n-segments", "1");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, ", 1 label (1 cluster) on cpu"));
  g_assert_cmpstr (r.err, ==, "");
  result_clear (&r);
  {
    g_autofree char *has_notes = python_json (json_path, "'notes' in d");
    g_assert_cmpstr (has_notes, ==, "False");
  }

  r = run_cli (f->dir, "slic", in, "-o", out, "--n-segments", "400", "--compactness", "0.0001");
  g_test_message ("stdout: %sstderr: %s", r.out, r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, " labels ("));
  g_assert_cmpint (count_lines (r.err), ==, 1);
  g_assert_nonnull (strstr (r.err, " segments asked for (the compactness is low"));
  g_assert_nonnull (strstr (r.err, "try --compactness 0.001 or --no-enforce-connectivity"));
  /* Spacing relative to its finest axis already: not offered. */
  g_assert_null (strstr (r.err, "--spacing"));
  result_clear (&r);
  notes = python_json (json_path, "d['notes'][0]");
  g_assert_nonnull (strstr (notes, "try --compactness 0.001"));

  r = run_cli (f->dir, "slic", in, "-o", out, "--n-segments", "400", "--compactness", "0.01",
               "--spacing", "0.004,0.002,0.002");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.err, "(the spacing is small)"));
  g_assert_nonnull (strstr (r.err, "--spacing 2,1,1 (relative to the finest axis)"));
  result_clear (&r);
}

static void
test_mask_start_label_0 (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = make_volume (5, 16, 18);
  g_autoptr (SvLabels) m = NULL;
  g_autoptr (SvLabels) labels = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *in = write_volume (f, "in.tif", v);
  g_autofree char *mask = path_in (f, "mask.tif");
  g_autofree char *out = path_in (f, "out.tif");
  g_autofree char *n_labels = NULL;
  g_autofree char *expected = NULL;
  gint32 max_label = -1;
  Result r;

  m = sv_labels_new (5, 16, 18, &error);
  g_assert_no_error (error);
  for (guint z = 0; z < 5; z++)
    for (guint y = 0; y < 16; y++)
      for (guint x = 0; x < 18; x++)
        m->data[((gsize)z * 16 + y) * 18 + x] = (x >= 3 && x < 15 && y >= 2 && y < 13) ? 255 : 0;
  g_assert_true (sv_tiff_write_labels (mask, m, &error));
  g_assert_no_error (error);

  r = run_cli (f->dir, "slic", in, "-o", out, "--mask", mask, "--start-label", "0", "--n-segments",
               "12");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  labels = sv_tiff_read_labels (out, &error);
  g_assert_no_error (error);
  /* Outside the mask: start_label - 1 = -1; inside: labels from 0. */
  for (gsize k = 0; k < sv_labels_n_voxels (labels); k++)
    {
      if (m->data[k] == 0)
        g_assert_cmpint (labels->data[k], ==, -1);
      else
        g_assert_cmpint (labels->data[k], >=, 0);
      max_label = MAX (max_label, labels->data[k]);
    }
  {
    g_autofree char *sidecar = path_in (f, "out.json");
    n_labels = python_json (
        sidecar, "d['n_labels'], d['mask'] == sys.argv[1].replace('out.json', 'mask.tif')");
  }
  /* Consecutive labels 0..max, background excluded. */
  expected = g_strdup_printf ("%d True", max_label + 1);
  g_assert_cmpstr (n_labels, ==, expected);
  g_assert_cmpuint (count_distinct (labels), ==, (guint)max_label + 2);
}

static void
test_slic_json_stdout (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_default_volume (f);
  g_autofree char *json_path = path_in (f, "stdout.json");
  g_autofree char *check = NULL;
  g_autofree char *same = NULL;
  Result r;

  r = run_cli (f->dir, "slic", "in.tif", "-o", "labels.tif", "--json", "--n-segments", "30",
               "--no-enforce-connectivity", "--start-label", "0");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.err, ==, "");
  g_assert_cmpint (count_lines (r.out), ==, 1);
  write_bytes (json_path, r.out, strlen (r.out));
  check = python_json (json_path, "type(d).__name__, d['output'], d['shape'], d['backend'], "
                                  "d['params']['enforce_connectivity'], "
                                  "d['params']['start_label'], d['n_labels'] <= d['n_clusters']");
  g_assert_cmpstr (check, ==, "dict labels.tif [6, 20, 24] cpu False 0 True");
  /* The sidecar holds the same object. */
  {
    g_autofree char *sidecar = path_in (f, "labels.json");
    g_autofree char *a = python_json (json_path, "sorted(d.items())");
    g_autofree char *b = python_json (sidecar, "sorted(d.items())");
    g_assert_cmpstr (a, ==, b);
  }
  result_clear (&r);
}

static void
test_slic_threads (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = make_volume (12, 30, 34);
  g_autofree char *in = write_volume (f, "in.tif", v);
  g_autofree char *out1 = path_in (f, "t1.tif");
  g_autofree char *out2 = path_in (f, "t2.tif");
  g_autoptr (SvLabels) a = NULL;
  g_autoptr (SvLabels) b = NULL;
  g_autoptr (GError) error = NULL;
  Result r;

  r = run_cli (f->dir, "slic", in, "-o", out1, "--n-segments", "90", "--threads", "1", "--sigma",
               "1,0.5,0.5", "--slic-zero");
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  r = run_cli (f->dir, "slic", in, "-o", out2, "--n-segments", "90", "--threads", "2", "--sigma",
               "1,0.5,0.5", "--slic-zero");
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  a = sv_tiff_read_labels (out1, &error);
  g_assert_no_error (error);
  b = sv_tiff_read_labels (out2, &error);
  g_assert_no_error (error);
  assert_labels_equal (a, b);
}

static void
test_connect_matches_engine (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) in = sv_labels_new (5, 17, 19, &error);
  g_autoptr (SvLabels) got = NULL;
  g_autofree gint32 *expected = NULL;
  g_autofree char *in_path = path_in (f, "raw.tif");
  g_autofree char *out_path = path_in (f, "connected.tif");
  g_autofree char *expect_out = NULL;
  GRand *rand = g_rand_new_with_seed (7);
  gint64 n;
  Result r;

  g_assert_no_error (error);
  /* Blocky labels with scattered specks: components to merge and to split. */
  for (guint z = 0; z < in->nz; z++)
    for (guint y = 0; y < in->ny; y++)
      for (guint x = 0; x < in->nx; x++)
        {
          gint32 label = (gint32)(1 + (z / 3) * 20 + (y / 6) * 4 + x / 7);
          if (g_rand_int_range (rand, 0, 10) == 0)
            label = g_rand_int_range (rand, 1, 30);
          in->data[((gsize)z * in->ny + y) * in->nx + x] = label;
        }
  g_rand_free (rand);
  g_assert_true (sv_tiff_write_labels (in_path, in, &error));
  g_assert_no_error (error);

  expected = g_new (gint32, sv_labels_n_voxels (in));
  n = sv_connectivity_enforce (in->data, in->nz, in->ny, in->nx, 10, 60, 1,
                               SV_CONNECTIVITY_RULE_CONNECTED, expected);

  r = run_cli (f->dir, "connect", in_path, "-o", out_path, "--min-size", "10", "--max-size", "60");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  expect_out = g_strdup_printf ("%s: %" G_GINT64_FORMAT " labels -> %s\n", in_path, n, out_path);
  g_assert_cmpstr (r.out, ==, expect_out);
  result_clear (&r);
  got = sv_tiff_read_labels (out_path, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (got->data, sv_labels_n_voxels (got) * sizeof (gint32), expected,
                   sv_labels_n_voxels (in) * sizeof (gint32));
}

static void
test_info (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = make_volume (3, 9, 11);
  g_autofree char *in = NULL;
  g_autofree char *json_path = path_in (f, "info.json");
  g_autofree char *check = NULL;
  g_autofree char *expected = NULL;
  g_autoptr (GError) error = NULL;
  SvTiffInfo info = { 0 };
  Result r;

  v->spacing[0] = 2.5;
  v->spacing[1] = v->spacing[2] = 0.5;
  v->spacing_from_file = TRUE;
  v->unit = g_strdup ("micron");
  in = write_volume (f, "vol.tif", v);
  g_assert_true (sv_tiff_info (in, &info, &error));
  g_assert_no_error (error);

  r = run_cli (f->dir, "info", in);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "shape:       3×9×11 (z 3, y 9, x 11)\n"));
  g_assert_nonnull (strstr (r.out, "channels:    1\n"));
  expected = g_strdup_printf ("type:        %s\n", sv_sample_type_to_string (SV_SAMPLE_F32));
  g_assert_nonnull (strstr (r.out, expected));
  g_assert_nonnull (strstr (r.out, "bigtiff:     no\n"));
  result_clear (&r);

  r = run_cli (f->dir, "info", in, "--json");
  g_assert_cmpint (r.status, ==, 0);
  write_bytes (json_path, r.out, strlen (r.out));
  check
      = python_json (json_path, "d['shape'], d['channels'], d['bigtiff'], d['spacing_from_file'], "
                                "d['compression'], round(d['value_min'], 5), "
                                "round(d['value_max'], 5), d['spacing']");
  /* Python prints round()ed floats in repr form; compare those the same way. */
  {
    g_autofree char *py = g_strdup_printf (
        "d['shape'], d['channels'], d['bigtiff'], d['spacing_from_file'], d['compression'], "
        "round(%.17g, 5), round(%.17g, 5), d['spacing']",
        info.value_min, info.value_max);
    g_autofree char *want = python_json (json_path, py);
    g_assert_cmpstr (check, ==, want);
  }
  g_assert_nonnull (strstr (check, "[3, 9, 11] 1 False True"));
  g_assert_nonnull (strstr (check, "[2.5, 0.5, 0.5]"));
  result_clear (&r);
  sv_tiff_info_clear (&info);

  expect_failure (f, "nothing.tif: no such file", "info", "nothing.tif");
}

static void
test_help (Fixture *f, gconstpointer data)
{
  static const char *const commands[] = { "slic", "connect", "info", "synth", "eval" };
  Result r;

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *usage = g_strdup_printf ("supervox-cli %s", commands[i]);
      r = run_cli (f->dir, commands[i], "--help");
      g_assert_cmpint (r.status, ==, 0);
      g_assert_nonnull (strstr (r.out, usage));
      result_clear (&r);
    }
  r = run_cli (f->dir, "slic", "--help");
  g_assert_nonnull (strstr (r.out, "--n-segments"));
  g_assert_nonnull (strstr (r.out, "--no-enforce-connectivity"));
  g_assert_nonnull (strstr (r.out, "] IN.tif… -o OUT.tif|DIR/|TEMPLATE\n"));
  g_assert_nonnull (strstr (r.out, "{stem}"));
  g_assert_nonnull (
      strstr (r.out, "Exit status: 0 when every file was written; 1 when any failed"));
  result_clear (&r);
  r = run_cli (f->dir, "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "slic"));
  result_clear (&r);
  r = run_cli (f->dir, "--version");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (g_str_has_prefix (r.out, "supervox-cli " SV_VERSION));
  result_clear (&r);
}

static double
json_number (const char *path, const char *key)
{
  g_autofree char *expr = g_strdup_printf ("repr(float(d['%s']))", key);
  g_autofree char *text = python_json (path, expr);
  return g_ascii_strtod (text, NULL);
}

static void
test_pipeline (Fixture *f, gconstpointer data)
{
  g_autofree char *vol = path_in (f, "vol.tif");
  g_autofree char *truth = path_in (f, "gt.tif");
  g_autofree char *labels = path_in (f, "labels.tif");
  g_autofree char *metrics = path_in (f, "metrics.json");
  g_autofree char *compare = NULL;
  double asa, ari;
  Result r;

  r = run_cli (f->dir, "synth", "-o", vol, "--truth", truth, "--seed", "3");
  g_test_message ("synth stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);

  r = run_cli (f->dir, "slic", vol, "-o", labels, "--n-segments", "2000", "--compactness", "0.1");
  g_test_message ("slic stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);

  r = run_cli (f->dir, "eval", labels, "--truth", truth, "--image", vol, "--json");
  g_test_message ("eval stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  write_bytes (metrics, r.out, strlen (r.out));
  result_clear (&r);
  asa = json_number (metrics, "asa");
  g_test_message ("ASA %.4f, boundary recall %.4f", asa, json_number (metrics, "boundary_recall"));
  g_assert_cmpfloat (asa, >, 0.8);
  g_assert_cmpfloat (asa, <=, 1.0);

  /* A label file compared with itself has an adjusted Rand index of 1. */
  r = run_cli (f->dir, "eval", labels, "--compare", labels);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "adjusted_rand 1.000000\n");
  result_clear (&r);
  r = run_cli (f->dir, "eval", labels, "--compare", truth, "--json");
  g_assert_cmpint (r.status, ==, 0);
  compare = path_in (f, "compare.json");
  write_bytes (compare, r.out, strlen (r.out));
  ari = json_number (compare, "adjusted_rand");
  g_assert_cmpfloat (ari, >, 0.0);
  g_assert_cmpfloat (ari, <, 1.0);
  result_clear (&r);
}

/* ------------------------------------------------------------------ */
/* Batches: many inputs in one process */

static gboolean
same_bytes (const char *a, const char *b)
{
  g_autofree char *ca = NULL;
  g_autofree char *cb = NULL;
  gsize la = 0, lb = 0;

  g_assert_true (g_file_get_contents (a, &ca, &la, NULL));
  g_assert_true (g_file_get_contents (b, &cb, &lb, NULL));
  return la == lb && memcmp (ca, cb, la) == 0;
}

/* A small volume whose content depends on `seed`. */
static SvVolume *
make_seeded_volume (guint nz, guint ny, guint nx, guint seed)
{
  SvVolume *v = make_volume (nz, ny, nx);

  for (gsize k = 0; k < sv_volume_n_voxels (v); k++)
    v->data[k] = seed % 2 ? 1.0f - v->data[k] : v->data[k] * (1.0f + 0.1f * (float)seed);
  return v;
}

/* a.tif and b.tif share a shape and c.tif has another, so that the batch
 * both reuses the backend's buffers and replaces them. */
static void
write_batch_inputs (Fixture *f)
{
  static const guint shapes[3][3] = { { 6, 20, 24 }, { 6, 20, 24 }, { 5, 16, 18 } };
  static const char *const names[] = { "a.tif", "b.tif", "c.tif" };

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr (SvVolume) v = make_seeded_volume (shapes[i][0], shapes[i][1], shapes[i][2], i);
      g_autofree char *path = write_volume (f, names[i], v);
    }
}

static void
test_batch_matches_single_runs (Fixture *f, gconstpointer data)
{
  static const char *const stems[] = { "a", "b", "c" };
  g_autofree char *out_dir = path_in (f, "out");
  g_autofree char *lines = path_in (f, "stdout.jsonl");
  g_autofree char *listing = NULL;
  g_autofree char *check = NULL;
  Result r;

  write_batch_inputs (f);
  r = run_cli (f->dir, "slic", "a.tif", "b.tif", "c.tif", "-o", "out/", "--n-segments", "30",
               "--sigma", "0.5", "--threads", "2", "--json");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.err, ==, "");
  write_bytes (lines, r.out, strlen (r.out));
  result_clear (&r);
  listing = list_dir (out_dir);
  g_assert_cmpstr (listing, ==, "a.json a.tif b.json b.tif c.json c.tif");

  /* One object per file in input order, then the totals. */
  check = python_json_lines (lines, "len(d), [x['output'] for x in d[:3]], d[3]['batch']['files'], "
                                    "d[3]['batch']['written'], d[3]['batch']['failed'], "
                                    "d[3]['batch']['files_per_second'] > 0");
  g_assert_cmpstr (check, ==, "4 ['out/a.tif', 'out/b.tif', 'out/c.tif'] 3 3 0 True");

  for (guint i = 0; i < G_N_ELEMENTS (stems); i++)
    {
      g_autofree char *in = g_strdup_printf ("%s.tif", stems[i]);
      g_autofree char *single = g_strdup_printf ("single-%s.tif", stems[i]);
      g_autofree char *batch_path = g_strdup_printf ("%s/%s.tif", out_dir, stems[i]);
      g_autofree char *single_path = path_in (f, single);
      g_autofree char *batch_json = g_strdup_printf ("%s/%s.json", out_dir, stems[i]);
      g_autofree char *single_json = NULL;
      g_autofree char *a = NULL;
      g_autofree char *b = NULL;

      r = run_cli (f->dir, "slic", in, "-o", single, "--n-segments", "30", "--sigma", "0.5",
                   "--threads", "2");
      g_assert_cmpint (r.status, ==, 0);
      result_clear (&r);
      g_assert_true (same_bytes (batch_path, single_path));
      single_json = g_strdup_printf ("%s/single-%s.json", f->dir, stems[i]);
      a = python_json (batch_json, "d['input'], d['shape'], d['n_labels'], d['params']");
      b = python_json (single_json, "d['input'], d['shape'], d['n_labels'], d['params']");
      g_assert_cmpstr (a, ==, b);
    }
}

typedef enum
{
  BAD_TRUNCATED,
  BAD_NAN,
  BAD_MASK_SHAPE,
} BadKind;

static void
check_batch_bad_middle (Fixture *f, BadKind kind)
{
  g_autoptr (SvVolume) good = make_volume (6, 20, 24);
  g_autofree char *a = write_volume (f, "a.tif", good);
  g_autofree char *c = write_volume (f, "c.tif", good);
  g_autofree char *b = NULL;
  g_autofree char *out_dir = path_in (f, "out");
  g_autofree char *lines = path_in (f, "stdout.jsonl");
  g_autofree char *listing = NULL;
  g_autoptr (GError) error = NULL;
  Result r;

  if (kind == BAD_TRUNCATED)
    {
      g_autofree char *contents = NULL;
      gsize len = 0;

      b = write_volume (f, "b.tif", good);
      g_assert_true (g_file_get_contents (b, &contents, &len, NULL));
      write_bytes (b, contents, len / 2);
    }
  else if (kind == BAD_NAN)
    {
      g_autoptr (SvVolume) v = make_volume (6, 20, 24);

      v->data[(2 * 20 + 3) * 24 + 5] = NAN;
      b = write_volume (f, "b.tif", v);
    }
  else
    {
      g_autoptr (SvVolume) v = make_volume (5, 20, 24);
      g_autoptr (SvLabels) m = sv_labels_new (6, 20, 24, &error);
      g_autofree char *mask = path_in (f, "mask.tif");

      g_assert_no_error (error);
      for (gsize k = 0; k < sv_labels_n_voxels (m); k++)
        m->data[k] = 1;
      g_assert_true (sv_tiff_write_labels (mask, m, &error));
      g_assert_no_error (error);
      b = write_volume (f, "b.tif", v);
    }

  if (kind == BAD_MASK_SHAPE)
    r = run_cli (f->dir, "slic", "a.tif", "b.tif", "c.tif", "-o", "out/", "--n-segments", "20",
                 "--mask", "mask.tif");
  else if (kind == BAD_NAN)
    r = run_cli (f->dir, "slic", "a.tif", "b.tif", "c.tif", "-o", "out/", "--n-segments", "20",
                 "--json");
  else
    r = run_cli (f->dir, "slic", "a.tif", "b.tif", "c.tif", "-o", "out/", "--n-segments", "20");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 1);
  /* One line, naming the bad file; the others written, nothing else left. */
  g_assert_cmpint (count_lines (r.err), ==, 1);
  g_assert_true (g_str_has_prefix (r.err, "supervox-cli: "));
  g_assert_nonnull (strstr (r.err, "b.tif"));
  listing = list_dir (out_dir);
  g_assert_cmpstr (listing, ==, "a.json a.tif c.json c.tif");
  /* The written files and the totals; under --json the failure too. */
  g_assert_cmpint (count_lines (r.out), ==, kind == BAD_NAN ? 4 : 3);
  if (kind == BAD_NAN)
    {
      g_autofree char *check = NULL;

      write_bytes (lines, r.out, strlen (r.out));
      check = python_json_lines (lines, "[x.get('input') for x in d[:3]], "
                                        "'error' in d[1] and 'b.tif' in d[1]['error'], "
                                        "d[3]['batch']['written'], d[3]['batch']['failed']");
      g_assert_cmpstr (check, ==, "['a.tif', 'b.tif', 'c.tif'] True 2 1");
    }
  else
    g_assert_nonnull (strstr (r.out, "3 files: 2 written, 1 failed in "));
  result_clear (&r);
  /* The file after the bad one is whole. */
  {
    g_autofree char *got_path = g_build_filename (out_dir, "c.tif", NULL);
    g_autoptr (SvLabels) got = sv_tiff_read_labels (got_path, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (got->nz, ==, 6);
  }
}

static void
test_batch_bad_file (Fixture *f, gconstpointer data)
{
  check_batch_bad_middle (f, GPOINTER_TO_INT (data));
}

static void
test_batch_template (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = make_volume (2, 9, 10);
  g_autofree char *in_dir = path_in (f, "in");
  g_autofree char *res = path_in (f, "res");
  g_autofree char *many = path_in (f, "many");
  g_autofree char *listing = NULL;
  g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  Result r;

  g_assert_cmpint (g_mkdir (in_dir, 0755), ==, 0);
  g_free (write_volume (f, "in/cells.ome.tif", v));
  g_free (write_volume (f, "in/b.tif", v));

  /* res/ does not exist: the template's folders are created. */
  r = run_cli (f->dir, "slic", "in/cells.ome.tif", "in/b.tif", "-o", "res/{index}_{stem}_{name}",
               "--n-segments", "4");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  listing = list_dir (res);
  g_assert_cmpstr (listing, ==,
                   "1_cells_cells.ome.json 1_cells_cells.ome.tif 2_b_b.json 2_b_b.tif");

  r = run_cli (f->dir, "slic", "in/cells.ome.tif", "in/b.tif", "-o", "{dir}/{stem}-labels.tif",
               "--n-segments", "4");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "-> in/cells-labels.tif\n"));
  g_assert_nonnull (strstr (r.out, "-> in/b-labels.tif\n"));
  result_clear (&r);
  g_clear_pointer (&listing, g_free);
  listing = list_dir (in_dir);
  g_assert_cmpstr (listing, ==,
                   "b-labels.json b-labels.tif b.tif cells-labels.json "
                   "cells-labels.tif cells.ome.tif");

  /* {index} is padded to the width of the count, so that names sort. */
  g_ptr_array_add (args, g_strdup ("slic"));
  for (guint i = 0; i < 10; i++)
    {
      g_autofree char *name = g_strdup_printf ("in/v%u.tif", i);
      g_free (write_volume (f, name, v));
      g_ptr_array_add (args, g_steal_pointer (&name));
    }
  g_ptr_array_add (args, g_strdup ("-o"));
  g_ptr_array_add (args, g_strdup ("many/{index}.tif"));
  g_ptr_array_add (args, g_strdup ("--n-segments=4"));
  g_ptr_array_add (args, NULL);
  r = run_cli_v (f->dir, (const char *const *)args->pdata);
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  g_clear_pointer (&listing, g_free);
  listing = list_dir (many);
  g_assert_true (g_str_has_prefix (listing, "01.json 01.tif 02.json 02.tif "));
  g_assert_true (g_str_has_suffix (listing, " 10.json 10.tif"));
  g_assert_cmpuint (count_entries (many), ==, 20);

  expect_failure (f, "unknown placeholder {base}", "slic", "in/b.tif", "-o", "x/{base}.tif");
  expect_failure (f, "a '{' without its '}'", "slic", "in/b.tif", "-o", "x/{stem.tif");
}

static void
test_batch_refuses_duplicates (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = make_volume (2, 9, 10);
  g_autofree char *sub = path_in (f, "sub");
  g_autofree char *res = path_in (f, "res");

  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (res, 0755), ==, 0);
  g_free (write_volume (f, "a.tif", v));
  g_free (write_volume (f, "b.tif", v));
  g_free (write_volume (f, "a.tiff", v));
  g_free (write_volume (f, "sub/a.tif", v));
  g_free (write_volume (f, "res/a.tif", v));

  /* Nothing is computed and nothing is created, out/ included. */
  expect_failure (f, "a.tif and sub/a.tif would both be written to out/a.tif", "slic", "a.tif",
                  "sub/a.tif", "-o", "out/");
  expect_failure (f, "a.tif and a.tif would both be written", "slic", "a.tif", "a.tif", "-o",
                  "out/");
  expect_failure (f, "would both be written to out/..tif", "slic", "a.tif", "b.tif", "-o",
                  "out/{dir}.tif");
  /* Different labels, one sidecar. */
  expect_failure (f, "would both be written to out/a.json", "slic", "a.tif", "a.tiff", "-o",
                  "out/{name}");
  expect_failure (f, "would overwrite an input", "slic", "a.tif", "b.tif", "-o", "{dir}/{name}");
  expect_failure (f, "would overwrite an input", "slic", "a.tif", "b.tif", "-o", ".");
  /* The first input's output is the second input. */
  expect_failure (f, "res/a.tif: the output would overwrite an input", "slic", "a.tif", "res/a.tif",
                  "-o", "res/");
}

#if SV_HAVE_PIXBUF
/* ------------------------------------------------------------------ */
/* Photos (PNG through GdkPixbuf) */

/* A 8-bit pixbuf of smooth blobs: grey (R = G = B) or colour; `alpha` adds
 * a varying alpha channel that the conversion must drop. */
static GdkPixbuf *
make_photo (int w, int h, gboolean colour, gboolean alpha)
{
  GdkPixbuf *pb = gdk_pixbuf_new (GDK_COLORSPACE_RGB, alpha, 8, w, h);
  int stride = gdk_pixbuf_get_rowstride (pb), nch = gdk_pixbuf_get_n_channels (pb);
  guint8 *pixels = gdk_pixbuf_get_pixels (pb);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        guint8 *p = pixels + (gsize)y * stride + (gsize)x * nch;
        double g = 127.5 + 100 * sin (0.31 * x) * cos (0.23 * y) + 20 * ((x / 7 + y / 6) % 2);
        p[0] = (guint8)CLAMP (g, 0, 255);
        p[1] = colour ? (guint8)((x * 9 + y * 2) % 256) : p[0];
        p[2] = colour ? (guint8)(255 - (x * 3 + y * 7) % 256) : p[0];
        if (alpha)
          p[3] = (guint8)((x * 37 + y * 11) % 256);
      }
  return pb;
}

static char *
save_photo (Fixture *f, const char *name, GdkPixbuf *pb)
{
  g_autoptr (GError) error = NULL;
  char *path = path_in (f, name);

  g_assert_true (gdk_pixbuf_save (pb, path, "png", &error, NULL));
  g_assert_no_error (error);
  return path;
}

/* The volume the photo must become, computed here from the pixels:
 * img_as_float of the kept channels. */
static void
assert_photo_volume (const SvVolume *v, GdkPixbuf *pb, guint nc)
{
  int w = gdk_pixbuf_get_width (pb), h = gdk_pixbuf_get_height (pb);
  int stride = gdk_pixbuf_get_rowstride (pb), nch = gdk_pixbuf_get_n_channels (pb);
  const guint8 *pixels = gdk_pixbuf_read_pixels (pb);

  g_assert_cmpuint (v->nz, ==, 1);
  g_assert_cmpuint (v->ny, ==, (guint)h);
  g_assert_cmpuint (v->nx, ==, (guint)w);
  g_assert_cmpuint (v->nc, ==, nc);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (guint c = 0; c < nc; c++)
        {
          float want = (float)((double)pixels[(gsize)y * stride + (gsize)x * nch + c] / 255.0);
          g_assert_cmpmem (&v->data[((gsize)y * w + x) * nc + c], sizeof (float), &want,
                           sizeof want);
        }
}

static SvLabels *
engine_labels_of (const SvVolume *v, const SvSlicParams *params)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", &error);
  SvLabels *labels;
  SvRunControl control = { .n_threads = 1, .stop_after_iteration = -1 };
  SvRunStats stats = { 0 };

  g_assert_no_error (error);
  labels = sv_labels_new (v->nz, v->ny, v->nx, &error);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_true (sv_backend_run (backend, params, &control, &stats, &error));
  g_assert_true (sv_backend_get_labels (backend, labels->data, &error));
  g_assert_no_error (error);
  return labels;
}

static void
check_photo_slic (Fixture *f, gboolean colour, gboolean alpha)
{
  g_autoptr (GdkPixbuf) pb = make_photo (53, 41, colour, alpha);
  g_autofree char *in = save_photo (f, colour ? "photo.png" : "grey.png", pb);
  g_autofree char *out = path_in (f, "labels.tif");
  g_autofree char *sidecar = path_in (f, "labels.json");
  g_autoptr (GdkPixbuf) back = NULL;
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (SvLabels) labels = NULL;
  g_autoptr (SvLabels) expected = NULL;
  g_autoptr (GError) error = NULL;
  const char *compactness = colour ? "10" : "0.2";
  SvSlicParams params;
  Result r;

  /* The in-process conversion, checked against the pixels themselves. */
  back = gdk_pixbuf_new_from_file (in, &error);
  g_assert_no_error (error);
  v = sv_image_read_pixbuf (in, &error);
  g_assert_no_error (error);
  assert_photo_volume (v, back, colour ? 3 : 1);

  r = run_cli (f->dir, "slic", in, "-o", out, "--n-segments", "30", "--compactness", compactness,
               "--sigma", "0.5");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.err, ==, "");
  result_clear (&r);

  labels = sv_tiff_read_labels (out, &error);
  g_assert_no_error (error);
  sv_slic_params_init_defaults (&params);
  params.n_segments = 30;
  params.compactness = colour ? 10.0 : 0.2;
  params.sigma[0] = params.sigma[1] = params.sigma[2] = 0.5;
  expected = engine_labels_of (v, &params);
  assert_labels_equal (labels, expected);
  g_test_message ("%" G_GSIZE_FORMAT " labels", count_distinct (labels));
  g_assert_cmpuint (count_distinct (labels), >, 5);
  g_unlink (out);
  g_unlink (sidecar);
}

static void
test_photo_slic (Fixture *f, gconstpointer data)
{
  check_photo_slic (f, FALSE, FALSE);
  check_photo_slic (f, FALSE, TRUE);
  check_photo_slic (f, TRUE, FALSE);
  check_photo_slic (f, TRUE, TRUE);
}

static void
test_photo_info (Fixture *f, gconstpointer data)
{
  g_autoptr (GdkPixbuf) grey = make_photo (23, 17, FALSE, TRUE);
  g_autoptr (GdkPixbuf) colour = make_photo (23, 17, TRUE, FALSE);
  g_autofree char *grey_path = save_photo (f, "grey.png", grey);
  g_autofree char *colour_path = save_photo (f, "colour.PNG", colour);
  g_autofree char *json_path = path_in (f, "info.json");
  g_autofree char *check = NULL;
  g_autofree char *range = NULL;
  const guint8 *pixels = gdk_pixbuf_read_pixels (grey);
  int stride = gdk_pixbuf_get_rowstride (grey);
  guint lo = 255, hi = 0;
  Result r;

  /* The grey channel's range; alpha does not count. */
  for (int y = 0; y < 17; y++)
    for (int x = 0; x < 23; x++)
      {
        lo = MIN (lo, pixels[(gsize)y * stride + (gsize)x * 4]);
        hi = MAX (hi, pixels[(gsize)y * stride + (gsize)x * 4]);
      }
  r = run_cli (f->dir, "info", grey_path);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "shape:       17×23 (z 1, y 17, x 23)\n"));
  g_assert_nonnull (strstr (r.out, "channels:    1\n"));
  g_assert_nonnull (strstr (r.out, "type:        uint8\n"));
  g_assert_nonnull (strstr (r.out, "format:      png\n"));
  range = g_strdup_printf ("value range: %u … %u\n", lo, hi);
  g_assert_nonnull (strstr (r.out, range));
  result_clear (&r);

  r = run_cli (f->dir, "info", colour_path, "--json");
  g_assert_cmpint (r.status, ==, 0);
  write_bytes (json_path, r.out, strlen (r.out));
  check = python_json (json_path, "d['shape'], d['channels'], d['sample_type'], d['format'], "
                                  "d['spacing'], d['spacing_from_file']");
  g_assert_cmpstr (check, ==, "[1, 17, 23] 3 uint8 png [1, 1, 1] False");
  result_clear (&r);
}

static void
test_photo_corrupt (Fixture *f, gconstpointer data)
{
  g_autoptr (GdkPixbuf) pb = make_photo (40, 30, TRUE, FALSE);
  g_autofree char *good = save_photo (f, "good.png", pb);
  g_autofree char *bad = path_in (f, "photo.png");
  g_autofree char *needle = g_strdup_printf ("%s: not an image supervox can read: ", bad);
  g_autofree char *contents = NULL;
  g_autofree char *labels = path_in (f, "labels.tif");
  gsize len = 0;

  g_assert_true (g_file_get_contents (good, &contents, &len, NULL));
  g_unlink (good);
  /* Cut in the middle of the pixel data. */
  write_bytes (bad, contents, len / 2);
  expect_failure (f, needle, "slic", bad, "-o", "out.tif");
  expect_failure (f, needle, "info", bad);
  /* Not a PNG at all, though named like one. */
  write_bytes (bad, "not a photo\n", 12);
  expect_failure (f, needle, "slic", bad, "-o", "out.tif");
  expect_failure (f, needle, "info", bad, "--json");

  /* eval --image takes a photo too, and reports a broken one the same way. */
  {
    g_autofree char *photo = save_photo (f, "ok.png", pb);
    Result r = run_cli (f->dir, "slic", photo, "-o", labels, "--compactness", "10");

    g_assert_cmpint (r.status, ==, 0);
    result_clear (&r);
    r = run_cli (f->dir, "eval", labels, "--image", photo);
    g_test_message ("eval stderr: %s", r.err);
    g_assert_cmpint (r.status, ==, 0);
    result_clear (&r);
    expect_failure (f, needle, "eval", labels, "--image", bad);
  }
}
#endif

/* ------------------------------------------------------------------------ */
/* Codecs and channels */

static void
test_compression_bad_values (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_default_volume (f);
  static const struct
  {
    const char *value, *needle;
  } cases[] = {
    { "gzip", "--compression must be none, deflate, zstd or lzw" },
    { "zstd:0", "--compression zstd takes a level from 1 to 22, got 'zstd:0'" },
    { "deflate:x", "--compression deflate takes a level from 1 to 12 or runs, got 'deflate:x'" },
    { "lzw:1", "--compression lzw has no levels" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      expect_failure (f, cases[i].needle, "slic", in, "-o", "out.tif", "--compression",
                      cases[i].value);
      expect_failure (f, cases[i].needle, "synth", "-o", "out.tif", "--compression",
                      cases[i].value);
      expect_failure (f, cases[i].needle, "connect", in, "-o", "out.tif", "--min-size", "1",
                      "--max-size", "10", "--compression", cases[i].value);
    }
}

/* Every codec gives the same labels; the file says which codec, and so
 * does the sidecar. */
static void
test_compression_codecs (Fixture *f, gconstpointer data)
{
  static const struct
  {
    const char *value, *canonical;
    guint16 tag;
  } cases[] = {
    { "none", "none", COMPRESSION_NONE },
    { "deflate:1", "deflate:1", COMPRESSION_ADOBE_DEFLATE },
    { "deflate:runs", "deflate:runs", COMPRESSION_ADOBE_DEFLATE },
    { "zstd", "zstd:3", COMPRESSION_ZSTD },
    { "lzw", "lzw", COMPRESSION_LZW },
  };
  g_autofree char *in = write_default_volume (f);
  g_autofree char *out = path_in (f, "labels.tif");
  g_autofree char *sidecar = path_in (f, "labels.json");
  g_autoptr (SvLabels) first = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (SvLabels) labels = NULL;
      g_autofree char *written = NULL;
      guint16 tag = 0;
      TIFF *tif;
      Result r = run_cli (f->dir, "slic", in, "-o", out, "--n-segments", "30", "--compression",
                          cases[i].value);

      g_test_message ("stderr: %s", r.err);
      g_assert_cmpint (r.status, ==, 0);
      result_clear (&r);
      tif = TIFFOpen (out, "r");
      g_assert_nonnull (tif);
      TIFFGetField (tif, TIFFTAG_COMPRESSION, &tag);
      TIFFClose (tif);
      g_assert_cmpuint (tag, ==, cases[i].tag);
      written = python_json (sidecar, "d['compression']");
      if (written != NULL)
        g_assert_cmpstr (written, ==, cases[i].canonical);
      labels = sv_tiff_read_labels (out, &error);
      g_assert_no_error (error);
      if (first == NULL)
        first = g_steal_pointer (&labels);
      else
        assert_labels_equal (labels, first);
    }
}

/* Float32 pages with an ImageJ description on the first. */
static void
write_pages_imagej (const char *path, const float *const *pages, guint n_pages, guint ny,
                    guint nx, const char *description)
{
  TIFF *tif = TIFFOpen (path, "w");

  g_assert_nonnull (tif);
  for (guint p = 0; p < n_pages; p++)
    {
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (guint32)nx);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (guint32)ny);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 32);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, (guint32)ny);
      if (p == 0 && description != NULL)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, description);
      g_assert_cmpint (TIFFWriteEncodedStrip (tif, 0, (void *)pages[p],
                                              (tmsize_t)((gsize)ny * nx * sizeof (float))),
                       >=, 0);
      g_assert_true (TIFFWriteDirectory (tif));
    }
  TIFFClose (tif);
}

/* --channel on an ImageJ hyperstack segments that channel alone: the same
 * labels as the channel saved as a plain stack. */
static void
test_slic_channel (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) a = make_volume (6, 20, 24);
  g_autoptr (SvVolume) b = make_volume (6, 20, 24);
  g_autofree char *hyper = path_in (f, "zcyx.tif");
  g_autofree char *plain = path_in (f, "b.tif");
  g_autofree char *out_h = path_in (f, "h-labels.tif");
  g_autofree char *out_p = path_in (f, "p-labels.tif");
  g_autofree char *sidecar = path_in (f, "h-labels.json");
  g_autofree char *values = NULL;
  g_autoptr (SvLabels) lh = NULL;
  g_autoptr (SvLabels) lp = NULL;
  g_autoptr (GError) error = NULL;
  const float *pages[12], *plain_pages[6];
  gsize plane = 20 * 24;
  Result r;

  for (gsize i = 0; i < sv_volume_n_voxels (b); i++)
    b->data[i] = 1.0f - b->data[(i * 7) % sv_volume_n_voxels (b)];
  for (guint z = 0; z < 6; z++)
    {
      pages[2 * z] = a->data + z * plane;
      pages[2 * z + 1] = b->data + z * plane;
      plain_pages[z] = b->data + z * plane;
    }
  write_pages_imagej (hyper, pages, 12, 20, 24,
                      "ImageJ=1.53t\nimages=12\nchannels=2\nslices=6\nhyperstack=true\n"
                      "mode=composite\n");
  write_pages_imagej (plain, plain_pages, 6, 20, 24, NULL);

  r = run_cli (f->dir, "slic", hyper, "-o", out_h, "--n-segments", "30", "--channel", "1");
  g_test_message ("stderr: %s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  r = run_cli (f->dir, "slic", plain, "-o", out_p, "--n-segments", "30");
  g_assert_cmpint (r.status, ==, 0);
  result_clear (&r);
  lh = sv_tiff_read_labels (out_h, &error);
  lp = sv_tiff_read_labels (out_p, &error);
  g_assert_no_error (error);
  assert_labels_equal (lh, lp);
  values = python_json (sidecar, "d['channel'], d['channels'], '--channel 1' in d['command']");
  if (values != NULL)
    g_assert_cmpstr (values, ==, "1 1 True");

  expect_failure (f, "zcyx.tif: has 2 channels (0 to 1), not channel 2", "slic", hyper, "-o",
                  "out.tif", "--channel", "2");
  expect_failure (f, "--channel must be between 0 and 4095", "slic", hyper, "-o", "out.tif",
                  "--channel", "-1");
}

int
main (int argc, char **argv)
{
  const char *build_dir;

  g_test_init (&argc, &argv, NULL);

  build_dir = g_getenv ("SV_BUILD_DIR");
  if (g_getenv ("SV_CLI") != NULL)
    cli_path = g_strdup (g_getenv ("SV_CLI"));
  else if (build_dir != NULL)
    cli_path = g_build_filename (build_dir, "app", "cli", "supervox-cli", NULL);
  else
    cli_path = g_strdup (SV_CLI_PATH);

#define ADD(path, func) g_test_add ((path), Fixture, NULL, fixture_setup, (func), fixture_teardown)
  ADD ("/cli/errors/missing-input", test_missing_input);
  ADD ("/cli/errors/empty-file", test_empty_file);
  ADD ("/cli/errors/not-tiff", test_not_tiff);
  ADD ("/cli/errors/truncated", test_truncated);
  ADD ("/cli/errors/corrupt-offsets", test_corrupt_offsets);
  ADD ("/cli/errors/page-sizes", test_page_sizes);
  ADD ("/cli/errors/nan-inf", test_nonfinite);
  ADD ("/cli/errors/bad-params", test_bad_params);
  ADD ("/cli/errors/command-line", test_bad_command_line);
  ADD ("/cli/errors/unwritable-output", test_unwritable_output);
  ADD ("/cli/errors/cuda-unavailable", test_cuda_unavailable);
  ADD ("/cli/slic/roundtrip-and-sidecar", test_slic_roundtrip);
  ADD ("/cli/slic/append-cli-flags-reproduce-params", test_append_cli_reproduces);
  ADD ("/cli/slic/json-stdout", test_slic_json_stdout);
  ADD ("/cli/slic/sidecar-names", test_sidecar_names);
  ADD ("/cli/slic/spacing-from-file", test_spacing_from_file);
  ADD ("/cli/slic/labels-carry-input-calibration", test_labels_carry_calibration);
  ADD ("/cli/slic/file-relative-without-spacing-uses-ones", test_file_relative_without_spacing);
  ADD ("/cli/slic/few-labels-note-and-plurals", test_few_labels_note);
  ADD ("/cli/slic/mask-start-label-0", test_mask_start_label_0);
  ADD ("/cli/slic/threads-identical", test_slic_threads);
  ADD ("/cli/connect/matches-engine", test_connect_matches_engine);
  ADD ("/cli/info/text-and-json", test_info);
  ADD ("/cli/help", test_help);
  ADD ("/cli/pipeline/synth-slic-eval", test_pipeline);
  ADD ("/cli/batch/matches-single-runs", test_batch_matches_single_runs);
  g_test_add ("/cli/batch/bad-file/truncated", Fixture, GINT_TO_POINTER (BAD_TRUNCATED),
              fixture_setup, test_batch_bad_file, fixture_teardown);
  g_test_add ("/cli/batch/bad-file/nan-json", Fixture, GINT_TO_POINTER (BAD_NAN), fixture_setup,
              test_batch_bad_file, fixture_teardown);
  g_test_add ("/cli/batch/bad-file/mask-shape", Fixture, GINT_TO_POINTER (BAD_MASK_SHAPE),
              fixture_setup, test_batch_bad_file, fixture_teardown);
  ADD ("/cli/batch/template", test_batch_template);
  ADD ("/cli/batch/refuses-duplicates", test_batch_refuses_duplicates);
  ADD ("/cli/compression/bad-values", test_compression_bad_values);
  ADD ("/cli/compression/every-codec", test_compression_codecs);
  ADD ("/cli/slic/channel", test_slic_channel);
#if SV_HAVE_PIXBUF
  ADD ("/cli/photo/slic-matches-engine", test_photo_slic);
  ADD ("/cli/photo/info", test_photo_info);
  ADD ("/cli/photo/corrupt", test_photo_corrupt);
#endif
#undef ADD

  return g_test_run ();
}

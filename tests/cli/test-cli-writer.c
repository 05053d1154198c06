/* Supervox tests: supervox-cli slic's label file, written by the strip
 * writer on one or two threads, in memory or streamed in slabs, holds the
 * bytes that libtiff's own in-order writer (SV_TIFF_WRITER=libtiff, one
 * thread) writes, for every codec, in classic TIFF and in BigTIFF. */
#include <string.h>

#include "sv-test-files.h"
#include "sv-test-run.h"
#include "sv-test-volumes.h"

static char *cli_path;

typedef struct
{
  char *dir;
  char *in;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  /* 500×600 slices: label pages of three strips, the last one short. */
  g_autoptr (SvVolume) v = sv_test_textured_volume (3, 500, 600, 1);

  f->dir = sv_test_make_dir ("sv-test-cli-writer");
  f->in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->in);
}

/* `slic IN -o OUT --compression CODEC` plus `extra` (space-separated)
 * with SV_TIFF_WRITER=writer; asserts success. */
static void
run_slic (Fixture *f, const char *out, const char *codec, gboolean bigtiff, const char *writer,
          const char *extra)
{
  g_autofree char *args
      = g_strdup_printf ("slic %s -o %s --compression %s --n-segments 300 --max-num-iter 4 %s",
                         f->in, out, codec, extra);
  g_auto (GStrv) argv = g_strsplit (args, " ", -1);
  g_auto (GStrv) envp = g_get_environ ();
  g_autoptr (GPtrArray) full = g_ptr_array_new ();
  SvTestRun r;

  envp = g_environ_setenv (envp, "SV_TIFF_WRITER", writer, TRUE);
  envp = g_environ_setenv (envp, "SV_TIFF_FORCE_BIGTIFF", bigtiff ? "1" : "0", TRUE);
  g_ptr_array_add (full, cli_path);
  for (guint i = 0; argv[i] != NULL; i++)
    if (argv[i][0] != '\0')
      g_ptr_array_add (full, argv[i]);
  g_ptr_array_add (full, NULL);
  r = sv_test_run_argv (f->dir, envp, (const char *const *)full->pdata);
  if (r.status != 0)
    g_test_message ("%s: %s", args, r.err);
  g_assert_cmpint (r.status, ==, 0);
  sv_test_run_clear (&r);
}

static void
test_same_as_libtiff (Fixture *f, gconstpointer data)
{
  static const char *const runs[] = {
    "--threads 1",
    "--threads 2",
    "--threads 2 --slab-depth 2",
    "--threads 1 --slab-depth 1",
  };
  const char *codec = data;

  for (int big = 0; big < 2; big++)
    {
      g_autofree char *ref = g_build_filename (f->dir, "ref.tif", NULL);

      run_slic (f, ref, codec, big, "libtiff", "--threads 1");
      for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
        {
          g_autofree char *out = g_build_filename (f->dir, "strips.tif", NULL);

          g_test_message ("%s, %s, %s", codec, big ? "BigTIFF" : "classic", runs[i]);
          run_slic (f, out, codec, big, "strips", runs[i]);
          sv_test_assert_same_file (ref, out);
          if (strstr (runs[i], "--slab-depth") != NULL)
            {
              g_autofree char *sidecar = g_build_filename (f->dir, "strips.json", NULL);
              g_autofree char *json = NULL;
              g_assert_true (g_file_get_contents (sidecar, &json, NULL, NULL));
              g_assert_nonnull (strstr (json, "\"mode\":\"streaming\""));
            }
        }
    }
}

int
main (int argc, char **argv)
{
  static const char *const codecs[] = { "none", "deflate:1", "deflate", "zstd:1", "zstd:3", "lzw" };

  g_test_init (&argc, &argv, NULL);
  cli_path = g_strdup (g_getenv ("SV_CLI") ? g_getenv ("SV_CLI") : SV_CLI_PATH);
  for (guint i = 0; i < G_N_ELEMENTS (codecs); i++)
    {
      g_autofree char *path = g_strdup_printf ("/cli/writer/same-as-libtiff/%s", codecs[i]);
      g_test_add (path, Fixture, codecs[i], fixture_setup, test_same_as_libtiff, fixture_teardown);
    }
  return g_test_run ();
}

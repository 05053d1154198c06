/* Supervox tests: a streamed run reads its --mask slab by slab, so that a
 * volume and a mask that do not fit in the address space it is given
 * still segment, with the labels of the in-memory run. */
#include <string.h>

#include "supervox/sv-io.h"
#include "supervox/sv-volume.h"
#include "sv-test-files.h"
#include "sv-test-run.h"

static char *cli_path;

/* The volume: 8-bit, 640·160·160 voxels (16 MiB in the file, 62 MiB as
 * float32); the mask as large, an ellipsoid and a block of holes. Thin
 * slices keep the connectivity ring (the z extent of a label) small. */
enum
{
  NZ = 640,
  NY = 160,
  NX = 160
};

typedef struct
{
  char *dir;
  char **env;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  (void)data;
  f->dir = sv_test_make_dir ("sv-test-cli-stream-mask");
  /* One malloc arena: each further one reserves 64 MiB of address space. */
  f->env = g_environ_setenv (g_get_environ (), "MALLOC_ARENA_MAX", "1", TRUE);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void)data;
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
  g_strfreev (f->env);
}

/* `slic IN -o OUT --threads 2 EXTRA…` under `prlimit --as=BYTES` (no
 * limit when 0), through sh so that a run the limit aborts comes back as
 * its exit status. */
static int
run_slic (Fixture *f, guint64 as_bytes, const char *in, const char *out, const char *extra,
          char **err)
{
  g_autofree char *limit = g_strdup_printf ("--as=%" G_GUINT64_FORMAT, as_bytes);
  g_autofree char *script
      = g_strdup_printf ("%s \"$@\" 2>&1; exit $?", as_bytes > 0 ? "prlimit \"$0\" --" : "exec");
  g_auto (GStrv) words = g_strsplit (extra, " ", -1);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  SvTestRun r;
  int status;

  g_ptr_array_add (argv, "sh");
  g_ptr_array_add (argv, "-c");
  g_ptr_array_add (argv, script);
  g_ptr_array_add (argv, as_bytes > 0 ? limit : "sh");
  g_ptr_array_add (argv, cli_path);
  g_ptr_array_add (argv, "slic");
  g_ptr_array_add (argv, (char *)in);
  g_ptr_array_add (argv, "-o");
  g_ptr_array_add (argv, (char *)out);
  g_ptr_array_add (argv, "--threads");
  g_ptr_array_add (argv, "2");
  for (guint i = 0; words[i] != NULL; i++)
    if (words[i][0] != '\0')
      g_ptr_array_add (argv, words[i]);
  g_ptr_array_add (argv, NULL);
  r = sv_test_run_argv (f->dir, f->env, (const char *const *)argv->pdata);
  status = r.status;
  if (err != NULL)
    *err = g_steal_pointer (&r.out);
  sv_test_run_clear (&r);
  return status;
}

static char *
write_volume (Fixture *f, const char *name, const SvVolume *v)
{
  g_autoptr (GError) error = NULL;
  char *path = g_build_filename (f->dir, name, NULL);

  g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U8, &error));
  g_assert_no_error (error);
  return path;
}

/* The smallest address space (to 1 MiB) in which a run on a tiny volume
 * succeeds: what the program, its libraries and threads take; 0 when even
 * 2 GiB is not enough (a sanitizer reserves terabytes). */
static guint64
base_address_space (Fixture *f, const char *tiny)
{
  g_autofree char *out = g_build_filename (f->dir, "tiny-labels.tif", NULL);
  guint64 lo = 1, hi = 2048; /* MiB: lo fails, hi succeeds */

  if (run_slic (f, hi << 20, tiny, out, "--n-segments 4 --slab-depth 1", NULL) != 0)
    return 0;
  while (hi - lo > 1)
    {
      guint64 mid = (lo + hi) / 2;
      if (run_slic (f, mid << 20, tiny, out, "--n-segments 4 --slab-depth 1", NULL) == 0)
        hi = mid;
      else
        lo = mid;
    }
  return hi << 20;
}

static void
test_mask_under_address_limit (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) tiny = sv_volume_new (2, 8, 8, 1, &error);
  g_autoptr (SvVolume) v = sv_volume_new (NZ, NY, NX, 1, &error);
  g_autoptr (SvVolume) m = sv_volume_new (NZ, NY, NX, 1, &error);
  g_autofree char *tiny_path = NULL, *in = NULL, *mask = NULL, *extra = NULL;
  g_autofree char *expected = g_build_filename (f->dir, "memory.tif", NULL);
  g_autofree char *streamed = g_build_filename (f->dir, "streamed.tif", NULL);
  g_autofree char *err = NULL;
  guint64 base, limit;
  guint32 h = 99;
  int status;

  (void)data;
  g_assert_no_error (error);
  for (gsize i = 0; i < 2 * 8 * 8; i++)
    tiny->data[i] = (float)(i % 7) / 255.0f;
  for (guint z = 0; z < NZ; z++)
    for (guint y = 0; y < NY; y++)
      for (guint x = 0; x < NX; x++)
        {
          const gsize i = ((gsize)z * NY + y) * NX + x;
          const double dz = (z - 300.0) / 4.0, dy = y - 80.0, dx = x - 76.0;
          h = h * 1664525u + 1013904223u;
          v->data[i] = (float)(((x / 12 + y / 16 + z / 8) % 4) * 50 + (h >> 26)) / 255.0f;
          m->data[i] = (float)(dz * dz + dy * dy + dx * dx < 70.0 * 70.0
                               || (z > 580 && (x / 9 + y / 9) % 3 != 0));
        }
  tiny_path = write_volume (f, "tiny.tif", tiny);
  in = write_volume (f, "in.tif", v);
  mask = write_volume (f, "mask.tif", m);

  base = base_address_space (f, tiny_path);
  if (base == 0)
    {
      g_test_skip ("the program needs more than 2 GiB of address space here (a sanitizer?)");
      return;
    }
  /* 44 MiB beside the program: room for 12 MiB of slabs and the
   * connectivity ring, not for the mask (16 MiB) with maskSLIC seeding's
   * map and counts over the whole volume (80 MiB), nor for the in-memory
   * run (over 250 MiB). */
  limit = base + (44 << 20);
  g_test_message ("address space: program %" G_GUINT64_FORMAT " MiB, limit %" G_GUINT64_FORMAT
                  " MiB",
                  base >> 20, limit >> 20);

  extra = g_strdup_printf ("--mask %s --n-segments 5000 --compactness 0.3 --max-num-iter 4", mask);
  g_assert_cmpint (run_slic (f, 0, in, expected, extra, &err), ==, 0);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_slic (f, limit, in, streamed, extra, &err), !=, 0);
  g_test_message ("in-memory under the limit: %s", err);
  g_clear_pointer (&err, g_free);
  g_free (extra);
  extra = g_strdup_printf (
      "--mask %s --n-segments 5000 --compactness 0.3 --max-num-iter 4 --memory-limit 12M", mask);
  status = run_slic (f, limit, in, streamed, extra, &err);
  if (status != 0)
    g_test_message ("streamed under the limit: %s", err);
  g_assert_cmpint (status, ==, 0);
  sv_test_assert_same_file (expected, streamed);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cli_path = g_strdup (SV_CLI_PATH);
  g_test_add ("/cli/stream/mask/under-address-limit", Fixture, NULL, fixture_setup,
              test_mask_under_address_limit, fixture_teardown);
  return g_test_run ();
}

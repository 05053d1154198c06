/* Supervox tests: the slice cache serves the values the whole-volume
 * reader loads, holds no more than its budget however the slices are
 * visited, and its sampled histogram is the volume's when it samples all. */
#include <string.h>

#include "supervox/sv-histogram.h"
#include "supervox/sv-io.h"
#include "supervox/sv-slice-cache.h"
#include "rng.h"
#include "sv-test-files.h"

enum
{
  NZ = 23,
  NY = 17,
  NX = 19
};

typedef struct
{
  char *dir;
  char *path;       /* uint16, NZ·NY·NX */
  SvVolume *volume; /* the file as the whole-volume reader loads it */
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (NZ, NY, NX, 1, &error);
  SvRng rng;

  (void)data;
  g_assert_no_error (error);
  f->dir = sv_test_make_dir ("sv-test-slice-cache");
  f->path = g_build_filename (f->dir, "volume.tif", NULL);
  sv_rng_init (&rng, 17);
  for (gsize i = 0; i < (gsize)NZ * NY * NX; i++)
    v->data[i] = (float)sv_rng_uniform (&rng) * (i / (NY * NX) + 1) / NZ;
  g_assert_true (sv_tiff_write_volume (f->path, v, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);
  f->volume = sv_tiff_read_volume (f->path, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void)data;
  sv_volume_free (f->volume);
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
}

static void
test_values (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvSliceCache) cache = sv_slice_cache_new (f->path, NULL, 1 << 20, &error);
  g_autofree float *slice = g_new (float, NY *NX);
  const SvTiffSlabInfo *info;

  (void)data;
  g_assert_no_error (error);
  info = sv_slice_cache_info (cache);
  g_assert_cmpuint (info->nz, ==, NZ);
  g_assert_cmpuint (info->sample_type, ==, SV_SAMPLE_U16);
  /* In no particular order, some twice. */
  for (guint i = 0; i < 2 * NZ; i++)
    {
      guint z = (i * 7) % NZ;
      g_assert_true (sv_slice_cache_read_float (cache, z, slice, &error));
      g_assert_no_error (error);
      g_assert_cmpmem (slice, NY * NX * sizeof (float), f->volume->data + (gsize)z * NY * NX,
                       NY * NX * sizeof (float));
    }
}

/* A budget of 3.5 slices holds 3; scrolling down and back up reads each
 * slice once per visit except the 3 still held at the turn. */
static void
test_bound (Fixture *f, gconstpointer data)
{
  const guint64 slice_bytes = NY * NX * 2;
  g_autoptr (GError) error = NULL;
  g_autoptr (SvSliceCache) cache = sv_slice_cache_new (f->path, NULL, slice_bytes * 7 / 2, &error);
  g_autoptr (SvSliceCache) tiny = sv_slice_cache_new (f->path, NULL, 10, &error);
  g_autofree guint16 *slice = g_new (guint16, NY * NX);
  guint64 hits, misses;

  (void)data;
  g_assert_no_error (error);
  for (guint i = 0; i < 2 * NZ; i++)
    {
      guint z = i < NZ ? i : 2 * NZ - 1 - i;
      g_assert_true (sv_slice_cache_read (cache, z, slice, &error));
      g_assert_true (sv_slice_cache_read (tiny, z, slice, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (sv_slice_cache_bytes (cache), <=, sv_slice_cache_budget (cache));
      g_assert_cmpuint (sv_slice_cache_bytes (cache), ==, MIN (i + 1, 3) * slice_bytes);
      /* Below one slice's size the cache still holds the slice shown. */
      g_assert_cmpuint (sv_slice_cache_bytes (tiny), ==, slice_bytes);
    }
  sv_slice_cache_counts (cache, &hits, &misses);
  g_assert_cmpuint (hits, ==, 3);
  g_assert_cmpuint (misses, ==, 2 * NZ - 3);
}

static void
test_sample_histogram (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvSliceCache) cache = sv_slice_cache_new (f->path, NULL, 1, &error);
  g_autoptr (SvHistogram) whole = sv_histogram_new (f->volume, 64);
  g_autoptr (SvHistogram) all = NULL;
  g_autoptr (SvHistogram) some = NULL;

  (void)data;
  g_assert_no_error (error);
  all = sv_slice_cache_sample_histogram (cache, 64, G_MAXUINT64, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (all->min, ==, whole->min);
  g_assert_cmpfloat (all->max, ==, whole->max);
  g_assert_cmpmem (all->counts, 64 * sizeof (guint64), whole->counts, 64 * sizeof (guint64));
  /* Room for 5 slices: every 5th slice, 0, 5, … 20. */
  some = sv_slice_cache_sample_histogram (cache, 64, 5 * NY * NX * sizeof (float), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (some->n_values, ==, 5 * NY * NX);
  /* It reads past the cache. */
  g_assert_cmpuint (sv_slice_cache_bytes (cache), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/engine/slice-cache/values", Fixture, NULL, fixture_setup, test_values,
              fixture_teardown);
  g_test_add ("/engine/slice-cache/bound", Fixture, NULL, fixture_setup, test_bound,
              fixture_teardown);
  g_test_add ("/engine/slice-cache/sample-histogram", Fixture, NULL, fixture_setup,
              test_sample_histogram, fixture_teardown);
  return g_test_run ();
}

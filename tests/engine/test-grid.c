/* Tests of grid seeding against scikit-image's util.regular_grid. */
#define G_LOG_DOMAIN "sv-test"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-seeds.h"
#include "internal.h"

static void
check_grid (guint z, guint y, guint x, double n, const guint start_expect[3],
            const guint step_expect[3])
{
  const guint shape[3] = { z, y, x };
  guint start[3], step[3];

  sv_regular_grid (shape, n, start, step);
  for (int a = 0; a < 3; a++)
    {
      if (start[a] != start_expect[a] || step[a] != step_expect[a])
        g_error ("shape %u×%u×%u n=%g axis %d: got start %u step %u, expected %u %u", z, y, x, n, a,
                 start[a], step[a], start_expect[a], step_expect[a]);
    }
}

/* Cases worked out by hand from the regular_grid algorithm. */
static void
test_grid_literal (void)
{
  /* One voxel, more points than voxels: every voxel is a seed. */
  check_grid (1, 1, 1, 1, (guint[]){ 0, 0, 0 }, (guint[]){ 1, 1, 1 });
  check_grid (1, 1, 1, 5, (guint[]){ 0, 0, 0 }, (guint[]){ 1, 1, 1 });
  check_grid (2, 10, 10, 500, (guint[]){ 0, 0, 0 }, (guint[]){ 1, 1, 1 });
  /* (2,10,10), 8: step 5 > 2, so z is fixed at 2 and y, x get sqrt(100/8)=3.54. */
  check_grid (2, 10, 10, 8, (guint[]){ 1, 1, 1 }, (guint[]){ 2, 4, 4 });
  /* (1000,1,1), 10: both short axes fixed at 1, the long one 1000/10. */
  check_grid (1000, 1, 1, 10, (guint[]){ 50, 0, 0 }, (guint[]){ 100, 1, 1 });
  /* (64,1,1), 4: 16 per step, start 8. */
  check_grid (64, 1, 1, 4, (guint[]){ 8, 0, 0 }, (guint[]){ 16, 1, 1 });
  /* scikit-image's docstring examples, as (1, 20, 40) and (3, 20, 40). */
  check_grid (1, 20, 40, 8, (guint[]){ 0, 5, 5 }, (guint[]){ 1, 10, 10 });
  check_grid (1, 20, 40, 32, (guint[]){ 0, 2, 2 }, (guint[]){ 1, 5, 5 });
  check_grid (3, 20, 40, 8, (guint[]){ 1, 5, 5 }, (guint[]){ 3, 10, 10 });
  /* A cube: (8000/8)^(1/3) is 9.999999999999998 in double: start 4, step 10. */
  check_grid (20, 20, 20, 8, (guint[]){ 4, 4, 4 }, (guint[]){ 10, 10, 10 });
}

/* Half-way steps round to even like numpy: (64,1,1) with n = 128/5 gives
 * step 2.5 → 2; with 64/3.5 gives 3.5 → 4. */
static void
test_grid_round_half_even (void)
{
  check_grid (64, 1, 1, 64.0 / 2.5, (guint[]){ 1, 0, 0 }, (guint[]){ 2, 1, 1 });
  check_grid (64, 1, 1, 64.0 / 3.5, (guint[]){ 1, 0, 0 }, (guint[]){ 4, 1, 1 });
}

static const guint shapes[][3] = {
  { 1, 20, 21 }, { 20, 21, 22 },    { 1, 2, 6 },   { 1, 3, 6 },    { 1, 2, 5 },
  { 7, 1, 300 }, { 128, 128, 128 }, { 5, 200, 3 }, { 33, 17, 65 }, { 1, 1, 1000 },
  { 2, 2, 2 },   { 100, 9, 9 },     { 13, 13, 1 }, { 300, 2, 41 }, { 1, 512, 512 },
  { 64, 1, 1 },  { 16, 256, 256 },  { 3, 3, 100 }, { 10, 10, 10 }, { 250, 250, 5 },
};
static const double counts[]
    = { 1, 2, 3, 4, 7, 8, 10, 50, 99, 100, 333, 1000, 2000, 4096, 12345, 100000, 3e6 };

/* Every shape × count against scikit-image itself. */
static void
test_grid_matches_skimage (void)
{
  g_autoptr (GString) script = g_string_new ("from skimage.util import regular_grid\nimport sys\n");
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) lines = NULL;
  int status = 0;
  gsize line = 0;

  g_string_append (script, "for shape, n in [");
  for (gsize s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (gsize c = 0; c < G_N_ELEMENTS (counts); c++)
      g_string_append_printf (script, "((%u,%u,%u),%.17g),", shapes[s][0], shapes[s][1],
                              shapes[s][2], counts[c]);
  g_string_append (script,
                   "]:\n"
                   "    sl = regular_grid(shape, n)\n"
                   "    print(' '.join('%d %d' % (s.start or 0, s.step or 1) for s in sl))\n");

  {
    const char *argv[] = { "/usr/bin/python3", "-c", script->str, NULL };
    if (!g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                       &error)
        || !g_spawn_check_wait_status (status, NULL))
      {
        g_test_skip_printf ("scikit-image is not available: %s", error ? error->message : err);
        return;
      }
  }
  lines = g_strsplit (out, "\n", -1);
  for (gsize s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (gsize c = 0; c < G_N_ELEMENTS (counts); c++, line++)
      {
        guint start[3], step[3];
        guint e[6];
        g_assert_nonnull (lines[line]);
        g_assert_cmpint (
            sscanf (lines[line], "%u %u %u %u %u %u", &e[0], &e[1], &e[2], &e[3], &e[4], &e[5]), ==,
            6);
        sv_regular_grid (shapes[s], counts[c], start, step);
        for (int a = 0; a < 3; a++)
          {
            if (start[a] != e[2 * a] || step[a] != e[2 * a + 1])
              g_error ("shape %u×%u×%u n=%g axis %d: got %u/%u, skimage %u/%u", shapes[s][0],
                       shapes[s][1], shapes[s][2], counts[c], a, start[a], step[a], e[2 * a],
                       e[2 * a + 1]);
          }
      }
}

/* Seeds: grid points in z-major order, S and the window steps of K. */
static void
test_grid_seeds (void)
{
  const guint shape[3] = { 1, 20, 21 };
  SvSeeds seeds;
  g_autoptr (GError) error = NULL;

  g_assert_true (sv_seeds_grid (shape, 4, &seeds, &error));
  g_assert_no_error (error);
  /* regular_grid((1,20,21), 4): step sqrt(105) = 10.25 → 10, start 5. */
  g_assert_cmpuint (seeds.n, ==, 4);
  g_assert_cmpfloat (seeds.zyx[0], ==, 0);
  g_assert_cmpfloat (seeds.zyx[1], ==, 5);
  g_assert_cmpfloat (seeds.zyx[2], ==, 5);
  g_assert_cmpfloat (seeds.zyx[3 * 1 + 2], ==, 15);
  g_assert_cmpfloat (seeds.zyx[3 * 2 + 1], ==, 15);
  g_assert_cmpfloat (seeds.zyx[3 * 3 + 1], ==, 15);
  g_assert_cmpfloat (seeds.zyx[3 * 3 + 2], ==, 15);
  g_assert_cmpfloat (seeds.step, ==, 10);
  g_assert_cmpint (seeds.window_step[0], ==, 1);
  g_assert_cmpint (seeds.window_step[1], ==, 10);
  g_assert_cmpint (seeds.window_step[2], ==, 10);
  sv_seeds_clear (&seeds);

  /* More segments than voxels: every voxel is a seed. */
  g_assert_true (sv_seeds_grid ((guint[]){ 2, 3, 4 }, 1000, &seeds, &error));
  g_assert_cmpuint (seeds.n, ==, 24);
  for (gsize i = 0; i < 24; i++)
    {
      g_assert_cmpfloat (seeds.zyx[3 * i + 0], ==, (float)(i / 12));
      g_assert_cmpfloat (seeds.zyx[3 * i + 1], ==, (float)((i / 4) % 3));
      g_assert_cmpfloat (seeds.zyx[3 * i + 2], ==, (float)(i % 4));
    }
  g_assert_cmpfloat (seeds.step, ==, 1);
  sv_seeds_clear (&seeds);

  g_assert_false (sv_seeds_grid (shape, 0, &seeds, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
}

/* The window steps come from regular_grid(shape, K), which may differ from
 * the seeding grid's steps: (10, 10, 10) with n = 3 gives start 3, step 7,
 * so one seed per axis (K = 1), while regular_grid(.., 1) has step 10. */
static void
test_grid_window_step_from_k (void)
{
  SvSeeds seeds;
  g_autoptr (GError) error = NULL;

  g_assert_true (sv_seeds_grid ((guint[]){ 10, 10, 10 }, 3, &seeds, &error));
  g_assert_cmpuint (seeds.n, ==, 1);
  g_assert_cmpfloat (seeds.zyx[0], ==, 3);
  g_assert_cmpfloat (seeds.step, ==, 7);
  g_assert_cmpint (seeds.window_step[0], ==, 10);
  g_assert_cmpint (seeds.window_step[1], ==, 10);
  g_assert_cmpint (seeds.window_step[2], ==, 10);
  sv_seeds_clear (&seeds);
}

/* maskSLIC seeding covers every mask-in voxel with some seed's window and
 * puts every seed inside the mask. */
static void
test_grid_mask_covers (void)
{
  const guint shape[3] = { 9, 31, 40 };
  const gsize n = 9 * 31 * 40;
  g_autofree guint8 *mask = g_new0 (guint8, n);
  GRand *rand = g_rand_new_with_seed (7);
  SvSeeds seeds;
  g_autoptr (GError) error = NULL;

  /* A few scattered blobs and single voxels. */
  for (gsize v = 0; v < n; v++)
    {
      gsize z = v / (31 * 40), y = (v / 40) % 31, x = v % 40;
      mask[v] = ((y - 10) * (y - 10) + (x - 12) * (x - 12) < 30) || (x > 30 && z > 5)
                || g_rand_int_range (rand, 0, 200) == 0;
    }
  g_rand_free (rand);

  for (gint64 segs = 1; segs <= 4000; segs *= 4)
    {
      g_assert_true (sv_seeds_mask (shape, mask, segs, &seeds, &error));
      g_assert_cmpuint (seeds.n, >=, 1);
      for (gsize v = 0; v < n; v++)
        {
          gboolean covered = FALSE;
          gsize z = v / (31 * 40), y = (v / 40) % 31, x = v % 40;
          if (!mask[v])
            continue;
          for (gsize k = 0; k < seeds.n && !covered; k++)
            {
              const float *p = seeds.zyx + 3 * k;
              gboolean in = TRUE;
              gsize c[3] = { z, y, x };
              for (int a = 0; a < 3; a++)
                {
                  float lo = p[a] - 2 * seeds.window_step[a];
                  float hi = p[a] + 2 * seeds.window_step[a] + 1;
                  in = in && c[a] >= (lo > 0 ? (gsize)lo : 0) && (float)c[a] < hi;
                }
              covered = in;
            }
          g_assert_true (covered);
        }
      for (gsize k = 0; k < seeds.n; k++)
        {
          const float *p = seeds.zyx + 3 * k;
          g_assert_true (mask[((gsize)p[0] * 31 + (gsize)p[1]) * 40 + (gsize)p[2]]);
          /* z-major order */
          if (k > 0)
            g_assert_true (p[-3] < p[0] || (p[-3] == p[0] && p[-2] < p[1])
                           || (p[-3] == p[0] && p[-2] == p[1] && p[-1] < p[2]));
        }
      sv_seeds_clear (&seeds);
    }

  memset (mask, 0, n);
  g_assert_false (sv_seeds_mask (shape, mask, 10, &seeds, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
}

/* A mask that shows only the slab asked for, copied into a buffer of that
 * many slices (a read outside it is out of bounds, which the sanitizer
 * build catches). */
typedef struct
{
  const guint8 *mask;
  gsize plane;
  guint8 *slab;
  guint depth;
} SlabSource;

static const guint8 *
mask_slab_cb (gpointer user_data, guint z0, guint z1, GError **error)
{
  SlabSource *source = user_data;

  (void)error;
  g_assert_cmpuint (z1 - z0, <=, source->depth);
  g_free (source->slab);
  source->slab = g_memdup2 (source->mask + z0 * source->plane, (z1 - z0) * source->plane);
  return source->slab - z0 * source->plane;
}

/* maskSLIC seeding with the mask served a few slices at a time (a mask
 * file streamed) gives the seeds of the whole mask, seeds added in one
 * slab covering the next included. */
static void
test_grid_mask_slabs (void)
{
  const guint shape[3] = { 11, 23, 19 };
  const gsize n = 11 * 23 * 19;
  g_autofree guint8 *mask = g_new0 (guint8, n);
  GRand *rand = g_rand_new_with_seed (11);

  for (gsize v = 0; v < n; v++)
    {
      gsize z = v / (23 * 19), y = (v / 19) % 23, x = v % 19;
      mask[v] = ((z - 3) * (z - 3) + (y - 8) * (y - 8) + (x - 6) * (x - 6) < 20)
                || (x > 14 && z % 4 == 1) || g_rand_int_range (rand, 0, 60) == 0;
    }
  g_rand_free (rand);

  for (gint64 segs = 2; segs <= 2000; segs *= 5)
    {
      SvSeeds whole, slabbed;
      g_autoptr (GError) error = NULL;

      g_assert_true (sv_seeds_mask (shape, mask, segs, &whole, &error));
      for (guint depth = 1; depth <= 4; depth++)
        {
          SlabSource source = { mask, 23 * 19, NULL, depth };

          g_assert_true (
              sv__seeds_mask_slabs (shape, mask_slab_cb, &source, depth, segs, &slabbed, &error));
          g_assert_no_error (error);
          g_assert_cmpuint (slabbed.n, ==, whole.n);
          g_assert_cmpmem (slabbed.zyx, slabbed.n * 3 * sizeof (float), whole.zyx,
                           whole.n * 3 * sizeof (float));
          g_assert_cmpfloat (slabbed.step, ==, whole.step);
          g_assert_cmpmem (slabbed.window_step, sizeof slabbed.window_step, whole.window_step,
                           sizeof whole.window_step);
          g_free (source.slab);
          sv_seeds_clear (&slabbed);
        }
      sv_seeds_clear (&whole);
    }
}

/* The teaching view's search window: ±2 grid steps of regular_grid(shape,
 * K) around the centre, the upper end + 1, truncated and clipped. A
 * 40³ volume with K = 64 has steps of 10. */
static void
test_search_window (void)
{
  const guint shape[3] = { 40, 40, 40 };
  const float centre[3] = { 3.0f, 21.5f, 35.9f };
  int lo[3], hi[3];

  sv_slic_search_window (shape, 64, centre, lo, hi);
  g_assert_cmpint (lo[0], ==, 0);
  g_assert_cmpint (hi[0], ==, 24);
  g_assert_cmpint (lo[1], ==, 1);
  g_assert_cmpint (hi[1], ==, 40);
  g_assert_cmpint (lo[2], ==, 15);
  g_assert_cmpint (hi[2], ==, 40);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/grid/literal", test_grid_literal);
  g_test_add_func ("/engine/grid/round-half-even", test_grid_round_half_even);
  g_test_add_func ("/engine/grid/matches-skimage", test_grid_matches_skimage);
  g_test_add_func ("/engine/grid/seeds", test_grid_seeds);
  g_test_add_func ("/engine/grid/window-step-from-k", test_grid_window_step_from_k);
  g_test_add_func ("/engine/grid/mask-covers", test_grid_mask_covers);
  g_test_add_func ("/engine/grid/mask-slabs", test_grid_mask_slabs);
  g_test_add_func ("/engine/grid/search-window", test_search_window);
  return g_test_run ();
}

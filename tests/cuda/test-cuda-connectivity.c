/* Tests of the device connectivity step: labels and label counts equal the
 * CPU's sequential sv_connectivity_enforce on label volumes with many small
 * fragments, background, split components (one label everywhere, long thin
 * labels), orphans (small pieces with no labelled neighbour), min_size >
 * max_size and random small volumes, always on the device path, over the
 * whole volume and window by window (as past 2³¹ voxels). Skips
 * without a CUDA device. */
#define G_LOG_DOMAIN "sv-test-cuda"

#include <string.h>

#include "supervox/sv-connectivity.h"
#include "sv-cuda.h"
#include "sv-test-cuda.h"

/* Blocks of (bz, by, bx) voxels with their own label, then a fraction of
 * voxels outside the first block flipped to a random nearby label (small
 * fragments) or to background. */
static gint32 *
make_labels (guint nz, guint ny, guint nx, guint bz, guint by, guint bx, double noise,
             double background, int start_label, guint32 seed)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  gint32 *l = g_new (gint32, (gsize)nz * ny * nx);
  guint gy = (ny + by - 1) / by, gx = (nx + bx - 1) / bx;
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        {
          gsize v = ((gsize)z * ny + y) * nx + x;
          gint32 block = (gint32)(((z / bz) * gy + y / by) * gx + x / bx);
          l[v] = start_label + block;
          if (block == 0)
            continue;
          double r = g_rand_double (rand);
          if (r < background)
            l[v] = start_label - 1;
          else if (r < background + noise)
            {
              gint32 other = block + g_rand_int_range (rand, -2, 3);
              l[v] = start_label + MAX (other, 0);
            }
        }
  return l;
}

/* The largest z extent of one label, minus one (background out). */
static guint
label_extent (const gint32 *in, guint nz, guint ny, guint nx, int start_label)
{
  g_autoptr (GHashTable) first = g_hash_table_new (NULL, NULL);
  const gsize plane = (gsize)ny * nx;
  guint extent = 0;

  for (gsize i = 0; i < nz * plane; i++)
    {
      guint z = (guint)(i / plane);
      gpointer key = GINT_TO_POINTER (in[i]);
      gpointer z0;
      if (in[i] == start_label - 1)
        continue;
      if (!g_hash_table_lookup_extended (first, key, NULL, &z0))
        g_hash_table_insert (first, key, GUINT_TO_POINTER (z));
      else
        extent = MAX (extent, z - GPOINTER_TO_UINT (z0));
    }
  return extent;
}

static const SvConnectivityRule rules[] = { SV_CONNECTIVITY_RULE_CONNECTED,
                                             SV_CONNECTIVITY_RULE_LEGACY };

static const char *
rule_name (SvConnectivityRule rule)
{
  return rule == SV_CONNECTIVITY_RULE_LEGACY ? "legacy" : "connected";
}

/* The windowed rule (the streamed run's past 2³¹ voxels) with cores of 1,
 * 2 and 3 slices and of half the volume gives `cpu` and its count. */
static void
check_windows (const gint32 *in, guint nz, guint ny, guint nx, gint64 min_size, gint64 max_size,
               int start_label, SvConnectivityRule rule, const gint32 *cpu, gint64 n_cpu)
{
  const gsize n = (gsize)nz * ny * nx;
  const guint extent = label_extent (in, nz, ny, nx, start_label);
  const guint depths[] = { 1, 2, 3, nz / 2 + 1 };
  g_autofree gint32 *gpu = g_new (gint32, n);

  for (gsize d = 0; d < G_N_ELEMENTS (depths); d++)
    {
      g_autoptr (GError) error = NULL;
      gint64 n_gpu = -1;
      memset (gpu, 0x55, n * sizeof (gint32));
      g_assert_true (sv_cuda_connectivity_enforce_windows (
          in, nz, ny, nx, min_size, max_size, start_label, rule, extent, depths[d], gpu, &n_gpu,
          &error));
      g_assert_no_error (error);
      for (gsize i = 0; i < n; i++)
        if (cpu[i] != gpu[i])
          g_error ("%ux%ux%u min %" G_GINT64_FORMAT " max %" G_GINT64_FORMAT
                   ", %s rule, windows of %u (extent %u): voxel %" G_GSIZE_FORMAT
                   ": cpu %d, cuda %d",
                   nz, ny, nx, min_size, max_size, rule_name (rule), depths[d], extent, i, cpu[i],
                   gpu[i]);
      g_assert_cmpint (n_cpu, ==, n_gpu);
    }
}

typedef struct
{
  const char *name;
  guint nz, ny, nx, bz, by, bx;
  double noise, background;
  double min_factor, max_factor;
  int start_label;
  gboolean expect_device; /* the device path must apply */
} ConnCase;

static const ConnCase conn_cases[] = {
  { "fragments", 24, 40, 40, 6, 8, 8, 0.05, 0.0, 0.5, 3.0, 1, TRUE },
  { "fragments-start-0", 24, 40, 40, 6, 8, 8, 0.05, 0.0, 0.5, 3.0, 0, TRUE },
  { "many-fragments", 16, 33, 47, 4, 5, 7, 0.25, 0.0, 0.5, 3.0, 1, TRUE },
  { "2d", 1, 200, 300, 1, 10, 10, 0.1, 0.0, 0.5, 3.0, 1, TRUE },
  { "1d", 1, 1, 500, 1, 1, 10, 0.1, 0.0, 0.5, 3.0, 1, TRUE },
  { "background", 20, 30, 30, 5, 6, 6, 0.05, 0.05, 0.5, 3.0, 1, TRUE },
  { "split", 20, 30, 30, 10, 15, 15, 0.02, 0.0, 0.1, 0.5, 1, TRUE },
  { "min-above-max", 20, 30, 30, 5, 6, 6, 0.02, 0.0, 2.0, 1.0, 1, TRUE },
  { "no-small", 20, 30, 30, 5, 6, 6, 0.0, 0.0, 0.5, 3.0, 1, TRUE },
  { "min-zero", 20, 30, 30, 5, 6, 6, 0.1, 0.0, 0.0, 3.0, 1, TRUE },
  { "orphans-in-background", 12, 20, 20, 4, 5, 5, 0.1, 0.5, 0.5, 3.0, 1, TRUE },
  { "orphans-split", 12, 20, 20, 6, 10, 10, 0.1, 0.3, 0.3, 0.6, 0, TRUE },
  { "one-voxel", 1, 1, 1, 1, 1, 1, 0.0, 0.0, 0.5, 3.0, 1, TRUE },
};

static void
test_matches_cpu (gconstpointer data)
{
  const ConnCase *c = data;
  g_autoptr (GError) error = NULL;
  gsize n = (gsize)c->nz * c->ny * c->nx;
  gsize n_blocks = ((c->nz + c->bz - 1) / c->bz) * ((c->ny + c->by - 1) / c->by)
                   * ((c->nx + c->bx - 1) / c->bx);
  gint64 min_size, max_size, n_cpu, n_gpu = -1;
  gboolean on_device = FALSE;

  if (!sv_test_need_cuda ())
    return;
  for (guint32 seed = 1; seed <= 8; seed++)
    {
      const SvConnectivityRule rule = rules[seed % 2];
      g_autofree gint32 *in = make_labels (c->nz, c->ny, c->nx, c->bz, c->by, c->bx, c->noise,
                                           c->background, c->start_label, seed);
      g_autofree gint32 *cpu = g_new (gint32, n);
      g_autofree gint32 *gpu = g_new (gint32, n);
      sv_connectivity_sizes (n, n_blocks, c->min_factor, c->max_factor, &min_size, &max_size);
      n_cpu = sv_connectivity_enforce (in, c->nz, c->ny, c->nx, min_size, max_size, c->start_label,
                                       rule, cpu);
      g_assert_true (sv_cuda_connectivity_enforce (in, c->nz, c->ny, c->nx, min_size, max_size,
                                                   c->start_label, rule, gpu, &n_gpu, &on_device,
                                                   &error));
      g_assert_no_error (error);
      g_test_message ("seed %u, %s rule: %" G_GINT64_FORMAT " labels, %s", (seed + 1) / 2,
                      rule_name (rule), n_cpu, on_device ? "device" : "host fallback");
      if (c->expect_device)
        g_assert_true (on_device);
      for (gsize i = 0; i < n; i++)
        if (cpu[i] != gpu[i])
          g_error ("voxel %" G_GSIZE_FORMAT ": cpu %d, cuda %d", i, cpu[i], gpu[i]);
      g_assert_cmpint (n_cpu, ==, n_gpu);
      check_windows (in, c->nz, c->ny, c->nx, min_size, max_size, c->start_label, rule, cpu,
                     n_cpu);
    }
}

/* Runs both paths on `in` under both rules and asserts equal labels and
 * counts, on the device, in one piece and window by window. */
static void
check_equal (const gint32 *in, guint nz, guint ny, guint nx, gint64 min_size, gint64 max_size,
             int start_label)
{
  gsize n = (gsize)nz * ny * nx;
  g_autofree gint32 *cpu = g_new (gint32, n);
  g_autofree gint32 *gpu = g_new (gint32, n);

  for (gsize r = 0; r < G_N_ELEMENTS (rules); r++)
    {
      g_autoptr (GError) error = NULL;
      gint64 n_gpu = -1;
      gboolean on_device = FALSE;
      gint64 n_cpu = sv_connectivity_enforce (in, nz, ny, nx, min_size, max_size, start_label,
                                              rules[r], cpu);
      g_assert_true (sv_cuda_connectivity_enforce (in, nz, ny, nx, min_size, max_size, start_label,
                                                   rules[r], gpu, &n_gpu, &on_device, &error));
      g_assert_no_error (error);
      g_assert_true (on_device);
      for (gsize i = 0; i < n; i++)
        if (cpu[i] != gpu[i])
          g_error ("%ux%ux%u min %" G_GINT64_FORMAT " max %" G_GINT64_FORMAT
                   ", %s rule, voxel %" G_GSIZE_FORMAT ": cpu %d, cuda %d",
                   nz, ny, nx, min_size, max_size, rule_name (rules[r]), i, cpu[i], gpu[i]);
      g_assert_cmpint (n_cpu, ==, n_gpu);
      check_windows (in, nz, ny, nx, min_size, max_size, start_label, rules[r], cpu, n_cpu);
    }
}

/* One label everywhere: a single component cut into many max_size pieces;
 * with min_size above the remainder sizes the last pieces are small. */
static void
test_single_label (void)
{
  const guint nz = 17, ny = 23, nx = 29;
  g_autofree gint32 *in = g_new (gint32, nz * ny * nx);
  static const gint64 sizes[][2] = { { 10, 100 }, { 60, 100 }, { 1, 7 },    { 0, 1 },
                                     { 1, 1 },    { 0, 0 },    { 99, 100 }, { 5, 11337 } };
  if (!sv_test_need_cuda ())
    return;
  for (guint i = 0; i < nz * ny * nx; i++)
    in[i] = 3;
  for (gsize s = 0; s < G_N_ELEMENTS (sizes); s++)
    check_equal (in, nz, ny, nx, sizes[s][0], sizes[s][1], 1);
  /* Beside background. */
  for (guint i = 0; i < nz * ny * nx; i += 7)
    in[i] = 0;
  for (gsize s = 0; s < G_N_ELEMENTS (sizes); s++)
    check_equal (in, nz, ny, nx, sizes[s][0], sizes[s][1], 1);
}

/* Long thin labels: rows along x, columns along z, two-voxel-wide
 * stripes, each several times max_size long. */
static void
test_thin_labels (void)
{
  const guint nz = 30, ny = 12, nx = 101;
  g_autofree gint32 *in = g_new (gint32, nz * ny * nx);
  if (!sv_test_need_cuda ())
    return;
  for (int shape = 0; shape < 3; shape++)
    {
      for (guint z = 0; z < nz; z++)
        for (guint y = 0; y < ny; y++)
          for (guint x = 0; x < nx; x++)
            {
              gint32 l = shape == 0   ? (gint32)(z * ny + y) % 5
                         : shape == 1 ? (gint32)(y * nx + x) % 3
                                      : (gint32)((x / 2 + y + z) % 4);
              in[(z * ny + y) * nx + x] = l + 1;
            }
      check_equal (in, nz, ny, nx, 8, 30, 1);
      check_equal (in, nz, ny, nx, 25, 30, 1);
      check_equal (in, nz, ny, nx, 3, 4, 0);
      check_equal (in, nz, ny, nx, 40, 30, 1);
    }
}

/* Small pieces at the raster start with no labelled neighbour: the first
 * keeps the counter, the following ones see only that label and keep it
 * too, and the first large piece shares it. */
static void
test_orphans (void)
{
  const guint nz = 6, ny = 9, nx = 11;
  g_autofree gint32 *in = g_new (gint32, nz * ny * nx);
  if (!sv_test_need_cuda ())
    return;
  for (guint i = 0; i < nz * ny * nx; i++)
    in[i] = 1 + (gint32)(i / 200);
  for (guint x = 0; x < 4; x++)
    in[x] = 10 + (gint32)x;
  check_equal (in, nz, ny, nx, 3, 1000, 1);
  /* An orphan enclosed by background, then one after every large piece. */
  in[0] = 0;
  in[2] = 0;
  in[nx] = 0;
  in[nx * ny] = 0;
  check_equal (in, nz, ny, nx, 3, 1000, 1);
  in[nz * ny * nx - 1] = 42;
  in[nz * ny * nx - 2] = 0;
  in[nz * ny * nx - 1 - nx] = 0;
  in[nz * ny * nx - 1 - nx * ny] = 0;
  check_equal (in, nz, ny, nx, 3, 1000, 1);
  check_equal (in, nz, ny, nx, 3, 50, 1);
}

/* Random small volumes with few labels, background and all kinds of
 * min_size and max_size. */
static void
test_random (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  if (!sv_test_need_cuda ())
    return;
  for (int it = 0; it < 300; it++)
    {
      guint nz = g_rand_int_range (rand, 1, 9), ny = g_rand_int_range (rand, 1, 12),
            nx = g_rand_int_range (rand, 1, 15);
      gsize n = (gsize)nz * ny * nx;
      int n_labels = g_rand_int_range (rand, 1, 5);
      double bg = g_rand_boolean (rand) ? 0.0 : g_rand_double_range (rand, 0.0, 0.6);
      int block = g_rand_int_range (rand, 1, 4);
      g_autofree gint32 *in = g_new (gint32, n);
      for (gsize i = 0; i < n; i++)
        {
          guint x = i % nx, y = (i / nx) % ny, z = i / ((gsize)nx * ny);
          in[i] = 1 + (gint32)((x / block + 3 * (y / block) + 5 * (z / block)) % n_labels);
          if (g_rand_double (rand) < 0.2)
            in[i] = 1 + g_rand_int_range (rand, 0, n_labels);
          if (g_rand_double (rand) < bg)
            in[i] = 0;
        }
      gint64 max_size = g_rand_int_range (rand, -1, 40);
      gint64 min_size = g_rand_int_range (rand, -1, 12);
      check_equal (in, nz, ny, nx, min_size, max_size, 1);
    }
}

/* SLIC labels at low compactness on noisy data: most voxels flipped to a
 * random label of a few, so that millions of small pieces chain through
 * each other, a few large ones cut them into counter segments, and the
 * first voxel starts an orphan whose label spreads. With and without
 * background, and min_size from "almost everything small" to "a few
 * small". */
static void
test_speckle (void)
{
  const guint nz = 40, ny = 72, nx = 90;
  const gsize n = (gsize)nz * ny * nx;
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  g_autofree gint32 *in = g_new (gint32, n);
  static const double flips[] = { 0.9, 0.6, 0.3 };
  static const gint64 sizes[][2] = { { 200, 3000 }, { 40, 600 }, { 6, 60 }, { 2, 9 } };
  if (!sv_test_need_cuda ())
    return;
  for (int background = 0; background < 2; background++)
    for (gsize f = 0; f < G_N_ELEMENTS (flips); f++)
      {
        for (gsize i = 0; i < n; i++)
          {
            guint x = i % nx, y = (i / nx) % ny, z = i / ((gsize)nx * ny);
            in[i] = 1 + (gint32)((x / 9 + 7 * (y / 9) + 13 * (z / 8)) % 5);
            if (g_rand_double (rand) < flips[f])
              in[i] = 1 + g_rand_int_range (rand, 0, 4);
            if (background && g_rand_double (rand) < 0.15)
              in[i] = 0;
          }
        in[0] = 99;
        for (gsize s = 0; s < G_N_ELEMENTS (sizes); s++)
          check_equal (in, nz, ny, nx, sizes[s][0], sizes[s][1], 1);
      }
}

/* Components that snake through the volume, several times max_size each,
 * cut by the device's level-by-level BFS: combs and spirals whose BFS
 * levels are long and whose queue order depends on the direction order. */
static void
test_oversized_shapes (void)
{
  const guint nz = 9, ny = 64, nx = 64;
  const gsize n = (gsize)nz * ny * nx;
  g_autofree gint32 *in = g_new (gint32, n);
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  if (!sv_test_need_cuda ())
    return;
  for (int shape = 0; shape < 3; shape++)
    {
      for (gsize i = 0; i < n; i++)
        {
          guint x = i % nx, y = (i / nx) % ny, z = i / ((gsize)nx * ny);
          gboolean on;
          if (shape == 0) /* a comb: teeth along y joined along x at y = 0 */
            on = y == 0 || x % 3 == 0;
          else if (shape == 1) /* concentric square rings joined by a bar */
            on = MAX (ABS ((int)x - 32), ABS ((int)y - 32)) % 2 == 0 || x == 32;
          else /* random blobs of one label */
            on = g_rand_double (rand) < 0.62;
          in[i] = on ? 1 : 2 + (gint32)(z % 2);
        }
      check_equal (in, nz, ny, nx, 10, 500, 1);
      check_equal (in, nz, ny, nx, 300, 500, 1);
      check_equal (in, nz, ny, nx, 1, 37, 0);
      check_equal (in, nz, ny, nx, 0, 4000, 1);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (conn_cases); i++)
    {
      g_autofree char *path
          = g_strdup_printf ("/cuda/connectivity/matches-cpu/%s", conn_cases[i].name);
      g_test_add_data_func (path, &conn_cases[i], test_matches_cpu);
    }
  g_test_add_func ("/cuda/connectivity/single-label", test_single_label);
  g_test_add_func ("/cuda/connectivity/thin-labels", test_thin_labels);
  g_test_add_func ("/cuda/connectivity/orphans", test_orphans);
  g_test_add_func ("/cuda/connectivity/random", test_random);
  g_test_add_func ("/cuda/connectivity/speckle", test_speckle);
  g_test_add_func ("/cuda/connectivity/oversized-shapes", test_oversized_shapes);
  return g_test_run ();
}

/* Tests of the device connectivity step: labels and label counts equal the
 * CPU's sequential sv_connectivity_enforce on label volumes with many small
 * fragments, background, split components and odd shapes. Skips without a
 * CUDA device. */
#define G_LOG_DOMAIN "sv-test-cuda"

#include <string.h>

#include "connectivity.h"
#include "sv-cuda.h"

static gboolean
need_device (void)
{
  g_autoptr (GError) error = NULL;
  if (!sv_cuda_device_available (&error))
    {
      g_test_skip (error->message);
      return FALSE;
    }
  return TRUE;
}

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
  { "background", 20, 30, 30, 5, 6, 6, 0.05, 0.05, 0.5, 3.0, 1, FALSE },
  { "split", 20, 30, 30, 10, 15, 15, 0.02, 0.0, 0.1, 0.5, 1, FALSE },
  { "min-above-max", 20, 30, 30, 5, 6, 6, 0.02, 0.0, 2.0, 1.0, 1, FALSE },
  { "no-small", 20, 30, 30, 5, 6, 6, 0.0, 0.0, 0.5, 3.0, 1, TRUE },
  { "min-zero", 20, 30, 30, 5, 6, 6, 0.1, 0.0, 0.0, 3.0, 1, TRUE },
  { "one-voxel", 1, 1, 1, 1, 1, 1, 0.0, 0.0, 0.5, 3.0, 1, FALSE },
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

  if (!need_device ())
    return;
  for (guint32 seed = 1; seed <= 4; seed++)
    {
      g_autofree gint32 *in = make_labels (c->nz, c->ny, c->nx, c->bz, c->by, c->bx, c->noise,
                                           c->background, c->start_label, seed);
      g_autofree gint32 *cpu = g_new (gint32, n);
      g_autofree gint32 *gpu = g_new (gint32, n);
      sv_connectivity_sizes (n, n_blocks, c->min_factor, c->max_factor, &min_size, &max_size);
      n_cpu = sv_connectivity_enforce (in, c->nz, c->ny, c->nx, min_size, max_size, c->start_label,
                                       cpu);
      g_assert_true (sv_cuda_connectivity_enforce (in, c->nz, c->ny, c->nx, min_size, max_size,
                                                   c->start_label, gpu, &n_gpu, &on_device,
                                                   &error));
      g_assert_no_error (error);
      g_test_message ("seed %u: %" G_GINT64_FORMAT " labels, %s", seed, n_cpu,
                      on_device ? "device" : "host fallback");
      if (c->expect_device)
        g_assert_true (on_device);
      for (gsize i = 0; i < n; i++)
        if (cpu[i] != gpu[i])
          g_error ("voxel %" G_GSIZE_FORMAT ": cpu %d, cuda %d", i, cpu[i], gpu[i]);
      g_assert_cmpint (n_cpu, ==, n_gpu);
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
  return g_test_run ();
}

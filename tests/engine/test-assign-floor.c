/* The exact rule's floor of an assignment (sv_slic_assign_floor) and the
 * CPU backend's per-iteration counts of it, which bench-cuda's compute
 * floor uses. */
#define G_LOG_DOMAIN "sv-test"

#include <glib.h>
#include <string.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-slic.h"
#include "slic-test-util.h"

#define NX 8

/* One row of 8 voxels, ratio 1, spatial weight 1, windows that hold every
 * voxel, three clusters: A (0) at x = 1 with colour 0, B (1) at x = 5 with
 * colour 2, C (2) at x = 7 with colour 2. Distance = (c − x)² + (v − col)².
 *
 *   x  v   A       B       C       winner  best  needed
 *   0  0   1       25+4    49+4    A       1     A                       1
 *   1  0   0       16+4    36+4    A       0     A                       1
 *   2  3   1+9     9+1     25+1    A (tie) 10    A, B (spatial 9 < 10)   2
 *   3  2   4+4     4+0     16+0    B       4     B, A (spatial 4 = 4,
 *                                                      lower index)     2
 *   4  2   9+4     1+0     9+0     B       1     B                       1
 *   5  2   16+4    0       4       B       0     B                       1
 *   6  2   25+4    1+0     1+0     B (tie) 1     B (C: spatial 1 = 1,
 *                                                   higher index)       1
 *   7  2   36+4    4       0       C       0     C                       1
 *
 * 10 in all: more than one per voxel (8), fewer than every window's
 * candidates (24). */
static const float row_values[NX] = { 0, 0, 3, 2, 2, 2, 2, 2 };
static const float row_centres[3 * 4] = {
  0, 0, 1, 0, /* A */
  0, 0, 5, 2, /* B */
  0, 0, 7, 2, /* C */
};

static void
row_setup (SvPrepared *image, SvSlicContext *ctx, SvClusters *cl, float *data, float *centres,
           guint8 *alive, float *max_dist)
{
  memcpy (data, row_values, sizeof row_values);
  memcpy (centres, row_centres, sizeof row_centres);
  *image = (SvPrepared){ .nz = 1, .ny = 1, .nx = NX, .nc = 1, .data = data, .max_abs = 3.0f };
  memset (ctx, 0, sizeof *ctx);
  ctx->image = image;
  ctx->ratio = 1.0f;
  ctx->spatial_weight = 1.0f;
  for (int a = 0; a < 3; a++)
    {
      ctx->spacing[a] = 1.0f;
      ctx->window_step[a] = 4;
    }
  ctx->n_threads = 2;
  ctx->z_begin = 0;
  ctx->z_end = 1;
  for (int k = 0; k < 3; k++)
    {
      alive[k] = 1;
      max_dist[k] = 1.0f;
    }
  *cl = (SvClusters){
    .k = 3, .nc = 1, .centres = centres, .alive = alive, .max_dist_colour = max_dist
  };
}

static void
test_hand_count (void)
{
  SvPrepared image;
  SvSlicContext ctx;
  SvClusters cl;
  float data[NX], centres[12], max_dist[3];
  guint8 alive[3];
  gint32 nearest[NX];
  const gint32 expected[NX] = { 0, 0, 0, 1, 1, 1, 1, 2 };

  row_setup (&image, &ctx, &cl, data, centres, alive, max_dist);
  sv_slic_assign (&ctx, &cl, nearest);
  g_assert_cmpmem (nearest, sizeof nearest, expected, sizeof expected);
  g_assert_cmpint (sv_slic_assign_floor (&ctx, &cl, nearest), ==, 10);

  /* Unassigned voxels need nothing: x = 2 (2) and x = 3 (2) out. */
  nearest[2] = nearest[3] = -1;
  g_assert_cmpint (sv_slic_assign_floor (&ctx, &cl, nearest), ==, 6);
}

static void
test_dead_cluster (void)
{
  SvPrepared image;
  SvSlicContext ctx;
  SvClusters cl;
  float data[NX], centres[12], max_dist[3];
  guint8 alive[3];
  gint32 nearest[NX];
  const gint32 expected[NX] = { 0, 0, 0, 1, 1, 1, 1, 1 };

  /* C dead: x = 7 goes to B (4, nothing else below it); every other voxel
   * needs what it needed, C never counted. */
  row_setup (&image, &ctx, &cl, data, centres, alive, max_dist);
  alive[2] = 0;
  sv_slic_assign (&ctx, &cl, nearest);
  g_assert_cmpmem (nearest, sizeof nearest, expected, sizeof expected);
  g_assert_cmpint (sv_slic_assign_floor (&ctx, &cl, nearest), ==, 10);

  /* A dead as well: B alone, one evaluation a voxel. */
  alive[0] = 0;
  sv_slic_assign (&ctx, &cl, nearest);
  g_assert_cmpint (sv_slic_assign_floor (&ctx, &cl, nearest), ==, NX);
}

static gint32 *
run_counting (float *data, guint n, int iterations, gboolean count, gint64 *counts, guint *n_counts)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", &error);
  SvVolume v = test_volume (data, n, n, n, 1);
  SvSlicParams p;
  SvRunControl control = { .n_threads = 2, .stop_after_iteration = -1 };
  SvRunStats stats;
  gint32 *labels = g_new (gint32, (gsize)n * n * n);

  g_assert_no_error (error);
  sv_slic_params_init_defaults (&p);
  p.n_segments = 27;
  p.compactness = 0.1;
  p.max_num_iter = iterations;
  p.enforce_connectivity = FALSE;
  g_assert_true (sv_backend_cpu_set_floor_counting (backend, count));
  g_assert_true (sv_backend_set_volume (backend, &v, NULL, &error));
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_no_error (error);
  g_assert_true (sv_backend_get_labels (backend, labels, &error));
  if (counts != NULL)
    {
      const gint64 *c = sv_backend_cpu_get_floor_counts (backend, n_counts);
      g_assert_cmpuint (*n_counts, <=, (guint)iterations);
      if (*n_counts > 0)
        memcpy (counts, c, *n_counts * sizeof *c);
    }
  return labels;
}

/* A volume of zeros: every colour term is 0, so each voxel needs its
 * winner alone (a nearer cluster would have won, an equal one with a
 * lower index too). The run settles after a few iterations and the
 * skipped ones repeat the count. */
static void
test_run_uniform (void)
{
  const guint n = 12;
  g_autofree float *data = g_new0 (float, n *n *n);
  gint64 counts[6];
  guint n_counts = 0;
  g_autofree gint32 *labels = run_counting (data, n, 6, TRUE, counts, &n_counts);

  g_assert_cmpuint (n_counts, ==, 6);
  for (guint i = 0; i < n_counts; i++)
    g_assert_cmpint (counts[i], ==, n * n * n);
}

/* Blocks of four intensities: some voxels need more than their winner; the
 * counts change while the centres move and the labels are those of a run
 * without counting. */
static void
test_run_blocks (void)
{
  const guint n = 16;
  g_autofree float *data = g_new (float, n *n *n);
  gint64 counts[8];
  guint n_counts = 0, n_none = 0;
  gboolean above = FALSE;
  g_autofree gint32 *plain = NULL, *counted = NULL;

  for (guint i = 0; i < n * n * n; i++)
    {
      guint z = i / (n * n), y = (i / n) % n, x = i % n;
      data[i] = (float)((z > 5) + 2 * (y > 9) + (x > 6)) / 4.0f;
    }
  plain = run_counting (data, n, 8, FALSE, counts, &n_none);
  g_assert_cmpuint (n_none, ==, 0);
  counted = run_counting (data, n, 8, TRUE, counts, &n_counts);
  g_assert_cmpmem (plain, n * n * n * sizeof (gint32), counted, n * n * n * sizeof (gint32));
  g_assert_cmpuint (n_counts, ==, 8);
  for (guint i = 0; i < n_counts; i++)
    {
      g_assert_cmpint (counts[i], >=, n * n * n);
      above |= counts[i] > (gint64)n * n * n;
    }
  g_assert_true (above);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/slic/assign-floor/hand-count", test_hand_count);
  g_test_add_func ("/engine/slic/assign-floor/dead-cluster", test_dead_cluster);
  g_test_add_func ("/engine/backend/cpu/floor-counts-uniform", test_run_uniform);
  g_test_add_func ("/engine/backend/cpu/floor-counts-blocks", test_run_blocks);
  return g_test_run ();
}

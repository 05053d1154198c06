/* Tests of the per-supervoxel statistics (label-stats.h), the intensity
 * histogram (histogram.h) and the convergence record (convergence.h). */
#include <math.h>
#include <string.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-convergence.h"
#include "supervox/sv-histogram.h"
#include "supervox/sv-label-stats.h"
#include "supervox/sv-seeds.h"
#include "supervox/sv-synth.h"

/* Labels 7 (x < 2) and 9 (x >= 2) on 2×3×4, intensity = x + 10 y + 100 z. */
static void
test_counts_box_centre_intensity (void)
{
  g_autoptr (SvLabels) labels = sv_labels_new (2, 3, 4, NULL);
  g_autoptr (SvVolume) image = sv_volume_new (2, 3, 4, 1, NULL);
  g_autoptr (SvLabelTable) table = NULL;
  g_autoptr (GError) error = NULL;
  const SvLabelStats *s;
  gsize i = 0;

  for (guint z = 0; z < 2; z++)
    for (guint y = 0; y < 3; y++)
      for (guint x = 0; x < 4; x++, i++)
        {
          labels->data[i] = x < 2 ? 7 : 9;
          image->data[i] = (float)(x + 10 * y + 100 * z);
        }
  table = sv_label_table_new (labels, image, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sv_label_table_get_n_labels (table), ==, 2);
  g_assert_cmpint (sv_label_table_get (table, 0)->label, ==, 7);
  g_assert_null (sv_label_table_lookup (table, 8));

  s = sv_label_table_lookup (table, 9);
  g_assert_nonnull (s);
  g_assert_cmpuint (s->n_voxels, ==, 12);
  g_assert_cmpuint (s->lo[0], ==, 0);
  g_assert_cmpuint (s->hi[0], ==, 1);
  g_assert_cmpuint (s->lo[1], ==, 0);
  g_assert_cmpuint (s->hi[1], ==, 2);
  g_assert_cmpuint (s->lo[2], ==, 2);
  g_assert_cmpuint (s->hi[2], ==, 3);
  g_assert_cmpfloat (s->centre[0], ==, 0.5);
  g_assert_cmpfloat (s->centre[1], ==, 1.0);
  g_assert_cmpfloat (s->centre[2], ==, 2.5);
  g_assert_cmpfloat (s->min[0], ==, 2.0);
  g_assert_cmpfloat (s->max[0], ==, 123.0);
  /* Mean x 2.5, y 1, z 0.5. */
  g_assert_cmpfloat (fabs (s->mean[0] - (2.5 + 10 + 50)), <, 1e-12);
  g_assert_true (isnan (s->mean[1]));
}

/* Labels far apart take the hash table; the answers are the same. */
static void
test_sparse_labels (void)
{
  g_autoptr (SvLabels) labels = sv_labels_new (1, 2, 3, NULL);
  g_autoptr (SvLabelTable) table = NULL;
  const gint32 values[6] = { -5, 2000000000, -5, 17, 17, 17 };

  for (guint i = 0; i < 6; i++)
    labels->data[i] = values[i];
  table = sv_label_table_new (labels, NULL, NULL);
  g_assert_cmpuint (sv_label_table_get_n_labels (table), ==, 3);
  g_assert_cmpuint (sv_label_table_lookup (table, -5)->n_voxels, ==, 2);
  g_assert_cmpuint (sv_label_table_lookup (table, 17)->n_voxels, ==, 3);
  g_assert_cmpuint (sv_label_table_lookup (table, 2000000000)->n_voxels, ==, 1);
  g_assert_true (isnan (sv_label_table_lookup (table, 17)->mean[0]));
}

/* Sizes 1, 2, 4, 8 and a background of 16 (left out) on log bins. */
static void
test_size_histogram (void)
{
  g_autoptr (SvLabels) labels = sv_labels_new (1, 1, 31, NULL);
  g_autoptr (SvLabelTable) table = NULL;
  double edges[4];
  guint64 counts[3], total = 0;
  guint x = 0;

  for (gint32 l = 1; l <= 4; l++)
    for (guint k = 0; k < (1u << (l - 1)); k++)
      labels->data[x++] = l;
  while (x < 31)
    labels->data[x++] = 0;
  table = sv_label_table_new (labels, NULL, NULL);
  sv_label_table_size_histogram (table, TRUE, 0, 3, edges, counts);
  g_assert_cmpfloat (edges[0], ==, 1.0);
  g_assert_cmpfloat (edges[3], ==, 8.0);
  for (guint b = 0; b < 3; b++)
    total += counts[b];
  g_assert_cmpuint (total, ==, 4);
  /* log2 sizes 0, 1, 2, 3 over three bins of one: 1 | 2 | 4, 8. */
  g_assert_cmpuint (counts[0], ==, 1);
  g_assert_cmpuint (counts[1], ==, 1);
  g_assert_cmpuint (counts[2], ==, 2);
  sv_label_table_size_histogram (table, FALSE, 0, 3, edges, counts);
  g_assert_cmpfloat (edges[3], ==, 16.0);
}

/* 10 000 values 0 … 9999: Auto leaves at most 0.175 % below and above. */
/* One channel's histogram, as the contrast panel shows each channel of a
 * composite: only its values, counted once each. */
static void
test_histogram_one_channel (void)
{
  g_autoptr (SvVolume) v = sv_volume_new (1, 10, 10, 2, NULL);
  g_autoptr (SvHistogram) first = NULL;
  g_autoptr (SvHistogram) second = NULL;
  g_autoptr (SvHistogram) both = NULL;
  guint64 total = 0;

  for (gsize i = 0; i < 100; i++)
    {
      v->data[i * 2] = (float)i;
      v->data[i * 2 + 1] = 1000.0f + (float)(i % 10);
    }
  first = sv_histogram_new_channel (v, 0, 100);
  second = sv_histogram_new_channel (v, 1, 10);
  both = sv_histogram_new (v, 100);
  g_assert_cmpfloat (first->min, ==, 0.0);
  g_assert_cmpfloat (first->max, ==, 99.0);
  g_assert_cmpuint (first->n_values, ==, 100);
  for (guint b = 0; b < 100; b++)
    g_assert_cmpuint (first->counts[b], ==, 1);
  g_assert_cmpfloat (second->min, ==, 1000.0);
  g_assert_cmpfloat (second->max, ==, 1009.0);
  for (guint b = 0; b < 10; b++)
    {
      g_assert_cmpuint (second->counts[b], ==, 10);
      total += second->counts[b];
    }
  g_assert_cmpuint (total, ==, 100);
  g_assert_cmpfloat (both->max, ==, 1009.0);
  g_assert_cmpuint (both->n_values, ==, 200);
}

static void
test_saturated_window (void)
{
  g_autoptr (SvVolume) v = sv_volume_new (1, 100, 100, 1, NULL);
  g_autoptr (SvHistogram) h = NULL;
  double low, high;
  gsize below = 0, above = 0;

  for (gsize i = 0; i < 10000; i++)
    v->data[i] = (float)i;
  v->data[5] = NAN;
  h = sv_histogram_new (v, 4096);
  g_assert_cmpfloat (h->min, ==, 0.0);
  g_assert_cmpfloat (h->max, ==, 9999.0);
  g_assert_cmpuint (h->n_values, ==, 10000);
  sv_histogram_saturated_window (h, 0.0035, &low, &high);
  for (gsize i = 0; i < 10000; i++)
    {
      below += v->data[i] < low;
      above += v->data[i] > high;
    }
  g_assert_cmpuint (below, <=, 18);
  g_assert_cmpuint (above, <=, 18);
  g_assert_cmpuint (below, >=, 10);
  g_assert_cmpuint (above, >=, 10);
}

/* Every voxel gets its first label in iteration 1; the record is the same
 * on a second computation. */
static void
test_convergence (void)
{
  SvSynthParams sp;
  SvSlicParams p;
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (SvConvergence) a = NULL, b = NULL;
  g_autoptr (GError) error = NULL;
  const guint shape[3] = { 8, 24, 24 };
  SvSeeds seeds = { 0 };

  sv_synth_params_init_defaults (&sp);
  sp.nz = 8;
  sp.ny = 24;
  sp.nx = 24;
  sp.n_cells = 4;
  sp.nucleus_radius = 2.0;
  v = sv_synth_cells (&sp, NULL, &error);
  g_assert_no_error (error);
  sv_slic_params_init_defaults (&p);
  p.n_segments = 20;
  p.max_num_iter = 5;
  a = sv_convergence_compute (v, NULL, &p, NULL, &error);
  g_assert_no_error (error);
  b = sv_convergence_compute (v, NULL, &p, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (a->n_iterations, ==, 5);
  g_assert_cmpuint (a->changed[0], ==, sv_volume_n_voxels (v));
  g_assert_true (sv_seeds_grid (shape, p.n_segments, &seeds, &error));
  for (guint i = 0; i < 5; i++)
    {
      g_assert_cmpuint (a->changed[i], ==, b->changed[i]);
      g_assert_cmpfloat (a->moved[i], ==, b->moved[i]);
      g_assert_cmpfloat (a->moved[i], >=, 0.0);
      /* No mask: every seed stays alive, so the mean is over all of them. */
      g_assert_cmpfloat_with_epsilon (a->mean_moved[i], a->moved[i] / (double)seeds.n, 1e-9);
    }
  g_assert_cmpfloat (a->mean_moved[0], >, 0.0);
  sv_seeds_clear (&seeds);
  g_assert_cmpuint (a->changed[4], <, a->changed[0]);
}

/* The record equals the one made from separate runs stopped after 0 … n
 * iterations, with and without a mask. */
static void
test_convergence_equals_stopped_runs (void)
{
  SvSynthParams sp;
  SvSlicParams p;
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree guint8 *mask = NULL;

  sv_synth_params_init_defaults (&sp);
  sp.nz = 6;
  sp.ny = 20;
  sp.nx = 22;
  sp.n_cells = 5;
  sp.nucleus_radius = 2.0;
  v = sv_synth_cells (&sp, NULL, &error);
  g_assert_no_error (error);
  sv_slic_params_init_defaults (&p);
  p.n_segments = 18;
  p.compactness = 0.3;
  p.max_num_iter = 4;
  p.slic_zero = TRUE;
  mask = g_new (guint8, sv_volume_n_voxels (v));
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    mask[i] = (i % 22) < 17;

  for (int with_mask = 0; with_mask < 2; with_mask++)
    {
      const guint8 *m = with_mask ? mask : NULL;
      const gsize n = sv_volume_n_voxels (v);
      g_autoptr (SvConvergence) c = sv_convergence_compute (v, m, &p, NULL, &error);
      g_autoptr (SvBackend) backend = sv_backend_new ("cpu", &error);
      g_autofree gint32 *before = g_new (gint32, n), *after = g_new (gint32, n);
      g_autofree float *cb = NULL, *ca = NULL;
      gsize kb = 0, ka = 0;

      g_assert_no_error (error);
      g_assert_true (sv_backend_set_volume (backend, v, m, &error));
      for (int i = 0; i <= p.max_num_iter; i++)
        {
          SvRunControl control = { .stop_after_iteration = i };
          guint64 changed = 0;
          double moved = 0.0;

          g_assert_true (sv_backend_run (backend, &p, &control, NULL, &error));
          g_assert_true (sv_backend_get_labels (backend, after, &error));
          g_assert_true (sv_backend_get_centres (backend, NULL, &ka, &error));
          ca = g_renew (float, ca, ka * 3);
          g_assert_true (sv_backend_get_centres (backend, ca, &ka, &error));
          if (i > 0)
            {
              for (gsize x = 0; x < n; x++)
                changed += after[x] != before[x];
              for (gsize j = 0; j < MIN (ka, kb); j++)
                if (!isnan (cb[3 * j]) && !isnan (ca[3 * j]))
                  moved += sqrt ((double)(cb[3 * j] - ca[3 * j]) * (cb[3 * j] - ca[3 * j])
                                 + (double)(cb[3 * j + 1] - ca[3 * j + 1])
                                       * (cb[3 * j + 1] - ca[3 * j + 1])
                                 + (double)(cb[3 * j + 2] - ca[3 * j + 2])
                                       * (cb[3 * j + 2] - ca[3 * j + 2]));
              g_assert_cmpuint (c->changed[i - 1], ==, changed);
              g_assert_cmpfloat (c->moved[i - 1], ==, moved);
            }
          memcpy (before, after, n * sizeof (gint32));
          cb = g_renew (float, cb, ka * 3);
          memcpy (cb, ca, ka * 3 * sizeof (float));
          kb = ka;
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/label-stats/counts-box-centre-intensity",
                   test_counts_box_centre_intensity);
  g_test_add_func ("/engine/label-stats/sparse-labels", test_sparse_labels);
  g_test_add_func ("/engine/label-stats/size-histogram", test_size_histogram);
  g_test_add_func ("/engine/histogram/saturated-window", test_saturated_window);
  g_test_add_func ("/engine/histogram/one-channel", test_histogram_one_channel);
  g_test_add_func ("/engine/convergence/first-iteration-labels-every-voxel", test_convergence);
  g_test_add_func ("/engine/convergence/equals-stopped-runs",
                   test_convergence_equals_stopped_runs);
  return g_test_run ();
}

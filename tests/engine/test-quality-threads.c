/* Tests of sv_quality_compute_threads: every number the same for 1, 2
 * and several threads, with each label's runs along x or without, and
 * equal to the same quantities recomputed here one voxel at a time; the
 * same numbers whether the labels are numbered without gaps (their own
 * dense index) or not. */
#include <math.h>
#include <string.h>

#include "label-runs.h"
#include "supervox/sv-quality.h"
#include "supervox/sv-synth.h"

/* 393 216 voxels: six blocks of work, so up to six threads take part. */
#define QZ 48
#define QY 64
#define QX 128

/* Irregular supervoxels: boxes cut by a wave, a masked-out corner (0,
 * below start label 1) and one label in two places. */
static SvJobResult *
make_result (guint shift, guint64 generation)
{
  SvLabels *labels = sv_labels_new (QZ, QY, QX, NULL);
  gsize i = 0;

  for (guint z = 0; z < QZ; z++)
    for (guint y = 0; y < QY; y++)
      for (guint x = 0; x < QX; x++, i++)
        {
          guint xs = x + shift + (guint)(3.0 + 3.0 * sin (0.3 * y + 0.2 * z));
          gint32 l = 1 + (gint32)(((z / 7) * 20 + (y + shift) / 9) * 40 + xs / 11);
          if (z < 10 && y < 12 && x < 20)
            l = 0;
          else if (z > 40 && y > 50)
            l = 5;
          labels->data[i] = l;
        }
  return sv_job_result_new_for_labels (labels, generation, "test", 0.0);
}

static gint
cmp_gint32 (gconstpointer a, gconstpointer b)
{
  const gint32 x = *(const gint32 *)a, y = *(const gint32 *)b;
  return (x > y) - (x < y);
}

static void
assert_same_quality (const SvQuality *a, const SvQuality *b)
{
  g_assert_cmpmem (&a->metrics, sizeof a->metrics, &b->metrics, sizeof b->metrics);
  g_assert_cmpuint (sv_label_table_get_n_labels (a->table), ==,
                    sv_label_table_get_n_labels (b->table));
  for (gsize k = 0; k < sv_label_table_get_n_labels (a->table); k++)
    g_assert_cmpmem (sv_label_table_get (a->table, k), sizeof (SvLabelStats),
                     sv_label_table_get (b->table, k), sizeof (SvLabelStats));
  g_assert_cmpmem (a->size_edges, sizeof a->size_edges, b->size_edges, sizeof b->size_edges);
  g_assert_cmpmem (a->size_counts, sizeof a->size_counts, b->size_counts, sizeof b->size_counts);
  g_assert_cmpmem (&a->target_size, sizeof (double), &b->target_size, sizeof (double));
  g_assert_cmpmem (&a->reference_ari, sizeof (double), &b->reference_ari, sizeof (double));
  g_assert_cmpuint (a->reference_differing, ==, b->reference_differing);
  g_assert_true (g_bytes_equal (a->reference_difference, b->reference_difference));
}

/* Each label's voxel count, mean intensity (summed in voxel order, as one
 * thread does), centre and faces, one voxel at a time. */
static void
assert_matches_recount (const SvQuality *q, const SvVolume *v, const SvLabels *l)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  const gsize n = sv_labels_n_voxels (l);
  gsize n_labels = sv_label_table_get_n_labels (q->table);
  g_autofree double *sum = g_new0 (double, n_labels);
  g_autofree double *zsum = g_new0 (double, n_labels);
  g_autofree double *ysum = g_new0 (double, n_labels);
  g_autofree double *xsum = g_new0 (double, n_labels);
  g_autofree guint64 *count = g_new0 (guint64, n_labels);
  g_autofree guint64 *faces = g_new0 (guint64, n_labels);
  double weighted = 0.0, inside = 0.0;
  gsize i = 0;

  for (gsize k = 0; k < n_labels; k++)
    g_hash_table_insert (seen, GINT_TO_POINTER (sv_label_table_get (q->table, k)->label),
                         GSIZE_TO_POINTER (k + 1));
  for (guint z = 0; z < QZ; z++)
    for (guint y = 0; y < QY; y++)
      for (guint x = 0; x < QX; x++, i++)
        {
          gint32 label = l->data[i];
          gsize k = GPOINTER_TO_SIZE (g_hash_table_lookup (seen, GINT_TO_POINTER (label)));
          g_assert_cmpuint (k, >, 0);
          k--;
          count[k]++;
          sum[k] += v->data[i];
          zsum[k] += z;
          ysum[k] += y;
          xsum[k] += x;
          faces[k] += (x == 0 || l->data[i - 1] != label) + (x + 1 == QX || l->data[i + 1] != label)
                      + (y == 0 || l->data[i - QX] != label)
                      + (y + 1 == QY || l->data[i + QX] != label)
                      + (z == 0 || l->data[i - QX * QY] != label)
                      + (z + 1 == QZ || l->data[i + QX * QY] != label);
        }
  g_assert_cmpuint (i, ==, n);
  for (gsize k = 0; k < n_labels; k++)
    {
      const SvLabelStats *s = sv_label_table_get (q->table, k);
      g_assert_cmpuint (s->n_voxels, ==, count[k]);
      g_assert_cmpfloat (s->mean[0], ==, sum[k] / (double)count[k]);
      g_assert_cmpfloat (s->centre[0], ==, zsum[k] / (double)count[k]);
      g_assert_cmpfloat (s->centre[1], ==, ysum[k] / (double)count[k]);
      g_assert_cmpfloat (s->centre[2], ==, xsum[k] / (double)count[k]);
      if (s->label == 0)
        continue;
      double a = (double)faces[k], vol = (double)count[k];
      weighted += vol * 36.0 * G_PI * vol * vol / (a * a * a);
      inside += vol;
    }
  /* Label 0 is the masked-out background: no supervoxel. */
  g_assert_cmpuint (q->metrics.n_labels, ==, n_labels - 1);
  g_assert_cmpfloat_with_epsilon (q->metrics.compactness, weighted / inside, 1e-12);
}

/* The phantom the results are measured on, and its truth. */
static SvVolume *
make_volume (SvLabels **truth)
{
  SvSynthParams sp;
  g_autoptr (GError) error = NULL;
  SvVolume *volume;

  sv_synth_params_init_defaults (&sp);
  sp.nz = QZ;
  sp.ny = QY;
  sp.nx = QX;
  sp.n_cells = 30;
  volume = sv_synth_cells (&sp, truth, &error);
  g_assert_no_error (error);
  return volume;
}

static void
test_same_for_any_thread_count (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvJobResult) result = make_result (0, 1);
  g_autoptr (SvJobResult) reference = make_result (4, 2);
  g_autoptr (SvLabels) truth = NULL;
  const int threads[] = { 1, 2, 3, 6, 0 };
  SvQuality *q[G_N_ELEMENTS (threads)];

  g_autoptr (SvVolume) volume = make_volume (&truth);

  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    {
      q[t] = sv_quality_compute_threads (volume, result, truth, reference, threads[t], &error);
      g_assert_no_error (error);
      g_test_message ("%d threads: EV %.17g, compactness %.17g, ARI %.17g, ASA %.17g",
                      threads[t], q[t]->metrics.explained_variation, q[t]->metrics.compactness,
                      q[t]->reference_ari, q[t]->metrics.asa);
      if (t > 0)
        assert_same_quality (q[0], q[t]);
    }
  g_assert_true (isfinite (q[0]->metrics.explained_variation));
  g_assert_true (isfinite (q[0]->reference_ari) && q[0]->reference_ari < 1.0);
  g_assert_cmpfloat_with_epsilon (
      q[0]->reference_ari,
      sv_adjusted_rand_index (sv_job_result_get_labels (reference, NULL)->data,
                              sv_job_result_get_labels (result, NULL)->data,
                              sv_labels_n_voxels (truth)),
      1e-15);
  assert_matches_recount (q[0], volume, sv_job_result_get_labels (result, NULL));
  /* Each label's sums over its runs along x (the default), or found by
   * every thread reading every voxel: the same bytes. */
  g_setenv ("SV_METRICS_RUNS", "off", TRUE);
  for (guint t = 0; t < 2; t++)
    {
      SvQuality *off = sv_quality_compute_threads (volume, result, truth, reference,
                                                   t == 0 ? 1 : 3, &error);

      g_assert_no_error (error);
      assert_same_quality (q[0], off);
      sv_quality_unref (off);
    }
  g_unsetenv ("SV_METRICS_RUNS");
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    sv_quality_unref (q[t]);
}

/* `from` with its labels renumbered in their order: the background 0
 * stays (when keep_zero) and the others take first, first + 1, … with one
 * value skipped after the middle label when gap. */
static SvJobResult *
renumbered (SvJobResult *from, gboolean keep_zero, gint32 first, gboolean gap)
{
  const SvLabels *l = sv_job_result_get_labels (from, NULL);
  const gsize n = sv_labels_n_voxels (l);
  g_autoptr (GArray) values = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr (GHashTable) rank = g_hash_table_new (g_direct_hash, g_direct_equal);
  SvLabels *out = sv_labels_new (l->nz, l->ny, l->nx, NULL);
  gint32 next = first;

  for (gsize i = 0; i < n; i++)
    if (!g_hash_table_contains (rank, GINT_TO_POINTER (l->data[i])))
      {
        g_hash_table_add (rank, GINT_TO_POINTER (l->data[i]));
        g_array_append_val (values, l->data[i]);
      }
  g_array_sort (values, (GCompareFunc)cmp_gint32);
  g_hash_table_remove_all (rank);
  for (guint k = 0; k < values->len; k++)
    {
      const gint32 v = g_array_index (values, gint32, k);
      gint32 to = keep_zero && v == 0 ? 0 : next++;

      if (gap && k == values->len / 2)
        to = ++next - 1;
      g_hash_table_insert (rank, GINT_TO_POINTER (v), GINT_TO_POINTER (to));
    }
  for (gsize i = 0; i < n; i++)
    out->data[i] = GPOINTER_TO_INT (g_hash_table_lookup (rank, GINT_TO_POINTER (l->data[i])));
  return sv_job_result_new_for_labels (out, 2, "test", 0.0);
}

/* Every number of a and b but the labels' values in the table. */
static void
assert_same_numbers (const SvQuality *a, const SvQuality *b)
{
  g_assert_cmpmem (&a->metrics, sizeof a->metrics, &b->metrics, sizeof b->metrics);
  g_assert_cmpuint (sv_label_table_get_n_labels (a->table), ==,
                    sv_label_table_get_n_labels (b->table));
  for (gsize k = 0; k < sv_label_table_get_n_labels (a->table); k++)
    {
      SvLabelStats sa = *sv_label_table_get (a->table, k), sb = *sv_label_table_get (b->table, k);

      sa.label = sb.label = 0;
      g_assert_cmpmem (&sa, sizeof sa, &sb, sizeof sb);
    }
  g_assert_cmpmem (a->size_counts, sizeof a->size_counts, b->size_counts, sizeof b->size_counts);
  g_assert_cmpmem (&a->reference_ari, sizeof (double), &b->reference_ari, sizeof (double));
  g_assert_true (g_bytes_equal (a->reference_difference, b->reference_difference));
}

static void
test_numbered_labels (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvJobResult) result = make_result (0, 1);
  g_autoptr (SvJobResult) reference = make_result (4, 3);
  g_autoptr (SvLabels) truth = NULL;
  g_autoptr (SvVolume) volume = NULL;
  /* Labels 0, 1, 2, … (a masked segmentation's), from −50 and from 1000,
   * each against the same numbers with one gap (the index then made). */
  const struct
  {
    gboolean keep_zero;
    gint32 first;
  } cases[] = { { TRUE, 1 }, { FALSE, -50 }, { FALSE, 1000 } };

  volume = make_volume (&truth);
  /* With each label's runs along x, and with every voxel read. */
  for (guint c = 0; c < 2 * G_N_ELEMENTS (cases); c++)
    {
      const guint k = c % G_N_ELEMENTS (cases);
      const gboolean zero = cases[k].keep_zero;
      const gint32 first = cases[k].first;

      if (c == G_N_ELEMENTS (cases))
        g_setenv ("SV_METRICS_RUNS", "off", TRUE);
      g_autoptr (SvJobResult) plain = renumbered (result, zero, first, FALSE);
      g_autoptr (SvJobResult) gapped = renumbered (result, zero, first, TRUE);
      g_autoptr (SvJobResult) ref = renumbered (reference, FALSE, first, FALSE);
      SvQuality *a = sv_quality_compute_threads (volume, plain, truth, ref, 3, &error);
      SvQuality *b = sv_quality_compute_threads (volume, gapped, truth, reference, 1, &error);

      g_assert_no_error (error);
      g_test_message ("labels from %d: EV %.17g, compactness %.17g, ARI %.17g", first,
                      a->metrics.explained_variation, a->metrics.compactness, a->reference_ari);
      assert_same_numbers (a, b);
      if (zero)
        {
          /* The same partition as the gappy original, background and all. */
          SvQuality *q = sv_quality_compute_threads (volume, result, truth, reference, 2, &error);

          g_assert_no_error (error);
          assert_same_numbers (a, q);
          sv_quality_unref (q);
        }
      sv_quality_unref (a);
      sv_quality_unref (b);
    }
  g_unsetenv ("SV_METRICS_RUNS");
}

/* Each label's runs along x, found on 1 and on 3 threads (shares of rows
 * that cut a label's runs between threads): the runs a naive scan finds,
 * label after label in voxel order, each label's its voxels once; and none
 * for labels that change along most rows. */
static void
test_label_runs (void)
{
  enum { NZ = 3, NY = 5, NX = 24, N_LABELS = 4 };
  g_autofree guint32 *index = g_new (guint32, NZ * NY * NX);
  g_autofree guint32 *noise = g_new (guint32, NZ * NY * NX);
  g_autoptr (GArray) expected = g_array_new (FALSE, FALSE, sizeof (SvLabelRun));
  gsize start[N_LABELS + 1];

  /* Stretches of 6 voxels: label (x / 6 + row) % 3, label 3 in one row;
   * a label comes back along a row. */
  for (guint row = 0; row < NZ * NY; row++)
    for (guint x = 0; x < NX; x++)
      {
        index[row * NX + x] = row == 7 ? 3 : (x / 6 + row) % 3;
        noise[row * NX + x] = x % N_LABELS;
      }
  for (guint32 k = 0; k < N_LABELS; k++)
    {
      start[k] = expected->len;
      for (guint row = 0; row < NZ * NY; row++)
        for (guint x0 = 0, x1; x0 < NX; x0 = x1)
          {
            for (x1 = x0 + 1; x1 < NX && index[row * NX + x1] == index[row * NX + x0]; x1++)
              ;
            if (index[row * NX + x0] == k)
              g_array_append_val (expected, ((SvLabelRun){ row, x0, x1 }));
          }
    }
  start[N_LABELS] = expected->len;
  for (int threads = 1; threads <= 3; threads += 2)
    {
      SvLabelRuns *runs = sv__label_runs_new (index, 0, N_LABELS, NZ, NY, NX, threads);

      g_assert_nonnull (runs);
      g_assert_cmpmem (runs->start, sizeof start, start, sizeof start);
      g_assert_cmpmem (runs->runs, expected->len * sizeof (SvLabelRun), expected->data,
                       expected->len * sizeof (SvLabelRun));
      sv__label_runs_free (runs);
    }
  g_assert_null (sv__label_runs_new (noise, 0, N_LABELS, NZ, NY, NX, 1));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/quality/same-for-any-thread-count", test_same_for_any_thread_count);
  g_test_add_func ("/engine/quality/label-runs", test_label_runs);
  g_test_add_func ("/engine/quality/numbered-labels", test_numbered_labels);
  return g_test_run ();
}

/* Supervox engine: how two label maps of the same voxels differ
 * (sv-partition-compare.h), from their contingency table. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-partition-compare.h"

#include "contingency.h"
#include "metrics-threads.h"

/* What the threads that mark the differing voxels share. */
typedef struct
{
  const SvDenseLabels *da, *db;
  const guint32 *best_a, *best_b;
  gsize n;
  int n_threads;
  guint64 *n_differing; /* per thread */
  guint8 *differing;
} MarkWork;

static void
mark_cb (gpointer p, int t)
{
  MarkWork *w = p;
  guint64 count = 0;
  gsize lo, hi;

  sv__metrics_share (w->n, t, w->n_threads, &lo, &hi);
  for (gsize i = lo; i < hi; i++)
    {
      guint32 s = sv__dense_at (w->da, i), g = sv__dense_at (w->db, i);
      gboolean differs = w->best_b[s] != g || w->best_a[g] != s;
      count += differs;
      if (w->differing)
        w->differing[i] = differs;
    }
  w->n_differing[t] = count;
}

void
sv_partition_compare (const gint32 *a, const gint32 *b, gsize n, SvPartitionDifference *difference,
                      guint8 *differing)
{
  sv__partition_compare_threads (a, b, NULL, n, 0, difference, differing);
}

void
sv__partition_compare_threads (const gint32 *a, const gint32 *b, const SvDenseLabels *dense_b,
                               gsize n, int n_threads, SvPartitionDifference *difference,
                               guint8 *differing)
{
  SvDenseLabels da = { 0 }, db = { 0 };
  SvContingency t = { 0 };
  g_autofree guint32 *best_b = NULL, *best_a = NULL;
  g_autofree guint64 *most_a = NULL;
  guint64 n_differing = 0;

  g_return_if_fail (n == 0 || (a != NULL && b != NULL));
  g_return_if_fail (difference != NULL);

  sv__dense_labels_init_threads (&da, a, n, n_threads);
  if (!dense_b)
    sv__dense_labels_init_threads (&db, b, n, n_threads);
  const SvDenseLabels *bb = dense_b ? dense_b : &db;
  sv__contingency_init_threads (&t, &da, bb, n, n_threads);

  /* Each label of a: the b label it overlaps most; each label of b: the a
   * label it overlaps most. Dense indices follow the label values, so the
   * lowest index wins a tie. */
  best_b = g_new0 (guint32, MAX (t.n_a, 1));
  best_a = g_new0 (guint32, MAX (t.n_b, 1));
  most_a = g_new0 (guint64, MAX (t.n_b, 1));
  for (gsize s = 0; s < t.n_a; s++)
    {
      guint64 most = 0;
      for (gsize k = t.row_start[s]; k < t.row_start[s + 1]; k++)
        {
          guint32 g = t.pair_b[k];
          guint64 count = t.pair_n[k];
          if (count > most || (count == most && g < best_b[s]))
            {
              most = count;
              best_b[s] = g;
            }
          /* Rows come in increasing s: a strict > keeps the lowest. */
          if (count > most_a[g])
            {
              most_a[g] = count;
              best_a[g] = (guint32)s;
            }
        }
    }
  {
    MarkWork w = { &da, bb, best_a, best_b, n, sv__metrics_threads (n_threads, n) };
    g_autofree guint64 *counts = g_new0 (guint64, w.n_threads);
    w.n_differing = counts;
    w.differing = differing;
    sv__run_parallel (w.n_threads, mark_cb, &w);
    for (int th = 0; th < w.n_threads; th++)
      n_differing += counts[th];
  }

  difference->adjusted_rand = sv__contingency_ari (&t);
  difference->n_differing = n_differing;
  difference->n_labels_a = t.n_a;
  difference->n_labels_b = t.n_b;
  sv__contingency_clear (&t);
  sv__dense_labels_clear (&da);
  sv__dense_labels_clear (&db);
}

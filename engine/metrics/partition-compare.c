/* Supervox engine: how two label maps of the same voxels differ
 * (sv-partition-compare.h), from their contingency table. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-partition-compare.h"

#include "contingency.h"

void
sv_partition_compare (const gint32 *a, const gint32 *b, gsize n, SvPartitionDifference *difference,
                      guint8 *differing)
{
  SvDenseLabels da = { 0 }, db = { 0 };
  SvContingency t = { 0 };
  g_autofree guint32 *best_b = NULL, *best_a = NULL;
  g_autofree guint64 *most_a = NULL;
  guint64 n_differing = 0;

  g_return_if_fail (n == 0 || (a != NULL && b != NULL));
  g_return_if_fail (difference != NULL);

  sv__dense_labels_init (&da, a, n);
  sv__dense_labels_init (&db, b, n);
  sv__contingency_init (&t, &da, &db, n);

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
  for (gsize i = 0; i < n; i++)
    {
      guint32 s = da.index[i], g = db.index[i];
      gboolean differs = best_b[s] != g || best_a[g] != s;
      n_differing += differs;
      if (differing)
        differing[i] = differs;
    }

  difference->adjusted_rand = sv__contingency_ari (&t);
  difference->n_differing = n_differing;
  difference->n_labels_a = t.n_a;
  difference->n_labels_b = t.n_b;
  sv__contingency_clear (&t);
  sv__dense_labels_clear (&da);
  sv__dense_labels_clear (&db);
}

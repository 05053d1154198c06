/* Supervox engine: dense labels and the contingency table of two label
 * maps (contingency.h). */
#define G_LOG_DOMAIN "sv-engine"

#include "contingency.h"

#include <stdlib.h>
#include <string.h>

void
sv__dense_labels_clear (SvDenseLabels *d)
{
  g_clear_pointer (&d->index, g_free);
  d->n_distinct = 0;
}

static int
compare_gint32 (const void *a, const void *b)
{
  gint32 x = *(const gint32 *)a, y = *(const gint32 *)b;
  return (x > y) - (x < y);
}

void
sv__dense_labels_init (SvDenseLabels *d, const gint32 *data, gsize n)
{
  d->index = g_new (guint32, MAX (n, 1));
  d->n_distinct = 0;
  if (n == 0)
    return;

  gint32 lo = data[0], hi = data[0];
  for (gsize i = 1; i < n; i++)
    {
      lo = MIN (lo, data[i]);
      hi = MAX (hi, data[i]);
    }
  guint64 range = (guint64)((gint64)hi - (gint64)lo) + 1;

  /* Label values are usually a compact range: a lookup table is then
   * cheapest. Scattered values fall back to sort + binary search. */
  if (range <= MAX ((guint64)n * 4, (guint64)1 << 16))
    {
      g_autofree guint32 *table = g_new0 (guint32, range);
      for (gsize i = 0; i < n; i++)
        table[(gint64)data[i] - lo] = 1;
      guint32 next = 0;
      for (guint64 v = 0; v < range; v++)
        table[v] = table[v] ? next++ : G_MAXUINT32;
      for (gsize i = 0; i < n; i++)
        d->index[i] = table[(gint64)data[i] - lo];
      d->n_distinct = next;
      return;
    }

  g_autofree gint32 *values = g_memdup2 (data, n * sizeof (gint32));
  qsort (values, n, sizeof (gint32), compare_gint32);
  gsize m = 0;
  for (gsize i = 0; i < n; i++)
    if (m == 0 || values[m - 1] != values[i])
      values[m++] = values[i];
  for (gsize i = 0; i < n; i++)
    {
      gint32 *hit = bsearch (&data[i], values, m, sizeof (gint32), compare_gint32);
      d->index[i] = (guint32)(hit - values);
    }
  d->n_distinct = m;
}

void
sv__contingency_clear (SvContingency *t)
{
  g_clear_pointer (&t->size_a, g_free);
  g_clear_pointer (&t->size_b, g_free);
  g_clear_pointer (&t->row_start, g_free);
  g_clear_pointer (&t->pair_b, g_free);
  g_clear_pointer (&t->pair_n, g_free);
}

void
sv__contingency_init (SvContingency *t, const SvDenseLabels *a, const SvDenseLabels *b, gsize n)
{
  t->n = n;
  t->n_a = a->n_distinct;
  t->n_b = b->n_distinct;
  t->size_a = g_new0 (guint64, MAX (t->n_a, 1));
  t->size_b = g_new0 (guint64, MAX (t->n_b, 1));
  for (gsize i = 0; i < n; i++)
    {
      t->size_a[a->index[i]]++;
      t->size_b[b->index[i]]++;
    }

  /* Counting sort of the b-labels by their a-label. */
  g_autofree gsize *offset = g_new (gsize, t->n_a + 1);
  offset[0] = 0;
  for (gsize s = 0; s < t->n_a; s++)
    offset[s + 1] = offset[s] + t->size_a[s];
  g_autofree guint32 *grouped = g_new (guint32, MAX (n, 1));
  {
    g_autofree gsize *fill = g_memdup2 (offset, (t->n_a + 1) * sizeof (gsize));
    for (gsize i = 0; i < n; i++)
      grouped[fill[a->index[i]]++] = b->index[i];
  }

  /* One row at a time: count into a scratch array, remember which columns
   * were touched, emit them in order of first appearance, reset. */
  g_autofree guint64 *scratch = g_new0 (guint64, MAX (t->n_b, 1));
  g_autofree guint32 *touched = g_new (guint32, MAX (t->n_b, 1));
  GArray *pb = g_array_new (FALSE, FALSE, sizeof (guint32));
  GArray *pn = g_array_new (FALSE, FALSE, sizeof (guint64));
  t->row_start = g_new (gsize, t->n_a + 1);
  for (gsize s = 0; s < t->n_a; s++)
    {
      t->row_start[s] = pb->len;
      gsize n_touched = 0;
      for (gsize k = offset[s]; k < offset[s + 1]; k++)
        {
          guint32 g = grouped[k];
          if (scratch[g]++ == 0)
            touched[n_touched++] = g;
        }
      for (gsize k = 0; k < n_touched; k++)
        {
          guint32 g = touched[k];
          g_array_append_val (pb, g);
          g_array_append_val (pn, scratch[g]);
          scratch[g] = 0;
        }
    }
  t->row_start[t->n_a] = pb->len;
  t->pair_b = (guint32 *)g_array_free (pb, FALSE);
  t->pair_n = (guint64 *)g_array_free (pn, FALSE);
}

static inline guint64
pairs_of (guint64 k)
{
  /* k (k - 1) / 2, halving the even factor first so nothing overflows
   * while the result fits in 64 bits. */
  return (k & 1) ? k * ((k - 1) / 2) : (k / 2) * (k - 1);
}

/* Hubert & Arabie (1985):
 *   ARI = (Σ_ij C(n_ij,2) − E) / (½(Σ_i C(a_i,2) + Σ_j C(b_j,2)) − E),
 *   E   = Σ_i C(a_i,2) · Σ_j C(b_j,2) / C(n,2).
 * The pair sums are exact in 64 bits up to ~6·10⁹ voxels; the last few
 * operations run in long double. When the denominator vanishes both maps are
 * the same trivial partition (all one label, or all distinct) and the index
 * is 1, as scikit-learn returns. */
double
sv__contingency_ari (const SvContingency *t)
{
  if (t->n < 2)
    return 1.0;

  guint64 sum_ij = 0, sum_a = 0, sum_b = 0;
  for (gsize k = 0; k < t->row_start[t->n_a]; k++)
    sum_ij += pairs_of (t->pair_n[k]);
  for (gsize s = 0; s < t->n_a; s++)
    sum_a += pairs_of (t->size_a[s]);
  for (gsize g = 0; g < t->n_b; g++)
    sum_b += pairs_of (t->size_b[g]);

  long double total = (long double)pairs_of (t->n);
  long double expected = (long double)sum_a * (long double)sum_b / total;
  long double max_index = 0.5L * ((long double)sum_a + (long double)sum_b);
  long double denom = max_index - expected;
  if (denom == 0.0L)
    return 1.0;
  return (double)(((long double)sum_ij - expected) / denom);
}

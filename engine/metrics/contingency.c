/* Supervox engine: dense labels and the contingency table of two label
 * maps (contingency.h). */
#define G_LOG_DOMAIN "sv-engine"

#include "contingency.h"
#include "label-runs.h"
#include "metrics-threads.h"

#include <stdlib.h>
#include <string.h>

void
sv__dense_labels_clear (SvDenseLabels *d)
{
  g_clear_pointer (&d->owned, g_free);
  d->index = NULL;
  d->shift = 0;
  g_clear_pointer (&d->runs, sv__label_runs_free);
  d->n_distinct = 0;
}

void
sv__dense_labels_make_runs (SvDenseLabels *d, guint nz, guint ny, guint nx, int n_threads)
{
  if (d->runs == NULL && g_strcmp0 (g_getenv ("SV_METRICS_RUNS"), "off") != 0)
    d->runs = sv__label_runs_new (d->index, d->shift, d->n_distinct, nz, ny, nx, n_threads);
}

static int
compare_gint32 (const void *a, const void *b)
{
  gint32 x = *(const gint32 *)a, y = *(const gint32 *)b;
  return (x > y) - (x < y);
}

/* What the threads of sv__dense_labels_init_threads share. */
typedef struct
{
  const gint32 *data;
  gsize n;
  int n_threads;
  gint32 *lo, *hi; /* per thread */
  gint32 min;
  guint32 *table;
  guint32 *index;
} DenseWork;

static void
dense_range_cb (gpointer p, int t)
{
  DenseWork *w = p;
  gsize a, b;

  sv__metrics_share (w->n, t, w->n_threads, &a, &b);
  gint32 lo = G_MAXINT32, hi = G_MININT32;
  gsize i = a;
  /* Blocks of a fixed count, which -O2 vectorizes. */
  for (; i + 64 <= b; i += 64)
    for (int j = 0; j < 64; j++)
      {
        lo = MIN (lo, w->data[i + j]);
        hi = MAX (hi, w->data[i + j]);
      }
  for (; i < b; i++)
    {
      lo = MIN (lo, w->data[i]);
      hi = MAX (hi, w->data[i]);
    }
  w->lo[t] = lo;
  w->hi[t] = hi;
}

static void
dense_mark_cb (gpointer p, int t)
{
  DenseWork *w = p;
  gsize a, b;

  sv__metrics_share (w->n, t, w->n_threads, &a, &b);
  /* Every thread writes the same 1: relaxed stores, read first so that a
   * label's cache line is not bounced between cores. */
  for (gsize i = a; i < b; i++)
    {
      guint32 *slot = &w->table[(gint64)w->data[i] - w->min];
      if (!__atomic_load_n (slot, __ATOMIC_RELAXED))
        __atomic_store_n (slot, 1, __ATOMIC_RELAXED);
    }
}

static void
dense_map_cb (gpointer p, int t)
{
  DenseWork *w = p;
  gsize a, b;

  sv__metrics_share (w->n, t, w->n_threads, &a, &b);
  for (gsize i = a; i < b; i++)
    w->index[i] = w->table[(gint64)w->data[i] - w->min];
}

void
sv__dense_labels_init (SvDenseLabels *d, const gint32 *data, gsize n)
{
  sv__dense_labels_init_threads (d, data, n, 0);
}

void
sv__dense_labels_init_threads (SvDenseLabels *d, const gint32 *data, gsize n, int n_threads)
{
  d->index = d->owned = NULL;
  d->shift = 0;
  d->n_distinct = 0;
  if (n == 0)
    {
      d->index = d->owned = g_new (guint32, 1);
      return;
    }

  DenseWork w = { data, n, sv__metrics_threads (n_threads, n) };
  g_autofree gint32 *lo_hi = g_new (gint32, 2 * w.n_threads);
  w.lo = lo_hi;
  w.hi = lo_hi + w.n_threads;
  sv__run_parallel (w.n_threads, dense_range_cb, &w);
  gint32 lo = data[0], hi = data[0];
  for (int t = 0; t < w.n_threads; t++)
    {
      lo = MIN (lo, w.lo[t]);
      hi = MAX (hi, w.hi[t]);
    }
  guint64 range = (guint64)((gint64)hi - (gint64)lo) + 1;

  /* Label values are usually a compact range: a lookup table is then
   * cheapest. Scattered values fall back to sort + binary search. */
  if (range <= MAX ((guint64)n * 4, (guint64)1 << 16))
    {
      g_autofree guint32 *table = g_new0 (guint32, range);
      w.table = table;
      w.min = lo;
      sv__run_parallel (w.n_threads, dense_mark_cb, &w);
      guint32 next = 0;
      for (guint64 v = 0; v < range; v++)
        table[v] = table[v] ? next++ : G_MAXUINT32;
      d->n_distinct = next;
      d->min_label = lo;
      d->max_label = hi;
      /* Every value of the range is there: label − lo is the index. */
      if (next == range)
        {
          d->index = (const guint32 *)data;
          d->shift = (guint32)lo;
          return;
        }
      d->index = d->owned = w.index = g_new (guint32, n);
      sv__run_parallel (w.n_threads, dense_map_cb, &w);
      return;
    }
  d->index = d->owned = g_new (guint32, n);

  g_autofree gint32 *values = g_memdup2 (data, n * sizeof (gint32));
  qsort (values, n, sizeof (gint32), compare_gint32);
  gsize m = 0;
  for (gsize i = 0; i < n; i++)
    if (m == 0 || values[m - 1] != values[i])
      values[m++] = values[i];
  for (gsize i = 0; i < n; i++)
    {
      gint32 *hit = bsearch (&data[i], values, m, sizeof (gint32), compare_gint32);
      d->owned[i] = (guint32)(hit - values);
    }
  d->n_distinct = m;
  d->min_label = values[0];
  d->max_label = values[m - 1];
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

/* What the threads of sv__contingency_init_threads share. */
typedef struct
{
  const SvDenseLabels *a, *b;
  SvContingency *t;
  int n_threads;
  guint64 *count_a, *count_b; /* n_threads × n_a, n_threads × n_b */
  guint64 *fill; /* n_threads × n_a: where each thread's next voxel goes (count_a, reused) */
  const gsize *offset;        /* n_a + 1 */
  guint32 *grouped;
  gsize *row_bounds; /* n_threads + 1 */
  GArray **pb, **pn; /* per thread */
  gsize **row_start; /* per thread, relative to its own arrays */
  gsize *pair_at;    /* n_threads: where each thread's pairs go in the table */
} ContingencyWork;

static void
count_cb (gpointer p, int th)
{
  ContingencyWork *w = p;
  guint64 *ca = w->count_a + (gsize)th * w->t->n_a, *cb = w->count_b + (gsize)th * w->t->n_b;
  gsize lo, hi;

  sv__metrics_share (w->t->n, th, w->n_threads, &lo, &hi);
  for (gsize i = lo; i < hi; i++)
    {
      ca[sv__dense_at (w->a, i)]++;
      cb[sv__dense_at (w->b, i)]++;
    }
}

static void
group_cb (gpointer p, int th)
{
  ContingencyWork *w = p;
  guint64 *fill = w->fill + (gsize)th * w->t->n_a;
  gsize lo, hi;

  /* Each thread fills its own part of each row, after the earlier
   * threads' parts: the rows hold their voxels in increasing order. */
  sv__metrics_share (w->t->n, th, w->n_threads, &lo, &hi);
  for (gsize i = lo; i < hi; i++)
    w->grouped[fill[sv__dense_at (w->a, i)]++] = sv__dense_at (w->b, i);
}

static void
rows_cb (gpointer p, int th)
{
  ContingencyWork *w = p;
  gsize r0 = w->row_bounds[th], r1 = w->row_bounds[th + 1];
  g_autofree guint64 *scratch = g_new0 (guint64, MAX (w->t->n_b, 1));
  g_autofree guint32 *touched = g_new (guint32, MAX (w->t->n_b, 1));
  GArray *pb = g_array_new (FALSE, FALSE, sizeof (guint32));
  GArray *pn = g_array_new (FALSE, FALSE, sizeof (guint64));
  gsize *row_start = g_new (gsize, r1 - r0 + 1);

  /* One row at a time: count into a scratch array, remember which columns
   * were touched, emit them in order of first appearance, reset. */
  for (gsize s = r0; s < r1; s++)
    {
      row_start[s - r0] = pb->len;
      gsize n_touched = 0;
      for (gsize k = w->offset[s]; k < w->offset[s + 1]; k++)
        {
          guint32 g = w->grouped[k];
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
  row_start[r1 - r0] = pb->len;
  w->pb[th] = pb;
  w->pn[th] = pn;
  w->row_start[th] = row_start;
}

/* Thread th's pairs and row starts moved into the table, after those of
 * the threads before. */
static void
join_cb (gpointer p, int th)
{
  ContingencyWork *w = p;
  SvContingency *t = w->t;
  const gsize at = w->pair_at[th], r0 = w->row_bounds[th], r1 = w->row_bounds[th + 1];
  GArray *pb = w->pb[th], *pn = w->pn[th];

  for (gsize s = r0; s < r1; s++)
    t->row_start[s] = at + w->row_start[th][s - r0];
  if (pb->len)
    {
      memcpy (t->pair_b + at, pb->data, pb->len * sizeof (guint32));
      memcpy (t->pair_n + at, pn->data, pn->len * sizeof (guint64));
    }
  g_array_free (pb, TRUE);
  g_array_free (pn, TRUE);
  g_free (w->row_start[th]);
}

void
sv__contingency_init (SvContingency *t, const SvDenseLabels *a, const SvDenseLabels *b, gsize n)
{
  sv__contingency_init_threads (t, a, b, n, 0);
}

void
sv__contingency_init_threads (SvContingency *t, const SvDenseLabels *a, const SvDenseLabels *b,
                              gsize n, int n_threads)
{
  ContingencyWork w = { a, b, t, sv__metrics_threads (n_threads, n) };
  const int nt = w.n_threads;

  t->n = n;
  t->n_a = a->n_distinct;
  t->n_b = b->n_distinct;
  t->size_a = g_new (guint64, MAX (t->n_a, 1));
  t->size_b = g_new (guint64, MAX (t->n_b, 1));
  w.count_a = g_new0 (guint64, nt * MAX (t->n_a, 1));
  w.count_b = g_new0 (guint64, nt * MAX (t->n_b, 1));
  sv__run_parallel (nt, count_cb, &w);
  sv__metrics_sum_counts (w.count_a, t->n_a, nt, t->size_a, n_threads);
  sv__metrics_sum_counts (w.count_b, t->n_b, nt, t->size_b, n_threads);

  /* Counting sort of the b-labels by their a-label: each thread's voxels
   * of a row after the earlier threads'. */
  g_autofree gsize *offset = g_new (gsize, t->n_a + 1);
  sv__metrics_place_counts (w.count_a, t->n_a, nt, offset, n_threads);
  w.offset = offset;
  w.fill = w.count_a;
  w.grouped = g_new (guint32, MAX (n, 1));
  sv__run_parallel (nt, group_cb, &w);

  /* Rows to threads by voxel counts; their pairs are then joined in row
   * order, as one thread would have made them. */
  w.row_bounds = g_new (gsize, nt + 1);
  sv__metrics_label_bounds (t->size_a, t->n_a, nt, w.row_bounds);
  w.pb = g_new0 (GArray *, nt);
  w.pn = g_new0 (GArray *, nt);
  w.row_start = g_new0 (gsize *, nt);
  sv__run_parallel (nt, rows_cb, &w);
  gsize n_pairs = 0;
  w.pair_at = g_new (gsize, nt);
  for (int th = 0; th < nt; th++)
    {
      w.pair_at[th] = n_pairs;
      n_pairs += w.pb[th]->len;
    }
  t->row_start = g_new (gsize, t->n_a + 1);
  t->pair_b = g_new (guint32, MAX (n_pairs, 1));
  t->pair_n = g_new (guint64, MAX (n_pairs, 1));
  sv__run_parallel (nt, join_cb, &w);
  t->row_start[t->n_a] = n_pairs;
  g_free (w.pb);
  g_free (w.pn);
  g_free (w.row_start);
  g_free (w.row_bounds);
  g_free (w.grouped);
  g_free (w.pair_at);
  g_free (w.count_a);
  g_free (w.count_b);
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

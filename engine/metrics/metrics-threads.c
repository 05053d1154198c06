/* Supervox engine: what the threads of the quality metrics share
 * (metrics-threads.h): which labels each thread owns, and the per-thread
 * counts of labels added up or turned into places, a share of the labels
 * on each thread. With ~10⁵ labels and 16 threads these tables hold
 * millions of counts; one thread adding them up cost more than the
 * passes over the voxels that made them. */
#define G_LOG_DOMAIN "sv-engine"

#include "metrics-threads.h"

void
sv__metrics_label_bounds (const guint64 *sizes, gsize n_labels, int n_threads, gsize *bounds)
{
  guint64 total = 0, seen = 0;
  gsize s = 0;

  for (gsize k = 0; k < n_labels; k++)
    total += sizes[k];
  bounds[0] = 0;
  for (int th = 1; th < n_threads; th++)
    {
      guint64 want = total / (guint64)n_threads * (guint64)th;
      while (s < n_labels && seen + sizes[s] <= want)
        seen += sizes[s++];
      bounds[th] = s;
    }
  bounds[n_threads] = n_labels;
}

/* What the threads of the two functions below share. */
typedef struct
{
  guint64 *counts; /* n_tables × n_labels */
  gsize n_labels;
  int n_tables, n_threads;
  guint64 *sum;       /* n_labels, or NULL */
  gsize *start;       /* n_labels + 1, or NULL */
  guint64 *share_sum; /* n_threads: the counts of each thread's labels, then where they go */
} CountsWork;

static void
sum_cb (gpointer p, int th)
{
  CountsWork *w = p;
  gsize a, b;

  sv__metrics_share (w->n_labels, th, w->n_threads, &a, &b);
  for (gsize k = a; k < b; k++)
    w->sum[k] = 0;
  for (int t = 0; t < w->n_tables; t++)
    {
      const guint64 *c = w->counts + (gsize)t * w->n_labels;

      for (gsize k = a; k < b; k++)
        w->sum[k] += c[k];
    }
}

void
sv__metrics_sum_counts (const guint64 *counts, gsize n_labels, int n_tables, guint64 *sum,
                        int n_threads)
{
  CountsWork w = { (guint64 *)counts, n_labels, n_tables, 1, sum };

  w.n_threads = (int)MIN ((gsize)sv__resolve_threads (n_threads), n_labels / 4096 + 1);
  sv__run_parallel (w.n_threads, sum_cb, &w);
}

/* The counts of the thread's labels added up, table after table (one
 * stream of memory at a time), and their total. */
static void
share_total_cb (gpointer p, int th)
{
  CountsWork *w = p;
  guint64 total = 0;
  gsize a, b;

  sv__metrics_share (w->n_labels, th, w->n_threads, &a, &b);
  sum_cb (p, th);
  for (gsize k = a; k < b; k++)
    total += w->sum[k];
  w->share_sum[th] = total;
}

/* Each label's place, then each table's count of it turned into the place
 * that follows the earlier tables' ones. */
static void
share_place_cb (gpointer p, int th)
{
  CountsWork *w = p;
  guint64 place = w->share_sum[th];
  gsize a, b;

  sv__metrics_share (w->n_labels, th, w->n_threads, &a, &b);
  for (gsize k = a; k < b; k++)
    {
      const guint64 count = w->sum[k];

      w->sum[k] = place;
      if (w->start)
        w->start[k] = place;
      place += count;
    }
  for (int t = 0; t < w->n_tables; t++)
    {
      guint64 *c = w->counts + (gsize)t * w->n_labels;

      /* A thread that found none of label k needs no place for it: the
       * pages of a table that its thread never wrote stay the kernel's
       * shared zero page instead of being copied here. */
      for (gsize k = a; k < b; k++)
        {
          const guint64 count = c[k];

          if (count == 0)
            continue;
          c[k] = w->sum[k];
          w->sum[k] += count;
        }
    }
}

guint64
sv__metrics_place_counts (guint64 *counts, gsize n_labels, int n_tables, gsize *start,
                          int n_threads)
{
  CountsWork w = { counts, n_labels, n_tables, 1, NULL, start };
  guint64 place = 0;

  w.n_threads = (int)MIN ((gsize)sv__resolve_threads (n_threads), n_labels / 4096 + 1);
  w.share_sum = g_new (guint64, w.n_threads);
  w.sum = g_new (guint64, MAX (n_labels, 1));
  sv__run_parallel (w.n_threads, share_total_cb, &w);
  for (int th = 0; th < w.n_threads; th++)
    {
      const guint64 count = w.share_sum[th];

      w.share_sum[th] = place;
      place += count;
    }
  sv__run_parallel (w.n_threads, share_place_cb, &w);
  if (start)
    start[n_labels] = place;
  g_free (w.sum);
  g_free (w.share_sum);
  return place;
}

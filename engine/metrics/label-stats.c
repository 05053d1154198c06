/* Supervox engine: per-supervoxel statistics of a label volume. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-label-stats.h"

#include <math.h>
#include <stdlib.h>

#include "label-runs.h"
#include "metrics-threads.h"
#include "supervox/sv-error.h"

struct _SvLabelTable
{
  SvLabelStats *stats; /* sorted by label */
  gsize n;
};

/* What the threads of sv_label_table_new share. */
typedef struct
{
  const SvLabels *labels;
  const SvVolume *image;
  const guint32 *index; /* dense, in increasing label order, once shift is taken off */
  guint32 shift;
  gsize n, n_labels;
  guint nc;
  int n_threads;
  guint64 *counts; /* n_threads × n_labels */
  const gsize *bounds;
  const SvLabelRuns *runs; /* NULL: each thread reads every voxel for its labels */
  SvLabelStats *stats;
  double *sums; /* n_labels × (nc + 3): intensity sums, then z, y, x sums */
} TableWork;

static void
count_cb (gpointer p, int t)
{
  TableWork *w = p;
  guint64 *counts = w->counts + (gsize)t * w->n_labels;
  gsize lo, hi;

  sv__metrics_share (w->n, t, w->n_threads, &lo, &hi);
  for (gsize i = lo; i < hi; i++)
    counts[w->index[i] - w->shift]++;
}

/* Voxel i, at (z, y, x), added to its label k's statistics. */
static inline void
add_voxel (TableWork *w, gsize k, gsize i, guint z, guint y, guint x)
{
  const guint nc = w->nc;
  SvLabelStats *s = &w->stats[k];
  double *sum = w->sums + k * (nc + 3);
  const guint zyx[3] = { z, y, x };

  s->label = w->labels->data[i];
  s->n_voxels++;
  for (guint c = 0; c < nc; c++)
    {
      double value = w->image->data[i * w->image->nc + c];
      sum[c] += value;
      s->min[c] = MIN (s->min[c], value);
      s->max[c] = MAX (s->max[c], value);
    }
  for (guint d = 0; d < 3; d++)
    {
      sum[nc + d] += zyx[d];
      s->lo[d] = MIN (s->lo[d], zyx[d]);
      s->hi[d] = MAX (s->hi[d], zyx[d]);
    }
}

/* A run of label k's voxels, as add_voxel for each in turn would: the
 * intensities voxel by voxel (their sums depend on the order), the
 * coordinates' sums a run at a time (integers, exact in a double either
 * way), the bounds at its ends. */
static inline void
add_run (TableWork *w, gsize k, const SvLabelRun *run)
{
  const guint nc = w->nc, ny = w->labels->ny, vc = w->image != NULL ? w->image->nc : 0;
  const guint z = run->row / ny, y = run->row % ny, len = run->x1 - run->x0;
  const gsize i0 = (gsize)run->row * w->labels->nx + run->x0;
  SvLabelStats *s = &w->stats[k];
  double *sum = w->sums + k * (nc + 3);
  const guint lo[3] = { z, y, run->x0 }, hi[3] = { z, y, run->x1 - 1 };

  s->label = w->labels->data[i0];
  s->n_voxels += len;
  for (guint c = 0; c < nc; c++)
    {
      const float *v = w->image->data + i0 * vc + c;
      double acc = sum[c], mn = s->min[c], mx = s->max[c];

      for (guint x = 0; x < len; x++, v += vc)
        {
          const double value = *v;
          acc += value;
          mn = MIN (mn, value);
          mx = MAX (mx, value);
        }
      sum[c] = acc;
      s->min[c] = mn;
      s->max[c] = mx;
    }
  sum[nc] += (double)z * len;
  sum[nc + 1] += (double)y * len;
  sum[nc + 2] += (double)((guint64)len * (run->x0 + run->x1 - 1) / 2);
  for (guint d = 0; d < 3; d++)
    {
      s->lo[d] = MIN (s->lo[d], lo[d]);
      s->hi[d] = MAX (s->hi[d], hi[d]);
    }
}

/* Labels [l0, l1) before their first voxel. */
static void
stats_init (TableWork *w, gsize l0, gsize l1)
{
  for (gsize k = l0; k < l1; k++)
    {
      SvLabelStats *s = &w->stats[k];
      for (guint c = 0; c < SV_LABEL_STATS_MAX_CHANNELS; c++)
        {
          s->min[c] = INFINITY;
          s->max[c] = -INFINITY;
        }
      for (guint d = 0; d < 3; d++)
        s->lo[d] = G_MAXUINT;
    }
}

/* Labels [l0, l1) after their last voxel: the means. */
static void
stats_finish (TableWork *w, gsize l0, gsize l1)
{
  for (gsize k = l0; k < l1; k++)
    {
      SvLabelStats *s = &w->stats[k];
      const double *sum = w->sums + k * (w->nc + 3);
      for (guint c = 0; c < SV_LABEL_STATS_MAX_CHANNELS; c++)
        if (c < w->nc)
          s->mean[c] = sum[c] / (double)s->n_voxels;
        else
          s->mean[c] = s->min[c] = s->max[c] = NAN;
      for (guint d = 0; d < 3; d++)
        s->centre[d] = sum[w->nc + d] / (double)s->n_voxels;
    }
}

/* Every voxel of the labels this thread owns, in voxel order: each
 * label's sums are added up as one thread would. Their statistics are
 * also set up and finished here, so that no thread goes through every
 * label. */
static void
accumulate_cb (gpointer p, int t)
{
  TableWork *w = p;
  const gsize l0 = w->bounds[t], l1 = w->bounds[t + 1];
  const guint ny = w->labels->ny, nx = w->labels->nx;
  gsize i = 0;

  stats_init (w, l0, l1);
  /* Only the owned labels' runs, label after label. */
  if (w->runs != NULL)
    {
      for (gsize k = l0; k < l1; k++)
        for (gsize r = w->runs->start[k]; r < w->runs->start[k + 1]; r++)
          add_run (w, k, &w->runs->runs[r]);
    }
  else
    for (guint z = 0; z < w->labels->nz; z++)
      for (guint y = 0; y < ny; y++)
        for (guint x = 0; x < nx; x++, i++)
          {
            gsize k = w->index[i] - w->shift;
            if (k >= l0 && k < l1)
              add_voxel (w, k, i, z, y, x);
          }
  stats_finish (w, l0, l1);
}

static int
compare_stats (const void *a, const void *b)
{
  gint32 x = ((const SvLabelStats *)a)->label, y = ((const SvLabelStats *)b)->label;
  return (x > y) - (x < y);
}

SvLabelTable *
sv_label_table_new (const SvLabels *labels, const SvVolume *image, GError **error)
{
  return sv__label_table_new_threads (labels, NULL, image, 0, error);
}

SvLabelTable *
sv__label_table_new_threads (const SvLabels *labels, const SvDenseLabels *dense,
                             const SvVolume *image, int n_threads, GError **error)
{
  g_return_val_if_fail (labels != NULL, NULL);
  gsize n = sv_labels_n_voxels (labels);
  SvDenseLabels own = { 0 };
  TableWork w = { labels, image };
  SvLabelTable *table;

  if (image && (image->nz != labels->nz || image->ny != labels->ny || image->nx != labels->nx))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "labels are %u×%u×%u but the image is %u×%u×%u", labels->nz, labels->ny,
                   labels->nx, image->nz, image->ny, image->nx);
      return NULL;
    }
  if (!dense)
    {
      sv__dense_labels_init_threads (&own, labels->data, n, n_threads);
      sv__dense_labels_make_runs (&own, labels->nz, labels->ny, labels->nx, n_threads);
      dense = &own;
    }
  w.index = dense->index;
  w.shift = dense->shift;
  w.runs = dense->runs;
  w.n = n;
  w.n_labels = dense->n_distinct;
  w.nc = image ? MIN (image->nc, SV_LABEL_STATS_MAX_CHANNELS) : 0;
  w.n_threads = sv__metrics_threads (n_threads, n);
  table = g_new0 (SvLabelTable, 1);
  table->n = w.n_labels;
  table->stats = g_new0 (SvLabelStats, MAX (w.n_labels, 1));
  w.stats = table->stats;
  w.sums = g_new0 (double, MAX (w.n_labels, 1) * (w.nc + 3));
  {
    /* Labels to threads by their voxel counts, which the runs give
     * without a pass over the voxels. */
    g_autofree guint64 *sizes = g_new (guint64, MAX (w.n_labels, 1));
    g_autofree gsize *bounds = g_new (gsize, w.n_threads + 1);
    if (w.runs != NULL)
      sv__label_runs_sizes (w.runs, sizes, n_threads);
    else
      {
        w.counts = g_new0 (guint64, (gsize)w.n_threads * MAX (w.n_labels, 1));
        sv__run_parallel (w.n_threads, count_cb, &w);
        sv__metrics_sum_counts (w.counts, w.n_labels, w.n_threads, sizes, n_threads);
        g_free (w.counts);
      }
    sv__metrics_label_bounds (sizes, w.n_labels, w.n_threads, bounds);
    w.bounds = bounds;
    sv__run_parallel (w.n_threads, accumulate_cb, &w);
  }
  g_free (w.sums);
  sv__dense_labels_clear (&own);
  return table;
}

void
sv_label_table_free (SvLabelTable *table)
{
  if (!table)
    return;
  g_free (table->stats);
  g_free (table);
}

gsize
sv_label_table_get_n_labels (const SvLabelTable *table)
{
  return table->n;
}

const SvLabelStats *
sv_label_table_get (const SvLabelTable *table, gsize i)
{
  g_return_val_if_fail (i < table->n, NULL);
  return &table->stats[i];
}

const SvLabelStats *
sv_label_table_lookup (const SvLabelTable *table, gint32 label)
{
  SvLabelStats key = { .label = label };
  return bsearch (&key, table->stats, table->n, sizeof (SvLabelStats), compare_stats);
}

void
sv_label_table_size_histogram (const SvLabelTable *table, gboolean skip_valid, gint32 skip,
                               guint n_bins, double *edges, guint64 *counts)
{
  guint64 smallest = G_MAXUINT64, largest = 0;
  double log_lo, log_hi;

  for (guint b = 0; b < n_bins; b++)
    counts[b] = 0;
  for (guint b = 0; b <= n_bins; b++)
    edges[b] = 0.0;
  for (gsize i = 0; i < table->n; i++)
    if (!skip_valid || table->stats[i].label != skip)
      {
        smallest = MIN (smallest, table->stats[i].n_voxels);
        largest = MAX (largest, table->stats[i].n_voxels);
      }
  if (!n_bins || largest == 0)
    return;
  log_lo = log ((double)smallest);
  log_hi = log ((double)largest);
  for (guint b = 0; b <= n_bins; b++)
    edges[b] = exp (log_lo + (log_hi - log_lo) * b / n_bins);
  edges[0] = (double)smallest;
  edges[n_bins] = (double)largest;
  for (gsize i = 0; i < table->n; i++)
    if (!skip_valid || table->stats[i].label != skip)
      {
        double t = log_hi > log_lo
                       ? (log ((double)table->stats[i].n_voxels) - log_lo) / (log_hi - log_lo)
                       : 0.0;
        counts[MIN ((guint)(t * n_bins), n_bins - 1)]++;
      }
}

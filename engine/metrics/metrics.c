/* Supervox engine: superpixel quality metrics, on the dense labels and
 * the contingency table of contingency.c. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contingency.h"
#include "label-runs.h"
#include "metrics-threads.h"
#include "supervox/sv-error.h"

static int
compare_guint64 (const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return (x > y) - (x < y);
}

double
sv_adjusted_rand_index (const gint32 *a, const gint32 *b, gsize n)
{
  g_return_val_if_fail (n == 0 || (a != NULL && b != NULL), NAN);

  SvDenseLabels da = { 0 }, db = { 0 };
  SvContingency t = { 0 };
  sv__dense_labels_init (&da, a, n);
  sv__dense_labels_init (&db, b, n);
  sv__contingency_init (&t, &da, &db, n);
  double ari = sv__contingency_ari (&t);
  sv__contingency_clear (&t);
  sv__dense_labels_clear (&da);
  sv__dense_labels_clear (&db);
  return ari;
}

static gboolean
check_same_shape (const SvLabels *labels, guint nz, guint ny, guint nx, const char *what,
                  GError **error)
{
  if (labels->nz == nz && labels->ny == ny && labels->nx == nx)
    return TRUE;
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
               "labels are %u×%u×%u but %s is %u×%u×%u", labels->nz, labels->ny, labels->nx, what,
               nz, ny, nx);
  return FALSE;
}

static void
size_statistics (const guint64 *sizes, gsize n_labels, SvMetrics *m)
{
  if (n_labels == 0)
    return;
  g_autofree guint64 *sorted = g_memdup2 (sizes, n_labels * sizeof (guint64));
  qsort (sorted, n_labels, sizeof (guint64), compare_guint64);
  double sum = 0.0;
  for (gsize s = 0; s < n_labels; s++)
    sum += (double)sorted[s];
  double mean = sum / (double)n_labels;
  double ss = 0.0;
  for (gsize s = 0; s < n_labels; s++)
    ss += ((double)sorted[s] - mean) * ((double)sorted[s] - mean);
  m->size_min = (double)sorted[0];
  m->size_max = (double)sorted[n_labels - 1];
  m->size_mean = mean;
  m->size_median = (n_labels & 1)
                       ? (double)sorted[n_labels / 2]
                       : 0.5 * ((double)sorted[n_labels / 2 - 1] + (double)sorted[n_labels / 2]);
  m->size_std = sqrt (ss / (double)n_labels);
}

/* What the threads of one metrics computation share. */
typedef struct
{
  const guint32 *index; /* dense once shift is taken off: equal labels, equal values */
  guint nz, ny, nx;
  gsize n, n_labels, skip;
  int n_threads;
  guint64 *sizes, *faces; /* n_threads × n_labels while counted */
  const float *values;    /* one channel of the image, every nc-th float */
  guint nc;
  gboolean squared; /* block sums of (value − mu)², else of the values */
  double mu;
  double *block_sums; /* per SV_METRICS_BLOCK voxels */
  double *label_sums; /* n_labels */
  const gsize *label_bounds;
  const SvLabelRuns *runs; /* NULL: each thread reads every voxel for its labels */
  guint32 shift;
} MetricsWork;

/* Each voxel's label counted, and its faces towards other labels or the
 * border (in 2D, nz == 1, only those in the plane). */
static void
count_sizes_faces_cb (gpointer p, int t)
{
  MetricsWork *w = p;
  const gsize sy = w->nx, sz = (gsize)w->ny * w->nx;
  const gboolean planar = w->nz == 1;
  guint64 *sizes = w->sizes + (gsize)t * w->n_labels, *faces = w->faces + (gsize)t * w->n_labels;
  const guint32 *index = w->index, shift = w->shift;
  gsize lo, hi;

  sv__metrics_share (w->n, t, w->n_threads, &lo, &hi);
  guint z = (guint)(lo / sz), y = (guint)(lo % sz / sy), x = (guint)(lo % sy);
  for (gsize i = lo; i < hi; i++)
    {
      guint32 l = index[i];
      guint64 f = 0;
      f += x == 0 || index[i - 1] != l;
      f += x + 1 == w->nx || index[i + 1] != l;
      f += y == 0 || index[i - sy] != l;
      f += y + 1 == w->ny || index[i + sy] != l;
      if (!planar)
        {
          f += z == 0 || index[i - sz] != l;
          f += z + 1 == w->nz || index[i + sz] != l;
        }
      sizes[l - shift]++;
      faces[l - shift] += f;
      if (++x == w->nx)
        {
          x = 0;
          if (++y == w->ny)
            {
              y = 0;
              z++;
            }
        }
    }
}

/* Size-weighted mean isoperimetric quotient (Schick, Fischer & Stiefelhagen,
 * ICPR 2012), with the surface counted in voxel faces, including faces on
 * the border of the volume. */
static double
compactness (const guint64 *faces, const guint64 *sizes, gsize n_labels, gsize skip, guint nz,
             guint ny, guint nx)
{
  const gsize n = (gsize)nz * ny * nx - (skip < n_labels ? sizes[skip] : 0);
  const gboolean planar = nz == 1;

  double weighted = 0.0;
  for (gsize s = 0; s < n_labels; s++)
    {
      if (s == skip)
        continue;
      double v = (double)sizes[s], a = (double)faces[s];
      double q = planar ? 4.0 * G_PI * v / (a * a) : 36.0 * G_PI * v * v / (a * a * a);
      weighted += v * q;
    }
  return n > 0 ? weighted / (double)n : NAN;
}

/* Σ of the channel's values (or of their squared deviation from w->mu)
 * over each block of voxels outside the skipped
 * label, in voxel order. */
static void
block_sums_cb (gpointer p, int t)
{
  MetricsWork *w = p;
  const gsize n_blocks = (w->n + SV_METRICS_BLOCK - 1) / SV_METRICS_BLOCK;
  const guint32 *index = w->index;
  const float *values = w->values;
  const gsize nc = w->nc;
  /* The skipped label as the index holds it. */
  const guint32 skip = (guint32)w->skip + w->shift;
  const gboolean squared = w->squared;
  const double mu = w->mu;
  /* Without a background the labels need not be read at all. */
  const gboolean skipping = w->skip != G_MAXSIZE;
  gsize b0, b1;

  sv__metrics_share (n_blocks, t, w->n_threads, &b0, &b1);
  for (gsize b = b0; b < b1; b++)
    {
      gsize end = MIN (w->n, (b + 1) * SV_METRICS_BLOCK);
      double sum = 0.0;
      for (gsize i = b * SV_METRICS_BLOCK; i < end; i++)
        {
          if (skipping && index[i] == skip)
            continue;
          double v = values[i * nc];
          if (squared)
            v = (v - mu) * (v - mu);
          sum += v;
        }
      w->block_sums[b] = sum;
    }
}

/* Each label's sum of the channel's values, in voxel order, by the thread
 * that owns the label. */
static void
label_sums_cb (gpointer p, int t)
{
  MetricsWork *w = p;
  const gsize l0 = w->label_bounds[t], l1 = w->label_bounds[t + 1];

  for (gsize s = l0; s < l1; s++)
    w->label_sums[s] = 0.0;
  /* Only the owned labels' runs, label after label. */
  if (w->runs != NULL)
    {
      for (gsize s = l0; s < l1; s++)
        for (gsize r = w->runs->start[s]; r < w->runs->start[s + 1]; r++)
          {
            const SvLabelRun *run = &w->runs->runs[r];
            const gsize i0 = (gsize)run->row * w->nx;

            for (gsize i = i0 + run->x0; i < i0 + run->x1; i++)
              w->label_sums[s] += w->values[i * w->nc];
          }
      return;
    }
  for (gsize i = 0; i < w->n; i++)
    {
      guint32 l = w->index[i] - w->shift;
      if (l >= l0 && l < l1)
        w->label_sums[l] += w->values[i * w->nc];
    }
}

static double
add_blocks (MetricsWork *w)
{
  const gsize n_blocks = (w->n + SV_METRICS_BLOCK - 1) / SV_METRICS_BLOCK;
  double total = 0.0;

  sv__run_parallel (w->n_threads, block_sums_cb, w);
  for (gsize b = 0; b < n_blocks; b++)
    total += w->block_sums[b];
  return total;
}

/* Mean over channels of between-superpixel variance / total variance;
 * channels with zero variance are left out, NaN when all are. */
static double
explained_variation (MetricsWork *w, const SvVolume *image, const guint64 *sizes)
{
  const gsize n = w->n, n_labels = w->n_labels, skip = w->skip;
  const gsize n_in = n - (skip < n_labels ? sizes[skip] : 0);
  g_autofree double *sums = g_new (double, MAX (n_labels, 1));
  g_autofree double *block_sums = g_new (double, n / SV_METRICS_BLOCK + 1);
  g_autofree gsize *bounds = g_new (gsize, w->n_threads + 1);
  double ev_sum = 0.0;
  guint ev_channels = 0;

  w->nc = image->nc;
  w->block_sums = block_sums;
  w->label_sums = sums;
  w->label_bounds = bounds;
  sv__metrics_label_bounds (sizes, n_labels, w->n_threads, bounds);
  for (guint c = 0; c < image->nc; c++)
    {
      w->values = image->data + c;
      w->squared = FALSE;
      double total = add_blocks (w);
      sv__run_parallel (w->n_threads, label_sums_cb, w);
      double mu = total / (double)MAX (n_in, 1);
      w->squared = TRUE;
      w->mu = mu;
      double ss_total = add_blocks (w);
      double ss_between = 0.0;
      for (gsize s = 0; s < n_labels; s++)
        {
          if (s == skip)
            continue;
          double dm = sums[s] / (double)sizes[s] - mu;
          ss_between += (double)sizes[s] * dm * dm;
        }
      if (ss_total > 0.0)
        {
          ev_sum += ss_between / ss_total;
          ev_channels++;
        }
    }
  return ev_channels > 0 ? ev_sum / ev_channels : NAN;
}

gboolean
sv_metrics_compute (const SvLabels *labels, const SvLabels *truth, const SvVolume *image,
                    guint boundary_radius, SvMetrics *metrics, GError **error)
{
  return sv_metrics_compute_background (labels, truth, image, boundary_radius, FALSE, 0, metrics,
                                        error);
}

gboolean
sv_metrics_compute_background (const SvLabels *labels, const SvLabels *truth,
                               const SvVolume *image, guint boundary_radius,
                               gboolean background_valid, gint32 background, SvMetrics *metrics,
                               GError **error)
{
  return sv__metrics_compute_threads (labels, NULL, truth, image, boundary_radius,
                                      background_valid, background, 0, metrics, error);
}

gboolean
sv__metrics_compute_threads (const SvLabels *labels, const SvDenseLabels *dense,
                             const SvLabels *truth, const SvVolume *image, guint boundary_radius,
                             gboolean background_valid, gint32 background, int n_threads,
                             SvMetrics *metrics, GError **error)
{
  g_return_val_if_fail (labels != NULL, FALSE);
  g_return_val_if_fail (metrics != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (truth != NULL && !check_same_shape (labels, truth->nz, truth->ny, truth->nx, "truth", error))
    return FALSE;
  if (image != NULL
      && !check_same_shape (labels, image->nz, image->ny, image->nx, "the image", error))
    return FALSE;
  if (image != NULL && image->nc == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "the image has no channels");
      return FALSE;
    }

  *metrics = (SvMetrics){
    .n_labels = 0,
    .size_min = NAN,
    .size_max = NAN,
    .size_mean = NAN,
    .size_median = NAN,
    .size_std = NAN,
    .asa = NAN,
    .undersegmentation = NAN,
    .boundary_recall = NAN,
    .explained_variation = NAN,
    .compactness = NAN,
    .adjusted_rand = NAN,
  };

  const guint nz = labels->nz, ny = labels->ny, nx = labels->nx;
  const gsize n = (gsize)nz * ny * nx;
  if (n == 0)
    return TRUE;

  SvDenseLabels own = { 0 };
  if (!dense)
    {
      sv__dense_labels_init_threads (&own, labels->data, n, n_threads);
      if (image != NULL)
        sv__dense_labels_make_runs (&own, nz, ny, nx, n_threads);
    }
  const SvDenseLabels dl = dense ? *dense : own;
  const gsize n_labels = dl.n_distinct;
  /* The dense index of the background, G_MAXSIZE when it has no voxel
   * (none outside the labels' range, as in a result without a mask: no
   * search through every voxel on one thread). */
  gsize skip = G_MAXSIZE;
  background_valid
      = background_valid && background >= dl.min_label && background <= dl.max_label;
  for (gsize i = 0; background_valid && i < n; i++)
    if (labels->data[i] == background)
      {
        skip = sv__dense_at (&dl, i);
        break;
      }
  metrics->n_labels = n_labels - (skip != G_MAXSIZE);

  MetricsWork w = { dl.index, nz, ny, nx, n, n_labels, skip, sv__metrics_threads (n_threads, n) };
  w.runs = dl.runs;
  w.shift = dl.shift;
  g_autofree guint64 *sizes = g_new (guint64, MAX (n_labels, 1));
  g_autofree guint64 *faces = g_new (guint64, MAX (n_labels, 1));
  {
    /* Integer counts per thread: their sum is the same for any split. */
    g_autofree guint64 *counts = g_new0 (guint64, 2 * (gsize)w.n_threads * MAX (n_labels, 1));
    w.sizes = counts;
    w.faces = counts + (gsize)w.n_threads * n_labels;
    sv__run_parallel (w.n_threads, count_sizes_faces_cb, &w);
    sv__metrics_sum_counts (w.sizes, n_labels, w.n_threads, sizes, n_threads);
    sv__metrics_sum_counts (w.faces, n_labels, w.n_threads, faces, n_threads);
  }
  {
    /* The background is no superpixel: its size stays out of the statistics. */
    g_autofree guint64 *counted = g_new (guint64, MAX (n_labels, 1));
    gsize k = 0;
    for (gsize s = 0; s < n_labels; s++)
      if (s != skip)
        counted[k++] = sizes[s];
    size_statistics (counted, k, metrics);
  }
  metrics->compactness = compactness (faces, sizes, n_labels, skip, nz, ny, nx);

  if (image != NULL)
    metrics->explained_variation = explained_variation (&w, image, sizes);

  if (truth != NULL)
    {
      SvDenseLabels dg = { 0 };
      SvContingency t = { 0 };
      sv__dense_labels_init_threads (&dg, truth->data, n, n_threads);
      sv__contingency_init_threads (&t, &dl, &dg, n, n_threads);

      /* ASA: every superpixel given to the truth segment it overlaps most.
       * The undersegmentation error counts the voxels that then leak out. */
      guint64 best_total = 0;
      for (gsize s = 0; s < t.n_a; s++)
        {
          guint64 best = 0;
          for (gsize k = t.row_start[s]; k < t.row_start[s + 1]; k++)
            best = MAX (best, t.pair_n[k]);
          best_total += best;
        }
      metrics->asa = (double)best_total / (double)n;
      metrics->undersegmentation = (double)(n - best_total) / (double)n;
      metrics->adjusted_rand = sv__contingency_ari (&t);

      metrics->boundary_recall = sv__metrics_boundary_recall (dg.index, dl.index, nz, ny, nx,
                                                              boundary_radius, n_threads);

      sv__contingency_clear (&t);
      sv__dense_labels_clear (&dg);
    }

  sv__dense_labels_clear (&own);
  return TRUE;
}

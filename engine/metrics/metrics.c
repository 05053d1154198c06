/* Supervox engine: superpixel quality metrics, on the dense labels and
 * the contingency table of contingency.c. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contingency.h"
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

/* Marks voxels with a 6-neighbour (4 in 2D) of a different label. */
static guint8 *
boundary_mask (const guint32 *index, guint nz, guint ny, guint nx)
{
  const gsize sy = nx, sz = (gsize)ny * nx;
  guint8 *mask = g_new0 (guint8, MAX (sz * nz, 1));
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        {
          gsize i = z * sz + y * sy + x;
          guint32 l = index[i];
          /* Each differing pair marks both of its voxels. */
          if (x + 1 < nx && index[i + 1] != l)
            mask[i] = mask[i + 1] = 1;
          if (y + 1 < ny && index[i + sy] != l)
            mask[i] = mask[i + sy] = 1;
          if (z + 1 < nz && index[i + sz] != l)
            mask[i] = mask[i + sz] = 1;
        }
  return mask;
}

/* In-place maximum over a (2r+1)-wide window clipped to the volume, along
 * every axis: a dilation by a Chebyshev ball of radius r. */
static void
dilate_box (guint8 *mask, guint nz, guint ny, guint nx, guint r)
{
  if (r == 0)
    return;
  const guint dims[3] = { nz, ny, nx };
  const gsize strides[3] = { (gsize)ny * nx, nx, 1 };
  g_autofree guint8 *line = g_new (guint8, MAX (nz, MAX (ny, nx)));
  for (int axis = 0; axis < 3; axis++)
    {
      gsize n = dims[axis], stride = strides[axis];
      if (n < 2)
        continue;
      int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
      for (gsize i1 = 0; i1 < dims[a1]; i1++)
        for (gsize i2 = 0; i2 < dims[a2]; i2++)
          {
            guint8 *base = mask + i1 * strides[a1] + i2 * strides[a2];
            for (gsize i = 0; i < n; i++)
              line[i] = base[i * stride];
            /* Distance to the last set voxel at or before i, and at or after. */
            gsize last = G_MAXSIZE;
            for (gsize i = 0; i < n; i++)
              {
                if (line[i])
                  last = i;
                base[i * stride] = last != G_MAXSIZE && i - last <= r;
              }
            last = G_MAXSIZE;
            for (gsize i = n; i-- > 0;)
              {
                if (line[i])
                  last = i;
                if (last != G_MAXSIZE && last - i <= r)
                  base[i * stride] = 1;
              }
          }
    }
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

/* Size-weighted mean isoperimetric quotient (Schick, Fischer & Stiefelhagen,
 * ICPR 2012), with the surface counted in voxel faces, including faces on
 * the border of the volume. */
static double
compactness (const guint32 *index, const guint64 *sizes, gsize n_labels, gsize skip, guint nz,
             guint ny, guint nx)
{
  const gsize n = (gsize)nz * ny * nx - (skip < n_labels ? sizes[skip] : 0);
  const gsize sy = nx, sz = (gsize)ny * nx;
  const gboolean planar = nz == 1;
  g_autofree guint64 *faces = g_new0 (guint64, MAX (n_labels, 1));
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        {
          gsize i = z * sz + y * sy + x;
          guint32 l = index[i];
          guint64 f = 0;
          f += x == 0 || index[i - 1] != l;
          f += x + 1 == nx || index[i + 1] != l;
          f += y == 0 || index[i - sy] != l;
          f += y + 1 == ny || index[i + sy] != l;
          if (!planar)
            {
              f += z == 0 || index[i - sz] != l;
              f += z + 1 == nz || index[i + sz] != l;
            }
          faces[l] += f;
        }

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

/* Mean over channels of between-superpixel variance / total variance;
 * channels with zero variance are left out, NaN when all are. */
static double
explained_variation (const SvVolume *image, const guint32 *index, const guint64 *sizes,
                     gsize n_labels, gsize skip)
{
  const gsize n = (gsize)image->nz * image->ny * image->nx;
  const gsize n_in = n - (skip < n_labels ? sizes[skip] : 0);
  const guint nc = image->nc;
  g_autofree double *sums = g_new (double, MAX (n_labels, 1));
  double ev_sum = 0.0;
  guint ev_channels = 0;
  for (guint c = 0; c < nc; c++)
    {
      double total = 0.0;
      memset (sums, 0, MAX (n_labels, 1) * sizeof (double));
      for (gsize i = 0; i < n; i++)
        {
          if (index[i] == skip)
            continue;
          double v = image->data[i * nc + c];
          total += v;
          sums[index[i]] += v;
        }
      double mu = total / (double)MAX (n_in, 1);
      double ss_total = 0.0;
      for (gsize i = 0; i < n; i++)
        {
          if (index[i] == skip)
            continue;
          double dv = image->data[i * nc + c] - mu;
          ss_total += dv * dv;
        }
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

  SvDenseLabels dl = { 0 };
  sv__dense_labels_init (&dl, labels->data, n);
  const gsize n_labels = dl.n_distinct;
  /* The dense index of the background, G_MAXSIZE when it has no voxel. */
  gsize skip = G_MAXSIZE;
  for (gsize i = 0; background_valid && i < n; i++)
    if (labels->data[i] == background)
      {
        skip = dl.index[i];
        break;
      }
  metrics->n_labels = n_labels - (skip != G_MAXSIZE);

  g_autofree guint64 *sizes = g_new0 (guint64, n_labels);
  for (gsize i = 0; i < n; i++)
    sizes[dl.index[i]]++;
  {
    /* The background is no superpixel: its size stays out of the statistics. */
    g_autofree guint64 *counted = g_new (guint64, MAX (n_labels, 1));
    gsize k = 0;
    for (gsize s = 0; s < n_labels; s++)
      if (s != skip)
        counted[k++] = sizes[s];
    size_statistics (counted, k, metrics);
  }
  metrics->compactness = compactness (dl.index, sizes, n_labels, skip, nz, ny, nx);

  if (image != NULL)
    metrics->explained_variation = explained_variation (image, dl.index, sizes, n_labels, skip);

  if (truth != NULL)
    {
      SvDenseLabels dg = { 0 };
      SvContingency t = { 0 };
      sv__dense_labels_init (&dg, truth->data, n);
      sv__contingency_init (&t, &dl, &dg, n);

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

      g_autofree guint8 *truth_edge = boundary_mask (dg.index, nz, ny, nx);
      g_autofree guint8 *label_edge = boundary_mask (dl.index, nz, ny, nx);
      dilate_box (label_edge, nz, ny, nx, boundary_radius);
      guint64 n_truth_edge = 0, n_hit = 0;
      for (gsize i = 0; i < n; i++)
        if (truth_edge[i])
          {
            n_truth_edge++;
            n_hit += label_edge[i];
          }
      metrics->boundary_recall = n_truth_edge > 0 ? (double)n_hit / (double)n_truth_edge : NAN;

      sv__contingency_clear (&t);
      sv__dense_labels_clear (&dg);
    }

  sv__dense_labels_clear (&dl);
  return TRUE;
}

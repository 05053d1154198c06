/* Supervox engine: superpixel quality metrics.
 *
 * Labels of any gint32 values are first mapped to dense indices 0..n-1 in
 * increasing value order; the truth likewise. The overlap of the two is a
 * sparse contingency table built by grouping voxels by superpixel (a
 * counting sort), which is exact in 64-bit integers and needs 4 bytes per
 * voxel, whatever the number of distinct (superpixel, truth) pairs. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "supervox/sv-error.h"

/* Dense relabelling of a label map. */
typedef struct
{
  guint32 *index; /* per voxel, 0..n_distinct-1 in increasing label value */
  gsize n_distinct;
} DenseLabels;

static void
dense_labels_clear (DenseLabels *d)
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

static int
compare_guint64 (const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return (x > y) - (x < y);
}

static void
dense_labels_init (DenseLabels *d, const gint32 *data, gsize n)
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

/* Sparse contingency table of two dense label maps, in rows by `a`. */
typedef struct
{
  gsize n;          /* voxels */
  gsize n_a, n_b;   /* distinct labels in each map */
  guint64 *size_a;  /* n_a voxel counts */
  guint64 *size_b;  /* n_b voxel counts */
  gsize *row_start; /* n_a + 1: pairs of row s are [row_start[s], row_start[s+1]) */
  guint32 *pair_b;  /* column of each nonzero entry */
  guint64 *pair_n;  /* its count */
} Contingency;

static void
contingency_clear (Contingency *t)
{
  g_clear_pointer (&t->size_a, g_free);
  g_clear_pointer (&t->size_b, g_free);
  g_clear_pointer (&t->row_start, g_free);
  g_clear_pointer (&t->pair_b, g_free);
  g_clear_pointer (&t->pair_n, g_free);
}

static void
contingency_init (Contingency *t, const DenseLabels *a, const DenseLabels *b, gsize n)
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
static double
contingency_ari (const Contingency *t)
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

double
sv_adjusted_rand_index (const gint32 *a, const gint32 *b, gsize n)
{
  g_return_val_if_fail (n == 0 || (a != NULL && b != NULL), NAN);

  DenseLabels da = { 0 }, db = { 0 };
  Contingency t = { 0 };
  dense_labels_init (&da, a, n);
  dense_labels_init (&db, b, n);
  contingency_init (&t, &da, &db, n);
  double ari = contingency_ari (&t);
  contingency_clear (&t);
  dense_labels_clear (&da);
  dense_labels_clear (&db);
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

  DenseLabels dl = { 0 };
  dense_labels_init (&dl, labels->data, n);
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
      DenseLabels dg = { 0 };
      Contingency t = { 0 };
      dense_labels_init (&dg, truth->data, n);
      contingency_init (&t, &dl, &dg, n);

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
      metrics->adjusted_rand = contingency_ari (&t);

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

      contingency_clear (&t);
      dense_labels_clear (&dg);
    }

  dense_labels_clear (&dl);
  return TRUE;
}

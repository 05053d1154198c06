/* Supervox engine: synthetic volumes with ground truth.
 *
 * Everything here is single-threaded and uses only the seeded generator in
 * rng.c, so a seed gives the same bytes on every machine whatever the
 * thread count. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-synth.h"

#include <math.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "rng.h"

void
sv_synth_params_init_defaults (SvSynthParams *params)
{
  g_return_if_fail (params != NULL);

  params->nz = 64;
  params->ny = 128;
  params->nx = 128;
  params->n_cells = 60;
  params->nucleus_radius = 5.0;
  params->blur_sigma = 1.0;
  params->noise_sigma = 0.03;
  params->seed = 1;
}

/* scipy.ndimage's 'reflect' (half-sample symmetric: d c b a | a b c d),
 * folded as often as needed so kernels longer than the axis work too. */
static inline gsize
reflect_index (gssize i, gsize n)
{
  gssize period = 2 * (gssize)n;
  gssize m = i % period;
  if (m < 0)
    m += period;
  return m < (gssize)n ? (gsize)m : (gsize)(period - 1 - m);
}

/* Separable Gaussian of std sigma (voxels) on every axis longer than one
 * voxel, truncated at 4 sigma like scipy.ndimage.gaussian_filter, in place.
 * Sums are in double, each over its taps in ascending order. */
static void
gaussian_blur (float *data, guint nz, guint ny, guint nx, double sigma)
{
  if (!(sigma > 0.0))
    return;

  int radius = (int)(4.0 * sigma + 0.5);
  if (radius < 1)
    return;
  g_autofree double *kernel = g_new (double, 2 * radius + 1);
  double sum = 0.0;
  for (int k = -radius; k <= radius; k++)
    {
      kernel[k + radius] = exp (-0.5 * (double)k * (double)k / (sigma * sigma));
      sum += kernel[k + radius];
    }
  for (int k = 0; k <= 2 * radius; k++)
    kernel[k] /= sum;

  /* Axes in scipy's order z, y, x. Along z and y, whole rows of x at a
   * time so memory is read in order; each output sums its taps in order. */
  g_autofree double *acc = g_new (double, nx);
  for (int axis = 0; axis < 2; axis++)
    {
      const gsize n = axis == 0 ? nz : ny;
      const gsize stride = axis == 0 ? (gsize)ny * nx : nx;
      const gsize n_outer = axis == 0 ? ny : nz;
      const gsize outer_stride = axis == 0 ? nx : (gsize)ny * nx;
      if (n < 2)
        continue;
      g_autofree float *plane = g_new (float, nx *n);
      for (gsize o = 0; o < n_outer; o++)
        {
          float *base = data + o * outer_stride;
          for (gsize i = 0; i < n; i++)
            memcpy (plane + i * nx, base + i * stride, nx * sizeof (float));
          for (gsize i = 0; i < n; i++)
            {
              for (gsize x = 0; x < nx; x++)
                acc[x] = 0.0;
              for (int k = -radius; k <= radius; k++)
                {
                  const double w = kernel[k + radius];
                  const float *src = plane + reflect_index ((gssize)i + k, n) * nx;
                  for (gsize x = 0; x < nx; x++)
                    acc[x] += w * (double)src[x];
                }
              float *dst = base + i * stride;
              for (gsize x = 0; x < nx; x++)
                dst[x] = (float)acc[x];
            }
        }
    }

  /* Along x: one line at a time. */
  if (nx > 1)
    {
      g_autofree double *line = g_new (double, nx);
      for (gsize row = 0; row < (gsize)nz * ny; row++)
        {
          float *base = data + row * nx;
          for (gsize i = 0; i < nx; i++)
            line[i] = base[i];
          for (gsize i = 0; i < nx; i++)
            {
              double total = 0.0;
              if (i >= (gsize)radius && i + radius < nx)
                {
                  const double *src = line + i - radius;
                  for (int k = 0; k <= 2 * radius; k++)
                    total += kernel[k] * src[k];
                }
              else
                {
                  for (int k = -radius; k <= radius; k++)
                    total += kernel[k + radius] * line[reflect_index ((gssize)i + k, nx)];
                }
              base[i] = (float)total;
            }
        }
    }
}

/* Number of axes longer than one voxel (1, 2 or 3). */
static int
n_dims_of (guint nz, guint ny, guint nx)
{
  int d = (nz > 1) + (ny > 1) + (nx > 1);
  return d > 0 ? d : 1;
}

typedef struct
{
  gint64 z, y, x;
} Point;

/* Squared distance from p to the nearest and to the farthest voxel of the
 * box [lo, hi] (inclusive) along one axis. */
static inline void
axis_bounds (gint64 p, gint64 lo, gint64 hi, gint64 *near, gint64 *far)
{
  gint64 dn = p < lo ? lo - p : (p > hi ? p - hi : 0);
  gint64 df = MAX (p - lo, hi - p);
  *near = dn * dn;
  *far = df * df;
}

/* Labels every voxel with 1 + the index of its nearest seed (squared
 * Euclidean distance in integers, ties to the lowest index).
 *
 * Seeds are bucketed on a grid of about one seed per bucket. Voxels go in
 * small blocks; a block visits the seed buckets in growing Chebyshev rings
 * until the seed that is best in the worst case for the block (smallest
 * farthest-voxel distance U) is strictly closer than anything beyond the
 * ring can be. Only seeds whose nearest-voxel distance is ≤ U can win a
 * voxel of the block; the voxels then scan that short list. */
static void
voronoi_label (const Point *seeds, guint n_seeds, guint nz, guint ny, guint nx, gint32 *out)
{
  const gsize n_vox = (gsize)nz * ny * nx;
  int d = n_dims_of (nz, ny, nx);
  guint b = (guint)ceil (pow ((double)n_vox / n_seeds, 1.0 / d));
  b = MAX (b, 1u);
  const guint gz = (nz + b - 1) / b, gy = (ny + b - 1) / b, gx = (nx + b - 1) / b;
  const gsize n_buckets = (gsize)gz * gy * gx;

  g_autofree guint *bucket_start = g_new0 (guint, n_buckets + 1);
  g_autofree guint *bucket_seeds = g_new (guint, n_seeds);
  for (guint s = 0; s < n_seeds; s++)
    {
      gsize bi = ((gsize)(seeds[s].z / b) * gy + seeds[s].y / b) * gx + seeds[s].x / b;
      bucket_start[bi + 1]++;
    }
  for (gsize i = 0; i < n_buckets; i++)
    bucket_start[i + 1] += bucket_start[i];
  {
    g_autofree guint *fill = g_memdup2 (bucket_start, n_buckets * sizeof (guint));
    for (guint s = 0; s < n_seeds; s++)
      {
        gsize bi = ((gsize)(seeds[s].z / b) * gy + seeds[s].y / b) * gx + seeds[s].x / b;
        bucket_seeds[fill[bi]++] = s;
      }
  }

  const guint block = 8;
  g_autofree guint *cand = g_new (guint, n_seeds);
  g_autofree guint *keep = g_new (guint, n_seeds);

  for (guint z0 = 0; z0 < nz; z0 += block)
    for (guint y0 = 0; y0 < ny; y0 += block)
      for (guint x0 = 0; x0 < nx; x0 += block)
        {
          const guint z1 = MIN (z0 + block, nz), y1 = MIN (y0 + block, ny),
                      x1 = MIN (x0 + block, nx);
          /* The buckets the block overlaps. */
          const gint64 bz0 = z0 / b, bz1 = (z1 - 1) / b;
          const gint64 by0 = y0 / b, by1 = (y1 - 1) / b;
          const gint64 bx0 = x0 / b, bx1 = (x1 - 1) / b;
          guint n_cand = 0;
          gint64 upper = G_MAXINT64;

          for (gint64 ring = 0;; ring++)
            {
              const gint64 lz = bz0 - ring, hz = bz1 + ring;
              const gint64 ly = by0 - ring, hy = by1 + ring;
              const gint64 lx = bx0 - ring, hx = bx1 + ring;
              gboolean ring_exists = FALSE;
              for (gint64 cz = MAX (lz, 0); cz <= MIN (hz, (gint64)gz - 1); cz++)
                for (gint64 cy = MAX (ly, 0); cy <= MIN (hy, (gint64)gy - 1); cy++)
                  for (gint64 cx = MAX (lx, 0); cx <= MIN (hx, (gint64)gx - 1); cx++)
                    {
                      if (ring > 0 && cz != lz && cz != hz && cy != ly && cy != hy && cx != lx
                          && cx != hx)
                        continue;
                      ring_exists = TRUE;
                      gsize bi = ((gsize)cz * gy + (gsize)cy) * gx + (gsize)cx;
                      for (guint k = bucket_start[bi]; k < bucket_start[bi + 1]; k++)
                        {
                          guint s = bucket_seeds[k];
                          gint64 nzd, fzd, nyd, fyd, nxd, fxd;
                          axis_bounds (seeds[s].z, z0, z1 - 1, &nzd, &fzd);
                          axis_bounds (seeds[s].y, y0, y1 - 1, &nyd, &fyd);
                          axis_bounds (seeds[s].x, x0, x1 - 1, &nxd, &fxd);
                          upper = MIN (upper, fzd + fyd + fxd);
                          cand[n_cand++] = s;
                        }
                    }

              /* A seed in a bucket beyond this ring lies at least
               * ring*b + 1 voxels from the block along some axis. */
              gint64 reach = ring * (gint64)b + 1;
              if (!ring_exists || (n_cand > 0 && upper < reach * reach))
                break;
            }

          guint n_keep = 0;
          for (guint c = 0; c < n_cand; c++)
            {
              const Point *p = &seeds[cand[c]];
              gint64 nzd, nyd, nxd, f;
              axis_bounds (p->z, z0, z1 - 1, &nzd, &f);
              axis_bounds (p->y, y0, y1 - 1, &nyd, &f);
              axis_bounds (p->x, x0, x1 - 1, &nxd, &f);
              if (nzd + nyd + nxd <= upper)
                keep[n_keep++] = cand[c];
            }

          for (guint z = z0; z < z1; z++)
            for (guint y = y0; y < y1; y++)
              {
                gint32 *row = out + ((gsize)z * ny + y) * nx;
                for (guint x = x0; x < x1; x++)
                  {
                    gint64 best_d = G_MAXINT64;
                    guint best_s = G_MAXUINT;
                    for (guint c = 0; c < n_keep; c++)
                      {
                        const Point *p = &seeds[keep[c]];
                        gint64 dz = p->z - z, dy = p->y - y, dx = p->x - x;
                        gint64 dd = dz * dz + dy * dy + dx * dx;
                        if (dd < best_d || (dd == best_d && keep[c] < best_s))
                          {
                            best_d = dd;
                            best_s = keep[c];
                          }
                      }
                    row[x] = (gint32)best_s + 1;
                  }
              }
        }
}

static gboolean
check_shape (guint nz, guint ny, guint nx, GError **error)
{
  if (nz == 0 || ny == 0 || nx == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "a synthetic volume needs at least one voxel per axis, not %u×%u×%u", nz, ny,
                   nx);
      return FALSE;
    }
  return TRUE;
}

/* Adds noise_sigma * N(0,1) to every value in voxel order, then clamps. */
static void
add_noise_and_clamp (float *data, gsize n, double noise_sigma, SvRng *rng)
{
  for (gsize i = 0; i < n; i++)
    {
      double v = data[i];
      if (noise_sigma > 0.0)
        v += noise_sigma * sv_rng_normal (rng);
      data[i] = (float)CLAMP (v, 0.0, 1.0);
    }
}

SvVolume *
sv_synth_cells (const SvSynthParams *params, SvLabels **truth, GError **error)
{
  g_return_val_if_fail (params != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  const guint nz = params->nz, ny = params->ny, nx = params->nx;
  if (!check_shape (nz, ny, nx, error))
    return NULL;
  const gsize n_vox = (gsize)nz * ny * nx;
  if (params->n_cells == 0 || params->n_cells > n_vox)
    {
      g_set_error (
          error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
          "the number of cells must be between 1 and the number of voxels (%" G_GSIZE_FORMAT
          "), not %u",
          n_vox, params->n_cells);
      return NULL;
    }
  if (!(params->nucleus_radius >= 0.0) || !isfinite (params->nucleus_radius)
      || !(params->blur_sigma >= 0.0) || !isfinite (params->blur_sigma)
      || !(params->noise_sigma >= 0.0) || !isfinite (params->noise_sigma))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "nucleus radius, blur sigma and noise sigma must be finite and ≥ 0 "
                   "(got %g, %g, %g)",
                   params->nucleus_radius, params->blur_sigma, params->noise_sigma);
      return NULL;
    }

  g_autoptr (SvVolume) volume = sv_volume_new (nz, ny, nx, 1, error);
  if (volume == NULL)
    return NULL;
  g_autoptr (SvLabels) labels = sv_labels_new (nz, ny, nx, error);
  if (labels == NULL)
    return NULL;

  SvRng rng;
  sv_rng_init (&rng, params->seed);
  const guint n_cells = params->n_cells;

  /* Seeds on distinct voxel centres: every cell then owns at least its seed
   * voxel, so the truth covers 1..n_cells. */
  g_autofree Point *seeds = g_new (Point, n_cells);
  {
    g_autoptr (GHashTable) taken = g_hash_table_new (g_int64_hash, g_int64_equal);
    g_autofree gint64 *keys = g_new (gint64, n_cells);
    for (guint s = 0; s < n_cells;)
      {
        gint64 z = (gint64)sv_rng_below (&rng, nz);
        gint64 y = (gint64)sv_rng_below (&rng, ny);
        gint64 x = (gint64)sv_rng_below (&rng, nx);
        keys[s] = (z * ny + y) * nx + x;
        if (g_hash_table_contains (taken, &keys[s]))
          continue;
        g_hash_table_add (taken, &keys[s]);
        seeds[s] = (Point){ z, y, x };
        s++;
      }
  }

  /* Distinct means evenly spread over [0.2, 0.6], dealt out to the cells in
   * a shuffled order (Fisher–Yates) so neighbours differ at random. */
  g_autofree double *mean = g_new (double, n_cells);
  for (guint s = 0; s < n_cells; s++)
    mean[s] = n_cells > 1 ? 0.2 + 0.4 * (double)s / (double)(n_cells - 1) : 0.4;
  for (guint s = n_cells - 1; s > 0; s--)
    {
      guint j = (guint)sv_rng_below (&rng, (guint64)s + 1);
      double t = mean[s];
      mean[s] = mean[j];
      mean[j] = t;
    }

  voronoi_label (seeds, n_cells, nz, ny, nx, labels->data);

  float *v = volume->data;
  for (gsize i = 0; i < n_vox; i++)
    v[i] = (float)mean[labels->data[i] - 1];

  /* Nuclei: a ball around each seed, limited to the seed's own cell. */
  const double r = params->nucleus_radius;
  if (r > 0.0)
    {
      const gint64 ri = (gint64)floor (r);
      const double r2 = r * r;
      for (guint s = 0; s < n_cells; s++)
        {
          const Point p = seeds[s];
          for (gint64 z = MAX (p.z - ri, 0); z <= MIN (p.z + ri, (gint64)nz - 1); z++)
            for (gint64 y = MAX (p.y - ri, 0); y <= MIN (p.y + ri, (gint64)ny - 1); y++)
              for (gint64 x = MAX (p.x - ri, 0); x <= MIN (p.x + ri, (gint64)nx - 1); x++)
                {
                  gint64 dz = z - p.z, dy = y - p.y, dx = x - p.x;
                  if ((double)(dz * dz + dy * dy + dx * dx) > r2)
                    continue;
                  gsize i = ((gsize)z * ny + (gsize)y) * nx + (gsize)x;
                  if (labels->data[i] == (gint32)s + 1)
                    v[i] = (float)(mean[s] + 0.3);
                }
        }
    }

  gaussian_blur (v, nz, ny, nx, params->blur_sigma);
  add_noise_and_clamp (v, n_vox, params->noise_sigma, &rng);

  if (truth != NULL)
    *truth = g_steal_pointer (&labels);
  return g_steal_pointer (&volume);
}

static int
compare_float (const void *a, const void *b)
{
  float fa = *(const float *)a, fb = *(const float *)b;
  return (fa > fb) - (fa < fb);
}

/* The k-th smallest value (0-based) of a[0..n), reordering a: quickselect
 * with a median-of-three pivot, finishing small ranges by sorting. */
static float
select_kth (float *a, gsize n, gsize k)
{
  gsize lo = 0, hi = n;
  while (hi - lo > 16)
    {
      gsize mid = lo + (hi - lo) / 2;
      float x = a[lo], y = a[mid], z = a[hi - 1];
      float pivot = MAX (MIN (x, y), MIN (MAX (x, y), z));
      /* Three-way partition: [lo, lt) < pivot, [lt, gt) == pivot, [gt, hi) > pivot. */
      gsize lt = lo, i = lo, gt = hi;
      while (i < gt)
        {
          if (a[i] < pivot)
            {
              float t = a[lt];
              a[lt++] = a[i];
              a[i++] = t;
            }
          else if (a[i] > pivot)
            {
              float t = a[--gt];
              a[gt] = a[i];
              a[i] = t;
            }
          else
            i++;
        }
      if (k < lt)
        hi = lt;
      else if (k >= gt)
        lo = gt;
      else
        return pivot;
    }
  qsort (a + lo, hi - lo, sizeof (float), compare_float);
  return a[k];
}

SvVolume *
sv_synth_blobs (guint nz, guint ny, guint nx, double blob_size_fraction, double volume_fraction,
                guint64 seed, GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_shape (nz, ny, nx, error))
    return NULL;
  if (!(blob_size_fraction > 0.0 && blob_size_fraction <= 1.0)
      || !(volume_fraction >= 0.0 && volume_fraction <= 1.0))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "blob size fraction must be in (0, 1] and volume fraction in [0, 1] "
                   "(got %g and %g)",
                   blob_size_fraction, volume_fraction);
      return NULL;
    }

  g_autoptr (SvVolume) volume = sv_volume_new (nz, ny, nx, 1, error);
  if (volume == NULL)
    return NULL;

  const gsize n_vox = (gsize)nz * ny * nx;
  const int d = n_dims_of (nz, ny, nx);
  const double length = MAX (nz, MAX (ny, nx));
  /* As skimage.data.binary_blobs on a cube of side `length`: (1/fraction)^d
   * points; for other shapes the same density of points per voxel. */
  double per_axis = length * blob_size_fraction;
  double n_pts_f = floor ((double)n_vox / pow (per_axis, d) + 0.5);
  if (nz == length && ny == length && nx == length)
    n_pts_f = pow (floor (1.0 / blob_size_fraction), d);
  gsize n_pts = n_pts_f < 1.0 ? 1 : (gsize)MIN (n_pts_f, (double)n_vox);

  SvRng rng;
  sv_rng_init (&rng, seed);
  float *v = volume->data;
  for (gsize p = 0; p < n_pts; p++)
    {
      gsize z = (gsize)sv_rng_below (&rng, nz);
      gsize y = (gsize)sv_rng_below (&rng, ny);
      gsize x = (gsize)sv_rng_below (&rng, nx);
      v[(z * ny + y) * nx + x] = 1.0f;
    }

  gaussian_blur (v, nz, ny, nx, 0.25 * length * blob_size_fraction);

  /* numpy.percentile(mask, 100 * (1 - volume_fraction)) with linear
   * interpolation, then mask >= threshold. */
  g_autofree float *sorted = g_memdup2 (v, n_vox * sizeof (float));
  double pos = (1.0 - volume_fraction) * (double)(n_vox - 1);
  gsize k = (gsize)floor (pos);
  double frac = pos - (double)k;
  float lo = select_kth (sorted, n_vox, k);
  double threshold = lo;
  if (frac > 0.0 && k + 1 < n_vox)
    {
      /* After selection every element past k is ≥ a[k]: the next order
       * statistic is their minimum. */
      float next = sorted[k + 1];
      for (gsize i = k + 2; i < n_vox; i++)
        next = MIN (next, sorted[i]);
      threshold = (double)lo + frac * ((double)next - (double)lo);
    }

  for (gsize i = 0; i < n_vox; i++)
    v[i] = (double)v[i] >= threshold ? 1.0f : 0.0f;

  return g_steal_pointer (&volume);
}

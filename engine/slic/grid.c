/* Supervox engine: grid seeding, as scikit-image's util.regular_grid and
 * segmentation._get_grid_centroids, plus deterministic maskSLIC seeding. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-memory.h"
#include "supervox/sv-seeds.h"

#include <math.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-slic-arith.h"
#include "internal.h"

void
sv_regular_grid (const guint shape_zyx[3], double n_points, guint start[3], guint step[3])
{
  const int ndim = 3;
  int order[3] = { 0, 1, 2 };
  double sorted[3], steps[3];
  double space;

  /* Stable ascending sort of the axes (numpy's argsort on 3 values is an
   * insertion sort, hence stable). */
  for (int i = 1; i < ndim; i++)
    for (int j = i; j > 0 && shape_zyx[order[j - 1]] > shape_zyx[order[j]]; j--)
      {
        int t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
  for (int i = 0; i < ndim; i++)
    sorted[i] = (double)shape_zyx[order[i]];

  space = sorted[0] * sorted[1] * sorted[2];
  if (space <= n_points)
    {
      for (int i = 0; i < ndim; i++)
        {
          start[i] = 0;
          step[i] = 1;
        }
      return;
    }

  for (int i = 0; i < ndim; i++)
    steps[i] = pow (space / n_points, 1.0 / ndim);

  if (sorted[0] < steps[0] || sorted[1] < steps[1] || sorted[2] < steps[2])
    {
      /* Axes shorter than the step are fixed at their length and the
       * remaining ones share the rest with a lower root. */
      for (int dim = 0; dim < ndim - 1; dim++)
        {
          double rest = 1.0;
          gboolean all_fit = TRUE;

          steps[dim] = sorted[dim];
          for (int j = dim + 1; j < ndim; j++)
            rest *= sorted[j];
          for (int j = dim + 1; j < ndim; j++)
            steps[j] = pow (rest / n_points, 1.0 / (ndim - dim - 1));
          for (int j = 0; j < ndim; j++)
            all_fit = all_fit && sorted[j] >= steps[j];
          if (all_fit)
            break;
        }
    }

  for (int i = 0; i < ndim; i++)
    {
      /* numpy: starts = (steps // 2).astype(int); steps = np.round(steps),
       * which rounds half to even (nearbyint in the default rounding mode). */
      double s = nearbyint (steps[i]);
      start[order[i]] = (guint)floor (steps[i] / 2.0);
      step[order[i]] = s < 1.0 ? 1 : (guint)s;
    }
}

void
sv_seeds_clear (SvSeeds *seeds)
{
  g_clear_pointer (&seeds->zyx, g_free);
  seeds->n = 0;
}

/* The number of grid points of one axis. */
static gsize
grid_count (guint dim, guint start, guint step)
{
  return start < dim ? (dim - start + step - 1) / step : 0;
}

/* Window steps as _slic_cython computes them: regular_grid(shape, K). */
static void
window_steps (const guint shape_zyx[3], gsize k, int window_step[3])
{
  guint start[3], step[3];

  sv_regular_grid (shape_zyx, (double)k, start, step);
  for (int a = 0; a < 3; a++)
    window_step[a] = (int)step[a];
}

gboolean
sv_seeds_grid (const guint shape_zyx[3], gint64 n_segments, SvSeeds *seeds, GError **error)
{
  guint start[3], step[3];
  gsize count[3], n, i = 0;

  memset (seeds, 0, sizeof *seeds);
  if (n_segments < 1)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "n_segments must be >= 1, got %" G_GINT64_FORMAT, n_segments);
      return FALSE;
    }
  if (shape_zyx[0] == 0 || shape_zyx[1] == 0 || shape_zyx[2] == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "the volume is empty (%u×%u×%u)", shape_zyx[0], shape_zyx[1], shape_zyx[2]);
      return FALSE;
    }

  sv_regular_grid (shape_zyx, (double)n_segments, start, step);
  for (int a = 0; a < 3; a++)
    count[a] = grid_count (shape_zyx[a], start[a], step[a]);
  n = count[0] * count[1] * count[2];

  seeds->zyx = sv_try_alloc_n (n * 3, sizeof (float), FALSE, error,
                               "%" G_GSIZE_FORMAT " seeds", n);
  if (seeds->zyx == NULL)
    return FALSE;
  for (gsize z = 0; z < count[0]; z++)
    for (gsize y = 0; y < count[1]; y++)
      for (gsize x = 0; x < count[2]; x++, i++)
        {
          seeds->zyx[3 * i + 0] = (float)(start[0] + z * step[0]);
          seeds->zyx[3 * i + 1] = (float)(start[1] + y * step[1]);
          seeds->zyx[3 * i + 2] = (float)(start[2] + x * step[2]);
        }
  seeds->n = n;
  seeds->step = (float)MAX (step[0], MAX (step[1], step[2]));
  window_steps (shape_zyx, n, seeds->window_step);
  return TRUE;
}

/* Marks the part in slices [z0, z1) of the search window of a seed at
 * (z, y, x) as covered; `covered` holds those slices. */
static void
cover_window (const guint shape[3], const int window_step[3], const float *zyx, guint z0, guint z1,
              guint8 *covered)
{
  int lo[3], hi[3];

  for (int a = 0; a < 3; a++)
    sv_arith_window (zyx[a], window_step[a], (int)shape[a], &lo[a], &hi[a]);
  for (int z = MAX (lo[0], (int)z0); z < MIN (hi[0], (int)z1); z++)
    for (int y = lo[1]; y < hi[1]; y++)
      memset (covered + ((gsize)(z - (int)z0) * shape[1] + (gsize)y) * shape[2] + lo[2], 1,
              (gsize)(hi[2] - lo[2]));
}

/* Marks every voxel of slices [z0, z1) inside some seed's search window,
 * in O(voxels + seeds): +1/-1 at the corners of each window box (cut to
 * the slices) in a difference array `count` of (z1 − z0 + 1)·(ny + 1)·
 * (nx + 1), then prefix sums along x, y and z give each voxel its number
 * of windows. */
static void
cover_all (const guint shape[3], const int window_step[3], const float *zyx, gsize n_seeds,
           guint z0, guint z1, gint32 *count, guint8 *covered)
{
  const gsize dz = z1 - z0 + 1, dy = shape[1] + 1, dx = shape[2] + 1;

  memset (count, 0, dz * dy * dx * sizeof *count);
  for (gsize k = 0; k < n_seeds; k++)
    {
      int lo[3], hi[3];
      for (int a = 0; a < 3; a++)
        sv_arith_window (zyx[3 * k + a], window_step[a], (int)shape[a], &lo[a], &hi[a]);
      lo[0] = MAX (lo[0], (int)z0) - (int)z0;
      hi[0] = MIN (hi[0], (int)z1) - (int)z0;
      if (lo[0] >= hi[0])
        continue;
      for (int corner = 0; corner < 8; corner++)
        {
          const gsize z = (gsize)(corner & 4 ? hi[0] : lo[0]);
          const gsize y = (gsize)(corner & 2 ? hi[1] : lo[1]);
          const gsize x = (gsize)(corner & 1 ? hi[2] : lo[2]);
          /* Inclusion-exclusion: the sign flips with each upper corner. */
          const int sign = (((corner >> 2) + (corner >> 1) + corner) & 1) ? -1 : 1;
          count[(z * dy + y) * dx + x] += sign;
        }
    }
  for (gsize z = 0; z < dz; z++)
    for (gsize y = 0; y < dy; y++)
      for (gsize x = 1; x < dx; x++)
        count[(z * dy + y) * dx + x] += count[(z * dy + y) * dx + x - 1];
  for (gsize z = 0; z < dz; z++)
    for (gsize y = 1; y < dy; y++)
      for (gsize x = 0; x < dx; x++)
        count[(z * dy + y) * dx + x] += count[(z * dy + y - 1) * dx + x];
  for (gsize z = 1; z < dz; z++)
    for (gsize y = 0; y < dy; y++)
      for (gsize x = 0; x < dx; x++)
        count[(z * dy + y) * dx + x] += count[((z - 1) * dy + y) * dx + x];
  for (gsize z = 0; z + 1 < dz; z++)
    for (gsize y = 0; y < shape[1]; y++)
      for (gsize x = 0; x < shape[2]; x++)
        covered[(z * shape[1] + y) * shape[2] + x] = count[(z * dy + y) * dx + x] > 0;
}

static int
compare_zyx (gconstpointer a, gconstpointer b)
{
  const float *p = a, *q = b;

  for (int i = 0; i < 3; i++)
    if (p[i] != q[i])
      return p[i] < q[i] ? -1 : 1;
  return 0;
}

static const guint8 *
whole_mask_slab (gpointer user_data, guint z0, guint z1, GError **error)
{
  (void)z0;
  (void)z1;
  (void)error;
  return user_data;
}

gboolean
sv_seeds_mask (const guint shape_zyx[3], const guint8 *mask, gint64 n_segments, SvSeeds *seeds,
               GError **error)
{
  return sv__seeds_mask_slabs (shape_zyx, whole_mask_slab, (gpointer)mask, MAX (shape_zyx[0], 1),
                               n_segments, seeds, error);
}

/* The mask's voxel count and bounding box [lo, hi], in one pass. */
static gboolean
mask_extent (const guint shape[3], SvMaskSlabFunc slab, gpointer user_data, guint depth,
             gsize *n_in, guint lo[3], guint hi[3], GError **error)
{
  const gsize ny = shape[1], nx = shape[2];

  *n_in = 0;
  for (int a = 0; a < 3; a++)
    {
      lo[a] = G_MAXUINT;
      hi[a] = 0;
    }
  for (guint z0 = 0; z0 < shape[0]; z0 += depth)
    {
      const guint z1 = MIN (z0 + depth, shape[0]);
      const guint8 *mask = slab (user_data, z0, z1, error);

      if (mask == NULL)
        return FALSE;
      for (gsize z = z0; z < z1; z++)
        for (gsize y = 0; y < ny; y++)
          for (gsize x = 0; x < nx; x++)
            if (mask[(z * ny + y) * nx + x])
              {
                const guint p[3] = { (guint)z, (guint)y, (guint)x };
                (*n_in)++;
                for (int a = 0; a < 3; a++)
                  {
                    lo[a] = MIN (lo[a], p[a]);
                    hi[a] = MAX (hi[a], p[a]);
                  }
              }
    }
  return TRUE;
}

gboolean
sv__seeds_mask_slabs (const guint shape_zyx[3], SvMaskSlabFunc slab, gpointer user_data,
                      guint depth, gint64 n_segments, SvSeeds *seeds, GError **error)
{
  const gsize ny = shape_zyx[1], nx = shape_zyx[2];
  guint start[3], step[3];
  gsize n_in = 0;
  g_autoptr (GArray) zyx = NULL;
  g_autofree guint8 *covered = NULL;
  g_autofree gint32 *count = NULL;
  guint lo[3], hi[3], box[3];
  int wstep[3];

  memset (seeds, 0, sizeof *seeds);
  depth = MAX (depth, 1);
  if (n_segments < 1)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "n_segments must be >= 1, got %" G_GINT64_FORMAT, n_segments);
      return FALSE;
    }
  if (!mask_extent (shape_zyx, slab, user_data, depth, &n_in, lo, hi, error))
    return FALSE;
  if (n_in == 0)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "the mask is empty: no voxel is inside it");
      return FALSE;
    }

  /* A regular grid over the mask's bounding box, as dense over the mask as
   * n_segments would be over the whole box; its points inside the mask are
   * the first seeds. */
  for (int a = 0; a < 3; a++)
    box[a] = hi[a] - lo[a] + 1;
  sv_regular_grid (box, (double)n_segments * ((double)box[0] * box[1] * box[2]) / (double)n_in,
                   start, step);
  zyx = g_array_new (FALSE, FALSE, sizeof (float) * 3);
  for (gsize z = lo[0] + start[0]; z <= hi[0];)
    {
      const guint z1 = MIN ((guint)z + depth, shape_zyx[0]);
      const guint8 *mask = slab (user_data, (guint)z, z1, error);

      if (mask == NULL)
        return FALSE;
      for (; z < z1 && z <= hi[0]; z += step[0])
        for (gsize y = lo[1] + start[1]; y <= hi[1]; y += step[1])
          for (gsize x = lo[2] + start[2]; x <= hi[2]; x += step[2])
            if (mask[(z * ny + y) * nx + x])
              {
                float p[3] = { (float)z, (float)y, (float)x };
                g_array_append_val (zyx, p);
              }
    }

  /* Add a seed at every mask-in voxel no seed window reaches. Adding seeds
   * shrinks the windows (they follow regular_grid(shape, K)), so repeat
   * until a pass adds nothing. A slab is covered by the windows of every
   * seed so far, those added in earlier slabs of this pass included, which
   * is what one map of the whole volume holds when the scan reaches it. */
  covered = g_malloc ((gsize)depth * ny * nx);
  count = g_new (gint32, ((gsize)depth + 1) * (ny + 1) * (nx + 1));
  for (;;)
    {
      gsize added = 0;

      window_steps (shape_zyx, zyx->len, wstep);
      for (guint z0 = 0; z0 < shape_zyx[0]; z0 += depth)
        {
          const guint z1 = MIN (z0 + depth, shape_zyx[0]);
          const guint8 *mask = slab (user_data, z0, z1, error);

          if (mask == NULL)
            return FALSE;
          cover_all (shape_zyx, wstep, (const float *)zyx->data, zyx->len, z0, z1, count, covered);
          for (gsize z = z0; z < z1; z++)
            for (gsize y = 0; y < ny; y++)
              for (gsize x = 0; x < nx; x++)
                {
                  gsize v = (z * ny + y) * nx + x;
                  if (mask[v] && !covered[v - (gsize)z0 * ny * nx])
                    {
                      float p[3] = { (float)z, (float)y, (float)x };
                      g_array_append_val (zyx, p);
                      cover_window (shape_zyx, wstep, p, z0, z1, covered);
                      added++;
                    }
                }
        }
      if (added == 0)
        break;
    }

  g_array_sort (zyx, compare_zyx);
  seeds->n = zyx->len;
  seeds->zyx = (float *)g_array_free (g_steal_pointer (&zyx), FALSE);
  seeds->step = (float)MAX (step[0], MAX (step[1], step[2]));
  memcpy (seeds->window_step, wstep, sizeof wstep);
  return TRUE;
}

void
sv_slic_search_window (const guint shape_zyx[3], gsize n_clusters, const float centre_zyx[3],
                       int lo[3], int hi[3])
{
  guint start[3], step[3];

  sv_regular_grid (shape_zyx, (double)n_clusters, start, step);
  for (int a = 0; a < 3; a++)
    sv_arith_window (centre_zyx[a], (int)step[a], (int)shape_zyx[a], &lo[a], &hi[a]);
}

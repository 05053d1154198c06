/* Supervox engine: the prepare stage (rescale, Lab, smoothing), in the
 * order and arithmetic of scikit-image's slic(): float32, except the
 * rescale and Lab of sources it computes in float64. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-memory.h"
#include "supervox/sv-prepare.h"

#include <math.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-run-plan.h"
#include "internal.h"

void
sv_prepared_free (SvPrepared *prepared)
{
  if (prepared == NULL)
    return;
  g_free (prepared->data);
  g_free (prepared);
}

/* One chunk of voxels scanned or rewritten by one thread. */
typedef struct
{
  float *data;
  guint nc;
  const guint8 *mask;
  gsize first, end;
  /* scan results */
  float min, max;
  gboolean any_in;
  gsize n_nan, n_inf;
  gsize first_bad; /* voxel index of the first non-finite mask-in value */
  /* rewrite parameters */
  float shift, scale;
  gboolean divide;
} RescaleChunk;

/* Four values at a time, for the scan without a mask. */
typedef float ScanF __attribute__ ((vector_size (4 * sizeof (float))));
typedef gint32 ScanI __attribute__ ((vector_size (4 * sizeof (gint32))));

/* The scan of a chunk without a mask, four values at a time: taken only
 * where it gives what the voxel loop gives, that is when every value is
 * finite (NaN and infinities are counted there) and neither extreme is a
 * zero (the voxel loop keeps the later of equal values, which tells −0
 * from +0; any other extreme is one float, wherever it was found). */
static gboolean
scan_plain (RescaleChunk *ch)
{
  const float *v = ch->data + ch->first * ch->nc;
  const gsize n = (ch->end - ch->first) * ch->nc;
  ScanF lo = { INFINITY, INFINITY, INFINITY, INFINITY };
  ScanF hi = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
  ScanI bad = { 0, 0, 0, 0 };
  float mn = INFINITY, mx = -INFINITY;
  gboolean odd = FALSE;
  gsize i = 0;

  for (; i + 4 <= n; i += 4)
    {
      ScanF x;
      ScanI bits, below, above;

      memcpy (&x, v + i, sizeof x);
      bits = (ScanI)x;
      bad |= (bits & 0x7f800000) == 0x7f800000;
      below = x < lo;
      above = x > hi;
      lo = (ScanF)((below & (ScanI)x) | (~below & (ScanI)lo));
      hi = (ScanF)((above & (ScanI)x) | (~above & (ScanI)hi));
    }
  for (int l = 0; l < 4; l++)
    {
      odd |= bad[l] != 0;
      mn = MIN (mn, lo[l]);
      mx = MAX (mx, hi[l]);
    }
  for (; i < n; i++)
    {
      odd |= !isfinite (v[i]);
      mn = MIN (mn, v[i]);
      mx = MAX (mx, v[i]);
    }
  if (odd || mn == 0.0f || mx == 0.0f)
    return FALSE;
  ch->min = mn;
  ch->max = mx;
  ch->any_in = n > 0;
  ch->n_nan = ch->n_inf = 0;
  ch->first_bad = G_MAXSIZE;
  return TRUE;
}

static gpointer
scan_chunk (gpointer user_data)
{
  RescaleChunk *ch = user_data;

  if (ch->mask == NULL && scan_plain (ch))
    return NULL;
  ch->min = INFINITY;
  ch->max = -INFINITY;
  ch->any_in = FALSE;
  ch->n_nan = ch->n_inf = 0;
  ch->first_bad = G_MAXSIZE;
  for (gsize i = ch->first; i < ch->end; i++)
    {
      if (ch->mask != NULL && ch->mask[i] == 0)
        continue;
      gboolean nan, inf;

      sv__scan_voxel (ch->data + i * ch->nc, ch->nc, &ch->min, &ch->max, &ch->any_in, &nan, &inf);
      if (nan || inf)
        {
          ch->n_nan += nan;
          ch->n_inf += inf && !nan;
          if (ch->first_bad == G_MAXSIZE)
            ch->first_bad = i;
        }
    }
  return NULL;
}

static gpointer
rewrite_chunk (gpointer user_data)
{
  RescaleChunk *ch = user_data;
  const gsize first = ch->first * ch->nc, end = ch->end * ch->nc;

  /* numpy: image -= image.min(); image /= imax, both in float32. */
  for (gsize i = first; i < end; i++)
    {
      float v = ch->data[i] - ch->shift;
      if (ch->divide)
        v = v / ch->scale;
      ch->data[i] = v;
    }
  /* Masked-out voxels may hold NaN/inf; zero them so smoothing cannot carry
   * them into the mask. */
  for (gsize i = first; i < end; i++)
    if (!isfinite (ch->data[i]) && ch->mask != NULL && ch->mask[i / ch->nc] == 0)
      ch->data[i] = 0.0f;
  return NULL;
}

/* Runs `func` on every chunk, one thread each; chunk 0 on the caller. */
static void
run_chunks (RescaleChunk *chunks, gsize n, GThreadFunc func)
{
  g_autofree GThread **threads = g_new0 (GThread *, n);
  for (gsize t = 1; t < n; t++)
    threads[t] = g_thread_new ("sv-rescale", func, &chunks[t]);
  func (&chunks[0]);
  for (gsize t = 1; t < n; t++)
    g_thread_join (threads[t]);
}

/* Voxels per thread below which one thread is faster. */
#define SV_RESCALE_MIN_CHUNK ((gsize)1 << 18)

/* The mask-in range of step 1 over all channels. */
typedef struct
{
  float min, max;
  gboolean any_in;
} ValueRange;

/* Scans the mask-in values for their range; fails on NaN/inf among them.
 * ny == 0: no shape known, voxels are named by their index. */
static gboolean
scan_shaped (RescaleChunk *chunks, gsize n_workers, guint ny, guint nx, ValueRange *range,
             GError **error)
{
  gsize n_nan = 0, n_inf = 0, first_bad = G_MAXSIZE;

  run_chunks (chunks, n_workers, scan_chunk);
  range->min = INFINITY;
  range->max = -INFINITY;
  range->any_in = FALSE;
  for (gsize t = 0; t < n_workers; t++)
    {
      range->min = MIN (range->min, chunks[t].min);
      range->max = MAX (range->max, chunks[t].max);
      range->any_in |= chunks[t].any_in;
      n_nan += chunks[t].n_nan;
      n_inf += chunks[t].n_inf;
      first_bad = MIN (first_bad, chunks[t].first_bad);
    }
  if (n_nan + n_inf > 0)
    {
      sv_set_non_finite_error (error, n_nan, n_inf, first_bad, ny, nx);
      return FALSE;
    }
  return TRUE;
}

/* Steps 1 and 2 (when `lab`) in place, in the float type scikit-image
 * gives a source of `type`: Lab of a float64 source takes both steps in
 * float64 (sv_rgb_to_lab_double); everything else runs in float32. */
static gboolean
rescale_shaped (float *data, gsize n_voxels, guint ny, guint nx, guint nc, const guint8 *mask,
                int n_threads, gboolean lab, SvSampleType type, GError **error)
{
  gsize n_workers = n_threads > 0 ? (gsize)n_threads : (gsize)g_get_num_processors ();
  n_workers = CLAMP (n_workers, 1, MAX (n_voxels / SV_RESCALE_MIN_CHUNK, 1));
  ValueRange range;

  if (n_voxels == 0 || nc == 0)
    return TRUE;

  g_autofree RescaleChunk *chunks = g_new0 (RescaleChunk, n_workers);
  for (gsize t = 0; t < n_workers; t++)
    {
      chunks[t].data = data;
      chunks[t].nc = nc;
      chunks[t].mask = mask;
      chunks[t].first = n_voxels * t / n_workers;
      chunks[t].end = n_voxels * (t + 1) / n_workers;
    }
  if (!scan_shaped (chunks, n_workers, ny, nx, &range, error))
    return FALSE;

  if (lab && sv_sample_type_float64 (type))
    {
      SvRescale64 rescale;

      sv_rescale64_init (&rescale, type, range.any_in, range.min, range.max);
      sv_rgb_to_lab_double (data, n_voxels, &rescale, mask);
      return TRUE;
    }

  float shift = 0.0f, scale = 1.0f;
  gboolean divide = FALSE;
  if (range.any_in)
    {
      shift = range.min;
      /* max(v - min) is (max - min) rounded once: float rounding is monotonic. */
      scale = range.max - range.min;
      divide = scale != 0.0f;
    }
  for (gsize t = 0; t < n_workers; t++)
    {
      chunks[t].shift = shift;
      chunks[t].scale = scale;
      chunks[t].divide = divide;
    }
  run_chunks (chunks, n_workers, rewrite_chunk);
  if (lab)
    sv_rgb_to_lab (data, n_voxels);
  return TRUE;
}

void
sv_set_non_finite_error (GError **error, gsize n_nan, gsize n_inf, gsize first_bad, guint ny,
                         guint nx)
{
  g_autofree char *where = NULL;
  g_autofree char *what = NULL;

  if (ny == 0 || nx == 0)
    where = g_strdup_printf ("voxel %" G_GSIZE_FORMAT, first_bad);
  else
    where = g_strdup_printf ("z=%" G_GSIZE_FORMAT ", y=%" G_GSIZE_FORMAT ", x=%" G_GSIZE_FORMAT,
                             first_bad / ((gsize)ny * nx), (first_bad / nx) % ny, first_bad % nx);
  if (n_nan > 0 && n_inf > 0)
    what = g_strdup_printf ("NaN values at %" G_GSIZE_FORMAT
                            " voxels and infinite values at %" G_GSIZE_FORMAT " voxels",
                            n_nan, n_inf);
  else if (n_nan > 0)
    what = g_strdup_printf ("NaN values at %" G_GSIZE_FORMAT " voxel%s", n_nan,
                            n_nan == 1 ? "" : "s");
  else
    what = g_strdup_printf ("infinite values at %" G_GSIZE_FORMAT " voxel%s", n_inf,
                            n_inf == 1 ? "" : "s");
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
               "image has %s (first at %s); mask them out or fix the input", what, where);
}

gboolean
sv_rescale (float *data, gsize n_voxels, guint nc, const guint8 *mask, GError **error)
{
  g_return_val_if_fail (data != NULL || n_voxels == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return rescale_shaped (data, n_voxels, 0, 0, nc, mask, 0, FALSE, SV_SAMPLE_F32, error);
}

SvPrepared *
sv_prepare (const SvVolume *volume, const guint8 *mask, const SvSlicParams *params, int n_threads,
            GError **error)
{
  g_return_val_if_fail (volume != NULL, NULL);
  g_return_val_if_fail (params != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!sv_slic_params_validate (params, error))
    return NULL;

  const guint nz = volume->nz, ny = volume->ny, nx = volume->nx, nc = volume->nc;
  gboolean lab;
  if (!sv_run_lab_applies (params->convert2lab, nz, nc, &lab, error))
    return NULL;

  const gsize n_voxels = (gsize)nz * ny * nx;
  const gsize n_values = n_voxels * nc;
  g_autoptr (SvPrepared) prepared = g_new0 (SvPrepared, 1);
  prepared->nz = nz;
  prepared->ny = ny;
  prepared->nx = nx;
  prepared->nc = nc;
  prepared->is_lab = lab;
  prepared->data = sv_try_alloc_n (n_values, sizeof (float), FALSE, error,
                                   "a %u×%u×%u×%u working copy of the image", nz, ny, nx, nc);
  if (prepared->data == NULL)
    return NULL;
  if (n_values > 0)
    memcpy (prepared->data, volume->data, n_values * sizeof (float));

  if (!rescale_shaped (prepared->data, n_voxels, ny, nx, nc, mask, n_threads, lab,
                       volume->source_type, error))
    return NULL;

  float sigma[3];
  sv_slic_params_effective_sigma (params, sigma);
  sv_gaussian_smooth (prepared->data, nz, ny, nx, nc, sigma, n_threads);

  float max_abs = 0.0f;
  if (mask == NULL)
    {
      /* Every value is finite here (the rescale refused NaN and
       * infinities), and the bits of |v| order as |v| does: an integer
       * maximum, which the compiler vectorises, is the same float. */
      guint32 top = 0;
      for (gsize i = 0; i < n_values; i++)
        {
          guint32 bits;
          memcpy (&bits, &prepared->data[i], sizeof bits);
          bits &= 0x7fffffffu;
          top = bits > top ? bits : top;
        }
      memcpy (&max_abs, &top, sizeof max_abs);
    }
  else
    for (gsize i = 0; i < n_voxels; i++)
      {
        if (mask[i] == 0)
          continue;
        for (guint c = 0; c < nc; c++)
          max_abs = MAX (max_abs, fabsf (prepared->data[i * nc + c]));
      }
  prepared->max_abs = max_abs;

  return g_steal_pointer (&prepared);
}

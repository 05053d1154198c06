/* Supervox engine: the prepare stage (engine/prepare.c) a slab at a time.
 * The rescale needs the global minimum and maximum, and SLIC's fixed-point
 * colour sums need the largest |value| of the prepared image, so two
 * statistics passes read the file before the iterations; after them any
 * slab is prepared on its own, identical to the same slices of the whole
 * prepared volume. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include <math.h>
#include <string.h>

#include "internal.h"
#include "supervox/sv-error.h"

guint
sv__stream_halo (float sigma_z)
{
  int radius = 0;
  g_autofree double *kernel = NULL;

  /* scipy skips axes with sigma <= 1e-15, as sv_gaussian_smooth does. */
  if (!((double)sigma_z > 1e-15))
    return 0;
  kernel = sv_gaussian_kernel (sigma_z, &radius);
  return (guint)MAX (radius, 0);
}

/* A slab's values, converted and rescaled by threads in shares: each
 * value's arithmetic is the same whoever does it. */
typedef struct
{
  SvStreamImage *img;
  SvSampleType type;
  gsize sample_bytes;
  gsize n;             /* values */
  const guint8 *mask;  /* the slab's, or NULL */
  gboolean rescale;    /* FALSE: img_as_float only */
  int n_threads;
} SlabJob;

/* Below this many values a slab is converted on one thread. */
#define SV_STREAM_PARALLEL_VALUES 8192

static void
slab_job_share (gpointer data, int t)
{
  const SlabJob *job = data;
  SvStreamImage *img = job->img;
  const gsize lo = job->n * (gsize)t / (gsize)job->n_threads;
  const gsize hi = job->n * (gsize)(t + 1) / (gsize)job->n_threads;

  if (!job->rescale)
    {
      sv_tiff_samples_to_float (job->type, (const guint8 *)img->raw + lo * job->sample_bytes,
                                hi - lo, img->work + lo);
      return;
    }
  /* prepare.c's rewrite_chunk: numpy's image -= min; image /= max. */
  for (gsize i = lo; i < hi; i++)
    {
      float v = img->work[i] - img->shift;
      if (img->divide)
        v = v / img->scale;
      img->work[i] = v;
    }
  if (job->mask != NULL)
    for (gsize i = lo; i < hi; i++)
      if (!isfinite (img->work[i]) && job->mask[i / img->nc] == 0)
        img->work[i] = 0.0f;
}

static void
run_slab_job (SlabJob *job)
{
  job->n_threads = job->n >= SV_STREAM_PARALLEL_VALUES ? sv__resolve_threads (job->img->n_threads)
                                                       : 1;
  sv__run_parallel (job->n_threads, slab_job_share, job);
}

/* Reads slices [a, b) into img->work as float32 (img_as_float). */
static gboolean
read_float (SvStreamImage *img, guint a, guint b, GError **error)
{
  const SvTiffSlabInfo *info = sv_tiff_slab_reader_info (img->reader);
  const gsize values = (gsize)img->ny * img->nx * img->nc;
  SlabJob job = { img, info->sample_type, 0, (gsize)(b - a) * values, NULL, FALSE, 1 };

  img->cached_z0 = img->cached_z1 = 0;
  if (!sv_tiff_slab_reader_read (img->reader, a, b, img->raw, error))
    return FALSE;
  job.sample_bytes = sv_tiff_slab_reader_slice_bytes (img->reader) / MAX (values, 1);
  run_slab_job (&job);
  img->slices_read += b - a;
  return TRUE;
}

/* What the first statistics pass learns about a run of slices. */
typedef struct
{
  float min, max;
  gint32 any_in;
  gint64 n_nan, n_inf, first_bad; /* first_bad: G_MAXINT64 when none */
} RangeScan;

/* The ranks' scans folded in z order with the operations of one pass:
 * MIN and MAX keep the later of equal values (which tells −0 from +0), so
 * the fold gives what one pass over all slices gives. */
static void
combine_range_scans (const SvStreamRanks *ranks, RangeScan *scan)
{
  g_autofree RangeScan *all = NULL;

  if (ranks == NULL || ranks->n_ranks <= 1)
    return;
  all = g_new (RangeScan, ranks->n_ranks);
  ranks->gather (ranks->self, scan, sizeof *scan, all);
  *scan = (RangeScan){ INFINITY, -INFINITY, FALSE, 0, 0, G_MAXINT64 };
  for (guint r = 0; r < ranks->n_ranks; r++)
    {
      scan->min = MIN (scan->min, all[r].min);
      scan->max = MAX (scan->max, all[r].max);
      scan->any_in |= all[r].any_in;
      scan->n_nan += all[r].n_nan;
      scan->n_inf += all[r].n_inf;
      scan->first_bad = MIN (scan->first_bad, all[r].first_bad);
    }
}

/* The first statistics pass: prepare.c's scan_chunk over every slab. */
static gboolean
scan_range (SvStreamImage *img, GError **error)
{
  const gsize plane = (gsize)img->ny * img->nx;
  const guint nc = img->nc;
  float min = INFINITY, max = -INFINITY;
  gboolean any_in = FALSE, ok = TRUE;
  gsize n_nan = 0, n_inf = 0, first_bad = G_MAXSIZE;
  RangeScan scan;

  for (guint z0 = img->z_begin; ok && z0 < img->z_end; z0 += img->max_depth)
    {
      guint z1 = MIN (z0 + img->max_depth, img->z_end);
      gsize first = (gsize)z0 * plane, end = (gsize)z1 * plane;

      if (!read_float (img, z0, z1, error))
        {
          ok = FALSE;
          break;
        }
      for (gsize i = first; i < end; i++)
        {
          const float *px = img->work + (i - first) * nc;
          gboolean nan = FALSE, inf = FALSE;

          if (img->mask != NULL && img->mask[i] == 0)
            continue;
          for (guint c = 0; c < nc; c++)
            {
              const float v = px[c];
              if (isnan (v))
                nan = TRUE;
              else if (isinf (v))
                inf = TRUE;
              else
                {
                  min = MIN (min, v);
                  max = MAX (max, v);
                  any_in = TRUE;
                }
            }
          if (nan || inf)
            {
              n_nan += nan;
              n_inf += inf && !nan;
              if (first_bad == G_MAXSIZE)
                first_bad = i;
            }
        }
    }
  if (!sv_stream_ranks_agree (img->ranks, ok, error))
    return FALSE;
  memset (&scan, 0, sizeof scan);
  scan.min = min;
  scan.max = max;
  scan.any_in = any_in;
  scan.n_nan = (gint64)n_nan;
  scan.n_inf = (gint64)n_inf;
  scan.first_bad = first_bad == G_MAXSIZE ? G_MAXINT64 : (gint64)first_bad;
  combine_range_scans (img->ranks, &scan);
  img->passes++;
  if (scan.n_nan + scan.n_inf > 0)
    {
      sv_set_non_finite_error (error, (gsize)scan.n_nan, (gsize)scan.n_inf, (gsize)scan.first_bad,
                               img->ny, img->nx);
      return FALSE;
    }
  img->shift = 0.0f;
  img->scale = 1.0f;
  img->divide = FALSE;
  if (scan.any_in)
    {
      img->shift = scan.min;
      img->scale = scan.max - scan.min;
      img->divide = img->scale != 0.0f;
    }
  return TRUE;
}

const float *
sv__stream_image_slab (SvStreamImage *img, guint z0, guint z1, GError **error)
{
  const gsize plane = (gsize)img->ny * img->nx;
  const guint nc = img->nc;
  guint a = z0 >= img->halo ? z0 - img->halo : 0;
  guint b = MIN (z1 + img->halo, img->nz);
  gsize n;

  g_return_val_if_fail (z0 < z1 && z1 <= img->nz && z1 - z0 <= img->max_depth, NULL);

  if (img->cached_z0 == z0 && img->cached_z1 == z1)
    return img->work + (gsize)(z0 - img->cached_a) * plane * nc;
  if (img->prepared != NULL && img->passes == 2)
    {
      if (!sv__spill_read (img->prepared, z0, z1, img->work, error))
        return NULL;
      img->cached_a = img->cached_z0 = z0;
      img->cached_z1 = z1;
      return img->work;
    }
  if (!read_float (img, a, b, error))
    return NULL;
  n = (gsize)(b - a) * plane;
  {
    SlabJob job = { img, 0, 0, n * nc, NULL, TRUE, 1 };

    job.mask = img->mask != NULL ? img->mask + (gsize)a * plane : NULL;
    run_slab_job (&job);
  }
  if (img->lab)
    sv_rgb_to_lab (img->work, n);
  /* Slices beyond the halo's reach are not in the block, but no kept slice
   * reaches them; at the volume's ends the block ends there too, so the
   * filter reflects where the whole-volume filter does. */
  sv_gaussian_smooth (img->work, b - a, img->ny, img->nx, nc, img->sigma, img->n_threads);

  img->cached_a = a;
  img->cached_z0 = z0;
  img->cached_z1 = z1;
  return img->work + (gsize)(z0 - a) * plane * nc;
}

/* The second statistics pass: sv_prepare's max |value| over mask-in voxels. */
static gboolean
scan_max_abs (SvStreamImage *img, GError **error)
{
  const gsize plane = (gsize)img->ny * img->nx;
  const guint nc = img->nc;
  float max_abs = 0.0f;
  gboolean ok = TRUE;

  for (guint z0 = img->z_begin; ok && z0 < img->z_end; z0 += img->max_depth)
    {
      guint z1 = MIN (z0 + img->max_depth, img->z_end);
      const float *data = sv__stream_image_slab (img, z0, z1, error);

      if (data == NULL
          || (img->prepared != NULL && !sv__spill_write (img->prepared, z0, z1, data, error)))
        {
          ok = FALSE;
          break;
        }
      for (gsize i = 0; i < (gsize)(z1 - z0) * plane; i++)
        {
          if (img->mask != NULL && img->mask[(gsize)z0 * plane + i] == 0)
            continue;
          for (guint c = 0; c < nc; c++)
            max_abs = MAX (max_abs, fabsf (data[i * nc + c]));
        }
    }
  if (!sv_stream_ranks_agree (img->ranks, ok, error))
    return FALSE;
  /* |values| are never −0, so the maximum does not depend on the order. */
  if (img->ranks != NULL && img->ranks->n_ranks > 1)
    img->ranks->max_float (img->ranks->self, &max_abs, 1);
  img->passes++;
  img->max_abs = max_abs;
  return TRUE;
}

/* (Re)allocates the buffers for slabs of `depth` slices read with
 * `halo` slices on each side; `raw` only when slabs come from the file. */
static gboolean
alloc_buffers (SvStreamImage *img, guint depth, guint halo, gboolean raw, GError **error)
{
  const gsize slices = MIN ((gsize)depth + 2 * (gsize)halo, img->nz);
  const gsize slice_bytes = sv_tiff_slab_reader_slice_bytes (img->reader);

  sv__stream_image_clear_buffers (img);
  img->max_depth = depth;
  img->raw = raw ? g_try_malloc (MAX (slices * slice_bytes, 1)) : NULL;
  img->work = g_try_malloc_n (MAX (slices * img->ny * img->nx * img->nc, 1), sizeof (float));
  if ((raw && img->raw == NULL) || img->work == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "not enough memory for a slab of %" G_GSIZE_FORMAT " slices of %u×%u×%u", slices,
                   img->ny, img->nx, img->nc);
      return FALSE;
    }
  return TRUE;
}

void
sv__stream_image_clear_buffers (SvStreamImage *img)
{
  g_clear_pointer (&img->raw, g_free);
  g_clear_pointer (&img->work, g_free);
  img->cached_z0 = img->cached_z1 = 0;
}

/* The statistics passes, in slabs of img->max_depth slices. */
static gboolean
scan_statistics (SvStreamImage *img, GError **error)
{
  if (!scan_range (img, error))
    return FALSE;
  /* Without Lab or smoothing the prepared values are fl(fl(v − min) / s)
   * with s = fl(max − min): monotone in v, from 0 at the minimum to s / s
   * = 1 at the maximum (all 0 when s is 0), so the second pass is known. */
  if (!img->lab && img->prepared == NULL && isfinite (img->scale))
    {
      img->max_abs = img->divide ? 1.0f : 0.0f;
      img->passes++;
      return TRUE;
    }
  return scan_max_abs (img, error);
}

gboolean
sv__stream_image_init (SvStreamImage *img, SvTiffSlabReader *reader, const guint8 *mask,
                       const SvSlicParams *params, guint scan_depth, guint max_depth, int n_threads,
                       const char *beside, const SvStreamRanks *ranks, GError **error)
{
  const SvTiffSlabInfo *info = sv_tiff_slab_reader_info (reader);
  gboolean ok = TRUE;

  memset (img, 0, sizeof *img);
  img->reader = reader;
  img->ranks = ranks;
  img->z_begin = 0;
  img->z_end = info->nz;
  if (ranks != NULL && ranks->n_ranks > 1)
    sv_stream_rank_range (info->nz, ranks->rank, ranks->n_ranks, &img->z_begin, &img->z_end);
  img->mask = mask;
  img->nz = info->nz;
  img->ny = info->ny;
  img->nx = info->nx;
  img->nc = info->nc;
  img->n_threads = n_threads;
  scan_depth = CLAMP (scan_depth, 1, MAX (info->nz, 1));
  max_depth = CLAMP (max_depth, 1, MAX (info->nz, 1));

  if (params->convert2lab == SV_CONVERT2LAB_YES && img->nc != 3)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "Lab colorspace conversion requires a RGB image (3 channels); "
                   "this image has %u channel%s",
                   img->nc, img->nc == 1 ? "" : "s");
      return FALSE;
    }
  img->lab = params->convert2lab == SV_CONVERT2LAB_YES
             || (params->convert2lab == SV_CONVERT2LAB_AUTO && img->nz == 1 && img->nc == 3);
  sv_slic_params_effective_sigma (params, img->sigma);
  img->halo = sv__stream_halo (img->sigma[0]);

  ok = alloc_buffers (img, scan_depth, img->halo, TRUE, error);
  /* Smoothing a slab costs more than reading it back: keep the prepared
   * image (4 bytes per value) on disk for the iterations. */
  if (ok && (img->sigma[0] > 0 || img->sigma[1] > 0 || img->sigma[2] > 0))
    {
      img->prepared = sv__spill_new (beside, "smoothed", img->nz,
                                     (gsize)img->ny * img->nx * img->nc * sizeof (float), error);
      ok = img->prepared != NULL;
    }
  if (!sv_stream_ranks_agree (ranks, ok, error) || !scan_statistics (img, error))
    return FALSE;
  /* The iterations' slabs: from the smoothed image on disk without a halo,
   * or from the file (no smoothing, so no halo either). */
  if (max_depth != scan_depth)
    ok = alloc_buffers (img, max_depth, 0, img->prepared == NULL, error);
  return sv_stream_ranks_agree (ranks, ok, error);
}

void
sv__stream_image_clear (SvStreamImage *img)
{
  sv__stream_image_clear_buffers (img);
  g_clear_pointer (&img->prepared, sv__spill_free);
}

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
  gsize n;            /* values */
  const guint8 *mask; /* the slab's, or NULL */
  gboolean rescale;   /* FALSE: img_as_float only */
  int n_threads;
} SlabJob;

/* Below this many values a slab is converted on one thread. */
#define SV_STREAM_PARALLEL_VALUES 8192
/* Threads of the first pass's integer scan, at most. */
#define SV_SCAN_THREADS_MAX 64

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
  job->n_threads
      = job->n >= SV_STREAM_PARALLEL_VALUES ? sv__resolve_threads (job->img->n_threads) : 1;
  sv__run_parallel (job->n_threads, slab_job_share, job);
}

/* Reads slices [a, b) into img->raw in the file's type. */
static gboolean
read_raw (SvStreamImage *img, guint a, guint b, GError **error)
{
  img->cached_z0 = img->cached_z1 = 0;
  img->raw_z0 = img->raw_z1 = 0;
  if (img->ahead != NULL ? !sv__read_ahead_read (img->ahead, a, b, &img->raw, error)
                         : !sv_tiff_slab_reader_read (img->reader, a, b, img->raw, error))
    return FALSE;
  img->raw_z0 = a;
  img->raw_z1 = b;
  img->slices_read += b - a;
  return TRUE;
}

/* Bytes per sample of the file. */
static gsize
sample_bytes (const SvStreamImage *img)
{
  const gsize values = (gsize)img->ny * img->nx * img->nc;

  return sv_tiff_slab_reader_slice_bytes (img->reader) / MAX (values, 1);
}

/* Reads slices [a, b) into img->work as float32 (img_as_float). */
static gboolean
read_float (SvStreamImage *img, guint a, guint b, GError **error)
{
  const SvTiffSlabInfo *info = sv_tiff_slab_reader_info (img->reader);
  const gsize values = (gsize)img->ny * img->nx * img->nc;
  SlabJob job = { img, info->sample_type, sample_bytes (img), (gsize)(b - a) * values, NULL,
                  FALSE, 1 };

  /* Samples just handed out (sv__stream_image_samples) are not read twice. */
  if (!(img->raw_z0 == a && img->raw_z1 == b && a < b) && !read_raw (img, a, b, error))
    return FALSE;
  img->cached_z0 = img->cached_z1 = 0;
  run_slab_job (&job);
  return TRUE;
}

/* Starts reading the slab that follows one ending at z1, with `halo`
 * slices on each side: the next of this pass, or the first of the next
 * pass when that comes from the file too (the statistics passes). */
static void
read_ahead_next (SvStreamImage *img, guint z1, guint halo)
{
  guint n0, n1;

  /* After the first iteration every slab is kept (in memory, on a device
   * or in a file): none comes from the image file again. */
  if (z1 >= img->z_end && (img->prepared != NULL || img->kept != NULL))
    return;
  n0 = z1 < img->z_end ? z1 : img->z_begin;
  n1 = MIN (n0 + img->max_depth, img->z_end);
  sv__read_ahead_start (img->ahead, n0 >= halo ? n0 - halo : 0, MIN (n1 + halo, img->nz));
}

/* What the first statistics pass learns about a run of slices. */
typedef struct
{
  float min, max;
  gboolean any_in;
  gint64 n_nan, n_inf, first_bad; /* first_bad: G_MAXINT64 when none */
} RangeScan;

/* One thread's share of a slab in the first statistics pass. */
typedef struct
{
  const SvStreamImage *img;
  gsize first, end;   /* the slab's voxels, whole-volume indices */
  const guint8 *mask; /* addressed as the whole mask, or NULL */
  int n_threads;
  RangeScan *parts; /* one per thread */
} RangeJob;

static void
range_job_share (gpointer data, int t)
{
  const RangeJob *job = data;
  const SvStreamImage *img = job->img;
  const guint nc = img->nc;
  const gsize n = job->end - job->first;
  const gsize lo = job->first + n * (gsize)t / (gsize)job->n_threads;
  const gsize hi = job->first + n * (gsize)(t + 1) / (gsize)job->n_threads;
  RangeScan *r = &job->parts[t];

  *r = (RangeScan){ INFINITY, -INFINITY, FALSE, 0, 0, G_MAXINT64 };
  for (gsize i = lo; i < hi; i++)
    {
      const float *px = img->work + (i - job->first) * nc;
      gboolean nan = FALSE, inf = FALSE;

      if (job->mask != NULL && job->mask[i] == 0)
        continue;
      sv__scan_voxel (px, nc, &r->min, &r->max, &r->any_in, &nan, &inf);
      if (nan || inf)
        {
          r->n_nan += nan;
          r->n_inf += inf && !nan;
          if (r->first_bad == G_MAXINT64)
            r->first_bad = (gint64)i;
        }
    }
}

/* Integer samples are never NaN or infinite, and img_as_float does not
 * decrease with them (v · (1 / max) in double, clamped at −1 for signed
 * types), so the extremes of the converted values are the converted
 * extremes of the samples: the first pass scans the file's samples as
 * they are instead of converting and testing every value. */
static void range_fold (RangeScan *acc, const RangeScan *part);

static gboolean
integer_samples (SvSampleType type)
{
  return type != SV_SAMPLE_F32 && type != SV_SAMPLE_F64;
}

/* One thread's share of a slab's samples: the voxels [lo, hi) of the
 * slab (mask addressed as the slab's), each of nc samples; *lo_out and
 * *hi_out receive the extremes (as the samples' bytes), *any whether a
 * voxel was in. */
typedef struct
{
  SvSampleType type;
  const guint8 *raw;
  const guint8 *mask; /* the slab's, or NULL */
  gsize n;            /* voxels */
  guint nc;
  int n_threads;
  guint8 (*lo)[8], (*hi)[8]; /* one per thread */
  gboolean *any;             /* one per thread */
} RawRangeJob;

#define SV_RAW_RANGE(ctype, type_min, type_max)                                                      do                                                                                                   {                                                                                                    const ctype *s = (const ctype *)job->raw;                                                          ctype lo = type_max, hi = type_min;                                                                if (job->mask == NULL)                                                                               {                                                                                                    for (gsize i = a * nc; i < b * nc; i++)                                                              {                                                                                                    lo = s[i] < lo ? s[i] : lo;                                                                        hi = s[i] > hi ? s[i] : hi;                                                                      }                                                                                                any = b > a;                                                                                     }                                                                                                else                                                                                                 for (gsize v = a; v < b; v++)                                                                        if (job->mask[v] != 0)                                                                               for (guint c = 0; c < nc; c++)                                                                       {                                                                                                    const ctype x = s[v * nc + c];                                                                     lo = x < lo ? x : lo;                                                                              hi = x > hi ? x : hi;                                                                              any = TRUE;                                                                                      }                                                                                          memcpy (job->lo[t], &lo, sizeof lo);                                                               memcpy (job->hi[t], &hi, sizeof hi);                                                             }                                                                                                while (0)

static void
raw_range_share (gpointer data, int t)
{
  const RawRangeJob *job = data;
  const gsize a = job->n * (gsize)t / (gsize)job->n_threads;
  const gsize b = job->n * (gsize)(t + 1) / (gsize)job->n_threads;
  const guint nc = job->nc;
  gboolean any = FALSE;

  switch (job->type)
    {
    case SV_SAMPLE_U8:
      SV_RAW_RANGE (guint8, 0, G_MAXUINT8);
      break;
    case SV_SAMPLE_U16:
      SV_RAW_RANGE (guint16, 0, G_MAXUINT16);
      break;
    case SV_SAMPLE_U32:
      SV_RAW_RANGE (guint32, 0, G_MAXUINT32);
      break;
    case SV_SAMPLE_I8:
      SV_RAW_RANGE (gint8, G_MININT8, G_MAXINT8);
      break;
    case SV_SAMPLE_I16:
      SV_RAW_RANGE (gint16, G_MININT16, G_MAXINT16);
      break;
    case SV_SAMPLE_I32:
      SV_RAW_RANGE (gint32, G_MININT32, G_MAXINT32);
      break;
    default:
      g_assert_not_reached ();
    }
  job->any[t] = any;
}

/* The first pass's scan of an integer slab, as the float scan would find
 * it: the samples' extremes, converted. */
static void
scan_raw_slab (const SvStreamImage *img, SvSampleType type, gsize n, const guint8 *mask,
               int n_threads, RangeScan *scan)
{
  guint8 lo[SV_SCAN_THREADS_MAX][8], hi[SV_SCAN_THREADS_MAX][8];
  gboolean any[SV_SCAN_THREADS_MAX];
  RawRangeJob job = { type, img->raw, mask, n, img->nc, 1, lo, hi, any };

  job.n_threads = n * img->nc >= SV_STREAM_PARALLEL_VALUES
                      ? CLAMP (n_threads, 1, SV_SCAN_THREADS_MAX)
                      : 1;
  sv__run_parallel (job.n_threads, raw_range_share, &job);
  for (int t = 0; t < job.n_threads; t++)
    {
      RangeScan part = { INFINITY, -INFINITY, FALSE, 0, 0, G_MAXINT64 };

      if (!any[t])
        continue;
      sv_tiff_samples_to_float (type, lo[t], 1, &part.min);
      sv_tiff_samples_to_float (type, hi[t], 1, &part.max);
      part.any_in = TRUE;
      range_fold (scan, &part);
    }
}

/* Folds `part` (later voxels) into `acc` as one pass in z order would:
 * MIN and MAX keep the later of equal values. */
static void
range_fold (RangeScan *acc, const RangeScan *part)
{
  acc->min = MIN (acc->min, part->min);
  acc->max = MAX (acc->max, part->max);
  acc->any_in |= part->any_in;
  acc->n_nan += part->n_nan;
  acc->n_inf += part->n_inf;
  acc->first_bad = MIN (acc->first_bad, part->first_bad);
}

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
    range_fold (scan, &all[r]);
}

/* The first statistics pass: prepare.c's scan_chunk over every slab, each
 * slab by threads in shares folded in order. */
static gboolean
scan_range (SvStreamImage *img, GError **error)
{
  const gsize plane = (gsize)img->ny * img->nx;
  const int n_threads = sv__resolve_threads (img->n_threads);
  const SvSampleType type = sv_tiff_slab_reader_info (img->reader)->sample_type;
  const gboolean integer = integer_samples (type) && sample_bytes (img) <= 8;
  g_autofree RangeScan *parts = g_new (RangeScan, MAX (n_threads, 1));
  RangeScan scan = { INFINITY, -INFINITY, FALSE, 0, 0, G_MAXINT64 };
  gboolean ok = TRUE;

  for (guint z0 = img->z_begin; ok && z0 < img->z_end; z0 += img->max_depth)
    {
      guint z1 = MIN (z0 + img->max_depth, img->z_end);
      RangeJob job = { img, (gsize)z0 * plane, (gsize)z1 * plane, NULL, 1, parts };
      const guint8 *mask = NULL;

      if (!(integer ? read_raw (img, z0, z1, error) : read_float (img, z0, z1, error))
          || (sv__stream_mask_any (img->mask)
              && (mask = sv__stream_mask_slab (img->mask, z0, z1, error)) == NULL))
        {
          ok = FALSE;
          break;
        }
      /* The second pass reads with the halo: this one reads ahead only
       * within itself. */
      if (z1 < img->z_end)
        read_ahead_next (img, z1, 0);
      if (integer)
        {
          scan_raw_slab (img, type, job.end - job.first,
                         mask != NULL ? mask + job.first : NULL, n_threads, &scan);
          continue;
        }
      job.mask = mask;
      job.n_threads = job.end - job.first >= SV_STREAM_PARALLEL_VALUES ? MAX (n_threads, 1) : 1;
      sv__run_parallel (job.n_threads, range_job_share, &job);
      for (int t = 0; t < job.n_threads; t++)
        range_fold (&scan, &parts[t]);
    }
  if (!sv_stream_ranks_agree (img->ranks, ok, error))
    return FALSE;
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

/* The kept-slab slot of [z0, z1), or −1 when it is not an iteration slab
 * (the statistics passes' slabs are not kept). */
static int
slab_slot (const SvStreamImage *img, guint z0, guint z1)
{
  guint i;

  if (img->kept == NULL || z0 < img->z_begin || (z0 - img->z_begin) % img->max_depth != 0)
    return -1;
  i = (z0 - img->z_begin) / img->max_depth;
  return i < img->n_slots && z1 == MIN (z0 + img->max_depth, img->z_end) ? (int)i : -1;
}

gboolean
sv__stream_image_keep (SvStreamImage *img, guint z0, guint z1, GError **error)
{
  const int slot = slab_slot (img, z0, z1);
  const gsize values = (gsize)(z1 - z0) * img->ny * img->nx * img->nc;
  const gsize bytes = values * sizeof (float);
  const float *data;

  if (slot < 0 || img->kept[slot] != NULL || img->spilled[slot])
    return TRUE;
  g_return_val_if_fail (img->cached_z0 == z0 && img->cached_z1 == z1, FALSE);
  data = img->work + (gsize)(z0 - img->cached_a) * img->ny * img->nx * img->nc;
  if (bytes <= img->keep_budget && (img->kept[slot] = g_try_malloc (MAX (bytes, 1))) != NULL)
    {
      memcpy (img->kept[slot], data, bytes);
      img->keep_budget -= bytes;
      img->kept_bytes += bytes;
      return TRUE;
    }
  if (img->prepared_full)
    return TRUE;
  /* Reading float32 back costs less than decoding and rescaling again. */
  if (img->prepared == NULL)
    img->prepared = sv__spill_new (img->beside, "prepared", img->nz,
                                   (gsize)img->ny * img->nx * img->nc * sizeof (float), error);
  if (img->prepared == NULL || !sv__spill_write (img->prepared, z0, z1, data, error))
    return FALSE;
  img->spilled[slot] = 1;
  img->spilled_bytes += bytes;
  return TRUE;
}

const float *
sv__stream_image_slab (SvStreamImage *img, guint z0, guint z1, GError **error)
{
  const gsize plane = (gsize)img->ny * img->nx;
  const guint nc = img->nc;
  guint a = z0 >= img->halo ? z0 - img->halo : 0;
  guint b = MIN (z1 + img->halo, img->nz);
  const int slot = slab_slot (img, z0, z1);
  gsize n;

  g_return_val_if_fail (z0 < z1 && z1 <= img->nz && z1 - z0 <= img->max_depth, NULL);

  if (img->cached_z0 == z0 && img->cached_z1 == z1)
    return img->work + (gsize)(z0 - img->cached_a) * plane * nc;
  if (slot >= 0 && img->kept[slot] != NULL)
    return img->kept[slot];
  if (img->prepared != NULL && (img->prepared_full || (slot >= 0 && img->spilled[slot])))
    {
      if (!sv__spill_read (img->prepared, z0, z1, img->work, error))
        return NULL;
      img->cached_a = img->cached_z0 = z0;
      img->cached_z1 = z1;
      return img->work;
    }
  {
    /* Samples already read started the next read themselves. */
    const gboolean had_samples = img->raw_z0 == a && img->raw_z1 == b && a < b;

    if (!read_float (img, a, b, error))
      return NULL;
    if (!had_samples)
      read_ahead_next (img, z1, img->halo);
  }
  n = (gsize)(b - a) * plane;
  {
    SlabJob job = { img, 0, 0, n * nc, NULL, TRUE, 1 };

    if (sv__stream_mask_any (img->mask))
      {
        const guint8 *mask = sv__stream_mask_slab (img->mask, a, b, error);

        if (mask == NULL)
          return NULL;
        job.mask = mask + (gsize)a * plane;
      }
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

gboolean
sv__stream_image_samples_how (const SvStreamImage *img, SvSlabSamples *how)
{
  const SvSampleType type = sv_tiff_slab_reader_info (img->reader)->sample_type;

  if (img->lab || img->prepared != NULL || img->halo != 0 || img->raw == NULL
      || !integer_samples (type) || sample_bytes (img) > 4)
    return FALSE;
  *how = (SvSlabSamples){ type, img->nc, img->shift, img->scale, img->divide };
  return TRUE;
}

const void *
sv__stream_image_samples (SvStreamImage *img, guint z0, guint z1, GError **error)
{
  g_return_val_if_fail (img->halo == 0 && z0 < z1 && z1 - z0 <= img->max_depth, NULL);

  if (!(img->raw_z0 == z0 && img->raw_z1 == z1))
    {
      if (!read_raw (img, z0, z1, error))
        return NULL;
      read_ahead_next (img, z1, 0);
    }
  return img->raw;
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
      const guint8 *mask = NULL;

      if (data == NULL
          || (img->prepared != NULL && !sv__spill_write (img->prepared, z0, z1, data, error))
          || (sv__stream_mask_any (img->mask)
              && (mask = sv__stream_mask_slab (img->mask, z0, z1, error)) == NULL))
        {
          ok = FALSE;
          break;
        }
      for (gsize i = 0; i < (gsize)(z1 - z0) * plane; i++)
        {
          if (mask != NULL && mask[(gsize)z0 * plane + i] == 0)
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
  /* Without memory for a second buffer, each slab is read when needed. */
  if (img->raw != NULL && img->read_ahead)
    img->ahead = sv__read_ahead_new (img->reader, MAX (slices * slice_bytes, 1));
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
  img->slabs_read_ahead += sv__read_ahead_hits (img->ahead);
  g_clear_pointer (&img->ahead, sv__read_ahead_free);
  g_clear_pointer (&img->raw, g_free);
  g_clear_pointer (&img->work, g_free);
  img->cached_z0 = img->cached_z1 = 0;
  img->raw_z0 = img->raw_z1 = 0;
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
sv__stream_image_init (SvStreamImage *img, SvTiffSlabReader *reader, SvStreamMask *mask,
                       const SvSlicParams *params, guint scan_depth, guint max_depth, int n_threads,
                       gboolean read_ahead, const char *beside, const SvStreamRanks *ranks,
                       GError **error)
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
  img->read_ahead = read_ahead;
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
  img->prepared_full = img->prepared != NULL;
  img->beside = beside;
  img->n_slots = (img->z_end - img->z_begin + max_depth - 1) / max_depth;
  img->kept = g_new0 (float *, MAX (img->n_slots, 1));
  img->spilled = g_new0 (guint8, MAX (img->n_slots, 1));
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
  for (guint i = 0; img->kept != NULL && i < img->n_slots; i++)
    g_free (img->kept[i]);
  g_clear_pointer (&img->kept, g_free);
  g_clear_pointer (&img->spilled, g_free);
  img->n_slots = 0;
}

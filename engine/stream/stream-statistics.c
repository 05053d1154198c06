/* Supervox engine: the streamed prepare's statistics passes
 * (stream-image.c): the rescale's global minimum and maximum over mask-in
 * values, with NaN and infinities counted, and the prepared image's
 * largest |value| that fixes SLIC's fixed-point colour sums. Threads take
 * shares of a slab; their results fold in z order as one pass would
 * (MIN and MAX keep the later of equal values), and ranks fold theirs in
 * rank order. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include <math.h>
#include <string.h>

#include "internal.h"
#include "supervox/sv-error.h"

/* Threads of the first pass's integer scan, at most. */
#define SV_SCAN_THREADS_MAX 64

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

gboolean
sv__integer_samples (SvSampleType type)
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

#define SV_RANGE_BLOCK 64

#define SV_RAW_RANGE(ctype, type_min, type_max)                                                    \
  do                                                                                               \
    {                                                                                              \
      const ctype *s = (const ctype *)job->raw;                                                    \
      ctype lo = type_max, hi = type_min;                                                          \
      if (job->mask == NULL)                                                                       \
        {                                                                                          \
          gsize i = a * nc;                                                                        \
          /* Blocks of a fixed count, which -O2 vectorizes. */                                     \
          for (; i + SV_RANGE_BLOCK <= b * nc; i += SV_RANGE_BLOCK)                                \
            for (int j = 0; j < SV_RANGE_BLOCK; j++)                                               \
              {                                                                                    \
                lo = s[i + j] < lo ? s[i + j] : lo;                                                \
                hi = s[i + j] > hi ? s[i + j] : hi;                                                \
              }                                                                                    \
          for (; i < b * nc; i++)                                                                  \
            {                                                                                      \
              lo = s[i] < lo ? s[i] : lo;                                                          \
              hi = s[i] > hi ? s[i] : hi;                                                          \
            }                                                                                      \
          any = b > a;                                                                             \
        }                                                                                          \
      else                                                                                         \
        for (gsize v = a; v < b; v++)                                                              \
          if (job->mask[v] != 0)                                                                   \
            for (guint c = 0; c < nc; c++)                                                         \
              {                                                                                    \
                const ctype x = s[v * nc + c];                                                     \
                lo = x < lo ? x : lo;                                                              \
                hi = x > hi ? x : hi;                                                              \
                any = TRUE;                                                                        \
              }                                                                                    \
      memcpy (job->lo[t], &lo, sizeof lo);                                                         \
      memcpy (job->hi[t], &hi, sizeof hi);                                                         \
    }                                                                                              \
  while (0)

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

  job.n_threads
      = n * img->nc >= SV_STREAM_PARALLEL_VALUES ? CLAMP (n_threads, 1, SV_SCAN_THREADS_MAX) : 1;
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
  const gboolean integer = sv__integer_samples (type) && sv__stream_image_sample_bytes (img) <= 8;
  g_autofree RangeScan *parts = g_new (RangeScan, MAX (n_threads, 1));
  RangeScan scan = { INFINITY, -INFINITY, FALSE, 0, 0, G_MAXINT64 };
  gboolean ok = TRUE;

  for (guint z0 = img->z_begin; ok && z0 < img->z_end; z0 += img->max_depth)
    {
      guint z1 = MIN (z0 + img->max_depth, img->z_end);
      RangeJob job = { img, (gsize)z0 * plane, (gsize)z1 * plane, NULL, 1, parts };
      const guint8 *mask = NULL;

      if (!(integer ? sv__stream_image_read_raw (img, z0, z1, error)
                    : sv__stream_image_read_float (img, z0, z1, error))
          || (sv__stream_mask_any (img->mask)
              && (mask = sv__stream_mask_slab (img->mask, z0, z1, error)) == NULL))
        {
          ok = FALSE;
          break;
        }
      /* The second pass reads with the halo: this one reads ahead only
       * within itself. */
      if (z1 < img->z_end)
        sv__stream_image_read_ahead_next (img, z1, 0);
      if (integer)
        {
          scan_raw_slab (img, type, job.end - job.first, mask != NULL ? mask + job.first : NULL,
                         n_threads, &scan);
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
  if (img->lab64)
    sv_rescale64_init (&img->rescale64, type, scan.any_in, scan.min, scan.max);
  return TRUE;
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

/* The statistics passes, in slabs of img->max_depth slices. */
gboolean
sv__stream_image_scan_statistics (SvStreamImage *img, GError **error)
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

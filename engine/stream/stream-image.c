/* Supervox engine: the prepare stage (engine/slic/prepare.c) a slab at a time.
 * The rescale needs the global minimum and maximum, and SLIC's fixed-point
 * colour sums need the largest |value| of the prepared image, so two
 * statistics passes (stream-statistics.c) read the file before the
 * iterations; after them any slab is prepared on its own, identical to the
 * same slices of the whole prepared volume. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include <math.h>
#include <string.h>

#include "internal.h"
#include "supervox/sv-memory.h"
#include "supervox/sv-error.h"
#include "supervox/sv-run-plan.h"

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
gboolean
sv__stream_image_read_raw (SvStreamImage *img, guint a, guint b, GError **error)
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
gsize
sv__stream_image_sample_bytes (const SvStreamImage *img)
{
  const gsize values = (gsize)img->ny * img->nx * img->nc;

  return sv_tiff_slab_reader_slice_bytes (img->reader) / MAX (values, 1);
}

/* Reads slices [a, b) into img->work as float32 (img_as_float). */
gboolean
sv__stream_image_read_float (SvStreamImage *img, guint a, guint b, GError **error)
{
  const SvTiffSlabInfo *info = sv_tiff_slab_reader_info (img->reader);
  const gsize values = (gsize)img->ny * img->nx * img->nc;
  SlabJob job = { img,
                  info->sample_type,
                  sv__stream_image_sample_bytes (img),
                  (gsize)(b - a) * values,
                  NULL,
                  FALSE,
                  1 };

  /* Samples just handed out (sv__stream_image_samples) are not read twice. */
  if (!(img->raw_z0 == a && img->raw_z1 == b && a < b)
      && !sv__stream_image_read_raw (img, a, b, error))
    return FALSE;
  img->cached_z0 = img->cached_z1 = 0;
  run_slab_job (&job);
  return TRUE;
}

/* Starts reading the slab that follows one ending at z1, with `halo`
 * slices on each side: the next of this pass, or the first of the next
 * pass when that comes from the file too (the statistics passes). */
void
sv__stream_image_read_ahead_next (SvStreamImage *img, guint z1, guint halo)
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
  const gsize value_bytes
      = img->keep_samples ? sv__stream_image_sample_bytes (img) : sizeof (float);
  const gsize bytes = values * value_bytes;
  const guint8 *data;

  /* The smoothed image is kept whole already. */
  if (slot < 0 || img->prepared_full || img->kept[slot] != NULL || img->spilled[slot])
    return TRUE;
  g_return_val_if_fail (img->cached_z0 == z0 && img->cached_z1 == z1, FALSE);
  if (img->keep_samples)
    {
      /* No halo: `raw` holds the slab's samples, from which it was made. */
      g_return_val_if_fail (img->raw_z0 == z0 && img->raw_z1 == z1, FALSE);
      data = img->raw;
    }
  else
    data = (const guint8 *)(img->work + (gsize)(z0 - img->cached_a) * img->ny * img->nx * img->nc);
  if (bytes <= img->keep_budget && (img->kept[slot] = g_try_malloc (MAX (bytes, 1))) != NULL)
    {
      memcpy (img->kept[slot], data, bytes);
      img->keep_budget -= bytes;
      img->kept_bytes += bytes;
      return TRUE;
    }
  /* Reading back costs less than decoding (and rescaling) again. */
  if (img->prepared == NULL)
    img->prepared = sv__spill_new (img->beside, img->keep_samples ? "samples" : "prepared", img->nz,
                                   (gsize)img->ny * img->nx * img->nc * value_bytes, 0, 0, error);
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
  const float *held;
  gsize n;

  g_return_val_if_fail (z0 < z1 && z1 <= img->nz && z1 - z0 <= img->max_depth, NULL);

  if (img->cached_z0 == z0 && img->cached_z1 == z1)
    return img->work + (gsize)(z0 - img->cached_a) * plane * nc;
  if (img->prepared_full && (held = sv__spill_peek (img->prepared, z0, z1)) != NULL)
    return held;
  if (!img->keep_samples && slot >= 0 && img->kept[slot] != NULL)
    return (const float *)img->kept[slot];
  if (img->prepared_full || (!img->keep_samples && slot >= 0 && img->spilled[slot]))
    {
      if (!sv__spill_read (img->prepared, z0, z1, img->work, error))
        return NULL;
      img->cached_a = img->cached_z0 = z0;
      img->cached_z1 = z1;
      return img->work;
    }
  /* Kept samples go where the file's would be read, and are prepared as
   * they would be (no halo: a == z0, b == z1). */
  if (img->keep_samples && slot >= 0 && (img->kept[slot] != NULL || img->spilled[slot]))
    {
      img->cached_z0 = img->cached_z1 = 0;
      img->raw_z0 = img->raw_z1 = 0;
      if (img->kept[slot] != NULL)
        memcpy (img->raw, img->kept[slot],
                (gsize)(z1 - z0) * sv_tiff_slab_reader_slice_bytes (img->reader));
      else if (!sv__spill_read (img->prepared, z0, z1, img->raw, error))
        return NULL;
      img->raw_z0 = z0;
      img->raw_z1 = z1;
    }
  {
    /* Samples already read started the next read themselves. */
    const gboolean had_samples = img->raw_z0 == a && img->raw_z1 == b && a < b;

    if (!sv__stream_image_read_float (img, a, b, error))
      return NULL;
    if (!had_samples)
      sv__stream_image_read_ahead_next (img, z1, img->halo);
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
    /* prepare.c's rescale_shaped: Lab in the source's float type. */
    if (img->lab64)
      sv_rgb_to_lab_double (img->work, n, &img->rescale64, job.mask);
    else
      {
        run_slab_job (&job);
        if (img->lab)
          sv_rgb_to_lab (img->work, n);
      }
  }
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

  if (img->lab || img->prepared_full || img->halo != 0 || img->raw == NULL
      || !sv__integer_samples (type) || sv__stream_image_sample_bytes (img) > 4)
    return FALSE;
  *how = (SvSlabSamples){ type, img->nc, img->shift, img->scale, img->divide };
  return TRUE;
}

gboolean
sv__stream_image_has_slab (const SvStreamImage *img, guint z0, guint z1)
{
  const int slot = slab_slot (img, z0, z1);

  return (img->cached_z0 == z0 && img->cached_z1 == z1 && z0 < z1)
         || (slot >= 0 && (img->kept[slot] != NULL || img->spilled[slot]))
         || (img->prepared != NULL && img->prepared_full);
}

const void *
sv__stream_image_samples (SvStreamImage *img, guint z0, guint z1, GError **error)
{
  g_return_val_if_fail (img->halo == 0 && z0 < z1 && z1 - z0 <= img->max_depth, NULL);

  if (!(img->raw_z0 == z0 && img->raw_z1 == z1))
    {
      if (!sv__stream_image_read_raw (img, z0, z1, error))
        return NULL;
      sv__stream_image_read_ahead_next (img, z1, 0);
    }
  return img->raw;
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
      sv_set_no_memory (error, "a slab of %" G_GSIZE_FORMAT " slices of %u×%u×%u", slices,
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

gboolean
sv__stream_image_init (SvStreamImage *img, SvTiffSlabReader *reader, SvStreamMask *mask,
                       const SvSlicParams *params, guint scan_depth, guint max_depth, int n_threads,
                       gboolean read_ahead, guint64 keep_budget, const char *beside,
                       const SvStreamRanks *ranks, GError **error)
{
  const SvTiffSlabInfo *info = sv_tiff_slab_reader_info (reader);
  const gsize float_slice = (gsize)info->ny * info->nx * info->nc * sizeof (float);
  gboolean ok = TRUE, smoothed;

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

  if (!sv_run_lab_applies (params->convert2lab, img->nz, img->nc, &img->lab, error))
    return FALSE;
  img->lab64 = img->lab && sv_sample_type_float64 (info->sample_type);
  sv_slic_params_effective_sigma (params, img->sigma);
  img->halo = sv__stream_halo (img->sigma[0]);

  smoothed = img->sigma[0] > 0 || img->sigma[1] > 0 || img->sigma[2] > 0;
  /* Slabs are kept as the file's samples (a quarter of the bytes for
   * uint8) only when their prepared values would not all fit the budget:
   * preparing them again costs every pass (on two cores an eighth of a
   * streamed run at compactness 10). */
  img->keep_samples
      = sv__stream_kept_value_bytes (sv__stream_image_sample_bytes (img), img->lab, smoothed)
            < sizeof (float)
        && (guint64)(img->z_end - img->z_begin) * float_slice > keep_budget;
  img->keep_budget = smoothed ? 0 : keep_budget;

  ok = alloc_buffers (img, scan_depth, img->halo, TRUE, error);
  /* Smoothing a slab costs more than reading it back: keep the prepared
   * image (4 bytes per value) for the iterations, in memory as far as the
   * budget goes. */
  if (ok && smoothed)
    {
      img->prepared = sv__spill_new (beside, "smoothed", img->nz, float_slice, img->z_begin,
                                     (guint)MIN (keep_budget / float_slice, G_MAXUINT), error);
      ok = img->prepared != NULL;
    }
  if (!sv_stream_ranks_agree (ranks, ok, error) || !sv__stream_image_scan_statistics (img, error))
    return FALSE;
  img->prepared_full = img->prepared != NULL;
  img->beside = beside;
  img->n_slots = (img->z_end - img->z_begin + max_depth - 1) / max_depth;
  img->kept = g_new0 (guint8 *, MAX (img->n_slots, 1));
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

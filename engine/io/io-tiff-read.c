/* Supervox engine: the public TIFF readers: volumes (img_as_float), labels,
 * masks and file info. Pages arrive from the decoding threads
 * (io-tiff-decode.c) in any order; each is converted into its own part of
 * the output, so the callbacks need no locking (the value range excepted). */
#define G_LOG_DOMAIN "sv-engine"

#include <math.h>
#include <string.h>

#include "io-tiff-private.h"
#include "io-zarr-private.h"
#include "supervox/sv-io-slab.h"

/* ------------------------------------------------------------------------ */
/* Volumes */

/* img_as_float, as scikit-image 0.16+ does it: multiply by 1/max in double,
 * clamp signed values at -1, then round to float32. Sample i is read at
 * src[i * is] and written at out[i * os]; the common contiguous case gets
 * its own loop so that the compiler vectorises it. */
#define SV_CONVERT(ctype, expr)                                                                    \
  do                                                                                               \
    {                                                                                              \
      const ctype *src = samples;                                                                  \
      if (is == 1 && os == 1)                                                                      \
        for (gsize i = 0; i < n; i++)                                                              \
          {                                                                                        \
            double v = (double)src[i];                                                             \
            out[i] = (expr);                                                                       \
          }                                                                                        \
      else                                                                                         \
        for (gsize i = 0; i < n; i++)                                                              \
          {                                                                                        \
            double v = (double)src[i * is];                                                        \
            out[i * os] = (expr);                                                                  \
          }                                                                                        \
    }                                                                                              \
  while (0)

#define SV_UNSIGNED(maxv) ((float)(v * (1.0 / (double)(maxv))))
#define SV_SIGNED(maxv) ((float)fmax (v * (1.0 / (double)(maxv)), -1.0))

void
sv__tiff_convert_to_float (SvSampleType type, const void *samples, gsize n, gsize is, float *out,
                           gsize os)
{
  switch (type)
    {
    case SV_SAMPLE_U8:
      SV_CONVERT (guint8, SV_UNSIGNED (G_MAXUINT8));
      break;
    case SV_SAMPLE_U16:
      SV_CONVERT (guint16, SV_UNSIGNED (G_MAXUINT16));
      break;
    case SV_SAMPLE_U32:
      SV_CONVERT (guint32, SV_UNSIGNED (G_MAXUINT32));
      break;
    case SV_SAMPLE_I8:
      SV_CONVERT (gint8, SV_SIGNED (G_MAXINT8));
      break;
    case SV_SAMPLE_I16:
      SV_CONVERT (gint16, SV_SIGNED (G_MAXINT16));
      break;
    case SV_SAMPLE_I32:
      SV_CONVERT (gint32, SV_SIGNED (G_MAXINT32));
      break;
    case SV_SAMPLE_F32:
      if (is == 1 && os == 1)
        memcpy (out, samples, n * sizeof (float));
      else
        SV_CONVERT (float, (float)v);
      break;
    case SV_SAMPLE_F64:
      SV_CONVERT (double, (float)v);
      break;
    default:
      g_assert_not_reached ();
    }
}

typedef struct
{
  SvVolume *volume;
  int channel; /* -1: all */
} SvVolumeRead;

static gboolean
volume_page_cb (SvTiffReader *r, const SvTiffPage *page, const void *samples, gsize n,
                gpointer user_data, GError **error)
{
  SvVolumeRead *vr = user_data;
  SvVolume *v = vr->volume;
  gsize plane = (gsize)v->ny * v->nx;
  guint spp = page->layout.spp;
  guint bsize = page->layout.bps / 8;

  if (r->channels_in_pages > 1 && vr->channel < 0)
    /* One channel per page: every nc-th value of the slice. */
    sv__tiff_convert_to_float (r->type, samples, n, 1,
                               v->data + (page->z * plane) * v->nc + page->c, v->nc);
  else if (vr->channel >= 0 && spp > 1)
    sv__tiff_convert_to_float (r->type, (const guint8 *)samples + (gsize)vr->channel * bsize,
                               n / spp, spp, v->data + page->z * plane, 1);
  else
    sv__tiff_convert_to_float (r->type, samples, n, 1, v->data + page->z * plane * v->nc, 1);
  return TRUE;
}

SvVolume *
sv_tiff_read_volume_full (const char *path, const SvTiffReadOptions *options, char **note,
                          GError **error)
{
  g_autoptr (SvTiffReader) r = NULL;
  g_autoptr (SvVolume) volume = NULL;
  g_autofree gboolean *want = NULL;
  SvTiffReadOptions defaults;
  SvVolumeRead vr = { 0 };
  GError *local_error = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (options == NULL)
    {
      sv_tiff_read_options_init_defaults (&defaults);
      options = &defaults;
    }
  if (note != NULL)
    *note = NULL;
  if (sv_zarr_is_store (path))
    return sv__zarr_read_volume (path, options, error);
  r = sv__tiff_reader_open (path, error);
  if (r == NULL)
    return NULL;
  vr.channel = options->channel;
  if (vr.channel >= 0 && (guint)vr.channel >= r->nc)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_INVALID_PARAM,
                             "has %u channel%s (0 to %u), not channel %d", r->nc,
                             r->nc == 1 ? "" : "s", r->nc - 1, vr.channel);
      return NULL;
    }
  volume = sv_volume_new (r->nz, r->first.height, r->first.width, vr.channel >= 0 ? 1 : r->nc,
                          &local_error);
  if (volume == NULL)
    {
      sv__tiff_reader_error (r, error, local_error->code, "%s", local_error->message);
      g_error_free (local_error);
      return NULL;
    }
  vr.volume = volume;
  /* In hyperstacks, only the pages of the chosen channel are decoded. */
  if (vr.channel >= 0 && r->channels_in_pages > 1)
    {
      want = g_new0 (gboolean, r->pages->len);
      for (guint i = 0; i < r->pages->len; i++)
        want[i] = sv__tiff_reader_page (r, i)->c == (guint)vr.channel;
    }
  if (!sv__tiff_reader_for_each_page (r, want, options->n_threads, volume_page_cb, &vr, error))
    return NULL;

  memcpy (volume->spacing, r->spacing, sizeof volume->spacing);
  volume->spacing_from_file = r->spacing_from_file;
  volume->unit = g_strdup (r->unit);
  volume->source_type = r->type;
  if (note != NULL)
    *note = g_steal_pointer (&r->note);
  return g_steal_pointer (&volume);
}

SvVolume *
sv_tiff_read_volume (const char *path, GError **error)
{
  return sv_tiff_read_volume_full (path, NULL, NULL, error);
}

/* ------------------------------------------------------------------------ */
/* Labels and masks */

static gboolean
reader_require_one_sample (SvTiffReader *r, const char *what, GError **error)
{
  if (r->first.spp != 1 || r->nc != 1)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "a %s file must have one sample per pixel, not %u", what, r->nc);
      return FALSE;
    }
  return TRUE;
}

static gboolean
labels_page_cb (SvTiffReader *r, const SvTiffPage *page, const void *samples, gsize n,
                gpointer user_data, GError **error)
{
  SvLabels *labels = user_data;
  gint32 *out = labels->data + (gsize)page->z * n;

  switch (r->type)
    {
    case SV_SAMPLE_U8:
      for (gsize i = 0; i < n; i++)
        out[i] = ((const guint8 *)samples)[i];
      break;
    case SV_SAMPLE_I8:
      for (gsize i = 0; i < n; i++)
        out[i] = ((const gint8 *)samples)[i];
      break;
    case SV_SAMPLE_U16:
      for (gsize i = 0; i < n; i++)
        out[i] = ((const guint16 *)samples)[i];
      break;
    case SV_SAMPLE_I16:
      for (gsize i = 0; i < n; i++)
        out[i] = ((const gint16 *)samples)[i];
      break;
    case SV_SAMPLE_I32:
      memcpy (out, samples, n * sizeof (gint32));
      break;
    case SV_SAMPLE_U32:
      {
        const guint32 *src = samples;
        guint32 high = 0;
        /* Copy first, check once: the common case has no large label. */
        memcpy (out, src, n * sizeof (guint32));
        for (gsize i = 0; i < n; i++)
          high |= src[i];
        if (high > G_MAXINT32)
          for (gsize i = 0; i < n; i++)
            if (src[i] > G_MAXINT32)
              {
                sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_INVALID_DATA,
                                       "label %" G_GUINT32_FORMAT
                                       " on page %u is larger than %d, the largest label "
                                       "supported",
                                       src[i], page->number, G_MAXINT32);
                return FALSE;
              }
      }
      break;
    default:
      g_assert_not_reached ();
    }
  return TRUE;
}

SvLabels *
sv_tiff_read_labels (const char *path, GError **error)
{
  g_autoptr (SvTiffReader) r = NULL;
  g_autoptr (SvLabels) labels = NULL;
  GError *local_error = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  r = sv__tiff_reader_open (path, error);
  if (r == NULL)
    return NULL;
  if (!reader_require_one_sample (r, "label", error))
    return NULL;
  if (sv__sample_type_is_float (r->type))
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "a label file must hold integers, not %s values",
                             sv_sample_type_to_string (r->type));
      return NULL;
    }
  labels = sv_labels_new (r->nz, r->first.height, r->first.width, &local_error);
  if (labels == NULL)
    {
      sv__tiff_reader_error (r, error, local_error->code, "%s", local_error->message);
      g_error_free (local_error);
      return NULL;
    }
  if (!sv__tiff_reader_for_each_page (r, NULL, 0, labels_page_cb, labels, error))
    return NULL;
  memcpy (labels->spacing, r->spacing, sizeof labels->spacing);
  labels->unit = g_strdup (r->unit);
  return g_steal_pointer (&labels);
}

static gboolean
mask_page_cb (SvTiffReader *r, const SvTiffPage *page, const void *samples, gsize n,
              gpointer user_data, GError **error)
{
  (void)error;
  sv_tiff_samples_to_mask (r->type, samples, n, (guint8 *)user_data + (gsize)page->z * n);
  return TRUE;
}

guint8 *
sv_tiff_read_mask (const char *path, guint *nz, guint *ny, guint *nx, GError **error)
{
  g_autoptr (SvTiffReader) r = NULL;
  g_autofree guint8 *mask = NULL;
  gsize bytes;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (nz != NULL && ny != NULL && nx != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  r = sv__tiff_reader_open (path, error);
  if (r == NULL)
    return NULL;
  if (!reader_require_one_sample (r, "mask", error))
    return NULL;
  bytes = (gsize)r->nz * r->first.height * r->first.width;
  mask = g_try_malloc (bytes);
  if (mask == NULL)
    {
      g_autofree char *text = g_format_size (bytes);
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_NO_MEMORY,
                             "not enough memory for the mask (%s)", text);
      return NULL;
    }
  if (!sv__tiff_reader_for_each_page (r, NULL, 0, mask_page_cb, mask, error))
    return NULL;
  *nz = r->nz;
  *ny = r->first.height;
  *nx = r->first.width;
  return g_steal_pointer (&mask);
}

/* ------------------------------------------------------------------------ */
/* Info */

typedef struct
{
  GMutex lock;
  double min, max;
  gboolean any;
} SvRange;

#define SV_RANGE_OF(ctype)                                                                         \
  do                                                                                               \
    {                                                                                              \
      const ctype *src = samples;                                                                  \
      ctype lo = src[0], hi = src[0];                                                              \
      for (gsize i = 1; i < n; i++)                                                                \
        {                                                                                          \
          lo = src[i] < lo ? src[i] : lo;                                                          \
          hi = src[i] > hi ? src[i] : hi;                                                          \
        }                                                                                          \
      page_min = (double)lo;                                                                       \
      page_max = (double)hi;                                                                       \
    }                                                                                              \
  while (0)

#define SV_RANGE_OF_FLOAT(ctype)                                                                   \
  do                                                                                               \
    {                                                                                              \
      const ctype *src = samples;                                                                  \
      page_min = INFINITY;                                                                         \
      page_max = -INFINITY;                                                                        \
      for (gsize i = 0; i < n; i++)                                                                \
        {                                                                                          \
          double v = (double)src[i];                                                               \
          if (isnan (v))                                                                           \
            continue;                                                                              \
          page_min = v < page_min ? v : page_min;                                                  \
          page_max = v > page_max ? v : page_max;                                                  \
        }                                                                                          \
      if (page_min > page_max)                                                                     \
        return TRUE; /* all NaN */                                                                 \
    }                                                                                              \
  while (0)

static gboolean
range_page_cb (SvTiffReader *r, const SvTiffPage *page, const void *samples, gsize n,
               gpointer user_data, GError **error)
{
  SvRange *range = user_data;
  double page_min = 0.0, page_max = 0.0;

  switch (r->type)
    {
    case SV_SAMPLE_U8:
      SV_RANGE_OF (guint8);
      break;
    case SV_SAMPLE_I8:
      SV_RANGE_OF (gint8);
      break;
    case SV_SAMPLE_U16:
      SV_RANGE_OF (guint16);
      break;
    case SV_SAMPLE_I16:
      SV_RANGE_OF (gint16);
      break;
    case SV_SAMPLE_U32:
      SV_RANGE_OF (guint32);
      break;
    case SV_SAMPLE_I32:
      SV_RANGE_OF (gint32);
      break;
    case SV_SAMPLE_F32:
      SV_RANGE_OF_FLOAT (float);
      break;
    case SV_SAMPLE_F64:
      SV_RANGE_OF_FLOAT (double);
      break;
    default:
      g_assert_not_reached ();
    }
  g_mutex_lock (&range->lock);
  if (!range->any || page_min < range->min)
    range->min = page_min;
  if (!range->any || page_max > range->max)
    range->max = page_max;
  range->any = TRUE;
  g_mutex_unlock (&range->lock);
  return TRUE;
}

void
sv_tiff_info_clear (SvTiffInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->compression);
  g_free (info->unit);
  g_free (info->note);
  memset (info, 0, sizeof *info);
}

gboolean
sv_tiff_info (const char *path, SvTiffInfo *info, GError **error)
{
  g_autoptr (SvTiffReader) r = NULL;
  SvRange range = { 0 };
  gboolean ok;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (info != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  memset (info, 0, sizeof *info);
  r = sv__tiff_reader_open (path, error);
  if (r == NULL)
    return FALSE;
  g_mutex_init (&range.lock);
  ok = sv__tiff_reader_for_each_page (r, NULL, 0, range_page_cb, &range, error);
  g_mutex_clear (&range.lock);
  if (!ok)
    return FALSE;

  info->nz = r->nz;
  info->ny = r->first.height;
  info->nx = r->first.width;
  info->nc = r->nc;
  info->sample_type = r->type;
  info->bigtiff = r->bigtiff;
  info->tiled = r->any_tiled;
  info->compression = sv__tiff_compression_name (r->compression);
  memcpy (info->spacing, r->spacing, sizeof info->spacing);
  info->spacing_from_file = r->spacing_from_file;
  info->unit = g_strdup (r->unit);
  info->value_min = range.any ? range.min : NAN;
  info->value_max = range.any ? range.max : NAN;
  info->note = g_steal_pointer (&r->note);
  return TRUE;
}

/* Supervox engine: reading a TIFF stack a z-slab at a time. The file is
 * opened and its pages checked once; each slab decodes only its own pages,
 * on the same decoding threads as the whole-volume reader, and keeps the
 * file's sample type so that a slab costs what it costs on disk. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-io-slab.h"

#include <string.h>

#include "io-tiff-private.h"
#include "io-zarr-private.h"

struct _SvTiffSlabReader
{
  SvTiffReader *r;
  SvTiffSlabInfo info;
  int channel;   /* −1: every channel */
  int n_threads; /* decoding threads */
  guint sample_bytes;
  gboolean *want; /* per page, reused by every slab */
  SvZarrSlabs *zarr; /* a Zarr folder instead of a TIFF (r is then NULL) */
  /* Or the caller's function (r and zarr are then NULL). */
  SvSlabReadFunc read;
  gpointer read_data;
  char *own_unit;
};

/* A Zarr array or OME-Zarr image serves slabs of the same layout. */
static SvTiffSlabReader *
zarr_reader_open (const char *path, const SvTiffReadOptions *options, GError **error)
{
  SvZarrSlabs *zarr = sv__zarr_slabs_open (path, options->channel, options->n_threads, error);
  const SvZarrArray *a;
  SvTiffSlabReader *reader;

  if (zarr == NULL)
    return NULL;
  a = sv__zarr_slabs_array (zarr);
  reader = g_new0 (SvTiffSlabReader, 1);
  reader->zarr = zarr;
  reader->channel = options->channel;
  reader->n_threads = options->n_threads;
  reader->sample_bytes = a->item_bytes;
  reader->info.nz = (guint)a->shape[SV_ZARR_Z];
  reader->info.ny = (guint)a->shape[SV_ZARR_Y];
  reader->info.nx = (guint)a->shape[SV_ZARR_X];
  reader->info.nc = options->channel >= 0 ? 1 : (guint)a->shape[SV_ZARR_C];
  reader->info.sample_type = a->type;
  memcpy (reader->info.spacing, a->spacing, sizeof reader->info.spacing);
  reader->info.spacing_from_file = a->spacing_from_file;
  reader->info.unit = a->unit;
  return reader;
}

SvTiffSlabReader *
sv_tiff_slab_reader_open (const char *path, const SvTiffReadOptions *options, GError **error)
{
  g_autoptr (SvTiffReader) r = NULL;
  SvTiffReadOptions defaults;
  SvTiffSlabReader *reader;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (options == NULL)
    {
      sv_tiff_read_options_init_defaults (&defaults);
      options = &defaults;
    }
  if (sv_zarr_is_store (path))
    return zarr_reader_open (path, options, error);
  r = sv__tiff_reader_open (path, error);
  if (r == NULL)
    return NULL;
  if (options->channel >= 0 && (guint)options->channel >= r->nc)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_INVALID_PARAM,
                             "has %u channel%s (0 to %u), not channel %d", r->nc,
                             r->nc == 1 ? "" : "s", r->nc - 1, options->channel);
      return NULL;
    }

  reader = g_new0 (SvTiffSlabReader, 1);
  reader->channel = options->channel;
  reader->n_threads = options->n_threads;
  reader->sample_bytes = sv__sample_type_bytes (r->type);
  reader->info.nz = r->nz;
  reader->info.ny = r->first.height;
  reader->info.nx = r->first.width;
  reader->info.nc = options->channel >= 0 ? 1 : r->nc;
  reader->info.sample_type = r->type;
  memcpy (reader->info.spacing, r->spacing, sizeof reader->info.spacing);
  reader->info.spacing_from_file = r->spacing_from_file;
  reader->info.unit = r->unit;
  reader->info.note = r->note;
  reader->want = g_new0 (gboolean, MAX (r->pages->len, 1));
  reader->r = g_steal_pointer (&r);
  return reader;
}

SvTiffSlabReader *
sv_tiff_slab_reader_new_for_func (const SvTiffSlabInfo *info, SvSlabReadFunc read,
                                  gpointer user_data)
{
  SvTiffSlabReader *reader;

  g_return_val_if_fail (info != NULL && read != NULL, NULL);

  reader = g_new0 (SvTiffSlabReader, 1);
  reader->info = *info;
  reader->info.note = NULL;
  reader->own_unit = g_strdup (info->unit);
  reader->info.unit = reader->own_unit;
  reader->channel = -1;
  reader->sample_bytes = sv__sample_type_bytes (info->sample_type);
  reader->read = read;
  reader->read_data = user_data;
  return reader;
}

void
sv_tiff_slab_reader_free (SvTiffSlabReader *reader)
{
  if (reader == NULL)
    return;
  g_free (reader->own_unit);
  sv__zarr_slabs_free (reader->zarr);
  if (reader->r != NULL)
    sv__tiff_reader_free (reader->r);
  g_free (reader->want);
  g_free (reader);
}

const SvTiffSlabInfo *
sv_tiff_slab_reader_info (const SvTiffSlabReader *reader)
{
  return &reader->info;
}

gsize
sv_tiff_slab_reader_slice_bytes (const SvTiffSlabReader *reader)
{
  return (gsize)reader->info.ny * reader->info.nx * reader->info.nc * reader->sample_bytes;
}

/* Copies n samples of `bytes` bytes from src[i · is] to dst[i · os]. */
static void
copy_samples (const guint8 *src, gsize is, guint8 *dst, gsize os, gsize n, guint bytes)
{
  if (is == 1 && os == 1)
    {
      memcpy (dst, src, n * bytes);
      return;
    }
  for (gsize i = 0; i < n; i++)
    memcpy (dst + i * os * bytes, src + i * is * bytes, bytes);
}

typedef struct
{
  SvTiffSlabReader *reader;
  guint z0;
  guint8 *out;
} SlabRead;

static gboolean
slab_page_cb (SvTiffReader *r, const SvTiffPage *page, const void *samples, gsize n,
              gpointer user_data, GError **error)
{
  SlabRead *sr = user_data;
  const SvTiffSlabReader *reader = sr->reader;
  const guint nc = reader->info.nc, bytes = reader->sample_bytes;
  const guint spp = page->layout.spp;
  guint8 *slice = sr->out + (gsize)(page->z - sr->z0) * sv_tiff_slab_reader_slice_bytes (reader);

  (void)error;
  /* The same three layouts as the whole-volume reader's volume_page_cb. */
  if (r->channels_in_pages > 1 && reader->channel < 0)
    copy_samples (samples, 1, slice + (gsize)page->c * bytes, nc, n, bytes);
  else if (reader->channel >= 0 && spp > 1)
    copy_samples ((const guint8 *)samples + (gsize)reader->channel * bytes, spp, slice, 1, n / spp,
                  bytes);
  else
    copy_samples (samples, 1, slice, 1, n, bytes);
  return TRUE;
}

gboolean
sv_tiff_slab_reader_read (SvTiffSlabReader *reader, guint z0, guint z1, void *samples,
                          GError **error)
{
  SvTiffReader *r = reader->r;
  SlabRead sr = { reader, z0, samples };

  g_return_val_if_fail (z0 <= z1 && z1 <= reader->info.nz, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (reader->zarr != NULL)
    return sv__zarr_slabs_read (reader->zarr, z0, z1, samples, error);
  if (reader->read != NULL)
    return z0 == z1 || reader->read (z0, z1, samples, reader->read_data, error);
  if (z0 == z1)
    return TRUE;
  for (guint i = 0; i < r->pages->len; i++)
    {
      const SvTiffPage *page = sv__tiff_reader_page (r, i);
      reader->want[i] = page->z >= z0 && page->z < z1
                        && (reader->channel < 0 || r->channels_in_pages <= 1
                            || page->c == (guint)reader->channel);
    }
  return sv__tiff_reader_for_each_page (r, reader->want, reader->n_threads, slab_page_cb, &sr,
                                        error);
}

void
sv_tiff_samples_to_float (SvSampleType type, const void *samples, gsize n, float *out)
{
  sv__tiff_convert_to_float (type, samples, n, 1, out, 1);
}

#define SV_MASK_NONZERO(ctype)                                                                     \
  do                                                                                               \
    {                                                                                              \
      const ctype *src = samples;                                                                  \
      for (gsize i = 0; i < n; i++)                                                                \
        out[i] = src[i] != 0;                                                                      \
    }                                                                                              \
  while (0)

void
sv_tiff_samples_to_mask (SvSampleType type, const void *samples, gsize n, guint8 *out)
{
  switch (type)
    {
    case SV_SAMPLE_U8:
    case SV_SAMPLE_I8:
      SV_MASK_NONZERO (guint8);
      break;
    case SV_SAMPLE_U16:
    case SV_SAMPLE_I16:
      SV_MASK_NONZERO (guint16);
      break;
    case SV_SAMPLE_U32:
    case SV_SAMPLE_I32:
      SV_MASK_NONZERO (guint32);
      break;
    case SV_SAMPLE_F32:
      /* -0.0 is zero, NaN is not. */
      SV_MASK_NONZERO (float);
      break;
    case SV_SAMPLE_F64:
      SV_MASK_NONZERO (double);
      break;
    default:
      g_assert_not_reached ();
    }
}

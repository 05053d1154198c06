/* Supervox engine: what one page of a written TIFF is (its tags, its cut
 * into strips) and how one strip is made: filled from the job's source,
 * run through the predictor and compressed. Both label-file writers (the
 * strip writer and libtiff's, io-tiff-strip-writer.c and
 * io-tiff-write-libtiff.c) and the directory templates (io-tiff-layout.c)
 * describe pages through here, so they cannot disagree. */
#define G_LOG_DOMAIN "sv-engine"

#include <math.h>
#include <string.h>

#include "io-tiff-private.h"
#include "sv-config.h"

/* Pages up to 1 MiB are one strip (one codec call, one read for readers);
 * larger pages are cut into strips of about 512 KiB, which keeps every
 * worker busy on big 2D images and readers' buffers small. */
#define SV_PAGE_STRIP_MAX_BYTES (1024 * 1024)
#define SV_STRIP_TARGET_BYTES (512 * 1024)

void
sv__tiff_strip_geometry (const SvTiffWriteJob *job, SvStripGeometry *g)
{
  g->row_bytes = (gsize)job->nx * job->nc * (job->bps / 8);
  g->rows_per_strip = g->row_bytes * job->ny <= SV_PAGE_STRIP_MAX_BYTES
                          ? job->ny
                          : (guint32)CLAMP (SV_STRIP_TARGET_BYTES / g->row_bytes, 1, job->ny);
  g->strips_per_page = (job->ny + g->rows_per_strip - 1) / g->rows_per_strip;
  g->strip_bytes = g->row_bytes * g->rows_per_strip;
}

guint16
sv__tiff_compression_tag (SvTiffCompression compression)
{
  switch (compression)
    {
    case SV_TIFF_COMPRESSION_DEFLATE:
    case SV_TIFF_COMPRESSION_DEFLATE_RUNS:
      return COMPRESSION_ADOBE_DEFLATE;
    case SV_TIFF_COMPRESSION_ZSTD:
      return COMPRESSION_ZSTD;
    case SV_TIFF_COMPRESSION_LZW:
      return COMPRESSION_LZW;
    case SV_TIFF_COMPRESSION_NONE:
    default:
      return COMPRESSION_NONE;
    }
}

static double
resolution_from_spacing (double spacing)
{
  return spacing > 0.0 && isfinite (spacing) ? 1.0 / spacing : 1.0;
}

static void
set_layout_fields (TIFF *tif, const SvTiffWriteJob *job, guint32 width, guint32 height,
                   guint32 rows_per_strip)
{
  guint16 compression = sv__tiff_compression_tag (job->compression);

  TIFFSetField (tif, TIFFTAG_SUBFILETYPE, 0);
  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, width);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, height);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, (guint16)job->nc);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, job->bps);
  TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, job->format);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, job->nc == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField (tif, TIFFTAG_COMPRESSION, compression);
  /* Only codecs with a predictor know the tag. */
  if (compression != COMPRESSION_NONE)
    TIFFSetField (tif, TIFFTAG_PREDICTOR, job->predictor ? PREDICTOR_HORIZONTAL : PREDICTOR_NONE);
  TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip);
}

void
sv__tiff_set_page_fields (TIFF *tif, const SvTiffWriteJob *job, guint32 rows_per_strip, guint z,
                          const char *description)
{
  set_layout_fields (tif, job, (guint32)job->nx, (guint32)job->ny, rows_per_strip);
  /* ImageJ stores pixels per unit with no TIFF unit; the unit is in the
   * description. */
  TIFFSetField (tif, TIFFTAG_XRESOLUTION, resolution_from_spacing (job->spacing[2]));
  TIFFSetField (tif, TIFFTAG_YRESOLUTION, resolution_from_spacing (job->spacing[1]));
  TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
  if (z == 0)
    TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, description);
  TIFFSetField (tif, TIFFTAG_SOFTWARE, "supervox " SV_VERSION);
}

gsize
sv__tiff_strip_fill (const SvTiffWriteJob *job, const SvStripGeometry *g, guint64 strip,
                     guint8 *raw, guint *rows_out)
{
  guint z = (guint)(strip / g->strips_per_page);
  guint y0 = (guint)(strip % g->strips_per_page) * g->rows_per_strip;
  guint rows = MIN (g->rows_per_strip, job->ny - y0);

  job->fill (z, y0, rows, raw, job->user_data);
  if (rows_out != NULL)
    *rows_out = rows;
  return rows * g->row_bytes;
}

/* ------------------------------------------------------------------------ */
/* LZW through libtiff's own encoder */

/* A file in memory for libtiff's client I/O. */
struct _SvTiffMemFile
{
  guint8 *data;
  gsize size, capacity, pos;
};

static tmsize_t
mem_read (thandle_t h, void *buf, tmsize_t n)
{
  SvTiffMemFile *m = h;
  gsize k = m->pos < m->size ? MIN ((gsize)n, m->size - m->pos) : 0;

  memcpy (buf, m->data + m->pos, k);
  m->pos += k;
  return (tmsize_t)k;
}

static tmsize_t
mem_write (thandle_t h, void *buf, tmsize_t n)
{
  SvTiffMemFile *m = h;
  gsize end = m->pos + (gsize)n;

  if (end > m->capacity)
    {
      gsize capacity = MAX (end, 2 * m->capacity);
      guint8 *data = g_try_realloc (m->data, capacity);
      if (data == NULL)
        return -1;
      m->data = data;
      m->capacity = capacity;
    }
  /* A seek past the end leaves zeros, as a hole in a file reads. */
  if (m->pos > m->size)
    memset (m->data + m->size, 0, m->pos - m->size);
  memcpy (m->data + m->pos, buf, (gsize)n);
  m->pos = end;
  m->size = MAX (m->size, end);
  return n;
}

static toff_t
mem_seek (thandle_t h, toff_t offset, int whence)
{
  SvTiffMemFile *m = h;

  if (whence == SEEK_CUR)
    offset += m->pos;
  else if (whence == SEEK_END)
    offset += m->size;
  m->pos = (gsize)offset;
  return offset;
}

static int
mem_close (thandle_t h)
{
  return 0;
}

static toff_t
mem_size (thandle_t h)
{
  return ((SvTiffMemFile *)h)->size;
}

static int
mem_map (thandle_t h, void **base, toff_t *size)
{
  return 0;
}

static void
mem_unmap (thandle_t h, void *base, toff_t size)
{
}

TIFF *
sv__tiff_open_memory (SvTiffMemFile **file, gboolean bigtiff, TIFFOpenOptions *opts)
{
  SvTiffMemFile *m = g_new0 (SvTiffMemFile, 1);
  TIFF *tif = TIFFClientOpenExt ("memory", bigtiff ? "w8" : "w", m, mem_read, mem_write, mem_seek,
                                 mem_close, mem_size, mem_map, mem_unmap, opts);

  if (tif == NULL)
    {
      sv__tiff_memory_free (m);
      return NULL;
    }
  *file = m;
  return tif;
}

const guint8 *
sv__tiff_memory_bytes (const SvTiffMemFile *file, gsize *size)
{
  *size = file->size;
  return file->data;
}

void
sv__tiff_memory_free (SvTiffMemFile *file)
{
  if (file == NULL)
    return;
  g_free (file->data);
  g_free (file);
}

/* One strip through libtiff's encoder, as TIFFWriteEncodedStrip writes it
 * into the file: strips are coded independently (the LZW table and the
 * predictor start afresh at each), so a one-strip image of the same width
 * and fields codes the same bytes. They land right after the header. */
static const guint8 *
encode_with_libtiff (const SvTiffWriteJob *job, SvTiffCodec *codec, guint8 *raw, guint rows,
                     gsize raw_len, gsize *len)
{
  SvTiffMessages msgs = { .name = "memory" };
  TIFFOpenOptions *opts = sv__tiff_options_new (&msgs);
  SvTiffMemFile *file = NULL;
  TIFF *tif = sv__tiff_open_memory (&file, FALSE, opts);
  const guint8 *out = NULL;
  guint8 *copy;
  gsize size;

  if (tif != NULL)
    {
      set_layout_fields (tif, job, (guint32)job->nx, rows, rows);
      if (TIFFWriteEncodedStrip (tif, 0, raw, (tmsize_t)raw_len) >= 0)
        {
          const guint8 *bytes = sv__tiff_memory_bytes (file, &size);
          guint64 offset = TIFFGetStrileOffset (tif, 0);
          guint64 count = TIFFGetStrileByteCount (tif, 0);

          copy = offset + count <= size ? sv__tiff_codec_buffer (codec, count) : NULL;
          if (copy != NULL)
            {
              memcpy (copy, bytes + offset, count);
              *len = count;
              out = copy;
            }
        }
      TIFFClose (tif);
    }
  sv__tiff_memory_free (file);
  TIFFOpenOptionsFree (opts);
  g_free (msgs.first_error);
  return out;
}

const guint8 *
sv__tiff_strip_encode (const SvTiffWriteJob *job, const SvStripGeometry *g, SvTiffCodec *codec,
                       guint64 strip, guint8 *raw, gsize *len)
{
  guint rows;
  gsize raw_len = sv__tiff_strip_fill (job, g, strip, raw, &rows);

  /* libtiff applies LZW's predictor itself. */
  if (job->compression == SV_TIFF_COMPRESSION_LZW)
    return encode_with_libtiff (job, codec, raw, rows, raw_len, len);
  if (job->predictor)
    sv__tiff_predictor_apply (raw, rows, job->nx, job->nc, job->bps / 8);
  if (job->compression == SV_TIFF_COMPRESSION_DEFLATE_RUNS)
    return sv__tiff_codec_encode_runs (codec, raw, raw_len, g->row_bytes,
                                       (guint)job->nc * (job->bps / 8), len);
  return sv__tiff_codec_encode (codec, job->compression, job->level, raw, raw_len, len);
}

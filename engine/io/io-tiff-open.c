/* Supervox engine: opening a TIFF for reading.
 *
 * One pass over the page directories checks every page (same size and
 * sample format, strip/tile data inside the file, compressed sizes that
 * could plausibly decode to the claimed image), records where each strip or
 * tile lies, and reads the metadata, so that nothing is allocated from a
 * header the file cannot back. Messages from libtiff are captured per file
 * through TIFFOpenOptions and folded into the GError instead of going to
 * stderr. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "io-tiff-private.h"

/* ------------------------------------------------------------------------ */
/* Reader */

static void
page_clear (gpointer data)
{
  SvTiffPage *page = data;

  g_free (page->offsets);
  g_free (page->counts);
}

void
sv__tiff_reader_free (SvTiffReader *r)
{
  if (r == NULL)
    return;
  if (r->tif != NULL)
    TIFFClose (r->tif);
  if (r->opts != NULL)
    TIFFOpenOptionsFree (r->opts);
  if (r->fd >= 0)
    close (r->fd);
  if (r->pages != NULL)
    g_array_unref (r->pages);
  g_free (r->note);
  g_free (r->msgs.first_error);
  g_free (r->unit);
  g_free (r->path);
  g_free (r);
}

void
sv__tiff_reader_error (SvTiffReader *r, GError **error, SvEngineError code, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *text = NULL;
  g_autofree char *name = g_filename_display_name (r->path);

  va_start (ap, fmt);
  text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, SV_ENGINE_ERROR, code, "%s: %s", name, text);
}

static guint64
decode_uint (const guint8 *b, guint n, gboolean big_endian)
{
  guint64 v = 0;

  for (guint i = 0; i < n; i++)
    v |= (guint64)b[big_endian ? n - 1 - i : i] << (8 * i);
  return v;
}

/* The "next directory" pointer stored after the directory at `diroff`. */
static gboolean
read_next_ifd_offset (SvTiffReader *r, guint64 diroff, guint64 *next)
{
  guint8 buf[8];
  guint count_size = r->bigtiff ? 8 : 2;
  guint entry_size = r->bigtiff ? 20 : 12;
  guint offset_size = r->bigtiff ? 8 : 4;
  guint64 count;

  if (!sv__tiff_read_at (r->fd, diroff, buf, count_size))
    return FALSE;
  count = decode_uint (buf, count_size, r->big_endian);
  if (!sv__tiff_read_at (r->fd, diroff + count_size + count * entry_size, buf, offset_size))
    return FALSE;
  *next = decode_uint (buf, offset_size, r->big_endian);
  return TRUE;
}

/* Checks the file exists, is not empty and starts with a TIFF header, so the
 * common mistakes get a plain message rather than libtiff's. */
static gboolean
reader_check_header (SvTiffReader *r, GError **error)
{
  GStatBuf st;
  guint8 header[16];
  gsize header_len;
  guint64 first_ifd;
  int saved_errno;

  if (g_stat (r->path, &st) != 0)
    {
      saved_errno = errno;
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_IO, "%s", g_strerror (saved_errno));
      return FALSE;
    }
  if (S_ISDIR (st.st_mode))
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_IO, "is a folder, not a TIFF file");
      return FALSE;
    }
  r->fd = g_open (r->path, O_RDONLY | O_CLOEXEC, 0);
  if (r->fd < 0)
    {
      saved_errno = errno;
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_IO, "%s", g_strerror (saved_errno));
      return FALSE;
    }
  r->file_size = (guint64)st.st_size;
  if (r->file_size == 0)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "empty file");
      return FALSE;
    }

  header_len = MIN (r->file_size, sizeof header);
  if (!sv__tiff_read_at (r->fd, 0, header, header_len))
    {
      saved_errno = errno;
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_IO, "cannot read: %s",
                             g_strerror (saved_errno));
      return FALSE;
    }
  if (header_len < 4
      || !((header[0] == 'I' && header[1] == 'I') || (header[0] == 'M' && header[1] == 'M')))
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "not a TIFF file");
      return FALSE;
    }
  r->big_endian = header[0] == 'M';
  switch (decode_uint (header + 2, 2, r->big_endian))
    {
    case 42:
      r->bigtiff = FALSE;
      break;
    case 43:
      r->bigtiff = TRUE;
      break;
    default:
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "not a TIFF file");
      return FALSE;
    }
  if (header_len < (r->bigtiff ? 16u : 8u))
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "truncated: the TIFF header is incomplete");
      return FALSE;
    }
  first_ifd = r->bigtiff ? decode_uint (header + 8, 8, r->big_endian)
                         : decode_uint (header + 4, 4, r->big_endian);
  if (first_ifd == 0)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "holds no image");
      return FALSE;
    }
  if (first_ifd >= r->file_size)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "truncated: page 1 starts beyond the end of the file");
      return FALSE;
    }
  return TRUE;
}

static void
layout_read (TIFF *tif, SvPageLayout *l)
{
  guint16 u16;
  guint32 u32;

  memset (l, 0, sizeof *l);
  TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &l->width);
  TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &l->height);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLESPERPIXEL, &l->spp);
  TIFFGetFieldDefaulted (tif, TIFFTAG_BITSPERSAMPLE, &l->bps);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLEFORMAT, &l->format);
  TIFFGetFieldDefaulted (tif, TIFFTAG_PLANARCONFIG, &l->planar);
  TIFFGetFieldDefaulted (tif, TIFFTAG_COMPRESSION, &l->compression);
  l->photometric = TIFFGetField (tif, TIFFTAG_PHOTOMETRIC, &u16) ? u16 : PHOTOMETRIC_MINISBLACK;
  l->subfile_type = TIFFGetField (tif, TIFFTAG_SUBFILETYPE, &u32) ? u32 : 0;
  TIFFGetFieldDefaulted (tif, TIFFTAG_FILLORDER, &l->fillorder);
  /* Only codecs with a predictor know the tag. */
  l->predictor = PREDICTOR_NONE;
  if (l->compression == COMPRESSION_LZW || l->compression == COMPRESSION_ADOBE_DEFLATE
      || l->compression == COMPRESSION_DEFLATE || l->compression == COMPRESSION_ZSTD
      || l->compression == COMPRESSION_LZMA)
    l->predictor = TIFFGetField (tif, TIFFTAG_PREDICTOR, &u16) ? u16 : PREDICTOR_NONE;
  l->tiled = TIFFIsTiled (tif);
  if (l->tiled)
    {
      TIFFGetField (tif, TIFFTAG_TILEWIDTH, &l->tile_width);
      TIFFGetField (tif, TIFFTAG_TILELENGTH, &l->tile_height);
    }
  else
    {
      TIFFGetFieldDefaulted (tif, TIFFTAG_ROWSPERSTRIP, &l->rows_per_strip);
      if (l->rows_per_strip == 0 || l->rows_per_strip > l->height)
        l->rows_per_strip = l->height;
    }
  if (l->spp == 1)
    l->planar = PLANARCONFIG_CONTIG;
}

static char *
layout_describe (const SvPageLayout *l)
{
  return g_strdup_printf ("%u-bit %s, %u sample%s per pixel", l->bps,
                          sv__sample_format_words (l->format), l->spp, l->spp == 1 ? "" : "s");
}

/* Checks that the page's strips or tiles lie inside the file and that their
 * stored sizes can back the image the header claims. */
static gboolean
reader_check_page_data (SvTiffReader *r, SvTiffPage *p, GError **error)
{
  const SvPageLayout *l = &p->layout;
  guint page = p->number;
  TIFF *tif = r->tif;
  guint32 n = l->tiled ? TIFFNumberOfTiles (tif) : TIFFNumberOfStrips (tif);
  guint32 strips_per_plane = 0;
  guint64 max_end = 0, first_offset = G_MAXUINT64, stored = 0, decoded = 0;
  guint64 ratio = sv__tiff_compression_max_ratio (l->compression);

  if (n == 0)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: page %u has no image data",
                             page);
      return FALSE;
    }
  if (!l->tiled)
    strips_per_plane = (l->height + l->rows_per_strip - 1) / l->rows_per_strip;
  /* Where each strip lies, for the decoding threads. */
  p->n_chunks = n;
  p->offsets = g_try_new (guint64, n);
  p->counts = g_try_new (guint64, n);
  if (p->offsets == NULL || p->counts == NULL)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_NO_MEMORY,
                             "not enough memory for the index of page %u", page);
      return FALSE;
    }

  for (guint32 i = 0; i < n; i++)
    {
      int err = 0;
      guint64 offset = TIFFGetStrileOffsetWithErr (tif, i, &err);
      guint64 count = err ? 0 : TIFFGetStrileByteCountWithErr (tif, i, &err);
      guint64 need;

      if (err)
        {
          sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: page %u: %s", page,
                                 sv__tiff_messages_text (&r->msgs, "cannot read the data offsets"));
          return FALSE;
        }
      p->offsets[i] = offset;
      p->counts[i] = count;
      if (count > 0)
        {
          /* Saturate: a corrupt BigTIFF offset can be near 2^64. */
          guint64 end = offset > G_MAXUINT64 - count ? G_MAXUINT64 : offset + count;
          if (end > r->file_size)
            max_end = MAX (max_end, end);
          first_offset = MIN (first_offset, offset);
        }

      if (l->tiled)
        need = TIFFTileSize64 (tif);
      else
        {
          guint32 k = strips_per_plane ? i % strips_per_plane : 0;
          guint32 rows = MIN (l->rows_per_strip, l->height - k * l->rows_per_strip);
          need = TIFFVStripSize64 (tif, rows);
        }
      if (l->compression == COMPRESSION_NONE && count < need)
        {
          sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                                 "corrupt: page %u %s %u holds %" G_GUINT64_FORMAT
                                 " bytes but needs %" G_GUINT64_FORMAT,
                                 page, l->tiled ? "tile" : "strip", i + 1, count, need);
          return FALSE;
        }
      stored += count;
      decoded += need;
    }
  /* libtiff may have chopped one big strip into many, so look at the whole
   * page: data that starts past the end is a bad offset or a file cut before
   * this page; data that runs past the end is a cut file. */
  if (max_end > r->file_size && first_offset >= r->file_size)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "truncated or corrupt: page %u data starts at byte %" G_GUINT64_FORMAT
                             ", beyond the end of the file (%" G_GUINT64_FORMAT " bytes)",
                             page, first_offset, r->file_size);
      return FALSE;
    }
  if (max_end > r->file_size)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "truncated: page %u needs %" G_GUINT64_FORMAT
                             " bytes beyond the end of the file",
                             page, max_end - r->file_size);
      return FALSE;
    }
  /* A few hundred bytes of compressed data cannot hold gigabytes of image;
   * catch such headers before anything is allocated from them. */
  if (ratio > 0 && (double)decoded > (double)stored * (double)ratio + (double)n * 4096.0)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "corrupt: page %u claims %" G_GUINT64_FORMAT
                             " bytes of image but stores only %" G_GUINT64_FORMAT,
                             page, decoded, stored);
      return FALSE;
    }
  return TRUE;
}

/* Checks one page against the first and the formats we read. */
/* TRUE when the decoding threads can read the page with pread and our
 * codecs; anything else (LZW, JPEG, big-endian samples, bit-reversed fill
 * order, ...) goes through libtiff. */
static gboolean
page_is_fast (const SvTiffReader *r, const SvPageLayout *l)
{
  if (r->big_endian && l->bps > 8)
    return FALSE;
  if (!sv__tiff_codec_can_decode (l->compression) || l->fillorder != FILLORDER_MSB2LSB
      || l->photometric == PHOTOMETRIC_YCBCR)
    return FALSE;
  if (l->compression == COMPRESSION_NONE)
    return TRUE;
  return l->predictor == PREDICTOR_NONE || l->predictor == PREDICTOR_HORIZONTAL
         || (l->predictor == PREDICTOR_FLOATINGPOINT && l->format == SAMPLEFORMAT_IEEEFP);
}

static gboolean
reader_check_page (SvTiffReader *r, SvTiffPage *p, GError **error)
{
  const SvPageLayout *l = &p->layout;
  guint page = p->number;
  SvSampleType type;

  if (l->width == 0 || l->height == 0)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "corrupt: page %u has no width or height", page);
      return FALSE;
    }
  if (r->pages->len > 0)
    {
      const SvPageLayout *f = &r->first;
      if (l->width != f->width || l->height != f->height)
        {
          sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                                 "slices have different sizes: page %u is %u×%u, page %u is %u×%u",
                                 page, l->width, l->height, r->first_page, f->width, f->height);
          return FALSE;
        }
      if (l->spp != f->spp || l->bps != f->bps || l->format != f->format)
        {
          g_autofree char *a = layout_describe (l);
          g_autofree char *b = layout_describe (f);
          sv__tiff_reader_error (
              r, error, SV_ENGINE_ERROR_FORMAT,
              "slices have different sample formats: page %u is %s, page %u is %s", page, a,
              r->first_page, b);
          return FALSE;
        }
    }
  if (!sv__sample_type_from_tiff (l->bps, l->format, &type))
    {
      sv__tiff_reader_error (
          r, error, SV_ENGINE_ERROR_FORMAT,
          "%u-bit %s samples are not supported (8, 16 or 32-bit integers, 32 or 64-bit floats)",
          l->bps, sv__sample_format_words (l->format));
      return FALSE;
    }
  if (l->spp != 1 && l->spp != 3)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "%u samples per pixel are not supported (1 for grey, 3 for colour)",
                             l->spp);
      return FALSE;
    }
  if (l->photometric == PHOTOMETRIC_YCBCR && l->compression != COMPRESSION_JPEG)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "YCbCr colour is only supported in JPEG-compressed files");
      return FALSE;
    }
  if (!TIFFIsCODECConfigured (l->compression))
    {
      g_autofree char *cname = sv__tiff_compression_name (l->compression);
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "page %u uses %s compression, which this build cannot decode", page,
                             cname);
      return FALSE;
    }
  if (l->tiled && (l->tile_width == 0 || l->tile_height == 0))
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "corrupt: page %u has tiles of size 0", page);
      return FALSE;
    }
  p->fast = page_is_fast (r, l);
  return reader_check_page_data (r, p, error);
}

/* ------------------------------------------------------------------------ */
/* Opening and scanning */

SvTiffReader *
sv__tiff_reader_open (const char *path, GError **error)
{
  g_autoptr (SvTiffReader) r = g_new0 (SvTiffReader, 1);
  guint page = 0;

  r->path = g_strdup (path);
  r->fd = -1;
  r->msgs.name = r->path;
  r->pages = g_array_new (FALSE, TRUE, sizeof (SvTiffPage));
  g_array_set_clear_func (r->pages, page_clear);

  if (!reader_check_header (r, error))
    return NULL;

  r->opts = sv__tiff_options_new (&r->msgs);
  /* No memory mapping ("m"): a file cut while we read it must give an error,
   * not SIGBUS; strips are still read straight into our page buffer. */
  r->tif = TIFFOpenExt (path, "rm", r->opts);
  if (r->tif == NULL)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt TIFF: %s",
                             sv__tiff_messages_text (&r->msgs, "libtiff cannot open it"));
      return NULL;
    }

  /* First pass: check every page before any voxel buffer exists. */
  for (tdir_t dir = 0;; dir++)
    {
      SvTiffPage p = { 0 };
      guint64 diroff, next = 0;

      page = (guint)dir + 1;
      p.dir = dir;
      p.number = page;
      layout_read (r->tif, &p.layout);
      /* Reduced-resolution pages are thumbnails or pyramid levels, not z. */
      if (!(p.layout.subfile_type & FILETYPE_REDUCEDIMAGE))
        {
          if (!reader_check_page (r, &p, error))
            {
              page_clear (&p);
              return NULL;
            }
          if (r->pages->len == 0)
            {
              r->first = p.layout;
              r->first_page = page;
              r->compression = p.layout.compression;
              sv__sample_type_from_tiff (p.layout.bps, p.layout.format, &r->type);
            }
          r->any_tiled |= p.layout.tiled;
          g_array_append_val (r->pages, p);
        }

      diroff = TIFFCurrentDirOffset (r->tif);
      sv__tiff_messages_reset (&r->msgs);
      if (TIFFReadDirectory (r->tif))
        continue;
      if (!read_next_ifd_offset (r, diroff, &next))
        {
          sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                                 "truncated: the index of page %u ends beyond the end of the file",
                                 page);
          return NULL;
        }
      if (next == 0)
        break;
      if (next >= r->file_size)
        {
          sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                                 "truncated: page %u starts beyond the end of the file", page + 1);
          return NULL;
        }
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: cannot read page %u: %s",
                             page + 1, sv__tiff_messages_text (&r->msgs, "invalid page index"));
      return NULL;
    }

  if (r->pages->len == 0)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "holds no full-resolution image");
      return NULL;
    }

  if (!TIFFSetDirectory (r->tif, sv__tiff_reader_page (r, 0)->dir))
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "corrupt: cannot go back to page %u: %s", r->first_page,
                             sv__tiff_messages_text (&r->msgs, "libtiff failed"));
      return NULL;
    }
  if (!sv__tiff_read_metadata (r, error))
    return NULL;
  return g_steal_pointer (&r);
}

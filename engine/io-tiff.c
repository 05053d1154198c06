/* Supervox engine: TIFF input and output through libtiff.
 *
 * Reading happens in two passes over the page directories. The first checks
 * every page (same size and sample format, strip/tile data inside the file,
 * compressed sizes that could plausibly decode to the claimed image) and
 * reads the spacing metadata, so that nothing is allocated from a header the
 * file cannot back. The second decodes each page straight into one page
 * buffer (strips) or through one tile buffer, then converts the page in one
 * tight loop. Messages from libtiff are captured per file through
 * TIFFOpenOptions and folded into the GError instead of going to stderr. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <tiffio.h>

#include "error.h"
#include "io.h"
#include "sv-config.h"

/* Above this many bytes of uncompressed data a label file is written as
 * BigTIFF; classic TIFF offsets stop at 4 GiB and the margin leaves room for
 * directories and data that deflate could not shrink. */
#define SV_BIGTIFF_THRESHOLD (G_GUINT64_CONSTANT (0xFFFFFFFF) - (G_GUINT64_CONSTANT (1) << 25))

/* Strips of about this many bytes: large enough for deflate to work well,
 * small enough that readers never need big buffers. */
#define SV_STRIP_TARGET_BYTES (256 * 1024)

/* ------------------------------------------------------------------------ */
/* libtiff messages */

typedef struct
{
  const char *name;  /* file name for debug output */
  char *first_error; /* first libtiff error since the last reset, owned */
} SvTiffMessages;

static int
on_tiff_error (TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap)
{
  SvTiffMessages *msgs = user_data;

  if (msgs->first_error == NULL)
    msgs->first_error = g_strdup_vprintf (fmt, ap);
  return 1;
}

static int
on_tiff_warning (TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap)
{
  SvTiffMessages *msgs = user_data;
  g_autofree char *text = g_strdup_vprintf (fmt, ap);

  g_debug ("%s: libtiff warning in %s: %s", msgs->name, module ? module : "?", text);
  return 1;
}

static TIFFOpenOptions *
tiff_options_new (SvTiffMessages *msgs)
{
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();

  TIFFOpenOptionsSetErrorHandlerExtR (opts, on_tiff_error, msgs);
  TIFFOpenOptionsSetWarningHandlerExtR (opts, on_tiff_warning, msgs);
  return opts;
}

static void
messages_reset (SvTiffMessages *msgs)
{
  g_clear_pointer (&msgs->first_error, g_free);
}

/* The captured libtiff message, or `fallback` when libtiff said nothing. */
static const char *
messages_text (const SvTiffMessages *msgs, const char *fallback)
{
  return msgs->first_error ? msgs->first_error : fallback;
}

/* ------------------------------------------------------------------------ */
/* Sample types */

static guint
sample_type_bytes (SvSampleType type)
{
  switch (type)
    {
    case SV_SAMPLE_U8:
    case SV_SAMPLE_I8:
      return 1;
    case SV_SAMPLE_U16:
    case SV_SAMPLE_I16:
      return 2;
    case SV_SAMPLE_U32:
    case SV_SAMPLE_I32:
    case SV_SAMPLE_F32:
      return 4;
    case SV_SAMPLE_F64:
      return 8;
    default:
      g_return_val_if_reached (1);
    }
}

static gboolean
sample_type_is_float (SvSampleType type)
{
  return type == SV_SAMPLE_F32 || type == SV_SAMPLE_F64;
}

/* Maps TIFF's BitsPerSample + SampleFormat; FALSE for layouts we do not read. */
static gboolean
sample_type_from_tiff (guint16 bps, guint16 format, SvSampleType *out)
{
  if (format == SAMPLEFORMAT_VOID)
    format = SAMPLEFORMAT_UINT;
  if (format == SAMPLEFORMAT_UINT || format == SAMPLEFORMAT_INT)
    {
      gboolean is_signed = format == SAMPLEFORMAT_INT;
      switch (bps)
        {
        case 8:
          *out = is_signed ? SV_SAMPLE_I8 : SV_SAMPLE_U8;
          return TRUE;
        case 16:
          *out = is_signed ? SV_SAMPLE_I16 : SV_SAMPLE_U16;
          return TRUE;
        case 32:
          *out = is_signed ? SV_SAMPLE_I32 : SV_SAMPLE_U32;
          return TRUE;
        default:
          return FALSE;
        }
    }
  if (format == SAMPLEFORMAT_IEEEFP && (bps == 32 || bps == 64))
    {
      *out = bps == 32 ? SV_SAMPLE_F32 : SV_SAMPLE_F64;
      return TRUE;
    }
  return FALSE;
}

static const char *
sample_format_words (guint16 format)
{
  switch (format)
    {
    case SAMPLEFORMAT_UINT:
    case SAMPLEFORMAT_VOID:
      return "unsigned integer";
    case SAMPLEFORMAT_INT:
      return "signed integer";
    case SAMPLEFORMAT_IEEEFP:
      return "floating-point";
    case SAMPLEFORMAT_COMPLEXINT:
      return "complex integer";
    case SAMPLEFORMAT_COMPLEXIEEEFP:
      return "complex floating-point";
    default:
      return "unknown-format";
    }
}

static char *
compression_name (guint16 compression)
{
  switch (compression)
    {
    case COMPRESSION_NONE:
      return g_strdup ("none");
    case COMPRESSION_LZW:
      return g_strdup ("lzw");
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
      return g_strdup ("deflate");
    case COMPRESSION_PACKBITS:
      return g_strdup ("packbits");
    case COMPRESSION_JPEG:
    case COMPRESSION_OJPEG:
      return g_strdup ("jpeg");
    case COMPRESSION_LZMA:
      return g_strdup ("lzma");
    case COMPRESSION_ZSTD:
      return g_strdup ("zstd");
    case COMPRESSION_WEBP:
      return g_strdup ("webp");
    case COMPRESSION_JXL:
      return g_strdup ("jpegxl");
    case COMPRESSION_CCITTRLE:
    case COMPRESSION_CCITTFAX3:
    case COMPRESSION_CCITTFAX4:
      return g_strdup ("ccitt");
    default:
      {
        const TIFFCodec *codec = TIFFFindCODEC (compression);
        if (codec != NULL && codec->name != NULL)
          return g_ascii_strdown (codec->name, -1);
        return g_strdup_printf ("compression %u", compression);
      }
    }
}

/* Decoded bytes one stored byte can yield at most, or 0 when we do not know
 * a bound. Deflate tops out at 1032:1; TIFF LZW strings are at most ~3800
 * bytes per 9- to 12-bit code; a PackBits run is 2 bytes for 128. */
static guint64
compression_max_ratio (guint16 compression)
{
  switch (compression)
    {
    case COMPRESSION_NONE:
      return 1;
    case COMPRESSION_PACKBITS:
      return 64;
    case COMPRESSION_LZW:
      return 4096;
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
      return 1100;
    default:
      return 0;
    }
}

/* ------------------------------------------------------------------------ */
/* Reader */

/* How one page stores its pixels. */
typedef struct
{
  guint32 width, height;
  guint16 spp, bps, format, planar, photometric, compression;
  gboolean tiled;
  guint32 tile_width, tile_height, rows_per_strip;
  guint32 subfile_type;
} SvPageLayout;

typedef struct
{
  char *path;
  SvTiffMessages msgs;
  TIFFOpenOptions *opts;
  TIFF *tif;
  int fd; /* our own descriptor for reading raw directory bytes */
  guint64 file_size;
  gboolean big_endian;
  gboolean bigtiff;

  SvPageLayout first; /* layout of the first page used */
  guint first_page;   /* its 1-based page number */
  SvSampleType type;
  GArray *dirs; /* tdir_t of every page used as a z slice */
  gboolean any_tiled;
  guint16 compression; /* of the first page */

  double spacing[3]; /* z, y, x */
  gboolean spacing_from_file;
  char *unit;
} SvTiffReader;

static void
reader_free (SvTiffReader *r)
{
  if (r == NULL)
    return;
  if (r->tif != NULL)
    TIFFClose (r->tif);
  if (r->opts != NULL)
    TIFFOpenOptionsFree (r->opts);
  if (r->fd >= 0)
    close (r->fd);
  if (r->dirs != NULL)
    g_array_unref (r->dirs);
  g_free (r->msgs.first_error);
  g_free (r->unit);
  g_free (r->path);
  g_free (r);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvTiffReader, reader_free)

G_GNUC_PRINTF (4, 5)
static void
reader_error (SvTiffReader *r, GError **error, SvEngineError code, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *text = NULL;
  g_autofree char *name = g_filename_display_name (r->path);

  va_start (ap, fmt);
  text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, SV_ENGINE_ERROR, code, "%s: %s", name, text);
}

/* Reads exactly `len` bytes at `offset`; FALSE if the file is shorter. */
static gboolean
read_at (int fd, guint64 offset, void *buf, gsize len)
{
  guint8 *p = buf;

  while (len > 0)
    {
      ssize_t got = pread (fd, p, len, (off_t)offset);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return FALSE;
      p += got;
      len -= (gsize)got;
      offset += (guint64)got;
    }
  return TRUE;
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

  if (!read_at (r->fd, diroff, buf, count_size))
    return FALSE;
  count = decode_uint (buf, count_size, r->big_endian);
  if (!read_at (r->fd, diroff + count_size + count * entry_size, buf, offset_size))
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
      reader_error (r, error, SV_ENGINE_ERROR_IO, "%s", g_strerror (saved_errno));
      return FALSE;
    }
  if (S_ISDIR (st.st_mode))
    {
      reader_error (r, error, SV_ENGINE_ERROR_IO, "is a folder, not a TIFF file");
      return FALSE;
    }
  r->fd = g_open (r->path, O_RDONLY | O_CLOEXEC, 0);
  if (r->fd < 0)
    {
      saved_errno = errno;
      reader_error (r, error, SV_ENGINE_ERROR_IO, "%s", g_strerror (saved_errno));
      return FALSE;
    }
  r->file_size = (guint64)st.st_size;
  if (r->file_size == 0)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "empty file");
      return FALSE;
    }

  header_len = MIN (r->file_size, sizeof header);
  if (!read_at (r->fd, 0, header, header_len))
    {
      saved_errno = errno;
      reader_error (r, error, SV_ENGINE_ERROR_IO, "cannot read: %s", g_strerror (saved_errno));
      return FALSE;
    }
  if (header_len < 4
      || !((header[0] == 'I' && header[1] == 'I') || (header[0] == 'M' && header[1] == 'M')))
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "not a TIFF file");
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
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "not a TIFF file");
      return FALSE;
    }
  if (header_len < (r->bigtiff ? 16u : 8u))
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "truncated: the TIFF header is incomplete");
      return FALSE;
    }
  first_ifd = r->bigtiff ? decode_uint (header + 8, 8, r->big_endian)
                         : decode_uint (header + 4, 4, r->big_endian);
  if (first_ifd == 0)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "holds no image");
      return FALSE;
    }
  if (first_ifd >= r->file_size)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
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
                          sample_format_words (l->format), l->spp, l->spp == 1 ? "" : "s");
}

/* After each directory change: ask libtiff for RGB out of JPEG YCbCr. */
static void
reader_prepare_directory (SvTiffReader *r, const SvPageLayout *l)
{
  if (l->compression == COMPRESSION_JPEG && l->photometric == PHOTOMETRIC_YCBCR)
    TIFFSetField (r->tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
}

/* Checks that the page's strips or tiles lie inside the file and that their
 * stored sizes can back the image the header claims. */
static gboolean
reader_check_page_data (SvTiffReader *r, const SvPageLayout *l, guint page, GError **error)
{
  TIFF *tif = r->tif;
  guint32 n = l->tiled ? TIFFNumberOfTiles (tif) : TIFFNumberOfStrips (tif);
  guint32 strips_per_plane = 0;
  guint64 max_end = 0, first_offset = G_MAXUINT64, stored = 0, decoded = 0;
  guint64 ratio = compression_max_ratio (l->compression);

  if (n == 0)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: page %u has no image data", page);
      return FALSE;
    }
  if (!l->tiled)
    strips_per_plane = (l->height + l->rows_per_strip - 1) / l->rows_per_strip;

  for (guint32 i = 0; i < n; i++)
    {
      int err = 0;
      guint64 offset = TIFFGetStrileOffsetWithErr (tif, i, &err);
      guint64 count = err ? 0 : TIFFGetStrileByteCountWithErr (tif, i, &err);
      guint64 need;

      if (err)
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: page %u: %s", page,
                        messages_text (&r->msgs, "cannot read the data offsets"));
          return FALSE;
        }
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
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
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
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                    "truncated or corrupt: page %u data starts at byte %" G_GUINT64_FORMAT
                    ", beyond the end of the file (%" G_GUINT64_FORMAT " bytes)",
                    page, first_offset, r->file_size);
      return FALSE;
    }
  if (max_end > r->file_size)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                    "truncated: page %u needs %" G_GUINT64_FORMAT
                    " bytes beyond the end of the file",
                    page, max_end - r->file_size);
      return FALSE;
    }
  /* A few hundred bytes of compressed data cannot hold gigabytes of image;
   * catch such headers before anything is allocated from them. */
  if (ratio > 0 && (double)decoded > (double)stored * (double)ratio + (double)n * 4096.0)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                    "corrupt: page %u claims %" G_GUINT64_FORMAT
                    " bytes of image but stores only %" G_GUINT64_FORMAT,
                    page, decoded, stored);
      return FALSE;
    }
  return TRUE;
}

/* Checks one page against the first and the formats we read. */
static gboolean
reader_check_page (SvTiffReader *r, const SvPageLayout *l, guint page, GError **error)
{
  SvSampleType type;

  if (l->width == 0 || l->height == 0)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: page %u has no width or height",
                    page);
      return FALSE;
    }
  if (r->dirs->len > 0)
    {
      const SvPageLayout *f = &r->first;
      if (l->width != f->width || l->height != f->height)
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                        "slices have different sizes: page %u is %u×%u, page %u is %u×%u", page,
                        l->width, l->height, r->first_page, f->width, f->height);
          return FALSE;
        }
      if (l->spp != f->spp || l->bps != f->bps || l->format != f->format)
        {
          g_autofree char *a = layout_describe (l);
          g_autofree char *b = layout_describe (f);
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                        "slices have different sample formats: page %u is %s, page %u is %s", page,
                        a, r->first_page, b);
          return FALSE;
        }
    }
  if (!sample_type_from_tiff (l->bps, l->format, &type))
    {
      reader_error (
          r, error, SV_ENGINE_ERROR_FORMAT,
          "%u-bit %s samples are not supported (8, 16 or 32-bit integers, 32 or 64-bit floats)",
          l->bps, sample_format_words (l->format));
      return FALSE;
    }
  if (l->spp != 1 && l->spp != 3)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                    "%u samples per pixel are not supported (1 for grey, 3 for colour)", l->spp);
      return FALSE;
    }
  if (l->photometric == PHOTOMETRIC_YCBCR && l->compression != COMPRESSION_JPEG)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                    "YCbCr colour is only supported in JPEG-compressed files");
      return FALSE;
    }
  if (!TIFFIsCODECConfigured (l->compression))
    {
      g_autofree char *cname = compression_name (l->compression);
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                    "page %u uses %s compression, which this build cannot decode", page, cname);
      return FALSE;
    }
  if (l->tiled && (l->tile_width == 0 || l->tile_height == 0))
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: page %u has tiles of size 0", page);
      return FALSE;
    }
  return reader_check_page_data (r, l, page, error);
}

/* ------------------------------------------------------------------------ */
/* Spacing metadata */

typedef struct
{
  gboolean is_imagej;
  double spacing; /* z; 0 when absent */
  char *unit;
  guint channels, slices, frames, images;
} SvImageJInfo;

/* ImageJ writes non-ASCII characters as \uXXXX (µm is "\u00B5m"). */
static char *
imagej_unescape (const char *s)
{
  GString *out = g_string_new (NULL);

  while (*s)
    {
      if (s[0] == '\\' && s[1] == 'u' && g_ascii_isxdigit (s[2]) && g_ascii_isxdigit (s[3])
          && g_ascii_isxdigit (s[4]) && g_ascii_isxdigit (s[5]))
        {
          char hex[5] = { s[2], s[3], s[4], s[5], 0 };
          g_string_append_unichar (out, (gunichar)g_ascii_strtoull (hex, NULL, 16));
          s += 6;
        }
      else
        g_string_append_c (out, *s++);
    }
  return g_string_free (out, FALSE);
}

static void
imagej_parse (const char *description, SvImageJInfo *ij)
{
  g_auto (GStrv) lines = NULL;

  memset (ij, 0, sizeof *ij);
  if (description == NULL || !g_str_has_prefix (description, "ImageJ="))
    return;
  ij->is_imagej = TRUE;
  lines = g_strsplit (description, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      char *eq = strchr (lines[i], '=');
      const char *value;
      if (eq == NULL)
        continue;
      *eq = '\0';
      value = eq + 1;
      if (g_str_equal (lines[i], "spacing"))
        ij->spacing = g_ascii_strtod (value, NULL);
      else if (g_str_equal (lines[i], "unit") && value[0] != '\0')
        {
          g_free (ij->unit);
          ij->unit = imagej_unescape (value);
        }
      else if (g_str_equal (lines[i], "channels"))
        ij->channels = (guint)g_ascii_strtoull (value, NULL, 10);
      else if (g_str_equal (lines[i], "slices"))
        ij->slices = (guint)g_ascii_strtoull (value, NULL, 10);
      else if (g_str_equal (lines[i], "frames"))
        ij->frames = (guint)g_ascii_strtoull (value, NULL, 10);
      else if (g_str_equal (lines[i], "images"))
        ij->images = (guint)g_ascii_strtoull (value, NULL, 10);
    }
}

typedef struct
{
  gboolean found;
  double size[3]; /* z, y, x; 0 when absent */
  char *unit[3];
  guint size_c, size_z, size_t;
} SvOmeInfo;

static void
ome_start_element (GMarkupParseContext *context, const char *element, const char **names,
                   const char **values, gpointer user_data, GError **error)
{
  SvOmeInfo *ome = user_data;
  const char *local = strrchr (element, ':');

  local = local ? local + 1 : element;
  if (ome->found || !g_str_equal (local, "Pixels"))
    return;
  ome->found = TRUE;
  for (guint i = 0; names[i]; i++)
    {
      static const char *const size_keys[3] = { "PhysicalSizeZ", "PhysicalSizeY", "PhysicalSizeX" };
      static const char *const unit_keys[3]
          = { "PhysicalSizeZUnit", "PhysicalSizeYUnit", "PhysicalSizeXUnit" };
      for (guint a = 0; a < 3; a++)
        {
          if (g_str_equal (names[i], size_keys[a]))
            ome->size[a] = g_ascii_strtod (values[i], NULL);
          else if (g_str_equal (names[i], unit_keys[a]))
            ome->unit[a] = g_strdup (values[i]);
        }
      if (g_str_equal (names[i], "SizeC"))
        ome->size_c = (guint)g_ascii_strtoull (values[i], NULL, 10);
      else if (g_str_equal (names[i], "SizeZ"))
        ome->size_z = (guint)g_ascii_strtoull (values[i], NULL, 10);
      else if (g_str_equal (names[i], "SizeT"))
        ome->size_t = (guint)g_ascii_strtoull (values[i], NULL, 10);
    }
}

static void
ome_info_clear (SvOmeInfo *ome)
{
  for (guint a = 0; a < 3; a++)
    g_free (ome->unit[a]);
  memset (ome, 0, sizeof *ome);
}

static void
ome_parse (const char *description, SvOmeInfo *ome)
{
  static const GMarkupParser parser = { .start_element = ome_start_element };
  g_autoptr (GMarkupParseContext) context = NULL;

  memset (ome, 0, sizeof *ome);
  if (description == NULL || strstr (description, "<OME") == NULL)
    return;
  context = g_markup_parse_context_new (&parser, G_MARKUP_IGNORE_QUALIFIED, ome, NULL);
  /* A parse error after the Pixels element does not matter; before it we
   * simply have no metadata. */
  g_markup_parse_context_parse (context, description, -1, NULL);
}

/* Metres per unit, for putting OME sizes in different units on one scale. */
static double
unit_in_metres (const char *unit)
{
  static const struct
  {
    const char *name;
    double metres;
  } units[] = {
    { "m", 1.0 },        { "cm", 1e-2 }, { "mm", 1e-3 },     { "µm", 1e-6 },
    { "\u03bcm", 1e-6 }, { "um", 1e-6 }, { "micron", 1e-6 }, { "microns", 1e-6 },
    { "nm", 1e-9 },      { "Å", 1e-10 }, { "pm", 1e-12 },
  };

  if (unit == NULL)
    return 0.0;
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_equal (unit, units[i].name))
      return units[i].metres;
  return 0.0;
}

/* libtiff holds X/YResolution as float; 1/resolution then carries float
 * precision only. Rounding to 6 significant digits gives back the value a
 * user typed (0.3 µm rather than 0.30000000675). */
static double
spacing_from_resolution (float resolution)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (!(resolution > 0.0f) || !isfinite (resolution))
    return 0.0;
  g_ascii_formatd (buf, sizeof buf, "%.6g", 1.0 / (double)resolution);
  return g_ascii_strtod (buf, NULL);
}

/* Reads spacing from ImageJ or OME-XML metadata in the first page.
 *
 * ImageJ hyperstacks store channels, slices and frames as pages. Pages are
 * taken as z slices; a time series without slices is accepted as a 2D+t
 * volume (frames become z, as SLIC treats them), but files that interleave
 * channels, or slices and frames, in pages are refused: reading them as z
 * would silently mix channels or time points into one volume. */
static gboolean
reader_read_metadata (SvTiffReader *r, guint n_pages, GError **error)
{
  const char *description = NULL;
  SvImageJInfo ij;
  SvOmeInfo ome;
  float xres = 0.0f, yres = 0.0f;
  gboolean ok = TRUE;

  r->spacing[0] = r->spacing[1] = r->spacing[2] = 1.0;
  r->spacing_from_file = FALSE;

  if (!TIFFGetField (r->tif, TIFFTAG_IMAGEDESCRIPTION, &description))
    description = NULL;
  imagej_parse (description, &ij);
  ome_parse (description, &ome);

  if (ij.is_imagej)
    {
      if (ij.channels > 1 && ij.channels != r->first.spp)
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                        "multi-channel ImageJ hyperstacks are not supported (channels=%u); "
                        "save one channel per file",
                        ij.channels);
          ok = FALSE;
        }
      else if (ij.frames > 1 && ij.slices > 1)
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                        "ImageJ time series of 3D stacks are not supported (slices=%u, frames=%u)",
                        ij.slices, ij.frames);
          ok = FALSE;
        }
      else if (ij.images > n_pages)
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                        "the ImageJ header announces %u images but the file has %u pages "
                        "(ImageJ's single-index stacks over 4 GiB are not supported)",
                        ij.images, n_pages);
          ok = FALSE;
        }
      else
        {
          if (TIFFGetField (r->tif, TIFFTAG_XRESOLUTION, &xres))
            r->spacing[2] = spacing_from_resolution (xres);
          if (TIFFGetField (r->tif, TIFFTAG_YRESOLUTION, &yres))
            r->spacing[1] = spacing_from_resolution (yres);
          if (r->spacing[2] <= 0.0)
            r->spacing[2] = 1.0;
          if (r->spacing[1] <= 0.0)
            r->spacing[1] = 1.0;
          if (ij.spacing > 0.0 && isfinite (ij.spacing))
            r->spacing[0] = ij.spacing;
          r->unit = g_steal_pointer (&ij.unit);
          r->spacing_from_file
              = r->unit != NULL || ij.spacing > 0.0 || r->spacing[1] != 1.0 || r->spacing[2] != 1.0;
        }
    }
  else if (ome.found)
    {
      if (ome.size_c > 1 && ome.size_c != r->first.spp)
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                        "multi-channel OME-TIFF files are not supported (SizeC=%u); save one "
                        "channel per file",
                        ome.size_c);
          ok = FALSE;
        }
      else if (ome.size_z > 1 && ome.size_t > 1)
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                        "OME-TIFF time series of 3D stacks are not supported (SizeZ=%u, SizeT=%u)",
                        ome.size_z, ome.size_t);
          ok = FALSE;
        }
      else
        {
          /* OME's default unit is the micrometre; all axes go to X's unit. */
          const char *ref_unit = ome.unit[2] ? ome.unit[2] : "µm";
          double ref = unit_in_metres (ref_unit);
          for (guint a = 0; a < 3; a++)
            {
              double size = ome.size[a];
              const char *u = ome.unit[a] ? ome.unit[a] : "µm";
              if (!(size > 0.0) || !isfinite (size))
                continue;
              if (!g_str_equal (u, ref_unit) && ref > 0.0 && unit_in_metres (u) > 0.0)
                size *= unit_in_metres (u) / ref;
              r->spacing[a] = size;
              r->spacing_from_file = TRUE;
            }
          if (r->spacing_from_file)
            r->unit = g_strdup (ref_unit);
        }
    }

  g_free (ij.unit);
  ome_info_clear (&ome);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Opening and scanning */

static SvTiffReader *
reader_open (const char *path, GError **error)
{
  g_autoptr (SvTiffReader) r = g_new0 (SvTiffReader, 1);
  guint page = 0;

  r->path = g_strdup (path);
  r->fd = -1;
  r->msgs.name = r->path;
  r->dirs = g_array_new (FALSE, FALSE, sizeof (tdir_t));

  if (!reader_check_header (r, error))
    return NULL;

  r->opts = tiff_options_new (&r->msgs);
  /* No memory mapping ("m"): a file cut while we read it must give an error,
   * not SIGBUS; strips are still read straight into our page buffer. */
  r->tif = TIFFOpenExt (path, "rm", r->opts);
  if (r->tif == NULL)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt TIFF: %s",
                    messages_text (&r->msgs, "libtiff cannot open it"));
      return NULL;
    }

  /* First pass: check every page before any voxel buffer exists. */
  for (tdir_t dir = 0;; dir++)
    {
      SvPageLayout l;
      guint64 diroff, next = 0;

      page = (guint)dir + 1;
      layout_read (r->tif, &l);
      /* Reduced-resolution pages are thumbnails or pyramid levels, not z. */
      if (!(l.subfile_type & FILETYPE_REDUCEDIMAGE))
        {
          if (!reader_check_page (r, &l, page, error))
            return NULL;
          if (r->dirs->len == 0)
            {
              r->first = l;
              r->first_page = page;
              r->compression = l.compression;
              sample_type_from_tiff (l.bps, l.format, &r->type);
            }
          r->any_tiled |= l.tiled;
          g_array_append_val (r->dirs, dir);
        }

      diroff = TIFFCurrentDirOffset (r->tif);
      messages_reset (&r->msgs);
      if (TIFFReadDirectory (r->tif))
        continue;
      if (!read_next_ifd_offset (r, diroff, &next))
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                        "truncated: the index of page %u ends beyond the end of the file", page);
          return NULL;
        }
      if (next == 0)
        break;
      if (next >= r->file_size)
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                        "truncated: page %u starts beyond the end of the file", page + 1);
          return NULL;
        }
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: cannot read page %u: %s", page + 1,
                    messages_text (&r->msgs, "invalid page index"));
      return NULL;
    }

  if (r->dirs->len == 0)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "holds no full-resolution image");
      return NULL;
    }

  if (!TIFFSetDirectory (r->tif, g_array_index (r->dirs, tdir_t, 0)))
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: cannot go back to page %u: %s",
                    r->first_page, messages_text (&r->msgs, "libtiff failed"));
      return NULL;
    }
  if (!reader_read_metadata (r, r->dirs->len, error))
    return NULL;
  return g_steal_pointer (&r);
}

/* Shape of the volume: a single page with 3 samples is 2D colour; 3-sample
 * stacks are 3D with 3 channels; 1-sample pages are grey 2D or 3D. */
static void
reader_shape (const SvTiffReader *r, guint *nz, guint *ny, guint *nx, guint *nc)
{
  *nz = r->dirs->len;
  *ny = r->first.height;
  *nx = r->first.width;
  *nc = r->first.spp;
}

/* ------------------------------------------------------------------------ */
/* Page decoding */

/* Copies `n` samples of `size` bytes from a packed plane into every
 * `stride`-th sample of `dst`. */
static void
scatter_samples (guint8 *dst, const guint8 *src, gsize n, guint size, guint stride)
{
  gsize step = (gsize)size * stride;

  switch (size)
    {
    case 1:
      for (gsize i = 0; i < n; i++)
        dst[i * step] = src[i];
      break;
    case 2:
      for (gsize i = 0; i < n; i++)
        memcpy (dst + i * step, src + i * 2, 2);
      break;
    case 4:
      for (gsize i = 0; i < n; i++)
        memcpy (dst + i * step, src + i * 4, 4);
      break;
    default:
      for (gsize i = 0; i < n; i++)
        memcpy (dst + i * step, src + (gsize)i * size, size);
      break;
    }
}

typedef struct
{
  guint8 *page;    /* ny*nx*nc samples, channel fastest */
  guint8 *scratch; /* one strip plane or one tile */
  gsize scratch_size;
} SvPageBuffers;

static gboolean
buffers_ensure_scratch (SvTiffReader *r, SvPageBuffers *b, gsize size, GError **error)
{
  if (b->scratch_size >= size)
    return TRUE;
  g_free (b->scratch);
  b->scratch = g_try_malloc (size);
  b->scratch_size = b->scratch ? size : 0;
  if (b->scratch == NULL)
    {
      g_autofree char *text = g_format_size (size);
      reader_error (r, error, SV_ENGINE_ERROR_NO_MEMORY,
                    "not enough memory for a %s decoding buffer", text);
      return FALSE;
    }
  return TRUE;
}

/* Decodes the current directory into b->page in contiguous sample order. */
static gboolean
reader_decode_page (SvTiffReader *r, const SvPageLayout *l, guint page, SvPageBuffers *b,
                    GError **error)
{
  TIFF *tif = r->tif;
  guint bsize = l->bps / 8;
  guint nc = l->spp;
  gsize row_bytes = (gsize)l->width * nc * bsize;
  gboolean separate = l->planar == PLANARCONFIG_SEPARATE && nc > 1;
  guint planes = separate ? nc : 1;

  messages_reset (&r->msgs);
  if (!l->tiled)
    {
      guint32 per_plane = (l->height + l->rows_per_strip - 1) / l->rows_per_strip;
      gsize plane_row_bytes = (gsize)l->width * bsize;

      if (separate
          && !buffers_ensure_scratch (r, b, (gsize)l->rows_per_strip * plane_row_bytes, error))
        return FALSE;
      for (guint p = 0; p < planes; p++)
        for (guint32 k = 0; k < per_plane; k++)
          {
            guint32 y0 = k * l->rows_per_strip;
            guint32 rows = MIN (l->rows_per_strip, l->height - y0);
            guint32 strip = p * per_plane + k;
            guint8 *dst = separate ? b->scratch : b->page + y0 * row_bytes;
            gsize want = rows * (separate ? plane_row_bytes : row_bytes);

            if (TIFFReadEncodedStrip (tif, strip, dst, (tmsize_t)want) < (tmsize_t)want)
              {
                reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "cannot decode page %u: %s", page,
                              messages_text (&r->msgs, "strip data is incomplete"));
                return FALSE;
              }
            if (separate)
              scatter_samples (b->page + y0 * row_bytes + (gsize)p * bsize, dst,
                               (gsize)rows * l->width, bsize, nc);
          }
    }
  else
    {
      gsize tile_bytes = (gsize)TIFFTileSize64 (tif);
      gsize tile_row_bytes = (gsize)l->tile_width * (separate ? 1 : nc) * bsize;

      if (!buffers_ensure_scratch (r, b, tile_bytes, error))
        return FALSE;
      for (guint p = 0; p < planes; p++)
        for (guint32 ty = 0; ty < l->height; ty += l->tile_height)
          for (guint32 tx = 0; tx < l->width; tx += l->tile_width)
            {
              guint32 tile = TIFFComputeTile (tif, tx, ty, 0, (guint16)p);
              guint32 rows = MIN (l->tile_height, l->height - ty);
              guint32 cols = MIN (l->tile_width, l->width - tx);

              if (TIFFReadEncodedTile (tif, tile, b->scratch, (tmsize_t)tile_bytes) < 0)
                {
                  reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "cannot decode page %u: %s", page,
                                messages_text (&r->msgs, "tile data is incomplete"));
                  return FALSE;
                }
              for (guint32 y = 0; y < rows; y++)
                {
                  guint8 *dst = b->page + (ty + y) * row_bytes + (gsize)tx * nc * bsize;
                  const guint8 *src = b->scratch + y * tile_row_bytes;
                  if (separate)
                    scatter_samples (dst + (gsize)p * bsize, src, cols, bsize, nc);
                  else
                    memcpy (dst, src, (gsize)cols * nc * bsize);
                }
            }
    }
  return TRUE;
}

/* Called once per z slice with the slice's samples in file order. */
typedef gboolean (*SvPageFunc) (SvTiffReader *r, guint z, const void *samples, gsize n,
                                gpointer user_data, GError **error);

static gboolean
reader_for_each_page (SvTiffReader *r, SvPageFunc func, gpointer user_data, GError **error)
{
  SvPageBuffers b = { 0 };
  gsize page_bytes = (gsize)r->first.width * r->first.height * r->first.spp * (r->first.bps / 8);
  gsize n = (gsize)r->first.width * r->first.height * r->first.spp;
  tdir_t dir;
  guint z = 0;
  gboolean ok = FALSE;

  b.page = g_try_malloc (page_bytes);
  if (b.page == NULL)
    {
      g_autofree char *text = g_format_size (page_bytes);
      reader_error (r, error, SV_ENGINE_ERROR_NO_MEMORY, "not enough memory for one %s page", text);
      return FALSE;
    }

  messages_reset (&r->msgs);
  dir = g_array_index (r->dirs, tdir_t, 0);
  if (!TIFFSetDirectory (r->tif, dir))
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: cannot read page %u: %s",
                    (guint)dir + 1, messages_text (&r->msgs, "libtiff failed"));
      goto out;
    }
  while (z < r->dirs->len)
    {
      if (dir == g_array_index (r->dirs, tdir_t, z))
        {
          SvPageLayout l;
          layout_read (r->tif, &l);
          reader_prepare_directory (r, &l);
          if (!reader_decode_page (r, &l, (guint)dir + 1, &b, error))
            goto out;
          if (!func (r, z, b.page, n, user_data, error))
            goto out;
          z++;
          if (z == r->dirs->len)
            break;
        }
      messages_reset (&r->msgs);
      if (!TIFFReadDirectory (r->tif))
        {
          reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "corrupt: cannot read page %u: %s",
                        (guint)dir + 2,
                        messages_text (&r->msgs, "the file changed while it was read"));
          goto out;
        }
      dir++;
    }
  ok = TRUE;

out:
  g_free (b.page);
  g_free (b.scratch);
  return ok;
}

/* img_as_float, as scikit-image 0.16+ does it: multiply by 1/max in double,
 * clamp signed values at -1, then round to float32. */
#define SV_CONVERT_UNSIGNED(ctype, maxv)                                                           \
  do                                                                                               \
    {                                                                                              \
      const ctype *src = samples;                                                                  \
      const double scale = 1.0 / (double)(maxv);                                                   \
      for (gsize i = 0; i < n; i++)                                                                \
        out[i] = (float)((double)src[i] * scale);                                                  \
    }                                                                                              \
  while (0)

#define SV_CONVERT_SIGNED(ctype, maxv)                                                             \
  do                                                                                               \
    {                                                                                              \
      const ctype *src = samples;                                                                  \
      const double scale = 1.0 / (double)(maxv);                                                   \
      for (gsize i = 0; i < n; i++)                                                                \
        {                                                                                          \
          double v = (double)src[i] * scale;                                                       \
          out[i] = (float)(v < -1.0 ? -1.0 : v);                                                   \
        }                                                                                          \
    }                                                                                              \
  while (0)

static void
convert_to_float (SvSampleType type, const void *samples, gsize n, float *out)
{
  switch (type)
    {
    case SV_SAMPLE_U8:
      SV_CONVERT_UNSIGNED (guint8, G_MAXUINT8);
      break;
    case SV_SAMPLE_U16:
      SV_CONVERT_UNSIGNED (guint16, G_MAXUINT16);
      break;
    case SV_SAMPLE_U32:
      SV_CONVERT_UNSIGNED (guint32, G_MAXUINT32);
      break;
    case SV_SAMPLE_I8:
      SV_CONVERT_SIGNED (gint8, G_MAXINT8);
      break;
    case SV_SAMPLE_I16:
      SV_CONVERT_SIGNED (gint16, G_MAXINT16);
      break;
    case SV_SAMPLE_I32:
      SV_CONVERT_SIGNED (gint32, G_MAXINT32);
      break;
    case SV_SAMPLE_F32:
      memcpy (out, samples, n * sizeof (float));
      break;
    case SV_SAMPLE_F64:
      {
        const double *src = samples;
        for (gsize i = 0; i < n; i++)
          out[i] = (float)src[i];
      }
      break;
    default:
      g_assert_not_reached ();
    }
}

static gboolean
volume_page_cb (SvTiffReader *r, guint z, const void *samples, gsize n, gpointer user_data,
                GError **error)
{
  SvVolume *volume = user_data;

  convert_to_float (r->type, samples, n, volume->data + (gsize)z * n);
  return TRUE;
}

SvVolume *
sv_tiff_read_volume (const char *path, GError **error)
{
  g_autoptr (SvTiffReader) r = NULL;
  g_autoptr (SvVolume) volume = NULL;
  guint nz, ny, nx, nc;
  GError *local_error = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  r = reader_open (path, error);
  if (r == NULL)
    return NULL;
  reader_shape (r, &nz, &ny, &nx, &nc);
  volume = sv_volume_new (nz, ny, nx, nc, &local_error);
  if (volume == NULL)
    {
      reader_error (r, error, local_error->code, "%s", local_error->message);
      g_error_free (local_error);
      return NULL;
    }
  if (!reader_for_each_page (r, volume_page_cb, volume, error))
    return NULL;

  memcpy (volume->spacing, r->spacing, sizeof volume->spacing);
  volume->spacing_from_file = r->spacing_from_file;
  volume->unit = g_strdup (r->unit);
  volume->source_type = r->type;
  return g_steal_pointer (&volume);
}

/* ------------------------------------------------------------------------ */
/* Labels and masks */

static gboolean
reader_require_one_sample (SvTiffReader *r, const char *what, GError **error)
{
  if (r->first.spp != 1)
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                    "a %s file must have one sample per pixel, not %u", what, r->first.spp);
      return FALSE;
    }
  return TRUE;
}

static gboolean
labels_page_cb (SvTiffReader *r, guint z, const void *samples, gsize n, gpointer user_data,
                GError **error)
{
  SvLabels *labels = user_data;
  gint32 *out = labels->data + (gsize)z * n;

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
        for (gsize i = 0; i < n; i++)
          {
            if (src[i] > G_MAXINT32)
              {
                reader_error (r, error, SV_ENGINE_ERROR_INVALID_DATA,
                              "label %" G_GUINT32_FORMAT
                              " on page %u is larger than %d, the largest label supported",
                              src[i], g_array_index (r->dirs, tdir_t, z) + 1, G_MAXINT32);
                return FALSE;
              }
            out[i] = (gint32)src[i];
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

  r = reader_open (path, error);
  if (r == NULL)
    return NULL;
  if (!reader_require_one_sample (r, "label", error))
    return NULL;
  if (sample_type_is_float (r->type))
    {
      reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                    "a label file must hold integers, not %s values",
                    sv_sample_type_to_string (r->type));
      return NULL;
    }
  labels = sv_labels_new (r->dirs->len, r->first.height, r->first.width, &local_error);
  if (labels == NULL)
    {
      reader_error (r, error, local_error->code, "%s", local_error->message);
      g_error_free (local_error);
      return NULL;
    }
  if (!reader_for_each_page (r, labels_page_cb, labels, error))
    return NULL;
  memcpy (labels->spacing, r->spacing, sizeof labels->spacing);
  labels->unit = g_strdup (r->unit);
  return g_steal_pointer (&labels);
}

#define SV_MASK_NONZERO(ctype)                                                                     \
  do                                                                                               \
    {                                                                                              \
      const ctype *src = samples;                                                                  \
      for (gsize i = 0; i < n; i++)                                                                \
        out[i] = src[i] != 0;                                                                      \
    }                                                                                              \
  while (0)

static gboolean
mask_page_cb (SvTiffReader *r, guint z, const void *samples, gsize n, gpointer user_data,
              GError **error)
{
  guint8 *out = (guint8 *)user_data + (gsize)z * n;

  switch (r->type)
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

  r = reader_open (path, error);
  if (r == NULL)
    return NULL;
  if (!reader_require_one_sample (r, "mask", error))
    return NULL;
  bytes = (gsize)r->dirs->len * r->first.height * r->first.width;
  mask = g_try_malloc (bytes);
  if (mask == NULL)
    {
      g_autofree char *text = g_format_size (bytes);
      reader_error (r, error, SV_ENGINE_ERROR_NO_MEMORY, "not enough memory for the mask (%s)",
                    text);
      return NULL;
    }
  if (!reader_for_each_page (r, mask_page_cb, mask, error))
    return NULL;
  *nz = r->dirs->len;
  *ny = r->first.height;
  *nx = r->first.width;
  return g_steal_pointer (&mask);
}

/* ------------------------------------------------------------------------ */
/* Info */

typedef struct
{
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
range_page_cb (SvTiffReader *r, guint z, const void *samples, gsize n, gpointer user_data,
               GError **error)
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
  if (!range->any || page_min < range->min)
    range->min = page_min;
  if (!range->any || page_max > range->max)
    range->max = page_max;
  range->any = TRUE;
  return TRUE;
}

void
sv_tiff_info_clear (SvTiffInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->compression);
  g_free (info->unit);
  memset (info, 0, sizeof *info);
}

gboolean
sv_tiff_info (const char *path, SvTiffInfo *info, GError **error)
{
  g_autoptr (SvTiffReader) r = NULL;
  SvRange range = { 0 };

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (info != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  memset (info, 0, sizeof *info);
  r = reader_open (path, error);
  if (r == NULL)
    return FALSE;
  if (!reader_for_each_page (r, range_page_cb, &range, error))
    return FALSE;

  reader_shape (r, &info->nz, &info->ny, &info->nx, &info->nc);
  info->sample_type = r->type;
  info->bigtiff = r->bigtiff;
  info->tiled = r->any_tiled;
  info->compression = compression_name (r->compression);
  memcpy (info->spacing, r->spacing, sizeof info->spacing);
  info->spacing_from_file = r->spacing_from_file;
  info->unit = g_strdup (r->unit);
  info->value_min = range.any ? range.min : NAN;
  info->value_max = range.any ? range.max : NAN;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Writing */

typedef gboolean (*SvFillPage) (guint z, guint8 *page, gpointer user_data);

typedef struct
{
  guint nz, ny, nx, nc;
  guint16 bps, format, predictor;
  const double *spacing; /* z, y, x */
  const char *unit;
  SvFillPage fill;
  gpointer user_data;
} SvTiffWriteJob;

/* ImageJ reads its description as ASCII with \uXXXX escapes; spellings of
 * the micrometre become ImageJ's own "micron". */
static char *
imagej_unit (const char *unit)
{
  GString *out;

  if (g_str_equal (unit, "µm") || g_str_equal (unit, "\u03bcm") || g_str_equal (unit, "um"))
    return g_strdup ("micron");
  out = g_string_new (NULL);
  for (const char *p = unit; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (c == '\n' || c == '\r' || c == '=')
        continue;
      if (c < 0x80)
        g_string_append_c (out, (char)c);
      else if (c <= 0xFFFF)
        g_string_append_printf (out, "\\u%04X", c);
    }
  return g_string_free (out, FALSE);
}

static char *
imagej_description (const SvTiffWriteJob *job)
{
  GString *d = g_string_new ("ImageJ=1.11a\n");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (job->nz > 1)
    {
      g_string_append_printf (d, "images=%u\nslices=%u\n", job->nz, job->nz);
      /* Shortest exact decimal, with ".0" on whole numbers as Java prints
       * doubles, so readers see a float. */
      g_ascii_dtostr (buf, sizeof buf, job->spacing[0]);
      g_string_append_printf (d, "spacing=%s%s\n", buf, strpbrk (buf, ".eEn") ? "" : ".0");
    }
  if (job->unit != NULL && job->unit[0] != '\0')
    {
      g_autofree char *unit = imagej_unit (job->unit);
      g_string_append_printf (d, "unit=%s\n", unit);
    }
  if (job->nz > 1)
    g_string_append (d, "loop=false\n");
  return g_string_free (d, FALSE);
}

static gboolean
force_bigtiff (void)
{
  const char *env = g_getenv ("SV_TIFF_FORCE_BIGTIFF");
  return env != NULL && g_str_equal (env, "1");
}

static void
set_write_error (GError **error, SvEngineError code, const char *path, const char *problem)
{
  g_autofree char *name = g_filename_display_name (path);
  g_set_error (error, SV_ENGINE_ERROR, code, "%s: %s", name, problem);
}

static double
resolution_from_spacing (double spacing)
{
  return spacing > 0.0 && isfinite (spacing) ? 1.0 / spacing : 1.0;
}

/* Writes all pages to `tif`; FALSE with the problem in `problem`. */
static gboolean
write_pages (TIFF *tif, const SvTiffWriteJob *job, SvTiffMessages *msgs, char **problem)
{
  gsize row_bytes = (gsize)job->nx * job->nc * (job->bps / 8);
  guint32 rows_per_strip = (guint32)CLAMP (SV_STRIP_TARGET_BYTES / row_bytes, 1, job->ny);
  g_autofree guint8 *page = g_try_malloc (row_bytes * job->ny);
  g_autofree char *description = imagej_description (job);

  if (page == NULL)
    {
      *problem = g_strdup ("not enough memory for one page");
      return FALSE;
    }
  for (guint z = 0; z < job->nz; z++)
    {
      guint32 n_strips = (job->ny + rows_per_strip - 1) / rows_per_strip;

      TIFFSetField (tif, TIFFTAG_SUBFILETYPE, 0);
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (guint32)job->nx);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (guint32)job->ny);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, (guint16)job->nc);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, job->bps);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, job->format);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC,
                    job->nc == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
      TIFFSetField (tif, TIFFTAG_PREDICTOR, job->predictor);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip);
      /* ImageJ stores pixels per unit with no TIFF unit; the unit is in the
       * description. */
      TIFFSetField (tif, TIFFTAG_XRESOLUTION, resolution_from_spacing (job->spacing[2]));
      TIFFSetField (tif, TIFFTAG_YRESOLUTION, resolution_from_spacing (job->spacing[1]));
      TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
      if (z == 0)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, description);
      TIFFSetField (tif, TIFFTAG_SOFTWARE, "supervox " SV_VERSION);

      if (!job->fill (z, page, job->user_data))
        {
          *problem = g_strdup ("cannot convert the data");
          return FALSE;
        }
      for (guint32 s = 0; s < n_strips; s++)
        {
          guint32 y0 = s * rows_per_strip;
          guint32 rows = MIN (rows_per_strip, job->ny - y0);
          if (TIFFWriteEncodedStrip (tif, s, page + y0 * row_bytes, (tmsize_t)(rows * row_bytes))
              < 0)
            {
              *problem = g_strdup_printf ("cannot write page %u: %s", z + 1,
                                          messages_text (msgs, "write error"));
              return FALSE;
            }
        }
      if (!TIFFWriteDirectory (tif))
        {
          *problem = g_strdup_printf ("cannot write page %u: %s", z + 1,
                                      messages_text (msgs, "write error"));
          return FALSE;
        }
    }
  return TRUE;
}

/* Writes to "<path>.XXXXXX" beside `path`, then renames over `path`; any
 * failure removes the temporary file, so no partial output is left. */
static gboolean
write_tiff_atomically (const char *path, const SvTiffWriteJob *job, GError **error)
{
  g_autofree char *tmp_path = g_strdup_printf ("%s.XXXXXX", path);
  SvTiffMessages msgs = { .name = path };
  TIFFOpenOptions *opts;
  TIFF *tif;
  guint64 raw_bytes = (guint64)job->nz * job->ny * job->nx * job->nc * (job->bps / 8);
  gboolean bigtiff = raw_bytes > SV_BIGTIFF_THRESHOLD || force_bigtiff ();
  g_autofree char *problem = NULL;
  int fd, saved_errno;

  fd = g_mkstemp_full (tmp_path, O_RDWR | O_CLOEXEC, 0666);
  if (fd < 0)
    {
      g_autofree char *dir = g_path_get_dirname (path);
      g_autofree char *dir_name = g_filename_display_name (dir);
      saved_errno = errno;
      problem
          = g_strdup_printf ("cannot write in folder %s: %s", dir_name, g_strerror (saved_errno));
      set_write_error (error, SV_ENGINE_ERROR_IO, path, problem);
      return FALSE;
    }

  opts = tiff_options_new (&msgs);
  tif = TIFFFdOpenExt (fd, tmp_path, bigtiff ? "w8" : "w", opts);
  if (tif == NULL)
    {
      problem
          = g_strdup_printf ("cannot start the file: %s", messages_text (&msgs, "libtiff failed"));
      close (fd);
    }
  else
    {
      if (!write_pages (tif, job, &msgs, &problem))
        TIFFClose (tif);
      else
        {
          messages_reset (&msgs);
          if (!TIFFFlush (tif) || msgs.first_error != NULL)
            problem = g_strdup_printf ("cannot finish the file: %s",
                                       messages_text (&msgs, "write error"));
          /* Data on disk before the rename, and late errors (disk full on
           * network drives) surface here rather than after we reported
           * success. */
          else if (fsync (TIFFFileno (tif)) != 0)
            {
              saved_errno = errno;
              problem = g_strdup_printf ("cannot finish the file: %s", g_strerror (saved_errno));
            }
          TIFFClose (tif);
        }
    }
  TIFFOpenOptionsFree (opts);
  g_free (msgs.first_error);

  if (problem == NULL && g_rename (tmp_path, path) != 0)
    {
      saved_errno = errno;
      problem = g_strdup_printf ("cannot replace the file: %s", g_strerror (saved_errno));
    }
  if (problem != NULL)
    {
      g_unlink (tmp_path);
      set_write_error (error, SV_ENGINE_ERROR_IO, path, problem);
      return FALSE;
    }
  return TRUE;
}

static gboolean
fill_labels_cb (guint z, guint8 *page, gpointer user_data)
{
  const SvLabels *labels = user_data;
  gsize n = (gsize)labels->ny * labels->nx;

  /* uint32 and int32 share the bit pattern of non-negative labels. */
  memcpy (page, labels->data + (gsize)z * n, n * sizeof (gint32));
  return TRUE;
}

gboolean
sv_tiff_write_labels (const char *path, const SvLabels *labels, GError **error)
{
  gsize n;
  gboolean negative = FALSE;
  SvTiffWriteJob job = { 0 };

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (labels != NULL && labels->data != NULL, FALSE);
  g_return_val_if_fail (labels->nz > 0 && labels->ny > 0 && labels->nx > 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  n = sv_labels_n_voxels (labels);
  for (gsize i = 0; i < n && !negative; i++)
    negative = labels->data[i] < 0;

  job.nz = labels->nz;
  job.ny = labels->ny;
  job.nx = labels->nx;
  job.nc = 1;
  job.bps = 32;
  job.format = negative ? SAMPLEFORMAT_INT : SAMPLEFORMAT_UINT;
  /* No predictor: readers such as older ImageJ releases undo horizontal
   * differencing only for 8- and 16-bit samples, and runs of equal labels
   * deflate well without it. */
  job.predictor = PREDICTOR_NONE;
  job.spacing = labels->spacing;
  job.unit = labels->unit;
  job.fill = fill_labels_cb;
  job.user_data = (gpointer)labels;
  return write_tiff_atomically (path, &job, error);
}

typedef struct
{
  const SvVolume *volume;
  SvSampleType as;
} SvVolumeFill;

static gboolean
fill_volume_cb (guint z, guint8 *page, gpointer user_data)
{
  const SvVolumeFill *f = user_data;
  const SvVolume *v = f->volume;
  gsize n = (gsize)v->ny * v->nx * v->nc;
  const float *src = v->data + (gsize)z * n;

  switch (f->as)
    {
    case SV_SAMPLE_F32:
      memcpy (page, src, n * sizeof (float));
      break;
    case SV_SAMPLE_U8:
      for (gsize i = 0; i < n; i++)
        {
          float x = src[i] * 255.0f;
          page[i] = (guint8)(x > 0.0f ? (x < 255.0f ? lrintf (x) : 255) : 0);
        }
      break;
    case SV_SAMPLE_U16:
      {
        guint16 *out = (guint16 *)page;
        for (gsize i = 0; i < n; i++)
          {
            float x = src[i] * 65535.0f;
            out[i] = (guint16)(x > 0.0f ? (x < 65535.0f ? lrintf (x) : 65535) : 0);
          }
      }
      break;
    default:
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_tiff_write_volume (const char *path, const SvVolume *volume, SvSampleType as, GError **error)
{
  SvTiffWriteJob job = { 0 };
  SvVolumeFill fill = { volume, as };

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (volume != NULL && volume->data != NULL, FALSE);
  g_return_val_if_fail (volume->nc == 1 || volume->nc == 3, FALSE);
  g_return_val_if_fail (as == SV_SAMPLE_F32 || as == SV_SAMPLE_U8 || as == SV_SAMPLE_U16, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  job.nz = volume->nz;
  job.ny = volume->ny;
  job.nx = volume->nx;
  job.nc = volume->nc;
  job.bps = (guint16)(sample_type_bytes (as) * 8);
  job.format = as == SV_SAMPLE_F32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT;
  /* Horizontal differencing helps smooth 8/16-bit images and every common
   * reader undoes it; ImageJ cannot undo the floating-point predictor. */
  job.predictor = as == SV_SAMPLE_F32 ? PREDICTOR_NONE : PREDICTOR_HORIZONTAL;
  job.spacing = volume->spacing;
  job.unit = volume->unit;
  job.fill = fill_volume_cb;
  job.user_data = &fill;
  return write_tiff_atomically (path, &job, error);
}

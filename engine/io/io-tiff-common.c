/* Supervox engine: TIFF helpers shared by reader and writer: libtiff
 * messages, sample types, codec names. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "io-tiff-private.h"

/* ------------------------------------------------------------------------ */
/* libtiff messages */

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

TIFFOpenOptions *
sv__tiff_options_new (SvTiffMessages *msgs)
{
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();

  TIFFOpenOptionsSetErrorHandlerExtR (opts, on_tiff_error, msgs);
  TIFFOpenOptionsSetWarningHandlerExtR (opts, on_tiff_warning, msgs);
  return opts;
}

void
sv__tiff_messages_reset (SvTiffMessages *msgs)
{
  g_clear_pointer (&msgs->first_error, g_free);
}

/* The captured libtiff message, or `fallback` when libtiff said nothing. */
const char *
sv__tiff_messages_text (const SvTiffMessages *msgs, const char *fallback)
{
  return msgs->first_error ? msgs->first_error : fallback;
}

/* ------------------------------------------------------------------------ */
/* Sample types */

guint
sv__sample_type_bytes (SvSampleType type)
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

gboolean
sv__sample_type_is_float (SvSampleType type)
{
  return type == SV_SAMPLE_F32 || type == SV_SAMPLE_F64;
}

/* Maps TIFF's BitsPerSample + SampleFormat; FALSE for layouts we do not read. */
gboolean
sv__sample_type_from_tiff (guint16 bps, guint16 format, SvSampleType *out)
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

const char *
sv__sample_format_words (guint16 format)
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

char *
sv__tiff_compression_name (guint16 compression)
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
guint64
sv__tiff_compression_max_ratio (guint16 compression)
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
/* Files */

/* Reads exactly `len` bytes at `offset`; FALSE if the file is shorter. */
gboolean
sv__tiff_read_at (int fd, guint64 offset, void *buf, gsize len)
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

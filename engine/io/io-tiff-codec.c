/* Supervox engine: deflate and zstd for TIFF strips and tiles, and TIFF's
 * predictors, for the worker threads of the reader and writer.
 *
 * The byte streams are the ones libtiff reads and writes: COMPRESSION_
 * ADOBE_DEFLATE is a zlib stream (2-byte header, deflate, Adler-32) per
 * strip (tif_zip.c); COMPRESSION_ZSTD is one zstd frame per strip
 * (tif_zstd.c, streaming API, so any frame header is accepted). */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include <libdeflate.h>
#include <zstd.h>

#include "io-tiff-private.h"

struct _SvTiffCodec
{
  struct libdeflate_decompressor *inflater;
  struct libdeflate_compressor *deflater;
  int deflater_level;
  ZSTD_DCtx *zstd_d;
  ZSTD_CCtx *zstd_c;
  guint8 *out; /* encoded bytes */
  gsize out_size;
  guint8 *row; /* one row for the floating-point predictor */
  gsize row_size;
  SvTiffRunsCoder *runs;
};

SvTiffCodec *
sv__tiff_codec_new (void)
{
  return g_new0 (SvTiffCodec, 1);
}

void
sv__tiff_codec_free (SvTiffCodec *codec)
{
  if (codec == NULL)
    return;
  if (codec->inflater != NULL)
    libdeflate_free_decompressor (codec->inflater);
  if (codec->deflater != NULL)
    libdeflate_free_compressor (codec->deflater);
  ZSTD_freeDCtx (codec->zstd_d);
  ZSTD_freeCCtx (codec->zstd_c);
  g_free (codec->out);
  g_free (codec->row);
  sv__tiff_runs_coder_free (codec->runs);
  g_free (codec);
}

gboolean
sv__tiff_codec_can_decode (guint16 compression)
{
  return compression == COMPRESSION_NONE || compression == COMPRESSION_ADOBE_DEFLATE
         || compression == COMPRESSION_DEFLATE || compression == COMPRESSION_ZSTD;
}

gboolean
sv__tiff_codec_decode (SvTiffCodec *codec, guint16 compression, const guint8 *in, gsize in_len,
                       guint8 *out, gsize out_len)
{
  switch (compression)
    {
    case COMPRESSION_NONE:
      if (in_len < out_len)
        return FALSE;
      memcpy (out, in, out_len);
      return TRUE;
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
      {
        size_t got = 0;
        if (codec->inflater == NULL)
          codec->inflater = libdeflate_alloc_decompressor ();
        if (codec->inflater == NULL)
          return FALSE;
        return libdeflate_zlib_decompress (codec->inflater, in, in_len, out, out_len, &got)
                   == LIBDEFLATE_SUCCESS
               && got == out_len;
      }
    case COMPRESSION_ZSTD:
      {
        size_t got;
        if (codec->zstd_d == NULL)
          codec->zstd_d = ZSTD_createDCtx ();
        if (codec->zstd_d == NULL)
          return FALSE;
        got = ZSTD_decompressDCtx (codec->zstd_d, out, out_len, in, in_len);
        return !ZSTD_isError (got) && got == out_len;
      }
    default:
      return FALSE;
    }
}

static gboolean
ensure_out (SvTiffCodec *codec, gsize size)
{
  if (codec->out_size >= size)
    return TRUE;
  g_free (codec->out);
  codec->out = g_try_malloc (size);
  codec->out_size = codec->out ? size : 0;
  return codec->out != NULL;
}

guint8 *
sv__tiff_codec_buffer (SvTiffCodec *codec, gsize size)
{
  return ensure_out (codec, MAX (size, 1)) ? codec->out : NULL;
}

const guint8 *
sv__tiff_codec_encode (SvTiffCodec *codec, SvTiffCompression compression, int level,
                       const guint8 *in, gsize in_len, gsize *out_len)
{
  switch (compression)
    {
    case SV_TIFF_COMPRESSION_DEFLATE:
      if (codec->deflater == NULL || codec->deflater_level != level)
        {
          if (codec->deflater != NULL)
            libdeflate_free_compressor (codec->deflater);
          codec->deflater = libdeflate_alloc_compressor (level);
          codec->deflater_level = level;
          if (codec->deflater == NULL)
            return NULL;
        }
      if (!ensure_out (codec, libdeflate_zlib_compress_bound (codec->deflater, in_len)))
        return NULL;
      *out_len
          = libdeflate_zlib_compress (codec->deflater, in, in_len, codec->out, codec->out_size);
      return *out_len > 0 ? codec->out : NULL;
    case SV_TIFF_COMPRESSION_ZSTD:
      {
        size_t n;
        if (codec->zstd_c == NULL)
          codec->zstd_c = ZSTD_createCCtx ();
        if (codec->zstd_c == NULL || !ensure_out (codec, ZSTD_compressBound (in_len)))
          return NULL;
        if (ZSTD_isError (ZSTD_CCtx_setParameter (codec->zstd_c, ZSTD_c_compressionLevel, level)))
          return NULL;
        n = ZSTD_compress2 (codec->zstd_c, codec->out, codec->out_size, in, in_len);
        if (ZSTD_isError (n))
          return NULL;
        *out_len = n;
        return codec->out;
      }
    case SV_TIFF_COMPRESSION_NONE:
      *out_len = in_len;
      return in;
    default:
      return NULL;
    }
}

const guint8 *
sv__tiff_codec_encode_runs (SvTiffCodec *codec, const guint8 *in, gsize in_len, gsize row_bytes,
                            guint sample_bytes, gsize *out_len)
{
  if (codec->runs == NULL)
    codec->runs = sv__tiff_runs_coder_new ();
  if (!ensure_out (codec, sv__tiff_deflate_runs_bound (in_len)))
    return NULL;
  *out_len = sv__tiff_deflate_runs (codec->runs, in, in_len, row_bytes, sample_bytes, codec->out);
  return *out_len > 0 ? codec->out : NULL;
}

/* ------------------------------------------------------------------------ */
/* Predictors */

#define SV_HOR_ACC(ctype)                                                                          \
  do                                                                                               \
    {                                                                                              \
      for (gsize r = 0; r < rows; r++)                                                             \
        {                                                                                          \
          ctype *w = (ctype *)(void *)(data + r * row_bytes);                                      \
          for (gsize i = stride; i < n; i++)                                                       \
            w[i] = (ctype)(w[i] + w[i - stride]);                                                  \
        }                                                                                          \
    }                                                                                              \
  while (0)

#define SV_HOR_DIFF(ctype)                                                                         \
  do                                                                                               \
    {                                                                                              \
      for (gsize r = 0; r < rows; r++)                                                             \
        {                                                                                          \
          ctype *w = (ctype *)(void *)(data + r * row_bytes);                                      \
          for (gsize i = n; i-- > stride;)                                                         \
            w[i] = (ctype)(w[i] - w[i - stride]);                                                  \
        }                                                                                          \
    }                                                                                              \
  while (0)

/* Predictor 3 (Adobe's floating-point predictor, libtiff fpAcc): each row
 * holds the bytes of its samples split into planes, most significant byte
 * first, then byte-wise differences at distance `stride` over the whole
 * row. */
static gboolean
float_predictor_undo (SvTiffCodec *codec, guint8 *data, gsize rows, gsize width, guint stride,
                      guint bytes)
{
  gsize wc = width * stride, row_bytes = wc * bytes;

  if (codec->row_size < row_bytes)
    {
      g_free (codec->row);
      codec->row = g_try_malloc (row_bytes);
      codec->row_size = codec->row ? row_bytes : 0;
      if (codec->row == NULL)
        return FALSE;
    }
  for (gsize r = 0; r < rows; r++)
    {
      guint8 *cp = data + r * row_bytes;
      guint8 *tmp = codec->row;

      for (gsize i = stride; i < row_bytes; i++)
        cp[i] = (guint8)(cp[i] + cp[i - stride]);
      memcpy (tmp, cp, row_bytes);
      for (gsize k = 0; k < wc; k++)
        for (guint b = 0; b < bytes; b++)
#if G_BYTE_ORDER == G_BIG_ENDIAN
          cp[bytes * k + b] = tmp[b * wc + k];
#else
          cp[bytes * k + b] = tmp[(bytes - b - 1) * wc + k];
#endif
    }
  return TRUE;
}

gboolean
sv__tiff_predictor_undo (SvTiffCodec *codec, guint16 predictor, guint8 *data, gsize rows,
                         gsize width, guint stride, guint bytes)
{
  gsize n = width * stride, row_bytes = n * bytes;

  if (predictor == PREDICTOR_NONE)
    return TRUE;
  if (predictor == PREDICTOR_FLOATINGPOINT)
    return float_predictor_undo (codec, data, rows, width, stride, bytes);
  if (predictor != PREDICTOR_HORIZONTAL)
    return FALSE;
  switch (bytes)
    {
    case 1:
      SV_HOR_ACC (guint8);
      return TRUE;
    case 2:
      SV_HOR_ACC (guint16);
      return TRUE;
    case 4:
      SV_HOR_ACC (guint32);
      return TRUE;
    case 8:
      SV_HOR_ACC (guint64);
      return TRUE;
    default:
      return FALSE;
    }
}

void
sv__tiff_predictor_apply (guint8 *data, gsize rows, gsize width, guint stride, guint bytes)
{
  gsize n = width * stride, row_bytes = n * bytes;

  switch (bytes)
    {
    case 1:
      SV_HOR_DIFF (guint8);
      break;
    case 2:
      SV_HOR_DIFF (guint16);
      break;
    case 4:
      SV_HOR_DIFF (guint32);
      break;
    case 8:
      SV_HOR_DIFF (guint64);
      break;
    default:
      g_return_if_reached ();
    }
}

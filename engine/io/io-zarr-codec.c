/* Supervox engine: Zarr v2 chunk codecs (numcodecs' Blosc, Zstd, Zlib,
 * GZip, or none) through their libraries, and the names users type for
 * them ("zstd:3", "blosc:lz4:5"). */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include <blosc.h>
#include <json-glib/json-glib.h>
#include <libdeflate.h>
#include <zstd.h>

#include "io-tiff-private.h"
#include "io-zarr-private.h"
#include "supervox/sv-error.h"

#define SV_ZARR_ZSTD_DEFAULT_LEVEL 3
#define SV_ZARR_DEFLATE_DEFAULT_LEVEL 5
#define SV_ZARR_BLOSC_DEFAULT_LEVEL 5

void
sv_zarr_write_options_init_defaults (SvZarrWriteOptions *options)
{
  g_return_if_fail (options != NULL);

  memset (options, 0, sizeof *options);
  options->compressor = SV_ZARR_COMPRESSOR_BLOSC;
  options->level = 1;
  g_strlcpy (options->blosc_cname, "zstd", sizeof options->blosc_cname);
  options->blosc_shuffle = -1;
}

static const char *const blosc_cnames[] = { "zstd", "lz4", "lz4hc", "zlib", "blosclz" };
/* Indexed by blosc's filter (BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE). */
static const char *const blosc_shuffles[] = { "noshuffle", "shuffle", "bitshuffle" };

/* blosc's filter for `o`: zstd matches whole labels better unshuffled (a
 * fifth to a third smaller on label volumes); lz4's short matches do
 * better on shuffled bytes. */
static int
shuffle_of (const SvZarrWriteOptions *o)
{
  if (o->blosc_shuffle >= BLOSC_NOSHUFFLE && o->blosc_shuffle <= BLOSC_BITSHUFFLE)
    return o->blosc_shuffle;
  return g_str_equal (o->blosc_cname, "zstd") ? BLOSC_NOSHUFFLE : BLOSC_SHUFFLE;
}

static gboolean
parse_level (const char *text, int max, int *level)
{
  guint64 v;

  if (!g_ascii_string_to_unsigned (text, 10, 1, (guint64)max, &v, NULL))
    return FALSE;
  *level = (int)v;
  return TRUE;
}

gboolean
sv_zarr_write_options_parse (SvZarrWriteOptions *options, const char *text, GError **error)
{
  g_auto (GStrv) parts = NULL;
  guint n;
  SvZarrWriteOptions o = *options;

  g_return_val_if_fail (options != NULL && text != NULL, FALSE);

  parts = g_strsplit (text, ":", 5);
  n = g_strv_length (parts);
  o.level = 0;
  o.runs = FALSE;
  if (n >= 1 && g_str_equal (parts[0], "none") && n == 1)
    {
      o.compressor = SV_ZARR_COMPRESSOR_NONE;
      *options = o;
      return TRUE;
    }
  if (n >= 1 && n <= 2
      && (g_str_equal (parts[0], "zlib") || g_str_equal (parts[0], "deflate")
          || g_str_equal (parts[0], "gzip") || g_str_equal (parts[0], "zstd")))
    {
      gboolean zstd = g_str_equal (parts[0], "zstd");

      o.compressor = zstd                             ? SV_ZARR_COMPRESSOR_ZSTD
                     : g_str_equal (parts[0], "gzip") ? SV_ZARR_COMPRESSOR_GZIP
                                                      : SV_ZARR_COMPRESSOR_ZLIB;
      o.runs
          = n == 2 && o.compressor == SV_ZARR_COMPRESSOR_ZLIB && g_str_equal (parts[1], "runs");
      /* A runs stream's zlib header says "fastest": level 1. */
      if (o.runs)
        o.level = 1;
      if (n == 1 || o.runs || parse_level (parts[1], zstd ? 22 : 9, &o.level))
        {
          *options = o;
          return TRUE;
        }
    }
  if (n >= 1 && n <= 4 && g_str_equal (parts[0], "blosc"))
    {
      /* The fields in order, each optional: codec, level, filter. */
      guint field = 0;
      gboolean ok = TRUE;

      o.compressor = SV_ZARR_COMPRESSOR_BLOSC;
      g_strlcpy (o.blosc_cname, "zstd", sizeof o.blosc_cname);
      o.blosc_shuffle = -1;
      for (guint i = 1; i < n && ok; i++)
        {
          gboolean known = FALSE;
          for (guint k = 0; k < G_N_ELEMENTS (blosc_cnames) && field < 1 && !known; k++)
            if (g_str_equal (parts[i], blosc_cnames[k]))
              {
                g_strlcpy (o.blosc_cname, blosc_cnames[k], sizeof o.blosc_cname);
                known = TRUE;
                field = 1;
              }
          if (!known && field < 2 && parse_level (parts[i], 9, &o.level))
            {
              known = TRUE;
              field = 2;
            }
          for (guint k = 0; k < G_N_ELEMENTS (blosc_shuffles) && field < 3 && !known; k++)
            if (g_str_equal (parts[i], blosc_shuffles[k]))
              {
                o.blosc_shuffle = (int)k;
                known = TRUE;
                field = 3;
              }
          ok = known;
        }
      if (ok)
        {
          *options = o;
          return TRUE;
        }
    }
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
               "unknown Zarr compression '%s': use none, zlib[:1-9|:runs], gzip[:1-9], zstd[:1-22] or "
               "blosc[:zstd|lz4|lz4hc|zlib|blosclz][:1-9][:noshuffle|shuffle|bitshuffle]",
               text);
  return FALSE;
}

static int
level_of (const SvZarrWriteOptions *o)
{
  if (o->level > 0)
    return o->level;
  switch (o->compressor)
    {
    case SV_ZARR_COMPRESSOR_ZSTD:
      return SV_ZARR_ZSTD_DEFAULT_LEVEL;
    case SV_ZARR_COMPRESSOR_BLOSC:
      return SV_ZARR_BLOSC_DEFAULT_LEVEL;
    case SV_ZARR_COMPRESSOR_ZLIB:
    case SV_ZARR_COMPRESSOR_GZIP:
      return SV_ZARR_DEFLATE_DEFAULT_LEVEL;
    case SV_ZARR_COMPRESSOR_NONE:
    default:
      return 0;
    }
}

char *
sv_zarr_write_options_to_string (const SvZarrWriteOptions *o)
{
  switch (o->compressor)
    {
    case SV_ZARR_COMPRESSOR_ZLIB:
      return o->runs ? g_strdup ("zlib:runs") : g_strdup_printf ("zlib:%d", level_of (o));
    case SV_ZARR_COMPRESSOR_GZIP:
      return g_strdup_printf ("gzip:%d", level_of (o));
    case SV_ZARR_COMPRESSOR_ZSTD:
      return g_strdup_printf ("zstd:%d", level_of (o));
    case SV_ZARR_COMPRESSOR_BLOSC:
      {
        SvZarrWriteOptions plain = *o;

        plain.blosc_shuffle = -1;
        if (shuffle_of (o) == shuffle_of (&plain))
          return g_strdup_printf ("blosc:%s:%d", o->blosc_cname, level_of (o));
        return g_strdup_printf ("blosc:%s:%d:%s", o->blosc_cname, level_of (o),
                                blosc_shuffles[shuffle_of (o)]);
      }
    case SV_ZARR_COMPRESSOR_NONE:
    default:
      return g_strdup ("none");
    }
}

JsonNode *
sv__zarr_compressor_json (const SvZarrWriteOptions *o)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (o->compressor == SV_ZARR_COMPRESSOR_NONE)
    return json_node_new (JSON_NODE_NULL);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "id");
  switch (o->compressor)
    {
    case SV_ZARR_COMPRESSOR_ZLIB:
      json_builder_add_string_value (b, "zlib");
      break;
    case SV_ZARR_COMPRESSOR_GZIP:
      json_builder_add_string_value (b, "gzip");
      break;
    case SV_ZARR_COMPRESSOR_ZSTD:
      json_builder_add_string_value (b, "zstd");
      break;
    case SV_ZARR_COMPRESSOR_BLOSC:
    default:
      json_builder_add_string_value (b, "blosc");
      json_builder_set_member_name (b, "cname");
      json_builder_add_string_value (b, o->blosc_cname);
      json_builder_set_member_name (b, "clevel");
      json_builder_add_int_value (b, level_of (o));
      json_builder_set_member_name (b, "shuffle");
      json_builder_add_int_value (b, shuffle_of (o));
      json_builder_set_member_name (b, "blocksize");
      json_builder_add_int_value (b, 0);
      break;
    }
  if (o->compressor != SV_ZARR_COMPRESSOR_BLOSC)
    {
      json_builder_set_member_name (b, "level");
      json_builder_add_int_value (b, level_of (o));
    }
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

gboolean
sv__zarr_chunk_decode (SvZarrCompressor compressor, const guint8 *in, gsize in_size, guint8 *out,
                       gsize out_size, char **why)
{
  *why = NULL;
  switch (compressor)
    {
    case SV_ZARR_COMPRESSOR_NONE:
      if (in_size != out_size)
        {
          *why = g_strdup_printf ("%" G_GSIZE_FORMAT " bytes, not %" G_GSIZE_FORMAT, in_size,
                                  out_size);
          return FALSE;
        }
      memcpy (out, in, out_size);
      return TRUE;
    case SV_ZARR_COMPRESSOR_ZSTD:
      {
        size_t n = ZSTD_decompress (out, out_size, in, in_size);
        if (ZSTD_isError (n))
          {
            *why = g_strdup_printf ("zstd: %s", ZSTD_getErrorName (n));
            return FALSE;
          }
        if (n != out_size)
          {
            *why = g_strdup_printf ("zstd: %zu bytes, not %" G_GSIZE_FORMAT, n, out_size);
            return FALSE;
          }
        return TRUE;
      }
    case SV_ZARR_COMPRESSOR_ZLIB:
    case SV_ZARR_COMPRESSOR_GZIP:
      {
        struct libdeflate_decompressor *d = libdeflate_alloc_decompressor ();
        enum libdeflate_result r;

        if (d == NULL)
          {
            *why = g_strdup ("out of memory");
            return FALSE;
          }
        /* Exactly out_size bytes (NULL actual size), or an error. */
        r = compressor == SV_ZARR_COMPRESSOR_ZLIB
                ? libdeflate_zlib_decompress (d, in, in_size, out, out_size, NULL)
                : libdeflate_gzip_decompress (d, in, in_size, out, out_size, NULL);
        libdeflate_free_decompressor (d);
        if (r != LIBDEFLATE_SUCCESS)
          {
            *why = g_strdup_printf ("%s: %s", compressor == SV_ZARR_COMPRESSOR_ZLIB ? "zlib" : "gzip",
                                    r == LIBDEFLATE_SHORT_OUTPUT ? "too few bytes"
                                    : r == LIBDEFLATE_INSUFFICIENT_SPACE ? "too many bytes"
                                                                         : "damaged data");
            return FALSE;
          }
        return TRUE;
      }
    case SV_ZARR_COMPRESSOR_BLOSC:
      {
        size_t nbytes = 0;
        int n;

        if (blosc_cbuffer_validate (in, in_size, &nbytes) != 0)
          {
            *why = g_strdup ("blosc: damaged header");
            return FALSE;
          }
        if (nbytes != out_size)
          {
            *why = g_strdup_printf ("blosc: %zu bytes, not %" G_GSIZE_FORMAT, nbytes, out_size);
            return FALSE;
          }
        /* The _ctx form is thread-safe; our threads are the parallelism. */
        n = blosc_decompress_ctx (in, out, out_size, 1);
        if (n < 0 || (gsize)n != out_size)
          {
            *why = g_strdup ("blosc: damaged data");
            return FALSE;
          }
        return TRUE;
      }
    default:
      *why = g_strdup ("unknown codec");
      return FALSE;
    }
}

/* c-blosc does not survive a failed allocation of its own (it says so on
 * stderr and goes on with the null pointer), so the room it takes for a
 * chunk is tried first: its blocks, each at most the chunk, twice and
 * once more shuffled, and its context. */
static gsize
blosc_room (gsize size)
{
  return 3 * size + ((gsize)256 << 10);
}

struct _SvZarrEncoder
{
  SvZarrWriteOptions options;
  int level;
  gsize row_bytes;
  SvTiffRunsCoder *runs;
  guint8 *out; /* the bound of a chunk's bytes */
  gsize cap;
  ZSTD_CCtx *zstd;
  struct libdeflate_compressor *deflate;
};

SvZarrEncoder *
sv__zarr_encoder_new (const SvZarrWriteOptions *o, gsize chunk_bytes, gsize row_bytes)
{
  g_autoptr (SvZarrEncoder) e = g_new0 (SvZarrEncoder, 1);

  e->options = *o;
  e->level = level_of (o);
  e->row_bytes = row_bytes;
  if (o->compressor == SV_ZARR_COMPRESSOR_ZLIB && o->runs)
    {
      if ((e->runs = sv__tiff_runs_coder_new ()) == NULL)
        return NULL;
      e->cap = sv__tiff_deflate_runs_bound (chunk_bytes);
      if ((e->out = g_try_malloc (MAX (e->cap, 1))) == NULL)
        return NULL;
      return g_steal_pointer (&e);
    }
  switch (o->compressor)
    {
    case SV_ZARR_COMPRESSOR_ZSTD:
      if ((e->zstd = ZSTD_createCCtx ()) == NULL)
        return NULL;
      e->cap = ZSTD_compressBound (chunk_bytes);
      break;
    case SV_ZARR_COMPRESSOR_ZLIB:
    case SV_ZARR_COMPRESSOR_GZIP:
      if ((e->deflate = libdeflate_alloc_compressor (e->level)) == NULL)
        return NULL;
      e->cap = o->compressor == SV_ZARR_COMPRESSOR_ZLIB
                   ? libdeflate_zlib_compress_bound (e->deflate, chunk_bytes)
                   : libdeflate_gzip_compress_bound (e->deflate, chunk_bytes);
      break;
    case SV_ZARR_COMPRESSOR_BLOSC:
      e->cap = chunk_bytes + BLOSC_MAX_OVERHEAD;
      break;
    case SV_ZARR_COMPRESSOR_NONE:
    default:
      /* The chunk's own bytes go to the file. */
      e->cap = chunk_bytes;
      return g_steal_pointer (&e);
    }
  if ((e->out = g_try_malloc (MAX (e->cap, 1))) == NULL)
    return NULL;
  return g_steal_pointer (&e);
}

void
sv__zarr_encoder_free (SvZarrEncoder *e)
{
  if (e == NULL)
    return;
  ZSTD_freeCCtx (e->zstd);
  if (e->runs != NULL)
    sv__tiff_runs_coder_free (e->runs);
  if (e->deflate != NULL)
    libdeflate_free_compressor (e->deflate);
  g_free (e->out);
  g_free (e);
}

const guint8 *
sv__zarr_encoder_run (SvZarrEncoder *e, guint item_bytes, const guint8 *in, gsize size,
                      gsize *out_size, char **why)
{
  g_return_val_if_fail (size <= e->cap, NULL);

  switch (e->options.compressor)
    {
    case SV_ZARR_COMPRESSOR_ZSTD:
      *out_size = ZSTD_compressCCtx (e->zstd, e->out, e->cap, in, size, e->level);
      if (ZSTD_isError (*out_size))
        {
          *why = g_strdup_printf ("zstd: %s", ZSTD_getErrorName (*out_size));
          return NULL;
        }
      return e->out;
    case SV_ZARR_COMPRESSOR_ZLIB:
      /* Runs along the chunk's rows and from the row above: a row of
       * samples that does not divide the chunk (none here) falls back to
       * one row of all of it. */
      if (e->runs != NULL)
        *out_size = sv__tiff_deflate_runs (
            e->runs, in, size,
            e->row_bytes > 0 && size % e->row_bytes == 0 ? e->row_bytes : size, item_bytes,
            e->out);
      else
        *out_size = libdeflate_zlib_compress (e->deflate, in, size, e->out, e->cap);
      break;
    case SV_ZARR_COMPRESSOR_GZIP:
      *out_size = libdeflate_gzip_compress (e->deflate, in, size, e->out, e->cap);
      break;
    case SV_ZARR_COMPRESSOR_BLOSC:
      {
        gpointer room = g_try_malloc (blosc_room (size));
        int n;

        if (room == NULL)
          {
            *why = g_strdup_printf ("not enough memory to compress a chunk of %" G_GSIZE_FORMAT
                                    " bytes",
                                    size);
            return NULL;
          }
        g_free (room);
        n = blosc_compress_ctx (e->level, shuffle_of (&e->options), item_bytes, size, in, e->out,
                                e->cap, e->options.blosc_cname, 0, 1);
        if (n <= 0)
          {
            *why = g_strdup_printf ("blosc: error %d", n);
            return NULL;
          }
        *out_size = (gsize)n;
        return e->out;
      }
    case SV_ZARR_COMPRESSOR_NONE:
    default:
      *out_size = size;
      return in;
    }
  if (*out_size == 0)
    {
      *why = g_strdup ("deflate: the bound was too small");
      return NULL;
    }
  return e->out;
}

/* Supervox engine: options of the TIFF reader and writer, and the codec
 * names users type ("deflate:1"). */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <string.h>

#include "io-tiff-private.h"

/* Deflate because every reader decodes it: ImageJ's own TIFF reader, and
 * tifffile (so napari) without imagecodecs, read neither zstd nor, for
 * 32-bit labels, the predictor correctly. libdeflate's level 6 stores SLIC
 * labels slightly smaller than zlib's level 6 at about twice its speed per
 * core, but at 2048³ it took longer than the segmentation; its levels 1-3
 * make label files 5× larger. Deflate of runs (io-tiff-deflate-runs.c)
 * writes the same kind of stream about three times faster, a third larger
 * than level 6 (bench/RESULTS.md). */
#define SV_TIFF_DEFAULT_COMPRESSION SV_TIFF_COMPRESSION_DEFLATE_RUNS
#define SV_TIFF_DEFAULT_LEVEL 0

void
sv_tiff_read_options_init_defaults (SvTiffReadOptions *options)
{
  g_return_if_fail (options != NULL);

  options->channel = -1;
  options->n_threads = 0;
}

void
sv_tiff_write_options_init_defaults (SvTiffWriteOptions *options)
{
  g_return_if_fail (options != NULL);

  options->compression = SV_TIFF_DEFAULT_COMPRESSION;
  options->level = SV_TIFF_DEFAULT_LEVEL;
  options->predictor = SV_TIFF_PREDICTOR_AUTO;
  options->n_threads = 0;
  options->zarr = NULL;
}

static const struct
{
  const char *name;
  SvTiffCompression compression;
  int min_level, max_level, default_level; /* all 0: no levels */
} codecs[] = {
  { "none", SV_TIFF_COMPRESSION_NONE, 0, 0, 0 },
  /* libdeflate's levels: 1–9 as zlib's, 10–12 slower and smaller. */
  { "deflate", SV_TIFF_COMPRESSION_DEFLATE, 1, 12, 6 },
  { "zstd", SV_TIFF_COMPRESSION_ZSTD, 1, 22, 3 },
  { "lzw", SV_TIFF_COMPRESSION_LZW, 0, 0, 0 },
};

/* The level word of deflate of runs. */
#define RUNS_WORD "runs"


gboolean
sv_tiff_write_options_parse (SvTiffWriteOptions *options, const char *text, GError **error)
{
  g_autofree char *name = NULL;
  const char *colon;
  const char *level_text = NULL;

  g_return_val_if_fail (options != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (text == NULL)
    text = "";
  colon = strchr (text, ':');
  name = colon ? g_strndup (text, (gsize)(colon - text)) : g_strdup (text);
  if (colon != NULL)
    level_text = colon + 1;

  for (guint i = 0; i < G_N_ELEMENTS (codecs); i++)
    {
      char *end = NULL;
      gint64 level;

      if (g_ascii_strcasecmp (name, codecs[i].name) != 0)
        continue;
      if (level_text == NULL)
        {
          options->compression = codecs[i].compression;
          options->level = 0;
          return TRUE;
        }
      if (codecs[i].max_level == 0)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "compression %s has no levels, got '%s'", codecs[i].name, text);
          return FALSE;
        }
      if (codecs[i].compression == SV_TIFF_COMPRESSION_DEFLATE
          && g_ascii_strcasecmp (level_text, RUNS_WORD) == 0)
        {
          options->compression = SV_TIFF_COMPRESSION_DEFLATE_RUNS;
          options->level = 0;
          return TRUE;
        }
      errno = 0;
      level = g_ascii_strtoll (level_text, &end, 10);
      if (*level_text == '\0' || end == level_text || *end != '\0' || errno == ERANGE
          || level < codecs[i].min_level || level > codecs[i].max_level)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "compression %s takes a level from %d to %d%s, got '%s'",
                       codecs[i].name, codecs[i].min_level, codecs[i].max_level,
                       codecs[i].compression == SV_TIFF_COMPRESSION_DEFLATE ? " or " RUNS_WORD : "",
                       text);
          return FALSE;
        }
      options->compression = codecs[i].compression;
      options->level = (int)level;
      return TRUE;
    }
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
               "compression must be none, deflate, zstd or lzw, optionally with :LEVEL "
               "(deflate:1, zstd:3, deflate:runs), got '%s'",
               text);
  return FALSE;
}

/* The level the writer uses for `options` (0 for codecs without levels). */
static int
effective_level (const SvTiffWriteOptions *options, const char **name)
{
  if (options->compression == SV_TIFF_COMPRESSION_DEFLATE_RUNS)
    {
      *name = "deflate";
      return 0;
    }
  for (guint i = 0; i < G_N_ELEMENTS (codecs); i++)
    if (codecs[i].compression == options->compression)
      {
        *name = codecs[i].name;
        if (codecs[i].max_level == 0)
          return 0;
        if (options->level <= 0)
          return codecs[i].default_level;
        return CLAMP (options->level, codecs[i].min_level, codecs[i].max_level);
      }
  g_return_val_if_reached (0);
}

char *
sv_tiff_write_options_to_string (const SvTiffWriteOptions *options)
{
  const char *name = "none";
  int level;

  g_return_val_if_fail (options != NULL, NULL);

  if (options->compression == SV_TIFF_COMPRESSION_DEFLATE_RUNS)
    return g_strdup ("deflate:" RUNS_WORD);
  level = effective_level (options, &name);
  if (level == 0)
    return g_strdup (name);
  return g_strdup_printf ("%s:%d", name, level);
}

int
sv__tiff_write_options_level (const SvTiffWriteOptions *options)
{
  const char *name;

  return effective_level (options, &name);
}

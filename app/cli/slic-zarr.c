/* supervox-cli slic: OME-Zarr levels in, label stores out. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-zarr.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "cli-common.h"
#include "supervox/sv-error.h"

/* --zarr-chunks Z,Y,X: three sizes from 1 to 4096. */
static gboolean
parse_chunks (const char *text, guint chunks[3], GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);

  if (g_strv_length (parts) != 3)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "--zarr-chunks wants Z,Y,X (three sizes), got %s", text);
      return FALSE;
    }
  for (guint i = 0; i < 3; i++)
    {
      gint64 v;

      if (!sv_cli_parse_int64 ("--zarr-chunks", g_strstrip (parts[i]), 1, 4096, &v, error))
        return FALSE;
      chunks[i] = (guint)v;
    }
  return TRUE;
}

gboolean
sv_cli_slic_zarr_setup (SvCliSlicZarr *z, const char *const *inputs, char **output,
                        const char *compression_text, char **compression, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (z->level != NULL)
    {
      gint64 v;
      if (!sv_cli_parse_int64 ("--zarr-level", z->level, 0, 64, &v, error))
        return FALSE;
      z->level_index = (guint)v;
    }
  if (z->output_format != NULL && !g_str_equal (z->output_format, "tiff")
      && !g_str_equal (z->output_format, "zarr"))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "--output-format must be tiff or zarr, got %s", z->output_format);
      return FALSE;
    }
  if (z->labels_name != NULL)
    {
      if (*output != NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--zarr-labels writes into the input image: give it without -o");
          return FALSE;
        }
      if (inputs[0] == NULL || inputs[1] != NULL || !sv_zarr_is_ome_image (inputs[0]))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--zarr-labels needs one input that is an OME-Zarr image");
          return FALSE;
        }
      if (*z->labels_name == '\0' || *z->labels_name == '.'
          || strchr (z->labels_name, G_DIR_SEPARATOR) != NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--zarr-labels %s: a name without '/' that does not start with '.'",
                       z->labels_name);
          return FALSE;
        }
      *output = g_build_filename (inputs[0], "labels", z->labels_name, NULL);
      z->write.image_label = TRUE;
    }
  z->zarr_output = z->labels_name != NULL || g_strcmp0 (z->output_format, "zarr") == 0
                   || (z->output_format == NULL && *output != NULL && sv_cli_names_zarr_store (*output));
  if (z->zarr_output && g_strcmp0 (z->output_format, "tiff") == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "--zarr-labels writes a Zarr store, not --output-format tiff");
      return FALSE;
    }
  if (!z->zarr_output && z->chunks != NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "--zarr-chunks shapes an OME-Zarr store's chunks: the labels are a TIFF");
      return FALSE;
    }
  if (!z->zarr_output)
    return TRUE;

  /* A store is a folder; its name is taken without the trailing '/'. */
  if (*output != NULL && sv_cli_names_zarr_store (*output))
    {
      gsize len = strlen (*output);
      while (len > 1 && (*output)[len - 1] == G_DIR_SEPARATOR)
        (*output)[--len] = '\0';
    }
  {
    gboolean image_label = z->write.image_label;
    sv_zarr_write_options_init_defaults (&z->write);
    z->write.image_label = image_label;
  }
  if (compression_text != NULL && !sv_zarr_write_options_parse (&z->write, compression_text, &local))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM, "--compression: %s",
                   local->message);
      return FALSE;
    }
  if (z->chunks != NULL && !parse_chunks (z->chunks, z->write.chunks, error))
    return FALSE;
  g_free (*compression);
  *compression = sv_zarr_write_options_to_string (&z->write);
  return TRUE;
}

char *
sv_cli_slic_zarr_input (const SvCliSlicZarr *z, const char *input, GError **error)
{
  if (!sv_zarr_is_store (input))
    {
      if (z->level_index > 0)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "%s: --zarr-level is for OME-Zarr images, and this is none", input);
          return NULL;
        }
      return g_strdup (input);
    }
  if (z->level == NULL)
    return g_strdup (input);
  return sv_zarr_level_path (input, z->level_index, error);
}

gboolean
sv_cli_slic_zarr_check_labels (SvCliSlicZarr *z, const char *input, GError **error)
{
  g_autofree char *labels = g_build_filename (input, "labels", NULL);

  if (!sv_cli_check_output (labels, error))
    return FALSE;
  if (g_file_test (labels, G_FILE_TEST_EXISTS))
    return TRUE;
  if (g_mkdir (labels, 0777) != 0)
    {
      int saved = errno;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot create it: %s", labels,
                   g_strerror (saved));
      return FALSE;
    }
  z->made_labels = g_steal_pointer (&labels);
  return TRUE;
}

void
sv_cli_slic_zarr_done (SvCliSlicZarr *z)
{
  if (z->made_labels != NULL)
    g_rmdir (z->made_labels);
  g_clear_pointer (&z->made_labels, g_free);
}

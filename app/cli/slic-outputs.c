/* supervox-cli slic: output names from -o and the overwrite checks. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-outputs.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "cli-common.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-zarr.h"
#include "supervox/sv-sidecar.h"

SvCliOutputKind
sv_cli_output_kind (const char *output)
{
  if (strchr (output, '{') != NULL)
    return SV_CLI_OUTPUT_TEMPLATE;
  /* A Zarr store is a folder but one output. */
  if (sv_cli_names_zarr_store (output) || sv_zarr_is_store (output))
    return SV_CLI_OUTPUT_FILE;
  if (g_str_has_suffix (output, G_DIR_SEPARATOR_S) || g_file_test (output, G_FILE_TEST_IS_DIR))
    return SV_CLI_OUTPUT_FOLDER;
  return SV_CLI_OUTPUT_FILE;
}

/* "cells.ome.tif" → "cells": labels are not OME files, so a name that says
 * so would mislead. */
static char *
input_stem (const char *input)
{
  g_autofree char *name = g_path_get_basename (input);
  char *dot = strrchr (name, '.');
  gsize len;

  if (dot != NULL && dot != name)
    *dot = '\0';
  len = strlen (name);
  if (len > 4 && g_ascii_strcasecmp (name + len - 4, ".ome") == 0)
    name[len - 4] = '\0';
  return g_steal_pointer (&name);
}

static gboolean
expand_template (const char *template, const char *input, guint index, guint n_inputs, GString *out,
                 GError **error)
{
  const char *p = template;
  int width = 1;

  for (guint n = n_inputs; n >= 10; n /= 10)
    width++;
  while (*p != '\0')
    {
      const char *close;
      g_autofree char *key = NULL;

      if (*p != '{')
        {
          g_string_append_c (out, *p++);
          continue;
        }
      close = strchr (p, '}');
      if (close == NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "-o %s: a '{' without its '}'", template);
          return FALSE;
        }
      key = g_strndup (p + 1, (gsize)(close - p - 1));
      if (strcmp (key, "stem") == 0)
        {
          g_autofree char *stem = input_stem (input);
          g_string_append (out, stem);
        }
      else if (strcmp (key, "name") == 0)
        {
          g_autofree char *name = g_path_get_basename (input);
          g_string_append (out, name);
        }
      else if (strcmp (key, "dir") == 0)
        {
          g_autofree char *dir = g_path_get_dirname (input);
          g_string_append (out, dir);
        }
      else if (strcmp (key, "index") == 0)
        g_string_append_printf (out, "%0*u", width, index + 1);
      else
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "-o %s: unknown placeholder {%s} (use {stem}, {name}, {dir} or {index})",
                       template, key);
          return FALSE;
        }
      p = close + 1;
    }
  return TRUE;
}

char **
sv_cli_slic_output_names (const char *const *inputs, const char *output, GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  guint n = g_strv_length ((char **)inputs);
  SvCliOutputKind kind = sv_cli_output_kind (output);

  if (kind == SV_CLI_OUTPUT_FILE && n > 1)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%u inputs would all be written to %s: give a folder (-o DIR/) or a name "
                   "template (-o 'DIR/{stem}_labels.tif')",
                   n, output);
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    {
      if (kind == SV_CLI_OUTPUT_FILE)
        g_ptr_array_add (names, g_strdup (output));
      else if (kind == SV_CLI_OUTPUT_FOLDER)
        {
          g_autofree char *stem = input_stem (inputs[i]);
          g_autofree char *name = g_strconcat (stem, ".tif", NULL);
          g_ptr_array_add (names, g_build_filename (output, name, NULL));
        }
      else
        {
          GString *name = g_string_new (NULL);
          if (!expand_template (output, inputs[i], i, n, name, error))
            {
              g_string_free (name, TRUE);
              return NULL;
            }
          g_ptr_array_add (names, g_string_free (name, FALSE));
        }
    }
  g_ptr_array_add (names, NULL);
  return (char **)g_ptr_array_free (g_steal_pointer (&names), FALSE);
}

/* The file's identity on disk ("device:inode"), NULL when it does not
 * exist: two paths that reach one file through links compare equal. */
static char *
file_identity (const char *path)
{
  GStatBuf st;

  if (g_stat (path, &st) != 0)
    return NULL;
  return g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, (guint64)st.st_dev,
                          (guint64)st.st_ino);
}

static void
add_input (GHashTable *inputs, const char *path)
{
  char *identity = file_identity (path);

  g_hash_table_add (inputs, g_canonicalize_filename (path, NULL));
  if (identity != NULL)
    g_hash_table_add (inputs, identity);
}

static gboolean
is_input (GHashTable *inputs, const char *path)
{
  g_autofree char *canonical = g_canonicalize_filename (path, NULL);
  g_autofree char *identity = NULL;

  if (g_hash_table_contains (inputs, canonical))
    return TRUE;
  identity = file_identity (path);
  return identity != NULL && g_hash_table_contains (inputs, identity);
}

/* Records that input `index` writes `path`; fails when another one (or
 * this one's other file) already does. */
static gboolean
claim (GHashTable *claims, const char *const *inputs, guint index, const char *path, GError **error)
{
  char *canonical = g_canonicalize_filename (path, NULL);
  gpointer owner;

  if (g_hash_table_lookup_extended (claims, canonical, NULL, &owner))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s and %s would both be written to %s", inputs[GPOINTER_TO_UINT (owner)],
                   inputs[index], path);
      g_free (canonical);
      return FALSE;
    }
  g_hash_table_insert (claims, canonical, GUINT_TO_POINTER (index));
  return TRUE;
}

gboolean
sv_cli_slic_check_outputs (const char *const *inputs, const char *const *outputs, const char *mask,
                           GError **error)
{
  g_autoptr (GHashTable) taken = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) claims = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; inputs[i] != NULL; i++)
    add_input (taken, inputs[i]);
  if (mask != NULL)
    add_input (taken, mask);

  for (guint i = 0; outputs[i] != NULL; i++)
    {
      g_autofree char *sidecar = sv_sidecar_path (outputs[i]);
      const char *const paths[] = { outputs[i], sidecar };

      for (guint j = 0; j < G_N_ELEMENTS (paths); j++)
        {
          if (is_input (taken, paths[j]))
            {
              g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "%s: the output would overwrite an input file", paths[j]);
              return FALSE;
            }
          if (!claim (claims, inputs, i, paths[j], error))
            return FALSE;
        }
    }
  return TRUE;
}

gboolean
sv_cli_slic_prepare_outputs (const char *const *outputs, SvCliOutputKind kind, GError **error)
{
  for (guint i = 0; outputs[i] != NULL; i++)
    {
      if (kind != SV_CLI_OUTPUT_FILE)
        {
          g_autofree char *dir = g_path_get_dirname (outputs[i]);

          if (!g_file_test (dir, G_FILE_TEST_EXISTS) && g_mkdir_with_parents (dir, 0777) != 0)
            {
              int saved = errno;
              g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                           "%s: cannot create folder %s: %s", outputs[i], dir, g_strerror (saved));
              return FALSE;
            }
        }
      if (!sv_cli_check_output (outputs[i], error))
        return FALSE;
    }
  return TRUE;
}

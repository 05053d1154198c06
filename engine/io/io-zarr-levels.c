/* Supervox engine: the resolution levels of an OME-Zarr image, each with
 * its shape and the spacing its coordinateTransformations give, for a
 * front end to offer them before reading any. */
#define G_LOG_DOMAIN "sv-engine"

#include "io-zarr-private.h"
#include "supervox/sv-error.h"

/* As supervox-cli's --zarr-level: more levels than any pyramid has. */
#define MAX_LEVELS 64

void
sv_zarr_level_free (SvZarrLevel *level)
{
  if (level == NULL)
    return;
  g_free (level->path);
  g_free (level->unit);
  g_free (level);
}

static SvZarrLevel *
level_new (guint index, char *path, const SvZarrArray *a)
{
  SvZarrLevel *level = g_new0 (SvZarrLevel, 1);

  level->level = index;
  level->path = path;
  level->shape[0] = (guint)a->shape[SV_ZARR_Z];
  level->shape[1] = (guint)a->shape[SV_ZARR_Y];
  level->shape[2] = (guint)a->shape[SV_ZARR_X];
  level->channels = (guint)a->shape[SV_ZARR_C];
  for (int k = 0; k < 3; k++)
    level->spacing[k] = a->spacing[k];
  level->spacing_from_file = a->spacing_from_file;
  level->unit = g_strdup (a->unit);
  return level;
}

GPtrArray *
sv_zarr_list_levels (const char *path, GError **error)
{
  g_autoptr (GPtrArray) levels
      = g_ptr_array_new_with_free_func ((GDestroyNotify)sv_zarr_level_free);

  g_return_val_if_fail (path != NULL, NULL);
  if (!sv_zarr_is_ome_image (path))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: not an OME-Zarr image (no multiscales in .zattrs), so it has no levels",
                   path);
      return NULL;
    }
  for (guint i = 0; i < MAX_LEVELS; i++)
    {
      g_autoptr (GError) local = NULL;
      g_autoptr (SvZarrArray) a = NULL;
      char *level_path = sv_zarr_level_path (path, i, &local);

      /* Past the last level: the levels are all listed. */
      if (level_path == NULL && i > 0
          && g_error_matches (local, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM))
        break;
      if (level_path == NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      a = sv__zarr_array_open (level_path, error);
      if (a == NULL)
        {
          g_free (level_path);
          return NULL;
        }
      g_ptr_array_add (levels, level_new (i, level_path, a));
    }
  return g_steal_pointer (&levels);
}

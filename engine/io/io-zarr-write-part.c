/* Supervox engine: writers of one OME-Zarr store's later rows of chunks.
 * The store's own writer (io-zarr-write.c) makes the folder and its
 * metadata and puts the store in place at the end; a part writes rows
 * from a slice on into that folder and syncs them, so that several
 * writers fill one store at once: MPI ranks (the folder named to them),
 * or the devices of a process, each with its own slices (a share, whose
 * rows count towards its owner's finish). */
#define G_LOG_DOMAIN "sv-engine"

#include "io-zarr-write-private.h"

static SvZarrLabelWriter *
part_new (const char *path, const char *folder, guint nz, guint ny, guint nx, gboolean negative,
          const SvZarrWriteOptions *zarr, int n_threads, guint z0, GError **error)
{
  SvZarrLabelWriter *w = sv__zarr_writer_new (path, nz, ny, nx, negative, zarr, n_threads, FALSE,
                                              error);

  if (w == NULL)
    return NULL;
  w->tmp = g_strdup (folder);
  w->part = TRUE;
  w->row_z0 = z0;
  w->share_z0 = z0;
  w->open = TRUE;
  if (z0 % w->chunks[0] != 0 && z0 != nz)
    {
      sv__zarr_label_writer_free (w);
      g_return_val_if_reached (NULL);
    }
  return w;
}

SvZarrLabelWriter *
sv__zarr_label_writer_new_part (const char *path, const char *folder, guint nz, guint ny,
                                guint nx, gboolean negative, const SvTiffWriteOptions *options,
                                guint z0, GError **error)
{
  return part_new (path, folder, nz, ny, nx, negative, options->zarr, options->n_threads, z0,
                   error);
}

SvZarrLabelWriter *
sv__zarr_label_writer_new_share (SvZarrLabelWriter *owner, guint z0, GError **error)
{
  SvZarrLabelWriter *w;

  g_return_val_if_fail (owner->open && !owner->part, NULL);
  w = part_new (owner->path, owner->tmp, owner->nz, owner->ny, owner->nx, owner->negative,
                &owner->zarr, owner->n_threads, z0, error);
  if (w != NULL)
    w->owner = owner;
  return w;
}

gboolean
sv__zarr_label_writer_finish_part (SvZarrLabelWriter *w, GError **error)
{
  g_return_val_if_fail (w->open && w->part && w->row_fill == 0, FALSE);

  if (!sv__zarr_syncer_finish (g_steal_pointer (&w->syncer), error))
    return FALSE;
  /* A share's folders are synced by its owner's finish, with every
   * other's. */
  if (w->owner == NULL)
    sv__zarr_sync_folder (w->tmp);
  w->open = FALSE;
  if (w->owner != NULL)
    g_atomic_int_add (&w->owner->share_slices, (gint)(w->row_z0 - w->share_z0));
  return TRUE;
}

guint
sv__zarr_label_writer_row_depth (const SvZarrLabelWriter *w)
{
  return w->chunks[0];
}

/* Supervox engine: the mask of a streamed run, a slab at a time. A mask is
 * one byte a voxel, as much as an 8-bit image: holding it whole would undo
 * what streaming the image saves, so a mask file is read slab by slab like
 * the image (and converted as sv_tiff_read_mask converts it), while a mask
 * that the caller holds in memory is served as it is. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include <string.h>

#include "supervox/sv-memory.h"
#include "supervox/sv-error.h"
#include "supervox/sv-run-plan.h"
#include "internal.h"

gboolean
sv__stream_mask_open (SvStreamMask *m, const guint8 *whole, const char *path,
                      SvTiffSlabReader *source, const char *source_name, guint nz, guint ny,
                      guint nx, int n_threads, GError **error)
{
  const SvTiffSlabInfo *info;
  SvTiffReadOptions options;

  memset (m, 0, sizeof *m);
  m->whole = whole;
  m->nz = nz;
  m->plane = (gsize)ny * nx;
  if (path == NULL && source == NULL)
    return TRUE;
  if (source != NULL)
    {
      m->name = g_strdup (source_name != NULL ? source_name : "the mask");
      m->reader = source;
    }
  else
    {
      m->name = g_filename_display_name (path);
      sv_tiff_read_options_init_defaults (&options);
      options.n_threads = n_threads;
      m->reader = sv_tiff_slab_reader_open (path, &options, error);
      m->own_reader = TRUE;
      if (m->reader == NULL)
        return FALSE;
    }
  info = sv_tiff_slab_reader_info (m->reader);
  if (info->nc != 1)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: a mask must have one sample per voxel, not %u", m->name, info->nc);
      sv__stream_mask_clear (m);
      return FALSE;
    }
  if (!sv_run_check_mask (m->name, (const guint[3]){ info->nz, info->ny, info->nx }, NULL,
                          (const guint[3]){ nz, ny, nx }, error))
    {
      sv__stream_mask_clear (m);
      return FALSE;
    }
  return TRUE;
}

void
sv__stream_mask_clear (SvStreamMask *m)
{
  if (m->own_reader)
    g_clear_pointer (&m->reader, sv_tiff_slab_reader_free);
  m->reader = NULL;
  m->own_reader = FALSE;
  g_clear_pointer (&m->bytes, g_free);
  g_clear_pointer (&m->raw, g_free);
  g_clear_pointer (&m->name, g_free);
  m->capacity = 0;
  m->z0 = m->z1 = 0;
}

/* Reads slices [z0, z1) into m->bytes, one slice's samples at a time when
 * they are wider than a byte. */
static gboolean
read_slices (SvStreamMask *m, guint z0, guint z1, GError **error)
{
  const SvTiffSlabInfo *info = sv_tiff_slab_reader_info (m->reader);
  const gsize slice_bytes = sv_tiff_slab_reader_slice_bytes (m->reader);

  if (slice_bytes == m->plane)
    {
      if (!sv_tiff_slab_reader_read (m->reader, z0, z1, m->bytes, error))
        return FALSE;
      sv_tiff_samples_to_mask (info->sample_type, m->bytes, (gsize)(z1 - z0) * m->plane, m->bytes);
      return TRUE;
    }
  if (m->raw == NULL)
    m->raw = g_malloc (MAX (slice_bytes, 1));
  for (guint z = z0; z < z1; z++)
    {
      if (!sv_tiff_slab_reader_read (m->reader, z, z + 1, m->raw, error))
        return FALSE;
      sv_tiff_samples_to_mask (info->sample_type, m->raw, m->plane,
                               m->bytes + (gsize)(z - z0) * m->plane);
    }
  return TRUE;
}

const guint8 *
sv__stream_mask_slab (SvStreamMask *m, guint z0, guint z1, GError **error)
{
  g_return_val_if_fail (z0 <= z1 && z1 <= m->nz, NULL);

  if (m->reader == NULL)
    return m->whole;
  if (!(z0 >= m->z0 && z1 <= m->z1))
    {
      m->z0 = m->z1 = 0;
      if (z1 - z0 > m->capacity)
        {
          g_free (m->bytes);
          m->bytes = sv_try_alloc_n ((gsize)(z1 - z0) * m->plane, 1, FALSE, error,
                                     "%u slices of the mask", z1 - z0);
          m->capacity = m->bytes != NULL ? z1 - z0 : 0;
          if (m->bytes == NULL)
            return NULL;
        }
      if (!read_slices (m, z0, z1, error))
        return NULL;
      m->z0 = z0;
      m->z1 = z1;
      m->slices_read += z1 - z0;
    }
  /* Addressed as the whole mask: only the held slices are touched. */
  return (const guint8 *)((guintptr)m->bytes - (guintptr)m->z0 * m->plane);
}

static const guint8 *
seeds_slab_cb (gpointer user_data, guint z0, guint z1, GError **error)
{
  return sv__stream_mask_slab (user_data, z0, z1, error);
}

gboolean
sv__stream_mask_seeds (SvStreamMask *m, const guint shape[3], gint64 n_segments, guint depth,
                       SvSeeds *seeds, GError **error)
{
  if (m->reader == NULL)
    return sv_seeds_mask (shape, m->whole, n_segments, seeds, error);
  if (sv__seeds_mask_slabs (shape, seeds_slab_cb, m, depth, n_segments, seeds, error))
    return TRUE;
  /* As the CLI words it for a mask it read whole. */
  if (error != NULL && *error != NULL && strstr ((*error)->message, m->name) == NULL)
    g_prefix_error (error, "%s: ", m->name);
  return FALSE;
}

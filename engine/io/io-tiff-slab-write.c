/* Supervox engine: a label TIFF written slab after slab. It is the
 * in-memory label writer's job (io-tiff-write.c) fed one slab at a time:
 * the same tags, strips and codec, pages written in order, so the finished
 * file is byte for byte what sv_tiff_write_labels_full writes for the same
 * labels. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-io-slab.h"

#include <string.h>

#include "io-tiff-private.h"
#include "io-zarr-private.h"

struct _SvTiffLabelWriter
{
  SvTiffWriteJob job;
  SvTiffOutput out;
  gboolean open;
  gboolean negative;
  double spacing[3];
  char *unit;
  guint z_next; /* the next slice to append */
  /* The slab being appended: slices [slab_z0, slab_z0 + depth). */
  const gint32 *slab;
  guint slab_z0;
  /* 1 + the first slice in which a strip's fill met a negative label in a
   * file started for labels >= 0 (0: none); set by the writer's threads. */
  gint bad_slice;
  SvZarrLabelWriter *zarr; /* an OME-Zarr store instead (SvTiffWriteOptions.zarr) */
  SvTiffTurns *turns;      /* where its shares take their turns (io-tiff-share.c) */
  SvTiffShare *share;      /* a share of another writer's file instead */
};

/* Runs on the writer's threads, strip by strip: the check for negative
 * labels goes with the copy instead of a pass of its own over the slab on
 * the appending thread (at 2048³, 32 GiB read on one core while the
 * compression threads waited). */
static void
fill_slab_cb (guint z, guint y0, guint rows, guint8 *dst, gpointer user_data)
{
  SvTiffLabelWriter *w = user_data;
  const gsize offset = ((gsize)(z - w->slab_z0) * w->job.ny + y0) * w->job.nx;

  if (sv__tiff_copy_labels (dst, w->slab + offset, (gsize)rows * w->job.nx) && !w->negative)
    g_atomic_int_compare_and_exchange (&w->bad_slice, 0, (gint)z + 1);
}

SvTiffLabelWriter *
sv_tiff_label_writer_new (const char *path, guint nz, guint ny, guint nx, gboolean negative,
                          const double spacing[3], const char *unit,
                          const SvTiffWriteOptions *options, GError **error)
{
  g_autoptr (SvTiffLabelWriter) w = g_new0 (SvTiffLabelWriter, 1);

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (nz > 0 && ny > 0 && nx > 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (options != NULL && options->zarr != NULL)
    {
      w->zarr = sv__zarr_label_writer_new (path, nz, ny, nx, negative, spacing, unit, options, error);
      if (w->zarr == NULL)
        return NULL;
      w->open = TRUE;
      return g_steal_pointer (&w);
    }
  memcpy (w->spacing, spacing, sizeof w->spacing);
  w->unit = g_strdup (unit);
  w->negative = negative;
  sv__tiff_label_job_init (&w->job, nz, ny, nx, negative, options, w->spacing, w->unit,
                           fill_slab_cb, w);
  if (!sv__tiff_output_begin (&w->out, path, &w->job, error))
    return NULL;
  w->turns = sv__tiff_turns_new ();
  w->open = TRUE;
  return g_steal_pointer (&w);
}

/* The file's next slices, from whichever thread's turn it is. */
gboolean
sv__tiff_label_writer_put (SvTiffLabelWriter *w, const gint32 *labels, guint depth,
                           GError **error)
{
  g_return_val_if_fail (w->open && w->z_next + depth <= w->job.nz, FALSE);
  w->slab = labels;
  w->slab_z0 = w->z_next;
  if (!sv__tiff_output_pages (&w->out, &w->job, w->z_next, w->z_next + depth, error))
    {
      w->open = FALSE;
      return FALSE;
    }
  /* The file is dropped, so the pages written meanwhile do not matter. */
  if (g_atomic_int_get (&w->bad_slice) != 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s: a negative label in slice %d of a file started for labels >= 0",
                   w->out.path, g_atomic_int_get (&w->bad_slice) - 1);
      sv__tiff_output_abort (&w->out);
      w->open = FALSE;
      return FALSE;
    }
  w->z_next += depth;
  w->slab = NULL;
  return TRUE;
}

gboolean
sv_tiff_label_writer_append (SvTiffLabelWriter *w, const gint32 *labels, guint depth,
                             GError **error)
{
  g_return_val_if_fail (w != NULL && w->open, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (w->zarr != NULL)
    {
      w->open = sv__zarr_label_writer_append (w->zarr, labels, depth, error);
      return w->open;
    }
  if (w->share != NULL)
    return w->open = sv__tiff_share_append (w->share, labels, depth, error);
  if (!sv__tiff_label_writer_put (w, labels, depth, error))
    return FALSE;
  sv__tiff_turns_advance (w->turns, w->z_next);
  return TRUE;
}

guint
sv_tiff_label_writer_strip_rows (SvTiffLabelWriter *w)
{
  SvStripGeometry g;

  g_return_val_if_fail (w != NULL, 0);
  /* libtiff's writer (SV_TIFF_WRITER=libtiff, or a layout it alone can
   * make) compresses every strip itself. */
  if (w->zarr != NULL || w->out.strips == NULL
      || w->job.compression != SV_TIFF_COMPRESSION_DEFLATE_RUNS || w->job.predictor)
    return 0;
  sv__tiff_strip_geometry (&w->job, &g);
  return g.rows_per_strip;
}

gboolean
sv__tiff_label_writer_put_strips (SvTiffLabelWriter *w, guint depth, const guint64 *sizes,
                                  const guint8 *bytes, gint64 negative_slice, GError **error)
{
  g_return_val_if_fail (w->open && sv_tiff_label_writer_strip_rows (w) > 0, FALSE);
  g_return_val_if_fail (w->z_next + depth <= w->job.nz, FALSE);

  if (negative_slice >= 0 && !w->negative)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s: a negative label in slice %" G_GINT64_FORMAT
                   " of a file started for labels >= 0",
                   w->out.path, negative_slice);
      sv__tiff_output_abort (&w->out);
      w->open = FALSE;
      return FALSE;
    }
  if (!sv__tiff_output_strips (&w->out, w->z_next, w->z_next + depth, sizes, bytes, error))
    {
      w->open = FALSE;
      return FALSE;
    }
  w->z_next += depth;
  return TRUE;
}

GArray *
sv__tiff_label_writer_place_strips (SvTiffLabelWriter *w, guint depth, const guint64 *sizes,
                                    const guint8 *bytes, gint64 negative_slice, GError **error)
{
  GArray *placed;

  g_return_val_if_fail (w->open && sv_tiff_label_writer_strip_rows (w) > 0, NULL);
  g_return_val_if_fail (w->z_next + depth <= w->job.nz, NULL);

  /* Other threads may still be writing: the file is dropped once the
   * run fails, when they are done. */
  if (negative_slice >= 0 && !w->negative)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s: a negative label in slice %" G_GINT64_FORMAT
                   " of a file started for labels >= 0",
                   w->out.path, negative_slice);
      return NULL;
    }
  placed = sv__tiff_output_place_strips (&w->out, w->z_next, w->z_next + depth, sizes, bytes,
                                         error);
  if (placed != NULL)
    w->z_next += depth;
  return placed;
}

gboolean
sv__tiff_label_writer_write_placed (SvTiffLabelWriter *w, GArray *placed, GError **error)
{
  return sv__tiff_output_write_placed (&w->out, placed, error);
}

gboolean
sv_tiff_label_writer_append_strips (SvTiffLabelWriter *w, guint depth, const guint64 *sizes,
                                    const guint8 *bytes, gint64 negative_slice, GError **error)
{
  g_return_val_if_fail (w != NULL && w->open, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (w->share != NULL)
    return w->open
           = sv__tiff_share_append_strips (w->share, depth, sizes, bytes, negative_slice, error);
  if (!sv__tiff_label_writer_put_strips (w, depth, sizes, bytes, negative_slice, error))
    return FALSE;
  sv__tiff_turns_advance (w->turns, w->z_next);
  return TRUE;
}

gboolean
sv_tiff_label_writer_chunk_shape (SvTiffLabelWriter *w, guint chunks[3])
{
  g_return_val_if_fail (w != NULL, FALSE);
  return w->zarr != NULL && sv__zarr_label_writer_chunk_shape (w->zarr, chunks);
}

gboolean
sv_tiff_label_writer_append_chunks (SvTiffLabelWriter *w, guint depth, const guint64 *sizes,
                                    const guint8 *bytes, gint64 negative_slice, GError **error)
{
  g_return_val_if_fail (w != NULL && w->open && w->zarr != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  w->open = sv__zarr_label_writer_append_chunks (w->zarr, depth, sizes, bytes, negative_slice,
                                                 error);
  return w->open;
}

SvTiffLabelWriter *
sv__tiff_label_writer_new_share (SvTiffLabelWriter *w, guint z0, guint64 held_bytes,
                                 GError **error)
{
  g_autoptr (SvTiffLabelWriter) share = g_new0 (SvTiffLabelWriter, 1);

  g_return_val_if_fail (w != NULL && w->open && sv__tiff_label_writer_share_depth (w) > 0, NULL);

  if (w->zarr != NULL)
    {
      share->zarr = sv__zarr_label_writer_new_share (w->zarr, z0, error);
      if (share->zarr == NULL)
        return NULL;
    }
  else
    {
      SvStripGeometry g;

      sv__tiff_strip_geometry (&w->job, &g);
      share->share
          = sv__tiff_share_new (w, w->turns, w->out.path, z0, g.strips_per_page, held_bytes);
    }
  share->open = TRUE;
  return g_steal_pointer (&share);
}

gboolean
sv__tiff_label_writer_finish_share (SvTiffLabelWriter *share, GError **error)
{
  g_return_val_if_fail (share != NULL && share->open
                            && (share->zarr != NULL || share->share != NULL),
                        FALSE);

  share->open = FALSE;
  if (share->share != NULL)
    return sv__tiff_share_finish (share->share, error);
  return sv__zarr_label_writer_finish_part (share->zarr, error);
}

guint
sv__tiff_label_writer_share_depth (SvTiffLabelWriter *w)
{
  g_return_val_if_fail (w != NULL, 0);
  if (w->zarr != NULL)
    return sv__zarr_label_writer_row_depth (w->zarr);
  /* A TIFF's shares may begin at any slice; libtiff's own writer has no
   * strips to hand over. */
  return w->share == NULL && w->out.strips != NULL ? 1 : 0;
}

gboolean
sv_tiff_label_writer_finish (SvTiffLabelWriter *w, GError **error)
{
  return sv_tiff_label_writer_finish_later (w, NULL, error);
}

gboolean
sv_tiff_label_writer_finish_later (SvTiffLabelWriter *w, SvFileFinish **later, GError **error)
{
  g_return_val_if_fail (w != NULL && w->open, FALSE);
  g_return_val_if_fail (w->zarr != NULL || w->z_next == w->job.nz, FALSE);

  if (later != NULL)
    *later = NULL;
  w->open = FALSE;
  if (w->zarr != NULL)
    return sv__zarr_label_writer_finish (w->zarr, error);
  return sv__tiff_output_finish_later (&w->out, later, error);
}

void
sv_tiff_label_writer_free (SvTiffLabelWriter *w)
{
  if (w == NULL)
    return;
  if (w->zarr != NULL)
    sv__zarr_label_writer_free (w->zarr);
  else if (w->share != NULL)
    sv__tiff_share_free (w->share);
  else if (w->open)
    sv__tiff_output_abort (&w->out);
  sv__tiff_turns_free (w->turns);
  g_free (w->unit);
  g_free (w);
}

gboolean
sv__tiff_write_labels_zarr (const char *path, const SvLabels *labels, gboolean negative,
                            const SvTiffWriteOptions *options, GError **error)
{
  g_autoptr (SvZarrLabelWriter) w = sv__zarr_label_writer_new (
      path, labels->nz, labels->ny, labels->nx, negative, labels->spacing, labels->unit, options,
      error);

  return w != NULL && sv__zarr_label_writer_append (w, labels->data, labels->nz, error)
         && sv__zarr_label_writer_finish (w, error);
}

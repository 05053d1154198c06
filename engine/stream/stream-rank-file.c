/* Supervox engine: one label file written by every rank. After the ranks'
 * own connectivity (stream-pieces.c) each rank holds the final labels of
 * its slices; it compresses them (io-tiff-part-writer.c), the ranks
 * exchange where their pages end (an exclusive scan over the extents,
 * which every rank folds from an all-gather), rank 0 makes the temporary
 * file and names it to the others, each writes its pages at their offsets,
 * and rank 0 renames the file once every rank has written and synced its
 * part. No rank receives another's labels. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "stream-run-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"

/* The temporary file's name goes to every rank in a buffer of this size. */
#define NAME_BYTES 4096

gboolean
sv__stream_rank_file_applies (const Run *run)
{
  return run->connected_labels >= 0 && run->ranks != NULL && run->ranks->n_ranks > 1
         && run->ranks->broadcast != NULL && run->options->write_options.zarr == NULL;
}

/* This rank's slices from the spill into the part writer, slab by slab. */
static gboolean
compress_part (Run *run, SvTiffPartWriter *part, GError **error)
{
  for (guint z0 = run->z_begin; z0 < run->z_end; z0 += run->depth)
    {
      const guint z1 = MIN (z0 + run->depth, run->z_end);

      if (g_cancellable_set_error_if_cancelled (run->options->cancellable, error)
          || !sv__spill_read (run->spill, z0, z1, run->nearest, error)
          || !sv_tiff_part_writer_append (part, run->nearest, z1 - z0, error))
        return FALSE;
    }
  return TRUE;
}

/* Where this rank's pages begin and the directory its last page links to,
 * from every rank's (origin, extent, first directory, has pages). */
static void
fold_extents (const Run *run, const guint64 *all, guint64 *begin, guint64 *next)
{
  const guint n = run->ranks->n_ranks, me = run->ranks->rank;
  guint64 at = all[0];

  *begin = at;
  *next = 0;
  for (guint r = 0; r < n; r++)
    {
      const guint64 *row = all + 4 * r;

      if (r == me)
        *begin = at;
      /* The first rank after this one that has pages. */
      if (r > me && *next == 0 && row[3])
        *next = at + row[2];
      at += row[1];
    }
}

gboolean
sv__stream_rank_file_write (Run *run, const char *output, const double spacing[3], const char *unit,
                            const LabelSummary *summary, SvRunStats *stats, GError **error)
{
  const SvStreamRanks *ranks = run->ranks;
  const SvStreamOptions *options = run->options;
  g_autoptr (SvTiffPartWriter) part = NULL;
  g_autofree guint64 *all = g_new0 (guint64, 4 * (gsize)ranks->n_ranks);
  g_autofree char *name = g_malloc0 (NAME_BYTES);
  g_autofree char *tmp = NULL;
  double label_spacing[3];
  const char *label_unit
      = sv_label_calibration (spacing, unit, options->label_spacing, label_spacing);
  guint64 mine[4] = { 0 }, begin, next;
  gboolean ok;
  int fd = -1;

  part = sv_tiff_part_writer_new (run->nz, run->ny, run->nx, summary->negative, label_spacing,
                                  label_unit, &options->write_options, run->z_begin, run->z_end,
                                  error);
  ok = part != NULL && compress_part (run, part, error);
  if (!sv_stream_ranks_agree (ranks, ok, error))
    return FALSE;
  sv_tiff_part_writer_extent (part, &mine[0], &mine[1], &mine[2]);
  mine[3] = run->z_end > run->z_begin;
  ranks->gather (ranks->self, mine, sizeof mine, all);
  fold_extents (run, all, &begin, &next);

  /* Rank 0 makes the file beside the output and names it to the others. */
  if (ranks->rank == 0)
    {
      tmp = g_strdup_printf ("%s.XXXXXX", output);
      fd = g_mkstemp_full (tmp, O_RDWR | O_CLOEXEC, 0666);
      ok = fd >= 0 && strlen (tmp) < NAME_BYTES;
      if (fd < 0)
        {
          int saved_errno = errno;
          g_autofree char *dir = g_path_get_dirname (output);
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                       "%s: cannot write in folder %s: %s", output, dir, g_strerror (saved_errno));
        }
      else if (!ok)
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: the name is too long",
                     output);
      if (ok)
        memcpy (name, tmp, strlen (tmp) + 1);
    }
  if (!sv_stream_ranks_agree (ranks, ok, error))
    {
      if (fd >= 0)
        {
          close (fd);
          g_unlink (tmp);
        }
      return FALSE;
    }
  ranks->broadcast (ranks->self, 0, name, NAME_BYTES);
  if (ranks->rank > 0)
    {
      fd = g_open (name, O_WRONLY | O_CLOEXEC, 0);
      if (fd < 0)
        {
          int saved_errno = errno;
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                       "%s: cannot open the file rank 0 started: %s", output,
                       g_strerror (saved_errno));
        }
    }
  ok = fd >= 0 && sv_tiff_part_writer_write (part, fd, begin, next, error);
  /* Every part on disk before the rename. */
  if (ok && fsync (fd) != 0)
    {
      int saved_errno = errno;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot finish the file: %s",
                   output, g_strerror (saved_errno));
      ok = FALSE;
    }
  if (fd >= 0 && close (fd) != 0 && ok)
    {
      int saved_errno = errno;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot finish the file: %s",
                   output, g_strerror (saved_errno));
      ok = FALSE;
    }
  ok = sv_stream_ranks_agree (ranks, ok, error);
  if (ranks->rank == 0)
    {
      if (ok && g_rename (name, output) != 0)
        {
          int saved_errno = errno;
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                       "%s: cannot replace the file: %s", output, g_strerror (saved_errno));
          ok = FALSE;
        }
      if (!ok)
        g_unlink (name);
    }
  if (!sv_stream_ranks_agree (ranks, ok, error))
    return FALSE;
  stats->n_labels = (gsize)run->connected_labels;
  return TRUE;
}

/* Supervox engine: one OME-Zarr store written by every rank. After the
 * ranks' own connectivity (stream-pieces.c) each rank holds the final
 * labels of its slices [a, b). A chunk row of cz slices belongs to the rank
 * whose slices hold its first one: it writes the row's chunks. A rank whose
 * first slice is not a row's first sends the slices before its first row
 * (its head) to the owner of that row (SvStreamRanks.exchange), which then
 * holds whole rows. Rank 0 starts the store and names its folder to the
 * others, every rank writes and syncs its rows, and rank 0 puts the store
 * in place once all have. No rank receives more than part of a row. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "io-zarr-private.h"
#include "stream-run-private.h"
#include "supervox/sv-error.h"

/* The folder's name goes to every rank in a buffer of this size. */
#define NAME_BYTES 4096

gboolean
sv__stream_rank_zarr_applies (const Run *run)
{
  return run->connected_labels >= 0 && run->ranks != NULL && run->ranks->n_ranks > 1
         && run->ranks->broadcast != NULL && run->ranks->exchange != NULL
         && run->options->write_options.zarr != NULL;
}

typedef struct
{
  guint a, b;     /* the rank's slices */
  guint head_end; /* [a, head_end): slices of a row that starts before a */
  guint owner;    /* the rank that writes that row */
  guint rows_end; /* [head_end, rows_end): the rows it writes, whole */
} Share;

/* Every rank's share, the same on every rank. */
static void
shares_of (guint nz, guint n, guint cz, Share *shares)
{
  for (guint r = 0; r < n; r++)
    {
      Share *s = &shares[r];

      sv_stream_rank_range (nz, r, n, &s->a, &s->b);
      s->head_end = MIN (s->b, (s->a + cz - 1) / cz * cz);
      s->rows_end = s->head_end < s->b ? MIN ((s->b + cz - 1) / cz * cz, nz) : s->head_end;
      s->owner = r;
    }
  /* A head goes to the rank whose slices hold its row's first slice. */
  for (guint r = 0; r < n; r++)
    {
      const guint first = shares[r].a / cz * cz;

      if (shares[r].head_end == shares[r].a)
        continue;
      for (guint q = 0; q < n; q++)
        if (shares[q].a <= first && first < shares[q].b)
          shares[r].owner = q;
    }
}

gboolean
sv__stream_rank_zarr_write (Run *run, const char *output, const double spacing[3], const char *unit,
                            const LabelSummary *summary, SvRunStats *stats, GError **error)
{
  const SvStreamRanks *ranks = run->ranks;
  const SvStreamOptions *options = run->options;
  const guint n = ranks->n_ranks, me = ranks->rank;
  const guint cz = sv__zarr_label_chunk_depth (run->nz, run->ny, run->nx, &options->write_options);
  const gsize slice_bytes = run->plane * sizeof (gint32);
  g_autofree Share *shares = g_new0 (Share, n);
  g_autofree gsize *send_bytes = g_new0 (gsize, n), *recv_bytes = g_new0 (gsize, n);
  g_autofree gint32 *rows = NULL;
  g_autofree gint32 *head = NULL;
  g_autofree char *name = g_malloc0 (NAME_BYTES);
  g_autoptr (SvZarrLabelWriter) writer = NULL;
  double label_spacing[3];
  const char *label_unit
      = sv_label_calibration (spacing, unit, options->label_spacing, label_spacing);
  const Share *mine;
  gboolean ok = TRUE;

  shares_of (run->nz, n, cz, shares);
  mine = &shares[me];
  for (guint r = 0; r < n; r++)
    {
      if (r != me && shares[r].owner == me && shares[r].head_end > shares[r].a)
        recv_bytes[r] = (gsize)(shares[r].head_end - shares[r].a) * slice_bytes;
    }
  if (mine->owner != me)
    send_bytes[mine->owner] = (gsize)(mine->head_end - mine->a) * slice_bytes;

  /* This rank's rows whole: its own slices, then the heads after them in
   * z order (ranks come in z order). */
  rows = g_try_malloc (MAX ((gsize)(mine->rows_end - mine->head_end) * slice_bytes, 1));
  head = g_try_malloc (MAX ((gsize)(mine->head_end - mine->a) * slice_bytes, 1));
  ok = rows != NULL && head != NULL;
  if (!ok)
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                 "%s: no memory for the labels of slices %u to %u", output, mine->a,
                 mine->rows_end);
  ok = ok
       && (mine->head_end == mine->a
           || sv__spill_read (run->spill, mine->a, mine->head_end, head, error));
  ok = ok
       && (mine->b == mine->head_end
           || sv__spill_read (run->spill, mine->head_end, mine->b, rows, error));
  if (!sv_stream_ranks_agree (ranks, ok, error))
    return FALSE;
  /* The heads after this rank's slices complete its last row. */
  ranks->exchange (ranks->self, head, send_bytes,
                   (guint8 *)rows + (gsize)(mine->b - mine->head_end) * slice_bytes, recv_bytes);

  /* Rank 0 starts the store and names its folder to the others. */
  if (me == 0)
    {
      writer
          = sv__zarr_label_writer_new (output, run->nz, run->ny, run->nx, summary->negative,
                                       label_spacing, label_unit, &options->write_options, error);
      ok = writer != NULL && strlen (sv__zarr_label_writer_folder (writer)) < NAME_BYTES;
      if (writer != NULL && !ok)
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: the name is too long",
                     output);
      if (ok)
        memcpy (name, sv__zarr_label_writer_folder (writer),
                strlen (sv__zarr_label_writer_folder (writer)) + 1);
    }
  if (!sv_stream_ranks_agree (ranks, ok, error))
    return FALSE;
  ranks->broadcast (ranks->self, 0, name, NAME_BYTES);
  /* Rank 0's writer starts at slice 0: with rows of its own they do too.
   * A rank with no row of its own writes nothing. */
  if (me > 0 && mine->rows_end > mine->head_end)
    writer = sv__zarr_label_writer_new_part (output, name, run->nz, run->ny, run->nx,
                                             summary->negative, &options->write_options,
                                             mine->head_end, error);
  ok = mine->rows_end == mine->head_end
       || (writer != NULL
           && sv__zarr_label_writer_append (writer, rows, mine->rows_end - mine->head_end, error));
  if (ok && me > 0 && writer != NULL)
    ok = sv__zarr_label_writer_finish_part (writer, error);
  ok = sv_stream_ranks_agree (ranks, ok, error);
  if (me == 0 && ok)
    ok = sv__zarr_label_writer_finish_store (writer, error);
  if (!sv_stream_ranks_agree (ranks, ok, error))
    return FALSE;
  stats->n_labels = (gsize)run->connected_labels;
  return TRUE;
}

/* Supervox engine: the connectivity rule over ranks without a gatherer.
 * Each rank finds the pieces of its own slices, the ranks share a table of
 * pieces (first voxel, and for a small piece the piece it joins), every
 * rank numbers the table in raster order, and each relabels its own
 * slices: the labels of sv_connectivity_enforce's connected rule over the
 * whole volume, bit for bit, with no rank holding more than its slices and
 * their neighbours'.
 *
 * Why a rank's window is enough. The sequential rule cuts every 6-connected
 * component C of one input label into pieces that depend on C alone (BFSs
 * from the first voxel of C not yet taken, each stopping at max_size). A
 * piece P is numbered after the pieces that start before it: a new label
 * when it is large or meets no earlier piece, else the label of the last
 * earlier piece its BFS meets (the connected rule). A component spans at
 * most E + 1 slices (E: the largest z extent of one label, minus one). So
 * for the pieces that start in a rank's slices [a, b), their components,
 * their BFS neighbours (slices a − 1 to b + E) and those neighbours'
 * components all lie in [a − 1 − E, b + 2E + 1): the sequential rule run
 * over that window cuts them exactly and finds the same earlier piece for
 * each small one (named by its first voxel, not by a label). Components the
 * window truncates are cut wrongly there, but they touch none of those.
 *
 * The slices a rank needs from others come by broadcast: each rank sends
 * the slices of its range that another's window can reach (its first 2E + 1
 * and its last E + 1). */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "backend-private.h"
#include "stream-run-private.h"
#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "supervox/sv-memory.h"

#define MASKED (-1)
#define VISITING (-2) /* a voxel of the piece piece_joins searches */

typedef struct
{
  gint64 start; /* first voxel, over the whole volume */
  gint64 size;  /* voxels */
  gint32 joins; /* the last earlier piece its BFS met, or −1 */
} Piece;

/* A rank's window of slices [w0, w1): the input labels and, after the
 * rule, each voxel's piece. */
typedef struct
{
  guint w0, w1, ny, nx;
  gsize plane;
  gint32 *in;
  gint32 *piece;
  GArray *pieces; /* Piece, in the order they start */
} Window;

/* A small piece's search again, over the voxels of piece p (from its first
 * voxel, in sv_connectivity_enforce's order +x −x +y −y +z −z): the last
 * neighbour seen that lies in an earlier piece, which is what the search
 * met when the rule reached p (the later pieces were not cut yet, and a
 * search under max_size takes its whole component), or −1. The piece's
 * voxels are marked while it runs and given back. */
static gint32
piece_joins (Window *w, gint32 p, gsize start, gsize *queue)
{
  const guint nz = w->w1 - w->w0, ny = w->ny, nx = w->nx;
  const gsize plane = w->plane;
  gint64 size = 1, visited = 0;
  gint32 joins = -1;

  w->piece[start] = VISITING;
  queue[0] = start;
  while (visited < size)
    {
      const gsize q = queue[visited];
      const guint z = (guint)(q / plane), y = (guint)(q % plane / nx), x = (guint)(q % nx);
#define SV_VISIT(inside, n_)                                                                       \
  if (inside)                                                                                      \
    {                                                                                              \
      const gsize nb = (n_);                                                                       \
      if (w->piece[nb] == p)                                                                       \
        {                                                                                          \
          w->piece[nb] = VISITING;                                                                 \
          queue[size++] = nb;                                                                      \
        }                                                                                          \
      else if (w->piece[nb] >= 0 && w->piece[nb] < p)                                              \
        joins = w->piece[nb];                                                                      \
    }
      SV_VISIT (x + 1 < nx, q + 1)
      SV_VISIT (x > 0, q - 1)
      SV_VISIT (y + 1 < ny, q + nx)
      SV_VISIT (y > 0, q - nx)
      SV_VISIT (z + 1 < nz, q + plane)
      SV_VISIT (z > 0, q - plane)
#undef SV_VISIT
      visited++;
    }
  for (gint64 i = 0; i < size; i++)
    w->piece[queue[i]] = p;
  return joins;
}

/* The pieces of the window: sv_connectivity_enforce with no piece too small
 * cuts the input labels into pieces and numbers them in raster order of
 * their first voxels, as the sequential rule does (components below
 * max_size whole, the others by its capped search; union-find instead of a
 * search from every voxel), so each voxel's label less start_label is its
 * piece. Then each piece's first voxel and size in one pass, and for those
 * under min_size, which join a neighbour, the neighbour their search met. */
static gboolean
cut_pieces (Window *w, gint32 start_label, gint64 min_size, gint64 max_size, int n_threads,
            GError **error)
{
  const guint nz = w->w1 - w->w0;
  const gsize n = (gsize)nz * w->plane;
  g_autofree gsize *queue = NULL;
  gint64 n_pieces;

  if ((gint64)start_label + (gint64)n > G_MAXINT32)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "too many pieces in slices %u to %u", w->w0, w->w1);
      return FALSE;
    }
  n_pieces = sv_connectivity_enforce_threads (w->in, nz, w->ny, w->nx, 0, max_size, start_label,
                                              SV_CONNECTIVITY_RULE_CONNECTED, w->piece, n_threads);
  g_array_set_size (w->pieces, (guint)MAX (n_pieces, 0));
  {
    Piece *pieces = (Piece *)(gpointer)w->pieces->data;
    gint32 next = 0;

    /* Labels to pieces, each piece's first voxel and size, in one pass. */
    for (gsize v = 0; v < n; v++)
      {
        const gint32 p = w->piece[v] == start_label - 1 ? MASKED : w->piece[v] - start_label;

        w->piece[v] = p;
        if (p < 0)
          continue;
        if (p == next)
          {
            pieces[p].start = (gint64)((gsize)w->w0 * w->plane + v);
            pieces[p].size = 0;
            pieces[p].joins = -1;
            next++;
          }
        pieces[p].size++;
      }
    g_return_val_if_fail (next == (gint32)w->pieces->len, FALSE);
  }
  for (guint p = 0; p < w->pieces->len; p++)
    {
      Piece *piece = &g_array_index (w->pieces, Piece, p);

      if (piece->size >= min_size)
        continue;
      if (queue == NULL
          && (queue = sv_try_alloc_n ((gsize)MAX (min_size, 1), sizeof (gsize), FALSE, error,
                                      "the search queue"))
                 == NULL)
        return FALSE;
      piece->joins = piece_joins (w, (gint32)p,
                                  (gsize)(piece->start - (gint64)w->w0 * (gint64)w->plane), queue);
    }
  return TRUE;
}

/* The slices of rank s's range [a, b) that another rank's window reaches. */
static gboolean
shared_slice (guint z, guint a, guint b, guint extent)
{
  return z < b && z >= a
         && ((guint64)z < (guint64)a + 2 * (guint64)extent + 1 || (guint64)z + extent + 1 >= b);
}

/* Fills the window: this rank's slices from where the run keeps them, the
 * others' by broadcast, slice by slice, every rank in the same order. */
static gboolean
fill_window (Run *run, Window *w, guint extent, GError **error)
{
  const SvStreamRanks *ranks = run->ranks;
  g_autofree gint32 *slice = g_try_new (gint32, w->plane);
  gboolean ok = slice != NULL;

  if (!ok)
    sv_set_no_memory (error, "one slice of labels");
  if (ok)
    ok = sv__spill_read (run->spill, run->z_begin, run->z_end,
                         w->in + (gsize)(run->z_begin - w->w0) * w->plane, error);
  if (!sv_stream_ranks_agree (ranks, ok, error))
    return FALSE;
  for (guint s = 0; s < ranks->n_ranks; s++)
    {
      guint a, b;

      sv_stream_rank_range (run->nz, s, ranks->n_ranks, &a, &b);
      for (guint z = a; z < b; z++)
        {
          if (!shared_slice (z, a, b, extent))
            continue;
          if (s == ranks->rank)
            memcpy (slice, w->in + (gsize)(z - w->w0) * w->plane, w->plane * sizeof (gint32));
          ranks->broadcast (ranks->self, s, slice, w->plane * sizeof (gint32));
          if (s != ranks->rank && z >= w->w0 && z < w->w1)
            memcpy (w->in + (gsize)(z - w->w0) * w->plane, slice, w->plane * sizeof (gint32));
        }
    }
  return TRUE;
}

/* The table: every rank's pieces that start in its slices, as (first
 * voxel, first voxel of the piece it joins or −1), all ranks' in rank
 * order, which is raster order. */
static GArray *
share_table (Run *run, const Window *w, gint64 min_size)
{
  const SvStreamRanks *ranks = run->ranks;
  const gint64 first = (gint64)run->z_begin * (gint64)run->plane;
  const gint64 end = (gint64)run->z_end * (gint64)run->plane;
  GArray *table = g_array_new (FALSE, FALSE, 2 * sizeof (gint64));
  g_autoptr (GArray) mine = g_array_new (FALSE, FALSE, 2 * sizeof (gint64));

  for (guint i = 0; i < w->pieces->len; i++)
    {
      const Piece *p = &g_array_index (w->pieces, Piece, i);
      gint64 row[2];

      if (p->start < first || p->start >= end)
        continue;
      row[0] = p->start;
      /* A small piece that meets an earlier one joins it; any other piece
       * takes a new label (the connected rule). */
      row[1] = p->size < min_size && p->joins >= 0
                   ? g_array_index (w->pieces, Piece, p->joins).start
                   : -1;
      g_array_append_val (mine, row);
    }
  for (guint s = 0; s < ranks->n_ranks; s++)
    {
      gint64 count = s == ranks->rank ? (gint64)mine->len : 0;
      guint at = table->len;

      ranks->broadcast (ranks->self, s, &count, sizeof count);
      g_array_set_size (table, at + (guint)count);
      if (s == ranks->rank && count > 0)
        memcpy (&g_array_index (table, gint64, 2 * (gsize)at), mine->data,
                (gsize)count * 2 * sizeof (gint64));
      if (count > 0)
        ranks->broadcast (ranks->self, s, &g_array_index (table, gint64, 2 * (gsize)at),
                          (gsize)count * 2 * sizeof (gint64));
    }
  return table;
}

/* The position of the piece that starts at `start` in the table, or −1. */
static gint64
find_piece (const GArray *table, gint64 start)
{
  gint64 lo = 0, hi = (gint64)table->len;

  while (lo < hi)
    {
      const gint64 mid = lo + (hi - lo) / 2;
      const gint64 s = g_array_index (table, gint64, 2 * (gsize)mid);

      if (s == start)
        return mid;
      if (s < start)
        lo = mid + 1;
      else
        hi = mid;
    }
  return -1;
}

/* The slices [*w0, *w1) a rank's window holds: [a − 1 − E, b + 2E + 1)
 * within the volume. */
static void
window_of (const Run *run, guint extent, guint *w0, guint *w1)
{
  *w0 = (guint)MAX ((gint64)run->z_begin - 1 - (gint64)extent, 0);
  *w1 = (guint)MIN ((guint64)run->z_end + 2 * (guint64)extent + 1, (guint64)run->nz);
  if (run->z_begin >= run->z_end)
    *w0 = *w1 = run->z_begin;
}

gboolean
sv__stream_pieces_applies (const Run *run, guint extent)
{
  const SvStreamRanks *ranks = run->ranks;
  /* What the run may allocate (SvStreamOptions: 0 is 1 GiB). */
  const guint64 budget = run->options->memory_limit > 0 ? run->options->memory_limit
                                                         : G_GUINT64_CONSTANT (1) << 30;
  gboolean too_big;
  guint w0, w1;

  const SvSlabSteps *steps
      = run->plan.n_workers > 0 ? run->plan.workers[0]->klass->slab_steps : NULL;
  const char *forced = g_getenv ("SV_RANK_PIECES");

  if (ranks == NULL || ranks->n_ranks <= 1 || ranks->broadcast == NULL
      || !run->params->enforce_connectivity
      || run->params->connectivity_rule != SV_CONNECTIVITY_RULE_CONNECTED
      || run->plan.assignment_kept)
    return FALSE;
  /* The pieces are cut by one thread a rank: ranks with a GPU send their
   * labels to rank 0, whose GPU runs the rule in a fraction of that time
   * (SV_RANK_PIECES=1 or 0 decides, for comparison). */
  if (forced != NULL && *forced != '\0' ? forced[0] == '0'
                                        : steps != NULL && steps->connect_volume != NULL)
    return FALSE;
  /* A window holds its labels and pieces in memory; a rank whose window
   * would not fit sends every rank back to rank 0's ring, which holds a
   * few slices (every rank must take the same way). */
  window_of (run, extent, &w0, &w1);
  too_big = (guint64)(w1 - w0) * run->plane * 2 * sizeof (gint32) > budget;
  gint64 widest[2] = { too_big, (gint64)(w1 - w0) };
  ranks->max_int64 (ranks->self, widest, 2);
  /* Labels that reach across most of the volume (few of them, at low
   * compactness) give every rank a window of nearly all slices, and
   * cutting pieces costs more a voxel than the rule itself: past three
   * quarters of the volume one rank's rule after the gather is quicker.
   * (256³ on two ranks: 404 labels, windows of 250 slices, pieces 1.3 s
   * against 0.8 s for the rule after the gather; 17 575 labels, windows
   * of 160 slices, pieces slightly quicker.) */
  if (forced == NULL || *forced == '\0')
    widest[0] |= (guint64)widest[1] * 4 > (guint64)run->nz * 3;
  return widest[0] == 0;
}

gint64
sv__stream_pieces_connect (Run *run, guint extent, gint64 min_size, gint64 max_size, GError **error)
{
  const gint32 start_label = run->params->start_label;
  Window w = { 0 };
  g_autoptr (GArray) table = NULL;
  g_autofree gint32 *labels = NULL;
  g_autofree gint32 *local = NULL;
  gint64 counter = start_label;
  gboolean ok;
  gsize n;

  window_of (run, extent, &w.w0, &w.w1);
  w.ny = run->ny;
  w.nx = run->nx;
  w.plane = run->plane;
  n = (gsize)(w.w1 - w.w0) * w.plane;
  w.in = sv_try_alloc_n (MAX (n, 1), sizeof (gint32), FALSE, error, "the labels of slices %u to %u",
                         w.w0, w.w1);
  w.piece = w.in != NULL ? sv_try_alloc_n (MAX (n, 1), sizeof (gint32), FALSE, error,
                                           "the pieces of slices %u to %u", w.w0, w.w1)
                         : NULL;
  w.pieces = g_array_new (FALSE, FALSE, sizeof (Piece));
  ok = w.piece != NULL;
  const gint64 t0 = g_get_monotonic_time ();
  gint64 t1 = t0, t2 = t0, t3 = t0;
  if (sv_stream_ranks_agree (run->ranks, ok, error) && fill_window (run, &w, extent, error))
    {
      t1 = g_get_monotonic_time ();
      ok = cut_pieces (&w, start_label, min_size, max_size, run->options->n_threads, error);
      t2 = g_get_monotonic_time ();
      if (sv_stream_ranks_agree (run->ranks, ok, error))
        {
          table = share_table (run, &w, min_size);
          t3 = g_get_monotonic_time ();
          /* Raster order: a new label, or the label of the earlier piece
           * it joins (numbered already). Every rank numbers the whole
           * table the same way. */
          labels = g_new (gint32, MAX (table->len, 1));
          ok = TRUE;
          for (guint i = 0; i < table->len && ok; i++)
            {
              const gint64 joins = g_array_index (table, gint64, 2 * (gsize)i + 1);
              const gint64 at = joins < 0 ? -1 : find_piece (table, joins);

              if (joins < 0)
                labels[i] = (gint32)counter++;
              else if (at >= 0 && at < (gint64)i)
                labels[i] = labels[at];
              else
                {
                  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                               "connectivity: a piece joins one that is not before it");
                  ok = FALSE;
                }
            }
          /* The window's pieces as labels, then this rank's slices. */
          local = ok ? g_new (gint32, MAX (w.pieces->len, 1)) : NULL;
          for (guint i = 0; ok && i < w.pieces->len; i++)
            {
              const gint64 at = find_piece (table, g_array_index (w.pieces, Piece, i).start);
              local[i] = at >= 0 ? labels[at] : start_label - 2;
            }
          if (ok)
            {
              const gsize first = (gsize)(run->z_begin - w.w0) * w.plane;
              const gsize count = (gsize)(run->z_end - run->z_begin) * w.plane;

              for (gsize v = first; v < first + count; v++)
                w.in[v] = w.piece[v] == MASKED ? start_label - 1 : local[w.piece[v]];
              ok = sv__spill_write (run->spill, run->z_begin, run->z_end, w.in + first, error);
            }
          g_debug ("pieces of slices %u to %u: window %.3f s, pieces %.3f s (%u), table %.3f s "
                   "(%u), labels %.3f s",
                   w.w0, w.w1, (t1 - t0) / 1e6, (t2 - t1) / 1e6, w.pieces->len, (t3 - t2) / 1e6,
                   table->len, (g_get_monotonic_time () - t3) / 1e6);
          ok = sv_stream_ranks_agree (run->ranks, ok, error);
        }
      else
        ok = FALSE;
    }
  else
    ok = FALSE;
  g_free (w.in);
  g_free (w.piece);
  g_array_unref (w.pieces);
  return ok ? counter - start_label : -1;
}

/* Supervox engine: connectivity enforcement over a label volume on disk,
 * with exactly the output of sv_connectivity_enforce (scikit-image's
 * raster-order rule), holding a window of slices instead of the volume.
 *
 * Why a window is enough: the scan reaches slice z only when every earlier
 * voxel has its final label, and a search that starts in slice z walks
 * through voxels of one input label, whose voxels all lie within that
 * label's z extent, so it stays in [z, z + E] (E: the largest extent of
 * one label, minus one) and reads neighbours in [z − 1, z + E + 1]. With
 * E + 3 slices in a ring, slice z − 2 is final and leaves as slice
 * z + E + 1 arrives. The search is scikit-image's own loop, step by step:
 * a breadth-first search over +x −x +y −y +z −z capped at max_size, small
 * pieces taking the last adjacent final label seen. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include <gio/gio.h>

#include <string.h>

#include "supervox/sv-memory.h"
#include "supervox/sv-error.h"
#include "supervox/sv-sink-thread.h"

/* A voxel of a search: its coordinates, and its slice's place in the ring
 * (z % window) so that neighbours are found without a division. */
typedef struct
{
  guint32 z, y, x, zr;
} Voxel;

typedef struct
{
  SvSlabSource source; /* the input labels, a slice at a time */
  gpointer source_data;
  SvTiffLabelWriter *writer;
  guint nz, ny, nx, window;
  gsize plane;
  gint32 mask_label, unset;
  gint32 *in, *out; /* window slices each; slice z at z % window */
  guint loaded;     /* slices [0, loaded) have been read */
  guint emitted;    /* slices [0, emitted) have gone to the writer */
  gint32 *slab;     /* out_depth slices waiting for the writer */
  guint out_depth, slab_fill, slab_z0;
  /* The writer on a thread of its own, so that the search goes on while a
   * finished slab is compressed and written (NULL: appends happen here,
   * from own_slab). */
  SvSinkThread *sink;
  gint32 *own_slab;
} Ring;

static gboolean
append_slab (guint z0, guint z1, const gint32 *labels, gpointer user_data, GError **error)
{
  return sv_tiff_label_writer_append (user_data, labels, z1 - z0, error);
}

/* Starts the writer thread with two slab buffers; without memory or a
 * thread the ring writes on its own thread, from a buffer of its own. */
static gboolean
writer_start (Ring *r, GError **error)
{
  const gsize values = (gsize)r->out_depth * r->plane;

  r->sink = sv_sink_thread_new (append_slab, r->writer, values, 2);
  if (r->sink != NULL)
    r->slab = sv_sink_thread_take (r->sink, error);
  else
    r->slab = r->own_slab = g_try_new (gint32, values);
  if (r->slab == NULL && r->sink == NULL)
    sv_set_no_memory (error, "%u slices of labels", r->out_depth);
  return r->slab != NULL;
}

/* Waits for the writer thread's last slab; FALSE with its error when it
 * failed (or `ok` was already FALSE). */
static gboolean
writer_finish (Ring *r, gboolean ok, GError **error)
{
  if (r->sink != NULL)
    ok = sv_sink_thread_finish (r->sink, ok, error);
  r->sink = NULL;
  g_clear_pointer (&r->own_slab, g_free);
  return ok;
}

static inline gsize
ring_index (const Ring *r, guint32 z, guint32 y, guint32 x)
{
  return (gsize)(z % r->window) * r->plane + (gsize)y * r->nx + x;
}

static gboolean
flush_slab (Ring *r, GError **error)
{
  if (r->slab_fill == 0)
    return TRUE;
  if (r->sink != NULL)
    {
      sv_sink_thread_push (r->sink, r->slab_z0, r->slab_z0 + r->slab_fill, r->slab);
      /* The other buffer, once the thread has written it. */
      r->slab = sv_sink_thread_take (r->sink, error);
    }
  else if (!sv_tiff_label_writer_append (r->writer, r->slab, r->slab_fill, error))
    return FALSE;
  r->slab_z0 += r->slab_fill;
  r->slab_fill = 0;
  return r->slab != NULL;
}

/* Sends slices up to `end` (exclusive) to the writer. */
static gboolean
emit_until (Ring *r, guint end, GError **error)
{
  for (; r->emitted < end; r->emitted++)
    {
      memcpy (r->slab + (gsize)r->slab_fill * r->plane, r->out + ring_index (r, r->emitted, 0, 0),
              r->plane * sizeof (gint32));
      if (++r->slab_fill == r->out_depth && !flush_slab (r, error))
        return FALSE;
    }
  return TRUE;
}

/* Reads slices up to `end` (exclusive) into the ring, after the slices
 * they replace have gone out. */
static gboolean
load_until (Ring *r, guint end, GError **error)
{
  for (; r->loaded < end; r->loaded++)
    {
      gsize base = ring_index (r, r->loaded, 0, 0);
      if (r->loaded >= r->window && !emit_until (r, r->loaded - r->window + 1, error))
        return FALSE;
      if (!r->source (r->loaded, r->loaded + 1, r->in + base, r->source_data, error))
        return FALSE;
      for (gsize i = 0; i < r->plane; i++)
        r->out[base + i] = r->in[base + i] == r->mask_label ? r->mask_label : r->unset;
    }
  return TRUE;
}

gint64
sv__stream_connectivity (SvSlabSource source, gpointer source_data, guint nz, guint ny, guint nx,
                         guint window, gint64 min_size, gint64 max_size, int start_label,
                         SvConnectivityRule rule, SvTiffLabelWriter *writer, guint out_depth, GCancellable *cancellable,
                         GError **error)
{
  Ring r = { 0 };
  gint32 current = start_label;
  /* A small piece with no final neighbour keeps the current label without
   * advancing it; that label is in use and must be counted. */
  gboolean current_in_use = FALSE;
  g_autofree Voxel *queue = NULL;
  g_autofree gint32 *in = NULL;
  g_autofree gint32 *out = NULL;
  gsize queue_len;
  gboolean ok = TRUE;

  r.source = source;
  r.source_data = source_data;
  r.writer = writer;
  r.nz = nz;
  r.ny = ny;
  r.nx = nx;
  r.window = CLAMP (window, 1, nz);
  r.plane = (gsize)ny * nx;
  r.mask_label = start_label - 1;
  r.unset = start_label - 2;
  r.out_depth = CLAMP (out_depth, 1, nz);
  in = r.in = g_try_new (gint32, (gsize)r.window * r.plane);
  out = r.out = g_try_new (gint32, (gsize)r.window * r.plane);
  /* scikit-image's queue holds max_size voxels; a piece never leaves the
   * window. */
  queue_len = (gsize)MAX (max_size, 1);
  queue_len = MIN (queue_len, (gsize)r.window * r.plane);
  queue = g_try_new (Voxel, queue_len);
  if (in == NULL || out == NULL || queue == NULL)
    {
      sv_set_no_memory (error, "%u slices of labels", r.window);
      return -1;
    }

  if (!writer_start (&r, error))
    {
      writer_finish (&r, FALSE, NULL);
      return -1;
    }
  for (guint32 z = 0; z < nz && ok; z++)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          ok = FALSE;
          break;
        }
      /* The ring holds slice z − 1 (when there is one) and those after. */
      ok = load_until (&r, (guint)MIN ((guint64)(z > 0 ? z - 1 : 0) + r.window, (guint64)nz),
                       error);
      const guint32 zr = z % r.window;
      const gsize slice = (gsize)zr * r.plane;

      for (guint32 y = 0; y < ny && ok; y++)
        for (guint32 x = 0; x < nx && ok; x++)
          {
            const gsize v = slice + (gsize)y * nx + x;
            const gint32 label = r.in[v];
            gint32 adjacent = current;
            gint64 size = 1, visited = 0;

            if (r.out[v] != r.unset)
              continue;
            r.out[v] = current;
            queue[0] = (Voxel){ z, y, x, zr };
            while (visited < size && size < max_size)
              {
                const Voxel q = queue[visited];
                const gsize at = (gsize)q.zr * r.plane + (gsize)q.y * nx + q.x;
                /* The ring's next and previous slices. */
                const guint32 up = q.zr + 1 == r.window ? 0 : q.zr + 1;
                const guint32 down = q.zr == 0 ? r.window - 1 : q.zr - 1;
#define SV_VISIT(inside, n_, nz_, ny_, nx_, nzr_)                                                  \
  if (inside)                                                                                      \
    {                                                                                              \
      const gsize n = (n_);                                                                        \
      if (r.in[n] == label && r.out[n] == r.unset)                                                 \
        {                                                                                          \
          r.out[n] = current;                                                                      \
          queue[size] = (Voxel){ (nz_), (ny_), (nx_), (nzr_) };                                    \
          size++;                                                                                  \
          if (size >= max_size)                                                                    \
            goto neighbours_done;                                                                  \
        }                                                                                          \
      else if (r.out[n] > r.mask_label && r.out[n] != current)                                     \
        adjacent = r.out[n];                                                                       \
    }
                /* A search never needs a slice the ring does not hold;
                 * the caller's window guarantees it. */
                if (q.z + 1 < nz && q.z + 1 >= r.loaded)
                  {
                    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                                 "connectivity window of %u slices too small at slice %u", r.window,
                                 q.z);
                    ok = FALSE;
                    break;
                  }
                SV_VISIT (q.x + 1 < nx, at + 1, q.z, q.y, q.x + 1, q.zr)
                SV_VISIT (q.x > 0, at - 1, q.z, q.y, q.x - 1, q.zr)
                SV_VISIT (q.y + 1 < ny, at + nx, q.z, q.y + 1, q.x, q.zr)
                SV_VISIT (q.y > 0, at - nx, q.z, q.y - 1, q.x, q.zr)
                SV_VISIT (q.z + 1 < nz, at - (gsize)q.zr * r.plane + (gsize)up * r.plane, q.z + 1,
                          q.y, q.x, up)
                SV_VISIT (q.z > 0, at - (gsize)q.zr * r.plane + (gsize)down * r.plane, q.z - 1, q.y,
                          q.x, down)
#undef SV_VISIT
              neighbours_done:
                visited++;
              }
            /* Like the original SLIC paper: a small piece joins the last
             * adjacent final label seen. With none it keeps the current
             * new label; only the legacy rule does not advance the
             * counter then (sv_connectivity_enforce). */
            if (size < min_size
                && (adjacent != current || rule == SV_CONNECTIVITY_RULE_LEGACY))
              {
                for (gint64 i = 0; i < size; i++)
                  r.out[(gsize)queue[i].zr * r.plane + (gsize)queue[i].y * nx + queue[i].x]
                      = adjacent;
                if (adjacent == current)
                  current_in_use = TRUE;
              }
            else
              {
                current++;
                current_in_use = FALSE;
              }
          }
    }
  ok = ok && emit_until (&r, nz, error) && flush_slab (&r, error);
  if (!writer_finish (&r, ok, error))
    return -1;
  return (gint64)current - start_label + (current_in_use ? 1 : 0);
}

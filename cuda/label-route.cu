/* Supervox CUDA backend: the route of a device's connectivity, labels in
 * and labels or compressed strips out (label-route.h). */
#define G_LOG_DOMAIN "sv-cuda"

#include <string.h>

#include "label-route.h"
#include "supervox/sv-error.h"

/* A record's bytes with its head, to the next multiple of 8 (the next
 * head's and sizes' alignment). */
static gsize
slab_record_bytes (const SlabHead *head)
{
  const gsize payload = head->strips ? head->n_strips * sizeof (guint64) + head->n_bytes
                                     : (gsize)head->n_bytes;

  return SLAB_HEAD_VALUES * sizeof (gint32) + (payload + 7) / 8 * 8;
}



/* Whether this device made the labels of slices [z0, z1). */
static gboolean
owns_slices (const SvCudaSlabs *s, guint z0, guint z1)
{
  if (!sv__cuda_kept_has (s, z0, z1) || s->kept_mine == NULL)
    return FALSE;
  for (guint z = z0; z < z1; z++)
    if (!s->kept_mine[z])
      return FALSE;
  return TRUE;
}

gboolean
sv__label_route_load (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
{
  LabelRoute *r = (LabelRoute *)user_data;
  const gsize plane = r->plane;

  if (r->source == NULL)
    {
      SV_CUDA_CHECK (cudaMemcpyAsync (d, sv__cuda_kept_at (r->s, z0),
                                      (gsize)(z1 - z0) * plane * sizeof (int32_t),
                                      cudaMemcpyDeviceToDevice, r->s->compute));
      return TRUE;
    }
  for (guint c0 = z0; c0 < z1; c0 += r->depth)
    {
      const guint c1 = MIN (c0 + r->depth, z1);

      /* Labels this device made are copied on it, not through the host;
       * another device's come straight from it when they can. */
      if (owns_slices (r->s, c0, c1))
        {
          SV_CUDA_CHECK (cudaMemcpyAsync (d + (gsize)(c0 - z0) * plane,
                                          sv__cuda_kept_at (r->s, c0),
                                          (gsize)(c1 - c0) * plane * sizeof (int32_t),
                                          cudaMemcpyDeviceToDevice, r->s->compute));
          continue;
        }
      if (r->device_source != NULL)
        {
          int done = r->device_source (c0, c1, r->backend, d + (gsize)(c0 - z0) * plane,
                                       r->user_data, error);
          SV_CUDA_CHECK (cudaSetDevice (r->s->device));
          if (done < 0)
            return FALSE;
          if (done > 0)
            continue;
        }
      if (!r->source (c0, c1, r->host, r->user_data, error))
        return FALSE;
      /* The source may have read another device's labels. */
      SV_CUDA_CHECK (cudaSetDevice (r->s->device));
      SV_CUDA_CHECK (sv__cuda_staged_copy (r->s->owner, d + (gsize)(c0 - z0) * plane, r->host,
                                           (gsize)(c1 - c0) * plane * sizeof (int32_t), TRUE));
    }
  return TRUE;
out:
  return FALSE;
}

/* The sink thread's side of a buffer of slabs with heads. */
static gboolean
route_sink (guint z0, guint z1, const gint32 *buffer, gpointer user_data, GError **error)
{
  LabelRoute *r = (LabelRoute *)user_data;
  const guint8 *record = (const guint8 *)buffer;

  (void)z0;
  (void)z1;
  for (;;)
    {
      const SlabHead *head = (const SlabHead *)record;
      const guint8 *payload = record + SLAB_HEAD_VALUES * sizeof (gint32);
      const gboolean ok
          = head->strips
                ? r->strips->append (head->z0, head->z1, (const guint64 *)payload,
                                     payload + head->n_strips * sizeof (guint64),
                                     head->negative_slice, r->strips->user_data, error)
                : r->sink (head->z0, head->z1, (const gint32 *)payload, r->user_data, error);

      if (!ok)
        return FALSE;
      if (head->last)
        return TRUE;
      record += slab_record_bytes (head);
    }
}


/* The buffer being filled goes to the sink: to its thread, or at once
 * without one. */
static gboolean
pack_flush (LabelRoute *r, GError **error)
{
  gint32 *pack = r->pack;

  if (pack == NULL)
    return TRUE;
  r->pack_last->last = 1;
  r->pack = NULL;
  if (r->sink_thread != NULL)
    {
      sv_sink_thread_push (r->sink_thread, r->pack_z0, r->pack_z1, pack);
      return TRUE;
    }
  return route_sink (r->pack_z0, r->pack_z1, pack, r, error);
}

/* SV_CUDA_PACK_MIB overrides it, for measuring (0: full buffers only). */
static gsize
pack_bytes (void)
{
  const char *mib = g_getenv ("SV_CUDA_PACK_MIB");

  if (mib != NULL && *mib != '\0')
    {
      const guint64 v = g_ascii_strtoull (mib, NULL, 10);
      return v > 0 ? (gsize)(v << 20) : G_MAXSIZE;
    }
  return (gsize)64 << 20;
}

/* Slab [c0, c1) of the label file as a record: its strips compressed
 * here, in the buffer being filled when they fit there, else in a fresh
 * one; or its labels, which fill a buffer, when the device cannot
 * compress them (no room there, or strips larger than its labels). */
static gboolean
store_record (LabelRoute *r, guint c0, guint c1, const int32_t *d_slab, GError **error)
{
  const gsize head_bytes = SLAB_HEAD_VALUES * sizeof (gint32);
  const gsize capacity = (gsize)r->depth * r->plane * sizeof (int32_t) + head_bytes;
  const gsize labels_bytes = (gsize)(c1 - c0) * r->plane * sizeof (int32_t);
  const guint rows = r->strips->rows_per_strip;
  const guint *chunks = r->strips->chunks;
  const gsize n_pieces = chunks[0] > 0 ? sv__cuda_chunk_count (c1 - c0, r->ny, r->nx, chunks)
                                        : (gsize)(c1 - c0) * ((r->ny + rows - 1) / rows);
  const gsize sizes_bytes = n_pieces * sizeof (guint64);

  for (;;)
    {
      const gboolean fresh = r->pack == NULL;
      guint8 *record;
      SlabHead *head;
      gsize room, n_bytes = 0;
      gint64 negative = -1;
      int done = 0;

      if (fresh)
        {
          r->pack = r->sink_thread != NULL ? sv_sink_thread_take (r->sink_thread, error) : r->own;
          if (r->pack == NULL)
            return FALSE;
          r->pack_used = 0;
          r->pack_z0 = c0;
        }
      record = (guint8 *)r->pack + r->pack_used;
      head = (SlabHead *)record;
      room = MIN (labels_bytes, capacity - r->pack_used - head_bytes);
      if (sizes_bytes < room && chunks[0] > 0)
        {
          done = sv__cuda_chunk_encode (r->encoder, d_slab, c1 - c0, r->ny, r->nx, chunks,
                                        r->s->compute, (guint64 *)(record + head_bytes),
                                        record + head_bytes + sizes_bytes, room - sizes_bytes,
                                        &n_bytes, &negative, error);
          /* The first slice of the row of chunks that has it. */
          if (negative >= 0)
            negative = (gint64)c0
                       + negative / (gint64)sv__cuda_chunk_count (chunks[0], r->ny, r->nx, chunks)
                             * chunks[0];
        }
      else if (sizes_bytes < room)
        done = sv__cuda_strip_encode (r->encoder, d_slab, c1 - c0, r->ny, r->nx, rows, c0,
                                      r->s->compute, (guint64 *)(record + head_bytes),
                                      record + head_bytes + sizes_bytes, room - sizes_bytes,
                                      &n_bytes, &negative, error);
      if (done < 0)
        return FALSE;
      /* No room left in this buffer: the slab starts the next one. */
      if (done == 0 && !fresh)
        {
          if (!pack_flush (r, error))
            return FALSE;
          continue;
        }
      head->strips = done > 0;
      head->n_strips = (guint32)n_pieces;
      head->n_bytes = done > 0 ? n_bytes : labels_bytes;
      head->negative_slice = negative;
      head->z0 = c0;
      head->z1 = c1;
      head->last = 0;
      if (!head->strips)
        SV_CUDA_CHECK (sv__cuda_staged_copy (r->s->owner, record + head_bytes, d_slab,
                                             labels_bytes, FALSE));
      r->pack_used += slab_record_bytes (head);
      r->pack_z1 = c1;
      r->pack_last = head;
      /* Without a sink thread every slab goes at once; with one, a buffer
       * goes once it holds SV_PACK_BYTES, so that the file takes the
       * strips while the device makes the next ones (a buffer holds a
       * slab's labels, hundreds of MB of strips at 2048³: the file's
       * writes started late and ended after the last window). */
      if (!head->strips || r->sink_thread == NULL || capacity - r->pack_used <= 2 * head_bytes
          || r->pack_used >= pack_bytes ())
        return pack_flush (r, error);
      return TRUE;
    }
out:
  return FALSE;
}

/* Slices [z0, z1) of a store's labels, rows of chunks at a time: whole
 * rows in the slab go from it, the slices of a row cut by the slab's
 * ends wait in d_row. */
static gboolean
store_chunk_rows (LabelRoute *r, guint z0, guint z1, const int32_t *d, GError **error)
{
  const guint cz = r->strips->chunks[0];
  const gsize plane = r->plane;

  for (guint z = z0; z < z1;)
    {
      guint row_end = MIN (r->row_z0 + cz, r->nz);
      guint take = MIN (z1, row_end) - z;
      const int32_t *src = d + (gsize)(z - z0) * plane;

      if (r->row_fill == 0 && z + take == row_end)
        {
          /* Whole rows go as one record, as many as a buffer holds: a
           * row of 1024² in chunks of 64³ is 256 chunks, a block each,
           * too few to fill the device. */
          const guint most = MAX (r->depth / cz, 1) * cz;
          const guint whole = z1 == r->nz ? z1 : z + (z1 - z) / cz * cz;

          row_end = MIN (whole, z + most);
          take = row_end - z;
          if (!store_record (r, z, row_end, src, error))
            return FALSE;
        }
      else
        {
          SV_CUDA_CHECK (cudaMemcpyAsync (r->d_row + (gsize)r->row_fill * plane, src,
                                          (gsize)take * plane * sizeof (int32_t),
                                          cudaMemcpyDeviceToDevice, r->s->compute));
          r->row_fill += take;
          if (r->row_z0 + r->row_fill == row_end
              && !store_record (r, r->row_z0, row_end, r->d_row, error))
            return FALSE;
        }
      z += take;
      if (z == row_end)
        {
          r->row_z0 = row_end;
          r->row_fill = 0;
        }
    }
  return TRUE;
out:
  return FALSE;
}

gboolean
sv__label_route_store (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
{
  LabelRoute *r = (LabelRoute *)user_data;
  const gsize plane = r->plane;

  if (r->strips != NULL && r->strips->chunks[0] > 0)
    return store_chunk_rows (r, z0, z1, d, error);
  for (guint c0 = z0; c0 < z1; c0 += r->depth)
    {
      const guint c1 = MIN (c0 + r->depth, z1);
      const int32_t *d_slab = d + (gsize)(c0 - z0) * plane;
      gint32 *buffer;

      if (r->strips != NULL)
        {
          if (!store_record (r, c0, c1, d_slab, error))
            return FALSE;
          continue;
        }
      buffer = r->sink_thread != NULL ? sv_sink_thread_take (r->sink_thread, error) : r->own;
      if (buffer == NULL)
        return FALSE;
      SV_CUDA_CHECK (sv__cuda_staged_copy (r->s->owner, buffer, d_slab,
                                           (gsize)(c1 - c0) * plane * sizeof (int32_t), FALSE));
      if (r->sink_thread != NULL)
        sv_sink_thread_push (r->sink_thread, c0, c1, buffer);
      else if (!r->sink (c0, c1, buffer, r->user_data, error))
        return FALSE;
    }
  return TRUE;
out:
  return FALSE;
}

gboolean
sv__label_route_open (LabelRoute *r, SvCudaSlabs *s, SvBackend *backend, guint nz, guint ny,
                      guint nx, guint depth, SvSlabSource source, SvSlabDeviceSource device_source,
                      SvSlabSink sink, gpointer user_data, const SvStripSink *strips,
                      int32_t *d_row, GError **error)
{
  const gsize plane = (gsize)ny * nx;

  memset (r, 0, sizeof *r);
  depth = CLAMP (depth, 1, MAX (nz, 1));
  /* A buffer holds a row of chunks' labels, when the device cannot
   * compress it. */
  if (strips != NULL && strips->chunks[0] > 0)
    depth = MAX (depth, MIN (strips->chunks[0], nz));
  r->s = s;
  r->backend = backend;
  r->source = source;
  r->device_source = device_source;
  r->sink = sink;
  r->user_data = user_data;
  r->depth = depth;
  r->plane = plane;
  r->strips = strips;
  r->ny = ny;
  r->nx = nx;
  r->nz = nz;
  r->d_row = d_row;
  /* With strips every slab carries a head saying what it is. */
  if (strips != NULL)
    r->encoder = sv__cuda_strip_encoder_new (s->owner);
  r->sink_thread = strips != NULL ? sv_sink_thread_new (route_sink, r,
                                                        (gsize)depth * plane + SLAB_HEAD_VALUES, 2)
                                  : sv_sink_thread_new (sink, user_data, (gsize)depth * plane, 2);
  /* Host memory for the source's slabs, and for the sink's without a
   * thread. */
  if (source != NULL || r->sink_thread == NULL)
    {
      r->host = (gint32 *)g_try_malloc (((gsize)depth * plane + SLAB_HEAD_VALUES)
                                        * sizeof (int32_t));
      r->own = r->host;
      if (r->host == NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                       "not enough memory for the labels of %u slices", depth);
          sv__label_route_close (r, FALSE, NULL);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
sv__label_route_close (LabelRoute *r, gboolean ok, GError **error)
{
  /* The last slabs reach the sink before the caller goes on. */
  if (ok && !pack_flush (r, error))
    ok = FALSE;
  if (r->sink_thread != NULL && !sv_sink_thread_finish (r->sink_thread, ok, error))
    ok = FALSE;
  r->sink_thread = NULL;
  sv__cuda_strip_encoder_free (r->encoder);
  r->encoder = NULL;
  g_clear_pointer (&r->host, g_free);
  r->own = NULL;
  return ok;
}

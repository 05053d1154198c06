/* Supervox CUDA backend: what a streamed run keeps on the device.
 *
 * Slabs: the first pass that reads a slab's prepared values uploads them
 * into buffers of their own while they fit under the steps' memory limit;
 * the later passes read them there and upload nothing (the host is told,
 * SvSlabSteps.holds_slab, and does not prepare them again). The rest go
 * through the double buffers every pass.
 *
 * Connectivity: the kept slabs go to make room. When the whole label
 * volume and the connectivity scratch fit, the labels are gathered slab by
 * slab into one device volume (or start from the kept assignment), where
 * the in-memory run's connectivity (connectivity.cu) gives the same labels
 * as the host's window over the slabs; past 2³¹ voxels or the room, the
 * same rule runs window by window (connectivity-window.cu). Either way
 * the result goes back slab by slab. */
#define G_LOG_DOMAIN "sv-cuda"

#include <limits.h>
#include <string.h>

#include "stream-steps-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-sink-thread.h"
#include "label-strips.h"

/* Left free on the device when the limit is what the device has free
 * (the runtime, cub's scratch, other work). */
#define RESIDENT_RESERVE ((guint64)512 << 20)

const SvCudaResident *
sv__cuda_resident_find (const SvCudaSlabs *s, guint z0, guint z1)
{
  for (guint i = 0; s->resident != NULL && i < s->resident->len; i++)
    {
      const SvCudaResident *r = &g_array_index (s->resident, SvCudaResident, i);
      if (r->z0 == z0 && r->z1 == z1)
        return r;
    }
  return NULL;
}

gboolean
sv__cuda_slabs_fit (const SvCudaSlabs *s, guint64 bytes)
{
  size_t free_bytes = 0, total = 0;

  if (s->limit > 0)
    return s->bytes + bytes <= s->limit;
  if (cudaMemGetInfo (&free_bytes, &total) != cudaSuccess)
    return FALSE;
  return bytes + RESIDENT_RESERVE <= free_bytes;
}

gboolean
sv__cuda_resident_add (SvCudaSlabs *s, guint z0, guint z1, gboolean mask, gsize raw_bytes,
                       const SvCudaResident **out, GError **error)
{
  const gsize n = (gsize)(z1 - z0) * s->plane;
  const gsize value_bytes = raw_bytes > 0 ? raw_bytes : n * s->ctx.image->nc * sizeof (float);
  SvCudaResident r;

  memset (&r, 0, sizeof r);
  r.z0 = z0;
  r.z1 = z1;
  *out = NULL;
  r.bytes = MAX (value_bytes, 1) + (mask ? MAX (n, 1) : 0);
  if (!sv__cuda_slabs_fit (s, r.bytes))
    return TRUE;
  if (raw_bytes > 0)
    SV_CUDA_CHECK (sv__slab_malloc (s, &r.d_raw, value_bytes));
  else
    SV_CUDA_CHECK (sv__slab_malloc (s, &r.d_image, value_bytes));
  if (mask)
    SV_CUDA_CHECK (sv__slab_malloc (s, &r.d_mask, n));
  g_array_append_val (s->resident, r);
  *out = &g_array_index (s->resident, SvCudaResident, s->resident->len - 1);
  return TRUE;
out:
  /* A failed allocation only means the slab is not kept. */
  if (r.d_image != NULL || r.d_raw != NULL)
    {
      cudaFree (r.d_image);
      cudaFree (r.d_raw);
      s->bytes -= MAX (value_bytes, 1);
    }
  g_clear_error (error);
  cudaGetLastError ();
  return TRUE;
}

void
sv__cuda_resident_clear (SvCudaSlabs *s)
{
  if (s->resident == NULL)
    return;
  /* Kernels of a pass may still read them. */
  cudaStreamSynchronize (s->compute);
  for (guint i = 0; i < s->resident->len; i++)
    {
      SvCudaResident *r = &g_array_index (s->resident, SvCudaResident, i);
      cudaFree (r->d_image);
      cudaFree (r->d_raw);
      cudaFree (r->d_mask);
      s->bytes -= r->bytes;
    }
  g_array_set_size (s->resident, 0);
}

gboolean
sv__cuda_slab_holds (SvBackend *backend, guint z0, guint z1)
{
  SvCudaSlabs *s = sv__cuda_backend (backend)->slabs;

  return s != NULL && sv__cuda_resident_find (s, z0, z1) != NULL;
}

/* With strips, the sink thread's buffers hold records of slabs, each a
 * head and then its strips, compressed here (sizes, then bytes), or its
 * labels when the device had no room to compress them. The strips of
 * many slabs fit in one buffer (a buffer holds a slab's labels): the
 * device goes on to the next window while the file takes them. */
typedef struct
{
  guint32 strips;
  guint32 n_strips;
  guint64 n_bytes;
  gint64 negative_slice;
  guint32 z0, z1; /* the slab's slices */
  guint32 last;   /* no record follows in the buffer */
} SlabHead;
#define SLAB_HEAD_VALUES 10
G_STATIC_ASSERT (sizeof (SlabHead) <= SLAB_HEAD_VALUES * sizeof (gint32));

/* A record's bytes with its head, to the next multiple of 8 (the next
 * head's and sizes' alignment). */
static gsize
slab_record_bytes (const SlabHead *head)
{
  const gsize payload = head->strips ? head->n_strips * sizeof (guint64) + head->n_bytes
                                     : (gsize)head->n_bytes;

  return SLAB_HEAD_VALUES * sizeof (gint32) + (payload + 7) / 8 * 8;
}

/* Where the connectivity's input comes from and its output goes: the
 * kept labels or the run's source, the run's sink, through host memory of
 * the run's slab size copied through the backend's pinned lanes. The sink
 * runs on a thread of its own when it can (the label file's compression
 * and writing go on while the device works on the next window). */
typedef struct
{
  SvCudaSlabs *s;
  SvBackend *backend;
  SvSlabSource source;
  SvSlabDeviceSource device_source;
  SvSlabSink sink;
  gpointer user_data;
  gint32 *host;
  guint depth;
  gsize plane;
  SvSinkThread *sink_thread;
  /* The label file's strips compressed here, when it takes them. */
  const SvStripSink *strips;
  SvCudaStripEncoder *encoder;
  guint ny, nx;
  /* The slab on its way out when there is no sink thread. */
  gint32 *own;
  /* With strips and a sink thread: the buffer being filled with slabs'
   * strips (NULL: none), its bytes used and the slices it holds. */
  gint32 *pack;
  gsize pack_used;
  guint pack_z0, pack_z1;
  SlabHead *pack_last;
  /* A store's chunks: a record is a row of them (chunks[0] slices), and
   * slabs that do not end at a row's end leave their slices here until it
   * is whole. */
  guint nz;
  int32_t *d_row;
  guint row_z0, row_fill;
} LabelRoute;

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

static gboolean
route_load (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
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
          /* A record is one row of chunks: its first slice. */
          negative = negative >= 0 ? (gint64)c0 : -1;
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

/* Slices [z0, z1) of a store's labels, rows of chunks at a time: a whole
 * row in the slab goes from it, the slices of a row cut by the slab's
 * ends wait in d_row. */
static gboolean
store_chunk_rows (LabelRoute *r, guint z0, guint z1, const int32_t *d, GError **error)
{
  const guint cz = r->strips->chunks[0];
  const gsize plane = r->plane;

  for (guint z = z0; z < z1;)
    {
      const guint row_end = MIN (r->row_z0 + cz, r->nz);
      const guint take = MIN (z1, row_end) - z;
      const int32_t *src = d + (gsize)(z - z0) * plane;

      if (r->row_fill == 0 && z + take == row_end)
        {
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

static gboolean
route_store (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
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

/* Device bytes the connectivity may take: under the steps' limit, or what
 * the device has free. */
static guint64
connect_room (const SvCudaSlabs *s)
{
  size_t free_bytes = 0, total = 0;

  if (s->limit > 0)
    return s->limit > s->bytes ? s->limit - s->bytes : 0;
  if (cudaMemGetInfo (&free_bytes, &total) != cudaSuccess || free_bytes < RESIDENT_RESERVE)
    return 0;
  return free_bytes - RESIDENT_RESERVE;
}

/* The whole label volume and its scratch at once (below 2³¹ − 3 voxels):
 * 1 when done, 0 when the device path does not apply, −1 on error. */
static int
connect_whole (LabelRoute *route, guint nz, guint ny, guint nx, gint64 min_size, gint64 max_size,
               int start_label, SvConnectivityRule rule, gint64 *n_labels, GError **error)
{
  SvCudaSlabs *s = route->s;
  const gsize plane = route->plane, n = (gsize)nz * plane;
  SvCudaConnScratch scratch;
  int32_t *d_labels = NULL, *d_own = NULL;
  long long count = 0;
  bool handled = false;
  int done = -1;
  const gint64 t0 = g_get_monotonic_time ();
  gint64 t_loaded = t0, t_connected = t0;

  memset (&scratch, 0, sizeof scratch);
  if (route->source != NULL)
    {
      SV_CUDA_CHECK (cudaMalloc (&d_own, n * sizeof (int32_t)));
      d_labels = d_own;
      if (!route_load (0, nz, d_labels, route, error))
        goto out;
    }
  else
    d_labels = s->d_kept;
  if (!sv__cuda_conn_scratch_alloc (&scratch, n, error))
    goto out;
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  t_loaded = g_get_monotonic_time ();
  SV_CUDA_CHECK (sv_cuda_connectivity (d_labels, (int)nz, (int)ny, (int)nx, min_size, max_size,
                                       start_label, rule, &scratch, s->compute, &count, &handled));
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  if (!handled)
    {
      done = 0;
      goto out;
    }
  t_connected = g_get_monotonic_time ();
  if (!route_store (0, nz, d_labels, route, error))
    goto out;
  g_debug ("connectivity on device %d: load %.3f s, rule %.3f s, store %.3f s", s->device,
           (t_loaded - t0) / 1e6, (t_connected - t_loaded) / 1e6,
           (g_get_monotonic_time () - t_connected) / 1e6);
  *n_labels = count;
  done = 1;
out:
  cudaStreamSynchronize (s->compute);
  sv__cuda_conn_scratch_free (&scratch);
  cudaFree (d_own);
  return done;
}

/* sv__cuda_slab_connect_volume once the device holds what it keeps for
 * the store's chunks (d_row, or NULL). */
static int
connect_routed (SvCudaSlabs *s, SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                guint extent, gint64 min_size, gint64 max_size, int start_label,
                SvConnectivityRule rule, SvSlabSource source, SvSlabDeviceSource device_source,
                SvSlabSink sink, gpointer user_data, const SvStripSink *strips, int32_t *d_row,
                gint64 *n_labels, guint *held, GError **error)
{
  const gsize plane = (gsize)ny * nx, n = (gsize)nz * plane;
  const char *forced = g_getenv ("SV_CUDA_CONNECT_WINDOW");
  g_autofree gint32 *host = NULL;
  LabelRoute route;
  guint64 room, whole;
  guint core = 0;
  int done;

  room = connect_room (s);
  whole = sv__cuda_conn_scratch_bytes (n) + (source != NULL ? n * sizeof (int32_t) : 0);
  /* Past 2³¹ voxels or the device's room, windows of z slices (the deepest
   * that fit); SV_CUDA_CONNECT_WINDOW=SLICES asks for windows of that core
   * depth (tests and measurements). */
  if (forced != NULL && *forced != '\0')
    core = (guint)MAX (g_ascii_strtoull (forced, NULL, 10), 1);
  else if (n >= (gsize)INT_MAX - 2 || whole > room)
    {
      if (extent == G_MAXUINT)
        return 0;
      core = sv__cuda_cc_window_depth (nz, plane, extent, room);
      if (core == 0)
        return 0;
    }
  if (core > 0)
    {
      core = MIN (core, nz);
      if (extent == G_MAXUINT
          || (guint64)MIN ((guint64)core + extent + 1, nz) * plane >= (guint64)INT_MAX - 2)
        return 0;
    }
  depth = CLAMP (depth, 1, nz);
  /* A buffer holds a row of chunks' labels, when the device cannot
   * compress it. */
  if (d_row != NULL)
    depth = MAX (depth, MIN (strips->chunks[0], nz));
  route = (LabelRoute){ s,    backend, source, device_source, sink, user_data, NULL, depth, plane,
                        NULL, strips,  NULL,   ny,           nx,   NULL,      NULL, 0,     0,
                        0,    NULL,    nz,     d_row,        0,    0 };
  /* With strips every slab carries a head saying what it is. */
  if (strips != NULL)
    route.encoder = sv__cuda_strip_encoder_new (s->owner);
  route.sink_thread
      = strips != NULL ? sv_sink_thread_new (route_sink, &route,
                                             (gsize)depth * plane + SLAB_HEAD_VALUES, 2)
                       : sv_sink_thread_new (sink, user_data, (gsize)depth * plane, 2);
  /* Host memory for the source's slabs, and for the sink's without a
   * thread. */
  if (source != NULL || route.sink_thread == NULL)
    {
      route.host = host = (gint32 *)g_try_malloc (((gsize)depth * plane + SLAB_HEAD_VALUES)
                                                  * sizeof (int32_t));
      route.own = host;
      if (host == NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                       "not enough memory for the labels of %u slices", depth);
          if (route.sink_thread != NULL)
            sv_sink_thread_finish (route.sink_thread, FALSE, NULL);
          return -1;
        }
    }
  if (core == 0)
    {
      *held = nz;
      s->peak = MAX (s->peak, s->bytes + whole);
      done = connect_whole (&route, nz, ny, nx, min_size, max_size, start_label, rule, n_labels,
                            error);
    }
  else
    {
      *held = (guint)MIN ((guint64)core + extent + 1, nz);
      s->peak = MAX (s->peak, s->bytes + sv__cuda_cc_window_bytes (nz, plane, extent, core));
      g_debug ("connectivity: windows of %u slices (label extent %u)", core, extent);
      done = sv__cuda_connectivity_windows (nz, ny, nx, extent, core, min_size, max_size,
                                            start_label, rule, route_load, route_store, &route,
                                            s->compute, n_labels, error)
                 ? 1
                 : -1;
    }
  /* The last slabs reach the sink before the caller goes on. */
  if (done > 0 && !pack_flush (&route, error))
    done = -1;
  if (route.sink_thread != NULL && !sv_sink_thread_finish (route.sink_thread, done >= 0, error))
    done = -1;
  sv__cuda_strip_encoder_free (route.encoder);
  return done;
}

int
sv__cuda_slab_connect_volume (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                              guint extent, gint64 min_size, gint64 max_size, int start_label,
                              SvConnectivityRule rule, SvSlabSource source,
                              SvSlabDeviceSource device_source, SvSlabSink sink, gpointer user_data,
                              const SvStripSink *strips, gint64 *n_labels, guint *held,
                              GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  int32_t *d_row = NULL;
  gsize row_bytes = 0;
  int done;

  if (s == NULL)
    return -1;
  if ((gsize)nz * ny * nx == 0)
    return 0;
  /* The kept slabs make room for the connectivity; labels kept on the
   * device are where it starts. */
  sv__cuda_resident_clear (s);
  /* Without a source this device kept every slice. */
  g_return_val_if_fail (source != NULL || sv__cuda_kept_has (s, 0, nz), -1);
  /* A store's row of chunks that the windows cut waits on the device,
   * taken before the windows are sized; without room for it the store
   * gets labels. */
  if (strips != NULL && strips->chunks[0] > 0)
    {
      row_bytes = (gsize)MIN (strips->chunks[0], nz) * ny * nx * sizeof (int32_t);
      if (cudaMalloc (&d_row, row_bytes) != cudaSuccess)
        {
          (void)cudaGetLastError ();
          d_row = NULL;
          row_bytes = 0;
          strips = NULL;
        }
      s->bytes += row_bytes;
    }
  done = connect_routed (s, backend, nz, ny, nx, depth, extent, min_size, max_size, start_label,
                         rule, source, device_source, sink, user_data, strips, d_row, n_labels,
                         held, error);
  cudaFree (d_row);
  s->bytes -= row_bytes;
  return done;
}

void
sv_cuda_backend_set_memory_limit (SvBackend *backend, guint64 bytes)
{
  SvCudaBackend *self = sv__cuda_backend (backend);

  self->memory_limit = bytes;
  if (self->slabs != NULL)
    self->slabs->limit = bytes;
}

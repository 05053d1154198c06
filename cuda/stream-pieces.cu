/* Supervox CUDA backend: one device's share of the connectivity when
 * several devices kept the labels (the engine's stream-device-pieces.c
 * says why the shares give the whole volume's labels).
 *
 * A device numbers the pieces that start in its kept slices [a, b) with
 * the windows of connectivity-window.cu, over the volume from
 * a0 = a − 1 − E on (E: the label extent): the warm-up slices [a0, a) cut
 * every piece that reaches into [a, b) and every piece a small one there
 * may join, as the whole volume's rule does. The windows read slices up
 * to b + E. The slices of other devices it reads, [a0, a) and [b, b + E),
 * are copied first (pieces_prepare, every device before any numbers),
 * because the numbering then writes each device's piece numbers over its
 * own kept labels. */
#define G_LOG_DOMAIN "sv-cuda"

#include <cub/device/device_scan.cuh>
#include <string.h>

#include "label-route.h"
#include "supervox/sv-error.h"

/* The slices [z0, z1) of the volume other devices hold, into d: from
 * their memory when they can, else through the source and the host. */
static gboolean
copy_foreign (SvCudaSlabs *s, SvBackend *backend, guint z0, guint z1, int32_t *d,
              SvSlabSource source, SvSlabDeviceSource device_source, gpointer user_data,
              GError **error)
{
  const gsize plane = s->kept_plane;
  const guint step = 8;
  g_autofree gint32 *host = NULL;

  if (z0 >= z1)
    return TRUE;
  if (device_source != NULL)
    {
      const int done = device_source (z0, z1, backend, d, user_data, error);

      SV_CUDA_CHECK (cudaSetDevice (s->device));
      if (done != 0)
        return done > 0;
    }
  for (guint c0 = z0; c0 < z1; c0 += step)
    {
      const guint c1 = MIN (c0 + step, z1);

      if (host == NULL && (host = (gint32 *)g_try_malloc ((gsize)step * plane * sizeof (gint32)))
                              == NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                       "not enough memory for the labels of %u slices", step);
          return FALSE;
        }
      if (!source (c0, c1, host, user_data, error))
        return FALSE;
      SV_CUDA_CHECK (cudaSetDevice (s->device));
      SV_CUDA_CHECK (sv__cuda_staged_copy (s->owner, d + (gsize)(c0 - z0) * plane, host,
                                           (gsize)(c1 - c0) * plane * sizeof (int32_t), TRUE));
    }
  return TRUE;
out:
  return FALSE;
}

void
sv__cuda_pieces_clear (SvCudaSlabs *s)
{
  cudaFree (s->d_piece_head);
  cudaFree (s->d_piece_tail);
  cudaFree (s->d_piece_rank);
  sv__cuda_piece_table_clear (&s->piece_table);
  s->bytes -= s->piece_bytes;
  s->d_piece_head = s->d_piece_tail = NULL;
  s->d_piece_rank = NULL;
  s->piece_bytes = 0;
  s->piece_core = 0;
  s->piece_first_own = 0;
}

int
sv__cuda_slab_pieces_prepare (SvBackend *backend, guint nz, guint ny, guint nx, guint extent,
                              SvSlabSource source, SvSlabDeviceSource device_source,
                              gpointer user_data, guint *held, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const gsize plane = (gsize)ny * nx;
  const char *forced = g_getenv ("SV_CUDA_CONNECT_WINDOW");
  guint a, b, z0, z1;
  gsize head, tail;
  guint64 room, pieces_room;

  if (s == NULL)
    return -1;
  if (s->d_kept == NULL || s->kept_plane != plane || s->kept_nz != nz)
    return 0;
  sv__cuda_pieces_clear (s);
  /* The kept slabs make room. */
  sv__cuda_resident_clear (s);
  a = s->kept_z0;
  b = s->kept_z1;
  z0 = (guint)MAX ((gint64)a - 1 - (gint64)extent, 0);
  z1 = (guint)MIN ((guint64)b + extent, (guint64)nz);
  head = (gsize)(a - z0) * plane;
  tail = (gsize)(z1 - b) * plane;
  /* Beside the windows, the pieces' table grows on the device while they
   * run (4 bytes a piece, and a copy while it grows): room for one piece
   * in 8 voxels, where 2048³ of noisy data has one in 56. */
  pieces_room = (guint64)(b - z0) * plane * 12 / 8;
  room = sv__cuda_connect_room (s);
  if (room < (head + tail) * sizeof (int32_t) + pieces_room)
    return 0;
  room -= (head + tail) * sizeof (int32_t) + pieces_room;
  if (forced != NULL && *forced != '\0')
    s->piece_core = (guint)MAX (g_ascii_strtoull (forced, NULL, 10), 1);
  else
    s->piece_core = sv__cuda_cc_window_depth (z1 - z0, plane, extent, room);
  s->piece_core = MIN (s->piece_core, b - z0);
  if (s->piece_core == 0
      || (guint64)MIN ((guint64)s->piece_core + extent + 1, z1 - z0) * plane
             >= (guint64)G_MAXINT32 - 2)
    {
      s->piece_core = 0;
      return 0;
    }
  if (cudaMalloc (&s->d_piece_head, MAX (head, 1) * sizeof (int32_t)) != cudaSuccess
      || cudaMalloc (&s->d_piece_tail, MAX (tail, 1) * sizeof (int32_t)) != cudaSuccess)
    {
      (void)cudaGetLastError ();
      sv__cuda_pieces_clear (s);
      return 0;
    }
  s->piece_bytes = (MAX (head, 1) + MAX (tail, 1)) * sizeof (int32_t);
  s->bytes += s->piece_bytes;
  s->piece_z0 = z0;
  s->piece_z1 = z1;
  s->piece_extent = extent;
  s->piece_ny = ny;
  s->piece_nx = nx;
  if (!copy_foreign (s, backend, z0, a, s->d_piece_head, source, device_source, user_data, error)
      || !copy_foreign (s, backend, b, z1, s->d_piece_tail, source, device_source, user_data,
                        error))
    goto fail;
  /* Every copy is done before any device writes over its kept labels. */
  SV_CUDA_CHECK (cudaSetDevice (s->device));
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  s->peak = MAX (s->peak, s->bytes + pieces_room
                              + sv__cuda_cc_window_bytes (z1 - z0, plane, extent, s->piece_core));
  *held = (guint)MIN ((guint64)s->piece_core + extent + 1, (guint64)(z1 - z0));
  return 1;
out:
fail:
  sv__cuda_pieces_clear (s);
  return -1;
}

/* The windows' slices, numbered from piece_z0: the warm-up and the tail
 * from their copies, this device's own from its kept labels. */
static gboolean
piece_load (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
{
  SvCudaSlabs *s = (SvCudaSlabs *)user_data;
  const gsize plane = s->kept_plane;

  for (guint z = z0 + s->piece_z0, end = z1 + s->piece_z0; z < end;)
    {
      const int32_t *from;
      guint until;

      if (z < s->kept_z0)
        {
          from = s->d_piece_head + (gsize)(z - s->piece_z0) * plane;
          until = MIN (end, s->kept_z0);
        }
      else if (z < s->kept_z1)
        {
          from = sv__cuda_kept_at (s, z);
          until = MIN (end, s->kept_z1);
        }
      else
        {
          from = s->d_piece_tail + (gsize)(z - s->kept_z1) * plane;
          until = end;
        }
      SV_CUDA_CHECK (cudaMemcpyAsync (d + (gsize)(z - z0 - s->piece_z0) * plane, from,
                                      (gsize)(until - z) * plane * sizeof (int32_t),
                                      cudaMemcpyDeviceToDevice, s->compute));
      z = until;
    }
  return TRUE;
out:
  return FALSE;
}

/* A window's numbered core: the slices of this device's own go over its
 * kept labels, which the windows have read already (a window reads ahead
 * of its core); the warm-up's are not kept. */
static gboolean
piece_store (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
{
  SvCudaSlabs *s = (SvCudaSlabs *)user_data;
  const guint g0 = MAX (z0 + s->piece_z0, s->kept_z0), g1 = z1 + s->piece_z0;

  if (g0 >= g1)
    return TRUE;
  SV_CUDA_CHECK (cudaMemcpyAsync (sv__cuda_kept_at (s, g0),
                                  d + (gsize)(g0 - z0 - s->piece_z0) * s->kept_plane,
                                  (gsize)(g1 - g0) * s->kept_plane * sizeof (int32_t),
                                  cudaMemcpyDeviceToDevice, s->compute));
  return TRUE;
out:
  return FALSE;
}

/* The first share (no warm-up: its pieces are the whole volume's first
 * ones) labels its slices as the one device's rule does, over its kept
 * labels and to the label file as each window is done. */
typedef struct
{
  SvCudaSlabs *s;
  LabelRoute *route;
} FirstShare;

static gboolean
first_load (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
{
  return piece_load (z0, z1, d, ((FirstShare *)user_data)->s, error);
}

static gboolean
first_store (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
{
  FirstShare *f = (FirstShare *)user_data;

  return piece_store (z0, z1, d, f->s, error)
         && sv__label_route_store (z0 + f->s->piece_z0, z1 + f->s->piece_z0, d, f->route, error);
}

gboolean
sv__cuda_slab_pieces_label (SvBackend *backend, gint64 min_size, gint64 max_size,
                            int start_label, guint depth, SvSlabSink sink, gpointer user_data,
                            const SvStripSink *strips, gint64 *n_labels, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  LabelRoute route;
  FirstShare f = { s, &route };
  int32_t *d_row = NULL;
  gsize row_bytes = 0;
  gboolean ok;

  if (s == NULL)
    return FALSE;
  g_return_val_if_fail (s->piece_core > 0 && s->piece_z0 == s->kept_z0, FALSE);
  /* A store's row of chunks that the windows cut waits on the device;
   * without room for it the store gets labels. */
  if (strips != NULL && strips->chunks[0] > 0)
    {
      row_bytes = (gsize)MIN (strips->chunks[0], s->kept_nz) * s->kept_plane * sizeof (int32_t);
      if (cudaMalloc (&d_row, row_bytes) != cudaSuccess)
        {
          (void)cudaGetLastError ();
          d_row = NULL;
          row_bytes = 0;
          strips = NULL;
        }
      s->bytes += row_bytes;
    }
  if (!sv__label_route_open (&route, s, backend, s->kept_nz, s->piece_ny, s->piece_nx, depth,
                             NULL, NULL, sink, user_data, strips, d_row, error))
    {
      cudaFree (d_row);
      s->bytes -= row_bytes;
      return FALSE;
    }
  ok = sv__cuda_connectivity_windows_to (s->piece_z1 - s->piece_z0, s->piece_ny, s->piece_nx,
                                         s->piece_extent, s->piece_core,
                                         s->kept_z1 - s->piece_z0, min_size, max_size,
                                         start_label, first_load, first_store, &f, s->compute,
                                         n_labels, error);
  ok = sv__label_route_close (&route, ok, error);
  cudaFree (d_row);
  s->bytes -= row_bytes;
  sv__cuda_pieces_clear (s);
  return ok;
}

/* New-label flags of the own pieces (flags[n_own] = 0, for the scan). */
__global__ void
new_flags_kernel (const int32_t *__restrict__ joins, long long first_own, long long n_own,
                  int *__restrict__ flags)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n_own)
    return;
  flags[i] = i < n_own && joins[first_own + i] < 0;
}

gboolean
sv__cuda_slab_pieces_number (SvBackend *backend, gint64 min_size, gint64 max_size,
                             int start_label, GArray *warm_starts, gint64 *n_new, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  SvCcPieceTable *table;
  gsize n_own, tmp_bytes = 0;
  void *tmp = NULL;
  int *d_flags = NULL;
  int new_count = 0;
  gboolean ok = FALSE;

  if (s == NULL)
    return FALSE;
  g_return_val_if_fail (s->piece_core > 0, FALSE);
  table = &s->piece_table;
  sv__cuda_piece_table_clear (table);
  table->own_from = (gint64)(s->kept_z0 - s->piece_z0) * (gint64)s->kept_plane;
  table->warm_starts = warm_starts;
  if (!sv__cuda_piece_windows (s->piece_z1 - s->piece_z0, s->piece_ny, s->piece_nx,
                               s->piece_extent, s->piece_core, s->kept_z1 - s->piece_z0, min_size,
                               max_size, start_label, piece_load, piece_store, s, s->compute,
                               table, error))
    goto out;
  table->warm_starts = NULL;
  /* Starts over the whole volume. */
  for (guint i = 0; i < warm_starts->len; i++)
    g_array_index (warm_starts, gint64, i) += (gint64)s->piece_z0 * (gint64)s->kept_plane;
  s->piece_first_own = warm_starts->len;
  n_own = table->n - s->piece_first_own;
  /* Each own piece's place among those that take a new label. */
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_piece_rank, (n_own + 1) * sizeof (int)));
  s->piece_bytes += MAX ((n_own + 1) * sizeof (int), 1);
  SV_CUDA_CHECK (cudaMallocAsync (&d_flags, (n_own + 1) * sizeof (int), s->compute));
  new_flags_kernel<<<(unsigned)((n_own + 1 + 255) / 256), 256, 0, s->compute>>> (
      table->d_joins, (long long)s->piece_first_own, (long long)n_own, d_flags);
  SV_CUDA_CHECK (cudaGetLastError ());
  SV_CUDA_CHECK (cub::DeviceScan::ExclusiveSum (NULL, tmp_bytes, d_flags, s->d_piece_rank,
                                                (int)(n_own + 1), s->compute));
  SV_CUDA_CHECK (cudaMallocAsync (&tmp, MAX (tmp_bytes, 1), s->compute));
  SV_CUDA_CHECK (cub::DeviceScan::ExclusiveSum (tmp, tmp_bytes, d_flags, s->d_piece_rank,
                                                (int)(n_own + 1), s->compute));
  SV_CUDA_CHECK (cudaMemcpyAsync (&new_count, s->d_piece_rank + n_own, sizeof (int),
                                  cudaMemcpyDeviceToHost, s->compute));
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  *n_new = new_count;
  ok = TRUE;
out:
  table->warm_starts = NULL;
  if (tmp != NULL)
    cudaFreeAsync (tmp, s->compute);
  if (d_flags != NULL)
    cudaFreeAsync (d_flags, s->compute);
  if (!ok)
    sv__cuda_pieces_clear (s);
  return ok;
}

/* The labels at `n` voxels (over the whole volume) of the kept slices. */
__global__ void
labels_at_kernel (const int32_t *__restrict__ kept, const long long *__restrict__ at, long long n,
                  int32_t *__restrict__ out)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = kept[at[i]];
}

gboolean
sv__cuda_slab_labels_at (SvBackend *backend, const gint64 *voxels, gsize n, gint32 *labels,
                         GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  g_autofree long long *at = NULL;
  long long *d_at = NULL;
  int32_t *d_out = NULL;
  gboolean ok = FALSE;

  if (s == NULL)
    return FALSE;
  if (n == 0)
    return TRUE;
  at = g_try_new (long long, n);
  if (at == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "not enough memory for %zu voxels' places", n);
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      const gint64 from = (gint64)s->kept_z0 * (gint64)s->kept_plane;
      g_return_val_if_fail (voxels[i] >= from
                                && voxels[i] < (gint64)s->kept_z1 * (gint64)s->kept_plane,
                            FALSE);
      at[i] = voxels[i] - from;
    }
  SV_CUDA_CHECK (cudaMalloc (&d_at, n * sizeof (long long)));
  SV_CUDA_CHECK (cudaMalloc (&d_out, n * sizeof (int32_t)));
  SV_CUDA_CHECK (cudaMemcpyAsync (d_at, at, n * sizeof (long long), cudaMemcpyHostToDevice,
                                  s->compute));
  labels_at_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s->compute>>> (
      s->d_kept, d_at, (long long)n, d_out);
  SV_CUDA_CHECK (cudaGetLastError ());
  SV_CUDA_CHECK (cudaMemcpyAsync (labels, d_out, n * sizeof (int32_t), cudaMemcpyDeviceToHost,
                                  s->compute));
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  ok = TRUE;
out:
  cudaFree (d_at);
  cudaFree (d_out);
  return ok;
}

/* Each piece's label: an own piece follows the pieces it joins (numbers
 * decrease along the way) to one that takes a new label, or to a piece
 * of the warm-up, whose label came from an earlier share. */
__global__ void
resolve_kernel (const int32_t *__restrict__ joins, const int *__restrict__ rank,
                long long first_own, long long n, int first_label,
                const int32_t *__restrict__ warm, int32_t *__restrict__ map)
{
  long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n)
    return;
  if (p < first_own)
    {
      map[p] = warm[p];
      return;
    }
  long long q = p;
  for (;;)
    {
      const int32_t j = joins[q];
      if (j < 0)
        {
          map[p] = first_label + rank[q - first_own];
          return;
        }
      if (j < first_own)
        {
          map[p] = warm[j];
          return;
        }
      q = j;
    }
}

/* Each piece number in the kept labels becomes its label. */
__global__ void
relabel_kernel (long long n, int32_t *__restrict__ labels, const int32_t *__restrict__ map,
                long long n_map, int start_label)
{
  long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  const long long p = (long long)labels[v] - start_label;
  if (p >= 0 && p < n_map)
    labels[v] = map[p];
}

gboolean
sv__cuda_slab_pieces_relabel (SvBackend *backend, int first_label, const gint32 *warm_labels,
                              gsize n_warm, int start_label, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const SvCcPieceTable *table = s != NULL ? &s->piece_table : NULL;
  const long long n = s != NULL ? (long long)(s->kept_z1 - s->kept_z0) * s->kept_plane : 0;
  int32_t *d_map = NULL, *d_warm = NULL;
  gboolean ok = FALSE;

  if (s == NULL)
    return FALSE;
  g_return_val_if_fail (n_warm == s->piece_first_own && s->d_piece_rank != NULL, FALSE);
  SV_CUDA_CHECK (cudaMalloc (&d_map, MAX (table->n, 1) * sizeof (int32_t)));
  SV_CUDA_CHECK (cudaMalloc (&d_warm, MAX (n_warm, 1) * sizeof (int32_t)));
  if (n_warm > 0)
    SV_CUDA_CHECK (cudaMemcpyAsync (d_warm, warm_labels, n_warm * sizeof (int32_t),
                                    cudaMemcpyHostToDevice, s->compute));
  if (table->n > 0)
    {
      resolve_kernel<<<(unsigned)((table->n + 255) / 256), 256, 0, s->compute>>> (
          table->d_joins, s->d_piece_rank, (long long)n_warm, (long long)table->n, first_label,
          d_warm, d_map);
      SV_CUDA_CHECK (cudaGetLastError ());
    }
  if (n > 0)
    {
      relabel_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s->compute>>> (
          n, s->d_kept, d_map, (long long)table->n, start_label);
      SV_CUDA_CHECK (cudaGetLastError ());
    }
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  ok = TRUE;
out:
  cudaFree (d_map);
  cudaFree (d_warm);
  sv__cuda_pieces_clear (s);
  return ok;
}

gboolean
sv__cuda_slab_emit_kept (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                         SvSlabSink sink, gpointer user_data, const SvStripSink *strips,
                         GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  LabelRoute route;
  gboolean ok;

  if (s == NULL)
    return FALSE;
  if (s->kept_z1 <= s->kept_z0)
    return TRUE;
  /* A store's rows of chunks begin at the device's first slice and end
   * at its last (the engine's shares), so that none waits for another
   * device's slices. */
  g_return_val_if_fail (strips == NULL || strips->chunks[0] == 0
                            || (s->kept_z0 % strips->chunks[0] == 0
                                && (s->kept_z1 % strips->chunks[0] == 0 || s->kept_z1 == nz)),
                        FALSE);
  const gint64 t0 = g_get_monotonic_time ();
  if (!sv__label_route_open (&route, s, backend, nz, ny, nx, depth, NULL, NULL, sink, user_data,
                             strips, NULL, error))
    return FALSE;
  route.row_z0 = s->kept_z0;
  const gint64 t1 = g_get_monotonic_time ();
  ok = sv__label_route_store (s->kept_z0, s->kept_z1, sv__cuda_kept_at (s, s->kept_z0), &route,
                              error);
  const gint64 t2 = g_get_monotonic_time ();
  ok = sv__label_route_close (&route, ok, error);
  g_debug ("slices %u to %u to the file: open %.3f s, store %.3f s, close %.3f s", s->kept_z0,
           s->kept_z1, (t1 - t0) / 1e6, (t2 - t1) / 1e6, (g_get_monotonic_time () - t2) / 1e6);
  return ok;
}

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

#include "label-route.h"
#include "supervox/sv-error.h"

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


guint64
sv__cuda_connect_room (const SvCudaSlabs *s)
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
      if (!sv__label_route_load (0, nz, d_labels, route, error))
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
  if (!sv__label_route_store (0, nz, d_labels, route, error))
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
  LabelRoute route;
  guint64 room, whole;
  guint core = 0;
  int done;

  room = sv__cuda_connect_room (s);
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
  if (!sv__label_route_open (&route, s, backend, nz, ny, nx, depth, source, device_source, sink,
                             user_data, strips, d_row, error))
    return -1;
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
                                            start_label, rule, sv__label_route_load, sv__label_route_store, &route,
                                            s->compute, n_labels, error)
                 ? 1
                 : -1;
    }
  if (!sv__label_route_close (&route, done >= 0, error) && done >= 0)
    done = -1;
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
  /* The kept slabs make room for the connectivity (and what a share of
   * it that did not go ahead had copied); labels kept on the device are
   * where it starts. */
  sv__cuda_resident_clear (s);
  sv__cuda_pieces_clear (s);
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

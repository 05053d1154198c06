/* Supervox CUDA backend: the buffers of a streamed run's slab steps
 * (stream-steps.cu): the pass's cluster buffers, the two slab buffers on
 * the device and their pinned host memory (made when first needed), the
 * choice of where a slab is read from (kept on the device or buffer b),
 * and the queued upload that the compute stream waits for. */
#define G_LOG_DOMAIN "sv-cuda"

#include <cub/device/device_scan.cuh>
#include <string.h>
#include <thread>

#include "stream-steps-private.h"
#include "supervox/sv-error.h"

static void
free_k_buffers (SvCudaSlabs *s)
{
  sv_cuda_clear (&s->d_centres);
  sv_cuda_clear (&s->d_alive);
  sv_cuda_clear (&s->d_max_dist);
  sv_cuda_clear (&s->d_sums);
  sv_cuda_clear (&s->d_cell_count);
  sv_cuda_clear (&s->d_cell_start);
  sv_cuda_clear (&s->d_cell_fill);
  sv_cuda_clear (&s->d_cell_items);
  sv_cuda_clear (&s->d_windows);
  sv_cuda_clear (&s->d_scan_tmp);
  s->scan_tmp_bytes = 0;
  s->k_cap = s->cell_cap = 0;
  s->bytes -= s->k_bytes;
  s->k_bytes = 0;
}

static void
free_slab_buffers (SvCudaSlabs *s)
{
  for (int b = 0; b < SLAB_BUFFERS; b++)
    {
      sv_cuda_clear (&s->d_image[b]);
      sv_cuda_clear (&s->d_nearest[b]);
      sv_cuda_clear (&s->d_mask[b]);
      cudaFreeHost (s->h_image[b]);
      cudaFreeHost (s->h_nearest[b]);
      cudaFreeHost (s->h_mask[b]);
      s->h_image[b] = NULL;
      s->h_nearest[b] = NULL;
      s->h_mask[b] = NULL;
      s->pending[b] = FALSE;
    }
  s->depth = 0;
}

void
sv__cuda_slabs_free (SvCudaSlabs *s)
{
  if (s == NULL)
    return;
  cudaSetDevice (s->device);
  /* Whatever a failed or cancelled pass queued ends before its memory goes. */
  cudaStreamSynchronize (s->compute);
  cudaStreamSynchronize (s->up);
  cudaStreamSynchronize (s->down);
  free_k_buffers (s);
  sv__slab_sums_pinned_take (s);
  if (s->h_sums_pinned)
    cudaFreeHost (s->h_sums);
  else
    g_free (s->h_sums);
  free_slab_buffers (s);
  sv__cuda_kept_clear (s);
  sv__cuda_resident_clear (s);
  sv__cuda_pieces_clear (s);
  if (s->resident != NULL)
    g_array_free (s->resident, TRUE);
  cudaEventDestroy (s->pass_ref);
  if (s->uploads != NULL)
    g_array_free (s->uploads, TRUE);
  if (s->kernels != NULL)
    g_array_free (s->kernels, TRUE);
  for (guint i = 0; i < SLAB_MARKS; i++)
    {
      cudaEventDestroy (s->marks[i].up0);
      cudaEventDestroy (s->marks[i].up1);
      cudaEventDestroy (s->marks[i].k0);
      cudaEventDestroy (s->marks[i].k1);
    }
  for (int b = 0; b < SLAB_BUFFERS; b++)
    {
      cudaEventDestroy (s->uploaded[b]);
      cudaEventDestroy (s->computed[b]);
      cudaEventDestroy (s->downloaded[b]);
    }
  cudaStreamDestroy (s->compute);
  cudaStreamDestroy (s->up);
  cudaStreamDestroy (s->down);
  g_free (s);
}

static SvCudaSlabs *
slabs_new (int device, GError **error)
{
  SvCudaSlabs *s = g_new0 (SvCudaSlabs, 1);

  s->device = device;
  s->resident = g_array_new (FALSE, FALSE, sizeof (SvCudaResident));
  s->uploads = g_array_new (FALSE, FALSE, sizeof (Interval));
  s->kernels = g_array_new (FALSE, FALSE, sizeof (Interval));
  SV_CUDA_CHECK (cudaEventCreate (&s->pass_ref));
  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&s->compute, cudaStreamNonBlocking));
  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&s->up, cudaStreamNonBlocking));
  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&s->down, cudaStreamNonBlocking));
  for (int b = 0; b < SLAB_BUFFERS; b++)
    {
      SV_CUDA_CHECK (cudaEventCreateWithFlags (&s->uploaded[b], cudaEventDisableTiming));
      SV_CUDA_CHECK (cudaEventCreateWithFlags (&s->computed[b], cudaEventDisableTiming));
      SV_CUDA_CHECK (cudaEventCreateWithFlags (&s->downloaded[b], cudaEventDisableTiming));
    }
  for (guint i = 0; i < SLAB_MARKS; i++)
    {
      SV_CUDA_CHECK (cudaEventCreate (&s->marks[i].up0));
      SV_CUDA_CHECK (cudaEventCreate (&s->marks[i].up1));
      SV_CUDA_CHECK (cudaEventCreate (&s->marks[i].k0));
      SV_CUDA_CHECK (cudaEventCreate (&s->marks[i].k1));
    }
  return s;
out:
  sv__cuda_slabs_free (s);
  return NULL;
}

gboolean
sv__slab_ensure_k_buffers (SvCudaSlabs *s, gsize k, guint nc, gsize cells, GError **error)
{
  size_t tmp = 0;

  if (k <= s->k_cap && nc == s->nc && cells <= s->cell_cap && s->d_centres != NULL)
    return TRUE;
  free_k_buffers (s);
  s->k_bytes = s->bytes;
  k = MAX (k, 1);
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_centres, k * (3 + nc) * sizeof (float)));
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_alive, k));
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_max_dist, k * sizeof (float)));
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_sums, k * (4 + nc) * sizeof (unsigned long long)));
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_windows, k * 6 * sizeof (int)));
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_cell_items, k * sizeof (int)));
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_cell_count, (cells + 1) * sizeof (int)));
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_cell_start, (cells + 1) * sizeof (int)));
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_cell_fill, (cells + 1) * sizeof (int)));
  SV_CUDA_CHECK (cub::DeviceScan::ExclusiveSum (NULL, tmp, s->d_cell_count, s->d_cell_start,
                                                (int)(cells + 1), s->compute));
  SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_scan_tmp, tmp));
  s->scan_tmp_bytes = tmp;
  s->k_bytes = s->bytes - s->k_bytes;
  s->k_cap = k;
  s->nc = nc;
  s->cell_cap = cells;
  return TRUE;
out:
  s->k_bytes = s->bytes - s->k_bytes;
  free_k_buffers (s);
  return FALSE;
}

/* Slab buffers for `depth` slices; what was queued on the old ones ends
 * first. */
static gboolean
ensure_slab_buffers (SvCudaSlabs *s, guint depth, gboolean mask, GError **error)
{
  const gsize plane = (gsize)s->ctx.image->ny * s->ctx.image->nx;
  const guint nc = s->ctx.image->nc;

  if (depth <= s->depth && plane == s->plane && (!mask || s->d_mask[0] != NULL))
    return TRUE;
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  SV_CUDA_CHECK (cudaStreamSynchronize (s->up));
  SV_CUDA_CHECK (cudaStreamSynchronize (s->down));
  for (int b = 0; b < SLAB_BUFFERS; b++)
    g_return_val_if_fail (!s->pending[b], FALSE);
  for (int b = 0; b < SLAB_BUFFERS; b++)
    if (s->d_image[b] != NULL)
      s->bytes -= (guint64)s->depth * s->plane
                  * (nc * sizeof (float) + sizeof (int32_t) + (s->d_mask[b] != NULL ? 1 : 0));
  free_slab_buffers (s);
  s->plane = plane;
  for (int b = 0; b < SLAB_BUFFERS; b++)
    {
      const gsize n = (gsize)depth * plane;

      SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_image[b], n * nc * sizeof (float)));
      SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_nearest[b], n * sizeof (int32_t)));
      if (mask)
        SV_CUDA_CHECK (sv__slab_malloc (s, &s->d_mask[b], n));
    }
  s->depth = depth;
  return TRUE;
out:
  free_slab_buffers (s);
  return FALSE;
}

/* Buffer b's pinned host memory (for values, assignments or masks of
 * `per_voxel` bytes a voxel), made when first needed: a run whose slabs
 * and assignment stay on the device needs none, and pinning hundreds of
 * MiB costs a good part of a second. */
gboolean
sv__slab_ensure_host (SvCudaSlabs *s, void *p, gsize per_voxel, GError **error)
{
  void **at = (void **)p;

  if (*at == NULL)
    SV_CUDA_CHECK (cudaMallocHost (at, MAX ((gsize)s->depth * s->plane * per_voxel, 1)));
  return TRUE;
out:
  return FALSE;
}

/* Hands a kept assignment to its sink once it is on the host. */
gboolean
sv__slab_deliver (SvCudaSlabs *s, int b, GError **error)
{
  if (!s->pending[b])
    return TRUE;
  s->pending[b] = FALSE;
  SV_CUDA_CHECK (cudaEventSynchronize (s->downloaded[b]));
  return s->sink[b](s->pz0[b], s->pz1[b], s->h_nearest[b], s->sink_data[b], error);
out:
  return FALSE;
}

/* The next slab buffer, free on the host: its kept assignment delivered
 * and its last upload done. Device reuse is ordered by events. */
int
sv__slab_take_buffer (SvCudaSlabs *s, guint depth, gboolean mask, GError **error)
{
  int b;

  if (!ensure_slab_buffers (s, depth, mask, error))
    return -1;
  b = s->next;
  s->next = (s->next + 1) % SLAB_BUFFERS;
  if (!sv__slab_deliver (s, b, error))
    return -1;
  SV_CUDA_CHECK (cudaEventSynchronize (s->uploaded[b]));
  return b;
out:
  return -1;
}

/* Staging copies of at least this many bytes a thread run on several. */
#define STAGING_SHARE ((size_t)8 << 20)
#define STAGING_THREADS 8

/* memcpy into a pinned buffer on several threads: one core's copy falls
 * well short of the memory's bandwidth, and the device waits for it. */
void
sv__staging_copy (void *dst, const void *src, size_t bytes)
{
  const unsigned n = (unsigned)MIN ((size_t)STAGING_THREADS, MAX (bytes / STAGING_SHARE, 1));
  std::thread threads[STAGING_THREADS];

  for (unsigned t = 1; t < n; t++)
    {
      const size_t lo = bytes * t / n, hi = bytes * (t + 1) / n;
      threads[t] = std::thread (memcpy, (char *)dst + lo, (const char *)src + lo, hi - lo);
    }
  memcpy (dst, src, bytes / n);
  for (unsigned t = 1; t < n; t++)
    threads[t].join ();
}

/* A slab the device holds is read in place; one that it can keep goes up
 * into its resident buffers (once), the others into buffer b. */
gboolean
sv__slab_place (SvCudaSlabs *s, int b, guint z0, guint z1, const float *data, const guint8 *mask,
                SlabPlace *p, GError **error)
{
  const SvCudaResident *r = sv__cuda_resident_find (s, z0, z1);
  /* Held slabs upload nothing; the others upload their values once more. */
  const gboolean upload = r == NULL;

  if (upload && data == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "slab %u–%u is not on the device", z0, z1);
      return FALSE;
    }
  if (upload && !sv__cuda_resident_add (s, z0, z1, mask != NULL, 0, &r, error))
    return FALSE;
  p->image = r != NULL && r->d_image != NULL ? r->d_image : s->d_image[b];
  /* A slab held as its samples is prepared into buffer b, on the compute
   * stream after the kernels that last read that buffer. */
  if (r != NULL && r->d_raw != NULL
      && !sv__cuda_resident_prepare (s, r, s->d_image[b], error))
    return FALSE;
  p->mask = mask == NULL ? NULL : r != NULL ? r->d_mask : s->d_mask[b];
  p->image_dst = upload ? (float *)p->image : NULL;
  p->mask_dst = upload && mask != NULL ? (uint8_t *)p->mask : NULL;
  p->resident = r != NULL;
  return TRUE;
}

gboolean
sv__slab_upload (SvCudaSlabs *s, int b, guint z0, guint z1, const float *data, const guint8 *mask,
                 const gint32 *nearest, const SlabPlace *p, SlabMarks *m, GError **error)
{
  const gsize n = (gsize)(z1 - z0) * s->plane;
  const guint nc = s->ctx.image->nc;
  const gint64 t0 = g_get_monotonic_time ();
  /* A slab that stays on the device goes up once, now, through the
   * backend's pinned lanes; the others through buffer b, queued. */
  const gboolean staged = p->resident;

  if (staged && p->image_dst != NULL)
    SV_CUDA_CHECK (
        sv__cuda_staged_copy (s->owner, p->image_dst, data, n * nc * sizeof (float), TRUE));
  if (staged && p->mask_dst != NULL)
    SV_CUDA_CHECK (
        sv__cuda_staged_copy (s->owner, p->mask_dst, mask + (gsize)z0 * s->plane, n, TRUE));
  if (!staged && p->image_dst != NULL)
    {
      if (!sv__slab_ensure_host (s, &s->h_image[b], nc * sizeof (float), error))
        return FALSE;
      sv__staging_copy (s->h_image[b], data, n * nc * sizeof (float));
    }
  if (nearest != NULL)
    {
      if (!sv__slab_ensure_host (s, &s->h_nearest[b], sizeof (int32_t), error))
        return FALSE;
      sv__staging_copy (s->h_nearest[b], nearest, n * sizeof (int32_t));
    }
  if (!staged && p->mask_dst != NULL)
    {
      if (!sv__slab_ensure_host (s, &s->h_mask[b], 1, error))
        return FALSE;
      memcpy (s->h_mask[b], mask + (gsize)z0 * s->plane, n);
    }
  s->times.staging_ms += (double)(g_get_monotonic_time () - t0) / 1000.0;
  SV_CUDA_CHECK (cudaStreamWaitEvent (s->up, s->computed[b], 0));
  SV_CUDA_CHECK (cudaEventRecord (m->up0, s->up));
  if (!staged && p->image_dst != NULL)
    SV_CUDA_CHECK (cudaMemcpyAsync (p->image_dst, s->h_image[b], n * nc * sizeof (float),
                                    cudaMemcpyHostToDevice, s->up));
  if (nearest != NULL)
    SV_CUDA_CHECK (cudaMemcpyAsync (s->d_nearest[b], s->h_nearest[b], n * sizeof (int32_t),
                                    cudaMemcpyHostToDevice, s->up));
  if (!staged && p->mask_dst != NULL)
    SV_CUDA_CHECK (cudaMemcpyAsync (p->mask_dst, s->h_mask[b], n, cudaMemcpyHostToDevice, s->up));
  SV_CUDA_CHECK (cudaEventRecord (m->up1, s->up));
  SV_CUDA_CHECK (cudaEventRecord (s->uploaded[b], s->up));
  SV_CUDA_CHECK (cudaStreamWaitEvent (s->compute, s->uploaded[b], 0));
  SV_CUDA_CHECK (cudaEventRecord (m->k0, s->compute));
  return TRUE;
out:
  return FALSE;
}

SvCudaSlabs *
sv__cuda_slabs_enter (SvBackend *backend, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);

  SV_CUDA_CHECK (cudaSetDevice (self->device));
  if (self->slabs == NULL && (self->slabs = slabs_new (self->device, error)) != NULL)
    {
      self->slabs->limit = self->memory_limit;
      self->slabs->owner = self;
    }
  return self->slabs;
out:
  return NULL;
}

/* Supervox CUDA backend: the slab steps of a streamed run
 * (SvSlabSteps, supervox/sv-backend-class.h).
 *
 * The centres, their bins and the pass's int64 sums stay on the device for
 * a whole pass; the sums come back once, at its end (integers: the order
 * in which slabs and devices add them does not matter). Slabs go up
 * through two pinned host buffers on an upload stream while the previous
 * slab is assigned on the compute stream; a kept assignment comes back
 * through pinned buffers on a download stream and reaches the run's sink
 * when its buffer is needed again or at the end of the pass. Events order
 * the three streams, so a buffer is never refilled while still in use.
 * The kernels are the in-memory run's (slic-kernels.cu) told which slices
 * they visit, so every voxel keeps its global coordinates and its label. */
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
  free_slab_buffers (s);
  sv__cuda_kept_clear (s);
  sv__cuda_resident_clear (s);
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

static gboolean
ensure_k_buffers (SvCudaSlabs *s, gsize k, guint nc, gsize cells, GError **error)
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
static gboolean
ensure_host (SvCudaSlabs *s, void *p, gsize per_voxel, GError **error)
{
  void **at = (void **)p;

  if (*at == NULL)
    SV_CUDA_CHECK (cudaMallocHost (at, MAX ((gsize)s->depth * s->plane * per_voxel, 1)));
  return TRUE;
out:
  return FALSE;
}

/* Hands a kept assignment to its sink once it is on the host. */
static gboolean
deliver (SvCudaSlabs *s, int b, GError **error)
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
  if (!deliver (s, b, error))
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
static gboolean
place_slab (SvCudaSlabs *s, int b, guint z0, guint z1, const float *data, const guint8 *mask,
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
  if (upload && !sv__cuda_resident_add (s, z0, z1, mask != NULL, &r, error))
    return FALSE;
  p->image = r != NULL ? r->d_image : s->d_image[b];
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
    SV_CUDA_CHECK (sv__cuda_staged_copy (s->owner, p->image_dst, data, n * nc * sizeof (float), TRUE));
  if (staged && p->mask_dst != NULL)
    SV_CUDA_CHECK (sv__cuda_staged_copy (s->owner, p->mask_dst, mask + (gsize)z0 * s->plane, n, TRUE));
  if (!staged && p->image_dst != NULL)
    {
      if (!ensure_host (s, &s->h_image[b], nc * sizeof (float), error))
        return FALSE;
      sv__staging_copy (s->h_image[b], data, n * nc * sizeof (float));
    }
  if (nearest != NULL)
    {
      if (!ensure_host (s, &s->h_nearest[b], sizeof (int32_t), error))
        return FALSE;
      sv__staging_copy (s->h_nearest[b], nearest, n * sizeof (int32_t));
    }
  if (!staged && p->mask_dst != NULL)
    {
      if (!ensure_host (s, &s->h_mask[b], 1, error))
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

static gboolean
slab_begin_pass (SvBackend *backend, const SvSlicContext *ctx, const SvClusters *clusters,
                 GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const SvPrepared *im;
  gsize k, cells;
  size_t tmp;

  if (s == NULL)
    return FALSE;
  im = ctx->image;
  k = clusters->k;
  s->ctx = *ctx;
  s->clusters = clusters;
  s->pass_start_us = g_get_monotonic_time ();
  /* Marks of a pass that failed are not read. */
  for (guint i = 0; i < SLAB_MARKS; i++)
    s->marks[i].used = FALSE;
  g_array_set_size (s->uploads, 0);
  g_array_set_size (s->kernels, 0);
  sv__cuda_iter_init (&s->it, ctx, im->nz, im->ny, im->nx, im->nc, k);
  /* maskSLIC's first pass moves the seeds by position only. */
  if (ctx->ignore_colour)
    {
      s->it.ignore_colour = 1;
      s->it.slic_zero = 0;
    }
  cells = (gsize)s->it.ncell[0] * s->it.ncell[1] * s->it.ncell[2];
  if (!ensure_k_buffers (s, k, im->nc, cells, error))
    return FALSE;
  tmp = s->scan_tmp_bytes;
  s->have_pass = TRUE;
  SV_CUDA_CHECK (cudaEventRecord (s->pass_ref, s->compute));
  if (k > 0)
    {
      SV_CUDA_CHECK (cudaMemcpyAsync (s->d_centres, clusters->centres,
                                      k * (3 + im->nc) * sizeof (float), cudaMemcpyHostToDevice,
                                      s->compute));
      SV_CUDA_CHECK (
          cudaMemcpyAsync (s->d_alive, clusters->alive, k, cudaMemcpyHostToDevice, s->compute));
      SV_CUDA_CHECK (cudaMemcpyAsync (s->d_max_dist, clusters->max_dist_colour, k * sizeof (float),
                                      cudaMemcpyHostToDevice, s->compute));
    }
  /* The centres' bins serve every slab of the pass. */
  SV_CUDA_CHECK (cudaMemsetAsync (s->d_cell_count, 0, (cells + 1) * sizeof (int), s->compute));
  SV_CUDA_CHECK (sv_cuda_bin_count (s->it, s->d_centres, s->d_alive, s->d_cell_count, s->compute));
  SV_CUDA_CHECK (cub::DeviceScan::ExclusiveSum (s->d_scan_tmp, tmp, s->d_cell_count,
                                                s->d_cell_start, (int)(cells + 1), s->compute));
  SV_CUDA_CHECK (cudaMemsetAsync (s->d_cell_fill, 0, (cells + 1) * sizeof (int), s->compute));
  SV_CUDA_CHECK (sv_cuda_bin_fill (s->it, s->d_centres, s->d_alive, s->d_cell_start, s->d_cell_fill,
                                   s->d_cell_items, s->compute));
  SV_CUDA_CHECK (cudaMemsetAsync (
      s->d_sums, 0, MAX (k, 1) * (4 + im->nc) * sizeof (unsigned long long), s->compute));
  return TRUE;
out:
  return FALSE;
}

/* The iteration constants for slab [z0, z1). */
static SvCudaIter
slab_iter (const SvCudaSlabs *s, guint z0, guint z1)
{
  SvCudaIter it = s->it;

  it.z_begin = (int)z0;
  it.z_end = (int)z1;
  return it;
}

/* Where slab z0's assignment is on the device: in the kept volume when
 * there is one, else in the slab buffer. */
static int32_t *
kept_slab (const SvCudaSlabs *s, guint z0, int32_t *buffer)
{
  return s->d_kept != NULL ? s->d_kept + (gsize)z0 * s->kept_plane : buffer;
}

static gboolean
slab_assign_sum (SvBackend *backend, guint z0, guint z1, const float *data, const guint8 *mask,
                 SvSlabSink sink, gpointer sink_data, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  SlabPlace p;
  SlabMarks *m;
  int b;

  if (s == NULL || (b = sv__slab_take_buffer (s, z1 - z0, mask != NULL, error)) < 0
      || !place_slab (s, b, z0, z1, data, mask, &p, error))
    return FALSE;
  m = sv__slab_marks_next (s);
  if (!sv__slab_upload (s, b, z0, z1, data, mask, NULL, &p, m, error))
    return FALSE;
  g_return_val_if_fail (sink == NULL || s->d_kept == NULL, FALSE);
  /* The assignment also sums each cluster's voxels into the pass's sums;
   * it goes into the kept volume when there is one (and no sink). */
  SV_CUDA_CHECK (sv_cuda_assign (slab_iter (s, z0, z1), p.image, p.mask, s->d_centres,
                                 s->d_max_dist, s->d_alive, s->d_windows, s->d_cell_start,
                                 s->d_cell_items, kept_slab (s, z0, s->d_nearest[b]), s->d_sums,
                                 s->compute));
  SV_CUDA_CHECK (cudaEventRecord (m->k1, s->compute));
  SV_CUDA_CHECK (cudaEventRecord (s->computed[b], s->compute));
  if (sink != NULL)
    {
      if (!ensure_host (s, &s->h_nearest[b], sizeof (int32_t), error))
        return FALSE;
      SV_CUDA_CHECK (cudaStreamWaitEvent (s->down, s->computed[b], 0));
      SV_CUDA_CHECK (cudaMemcpyAsync (s->h_nearest[b], s->d_nearest[b],
                                      (s->plane * (z1 - z0)) * sizeof (int32_t),
                                      cudaMemcpyDeviceToHost, s->down));
      SV_CUDA_CHECK (cudaEventRecord (s->downloaded[b], s->down));
      /* The next kernels on this buffer wait for the download too. */
      SV_CUDA_CHECK (cudaEventRecord (s->computed[b], s->down));
      s->pending[b] = TRUE;
      s->pz0[b] = z0;
      s->pz1[b] = z1;
      s->sink[b] = sink;
      s->sink_data[b] = sink_data;
    }
  return TRUE;
out:
  return FALSE;
}

static gboolean
slab_raise_maxima (SvBackend *backend, guint z0, guint z1, const float *data, const guint8 *mask,
                   const gint32 *nearest, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  SlabPlace p;
  SlabMarks *m;
  int b;

  if (s == NULL || (b = sv__slab_take_buffer (s, z1 - z0, mask != NULL, error)) < 0
      || !place_slab (s, b, z0, z1, data, mask, &p, error))
    return FALSE;
  /* No nearest: the assignment is kept on the device. */
  g_return_val_if_fail (nearest != NULL || s->d_kept != NULL, FALSE);
  m = sv__slab_marks_next (s);
  if (!sv__slab_upload (s, b, z0, z1, data, mask, nearest, &p, m, error))
    return FALSE;
  SV_CUDA_CHECK (sv_cuda_slic_zero_max (slab_iter (s, z0, z1), p.image,
                                        kept_slab (s, z0, s->d_nearest[b]), s->d_centres,
                                        s->d_max_dist, s->compute));
  SV_CUDA_CHECK (cudaEventRecord (m->k1, s->compute));
  SV_CUDA_CHECK (cudaEventRecord (s->computed[b], s->compute));
  return TRUE;
out:
  return FALSE;
}

static gboolean
slab_fill_unassigned (SvBackend *backend, guint z0, guint z1, const guint8 *mask, gint32 *nearest,
                      GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const gsize n = (gsize)(z1 - z0) * (s != NULL ? s->ctx.image->ny * s->ctx.image->nx : 0);
  SlabPlace p = { NULL, NULL, NULL, NULL, FALSE };
  SlabMarks *m;
  int b;

  if (s == NULL || (b = sv__slab_take_buffer (s, z1 - z0, mask != NULL, error)) < 0)
    return FALSE;
  /* The fill reads the mask from the device's buffer b. */
  p.mask_dst = mask != NULL ? s->d_mask[b] : NULL;
  m = sv__slab_marks_next (s);
  if (!sv__slab_upload (s, b, z0, z1, NULL, mask, nearest, &p, m, error))
    return FALSE;
  if (s->clusters->k > 0)
    SV_CUDA_CHECK (sv_cuda_fill_unassigned (slab_iter (s, z0, z1), s->d_mask[b], s->d_centres,
                                            s->d_alive, s->d_nearest[b], s->compute));
  SV_CUDA_CHECK (cudaEventRecord (m->k1, s->compute));
  if (!ensure_host (s, &s->h_nearest[b], sizeof (int32_t), error))
    return FALSE;
  SV_CUDA_CHECK (cudaMemcpyAsync (s->h_nearest[b], s->d_nearest[b], n * sizeof (int32_t),
                                  cudaMemcpyDeviceToHost, s->compute));
  SV_CUDA_CHECK (cudaEventRecord (s->computed[b], s->compute));
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  sv__staging_copy (nearest, s->h_nearest[b], n * sizeof (int32_t));
  return TRUE;
out:
  return FALSE;
}

static gboolean
slab_end_pass (SvBackend *backend, gint64 *sums, float *max_dist_colour, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const gsize k = s != NULL && s->clusters != NULL ? s->clusters->k : 0;
  const guint nc = s != NULL && s->have_pass ? s->ctx.image->nc : 0;
  guint64 *host_sums = NULL;
  float *host_max = NULL;
  gboolean ok = FALSE;

  if (s == NULL)
    return FALSE;
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  for (int i = 0; i < SLAB_BUFFERS; i++)
    {
      int b = (s->next + i) % SLAB_BUFFERS;
      if (!deliver (s, b, error))
        goto out;
    }
  if (sums != NULL && k > 0)
    {
      host_sums = g_new (guint64, k * (4 + nc));
      SV_CUDA_CHECK (cudaMemcpy (host_sums, s->d_sums, k * (4 + nc) * sizeof (guint64),
                                 cudaMemcpyDeviceToHost));
      /* Two's complement: the device's unsigned sums are the int64 ones. */
      for (gsize i = 0; i < k * (4 + nc); i++)
        sums[i] += (gint64)host_sums[i];
    }
  if (max_dist_colour != NULL && k > 0)
    {
      host_max = g_new (float, k);
      SV_CUDA_CHECK (
          cudaMemcpy (host_max, s->d_max_dist, k * sizeof (float), cudaMemcpyDeviceToHost));
      for (gsize i = 0; i < k; i++)
        max_dist_colour[i] = MAX (max_dist_colour[i], host_max[i]);
    }
  sv__slab_marks_read_pass (s);
  s->times.passes++;
  s->times.pass_ms += (double)(g_get_monotonic_time () - s->pass_start_us) / 1000.0;
  ok = TRUE;
out:
  s->have_pass = FALSE;
  g_free (host_sums);
  g_free (host_max);
  return ok;
}

static void
slab_release (SvBackend *backend)
{
  SvCudaBackend *self = sv__cuda_backend (backend);

  if (self == NULL)
    return;
  if (self->slabs != NULL)
    self->slab_times = self->slabs->times;
  g_clear_pointer (&self->slabs, sv__cuda_slabs_free);
}

static guint64
slab_peak_device_bytes (SvBackend *backend)
{
  SvCudaSlabs *s = sv__cuda_backend (backend)->slabs;

  return s != NULL ? s->peak : 0;
}

void
sv_cuda_backend_get_slab_times (SvBackend *backend, SvCudaSlabTimes *times)
{
  SvCudaBackend *self = sv__cuda_backend (backend);

  *times = self->slabs != NULL ? self->slabs->times : self->slab_times;
}

const SvSlabSteps sv__cuda_slab_steps = {
  .begin_pass = slab_begin_pass,
  .assign_sum = slab_assign_sum,
  .raise_maxima = slab_raise_maxima,
  .fill_unassigned = slab_fill_unassigned,
  .end_pass = slab_end_pass,
  .release = slab_release,
  .peak_device_bytes = slab_peak_device_bytes,
  .holds_slab = sv__cuda_slab_holds,
  .connect_volume = sv__cuda_slab_connect_volume,
  .keep_assignment = sv__cuda_slab_keep_assignment,
  .label_kept_slab = sv__cuda_slab_label_kept_slab,
  .kept_tally = sv__cuda_slab_kept_tally,
  .read_kept = sv__cuda_slab_read_kept,
  .take_samples = sv__cuda_slab_take_samples,
};

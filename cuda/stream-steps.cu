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

#include "stream-steps-private.h"
#include "supervox/sv-error.h"

/* Pins a buffer for the pass's sums while the pass runs. */
static gpointer
pin_sums (gpointer data)
{
  SvCudaSlabs *s = (SvCudaSlabs *)data;

  cudaSetDevice (s->device);
  if (cudaMallocHost (&s->sums_pinned, s->sums_pinned_len * sizeof (guint64)) != cudaSuccess)
    {
      cudaGetLastError ();
      s->sums_pinned = NULL;
    }
  return NULL;
}

void
sv__slab_sums_pinned_take (SvCudaSlabs *s)
{
  if (s->sums_pinning == NULL)
    return;
  g_thread_join (s->sums_pinning);
  s->sums_pinning = NULL;
  if (s->sums_pinned == NULL)
    return;
  if (s->sums_pinned_len <= s->h_sums_len)
    {
      cudaFreeHost (s->sums_pinned);
      s->sums_pinned = NULL;
      return;
    }
  if (s->h_sums_pinned)
    cudaFreeHost (s->h_sums);
  else
    g_free (s->h_sums);
  s->h_sums = g_steal_pointer (&s->sums_pinned);
  s->h_sums_len = s->sums_pinned_len;
  s->h_sums_pinned = TRUE;
}

static gboolean
slab_begin_pass (SvBackend *backend, const SvSlicContext *ctx, const SvClusters *clusters,
                 gsize k0, gsize k1, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const SvPrepared *im;
  gsize k, cells, nf, ns;
  size_t tmp;

  if (s == NULL)
    return FALSE;
  im = ctx->image;
  k = clusters->k;
  k1 = MIN (k1, k);
  k0 = MIN (k0, k1);
  nf = 3 + im->nc;
  ns = 4 + im->nc;
  s->ctx = *ctx;
  s->clusters = clusters;
  s->pass_start_us = g_get_monotonic_time ();
  /* Marks of a pass that failed are not read. */
  for (guint i = 0; i < SLAB_MARKS; i++)
    s->marks[i].used = FALSE;
  g_array_set_size (s->uploads, 0);
  g_array_set_size (s->kernels, 0);
  sv__cuda_iter_init (&s->it, ctx, im->nz, im->ny, im->nx, im->nc, k);
  /* Only the band's centres go up and into the bins: the others cannot
   * reach this device's slabs (8.6 M centres at 2048³ took 35 ms a pass,
   * on every device). */
  s->it.band0 = (int)k0;
  s->it.band1 = (int)k1;
  /* maskSLIC's first pass moves the seeds by position only. */
  if (ctx->ignore_colour)
    {
      s->it.ignore_colour = 1;
      s->it.slic_zero = 0;
    }
  cells = (gsize)s->it.ncell[0] * s->it.ncell[1] * s->it.ncell[2];
  if (!sv__slab_ensure_k_buffers (s, k, im->nc, cells, error))
    return FALSE;
  tmp = s->scan_tmp_bytes;
  s->have_pass = TRUE;
  SV_CUDA_CHECK (cudaEventRecord (s->pass_ref, s->compute));
  if (k1 > k0)
    {
      SV_CUDA_CHECK (cudaMemcpyAsync (s->d_centres + k0 * nf, clusters->centres + k0 * nf,
                                      (k1 - k0) * nf * sizeof (float), cudaMemcpyHostToDevice,
                                      s->compute));
      SV_CUDA_CHECK (cudaMemcpyAsync (s->d_alive + k0, clusters->alive + k0, k1 - k0,
                                      cudaMemcpyHostToDevice, s->compute));
      SV_CUDA_CHECK (cudaMemcpyAsync (s->d_max_dist + k0, clusters->max_dist_colour + k0,
                                      (k1 - k0) * sizeof (float), cudaMemcpyHostToDevice,
                                      s->compute));
    }
  /* The centres' bins serve every slab of the pass. */
  SV_CUDA_CHECK (cudaMemsetAsync (s->d_cell_count, 0, (cells + 1) * sizeof (int), s->compute));
  SV_CUDA_CHECK (sv_cuda_bin_count (s->it, s->d_centres, s->d_alive, s->d_cell_count, s->compute));
  SV_CUDA_CHECK (cub::DeviceScan::ExclusiveSum (s->d_scan_tmp, tmp, s->d_cell_count,
                                                s->d_cell_start, (int)(cells + 1), s->compute));
  SV_CUDA_CHECK (cudaMemsetAsync (s->d_cell_fill, 0, (cells + 1) * sizeof (int), s->compute));
  SV_CUDA_CHECK (sv_cuda_bin_fill (s->it, s->d_centres, s->d_alive, s->d_cell_start, s->d_cell_fill,
                                   s->d_cell_items, s->compute));
  if (k1 > k0)
    SV_CUDA_CHECK (cudaMemsetAsync (s->d_sums + k0 * ns, 0,
                                    (k1 - k0) * ns * sizeof (unsigned long long), s->compute));
  /* The band's sums come back into pinned memory at the pass's end:
   * made during the first pass (a later one that needs more grows it in
   * end_pass; the final labels' pass, with every cluster, sums nothing). */
  if (s->sums_pinning == NULL && s->h_sums == NULL && k1 > k0)
    {
      s->sums_pinned_len = (k1 - k0) * ns + (k1 - k0) * ns / 4;
      s->sums_pinning = g_thread_try_new ("sv-cuda-pin", pin_sums, s, NULL);
    }
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
  return s->d_kept != NULL ? sv__cuda_kept_at (s, z0) : buffer;
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
      || !sv__slab_place (s, b, z0, z1, data, mask, &p, error))
    return FALSE;
  m = sv__slab_marks_next (s);
  if (!sv__slab_upload (s, b, z0, z1, data, mask, NULL, &p, m, error))
    return FALSE;
  g_return_val_if_fail (sink == NULL || s->d_kept == NULL, FALSE);
  g_return_val_if_fail (s->d_kept == NULL || sv__cuda_kept_has (s, z0, z1), FALSE);
  /* The assignment also sums each cluster's voxels into the pass's sums;
   * it goes into the kept volume when there is one (and no sink). */
  SV_CUDA_CHECK (sv_cuda_assign (
      slab_iter (s, z0, z1), p.image, p.mask, s->d_centres, s->d_max_dist, s->d_alive, s->d_windows,
      s->d_cell_start, s->d_cell_items, kept_slab (s, z0, s->d_nearest[b]), s->d_sums, s->compute));
  SV_CUDA_CHECK (cudaEventRecord (m->k1, s->compute));
  SV_CUDA_CHECK (cudaEventRecord (s->computed[b], s->compute));
  if (sink != NULL)
    {
      if (!sv__slab_ensure_host (s, &s->h_nearest[b], sizeof (int32_t), error))
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
      || !sv__slab_place (s, b, z0, z1, data, mask, &p, error))
    return FALSE;
  /* No nearest: the assignment is kept on the device. */
  g_return_val_if_fail (nearest != NULL || sv__cuda_kept_has (s, z0, z1), FALSE);
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
  if (!sv__slab_ensure_host (s, &s->h_nearest[b], sizeof (int32_t), error))
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

/* s->h_sums with room for n sums. A device's band of clusters changes a
 * little from pass to pass as the centres move, and pinning a new buffer
 * of hundreds of MB took longer than the pass's own work: it is made a
 * quarter larger than asked. */
static gboolean
sums_buffer (SvCudaSlabs *s, gsize n, GError **error)
{
  sv__slab_sums_pinned_take (s);
  if (s->h_sums_len >= n)
    return TRUE;
  n += n / 4;
  if (s->h_sums_pinned)
    cudaFreeHost (s->h_sums);
  else
    g_free (s->h_sums);
  s->h_sums = NULL;
  s->h_sums_len = 0;
  s->h_sums_pinned = cudaMallocHost (&s->h_sums, n * sizeof (guint64)) == cudaSuccess;
  if (!s->h_sums_pinned)
    {
      /* Pageable memory does too, a little slower. */
      cudaGetLastError ();
      s->h_sums = g_try_new (guint64, n);
      if (s->h_sums == NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                       "not enough memory for the sums of %" G_GSIZE_FORMAT " values", n);
          return FALSE;
        }
    }
  s->h_sums_len = n;
  return TRUE;
}

/* The device's sums added into the pass's, a share of them on each of a
 * few threads: with millions of clusters they are hundreds of MB, which
 * one thread adds in about a tenth of a second, every pass. */
typedef struct
{
  gint64 *sums;
  const guint64 *add;
  gsize n, share;
  int part;
} SumsShare;

static gpointer
add_share (gpointer data)
{
  const SumsShare *t = (const SumsShare *)data;
  const gsize a = (gsize)t->part * t->share, b = MIN (a + t->share, t->n);

  /* Two's complement: the device's unsigned sums are the int64 ones. */
  for (gsize i = a; i < b; i++)
    t->sums[i] += (gint64)t->add[i];
  return NULL;
}

static void
add_sums (gint64 *sums, const guint64 *add, gsize n)
{
  enum
  {
    MAX_PARTS = 8,
    MIN_SHARE = 1 << 20
  };
  const int parts = (int)MIN ((gsize)MAX_PARTS, MAX (n / MIN_SHARE, (gsize)1));
  SumsShare shares[MAX_PARTS];
  GThread *threads[MAX_PARTS] = { NULL };

  for (int p = 0; p < parts; p++)
    {
      shares[p] = (SumsShare){ sums, add, n, (n + parts - 1) / parts, p };
      if (p > 0)
        threads[p] = g_thread_new ("sv-cuda-sums", add_share, &shares[p]);
    }
  add_share (&shares[0]);
  for (int p = 1; p < parts; p++)
    g_thread_join (threads[p]);
}

static gboolean
slab_end_pass (SvBackend *backend, gint64 *sums, float *max_dist_colour, gsize k0, gsize k1,
               GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const gsize k = s != NULL && s->clusters != NULL ? s->clusters->k : 0;
  const guint nc = s != NULL && s->have_pass ? s->ctx.image->nc : 0;
  const gsize ns = 4 + nc;
  float *host_max = NULL;
  gboolean ok = FALSE;

  gint64 t0, t1, t2, t3;

  if (s == NULL)
    return FALSE;
  t0 = g_get_monotonic_time ();
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  t1 = g_get_monotonic_time ();
  for (int i = 0; i < SLAB_BUFFERS; i++)
    {
      int b = (s->next + i) % SLAB_BUFFERS;
      if (!sv__slab_deliver (s, b, error))
        goto out;
    }
  t2 = t3 = g_get_monotonic_time ();
  k1 = MIN (k1, k);
  /* Only the band of clusters whose windows met this device's slabs. */
  if (sums != NULL && k0 < k1)
    {
      const gsize n_sums = (k1 - k0) * ns;

      if (!sums_buffer (s, n_sums, error))
        goto out;
      SV_CUDA_CHECK (cudaMemcpy (s->h_sums, s->d_sums + k0 * ns, n_sums * sizeof (guint64),
                                 cudaMemcpyDeviceToHost));
      t3 = g_get_monotonic_time ();
      add_sums (sums + k0 * ns, s->h_sums, n_sums);
    }
  if (max_dist_colour != NULL && k0 < k1)
    {
      host_max = g_new (float, k1 - k0);
      SV_CUDA_CHECK (cudaMemcpy (host_max, s->d_max_dist + k0, (k1 - k0) * sizeof (float),
                                 cudaMemcpyDeviceToHost));
      for (gsize i = k0; i < k1; i++)
        max_dist_colour[i] = MAX (max_dist_colour[i], host_max[i - k0]);
    }
  sv__slab_marks_read_pass (s);
  g_debug ("device %d ends its pass: waits %.1f ms, delivers %.1f ms, copies the sums %.1f ms, "
           "adds them %.1f ms",
           s->device, (t1 - t0) / 1e3, (t2 - t1) / 1e3, (t3 - t2) / 1e3,
           (g_get_monotonic_time () - t3) / 1e3);
  s->times.passes++;
  s->times.pass_ms += (double)(g_get_monotonic_time () - s->pass_start_us) / 1000.0;
  ok = TRUE;
out:
  s->have_pass = FALSE;
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
  .store_kept = sv__cuda_slab_store_kept,
  .copy_kept_to = sv__cuda_slab_copy_kept_to,
  .export_kept = sv__cuda_slab_export_kept,
  .import_kept = sv__cuda_slab_import_kept,
  .take_samples = sv__cuda_slab_take_samples,
  .pieces_prepare = sv__cuda_slab_pieces_prepare,
  .pieces_label = sv__cuda_slab_pieces_label,
  .pieces_number = sv__cuda_slab_pieces_number,
  .labels_at = sv__cuda_slab_labels_at,
  .pieces_relabel = sv__cuda_slab_pieces_relabel,
  .emit_kept = sv__cuda_slab_emit_kept,
  /* A store's chunks, by the deflate of runs of the label strips. */
  .compresses_chunks = TRUE,
};

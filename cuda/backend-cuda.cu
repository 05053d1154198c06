/* Supervox CUDA backend: the stages of a SLIC run on the device
 * (supervox/sv-backend-class.h), driven by the engine's pipeline like the CPU's.
 *
 * The volume, the prepared image, the assignment and the labels stay on the
 * device between stages and between runs; buffers are allocated per volume
 * shape (and per cluster count) and reused, and freed on volume change and
 * destroy (backend-buffers.cu). Seeds, clusters and the run's constants come
 * from the pipeline, which uses the CPU reference's own functions, so both
 * backends start from the same bits. */
#define G_LOG_DOMAIN "sv-cuda"

#include <cub/device/device_scan.cuh>
#include <string.h>

#include "backend-cuda-private.h"
#include "device-arrays.h"
#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"

static gboolean
cuda_create (SvBackend *backend, GError **error)
{
  SvCudaBackend *self = NULL;
  cudaStream_t stream = NULL;
  int device = 0;

  if (!sv_cuda_device_available (error))
    return FALSE;
  /* The slab steps may be called from a worker thread: they make this
   * device current there. */
  SV_CUDA_CHECK (cudaGetDevice (&device));
  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  self = g_new0 (SvCudaBackend, 1);
  self->stream = stream;
  self->device = device;
  sv_backend_set_priv (backend, self);
  return TRUE;
out:
  return FALSE;
}

static void
cuda_destroy (SvBackend *backend)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  if (self == NULL)
    return;
  cudaSetDevice (self->device);
  g_clear_pointer (&self->slabs, sv__cuda_slabs_free);
  cudaStreamSynchronize (self->stream);
  sv__cuda_free_k_buffers (self);
  sv__cuda_free_volume_buffers (self);
  sv__cuda_forget_inputs (self);
  sv_cuda_backend_set_profiling (backend, FALSE, NULL);
  sv__cuda_free_staging (self);
  cudaStreamDestroy (self->stream);
  g_free (self);
}

static gboolean
cuda_set_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask, GError **error)
{
  return sv__cuda_set_volume (sv__cuda_backend (backend), volume, mask, error);
}

static const SvPrepared *
cuda_prepare (SvBackend *backend, const SvSlicParams *params, int n_threads, gboolean *reused,
              GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  gint64 t0 = g_get_monotonic_time ();

  if (!sv__cuda_ensure_prepared (self, params, n_threads, reused, error))
    return NULL;
  memset (&self->times, 0, sizeof self->times);
  self->times.prepare_ms = (double)(g_get_monotonic_time () - t0) / 1000.0;
  return self->prepared;
}

static cudaError_t
mark (SvCudaBackend *self, int i)
{
  return self->profiling ? cudaEventRecord (self->marks[i], self->stream) : cudaSuccess;
}

/* Milliseconds between marks a and b (the stream is synchronised). */
static double
mark_ms (SvCudaBackend *self, int a, int b)
{
  float ms = 0.0f;
  if (cudaEventElapsedTime (&ms, self->marks[a], self->marks[b]) != cudaSuccess)
    return 0.0;
  return ms;
}

/* One iteration on the device: bin the live centres, assign, update, and
 * under SLIC-zero raise the colour maxima. */
static gboolean
iterate_once (SvCudaBackend *self, const SvCudaIter &it, GError **error)
{
  cudaStream_t s = self->stream;
  size_t cells = (size_t)it.ncell[0] * it.ncell[1] * it.ncell[2];
  size_t tmp = self->scan_tmp_bytes;

  SV_CUDA_CHECK (mark (self, 0));
  SV_CUDA_CHECK (cudaMemsetAsync (self->d_cell_count, 0, (cells + 1) * sizeof (int), s));
  SV_CUDA_CHECK (sv_cuda_bin_count (it, self->d_centres, self->d_alive, self->d_cell_count, s));
  SV_CUDA_CHECK (cub::DeviceScan::ExclusiveSum (self->d_scan_tmp, tmp, self->d_cell_count,
                                                self->d_cell_start, (int)(cells + 1), s));
  SV_CUDA_CHECK (cudaMemsetAsync (self->d_cell_fill, 0, (cells + 1) * sizeof (int), s));
  SV_CUDA_CHECK (sv_cuda_bin_fill (it, self->d_centres, self->d_alive, self->d_cell_start,
                                   self->d_cell_fill, self->d_cell_items, s));
  SV_CUDA_CHECK (cudaMemsetAsync (self->d_sums, 0,
                                  (size_t)it.k * (4 + it.nc) * sizeof (unsigned long long), s));
  SV_CUDA_CHECK (mark (self, 1));
  /* The assignment also sums each cluster's voxels (the update's step 1). */
  SV_CUDA_CHECK (sv_cuda_assign (it, self->d_image, self->d_mask, self->d_centres, self->d_max_dist,
                                 self->d_alive, self->d_windows, self->d_cell_start,
                                 self->d_cell_items, self->d_nearest, self->d_sums, s));
  SV_CUDA_CHECK (mark (self, 2));
  SV_CUDA_CHECK (sv_cuda_finalize (it, self->d_sums, self->d_centres, self->d_alive, s));
  SV_CUDA_CHECK (mark (self, 3));
  if (it.slic_zero)
    SV_CUDA_CHECK (sv_cuda_slic_zero_max (it, self->d_image, self->d_nearest, self->d_centres,
                                          self->d_max_dist, s));
  SV_CUDA_CHECK (mark (self, 4));
  if (self->profiling)
    {
      SV_CUDA_CHECK (cudaStreamSynchronize (s));
      self->times.bin_ms += mark_ms (self, 0, 1);
      self->times.assign_ms += mark_ms (self, 1, 2);
      self->times.update_ms += mark_ms (self, 2, 3);
      self->times.slic_zero_ms += mark_ms (self, 3, 4);
    }
  return TRUE;
out:
  return FALSE;
}

void
sv__cuda_iter_init (SvCudaIter *it, const SvSlicContext *ctx, guint nz, guint ny, guint nx,
                    guint nc, gsize k)
{
  memset (it, 0, sizeof *it);
  it->nz = (int)nz;
  it->ny = (int)ny;
  it->nx = (int)nx;
  it->nc = (int)nc;
  it->n = (long long)nz * ny * nx;
  it->z_begin = 0;
  it->z_end = it->nz;
  it->ratio = ctx->ratio;
  it->spatial_weight = ctx->spatial_weight;
  it->sz = ctx->spacing[0];
  it->sy = ctx->spacing[1];
  it->sx = ctx->spacing[2];
  for (int a = 0; a < 3; a++)
    {
      int dim = a == 0 ? it->nz : a == 1 ? it->ny : it->nx;
      it->wstep[a] = MAX (ctx->window_step[a], 1);
      it->ncell[a] = MAX ((dim + it->wstep[a] - 1) / it->wstep[a], 1);
    }
  it->slic_zero = ctx->slic_zero ? 1 : 0;
  it->ignore_colour = 0;
  it->colour_shift = ctx->colour_shift;
  it->k = (int)k;
  it->band0 = 0;
  it->band1 = (int)k;
}

/* The iteration constants from the pipeline's context, and the centres
 * and alive flags of the seeds on the device. */
static gboolean
cuda_start (SvBackend *backend, const SvSlicRun *run, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  const SvSlicContext *ctx = &run->ctx;
  SvCudaIter &it = self->it;
  gsize k = run->clusters.k, cells = 0;

  sv__cuda_iter_init (&it, ctx, self->nz, self->ny, self->nx, self->nc, k);
  cells = (gsize)it.ncell[0] * it.ncell[1] * it.ncell[2];

  if (!sv__cuda_ensure_k_buffers (self, k, self->nc, cells, error))
    return FALSE;
  if (k > 0)
    {
      SV_CUDA_CHECK (cudaMemcpyAsync (self->d_centres, run->clusters.centres,
                                      k * (3 + self->nc) * sizeof (float), cudaMemcpyHostToDevice,
                                      self->stream));
      SV_CUDA_CHECK (cudaMemcpyAsync (self->d_alive, run->clusters.alive, k,
                                      cudaMemcpyHostToDevice, self->stream));
    }
  return TRUE;
out:
  return FALSE;
}

static gboolean
cuda_begin_pass (SvBackend *backend, const SvSlicRun *run, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);

  if (run->clusters.k > 0)
    SV_CUDA_CHECK (cudaMemcpyAsync (self->d_max_dist, run->clusters.max_dist_colour,
                                    run->clusters.k * sizeof (float), cudaMemcpyHostToDevice,
                                    self->stream));
  return TRUE;
out:
  return FALSE;
}

static gboolean
cuda_iterate (SvBackend *backend, SvSlicRun *run, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  SvCudaIter it = self->it;

  /* maskSLIC's first pass moves the seeds by position only. */
  if (run->ctx.ignore_colour)
    {
      it.ignore_colour = 1;
      it.slic_zero = 0;
    }
  return iterate_once (self, it, error);
}

static gboolean
cuda_sync (SvBackend *backend, GError **error)
{
  SV_CUDA_CHECK (cudaStreamSynchronize (sv__cuda_backend (backend)->stream));
  return TRUE;
out:
  return FALSE;
}

static gboolean
cuda_assignment_labels (SvBackend *backend, const SvSlicRun *run, gboolean fill, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  gsize k = run->clusters.k;

  if (!fill && self->n > 0)
    SV_CUDA_CHECK (
        cudaMemsetAsync (self->d_nearest, 0xff, self->n * sizeof (int32_t), self->stream));
  if (fill && k > 0)
    SV_CUDA_CHECK (sv_cuda_fill_unassigned (self->it, self->d_mask, self->d_centres,
                                            self->d_alive, self->d_nearest, self->stream));
  /* From here on the previous run's labels are overwritten. */
  self->have_labels = FALSE;
  self->connectivity_on_host = FALSE;
  SV_CUDA_CHECK (mark (self, 0));
  if (k > 0)
    SV_CUDA_CHECK (cudaMemsetAsync (self->d_used, 0, k, self->stream));
  SV_CUDA_CHECK (sv_cuda_labels_from_nearest ((long long)self->n, self->d_nearest,
                                              run->params->start_label, self->d_labels,
                                              self->d_used, self->stream));
  SV_CUDA_CHECK (mark (self, 1));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  if (self->profiling)
    self->times.labels_ms = mark_ms (self, 0, 1);
  self->labels_done_us = g_get_monotonic_time ();
  return TRUE;
out:
  return FALSE;
}

static void
connect_done (SvCudaBackend *self, const SvSlicRun *run)
{
  self->times.connect_ms = (double)(g_get_monotonic_time () - self->labels_done_us) / 1000.0;
  self->times.iterations = run->iteration;
  self->times.connectivity_on_host = self->connectivity_on_host;
}

static gboolean
cuda_connect (SvBackend *backend, const SvSlicRun *run, gint64 min_size, gint64 max_size,
              gint64 *n_labels, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  const int start_label = run->params->start_label;
  gint32 *host_in = NULL, *host_out = NULL;
  bool on_device = false;
  long long n_device = 0;
  gboolean ok = FALSE;

  *n_labels = 0;
  if (run->clusters.k == 0 || self->n == 0)
    {
      connect_done (self, run);
      return TRUE;
    }
  if (!sv__cuda_ensure_conn_buffers (self, error))
    goto out;
  SV_CUDA_CHECK (mark (self, 0));
  SV_CUDA_CHECK (sv_cuda_connectivity (self->d_labels, (int)self->nz, (int)self->ny,
                                       (int)self->nx, min_size, max_size, start_label,
                                       run->params->connectivity_rule, &self->conn,
                                       self->stream, &n_device, &on_device));
  SV_CUDA_CHECK (mark (self, 1));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  if (self->profiling)
    self->times.connect_device_ms = mark_ms (self, 0, 1);
  self->connectivity_on_host = !on_device;
  if (on_device)
    *n_labels = n_device;
  else
    {
      /* Volumes too large for the device path's 32-bit indices run the
       * sequential rule on the host. */
      host_in = (gint32 *)g_try_malloc (self->n * sizeof (gint32));
      host_out = (gint32 *)g_try_malloc (self->n * sizeof (gint32));
      if (host_in == NULL || host_out == NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                       "not enough host memory for the connectivity step");
          goto out;
        }
      SV_CUDA_CHECK (cudaMemcpyAsync (host_in, self->d_labels, self->n * sizeof (gint32),
                                      cudaMemcpyDeviceToHost, self->stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
      *n_labels = sv_connectivity_enforce (host_in, self->nz, self->ny, self->nx, min_size,
                                           max_size, start_label, run->params->connectivity_rule,
                                           host_out);
      SV_CUDA_CHECK (cudaMemcpyAsync (self->d_labels, host_out, self->n * sizeof (gint32),
                                      cudaMemcpyHostToDevice, self->stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
    }
  connect_done (self, run);
  ok = TRUE;
out:
  g_free (host_in);
  g_free (host_out);
  return ok;
}

/* Without connectivity: the clusters that hold a voxel, from d_used. */
static gboolean
cuda_count_labels (SvBackend *backend, const SvSlicRun *run, gint64 *n_labels, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  gsize k = run->clusters.k;
  uint8_t *host_used = NULL;
  gboolean ok = FALSE;

  *n_labels = 0;
  if (k > 0)
    {
      host_used = (uint8_t *)g_malloc (k);
      SV_CUDA_CHECK (
          cudaMemcpyAsync (host_used, self->d_used, k, cudaMemcpyDeviceToHost, self->stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
      for (gsize i = 0; i < k; i++)
        *n_labels += host_used[i] != 0;
    }
  connect_done (self, run);
  ok = TRUE;
out:
  g_free (host_used);
  return ok;
}

static gboolean
cuda_read_clusters (SvBackend *backend, SvSlicRun *run, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  gsize k = run->clusters.k;

  if (k == 0)
    return TRUE;
  SV_CUDA_CHECK (cudaMemcpyAsync (run->clusters.centres, self->d_centres,
                                  k * (3 + self->nc) * sizeof (float), cudaMemcpyDeviceToHost,
                                  self->stream));
  SV_CUDA_CHECK (cudaMemcpyAsync (run->clusters.alive, self->d_alive, k, cudaMemcpyDeviceToHost,
                                  self->stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  return TRUE;
out:
  return FALSE;
}

/* The fill runs on a copy of the assignment in d_labels, which the run
 * writes again at its end; the host adds start_label (−1 becomes
 * start_label − 1, as on the device). */
static gboolean
cuda_snapshot_labels (SvBackend *backend, const SvSlicRun *run, gint32 *labels, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);

  if (self->n == 0)
    return TRUE;
  SV_CUDA_CHECK (cudaMemcpyAsync (self->d_labels, self->d_nearest, self->n * sizeof (int32_t),
                                  cudaMemcpyDeviceToDevice, self->stream));
  if (run->iteration > 0 && run->clusters.k > 0)
    SV_CUDA_CHECK (sv_cuda_fill_unassigned (self->it, self->d_mask, self->d_centres,
                                            self->d_alive, self->d_labels, self->stream));
  SV_CUDA_CHECK (
      sv__cuda_staged_copy (self, labels, self->d_labels, self->n * sizeof (gint32), FALSE));
  for (gsize v = 0; v < self->n; v++)
    labels[v] += run->params->start_label;
  return TRUE;
out:
  return FALSE;
}

static void
cuda_finish (SvBackend *backend, gboolean ok)
{
  SvCudaBackend *self = sv__cuda_backend (backend);

  if (!ok)
    /* Leave nothing queued behind a failed or cancelled run. */
    cudaStreamSynchronize (self->stream);
  self->have_labels = ok;
}

static gboolean
cuda_get_labels (SvBackend *backend, gint32 *labels, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  if (self->n == 0)
    return TRUE;
  SV_CUDA_CHECK (
      sv__cuda_staged_copy (self, labels, self->d_labels, self->n * sizeof (gint32), FALSE));
  return TRUE;
out:
  return FALSE;
}

static const gint32 *
cuda_device_labels (SvBackend *backend, guint shape_zyx[3])
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  if (shape_zyx != NULL)
    {
      shape_zyx[0] = self->nz;
      shape_zyx[1] = self->ny;
      shape_zyx[2] = self->nx;
    }
  return self->have_labels ? self->d_labels : NULL;
}

static gpointer
cuda_device_stream (SvBackend *backend)
{
  return sv__cuda_backend (backend)->stream;
}

gboolean
sv_cuda_backend_store_labels_device (SvBackend *backend, void *device_dst, gboolean wide,
                                     gpointer stream, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  cudaEvent_t done = NULL;
  gboolean ok = FALSE;

  if (!self->have_labels)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "there are no labels yet: run SLIC first");
      return FALSE;
    }
  SV_CUDA_CHECK (sv_cuda_store_labels (self->d_labels, (long long)self->n, device_dst, wide ? 1 : 0,
                                       self->stream));
  /* Work the caller queues on its stream afterwards sees the labels. */
  SV_CUDA_CHECK (cudaEventCreateWithFlags (&done, cudaEventDisableTiming));
  SV_CUDA_CHECK (cudaEventRecord (done, self->stream));
  SV_CUDA_CHECK (cudaStreamWaitEvent ((cudaStream_t)stream, done, 0));
  ok = TRUE;
out:
  if (done != NULL)
    cudaEventDestroy (done);
  return ok;
}

gboolean
sv_cuda_backend_connectivity_on_host (SvBackend *backend)
{
  return sv__cuda_backend (backend)->connectivity_on_host;
}

gboolean
sv_cuda_backend_set_profiling (SvBackend *backend, gboolean enable, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  int i = 0;

  if (enable == self->profiling)
    return TRUE;
  if (!enable)
    {
      for (i = 0; i < 6; i++)
        cudaEventDestroy (self->marks[i]);
      self->profiling = FALSE;
      return TRUE;
    }
  for (i = 0; i < 6; i++)
    SV_CUDA_CHECK (cudaEventCreate (&self->marks[i]));
  self->profiling = TRUE;
  return TRUE;
out:
  while (--i >= 0)
    cudaEventDestroy (self->marks[i]);
  return FALSE;
}

void
sv_cuda_backend_get_stage_times (SvBackend *backend, SvCudaStageTimes *times)
{
  *times = sv__cuda_backend (backend)->times;
}

/* No take_labels: the labels live on the device, and get_labels copies
 * them to the host. */
static gboolean
cuda_device_free_bytes (int device, guint64 *free_bytes, GError **error)
{
  gsize f = 0;

  if (!sv_cuda_set_device (device, error) || !sv_cuda_mem_get_info (&f, NULL, error))
    return FALSE;
  *free_bytes = f;
  return TRUE;
}

static const SvBackendClass cuda_class = {
  .name = "cuda",
  .display_name = "the GPU",
  .title = "GPU (CUDA)",
  .is_device = TRUE,
  .create = cuda_create,
  .destroy = cuda_destroy,
  .set_volume = cuda_set_volume,
  .prepare = cuda_prepare,
  .start = cuda_start,
  .begin_pass = cuda_begin_pass,
  .iterate = cuda_iterate,
  .sync = cuda_sync,
  .assignment_labels = cuda_assignment_labels,
  .connect = cuda_connect,
  .count_labels = cuda_count_labels,
  .read_clusters = cuda_read_clusters,
  .snapshot_labels = cuda_snapshot_labels,
  .finish = cuda_finish,
  .get_labels = cuda_get_labels,
  .take_labels = NULL,
  .device_labels = cuda_device_labels,
  .device_stream = cuda_device_stream,
  .slab_steps = &sv__cuda_slab_steps,
  .in_memory_bytes = sv_cuda_in_memory_bytes,
  .stream_max_depth = sv_cuda_stream_max_depth,
  .device_count = sv_cuda_device_count,
  .device_free_bytes = cuda_device_free_bytes,
  .new_on_device = sv_cuda_backend_new_on_device,
  .set_memory_limit = sv_cuda_backend_set_memory_limit,
  .clock = NULL,
};

const SvBackendClass *
sv_backend_cuda_class (void)
{
  return &cuda_class;
}

/* Supervox CUDA backend: device buffers per volume shape and per cluster
 * count, pinned staging for large host transfers, and the volume upload. */
#define G_LOG_DOMAIN "sv-cuda"

#include <cub/device/device_scan.cuh>
#include <string.h>

#include "backend-cuda-private.h"
#include "device-arrays.h"
#include "supervox/sv-error.h"

void
sv__cuda_free_k_buffers (SvCudaBackend *self)
{
  sv_cuda_clear (&self->d_centres);
  sv_cuda_clear (&self->d_alive);
  sv_cuda_clear (&self->d_max_dist);
  sv_cuda_clear (&self->d_sums);
  sv_cuda_clear (&self->d_used);
  sv_cuda_clear (&self->d_cell_count);
  sv_cuda_clear (&self->d_cell_start);
  sv_cuda_clear (&self->d_cell_fill);
  sv_cuda_clear (&self->d_cell_items);
  sv_cuda_clear (&self->d_windows);
  sv_cuda_clear (&self->d_scan_tmp);
  self->scan_tmp_bytes = 0;
  self->k_cap = 0;
  self->k_nc = 0;
  self->cell_cap = 0;
}

static void
free_conn_buffers (SvCudaBackend *self)
{
  cudaFree (self->conn.size);
  cudaFree (self->conn.link);
  cudaFree (self->conn.queue);
  cudaFree (self->conn.small_roots);
  cudaFree (self->conn.small_offsets);
  cudaFree (self->conn.visited);
  cudaFree (self->conn.counters);
  cudaFree (self->conn.scan_tmp);
  memset (&self->conn, 0, sizeof self->conn);
  self->conn_ready = FALSE;
}

gboolean
sv__cuda_ensure_conn_buffers (SvCudaBackend *self, GError **error)
{
  gsize n1 = self->n + 1;

  if (self->conn_ready)
    return TRUE;
  if (!sv__cuda_check_free (sv_cuda_connectivity_bytes ((long long)self->n),
                            "the connectivity step", error))
    return FALSE;
  SV_CUDA_CHECK (cudaMalloc (&self->conn.size, n1 * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->conn.link, n1 * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->conn.queue, n1 * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->conn.small_roots, n1 * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->conn.small_offsets, n1 * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->conn.visited, n1));
  SV_CUDA_CHECK (cudaMalloc (&self->conn.counters, 16 * sizeof (int)));
  self->conn.parent = self->d_nearest;
  self->conn_ready = TRUE;
  return TRUE;
out:
  free_conn_buffers (self);
  return FALSE;
}

void
sv__cuda_free_volume_buffers (SvCudaBackend *self)
{
  free_conn_buffers (self);
  sv_cuda_clear (&self->d_raw);
  sv_cuda_clear (&self->d_scan);
  sv_cuda_clear (&self->d_max_abs);
  sv_cuda_clear (&self->d_image);
  sv_cuda_clear (&self->d_mask);
  sv_cuda_clear (&self->d_nearest);
  sv_cuda_clear (&self->d_labels);
  g_clear_pointer (&self->prepared, sv_prepared_free);
  self->have_labels = FALSE;
}

void
sv__cuda_free_staging (SvCudaBackend *self)
{
  for (int l = 0; l < self->n_lanes; l++)
    {
      for (int b = 0; b < 2; b++)
        {
          cudaFreeHost (self->lane_buf[l][b]);
          if (self->lane_done[l][b] != NULL)
            cudaEventDestroy (self->lane_done[l][b]);
          self->lane_buf[l][b] = NULL;
          self->lane_done[l][b] = NULL;
        }
      if (self->lane_stream[l] != NULL)
        cudaStreamDestroy (self->lane_stream[l]);
      self->lane_stream[l] = NULL;
    }
  self->n_lanes = 0;
}

/* Sets up the staging lanes once; without pinned memory (or with one core)
 * there are none and transfers fall back to plain copies. */
static void
ensure_staging (SvCudaBackend *self)
{
  int want = 0;

  if (self->stage_tried)
    return;
  self->stage_tried = TRUE;
  want = CLAMP ((int)g_get_num_processors () / 2, 1, SV_STAGE_MAX_LANES);
  for (int l = 0; l < want; l++)
    {
      gboolean ok = TRUE;
      ok = ok
           && cudaStreamCreateWithFlags (&self->lane_stream[l], cudaStreamNonBlocking)
                  == cudaSuccess;
      for (int b = 0; b < 2 && ok; b++)
        ok = cudaMallocHost (&self->lane_buf[l][b], SV_STAGE_CHUNK) == cudaSuccess
             && cudaEventCreateWithFlags (&self->lane_done[l][b], cudaEventDisableTiming)
                    == cudaSuccess;
      self->n_lanes = l + 1;
      if (!ok)
        {
          cudaGetLastError ();
          sv__cuda_free_staging (self);
          return;
        }
    }
}

typedef struct
{
  SvCudaBackend *self;
  int lane;
  gboolean upload;
  char *dst;
  const char *src;
  size_t bytes;
  cudaError_t status;
} StageTask;

/* One lane: chunks lane, lane + n_lanes, …; the host copy of one chunk
 * overlaps the DMA of the previous one. */
static gpointer
stage_lane (gpointer data)
{
  StageTask *t = (StageTask *)data;
  SvCudaBackend *self = t->self;
  const int l = t->lane, nl = self->n_lanes;
  cudaStream_t s = self->lane_stream[l];
  size_t n_chunks = (t->bytes + SV_STAGE_CHUNK - 1) / SV_STAGE_CHUNK;
  cudaError_t e = cudaSuccess;
  size_t j = 0;

  if (t->upload)
    {
      for (size_t c = (size_t)l; c < n_chunks && e == cudaSuccess; c += (size_t)nl, j++)
        {
          size_t off = c * SV_STAGE_CHUNK, len = MIN (SV_STAGE_CHUNK, t->bytes - off);
          int b = (int)(j & 1);
          if (j >= 2)
            e = cudaEventSynchronize (self->lane_done[l][b]);
          if (e != cudaSuccess)
            break;
          memcpy (self->lane_buf[l][b], t->src + off, len);
          e = cudaMemcpyAsync (t->dst + off, self->lane_buf[l][b], len, cudaMemcpyHostToDevice, s);
          if (e == cudaSuccess)
            e = cudaEventRecord (self->lane_done[l][b], s);
        }
    }
  else
    {
      /* The DMA of chunk j + 1 runs while chunk j is copied out. */
      size_t c = (size_t)l;
      if (c < n_chunks)
        {
          size_t off = c * SV_STAGE_CHUNK, len = MIN (SV_STAGE_CHUNK, t->bytes - off);
          e = cudaMemcpyAsync (self->lane_buf[l][0], t->src + off, len, cudaMemcpyDeviceToHost, s);
          if (e == cudaSuccess)
            e = cudaEventRecord (self->lane_done[l][0], s);
        }
      for (; c < n_chunks && e == cudaSuccess; c += (size_t)nl, j++)
        {
          size_t off = c * SV_STAGE_CHUNK, len = MIN (SV_STAGE_CHUNK, t->bytes - off);
          size_t next = c + (size_t)nl;
          int b = (int)(j & 1);
          if (next < n_chunks)
            {
              size_t noff = next * SV_STAGE_CHUNK, nlen = MIN (SV_STAGE_CHUNK, t->bytes - noff);
              e = cudaMemcpyAsync (self->lane_buf[l][b ^ 1], t->src + noff, nlen,
                                   cudaMemcpyDeviceToHost, s);
              if (e == cudaSuccess)
                e = cudaEventRecord (self->lane_done[l][b ^ 1], s);
              if (e != cudaSuccess)
                break;
            }
          e = cudaEventSynchronize (self->lane_done[l][b]);
          if (e == cudaSuccess)
            memcpy (t->dst + off, self->lane_buf[l][b], len);
        }
    }
  if (e == cudaSuccess)
    e = cudaStreamSynchronize (s);
  t->status = e;
  return NULL;
}

/* A synchronous host ↔ device copy of pageable host memory. Large copies go
 * through the pinned lanes (pageable copies run at a fraction of the bus
 * speed); the main stream is drained first and nothing is left queued. */
cudaError_t
sv__cuda_staged_copy (SvCudaBackend *self, void *dst, const void *src, size_t bytes, gboolean upload)
{
  StageTask tasks[SV_STAGE_MAX_LANES];
  GThread *threads[SV_STAGE_MAX_LANES];
  cudaError_t e = cudaSuccess;

  if (bytes >= SV_STAGE_MIN_BYTES)
    ensure_staging (self);
  if (bytes < SV_STAGE_MIN_BYTES || self->n_lanes == 0)
    {
      e = cudaMemcpyAsync (dst, src, bytes, upload ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                           self->stream);
      return e != cudaSuccess ? e : cudaStreamSynchronize (self->stream);
    }
  e = cudaStreamSynchronize (self->stream);
  if (e != cudaSuccess)
    return e;
  for (int l = 0; l < self->n_lanes; l++)
    {
      tasks[l].self = self;
      tasks[l].lane = l;
      tasks[l].upload = upload;
      tasks[l].dst = (char *)dst;
      tasks[l].src = (const char *)src;
      tasks[l].bytes = bytes;
      tasks[l].status = cudaSuccess;
      threads[l] = NULL;
    }
  for (int l = 1; l < self->n_lanes; l++)
    threads[l] = g_thread_new ("sv-cuda-copy", stage_lane, &tasks[l]);
  stage_lane (&tasks[0]);
  for (int l = 1; l < self->n_lanes; l++)
    g_thread_join (threads[l]);
  for (int l = 0; l < self->n_lanes; l++)
    if (tasks[l].status != cudaSuccess)
      return tasks[l].status;
  return cudaSuccess;
}

void
sv__cuda_forget_inputs (SvCudaBackend *self)
{
  self->volume = NULL;
  self->mask = NULL;
  self->have_volume = FALSE;
  g_clear_pointer (&self->owned_volume, sv_volume_free);
  g_clear_pointer (&self->owned_mask, g_free);
}

/* Device buffers for a volume of this shape. A volume of the same shape
 * reuses them (the benchmark's and the GUI's reload case); otherwise
 * everything of the previous volume goes first, so that its memory counts
 * as free for the new one. */
static gboolean
volume_buffers_for (SvCudaBackend *self, guint nz, guint ny, guint nx, guint nc,
                    gboolean has_mask, GError **error)
{
  gsize n = 0, bytes = 0, values = 0;
  gboolean same_shape = FALSE;

  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  same_shape = self->d_raw != NULL && self->nz == nz && self->ny == ny && self->nx == nx
               && self->nc == nc && (self->d_mask != NULL) == has_mask;
  if (same_shape)
    {
      g_clear_pointer (&self->prepared, sv_prepared_free);
      self->have_labels = FALSE;
    }
  else
    {
      sv__cuda_free_k_buffers (self);
      sv__cuda_free_volume_buffers (self);
    }
  sv__cuda_forget_inputs (self);

  n = (gsize)nz * ny * nx;
  values = n * nc;
  self->nz = nz;
  self->ny = ny;
  self->nx = nx;
  self->nc = nc;
  self->n = n;
  self->n_mask_in = n;

  bytes = 2 * MAX (values, 1) * sizeof (float) + (has_mask ? MAX (n, 1) : 0)
          + 2 * MAX (n, 1) * sizeof (int32_t);
  if (!same_shape)
    {
      if (!sv__cuda_check_free (bytes, "this volume", error))
        goto out;
      SV_CUDA_CHECK (cudaMalloc (&self->d_raw, MAX (values, 1) * sizeof (float)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_image, MAX (values, 1) * sizeof (float)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_nearest, MAX (n, 1) * sizeof (int32_t)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_labels, MAX (n, 1) * sizeof (int32_t)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_scan, sizeof (SvCudaScan)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_max_abs, sizeof (unsigned int)));
    }
  if (has_mask && self->d_mask == NULL)
    SV_CUDA_CHECK (cudaMalloc (&self->d_mask, MAX (n, 1)));
  return TRUE;

out:
  sv__cuda_free_volume_buffers (self);
  return FALSE;
}

static void
count_mask_in (SvCudaBackend *self, const guint8 *mask)
{
  self->mask = mask;
  self->n_mask_in = 0;
  for (gsize i = 0; i < self->n; i++)
    self->n_mask_in += mask[i] != 0;
}

gboolean
sv__cuda_set_volume (SvCudaBackend *self, const SvVolume *volume, const guint8 *mask,
                     GError **error)
{
  gsize values = 0;

  g_return_val_if_fail (volume != NULL, FALSE);

  if (!volume_buffers_for (self, volume->nz, volume->ny, volume->nx, volume->nc, mask != NULL,
                           error))
    return FALSE;
  values = self->n * self->nc;
  if (mask != NULL)
    count_mask_in (self, mask);
  if (values > 0)
    SV_CUDA_CHECK (
        sv__cuda_staged_copy (self, self->d_raw, volume->data, values * sizeof (float), TRUE));
  if (mask != NULL)
    SV_CUDA_CHECK (sv__cuda_staged_copy (self, self->d_mask, mask, self->n, TRUE));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  self->volume = volume;
  self->have_volume = TRUE;
  return TRUE;

out:
  sv__cuda_free_volume_buffers (self);
  sv__cuda_forget_inputs (self);
  return FALSE;
}

gboolean
sv_cuda_backend_set_volume_device (SvBackend *backend, const SupervoxArray *image,
                                   SvSampleType source_type, const SupervoxArray *mask,
                                   gpointer stream, GError **error)
{
  SvCudaBackend *self = sv__cuda_backend (backend);
  SvVolume shape;
  cudaEvent_t ready = NULL;
  gboolean ok = FALSE;

  if (!volume_buffers_for (self, (guint)image->shape[0], (guint)image->shape[1],
                           (guint)image->shape[2], (guint)image->shape[3], mask != NULL, error))
    return FALSE;
  /* The producer's queued work (on its stream) comes first. */
  SV_CUDA_CHECK (cudaEventCreateWithFlags (&ready, cudaEventDisableTiming));
  SV_CUDA_CHECK (cudaEventRecord (ready, (cudaStream_t)stream));
  SV_CUDA_CHECK (cudaStreamWaitEvent (self->stream, ready, 0));
  SV_CUDA_CHECK (sv_cuda_gather_volume (image, self->d_raw, self->stream));
  if (mask != NULL)
    {
      /* Mask seeding and the mask-in count run on the host. */
      self->owned_mask = (guint8 *)g_try_malloc (MAX (self->n, 1));
      if (self->owned_mask == NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                       "not enough host memory for a mask of %" G_GSIZE_FORMAT " voxels",
                       self->n);
          goto out;
        }
      SV_CUDA_CHECK (sv_cuda_gather_mask (mask, self->d_mask, self->stream));
      /* A plain copy: one byte per voxel, once per volume, is not worth
       * allocating the staging lanes' pinned buffers for. */
      if (self->n > 0)
        SV_CUDA_CHECK (cudaMemcpyAsync (self->owned_mask, self->d_mask, self->n,
                                        cudaMemcpyDeviceToHost, self->stream));
    }
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  if (mask != NULL)
    count_mask_in (self, self->owned_mask);
  self->have_volume = TRUE;
  self->source_type = source_type;
  /* The pipeline seeds from the shape and the host mask; there is no host
   * volume (data NULL). */
  memset (&shape, 0, sizeof shape);
  shape.nz = self->nz;
  shape.ny = self->ny;
  shape.nx = self->nx;
  shape.nc = self->nc;
  sv_backend_set_loaded (backend, &shape, self->owned_mask);
  ok = TRUE;

out:
  if (ready != NULL)
    cudaEventDestroy (ready);
  if (!ok)
    {
      sv__cuda_free_volume_buffers (self);
      sv__cuda_forget_inputs (self);
    }
  return ok;
}

gboolean
sv__cuda_ensure_host_volume (SvCudaBackend *self, GError **error)
{
  SvVolume *volume = NULL;

  if (self->volume != NULL)
    return TRUE;
  volume = sv_volume_new (self->nz, self->ny, self->nx, self->nc, error);
  if (volume == NULL)
    return FALSE;
  volume->source_type = self->source_type;
  if (self->n > 0)
    SV_CUDA_CHECK (sv__cuda_staged_copy (self, volume->data, self->d_raw,
                                         self->n * self->nc * sizeof (float), FALSE));
  self->owned_volume = volume;
  self->volume = volume;
  return TRUE;
out:
  sv_volume_free (volume);
  return FALSE;
}

/* Buffers for k clusters of nc channels and `cells` centre bins; reused when
 * large enough. */
gboolean
sv__cuda_ensure_k_buffers (SvCudaBackend *self, gsize k, guint nc, gsize cells, GError **error)
{
  size_t tmp_bytes = 0, bytes = 0;
  gsize kk = MAX (k, 1);

  if (kk <= self->k_cap && nc == self->k_nc && cells <= self->cell_cap)
    return TRUE;
  sv__cuda_free_k_buffers (self);

  SV_CUDA_CHECK (cub::DeviceScan::ExclusiveSum (NULL, tmp_bytes, (int *)NULL, (int *)NULL,
                                                (int)(cells + 1), self->stream));
  bytes = kk * (3 + nc) * sizeof (float) + kk + kk * sizeof (float)
          + kk * (4 + nc) * sizeof (unsigned long long) + kk + 3 * (cells + 1) * sizeof (int)
          + kk * sizeof (int) + kk * 6 * sizeof (int) + tmp_bytes;
  if (!sv__cuda_check_free (bytes, "this number of supervoxels", error))
    goto out;
  SV_CUDA_CHECK (cudaMalloc (&self->d_centres, kk * (3 + nc) * sizeof (float)));
  SV_CUDA_CHECK (cudaMalloc (&self->d_alive, kk));
  SV_CUDA_CHECK (cudaMalloc (&self->d_max_dist, kk * sizeof (float)));
  SV_CUDA_CHECK (cudaMalloc (&self->d_sums, kk * (4 + nc) * sizeof (unsigned long long)));
  SV_CUDA_CHECK (cudaMalloc (&self->d_used, kk));
  SV_CUDA_CHECK (cudaMalloc (&self->d_cell_count, (cells + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->d_cell_start, (cells + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->d_cell_fill, (cells + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->d_cell_items, kk * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->d_windows, kk * 6 * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&self->d_scan_tmp, MAX (tmp_bytes, 1)));
  self->scan_tmp_bytes = tmp_bytes;
  self->k_cap = kk;
  self->k_nc = nc;
  self->cell_cap = cells;
  return TRUE;

out:
  sv__cuda_free_k_buffers (self);
  return FALSE;
}

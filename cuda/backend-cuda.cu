/* Supervox CUDA backend: the SvBackendClass implementation.
 *
 * The volume, the prepared image, the assignment and the labels stay on the
 * device between stages and between runs; buffers are allocated per volume
 * shape (and per cluster count) and reused, and freed on volume change and
 * destroy. Seeding and the run's constants come from the CPU reference's
 * own functions on the host (sv_seeds_grid/sv_seeds_mask,
 * sv_slic_context_init, sv_clusters_init), so both backends start from the
 * same bits. */
#define G_LOG_DOMAIN "sv-cuda"

#include <cub/device/device_scan.cuh>
#include <string.h>

#include "connectivity.h"
#include "cuda-check.h"
#include "cuda-kernels.h"
#include "device-arrays.h"
#include "error.h"
#include "grid.h"
#include "prepare.h"
#include "slic.h"
#include "sv-cuda.h"

/* Staged host transfers: up to SV_STAGE_MAX_LANES host threads, each with
 * its own stream and two pinned chunks, copy pageable memory through pinned
 * memory so that the host copies overlap the DMA and each other. */
#define SV_STAGE_MAX_LANES 8
#define SV_STAGE_CHUNK ((size_t)4 << 20)
#define SV_STAGE_MIN_BYTES ((size_t)8 << 20)

typedef struct
{
  cudaStream_t stream;

  /* The caller's volume and mask, borrowed (backend.h): the host side reads
   * them for Lab (3 channels, converted on the host) and mask seeding. */
  const SvVolume *volume;
  gboolean have_volume;
  const guint8 *mask;
  /* Host copies made for a volume given in device memory: the mask always
   * (seeding runs on the host), the volume only when Lab needs it. */
  SvVolume *owned_volume;
  guint8 *owned_mask;
  guint nz, ny, nx, nc;
  gsize n;
  gsize n_mask_in;

  /* Per-volume device buffers. */
  float *d_raw;   /* the volume as given, n × nc */
  float *d_image; /* prepared image, n × nc */
  SvCudaScan *d_scan;
  unsigned int *d_max_abs;
  uint8_t *d_mask;    /* NULL without a mask */
  int32_t *d_nearest; /* assignment */
  int32_t *d_labels;  /* the last run's labels */
  int32_t *d_slice;   /* one slice, for get_slice */
  gsize slice_cap;

  /* Prepare cache: valid while sv_slic_params_same_prepare holds. */
  SvPrepared *prepared;
  SvSlicParams prepared_params;

  /* Per-cluster-count device buffers. */
  gsize k_cap;
  guint k_nc;
  gsize cell_cap;
  float *d_centres;
  uint8_t *d_alive;
  float *d_max_dist;
  unsigned long long *d_sums;
  uint8_t *d_used;
  int *d_cell_count;
  int *d_cell_start;
  int *d_cell_fill;
  int *d_cell_items;
  int *d_windows;
  void *d_scan_tmp;
  size_t scan_tmp_bytes;

  /* Connectivity scratch (parent aliases d_nearest), allocated on first use. */
  SvCudaConnScratch conn;
  gboolean conn_ready;

  /* Optional per-stage timing with CUDA events (benchmarks). */
  gboolean profiling;
  cudaEvent_t marks[6];
  SvCudaStageTimes times;

  /* Pinned staging for large host transfers, allocated on first use and
   * kept: see staged_copy. */
  gboolean stage_tried;
  int n_lanes;
  cudaStream_t lane_stream[SV_STAGE_MAX_LANES];
  void *lane_buf[SV_STAGE_MAX_LANES][2];
  cudaEvent_t lane_done[SV_STAGE_MAX_LANES][2];

  /* The last run. */
  gboolean have_labels;
  gboolean connectivity_on_host;
  gsize last_k;
  float *centres; /* last_k × 3, NaN for dead clusters */
} SvCudaBackend;

static void
free_k_buffers (SvCudaBackend *self)
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

static gboolean
ensure_conn_buffers (SvCudaBackend *self, GError **error)
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

static void
free_volume_buffers (SvCudaBackend *self)
{
  free_conn_buffers (self);
  sv_cuda_clear (&self->d_raw);
  sv_cuda_clear (&self->d_scan);
  sv_cuda_clear (&self->d_max_abs);
  sv_cuda_clear (&self->d_image);
  sv_cuda_clear (&self->d_mask);
  sv_cuda_clear (&self->d_nearest);
  sv_cuda_clear (&self->d_labels);
  sv_cuda_clear (&self->d_slice);
  self->slice_cap = 0;
  g_clear_pointer (&self->prepared, sv_prepared_free);
  self->have_labels = FALSE;
}

/* The caller's volume and mask are forgotten, and copies made for device
 * input are freed. */
static void
forget_inputs (SvCudaBackend *self)
{
  self->volume = NULL;
  self->mask = NULL;
  self->have_volume = FALSE;
  g_clear_pointer (&self->owned_volume, sv_volume_free);
  g_clear_pointer (&self->owned_mask, g_free);
}

static void
free_staging (SvCudaBackend *self)
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
          free_staging (self);
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
static cudaError_t
staged_copy (SvCudaBackend *self, void *dst, const void *src, size_t bytes, gboolean upload)
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

static gpointer
cuda_create (GError **error)
{
  SvCudaBackend *self = NULL;
  cudaStream_t stream = NULL;

  if (!sv_cuda_device_available (error))
    return NULL;
  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  self = g_new0 (SvCudaBackend, 1);
  self->stream = stream;
  return self;
out:
  return NULL;
}

static void
cuda_destroy (gpointer data)
{
  SvCudaBackend *self = (SvCudaBackend *)data;
  if (self == NULL)
    return;
  cudaStreamSynchronize (self->stream);
  free_k_buffers (self);
  free_volume_buffers (self);
  forget_inputs (self);
  g_clear_pointer (&self->centres, g_free);
  sv_cuda_backend_set_profiling (self, FALSE, NULL);
  free_staging (self);
  cudaStreamDestroy (self->stream);
  g_free (self);
}

/* Device buffers for a volume of this shape. A volume of the same shape
 * reuses them (the benchmark's and the GUI's reload case); otherwise
 * everything of the previous volume goes first, so that its memory counts
 * as free for the new one. */
static gboolean
volume_buffers_for (SvCudaBackend *self, guint nz, guint ny, guint nx, guint nc,
                    gboolean has_mask, GError **error)
{
  gsize n = 0, bytes = 0, slice = 0, values = 0;
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
      free_k_buffers (self);
      free_volume_buffers (self);
    }
  forget_inputs (self);

  n = (gsize)nz * ny * nx;
  values = n * nc;
  self->nz = nz;
  self->ny = ny;
  self->nx = nx;
  self->nc = nc;
  self->n = n;
  self->n_mask_in = n;

  slice = MAX ((gsize)self->ny * self->nx,
               MAX ((gsize)self->nz * self->nx, (gsize)self->nz * self->ny));
  bytes = 2 * MAX (values, 1) * sizeof (float) + (has_mask ? MAX (n, 1) : 0)
          + 2 * MAX (n, 1) * sizeof (int32_t) + MAX (slice, 1) * sizeof (int32_t);
  if (!same_shape)
    {
      if (!sv__cuda_check_free (bytes, "this volume", error))
        goto out;
      SV_CUDA_CHECK (cudaMalloc (&self->d_raw, MAX (values, 1) * sizeof (float)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_image, MAX (values, 1) * sizeof (float)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_nearest, MAX (n, 1) * sizeof (int32_t)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_labels, MAX (n, 1) * sizeof (int32_t)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_slice, MAX (slice, 1) * sizeof (int32_t)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_scan, sizeof (SvCudaScan)));
      SV_CUDA_CHECK (cudaMalloc (&self->d_max_abs, sizeof (unsigned int)));
      self->slice_cap = slice;
    }
  if (has_mask && self->d_mask == NULL)
    SV_CUDA_CHECK (cudaMalloc (&self->d_mask, MAX (n, 1)));
  return TRUE;

out:
  free_volume_buffers (self);
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

static gboolean
cuda_set_volume (gpointer data, const SvVolume *volume, const guint8 *mask, GError **error)
{
  SvCudaBackend *self = (SvCudaBackend *)data;
  gsize values = 0;

  g_return_val_if_fail (volume != NULL, FALSE);

  if (!volume_buffers_for (self, volume->nz, volume->ny, volume->nx, volume->nc, mask != NULL,
                           error))
    return FALSE;
  values = self->n * self->nc;
  if (mask != NULL)
    count_mask_in (self, mask);
  if (values > 0)
    SV_CUDA_CHECK (staged_copy (self, self->d_raw, volume->data, values * sizeof (float), TRUE));
  if (mask != NULL)
    SV_CUDA_CHECK (staged_copy (self, self->d_mask, mask, self->n, TRUE));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  self->volume = volume;
  self->have_volume = TRUE;
  return TRUE;

out:
  free_volume_buffers (self);
  self->mask = NULL;
  return FALSE;
}

gboolean
sv_cuda_backend_set_volume_device (gpointer backend, const SupervoxArray *image,
                                   const SupervoxArray *mask, gpointer stream, GError **error)
{
  SvCudaBackend *self = (SvCudaBackend *)backend;
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
  ok = TRUE;

out:
  if (ready != NULL)
    cudaEventDestroy (ready);
  if (!ok)
    {
      free_volume_buffers (self);
      forget_inputs (self);
    }
  return ok;
}

/* The host volume Lab conversion reads: the caller's, or for device input a
 * copy of the converted volume. */
static gboolean
ensure_host_volume (SvCudaBackend *self, GError **error)
{
  SvVolume *volume = NULL;

  if (self->volume != NULL)
    return TRUE;
  volume = sv_volume_new (self->nz, self->ny, self->nx, self->nc, error);
  if (volume == NULL)
    return FALSE;
  if (self->n > 0)
    SV_CUDA_CHECK (staged_copy (self, volume->data, self->d_raw,
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
static gboolean
ensure_k_buffers (SvCudaBackend *self, gsize k, guint nc, gsize cells, GError **error)
{
  size_t tmp_bytes = 0, bytes = 0;
  gsize kk = MAX (k, 1);

  if (kk <= self->k_cap && nc == self->k_nc && cells <= self->cell_cap)
    return TRUE;
  free_k_buffers (self);

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
  free_k_buffers (self);
  return FALSE;
}

/* Taps 0 … radius of the CPU's symmetric kernel (engine/gaussian.c), so
 * that both backends smooth with identical weights. */
static double *
gaussian_taps (float sigma, int *radius_out)
{
  double *w = sv_gaussian_kernel (sigma, radius_out);
  double *taps = g_new (double, *radius_out + 1);

  memcpy (taps, w + *radius_out, (*radius_out + 1) * sizeof (double));
  g_free (w);
  return taps;
}

/* The CPU's message for non-finite input (engine/prepare.c). */
static void
set_non_finite_error (SvCudaBackend *self, const SvCudaScan *scan, GError **error)
{
  sv_set_non_finite_error (error, (gsize)scan->n_nan, (gsize)scan->n_inf,
                           (gsize)scan->first_bad, self->ny, self->nx);
}

/* Rescale and smoothing on the device, from d_raw into d_image. */
static gboolean
prepare_on_device (SvCudaBackend *self, const SvSlicParams *params, SvPrepared **out_prepared,
                   GError **error)
{
  SvCudaScan scan;
  float sigma[3];
  float shift = 0.0f, scale = 1.0f;
  int divide = 0;
  long long n = (long long)self->n;
  int nc = (int)self->nc;
  int dims[3] = { (int)self->nz, (int)self->ny, (int)self->nx };
  float *d_tmp = NULL;
  double *d_taps = NULL;
  double *taps = NULL;
  unsigned int max_bits = 0;
  float max_abs = 0.0f;
  gsize values = self->n * self->nc;
  SvPrepared *prepared = NULL;
  gboolean ok = FALSE;

  if (values > 0)
    SV_CUDA_CHECK (cudaMemcpyAsync (self->d_image, self->d_raw, values * sizeof (float),
                                    cudaMemcpyDeviceToDevice, self->stream));
  SV_CUDA_CHECK (
      sv_cuda_rescale_scan (self->d_image, n, nc, self->d_mask, self->d_scan, self->stream));
  SV_CUDA_CHECK (
      cudaMemcpyAsync (&scan, self->d_scan, sizeof scan, cudaMemcpyDeviceToHost, self->stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  if (values > 0 && scan.n_nan + scan.n_inf > 0)
    {
      set_non_finite_error (self, &scan, error);
      goto out;
    }
  if (scan.any_in)
    {
      float lo = sv_cuda_key_to_float (scan.min_key), hi = sv_cuda_key_to_float (scan.max_key);
      shift = lo;
      /* max(v − min) is (max − min) rounded once: float rounding is monotonic. */
      scale = hi - lo;
      divide = scale != 0.0f;
    }
  SV_CUDA_CHECK (sv_cuda_rescale_apply (self->d_image, n, nc, self->d_mask, shift, scale, divide,
                                        self->stream));

  sv_slic_params_effective_sigma (params, sigma);
  for (int axis = 0; axis < 3 && values > 0; axis++)
    {
      int radius = 0;
      float *swap = NULL;
      /* scipy skips axes with sigma <= 1e-15 (compared in double). */
      if (!((double)sigma[axis] > 1e-15))
        continue;
      if (d_tmp == NULL)
        {
          if (!sv__cuda_check_free (values * sizeof (float), "smoothing", error))
            goto out;
          SV_CUDA_CHECK (cudaMalloc (&d_tmp, values * sizeof (float)));
        }
      g_clear_pointer (&taps, g_free);
      taps = gaussian_taps (sigma[axis], &radius);
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
      cudaFree (d_taps);
      d_taps = NULL;
      SV_CUDA_CHECK (cudaMalloc (&d_taps, (radius + 1) * sizeof (double)));
      SV_CUDA_CHECK (cudaMemcpyAsync (d_taps, taps, (radius + 1) * sizeof (double),
                                      cudaMemcpyHostToDevice, self->stream));
      SV_CUDA_CHECK (sv_cuda_gaussian_axis (self->d_image, d_tmp, dims, nc, axis, d_taps, radius,
                                            self->stream));
      swap = self->d_image;
      self->d_image = d_tmp;
      d_tmp = swap;
    }

  SV_CUDA_CHECK (
      sv_cuda_max_abs (self->d_image, n, nc, self->d_mask, self->d_max_abs, self->stream));
  SV_CUDA_CHECK (cudaMemcpyAsync (&max_bits, self->d_max_abs, sizeof max_bits,
                                  cudaMemcpyDeviceToHost, self->stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  memcpy (&max_abs, &max_bits, sizeof max_abs);

  /* The engine's context only reads the shape and max_abs. */
  prepared = g_new0 (SvPrepared, 1);
  prepared->nz = self->nz;
  prepared->ny = self->ny;
  prepared->nx = self->nx;
  prepared->nc = self->nc;
  prepared->max_abs = max_abs;
  prepared->is_lab = FALSE;
  *out_prepared = prepared;
  ok = TRUE;
out:
  cudaStreamSynchronize (self->stream);
  cudaFree (d_tmp);
  cudaFree (d_taps);
  g_free (taps);
  return ok;
}

/* Runs the prepare stage unless the cached image still holds. Rescale and
 * smoothing run on the device; 2D colour images that need Lab run the CPU
 * reference's sv_prepare on the host (exactly its bits: rgb2lab uses libm's
 * pow) and upload the result. */
static gboolean
ensure_prepared (SvCudaBackend *self, const SvSlicParams *params, int n_threads, gboolean *reused,
                 GError **error)
{
  SvPrepared *prepared = NULL;
  gboolean lab;

  if (self->prepared != NULL && sv_slic_params_same_prepare (&self->prepared_params, params))
    {
      *reused = TRUE;
      return TRUE;
    }
  *reused = FALSE;
  g_clear_pointer (&self->prepared, sv_prepared_free);

  if (params->convert2lab == SV_CONVERT2LAB_YES && self->nc != 3)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "Lab colorspace conversion requires a RGB image (3 channels); "
                   "this image has %u channel%s",
                   self->nc, self->nc == 1 ? "" : "s");
      return FALSE;
    }
  lab = params->convert2lab == SV_CONVERT2LAB_YES
        || (params->convert2lab == SV_CONVERT2LAB_AUTO && self->nz == 1 && self->nc == 3);
  if (!lab)
    {
      if (!prepare_on_device (self, params, &prepared, error))
        return FALSE;
      self->prepared = prepared;
      self->prepared_params = *params;
      return TRUE;
    }

  if (!ensure_host_volume (self, error))
    return FALSE;
  prepared = sv_prepare (self->volume, self->mask, params, n_threads, error);
  if (prepared == NULL)
    return FALSE;
  if (self->n > 0)
    {
      SV_CUDA_CHECK (cudaMemcpyAsync (self->d_image, prepared->data,
                                      self->n * self->nc * sizeof (float), cudaMemcpyHostToDevice,
                                      self->stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
    }
  g_clear_pointer (&prepared->data, g_free);
  self->prepared = prepared;
  self->prepared_params = *params;
  return TRUE;

out:
  sv_prepared_free (prepared);
  return FALSE;
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

/* n_iter iterations with progress reports and cancellation between them. */
static gboolean
iterate (SvCudaBackend *self, const SvCudaIter &it, int n_iter, guint *done, guint n_total,
         const SvRunControl *control, GError **error)
{
  gboolean watch = control != NULL && (control->progress != NULL || control->cancellable != NULL);

  for (int i = 0; i < n_iter; i++)
    {
      if (control != NULL && g_cancellable_set_error_if_cancelled (control->cancellable, error))
        return FALSE;
      if (!iterate_once (self, it, error))
        return FALSE;
      (*done)++;
      if (watch)
        {
          /* Progress means the iteration is done, and a cancel must not
           * wait for a queue of later ones. */
          SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
          if (control->progress != NULL)
            control->progress (SV_STAGE_ITERATE, *done, n_total, control->user_data);
        }
    }
  return TRUE;
out:
  return FALSE;
}

static void
report (const SvRunControl *control, SvStage stage, guint i, guint n)
{
  if (control != NULL && control->progress != NULL)
    control->progress (stage, i, n, control->user_data);
}

static gboolean
cuda_run (gpointer data, const SvSlicParams *params, const SvRunControl *control, SvRunStats *stats,
          GError **error)
{
  SvCudaBackend *self = (SvCudaBackend *)data;
  SvSeeds seeds;
  SvClusters clusters;
  SvSlicContext ctx;
  SvCudaIter it;
  gboolean ok = FALSE, reused = FALSE;
  guint shape[3] = { 0, 0, 0 };
  int n_threads = control != NULL ? control->n_threads : 0;
  int stop_after = control != NULL ? control->stop_after_iteration : -1;
  int n_iter = 0;
  gboolean connect = FALSE;
  guint done = 0, n_total = 0;
  gsize k = 0, cells = 0;
  gint32 *host_in = NULL, *host_out = NULL;
  uint8_t *host_used = NULL;
  gint64 n_labels = 0;
  gint64 t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  float *host_centres = NULL;
  uint8_t *host_alive = NULL;

  g_return_val_if_fail (params != NULL, FALSE);
  memset (&seeds, 0, sizeof seeds);
  memset (&clusters, 0, sizeof clusters);
  if (stats != NULL)
    memset (stats, 0, sizeof *stats);
  if (!self->have_volume)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA, "no volume is loaded");
      return FALSE;
    }
  if (!sv_slic_params_validate (params, error))
    return FALSE;
  /* Teaching mode: the state after n iterations, before connectivity. */
  connect = params->enforce_connectivity && stop_after < 0;

  t0 = g_get_monotonic_time ();
  report (control, SV_STAGE_PREPARE, 0, 0);
  if (!ensure_prepared (self, params, n_threads, &reused, error))
    goto out;
  t1 = g_get_monotonic_time ();
  memset (&self->times, 0, sizeof self->times);
  self->times.prepare_ms = (double)(t1 - t0) / 1000.0;
  if (control != NULL && g_cancellable_set_error_if_cancelled (control->cancellable, error))
    goto out;

  shape[0] = self->nz;
  shape[1] = self->ny;
  shape[2] = self->nx;
  if (self->mask != NULL ? !sv_seeds_mask (shape, self->mask, params->n_segments, &seeds, error)
                         : !sv_seeds_grid (shape, params->n_segments, &seeds, error))
    goto out;
  if (!sv_clusters_init (&clusters, &seeds, self->nc, error))
    goto out;
  sv_slic_context_init (&ctx, self->prepared, self->mask, &seeds, params, n_threads);
  k = seeds.n;

  memset (&it, 0, sizeof it);
  it.nz = (int)self->nz;
  it.ny = (int)self->ny;
  it.nx = (int)self->nx;
  it.nc = (int)self->nc;
  it.n = (long long)self->n;
  it.ratio = ctx.ratio;
  it.spatial_weight = ctx.spatial_weight;
  it.sz = ctx.spacing[0];
  it.sy = ctx.spacing[1];
  it.sx = ctx.spacing[2];
  for (int a = 0; a < 3; a++)
    {
      int dim = a == 0 ? it.nz : a == 1 ? it.ny : it.nx;
      it.wstep[a] = MAX (ctx.window_step[a], 1);
      it.ncell[a] = MAX ((dim + it.wstep[a] - 1) / it.wstep[a], 1);
    }
  it.slic_zero = ctx.slic_zero ? 1 : 0;
  it.ignore_colour = 0;
  it.colour_shift = ctx.colour_shift;
  it.k = (int)k;
  cells = (gsize)it.ncell[0] * it.ncell[1] * it.ncell[2];

  if (!ensure_k_buffers (self, k, self->nc, cells, error))
    goto out;
  if (k > 0)
    {
      SV_CUDA_CHECK (cudaMemcpyAsync (self->d_centres, clusters.centres,
                                      k * (3 + self->nc) * sizeof (float), cudaMemcpyHostToDevice,
                                      self->stream));
      SV_CUDA_CHECK (
          cudaMemcpyAsync (self->d_alive, clusters.alive, k, cudaMemcpyHostToDevice, self->stream));
      SV_CUDA_CHECK (cudaMemcpyAsync (self->d_max_dist, clusters.max_dist_colour,
                                      k * sizeof (float), cudaMemcpyHostToDevice, self->stream));
    }

  n_iter = params->max_num_iter;
  if (stop_after >= 0 && stop_after < n_iter)
    n_iter = stop_after;
  n_total = (guint)n_iter;
  if (self->mask != NULL)
    {
      /* maskSLIC: a spatial-only pass moves the seeds first, as
       * scikit-image does before the real iterations; each pass starts
       * with fresh SLIC-zero maxima. */
      SvCudaIter spatial = it;
      spatial.ignore_colour = 1;
      spatial.slic_zero = 0;
      n_total *= 2;
      if (!iterate (self, spatial, n_iter, &done, n_total, control, error))
        goto out;
      if (k > 0)
        SV_CUDA_CHECK (cudaMemcpyAsync (self->d_max_dist, clusters.max_dist_colour,
                                        k * sizeof (float), cudaMemcpyHostToDevice, self->stream));
    }
  if (!iterate (self, it, n_iter, &done, n_total, control, error))
    goto out;
  if (n_iter == 0 && self->n > 0)
    SV_CUDA_CHECK (
        cudaMemsetAsync (self->d_nearest, 0xff, self->n * sizeof (int32_t), self->stream));
  if (n_iter > 0 && k > 0)
    SV_CUDA_CHECK (sv_cuda_fill_unassigned (it, self->d_mask, self->d_centres, self->d_alive,
                                            self->d_nearest, self->stream));
  /* From here on the previous run's labels are overwritten. */
  self->have_labels = FALSE;
  self->connectivity_on_host = FALSE;
  SV_CUDA_CHECK (mark (self, 0));
  if (k > 0)
    SV_CUDA_CHECK (cudaMemsetAsync (self->d_used, 0, k, self->stream));
  SV_CUDA_CHECK (sv_cuda_labels_from_nearest ((long long)self->n, self->d_nearest,
                                              params->start_label, self->d_labels, self->d_used,
                                              self->stream));
  SV_CUDA_CHECK (mark (self, 1));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  if (self->profiling)
    self->times.labels_ms = mark_ms (self, 0, 1);
  t2 = g_get_monotonic_time ();

  if (connect && k > 0 && self->n > 0)
    {
      gint64 min_size = 0, max_size = 0;
      gboolean handled = FALSE;
      bool on_device = false;
      long long n_device = 0;
      sv_connectivity_sizes (self->n_mask_in, k, params->min_size_factor, params->max_size_factor,
                             &min_size, &max_size);
      if (!ensure_conn_buffers (self, error))
        goto out;
      SV_CUDA_CHECK (mark (self, 0));
      SV_CUDA_CHECK (sv_cuda_connectivity (self->d_labels, (int)self->nz, (int)self->ny,
                                           (int)self->nx, min_size, max_size, params->start_label,
                                           &self->conn, self->stream, &n_device, &on_device));
      handled = on_device;
      SV_CUDA_CHECK (mark (self, 1));
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
      if (self->profiling)
        self->times.connect_device_ms = mark_ms (self, 0, 1);
      self->connectivity_on_host = !handled;
      if (handled)
        n_labels = n_device;
    }
  if (connect && k > 0 && self->n > 0 && self->connectivity_on_host)
    {
      /* Volumes too large for the device path's 32-bit indices run the
       * sequential rule on the host. */
      gint64 min_size = 0, max_size = 0;
      sv_connectivity_sizes (self->n_mask_in, k, params->min_size_factor, params->max_size_factor,
                             &min_size, &max_size);
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
      n_labels = sv_connectivity_enforce (host_in, self->nz, self->ny, self->nx, min_size, max_size,
                                          params->start_label, host_out);
      SV_CUDA_CHECK (cudaMemcpyAsync (self->d_labels, host_out, self->n * sizeof (gint32),
                                      cudaMemcpyHostToDevice, self->stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
    }
  if (!connect && k > 0)
    {
      host_used = (uint8_t *)g_malloc (k);
      SV_CUDA_CHECK (
          cudaMemcpyAsync (host_used, self->d_used, k, cudaMemcpyDeviceToHost, self->stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
      for (gsize i = 0; i < k; i++)
        n_labels += host_used[i] != 0;
    }
  t3 = g_get_monotonic_time ();
  self->times.connect_ms = (double)(t3 - t2) / 1000.0;
  self->times.iterations = done;
  self->times.connectivity_on_host = self->connectivity_on_host;
  if (connect)
    report (control, SV_STAGE_CONNECT, done, done);

  /* The centres as get_centres returns them, NaN for dead clusters. */
  g_clear_pointer (&self->centres, g_free);
  self->centres = g_new (float, MAX (k, 1) * 3);
  if (k > 0)
    {
      gsize stride = 3 + self->nc;
      host_centres = (float *)g_malloc (k * stride * sizeof (float));
      host_alive = (uint8_t *)g_malloc (k);
      SV_CUDA_CHECK (cudaMemcpyAsync (host_centres, self->d_centres, k * stride * sizeof (float),
                                      cudaMemcpyDeviceToHost, self->stream));
      SV_CUDA_CHECK (
          cudaMemcpyAsync (host_alive, self->d_alive, k, cudaMemcpyDeviceToHost, self->stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
      for (gsize i = 0; i < k; i++)
        for (int a = 0; a < 3; a++)
          self->centres[i * 3 + a] = host_alive[i] ? host_centres[i * stride + a] : NAN;
    }

  self->have_labels = TRUE;
  self->last_k = k;
  if (stats != NULL)
    {
      stats->n_clusters = k;
      stats->n_labels = (gsize)n_labels;
      stats->iterations = done;
      stats->seconds_prepare = (double)(t1 - t0) / G_USEC_PER_SEC;
      stats->seconds_iterate = (double)(t2 - t1) / G_USEC_PER_SEC;
      stats->seconds_connect = (double)(t3 - t2) / G_USEC_PER_SEC;
      stats->prepare_reused = reused;
    }
  report (control, SV_STAGE_DONE, done, done);
  ok = TRUE;

out:
  if (!ok)
    /* Leave nothing queued behind a failed or cancelled run. */
    cudaStreamSynchronize (self->stream);
  g_free (host_in);
  g_free (host_out);
  g_free (host_used);
  g_free (host_centres);
  g_free (host_alive);
  sv_clusters_clear (&clusters);
  sv_seeds_clear (&seeds);
  return ok;
}

static gboolean
no_labels (GError **error)
{
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
               "there are no labels yet: run SLIC first");
  return FALSE;
}

static gboolean
cuda_get_labels (gpointer data, gint32 *labels, GError **error)
{
  SvCudaBackend *self = (SvCudaBackend *)data;
  if (!self->have_labels)
    return no_labels (error);
  if (self->n == 0)
    return TRUE;
  SV_CUDA_CHECK (staged_copy (self, labels, self->d_labels, self->n * sizeof (gint32), FALSE));
  return TRUE;
out:
  return FALSE;
}

static gboolean
slice_size (SvCudaBackend *self, SvAxis axis, guint index, gsize *size, GError **error)
{
  guint limit = axis == SV_AXIS_XY ? self->nz : axis == SV_AXIS_XZ ? self->ny : self->nx;
  if (index >= limit)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "slice %u is out of range: the volume has %u along this axis", index, limit);
      return FALSE;
    }
  *size = axis == SV_AXIS_XY   ? (gsize)self->ny * self->nx
          : axis == SV_AXIS_XZ ? (gsize)self->nz * self->nx
                               : (gsize)self->nz * self->ny;
  return TRUE;
}

gboolean
sv_cuda_backend_copy_slice_device (gpointer backend, SvAxis axis, guint index, gint32 *device_dst,
                                   GError **error)
{
  SvCudaBackend *self = (SvCudaBackend *)backend;
  gsize size = 0;
  if (!self->have_labels)
    return no_labels (error);
  if (!slice_size (self, axis, index, &size, error))
    return FALSE;
  SV_CUDA_CHECK (sv_cuda_extract_slice (self->d_labels, (int)self->nz, (int)self->ny, (int)self->nx,
                                        axis, (int)index, device_dst, self->stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  return TRUE;
out:
  return FALSE;
}

static gboolean
cuda_get_slice (gpointer data, SvAxis axis, guint index, gint32 *out_slice, GError **error)
{
  SvCudaBackend *self = (SvCudaBackend *)data;
  gsize size = 0;
  if (!self->have_labels)
    return no_labels (error);
  if (!slice_size (self, axis, index, &size, error))
    return FALSE;
  SV_CUDA_CHECK (sv_cuda_extract_slice (self->d_labels, (int)self->nz, (int)self->ny, (int)self->nx,
                                        axis, (int)index, self->d_slice, self->stream));
  SV_CUDA_CHECK (cudaMemcpyAsync (out_slice, self->d_slice, size * sizeof (gint32),
                                  cudaMemcpyDeviceToHost, self->stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  return TRUE;
out:
  return FALSE;
}

static gboolean
cuda_get_centres (gpointer data, float *zyx, gsize *k, GError **error)
{
  SvCudaBackend *self = (SvCudaBackend *)data;

  if (!self->have_labels)
    return no_labels (error);
  *k = self->last_k;
  if (zyx != NULL && self->last_k > 0)
    memcpy (zyx, self->centres, self->last_k * 3 * sizeof (float));
  return TRUE;
}

const gint32 *
sv_cuda_backend_device_labels (gpointer backend, guint shape_zyx[3])
{
  SvCudaBackend *self = (SvCudaBackend *)backend;
  if (shape_zyx != NULL)
    {
      shape_zyx[0] = self->nz;
      shape_zyx[1] = self->ny;
      shape_zyx[2] = self->nx;
    }
  return self->have_labels ? self->d_labels : NULL;
}

gboolean
sv_cuda_backend_store_labels_device (gpointer backend, void *device_dst, gboolean wide,
                                     gpointer stream, GError **error)
{
  SvCudaBackend *self = (SvCudaBackend *)backend;
  cudaEvent_t done = NULL;
  gboolean ok = FALSE;

  if (!self->have_labels)
    return no_labels (error);
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
sv_cuda_backend_connectivity_on_host (gpointer backend)
{
  return ((SvCudaBackend *)backend)->connectivity_on_host;
}

gboolean
sv_cuda_backend_set_profiling (gpointer backend, gboolean enable, GError **error)
{
  SvCudaBackend *self = (SvCudaBackend *)backend;
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
sv_cuda_backend_get_stage_times (gpointer backend, SvCudaStageTimes *times)
{
  *times = ((SvCudaBackend *)backend)->times;
}

gpointer
sv_cuda_backend_stream (gpointer backend)
{
  return ((SvCudaBackend *)backend)->stream;
}

/* No take_labels: the labels live on the device, and get_labels copies
 * them to the host. */
static const SvBackendClass cuda_class = {
  "cuda",   cuda_create,     cuda_destroy,   cuda_set_volume,
  cuda_run, cuda_get_labels, cuda_get_slice, cuda_get_centres,
  NULL,
};

const SvBackendClass *
sv_backend_cuda_class (void)
{
  return &cuda_class;
}

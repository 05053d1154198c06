/* Supervox CUDA–GL interop: published device labels and a GL pixel buffer
 * that a slice kernel fills (see sv-cuda-gl.h). */
#define G_LOG_DOMAIN "sv-cuda-gl"

#include "sv-cuda-gl.h"

#include <string.h>

#include <cuda_runtime.h>
/* cuda_gl_interop.h needs GL's types; epoxy's header stands in for the
 * system's GL/gl.h (and keeps it out) where the GUI's loader is installed. */
#if __has_include(<epoxy/gl.h>)
#include <epoxy/gl.h>
#endif
#include <cuda_gl_interop.h>

#include "cuda-check.h"
#include "supervox/sv-error.h"
#include "sv-cuda.h"

/* ---- the slice kernel ---- */

/* One thread per texel (i, j) of the output: i runs along the row, j down
 * the rows. Texel (p, q) of the slice as sv_labels_get_slice lays it out is
 * (i, j), or (j, i) when `transposed`. */
__global__ static void
slice_to_buffer_kernel (const gint32 *__restrict__ labels, int nz, int ny, int nx, int axis,
                        int index, int transposed, int width, int height, gint32 *__restrict__ out)
{
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  int j = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  int p = transposed ? j : i, q = transposed ? i : j;
  size_t src;

  if (i >= width || j >= height)
    return;
  if (axis == SV_AXIS_XY)
    src = ((size_t)index * ny + q) * nx + p;
  else if (axis == SV_AXIS_XZ)
    src = ((size_t)q * ny + index) * nx + p;
  else
    src = ((size_t)q * ny + p) * nx + index;
  out[(size_t)j * width + i] = labels[src];
}

/* Slice width, height and the number of slices along the axis. */
static gboolean
slice_geometry (const guint shape[3], SvAxis axis, guint index, guint *width, guint *height,
                GError **error)
{
  guint limit;

  switch (axis)
    {
    case SV_AXIS_XY:
      *width = shape[2], *height = shape[1], limit = shape[0];
      break;
    case SV_AXIS_XZ:
      *width = shape[2], *height = shape[0], limit = shape[1];
      break;
    case SV_AXIS_YZ:
      *width = shape[1], *height = shape[0], limit = shape[2];
      break;
    default:
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM, "unknown axis %d",
                   (int)axis);
      return FALSE;
    }
  if (index >= limit)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "slice %u is out of range: the volume has %u along that axis", index, limit);
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_cuda_gl_usable (GError **error)
{
  unsigned int n_gl = 0;
  int devices[8], current = 0;
  cudaError_t err;

  if (!sv_cuda_device_available (error))
    return FALSE;
  /* Lists the CUDA devices that run the current GL context; none (or an
   * error) means GL is elsewhere: another GPU, software or a remote X. */
  err = cudaGLGetDevices (&n_gl, devices, G_N_ELEMENTS (devices), cudaGLDeviceListAll);
  if (err != cudaSuccess || n_gl == 0)
    {
      /* So that a later cudaGetLastError does not report this one. */
      (void)cudaGetLastError ();
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "OpenGL does not run on a CUDA device (%s)",
                   err != cudaSuccess ? cudaGetErrorString (err) : "no device listed");
      return FALSE;
    }
  /* The backend computes on the current device; the pixel buffer must live
   * there too, or every slice would cross between GPUs. */
  if (cudaGetDevice (&current) != cudaSuccess)
    current = 0;
  for (unsigned int i = 0; i < MIN (n_gl, G_N_ELEMENTS (devices)); i++)
    if (devices[i] == current)
      return TRUE;
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
               "OpenGL runs on CUDA device %d, the backend on device %d", devices[0], current);
  return FALSE;
}

/* ---- published labels ---- */

struct _SvCudaLabels
{
  gint ref;
  gint32 *data; /* device */
  guint shape[3];
  cudaEvent_t ready;
};

/* The shown result, the one the quality worker measures and the next run's:
 * a result that finds them all held keeps host labels. */
#define POOL_SIZE 3

struct _SvCudaLabelsPool
{
  GMutex lock;
  SvCudaLabels *slots[POOL_SIZE]; /* the pool holds one reference on each */
};

SvCudaLabelsPool *
sv_cuda_labels_pool_new (void)
{
  SvCudaLabelsPool *pool = g_new0 (SvCudaLabelsPool, 1);
  g_mutex_init (&pool->lock);
  return pool;
}

void
sv_cuda_labels_pool_free (SvCudaLabelsPool *pool)
{
  if (!pool)
    return;
  for (int i = 0; i < POOL_SIZE; i++)
    g_clear_pointer (&pool->slots[i], sv_cuda_labels_unref);
  g_mutex_clear (&pool->lock);
  g_free (pool);
}

SvCudaLabels *
sv_cuda_labels_ref (SvCudaLabels *labels)
{
  g_return_val_if_fail (labels != NULL, NULL);
  g_atomic_int_inc (&labels->ref);
  return labels;
}

void
sv_cuda_labels_unref (SvCudaLabels *labels)
{
  if (!labels || !g_atomic_int_dec_and_test (&labels->ref))
    return;
  /* cudaFree waits for the device, so no copy from it is still in flight. */
  if (labels->data)
    cudaFree (labels->data);
  if (labels->ready)
    cudaEventDestroy (labels->ready);
  g_free (labels);
}

static SvCudaLabels *
labels_new (GError **error)
{
  SvCudaLabels *labels = g_new0 (SvCudaLabels, 1);

  labels->ref = 1;
  SV_CUDA_CHECK (cudaEventCreateWithFlags (&labels->ready, cudaEventDisableTiming));
  return labels;
out:
  g_free (labels);
  return NULL;
}

SvCudaLabels *
sv_cuda_labels_publish (SvCudaLabelsPool *pool, SvBackend *backend, GError **error)
{
  SvCudaLabels *slot = NULL;
  const gint32 *src;
  guint shape[3];
  gsize n;
  cudaStream_t stream;

  g_return_val_if_fail (pool != NULL, NULL);
  g_return_val_if_fail (backend != NULL, NULL);

  src = sv_backend_get_device_labels (backend, shape);
  if (!src)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                           "no labels on the device: the backend has not run yet");
      return NULL;
    }
  n = (gsize)shape[0] * shape[1] * shape[2];
  stream = (cudaStream_t)sv_backend_get_device_stream (backend);

  g_mutex_lock (&pool->lock);
  /* A slot whose only reference is the pool's is held by no result: the
   * renderer cannot be reading it, so it may be overwritten. */
  for (int i = 0; i < POOL_SIZE && !slot; i++)
    {
      if (!pool->slots[i])
        {
          pool->slots[i] = labels_new (error);
          if (!pool->slots[i])
            goto out;
        }
      if (g_atomic_int_get (&pool->slots[i]->ref) == 1)
        slot = pool->slots[i];
    }
  if (!slot)
    goto out;

  if (slot->data && (gsize)slot->shape[0] * slot->shape[1] * slot->shape[2] != n)
    {
      SV_CUDA_CHECK (cudaFree (slot->data));
      slot->data = NULL;
    }
  if (!slot->data)
    SV_CUDA_CHECK (cudaMalloc ((void **)&slot->data, MAX (n, 1) * sizeof (gint32)));
  memcpy (slot->shape, shape, sizeof shape);
  /* On the backend's stream: after the run that wrote `src`, before any
   * later run overwrites it. */
  SV_CUDA_CHECK (
      cudaMemcpyAsync (slot->data, src, n * sizeof (gint32), cudaMemcpyDeviceToDevice, stream));
  SV_CUDA_CHECK (cudaEventRecord (slot->ready, stream));
  sv_cuda_labels_ref (slot);
  g_mutex_unlock (&pool->lock);
  return slot;

out:
  g_mutex_unlock (&pool->lock);
  return NULL;
}

const gint32 *
sv_cuda_labels_get_data (SvCudaLabels *labels, guint shape_zyx[3])
{
  if (shape_zyx)
    memcpy (shape_zyx, labels->shape, sizeof labels->shape);
  return labels->data;
}

gpointer
sv_cuda_labels_get_ready_event (SvCudaLabels *labels)
{
  return (gpointer)labels->ready;
}

gboolean
sv_cuda_labels_wait (SvCudaLabels *labels, GError **error)
{
  SV_CUDA_CHECK (cudaEventSynchronize (labels->ready));
  return TRUE;
out:
  return FALSE;
}

/* Copies `n` labels from `offset` after the labels' ready event, on the
 * calling thread's own stream: a probe neither waits for a run that is
 * going on the backend's stream nor races the publishing copy. */
static gboolean
labels_copy_to_host (SvCudaLabels *labels, gsize offset, gsize n, gint32 *out, GError **error)
{
  SV_CUDA_CHECK (cudaStreamWaitEvent (cudaStreamPerThread, labels->ready, 0));
  SV_CUDA_CHECK (cudaMemcpyAsync (out, labels->data + offset, n * sizeof (gint32),
                                  cudaMemcpyDeviceToHost, cudaStreamPerThread));
  SV_CUDA_CHECK (cudaStreamSynchronize (cudaStreamPerThread));
  return TRUE;
out:
  return FALSE;
}

gboolean
sv_cuda_labels_download (SvCudaLabels *labels, gint32 *out, GError **error)
{
  g_return_val_if_fail (labels != NULL && out != NULL, FALSE);
  return labels_copy_to_host (
      labels, 0, (gsize)labels->shape[0] * labels->shape[1] * labels->shape[2], out, error);
}

gboolean
sv_cuda_labels_read (SvCudaLabels *labels, gsize index, gint32 *label, GError **error)
{
  g_return_val_if_fail (labels != NULL && label != NULL, FALSE);
  if (index >= (gsize)labels->shape[0] * labels->shape[1] * labels->shape[2])
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "voxel %" G_GSIZE_FORMAT " is outside the labels", index);
      return FALSE;
    }
  return labels_copy_to_host (labels, index, 1, label, error);
}

static gboolean
reader_download (gpointer device_data, gint32 *labels, GError **error)
{
  return sv_cuda_labels_download ((SvCudaLabels *)device_data, labels, error);
}

static gboolean
reader_read (gpointer device_data, gsize index, gint32 *label, GError **error)
{
  return sv_cuda_labels_read ((SvCudaLabels *)device_data, index, label, error);
}

static const SvDeviceLabelsReader labels_reader = { reader_download, reader_read };

gboolean
sv_cuda_labels_attach (SvCudaLabelsPool *pool, SvBackend *backend, SvJobResult *result,
                       GError **error)
{
  SvCudaLabels *labels;

  g_return_val_if_fail (result != NULL && result->device_data == NULL, FALSE);
  labels = sv_cuda_labels_publish (pool, backend, error);
  if (!labels)
    return FALSE;
  result->device_data = labels;
  result->device_data_free = (GDestroyNotify)sv_cuda_labels_unref;
  result->device_labels = &labels_reader;
  return TRUE;
}

/* ---- the registered pixel buffer ---- */

struct _SvCudaGlBuffer
{
  cudaGraphicsResource_t resource;
  cudaStream_t stream;
};

SvCudaGlBuffer *
sv_cuda_gl_buffer_register (guint gl_buffer, GError **error)
{
  SvCudaGlBuffer *buffer = g_new0 (SvCudaGlBuffer, 1);

  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&buffer->stream, cudaStreamNonBlocking));
  /* Write-discard: every copy rewrites the slice, so CUDA need not keep the
   * buffer's previous contents. */
  SV_CUDA_CHECK (cudaGraphicsGLRegisterBuffer (&buffer->resource, gl_buffer,
                                               cudaGraphicsRegisterFlagsWriteDiscard));
  return buffer;
out:
  if (buffer->stream)
    cudaStreamDestroy (buffer->stream);
  g_free (buffer);
  return NULL;
}

void
sv_cuda_gl_buffer_unregister (SvCudaGlBuffer *buffer)
{
  cudaError_t err;

  if (!buffer)
    return;
  err = cudaGraphicsUnregisterResource (buffer->resource);
  if (err != cudaSuccess)
    g_warning ("cannot unregister the label pixel buffer: %s", cudaGetErrorString (err));
  cudaStreamDestroy (buffer->stream);
  g_free (buffer);
}

static gboolean
copy_slice (SvCudaGlBuffer *buffer, const gint32 *device_labels, const guint shape_zyx[3],
            SvAxis axis, guint index, gboolean transposed, gpointer stream, gpointer ready_event,
            GError **error)
{
  cudaStream_t s = stream ? (cudaStream_t)stream : buffer->stream;
  gboolean mapped = FALSE, ok = FALSE;
  guint width, height;
  void *dst = NULL;
  size_t size = 0;
  dim3 block (32, 8);

  g_return_val_if_fail (buffer != NULL, FALSE);
  g_return_val_if_fail (device_labels != NULL, FALSE);

  if (!slice_geometry (shape_zyx, axis, index, &width, &height, error))
    return FALSE;
  if (transposed)
    {
      guint t = width;
      width = height;
      height = t;
    }
  if (ready_event)
    SV_CUDA_CHECK (cudaStreamWaitEvent (s, (cudaEvent_t)ready_event, 0));
  SV_CUDA_CHECK (cudaGraphicsMapResources (1, &buffer->resource, s));
  mapped = TRUE;
  SV_CUDA_CHECK (cudaGraphicsResourceGetMappedPointer (&dst, &size, buffer->resource));
  if (size < (size_t)width * height * sizeof (gint32))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "the label pixel buffer holds %zu bytes, the slice needs %zu", size,
                   (size_t)width * height * sizeof (gint32));
      goto out;
    }
  {
    dim3 grid ((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    slice_to_buffer_kernel<<<grid, block, 0, s>>> (
        device_labels, (int)shape_zyx[0], (int)shape_zyx[1], (int)shape_zyx[2], (int)axis,
        (int)index, transposed ? 1 : 0, (int)width, (int)height, (gint32 *)dst);
  }
  SV_CUDA_CHECK (cudaGetLastError ());
  ok = TRUE;
out:
  if (mapped)
    {
      /* Unmapping on the stream makes GL wait for the kernel. */
      cudaError_t err = cudaGraphicsUnmapResources (1, &buffer->resource, s);
      if (err != cudaSuccess && ok)
        {
          sv_cuda_set_error (error, err, "cudaGraphicsUnmapResources");
          ok = FALSE;
        }
    }
  return ok;
}

gboolean
sv_cuda_gl_buffer_copy_slice (SvCudaGlBuffer *buffer, const gint32 *device_labels,
                              const guint shape_zyx[3], SvAxis axis, guint index, gpointer stream,
                              gpointer ready_event, GError **error)
{
  return copy_slice (buffer, device_labels, shape_zyx, axis, index, FALSE, stream, ready_event,
                     error);
}

gboolean
sv_cuda_gl_buffer_copy_labels_slice (SvCudaGlBuffer *buffer, SvCudaLabels *labels, SvAxis axis,
                                     guint index, GError **error)
{
  g_return_val_if_fail (labels != NULL, FALSE);
  return copy_slice (buffer, labels->data, labels->shape, axis, index, FALSE, NULL, labels->ready,
                     error);
}

gboolean
sv_cuda_gl_buffer_copy_labels_slice_transposed (SvCudaGlBuffer *buffer, SvCudaLabels *labels,
                                                SvAxis axis, guint index, GError **error)
{
  g_return_val_if_fail (labels != NULL, FALSE);
  return copy_slice (buffer, labels->data, labels->shape, axis, index, TRUE, NULL, labels->ready,
                     error);
}

/* Supervox CUDA backend: device discovery and memory checks. */
#define G_LOG_DOMAIN "sv-cuda"

#include <stdlib.h>
#include <string.h>

#include "cuda-check.h"
#include "cuda-kernels.h"
#include "supervox/sv-error.h"
#include "sv-cuda.h"

/* Kept free on the device for the runtime, cub and other users. */
#define SV_CUDA_HEADROOM ((size_t)64 << 20)

gboolean
sv_cuda_device_available (GError **error)
{
  int count = 0;
  cudaError_t err = cudaGetDeviceCount (&count);
  if (err != cudaSuccess)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND, "no CUDA device: %s",
                   cudaGetErrorString (err));
      return FALSE;
    }
  if (count == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND, "no CUDA device: %s",
                   cudaGetErrorString (cudaErrorNoDevice));
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_cuda_mem_get_info (gsize *free_bytes, gsize *total_bytes, GError **error)
{
  size_t f = 0, t = 0;
  SV_CUDA_CHECK (cudaMemGetInfo (&f, &t));
  if (free_bytes != NULL)
    *free_bytes = f;
  if (total_bytes != NULL)
    *total_bytes = t;
  return TRUE;
out:
  return FALSE;
}

gboolean
sv_cuda_get_device (int *device, GError **error)
{
  SV_CUDA_CHECK (cudaGetDevice (device));
  return TRUE;
out:
  return FALSE;
}

gboolean
sv_cuda_set_device (int device, GError **error)
{
  SV_CUDA_CHECK (cudaSetDevice (device));
  return TRUE;
out:
  return FALSE;
}

gboolean
sv_cuda_pointer_device (const void *pointer, const char *what, int *device, GError **error)
{
  cudaPointerAttributes attr;

  SV_CUDA_CHECK (cudaPointerGetAttributes (&attr, pointer));
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    {
      /* Host memory here would be read by the kernels as device addresses. */
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s is not in GPU memory (a host pointer given to the device entry)", what);
      return FALSE;
    }
  *device = attr.device;
  return TRUE;
out:
  return FALSE;
}

/* Fails with SV_ENGINE_ERROR_NO_MEMORY, in MiB, when `bytes` more would not
 * fit next to what is in use. */
gboolean
sv__cuda_check_free (size_t bytes, const char *what, GError **error)
{
  size_t f = 0, t = 0;
  const char *limit = g_getenv ("SV_CUDA_MEMORY_LIMIT_MIB");
  SV_CUDA_CHECK (cudaMemGetInfo (&f, &t));
  /* A cap on what this process may use, for GPUs shared with other work. */
  if (limit != NULL && *limit != '\0')
    {
      guint64 cap = g_ascii_strtoull (limit, NULL, 10) << 20;
      if (cap < f)
        f = (size_t)cap;
    }
  if (bytes + SV_CUDA_HEADROOM > f)
    {
      /* The reserve counts as needed: it is what the runtime takes on top. */
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "%s needs %" G_GSIZE_FORMAT " MiB of GPU memory, %" G_GSIZE_FORMAT " MiB free",
                   what, (gsize)((bytes + SV_CUDA_HEADROOM + (1 << 20) - 1) >> 20),
                   (gsize)(f >> 20));
      return FALSE;
    }
  return TRUE;
out:
  return FALSE;
}

static int
compare_floats (const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

gboolean
sv_cuda_copy_bandwidth (gsize bytes, double *gbytes_per_s, GError **error)
{
  void *src = NULL, *dst = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  float ms[7];
  gboolean ok = FALSE;

  if (!sv__cuda_check_free (2 * bytes, "the bandwidth measurement", error))
    return FALSE;
  SV_CUDA_CHECK (cudaMalloc (&src, bytes));
  SV_CUDA_CHECK (cudaMalloc (&dst, bytes));
  SV_CUDA_CHECK (cudaMemset (src, 1, bytes));
  SV_CUDA_CHECK (cudaEventCreate (&e0));
  SV_CUDA_CHECK (cudaEventCreate (&e1));
  SV_CUDA_CHECK (cudaMemcpy (dst, src, bytes, cudaMemcpyDeviceToDevice));
  for (int i = 0; i < 7; i++)
    {
      SV_CUDA_CHECK (cudaEventRecord (e0, 0));
      SV_CUDA_CHECK (cudaMemcpyAsync (dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
      SV_CUDA_CHECK (cudaEventRecord (e1, 0));
      SV_CUDA_CHECK (cudaEventSynchronize (e1));
      SV_CUDA_CHECK (cudaEventElapsedTime (&ms[i], e0, e1));
    }
  qsort (ms, 7, sizeof ms[0], compare_floats);
  /* A copy reads and writes every byte. */
  *gbytes_per_s = 2.0 * (double)bytes / (ms[3] * 1e-3) / 1e9;
  ok = TRUE;
out:
  if (e0 != NULL)
    cudaEventDestroy (e0);
  if (e1 != NULL)
    cudaEventDestroy (e1);
  cudaFree (src);
  cudaFree (dst);
  return ok;
}

gboolean
sv_cuda_issue_rate (SvCudaIssueRate *rate, GError **error)
{
  cudaDeviceProp prop;
  int device = 0, clock_khz = 0;

  memset (rate, 0, sizeof *rate);
  SV_CUDA_CHECK (cudaGetDevice (&device));
  SV_CUDA_CHECK (cudaGetDeviceProperties (&prop, device));
  SV_CUDA_CHECK (cudaDeviceGetAttribute (&clock_khz, cudaDevAttrClockRate, device));
  g_strlcpy (rate->name, prop.name, sizeof rate->name);
  rate->major = prop.major;
  rate->minor = prop.minor;
  rate->sms = prop.multiProcessorCount;
  /* GP100 (6.0) has two processing blocks per SM; Maxwell and every later
   * architecture four, one scheduler each. */
  rate->schedulers_per_sm = prop.major == 6 && prop.minor == 0 ? 2 : 4;
  rate->warp_size = prop.warpSize;
  rate->clock_hz = clock_khz * 1e3;
  rate->lane_instructions_per_s
      = (double)rate->warp_size * rate->sms * rate->schedulers_per_sm * rate->clock_hz;
  return TRUE;
out:
  return FALSE;
}

void
sv_cuda_register (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done))
    {
      sv_backend_register (sv_backend_cuda_class ());
      g_once_init_leave (&done, 1);
    }
}

int
sv_cuda_device_count (void)
{
  int count = 0;

  if (cudaGetDeviceCount (&count) != cudaSuccess)
    return 0;
  return count;
}

SvBackend *
sv_cuda_backend_new_on_device (int device, GError **error)
{
  int count = sv_cuda_device_count ();

  if (device < 0 || device >= count)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "no CUDA device %d: this machine has %d", device, count);
      return NULL;
    }
  SV_CUDA_CHECK (cudaSetDevice (device));
  /* A backend asked for by device number is CUDA's, whether or not the
   * front end registered the class for choosing by name. */
  sv_cuda_register ();
  return sv_backend_new_of_class (sv_backend_cuda_class (), error);
out:
  return NULL;
}

guint64
sv_cuda_in_memory_bytes (guint nz, guint ny, guint nx, guint nc, gboolean mask)
{
  const guint64 n = (guint64)nz * ny * nx;

  /* The volume as given and prepared, the assignment and the labels, the
   * mask, and the connectivity step's scratch. */
  return n * (8 * (guint64)nc + 8 + (mask ? 1 : 0)) + sv_cuda_connectivity_bytes ((long long)n)
         + SV_CUDA_HEADROOM;
}

guint64
sv_cuda_stream_slice_bytes (guint ny, guint nx, guint nc, gboolean mask)
{
  /* Two slab buffers: values, assignment and mask. */
  return 2 * (guint64)ny * nx * (4 * (guint64)nc + 4 + (mask ? 1 : 0));
}

guint
sv_cuda_stream_max_depth (guint64 limit, guint ny, guint nx, guint nc, gint64 n_segments,
                          gboolean mask)
{
  /* Centres, sums and bins: well under 128 bytes a segment. */
  const guint64 fixed = 128 * (guint64)MAX (n_segments, 1) + (1 << 20);
  const guint64 slice = MAX (sv_cuda_stream_slice_bytes (ny, nx, nc, mask), 1);
  guint64 depth = limit > fixed ? (limit - fixed) / slice : 1;

  return (guint)CLAMP (depth, 1, G_MAXINT32);
}

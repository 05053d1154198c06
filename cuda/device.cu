/* Supervox CUDA backend: device discovery and memory checks. */
#define G_LOG_DOMAIN "sv-cuda"

#include "cuda-check.h"
#include "error.h"
#include "sv-cuda.h"

/* Kept free on the device for the runtime, cub and other users. */
#define SV_CUDA_HEADROOM ((size_t) 64 << 20)

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

/* Fails with SV_ENGINE_ERROR_NO_MEMORY, in MiB, when `bytes` more would not
 * fit next to what is in use. */
gboolean
sv__cuda_check_free (size_t bytes, const char *what, GError **error)
{
  size_t f = 0, t = 0;
  SV_CUDA_CHECK (cudaMemGetInfo (&f, &t));
  if (bytes + SV_CUDA_HEADROOM > f)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "%s needs %" G_GSIZE_FORMAT " MiB of GPU memory, %" G_GSIZE_FORMAT
                   " MiB free",
                   what, (gsize) ((bytes + (1 << 20) - 1) >> 20), (gsize) (f >> 20));
      return FALSE;
    }
  return TRUE;
out:
  return FALSE;
}


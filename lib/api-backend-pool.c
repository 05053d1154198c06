/* libsupervox: CUDA backends kept between C API runs. A backend owns its
 * stream and the device buffers of its last volume's shape; creating one
 * and freeing it around every run costs a stream and some twenty
 * cudaMalloc/cudaFree pairs (milliseconds at 256³, more than the run at
 * small sizes). One idle backend per device is kept for the next run, which
 * reuses its buffers when the shape repeats; runs at the same time take
 * backends of their own. supervox_cuda_release_cache frees the idle ones. */
#define G_LOG_DOMAIN "sv-api"

#include "api-private.h"

#include "supervox/sv-error.h"
#include "sv-cuda.h"

#define MAX_DEVICES 64

static GMutex pool_lock;
static SvBackend *idle[MAX_DEVICES];

SvBackend *
sv_api_cuda_backend_take (GError **error)
{
  SvBackend *backend = NULL;
  int device = -1;

  if (!sv_cuda_device_available (error) || !sv_cuda_get_device (&device, error))
    return NULL;
  if (device >= 0 && device < MAX_DEVICES)
    {
      g_mutex_lock (&pool_lock);
      backend = idle[device];
      idle[device] = NULL;
      g_mutex_unlock (&pool_lock);
    }
  return backend != NULL ? backend : sv_backend_new_of_class (sv_backend_cuda_class (), error);
}

void
sv_api_backend_done (SvBackend *backend, gboolean ok)
{
  int device = -1;

  if (backend == NULL)
    return;
  /* A failed run may leave a backend half set up: the next starts afresh. */
  if (ok && !sv_backend_is_reference (backend) && sv_cuda_get_device (&device, NULL) && device >= 0
      && device < MAX_DEVICES)
    {
      g_mutex_lock (&pool_lock);
      if (idle[device] == NULL)
        {
          idle[device] = backend;
          backend = NULL;
        }
      g_mutex_unlock (&pool_lock);
    }
  sv_backend_free (backend);
}

void
supervox_cuda_release_cache (void)
{
  SvBackend *spare[MAX_DEVICES];
  int previous = -1;

  g_mutex_lock (&pool_lock);
  for (int d = 0; d < MAX_DEVICES; d++)
    {
      spare[d] = idle[d];
      idle[d] = NULL;
    }
  g_mutex_unlock (&pool_lock);
  if (!sv_cuda_get_device (&previous, NULL))
    previous = -1;
  for (int d = 0; d < MAX_DEVICES; d++)
    if (spare[d] != NULL)
      {
        /* Its stream and buffers belong to that device. */
        sv_cuda_set_device (d, NULL);
        sv_backend_free (spare[d]);
      }
  if (previous >= 0)
    sv_cuda_set_device (previous, NULL);
}

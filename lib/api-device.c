/* libsupervox: the C API's run on device pointers, through the CUDA
 * backend's device-volume entry (plain C over cuda/sv-cuda.h). */
#define G_LOG_DOMAIN "sv-api"

#include "api-private.h"

#include "sv-cuda.h"

gboolean
sv_api_run_device (const SupervoxArray *image, const SupervoxArray *mask,
                   const SvSlicParams *params, void *labels, SupervoxDtype label_dtype,
                   void *cuda_stream, const SvRunControl *control, SvRunStats *stats,
                   GError **error)
{
  SvBackend *backend = NULL;
  int previous = -1, device = -1;
  gboolean ok;

  if (!sv_cuda_device_available (error) || !sv_cuda_get_device (&previous, error))
    return FALSE;
  device = previous;
  /* The run goes where the volume is, whichever device the calling thread
   * has current (a CuPy array on device 1 from a thread that never chose
   * one), and the thread's device is left as it was. */
  if (image->data != NULL && !sv_cuda_pointer_device (image->data, "image", &device, error))
    return FALSE;
  if (device != previous && !sv_cuda_set_device (device, error))
    return FALSE;
  backend = sv_api_cuda_backend_take (error);
  ok = backend != NULL
       && sv_cuda_backend_set_volume_device (backend, image, sv_api_sample_type (image->dtype),
                                             mask, cuda_stream, error)
       && sv_backend_run (backend, params, control, stats, error)
       && sv_cuda_backend_store_labels_device (backend, labels, label_dtype == SUPERVOX_INT64,
                                               cuda_stream, error);
  sv_api_backend_done (backend, ok);
  if (device != previous)
    sv_cuda_set_device (previous, NULL);
  return ok;
}

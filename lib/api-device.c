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
  g_autoptr (SvBackend) backend = sv_backend_new ("cuda", error);

  if (backend == NULL)
    return FALSE;
  return sv_cuda_backend_set_volume_device (backend, image, mask, cuda_stream, error)
         && sv_backend_run (backend, params, control, stats, error)
         && sv_cuda_backend_store_labels_device (backend, labels, label_dtype == SUPERVOX_INT64,
                                                 cuda_stream, error);
}

/* libsupervox: SLIC from a TIFF file into a label TIFF (supervox_slic_file),
 * in memory when the run fits there and slab by slab when it does not, as
 * supervox-cli slic chooses, with the same bytes either way. */
#define G_LOG_DOMAIN "supervox"

#include "api-private.h"

#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io.h"
#include "supervox/sv-memory.h"
#include "supervox/sv-stream.h"
#include "sv-config.h"

#if SV_HAVE_CUDA
#include "sv-cuda.h"
#endif

/* The volume's shape (z, y, x, channels); FALSE with the reader's error. */
static gboolean
read_header (const char *input, guint shape[4], GError **error)
{
  g_autoptr (SvTiffSlabReader) reader = NULL;
  SvTiffReadOptions options;
  const SvTiffSlabInfo *info;

  sv_tiff_read_options_init_defaults (&options);
  reader = sv_tiff_slab_reader_open (input, &options, error);
  if (reader == NULL)
    return FALSE;
  info = sv_tiff_slab_reader_info (reader);
  shape[0] = info->nz;
  shape[1] = info->ny;
  shape[2] = info->nx;
  shape[3] = info->nc;
  return TRUE;
}

/* Whether the GPU cannot hold the in-memory run (streaming through it
 * then keeps the run on the GPU instead of the CPU). */
static gboolean
too_big_for_gpu (const char *name, const guint shape[4], gboolean mask)
{
#if SV_HAVE_CUDA
  gsize free_bytes = 0;

  if (strcmp (name, "cpu") == 0 || !sv_cuda_mem_get_info (&free_bytes, NULL, NULL))
    return FALSE;
  return sv_cuda_in_memory_bytes (shape[0], shape[1], shape[2], shape[3], mask) > free_bytes;
#else
  (void)name;
  (void)shape;
  (void)mask;
  return FALSE;
#endif
}

/* The whole volume in memory: read, run, write. */
static gboolean
run_in_memory (const char *input, const char *output, const char *mask_path, const char *name,
               const SvSlicParams *params, const SvRunControl *control, SvRunStats *stats,
               gboolean *is_cuda, GError **error)
{
  g_autoptr (SvVolume) volume = sv_tiff_read_volume (input, error);
  g_autoptr (SvLabels) labels = NULL;
  g_autofree guint8 *mask = NULL;

  if (volume == NULL)
    return FALSE;
  if (mask_path != NULL)
    {
      guint nz = 0, ny = 0, nx = 0;

      mask = sv_tiff_read_mask (mask_path, &nz, &ny, &nx, error);
      if (mask == NULL)
        return FALSE;
      if (nz != volume->nz || ny != volume->ny || nx != volume->nx)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                       "mask %s is %ux%ux%u, the volume %ux%ux%u (z, y, x)", mask_path, nz, ny, nx,
                       volume->nz, volume->ny, volume->nx);
          return FALSE;
        }
    }
  labels = sv_labels_new (volume->nz, volume->ny, volume->nx, error);
  if (labels == NULL
      || !sv_api_run_host (name, volume, mask, params, control, labels->data, SUPERVOX_INT32, stats,
                           is_cuda, error))
    return FALSE;
  labels->unit = g_strdup (
      sv_label_calibration (volume->spacing, volume->unit, params->spacing, labels->spacing));
  return sv_tiff_write_labels (output, labels, error);
}

/* Slab by slab through one GPU (not "cpu", when there is one) or the CPU. */
static gboolean
run_streamed (const char *input, const char *output, const char *mask_path, const char *name,
              const SvSlicParams *params, guint64 memory_limit, const guint shape[4],
              const SvRunControl *control, SvRunStats *stats, gboolean *is_cuda, GError **error)
{
  g_autoptr (GError) device_error = NULL;
  SvBackend *gpu = NULL;
  SvStreamOptions options;
  SvStreamReport report;
  gboolean ok;

  sv_stream_options_init_defaults (&options);
  options.n_threads = control->n_threads;
  options.write_options.n_threads = control->n_threads;
  options.memory_limit = memory_limit;
  options.mask_path = mask_path;
  options.label_spacing = params->spacing;
  options.progress = control->progress;
  options.user_data = control->user_data;
  options.cancellable = control->cancellable;
  if (strcmp (name, "cpu") != 0)
    {
      GError *local = NULL;

      gpu = sv_api_cuda_backend_take (&local);
      if (gpu == NULL && strcmp (name, "cuda") == 0)
        {
          g_propagate_error (error, local);
          return FALSE;
        }
      g_clear_error (&local);
    }
  if (gpu != NULL)
    {
#if SV_HAVE_CUDA
      gsize free_bytes = 0;

      /* Slabs the device's double buffers hold beside the clusters. */
      if (sv_cuda_mem_get_info (&free_bytes, NULL, NULL))
        options.max_slab_depth = sv_cuda_stream_max_depth (
            free_bytes, shape[1], shape[2], shape[3], params->n_segments, mask_path != NULL);
#endif
      options.backends = &gpu;
      options.n_backends = 1;
    }
  if (gpu != NULL && strcmp (name, "auto") == 0)
    ok = sv_stream_slic_run_with_fallback (input, output, params, NULL, &options, stats, &report,
                                           &device_error, error);
  else
    ok = sv_stream_slic_run (input, output, params, NULL, &options, stats, &report, error);
  if (device_error != NULL)
    g_info ("the GPU failed (%s); streamed on the CPU instead", device_error->message);
  *is_cuda = gpu != NULL && device_error == NULL;
  sv_api_backend_done (gpu, ok && device_error == NULL);
  return ok;
}

int
supervox_slic_file (const char *input, const char *output, const char *mask,
                    const SupervoxParams *params, SupervoxBackend backend, uint64_t memory_limit,
                    const SupervoxControl *control, SupervoxFileInfo *info)
{
  GError *error = NULL;
  SvSlicParams p;
  SvRunControl run;
  SvApiControl bridge;
  SvRunStats stats = { 0 };
  SupervoxRunInfo run_info;
  const char *name;
  guint shape[4];
  guint64 limit;
  gboolean is_cuda = FALSE, streamed, ok;

  sv_api_register_backends ();
  if (input == NULL || output == NULL)
    {
      g_set_error_literal (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           input == NULL ? "no input file" : "no output file");
      sv_api_fail (error);
      return SUPERVOX_ERROR_INVALID_ARGUMENT;
    }
  if ((name = sv_api_backend_name (backend, &error)) == NULL
      || !sv_api_params_to_engine (params, &p, &error) || !read_header (input, shape, &error))
    return sv_api_fail (error);

  limit = memory_limit > 0 ? memory_limit : sv_memory_available ();
  streamed
      = sv_stream_in_memory_bytes (shape[0], shape[1], shape[2], shape[3], mask != NULL) > limit
        || too_big_for_gpu (name, shape, mask != NULL);
  sv_api_control_init (&run, &bridge, control, params != NULL ? params->n_threads : 0);
  if (streamed)
    ok = run_streamed (input, output, mask, name, &p, limit, shape, &run, &stats, &is_cuda, &error);
  else
    ok = run_in_memory (input, output, mask, name, &p, &run, &stats, &is_cuda, &error);
  g_clear_object (&bridge.cancellable);
  if (!ok)
    return sv_api_fail (error);
  if (info != NULL)
    {
      sv_api_info_fill (&run_info, &stats, is_cuda ? SUPERVOX_BACKEND_CUDA : SUPERVOX_BACKEND_CPU);
      info->n_clusters = run_info.n_clusters;
      info->n_labels = run_info.n_labels;
      info->iterations = run_info.iterations;
      info->backend = run_info.backend;
      info->streamed = streamed;
    }
  return SUPERVOX_OK;
}

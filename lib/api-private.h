/* libsupervox internals shared by lib/api.c, api-array.c and api-device.c: the
 * C API's arrays and parameters turned into the engine's types. */
#pragma once

#include <glib.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-params.h"
#include "supervox/supervox.h"
#include "supervox/sv-volume.h"

#include <gio/gio.h>

G_BEGIN_DECLS

/* One GError becomes the status and this thread's message (freed). */
int sv_api_fail (GError *error);

/* The C API's parameters as the engine's (checked). */
gboolean sv_api_params_to_engine (const SupervoxParams *in, SvSlicParams *out, GError **error);

/* Registers the CUDA backend class when the build has it (once). */
void sv_api_register_backends (void);

/* The backend a code asks for, read by the engine (sv_backend_choose);
 * FALSE with an error for an unknown code. */
gboolean sv_api_backend_choose (SupervoxBackend backend, SvBackendChoice *choice, GError **error);

/* The backend asked for: CUDA ones come from the pool of backends kept
 * between runs; auto without a device is the CPU. */
SvBackend *sv_api_backend_for (const SvBackendChoice *choice, GError **error);

/* The caller's control as the engine's: progress passes through, and the
 * cancel flag is looked at on every report (the iteration boundaries).
 * Clear `cancellable` after the run. */
typedef struct
{
  const SupervoxControl *control;
  GCancellable *cancellable;
} SvApiControl;

void sv_api_control_init (SvRunControl *run, SvApiControl *bridge, const SupervoxControl *control,
                          int n_threads);

/* The run's numbers into info (may be NULL). */
void sv_api_info_fill (SupervoxRunInfo *info, const SvRunStats *stats, SupervoxBackend backend);

/* One run on a host volume, the labels into `labels` as label_dtype. With
 * auto, a GPU that fails (out of memory, a CUDA error) leaves the run to
 * the CPU reference, which gives the same labels, as the CLI and the
 * window do (sv_run_execute); cuda asked for fails instead. */
gboolean sv_api_run_host (const SvBackendChoice *choice, const SvVolume *volume, const guint8 *mask,
                          const SvSlicParams *params, const SvRunControl *control, void *labels,
                          SupervoxDtype label_dtype, SvRunStats *stats, gboolean *is_cuda,
                          GError **error);

/* Bytes per element of `dtype` (0 for an unknown one). */
gsize sv_api_dtype_size (SupervoxDtype dtype);
/* The engine's name for a dtype (SvVolume's source_type). */
SvSampleType sv_api_sample_type (SupervoxDtype dtype);

/* Checks that `array` names a known dtype and a shape of non-negative
 * sizes, with data when it holds any element; `what` names it in the
 * message ("image", "mask"). */
gboolean sv_api_array_check (const SupervoxArray *array, const char *what, GError **error);

/* Voxels z·y·x of an array (channels not counted). */
gsize sv_api_array_n_voxels (const SupervoxArray *array);

/* The image as an engine volume: float32, z-major, channel fastest, values
 * as img_as_float gives them. Host memory only. */
SvVolume *sv_api_volume_from_host (const SupervoxArray *image, GError **error);

/* The mask as nz·ny·nx bytes (1 = in), checked against the image's shape.
 * Host memory only. Free with g_free. */
guint8 *sv_api_mask_from_host (const SupervoxArray *mask, const SupervoxArray *image,
                               GError **error);

/* Fails unless mask's z, y, x shape is the image's and it has one channel. */
gboolean sv_api_mask_check_shape (const SupervoxArray *mask, const SupervoxArray *image,
                                  GError **error);

/* Copies n int32 labels to dst as label_dtype (INT32 or INT64). */
void sv_api_labels_store (const gint32 *src, gsize n, void *dst, SupervoxDtype label_dtype);

/* A CUDA backend for the current device: the one kept idle from an earlier
 * run (lib/api-backend-pool.c) or a new one. Fails with
 * SV_ENGINE_ERROR_BACKEND without a usable device (or a CUDA build). */
SvBackend *sv_api_cuda_backend_take (GError **error);

/* The end of a run on `backend` (may be NULL): a CUDA backend whose run
 * succeeded is kept for the next run on its device unless one is kept
 * already; everything else is freed. */
void sv_api_backend_done (SvBackend *backend, gboolean ok);

/* The run on device pointers (lib/api-device.c; a build without CUDA
 * fails with SV_ENGINE_ERROR_BACKEND). */
gboolean sv_api_run_device (const SupervoxArray *image, const SupervoxArray *mask,
                            const SvSlicParams *params, void *labels, SupervoxDtype label_dtype,
                            void *cuda_stream, const SvRunControl *control, SvRunStats *stats,
                            GError **error);

/* supervox_slic_file's run: from the file at `input`, or (reader not NULL,
 * borrowed) always streamed from `reader`, which `input` then names in
 * messages. The labels go to `output`, a TIFF or an OME-Zarr store. */
int sv_api_slic_to_file (const char *input, SvTiffSlabReader *reader, const char *output,
                         const char *mask, SvTiffSlabReader *mask_reader,
                         const char *mask_name, const SupervoxParams *params, SupervoxBackend backend,
                         uint64_t memory_limit, const SupervoxControl *control,
                         SupervoxFileInfo *info);

G_END_DECLS

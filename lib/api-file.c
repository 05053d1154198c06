/* libsupervox: SLIC from a TIFF file into a label TIFF (supervox_slic_file),
 * in memory when the run fits there and slab by slab when it does not, as
 * supervox-cli slic chooses, with the same bytes either way; the caller's
 * slab source (lib/api-source.c) always streams through the same run. */
#define G_LOG_DOMAIN "supervox"

#include "api-private.h"

#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io-zarr.h"
#include "supervox/sv-io.h"
#include "supervox/sv-memory.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-run-plan.h"
#include "supervox/sv-stream.h"

/* The file as the run plan sees it; FALSE with the reader's error. */
static gboolean
read_source (const char *input, gboolean mask, SvRunSource *source, GError **error)
{
  g_autoptr (SvTiffSlabReader) reader = NULL;
  SvTiffReadOptions options;

  sv_tiff_read_options_init_defaults (&options);
  reader = sv_tiff_slab_reader_open (input, &options, error);
  if (reader == NULL)
    return FALSE;
  sv_run_source_from_header (source, sv_tiff_slab_reader_info (reader));
  source->mask = mask;
  return TRUE;
}

/* An output named "*.zarr" (a trailing '/' allowed) is an OME-Zarr store,
 * as supervox-cli slic -o decides. */
static gboolean
names_zarr_store (const char *output)
{
  gsize len = strlen (output);

  while (len > 1 && output[len - 1] == G_DIR_SEPARATOR)
    len--;
  return len > 5 && g_ascii_strncasecmp (output + len - 5, ".zarr", 5) == 0;
}

/* What the run may use: memory_limit or what the system has free, the
 * GPU's free memory unless the CPU was asked for, and the free space
 * beside `output` for a streamed run's temporary files. */
static void
measure_budgets (const SvBackendChoice *choice, guint64 memory_limit, const char *output,
                 SvRunBudgets *budgets)
{
  SvRunDevices devices;

  memset (budgets, 0, sizeof *budgets);
  budgets->backend = *choice;
  budgets->host_bytes = memory_limit > 0 ? memory_limit : sv_memory_available ();
  budgets->temp_measured = sv_stream_temp_free (output, &budgets->temp_free);
  budgets->output_name = output;
  budgets->limit_name = "memory_limit";
  sv_run_devices_init (&devices, choice->device, NULL, -1, 0);
  sv_run_devices_measure (&devices, choice, budgets);
  sv_run_devices_clear (&devices);
}

/* The whole volume in memory: read, run, write. */
static gboolean
run_in_memory (const char *input, const char *output, const char *mask_path,
               const SvBackendChoice *choice, const SvSlicParams *params,
               const SvTiffWriteOptions *write_options, const SvRunControl *control,
               SvRunStats *stats, gboolean *is_cuda, GError **error)
{
  g_autoptr (SvVolume) volume = sv_tiff_read_volume (input, error);
  g_autoptr (SvLabels) labels = NULL;
  g_autofree guint8 *mask = NULL;

  if (volume == NULL)
    return FALSE;
  if (mask_path != NULL)
    {
      const guint image_zyx[3] = { volume->nz, volume->ny, volume->nx };
      guint mask_zyx[3] = { 0 };

      mask = sv_tiff_read_mask (mask_path, &mask_zyx[0], &mask_zyx[1], &mask_zyx[2], error);
      if (mask == NULL || !sv_run_check_mask (mask_path, mask_zyx, input, image_zyx, error))
        return FALSE;
    }
  labels = sv_labels_new (volume->nz, volume->ny, volume->nx, error);
  if (labels == NULL
      || !sv_api_run_host (choice, volume, mask, params, control, labels->data, SUPERVOX_INT32,
                           stats, is_cuda, error))
    return FALSE;
  labels->unit = g_strdup (
      sv_label_calibration (volume->spacing, volume->unit, params->spacing, labels->spacing));
  return sv_tiff_write_labels_full (output, labels, write_options, error);
}

/* Slab by slab through one GPU (when the plan went to one: the pool's
 * backend for the current device) or the CPU. */
static gboolean
run_streamed (const char *input, SvTiffSlabReader *source, const char *output,
              const char *mask_path, SvTiffSlabReader *mask_source, const char *mask_name,
              const SvSlicParams *params,
              const SvTiffWriteOptions *write_options, const SvRunPlan *plan,
              const SvRunControl *control, SvRunStats *stats, gboolean *is_cuda, GError **error)
{
  SvBackend *gpu = NULL;
  SvStreamOptions options;
  SvRunDevices devices;
  SvRunJobSpec spec = { 0 };
  SvRunReport report;
  gboolean ok;

  sv_stream_options_init_defaults (&options);
  options.n_threads = control->n_threads;
  options.write_options = *write_options;
  options.source = source;
  options.mask_path = mask_path;
  options.mask_source = mask_source;
  options.mask_source_name = mask_name;
  options.label_spacing = params->spacing;
  options.progress = control->progress;
  options.user_data = control->user_data;
  options.cancellable = control->cancellable;
  sv_run_devices_init (&devices, plan->backend, NULL, -1, 0);
  if (plan->on_device)
    {
      GError *local = NULL;

      gpu = sv_api_cuda_backend_take (&local);
      if (gpu == NULL && !plan->falls_back)
        {
          g_propagate_error (error, local);
          return FALSE;
        }
      g_clear_error (&local);
      /* auto without a device streams on the CPU. */
      devices.broken = gpu == NULL;
    }
  if (gpu != NULL)
    {
      devices.backends = &gpu;
      devices.n_backends = 1;
    }
  spec.plan = plan;
  spec.params = params;
  spec.input = input;
  spec.output = output;
  spec.stream = &options;
  spec.devices = &devices;
  ok = sv_run_execute (&spec, &report, error);
  if (report.device_error != NULL)
    g_info ("the GPU failed (%s); streamed on the CPU instead", report.device_error->message);
  *stats = report.stats;
  *is_cuda = report.n_devices > 0;
  sv_api_backend_done (gpu, ok && report.device_error == NULL);
  sv_run_report_clear (&report);
  /* The pool's backend is not the devices' to free. */
  devices.backends = NULL;
  devices.n_backends = 0;
  sv_run_devices_clear (&devices);
  return ok;
}

int
sv_api_slic_to_file (const char *input, SvTiffSlabReader *reader, const char *output,
                     const char *mask, SvTiffSlabReader *mask_reader, const char *mask_name,
                     const SupervoxParams *params, SupervoxBackend backend,
                     uint64_t memory_limit, const SupervoxControl *control, SupervoxFileInfo *info)
{
  GError *error = NULL;
  SvSlicParams p;
  SvRunControl run;
  SvApiControl bridge;
  SvRunStats stats = { 0 };
  SupervoxRunInfo run_info;
  SvBackendChoice choice;
  SvRunSource source;
  SvRunBudgets budgets;
  SvRunPlan plan;
  SvTiffWriteOptions write_options;
  SvZarrWriteOptions zarr;
  gboolean is_cuda = FALSE, streamed, ok;

  sv_api_register_backends ();
  if (input == NULL || output == NULL)
    {
      g_set_error_literal (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           input == NULL ? "no input file" : "no output file");
      sv_api_fail (error);
      return SUPERVOX_ERROR_INVALID_ARGUMENT;
    }
  if (!sv_api_backend_choose (backend, &choice, &error)
      || !sv_api_params_to_engine (params, &p, &error))
    return sv_api_fail (error);
  if (reader != NULL)
    {
      /* The caller's array is never held whole: it streams. */
      sv_run_source_from_header (&source, sv_tiff_slab_reader_info (reader));
      source.mask = mask != NULL || mask_reader != NULL;
      source.stays_in_file = TRUE;
    }
  else if (!read_source (input, mask != NULL, &source, &error))
    return sv_api_fail (error);

  measure_budgets (&choice, memory_limit, output, &budgets);
  if (!sv_run_plan (&source, &p, &budgets, &plan, &error))
    return sv_api_fail (error);
  g_debug ("%s: %s", input, plan.reason);
  streamed = plan.mode == SV_RUN_STREAMED;
  sv_api_control_init (&run, &bridge, control, params != NULL ? params->n_threads : 0);
  sv_tiff_write_options_init_defaults (&write_options);
  write_options.n_threads = run.n_threads;
  if (names_zarr_store (output))
    {
      sv_zarr_write_options_init_defaults (&zarr);
      write_options.zarr = &zarr;
    }
  if (streamed)
    ok = run_streamed (input, reader, output, mask, mask_reader, mask_name, &p, &write_options,
                       &plan, &run, &stats, &is_cuda, &error);
  else
    ok = run_in_memory (input, output, mask, &choice, &p, &write_options, &run, &stats, &is_cuda,
                        &error);
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

int
supervox_slic_file (const char *input, const char *output, const char *mask,
                    const SupervoxParams *params, SupervoxBackend backend, uint64_t memory_limit,
                    const SupervoxControl *control, SupervoxFileInfo *info)
{
  return sv_api_slic_to_file (input, NULL, output, mask, NULL, NULL, params, backend,
                              memory_limit, control, info);
}

/* libsupervox: the public C API (supervox/supervox.h) over the engine's
 * backends: parameters, the host run, the last-error message. The device
 * run's glue lives in api-device.c. */
#define G_LOG_DOMAIN "sv-api"

#include "api-private.h"

#include <gio/gio.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-run-execute.h"
#include "sv-config.h"
#if SV_HAVE_CUDA
#include "sv-cuda.h"
#endif

/* Per thread, freed when the thread ends. */
static GPrivate last_error = G_PRIVATE_INIT (g_free);

static void
set_last_error (const char *message)
{
  g_private_replace (&last_error, g_strdup (message));
}

const char *
supervox_last_error (void)
{
  const char *message = g_private_get (&last_error);
  return message != NULL ? message : "";
}

const char *
supervox_status_name (int status)
{
  switch (status)
    {
    case SUPERVOX_OK:
      return "SUPERVOX_OK";
    case SUPERVOX_ERROR_INVALID_ARGUMENT:
      return "SUPERVOX_ERROR_INVALID_ARGUMENT";
    case SUPERVOX_ERROR_INVALID_PARAM:
      return "SUPERVOX_ERROR_INVALID_PARAM";
    case SUPERVOX_ERROR_INVALID_DATA:
      return "SUPERVOX_ERROR_INVALID_DATA";
    case SUPERVOX_ERROR_NON_FINITE:
      return "SUPERVOX_ERROR_NON_FINITE";
    case SUPERVOX_ERROR_NO_MEMORY:
      return "SUPERVOX_ERROR_NO_MEMORY";
    case SUPERVOX_ERROR_BACKEND:
      return "SUPERVOX_ERROR_BACKEND";
    case SUPERVOX_ERROR_CANCELLED:
      return "SUPERVOX_ERROR_CANCELLED";
    case SUPERVOX_ERROR_IO:
      return "SUPERVOX_ERROR_IO";
    default:
      return "SUPERVOX_ERROR_UNKNOWN";
    }
}

int
sv_api_fail (GError *error)
{
  int status = SUPERVOX_ERROR_INVALID_DATA;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    status = SUPERVOX_ERROR_CANCELLED;
  else if (error->domain == SV_ENGINE_ERROR)
    switch ((SvEngineError)error->code)
      {
      case SV_ENGINE_ERROR_INVALID_PARAM:
        status = SUPERVOX_ERROR_INVALID_PARAM;
        break;
      case SV_ENGINE_ERROR_NO_MEMORY:
        status = SUPERVOX_ERROR_NO_MEMORY;
        break;
      case SV_ENGINE_ERROR_BACKEND:
        status = SUPERVOX_ERROR_BACKEND;
        break;
      case SV_ENGINE_ERROR_IO:
      case SV_ENGINE_ERROR_NO_SPACE:
        status = SUPERVOX_ERROR_IO;
        break;
      case SV_ENGINE_ERROR_INVALID_DATA:
        /* sv_set_non_finite_error is the one source of this message, on
         * both backends; callers map it to their own NaN error. */
        status = g_str_has_prefix (error->message, "image has ") ? SUPERVOX_ERROR_NON_FINITE
                                                                 : SUPERVOX_ERROR_INVALID_DATA;
        break;
      default:
        break;
      }
  set_last_error (error->message);
  g_error_free (error);
  return status;
}

const char *
supervox_version (void)
{
  return SV_VERSION;
}

int
supervox_api_version (void)
{
  return SUPERVOX_API_VERSION_MAJOR * 1000 + SUPERVOX_API_VERSION_MINOR;
}

void
supervox_params_init (SupervoxParams *params)
{
  SvSlicParams p;

  if (params == NULL)
    return;
  sv_slic_params_init_defaults (&p);
  memset (params, 0, sizeof *params);
  params->n_segments = p.n_segments;
  params->compactness = p.compactness;
  params->max_num_iter = p.max_num_iter;
  params->sigma_per_axis = p.sigma_per_axis;
  for (int a = 0; a < 3; a++)
    {
      params->sigma[a] = p.sigma[a];
      params->spacing[a] = p.spacing[a];
    }
  params->convert2lab = SUPERVOX_CONVERT2LAB_AUTO;
  params->enforce_connectivity = p.enforce_connectivity;
  params->min_size_factor = p.min_size_factor;
  params->max_size_factor = p.max_size_factor;
  params->slic_zero = p.slic_zero;
  params->start_label = p.start_label;
  params->n_threads = 0;
  params->connectivity_rule = SUPERVOX_CONNECTIVITY_CONNECTED;
}

gboolean
sv_api_params_to_engine (const SupervoxParams *in, SvSlicParams *out, GError **error)
{
  if (in == NULL)
    {
      sv_slic_params_init_defaults (out);
      return TRUE;
    }
  sv_slic_params_init_defaults (out);
  out->n_segments = in->n_segments;
  out->compactness = in->compactness;
  out->max_num_iter = in->max_num_iter;
  out->sigma_per_axis = in->sigma_per_axis != 0;
  for (int a = 0; a < 3; a++)
    {
      out->sigma[a] = in->sigma[a];
      out->spacing[a] = in->spacing[a];
    }
  switch (in->convert2lab)
    {
    case SUPERVOX_CONVERT2LAB_AUTO:
      out->convert2lab = SV_CONVERT2LAB_AUTO;
      break;
    case SUPERVOX_CONVERT2LAB_NO:
      out->convert2lab = SV_CONVERT2LAB_NO;
      break;
    case SUPERVOX_CONVERT2LAB_YES:
      out->convert2lab = SV_CONVERT2LAB_YES;
      break;
    default:
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "convert2lab must be -1 (auto), 0 or 1, got %d", (int)in->convert2lab);
      return FALSE;
    }
  out->enforce_connectivity = in->enforce_connectivity != 0;
  out->min_size_factor = in->min_size_factor;
  out->max_size_factor = in->max_size_factor;
  out->slic_zero = in->slic_zero != 0;
  out->start_label = in->start_label;
  switch (in->connectivity_rule)
    {
    case SUPERVOX_CONNECTIVITY_CONNECTED:
      out->connectivity_rule = SV_CONNECTIVITY_RULE_CONNECTED;
      break;
    case SUPERVOX_CONNECTIVITY_LEGACY:
      out->connectivity_rule = SV_CONNECTIVITY_RULE_LEGACY;
      break;
    default:
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "connectivity_rule must be 0 (connected) or 1 (legacy), got %d",
                   (int)in->connectivity_rule);
      return FALSE;
    }
  return sv_slic_params_validate (out, error);
}

static gboolean
check_labels (const void *labels, SupervoxDtype label_dtype, GError **error)
{
  if (label_dtype != SUPERVOX_INT32 && label_dtype != SUPERVOX_INT64)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "labels must be int32 or int64, got dtype code %d", (int)label_dtype);
      return FALSE;
    }
  if (labels == NULL)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM, "labels is NULL");
      return FALSE;
    }
  return TRUE;
}

/* The CUDA backend joins the registry once, for "auto" and "cuda". */
void
sv_api_register_backends (void)
{
#if SV_HAVE_CUDA
  sv_cuda_register ();
#endif
}

int
supervox_cuda_available (void)
{
#if SV_HAVE_CUDA
  GError *error = NULL;
  if (sv_cuda_device_available (&error))
    return 1;
  sv_api_fail (error);
  return 0;
#else
  set_last_error ("this build of libsupervox has no CUDA backend");
  return 0;
#endif
}

static void
progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  SvApiControl *bridge = user_data;
  const SupervoxControl *c = bridge->control;

  if (c->cancel != NULL && *c->cancel != 0)
    g_cancellable_cancel (bridge->cancellable);
  if (c->progress != NULL)
    c->progress ((int)stage, (int)iteration, (int)n_iterations, c->user_data);
}

void
sv_api_control_init (SvRunControl *run, SvApiControl *bridge, const SupervoxControl *control,
                     int n_threads)
{
  memset (run, 0, sizeof *run);
  run->n_threads = n_threads;
  run->stop_after_iteration = -1;
  bridge->control = control;
  bridge->cancellable = NULL;
  if (control == NULL || (control->progress == NULL && control->cancel == NULL))
    return;
  bridge->cancellable = g_cancellable_new ();
  if (control->cancel != NULL && *control->cancel != 0)
    g_cancellable_cancel (bridge->cancellable);
  run->progress = progress_cb;
  run->user_data = bridge;
  run->cancellable = bridge->cancellable;
}

void
sv_api_info_fill (SupervoxRunInfo *info, const SvRunStats *stats, SupervoxBackend backend)
{
  if (info == NULL)
    return;
  info->n_clusters = (int64_t)stats->n_clusters;
  info->n_labels = (int64_t)stats->n_labels;
  info->iterations = (int32_t)stats->iterations;
  info->backend = backend;
}

SvBackend *
sv_api_backend_for (const SvBackendChoice *choice, GError **error)
{
  GError *local = NULL;
  SvBackend *backend = NULL;

  if (!choice->is_auto && !choice->wants_device)
    return sv_backend_new_of_class (sv_backend_cpu_class (), error);
  backend = sv_api_cuda_backend_take (&local);
  if (backend != NULL)
    return backend;
  if (choice->wants_device)
    {
      g_propagate_error (error, local);
      return NULL;
    }
  g_info ("CUDA backend unavailable, using the CPU: %s", local->message);
  g_error_free (local);
  return sv_backend_new_of_class (sv_backend_cpu_class (), error);
}

gboolean
sv_api_run_host (const SvBackendChoice *choice, const SvVolume *volume, const guint8 *mask,
                 const SvSlicParams *params, const SvRunControl *control, void *labels,
                 SupervoxDtype label_dtype, SvRunStats *stats, gboolean *is_cuda, GError **error)
{
  SvBackend *backend = sv_api_backend_for (choice, error);
  g_autofree gint32 *out = NULL;
  gsize n = sv_volume_n_voxels (volume);
  SvRunBudgets budgets = { .backend = *choice };
  SvRunJobSpec spec = { 0 };
  SvRunReport report = { 0 };
  SvRunSource source;
  SvRunPlan plan;
  gboolean ok;

  if (backend == NULL)
    return FALSE;
  /* The backend is the device auto found, or the CPU. */
  budgets.n_devices = sv_backend_class_is_device (sv_backend_get_class (backend)) ? 1 : 0;
  sv_run_source_from_volume (&source, volume, mask != NULL);
  spec.plan = &plan;
  spec.params = params;
  spec.volume = volume;
  spec.mask = mask;
  spec.backend = backend;
  spec.control = control;
  ok = sv_run_plan (&source, params, &budgets, &plan, error)
       && sv_run_execute (&spec, &report, error)
       && (out = sv_backend_take_labels (sv_run_report_backend (&report, &spec), n, error)) != NULL;
  if (report.ran_on != NULL)
    *stats = report.stats;
  *is_cuda = sv_backend_class_is_device (report.ran_on);
  sv_api_backend_done (backend, ok && report.own_backend == NULL);
  sv_run_report_clear (&report);
  if (ok)
    sv_api_labels_store (out, n, labels, label_dtype);
  return ok;
}

gboolean
sv_api_backend_choose (SupervoxBackend backend, SvBackendChoice *choice, GError **error)
{
  static const char *const words[] = {
    [SUPERVOX_BACKEND_AUTO] = "auto",
    [SUPERVOX_BACKEND_CPU] = "cpu",
    [SUPERVOX_BACKEND_CUDA] = "cuda",
  };

  if ((int)backend < 0 || (gsize)backend >= G_N_ELEMENTS (words) || words[backend] == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "unknown backend code %d: use AUTO, CPU or CUDA", (int)backend);
      return FALSE;
    }
  return sv_backend_choose (words[backend], choice, error);
}

int
supervox_slic (const SupervoxArray *image, const SupervoxArray *mask, const SupervoxParams *params,
               SupervoxBackend backend, void *labels, SupervoxDtype label_dtype,
               const SupervoxControl *control, SupervoxRunInfo *info)
{
  GError *error = NULL;
  SvSlicParams p;
  g_autoptr (SvVolume) volume = NULL;
  g_autofree guint8 *host_mask = NULL;
  SvRunControl run;
  SvApiControl bridge;
  SvRunStats stats = { 0 };
  SvBackendChoice choice;
  gboolean is_cuda = FALSE, ok;

  set_last_error (NULL);
  sv_api_register_backends ();
  if (!sv_api_array_check (image, "image", &error) || !check_labels (labels, label_dtype, &error)
      || !sv_api_params_to_engine (params, &p, &error))
    return sv_api_fail (error);
  if (!sv_api_backend_choose (backend, &choice, &error))
    return sv_api_fail (error);
  if (mask != NULL && (host_mask = sv_api_mask_from_host (mask, image, &error)) == NULL)
    return sv_api_fail (error);
  volume = sv_api_volume_from_host (image, &error);
  if (volume == NULL)
    return sv_api_fail (error);

  sv_api_control_init (&run, &bridge, control, params != NULL ? params->n_threads : 0);
  ok = sv_api_run_host (&choice, volume, host_mask, &p, &run, labels, label_dtype, &stats, &is_cuda,
                        &error);
  g_clear_object (&bridge.cancellable);
  if (!ok)
    return sv_api_fail (error);
  sv_api_info_fill (info, &stats, is_cuda ? SUPERVOX_BACKEND_CUDA : SUPERVOX_BACKEND_CPU);
  return SUPERVOX_OK;
}

#if !SV_HAVE_CUDA
SvBackend *
sv_api_cuda_backend_take (GError **error)
{
  g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                       "this build has no CUDA backend");
  return NULL;
}

void
sv_api_backend_done (SvBackend *backend, gboolean ok)
{
  sv_backend_free (backend);
}

void
supervox_cuda_release_cache (void)
{
}

gboolean
sv_api_run_device (const SupervoxArray *image, const SupervoxArray *mask,
                   const SvSlicParams *params, void *labels, SupervoxDtype label_dtype,
                   void *cuda_stream, const SvRunControl *control, SvRunStats *stats,
                   GError **error)
{
  g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                       "no CUDA device: this build of libsupervox has no CUDA backend");
  return FALSE;
}
#endif

int
supervox_slic_device (const SupervoxArray *image, const SupervoxArray *mask,
                      const SupervoxParams *params, void *labels, SupervoxDtype label_dtype,
                      void *cuda_stream, const SupervoxControl *control, SupervoxRunInfo *info)
{
  GError *error = NULL;
  SvSlicParams p;
  SvRunControl run;
  SvApiControl bridge;
  SvRunStats stats = { 0 };
  gboolean ok;

  set_last_error (NULL);
  sv_api_register_backends ();
  if (!sv_api_array_check (image, "image", &error) || !check_labels (labels, label_dtype, &error)
      || !sv_api_params_to_engine (params, &p, &error)
      || (mask != NULL && !sv_api_mask_check_shape (mask, image, &error)))
    return sv_api_fail (error);
  sv_api_control_init (&run, &bridge, control, params != NULL ? params->n_threads : 0);
  ok = sv_api_run_device (image, mask, &p, labels, label_dtype, cuda_stream, &run, &stats, &error);
  g_clear_object (&bridge.cancellable);
  if (!ok)
    return sv_api_fail (error);
  sv_api_info_fill (info, &stats, SUPERVOX_BACKEND_CUDA);
  return SUPERVOX_OK;
}

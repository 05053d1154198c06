/* Supervox engine: a planned run carried out, in memory or streamed, with
 * the one rule for a device that fails: under auto the CPU runs the same
 * job again, and a device error (not a lack of memory) keeps the device
 * out of the runs that follow. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-run-execute.h"

#include "backend-private.h"

#include <string.h>

#include "run-devices-private.h"
#include "stream-private.h"
#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"

void
sv_run_report_clear (SvRunReport *report)
{
  g_clear_pointer (&report->own_backend, sv_backend_free);
  g_clear_error (&report->device_error);
  /* A label file left to finish that nobody took goes. */
  g_clear_pointer (&report->stream.finish, sv_file_finish_abort);
}

SvBackend *
sv_run_report_backend (const SvRunReport *report, const SvRunJobSpec *spec)
{
  return report->own_backend != NULL ? report->own_backend : spec->backend;
}

/* In memory on `backend`. */
static gboolean
run_in_memory (const SvRunJobSpec *spec, SvBackend *backend, SvRunReport *report, GError **error)
{
  memset (&report->stats, 0, sizeof report->stats);
  report->ran_on = sv_backend_get_class (backend);
  return ((spec->reuse_loaded && sv__backend_holds_volume (backend, spec->volume, spec->mask))
          || sv_backend_set_volume (backend, spec->volume, spec->mask, error))
         && sv_backend_run (backend, spec->params, spec->control, &report->stats, error);
}

/* SvStreamOptions.await_backends for devices still opening. */
static gboolean
await_backends (gpointer data, SvBackend *const **backends, guint64 *least_free, GError **error)
{
  SvRunDevices *devices = data;

  if (!sv__run_devices_await (devices, least_free, error))
    return FALSE;
  *backends = devices->backends;
  return TRUE;
}

/* Streamed through `backends` (n of them; none: a CPU backend), or
 * through the n devices still opening in `awaiting`, which the run asks
 * for before its first pass. */
static gboolean
run_streamed (const SvRunJobSpec *spec, SvBackend *const *backends, guint n,
              SvRunDevices *awaiting, guint max_slab_depth, SvRunReport *report, GError **error)
{
  SvStreamOptions options = *spec->stream;

  options.memory_limit = spec->plan->memory_limit;
  options.backends = backends;
  options.n_backends = n;
  options.max_slab_depth = n > 0 ? max_slab_depth : 0;
  if (awaiting != NULL)
    {
      options.await_backends = await_backends;
      options.await_data = awaiting;
    }
  report->ran_on = awaiting != NULL ? awaiting->klass
                   : n > 0          ? sv_backend_get_class (backends[0])
                                    : sv_backend_cpu_class ();
  report->n_devices = n;
  return sv_stream_slic_run (spec->input, spec->output, spec->params, spec->mask, &options,
                             &report->stats, &report->stream, error);
}

/* Streamed through the devices that started opening before the plan
 * (sv_run_devices_start). When they hold fewer slices a slab than the
 * plan chose without their memory, the run starts again with slabs they
 * hold: the same labels, a statistics pass later. */
static gboolean
run_streamed_opening (const SvRunJobSpec *spec, SvRunReport *report, GError **error)
{
  g_autoptr (GError) local = NULL;
  SvRunDevices *devices = spec->devices;
  guint cap;

  if (run_streamed (spec, NULL, sv__run_devices_opening_count (devices), devices,
                    spec->plan->max_slab_depth, report, &local))
    return TRUE;
  if (local->domain != SV__STREAM_SHALLOWER || devices->n_backends == 0)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  cap = (guint)local->code;
  g_debug ("run: again, the devices hold slabs of %u slices", cap);
  return run_streamed (spec, devices->backends, devices->n_backends, NULL, cap, report, error);
}

/* A streamed run's devices, opened once; under auto a device that cannot
 * be had is the CPU's run without an error (*on_device turns FALSE). Every
 * MPI rank passes here, on a device or not, so that a rank that cannot
 * open its device stops the others. */
static gboolean
open_devices (const SvRunJobSpec *spec, gboolean *on_device, GError **error)
{
  gboolean ok = TRUE;

  if (*on_device)
    {
      ok = spec->devices != NULL && sv_run_devices_open (spec->devices, error);
      if (!ok && spec->plan->falls_back)
        {
          g_clear_error (error);
          ok = TRUE;
          *on_device = FALSE;
        }
      else if (!ok && spec->devices == NULL)
        g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                             "no device for a run planned on one");
    }
  return sv_stream_ranks_agree (spec->stream->ranks, ok, error);
}

static gboolean
run_on_cpu (const SvRunJobSpec *spec, SvRunReport *report, GError **error)
{
  if (spec->plan->mode == SV_RUN_STREAMED)
    return run_streamed (spec, NULL, 0, NULL, 0, report, error);
  if (spec->backend != NULL && !sv_backend_class_is_device (sv_backend_get_class (spec->backend)))
    return run_in_memory (spec, spec->backend, report, error);
  g_clear_pointer (&report->own_backend, sv_backend_free);
  report->own_backend = sv_backend_new_of_class (sv_backend_cpu_class (), error);
  return report->own_backend != NULL && run_in_memory (spec, report->own_backend, report, error);
}

gboolean
sv_run_execute (const SvRunJobSpec *spec, SvRunReport *report, GError **error)
{
  g_autoptr (GError) local = NULL;
  const SvRunPlan *plan = spec->plan;
  const gboolean streamed = plan->mode == SV_RUN_STREAMED;
  gboolean on_device, opening, ok;
  GCancellable *cancellable;

  g_return_val_if_fail (plan != NULL && spec->params != NULL, FALSE);
  g_return_val_if_fail (streamed
                            ? spec->input != NULL && spec->output != NULL && spec->stream != NULL
                            : spec->volume != NULL,
                        FALSE);
  memset (report, 0, sizeof *report);
  report->streamed = streamed;
  cancellable = streamed                ? spec->stream->cancellable
                : spec->control != NULL ? spec->control->cancellable
                                        : NULL;

  /* After a device error the devices are not tried again. */
  on_device = plan->on_device && (spec->devices == NULL || !spec->devices->broken)
              && (streamed
                  || (spec->backend != NULL
                      && sv_backend_class_is_device (sv_backend_get_class (spec->backend))));
  /* Devices still opening are waited for within the run, after its
   * statistics and seeds (no MPI ranks, no fallback: see
   * sv_run_devices_start). */
  opening = streamed && on_device && spec->devices != NULL && spec->devices->opening != NULL
            && !plan->falls_back && spec->stream->ranks == NULL;
  g_debug ("run: opening the devices%s", opening ? " beside the run" : "");
  if (streamed && !opening && !open_devices (spec, &on_device, error))
    return FALSE;
  g_debug ("run: devices open");
  if (!on_device)
    return run_on_cpu (spec, report, error);

  ok = opening    ? run_streamed_opening (spec, report, &local)
       : streamed ? run_streamed (spec, spec->devices->backends, spec->devices->n_backends, NULL,
                                  plan->max_slab_depth, report, &local)
                  : run_in_memory (spec, spec->backend, report, &local);
  if (ok)
    return TRUE;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  /* The CPU recovers from what only a device has; bad data and bad
   * parameters would fail the same way there, MPI ranks must stop
   * together, and a volume only in device memory has no host copy. */
  if (!plan->falls_back || (streamed && spec->stream->ranks != NULL)
      || !sv_backend_error_is_device_failure (local) || (!streamed && spec->volume->data == NULL))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  g_info ("%s failed (%s); running on the CPU",
          sv_backend_class_display_name (report->ran_on, "the device"), local->message);
  if (spec->devices != NULL && g_error_matches (local, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND))
    spec->devices->broken = TRUE;
  report->device_error = g_steal_pointer (&local);
  report->n_devices = 0;
  memset (&report->stream, 0, sizeof report->stream);
  return run_on_cpu (spec, report, error);
}

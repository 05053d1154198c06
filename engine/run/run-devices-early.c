/* Supervox engine: the devices opened on a thread of their own while the
 * first run reads its file.
 *
 * On the four-GPU machine a 2048³ run spent 1.5 s before its statistics
 * began: the CUDA driver's start (about 1 s with four GPUs, 0.16 s with
 * one) and the devices' contexts (0.5 s for four at once), asked for by
 * the plan, which sized its slabs from their free memory. The statistics
 * pass and the seeds (0.9 s at 2048³) need neither, so the devices now
 * open beside them, and the run asks for them before its first pass
 * (sv__run_devices_await, from sv_run_execute). The slab depth that the
 * plan chose from the host's memory is checked then against what the
 * devices hold; it is almost never more, and sv_run_execute runs again
 * from the start when it is. */
#define G_LOG_DOMAIN "sv-engine"

#include "run-devices-private.h"

#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"

struct _SvRunDevicesOpening
{
  GThread *thread;
  guint n; /* backends it will give */
  gint64 started_us;
  /* The thread's, read after it is joined: */
  SvBackend **backends;
  guint64 least_free; /* 0: not asked (a limit was given) or not known */
  GError *error;
};

static gpointer
open_early (gpointer data)
{
  SvRunDevices *devices = data;
  SvRunDevicesOpening *o = devices->opening;
  g_autoptr (GArray) numbers = sv__run_devices_list (devices, &o->error);
  SvBackend **backends;

  if (numbers == NULL)
    return NULL;
  if (numbers->len != o->n)
    {
      /* Not expected: the list was read against the narrowed count. */
      g_set_error (&o->error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "the driver shows %u devices for the %u listed", numbers->len, o->n);
      return NULL;
    }
  if (devices->memory_limit == 0)
    sv__run_devices_least_free (devices->klass, numbers, &o->least_free);
  backends = g_new0 (SvBackend *, numbers->len);
  if (!sv__run_devices_open_each (devices, numbers, backends, &o->error))
    {
      g_free (backends);
      return NULL;
    }
  o->backends = backends;
  g_debug ("devices: %u opened beside the run in %.3f s", o->n,
           (g_get_monotonic_time () - o->started_us) / 1e6);
  return NULL;
}

gboolean
sv_run_devices_start (SvRunDevices *devices, const SvBackendChoice *choice)
{
  g_autoptr (GArray) numbers = NULL;
  SvRunDevicesOpening *o;

  if (devices->opening != NULL || devices->n_backends > 0 || devices->klass == NULL
      || devices->klass->new_on_device == NULL || devices->list == NULL
      || devices->n_visible == 0 || devices->local_rank >= 0 || choice->is_auto
      || choice->device != devices->klass
      || g_strcmp0 (g_getenv ("SV_DEVICES_EARLY"), "0") == 0)
    return FALSE;
  /* Narrowed, the list names the visible devices from 0. */
  numbers = g_array_new (FALSE, FALSE, sizeof (int));
  if (!sv__run_devices_numbers (devices, (int)devices->n_visible, numbers) || numbers->len == 0)
    return FALSE;
  o = g_new0 (SvRunDevicesOpening, 1);
  o->n = numbers->len;
  o->started_us = g_get_monotonic_time ();
  devices->opening = o;
  o->thread = g_thread_try_new ("sv-devices-open", open_early, devices, NULL);
  if (o->thread == NULL)
    {
      devices->opening = NULL;
      g_free (o);
      return FALSE;
    }
  return TRUE;
}

guint
sv__run_devices_opening_count (const SvRunDevices *devices)
{
  return devices->opening != NULL ? devices->opening->n : 0;
}

gboolean
sv__run_devices_await (SvRunDevices *devices, guint64 *least_free, GError **error)
{
  SvRunDevicesOpening *o = devices->opening;
  const gint64 t0 = g_get_monotonic_time ();
  gboolean ok;

  *least_free = 0;
  if (o == NULL)
    return TRUE;
  g_thread_join (o->thread);
  devices->opening = NULL;
  g_debug ("devices: waited %.3f s for them", (g_get_monotonic_time () - t0) / 1e6);
  ok = o->error == NULL;
  if (ok)
    {
      devices->backends = o->backends;
      devices->n_backends = o->n;
      *least_free = o->least_free;
      /* As sv_run_devices_open sets it. */
      for (guint i = 0; i < devices->n_backends; i++)
        sv_backend_set_memory_limit (devices->backends[i], devices->memory_limit);
    }
  else
    g_propagate_error (error, o->error);
  g_free (o);
  return ok;
}

void
sv__run_devices_drop_opening (SvRunDevices *devices)
{
  SvRunDevicesOpening *o = devices->opening;

  if (o == NULL)
    return;
  g_thread_join (o->thread);
  devices->opening = NULL;
  for (guint i = 0; o->backends != NULL && i < o->n; i++)
    sv_backend_free (o->backends[i]);
  g_free (o->backends);
  g_clear_error (&o->error);
  g_free (o);
}

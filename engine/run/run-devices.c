/* Supervox engine: the devices a front end's runs may use. The list the
 * user gave (--devices) is read here, against the device class's count;
 * under mpirun each rank takes its host-local rank's device. */
#define G_LOG_DOMAIN "sv-engine"

#include "run-devices-private.h"

#include <stdlib.h>
#include <string.h>

#include "supervox/sv-error.h"

void
sv_run_devices_init (SvRunDevices *devices, const SvBackendClass *klass, const char *list,
                     int local_rank, guint64 memory_limit)
{
  memset (devices, 0, sizeof *devices);
  devices->klass = klass;
  devices->list = g_strdup (list);
  devices->local_rank = local_rank;
  devices->memory_limit = memory_limit;
}

static void
close_backends (SvRunDevices *devices)
{
  for (guint i = 0; i < devices->n_backends; i++)
    sv_backend_free (devices->backends[i]);
  g_clear_pointer (&devices->backends, g_free);
  devices->n_backends = 0;
}

void
sv_run_devices_clear (SvRunDevices *devices)
{
  sv__run_devices_drop_opening (devices);
  close_backends (devices);
  g_clear_pointer (&devices->list, g_free);
}

/* The device numbers of the list ("all": every one), or the local rank's,
 * or device 0. */
GArray *
sv__run_devices_list (const SvRunDevices *devices, GError **error)
{
  GArray *numbers = g_array_new (FALSE, FALSE, sizeof (int));
  const int count = sv_backend_class_device_count (devices->klass);

  if (count == 0)
    {
      SvBackend *none;

      /* The class says why it has no device. */
      g_array_free (numbers, TRUE);
      if (error == NULL)
        return NULL;
      none = devices->klass != NULL ? sv_backend_new_of_class (devices->klass, error) : NULL;
      if (none != NULL || devices->klass == NULL)
        g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                             "no CUDA device: none is usable");
      sv_backend_free (none);
      return NULL;
    }
  /* Shown only the listed devices, the driver has fewer: one of them is
   * not a GPU it can use. */
  if (devices->n_visible > 0 && (guint)count < devices->n_visible)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "CUDA can use %d of the %u GPUs asked for (%s=%s)", count, devices->n_visible,
                   "CUDA_VISIBLE_DEVICES", g_getenv ("CUDA_VISIBLE_DEVICES"));
      g_array_free (numbers, TRUE);
      return NULL;
    }
  if (!sv__run_devices_numbers (devices, count, numbers))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "--devices must list GPUs from 0 to %d, or say all; got %s", count - 1,
                   devices->list);
      g_array_free (numbers, TRUE);
      return NULL;
    }
  return numbers;
}

gboolean
sv__run_devices_numbers (const SvRunDevices *devices, int count, GArray *numbers)
{
  if (devices->list != NULL && strcmp (devices->list, "all") == 0)
    for (int d = 0; d < count; d++)
      g_array_append_val (numbers, d);
  else if (devices->list != NULL)
    {
      g_auto (GStrv) items = g_strsplit (devices->list, ",", -1);

      for (guint i = 0; items[i] != NULL; i++)
        {
          char *end = NULL;
          long d = strtol (items[i], &end, 10);

          if (end == items[i] || *end != '\0' || d < 0 || d >= count)
            return FALSE;
          g_array_append_val (numbers, (int){ (int)d });
        }
    }
  else
    {
      int d = devices->local_rank >= 0 ? devices->local_rank % count : 0;

      g_array_append_val (numbers, d);
    }
  return TRUE;
}

GArray *
sv_run_devices_distinct (const SvRunDevices *devices)
{
  g_autoptr (GArray) numbers = NULL;
  GArray *distinct;

  if (devices->klass == NULL)
    return NULL;
  if (devices->n_visible > 0)
    {
      numbers = g_array_new (FALSE, FALSE, sizeof (int));
      if (!sv__run_devices_numbers (devices, (int)devices->n_visible, numbers))
        return NULL;
    }
  else if ((numbers = sv__run_devices_list (devices, NULL)) == NULL)
    return NULL;
  distinct = g_array_new (FALSE, FALSE, sizeof (int));
  for (guint i = 0; i < numbers->len; i++)
    {
      const int d = g_array_index (numbers, int, i);

      if (sv__run_devices_place (distinct, d) == distinct->len)
        g_array_append_val (distinct, d);
    }
  return distinct;
}

void
sv_run_devices_init_some (SvRunDevices *some, const SvRunDevices *all, const int *numbers, guint n)
{
  g_autoptr (GString) list = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    g_string_append_printf (list, "%s%d", i > 0 ? "," : "", numbers[i]);
  sv_run_devices_init (some, all->klass, list->str, -1, all->memory_limit);
  some->n_visible = all->n_visible;
}

guint
sv_run_devices_worth (guint64 voxels)
{
  return (guint)MAX (voxels / (guint64)1500000000, 1);
}

/* One device's free memory, asked on a thread of its own. */
typedef struct
{
  const SvBackendClass *klass;
  int device;
  guint64 bytes;
  gboolean known;
} FreeAsk;

static gpointer
ask_free (gpointer data)
{
  FreeAsk *ask = data;

  ask->known = sv_backend_class_device_free_bytes (ask->klass, ask->device, &ask->bytes);
  return NULL;
}

/* The least free memory of the devices `numbers`, asked of all at once:
 * the first question to a device starts its context, a few tenths of a
 * second each, which one after the other made every device added to a
 * run cost that much more before it began. */
gboolean
sv__run_devices_least_free (const SvBackendClass *klass, GArray *numbers, guint64 *least)
{
  g_autofree FreeAsk *asks = g_new0 (FreeAsk, numbers->len);
  g_autofree GThread **threads = g_new0 (GThread *, numbers->len);
  gboolean any = FALSE;

  for (guint i = 0; i < numbers->len; i++)
    {
      asks[i] = (FreeAsk){ klass, g_array_index (numbers, int, i), 0, FALSE };
      if (i > 0)
        threads[i] = g_thread_try_new ("sv-device-ask", ask_free, &asks[i], NULL);
      if (i > 0 && threads[i] == NULL)
        ask_free (&asks[i]);
    }
  ask_free (&asks[0]);
  for (guint i = 0; i < numbers->len; i++)
    {
      if (threads[i] != NULL)
        g_thread_join (threads[i]);
      if (asks[i].known && (!any || asks[i].bytes < *least))
        *least = asks[i].bytes;
      any = any || asks[i].known;
    }
  return any;
}

void
sv_run_devices_measure (const SvRunDevices *devices, const SvBackendChoice *choice,
                        SvRunBudgets *budgets)
{
  g_autoptr (GArray) numbers = NULL;

  budgets->n_devices = 0;
  budgets->device_bytes = 0;
  budgets->devices_opening = FALSE;
  budgets->devices_listed = devices->list != NULL;
  if (choice->device == NULL || (!choice->is_auto && !choice->wants_device))
    return;
  /* Opening already: their memory is asked there, and the run waits for
   * it only before its first pass. */
  if (devices->opening != NULL)
    {
      budgets->n_devices = sv__run_devices_opening_count (devices);
      budgets->device_bytes = devices->memory_limit;
      budgets->devices_opening = TRUE;
      return;
    }
  numbers = sv__run_devices_list (devices, NULL);
  budgets->n_devices = numbers != NULL ? numbers->len
                       : budgets->devices_listed
                           ? (guint)sv_backend_class_device_count (choice->device)
                           : 0;
  if (devices->memory_limit > 0)
    budgets->device_bytes = devices->memory_limit;
  else if (numbers != NULL && numbers->len > 0)
    {
      const gint64 t0 = g_get_monotonic_time ();

      /* What the devices this run will use have free, the least of them:
       * asking the current device made every MPI rank start a context on
       * device 0, and measured that one's memory instead of its own. */
      sv__run_devices_least_free (choice->device, numbers, &budgets->device_bytes);
      g_debug ("devices: %u asked for their free memory in %.3f s", numbers->len,
               (g_get_monotonic_time () - t0) / 1e6);
    }
}

gboolean
sv__run_devices_open_each (const SvRunDevices *devices, GArray *numbers, SvBackend **backends,
                           GError **error)
{
  for (guint i = 0; i < numbers->len; i++)
    {
      const gint64 t0 = g_get_monotonic_time ();

      backends[i]
          = sv_backend_new_on_device (devices->klass, g_array_index (numbers, int, i), error);
      if (backends[i] == NULL)
        {
          for (guint j = 0; j < i; j++)
            g_clear_pointer (&backends[j], sv_backend_free);
          return FALSE;
        }
      g_debug ("devices: device %d opened in %.3f s", g_array_index (numbers, int, i),
               (g_get_monotonic_time () - t0) / 1e6);
    }
  return TRUE;
}

gboolean
sv_run_devices_open (SvRunDevices *devices, GError **error)
{
  if (devices->opening != NULL)
    {
      guint64 least_free;

      if (!sv__run_devices_await (devices, &least_free, error))
        return FALSE;
    }
  if (devices->n_backends == 0)
    {
      g_autoptr (GArray) numbers = sv__run_devices_list (devices, error);
      SvBackend **backends;

      if (numbers == NULL)
        return FALSE;
      backends = g_new0 (SvBackend *, numbers->len);
      if (!sv__run_devices_open_each (devices, numbers, backends, error))
        {
          g_free (backends);
          return FALSE;
        }
      devices->backends = backends;
      devices->n_backends = numbers->len;
    }
  /* Slabs stay on the devices, and the connectivity runs there, within
   * the same limit. */
  for (guint i = 0; i < devices->n_backends; i++)
    sv_backend_set_memory_limit (devices->backends[i], devices->memory_limit);
  return TRUE;
}

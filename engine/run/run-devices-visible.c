/* Supervox engine: the CUDA driver shown only the devices a run uses.
 *
 * The driver's start enumerates every GPU it may see, and on the four-GPU
 * machines that took 0.7–1.1 s of every run, against 0.16 s with one GPU
 * visible (a process under mpirun paid it too, once per rank). A front
 * end that owns its process and knows its devices before anything starts
 * the driver narrows CUDA_VISIBLE_DEVICES to them, and the run's list is
 * renumbered in the narrowed order. */
#define G_LOG_DOMAIN "sv-engine"

#include "run-devices-private.h"

#define VISIBLE_VAR "CUDA_VISIBLE_DEVICES"

/* The devices the driver would enumerate, as CUDA_VISIBLE_DEVICES names
 * them: its own entries when it is set, else one per GPU the kernel driver
 * lists. NULL when neither tells. */
static GPtrArray *
visible_entries (void)
{
  const char *set = g_getenv (VISIBLE_VAR);
  GPtrArray *entries = g_ptr_array_new_with_free_func (g_free);

  if (set != NULL)
    {
      g_auto (GStrv) items = g_strsplit (set, ",", -1);

      for (guint i = 0; items[i] != NULL; i++)
        {
          char *item = g_strstrip (g_strdup (items[i]));

          /* The driver stops at the first entry it cannot use; an empty
           * one is surely such, and what follows is not shown. */
          if (*item == '\0')
            {
              g_free (item);
              break;
            }
          g_ptr_array_add (entries, item);
        }
    }
  else
    {
      g_autoptr (GDir) dir = g_dir_open ("/proc/driver/nvidia/gpus", 0, NULL);
      guint n = 0;

      while (dir != NULL && g_dir_read_name (dir) != NULL)
        n++;
      for (guint i = 0; i < n; i++)
        g_ptr_array_add (entries, g_strdup_printf ("%u", i));
    }
  if (entries->len == 0)
    g_clear_pointer (&entries, g_ptr_array_unref);
  return entries;
}

gboolean
sv_run_devices_show_only_used (SvRunDevices *devices)
{
  g_autoptr (GPtrArray) entries = NULL;
  g_autoptr (GArray) numbers = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr (GArray) shown = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr (GString) visible = g_string_new (NULL);
  g_autoptr (GString) list = g_string_new (NULL);

  /* "all" shows the driver every GPU anyway. */
  if (devices->klass == NULL || devices->n_visible > 0 || g_strcmp0 (devices->list, "all") == 0
      || (entries = visible_entries ()) == NULL
      || !sv__run_devices_numbers (devices, (int)entries->len, numbers) || numbers->len == 0)
    return FALSE;
  /* Each device once, in the order first listed ("0,0" drives one GPU
   * twice); the list names them by their place in that order. */
  for (guint i = 0; i < numbers->len; i++)
    {
      const int d = g_array_index (numbers, int, i);
      const guint at = sv__run_devices_place (shown, d);

      if (at == shown->len)
        {
          g_array_append_val (shown, d);
          g_string_append_printf (visible, "%s%s", visible->len > 0 ? "," : "",
                                  (const char *)g_ptr_array_index (entries, d));
        }
      g_string_append_printf (list, "%s%u", list->len > 0 ? "," : "", at);
    }
  g_debug ("devices: the CUDA driver is shown %s=%s (of %u)", VISIBLE_VAR, visible->str,
           entries->len);
  g_setenv (VISIBLE_VAR, visible->str, TRUE);
  /* No list (one device, or the local rank's): the one visible is 0. */
  if (devices->list != NULL)
    {
      g_free (devices->list);
      devices->list = g_strdup (list->str);
    }
  devices->n_visible = shown->len;
  return TRUE;
}

gboolean
sv_run_devices_all_to_list (SvRunDevices *devices, guint most, guint *n_all)
{
  g_autoptr (GPtrArray) entries = NULL;
  g_autoptr (GString) list = g_string_new (NULL);
  guint n;

  *n_all = 0;
  if (devices->klass == NULL || devices->n_visible > 0 || g_strcmp0 (devices->list, "all") != 0
      || (entries = visible_entries ()) == NULL)
    return FALSE;
  *n_all = entries->len;
  n = most > 0 ? MIN (most, entries->len) : entries->len;
  for (guint i = 0; i < n; i++)
    g_string_append_printf (list, "%s%u", i > 0 ? "," : "", i);
  g_free (devices->list);
  devices->list = g_string_free (g_steal_pointer (&list), FALSE);
  return TRUE;
}

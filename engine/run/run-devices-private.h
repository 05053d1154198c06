/* Supervox engine: what run-devices.c, run-devices-visible.c and
 * run-devices-early.c share. */
#pragma once

#include "supervox/sv-run-execute.h"

/* Appends to `numbers` (of int) the devices `devices` names out of `count`:
 * every one for "all", the list's, or the local rank's (modulo the count),
 * or device 0. FALSE when the list does not parse or names a device
 * beyond the count. */
gboolean sv__run_devices_numbers (const SvRunDevices *devices, int count, GArray *numbers);

/* The devices a run of `devices` opens: sv__run_devices_numbers against
 * the device class's count, or NULL with the reason (no device, the
 * driver shown fewer than asked for, a list this machine cannot satisfy;
 * `error` NULL: no reason made). */
GArray *sv__run_devices_list (const SvRunDevices *devices, GError **error);

/* The least free memory of the devices `numbers`, asked of all at once
 * (each starts its context); FALSE when none could say. */
gboolean sv__run_devices_least_free (const SvBackendClass *klass, GArray *numbers, guint64 *least);

/* A backend on each of `numbers`, one after the other, into `backends`
 * (numbers->len of them); on failure those opened are freed. */
gboolean sv__run_devices_open_each (const SvRunDevices *devices, GArray *numbers,
                                    SvBackend **backends, GError **error);

/* The devices that sv_run_devices_start began to open, joined: their
 * backends become devices->backends (within devices->memory_limit), and
 * `least_free` their least free memory (0: not asked, or not known).
 * FALSE with the reason they cannot be had; TRUE at once when none were
 * opening. (run-devices-early.c) */
gboolean sv__run_devices_await (SvRunDevices *devices, guint64 *least_free, GError **error);

/* How many backends the devices opening will give (0: none opening). */
guint sv__run_devices_opening_count (const SvRunDevices *devices);

/* Joins and drops what is opening (sv_run_devices_clear). */
void sv__run_devices_drop_opening (SvRunDevices *devices);

/* Where device `d` is in `numbers` (of int): its index, or numbers->len
 * when it is not there. */
static inline guint
sv__run_devices_place (const GArray *numbers, int d)
{
  guint at = 0;

  while (at < numbers->len && g_array_index (numbers, int, at) != d)
    at++;
  return at;
}

/* Supervox engine: what run-devices.c and run-devices-visible.c share. */
#pragma once

#include "supervox/sv-run-execute.h"

/* Appends to `numbers` (of int) the devices `devices` names out of `count`:
 * every one for "all", the list's, or the local rank's (modulo the count),
 * or device 0. FALSE when the list does not parse or names a device
 * beyond the count. */
gboolean sv__run_devices_numbers (const SvRunDevices *devices, int count, GArray *numbers);

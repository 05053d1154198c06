/* supervox-cli slic: the GPUs of a streamed run (slic-devices.c). */
#pragma once

#include "slic-file.h"
#include "supervox/sv-run-plan.h"

G_BEGIN_DECLS

/* The devices the run plan may use: how many (those --devices lists, the
 * local rank's, or every one), what one lets a run use, and whether they
 * were listed; none when the CPU was asked for. */
void sv_cli_slic_measure_devices (const SvCliSlicContext *ctx, SvRunBudgets *budgets);

/* Makes ctx's device backends (once per command) within
 * --device-memory-limit. */
gboolean sv_cli_slic_open_devices (SvCliSlicContext *ctx, GError **error);

G_END_DECLS

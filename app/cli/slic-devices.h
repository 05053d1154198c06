/* supervox-cli slic: the GPUs of a streamed run (slic-devices.c). */
#pragma once

#include "slic-file.h"

G_BEGIN_DECLS

/* TRUE when this command runs on the CUDA backend: --backend cuda, or
 * auto with a GPU there. */
gboolean sv_cli_slic_wants_gpu (const SvCliSlicContext *ctx);

/* TRUE when such a volume must stream through the GPU: its in-memory run
 * needs more than the device's limit, or --devices was given. */
gboolean sv_cli_slic_device_wants_stream (const SvCliSlicContext *ctx, guint nz, guint ny,
                                          guint nx, guint nc);

/* Makes ctx's device backends (once per command) and the most slices per
 * slab that fit one device's limit. */
gboolean sv_cli_slic_open_devices (SvCliSlicContext *ctx, guint ny, guint nx, guint nc,
                                   gint64 n_segments, guint *max_depth, GError **error);

G_END_DECLS

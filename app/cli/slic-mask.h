/* supervox-cli slic --mask: one mask for every input of a batch, read once. */
#pragma once

#include <glib.h>

#include "slic-file.h"

G_BEGIN_DECLS

/* Reads the mask at `path` for the batch of `inputs` into ctx (mask_path,
 * mask_shape, mask_streamed): its header, and then the whole mask (nonzero
 * = inside; *mask receives it, g_free) unless every input streams or
 * `streamed` says so, when it is read slab by slab with each image
 * (*mask is NULL). Fails on a mask with several samples per pixel, one
 * that cannot be read, and an empty one. */
gboolean sv_cli_slic_context_read_mask (SvCliSlicContext *ctx, const char *path,
                                        const char *const *inputs, gboolean streamed, guint8 **mask,
                                        GError **error);

G_END_DECLS

/* supervox-cli slic: volumes larger than memory. Each input is either
 * loaded whole or streamed in z-slabs (engine/stream.h), decided from its
 * header and --memory-limit; both give the same label file. */
#pragma once

#include <glib.h>

#include "slic-file.h"

G_BEGIN_DECLS

/* Parses a size: bytes, or a number with K, M, G or T (powers of 1024,
 * an optional trailing "B" or "iB"), e.g. "512M", "1.5G". */
gboolean sv_cli_parse_size (const char *option, const char *text, guint64 *bytes, GError **error);

/* Memory the system could give this process now (MemAvailable), or 0 when
 * unknown. */
guint64 sv_cli_memory_available (void);

/* The most memory this process has used so far (ru_maxrss), in bytes. */
guint64 sv_cli_peak_memory (void);

/* Decides, from the file's header, whether file->input streams: when
 * ctx->slab_depth is set, or when the in-memory run would need more than
 * ctx->memory_limit. A streamed file gets its shape here and is not
 * loaded. Photos always load. */
gboolean sv_cli_slic_file_plan (SvCliSlicFile *file, const SvCliSlicContext *ctx, GError **error);

/* Whether `input` would stream (as sv_cli_slic_file_plan decides), before
 * the mask is read: with a mask and every input streaming, the mask is
 * read slab by slab and never whole. */
gboolean sv_cli_slic_would_stream (const char *input, const SvCliSlicContext *ctx);

/* The voxels of `input` from its header; FALSE for a photo or a file the
 * run will report on. */
gboolean sv_cli_slic_input_voxels (const char *input, const SvCliSlicContext *ctx, guint64 *voxels);

/* The compute step of a streamed file: runs SLIC from file->input straight
 * into file->output (nothing is left there on failure). */
gboolean sv_cli_slic_file_stream (SvCliSlicFile *file, SvCliSlicContext *ctx, GError **error);

G_END_DECLS

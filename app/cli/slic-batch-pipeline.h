/* supervox-cli slic and the window's Run Batch: many inputs in one
 * process. While file i computes, file i+1 is read on a reader thread and
 * file i−1's labels are written on a writer thread; at most one file is
 * read ahead and one waits to be written, so memory stays at about three
 * volumes. What happens to each file is told through callbacks, so that
 * each front end reports it its own way. */
#pragma once

#include <glib.h>

#include "slic-file.h"

G_BEGIN_DECLS

typedef struct
{
  /* On the compute thread, just before `file` computes. May be NULL. */
  void (*started) (const SvCliSlicFile *file, gpointer user_data);
  /* On the writer thread, once `file` has passed every stage, in input
   * order: written (file->json set), failed (file->error), or cancelled
   * (file->error is G_IO_ERROR_CANCELLED, or neither is set when it was
   * skipped after a cancel). May be NULL. */
  void (*finished) (const SvCliSlicFile *file, gpointer user_data);
  gpointer user_data;
} SvCliSlicBatchEvents;

/* Runs every file through load → compute → write with ctx (whose backend
 * this opens as ctx->backend; the caller frees it). A file that fails
 * fails alone; cancelling ctx->cancellable stops the file computing or
 * being written, leaving nothing of it, keeps the files written before and
 * skips the rest. Fails only when the backend cannot be opened, before any
 * file finished. Blocks until the last file has finished. */
gboolean sv_cli_slic_batch_pipeline_run (SvCliSlicContext *ctx, SvCliSlicFile *const *files,
                                         guint n_files, const SvCliSlicBatchEvents *events,
                                         GError **error);

/* The write step of `file`, on the pipeline's writer or a lane's
 * finisher: completes a streamed label file left to finish, writes the
 * file when it has labels (not when `skip`: a cancel came, or nothing
 * runs; then a label file left to finish goes), leaves nothing of it when
 * a cancel comes while it is written, and frees its labels. */
void sv_cli_slic_batch_write (SvCliSlicFile *file, const SvCliSlicContext *ctx, gboolean skip);

G_END_DECLS

/* supervox-cli slic: many inputs in one process, through the batch
 * pipeline (slic-batch-pipeline.h), reported on stdout and stderr. */
#pragma once

#include <glib.h>

#include "slic-file.h"

G_BEGIN_DECLS

/* What became of a batch's files. */
typedef struct
{
  guint files, written, failed, cancelled;
} SvCliSlicBatchTally;

typedef struct
{
  gboolean json;    /* results as JSON objects, one line each */
  gboolean summary; /* the batch form (-o DIR/ or a template): a line for
                     * failed files under --json, and the totals */
  /* Set: the totals (and an interrupt's line) are the caller's to print,
   * over more files than these (MPI ranks that share a batch); the batch
   * counts its own here instead. */
  SvCliSlicBatchTally *tally;
} SvCliSlicBatchOptions;

/* The totals line (or JSON object) of a batch that ran on `backend` for
 * `seconds`. */
void sv_cli_slic_batch_print_totals (const SvCliSlicBatchTally *tally, const char *backend,
                                     double seconds, gboolean json);

/* Runs every file through load → compute → write with ctx (whose backend
 * this opens), reporting each file as it is written, in input order:
 * successes on stdout, failures as one line on stderr naming the file.
 * Returns the exit status: 0 when every file was written, 1 when one or
 * more failed (or the backend could not be opened), 130 when interrupted;
 * files written before the interrupt stay, the others leave nothing. */
int sv_cli_slic_batch_run (SvCliSlicContext *ctx, SvCliSlicFile *const *files, guint n_files,
                           const SvCliSlicBatchOptions *options);

G_END_DECLS

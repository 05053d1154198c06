/* Supervox GUI: one input of Run Batch…: its name, and what happened to it
 * (waiting; running with a progress bar; done with its label count and
 * seconds; failed with the one-line error; stopped). */
#pragma once

#include <gtk/gtk.h>

#include "sv-batch-run.h"

G_BEGIN_DECLS

#define SV_TYPE_BATCH_ROW (sv_batch_row_get_type ())
G_DECLARE_FINAL_TYPE (SvBatchRow, sv_batch_row, SV, BATCH_ROW, GtkListBoxRow)

/* A waiting row for the input file at `path`. */
GtkWidget *sv_batch_row_new (const char *path);
const char *sv_batch_row_get_path (SvBatchRow *row);
/* Shows `file`'s state; NULL: waiting again (before the next Start). */
void sv_batch_row_update (SvBatchRow *row, const SvBatchFile *file);

SvBatchFileState sv_batch_row_get_state (SvBatchRow *row);
/* The state in words ("done: 412 labels in 1.3 s"), and the error line of
 * a failed file ("" otherwise), as shown. */
const char *sv_batch_row_get_state_text (SvBatchRow *row);
const char *sv_batch_row_get_error_text (SvBatchRow *row);
/* The row's progress bar, in [0, 1]. */
double sv_batch_row_get_fraction (SvBatchRow *row);

G_END_DECLS

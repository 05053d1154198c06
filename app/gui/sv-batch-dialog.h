/* Supervox GUI: File ▸ Run Batch…: the parameters on screen run on a list
 * of files, as supervox-cli slic runs them (the same pipeline, in this
 * process): the files, the output folder and names, the equivalent
 * command, a row per file with its progress and outcome, Start and Stop. */
#pragma once

#include <gtk/gtk.h>

#include "sv-batch-row.h"
#include "sv-batch-run.h"

G_BEGIN_DECLS

#define SV_TYPE_BATCH_DIALOG (sv_batch_dialog_get_type ())
G_DECLARE_FINAL_TYPE (SvBatchDialog, sv_batch_dialog, SV, BATCH_DIALOG, GtkWindow)

/* Fills `settings` with what "Copy as command" passes now. */
typedef void (*SvBatchSettingsFunc) (gpointer source, SvBatchSettings *settings);

/* A dialog over `parent`, which gives the settings through `func` (called
 * with `source`, a GObject the dialog does not outlive). */
GtkWidget *sv_batch_dialog_new (GtkWindow *parent, SvBatchSettingsFunc func, gpointer source);

/* Reads the settings again and shows their command, unless a batch runs
 * (it keeps those it started with). */
void sv_batch_dialog_refresh_settings (SvBatchDialog *dialog);

/* Adds an input file (what Add Files… does); one already listed is not
 * added twice. Not while a batch runs. */
void sv_batch_dialog_add_file (SvBatchDialog *dialog, const char *path);
/* Adds every TIFF in `folder` (not its subfolders), in name order (what
 * Add Folder… does); returns how many were added. */
guint sv_batch_dialog_add_folder (SvBatchDialog *dialog, const char *folder, GError **error);
/* The folder the labels go to (what the Output folder button sets). */
void sv_batch_dialog_set_output_folder (SvBatchDialog *dialog, const char *folder);

/* The supervox-cli command shown. */
char *sv_batch_dialog_get_command (SvBatchDialog *dialog);
guint sv_batch_dialog_get_n_files (SvBatchDialog *dialog);
SvBatchRow *sv_batch_dialog_get_row (SvBatchDialog *dialog, guint index);
gboolean sv_batch_dialog_is_running (SvBatchDialog *dialog);
/* The line under the list: the totals once a batch ended, or why it could
 * not start. */
const char *sv_batch_dialog_get_status_text (SvBatchDialog *dialog);
/* The overall bar, in [0, 1]. */
double sv_batch_dialog_get_fraction (SvBatchDialog *dialog);

G_END_DECLS

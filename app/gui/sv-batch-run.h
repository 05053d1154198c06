/* Supervox GUI: the work behind Run Batch…: supervox-cli slic's batch
 * pipeline (app/cli/slic-batch-pipeline.h) run in this process on a worker
 * thread, with the same output names, checks and label files, and what
 * happens to each file brought back to the main thread. */
#pragma once

#include <glib.h>

#include "supervox/sv-params.h"

G_BEGIN_DECLS

/* What a batch runs with: what "Copy as command" passes. */
typedef struct
{
  SvSlicParams params;
  char *mask;    /* --mask, or NULL */
  char *backend; /* --backend: "cpu", "cuda" or "auto" */
} SvBatchSettings;

void sv_batch_settings_clear (SvBatchSettings *settings);

/* The supervox-cli line that runs the batch: every input, -o `output` (a
 * folder's name template) and the settings' options. */
char *sv_batch_settings_command (const SvBatchSettings *settings, const char *const *inputs,
                                 const char *output);

typedef enum
{
  SV_BATCH_FILE_WAITING,
  SV_BATCH_FILE_RUNNING,
  SV_BATCH_FILE_DONE,
  SV_BATCH_FILE_FAILED,
  SV_BATCH_FILE_STOPPED, /* cancelled by Stop, or not started after it */
} SvBatchFileState;

/* One input as the main thread sees it. */
typedef struct
{
  char *input;
  char *output;
  SvBatchFileState state;
  guint iteration, n_iterations; /* while running; 0 of 0 between stages */
  gsize n_labels;                /* once done */
  double seconds;                /* once done: load to written */
  char *error;                   /* once failed: one line naming the file */
} SvBatchFile;

typedef struct _SvBatchRun SvBatchRun;

/* Called on the main thread: `index`'s file changed state or progress;
 * then, once, the batch ended (`error`: why it could not run at all, else
 * NULL). */
typedef struct
{
  void (*file_changed) (SvBatchRun *run, guint index, gpointer user_data);
  void (*finished) (SvBatchRun *run, const char *error, gpointer user_data);
  gpointer user_data;
} SvBatchRunEvents;

/* Names each input's labels from `output` as supervox-cli slic -o does (a
 * template with {stem}, {name}, {dir}, {index}), refuses outputs that
 * would overwrite an input, the mask or each other, creates their folders,
 * and starts the batch on a worker thread with its own backend. Fails
 * (nothing started) when the names or folders are wrong. Call on the main
 * thread; `events` come on its main context. */
SvBatchRun *sv_batch_run_start (const SvBatchSettings *settings, const char *const *inputs,
                                const char *output, const SvBatchRunEvents *events, GError **error);

/* Stops the batch: the file computing or being written leaves nothing,
 * files written stay, the rest do not start. The end still comes through
 * `finished`. */
void sv_batch_run_stop (SvBatchRun *run);

/* Stops the batch if it runs, waits for its threads and frees it; no
 * event comes after. */
void sv_batch_run_free (SvBatchRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvBatchRun, sv_batch_run_free)

gboolean sv_batch_run_is_running (SvBatchRun *run);
guint sv_batch_run_get_n_files (SvBatchRun *run);
const SvBatchFile *sv_batch_run_get_file (SvBatchRun *run, guint index);
/* The whole batch's progress in [0, 1]: files done or failed, and the
 * running ones' iterations. */
double sv_batch_run_get_fraction (SvBatchRun *run);

G_END_DECLS

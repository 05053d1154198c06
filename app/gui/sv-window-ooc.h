/* Supervox GUI: the main window with a volume larger than its memory
 * budget ("out of core"). The volume stays in its TIFF: the XY view reads
 * its slices through a slice cache, SLIC streams from the file on a worker
 * thread into a temporary label TIFF, and the overlay reads that file
 * slice by slice through a second cache. What needs the whole volume in
 * memory (XZ, YZ, 3D, region, quality, compare, teaching, live previews)
 * is off, with the reason in its tooltip.
 *   sv-window-ooc.c      opening, the views, hover, contrast, status words
 *   sv-window-ooc-run.c  the streamed runs: newest request wins, progress,
 *                        Stop, the labels shown, export */
#pragma once

#include "supervox/sv-job.h"

#include <gtk/gtk.h>

#include "supervox/sv-params.h"
#include "supervox/sv-slice-cache.h"
#include "supervox/sv-stream.h"

G_BEGIN_DECLS

typedef struct _SvWindow SvWindow;
typedef struct _SvWindowOoc SvWindowOoc;

/* The image cache and the label cache may each hold this fraction of the
 * budget; the streamed run has the half left. */
#define SV_OOC_CACHE_SHARE 4
#define SV_OOC_RUN_SHARE 2

/* Why a view or tool is off out of core, for tooltips and errors. */
#define SV_OOC_OFF_REASON                                                                          \
  "Off for a volume larger than memory: only the XY view reads slices from the file"

struct _SvWindowOoc
{
  char *path;
  SvSliceCache *image;
  SvVolume *shape; /* shape, spacing, unit and sample type; data NULL (the XY view borrows it) */
  guint64 budget;  /* the window's memory budget when opened */
  float *slice;    /* one slice as float, all channels */
  guint8 *raw;     /* one label slice in the label file's type */
  double open_seconds;

  /* The labels shown: a finished run's file, read slice by slice. */
  char *scratch_dir; /* the runs' label files; removed on close */
  SvJobResult *labels_result; /* the run whose file is shown; it owns the file */
  const char *labels_path;    /* its file */
  SvSliceCache *labels;
  SvSlicParams labels_params;
  SvRunStats labels_stats;
  SvStreamReport labels_report;
  guint64 labels_temp_planned; /* the temporary files its plan allowed for */
  const char *labels_backend; /* the name of the backend whose slab steps made them */
  int labels_channel;         /* the channel they segment; -1: every channel */

  /* Runs (sv-window-ooc-run.c): a streamed job. */
  SvJob *job;
  gboolean running;   /* the newest request has neither finished nor failed */
  guint64 generation; /* of the newest request */
  int running_channel; /* the channel the newest request segments */
  SvStage stage;      /* its progress */
  guint iteration, n_iterations;
  gboolean stopped;   /* Stop since the newest request */
  char *error;        /* why the newest run failed, or NULL */
  guint tick_source;  /* refreshes the progress bar */
};

/* Any thread: opens `path` for viewing out of core with the window's
 * budget, or NULL with the slice cache's error. */
SvWindowOoc *sv_window_ooc_new (const char *path, guint64 budget, GError **error);
void sv_window_ooc_free (SvWindowOoc *ooc);

/* TRUE when the TIFF at `path` needs more than `budget` to segment in
 * memory (read from its header; any thread). */
gboolean sv_window_ooc_wanted (const char *path, guint64 budget);

/* Shows `ooc` (taken) in the window, named `name`, and starts a run. */
void sv_window_ooc_show (SvWindow *self, SvWindowOoc *ooc, const char *name);
/* Leaves out-of-core mode: runs stopped, files removed, views restored. */
void sv_window_ooc_close (SvWindow *self);
void sv_window_ooc_update_hover (SvWindow *self);
/* " · out of core (budget …, image cache …, labels cache …)" or "". */
char *sv_window_ooc_memory_words (SvWindow *self);

/* sv-window-ooc-run.c */
/* A streamed run for the panel's parameters; the newest request wins. */
void sv_window_ooc_submit (SvWindow *self);
/* Cancels the run; its file, and any later one, never shows. */
void sv_window_ooc_stop (SvWindow *self);
gboolean sv_window_ooc_busy (SvWindow *self);
/* Labels of slice z of the labels shown; FALSE when none are. */
gboolean sv_window_ooc_read_labels (SvWindowOoc *ooc, guint z, gint32 *out, GError **error);
gboolean sv_window_ooc_check_exportable (SvWindow *self, GError **error);
/* The channel of the labels shown, or of the next run when none are. */
int sv_window_ooc_labels_channel (SvWindow *self);
/* Copies the labels shown to `path` (streaming) with the sidecar. */
gboolean sv_window_ooc_export (SvWindow *self, const char *path, GError **error);

G_END_DECLS

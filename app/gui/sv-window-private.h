/* Supervox GUI: the main window's instance struct and the functions its
 * files share. One type spread over files by concern:
 *   sv-window.c          the type, the volume, crosshair and panels
 *   sv-window-hover.c    the hovered voxel's words and teaching's search window
 *   sv-window-keys.c     keys other than the application's accelerators
 *   sv-window-zoom.c     the views' zoom, linked or each its own
 *   sv-window-job.c      the engine job: live requests while dragging,
 *                        progress, results, Stop
 *   sv-window-open.c     opening files on a worker thread, masks, recent
 *   sv-window-files.c    screenshots, presets, file chooser, errors
 *   sv-window-export.c   exported labels, their sidecar and name, the toast
 *   sv-window-table.c    the exported table: supervox-cli stats' CSV
 *   sv-window-batch.c    Run Batch…: the parameters on a list of files
 *   sv-window-actions.c  view and teaching actions, "Copy as command" and "Copy as Python"
 *   sv-window-quality.c  the quality of each result (a worker thread),
 *                        the ground truth
 *   sv-window-pins.c     the pin history: pinning, flipping to and comparing
 *                        with a pin, restoring its parameters, differences
 *   sv-window-labels.c   Open Labels…: a label file as a pin
 *   sv-window-pick.c     the picked supervoxel and Escape
 *   sv-window-contrast.c the contrast histogram and the colormap, a
 *                        composite's channels
 *   sv-window-channel.c  composites, and the channel SLIC segments ("Segment on")
 *   sv-window-levels.c   an OME-Zarr image's resolution levels ("Level")
 *   sv-window-region.c   the region preview: the job on a box of the volume
 *   sv-window-teach.c    teaching's note: what the step on screen did
 *   sv-window-memory.c   the memory in use, in the status bar
 *   sv-window-nonfinite.c NaN and ±inf voxels: counted, shown, masked out
 *   sv-window-status.c   the status bar's fixed-width labels and words
 *   sv-window-ooc*.c     a volume larger than memory: slices and labels
 *                        read from files, streamed runs */
#pragma once

#include "sv-window.h"

#include "supervox/sv-io-zarr.h"
#include "supervox/sv-quality.h"
#include "supervox/sv-sidecar.h"
#include "sv-batch-run.h"
#include "sv-contrast-panel.h"
#include "sv-pick-panel.h"
#include "sv-pin-list.h"
#include "sv-pin.h"
#include "sv-quality-panel.h"
#include "sv-volume-view.h"
#include "sv-window-ooc.h"

#include "sv-config.h"
#include "supervox/sv-synth.h"

#if SV_HAVE_CUDA
#include "sv-cuda-gl.h"
#endif

G_BEGIN_DECLS

/* The bundled sample's shape. */
#define SAMPLE_NZ 48
#define SAMPLE_NY 160
#define SAMPLE_NX 160

struct _SvWindow
{
  GtkApplicationWindow parent_instance;

  GtkLabel *title_label;
  GtkGrid *views_grid;
  SvSliceView *xy_view, *xz_view, *yz_view;
  SvVolumeView *volume_view; /* the orthogonal layout's fourth quadrant */
  SvParamsPanel *params_panel;
  GtkProgressBar *progress_bar;
  GtkLabel *result_label, *hover_label, *path_label;
  GtkLabel *memory_label; /* sv-window-memory.c */
  guint memory_source;
  GMenu *recent_section;
  GtkRevealer *warning_revealer;
  GtkLabel *warning_label;
  GtkRevealer *toast_revealer;
  GtkLabel *toast_label;
  guint toast_source;
  GtkRevealer *teach_revealer;
  GtkLabel *teach_legend, *teach_note;

  SvVolume *volume;
  char *volume_name;
  char *volume_path; /* NULL for the sample */
  SvWindowOoc *ooc;  /* a volume larger than memory (volume is then NULL), or NULL */
  guint8 *mask;      /* NULL, or nz*ny*nx bytes (1 inside) for the volume; the job borrows it */
  char *mask_path;
  SvSynthParams sample; /* how the sample was made, for "Copy as command" */

  /* NaN and ±inf voxels of the volume (sv-window-nonfinite.c). */
  gsize n_nan, n_inf;      /* voxels with a NaN; with an infinite value and no NaN */
  gsize first_nonfinite;   /* z-major index of the first, G_MAXSIZE when none */
  gboolean mask_nonfinite; /* the mask leaves them out (made by the window, no file) */
  GtkRevealer *nonfinite_revealer;
  GtkLabel *nonfinite_label;
  GtkButton *nonfinite_button;
  SvJob *job;
  SvJobResult *result;
  guint64 generation;
  SvDisplay display;
  gboolean orthogonal;
  guint cursor_zyx[3];
  gboolean hover_valid;
  guint hover_zyx[3];
  SvSliceView *active_view;
  /* sv-window-zoom.c */
  gboolean link_zoom;       /* the orthogonal views share one scale */
  SvSliceView *zoomed_view; /* the view zoomed last, NULL after a fit */
  gboolean relink_pending;  /* XZ and YZ take XY's zoom at their next size */
  guint play_source;
  GtkWindow *error_dialog; /* weak */

  /* Live requests and progress (sv-window-job.c). */
  gint64 last_change_us;         /* the last parameter change */
  gboolean dragging;             /* a pointer button is held in the panel */
  gboolean last_request_preview; /* the newest request asked for a preview */
  gboolean stopped;              /* Stop was pressed since the last request */
  guint settle_source;           /* asks for the exact result once a drag rests */
  guint status_source;           /* refreshes the progress bar while the job runs */
  gint64 submit_us;
  SvStage run_stage;
  guint run_iteration, run_n_iterations;
  int run_teaching_step;   /* the teaching step asked for; -1 for a full run */
  guint64 done_generation; /* of the last result or error delivered */
  char *run_error;         /* why the newest run failed; NULL once a result arrives */
  /* A request whose result the next frame waits for (sv-window-frame.c):
   * its generation (0: none) and how long the frame may wait. */
  guint64 await_generation;
  gint64 await_us;
  GdkFrameClock *frame_clock; /* while realized */
  gulong frame_update_handler;

  /* Loading a file on a worker thread (sv-window-files.c). */
  gboolean loading;
  GCancellable *load_cancellable;
  double load_seconds; /* reading the volume shown, for the sidecar */
  char *export_path;   /* where the labels last went, or NULL */
  gboolean exporting_table; /* sv-window-table.c: a table is being written */
  GtkWindow *batch_dialog;  /* sv-window-batch.c: Run Batch…, once opened (weak) */
#if SV_HAVE_CUDA
  SvCudaLabelsPool *cuda_labels; /* the published device labels, for interop */
#endif

  /* Quality, ground truth and compare (sv-window-quality.c). */
  SvQualityPanel *quality_panel;
  SvPinList *pin_list; /* the Pins tab (sv-window-pins.c) */
  SvQualityWorker *quality_worker;
  SvQuality *quality; /* of the newest exact result, or NULL */
  /* The result last handed to the worker, and how many were: a result's
   * quality is computed only when something on screen needs it. */
  guint64 quality_asked_generation;
  guint quality_submissions;
  /* A result whose quality waits for the frame that draws it, and the
   * frame clock's after-paint handler that hands it over. */
  SvJobResult *quality_after_paint;
  gulong quality_paint_handler;
  SvLabels *truth;    /* the ground truth opened for the volume, or NULL */
  char *truth_path;
  /* The pin history (sv-window-pins.c), label files among them. */
  GPtrArray *pins;              /* SvPin, newest first, at most SV_PINS_MAX; NULL: none yet */
  SvPin *pinned;                /* the one compared with and flipped to (in pins), or NULL */
  guint last_pin_id;            /* pins are numbered 1, 2, … */
  guint64 last_file_generation; /* label files count down from G_MAXUINT64 (sv-window-labels.c) */
  gboolean showing_pinned;      /* the views show the pinned result */
  SvConvergence *convergence; /* teaching: of the parameters in convergence_key */
  char *convergence_key;      /* those parameters as JSON; NULL when none asked for */

  /* Selection (sv-window-pick.c): the supervoxel at a picked voxel. */
  SvPickPanel *pick_panel;
  GtkNotebook *side_notebook;
  gboolean selection_valid;
  guint selection_zyx[3];

  /* Contrast (sv-window-contrast.c). */
  SvContrastPanel *contrast_panel;

  /* The channel SLIC segments (sv-window-channel.c); -1: every channel. */
  int segment_channel;
  int result_channel;       /* the channel of `result`'s run */
  SvVolume *channel_volume; /* that channel's copy for the job; NULL for every channel */

  /* The OME-Zarr image the volume is a level of (sv-window-levels.c);
   * NULL when it is none. */
  char *zarr_image;
  guint zarr_level;
  GPtrArray *zarr_levels; /* SvZarrLevel, finest first; NULL: not listed */

  /* Region preview (sv-window-region.c): the job's cropped copies. */
  gboolean region_valid;
  guint region_lo[3], region_hi[3]; /* z, y, x; hi exclusive */
  SvVolume *region_volume;          /* NULL when the job runs on the whole volume */
  guint8 *region_mask;
  SvLabels *region_truth;
};

/* sv-window.c */
/* Before another volume: the job, the out-of-core state, the results, the
 * region, the quality's state and the mask go. */
void sv_window_forget_volume (SvWindow *self);
SvSliceView *sv_window_view (SvWindow *self, guint i); /* 0 XY, 1 XZ, 2 YZ */
gboolean sv_window_verbose (SvWindow *self);
void sv_window_update_hover_status (SvWindow *self);
void sv_window_update_search_window (SvWindow *self);
void sv_window_auto_contrast (SvWindow *self);
/* File value = held value × this for integer files; 0 for float files. */
double sv_window_intensity_scale (const SvVolume *volume);

/* sv-window-job.c */
/* The status line's words for the result shown (and whether it was stopped). */
void sv_window_update_result_text (SvWindow *self);
/* Posts the exact request for the panel's parameters. */
void sv_window_submit (SvWindow *self);
/* A parameter changed: an exact request, or a preview while dragging. */
void sv_window_params_changed (SvWindow *self);
void sv_window_set_dragging (SvWindow *self, gboolean dragging);
/* A new job for the volume (and mask) shown, and its first request. */
void sv_window_start_job (SvWindow *self);
/* Frees the job (it borrows the volume and mask) and its timers. */
void sv_window_stop_job (SvWindow *self);

/* sv-window-files.c */
typedef void (*SvFileChosenFunc) (SvWindow *self, GFile *file, gpointer data);
void sv_window_show_error (SvWindow *self, const char *primary, const GError *error);
/* Asks for a file to open or save (GtkFileDialog from GTK 4.10, a native
 * chooser before); `func` gets it. */
void sv_window_choose_file (SvWindow *self, const char *title, gboolean save,
                            const char *filter_name, const char *const *patterns,
                            const char *initial_name, SvFileChosenFunc func, gpointer data);
void sv_window_class_add_file_actions (GtkWidgetClass *widget_class);

/* The codec of exported labels: the engine's default, in supervox-cli's
 * spelling ("deflate:runs"); static. */
const char *sv_window_export_compression (void);

/* sv-window-actions.c */
/* The supervox-cli line that reproduces the labels on screen into
 * `output` (an export's file) rather than the default name. */
char *sv_window_build_command_writing (SvWindow *self, const char *output);
/* What "Copy as command" passes for the labels on screen (parameters, mask
 * file, backend), for Run Batch… on other files. */
void sv_window_get_batch_settings (SvWindow *self, SvBatchSettings *settings);

/* sv-window-export.c */
/* Fills what every export's sidecar shares (the volume `v`'s description,
 * the run's counts, the command) into `sidecar`, writes it beside the
 * labels at `path` and remembers the path as the last export. */
gboolean sv_window_write_sidecar (SvWindow *self, const SvVolume *v, const SvRunStats *stats,
                                  const char *path, SvSidecar *sidecar, GError **error);
/* FALSE with a GError saying why the labels on screen cannot be exported:
 * the newest run failed, none yet, or a preview. */
gboolean sv_window_check_exportable (SvWindow *self, GError **error);
void sv_window_class_add_export_actions (GtkWidgetClass *widget_class);
/* A line over the views that hides after two seconds. */
void sv_window_show_toast (SvWindow *self, const char *text);

/* sv-window-table.c */
void sv_window_class_add_table_actions (GtkWidgetClass *widget_class);

/* sv-window-batch.c */
void sv_window_class_add_batch_actions (GtkWidgetClass *widget_class);

/* sv-window-open.c */
void sv_window_rebuild_recent_menu (SvWindow *self);
void sv_window_class_add_open_actions (GtkWidgetClass *widget_class);
/* Drops a load in progress (its volume is freed when the reader returns). */
void sv_window_cancel_loading (SvWindow *self);
/* Reads level `level` of the OME-Zarr image shown as opening the image
 * does (the load thread, Stop), then shows it keeping the panel's values
 * (sv-window-levels.c). FALSE when no OME-Zarr image is shown. */
gboolean sv_window_open_level (SvWindow *self, guint level);

/* sv-window-memory.c: the status bar's memory in use, refreshed each
 * second between start and stop. */
void sv_window_memory_start (SvWindow *self);
void sv_window_memory_stop (SvWindow *self);
void sv_window_update_memory_status (SvWindow *self);
/* The window's memory budget: SV_MEMORY_LIMIT (the application's
 * --memory-limit) or what the system has available; 0 when unknown. */
guint64 sv_window_memory_budget (void);

/* sv-window-keys.c */
/* The window's shortcut controllers (sv_window_get_keys' table). */
void sv_window_keys_init (SvWindow *self);

/* sv-window-zoom.c */
/* Linked in the orthogonal layout: one fit for the three views; else each
 * its own. On a view's resize. */
void sv_window_update_fit (SvWindow *self);
/* A new volume: the views fitted it, none is zoomed. */
void sv_window_zoom_reset (SvWindow *self);
/* The layout changed (self->orthogonal). */
void sv_window_zoom_layout_changed (SvWindow *self);
/* Links or unlinks the views' zoom; FALSE when it was so already. */
gboolean sv_window_set_link_zoom (SvWindow *self, gboolean link);
void sv_window_zoom_init (SvWindow *self);
void sv_window_class_add_zoom_actions (GtkWidgetClass *widget_class);

/* sv-window-status.c */
/* Sets a status bar label's text, and its tooltip to the whole text (the
 * label ellipsizes within its fixed width). */
void sv_window_set_status (SvWindow *self, GtkLabel *label, const char *text);
/* The status bar's words for where the overlay comes from. */
void sv_window_update_path_status (SvWindow *self);

/* sv-window-actions.c */
void sv_window_class_add_view_actions (GtkWidgetClass *widget_class);

/* sv-window-quality.c */
/* A quality worker for the volume, truth and mask shown (with the job). */
void sv_window_quality_start (SvWindow *self);
/* Frees the worker (it borrows the volume and truth). */
void sv_window_quality_stop (SvWindow *self);
/* A new volume: the truth, the pinned result and the selection go. */
void sv_window_quality_forget (SvWindow *self);
/* Stop was pressed: an unfinished run's iteration left on screen is
 * measured as it is, and the panel says what its numbers are of. */
void sv_window_quality_stopped (SvWindow *self);
/* A result arrived: its quality is computed unless it is a preview, once
 * the frame that draws the result is painted. */
void sv_window_quality_result (SvWindow *self, SvJobResult *result);
/* The window's frame clock goes: a quality waiting for it starts now. */
void sv_window_quality_unrealize (SvWindow *self);
/* The result the views show: the pinned one while flipped, else the newest. */
SvJobResult *sv_window_shown_result (SvWindow *self);
/* The quality of the shown result, or NULL while it is computed. */
SvQuality *sv_window_shown_quality (SvWindow *self);
/* The quality panel, the pin list and the highlighted voxels follow the
 * results, the pins and their numbers. */
void sv_window_quality_update_panel (SvWindow *self);
void sv_window_class_add_quality_actions (GtkWidgetClass *widget_class);

/* sv-window-pins.c */
#define SV_PINS_MAX 8
/* Adds `pin` (taken) as the newest, compared with from now on; the oldest
 * beyond SV_PINS_MAX goes. */
void sv_window_pins_add (SvWindow *self, SvPin *pin);
/* The number of the pin kept: the next pin's. */
guint sv_window_pins_next_id (SvWindow *self);
/* A finished analysis: the pins of that result without numbers take it;
 * TRUE when it was of a pin and not of the newest result. */
gboolean sv_window_pins_take_quality (SvWindow *self, SvQuality *quality);
/* A new quality worker (another truth or mask): it compares with the
 * pinned result, and measures every pin whose numbers are missing. */
void sv_window_pins_start_worker (SvWindow *self);
/* Another truth: every pin's numbers are computed again. */
void sv_window_pins_forget_quality (SvWindow *self);
/* The pin list and the views' highlighted voxels follow. */
void sv_window_pins_update (SvWindow *self);
/* The side panel shows the Pins tab. */
void sv_window_pins_show_tab (SvWindow *self);
/* A new volume: the pins go. */
void sv_window_pins_forget (SvWindow *self);
void sv_window_pins_init (SvWindow *self);
void sv_window_class_add_pin_actions (GtkWidgetClass *widget_class);

/* sv-window-labels.c */
void sv_window_class_add_labels_actions (GtkWidgetClass *widget_class);

/* sv-window-pick.c */
/* Selects the supervoxel at voxel (z, y, x) of the shown result. */
void sv_window_select_at (SvWindow *self, guint z, guint y, guint x);
/* The shown result or its numbers changed: the views and the panel follow. */
void sv_window_update_selection (SvWindow *self);
void sv_window_class_add_pick_actions (GtkWidgetClass *widget_class);
void sv_window_pick_init (SvWindow *self);
/* sv-window-quality.c: follows the side panel's tabs. */
void sv_window_quality_init (SvWindow *self);
/* sv-window-frame.c: the next frame waits for the result of a request
 * that the last runs say is quick, and shows it with the change. */
void sv_window_frame_init (SvWindow *self);
void sv_window_frame_await (SvWindow *self, const SvJobRequest *request);
/* Hands the shown live result to the quality worker when something on
 * screen needs its numbers (the Quality or Pins tab, a picked supervoxel,
 * the differing voxels highlighted) and they are not there yet. */
void sv_window_quality_ensure (SvWindow *self);

/* sv-window-region.c */
/* What the job and the quality worker borrow: the region's copies while a
 * region is set, else the volume's own. */
const SvVolume *sv_window_job_volume (SvWindow *self);
const guint8 *sv_window_job_mask (SvWindow *self);
/* (Re)crops the truth for a new quality worker. */
const SvLabels *sv_window_job_truth (SvWindow *self);
/* With the job and the quality worker stopped: (re)crops the volume and mask. */
void sv_window_region_prepare (SvWindow *self);
/* A request's parameters for the region: its share of the segments. */
void sv_window_region_adjust (SvWindow *self, SvSlicParams *params);
/* Marks a result of the job as the region's (on delivery). */
void sv_window_region_tag (SvWindow *self, SvJobResult *result);
/* A new volume: no region (the job is stopped). */
void sv_window_region_forget (SvWindow *self);
void sv_window_region_init (SvWindow *self);
/* The region button's words for a 2D image ("Whole Image") or a volume. */
void sv_window_region_set_planar (SvWindow *self, gboolean planar);
void sv_window_class_add_region_actions (GtkWidgetClass *widget_class);

/* sv-window-nonfinite.c */
/* The smallest and largest finite value (0 and 1 when there is none). */
void sv_window_finite_range (const SvVolume *volume, float *min, float *max);
/* A new volume: its NaN and ±inf voxels counted, and the bar says so. */
void sv_window_nonfinite_scan (SvWindow *self);
/* A mask file replaced the window's mask: the bar offers masking again. */
void sv_window_nonfinite_mask_replaced (SvWindow *self);
void sv_window_class_add_nonfinite_actions (GtkWidgetClass *widget_class);

/* sv-window-contrast.c */
/* The volume changed: its histogram for the contrast panel. */
void sv_window_contrast_set_volume (SvWindow *self);
/* Out of core: a sample's histogram (taken) of the volume of `shape`
 * (every channel); a composite's channels each start from it. */
void sv_window_contrast_set_sampled (SvWindow *self, const SvVolume *shape, SvHistogram *sample);
/* The display settings changed: the histogram's handles follow, and a
 * composite's channels go into the display. */
void sv_window_contrast_sync (SvWindow *self);
void sv_window_contrast_init (SvWindow *self);
void sv_window_class_add_contrast_actions (GtkWidgetClass *widget_class);

/* sv-window-channel.c */
/* The volume SLIC segments: the chosen channel's copy, else the volume. */
const SvVolume *sv_window_segmented_volume (SvWindow *self);
/* The channel of the labels on screen (or of the next run when none is
 * shown), counted from 0 as supervox-cli's --channel; -1: every channel. */
int sv_window_labels_channel (SvWindow *self);
/* "Segment on" changed: a new job on the channel's copy (TRUE), or FALSE
 * when it names the channel the job has. */
gboolean sv_window_channel_sync (SvWindow *self);
/* A new volume: every channel, no copy (the job is stopped). */
void sv_window_channel_forget (SvWindow *self);
/* A multichannel volume's words in the title: " RGB" for a photo, " · 3
 * channels" for a composite, else "". */
const char *sv_window_channel_words (const SvVolume *volume);
/* Channels drawn as a composite: 0 for one channel or a photo (8-bit RGB),
 * else 2 or 3 (the first three of more). */
guint sv_window_composite_channels (const SvVolume *volume);

/* sv-window-levels.c */
/* Where the view of a level was, for the same place in the next one. */
typedef struct
{
  guint shape[3];  /* z, y, x of the level left */
  guint cursor[3]; /* the slices shown in it */
} SvLevelPlace;
void sv_window_levels_init (SvWindow *self);
/* Another volume: no image, no levels, "Level" hidden. */
void sv_window_levels_forget (SvWindow *self);
/* Before another level of the same image is shown: where the view is;
 * the panel keeps its values through the next file. */
void sv_window_levels_leave (SvWindow *self, SvLevelPlace *place);
/* After a load: the volume shown is level `level` of the OME-Zarr image
 * `image` (NULL: it is none), whose levels are `levels` (taken; NULL: not
 * listed). `place`: where the view of the last level was (NULL: another
 * file), for the same slices here and the channel "Segment on" kept. */
void sv_window_levels_opened (SvWindow *self, const char *image, guint level, GPtrArray *levels,
                              const SvLevelPlace *place);
/* "Level" shows the level on screen again (a load stopped or failed). */
void sv_window_levels_show (SvWindow *self);
/* "Level" shows `level`, being read. */
void sv_window_levels_asked (SvWindow *self, guint level);
/* The entry of "Level" for `level`: "1: 512×512×512, 2×2×2 µm". */
char *sv_window_level_words (const SvZarrLevel *level);

/* sv-window-teach.c */
/* Teaching's note for the step on screen, with its numbers once the
 * convergence record has come. */
void sv_window_teach_update (SvWindow *self);

G_END_DECLS

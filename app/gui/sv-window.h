/* Supervox GUI: the main window: slice views, parameter panel, status. */
#pragma once

#include <gtk/gtk.h>

#include "supervox/sv-job.h"
#include "sv-contrast-panel.h"
#include "sv-params-panel.h"
#include "sv-pick-panel.h"
#include "sv-pin-list.h"
#include "sv-quality-panel.h"
#include "sv-volume-view.h"
#include "sv-slice-view.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

#define SV_TYPE_WINDOW (sv_window_get_type ())
G_DECLARE_FINAL_TYPE (SvWindow, sv_window, SV, WINDOW, GtkApplicationWindow)

GtkWidget *sv_window_new (GtkApplication *application);

/* Shows `volume` (ownership taken) named `name` and starts segmenting it.
 * The spacing widgets take the volume's spacing. */
void sv_window_set_volume (SvWindow *window, SvVolume *volume, const char *name);

/* The bundled sample: a phantom of cells and nuclei (sv_synth_cells) of the
 * given shape, segmented. */
gboolean sv_window_load_sample (SvWindow *window, guint nz, guint ny, guint nx, GError **error);

/* Opens a TIFF, PNG or JPEG file on a worker thread: the progress bar says
 * "Loading… n %" and Stop drops the load. When the file cannot be read an
 * error dialog shows one line from the GError and the current volume stays.
 * Returns FALSE when loading could not start (not a local file: the dialog
 * is up then); sv_window_is_busy is TRUE until the volume is shown. */
gboolean sv_window_open_file (SvWindow *window, GFile *file);

/* Opens a mask TIFF (sv_tiff_read_mask: nonzero = inside) for the volume
 * shown; the job restarts with it and "Copy as command" adds --mask. A mask
 * of another shape, or one that cannot be read, shows an error dialog and
 * changes nothing (returns FALSE). Opening another volume drops the mask. */
gboolean sv_window_open_mask (SvWindow *window, GFile *file);
/* NaN or ±inf voxels of the volume shown (a voxel counts once). */
gsize sv_window_get_n_nonfinite (SvWindow *window);
/* Masks them out (action win.mask-nonfinite, the bar's button): the mask
 * holds the finite voxels inside any mask already open, and the job
 * restarts with it. FALSE when there is nothing to mask or it is done. */
gboolean sv_window_mask_nonfinite (SvWindow *window);
/* The bar about non-finite voxels, or NULL when hidden. */
const char *sv_window_get_nonfinite_text (SvWindow *window);

const SvVolume *sv_window_get_volume (SvWindow *window);
/* The labels on screen (borrowed), NULL before the first result. */
SvJobResult *sv_window_get_result (SvWindow *window);
/* Generation of the newest request posted to the engine. */
guint64 sv_window_get_generation (SvWindow *window);
/* How long a frame may wait now for a quick run's result, in µs: the
 * refresh interval less a margin (sv-window-frame.c); 0 when frames do
 * not wait, −1 when not realized. */
gint64 sv_window_get_frame_wait_us (SvWindow *window);
SvParamsPanel *sv_window_get_params_panel (SvWindow *window);
SvSliceView *sv_window_get_slice_view (SvWindow *window, SvAxis axis);
/* The error dialog currently shown, or NULL. */
GtkWindow *sv_window_get_error_dialog (SvWindow *window);
/* The status line's hover part ("x 3  y 4  z 5  ·  I 0.5  ·  label 7"). */
const char *sv_window_get_hover_text (SvWindow *window);
/* TRUE when the labels on screen are the exact result (not a preview) of
 * the newest request, and no exact result is still to be asked for. */
gboolean sv_window_is_settled (SvWindow *window);
/* TRUE while a file is loading or the job has a request pending or running. */
gboolean sv_window_is_busy (SvWindow *window);
/* Stop (Escape, the status bar's Stop button, action win.stop): cancels the
 * running job and a file being loaded; the labels on screen stay. */
void sv_window_stop (SvWindow *window);
/* The warning shown above the status bar (a run that gave far fewer
 * labels than asked for), or NULL. */
const char *sv_window_get_warning_text (SvWindow *window);
/* The status bar's texts: the progress bar's and the result's. */
const char *sv_window_get_progress_text (SvWindow *window);
const char *sv_window_get_result_text (SvWindow *window);
/* The status bar's memory in use ("312.4 MiB in memory"). */
const char *sv_window_get_memory_text (SvWindow *window);
/* Out of core (sv-window-ooc.c): a TIFF whose in-memory run needs more
 * than the memory budget (SV_MEMORY_LIMIT, --memory-limit) opens with its
 * slices and labels read from files. */
gboolean sv_window_is_out_of_core (SvWindow *window);
/* The folder of the streamed runs' label files (NULL before the first). */
const char *sv_window_get_scratch_dir (SvWindow *window);
/* Labels of slice z (ny·nx) as the view shows them; FALSE (error unset)
 * while none are shown. */
gboolean sv_window_read_label_slice (SvWindow *window, guint z, gint32 *out, GError **error);
/* The image slice cache's bytes held and its bound. */
void sv_window_get_cache_bytes (SvWindow *window, guint64 *bytes, guint64 *budget);
/* The views' area (the three views in the orthogonal layout). */
GtkWidget *sv_window_get_views_area (SvWindow *window);
/* Teaching mode's legend and note while they are shown, else NULL. */
char *sv_window_get_teaching_legend (SvWindow *window);
/* The supervox-cli line that reproduces the labels on screen. */
char *sv_window_build_command (SvWindow *window);
/* Python code (the supervox package, tifffile) that reproduces the labels
 * on screen in `labels`; "" before a volume is shown. */
char *sv_window_build_python (SvWindow *window);

/* Writes the labels on screen as a uint32 TIFF (sv_tiff_write_labels) with
 * the calibration supervox-cli writes (sv_label_calibration), and a JSON sidecar beside it
 * (sv_sidecar_path) with the keys supervox-cli slic writes: input,
 * output, shape, timings, parameters, command, version. Fails when the
 * newest run failed (saying why), no labels are there yet, or a preview is
 * on screen. */
gboolean sv_window_export_labels (SvWindow *window, const char *path, GError **error);
/* Writes the table of the labels on screen to `path` as supervox-cli stats
 * writes it for the exported labels and the input (one row per
 * supervoxel: count, volume, centroid, bounding box, intensities in the
 * file's values), on a worker thread; a toast or an error dialog says how
 * it went. FALSE with a GError when it cannot start (no finished labels). */
gboolean sv_window_export_table (SvWindow *window, const char *path, GError **error);
/* TRUE while a table is being written. */
gboolean sv_window_is_exporting_table (SvWindow *window);
/* The export dialog's name for the labels: the input's name without its
 * extensions + "-labels.tif" (brain.tif -> brain-labels.tif; the sample:
 * sample-labels.tif). "Copy as command" writes the same name. */
char *sv_window_default_export_name (SvWindow *window);
/* The transient line over the views ("command copied", where an export
 * went) while it is shown, else NULL. It hides after two seconds. */
const char *sv_window_get_toast_text (SvWindow *window);

/* Saves what the user sees of the volume (every view shown, with its
 * slider) as a PNG of the views' area's size, after their next frame; a
 * failure shows an error dialog. */
void sv_window_save_screenshot (SvWindow *window, const char *path);

#define SV_PRESET_EXTENSION ".svpreset"
/* Presets: every SLIC parameter and the backend in a GKeyFile, group [slic].
 * A name without .svpreset or .ini gets .svpreset (sv_window_preset_path),
 * so that the Load Preset dialog lists it. */
gboolean sv_window_save_preset (SvWindow *window, const char *path, GError **error);
/* Where sv_window_save_preset writes `path`. */
char *sv_window_preset_path (const char *path);
/* Loads and validates a preset; the panel takes it and the job restarts. */
gboolean sv_window_load_preset (SvWindow *window, const char *path, GError **error);

/* Opens a label TIFF as the ground truth of the volume shown (read on a
 * worker thread); the quality panel then adds boundary recall,
 * undersegmentation error and achievable accuracy. One of another shape
 * shows an error dialog and changes nothing. Another volume drops it. */
gboolean sv_window_open_ground_truth (SvWindow *window, GFile *file);
gboolean sv_window_has_ground_truth (SvWindow *window);
SvQualityPanel *sv_window_get_quality_panel (SvWindow *window);
SvPickPanel *sv_window_get_pick_panel (SvWindow *window);
SvContrastPanel *sv_window_get_contrast_panel (SvWindow *window);
/* The 3D view of the orthogonal layout. */
SvVolumeView *sv_window_get_volume_view (SvWindow *window);

/* Compare (P, C): pins the exact labels on screen with the panel's
 * parameters, as the newest of up to 8 pins (the quality panel lists
 * them), and compares the live labels with it; C flips the views between
 * the pinned and the live result; the quality panel shows the one on
 * screen and the differences from the other. */
void sv_window_pin (SvWindow *window);
void sv_window_flip_pinned (SvWindow *window);
gboolean sv_window_get_showing_pinned (SvWindow *window);
guint sv_window_get_n_pins (SvWindow *window);
/* The Pins tab. */
SvPinList *sv_window_get_pin_list (SvWindow *window);
/* The live labels compared with the pinned ones, once measured: their
 * adjusted Rand index and the voxels that differ (sv-partition-compare.h).
 * FALSE while it is computed, or with nothing pinned. */
gboolean sv_window_get_comparison (SvWindow *window, double *ari, guint64 *n_differing);
/* How many results the window has handed to its quality worker: none
 * while nothing on screen shows their numbers. */
guint sv_window_get_quality_submissions (SvWindow *window);

/* Open Labels…: reads a label TIFF (integers of 8 to 32 bits, 0 the
 * background) on a worker thread and adds it as the newest pin, compared
 * with the live labels. One that cannot be read or is not of the image's
 * shape is said in one line over the status bar (sv_window_get_warning_text)
 * and changes nothing. FALSE when reading could not start. */
gboolean sv_window_open_labels (SvWindow *window, GFile *file);

/* Region preview: the job runs on the box [lo, hi) (z, y, x; a Shift-drag
 * in a view draws one) and the labels show inside it; FALSE with an error
 * for an empty box or one outside the volume. Another volume drops it. */
gboolean sv_window_set_region (SvWindow *window, const guint lo[3], const guint hi[3],
                               GError **error);
/* FALSE when the job runs on the whole volume. */
gboolean sv_window_get_region (SvWindow *window, guint lo[3], guint hi[3]);
/* "Run on Whole Volume": drops the region and runs on everything. */
void sv_window_run_whole_volume (SvWindow *window);

/* Selection: the supervoxel at a clicked voxel. FALSE when none. */
gboolean sv_window_get_selected (SvWindow *window, gint32 *label);
void sv_window_clear_selection (SvWindow *window);

/* A key of the window that is not an application accelerator. */
typedef struct
{
  const char *action;      /* "win.pin" */
  const char *accelerator; /* "p", as gtk_accelerator_parse reads it */
  gboolean in_views;       /* only while the views have the focus */
} SvWindowKey;

/* The window's own keys (the application's accelerators are set in
 * sv-application.c), as the shortcuts window lists them. */
const SvWindowKey *sv_window_get_keys (guint *n_keys);

G_END_DECLS

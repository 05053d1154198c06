/* Supervox GUI: the side panel with every SLIC parameter, the overlay and
 * image display settings, and the teaching controls. */
#pragma once

#include <gtk/gtk.h>

#include "supervox/sv-params.h"
#include "sv-renderer.h"

G_BEGIN_DECLS

#define SV_TYPE_PARAMS_PANEL (sv_params_panel_get_type ())
G_DECLARE_FINAL_TYPE (SvParamsPanel, sv_params_panel, SV, PARAMS_PANEL, GtkWidget)

GtkWidget *sv_params_panel_new (void);

/* The SLIC parameters as set in the panel. */
void sv_params_panel_get_params (SvParamsPanel *panel, SvSlicParams *params);
/* Sets every SLIC widget and emits "params-changed" once. */
void sv_params_panel_set_params (SvParamsPanel *panel, const SvSlicParams *params);
/* "auto", "cpu" or "cuda". */
const char *sv_params_panel_get_backend (SvParamsPanel *panel);
void sv_params_panel_set_backend (SvParamsPanel *panel, const char *backend);
/* The channel "Segment on" names, counted from 0 as supervox-cli's
 * --channel (-1: all channels). Setting it emits "params-changed". */
int sv_params_panel_get_channel (SvParamsPanel *panel);
void sv_params_panel_set_channel (SvParamsPanel *panel, int channel);
/* -1 outside teaching mode, else the iteration to stop after. */
int sv_params_panel_get_stop_after_iteration (SvParamsPanel *panel);
void sv_params_panel_set_iteration (SvParamsPanel *panel, int iteration);
void sv_params_panel_set_teaching (SvParamsPanel *panel, gboolean teaching);

/* The file's spacing (z, y, x) and unit (NULL when none): the spacing
 * widgets show it relative to the finest axis (the default) or as it is,
 * with the unit beside them. Does not emit. */
void sv_params_panel_set_file_spacing (SvParamsPanel *panel, const double spacing[3],
                                       const char *unit);
/* Relative to the finest axis (TRUE) or the file's values; setting it
 * converts the values shown and emits "params-changed". */
gboolean sv_params_panel_get_spacing_relative (SvParamsPanel *panel);
void sv_params_panel_set_spacing_relative (SvParamsPanel *panel, gboolean relative);
/* The line under the spacing fields that says what their unit is. */
const char *sv_params_panel_get_spacing_unit_text (SvParamsPanel *panel);
/* The panel's note (a value lowered to its limit, the backend that really
 * ran), or NULL when none is shown. */
const char *sv_params_panel_get_note (SvParamsPanel *panel);
/* After a fallback: the dropdown shows `backend` (no new run) and the note
 * says `why`. */
void sv_params_panel_show_backend_ran (SvParamsPanel *panel, const char *backend, const char *why);
/* Integer files: intensities are shown in the file's values, shown value ×
 * `scale` (65535 for 16 bits); 0 shows the values as they are. */
void sv_params_panel_set_intensity_scale (SvParamsPanel *panel, double scale);
/* An intensity as the panel and the status bar show it. Free with g_free. */
char *sv_params_panel_format_intensity (SvParamsPanel *panel, double value);
/* Convenience for tests and presets: one parameter, exactly (as typed in
 * the entry beside the slider); emits "params-changed". */
void sv_params_panel_set_compactness (SvParamsPanel *panel, double compactness);

/* A new file of `shape` (z, y, x) and `channels`: values still at the last
 * file's defaults take the new file's (segments for supervoxels of about
 * 10³ voxels, 20² pixels in 2D; compactness 10 for a colour photo); values
 * the user changed are kept, and a line over the fields names them, with
 * Reset. "Segment on" lists the channels and starts at all of them. Call
 * after sv_params_panel_set_file_spacing. Does not emit. */
void sv_params_panel_set_file (SvParamsPanel *panel, const guint shape[3], guint channels);

/* "Level" (sv-params-panel-level.c): an OME-Zarr image's resolution
 * levels, named as `names` (NULL-terminated) gives them ("1:
 * 512×512×512, 2×2×2 µm"), `selected` the one shown; hidden for fewer
 * than two. Does not emit. A pick by the user emits "level-chosen" with
 * the level (guint). */
void sv_params_panel_set_levels (SvParamsPanel *panel, const char *const *names, guint selected);
/* The level "Level" shows; 0 while hidden. */
guint sv_params_panel_get_level (SvParamsPanel *panel);
/* The next sv_params_panel_set_file is the same image at another level:
 * every value stays as it is (the segment count too: it divides the same
 * physical volume, so supervoxels keep their size in µm) and so do "Segment
 * on", the defaults and the line about kept values; only the shape (and
 * the spacing, from sv_params_panel_set_file_spacing) is the level's. */
void sv_params_panel_keep_for_level (SvParamsPanel *panel);
/* Every SLIC value back to the file's defaults (the spacing stays); emits. */
void sv_params_panel_reset_to_defaults (SvParamsPanel *panel);
/* The line about kept values, or NULL when none is shown. */
const char *sv_params_panel_get_kept_text (SvParamsPanel *panel);
/* The supervoxel size the segment count gives, beside the field
 * ("≈ 1 200 voxels each", and "0.38 µm³" on a second line for a file
 * with a unit). */
const char *sv_params_panel_get_segment_size_text (SvParamsPanel *panel);
/* Segments for supervoxels of about 10³ voxels (20² pixels when nz is 1),
 * two significant digits, from 1 to `most`. */
gint64 sv_params_default_n_segments (guint nz, guint ny, guint nx, double most);

/* TRUE while a pointer button is held down in the panel (a slider being
 * dragged); notifies "dragging" on press and release. The property is
 * writable so that scripts and tests can play a drag. */
gboolean sv_params_panel_get_dragging (SvParamsPanel *panel);

void sv_params_panel_get_display (SvParamsPanel *panel, SvDisplay *display);
/* The intensity range the black/white sliders span, and their values. */
void sv_params_panel_set_intensity_range (SvParamsPanel *panel, double min, double max);
void sv_params_panel_set_window (SvParamsPanel *panel, double low, double high);
/* Gamma (> 0); emits "display-changed". */
void sv_params_panel_set_gamma (SvParamsPanel *panel, double gamma);
void sv_params_panel_set_overlay (SvParamsPanel *panel, SvOverlayMode mode);

G_END_DECLS

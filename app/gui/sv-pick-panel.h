/* Supervox GUI: the selection panel: the supervoxel picked with a click,
 * as the engine measured it (label-stats.h): its id, voxel count, physical
 * volume, intensity (in the file's values, as the status bar shows them),
 * bounding box and centre; "Show selected only"; Clear. */
#pragma once

#include <gtk/gtk.h>

#include "supervox/sv-label-stats.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

#define SV_TYPE_PICK_PANEL (sv_pick_panel_get_type ())
G_DECLARE_FINAL_TYPE (SvPickPanel, sv_pick_panel, SV, PICK_PANEL, GtkWidget)

GtkWidget *sv_pick_panel_new (void);

/* Shows supervoxel `label`; `stats` NULL while its numbers are being
 * computed. intensity_scale: file value = held value × scale for integer
 * files, 0 for float files (sv_window_intensity_scale). */
void sv_pick_panel_show (SvPickPanel *panel, gint32 label, const SvLabelStats *stats,
                         const SvVolume *volume, double intensity_scale);
/* A 2D image: the rows say superpixel, pixels and area, and leave out z. */
void sv_pick_panel_set_planar (SvPickPanel *panel, gboolean planar);
/* Nothing selected. */
void sv_pick_panel_clear (SvPickPanel *panel);

/* "Show selected only": the overlay and the image only inside the
 * selected supervoxel (property "selected-only"). */
gboolean sv_pick_panel_get_selected_only (SvPickPanel *panel);
void sv_pick_panel_set_selected_only (SvPickPanel *panel, gboolean only);

/* The text of one row: "id", "voxels", "volume", "intensity", "bounds",
 * "centre"; NULL for another. */
const char *sv_pick_panel_get_text (SvPickPanel *panel, const char *row);

/* A measured quantity as people write it: four significant digits, never
 * in exponent notation, digits from 10 000 on in groups of three with a
 * narrow space: 15640 -> "15 640", 552960 -> "553 000", 0.00064 -> "0.00064". */
char *sv_format_quantity (double value);

/* The unit as people write it: "micron" -> "µm"; NULL stays NULL. */
const char *sv_unit_symbol (const char *unit);

G_END_DECLS

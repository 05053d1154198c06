/* Supervox GUI: a scale bar drawn over a slice view: a bar of a round
 * length (1, 2 or 5 × 10ⁿ) in the file's unit, about a fifth of the view
 * wide, with its length written above it. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SV_TYPE_SCALE_BAR (sv_scale_bar_get_type ())
G_DECLARE_FINAL_TYPE (SvScaleBar, sv_scale_bar, SV, SCALE_BAR, GtkWidget)

GtkWidget *sv_scale_bar_new (void);
/* `pixels_per_unit` logical pixels per unit of `unit` ("µm"; "voxels" or
 * "px" when the file gives none; NULL: voxels); 0 hides the bar. */
void sv_scale_bar_set_scale (SvScaleBar *bar, double pixels_per_unit, const char *unit);
/* The bar's length in units and its text ("10 µm"), for tests. */
double sv_scale_bar_get_length (SvScaleBar *bar);
const char *sv_scale_bar_get_text (SvScaleBar *bar);

/* The round length (1, 2 or 5 × 10ⁿ) closest below `at_most`. */
double sv_scale_bar_round_length (double at_most);

G_END_DECLS

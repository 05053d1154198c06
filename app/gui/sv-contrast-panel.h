/* Supervox GUI: the contrast panel, as napari's contrast limits and Fiji's
 * B&C: the volume's intensity histogram with draggable black and white
 * handles, Auto (0.35 % saturated), Reset (the full range) and the
 * colormap (grey, inverted, viridis). */
#pragma once

#include <gtk/gtk.h>

#include "supervox/sv-histogram.h"
#include "sv-renderer.h"

G_BEGIN_DECLS

#define SV_TYPE_CONTRAST_PANEL (sv_contrast_panel_get_type ())
G_DECLARE_FINAL_TYPE (SvContrastPanel, sv_contrast_panel, SV, CONTRAST_PANEL, GtkWidget)

typedef enum
{
  SV_HANDLE_BLACK,
  SV_HANDLE_WHITE,
} SvContrastHandle;

GtkWidget *sv_contrast_panel_new (void);

/* The histogram drawn (taken; NULL for none). intensity_scale: file value
 * = held value × scale (0 for float files), for the numbers shown. */
void sv_contrast_panel_set_histogram (SvContrastPanel *panel, SvHistogram *histogram,
                                      double intensity_scale);
const SvHistogram *sv_contrast_panel_get_histogram (SvContrastPanel *panel);
/* Moves the handles to the window (and the curve to gamma); no signal. */
void sv_contrast_panel_set_window (SvContrastPanel *panel, double low, double high, double gamma);
/* Moves a handle to the histogram's x (logical pixels from its left edge)
 * as a drag does, and emits "window-changed" (double low, double high). */
void sv_contrast_panel_move_handle (SvContrastPanel *panel, SvContrastHandle handle, double x);
/* The intensity at the histogram's x. */
double sv_contrast_panel_x_to_value (SvContrastPanel *panel, double x);
/* The histogram's drawing area (tests). */
GtkWidget *sv_contrast_panel_get_plot (SvContrastPanel *panel);

/* Property "colormap" (an SvColormap). */
SvColormap sv_contrast_panel_get_colormap (SvContrastPanel *panel);
void sv_contrast_panel_set_colormap (SvContrastPanel *panel, SvColormap colormap);

G_END_DECLS

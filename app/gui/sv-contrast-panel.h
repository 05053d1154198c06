/* Supervox GUI: the contrast panel, as napari's contrast limits and Fiji's
 * B&C: the volume's intensity histogram with draggable black and white
 * handles, Auto (0.35 % saturated), Reset (the full range) and the
 * colormap (grey, inverted, viridis). For a composite of 2 or 3 channels,
 * a row above chooses the channel that the histogram, handles, Auto and
 * Reset work on, its colour and whether it shows. */
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
/* A composite of n_channels (2 or 3): each channel's histogram
 * (histograms[c], taken; may be NULL) and a window over its range, Fiji's
 * colours (green and magenta for two, red, green and blue for three),
 * every channel shown, channel 0 selected. sv_contrast_panel_set_histogram
 * goes back to one channel. No signal. */
void sv_contrast_panel_set_channels (SvContrastPanel *panel, guint n_channels,
                                     SvHistogram **histograms, double intensity_scale);
/* 0 for one channel, else the composite's channels. */
guint sv_contrast_panel_get_n_channels (SvContrastPanel *panel);
/* Property "channel": the composite's channel the histogram and handles
 * show (counted from 0); setting it moves them to its window. */
guint sv_contrast_panel_get_channel (SvContrastPanel *panel);
void sv_contrast_panel_set_channel (SvContrastPanel *panel, guint channel);
/* A composite channel's window (black and white point, in held values). */
void sv_contrast_panel_get_channel_window (SvContrastPanel *panel, guint channel, double *low,
                                           double *high);
void sv_contrast_panel_set_channel_window (SvContrastPanel *panel, guint channel, double low,
                                           double high);
/* The composite as the views draw it: display->n_channels and each
 * channel's window and colour (black when hidden); n_channels 0 for one
 * channel. Signal "channels-changed": a colour chosen or a channel shown
 * or hidden. */
void sv_contrast_panel_get_composite (SvContrastPanel *panel, SvDisplay *display);

/* Moves the handles to the window (and the curve to gamma); in a composite
 * that is the selected channel's window. No signal. */
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

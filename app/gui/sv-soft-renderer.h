/* Supervox GUI: the slice view's drawing without OpenGL: what
 * sv_renderer_draw and shaders/slice.frag draw (window/level, gamma,
 * colormap, composites of channels, boundaries or filled labels, hover,
 * selection, differences, crosshair, search window, centres), computed on
 * the CPU into a cairo image. Used
 * when GL cannot be had (remote desktops, broken drivers) so that the data
 * still shows. */
#pragma once

#include <cairo.h>
#include <glib.h>

#include "sv-renderer.h"

G_BEGIN_DECLS

/* Draws the frame into `surface` (CAIRO_FORMAT_ARGB32 of frame->width ×
 * frame->height): `image` is width × height texels of nc (1 to 3) floats,
 * `labels` width × height labels or NULL, `difference` width × height
 * bytes (nonzero: highlighted) or NULL, `marks` teaching's centre marks in
 * drawing order (drawn when display->show_centres). */
void sv_soft_render (cairo_surface_t *surface, const SvDisplay *display, const SvRenderFrame *frame,
                     const float *image, guint width, guint height, guint nc, const gint32 *labels,
                     const guint8 *difference, const SvCentreMark *marks, gsize n_marks);

G_END_DECLS

/* Supervox GUI: teaching's convergence plot. Per iteration (x axis), the
 * voxels that changed cluster (orange, left axis, log scale) and how far a
 * centre moved on average (blue, right axis, voxels), as the engine
 * records them (sv-convergence.h), with ticks and labelled axes and a
 * marker at the step on screen. Plain cairo: the quality panel draws it in
 * a GtkDrawingArea, tests into an image. */
#pragma once

#include <cairo.h>
#include <glib.h>

#include "supervox/sv-convergence.h"

G_BEGIN_DECLS

#define SV_PLOT_MAX_TICKS 12

typedef struct
{
  double value; /* in the axis' unit */
  double pos;   /* where it is drawn: x for the iteration axis, y for the others */
  char text[16];
} SvPlotTick;

typedef struct
{
  const char *title;
  double lo, hi; /* the range shown, in the axis' unit */
  gboolean log;  /* drawn as log10 (1 + value) */
  SvPlotTick ticks[SV_PLOT_MAX_TICKS];
  guint n_ticks;
} SvPlotAxis;

typedef struct
{
  double x0, y0, x1, y1; /* the plotting area, in pixels (y down) */
  SvPlotAxis iteration, changed, shift;
} SvConvergencePlot;

/* Where the plot of `convergence` goes in a width × height drawing, and
 * its axes. FALSE when there is nothing to plot or no room. */
gboolean sv_convergence_plot_layout (const SvConvergence *convergence, int width, int height,
                                     SvConvergencePlot *plot);

/* The pixel of a value on an axis of the layout. */
double sv_convergence_plot_x (const SvConvergencePlot *plot, double iteration);
double sv_convergence_plot_y (const SvConvergencePlot *plot, const SvPlotAxis *axis, double value);

/* Draws the plot with text and axes in `ink` (r, g, b, a), and a marker at
 * iteration `step` (1-based; 0 for none). */
void sv_convergence_plot_draw (cairo_t *cr, int width, int height, const SvConvergence *convergence,
                               int step, const double ink[4]);

G_END_DECLS

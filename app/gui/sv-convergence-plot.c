/* Supervox GUI: teaching's convergence plot. */
#define G_LOG_DOMAIN "sv-convergence-plot"

#include "sv-convergence-plot.h"

#include <math.h>
#include <string.h>

#define FONT_SIZE 10.0
#define TICK_LENGTH 4.0
/* Room for a tick label along each axis. */
#define X_TICK_PX 26.0
#define Y_TICK_PX 16.0

static const double changed_rgb[3] = { 0.95, 0.55, 0.15 };
static const double shift_rgb[3] = { 0.2, 0.45, 0.9 };
static const double marker_rgb[3] = { 0.85, 0.1, 0.25 };

/* The smallest of 1, 2, 5 × 10^k at least `raw`. */
static double
nice_step (double raw)
{
  double p = pow (10.0, floor (log10 (MAX (raw, 1e-12))));

  for (guint i = 0; i < 3; i++)
    {
      const double m[3] = { 1.0, 2.0, 5.0 };
      if (m[i] * p >= raw * (1.0 - 1e-9))
        return m[i] * p;
    }
  return 10.0 * p;
}

/* 1, 10, 100, 1k … 10M: short enough for a narrow axis. */
static void
count_text (double v, char *out, gsize size)
{
  if (v >= 1e6)
    g_snprintf (out, size, "%gM", v / 1e6);
  else if (v >= 1e3)
    g_snprintf (out, size, "%gk", v / 1e3);
  else
    g_snprintf (out, size, "%g", v);
}

static double
axis_t (const SvPlotAxis *a, double value)
{
  double lo = a->log ? log10 (1.0 + a->lo) : a->lo, hi = a->log ? log10 (1.0 + a->hi) : a->hi;
  double v = a->log ? log10 (1.0 + MAX (value, 0.0)) : value;

  return hi > lo ? (v - lo) / (hi - lo) : 0.0;
}

double
sv_convergence_plot_x (const SvConvergencePlot *p, double iteration)
{
  return p->x0 + axis_t (&p->iteration, iteration) * (p->x1 - p->x0);
}

double
sv_convergence_plot_y (const SvConvergencePlot *p, const SvPlotAxis *axis, double value)
{
  return p->y1 - axis_t (axis, value) * (p->y1 - p->y0);
}

/* The axes' ranges and tick values; their pixels come once the area is known. */
static void
axes_values (const SvConvergence *c, double height, SvConvergencePlot *p)
{
  guint n = c->n_iterations, max_y_ticks = (guint)MAX (2.0, height / Y_TICK_PX);
  double most_changed = 0, most_shift = 0, step;

  for (guint i = 0; i < n; i++)
    {
      most_changed = MAX (most_changed, (double)c->changed[i]);
      most_shift = MAX (most_shift, c->mean_moved[i]);
    }

  /* Changed voxels: 0, then powers of ten from 10 (1 would crowd 0 on the
   * log1p axis) up to the first above the most. */
  p->changed.title = "voxels changed cluster";
  p->changed.log = TRUE;
  p->changed.lo = 0;
  p->changed.hi = pow (10.0, ceil (log10 (MAX (most_changed, 1.0)) + 1e-9));
  {
    guint decades = (guint)lrint (log10 (p->changed.hi)), every = 1;
    while ((decades / every + 2) > MIN (max_y_ticks, SV_PLOT_MAX_TICKS))
      every++;
    p->changed.n_ticks = 0;
    p->changed.ticks[p->changed.n_ticks++].value = 0;
    for (guint d = every; d <= decades && p->changed.n_ticks < SV_PLOT_MAX_TICKS; d += every)
      p->changed.ticks[p->changed.n_ticks++].value = pow (10.0, d);
    for (guint i = 0; i < p->changed.n_ticks; i++)
      count_text (p->changed.ticks[i].value, p->changed.ticks[i].text,
                  sizeof p->changed.ticks[i].text);
  }

  /* Mean centre shift: linear from 0, in nice steps. */
  p->shift.title = "mean centre shift, voxels";
  p->shift.log = FALSE;
  p->shift.lo = 0;
  step = nice_step (MAX (most_shift, 1e-3) / (double)MIN (MAX (max_y_ticks - 1, 1), 5));
  p->shift.hi = step * ceil (MAX (most_shift, 1e-3) / step - 1e-9);
  p->shift.n_ticks = 0;
  for (guint i = 0; i * step <= p->shift.hi * (1 + 1e-9) && i < SV_PLOT_MAX_TICKS; i++)
    {
      SvPlotTick *t = &p->shift.ticks[p->shift.n_ticks++];
      t->value = i * step;
      g_snprintf (t->text, sizeof t->text, "%g", t->value);
    }

  p->iteration.title = "iteration";
  p->iteration.log = FALSE;
  p->iteration.lo = 1;
  p->iteration.hi = MAX (n, 2);
}

static void
add_tick (SvPlotAxis *a, double value)
{
  SvPlotTick *t;

  if (a->n_ticks >= SV_PLOT_MAX_TICKS)
    return;
  t = &a->ticks[a->n_ticks++];
  t->value = value;
  g_snprintf (t->text, sizeof t->text, "%g", value);
}

static void
iteration_ticks (const SvConvergence *c, SvConvergencePlot *p)
{
  guint n = c->n_iterations;
  double room = MAX ((p->x1 - p->x0) / X_TICK_PX, 1.0);
  guint step = (guint)nice_step (MAX ((double)n / room, 1.0));

  /* The multiples of a nice step, and 1 where it leaves room. */
  p->iteration.n_ticks = 0;
  if (step == 1 || step >= 5)
    add_tick (&p->iteration, 1);
  for (guint i = step; i <= n; i += step)
    if (i != 1)
      add_tick (&p->iteration, i);
}

static double
widest (cairo_t *cr, const SvPlotAxis *a)
{
  double w = 0;

  for (guint i = 0; i < a->n_ticks; i++)
    {
      cairo_text_extents_t e;
      cairo_text_extents (cr, a->ticks[i].text, &e);
      w = MAX (w, e.x_advance);
    }
  return w;
}

/* The layout with the tick labels measured in `cr`'s font. */
static gboolean
layout_in (cairo_t *cr, const SvConvergence *c, int width, int height, SvConvergencePlot *p)
{
  memset (p, 0, sizeof *p);
  if (!c || c->n_iterations == 0)
    return FALSE;
  /* Titles above, tick labels and the x title below. */
  p->y0 = FONT_SIZE + 12;
  p->y1 = height - 2 * FONT_SIZE - 10;
  axes_values (c, p->y1 - p->y0, p);
  cairo_save (cr);
  cairo_set_font_size (cr, FONT_SIZE);
  p->x0 = widest (cr, &p->changed) + TICK_LENGTH + 4;
  p->x1 = width - widest (cr, &p->shift) - TICK_LENGTH - 4;
  cairo_restore (cr);
  if (p->x1 - p->x0 < 20 || p->y1 - p->y0 < 20)
    return FALSE;
  iteration_ticks (c, p);
  for (guint i = 0; i < p->iteration.n_ticks; i++)
    p->iteration.ticks[i].pos = sv_convergence_plot_x (p, p->iteration.ticks[i].value);
  for (guint i = 0; i < p->changed.n_ticks; i++)
    p->changed.ticks[i].pos = sv_convergence_plot_y (p, &p->changed, p->changed.ticks[i].value);
  for (guint i = 0; i < p->shift.n_ticks; i++)
    p->shift.ticks[i].pos = sv_convergence_plot_y (p, &p->shift, p->shift.ticks[i].value);
  return TRUE;
}

gboolean
sv_convergence_plot_layout (const SvConvergence *c, int width, int height, SvConvergencePlot *p)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_A8, 1, 1);
  cairo_t *cr = cairo_create (s);
  gboolean ok = layout_in (cr, c, width, height, p);

  cairo_destroy (cr);
  cairo_surface_destroy (s);
  return ok;
}

static void
show_text_at (cairo_t *cr, const char *text, double x, double y, double align_x, double align_y)
{
  cairo_text_extents_t e;

  cairo_text_extents (cr, text, &e);
  /* align_y 1: y is the top of the text, 0.5 its middle, 0 its baseline. */
  cairo_move_to (cr, x - align_x * e.x_advance, y + align_y * -e.y_bearing);
  cairo_show_text (cr, text);
}

static void
series (cairo_t *cr, const SvConvergencePlot *p, const SvPlotAxis *axis, const SvConvergence *c,
        gboolean shift, const double rgb[3])
{
  cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
  cairo_set_line_width (cr, 1.5);
  for (guint i = 0; i < c->n_iterations; i++)
    {
      double v = shift ? c->mean_moved[i] : (double)c->changed[i];
      double x = sv_convergence_plot_x (p, i + 1), y = sv_convergence_plot_y (p, axis, v);
      if (i == 0)
        cairo_move_to (cr, x, y);
      else
        cairo_line_to (cr, x, y);
    }
  cairo_stroke (cr);
  /* A dot per iteration: the steps are what teaching shows. */
  for (guint i = 0; i < c->n_iterations; i++)
    {
      double v = shift ? c->mean_moved[i] : (double)c->changed[i];
      cairo_arc (cr, sv_convergence_plot_x (p, i + 1), sv_convergence_plot_y (p, axis, v), 2.0, 0,
                 2 * G_PI);
      cairo_fill (cr);
    }
}

void
sv_convergence_plot_draw (cairo_t *cr, int width, int height, const SvConvergence *c, int step,
                          const double ink[4])
{
  SvConvergencePlot p;

  cairo_save (cr);
  cairo_set_source_rgba (cr, 0.5, 0.5, 0.5, 0.12);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_fill (cr);
  if (!layout_in (cr, c, width, height, &p))
    {
      cairo_restore (cr);
      return;
    }
  cairo_set_font_size (cr, FONT_SIZE);

  /* Faint grid lines at the left axis' ticks, then the axes. */
  cairo_set_line_width (cr, 1.0);
  cairo_set_source_rgba (cr, ink[0], ink[1], ink[2], 0.12);
  for (guint i = 1; i < p.changed.n_ticks; i++)
    {
      cairo_move_to (cr, p.x0, floor (p.changed.ticks[i].pos) + 0.5);
      cairo_line_to (cr, p.x1, floor (p.changed.ticks[i].pos) + 0.5);
    }
  cairo_stroke (cr);
  cairo_set_source_rgba (cr, ink[0], ink[1], ink[2], ink[3]);
  cairo_move_to (cr, floor (p.x0) + 0.5, p.y0);
  cairo_line_to (cr, floor (p.x0) + 0.5, floor (p.y1) + 0.5);
  cairo_line_to (cr, floor (p.x1) + 0.5, floor (p.y1) + 0.5);
  cairo_line_to (cr, floor (p.x1) + 0.5, p.y0);
  cairo_stroke (cr);

  /* Ticks and their labels: iterations below, changed voxels left, shift right. */
  for (guint i = 0; i < p.iteration.n_ticks; i++)
    {
      double x = floor (p.iteration.ticks[i].pos) + 0.5;
      cairo_move_to (cr, x, floor (p.y1) + 0.5);
      cairo_line_to (cr, x, p.y1 + TICK_LENGTH);
      cairo_stroke (cr);
      show_text_at (cr, p.iteration.ticks[i].text, x, p.y1 + TICK_LENGTH + 2, 0.5, 1.0);
    }
  show_text_at (cr, p.iteration.title, (p.x0 + p.x1) / 2, height - 2 - FONT_SIZE, 0.5, 1.0);
  for (guint i = 0; i < p.changed.n_ticks; i++)
    {
      double y = floor (p.changed.ticks[i].pos) + 0.5;
      cairo_set_source_rgba (cr, ink[0], ink[1], ink[2], ink[3]);
      cairo_move_to (cr, p.x0 - TICK_LENGTH, y);
      cairo_line_to (cr, floor (p.x0) + 0.5, y);
      cairo_stroke (cr);
      cairo_set_source_rgb (cr, changed_rgb[0] * 0.8, changed_rgb[1] * 0.8, changed_rgb[2] * 0.8);
      show_text_at (cr, p.changed.ticks[i].text, p.x0 - TICK_LENGTH - 2, y, 1.0, 0.5);
    }
  for (guint i = 0; i < p.shift.n_ticks; i++)
    {
      double y = floor (p.shift.ticks[i].pos) + 0.5;
      cairo_set_source_rgba (cr, ink[0], ink[1], ink[2], ink[3]);
      cairo_move_to (cr, floor (p.x1) + 0.5, y);
      cairo_line_to (cr, p.x1 + TICK_LENGTH, y);
      cairo_stroke (cr);
      cairo_set_source_rgb (cr, shift_rgb[0], shift_rgb[1], shift_rgb[2]);
      show_text_at (cr, p.shift.ticks[i].text, p.x1 + TICK_LENGTH + 2, y, 0.0, 0.5);
    }
  /* The series' titles above their axes, in their colours. */
  cairo_set_source_rgb (cr, changed_rgb[0] * 0.8, changed_rgb[1] * 0.8, changed_rgb[2] * 0.8);
  show_text_at (cr, p.changed.title, 0, 2, 0.0, 1.0);
  cairo_set_source_rgb (cr, shift_rgb[0], shift_rgb[1], shift_rgb[2]);
  show_text_at (cr, p.shift.title, width, 2, 1.0, 1.0);

  series (cr, &p, &p.changed, c, FALSE, changed_rgb);
  series (cr, &p, &p.shift, c, TRUE, shift_rgb);

  if (step >= 1 && (guint)step <= c->n_iterations)
    {
      double x = sv_convergence_plot_x (&p, step);
      cairo_set_source_rgb (cr, marker_rgb[0], marker_rgb[1], marker_rgb[2]);
      cairo_set_line_width (cr, 1.5);
      cairo_move_to (cr, x, p.y0);
      cairo_line_to (cr, x, p.y1);
      cairo_stroke (cr);
    }
  cairo_restore (cr);
}

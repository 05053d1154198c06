/* Supervox GUI: one slice view's pointer and zoom: the voxel under a
 * point, hover, pick, slices on the wheel, pan and zoom (also as another
 * view's, for linked views), and Shift-drag drawing the region preview's
 * box. */
#define G_LOG_DOMAIN "sv-slice-view"

#include "sv-slice-view-private.h"

#include <math.h>
#include <string.h>

/* The voxel under view point (px, py), FALSE outside the slice. */
gboolean
sv_slice_view_pixel_to_voxel (SvSliceView *self, double px, double py, guint zyx[3])
{
  double x0, y0, x1, y1;
  guint tw, th;
  int u, v, w;
  double fu, fv;

  if (!sv_slice_view_slice_rect (self, &x0, &y0, &x1, &y1, &tw, &th))
    return FALSE;
  fu = (px - x0) / (x1 - x0) * tw;
  fv = (py - y0) / (y1 - y0) * th;
  if (fu < 0 || fv < 0 || fu >= tw || fv >= th)
    return FALSE;
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  zyx[u] = (guint)fu;
  zyx[v] = (guint)fv;
  zyx[w] = sv_slice_view_get_slice (self);
  return TRUE;
}

/* The voxel point (fractional, not clamped) under view point (px, py); its
 * third coordinate is the middle of the slice shown. */
static gboolean
point_to_voxel (SvSliceView *self, double px, double py, double zyx[3])
{
  double x0, y0, x1, y1;
  guint tw, th;
  int u, v, w;

  if (!sv_slice_view_slice_rect (self, &x0, &y0, &x1, &y1, &tw, &th))
    return FALSE;
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  zyx[u] = (px - x0) / (x1 - x0) * tw;
  zyx[v] = (py - y0) / (y1 - y0) * th;
  zyx[w] = sv_slice_view_get_slice (self) + 0.5;
  return TRUE;
}

void
sv_slice_view_motion_cb (GtkEventControllerMotion *motion, double x, double y, SvSliceView *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  self->pointer_inside = TRUE;
  sv_slice_view_update_hover (self);
}

/* The voxel under the pointer, said when it changes: on motion, and when
 * the slice changes under a pointer at rest (the wheel, the keys). */
void
sv_slice_view_update_hover (SvSliceView *self)
{
  guint zyx[3];
  gboolean valid;

  if (!self->pointer_inside)
    return;
  valid = sv_slice_view_pixel_to_voxel (self, self->pointer_x, self->pointer_y, zyx);
  if (valid == self->hover_valid && (!valid || memcmp (zyx, self->hover_zyx, sizeof zyx) == 0))
    return;
  self->hover_valid = valid;
  if (valid)
    memcpy (self->hover_zyx, zyx, sizeof zyx);
  sv_slice_view_queue_frame (self);
  sv_slice_view_emit_hover (self, valid ? (int)zyx[0] : -1, valid ? (int)zyx[1] : -1,
                            valid ? (int)zyx[2] : -1);
}

void
sv_slice_view_leave_cb (GtkEventControllerMotion *motion, SvSliceView *self)
{
  self->pointer_inside = FALSE;
  if (!self->hover_valid)
    return;
  self->hover_valid = FALSE;
  sv_slice_view_queue_frame (self);
  sv_slice_view_emit_hover (self, -1, -1, -1);
}

gboolean
sv_slice_view_scroll_cb (GtkEventControllerScroll *scroll, double dx, double dy, SvSliceView *self)
{
  GdkModifierType mods
      = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (scroll));

  if (mods & GDK_CONTROL_MASK)
    {
      double zyx[3], before = self->zoom;
      gboolean placed = point_to_voxel (self, self->pointer_x, self->pointer_y, zyx);

      sv_slice_view_zoom_at (self, pow (1.2, -dy), self->pointer_x, self->pointer_y);
      /* The factor after clamping, for the views linked to this one. */
      if (placed && self->zoom != before)
        sv_slice_view_emit_zoom (self, self->zoom / before, zyx);
    }
  else
    sv_slice_view_step_slice (self, dy > 0 ? 1 : dy < 0 ? -1 : 0);
  return TRUE;
}

/* The voxel under (px, py), clamped into the slice. */
static gboolean
clamped_voxel (SvSliceView *self, double px, double py, guint zyx[3])
{
  double x0, y0, x1, y1;
  guint tw, th;
  int u, v, w;

  if (!sv_slice_view_slice_rect (self, &x0, &y0, &x1, &y1, &tw, &th))
    return FALSE;
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  zyx[u] = (guint)CLAMP ((px - x0) / (x1 - x0) * tw, 0.0, tw - 1.0);
  zyx[v] = (guint)CLAMP ((py - y0) / (y1 - y0) * th, 0.0, th - 1.0);
  zyx[w] = sv_slice_view_get_slice (self);
  return TRUE;
}

/* A Shift-drag draws the region along this view's two axes; the third
 * keeps the region's range (all of it before any region). */
static void
drag_region (SvSliceView *self, GtkGestureDrag *drag, double dx, double dy)
{
  const SvVolume *vol = self->volume;
  double sx, sy;
  guint a[3], b[3];
  int u, v, w;

  if (!vol || !gtk_gesture_drag_get_start_point (drag, &sx, &sy) || !clamped_voxel (self, sx, sy, a)
      || !clamped_voxel (self, sx + dx, sy + dy, b))
    return;
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  if (!self->region_valid)
    {
      const guint n[3] = { vol->nz, vol->ny, vol->nx };
      for (guint i = 0; i < 3; i++)
        {
          self->region_lo[i] = 0;
          self->region_hi[i] = n[i];
        }
    }
  self->region_lo[u] = MIN (a[u], b[u]);
  self->region_hi[u] = MAX (a[u], b[u]) + 1;
  self->region_lo[v] = MIN (a[v], b[v]);
  self->region_hi[v] = MAX (a[v], b[v]) + 1;
  self->region_valid = TRUE;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_drag_begin_cb (GtkGestureDrag *drag, double x, double y, SvSliceView *self)
{
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (drag));

  self->drawing_region = (mods & GDK_SHIFT_MASK) != 0;
  self->drag_pan_x = self->pan_x;
  self->drag_pan_y = self->pan_y;
}

void
sv_slice_view_drag_update_cb (GtkGestureDrag *drag, double dx, double dy, SvSliceView *self)
{
  if (self->drawing_region)
    {
      drag_region (self, drag, dx, dy);
      return;
    }
  self->pan_x = self->drag_pan_x + dx;
  self->pan_y = self->drag_pan_y + dy;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_drag_end_cb (GtkGestureDrag *drag, double dx, double dy, SvSliceView *self)
{
  if (!self->drawing_region)
    return;
  self->drawing_region = FALSE;
  drag_region (self, drag, dx, dy);
  if (self->region_valid)
    sv_slice_view_emit_region (self, self->region_lo, self->region_hi);
}

void
sv_slice_view_click_cb (GtkGestureClick *click, int n_press, double x, double y, SvSliceView *self)
{
  guint zyx[3];

  gtk_widget_grab_focus (GTK_WIDGET (self->gl_area));
  if (sv_slice_view_pixel_to_voxel (self, x, y, zyx))
    sv_slice_view_emit_pick (self, (int)zyx[0], (int)zyx[1], (int)zyx[2]);
}

void
sv_slice_view_zoom_at (SvSliceView *self, double factor, double x, double y)
{
  double x0, y0, x1, y1, W, H, nz;
  guint tw, th;

  if (!sv_slice_view_slice_rect (self, &x0, &y0, &x1, &y1, &tw, &th))
    return;
  W = gtk_widget_get_width (GTK_WIDGET (self->gl_area));
  H = gtk_widget_get_height (GTK_WIDGET (self->gl_area));
  nz = CLAMP (self->zoom * factor, 0.05, 200.0);
  factor = nz / self->zoom;
  /* Keep the point under the cursor where it is. */
  self->pan_x = (x - (x - x0) * factor) + (x1 - x0) * factor / 2 - W / 2;
  self->pan_y = (y - (y - y0) * factor) + (y1 - y0) * factor / 2 - H / 2;
  self->zoom = nz;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_zoom_fit (SvSliceView *self)
{
  self->zoom = 1.0;
  self->pan_x = self->pan_y = 0.0;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_zoom_one (SvSliceView *self)
{
  double x0, y0, x1, y1;
  guint tw, th;

  if (!sv_slice_view_slice_rect (self, &x0, &y0, &x1, &y1, &tw, &th))
    return;
  sv_slice_view_zoom_at (self, tw / (x1 - x0),
                         gtk_widget_get_width (GTK_WIDGET (self->gl_area)) / 2.0,
                         gtk_widget_get_height (GTK_WIDGET (self->gl_area)) / 2.0);
}

void
sv_slice_view_zoom_about (SvSliceView *self, double factor, const double zyx[3])
{
  double x0, y0, x1, y1;
  guint tw, th;
  int u, v, w;

  if (!sv_slice_view_slice_rect (self, &x0, &y0, &x1, &y1, &tw, &th))
    return;
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  sv_slice_view_zoom_at (self, factor, x0 + zyx[u] / tw * (x1 - x0), y0 + zyx[v] / th * (y1 - y0));
}

/* Logical pixels per unit of spacing at zoom 1. */
static double
fit_scale (SvSliceView *self)
{
  return self->shared_fit > 0 ? self->shared_fit : sv_slice_view_get_fit_scale (self);
}

void
sv_slice_view_set_scale (SvSliceView *self, double scale)
{
  double fit = fit_scale (self);

  g_return_if_fail (SV_IS_SLICE_VIEW (self));
  if (fit <= 0 || scale <= 0)
    return;
  /* The pan is in pixels from the middle: the same pan at the same scale
   * shows the same place. */
  self->zoom = scale / fit;
  sv_slice_view_queue_frame (self);
}

/* The pan along axis `a` that keeps voxel coordinate c where zoom 1
 * without pan puts it. */
static double
pan_keeping (SvSliceView *self, int a, double c)
{
  const SvVolume *vol = self->volume;
  const guint n[3] = { vol->nz, vol->ny, vol->nx };

  return (c - n[a] / 2.0) * vol->spacing[a] * fit_scale (self) * (1.0 - self->zoom);
}

void
sv_slice_view_follow (SvSliceView *self, SvSliceView *ref, const double zyx[3])
{
  int u, v, w, ru, rv, rw;

  g_return_if_fail (SV_IS_SLICE_VIEW (self) && SV_IS_SLICE_VIEW (ref));
  if (!self->volume || self == ref)
    return;
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  sv_slice_view_axis_dims (ref->axis, &ru, &rv, &rw);
  self->zoom = ref->zoom;
  self->pan_x = u == ru ? ref->pan_x : pan_keeping (self, u, zyx[u]);
  self->pan_y = v == rv ? ref->pan_y : pan_keeping (self, v, zyx[v]);
  sv_slice_view_queue_frame (self);
}

gboolean
sv_slice_view_has_pointer (SvSliceView *self)
{
  return self->pointer_inside;
}

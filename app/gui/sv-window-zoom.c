/* Supervox GUI: the views' zoom. In the orthogonal layout with "Link
 * Zoom" on (win.link-zoom, the default) the three views share one scale
 * and a zoom in one zooms all; off, each view fits its own tile and zooms
 * alone, so that the XY view of an anisotropic stack is not held to the
 * size its tall XZ and YZ neighbours allow. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

static gboolean
linked (SvWindow *self)
{
  return self->link_zoom && self->orthogonal;
}

/* The crosshair's voxel point: the middle of the cursor's voxel. */
static void
crosshair_point (SvWindow *self, double zyx[3])
{
  for (guint i = 0; i < 3; i++)
    zyx[i] = self->cursor_zyx[i] + 0.5;
}

/* The other views take ref's scale, lined up with it. */
static void
follow (SvWindow *self, SvSliceView *ref)
{
  double zyx[3];

  crosshair_point (self, zyx);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_follow (sv_window_view (self, i), ref, zyx);
}

void
sv_window_update_fit (SvWindow *self)
{
  double fit = G_MAXDOUBLE;
  gboolean all_sized = TRUE;

  /* Linked: one scale for the three views (the smallest fit), so that XY's
   * rows continue in YZ beside it and its columns in XZ below. */
  for (guint i = 0; i < 3 && linked (self); i++)
    {
      double f = sv_slice_view_get_fit_scale (sv_window_view (self, i));
      if (f > 0)
        fit = MIN (fit, f);
      all_sized &= f > 0;
    }
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_shared_fit (sv_window_view (self, i),
                                  linked (self) && fit < G_MAXDOUBLE ? fit : 0.0);
  if (self->relink_pending && linked (self) && all_sized)
    {
      self->relink_pending = FALSE;
      follow (self, self->xy_view);
    }
}

void
sv_window_zoom_reset (SvWindow *self)
{
  /* The views fitted the new volume. */
  self->zoomed_view = NULL;
  self->relink_pending = FALSE;
  sv_window_update_fit (self);
}

void
sv_window_zoom_layout_changed (SvWindow *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.link-zoom", self->orthogonal);
  sv_window_update_fit (self);
  if (!self->orthogonal)
    return;
  /* XZ and YZ join XY: linked, they take its zoom once the layout gives
   * them their size (a "resize" later); else each fits its tile. */
  if (self->link_zoom)
    self->relink_pending = TRUE;
  else
    {
      sv_slice_view_zoom_fit (self->xz_view);
      sv_slice_view_zoom_fit (self->yz_view);
    }
  if (self->zoomed_view != self->xy_view)
    self->zoomed_view = NULL;
}

gboolean
sv_window_set_link_zoom (SvWindow *self, gboolean link)
{
  SvSliceView *ref = self->zoomed_view;
  double scale = ref ? sv_slice_view_get_scale (ref) : 0.0;

  if (self->link_zoom == link)
    return FALSE;
  self->link_zoom = link;
  self->relink_pending = FALSE;
  if (!self->orthogonal)
    return TRUE;
  sv_window_update_fit (self);
  if (link && ref && scale > 0)
    {
      /* The view zoomed last keeps what it shows; the others take its
       * scale, lined up with it, the crosshair where the fit puts it. */
      sv_slice_view_set_scale (ref, scale);
      follow (self, ref);
      return TRUE;
    }
  self->zoomed_view = NULL;
  for (guint i = 0; i < 3; i++)
    sv_slice_view_zoom_fit (sv_window_view (self, i));
  return TRUE;
}

static void
view_zoom_cb (SvSliceView *view, double factor, double z, double y, double x, SvWindow *self)
{
  const double zyx[3] = { z, y, x };

  self->zoomed_view = view;
  self->relink_pending = FALSE;
  if (!linked (self))
    return;
  /* About the same voxel point: lined-up rows and columns stay lined up,
   * and the crosshair line through the zoomed view's slice stays put. */
  for (guint i = 0; i < 3; i++)
    if (sv_window_view (self, i) != view)
      sv_slice_view_zoom_about (sv_window_view (self, i), factor, zyx);
}

/* The view that Zoom to Fit and 1:1 act on: the one under the pointer,
 * else the one holding the focus, else the one last hovered. */
static SvSliceView *
target_view (SvWindow *self)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));

  if (!self->orthogonal)
    return self->xy_view;
  for (guint i = 0; i < 3; i++)
    if (sv_slice_view_has_pointer (sv_window_view (self, i)))
      return sv_window_view (self, i);
  for (guint i = 0; focus && i < 3; i++)
    if (gtk_widget_is_ancestor (focus, GTK_WIDGET (sv_window_view (self, i))))
      return sv_window_view (self, i);
  return self->active_view;
}

static void
zoom_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  SvSliceView *target = target_view (self);

  self->relink_pending = FALSE;
  if (g_str_equal (name, "win.zoom-one"))
    {
      /* 1:1 along the target's horizontal axis; linked, the others follow. */
      sv_slice_view_zoom_one (target);
      self->zoomed_view = target;
      if (linked (self))
        follow (self, target);
      return;
    }
  if (linked (self))
    {
      for (guint i = 0; i < 3; i++)
        sv_slice_view_zoom_fit (sv_window_view (self, i));
      self->zoomed_view = NULL;
      return;
    }
  sv_slice_view_zoom_fit (target);
  if (self->zoomed_view == target)
    self->zoomed_view = NULL;
}

void
sv_window_zoom_init (SvWindow *self)
{
  /* On by default; the toggle button read the state before. */
  self->link_zoom = TRUE;
  g_object_notify (G_OBJECT (self), "link-zoom");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.link-zoom", FALSE);
  for (guint i = 0; i < 3; i++)
    g_signal_connect (sv_window_view (self, i), "zoom", G_CALLBACK (view_zoom_cb), self);
}

void
sv_window_class_add_zoom_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-one", NULL, zoom_action);
}

/* Supervox GUI: the main window's contrast: the volume's histogram in the
 * contrast panel, its handles tied to the black and white points of the
 * parameter panel, Auto, Reset and the colormap. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

/* Bins of the volume's histogram: Auto's resolution (the panel draws
 * them merged). */
#define CONTRAST_BINS 4096
/* Fiji's Auto: 0.35 % of the voxels saturated, half at each end. */
#define AUTO_SATURATED 0.0035

void
sv_window_auto_contrast (SvWindow *self)
{
  const SvHistogram *h = sv_contrast_panel_get_histogram (self->contrast_panel);
  double low, high;

  /* The contrast panel's histogram is the volume's (one pass, at load). */
  g_return_if_fail (h != NULL);
  sv_histogram_saturated_window (h, AUTO_SATURATED, &low, &high);
  if (!(h->max > h->min))
    sv_params_panel_set_intensity_range (self->params_panel, low, high);
  else
    sv_params_panel_set_window (self->params_panel, low, high);
}

void
sv_window_contrast_set_volume (SvWindow *self)
{
  sv_contrast_panel_set_histogram (self->contrast_panel,
                                   sv_histogram_new (self->volume, CONTRAST_BINS),
                                   sv_window_intensity_scale (self->volume));
}

void
sv_window_contrast_sync (SvWindow *self)
{
  sv_contrast_panel_set_window (self->contrast_panel, self->display.low, self->display.high,
                                self->display.gamma);
}

static void
window_changed_cb (SvContrastPanel *panel, double low, double high, SvWindow *self)
{
  /* The parameter panel holds the window; the views follow its signal. */
  sv_params_panel_set_window (self->params_panel, low, high);
}

static void
colormap_cb (SvContrastPanel *panel, GParamSpec *pspec, SvWindow *self)
{
  self->display.colormap = sv_contrast_panel_get_colormap (panel);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_display (sv_window_view (self, i), &self->display);
  sv_volume_view_set_display (self->volume_view, &self->display);
}

static void
reset_contrast_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  const SvHistogram *h = sv_contrast_panel_get_histogram (self->contrast_panel);

  if (!h || !(h->max > h->min))
    return;
  sv_params_panel_set_gamma (self->params_panel, 1.0);
  sv_params_panel_set_window (self->params_panel, h->min, h->max);
}

SvContrastPanel *
sv_window_get_contrast_panel (SvWindow *self)
{
  return self->contrast_panel;
}

void
sv_window_contrast_init (SvWindow *self)
{
  g_signal_connect (self->contrast_panel, "window-changed", G_CALLBACK (window_changed_cb), self);
  g_signal_connect (self->contrast_panel, "notify::colormap", G_CALLBACK (colormap_cb), self);
}

void
sv_window_class_add_contrast_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_child (widget_class, SvWindow, contrast_panel);
  gtk_widget_class_install_action (widget_class, "win.reset-contrast", NULL, reset_contrast_action);
}

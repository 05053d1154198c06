/* Supervox GUI: the main window's contrast: the volume's histogram in the
 * contrast panel, its handles tied to the black and white points of the
 * parameter panel, Auto, Reset and the colormap. A volume of 2 or 3
 * fluorescence channels is drawn as a composite, as Fiji's: each channel
 * has its own histogram and window (the black and white points show the
 * channel chosen in the contrast panel) and its colour. */
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

static SvHistogram *
histogram_copy (const SvHistogram *h)
{
  SvHistogram *copy = g_memdup2 (h, sizeof *h);

  copy->counts = g_memdup2 (h->counts, h->n_bins * sizeof *h->counts);
  return copy;
}

/* A composite's channels, each with its histogram (taken) and Auto's
 * window, as Fiji opens a composite; the handles show channel 1's. */
static void
set_composite (SvWindow *self, const SvVolume *v, SvHistogram **histograms)
{
  guint n = sv_window_composite_channels (v);
  double low[SV_DISPLAY_MAX_CHANNELS], high[SV_DISPLAY_MAX_CHANNELS];

  for (guint c = 0; c < n; c++)
    sv_histogram_saturated_window (histograms[c], AUTO_SATURATED, &low[c], &high[c]);
  sv_contrast_panel_set_channels (self->contrast_panel, n, histograms,
                                  sv_window_intensity_scale (v));
  for (guint c = 0; c < n; c++)
    sv_contrast_panel_set_channel_window (self->contrast_panel, c, low[c], high[c]);
}

void
sv_window_contrast_set_volume (SvWindow *self)
{
  const SvVolume *v = self->volume;
  SvHistogram *histograms[SV_DISPLAY_MAX_CHANNELS];
  guint n = sv_window_composite_channels (v);

  if (n == 0)
    {
      sv_contrast_panel_set_histogram (self->contrast_panel, sv_histogram_new (v, CONTRAST_BINS),
                                       sv_window_intensity_scale (v));
      return;
    }
  for (guint c = 0; c < n; c++)
    histograms[c] = sv_histogram_new_channel (v, (int)c, CONTRAST_BINS);
  set_composite (self, v, histograms);
}

void
sv_window_contrast_set_sampled (SvWindow *self, const SvVolume *shape, SvHistogram *sample)
{
  SvHistogram *histograms[SV_DISPLAY_MAX_CHANNELS];
  guint n = sv_window_composite_channels (shape);

  if (n == 0)
    {
      sv_contrast_panel_set_histogram (self->contrast_panel, sample,
                                       sv_window_intensity_scale (shape));
      return;
    }
  /* The sample mixes the channels: each starts from all of them. */
  for (guint c = 0; c < n; c++)
    histograms[c] = c == 0 ? sample : histogram_copy (sample);
  set_composite (self, shape, histograms);
}

void
sv_window_contrast_sync (SvWindow *self)
{
  sv_contrast_panel_set_window (self->contrast_panel, self->display.low, self->display.high,
                                self->display.gamma);
  sv_contrast_panel_get_composite (self->contrast_panel, &self->display);
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

/* Another channel in the contrast panel: the black and white points show
 * its window. */
static void
channel_cb (SvContrastPanel *panel, GParamSpec *pspec, SvWindow *self)
{
  double low, high;

  sv_contrast_panel_get_channel_window (panel, sv_contrast_panel_get_channel (panel), &low, &high);
  sv_params_panel_set_window (self->params_panel, low, high);
}

/* A channel's colour chosen, or the channel shown or hidden. */
static void
channels_changed_cb (SvContrastPanel *panel, SvWindow *self)
{
  sv_contrast_panel_get_composite (panel, &self->display);
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
  g_signal_connect (self->contrast_panel, "notify::channel", G_CALLBACK (channel_cb), self);
  g_signal_connect (self->contrast_panel, "channels-changed", G_CALLBACK (channels_changed_cb),
                    self);
}

void
sv_window_class_add_contrast_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_child (widget_class, SvWindow, contrast_panel);
  gtk_widget_class_install_action (widget_class, "win.reset-contrast", NULL, reset_contrast_action);
}

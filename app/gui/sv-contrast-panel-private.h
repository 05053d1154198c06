/* Supervox GUI: the contrast panel's instance struct and what its files
 * share: sv-contrast-panel.c (the type, histogram, handles, colormap) and
 * sv-contrast-panel-channels.c (a composite's channels). */
#pragma once

#include "sv-contrast-panel.h"

G_BEGIN_DECLS

struct _SvContrastPanel
{
  GtkWidget parent_instance;

  GtkDrawingArea *plot;
  GtkLabel *window_label;
  GtkDropDown *colormap_dropdown;
  GtkWidget *channel_box;
  GtkDropDown *channel_dropdown, *colour_dropdown;
  GtkCheckButton *shown_check;

  /* One histogram, or a composite's one per channel (owned). */
  SvHistogram *histograms[SV_DISPLAY_MAX_CHANNELS];
  guint n_channels; /* 0: one channel */
  guint channel;    /* the composite's channel shown */
  double channel_low[SV_DISPLAY_MAX_CHANNELS], channel_high[SV_DISPLAY_MAX_CHANNELS];
  guint colour[SV_DISPLAY_MAX_CHANNELS]; /* the colour dropdown's entry */
  gboolean shown[SV_DISPLAY_MAX_CHANNELS];
  guint updating; /* > 0 while the panel sets its own widgets */

  SvHistogram *histogram; /* the one drawn: histograms[0] or the channel's */
  double intensity_scale;
  double low, high, gamma;
  int dragging; /* -1 none, else an SvContrastHandle */
};

/* The label under the histogram: black, white and gamma. */
void sv_contrast_panel_update_label (SvContrastPanel *self);

/* sv-contrast-panel-channels.c */
/* Frees every histogram held. */
void sv_contrast_panel_clear_histograms (SvContrastPanel *self);
/* The colour dropdown's entry `colour` as red, green, blue in [0, 1]. */
const float *sv_contrast_panel_colour_rgb (guint colour);
/* After the template: the channel row's signals. */
void sv_contrast_panel_init_channels (SvContrastPanel *self);

G_END_DECLS

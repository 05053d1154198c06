/* Supervox GUI: the contrast panel's composite of 2 or 3 channels, as
 * Fiji's Channels tool and B&C: the channel the histogram and handles
 * show, each channel's window, colour and visibility. */
#define G_LOG_DOMAIN "sv-contrast-panel"

#include "sv-contrast-panel-private.h"

/* The colour dropdown's entries, in the template's order: Fiji's LUTs. */
static const float channel_colours[][3] = {
  { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 }, { 0, 1, 1 }, { 1, 0, 1 }, { 1, 1, 0 }, { 1, 1, 1 },
};
enum
{
  COLOUR_RED,
  COLOUR_GREEN,
  COLOUR_BLUE,
  COLOUR_CYAN,
  COLOUR_MAGENTA,
  COLOUR_YELLOW,
  COLOUR_GREY,
};

const float *
sv_contrast_panel_colour_rgb (guint colour)
{
  return channel_colours[MIN (colour, G_N_ELEMENTS (channel_colours) - 1)];
}

void
sv_contrast_panel_clear_histograms (SvContrastPanel *self)
{
  for (guint c = 0; c < SV_DISPLAY_MAX_CHANNELS; c++)
    g_clear_pointer (&self->histograms[c], sv_histogram_free);
  self->histogram = NULL;
}

/* The channel row shows channel `self->channel`'s colour and visibility. */
static void
show_channel_row (SvContrastPanel *self)
{
  self->updating++;
  gtk_drop_down_set_selected (self->channel_dropdown, self->channel);
  gtk_drop_down_set_selected (self->colour_dropdown, self->colour[self->channel]);
  gtk_check_button_set_active (self->shown_check, self->shown[self->channel]);
  self->updating--;
}

void
sv_contrast_panel_set_channels (SvContrastPanel *self, guint n_channels, SvHistogram **histograms,
                                double intensity_scale)
{
  GtkStringList *names;

  g_return_if_fail (SV_IS_CONTRAST_PANEL (self));
  g_return_if_fail (n_channels >= 2 && n_channels <= SV_DISPLAY_MAX_CHANNELS);
  sv_contrast_panel_clear_histograms (self);
  self->n_channels = n_channels;
  self->channel = 0;
  self->intensity_scale = intensity_scale;
  for (guint c = 0; c < n_channels; c++)
    {
      self->histograms[c] = histograms[c];
      self->channel_low[c] = histograms[c] ? histograms[c]->min : 0.0;
      self->channel_high[c] = histograms[c] ? histograms[c]->max : 1.0;
      self->shown[c] = TRUE;
    }
  /* Fiji's composite: green and magenta for two channels, red, green and
   * blue for three. */
  self->colour[0] = n_channels == 2 ? COLOUR_GREEN : COLOUR_RED;
  self->colour[1] = n_channels == 2 ? COLOUR_MAGENTA : COLOUR_GREEN;
  self->colour[2] = COLOUR_BLUE;
  self->histogram = self->histograms[0];

  self->updating++;
  names = GTK_STRING_LIST (gtk_drop_down_get_model (self->channel_dropdown));
  gtk_string_list_splice (names, 0, g_list_model_get_n_items (G_LIST_MODEL (names)), NULL);
  for (guint c = 0; c < n_channels; c++)
    {
      g_autofree char *name = g_strdup_printf ("Channel %u", c + 1);
      gtk_string_list_append (names, name);
    }
  self->updating--;
  show_channel_row (self);
  gtk_widget_set_visible (self->channel_box, TRUE);
  /* The channels' colours replace the colormap. */
  gtk_widget_set_sensitive (GTK_WIDGET (self->colormap_dropdown), FALSE);
  sv_contrast_panel_update_label (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
}

guint
sv_contrast_panel_get_n_channels (SvContrastPanel *self)
{
  return self->n_channels;
}

guint
sv_contrast_panel_get_channel (SvContrastPanel *self)
{
  return self->channel;
}

void
sv_contrast_panel_set_channel (SvContrastPanel *self, guint channel)
{
  g_return_if_fail (SV_IS_CONTRAST_PANEL (self));
  if (self->n_channels == 0 || channel >= self->n_channels || channel == self->channel)
    return;
  self->channel = channel;
  self->histogram = self->histograms[channel];
  self->low = self->channel_low[channel];
  self->high = self->channel_high[channel];
  show_channel_row (self);
  sv_contrast_panel_update_label (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
  g_object_notify (G_OBJECT (self), "channel");
}

void
sv_contrast_panel_get_channel_window (SvContrastPanel *self, guint channel, double *low,
                                      double *high)
{
  g_return_if_fail (channel < SV_DISPLAY_MAX_CHANNELS);
  *low = self->channel_low[channel];
  *high = self->channel_high[channel];
}

void
sv_contrast_panel_set_channel_window (SvContrastPanel *self, guint channel, double low, double high)
{
  g_return_if_fail (channel < SV_DISPLAY_MAX_CHANNELS);
  self->channel_low[channel] = low;
  self->channel_high[channel] = high;
  if (self->n_channels > 0 && channel == self->channel)
    sv_contrast_panel_set_window (self, low, high, self->gamma);
}

void
sv_contrast_panel_get_composite (SvContrastPanel *self, SvDisplay *display)
{
  display->n_channels = self->n_channels;
  for (guint c = 0; c < self->n_channels; c++)
    {
      display->channels[c].low = (float)self->channel_low[c];
      display->channels[c].high = (float)self->channel_high[c];
      for (guint i = 0; i < 3; i++)
        display->channels[c].colour[i]
            = self->shown[c] ? sv_contrast_panel_colour_rgb (self->colour[c])[i] : 0.0f;
    }
}

static void
channel_selected_cb (GtkDropDown *dropdown, GParamSpec *pspec, SvContrastPanel *self)
{
  if (self->updating)
    return;
  sv_contrast_panel_set_channel (self, gtk_drop_down_get_selected (dropdown));
}

/* A colour chosen or the channel shown or hidden: the views redraw. */
static void
channel_look_cb (SvContrastPanel *self)
{
  guint colour = gtk_drop_down_get_selected (self->colour_dropdown);

  if (self->updating || self->n_channels == 0)
    return;
  if (colour < G_N_ELEMENTS (channel_colours))
    self->colour[self->channel] = colour;
  self->shown[self->channel] = gtk_check_button_get_active (self->shown_check);
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
  g_signal_emit_by_name (self, "channels-changed");
}

void
sv_contrast_panel_init_channels (SvContrastPanel *self)
{
  g_signal_connect (self->channel_dropdown, "notify::selected", G_CALLBACK (channel_selected_cb),
                    self);
  g_signal_connect_swapped (self->colour_dropdown, "notify::selected", G_CALLBACK (channel_look_cb),
                            self);
  g_signal_connect_swapped (self->shown_check, "toggled", G_CALLBACK (channel_look_cb), self);
}

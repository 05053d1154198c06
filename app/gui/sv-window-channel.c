/* Supervox GUI: the main window's channels: which a volume shows as a
 * composite, and the channel for SLIC: "Segment on" in the parameter
 * panel picks every channel or one; the job then runs on a copy of that
 * channel, the very volume supervox-cli slic --channel N reads, so that
 * "Copy as command", "Copy as Python" and the sidecar name it and give
 * the same labels. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

guint
sv_window_composite_channels (const SvVolume *v)
{
  /* An 8-bit RGB photo keeps showing as the photo it is. */
  if (v == NULL || v->nc < 2 || (v->nc == 3 && v->source_type == SV_SAMPLE_U8))
    return 0;
  return MIN (v->nc, SV_DISPLAY_MAX_CHANNELS);
}

const char *
sv_window_channel_words (const SvVolume *v)
{
  char words[32];

  if (v->nc == 3 && sv_window_composite_channels (v) == 0)
    return " RGB";
  if (v->nc < 2)
    return "";
  g_snprintf (words, sizeof words, " · %u channels", v->nc);
  return g_intern_string (words);
}

const SvVolume *
sv_window_segmented_volume (SvWindow *self)
{
  return self->channel_volume ? self->channel_volume : self->volume;
}

int
sv_window_labels_channel (SvWindow *self)
{
  if (self->ooc)
    return sv_window_ooc_labels_channel (self);
  return self->result ? self->result_channel : self->segment_channel;
}

gboolean
sv_window_channel_sync (SvWindow *self)
{
  int channel = sv_params_panel_get_channel (self->params_panel);
  g_autoptr (GError) error = NULL;

  if (channel == self->segment_channel)
    return FALSE;
  self->segment_channel = channel;
  /* Out of core each streamed run reads its channel from the file. */
  if (self->ooc || !self->volume)
    return FALSE;
  /* The job and the quality worker borrow the copy: stop them first. */
  sv_window_stop_job (self);
  g_clear_pointer (&self->channel_volume, sv_volume_free);
  if (channel >= 0)
    {
      self->channel_volume = sv_volume_extract_channel (self->volume, (guint)channel, &error);
      if (self->channel_volume == NULL)
        {
          sv_window_show_error (self, "Cannot segment that channel", error);
          self->segment_channel = -1;
        }
    }
  sv_window_start_job (self);
  /* Without the copy the run is on every channel, and the panel says so. */
  if (self->segment_channel != channel)
    sv_params_panel_set_channel (self->params_panel, -1);
  return TRUE;
}

void
sv_window_channel_forget (SvWindow *self)
{
  g_clear_pointer (&self->channel_volume, sv_volume_free);
  self->segment_channel = -1;
  self->result_channel = -1;
}

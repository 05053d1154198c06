/* Supervox GUI: the main window's OME-Zarr levels. An image with several
 * resolution levels offers them in the panel's "Level"; a pick reads that
 * level as opening the image does (sv-window-open.c) and shows it with
 * the panel's values kept and the view at the same place, so that a
 * coarse level can be tuned fast and the finest run with the same values.
 * "Copy as command" names the image and --zarr-level (sv-window-actions.c). */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

char *
sv_window_level_words (const SvZarrLevel *l)
{
  GString *s = g_string_new (NULL);

  /* A 2D level as the title names a 2D image: height × width. */
  if (l->shape[0] > 1)
    g_string_append_printf (s, "%u: %u×%u×%u", l->level, l->shape[0], l->shape[1], l->shape[2]);
  else
    g_string_append_printf (s, "%u: %u×%u", l->level, l->shape[1], l->shape[2]);
  if (l->spacing_from_file)
    {
      if (l->shape[0] > 1)
        g_string_append_printf (s, ", %.4g×%.4g×%.4g", l->spacing[0], l->spacing[1], l->spacing[2]);
      else
        g_string_append_printf (s, ", %.4g×%.4g", l->spacing[1], l->spacing[2]);
      if (l->unit != NULL)
        g_string_append_printf (s, " %s", l->unit);
    }
  return g_string_free (s, FALSE);
}

/* "Level" lists the image's levels with `selected` shown. */
static void
show_levels (SvWindow *self, guint selected)
{
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  g_auto (GStrv) names = NULL;

  for (guint i = 0; self->zarr_levels != NULL && i < self->zarr_levels->len; i++)
    {
      g_autofree char *words = sv_window_level_words (g_ptr_array_index (self->zarr_levels, i));
      g_strv_builder_add (builder, words);
    }
  names = g_strv_builder_end (builder);
  sv_params_panel_set_levels (self->params_panel, (const char *const *)names, selected);
}

void
sv_window_levels_show (SvWindow *self)
{
  show_levels (self, self->zarr_level);
}

void
sv_window_levels_asked (SvWindow *self, guint level)
{
  show_levels (self, level);
}

void
sv_window_levels_forget (SvWindow *self)
{
  g_clear_pointer (&self->zarr_image, g_free);
  g_clear_pointer (&self->zarr_levels, g_ptr_array_unref);
  self->zarr_level = 0;
  sv_params_panel_set_levels (self->params_panel, NULL, 0);
}

void
sv_window_levels_leave (SvWindow *self, SvLevelPlace *place)
{
  const SvVolume *v = self->ooc != NULL ? self->ooc->shape : self->volume;

  memset (place, 0, sizeof *place);
  if (v != NULL)
    {
      place->shape[0] = v->nz;
      place->shape[1] = v->ny;
      place->shape[2] = v->nx;
    }
  memcpy (place->cursor, self->cursor_zyx, sizeof place->cursor);
  sv_params_panel_keep_for_level (self->params_panel);
}

/* Slice i of n at the same depth among m: its centre's fraction kept. */
static guint
same_place (guint i, guint n, guint m)
{
  if (n == 0 || m == 0)
    return 0;
  return MIN ((guint)(((double)i + 0.5) * m / n), m - 1);
}

void
sv_window_levels_opened (SvWindow *self, const char *image, guint level, GPtrArray *levels,
                         const SvLevelPlace *place)
{
  const SvVolume *v = self->ooc != NULL ? self->ooc->shape : self->volume;
  int channel;

  g_free (self->zarr_image);
  self->zarr_image = g_strdup (image);
  self->zarr_level = level;
  if (self->zarr_levels != NULL)
    g_ptr_array_unref (self->zarr_levels);
  self->zarr_levels = levels;
  sv_window_levels_show (self);
  if (place == NULL || v == NULL || place->shape[0] == 0)
    return;

  /* The slices shown stay at the same place in the image: the views
   * recentre on the same depth, not on the middle. */
  sv_slice_view_set_slice (self->xy_view, same_place (place->cursor[0], place->shape[0], v->nz));
  if (self->volume != NULL)
    {
      sv_slice_view_set_slice (self->xz_view,
                               same_place (place->cursor[1], place->shape[1], v->ny));
      sv_slice_view_set_slice (self->yz_view,
                               same_place (place->cursor[2], place->shape[2], v->nx));
    }
  /* A new volume segments every channel; "Segment on" kept its channel.
   * Out of core the sync only records it: the run is asked for again. */
  channel = self->segment_channel;
  if (!sv_window_channel_sync (self) && self->ooc != NULL && self->segment_channel != channel)
    sv_window_ooc_submit (self);
}

static void
level_chosen_cb (SvParamsPanel *panel, guint level, SvWindow *self)
{
  if (level != self->zarr_level || self->loading)
    sv_window_open_level (self, level);
}

void
sv_window_levels_init (SvWindow *self)
{
  g_signal_connect (self->params_panel, "level-chosen", G_CALLBACK (level_chosen_cb), self);
}

/* Supervox GUI: one slice view's highlighted voxels: where the labels shown
 * differ from the ones compared with (sv-partition-compare.h). The window
 * hands the view the whole volume's bytes; each frame takes its slice of
 * them, on either drawing path, whenever it takes the labels'. */
#define G_LOG_DOMAIN "sv-slice-view"

#include "sv-slice-view-private.h"

void
sv_slice_view_set_difference (SvSliceView *self, GBytes *difference)
{
  g_return_if_fail (SV_IS_SLICE_VIEW (self));
  if (difference == self->difference)
    return;
  if (difference)
    g_bytes_ref (difference);
  g_clear_pointer (&self->difference, g_bytes_unref);
  self->difference = difference;
  self->difference_dirty = TRUE;
  sv_slice_view_queue_frame (self);
}

gboolean
sv_slice_view_get_difference_shown (SvSliceView *self)
{
  g_return_val_if_fail (SV_IS_SLICE_VIEW (self), FALSE);
  return self->difference != NULL;
}

gboolean
sv_slice_view_extract_difference (SvSliceView *self, guint tw, guint th)
{
  const SvVolume *vol = self->volume;
  const guint8 *bytes;
  guint s = sv_slice_view_get_slice (self);
  guint zyx[3];
  int u, v, w;

  self->difference_dirty = FALSE;
  /* Bytes of another volume (one just replaced) are no use. */
  if (!self->difference || !vol || self->label_source
      || g_bytes_get_size (self->difference) != sv_volume_n_voxels (vol))
    return FALSE;
  bytes = g_bytes_get_data (self->difference, NULL);
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  self->difference_buf = g_renew (guint8, self->difference_buf, (gsize)tw * th);
  zyx[w] = s;
  for (guint j = 0; j < th; j++)
    for (guint i = 0; i < tw; i++)
      {
        zyx[u] = i;
        zyx[v] = j;
        self->difference_buf[(gsize)j * tw + i]
            = bytes[((gsize)zyx[0] * vol->ny + zyx[1]) * vol->nx + zyx[2]];
      }
  return TRUE;
}

void
sv_slice_view_difference_finalize (SvSliceView *self)
{
  g_clear_pointer (&self->difference, g_bytes_unref);
  g_clear_pointer (&self->difference_buf, g_free);
}

/* Supervox GUI: what one slice view's frame shows, on either path: the
 * visible slice of the volume and of the labels, the centres near it, and
 * where the hover, crosshair, search window, region and selection fall. */
#define G_LOG_DOMAIN "sv-slice-view"

#include "sv-slice-view-private.h"

#include <math.h>

void
sv_slice_view_extract_image (SvSliceView *self, guint tw, guint th)
{
  const SvVolume *vol = self->volume;
  guint nc = sv_display_texel_channels (vol->nc);
  guint s = sv_slice_view_get_slice (self);
  guint zyx[3];
  int u, v, w;

  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  self->image_buf = g_renew (float, self->image_buf, (gsize)tw *th *nc);
  if (self->image_source)
    {
      /* Only XY views take a source: the slice is the texture as it is. */
      self->image_source (s, self->image_buf, self->source_data);
      return;
    }
  zyx[w] = s;
  for (guint j = 0; j < th; j++)
    for (guint i = 0; i < tw; i++)
      {
        gsize idx;
        zyx[u] = i;
        zyx[v] = j;
        idx = (((gsize)zyx[0] * vol->ny + zyx[1]) * vol->nx + zyx[2]) * vol->nc;
        for (guint c = 0; c < nc; c++)
          self->image_buf[((gsize)j * tw + i) * nc + c] = vol->data[idx + c];
      }
}

void
sv_slice_view_extract_labels (SvSliceView *self, guint tw, guint th)
{
  guint s = sv_slice_view_get_slice (self);
  guint zyx[3];
  int u, v, w;

  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  self->label_buf = g_renew (gint32, self->label_buf, (gsize)tw * th);
  zyx[w] = s;
  for (guint j = 0; j < th; j++)
    for (guint i = 0; i < tw; i++)
      {
        zyx[u] = i;
        zyx[v] = j;
        self->label_buf[(gsize)j * tw + i]
            = sv_job_result_label_at (self->result, zyx[0], zyx[1], zyx[2]);
      }
}

gboolean
sv_slice_view_source_labels (SvSliceView *self, guint tw, guint th)
{
  self->label_buf = g_renew (gint32, self->label_buf, (gsize)tw * th);
  return self->label_source (sv_slice_view_get_slice (self), self->label_buf, self->source_data);
}

/* Teaching's centre marks on this slice (sv-centre-marks.h). */
SvCentreMark *
sv_slice_view_collect_centre_marks (SvSliceView *self, gsize *n_marks)
{
  int u, v, w;

  *n_marks = 0;
  if (!self->result || !self->display.show_centres)
    return NULL;
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  return sv_centre_marks_collect (self->result, u, v, w, sv_slice_view_get_slice (self), n_marks);
}

/* Everything of the frame but the textures. */
void
sv_slice_view_fill_frame (SvSliceView *self, int scale, double x0, double y0, double x1, double y1,
                          SvRenderFrame *fp)
{
  SvRenderFrame f = *fp;
  int u, v, w;

  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  f.x0 = (float)(x0 * scale);
  f.y0 = (float)(y0 * scale);
  f.x1 = (float)(x1 * scale);
  f.y1 = (float)(y1 * scale);
  if (self->result && self->hover_valid)
    {
      f.hover_valid = TRUE;
      f.hover_label = sv_job_result_probe_label (self->result, self->hover_zyx[0],
                                                 self->hover_zyx[1], self->hover_zyx[2]);
    }
  if (self->result && self->result->params.start_label == 1
      && self->result->stop_after_iteration < 0)
    {
      f.background_valid = TRUE;
      f.background = 0;
    }
  else if (self->result && self->result->stop_after_iteration >= 0)
    {
      /* A teaching step's labels are cluster index + start label: below
       * that is a voxel no cluster holds yet (all of step 0's). */
      f.background_valid = TRUE;
      f.background = self->result->params.start_label - 1;
    }
  if (self->cross_valid)
    {
      f.crosshair = TRUE;
      f.cross_u = self->cross_zyx[u] + 0.5f;
      f.cross_v = self->cross_zyx[v] + 0.5f;
    }
  if (self->window_valid && sv_slice_view_get_slice (self) >= (guint)self->window_lo[w]
      && (int)sv_slice_view_get_slice (self) < self->window_hi[w])
    {
      f.window_valid = TRUE;
      f.window_u0 = self->window_lo[u];
      f.window_u1 = self->window_hi[u];
      f.window_v0 = self->window_lo[v];
      f.window_v1 = self->window_hi[v];
    }
  if (self->region_valid && sv_slice_view_get_slice (self) >= self->region_lo[w]
      && sv_slice_view_get_slice (self) < self->region_hi[w])
    {
      f.region_valid = TRUE;
      f.region_u0 = self->region_lo[u];
      f.region_u1 = self->region_hi[u];
      f.region_v0 = self->region_lo[v];
      f.region_v1 = self->region_hi[v];
    }
  f.selected_valid = self->result && self->selected_valid;
  f.selected = self->selected;
  f.selected_only = self->selected_only;
  *fp = f;
}

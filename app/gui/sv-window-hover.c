/* Supervox GUI: the main window's hover: the status bar's words for the
 * voxel under the pointer (position, intensity in the file's values, label
 * of the result on screen) and, in teaching mode, the search window of the
 * cluster under it. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <math.h>
#include <string.h>

#include "supervox/sv-seeds.h"

void
sv_window_update_hover_status (SvWindow *self)
{
  g_autofree char *text = NULL;
  const SvVolume *v = self->volume;
  const guint *p = self->hover_zyx;
  gsize idx;
  GString *s;

  if (self->ooc)
    {
      sv_window_ooc_update_hover (self);
      return;
    }
  if (!self->hover_valid || !v)
    {
      gtk_label_set_text (self->hover_label, "");
      return;
    }
  idx = ((gsize)p[0] * v->ny + p[1]) * v->nx + p[2];
  s = g_string_new (NULL);
  /* A 2D image has no z to tell. */
  if (v->nz == 1)
    g_string_append_printf (s, "x %u  y %u  ·  ", p[2], p[1]);
  else
    g_string_append_printf (s, "x %u  y %u  z %u  ·  ", p[2], p[1], p[0]);
  /* In the file's own values: a uint16 voxel reads 19659, not 0.3. */
  g_string_append (s, "I");
  for (guint c = 0; c < v->nc; c++)
    {
      g_autofree char *value
          = sv_params_panel_format_intensity (self->params_panel, v->data[idx * v->nc + c]);
      g_string_append_printf (s, " %s", value);
    }
  /* The label of the result on screen, the pinned one while flipped. */
  if (sv_window_shown_result (self))
    g_string_append_printf (
        s, "  ·  label %d",
        sv_job_result_probe_label (sv_window_shown_result (self), p[0], p[1], p[2]));
  text = g_string_free (s, FALSE);
  gtk_label_set_text (self->hover_label, text);
}

/* Teaching mode: the search window of the centre whose cluster holds the
 * voxel under the cursor. */
void
sv_window_update_search_window (SvWindow *self)
{
  SvJobResult *r = self->result;
  const SvVolume *v = self->volume;
  guint shape[3];
  int lo[3], hi[3];
  gsize k;
  gint32 label;

  if (!r || !v || r->stop_after_iteration < 0 || !self->hover_valid || !r->n_centres)
    {
      for (guint i = 0; i < 3; i++)
        sv_slice_view_set_search_window (sv_window_view (self, i), FALSE, NULL, NULL);
      return;
    }
  label = sv_job_result_probe_label (r, self->hover_zyx[0], self->hover_zyx[1], self->hover_zyx[2]);
  k = (gsize)(label - r->params.start_label);
  if (label < r->params.start_label || k >= r->n_centres || isnan (r->centres[k * 3]))
    {
      for (guint i = 0; i < 3; i++)
        sv_slice_view_set_search_window (sv_window_view (self, i), FALSE, NULL, NULL);
      return;
    }
  shape[0] = v->nz;
  shape[1] = v->ny;
  shape[2] = v->nx;
  /* A region's run saw the region only. */
  if (r->region)
    memcpy (shape, r->region_shape, sizeof shape);
  sv_slic_search_window (shape, r->n_centres, r->centres + k * 3, lo, hi);
  for (guint a = 0; a < 3; a++)
    {
      guint offset = r->region ? r->region_offset[a] : 0;
      lo[a] += (int)offset;
      hi[a] += (int)offset;
    }
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_search_window (sv_window_view (self, i), TRUE, lo, hi);
}

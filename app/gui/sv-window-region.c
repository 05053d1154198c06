/* Supervox GUI: the main window's region preview: a box drawn with
 * Shift-drag (in XY for y and x, in XZ or YZ for the z range) that the job
 * runs on alone, so that tuning a huge volume stays interactive; the labels
 * are shown inside the box. The region gets its share of the segments, so
 * that the supervoxels have the size the whole volume would give them. "Run on Whole Volume" goes
 * back to all of it; "Copy as command" always gives the whole-volume command, and export waits for
 * a whole-volume result. The job and the quality worker borrow cropped copies (engine/region.h) of
 * the volume, mask and ground truth. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <math.h>

#include "supervox/sv-error.h"
#include "supervox/sv-region.h"

const SvVolume *
sv_window_job_volume (SvWindow *self)
{
  return self->region_volume ? self->region_volume : sv_window_segmented_volume (self);
}

const guint8 *
sv_window_job_mask (SvWindow *self)
{
  return self->region_volume ? self->region_mask : self->mask;
}

const SvLabels *
sv_window_job_truth (SvWindow *self)
{
  if (!self->region_volume)
    return self->truth;
  g_clear_pointer (&self->region_truth, sv_labels_free);
  if (self->truth)
    self->region_truth = sv_labels_crop (self->truth, self->region_lo, self->region_hi, NULL);
  return self->region_truth;
}

static void
free_copies (SvWindow *self)
{
  g_clear_pointer (&self->region_volume, sv_volume_free);
  g_clear_pointer (&self->region_mask, g_free);
  g_clear_pointer (&self->region_truth, sv_labels_free);
}

void
sv_window_region_prepare (SvWindow *self)
{
  /* The region of what SLIC segments: the chosen channel's copy. */
  const SvVolume *v = sv_window_segmented_volume (self);

  free_copies (self);
  if (!self->region_valid || !v)
    return;
  self->region_volume = sv_volume_crop (v, self->region_lo, self->region_hi, NULL);
  if (self->mask && self->region_volume)
    self->region_mask
        = sv_mask_crop (self->mask, v->nz, v->ny, v->nx, self->region_lo, self->region_hi);
}

void
sv_window_region_adjust (SvWindow *self, SvSlicParams *params)
{
  double share;

  if (!self->region_volume)
    return;
  /* The region's share of the segments, so that supervoxels keep the size
   * the whole volume gives them. */
  share = (double)sv_volume_n_voxels (self->region_volume) / sv_volume_n_voxels (self->volume);
  params->n_segments = MAX (1, (gint64)llround ((double)params->n_segments * share));
}

void
sv_window_region_tag (SvWindow *self, SvJobResult *result)
{
  if (!self->region_volume)
    return;
  result->region = TRUE;
  for (guint a = 0; a < 3; a++)
    {
      result->region_offset[a] = self->region_lo[a];
      result->region_shape[a] = self->region_hi[a] - self->region_lo[a];
    }
}

static void
show_region (SvWindow *self)
{
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_region (sv_window_view (self, i), self->region_valid, self->region_lo,
                              self->region_hi);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.run-whole-volume", self->region_valid);
}

void
sv_window_region_forget (SvWindow *self)
{
  self->region_valid = FALSE;
  free_copies (self);
  show_region (self);
}

gboolean
sv_window_set_region (SvWindow *self, const guint lo[3], const guint hi[3], GError **error)
{
  const SvVolume *v = self->volume;
  g_autofree char *text = NULL;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (self->ooc)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "the region preview needs the volume in memory; this one is larger "
                           "than the memory budget and open out of core");
      return FALSE;
    }
  if (!v)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "open a volume first");
      return FALSE;
    }
  if (!sv_region_valid (lo, hi, v->nz, v->ny, v->nx))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "the region z %u–%u, y %u–%u, x %u–%u is empty or outside the volume", lo[0],
                   hi[0], lo[1], hi[1], lo[2], hi[2]);
      return FALSE;
    }
  /* The job and the quality worker borrow the copies: stop them first. */
  sv_window_stop_job (self);
  self->region_valid = TRUE;
  memcpy (self->region_lo, lo, sizeof self->region_lo);
  memcpy (self->region_hi, hi, sizeof self->region_hi);
  show_region (self);
  sv_window_start_job (self);
  text = g_strdup_printf ("running on x %u–%u · y %u–%u · z %u–%u only", lo[2], hi[2] - 1, lo[1],
                          hi[1] - 1, lo[0], hi[0] - 1);
  sv_window_show_toast (self, text);
  return TRUE;
}

void
sv_window_run_whole_volume (SvWindow *self)
{
  g_return_if_fail (SV_IS_WINDOW (self));
  if (!self->region_valid)
    return;
  sv_window_stop_job (self);
  sv_window_region_forget (self);
  sv_window_start_job (self);
}

gboolean
sv_window_get_region (SvWindow *self, guint lo[3], guint hi[3])
{
  if (self->region_valid)
    {
      memcpy (lo, self->region_lo, sizeof self->region_lo);
      memcpy (hi, self->region_hi, sizeof self->region_hi);
    }
  return self->region_valid;
}

static void
region_cb (SvSliceView *view, guint z0, guint y0, guint x0, guint z1, guint y1, guint x1,
           SvWindow *self)
{
  const guint lo[3] = { z0, y0, x0 }, hi[3] = { z1, y1, x1 };
  g_autoptr (GError) error = NULL;

  if (!sv_window_set_region (self, lo, hi, &error))
    sv_window_show_error (self, "Cannot run on this region", error);
}

static void
whole_volume_action (GtkWidget *widget, const char *name, GVariant *param)
{
  sv_window_run_whole_volume (SV_WINDOW (widget));
}

void
sv_window_region_init (SvWindow *self)
{
  for (guint i = 0; i < 3; i++)
    g_signal_connect (sv_window_view (self, i), "region", G_CALLBACK (region_cb), self);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.run-whole-volume", FALSE);
}

void
sv_window_region_set_planar (SvWindow *self, gboolean planar)
{
  GtkButton *button = GTK_BUTTON (
      gtk_widget_get_template_child (GTK_WIDGET (self), SV_TYPE_WINDOW, "whole_volume_button"));

  /* A photo is an image, not a volume. */
  gtk_button_set_label (button, planar ? "Whole Image" : "Whole Volume");
  gtk_widget_set_tooltip_text (
      GTK_WIDGET (button),
      planar ? "Run on the whole image again (Shift-drag in the view runs on a box of it only)"
             : "Run on the whole volume again (Shift-drag in a view runs on a box of it only)");
}

void
sv_window_class_add_region_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.run-whole-volume", NULL, whole_volume_action);
  gtk_widget_class_bind_template_child_full (widget_class, "whole_volume_button", FALSE, 0);
}

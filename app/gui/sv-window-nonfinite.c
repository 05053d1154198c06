/* Supervox GUI: the main window's non-finite voxels: NaN or ±inf in a
 * float file. The volume opens anyway; the slice views draw those voxels
 * in magenta, a bar over the status line counts them and offers to mask
 * them out (a mask of the finite voxels, combined with an open mask), so
 * that SLIC runs. Until then the engine refuses the run and the status
 * line says why. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <math.h>

void
sv_window_finite_range (const SvVolume *v, float *min, float *max)
{
  float lo = G_MAXFLOAT, hi = -G_MAXFLOAT;

  for (gsize i = 0; i < sv_volume_n_voxels (v) * v->nc; i++)
    if (isfinite (v->data[i]))
      {
        lo = MIN (lo, v->data[i]);
        hi = MAX (hi, v->data[i]);
      }
  /* No finite value at all: any range will do. */
  if (lo > hi)
    lo = 0.0f, hi = 1.0f;
  *min = lo;
  *max = hi;
}

static gboolean
voxel_finite (const SvVolume *v, gsize i)
{
  for (guint c = 0; c < v->nc; c++)
    if (!isfinite (v->data[i * v->nc + c]))
      return FALSE;
  return TRUE;
}

/* What the bar says: how many, of which kind, where the first is, and
 * whether they are masked out. */
static void
update_bar (SvWindow *self)
{
  const SvVolume *v = self->volume;
  gsize n = self->n_nan + self->n_inf, f = self->first_nonfinite;
  g_autofree char *text = NULL, *button = NULL;

  gtk_revealer_set_reveal_child (self->nonfinite_revealer, v && n > 0);
  if (!v || n == 0)
    return;
  text = g_strdup_printf (
      "%" G_GSIZE_FORMAT " %s %s (magenta in the views; the first at x %" G_GSIZE_FORMAT
      ", y %" G_GSIZE_FORMAT ", z %" G_GSIZE_FORMAT "). %s",
      n, n == 1 ? "voxel holds" : "voxels hold",
      self->n_inf == 0   ? "NaN (not a number)"
      : self->n_nan == 0 ? "an infinite value"
                         : "NaN or an infinite value",
      f % v->nx, (f / v->nx) % v->ny, f / ((gsize)v->nx * v->ny),
      self->mask_nonfinite ? (n == 1 ? "It is masked out: SLIC segments the other voxels."
                                     : "They are masked out: SLIC segments the other voxels.")
      : n == 1             ? "SLIC cannot use it: mask it out to segment the rest."
                           : "SLIC cannot use them: mask them out to segment the rest.");
  gtk_label_set_text (self->nonfinite_label, text);
  button = g_strdup_printf ("Mask out the %" G_GSIZE_FORMAT " non-finite voxel%s", n,
                            n == 1 ? "" : "s");
  gtk_button_set_label (self->nonfinite_button, button);
  gtk_widget_set_visible (GTK_WIDGET (self->nonfinite_button), !self->mask_nonfinite);
}

void
sv_window_nonfinite_scan (SvWindow *self)
{
  const SvVolume *v = self->volume;

  self->n_nan = self->n_inf = 0;
  self->first_nonfinite = G_MAXSIZE;
  self->mask_nonfinite = FALSE;
  for (gsize i = 0; v && i < sv_volume_n_voxels (v); i++)
    {
      gboolean nan = FALSE, inf = FALSE;
      for (guint c = 0; c < v->nc; c++)
        {
          float x = v->data[i * v->nc + c];
          nan = nan || isnan (x);
          inf = inf || isinf (x);
        }
      if (!nan && !inf)
        continue;
      self->n_nan += nan;
      self->n_inf += inf && !nan;
      if (self->first_nonfinite == G_MAXSIZE)
        self->first_nonfinite = i;
    }
  update_bar (self);
}

void
sv_window_nonfinite_mask_replaced (SvWindow *self)
{
  self->mask_nonfinite = FALSE;
  update_bar (self);
}

gsize
sv_window_get_n_nonfinite (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), 0);
  return self->n_nan + self->n_inf;
}

const char *
sv_window_get_nonfinite_text (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), NULL);
  return gtk_revealer_get_reveal_child (self->nonfinite_revealer)
             ? gtk_label_get_text (self->nonfinite_label)
             : NULL;
}

gboolean
sv_window_mask_nonfinite (SvWindow *self)
{
  const SvVolume *v = self->volume;
  gsize n;
  guint8 *mask;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (!v || self->n_nan + self->n_inf == 0 || self->mask_nonfinite)
    return FALSE;
  n = sv_volume_n_voxels (v);
  mask = g_new (guint8, n);
  /* Inside: finite, and inside the mask already open. */
  for (gsize i = 0; i < n; i++)
    mask[i] = voxel_finite (v, i) && (!self->mask || self->mask[i]);
  /* The job borrows the mask: stop it before the old mask goes. */
  sv_window_stop_job (self);
  g_free (self->mask);
  self->mask = mask;
  self->mask_nonfinite = TRUE;
  update_bar (self);
  sv_window_start_job (self);
  return TRUE;
}

static void
mask_nonfinite_action (GtkWidget *widget, const char *name, GVariant *param)
{
  sv_window_mask_nonfinite (SV_WINDOW (widget));
}

void
sv_window_class_add_nonfinite_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_child (widget_class, SvWindow, nonfinite_revealer);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, nonfinite_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, nonfinite_button);
  gtk_widget_class_install_action (widget_class, "win.mask-nonfinite", NULL,
                                   mask_nonfinite_action);
}

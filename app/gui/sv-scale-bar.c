/* Supervox GUI: the scale bar over a slice view. */
#define G_LOG_DOMAIN "sv-scale-bar"

#include "sv-scale-bar.h"

#include <math.h>

#include "sv-pick-panel.h"

/* The bar takes about this share of the view's width. */
#define BAR_SHARE 0.2
#define MARGIN 12.0

struct _SvScaleBar
{
  GtkWidget parent_instance;

  double pixels_per_unit;
  char *unit;
  double length;
  char *text;
};

G_DEFINE_FINAL_TYPE (SvScaleBar, sv_scale_bar, GTK_TYPE_WIDGET)

double
sv_scale_bar_round_length (double at_most)
{
  double p, m;

  if (!(at_most > 0) || !isfinite (at_most))
    return 0.0;
  p = pow (10.0, floor (log10 (at_most)));
  m = at_most / p;
  return (m >= 5.0 ? 5.0 : m >= 2.0 ? 2.0 : 1.0) * p;
}

static void
update (SvScaleBar *self)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self));
  const char *unit = self->unit ? self->unit : "voxels";

  g_clear_pointer (&self->text, g_free);
  self->length = self->pixels_per_unit > 0 && width > 0
                     ? sv_scale_bar_round_length (width * BAR_SHARE / self->pixels_per_unit)
                     : 0.0;
  if (self->length > 0)
    self->text = g_strdup_printf ("%g %s", self->length, unit);
}

static void
sv_scale_bar_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SvScaleBar *self = SV_SCALE_BAR (widget);
  double h = gtk_widget_get_height (widget), w, x, y;
  g_autoptr (PangoLayout) layout = NULL;
  int tw, th;
  cairo_t *cr;

  update (self);
  if (self->length <= 0)
    return;
  w = self->length * self->pixels_per_unit;
  x = MARGIN;
  y = h - MARGIN - 4;
  layout = gtk_widget_create_pango_layout (widget, self->text);
  pango_layout_get_pixel_size (layout, &tw, &th);
  cr = gtk_snapshot_append_cairo (snapshot,
                                  &GRAPHENE_RECT_INIT (0, 0, gtk_widget_get_width (widget), h));
  /* A dark backing so that the bar reads on bright and dark tissue alike. */
  cairo_set_source_rgba (cr, 0, 0, 0, 0.55);
  cairo_rectangle (cr, x - 4, y - th - 6, MAX (w, tw) + 8, th + 14);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_rectangle (cr, x, y, w, 4);
  cairo_fill (cr);
  cairo_move_to (cr, x + (w - tw) / 2 > x ? x + (w - tw) / 2 : x, y - th - 2);
  pango_cairo_show_layout (cr, layout);
  cairo_destroy (cr);
}

void
sv_scale_bar_set_scale (SvScaleBar *self, double pixels_per_unit, const char *unit)
{
  g_return_if_fail (SV_IS_SCALE_BAR (self));
  if (self->pixels_per_unit == pixels_per_unit && g_strcmp0 (self->unit, unit) == 0)
    return;
  self->pixels_per_unit = pixels_per_unit;
  g_free (self->unit);
  self->unit = g_strdup (unit);
  update (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
sv_scale_bar_get_length (SvScaleBar *self)
{
  update (self);
  return self->length;
}

const char *
sv_scale_bar_get_text (SvScaleBar *self)
{
  update (self);
  return self->text;
}

GtkWidget *
sv_scale_bar_new (void)
{
  return g_object_new (SV_TYPE_SCALE_BAR, NULL);
}

static void
sv_scale_bar_finalize (GObject *object)
{
  SvScaleBar *self = SV_SCALE_BAR (object);

  g_free (self->unit);
  g_free (self->text);
  G_OBJECT_CLASS (sv_scale_bar_parent_class)->finalize (object);
}

static void
sv_scale_bar_class_init (SvScaleBarClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sv_scale_bar_finalize;
  GTK_WIDGET_CLASS (klass)->snapshot = sv_scale_bar_snapshot;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "sv-scale-bar");
}

static void
sv_scale_bar_init (SvScaleBar *self)
{
  gtk_widget_set_can_target (GTK_WIDGET (self), FALSE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
}

/* Supervox GUI: the contrast panel: histogram, handles, colormap, and a
 * composite's channels (each its own histogram, window, colour). */
#define G_LOG_DOMAIN "sv-contrast-panel"

#include "sv-contrast-panel-private.h"

#include <math.h>

/* Pixels around a handle that grab it. */
#define HANDLE_GRAB_PX 8.0
#define GRADIENT_PX 8.0

G_DEFINE_FINAL_TYPE (SvContrastPanel, sv_contrast_panel, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_COLORMAP,
  PROP_CHANNEL,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum
{
  SIGNAL_WINDOW_CHANGED,
  SIGNAL_CHANNELS_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* The histogram's value range; a window outside it widens the axis. */
static void
axis_range (SvContrastPanel *self, double *lo, double *hi)
{
  const SvHistogram *h = self->histogram;

  *lo = h && h->max >= h->min ? h->min : 0.0;
  *hi = h && h->max > h->min ? h->max : *lo + 1.0;
}

double
sv_contrast_panel_x_to_value (SvContrastPanel *self, double x)
{
  double lo, hi, w = MAX (gtk_widget_get_width (GTK_WIDGET (self->plot)), 1);

  axis_range (self, &lo, &hi);
  return lo + (hi - lo) * CLAMP (x / w, 0.0, 1.0);
}

static double
value_to_x (SvContrastPanel *self, double value, double width)
{
  double lo, hi;

  axis_range (self, &lo, &hi);
  return (value - lo) / (hi - lo) * width;
}

/* The mapping's colour at t in [0, 1], as the shader draws it. */
static void
colormap_rgb (SvColormap map, double t, double rgb[3])
{
  static const double c[7][3] = {
    { 0.2777273272234177, 0.005407344544966578, 0.3340998053353061 },
    { 0.1050930431085774, 1.404613529898575, 1.384590162594685 },
    { -0.3308618287255563, 0.214847559468213, 0.09509516302823659 },
    { -4.634230498983486, -5.799100973351585, -19.33244095627987 },
    { 6.228269936347081, 14.17993336680509, 56.69055260068105 },
    { 4.776384997670288, -13.74514537774601, -65.35303263337234 },
    { -5.435455855934631, 4.645852612178535, 26.3124352495832 },
  };

  for (guint i = 0; i < 3; i++)
    {
      if (map == SV_COLORMAP_VIRIDIS)
        {
          double v = c[6][i];
          for (int k = 5; k >= 0; k--)
            v = c[k][i] + t * v;
          rgb[i] = CLAMP (v, 0.0, 1.0);
        }
      else
        rgb[i] = map == SV_COLORMAP_INVERTED ? 1.0 - t : t;
    }
}

static void
draw_plot (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SvContrastPanel *self = data;
  const SvHistogram *h = self->histogram;
  SvColormap map = sv_contrast_panel_get_colormap (self);
  double plot_h = height - GRADIENT_PX - 2, most = 0, xl, xh;
  g_autofree double *bars = NULL;
  guint merge, n_bars;

  cairo_set_source_rgba (cr, 0.5, 0.5, 0.5, 0.12);
  cairo_rectangle (cr, 0, 0, width, plot_h);
  cairo_fill (cr);
  if (!h)
    return;
  /* Bins merged to about two pixels each. */
  merge = MAX (1u, h->n_bins / MAX ((guint)width / 2, 1u));
  n_bars = (h->n_bins + merge - 1) / merge;
  bars = g_new0 (double, n_bars);
  for (guint b = 0; b < h->n_bins; b++)
    bars[b / merge] += (double)h->counts[b];
  for (guint b = 0; b < n_bars; b++)
    most = MAX (most, log1p (bars[b]));
  /* Log counts, so that the dim tissue shows beside the background peak. */
  cairo_set_source_rgb (cr, 0.55, 0.55, 0.6);
  for (guint b = 0; b < n_bars && most > 0; b++)
    {
      double bh = log1p (bars[b]) / most * (plot_h - 2);
      cairo_rectangle (cr, (double)b * merge * width / h->n_bins, plot_h - bh,
                       MAX ((double)merge * width / h->n_bins, 1.0), bh);
    }
  cairo_fill (cr);

  xl = value_to_x (self, self->low, width);
  xh = value_to_x (self, self->high, width);
  /* The mapping: 0 below black, 1 above white, gamma between. */
  cairo_set_source_rgb (cr, 0.95, 0.75, 0.2);
  cairo_set_line_width (cr, 1.5);
  cairo_move_to (cr, 0, plot_h);
  for (int x = 0; x <= width; x++)
    {
      double t = xh > xl ? CLAMP ((x - xl) / (xh - xl), 0.0, 1.0) : (x < xl ? 0.0 : 1.0);
      cairo_line_to (cr, x, plot_h - pow (t, 1.0 / (self->gamma > 0 ? self->gamma : 1.0)) * plot_h);
    }
  cairo_stroke (cr);

  /* The handles: a line and a grip. */
  for (guint i = 0; i < 2; i++)
    {
      double x = i ? xh : xl;
      cairo_set_source_rgb (cr, i ? 1.0 : 0.0, i ? 1.0 : 0.0, i ? 1.0 : 0.0);
      cairo_rectangle (cr, x - 1.0, 0, 2.0, plot_h);
      cairo_fill (cr);
      cairo_move_to (cr, x - 5, 0);
      cairo_line_to (cr, x + 5, 0);
      cairo_line_to (cr, x, 7);
      cairo_close_path (cr);
      cairo_fill_preserve (cr);
      cairo_set_source_rgb (cr, 0.5, 0.5, 0.5);
      cairo_set_line_width (cr, 1.0);
      cairo_stroke (cr);
    }

  /* The colormap under the window; a composite's channel: black to its colour. */
  for (int x = 0; x < width; x++)
    {
      double t = xh > xl ? CLAMP ((x - xl) / (xh - xl), 0.0, 1.0) : (x < xl ? 0.0 : 1.0), rgb[3];
      t = pow (t, 1.0 / (self->gamma > 0 ? self->gamma : 1.0));
      if (self->n_channels > 0)
        for (guint i = 0; i < 3; i++)
          rgb[i] = t * sv_contrast_panel_colour_rgb (self->colour[self->channel])[i];
      else
        colormap_rgb (map, t, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_rectangle (cr, x, height - GRADIENT_PX, 1, GRADIENT_PX);
      cairo_fill (cr);
    }
}

static char *
format_value (SvContrastPanel *self, double value)
{
  if (self->intensity_scale > 0)
    return g_strdup_printf ("%.0f", round (value * self->intensity_scale));
  return g_strdup_printf ("%.4g", value);
}

void
sv_contrast_panel_update_label (SvContrastPanel *self)
{
  g_autofree char *lo = format_value (self, self->low);
  g_autofree char *hi = format_value (self, self->high);
  g_autofree char *text = g_strdup_printf ("black %s · white %s · gamma %.2f", lo, hi, self->gamma);

  gtk_label_set_text (self->window_label, text);
}

void
sv_contrast_panel_set_window (SvContrastPanel *self, double low, double high, double gamma)
{
  g_return_if_fail (SV_IS_CONTRAST_PANEL (self));
  self->low = low;
  self->high = high;
  self->gamma = gamma;
  /* A composite's handles are its channel's window. */
  if (self->n_channels > 0)
    {
      self->channel_low[self->channel] = low;
      self->channel_high[self->channel] = high;
    }
  sv_contrast_panel_update_label (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
}

void
sv_contrast_panel_move_handle (SvContrastPanel *self, SvContrastHandle handle, double x)
{
  double value = sv_contrast_panel_x_to_value (self, x);

  /* The handles do not cross: black stays below white. */
  if (handle == SV_HANDLE_BLACK)
    self->low = MIN (value, self->high);
  else
    self->high = MAX (value, self->low);
  sv_contrast_panel_update_label (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
  g_signal_emit (self, signals[SIGNAL_WINDOW_CHANGED], 0, self->low, self->high);
}

static void
drag_begin_cb (GtkGestureDrag *drag, double x, double y, SvContrastPanel *self)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self->plot));
  double dl = fabs (x - value_to_x (self, self->low, width));
  double dh = fabs (x - value_to_x (self, self->high, width));

  /* The nearer handle, if near enough; on a tie the one the drag goes to. */
  self->dragging = MIN (dl, dh) > HANDLE_GRAB_PX ? -1 : dl < dh ? SV_HANDLE_BLACK : SV_HANDLE_WHITE;
  if (self->dragging < 0)
    gtk_gesture_set_state (GTK_GESTURE (drag), GTK_EVENT_SEQUENCE_DENIED);
}

static void
drag_update_cb (GtkGestureDrag *drag, double dx, double dy, SvContrastPanel *self)
{
  double x0, y0;

  if (self->dragging < 0 || !gtk_gesture_drag_get_start_point (drag, &x0, &y0))
    return;
  sv_contrast_panel_move_handle (self, (SvContrastHandle)self->dragging, x0 + dx);
}

static void
drag_end_cb (GtkGestureDrag *drag, double dx, double dy, SvContrastPanel *self)
{
  self->dragging = -1;
}

void
sv_contrast_panel_set_histogram (SvContrastPanel *self, SvHistogram *histogram,
                                 double intensity_scale)
{
  g_return_if_fail (SV_IS_CONTRAST_PANEL (self));
  sv_contrast_panel_clear_histograms (self);
  self->histograms[0] = self->histogram = histogram;
  self->intensity_scale = intensity_scale;
  self->n_channels = 0;
  self->channel = 0;
  gtk_widget_set_visible (self->channel_box, FALSE);
  gtk_widget_set_sensitive (GTK_WIDGET (self->colormap_dropdown), TRUE);
  sv_contrast_panel_update_label (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
}

const SvHistogram *
sv_contrast_panel_get_histogram (SvContrastPanel *self)
{
  return self->histogram;
}

GtkWidget *
sv_contrast_panel_get_plot (SvContrastPanel *self)
{
  return GTK_WIDGET (self->plot);
}

SvColormap
sv_contrast_panel_get_colormap (SvContrastPanel *self)
{
  return (SvColormap)MIN (gtk_drop_down_get_selected (self->colormap_dropdown),
                          SV_COLORMAP_VIRIDIS);
}

void
sv_contrast_panel_set_colormap (SvContrastPanel *self, SvColormap colormap)
{
  gtk_drop_down_set_selected (self->colormap_dropdown, colormap);
}

static void
colormap_notify_cb (GtkDropDown *dropdown, GParamSpec *pspec, SvContrastPanel *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLORMAP]);
}

GtkWidget *
sv_contrast_panel_new (void)
{
  return g_object_new (SV_TYPE_CONTRAST_PANEL, NULL);
}

static void
sv_contrast_panel_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_COLORMAP:
      g_value_set_int (value, sv_contrast_panel_get_colormap (SV_CONTRAST_PANEL (object)));
      break;
    case PROP_CHANNEL:
      g_value_set_uint (value, SV_CONTRAST_PANEL (object)->channel);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_contrast_panel_set_property (GObject *object, guint prop_id, const GValue *value,
                                GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_COLORMAP:
      sv_contrast_panel_set_colormap (SV_CONTRAST_PANEL (object), g_value_get_int (value));
      break;
    case PROP_CHANNEL:
      sv_contrast_panel_set_channel (SV_CONTRAST_PANEL (object), g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_contrast_panel_dispose (GObject *object)
{
  SvContrastPanel *self = SV_CONTRAST_PANEL (object);

  sv_contrast_panel_clear_histograms (self);
  gtk_widget_dispose_template (GTK_WIDGET (self), SV_TYPE_CONTRAST_PANEL);
  /* The template's unnamed top child too. */
  for (GtkWidget *child; (child = gtk_widget_get_first_child (GTK_WIDGET (object)));)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (sv_contrast_panel_parent_class)->dispose (object);
}

static void
sv_contrast_panel_class_init (SvContrastPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sv_contrast_panel_dispose;
  object_class->get_property = sv_contrast_panel_get_property;
  object_class->set_property = sv_contrast_panel_set_property;
  properties[PROP_COLORMAP] = g_param_spec_int (
      "colormap", NULL, NULL, SV_COLORMAP_GREY, SV_COLORMAP_VIRIDIS, SV_COLORMAP_GREY,
      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* A composite's channel that the histogram and handles show, from 0. */
  properties[PROP_CHANNEL]
      = g_param_spec_uint ("channel", NULL, NULL, 0, SV_DISPLAY_MAX_CHANNELS - 1, 0,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  /* A handle moved: the new black and white points. */
  signals[SIGNAL_WINDOW_CHANGED]
      = g_signal_new ("window-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
  /* A composite channel's colour, or whether it shows, changed. */
  signals[SIGNAL_CHANNELS_CHANGED]
      = g_signal_new ("channels-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                      NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-contrast-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, SvContrastPanel, plot);
  gtk_widget_class_bind_template_child (widget_class, SvContrastPanel, window_label);
  gtk_widget_class_bind_template_child (widget_class, SvContrastPanel, colormap_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SvContrastPanel, channel_box);
  gtk_widget_class_bind_template_child (widget_class, SvContrastPanel, channel_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SvContrastPanel, colour_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SvContrastPanel, shown_check);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "sv-contrast-panel");
}

static void
sv_contrast_panel_init (SvContrastPanel *self)
{
  GtkGesture *drag;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->gamma = 1.0;
  self->high = 1.0;
  self->dragging = -1;
  gtk_drawing_area_set_draw_func (self->plot, draw_plot, self, NULL);
  drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->plot), GTK_EVENT_CONTROLLER (drag));
  g_signal_connect (self->colormap_dropdown, "notify::selected", G_CALLBACK (colormap_notify_cb),
                    self);
  sv_contrast_panel_init_channels (self);
}

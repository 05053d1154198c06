/* Supervox GUI: one slice view: the type, its slice and zoom state, what a
 * frame shows (sv-slice-view-private.h lists the other files). */
#define G_LOG_DOMAIN "sv-slice-view"

#include "sv-slice-view-private.h"

#include "sv-element-words.h"

#include "sv-pick-panel.h"

#include <epoxy/gl.h>
#include <math.h>
#include <string.h>

G_DEFINE_FINAL_TYPE (SvSliceView, sv_slice_view, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_AXIS,
  PROP_SLICE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum
{
  SIGNAL_HOVER,
  SIGNAL_PICK,
  SIGNAL_RESIZE,
  SIGNAL_REGION,
  SIGNAL_ZOOM,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

void
sv_slice_view_emit_hover (SvSliceView *self, int z, int y, int x)
{
  g_signal_emit (self, signals[SIGNAL_HOVER], 0, z, y, x);
}

static void update_scale_bar (SvSliceView *self);

void
sv_slice_view_emit_resize (SvSliceView *self, int width, int height)
{
  update_scale_bar (self);
  g_signal_emit (self, signals[SIGNAL_RESIZE], 0, width, height);
}

static void
gl_resize_cb (GtkGLArea *area, int width, int height, SvSliceView *self)
{
  sv_slice_view_emit_resize (self, width, height);
}

void
sv_slice_view_emit_region (SvSliceView *self, const guint lo[3], const guint hi[3])
{
  g_signal_emit (self, signals[SIGNAL_REGION], 0, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
}

void
sv_slice_view_emit_zoom (SvSliceView *self, double factor, const double zyx[3])
{
  g_signal_emit (self, signals[SIGNAL_ZOOM], 0, factor, zyx[0], zyx[1], zyx[2]);
}

void
sv_slice_view_emit_pick (SvSliceView *self, int z, int y, int x)
{
  g_signal_emit (self, signals[SIGNAL_PICK], 0, z, y, x);
}

/* Axis bookkeeping: the slice's horizontal (u), vertical (v) and normal (w)
 * axes as indices into z, y, x. */
void
sv_slice_view_axis_dims (SvAxis axis, int *u, int *v, int *w)
{
  switch (axis)
    {
    case SV_AXIS_XZ:
      *u = 2, *v = 0, *w = 1;
      break;
    case SV_AXIS_YZ:
      /* z across, as in Fiji's orthogonal views: beside XY, rows are y. */
      *u = 0, *v = 1, *w = 2;
      break;
    case SV_AXIS_XY:
    default:
      *u = 2, *v = 1, *w = 0;
      break;
    }
}

static void
volume_shape (const SvVolume *v, guint shape[3])
{
  shape[0] = v->nz;
  shape[1] = v->ny;
  shape[2] = v->nx;
}

guint
sv_slice_view_get_n_slices (SvSliceView *self)
{
  guint shape[3];
  int u, v, w;

  if (!self->volume)
    return 1;
  volume_shape (self->volume, shape);
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  return shape[w];
}

guint
sv_slice_view_get_slice (SvSliceView *self)
{
  return (guint)gtk_adjustment_get_value (self->slice_adjustment);
}

void
sv_slice_view_set_slice (SvSliceView *self, guint slice)
{
  g_return_if_fail (SV_IS_SLICE_VIEW (self));
  gtk_adjustment_set_value (self->slice_adjustment,
                            MIN (slice, sv_slice_view_get_n_slices (self) - 1));
}

void
sv_slice_view_step_slice (SvSliceView *self, int delta)
{
  int s = (int)sv_slice_view_get_slice (self) + delta;
  sv_slice_view_set_slice (self, (guint)CLAMP (s, 0, (int)sv_slice_view_get_n_slices (self) - 1));
}

static void
slice_changed_cb (GtkAdjustment *adjustment, SvSliceView *self)
{
  self->image_dirty = TRUE;
  self->labels_dirty = TRUE;
  self->points_dirty = TRUE;
  sv_slice_view_queue_frame (self);
  sv_slice_view_update_hover (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SLICE]);
}

/* Physical slice size and the rectangle it occupies, in logical pixels. */
gboolean
sv_slice_view_slice_rect (SvSliceView *self, double *x0, double *y0, double *x1, double *y1,
                          guint *tw, guint *th)
{
  double W = gtk_widget_get_width (GTK_WIDGET (self->gl_area));
  double H = gtk_widget_get_height (GTK_WIDGET (self->gl_area));
  guint shape[3];
  int u, v, w;
  double pw, ph, fit, scale;

  if (!self->volume || W <= 0 || H <= 0)
    return FALSE;
  volume_shape (self->volume, shape);
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  pw = shape[u] * self->volume->spacing[u];
  ph = shape[v] * self->volume->spacing[v];
  fit = self->shared_fit > 0 ? self->shared_fit : MIN (W / pw, H / ph);
  scale = fit * self->zoom;
  *x0 = W / 2 - pw * scale / 2 + self->pan_x;
  *y0 = H / 2 - ph * scale / 2 + self->pan_y;
  *x1 = *x0 + pw * scale;
  *y1 = *y0 + ph * scale;
  *tw = shape[u];
  *th = shape[v];
  return TRUE;
}

double
sv_slice_view_get_fit_scale (SvSliceView *self)
{
  double W = gtk_widget_get_width (GTK_WIDGET (self->gl_area));
  double H = gtk_widget_get_height (GTK_WIDGET (self->gl_area));
  guint shape[3];
  int u, v, w;

  if (!self->volume || W <= 0 || H <= 0)
    return 0.0;
  volume_shape (self->volume, shape);
  sv_slice_view_axis_dims (self->axis, &u, &v, &w);
  return MIN (W / (shape[u] * self->volume->spacing[u]), H / (shape[v] * self->volume->spacing[v]));
}

void
sv_slice_view_set_shared_fit (SvSliceView *self, double scale)
{
  g_return_if_fail (SV_IS_SLICE_VIEW (self));
  if (self->shared_fit == scale)
    return;
  self->shared_fit = scale;
  sv_slice_view_queue_frame (self);
}

double
sv_slice_view_get_scale (SvSliceView *self)
{
  double fit = self->shared_fit > 0 ? self->shared_fit : sv_slice_view_get_fit_scale (self);
  return fit * self->zoom;
}

char *
sv_slice_view_format_slice (SvSliceView *self, guint slice)
{
  /* Counted from 1 as Fiji's slice numbers are, out of the total. */
  return g_strdup_printf ("%u / %u", slice + 1, sv_slice_view_get_n_slices (self));
}

static char *
format_slice_cb (GtkScale *scale, double value, gpointer user_data)
{
  return sv_slice_view_format_slice (user_data, (guint)value);
}

/* The scale bar follows the zoom and the view's size. */
static void
update_scale_bar (SvSliceView *self)
{
  const SvVolume *v = self->volume;

  if (!self->scale_bar)
    return;
  sv_scale_bar_set_scale (self->scale_bar, v ? sv_slice_view_get_scale (self) : 0.0,
                          v && v->spacing_from_file ? sv_unit_symbol (v->unit)
                          : v                       ? sv_element_words (v->nz == 1)->count_unit
                                                    : NULL);
}

void
sv_slice_view_queue_frame (SvSliceView *self)
{
  update_scale_bar (self);
  if (self->soft)
    gtk_widget_queue_draw (GTK_WIDGET (self->soft_area));
  else
    gtk_gl_area_queue_render (self->gl_area);
}

static const char *
axis_title (SvAxis axis)
{
  switch (axis)
    {
    case SV_AXIS_XZ:
      return "XZ";
    case SV_AXIS_YZ:
      return "YZ";
    case SV_AXIS_XY:
    default:
      return "XY";
    }
}

static void
update_range (SvSliceView *self)
{
  guint n = sv_slice_view_get_n_slices (self);

  gtk_adjustment_configure (self->slice_adjustment, n / 2, 0, n - 1, 1, 10, 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->slice_scale), n > 1);
  /* A 2D image has no slices to move through: no slider row. */
  gtk_widget_set_visible (gtk_widget_get_parent (GTK_WIDGET (self->slice_scale)), n > 1);
  gtk_label_set_text (self->title, axis_title (self->axis));
}

SvAxis
sv_slice_view_get_axis (SvSliceView *self)
{
  return self->axis;
}

void
sv_slice_view_set_axis (SvSliceView *self, SvAxis axis)
{
  if (self->axis == axis)
    return;
  self->axis = axis;
  update_range (self);
  sv_slice_view_zoom_fit (self);
  self->image_dirty = self->labels_dirty = self->points_dirty = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_AXIS]);
}

void
sv_slice_view_set_volume (SvSliceView *self, const SvVolume *volume)
{
  g_return_if_fail (SV_IS_SLICE_VIEW (self));
  self->volume = volume;
  g_clear_pointer (&self->result, sv_job_result_unref);
  self->hover_valid = FALSE;
  self->window_valid = FALSE;
  update_range (self);
  sv_slice_view_zoom_fit (self);
  self->image_dirty = self->labels_dirty = self->points_dirty = TRUE;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_set_source (SvSliceView *self, SvSliceImageFunc image, SvSliceLabelsFunc labels,
                          gpointer data)
{
  g_return_if_fail (SV_IS_SLICE_VIEW (self));
  g_return_if_fail (image == NULL || self->axis == SV_AXIS_XY);
  self->image_source = image;
  self->label_source = labels;
  self->source_data = data;
  self->image_dirty = self->labels_dirty = self->points_dirty = TRUE;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_source_changed (SvSliceView *self)
{
  g_return_if_fail (SV_IS_SLICE_VIEW (self));
  self->labels_dirty = TRUE;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_set_result (SvSliceView *self, SvJobResult *result)
{
  g_return_if_fail (SV_IS_SLICE_VIEW (self));
  if (result)
    sv_job_result_ref (result);
  g_clear_pointer (&self->result, sv_job_result_unref);
  self->result = result;
  self->labels_dirty = self->points_dirty = TRUE;
  sv_slice_view_queue_frame (self);
}

SvJobResult *
sv_slice_view_get_result (SvSliceView *self)
{
  return self->result;
}

void
sv_slice_view_set_display (SvSliceView *self, const SvDisplay *display)
{
  /* Teaching's marks come and go with the display. */
  self->points_dirty |= self->display.show_centres != display->show_centres;
  self->display = *display;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_set_crosshair (SvSliceView *self, gboolean show, guint z, guint y, guint x)
{
  self->cross_valid = show;
  self->cross_zyx[0] = z;
  self->cross_zyx[1] = y;
  self->cross_zyx[2] = x;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_set_search_window (SvSliceView *self, gboolean show, const int lo[3], const int hi[3])
{
  self->window_valid = show;
  if (show)
    {
      memcpy (self->window_lo, lo, sizeof self->window_lo);
      memcpy (self->window_hi, hi, sizeof self->window_hi);
    }
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_set_region (SvSliceView *self, gboolean show, const guint lo[3], const guint hi[3])
{
  self->region_valid = show;
  if (show)
    {
      memcpy (self->region_lo, lo, sizeof self->region_lo);
      memcpy (self->region_hi, hi, sizeof self->region_hi);
    }
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_set_selection (SvSliceView *self, gboolean valid, gint32 label, gboolean only)
{
  if (self->selected_valid == valid && self->selected == label && self->selected_only == only)
    return;
  self->selected_valid = valid;
  self->selected = label;
  self->selected_only = only;
  sv_slice_view_queue_frame (self);
}

void
sv_slice_view_capture (SvSliceView *self, SvCaptureFunc func, gpointer user_data)
{
  self->capture_func = func;
  self->capture_data = user_data;
  sv_slice_view_queue_frame (self);
}

const char *
sv_slice_view_get_scale_bar_text (SvSliceView *self)
{
  update_scale_bar (self);
  return sv_scale_bar_get_text (self->scale_bar);
}

GtkGLArea *
sv_slice_view_get_gl_area (SvSliceView *self)
{
  return self->gl_area;
}

GtkWidget *
sv_slice_view_new (SvAxis axis)
{
  return g_object_new (SV_TYPE_SLICE_VIEW, "axis", axis, NULL);
}

static void
sv_slice_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SvSliceView *self = SV_SLICE_VIEW (object);

  switch (prop_id)
    {
    case PROP_AXIS:
      g_value_set_int (value, self->axis);
      break;
    case PROP_SLICE:
      g_value_set_uint (value, sv_slice_view_get_slice (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_slice_view_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  SvSliceView *self = SV_SLICE_VIEW (object);

  switch (prop_id)
    {
    case PROP_AXIS:
      sv_slice_view_set_axis (self, g_value_get_int (value));
      break;
    case PROP_SLICE:
      sv_slice_view_set_slice (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_slice_view_dispose (GObject *object)
{
  SvSliceView *self = SV_SLICE_VIEW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), SV_TYPE_SLICE_VIEW);
  /* Unnamed template children too. */
  for (GtkWidget *child; (child = gtk_widget_get_first_child (GTK_WIDGET (object)));)
    gtk_widget_unparent (child);
  g_clear_pointer (&self->result, sv_job_result_unref);
  G_OBJECT_CLASS (sv_slice_view_parent_class)->dispose (object);
}

static void
sv_slice_view_finalize (GObject *object)
{
  SvSliceView *self = SV_SLICE_VIEW (object);

  g_free (self->image_buf);
  g_free (self->label_buf);
  g_free (self->gl_error);
  sv_slice_view_soft_finalize (self);
  sv_slice_view_difference_finalize (self);
  G_OBJECT_CLASS (sv_slice_view_parent_class)->finalize (object);
}

static void
sv_slice_view_class_init (SvSliceViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = sv_slice_view_get_property;
  object_class->set_property = sv_slice_view_set_property;
  object_class->dispose = sv_slice_view_dispose;
  object_class->finalize = sv_slice_view_finalize;

  properties[PROP_AXIS]
      = g_param_spec_int ("axis", NULL, NULL, SV_AXIS_XY, SV_AXIS_YZ, SV_AXIS_XY,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SLICE]
      = g_param_spec_uint ("slice", NULL, NULL, 0, G_MAXUINT, 0,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* The voxel under the pointer (z, y, x), all -1 when outside. */
  signals[SIGNAL_HOVER]
      = g_signal_new ("hover", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                      G_TYPE_NONE, 3, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT);
  /* A click on voxel (z, y, x). */
  signals[SIGNAL_PICK]
      = g_signal_new ("pick", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                      G_TYPE_NONE, 3, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT);

  /* The drawing area changed size (device pixels), on either path. */
  signals[SIGNAL_RESIZE] = g_signal_new ("resize", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);

  /* A region box drawn with Shift-drag: lo z, y, x and hi z, y, x
   * (exclusive), in voxels. */
  signals[SIGNAL_REGION] = g_signal_new ("region", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 6, G_TYPE_UINT, G_TYPE_UINT,
                                         G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT);

  /* Ctrl+wheel zoomed the view by a factor about the voxel point z, y, x
   * (fractional voxels), so that linked views can follow. */
  signals[SIGNAL_ZOOM]
      = g_signal_new ("zoom", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                      G_TYPE_NONE, 4, G_TYPE_DOUBLE, G_TYPE_DOUBLE, G_TYPE_DOUBLE, G_TYPE_DOUBLE);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-slice-view.ui");
  gtk_widget_class_bind_template_child (widget_class, SvSliceView, soft_area);
  gtk_widget_class_bind_template_child (widget_class, SvSliceView, gl_area);
  gtk_widget_class_bind_template_child (widget_class, SvSliceView, slice_scale);
  gtk_widget_class_bind_template_child (widget_class, SvSliceView, slice_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SvSliceView, title);
  gtk_widget_class_bind_template_callback_full (widget_class, "gl_realize_cb",
                                                G_CALLBACK (sv_slice_view_gl_realize_cb));
  gtk_widget_class_bind_template_callback_full (widget_class, "gl_unrealize_cb",
                                                G_CALLBACK (sv_slice_view_gl_unrealize_cb));
  gtk_widget_class_bind_template_callback_full (widget_class, "gl_render_cb",
                                                G_CALLBACK (sv_slice_view_gl_render_cb));
  gtk_widget_class_bind_template_callback (widget_class, slice_changed_cb);
  gtk_widget_class_bind_template_callback_full (widget_class, "motion_cb",
                                                G_CALLBACK (sv_slice_view_motion_cb));
  gtk_widget_class_bind_template_callback_full (widget_class, "leave_cb",
                                                G_CALLBACK (sv_slice_view_leave_cb));
  gtk_widget_class_bind_template_callback_full (widget_class, "scroll_cb",
                                                G_CALLBACK (sv_slice_view_scroll_cb));
  gtk_widget_class_bind_template_callback_full (widget_class, "drag_begin_cb",
                                                G_CALLBACK (sv_slice_view_drag_begin_cb));
  gtk_widget_class_bind_template_callback_full (widget_class, "drag_update_cb",
                                                G_CALLBACK (sv_slice_view_drag_update_cb));
  gtk_widget_class_bind_template_callback_full (widget_class, "drag_end_cb",
                                                G_CALLBACK (sv_slice_view_drag_end_cb));
  gtk_widget_class_bind_template_callback_full (widget_class, "click_cb",
                                                G_CALLBACK (sv_slice_view_click_cb));
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "sv-slice-view");
}

static void
sv_slice_view_init (SvSliceView *self)
{
  GtkLayoutManager *layout;

  self->zoom = 1.0;
  sv_display_init_defaults (&self->display);
  gtk_widget_init_template (GTK_WIDGET (self));
  layout = gtk_widget_get_layout_manager (GTK_WIDGET (self));
  gtk_orientable_set_orientation (GTK_ORIENTABLE (layout), GTK_ORIENTATION_VERTICAL);
  /* Desktop GL 3.3 core: the shaders are GLSL 330. */
  gtk_gl_area_set_required_version (self->gl_area, 3, 3);
#if GTK_CHECK_VERSION(4, 12, 0)
  gtk_gl_area_set_allowed_apis (self->gl_area, GDK_GL_API_GL);
#endif
  gtk_scale_set_format_value_func (self->slice_scale, format_slice_cb, self, NULL);
  g_signal_connect (self->gl_area, "resize", G_CALLBACK (gl_resize_cb), self);
  self->scale_bar = SV_SCALE_BAR (sv_scale_bar_new ());
  gtk_overlay_add_overlay (GTK_OVERLAY (gtk_widget_get_parent (GTK_WIDGET (self->gl_area))),
                           GTK_WIDGET (self->scale_bar));
  sv_slice_view_soft_init (self);
  update_range (self);
}

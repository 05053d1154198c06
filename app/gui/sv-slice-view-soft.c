/* Supervox GUI: one slice view without OpenGL. When GL cannot be had (no
 * GL on a remote desktop, a broken driver, SV_GL=off) a drawing area over
 * the GL area shows what the shaders would, computed on the CPU from the
 * host slice (sv-soft-renderer.c); the GL area under it still takes the
 * pointer. Why GL is off is said once per process. */
#define G_LOG_DOMAIN "sv-slice-view"

#include "sv-slice-view-private.h"

#include "sv-soft-renderer.h"

static void
soft_draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SvSliceView *self = data;
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (area));
  SvRenderFrame f = { 0 };
  cairo_surface_t *surface;
  double x0, y0, x1, y1;
  guint tw = 0, th = 0;
  gboolean has_slice;

  f.width = width * scale;
  f.height = height * scale;
  has_slice = sv_slice_view_slice_rect (self, &x0, &y0, &x1, &y1, &tw, &th);
  if (has_slice)
    {
      if (self->image_dirty)
        {
          sv_slice_view_extract_image (self, tw, th);
          self->image_dirty = FALSE;
        }
      if (self->labels_dirty || self->difference_dirty)
        self->soft_has_difference = sv_slice_view_extract_difference (self, tw, th);
      if (self->labels_dirty)
        {
          if (self->label_source)
            self->soft_has_labels = sv_slice_view_source_labels (self, tw, th);
          else
            self->soft_has_labels = self->result
                                    && sv_job_result_fits (self->result, self->volume->nz,
                                                           self->volume->ny, self->volume->nx);
          if (self->soft_has_labels && !self->label_source)
            sv_slice_view_extract_labels (self, tw, th);
          self->labels_dirty = FALSE;
        }
      if (self->points_dirty)
        {
          g_free (self->soft_marks);
          self->soft_marks = sv_slice_view_collect_centre_marks (self, &self->n_soft_marks);
          self->points_dirty = FALSE;
        }
      sv_slice_view_fill_frame (self, scale, x0, y0, x1, y1, &f);
    }
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, f.width, f.height);
  sv_soft_render (surface, &self->display, &f, has_slice ? self->image_buf : NULL, tw, th,
                  self->volume ? sv_display_texel_channels (self->volume->nc) : 1,
                  has_slice && self->soft_has_labels ? self->label_buf : NULL,
                  has_slice && self->soft_has_difference ? self->difference_buf : NULL,
                  self->soft_marks, self->n_soft_marks);

  if (self->capture_func)
    {
      SvCaptureFunc func = self->capture_func;
      gpointer user_data = self->capture_data;
      gsize stride = (gsize)cairo_image_surface_get_stride (surface);
      g_autoptr (GBytes) bytes
          = g_bytes_new (cairo_image_surface_get_data (surface), stride * (gsize)f.height);
      g_autoptr (GdkTexture) texture
          = gdk_memory_texture_new (f.width, f.height, GDK_MEMORY_DEFAULT, bytes, stride);

      self->capture_func = NULL;
      self->capture_data = NULL;
      func (self, texture, user_data);
    }

  cairo_save (cr);
  cairo_scale (cr, 1.0 / scale, 1.0 / scale);
  cairo_set_source_surface (cr, surface, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_paint (cr);
  cairo_restore (cr);
  cairo_surface_destroy (surface);
}

static void
soft_resize_cb (GtkDrawingArea *area, int width, int height, SvSliceView *self)
{
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (area));
  sv_slice_view_emit_resize (self, width * scale, height * scale);
}

void
sv_slice_view_soft_enable (SvSliceView *self, const char *why)
{
  static gsize said = 0;

  if (self->soft)
    return;
  if (g_once_init_enter (&said))
    {
      g_message ("OpenGL is off (%s): the slices are drawn in software, which is slower", why);
      g_once_init_leave (&said, 1);
    }
  self->soft = TRUE;
  self->gl_off_reason = g_strdup_printf ("OpenGL is off (%s): drawn in software", why);
  self->image_dirty = self->labels_dirty = self->points_dirty = TRUE;
  gtk_widget_set_visible (GTK_WIDGET (self->soft_area), TRUE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->gl_area), NULL);
  sv_slice_view_queue_frame (self);
}

gboolean
sv_slice_view_is_software (SvSliceView *self)
{
  return self->soft;
}

const char *
sv_slice_view_get_gl_off_reason (SvSliceView *self)
{
  return self->gl_off_reason;
}

void
sv_slice_view_soft_init (SvSliceView *self)
{
  gtk_drawing_area_set_draw_func (self->soft_area, soft_draw, self, NULL);
  g_signal_connect (self->soft_area, "resize", G_CALLBACK (soft_resize_cb), self);
}

void
sv_slice_view_soft_finalize (SvSliceView *self)
{
  g_clear_pointer (&self->soft_marks, g_free);
  g_clear_pointer (&self->gl_off_reason, g_free);
}

/* Supervox GUI: one slice view drawn with OpenGL: the GL objects made in
 * realize and freed in unrealize, the textures of the visible slice
 * (uploaded from the host, or on the interop path copied on the device
 * from CUDA's labels into a registered pixel buffer), the frame, and
 * reading it back for captures. */
#define G_LOG_DOMAIN "sv-slice-view"

#include "sv-slice-view-private.h"

#include <math.h>
#include <string.h>

/* In words: whether the labels on screen come straight from the GPU that
 * computed them (CUDA–GL interop) or are uploaded from the computer's memory. */
#define LABEL_PATH_HOST "drawn from memory"
#define LABEL_PATH_INTEROP "drawn from the GPU"
#define LABEL_PATH_SOFT "drawn without OpenGL"

/* Realized views whose GL runs on a CUDA device. */
static gint cuda_interop_views;

#if SV_HAVE_CUDA
/* TRUE when the current result's labels can come from the device. */
static gboolean
result_on_device (SvSliceView *self)
{
  return self->cuda_gl && !self->interop_failed && self->result && self->result->device_data
         && !self->result->region;
}

/* The largest slice of the volume, in bytes. */
static gsize
max_slice_bytes (const SvVolume *v)
{
  gsize xy = (gsize)v->ny * v->nx, xz = (gsize)v->nz * v->nx, yz = (gsize)v->nz * v->ny;
  return MAX (xy, MAX (xz, yz)) * sizeof (gint32);
}

/* (Re)allocates the pixel buffer for `bytes` and registers it with CUDA;
 * a registered buffer's storage cannot change, so it is unregistered first. */
static gboolean
ensure_label_pbo (SvSliceView *self, gsize bytes, GError **error)
{
  if (self->cuda_buffer && self->label_pbo_bytes >= bytes)
    return TRUE;
  g_clear_pointer (&self->cuda_buffer, sv_cuda_gl_buffer_unregister);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, self->label_pbo);
  glBufferData (GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)MAX (bytes, sizeof (gint32)), NULL,
                GL_STREAM_DRAW);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
  self->label_pbo_bytes = MAX (bytes, sizeof (gint32));
  self->cuda_buffer = sv_cuda_gl_buffer_register (self->label_pbo, error);
  return self->cuda_buffer != NULL;
}

/* Interop path: the kernel copies the visible slice of the published device
 * labels into the pixel buffer, which feeds the label texture. */
static gboolean
upload_labels_from_device (SvSliceView *self, guint tw, guint th, GError **error)
{
  SvCudaLabels *labels = self->result->device_data;

  if (!ensure_label_pbo (self, (gsize)tw * th * sizeof (gint32), error))
    return FALSE;
  /* YZ shows z across (sv_slice_view_axis_dims): the slice transposed. */
  if (!(self->axis == SV_AXIS_YZ
            ? sv_cuda_gl_buffer_copy_labels_slice_transposed (self->cuda_buffer, labels, self->axis,
                                                              sv_slice_view_get_slice (self), error)
            : sv_cuda_gl_buffer_copy_labels_slice (self->cuda_buffer, labels, self->axis,
                                                   sv_slice_view_get_slice (self), error)))
    return FALSE;
  sv_renderer_set_labels_from_buffer (self->renderer, self->label_pbo, tw, th);
  return TRUE;
}
#endif

static void
update_points (SvSliceView *self)
{
  gsize n;
  g_autofree SvCentreMark *marks = sv_slice_view_collect_centre_marks (self, &n);

  sv_renderer_set_centre_marks (self->renderer, marks, n);
}

void
sv_slice_view_gl_realize_cb (GtkGLArea *area, SvSliceView *self)
{
  g_autoptr (GError) error = NULL;

  /* SV_GL=off: the software path, as when GL cannot be had. */
  if (g_strcmp0 (g_getenv ("SV_GL"), "off") == 0)
    {
      sv_slice_view_soft_enable (self, "SV_GL=off is set");
      return;
    }
  gtk_gl_area_make_current (area);
  if (gtk_gl_area_get_error (area))
    {
      sv_slice_view_soft_enable (self, gtk_gl_area_get_error (area)->message);
      return;
    }
  self->renderer = sv_renderer_new (&error);
  if (!self->renderer)
    {
      gtk_gl_area_set_error (area, error);
      sv_slice_view_soft_enable (self, error->message);
      return;
    }
  self->image_dirty = self->labels_dirty = self->points_dirty = TRUE;
  g_debug ("GL %s, %s", glGetString (GL_VERSION), glGetString (GL_RENDERER));

#if SV_HAVE_CUDA
  {
    g_autoptr (GError) cuda_error = NULL;

    /* Decided here, with the context current: GL on another GPU, in
     * software or on a remote display keeps the host path. */
    self->interop_failed = FALSE;
    self->cuda_gl = sv_cuda_gl_usable (&cuda_error);
    if (self->cuda_gl)
      {
        glGenBuffers (1, &self->label_pbo);
        if (self->volume && !ensure_label_pbo (self, max_slice_bytes (self->volume), &cuda_error))
          {
            g_message ("CUDA–GL interop is not available, labels go through the host: %s",
                       cuda_error->message);
            glDeleteBuffers (1, &self->label_pbo);
            self->label_pbo = 0;
            self->cuda_gl = FALSE;
          }
      }
    else
      g_debug ("labels: host upload (%s)", cuda_error->message);
    if (self->cuda_gl)
      g_atomic_int_inc (&cuda_interop_views);
  }
#endif
}

void
sv_slice_view_gl_unrealize_cb (GtkGLArea *area, SvSliceView *self)
{
  gtk_gl_area_make_current (area);
#if SV_HAVE_CUDA
  if (self->cuda_gl)
    {
      /* Unregister before the GL buffer goes, with the context current. */
      g_clear_pointer (&self->cuda_buffer, sv_cuda_gl_buffer_unregister);
      if (gtk_gl_area_get_error (area) == NULL)
        glDeleteBuffers (1, &self->label_pbo);
      self->label_pbo = 0;
      self->label_pbo_bytes = 0;
      self->cuda_gl = FALSE;
      g_atomic_int_add (&cuda_interop_views, -1);
    }
#endif
  if (gtk_gl_area_get_error (area) == NULL && !self->soft)
    g_clear_pointer (&self->renderer, sv_renderer_free);
  else
    self->renderer = NULL;
}

static void
read_back (SvSliceView *self, int width, int height)
{
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  gsize stride = (gsize)width * 4;
  guint8 *pixels = g_malloc ((gsize)height * stride);
  guint8 *flipped = g_malloc ((gsize)height * stride);
  SvCaptureFunc func = self->capture_func;
  gpointer data = self->capture_data;

  glPixelStorei (GL_PACK_ALIGNMENT, 1);
  glReadPixels (0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
  /* GL rows go bottom-up. */
  for (int y = 0; y < height; y++)
    memcpy (flipped + (gsize)y * stride, pixels + (gsize)(height - 1 - y) * stride, stride);
  g_free (pixels);
  bytes = g_bytes_new_take (flipped, (gsize)height * stride);
  texture = gdk_memory_texture_new (width, height, GDK_MEMORY_R8G8B8A8, bytes, stride);
  self->capture_func = NULL;
  self->capture_data = NULL;
  func (self, texture, data);
}

gboolean
sv_slice_view_gl_render_cb (GtkGLArea *area, GdkGLContext *context, SvSliceView *self)
{
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (area));
  SvRenderFrame f = { 0 };
  double x0, y0, x1, y1;
  guint tw = 0, th = 0;
  int u, v, w;

  if (!self->renderer)
    return FALSE;
  f.width = gtk_widget_get_width (GTK_WIDGET (area)) * scale;
  f.height = gtk_widget_get_height (GTK_WIDGET (area)) * scale;

  if (sv_slice_view_slice_rect (self, &x0, &y0, &x1, &y1, &tw, &th))
    {
      sv_slice_view_axis_dims (self->axis, &u, &v, &w);
      /* Another slice or other bytes: the highlight follows the labels. */
      if (self->labels_dirty || self->difference_dirty)
        {
          gboolean has = sv_slice_view_extract_difference (self, tw, th);
          sv_renderer_set_difference (self->renderer, has ? self->difference_buf : NULL, tw, th);
        }
      if (self->image_dirty)
        {
          sv_slice_view_extract_image (self, tw, th);
          sv_renderer_set_image (self->renderer, self->image_buf, tw, th,
                                 sv_display_texel_channels (self->volume->nc));
          self->image_dirty = FALSE;
        }
      if (self->labels_dirty && self->label_source)
        {
          gboolean has = sv_slice_view_source_labels (self, tw, th);
          sv_renderer_set_labels (self->renderer, has ? self->label_buf : NULL, has ? tw : 0,
                                  has ? th : 0);
          self->labels_dirty = FALSE;
        }
      if (self->labels_dirty)
        {
          if (self->result
              && sv_job_result_fits (self->result, self->volume->nz, self->volume->ny,
                                     self->volume->nx))
            {
              gboolean uploaded = FALSE;
#if SV_HAVE_CUDA
              if (result_on_device (self))
                {
                  g_autoptr (GError) error = NULL;
                  uploaded = upload_labels_from_device (self, tw, th, &error);
                  if (!uploaded)
                    {
                      /* Once per view: the host path still shows the labels. */
                      g_message ("CUDA–GL interop failed, labels go through the host: %s",
                                 error->message);
                      self->interop_failed = TRUE;
                    }
                }
#endif
              if (!uploaded)
                {
                  sv_slice_view_extract_labels (self, tw, th);
                  sv_renderer_set_labels (self->renderer, self->label_buf, tw, th);
                }
            }
          else
            sv_renderer_set_labels (self->renderer, NULL, 0, 0);
          self->labels_dirty = FALSE;
        }
      if (self->points_dirty)
        {
          update_points (self);
          self->points_dirty = FALSE;
        }
      sv_slice_view_fill_frame (self, scale, x0, y0, x1, y1, &f);
    }
  sv_renderer_draw (self->renderer, &self->display, &f);

  if (self->capture_func)
    read_back (self, f.width, f.height);
  return TRUE;
}

const char *
sv_slice_view_get_label_path (SvSliceView *self)
{
  if (self->soft)
    return LABEL_PATH_SOFT;
#if SV_HAVE_CUDA
  if (result_on_device (self))
    return LABEL_PATH_INTEROP;
#endif
  return LABEL_PATH_HOST;
}

gboolean
sv_slice_view_cuda_interop_active (void)
{
  return g_atomic_int_get (&cuda_interop_views) > 0;
}

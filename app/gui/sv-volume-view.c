/* Supervox GUI: the 3D view (GL 3.3 core ray marching). */
#define G_LOG_DOMAIN "sv-volume-view"

#include "sv-volume-view.h"

#include <cglm/cglm.h>
#include <epoxy/gl.h>
#include <math.h>
#include <string.h>

/* Samples along each ray: enough for a voxel per step up to 256³. */
#define RAY_STEPS 256
#define FOV_DEGREES 30.0f
#define DRAG_DEGREES_PER_PX 0.5
/* At most 256³ voxels in a texture: large volumes are shown subsampled. */
#define TEXTURE_VOXELS (1u << 24)

struct _SvVolumeView
{
  GtkGLArea parent_instance;

  const SvVolume *volume;
  SvJobResult *result;
  SvDisplay display;
  gboolean selected_valid;
  gint32 selected;
  guint planes_zyx[3];
  double yaw, pitch, distance;
  double drag_yaw, drag_pitch;

  GLuint program, line_program, quad_vao, quad_vbo, line_vao, line_vbo;
  GLuint image_tex, label_tex;
  gboolean image_dirty, labels_dirty, has_labels;

  SvVolumeCaptureFunc capture_func;
  gpointer capture_data;
};

G_DEFINE_FINAL_TYPE (SvVolumeView, sv_volume_view, GTK_TYPE_GL_AREA)

static GLuint
new_texture_3d (GLenum filter)
{
  GLuint tex;

  glGenTextures (1, &tex);
  glBindTexture (GL_TEXTURE_3D, tex);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_MAG_FILTER, filter);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
  glBindTexture (GL_TEXTURE_3D, 0);
  return tex;
}

static void
sv_volume_view_realize (GtkWidget *widget)
{
  SvVolumeView *self = SV_VOLUME_VIEW (widget);
  g_autoptr (GError) error = NULL;
  const float quad[8] = { -1, -1, 1, -1, -1, 1, 1, 1 };

  GTK_WIDGET_CLASS (sv_volume_view_parent_class)->realize (widget);
  gtk_gl_area_make_current (GTK_GL_AREA (self));
  if (gtk_gl_area_get_error (GTK_GL_AREA (self)))
    {
      /* No GL: an empty quadrant rather than the error's text (the slices
       * say why GL is off). */
      gtk_widget_set_opacity (widget, 0.0);
      return;
    }
  self->program = sv_renderer_link_program ("volume.vert", "volume.frag", &error);
  if (self->program)
    self->line_program = sv_renderer_link_program ("line.vert", "shape.frag", &error);
  if (!self->line_program)
    {
      g_message ("no 3D view: %s", error->message);
      gtk_gl_area_set_error (GTK_GL_AREA (self), error);
      gtk_widget_set_opacity (widget, 0.0);
      return;
    }
  glGenVertexArrays (1, &self->quad_vao);
  glGenBuffers (1, &self->quad_vbo);
  glBindVertexArray (self->quad_vao);
  glBindBuffer (GL_ARRAY_BUFFER, self->quad_vbo);
  glBufferData (GL_ARRAY_BUFFER, sizeof quad, quad, GL_STATIC_DRAW);
  glEnableVertexAttribArray (0);
  glVertexAttribPointer (0, 2, GL_FLOAT, GL_FALSE, 2 * sizeof (float), (void *)0);
  glGenVertexArrays (1, &self->line_vao);
  glGenBuffers (1, &self->line_vbo);
  glBindVertexArray (self->line_vao);
  glBindBuffer (GL_ARRAY_BUFFER, self->line_vbo);
  glEnableVertexAttribArray (0);
  glVertexAttribPointer (0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof (float), (void *)0);
  glBindVertexArray (0);
  self->image_tex = new_texture_3d (GL_LINEAR);
  self->label_tex = new_texture_3d (GL_NEAREST);
  self->image_dirty = self->labels_dirty = TRUE;
}

static void
sv_volume_view_unrealize (GtkWidget *widget)
{
  SvVolumeView *self = SV_VOLUME_VIEW (widget);

  gtk_gl_area_make_current (GTK_GL_AREA (self));
  if (!gtk_gl_area_get_error (GTK_GL_AREA (self)) && self->program)
    {
      glDeleteTextures (1, &self->image_tex);
      glDeleteTextures (1, &self->label_tex);
      glDeleteBuffers (1, &self->quad_vbo);
      glDeleteBuffers (1, &self->line_vbo);
      glDeleteVertexArrays (1, &self->quad_vao);
      glDeleteVertexArrays (1, &self->line_vao);
      glDeleteProgram (self->program);
      glDeleteProgram (self->line_program);
    }
  self->program = self->line_program = 0;
  GTK_WIDGET_CLASS (sv_volume_view_parent_class)->unrealize (widget);
}

/* Every f-th voxel along each axis, so that the textures stay within
 * TEXTURE_VOXELS and GL's largest 3D texture. */
static guint
texture_step (const SvVolume *v)
{
  GLint max_size = 0;
  guint f = 1;

  glGetIntegerv (GL_MAX_3D_TEXTURE_SIZE, &max_size);
  max_size = MAX (max_size, 64);
  while ((gsize)((v->nz + f - 1) / f) * ((v->ny + f - 1) / f) * ((v->nx + f - 1) / f)
             > TEXTURE_VOXELS
         || (v->nx + f - 1) / f > (guint)max_size || (v->ny + f - 1) / f > (guint)max_size
         || (v->nz + f - 1) / f > (guint)max_size)
    f++;
  return f;
}

/* The intensity (the mean of the channels) as a 3D texture. */
static void
upload_image (SvVolumeView *self)
{
  const SvVolume *v = self->volume;
  guint f = texture_step (v);
  guint tz = (v->nz + f - 1) / f, ty = (v->ny + f - 1) / f, tx = (v->nx + f - 1) / f;
  g_autofree float *grey = g_new (float, (gsize)tz *ty *tx);
  gsize i = 0;

  for (guint z = 0; z < v->nz; z += f)
    for (guint y = 0; y < v->ny; y += f)
      for (guint x = 0; x < v->nx; x += f, i++)
        {
          const float *p = v->data + (((gsize)z * v->ny + y) * v->nx + x) * v->nc;
          double sum = 0;
          for (guint c = 0; c < v->nc; c++)
            sum += p[c];
          grey[i] = (float)(sum / v->nc);
        }
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glBindTexture (GL_TEXTURE_3D, self->image_tex);
  glTexImage3D (GL_TEXTURE_3D, 0, GL_R32F, tx, ty, tz, 0, GL_RED, GL_FLOAT, grey);
  glBindTexture (GL_TEXTURE_3D, 0);
}

static void
upload_labels (SvVolumeView *self)
{
  const SvJobResult *r = self->result;
  const SvVolume *v = self->volume;
  const SvLabels *host = NULL;
  guint f, tz, ty, tx;
  g_autofree gint32 *labels = NULL;
  g_autoptr (GError) error = NULL;
  gsize i = 0;

  /* Only labels of the volume's own shape (not a region, not a preview). */
  self->has_labels = r && !r->region && r->preview_factor == 1 && r->labels_shape[0] == v->nz
                     && r->labels_shape[1] == v->ny && r->labels_shape[2] == v->nx;
  if (!self->has_labels)
    return;
  host = sv_job_result_get_labels (r, &error);
  if (host == NULL)
    {
      g_warning ("the 3D view shows no labels: %s", error->message);
      self->has_labels = FALSE;
      return;
    }
  f = texture_step (v);
  tz = (v->nz + f - 1) / f;
  ty = (v->ny + f - 1) / f;
  tx = (v->nx + f - 1) / f;
  labels = g_new (gint32, (gsize)tz * ty * tx);
  for (guint z = 0; z < v->nz; z += f)
    for (guint y = 0; y < v->ny; y += f)
      for (guint x = 0; x < v->nx; x += f, i++)
        labels[i] = host->data[((gsize)z * v->ny + y) * v->nx + x];
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glBindTexture (GL_TEXTURE_3D, self->label_tex);
  glTexImage3D (GL_TEXTURE_3D, 0, GL_R32UI, tx, ty, tz, 0, GL_RED_INTEGER, GL_UNSIGNED_INT, labels);
  glBindTexture (GL_TEXTURE_3D, 0);
}

/* Box space: centred, x y z along the volume's x y z, the longest physical
 * side 1. */
static void
half_extent (const SvVolume *v, vec3 e)
{
  double sx = v->nx * v->spacing[2], sy = v->ny * v->spacing[1], sz = v->nz * v->spacing[0];
  double m = MAX (MAX (sx, sy), sz);

  e[0] = (float)(sx / m / 2);
  e[1] = (float)(sy / m / 2);
  e[2] = (float)(sz / m / 2);
}

/* Eye from box: y up on screen is −y of the volume (rows go down), z
 * towards the viewer, then the user's rotation and the distance. */
static void
view_matrix (SvVolumeView *self, mat4 view)
{
  glm_mat4_identity (view);
  glm_translate (view, (vec3){ 0.0f, 0.0f, -(float)self->distance });
  glm_rotate_x (view, glm_rad ((float)self->pitch), view);
  glm_rotate_y (view, glm_rad ((float)self->yaw), view);
  glm_scale (view, (vec3){ 1.0f, -1.0f, -1.0f });
}

static void
read_back (SvVolumeView *self, int width, int height)
{
  gsize stride = (gsize)width * 4;
  guint8 *pixels = g_malloc ((gsize)height * stride);
  guint8 *flipped = g_malloc ((gsize)height * stride);
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  SvVolumeCaptureFunc func = self->capture_func;

  glPixelStorei (GL_PACK_ALIGNMENT, 1);
  glReadPixels (0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
  for (int y = 0; y < height; y++)
    memcpy (flipped + (gsize)y * stride, pixels + (gsize)(height - 1 - y) * stride, stride);
  g_free (pixels);
  bytes = g_bytes_new_take (flipped, (gsize)height * stride);
  texture = gdk_memory_texture_new (width, height, GDK_MEMORY_R8G8B8A8, bytes, stride);
  self->capture_func = NULL;
  func (self, texture, self->capture_data);
}

/* The three planes through the cursor, outlined. */
static void
draw_planes (SvVolumeView *self, mat4 mvp, const vec3 e)
{
  const SvVolume *v = self->volume;
  float p[3], lines[3 * 8 * 3];
  const float colour[4] = { 0.2f, 1.0f, 0.4f, 0.7f };
  guint n = 0;

  /* Voxel centres to box space, x y z. */
  p[0] = ((self->planes_zyx[2] + 0.5f) / v->nx - 0.5f) * 2 * e[0];
  p[1] = ((self->planes_zyx[1] + 0.5f) / v->ny - 0.5f) * 2 * e[1];
  p[2] = ((self->planes_zyx[0] + 0.5f) / v->nz - 0.5f) * 2 * e[2];
  for (guint axis = 0; axis < 3; axis++)
    {
      guint a = (axis + 1) % 3, b = (axis + 2) % 3;
      const float corners[4][2] = { { -1, -1 }, { 1, -1 }, { 1, 1 }, { -1, 1 } };
      for (guint k = 0; k < 4; k++)
        for (guint end = 0; end < 2; end++)
          {
            const float *c = corners[(k + end) % 4];
            float *q = lines + n * 3;
            q[axis] = p[axis];
            q[a] = c[0] * e[a];
            q[b] = c[1] * e[b];
            n++;
          }
    }
  glUseProgram (self->line_program);
  glUniformMatrix4fv (glGetUniformLocation (self->line_program, "u_mvp"), 1, GL_FALSE,
                      (const float *)mvp);
  glUniform4fv (glGetUniformLocation (self->line_program, "u_colour"), 1, colour);
  glBindVertexArray (self->line_vao);
  glBindBuffer (GL_ARRAY_BUFFER, self->line_vbo);
  glBufferData (GL_ARRAY_BUFFER, n * 3 * sizeof (float), lines, GL_STREAM_DRAW);
  glEnable (GL_BLEND);
  glBlendFunc (GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glDrawArrays (GL_LINES, 0, (GLsizei)n);
  glDisable (GL_BLEND);
}

static gboolean
sv_volume_view_render (GtkGLArea *area, GdkGLContext *context)
{
  SvVolumeView *self = SV_VOLUME_VIEW (area);
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (area));
  int width = gtk_widget_get_width (GTK_WIDGET (area)) * scale;
  int height = gtk_widget_get_height (GTK_WIDGET (area)) * scale;
  mat4 view, inverse, projection, mvp;
  vec3 e;
  GLuint p = self->program;

  glViewport (0, 0, width, height);
  glClearColor (0.12f, 0.12f, 0.13f, 1.0f);
  glClear (GL_COLOR_BUFFER_BIT);
  if (p && self->volume && width > 0 && height > 0)
    {
      if (self->image_dirty)
        upload_image (self);
      self->image_dirty = FALSE;
      /* Labels only while a selection needs them: a volume's worth each run. */
      if (self->labels_dirty && self->selected_valid)
        {
          upload_labels (self);
          self->labels_dirty = FALSE;
        }
      half_extent (self->volume, e);
      view_matrix (self, view);
      glm_mat4_inv (view, inverse);

      glUseProgram (p);
      glActiveTexture (GL_TEXTURE0);
      glBindTexture (GL_TEXTURE_3D, self->image_tex);
      glUniform1i (glGetUniformLocation (p, "u_image"), 0);
      glActiveTexture (GL_TEXTURE1);
      glBindTexture (GL_TEXTURE_3D, self->label_tex);
      glUniform1i (glGetUniformLocation (p, "u_labels"), 1);
      glUniformMatrix4fv (glGetUniformLocation (p, "u_inverse_view"), 1, GL_FALSE,
                          (const float *)inverse);
      glUniform1f (glGetUniformLocation (p, "u_aspect"), (float)width / height);
      glUniform1f (glGetUniformLocation (p, "u_tan_half_fov"), tanf (glm_rad (FOV_DEGREES / 2)));
      glUniform3fv (glGetUniformLocation (p, "u_half_extent"), 1, e);
      glUniform1f (glGetUniformLocation (p, "u_low"), self->display.low);
      glUniform1f (glGetUniformLocation (p, "u_high"), self->display.high);
      glUniform1f (glGetUniformLocation (p, "u_gamma"),
                   self->display.gamma > 0 ? self->display.gamma : 1.0f);
      glUniform1i (glGetUniformLocation (p, "u_colormap"), (int)self->display.colormap);
      glUniform1i (glGetUniformLocation (p, "u_selected_valid"),
                   self->selected_valid && self->has_labels);
      glUniform1ui (glGetUniformLocation (p, "u_selected"), (guint32)self->selected);
      glUniform1i (glGetUniformLocation (p, "u_steps"), RAY_STEPS);
      glBindVertexArray (self->quad_vao);
      glDrawArrays (GL_TRIANGLE_STRIP, 0, 4);
      glActiveTexture (GL_TEXTURE1);
      glBindTexture (GL_TEXTURE_3D, 0);
      glActiveTexture (GL_TEXTURE0);
      glBindTexture (GL_TEXTURE_3D, 0);

      glm_perspective (glm_rad (FOV_DEGREES), (float)width / height, 0.01f, 100.0f, projection);
      glm_mat4_mul (projection, view, mvp);
      draw_planes (self, mvp, e);
      glBindVertexArray (0);
      glUseProgram (0);
    }
  if (self->capture_func)
    read_back (self, width, height);
  return TRUE;
}

void
sv_volume_view_rotate (SvVolumeView *self, double yaw, double pitch)
{
  self->yaw = fmod (self->yaw + yaw, 360.0);
  self->pitch = CLAMP (self->pitch + pitch, -89.0, 89.0);
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

static void
drag_begin_cb (GtkGestureDrag *drag, double x, double y, SvVolumeView *self)
{
  self->drag_yaw = self->yaw;
  self->drag_pitch = self->pitch;
}

static void
drag_update_cb (GtkGestureDrag *drag, double dx, double dy, SvVolumeView *self)
{
  self->yaw = self->drag_yaw;
  self->pitch = self->drag_pitch;
  sv_volume_view_rotate (self, dx * DRAG_DEGREES_PER_PX, dy * DRAG_DEGREES_PER_PX);
}

static gboolean
scroll_cb (GtkEventControllerScroll *scroll, double dx, double dy, SvVolumeView *self)
{
  self->distance = CLAMP (self->distance * pow (1.1, dy), 0.8, 10.0);
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
  return TRUE;
}

void
sv_volume_view_set_volume (SvVolumeView *self, const SvVolume *volume)
{
  self->volume = volume;
  g_clear_pointer (&self->result, sv_job_result_unref);
  self->image_dirty = self->labels_dirty = TRUE;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
sv_volume_view_set_result (SvVolumeView *self, SvJobResult *result)
{
  if (result == self->result)
    return;
  if (result)
    sv_job_result_ref (result);
  g_clear_pointer (&self->result, sv_job_result_unref);
  self->result = result;
  /* Uploaded only while a selection needs them. */
  self->labels_dirty = TRUE;
  if (self->selected_valid)
    gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
sv_volume_view_set_selection (SvVolumeView *self, gboolean valid, gint32 label)
{
  if (self->selected_valid == valid && self->selected == label)
    return;
  self->selected_valid = valid;
  self->selected = label;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
sv_volume_view_set_display (SvVolumeView *self, const SvDisplay *display)
{
  self->display = *display;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
sv_volume_view_set_planes (SvVolumeView *self, guint z, guint y, guint x)
{
  self->planes_zyx[0] = z;
  self->planes_zyx[1] = y;
  self->planes_zyx[2] = x;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
sv_volume_view_capture (SvVolumeView *self, SvVolumeCaptureFunc func, gpointer user_data)
{
  self->capture_func = func;
  self->capture_data = user_data;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

GtkWidget *
sv_volume_view_new (void)
{
  return g_object_new (SV_TYPE_VOLUME_VIEW, NULL);
}

static void
sv_volume_view_dispose (GObject *object)
{
  g_clear_pointer (&SV_VOLUME_VIEW (object)->result, sv_job_result_unref);
  G_OBJECT_CLASS (sv_volume_view_parent_class)->dispose (object);
}

static void
sv_volume_view_class_init (SvVolumeViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = sv_volume_view_dispose;
  GTK_WIDGET_CLASS (klass)->realize = sv_volume_view_realize;
  GTK_WIDGET_CLASS (klass)->unrealize = sv_volume_view_unrealize;
  GTK_GL_AREA_CLASS (klass)->render = sv_volume_view_render;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "sv-volume-view");
}

static void
sv_volume_view_init (SvVolumeView *self)
{
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkEventController *scroll
      = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);

  self->yaw = 30.0;
  self->pitch = 20.0;
  self->distance = 3.2;
  sv_display_init_defaults (&self->display);
  gtk_gl_area_set_required_version (GTK_GL_AREA (self), 3, 3);
#if GTK_CHECK_VERSION(4, 12, 0)
  gtk_gl_area_set_allowed_apis (GTK_GL_AREA (self), GDK_GL_API_GL);
#endif
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self), "3D view: drag to rotate, wheel to zoom");
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
  g_signal_connect (scroll, "scroll", G_CALLBACK (scroll_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);
}

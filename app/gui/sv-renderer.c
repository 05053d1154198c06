/* Supervox GUI: the OpenGL drawing of one slice view. */
#define G_LOG_DOMAIN "sv-renderer"

#include "sv-renderer.h"

#include <cglm/cglm.h>
#include <epoxy/gl.h>
#include <gio/gio.h>
#include <string.h>

#define SHADER_PATH "/org/supervox/Supervox/shaders/"

struct _SvRenderer
{
  GLuint slice_program, shape_program;
  GLuint quad_vao, quad_vbo;
  GLuint shape_vao, shape_vbo;
  GLuint mark_vao, mark_vbo;
  GLuint image_tex, label_tex, difference_tex;
  guint image_w, image_h, image_nc;
  guint label_w, label_h;
  gboolean has_labels;
  guint difference_w, difference_h;
  gboolean has_difference;
  SvCentreMark *marks;
  gsize n_marks;
};

void
sv_display_init_defaults (SvDisplay *display)
{
  memset (display, 0, sizeof *display);
  display->low = 0.0f;
  display->high = 1.0f;
  display->gamma = 1.0f;
  display->overlay = SV_OVERLAY_BOUNDARIES;
  display->boundary[0] = 1.0f;
  display->boundary[1] = 0.85f;
  display->boundary[2] = 0.0f;
  display->boundary[3] = 0.9f;
  display->thickness = 1;
  display->fill_opacity = 0.4f;
  display->shuffle = 0;
}

guint
sv_display_texel_channels (guint nc)
{
  return CLAMP (nc, 1, SV_DISPLAY_MAX_CHANNELS);
}

static GLuint
compile_shader (GLenum type, const char *name, GError **error)
{
  g_autofree char *path = g_strconcat (SHADER_PATH, name, NULL);
  g_autoptr (GBytes) bytes = g_resources_lookup_data (path, 0, error);
  const char *source;
  GLint length, ok = 0;
  GLuint shader;

  if (!bytes)
    return 0;
  source = g_bytes_get_data (bytes, NULL);
  length = (GLint)g_bytes_get_size (bytes);
  shader = glCreateShader (type);
  glShaderSource (shader, 1, &source, &length);
  glCompileShader (shader);
  glGetShaderiv (shader, GL_COMPILE_STATUS, &ok);
  if (!ok)
    {
      char log[2048] = "";
      glGetShaderInfoLog (shader, sizeof log, NULL, log);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "shader %s: %s", name, log);
      glDeleteShader (shader);
      return 0;
    }
  return shader;
}

GLuint
sv_renderer_link_program (const char *vert, const char *frag, GError **error)
{
  GLuint vs, fs, program;
  GLint ok = 0;

  vs = compile_shader (GL_VERTEX_SHADER, vert, error);
  if (!vs)
    return 0;
  fs = compile_shader (GL_FRAGMENT_SHADER, frag, error);
  if (!fs)
    {
      glDeleteShader (vs);
      return 0;
    }
  program = glCreateProgram ();
  glAttachShader (program, vs);
  glAttachShader (program, fs);
  glLinkProgram (program);
  glDeleteShader (vs);
  glDeleteShader (fs);
  glGetProgramiv (program, GL_LINK_STATUS, &ok);
  if (!ok)
    {
      char log[2048] = "";
      glGetProgramInfoLog (program, sizeof log, NULL, log);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "program %s/%s: %s", vert, frag, log);
      glDeleteProgram (program);
      return 0;
    }
  return program;
}

static GLuint
new_texture (void)
{
  GLuint tex;

  glGenTextures (1, &tex);
  glBindTexture (GL_TEXTURE_2D, tex);
  /* Voxels stay square blocks when zoomed in, as biologists expect. */
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return tex;
}

SvRenderer *
sv_renderer_new (GError **error)
{
  g_autofree SvRenderer *r = g_new0 (SvRenderer, 1);

  r->slice_program = sv_renderer_link_program ("slice.vert", "slice.frag", error);
  if (!r->slice_program)
    return NULL;
  r->shape_program = sv_renderer_link_program ("shape.vert", "shape.frag", error);
  if (!r->shape_program)
    {
      glDeleteProgram (r->slice_program);
      return NULL;
    }

  glGenVertexArrays (1, &r->quad_vao);
  glGenBuffers (1, &r->quad_vbo);
  glBindVertexArray (r->quad_vao);
  glBindBuffer (GL_ARRAY_BUFFER, r->quad_vbo);
  glBufferData (GL_ARRAY_BUFFER, 16 * sizeof (float), NULL, GL_DYNAMIC_DRAW);
  glEnableVertexAttribArray (0);
  glVertexAttribPointer (0, 2, GL_FLOAT, GL_FALSE, 4 * sizeof (float), (void *)0);
  glEnableVertexAttribArray (1);
  glVertexAttribPointer (1, 2, GL_FLOAT, GL_FALSE, 4 * sizeof (float),
                         (void *)(2 * sizeof (float)));

  glGenVertexArrays (1, &r->shape_vao);
  glGenBuffers (1, &r->shape_vbo);
  glBindVertexArray (r->shape_vao);
  glBindBuffer (GL_ARRAY_BUFFER, r->shape_vbo);
  glEnableVertexAttribArray (0);
  glVertexAttribPointer (0, 2, GL_FLOAT, GL_FALSE, 2 * sizeof (float), (void *)0);

  /* Centre marks: u, v, then the size and opacity of each (shape.vert). */
  glGenVertexArrays (1, &r->mark_vao);
  glGenBuffers (1, &r->mark_vbo);
  glBindVertexArray (r->mark_vao);
  glBindBuffer (GL_ARRAY_BUFFER, r->mark_vbo);
  glEnableVertexAttribArray (0);
  glVertexAttribPointer (0, 2, GL_FLOAT, GL_FALSE, 4 * sizeof (float), (void *)0);
  glEnableVertexAttribArray (1);
  glVertexAttribPointer (1, 2, GL_FLOAT, GL_FALSE, 4 * sizeof (float),
                         (void *)(2 * sizeof (float)));
  glBindVertexArray (0);

  r->image_tex = new_texture ();
  r->label_tex = new_texture ();
  r->difference_tex = new_texture ();
  glBindTexture (GL_TEXTURE_2D, 0);
  return g_steal_pointer (&r);
}

void
sv_renderer_free (SvRenderer *r)
{
  if (!r)
    return;
  glDeleteTextures (1, &r->image_tex);
  glDeleteTextures (1, &r->label_tex);
  glDeleteTextures (1, &r->difference_tex);
  glDeleteBuffers (1, &r->quad_vbo);
  glDeleteBuffers (1, &r->shape_vbo);
  glDeleteBuffers (1, &r->mark_vbo);
  glDeleteVertexArrays (1, &r->mark_vao);
  glDeleteVertexArrays (1, &r->quad_vao);
  glDeleteVertexArrays (1, &r->shape_vao);
  glDeleteProgram (r->slice_program);
  glDeleteProgram (r->shape_program);
  g_free (r->marks);
  g_free (r);
}

void
sv_renderer_set_image (SvRenderer *r, const float *data, guint width, guint height, guint nc)
{
  const GLenum formats[] = { GL_RED, GL_RG, GL_RGB };
  const GLenum internals[] = { GL_R32F, GL_RG32F, GL_RGB32F };
  GLenum format = formats[sv_display_texel_channels (nc) - 1];
  GLenum internal = internals[sv_display_texel_channels (nc) - 1];

  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glBindTexture (GL_TEXTURE_2D, r->image_tex);
  if (width != r->image_w || height != r->image_h || nc != r->image_nc)
    {
      glTexImage2D (GL_TEXTURE_2D, 0, internal, width, height, 0, format, GL_FLOAT, data);
      r->image_w = width;
      r->image_h = height;
      r->image_nc = nc;
    }
  else
    glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, width, height, format, GL_FLOAT, data);
  glBindTexture (GL_TEXTURE_2D, 0);
}

void
sv_renderer_set_labels (SvRenderer *r, const gint32 *labels, guint width, guint height)
{
  r->has_labels = labels != NULL;
  if (!labels)
    return;
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glBindTexture (GL_TEXTURE_2D, r->label_tex);
  /* Signed labels travel as their bit pattern; the shader only compares them. */
  if (width != r->label_w || height != r->label_h)
    {
      glTexImage2D (GL_TEXTURE_2D, 0, GL_R32UI, width, height, 0, GL_RED_INTEGER, GL_UNSIGNED_INT,
                    labels);
      r->label_w = width;
      r->label_h = height;
    }
  else
    glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RED_INTEGER, GL_UNSIGNED_INT,
                     labels);
  glBindTexture (GL_TEXTURE_2D, 0);
}

void
sv_renderer_set_labels_from_buffer (SvRenderer *r, guint pixel_buffer, guint width, guint height)
{
  r->has_labels = TRUE;
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pixel_buffer);
  glBindTexture (GL_TEXTURE_2D, r->label_tex);
  /* With an unpack buffer bound the data pointer is an offset into it. */
  if (width != r->label_w || height != r->label_h)
    {
      glTexImage2D (GL_TEXTURE_2D, 0, GL_R32UI, width, height, 0, GL_RED_INTEGER, GL_UNSIGNED_INT,
                    (const void *)0);
      r->label_w = width;
      r->label_h = height;
    }
  else
    glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RED_INTEGER, GL_UNSIGNED_INT,
                     (const void *)0);
  glBindTexture (GL_TEXTURE_2D, 0);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
}

void
sv_renderer_set_difference (SvRenderer *r, const guint8 *difference, guint width, guint height)
{
  r->has_difference = difference != NULL;
  if (!difference)
    return;
  glPixelStorei (GL_UNPACK_ALIGNMENT, 1);
  glBindTexture (GL_TEXTURE_2D, r->difference_tex);
  if (width != r->difference_w || height != r->difference_h)
    {
      glTexImage2D (GL_TEXTURE_2D, 0, GL_R8UI, width, height, 0, GL_RED_INTEGER, GL_UNSIGNED_BYTE,
                    difference);
      r->difference_w = width;
      r->difference_h = height;
    }
  else
    glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RED_INTEGER, GL_UNSIGNED_BYTE,
                     difference);
  glBindTexture (GL_TEXTURE_2D, 0);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
}

void
sv_renderer_set_centre_marks (SvRenderer *r, const SvCentreMark *marks, gsize n)
{
  g_clear_pointer (&r->marks, g_free);
  r->n_marks = n;
  if (n)
    r->marks = g_memdup2 (marks, n * sizeof *marks);
}

static void
use_shape_program (SvRenderer *r, mat4 texel_to_clip, const float colour[4], float point_size,
                   float point_rim)
{
  glUseProgram (r->shape_program);
  glUniformMatrix4fv (glGetUniformLocation (r->shape_program, "u_projection"), 1, GL_FALSE,
                      (const float *)texel_to_clip);
  glUniform4fv (glGetUniformLocation (r->shape_program, "u_colour"), 1, colour);
  glUniform1f (glGetUniformLocation (r->shape_program, "u_point_size"), point_size);
  glUniform1f (glGetUniformLocation (r->shape_program, "u_point_rim"), point_rim);
}

static void
draw_shape (SvRenderer *r, mat4 texel_to_clip, GLenum mode, const float *uv, gsize n,
            const float colour[4], float point_size)
{
  if (n == 0)
    return;
  use_shape_program (r, texel_to_clip, colour, point_size, 0.0f);
  /* Lines and boxes: full size and opacity (the marks' attribute is off). */
  glVertexAttrib2f (1, 1.0f, 1.0f);
  glBindVertexArray (r->shape_vao);
  glBindBuffer (GL_ARRAY_BUFFER, r->shape_vbo);
  glBufferData (GL_ARRAY_BUFFER, n * 2 * sizeof (float), uv, GL_STREAM_DRAW);
  glDrawArrays (mode, 0, (GLsizei)n);
}

/* Teaching's centres: a dark rim under each, then the marks, the nearest
 * last so that they lie on top. */
static void
draw_centre_marks (SvRenderer *r, mat4 texel_to_clip, float su, float sv)
{
  const float outline[4] = { 0.0f, 0.0f, 0.0f, 0.8f };
  const float colour[4] = { 1.0f, 0.2f, 0.3f, 1.0f };
  /* Visible at every zoom: at least SV_CENTRE_MIN_PX device pixels when
   * zoomed out, growing with the voxels up to SV_CENTRE_MAX_PX, with a
   * dark rim so that they stand out on bright tissue and boundaries. */
  float size = CLAMP (0.6f * MIN (su, sv), SV_CENTRE_MIN_PX, SV_CENTRE_MAX_PX);
  g_autofree float *vertices = g_new (float, r->n_marks * 4);

  for (gsize k = 0; k < r->n_marks; k++)
    {
      vertices[k * 4] = r->marks[k].u;
      vertices[k * 4 + 1] = r->marks[k].v;
      vertices[k * 4 + 2] = sv_centre_mark_size (r->marks[k].strength, 1.0f);
      vertices[k * 4 + 3] = sv_centre_mark_alpha (r->marks[k].strength);
    }
  glBindVertexArray (r->mark_vao);
  glBindBuffer (GL_ARRAY_BUFFER, r->mark_vbo);
  glBufferData (GL_ARRAY_BUFFER, r->n_marks * 4 * sizeof (float), vertices, GL_STREAM_DRAW);
  use_shape_program (r, texel_to_clip, outline, size, 2.0f);
  glDrawArrays (GL_POINTS, 0, (GLsizei)r->n_marks);
  use_shape_program (r, texel_to_clip, colour, size, 0.0f);
  glDrawArrays (GL_POINTS, 0, (GLsizei)r->n_marks);
}

void
sv_renderer_draw (SvRenderer *r, const SvDisplay *d, const SvRenderFrame *f)
{
  mat4 projection, texel_to_px, texel_to_clip;
  GLuint p = r->slice_program;
  float su, sv;
  float quad[16] = {
    f->x0,
    f->y0,
    0,
    0,
    f->x1,
    f->y0,
    (float)r->image_w,
    0,
    f->x0,
    f->y1,
    0,
    (float)r->image_h,
    f->x1,
    f->y1,
    (float)r->image_w,
    (float)r->image_h,
  };

  glViewport (0, 0, f->width, f->height);
  glDisable (GL_DEPTH_TEST);
  glClearColor (0.12f, 0.12f, 0.13f, 1.0f);
  glClear (GL_COLOR_BUFFER_BIT);
  if (r->image_w == 0 || f->x1 <= f->x0 || f->y1 <= f->y0)
    return;

  /* Device pixels, origin top left, to clip space. */
  glm_ortho (0.0f, (float)f->width, (float)f->height, 0.0f, -1.0f, 1.0f, projection);
  su = (f->x1 - f->x0) / (float)r->image_w;
  sv = (f->y1 - f->y0) / (float)r->image_h;

  glUseProgram (p);
  glUniformMatrix4fv (glGetUniformLocation (p, "u_projection"), 1, GL_FALSE,
                      (const float *)projection);
  glActiveTexture (GL_TEXTURE0);
  glBindTexture (GL_TEXTURE_2D, r->image_tex);
  glUniform1i (glGetUniformLocation (p, "u_image"), 0);
  glActiveTexture (GL_TEXTURE1);
  glBindTexture (GL_TEXTURE_2D, r->label_tex);
  glUniform1i (glGetUniformLocation (p, "u_labels"), 1);
  glActiveTexture (GL_TEXTURE2);
  glBindTexture (GL_TEXTURE_2D, r->difference_tex);
  glUniform1i (glGetUniformLocation (p, "u_difference"), 2);
  glUniform1i (glGetUniformLocation (p, "u_has_difference"),
               r->has_difference && r->difference_w == r->image_w && r->difference_h == r->image_h);
  glUniform1i (glGetUniformLocation (p, "u_channels"), (int)r->image_nc);
  glUniform1f (glGetUniformLocation (p, "u_low"), d->low);
  glUniform1f (glGetUniformLocation (p, "u_high"), d->high);
  glUniform1f (glGetUniformLocation (p, "u_gamma"), d->gamma > 0 ? d->gamma : 1.0f);
  glUniform1i (glGetUniformLocation (p, "u_has_labels"),
               r->has_labels && r->label_w == r->image_w && r->label_h == r->image_h);
  glUniform1i (glGetUniformLocation (p, "u_mode"), (int)d->overlay);
  glUniform4fv (glGetUniformLocation (p, "u_boundary"), 1, d->boundary);
  glUniform1f (glGetUniformLocation (p, "u_fill_opacity"), d->fill_opacity);
  glUniform1ui (glGetUniformLocation (p, "u_shuffle"), d->shuffle);
  glUniform1i (glGetUniformLocation (p, "u_thickness"), CLAMP (d->thickness, 1, 3));
  glUniform2f (glGetUniformLocation (p, "u_texel_per_px"), 1.0f / su, 1.0f / sv);
  glUniform1i (glGetUniformLocation (p, "u_hover_valid"), f->hover_valid);
  glUniform1ui (glGetUniformLocation (p, "u_hover"), (guint32)f->hover_label);
  glUniform1i (glGetUniformLocation (p, "u_background_valid"), f->background_valid);
  glUniform1ui (glGetUniformLocation (p, "u_background"), (guint32)f->background);
  glUniform1i (glGetUniformLocation (p, "u_colormap"), (int)d->colormap);
  glUniform1i (glGetUniformLocation (p, "u_selected_valid"), f->selected_valid);
  glUniform1ui (glGetUniformLocation (p, "u_selected"), (guint32)f->selected);
  glUniform1i (glGetUniformLocation (p, "u_selected_only"), f->selected_only);
  glUniform1i (glGetUniformLocation (p, "u_composite"),
               d->n_channels >= 2 ? (int)MIN (d->n_channels, r->image_nc) : 0);
  {
    float windows[SV_DISPLAY_MAX_CHANNELS * 2], colours[SV_DISPLAY_MAX_CHANNELS * 3];

    for (guint c = 0; c < SV_DISPLAY_MAX_CHANNELS; c++)
      {
        windows[c * 2] = d->channels[c].low;
        windows[c * 2 + 1] = d->channels[c].high;
        memcpy (colours + c * 3, d->channels[c].colour, 3 * sizeof (float));
      }
    glUniform2fv (glGetUniformLocation (p, "u_channel_window"), SV_DISPLAY_MAX_CHANNELS, windows);
    glUniform3fv (glGetUniformLocation (p, "u_channel_colour"), SV_DISPLAY_MAX_CHANNELS, colours);
  }

  glBindVertexArray (r->quad_vao);
  glBindBuffer (GL_ARRAY_BUFFER, r->quad_vbo);
  glBufferSubData (GL_ARRAY_BUFFER, 0, sizeof quad, quad);
  glDrawArrays (GL_TRIANGLE_STRIP, 0, 4);
  glActiveTexture (GL_TEXTURE2);
  glBindTexture (GL_TEXTURE_2D, 0);
  glActiveTexture (GL_TEXTURE1);
  glBindTexture (GL_TEXTURE_2D, 0);
  glActiveTexture (GL_TEXTURE0);
  glBindTexture (GL_TEXTURE_2D, 0);

  /* Overlays given in texel coordinates: scale and shift into pixels. */
  glm_mat4_identity (texel_to_px);
  glm_translate (texel_to_px, (vec3){ f->x0, f->y0, 0.0f });
  glm_scale (texel_to_px, (vec3){ su, sv, 1.0f });
  glm_mat4_mul (projection, texel_to_px, texel_to_clip);
  glEnable (GL_BLEND);
  glBlendFunc (GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glEnable (GL_PROGRAM_POINT_SIZE);

  if (f->window_valid)
    {
      const float colour[4] = { 0.3f, 0.9f, 1.0f, 0.9f };
      float box[8] = { f->window_u0, f->window_v0, f->window_u1, f->window_v0,
                       f->window_u1, f->window_v1, f->window_u0, f->window_v1 };
      draw_shape (r, texel_to_clip, GL_LINE_LOOP, box, 4, colour, 1.0f);
    }
  if (f->region_valid)
    {
      const float colour[4] = { 1.0f, 0.55f, 0.1f, 0.95f };
      float box[8] = { f->region_u0, f->region_v0, f->region_u1, f->region_v0,
                       f->region_u1, f->region_v1, f->region_u0, f->region_v1 };
      draw_shape (r, texel_to_clip, GL_LINE_LOOP, box, 4, colour, 1.0f);
    }
  if (d->show_centres && r->n_marks)
    draw_centre_marks (r, texel_to_clip, su, sv);
  if (f->crosshair)
    {
      const float colour[4] = { 0.2f, 1.0f, 0.4f, 0.6f };
      float lines[8] = { 0.0f,       f->cross_v, (float)r->image_w, f->cross_v,
                         f->cross_u, 0.0f,       f->cross_u,        (float)r->image_h };
      draw_shape (r, texel_to_clip, GL_LINES, lines, 4, colour, 1.0f);
    }
  glDisable (GL_BLEND);
  glBindVertexArray (0);
  glUseProgram (0);
}

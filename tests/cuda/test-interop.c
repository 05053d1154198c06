/* Tests of CUDA–GL interop without a window: an OpenGL 3.3 core context on
 * the EGL device platform, a pixel buffer registered with CUDA, and the slice
 * kernel writing XY, XZ and YZ label slices into it. What GL reads from the
 * buffer must equal, label for label, what the host path would upload: the
 * CPU backend's labels sliced by sv_labels_get_slice for the same volume
 * and parameters.
 * Every test skips with the reason where there is no CUDA or EGL device. */
#define G_LOG_DOMAIN "sv-test-interop"

#include <dlfcn.h>
#include <math.h>
#include <string.h>

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-error.h"
#include "supervox/sv-job.h"
#include "sv-cuda-gl.h"
#include "sv-cuda.h"
#include "sv-test-cuda.h"

#define NZ 14
#define NY 33
#define NX 27

typedef struct
{
  EGLDisplay display;
  EGLContext context;
} GlContext;

static GlContext gl;
static gboolean gl_tried;
static char *gl_skip_reason;

/* One headless GL 3.3 core context on the first EGL device, made once and
 * kept current for every test. */
static gboolean
need_gl (void)
{
  g_autoptr (GError) error = NULL;
  PFNEGLQUERYDEVICESEXTPROC query_devices;
  EGLDeviceEXT devices[8];
  EGLint n_devices = 0, major, minor, n_configs = 0;
  EGLConfig config;
  const EGLint config_attrs[]
      = { EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE };
  const EGLint context_attrs[] = { EGL_CONTEXT_MAJOR_VERSION,
                                   3,
                                   EGL_CONTEXT_MINOR_VERSION,
                                   3,
                                   EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                   EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                   EGL_NONE };

  if (!sv_cuda_device_available (&error))
    {
      g_test_skip (error->message);
      return FALSE;
    }
  if (gl_tried)
    {
      if (gl_skip_reason)
        g_test_skip (gl_skip_reason);
      return gl_skip_reason == NULL;
    }
  gl_tried = TRUE;

  /* epoxy aborts when it cannot load libEGL: look for it first. */
  {
    void *lib = dlopen ("libEGL.so.1", RTLD_LAZY);
    if (!lib)
      {
        gl_skip_reason = g_strdup ("no EGL device: libEGL.so.1 is not installed");
        g_test_skip (gl_skip_reason);
        return FALSE;
      }
  }
  query_devices = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress ("eglQueryDevicesEXT");
  if (!query_devices || !query_devices (G_N_ELEMENTS (devices), devices, &n_devices)
      || n_devices == 0)
    {
      gl_skip_reason = g_strdup ("no EGL device");
      g_test_skip (gl_skip_reason);
      return FALSE;
    }
  gl.display = eglGetPlatformDisplayEXT (EGL_PLATFORM_DEVICE_EXT, devices[0], NULL);
  if (gl.display == EGL_NO_DISPLAY || !eglInitialize (gl.display, &major, &minor)
      || !eglBindAPI (EGL_OPENGL_API)
      || !eglChooseConfig (gl.display, config_attrs, &config, 1, &n_configs) || n_configs == 0)
    {
      gl_skip_reason = g_strdup_printf ("no EGL device: cannot initialise EGL (0x%x)",
                                        (unsigned)eglGetError ());
      g_test_skip (gl_skip_reason);
      return FALSE;
    }
  gl.context = eglCreateContext (gl.display, config, EGL_NO_CONTEXT, context_attrs);
  if (gl.context == EGL_NO_CONTEXT
      || !eglMakeCurrent (gl.display, EGL_NO_SURFACE, EGL_NO_SURFACE, gl.context))
    {
      gl_skip_reason = g_strdup_printf ("no EGL device: no GL 3.3 core context (0x%x)",
                                        (unsigned)eglGetError ());
      g_test_skip (gl_skip_reason);
      return FALSE;
    }
  g_test_message ("EGL %d.%d %s; GL %s / %s", major, minor, eglQueryString (gl.display, EGL_VENDOR),
                  glGetString (GL_VERSION), glGetString (GL_RENDERER));
  return TRUE;
}

/* Blocky regions, a smooth wave and noise (as in test-cuda.c). */
static SvVolume *
make_volume (guint32 seed)
{
  return sv_test_blocky_volume (NZ, NY, NX, 1, seed);
}

static void
params_a (SvSlicParams *p)
{
  sv_slic_params_init_defaults (p);
  p->n_segments = 40;
  p->compactness = 0.2;
}

static void
params_b (SvSlicParams *p)
{
  sv_slic_params_init_defaults (p);
  p->n_segments = 90;
  p->compactness = 0.05;
}

static SvBackend *
run_backend (const char *name, const SvVolume *v, const SvSlicParams *p)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new (name, &error);
  SvRunStats stats;

  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sv_backend_run (backend, p, NULL, &stats, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&backend);
}

/* One slice of a backend's labels, the host path's way. */
static gboolean
backend_slice (SvBackend *backend, SvAxis axis, guint index, gint32 *out, GError **error)
{
  const guint shape[3] = { NZ, NY, NX };
  g_autofree gint32 *labels = g_new (gint32, (gsize)NZ * NY * NX);

  return sv_backend_get_labels (backend, labels, error)
         && sv_labels_get_slice (labels, shape, axis, index, out, error);
}

static void
slice_size (SvAxis axis, guint *w, guint *h, guint *n)
{
  *w = axis == SV_AXIS_YZ ? NY : NX;
  *h = axis == SV_AXIS_XY ? NY : NZ;
  *n = axis == SV_AXIS_XY ? NZ : axis == SV_AXIS_XZ ? NY : NX;
}

/* A pixel buffer big enough for any slice of the test volume. */
static GLuint
new_pixel_buffer (void)
{
  GLuint pbo;
  gsize bytes = (gsize)MAX (NY * NX, MAX (NZ * NX, NZ * NY)) * sizeof (gint32);

  glGenBuffers (1, &pbo);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo);
  glBufferData (GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_DRAW);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
  g_assert_cmpint (glGetError (), ==, GL_NO_ERROR);
  return pbo;
}

/* Uploads the label texture from the pixel buffer, as the renderer does on
 * the interop path, and reads the texture back through a framebuffer. */
static void
texture_from_buffer (GLuint pbo, guint w, guint h, gint32 *out)
{
  GLuint tex, fbo;

  glGenTextures (1, &tex);
  glBindTexture (GL_TEXTURE_2D, tex);
  glTexImage2D (GL_TEXTURE_2D, 0, GL_R32UI, (GLsizei)w, (GLsizei)h, 0, GL_RED_INTEGER,
                GL_UNSIGNED_INT, NULL);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo);
  glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, (GLsizei)w, (GLsizei)h, GL_RED_INTEGER, GL_UNSIGNED_INT,
                   (const void *)0);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);

  glGenFramebuffers (1, &fbo);
  glBindFramebuffer (GL_FRAMEBUFFER, fbo);
  glFramebufferTexture2D (GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
  g_assert_cmpint (glCheckFramebufferStatus (GL_FRAMEBUFFER), ==, GL_FRAMEBUFFER_COMPLETE);
  glPixelStorei (GL_PACK_ALIGNMENT, 4);
  glReadPixels (0, 0, (GLsizei)w, (GLsizei)h, GL_RED_INTEGER, GL_UNSIGNED_INT, out);
  glBindFramebuffer (GL_FRAMEBUFFER, 0);
  glDeleteFramebuffers (1, &fbo);
  glDeleteTextures (1, &tex);
  g_assert_cmpint (glGetError (), ==, GL_NO_ERROR);
}

static void
assert_slices_equal (const gint32 *got, const gint32 *want, guint w, guint h, const char *what)
{
  for (guint i = 0; i < w * h; i++)
    if (got[i] != want[i])
      g_error ("%s: texel (%u, %u) is %d, the host path has %d", what, i % w, i / w, got[i],
               want[i]);
}

static void
test_usable (void)
{
  g_autoptr (GError) error = NULL;

  if (!need_gl ())
    return;
  g_assert_true (sv_cuda_gl_usable (&error));
  g_assert_no_error (error);
}

/* The backend's own labels, straight into the pixel buffer: every slice of
 * every axis (a few of each), read back both from the buffer and through a
 * texture; and each slice transposed from the published labels. */
static void
test_slices_match_cpu (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (SvBackend) cuda = NULL;
  g_autoptr (SvBackend) cpu = NULL;
  g_autoptr (SvCudaLabelsPool) pool = NULL;
  g_autoptr (SvCudaLabels) published = NULL;
  SvCudaGlBuffer *buffer;
  SvSlicParams p;
  const gint32 *d_labels;
  guint shape[3];
  GLuint pbo;

  if (!need_gl ())
    return;
  v = make_volume (7);
  params_a (&p);
  cuda = run_backend ("cuda", v, &p);
  cpu = run_backend ("cpu", v, &p);
  d_labels = sv_backend_get_device_labels (cuda, shape);
  g_assert_nonnull (d_labels);
  g_assert_cmpuint (shape[0], ==, NZ);
  g_assert_cmpuint (shape[1], ==, NY);
  g_assert_cmpuint (shape[2], ==, NX);

  pool = sv_cuda_labels_pool_new ();
  published = sv_cuda_labels_publish (pool, cuda, &error);
  g_assert_no_error (error);

  pbo = new_pixel_buffer ();
  buffer = sv_cuda_gl_buffer_register (pbo, &error);
  g_assert_no_error (error);

  for (SvAxis axis = SV_AXIS_XY; axis <= SV_AXIS_YZ; axis++)
    {
      guint w, h, n;
      slice_size (axis, &w, &h, &n);
      for (guint index = 0; index < n; index += MAX (1, n / 4))
        {
          g_autofree gint32 *want = g_new (gint32, (gsize)w * h);
          g_autofree gint32 *from_buffer = g_new0 (gint32, (gsize)w * h);
          g_autofree gint32 *from_texture = g_new0 (gint32, (gsize)w * h);
          g_autofree gint32 *transposed = g_new (gint32, (gsize)w * h);
          g_autofree char *what = g_strdup_printf ("axis %d slice %u", (int)axis, index);
          gint64 distinct = 0;

          g_assert_true (backend_slice (cpu, axis, index, want, &error));
          g_assert_no_error (error);
          g_assert_true (sv_cuda_gl_buffer_copy_slice (
              buffer, d_labels, shape, axis, index,
              sv_backend_get_device_stream (cuda), NULL, &error));
          g_assert_no_error (error);

          glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo);
          glGetBufferSubData (GL_PIXEL_UNPACK_BUFFER, 0, (GLsizeiptr)w * h * sizeof (gint32),
                              from_buffer);
          glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
          assert_slices_equal (from_buffer, want, w, h, what);
          texture_from_buffer (pbo, w, h, from_texture);
          assert_slices_equal (from_texture, want, w, h, what);
          /* Transposed (YZ with z across, as the window shows it): rows
           * and columns swapped, from the published labels. */
          for (guint q = 0; q < h; q++)
            for (guint i = 0; i < w; i++)
              transposed[(gsize)i * h + q] = want[(gsize)q * w + i];
          g_assert_true (sv_cuda_gl_buffer_copy_labels_slice_transposed (buffer, published, axis,
                                                                         index, &error));
          g_assert_no_error (error);
          texture_from_buffer (pbo, h, w, from_texture);
          assert_slices_equal (from_texture, transposed, h, w, what);
          /* A slice of one label would make the comparison weak. */
          for (guint i = 1; i < w * h; i++)
            distinct += want[i] != want[i - 1];
          g_assert_cmpint (distinct, >, 0);
        }
    }
  /* Out of range is an error, not a stray read. */
  g_assert_false (
      sv_cuda_gl_buffer_copy_slice (buffer, d_labels, shape, SV_AXIS_XY, NZ, NULL, NULL, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);

  sv_cuda_gl_buffer_unregister (buffer);
  glDeleteBuffers (1, &pbo);
}

/* Published labels are a snapshot: a later run of the backend does not
 * change what the renderer shows, and a held buffer is never reused. */
static void
test_published_double_buffer (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (SvBackend) cuda = NULL;
  g_autoptr (SvBackend) cpu_a = NULL;
  g_autoptr (SvBackend) cpu_b = NULL;
  g_autoptr (SvCudaLabelsPool) pool = NULL;
  g_autoptr (SvCudaLabels) la = NULL;
  g_autoptr (SvCudaLabels) lb = NULL;
  g_autoptr (SvCudaLabels) lc = NULL;
  g_autoptr (SvCudaLabels) ld = NULL;
  g_autoptr (SvCudaLabels) le = NULL;
  SvCudaGlBuffer *buffer;
  SvSlicParams pa, pb;
  SvRunStats stats;
  GLuint pbo;

  if (!need_gl ())
    return;
  v = make_volume (11);
  params_a (&pa);
  params_b (&pb);
  cuda = run_backend ("cuda", v, &pa);
  cpu_a = run_backend ("cpu", v, &pa);
  cpu_b = run_backend ("cpu", v, &pb);
  pool = sv_cuda_labels_pool_new ();

  la = sv_cuda_labels_publish (pool, cuda, &error);
  g_assert_no_error (error);
  g_assert_nonnull (la);
  /* The next run overwrites the backend's labels while `la` is held. */
  g_assert_true (sv_backend_run (cuda, &pb, NULL, &stats, &error));
  g_assert_no_error (error);
  lb = sv_cuda_labels_publish (pool, cuda, &error);
  g_assert_no_error (error);
  g_assert_nonnull (lb);
  g_assert_true (sv_cuda_labels_get_data (la, NULL) != sv_cuda_labels_get_data (lb, NULL));
  lc = sv_cuda_labels_publish (pool, cuda, &error);
  g_assert_no_error (error);
  g_assert_nonnull (lc);
  g_assert_true (sv_cuda_labels_get_data (lc, NULL) != sv_cuda_labels_get_data (la, NULL));
  g_assert_true (sv_cuda_labels_get_data (lc, NULL) != sv_cuda_labels_get_data (lb, NULL));
  /* All three held: nothing to write into, and that is not an error. */
  ld = sv_cuda_labels_publish (pool, cuda, &error);
  g_assert_no_error (error);
  g_assert_null (ld);

  pbo = new_pixel_buffer ();
  buffer = sv_cuda_gl_buffer_register (pbo, &error);
  g_assert_no_error (error);
  for (SvAxis axis = SV_AXIS_XY; axis <= SV_AXIS_YZ; axis++)
    {
      guint w, h, n;
      slice_size (axis, &w, &h, &n);
      for (int which = 0; which < 2; which++)
        {
          g_autofree gint32 *want = g_new (gint32, (gsize)w * h);
          g_autofree gint32 *got = g_new0 (gint32, (gsize)w * h);
          g_autofree char *what
              = g_strdup_printf ("published %c, axis %d", which ? 'b' : 'a', (int)axis);
          guint index = n / 2;

          g_assert_true (backend_slice (which ? cpu_b : cpu_a, axis, index, want, &error));
          g_assert_no_error (error);
          g_assert_true (
              sv_cuda_gl_buffer_copy_labels_slice (buffer, which ? lb : la, axis, index, &error));
          g_assert_no_error (error);
          texture_from_buffer (pbo, w, h, got);
          assert_slices_equal (got, want, w, h, what);
        }
    }

  /* Once the renderer lets go of `la`, its buffer takes the next result. */
  {
    const gint32 *old_a = sv_cuda_labels_get_data (la, NULL);
    g_clear_pointer (&la, sv_cuda_labels_unref);
    le = sv_cuda_labels_publish (pool, cuda, &error);
    g_assert_no_error (error);
    g_assert_nonnull (le);
    g_assert_true (sv_cuda_labels_get_data (le, NULL) == old_a);
  }

  sv_cuda_gl_buffer_unregister (buffer);
  glDeleteBuffers (1, &pbo);
}

/* ---- the worker publishing labels while the renderer reads them ---- */

typedef struct
{
  SvCudaLabelsPool *pool;
  SvJobResult *shown; /* the result the "renderer" holds */
  guint n_results, n_published;
} JobSeen;

/* As the GUI's hook: a CUDA result carries a device snapshot of its labels. */
static void
publish_hook (SvBackend *backend, SvJobResult *result, gpointer user_data)
{
  JobSeen *s = user_data;
  g_autoptr (GError) error = NULL;

  g_assert_cmpstr (sv_backend_get_name (backend), ==, "cuda");
  /* As the window does: the labels stay on the device with the result. */
  if (!sv_cuda_labels_attach (s->pool, backend, result, &error))
    g_assert_no_error (error);
}

static void
job_result (SvJobResult *result, gpointer user_data)
{
  JobSeen *s = user_data;

  s->n_results++;
  s->n_published += result->device_data != NULL;
  g_clear_pointer (&s->shown, sv_job_result_unref);
  s->shown = sv_job_result_ref (result);
}

static void
job_progress (guint64 generation, SvStage stage, guint i, guint n, gpointer user_data)
{
}

static void
job_error (guint64 generation, const GError *error, gpointer user_data)
{
  g_error ("job failed: %s", error->message);
}

/* Every slice GL gets from a shown result's device labels equals that
 * result's host labels, while newer runs keep the backend busy. */
static void
assert_shown_matches (SvCudaGlBuffer *buffer, GLuint pbo, SvJobResult *r)
{
  g_autoptr (GError) error = NULL;
  const SvLabels *l = sv_job_result_get_labels (r, NULL);
  g_autofree gint32 *got = g_new0 (gint32, (gsize)l->ny * l->nx);
  g_autofree char *what = g_strdup_printf ("generation %" G_GUINT64_FORMAT, r->generation);
  guint z = (guint)(r->generation % l->nz);

  g_assert_true (
      sv_cuda_gl_buffer_copy_labels_slice (buffer, r->device_data, SV_AXIS_XY, z, &error));
  g_assert_no_error (error);
  texture_from_buffer (pbo, l->nx, l->ny, got);
  assert_slices_equal (got, l->data + (gsize)z * l->ny * l->nx, l->nx, l->ny, what);
}

static void
test_job_publishes_snapshots (void)
{
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (GError) error = NULL;
  static const SvJobCallbacks callbacks = { job_progress, job_result, job_error };
  JobSeen s = { 0 };
  SvCudaGlBuffer *buffer;
  SvJobRequest request;
  SvJob *job;
  GLuint pbo;
  guint64 g = 0;

  if (!need_gl ())
    return;
  v = make_volume (3);
  s.pool = sv_cuda_labels_pool_new ();
  pbo = new_pixel_buffer ();
  buffer = sv_cuda_gl_buffer_register (pbo, &error);
  g_assert_no_error (error);

  job = sv_job_new (v, NULL, &callbacks, &s);
  sv_job_set_result_hook (job, publish_hook, &s);
  for (int round = 0; round < 6; round++)
    {
      /* A burst of requests; the renderer keeps drawing what it holds. */
      for (int k = 0; k < 3; k++)
        {
          sv_job_request_init (&request);
          g_strlcpy (request.backend, "cuda", sizeof request.backend);
          request.params.n_segments = 20 + 15 * ((round * 3 + k) % 5);
          request.params.compactness = 0.05 + 0.1 * k;
          request.generation = ++g;
          sv_job_submit (job, &request);
          if (s.shown && s.shown->device_data)
            assert_shown_matches (buffer, pbo, s.shown);
        }
      while (!s.shown || s.shown->generation < g)
        {
          g_main_context_iteration (NULL, TRUE);
          if (s.shown && s.shown->device_data)
            assert_shown_matches (buffer, pbo, s.shown);
        }
    }
  /* With nothing queued, only the shown result holds a buffer: the next
   * result always gets the other one. */
  while (sv_job_is_busy (job) || g_main_context_iteration (NULL, FALSE))
    g_main_context_iteration (NULL, FALSE);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cuda", sizeof request.backend);
  request.params.n_segments = 33;
  request.generation = ++g;
  sv_job_submit (job, &request);
  while (s.shown->generation < g)
    g_main_context_iteration (NULL, TRUE);
  sv_job_free (job);
  g_assert_nonnull (s.shown->device_data);
  assert_shown_matches (buffer, pbo, s.shown);
  /* Results that found all buffers held carry none and are drawn from
   * the host; the others must be right (checked above). */
  g_test_message ("%u results delivered, %u with device labels", s.n_results, s.n_published);
  g_assert_cmpuint (s.n_published, >=, 1);

  g_clear_pointer (&s.shown, sv_job_result_unref);
  sv_cuda_labels_pool_free (s.pool);
  sv_cuda_gl_buffer_unregister (buffer);
  glDeleteBuffers (1, &pbo);
}

/* ---- timing (-m perf): interop versus host upload of one slice ---- */

static double
median_ms (double *t, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && t[j - 1] > t[j]; j--)
      {
        double x = t[j];
        t[j] = t[j - 1];
        t[j - 1] = x;
      }
  return t[n / 2];
}

/* Each path as the renderer runs it, up to a texture GL has finished
 * writing: device slice → pixel buffer → texture, or a slice of the
 * result's host labels (sv_labels_get_slice) → glTexSubImage2D. */
static void
test_timing (void)
{
  enum
  {
    PZ = 96,
    PY = 512,
    PX = 512,
    REPS = 21
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (PZ, PY, PX, 1, &error);
  g_autoptr (SvBackend) cuda = NULL;
  SvCudaGlBuffer *buffer;
  SvSlicParams p;
  const gint32 *d_labels;
  guint shape[3];
  GLuint pbo, tex;
  gsize bytes = (gsize)PY * PX * sizeof (gint32);
  g_autofree gint32 *host_labels = NULL;

  if (!need_gl ())
    return;
  g_assert_no_error (error);
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = (float)(((i / 9) ^ (i / 5000)) % 7) / 7.0f;
  sv_slic_params_init_defaults (&p);
  p.n_segments = 20000;
  p.compactness = 0.1;
  p.max_num_iter = 3;
  cuda = run_backend ("cuda", v, &p);
  d_labels = sv_backend_get_device_labels (cuda, shape);
  host_labels = g_new (gint32, sv_volume_n_voxels (v));
  g_assert_true (sv_backend_get_labels (cuda, host_labels, &error));

  glGenBuffers (1, &pbo);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo);
  glBufferData (GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_DRAW);
  glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
  buffer = sv_cuda_gl_buffer_register (pbo, &error);
  g_assert_no_error (error);
  glGenTextures (1, &tex);

  for (SvAxis axis = SV_AXIS_XY; axis <= SV_AXIS_YZ; axis += 2)
    {
      guint w = axis == SV_AXIS_XY ? PX : PY, h = axis == SV_AXIS_XY ? PY : PZ;
      g_autofree gint32 *host = g_new (gint32, (gsize)w * h);
      double t_interop[REPS], t_host[REPS];

      glBindTexture (GL_TEXTURE_2D, tex);
      glTexImage2D (GL_TEXTURE_2D, 0, GL_R32UI, (GLsizei)w, (GLsizei)h, 0, GL_RED_INTEGER,
                    GL_UNSIGNED_INT, NULL);
      for (int r = -1; r < REPS; r++)
        {
          gint64 t0 = g_get_monotonic_time (), t1, t2;
          g_assert_true (
              sv_cuda_gl_buffer_copy_slice (buffer, d_labels, shape, axis, 7, NULL, NULL, &error));
          glBindBuffer (GL_PIXEL_UNPACK_BUFFER, pbo);
          glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, (GLsizei)w, (GLsizei)h, GL_RED_INTEGER,
                           GL_UNSIGNED_INT, (const void *)0);
          glBindBuffer (GL_PIXEL_UNPACK_BUFFER, 0);
          glFinish ();
          t1 = g_get_monotonic_time ();
          g_assert_true (sv_labels_get_slice (host_labels, shape, axis, 7, host, &error));
          glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, (GLsizei)w, (GLsizei)h, GL_RED_INTEGER,
                           GL_UNSIGNED_INT, host);
          glFinish ();
          t2 = g_get_monotonic_time ();
          if (r >= 0)
            {
              t_interop[r] = (t1 - t0) / 1000.0;
              t_host[r] = (t2 - t1) / 1000.0;
            }
        }
      g_test_message ("%s slice %ux%u: interop %.3f ms, host upload %.3f ms (median of %d)",
                      axis == SV_AXIS_XY ? "XY" : "YZ", w, h, median_ms (t_interop, REPS),
                      median_ms (t_host, REPS), REPS);
    }
  glBindTexture (GL_TEXTURE_2D, 0);
  glDeleteTextures (1, &tex);
  sv_cuda_gl_buffer_unregister (buffer);
  glDeleteBuffers (1, &pbo);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  sv_backend_register (sv_backend_cuda_class ());
  g_test_add_func ("/cuda/interop/usable", test_usable);
  g_test_add_func ("/cuda/interop/slices-match-cpu", test_slices_match_cpu);
  g_test_add_func ("/cuda/interop/published-double-buffer", test_published_double_buffer);
  g_test_add_func ("/cuda/interop/job-publishes-snapshots", test_job_publishes_snapshots);
  if (g_test_perf ())
    g_test_add_func ("/cuda/interop/timing", test_timing);
  status = g_test_run ();
  if (gl.context)
    {
      eglMakeCurrent (gl.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext (gl.display, gl.context);
      eglTerminate (gl.display);
    }
  g_free (gl_skip_reason);
  return status;
}

/* The backend registry and the CPU backend: prepare cache, teaching mode,
 * cancellation, slices, centres. */
#define G_LOG_DOMAIN "sv-test"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"
#include "supervox/sv-params.h"
#include "slic-test-util.h"

#define NZ 13
#define NY 24
#define NX 31
#define N (NZ * NY * NX)

static float *
make_volume_data (void)
{
  float *data = g_new (float, N);
  GRand *rand = g_rand_new_with_seed (5);

  for (gsize i = 0; i < N; i++)
    {
      gsize z = i / (NY * NX), y = (i / NX) % NY, x = i % NX;
      data[i] = (float)((z > 6) + 2 * (y > 12) + 3 * (x > 15)) / 6.0f
                + 0.05f * (float)g_rand_double (rand);
    }
  g_rand_free (rand);
  return data;
}

static SvBackend *
new_cpu_with_volume (float *data)
{
  g_autoptr (GError) error = NULL;
  SvBackend *backend = sv_backend_new ("cpu", &error);
  SvVolume v = test_volume (data, NZ, NY, NX, 1);

  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, &v, NULL, &error));
  g_assert_no_error (error);
  return backend;
}

static void
test_registry (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) cpu = sv_backend_new ("cpu", &error);
  g_autoptr (SvBackend) any = NULL;
  SvBackend *none;

  g_assert_no_error (error);
  g_assert_cmpstr (sv_backend_get_name (cpu), ==, "cpu");

  /* Nothing registered a CUDA backend in this program. */
  any = sv_backend_new ("auto", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sv_backend_get_name (any), ==, "cpu");

  none = sv_backend_new ("cuda", &error);
  g_assert_null (none);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND);
  g_assert_cmpstr (error->message, ==, "this build has no CUDA backend");
  g_clear_error (&error);

  none = sv_backend_new ("foo", &error);
  g_assert_null (none);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND);
  g_assert_cmpstr (error->message, ==, "unknown backend 'foo': use cpu, cuda or auto");
}

/* A registered backend whose create fails: auto falls back to the CPU,
 * an explicit request reports the reason. */
static gboolean
failing_create (SvBackend *backend, GError **error)
{
  g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND, "no CUDA device");
  return FALSE;
}

static void
test_registry_auto_fallback (void)
{
  static SvBackendClass fake = { .name = "cuda", .create = failing_create };
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) any = NULL;
  SvBackend *none;

  sv_backend_register (&fake);
  any = sv_backend_new ("auto", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sv_backend_get_name (any), ==, "cpu");
  none = sv_backend_new ("cuda", &error);
  g_assert_null (none);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND);
  g_assert_cmpstr (error->message, ==, "no CUDA device");
}

static void
test_prepare_reused (void)
{
  g_autofree float *data = make_volume_data ();
  g_autoptr (SvBackend) backend = new_cpu_with_volume (data);
  g_autoptr (GError) error = NULL;
  SvRunControl control = { .n_threads = 2, .stop_after_iteration = -1 };
  SvRunStats stats;
  SvSlicParams p;
  g_autofree gint32 *a = g_new (gint32, N);
  g_autofree gint32 *b = g_new (gint32, N);
  g_autofree gint32 *fresh = NULL;
  SvVolume v = test_volume (data, NZ, NY, NX, 1);

  sv_slic_params_init_defaults (&p);
  p.sigma[0] = 1.0;
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_no_error (error);
  g_assert_false (stats.prepare_reused);
  g_assert_cmpuint (stats.iterations, ==, 10);
  g_assert_cmpuint (stats.n_clusters, >, 0);
  g_assert_cmpuint (stats.n_labels, >, 0);
  g_assert_cmpfloat (stats.seconds_iterate, >=, 0);
  g_assert_true (sv_backend_get_labels (backend, a, &error));

  /* Compactness and n_segments do not touch the prepared image. */
  p.compactness = 3;
  p.n_segments = 50;
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_true (stats.prepare_reused);
  g_assert_true (sv_backend_get_labels (backend, b, &error));
  /* ... and the result equals a fresh backend's. */
  fresh = run_cpu (&v, NULL, &p, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (b, N * 4, fresh, N * 4);

  /* A different sigma does. */
  p.sigma[0] = 2.0;
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_false (stats.prepare_reused);

  /* A new volume drops the cache. */
  g_assert_true (sv_backend_set_volume (backend, &v, NULL, &error));
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_false (stats.prepare_reused);
}

typedef struct
{
  GCancellable *cancellable;
  guint cancel_after;
  guint last_iteration;
  guint n_prepare, n_done, n_connect;
} ProgressLog;

static void
progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  ProgressLog *log = user_data;

  switch (stage)
    {
    case SV_STAGE_PREPARE:
      log->n_prepare++;
      break;
    case SV_STAGE_ITERATE:
      g_assert_cmpuint (iteration, ==, log->last_iteration + 1);
      g_assert_cmpuint (iteration, <=, n_iterations);
      log->last_iteration = iteration;
      if (log->cancellable != NULL && iteration == log->cancel_after)
        g_cancellable_cancel (log->cancellable);
      break;
    case SV_STAGE_CONNECT:
      log->n_connect++;
      break;
    case SV_STAGE_DONE:
      log->n_done++;
      break;
    }
}

/* Teaching mode: stop after n iterations, no connectivity; the labels are
 * those of a run with max_num_iter = n and connectivity off. */
static void
test_stop_after_iteration (void)
{
  g_autofree float *data = make_volume_data ();
  g_autoptr (SvBackend) backend = new_cpu_with_volume (data);
  g_autoptr (GError) error = NULL;
  ProgressLog log = { 0 };
  SvRunControl control = { .n_threads = 2, .progress = progress_cb, .user_data = &log };
  SvRunStats stats;
  SvSlicParams p;
  SvVolume v = test_volume (data, NZ, NY, NX, 1);
  g_autofree gint32 *labels = g_new (gint32, N);

  sv_slic_params_init_defaults (&p);
  p.n_segments = 60;
  for (int n = 0; n <= 3; n++)
    {
      g_autofree gint32 *expected = NULL;
      SvSlicParams q = p;

      memset (&log, 0, sizeof log);
      control.stop_after_iteration = n;
      g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (stats.iterations, ==, n);
      g_assert_cmpuint (log.last_iteration, ==, n);
      g_assert_cmpuint (log.n_connect, ==, 0);
      g_assert_cmpuint (log.n_done, ==, 1);
      g_assert_true (sv_backend_get_labels (backend, labels, &error));

      q.max_num_iter = n;
      q.enforce_connectivity = FALSE;
      expected = run_cpu (&v, NULL, &q, 1, &error);
      g_assert_cmpmem (labels, N * 4, expected, N * 4);
    }
}

static void
test_cancel_between_iterations (void)
{
  g_autofree float *data = make_volume_data ();
  g_autoptr (SvBackend) backend = new_cpu_with_volume (data);
  g_autoptr (GError) error = NULL;
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  ProgressLog log = { .cancellable = cancellable, .cancel_after = 3 };
  SvRunControl control = { .n_threads = 2,
                           .stop_after_iteration = -1,
                           .progress = progress_cb,
                           .user_data = &log,
                           .cancellable = cancellable };
  SvRunStats stats;
  SvSlicParams p;
  g_autofree gint32 *labels = g_new (gint32, N);

  sv_slic_params_init_defaults (&p);
  g_assert_false (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  /* It stopped at the next boundary: no fourth iteration ran. */
  g_assert_cmpuint (log.last_iteration, ==, 3);
  g_assert_cmpuint (log.n_done, ==, 0);
  g_clear_error (&error);
  /* No labels from a cancelled run. */
  g_assert_false (sv_backend_get_labels (backend, labels, &error));
  g_clear_error (&error);

  /* The backend still works afterwards. */
  g_cancellable_reset (cancellable);
  log.cancellable = NULL;
  log.last_iteration = 0;
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (log.last_iteration, ==, 10);
}

static void
test_labels_slice (void)
{
  g_autofree float *data = make_volume_data ();
  g_autoptr (SvBackend) backend = new_cpu_with_volume (data);
  g_autoptr (GError) error = NULL;
  SvSlicParams p;
  g_autofree gint32 *labels = g_new (gint32, N);
  g_autofree gint32 *slice = g_new (gint32, MAX (NY * NX, MAX (NZ * NX, NZ * NY)));
  const guint shape[3] = { NZ, NY, NX };

  sv_slic_params_init_defaults (&p);
  p.n_segments = 40;
  g_assert_false (sv_backend_get_labels (backend, labels, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
  g_clear_error (&error);
  g_assert_true (sv_backend_run (backend, &p, NULL, NULL, &error));
  g_assert_true (sv_backend_get_labels (backend, labels, &error));

  for (guint z = 0; z < NZ; z++)
    {
      g_assert_true (sv_labels_get_slice (labels, shape, SV_AXIS_XY, z, slice, &error));
      for (guint y = 0; y < NY; y++)
        for (guint x = 0; x < NX; x++)
          g_assert_cmpint (slice[y * NX + x], ==, labels[(z * NY + y) * NX + x]);
    }
  for (guint y = 0; y < NY; y++)
    {
      g_assert_true (sv_labels_get_slice (labels, shape, SV_AXIS_XZ, y, slice, &error));
      for (guint z = 0; z < NZ; z++)
        for (guint x = 0; x < NX; x++)
          g_assert_cmpint (slice[z * NX + x], ==, labels[(z * NY + y) * NX + x]);
    }
  for (guint x = 0; x < NX; x++)
    {
      g_assert_true (sv_labels_get_slice (labels, shape, SV_AXIS_YZ, x, slice, &error));
      for (guint z = 0; z < NZ; z++)
        for (guint y = 0; y < NY; y++)
          g_assert_cmpint (slice[z * NY + y], ==, labels[(z * NY + y) * NX + x]);
    }
  g_assert_false (sv_labels_get_slice (labels, shape, SV_AXIS_XY, NZ, slice, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_clear_error (&error);
  g_assert_false (sv_labels_get_slice (labels, shape, SV_AXIS_YZ, NX, slice, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
}

/* Centres are the mean positions of the final clusters: with connectivity
 * off and the labels of the last assignment, every centre lies inside the
 * volume, dead ones are NaN, and k is K. */
static void
test_get_centres (void)
{
  g_autofree float *data = make_volume_data ();
  g_autoptr (SvBackend) backend = new_cpu_with_volume (data);
  g_autoptr (GError) error = NULL;
  SvRunStats stats;
  SvRunControl control = { .n_threads = 1, .stop_after_iteration = 1 };
  SvSlicParams p;
  g_autofree gint32 *labels = g_new (gint32, N);
  g_autofree float *zyx = NULL;
  gsize k = 0;

  sv_slic_params_init_defaults (&p);
  p.n_segments = 30;
  p.start_label = 0;
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_true (sv_backend_get_centres (backend, NULL, &k, &error));
  g_assert_cmpuint (k, ==, stats.n_clusters);
  zyx = g_new (float, 3 * k);
  g_assert_true (sv_backend_get_centres (backend, zyx, &k, &error));
  g_assert_true (sv_backend_get_labels (backend, labels, &error));

  /* After one iteration the centres are the means of the labels shown. */
  for (gsize c = 0; c < k; c++)
    {
      double sum[3] = { 0, 0, 0 };
      gsize count = 0;
      for (gsize i = 0; i < N; i++)
        if (labels[i] == (gint32)c)
          {
            sum[0] += (double)(i / (NY * NX));
            sum[1] += (double)((i / NX) % NY);
            sum[2] += (double)(i % NX);
            count++;
          }
      if (count == 0)
        g_assert_true (isnan (zyx[3 * c]));
      else
        for (int a = 0; a < 3; a++)
          g_assert_cmpfloat_with_epsilon (zyx[3 * c + a], sum[a] / count, 1e-4);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/backend/registry", test_registry);
  g_test_add_func ("/engine/backend/registry-auto-fallback", test_registry_auto_fallback);
  g_test_add_func ("/engine/backend/cpu/prepare-reused", test_prepare_reused);
  g_test_add_func ("/engine/backend/cpu/stop-after-iteration", test_stop_after_iteration);
  g_test_add_func ("/engine/backend/cpu/cancel-between-iterations", test_cancel_between_iterations);
  g_test_add_func ("/engine/backend/cpu/labels-slice", test_labels_slice);
  g_test_add_func ("/engine/backend/cpu/get-centres", test_get_centres);
  return g_test_run ();
}

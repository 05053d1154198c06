/* Tests of the SLIC pipeline (engine/slic/slic-pipeline.c): the iteration hook,
 * the teaching rule and the fallback from a failing device backend to the
 * CPU reference. */
#define G_LOG_DOMAIN "test-pipeline"

#include <math.h>
#include <string.h>

#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"
#include "supervox/sv-params.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-volume.h"

enum
{
  NZ = 6,
  NY = 20,
  NX = 24,
  N = NZ * NY * NX,
};

/* Blobs with noise: assignments keep changing for several iterations. */
static SvVolume *
make_volume (void)
{
  g_autoptr (GError) error = NULL;
  SvVolume *v = sv_volume_new (NZ, NY, NX, 1, &error);
  GRand *rand = g_rand_new_with_seed (11);

  g_assert_no_error (error);
  for (guint z = 0; z < NZ; z++)
    for (guint y = 0; y < NY; y++)
      for (guint x = 0; x < NX; x++)
        v->data[((gsize)z * NY + y) * NX + x]
            = (float)(sin (x * 0.7) * cos (y * 0.45) + 0.3 * z + 0.4 * g_rand_double (rand));
  g_rand_free (rand);
  return v;
}

static void
params_for_test (SvSlicParams *p)
{
  sv_slic_params_init_defaults (p);
  p->n_segments = 24;
  p->compactness = 0.2;
  p->max_num_iter = 6;
  p->slic_zero = TRUE;
}

/* Labels and centres of a CPU run of `volume` with control's teaching step. */
static void
run_cpu (const SvVolume *volume, const SvSlicParams *p, int stop_after, gint32 *labels,
         float *centres, gsize *k)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", &error);
  SvRunControl control = { .n_threads = 2, .stop_after_iteration = stop_after };

  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, volume, NULL, &error));
  g_assert_true (sv_backend_run (backend, p, &control, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sv_backend_get_labels (backend, labels, &error));
  if (centres != NULL)
    g_assert_true (sv_backend_get_centres (backend, centres, k, &error));
  g_assert_no_error (error);
}

/* ---- the iteration hook ---- */

typedef struct
{
  guint calls;
  guint last;
  guint n_total;
  gint32 *labels[8]; /* after iteration i + 1 */
  float *centres[8];
  gsize k[8];
} Snapshots;

static void
snapshot_cb (const SvIterationView *view, guint iteration, guint n_iterations, gpointer user_data)
{
  Snapshots *s = user_data;
  g_autoptr (GError) error = NULL;

  s->calls++;
  g_assert_cmpuint (iteration, ==, s->last + 1);
  s->last = iteration;
  s->n_total = n_iterations;
  g_assert_cmpuint (iteration, <=, G_N_ELEMENTS (s->labels));
  s->labels[iteration - 1] = g_new (gint32, N);
  g_assert_true (sv_iteration_view_get_labels (view, s->labels[iteration - 1], &error));
  g_assert_no_error (error);
  g_assert_true (sv_iteration_view_get_centres (view, NULL, &s->k[iteration - 1], &error));
  s->centres[iteration - 1] = g_new (float, s->k[iteration - 1] * 3);
  g_assert_true (sv_iteration_view_get_centres (view, s->centres[iteration - 1],
                                                &s->k[iteration - 1], &error));
  g_assert_no_error (error);
}

/* What the hook reads after iteration n is, label for label and centre for
 * centre, what a run stopped after n iterations gives. */
static void
test_iteration_hook_matches_stopped_run (void)
{
  g_autoptr (SvVolume) v = make_volume ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", &error);
  g_autofree gint32 *final = g_new (gint32, N);
  g_autofree gint32 *full = g_new (gint32, N);
  Snapshots s = { 0 };
  SvRunControl control = { .n_threads = 2, .stop_after_iteration = -1 };
  SvRunStats stats;
  SvSlicParams p;
  guint n_changed = 0;

  params_for_test (&p);
  control.iteration = snapshot_cb;
  control.user_data = &s;
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (s.calls, ==, (guint)p.max_num_iter);
  g_assert_cmpuint (s.n_total, ==, (guint)p.max_num_iter);

  /* Watching does not change the run. */
  g_assert_true (sv_backend_get_labels (backend, final, &error));
  run_cpu (v, &p, -1, full, NULL, NULL);
  g_assert_cmpmem (final, N * sizeof (gint32), full, N * sizeof (gint32));

  for (guint i = 0; i < s.calls; i++)
    {
      g_autofree gint32 *stopped = g_new (gint32, N);
      g_autofree float *centres = g_new (float, stats.n_clusters * 3);
      gsize k = 0;

      run_cpu (v, &p, (int)i + 1, stopped, centres, &k);
      g_assert_cmpmem (s.labels[i], N * sizeof (gint32), stopped, N * sizeof (gint32));
      g_assert_cmpuint (s.k[i], ==, k);
      for (gsize j = 0; j < k * 3; j++)
        g_assert_true (centres[j] == s.centres[i][j]
                       || (isnan (centres[j]) && isnan (s.centres[i][j])));
      if (i > 0)
        n_changed += memcmp (s.labels[i], s.labels[i - 1], N * sizeof (gint32)) != 0;
    }
  /* The snapshots follow the run rather than repeat one state. */
  g_assert_cmpuint (n_changed, >, 0);
  for (guint i = 0; i < s.calls; i++)
    {
      g_free (s.labels[i]);
      g_free (s.centres[i]);
    }
}

/* ---- the teaching rule ---- */

static void
test_teaching_rule (void)
{
  g_autoptr (SvVolume) v = make_volume ();
  g_autofree gint32 *taught = g_new (gint32, N);
  g_autofree gint32 *plain = g_new (gint32, N);
  SvSlicParams p, t;

  params_for_test (&p);
  sv_slic_params_apply_teaching (&p, -1, &t);
  {
    /* Through the JSON: a byte compare would also compare padding. */
    g_autofree char *got = sv_slic_params_to_json (&t);
    g_autofree char *want = sv_slic_params_to_json (&p);
    g_assert_cmpstr (got, ==, want);
  }
  sv_slic_params_apply_teaching (&p, 2, &t);
  g_assert_cmpint (t.max_num_iter, ==, 2);
  g_assert_false (t.enforce_connectivity);
  g_assert_cmpfloat (t.compactness, ==, p.compactness);
  sv_slic_params_apply_teaching (&p, 40, &t);
  g_assert_cmpint (t.max_num_iter, ==, p.max_num_iter);
  g_assert_false (t.enforce_connectivity);

  /* A teaching step is the run with the rule's parameters: the same
   * labels, and they are index + start_label (no connectivity). */
  sv_slic_params_apply_teaching (&p, 2, &t);
  run_cpu (v, &p, 2, taught, NULL, NULL);
  run_cpu (v, &t, -1, plain, NULL, NULL);
  g_assert_cmpmem (taught, N * sizeof (gint32), plain, N * sizeof (gint32));
  p.enforce_connectivity = TRUE;
  run_cpu (v, &p, -1, plain, NULL, NULL);
  g_assert_true (memcmp (taught, plain, N * sizeof (gint32)) != 0);
}

/* ---- the fallback to the CPU ---- */

/* A device backend that fails at the stage and with the error a test
 * chooses. */
typedef enum
{
  FAIL_SET_VOLUME,
  FAIL_PREPARE,
} FailAt;

static FailAt fail_at;
static int fail_code;
static guint fake_runs;

static gboolean
fake_create (SvBackend *backend, GError **error)
{
  return TRUE;
}

static void
fake_destroy (SvBackend *backend)
{
}

static gboolean
fake_set_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask, GError **error)
{
  if (fail_at != FAIL_SET_VOLUME)
    return TRUE;
  g_set_error_literal (error, SV_ENGINE_ERROR, fail_code, "device says no (set_volume)");
  return FALSE;
}

static const SvPrepared *
fake_prepare (SvBackend *backend, const SvSlicParams *params, int n_threads, gboolean *reused,
              GError **error)
{
  fake_runs++;
  g_set_error_literal (error, SV_ENGINE_ERROR, fail_code, "device says no (prepare)");
  return NULL;
}

static const SvBackendClass fake_device_class = {
  .name = "fake-device",
  .is_device = TRUE,
  .create = fake_create,
  .destroy = fake_destroy,
  .set_volume = fake_set_volume,
  .prepare = fake_prepare,
};

typedef struct
{
  FailAt at;
  int code;
  gboolean falls_back;
} FallbackCase;

/* `v` in memory on `backend`, planned as auto plans a device (a device
 * failure falls back to the CPU), keeping a volume the backend holds. */
static gboolean
execute_on (SvBackend *backend, const SvVolume *v, const SvSlicParams *p,
            const SvRunControl *control, SvRunReport *report, GError **error)
{
  SvRunPlan plan = { .mode = SV_RUN_IN_MEMORY, .n_workers = 1 };
  SvRunJobSpec spec = { .plan = &plan, .params = p, .volume = v, .backend = backend,
                        .control = control, .reuse_loaded = TRUE };

  plan.backend = sv_backend_get_class (backend);
  plan.on_device = sv_backend_class_is_device (plan.backend);
  plan.falls_back = plan.on_device;
  return sv_run_execute (&spec, report, error);
}

static void
test_fallback (gconstpointer data)
{
  const FallbackCase *c = data;
  g_autoptr (SvVolume) v = make_volume ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) device = sv_backend_new ("fake-device", &error);
  g_autofree gint32 *labels = g_new (gint32, N);
  g_autofree gint32 *reference = g_new (gint32, N);
  SvRunReport report;
  SvSlicParams p;
  gboolean ok;

  g_assert_no_error (error);
  g_assert_false (sv_backend_is_reference (device));
  params_for_test (&p);
  fail_at = c->at;
  fail_code = c->code;
  ok = execute_on (device, v, &p, NULL, &report, &error);
  if (!c->falls_back)
    {
      /* Bad data would fail on the CPU the same way: the device's error. */
      g_assert_false (ok);
      g_assert_error (error, SV_ENGINE_ERROR, c->code);
      g_assert_null (report.own_backend);
      g_assert_null (report.device_error);
      sv_run_report_clear (&report);
      return;
    }
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_nonnull (report.own_backend);
  g_assert_true (sv_backend_is_reference (report.own_backend));
  g_assert_true (report.ran_on == sv_backend_cpu_class ());
  g_assert_error (report.device_error, SV_ENGINE_ERROR, c->code);
  g_assert_cmpuint (report.stats.iterations, ==, (guint)p.max_num_iter);
  g_assert_true (sv_backend_get_labels (report.own_backend, labels, &error));
  run_cpu (v, &p, -1, reference, NULL, NULL);
  g_assert_cmpmem (labels, N * sizeof (gint32), reference, N * sizeof (gint32));
  sv_run_report_clear (&report);
}

/* A cancelled run is not run again on the CPU. */
static void
test_fallback_not_after_cancel (void)
{
  g_autoptr (SvVolume) v = make_volume ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) device = sv_backend_new ("fake-device", &error);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  SvRunControl control = { .stop_after_iteration = -1, .cancellable = cancellable };
  SvRunReport report;
  SvSlicParams p;

  params_for_test (&p);
  fail_at = FAIL_PREPARE;
  fail_code = SV_ENGINE_ERROR_BACKEND;
  g_cancellable_cancel (cancellable);
  g_assert_false (execute_on (device, v, &p, &control, &report, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (report.own_backend);
  g_assert_null (report.device_error);
}

/* A volume loaded once is not uploaded again for each run. */
static void
test_fallback_keeps_loaded_volume (void)
{
  g_autoptr (SvVolume) v = make_volume ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", &error);
  SvRunReport report;
  SvRunStats stats;
  SvSlicParams p;

  params_for_test (&p);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_true (sv_backend_run (backend, &p, NULL, &stats, &error));
  g_assert_false (stats.prepare_reused);
  /* set_volume would drop the prepared image. */
  g_assert_true (execute_on (backend, v, &p, NULL, &report, &error));
  g_assert_no_error (error);
  g_assert_null (report.own_backend);
  g_assert_true (report.stats.prepare_reused);
}

int
main (int argc, char **argv)
{
  static const FallbackCase cases[] = {
    { FAIL_PREPARE, SV_ENGINE_ERROR_NO_MEMORY, TRUE },
    { FAIL_PREPARE, SV_ENGINE_ERROR_BACKEND, TRUE },
    { FAIL_SET_VOLUME, SV_ENGINE_ERROR_NO_MEMORY, TRUE },
    { FAIL_PREPARE, SV_ENGINE_ERROR_INVALID_DATA, FALSE },
    { FAIL_PREPARE, SV_ENGINE_ERROR_INVALID_PARAM, FALSE },
  };
  static const char *const names[] = {
    "/engine/pipeline/fallback/out-of-memory-runs-on-cpu",
    "/engine/pipeline/fallback/device-error-runs-on-cpu",
    "/engine/pipeline/fallback/upload-failure-runs-on-cpu",
    "/engine/pipeline/fallback/bad-data-is-not-retried",
    "/engine/pipeline/fallback/bad-params-are-not-retried",
  };

  g_test_init (&argc, &argv, NULL);
  sv_backend_register (&fake_device_class);
  g_test_add_func ("/engine/pipeline/iteration-hook/matches-stopped-run",
                   test_iteration_hook_matches_stopped_run);
  g_test_add_func ("/engine/pipeline/teaching-rule", test_teaching_rule);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    g_test_add_data_func (names[i], &cases[i], test_fallback);
  g_test_add_func ("/engine/pipeline/fallback/not-after-cancel", test_fallback_not_after_cancel);
  g_test_add_func ("/engine/pipeline/fallback/keeps-loaded-volume",
                   test_fallback_keeps_loaded_volume);
  return g_test_run ();
}

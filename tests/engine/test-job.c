/* Tests of the engine's worker thread (engine/job/job.c). */
#define G_LOG_DOMAIN "test-job"

#include <math.h>
#include <string.h>

#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"
#include "supervox/sv-job.h"
#include "preview.h"

/* ---- a backend under the test's control ----
 * "test-gate" runs max_num_iter iterations and stops at iteration 1 until the
 * test opens the gate (or, when gate_honours_cancel, until cancelled), so the
 * test decides exactly when a run is in flight. Its labels encode the
 * request: every voxel holds (int) compactness. */

static GMutex gate_lock;
static GCond gate_cond;
static gboolean gate_open;
static gboolean gate_honours_cancel;
static guint gate_runs_started;
static guint gate_runs_cancelled;
static guint gate_waiting;                /* runs blocked at the gate right now */
static double gate_seconds_per_iteration; /* what a run reports it took per iteration */

typedef struct
{
  SvPrepared image; /* the shape; no data */
  gint32 value;
  gint64 clock_us;  /* simulated time: gate_seconds_per_iteration per iteration */
} GateBackend;

static GateBackend *
gate (SvBackend *backend)
{
  return sv_backend_get_priv (backend);
}

static gboolean
gate_create (SvBackend *backend, GError **error)
{
  sv_backend_set_priv (backend, g_new0 (GateBackend, 1));
  return TRUE;
}

static void
gate_destroy (SvBackend *backend)
{
  g_free (gate (backend));
}

static gboolean
gate_set_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask, GError **error)
{
  GateBackend *b = gate (backend);
  b->image.nz = volume->nz;
  b->image.ny = volume->ny;
  b->image.nx = volume->nx;
  b->image.nc = volume->nc;
  b->image.max_abs = 1.0f;
  return TRUE;
}

static gint64
gate_clock (SvBackend *backend)
{
  return gate (backend)->clock_us;
}

static const SvPrepared *
gate_prepare (SvBackend *backend, const SvSlicParams *params, int n_threads, gboolean *reused,
              GError **error)
{
  return &gate (backend)->image;
}

static gboolean
gate_start (SvBackend *backend, const SvSlicRun *run, GError **error)
{
  g_mutex_lock (&gate_lock);
  gate_runs_started++;
  g_mutex_unlock (&gate_lock);
  return TRUE;
}

static gboolean
gate_begin_pass (SvBackend *backend, const SvSlicRun *run, GError **error)
{
  return TRUE;
}

static void
gate_cancelled_cb (GCancellable *cancellable, gpointer data)
{
  g_mutex_lock (&gate_lock);
  g_cond_broadcast (&gate_cond);
  g_mutex_unlock (&gate_lock);
}

/* The first iteration of every run waits at the gate. */
static gboolean
gate_iterate (SvBackend *backend, SvSlicRun *run, GError **error)
{
  GCancellable *cancellable = run->cancellable;
  gulong handler = 0;

  gate (backend)->clock_us += (gint64)(gate_seconds_per_iteration * G_USEC_PER_SEC);
  if (run->iteration > 0)
    return TRUE;
  if (cancellable)
    handler = g_cancellable_connect (cancellable, G_CALLBACK (gate_cancelled_cb), NULL, NULL);
  g_mutex_lock (&gate_lock);
  gate_waiting++;
  g_cond_broadcast (&gate_cond);
  while (!gate_open && !(gate_honours_cancel && g_cancellable_is_cancelled (cancellable)))
    g_cond_wait (&gate_cond, &gate_lock);
  gate_waiting--;
  g_mutex_unlock (&gate_lock);
  g_cancellable_disconnect (cancellable, handler);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    {
      g_mutex_lock (&gate_lock);
      gate_runs_cancelled++;
      g_mutex_unlock (&gate_lock);
      return FALSE;
    }
  return TRUE;
}

/* The labels encode the request; four centres at 0, 1, 2, … */
static gboolean
gate_assignment_labels (SvBackend *backend, const SvSlicRun *run, gboolean fill, GError **error)
{
  gate (backend)->value = (gint32)run->params->compactness;
  return TRUE;
}

static gboolean
gate_count (SvBackend *backend, const SvSlicRun *run, gint64 *n_labels, GError **error)
{
  *n_labels = 1;
  return TRUE;
}

static gboolean
gate_connect (SvBackend *backend, const SvSlicRun *run, gint64 min_size, gint64 max_size,
              gint64 *n_labels, GError **error)
{
  *n_labels = 1;
  return TRUE;
}

static gboolean
gate_read_clusters (SvBackend *backend, SvSlicRun *run, GError **error)
{
  const gsize nf = 3 + run->clusters.nc;
  for (gsize k = 0; k < run->clusters.k; k++)
    {
      run->clusters.alive[k] = 1;
      for (int a = 0; a < 3; a++)
        run->clusters.centres[k * nf + a] = (float)(3 * k + a);
    }
  return TRUE;
}

static gboolean
gate_get_labels (SvBackend *backend, gint32 *labels, GError **error)
{
  GateBackend *b = gate (backend);
  for (gsize i = 0; i < (gsize)b->image.nz * b->image.ny * b->image.nx; i++)
    labels[i] = b->value;
  return TRUE;
}

static gboolean
gate_snapshot (SvBackend *backend, const SvSlicRun *run, gint32 *labels, GError **error)
{
  return gate_get_labels (backend, labels, error);
}

static const SvBackendClass gate_class = {
  .name = "test-gate",
  .create = gate_create,
  .destroy = gate_destroy,
  .set_volume = gate_set_volume,
  .prepare = gate_prepare,
  .start = gate_start,
  .begin_pass = gate_begin_pass,
  .iterate = gate_iterate,
  .assignment_labels = gate_assignment_labels,
  .connect = gate_connect,
  .count_labels = gate_count,
  .read_clusters = gate_read_clusters,
  .snapshot_labels = gate_snapshot,
  .get_labels = gate_get_labels,
  .clock = gate_clock,
};

/* A "cuda" backend that always fails its run, as an out-of-memory GPU would. */
static const SvPrepared *
broken_prepare (SvBackend *backend, const SvSlicParams *params, int n_threads, gboolean *reused,
                GError **error)
{
  g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                       "out of device memory (test)");
  return NULL;
}

static const SvBackendClass broken_cuda_class = {
  .name = "cuda",
  .is_device = TRUE,
  .create = gate_create,
  .destroy = gate_destroy,
  .set_volume = gate_set_volume,
  .prepare = broken_prepare,
  .get_labels = gate_get_labels,
};

static void
gate_reset (gboolean honours_cancel)
{
  g_mutex_lock (&gate_lock);
  gate_open = FALSE;
  gate_honours_cancel = honours_cancel;
  gate_runs_started = 0;
  gate_runs_cancelled = 0;
  gate_seconds_per_iteration = 0;
  g_mutex_unlock (&gate_lock);
}

static void
gate_set_open (void)
{
  g_mutex_lock (&gate_lock);
  gate_open = TRUE;
  g_cond_broadcast (&gate_cond);
  g_mutex_unlock (&gate_lock);
}

static void
gate_wait_for_waiting (void)
{
  g_mutex_lock (&gate_lock);
  while (gate_waiting == 0)
    g_cond_wait (&gate_cond, &gate_lock);
  g_mutex_unlock (&gate_lock);
}

/* ---- what the callbacks saw ---- */

typedef struct
{
  GThread *main_thread;
  GPtrArray *results; /* SvJobResult, ref'd */
  guint n_progress;
  guint n_errors;
  guint64 last_progress_generation;
  gboolean off_main_thread;
} Seen;

static void
seen_progress (guint64 generation, SvStage stage, guint i, guint n, gpointer user_data)
{
  Seen *s = user_data;
  s->n_progress++;
  s->last_progress_generation = generation;
  if (g_thread_self () != s->main_thread)
    s->off_main_thread = TRUE;
}

static void
seen_result (SvJobResult *result, gpointer user_data)
{
  Seen *s = user_data;
  g_ptr_array_add (s->results, sv_job_result_ref (result));
  if (g_thread_self () != s->main_thread)
    s->off_main_thread = TRUE;
}

static void
seen_error (guint64 generation, const GError *error, gpointer user_data)
{
  Seen *s = user_data;
  g_test_message ("error for generation %" G_GUINT64_FORMAT ": %s", generation, error->message);
  s->n_errors++;
}

static const SvJobCallbacks seen_callbacks = { seen_progress, seen_result, seen_error };

static void
seen_init (Seen *s)
{
  memset (s, 0, sizeof *s);
  s->main_thread = g_thread_self ();
  s->results = g_ptr_array_new_with_free_func ((GDestroyNotify)sv_job_result_unref);
}

static void
seen_clear (Seen *s)
{
  g_ptr_array_unref (s->results);
}

static SvJobResult *
seen_last (Seen *s)
{
  return s->results->len ? g_ptr_array_index (s->results, s->results->len - 1) : NULL;
}

/* Runs the main context until a result of `generation` arrived. */
static SvJobResult *
wait_for_generation (Seen *s, guint64 generation)
{
  while (!seen_last (s) || seen_last (s)->generation < generation)
    g_main_context_iteration (NULL, TRUE);
  return seen_last (s);
}

/* Runs the main context until the job is idle and nothing is queued. */
static void
drain (SvJob *job)
{
  while (sv_job_is_busy (job))
    g_main_context_iteration (NULL, FALSE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* A small volume with structure: bright and dark blocks plus a ramp. */
static SvVolume *
test_volume (guint nz, guint ny, guint nx)
{
  g_autoptr (GError) error = NULL;
  SvVolume *v = sv_volume_new (nz, ny, nx, 1, &error);

  g_assert_no_error (error);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        v->data[((gsize)z * ny + y) * nx + x]
            = (float)((((x / 8) + (y / 8) + (z / 4)) % 2) * 0.6 + 0.3 * x / nx + 0.05 * sin (y));
  return v;
}

static gint32 *
direct_labels (const SvVolume *v, const SvSlicParams *params)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", &error);
  SvRunControl control = { 0 };
  SvRunStats stats;
  gint32 *labels = g_new (gint32, sv_volume_n_voxels (v));

  control.stop_after_iteration = -1;
  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_true (sv_backend_run (backend, params, &control, &stats, &error));
  g_assert_true (sv_backend_get_labels (backend, labels, &error));
  g_assert_no_error (error);
  return labels;
}

/* A run stopped after `step` iterations (teaching mode): labels and centres. */
static gint32 *
teaching_labels (const SvVolume *v, const SvSlicParams *params, int step, float **centres,
                 gsize *k)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", &error);
  SvRunControl control = { 0 };
  SvRunStats stats;
  gint32 *labels = g_new (gint32, sv_volume_n_voxels (v));

  control.stop_after_iteration = step;
  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_true (sv_backend_run (backend, params, &control, &stats, &error));
  g_assert_true (sv_backend_get_labels (backend, labels, &error));
  g_assert_true (sv_backend_get_centres (backend, NULL, k, &error));
  *centres = g_new0 (float, MAX (*k, 1) * 3);
  g_assert_true (sv_backend_get_centres (backend, *centres, k, &error));
  g_assert_no_error (error);
  return labels;
}

/* Fails unless `result` holds the labels and centres of a run stopped
 * after `step` iterations. */
static void
assert_step_result (const SvVolume *v, const SvSlicParams *params, int step,
                    const SvJobResult *result)
{
  g_autofree gint32 *expected = NULL;
  g_autofree float *centres = NULL;
  gsize k = 0;

  expected = teaching_labels (v, params, step, &centres, &k);
  g_assert_cmpmem (sv_job_result_get_labels (result, NULL)->data,
                   sv_volume_n_voxels (v) * sizeof (gint32), expected,
                   sv_volume_n_voxels (v) * sizeof (gint32));
  g_assert_cmpuint (result->n_centres, ==, k);
  g_assert_cmpmem (result->centres, k * 3 * sizeof (float), centres, k * 3 * sizeof (float));
}

/* Teaching steps: the first step's run keeps every iteration, and the
 * steps after it are copies of those snapshots, each equal to a run
 * stopped at that step; new parameters compute again. */
static void
test_teaching_steps_from_snapshots (void)
{
  g_autoptr (SvVolume) v = test_volume (8, 32, 40);
  const int steps[] = { 3, 1, 5, 2, 6, 9 };
  SvJobRequest request;
  Seen s;
  SvJob *job;

  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cpu", sizeof request.backend);
  request.params.n_segments = 20;
  request.params.compactness = 0.3;
  request.params.max_num_iter = 6;
  for (guint i = 0; i <= G_N_ELEMENTS (steps); i++)
    {
      const gboolean changed = i == G_N_ELEMENTS (steps);
      const int step = changed ? 2 : steps[i];
      SvJobResult *result;

      if (changed)
        request.params.compactness = 0.5;
      request.stop_after_iteration = step;
      request.generation = i + 1;
      sv_job_submit (job, &request);
      result = wait_for_generation (&s, i + 1);
      drain (job);
      g_assert_cmpint (result->generation, ==, i + 1);
      g_assert_cmpint (result->from_snapshot, ==, i > 0 && !changed);
      g_assert_cmpint (result->stop_after_iteration, ==, step);
      g_assert_cmpuint (result->stats.iterations, ==, MIN (step, 6));
      assert_step_result (v, &request.params, step, result);
    }
  g_assert_cmpuint (s.n_errors, ==, 0);
  sv_job_free (job);
  seen_clear (&s);
}

/* A long exact run shows its iterations as they complete: each is the
 * labels a run stopped there gives, and the final result follows. */
static void
test_live_iterations (void)
{
  g_autoptr (SvVolume) v = test_volume (8, 32, 40);
  g_autofree gint32 *final = NULL;
  SvJobRequest request;
  SvJobResult *result;
  Seen s;
  SvJob *job;

  g_setenv ("SV_JOB_LIVE_ITERATIONS", "always", TRUE);
  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cpu", sizeof request.backend);
  request.params.n_segments = 20;
  request.params.compactness = 0.3;
  request.params.max_num_iter = 5;
  request.generation = 1;
  sv_job_submit (job, &request);
  result = wait_for_generation (&s, 1);
  while (result->in_progress_iteration > 0)
    {
      g_main_context_iteration (NULL, TRUE);
      result = seen_last (&s);
    }
  drain (job);
  g_unsetenv ("SV_JOB_LIVE_ITERATIONS");

  /* Iterations 1 … 4 as they completed, then the final result. */
  g_assert_cmpuint (s.results->len, ==, 5);
  for (guint i = 0; i < 4; i++)
    {
      SvJobResult *r = g_ptr_array_index (s.results, i);

      g_assert_cmpuint (r->generation, ==, 1);
      g_assert_cmpuint (r->in_progress_iteration, ==, i + 1);
      g_assert_false (sv_job_result_is_final (r));
      assert_step_result (v, &request.params, (int)i + 1, r);
    }
  result = g_ptr_array_index (s.results, 4);
  g_assert_true (sv_job_result_is_final (result));
  final = direct_labels (v, &request.params);
  g_assert_cmpmem (sv_job_result_get_labels (result, NULL)->data,
                   sv_volume_n_voxels (v) * sizeof (gint32), final,
                   sv_volume_n_voxels (v) * sizeof (gint32));
  g_assert_cmpuint (s.n_errors, ==, 0);
  sv_job_free (job);
  seen_clear (&s);
}

static void
test_results_on_main_context (void)
{
  g_autoptr (SvVolume) v = test_volume (8, 32, 32);
  g_autofree gint32 *expected = NULL;
  SvJobRequest request;
  SvJobResult *result;
  Seen s;
  SvJob *job;

  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cpu", sizeof request.backend);
  request.params.n_segments = 16;
  request.generation = 1;
  sv_job_submit (job, &request);

  result = wait_for_generation (&s, 1);
  g_assert_false (s.off_main_thread);
  g_assert_cmpuint (s.n_progress, >, 0);
  g_assert_cmpstr (result->backend_name, ==, "cpu");
  g_assert_null (result->fallback_message);
  g_assert_cmpuint (sv_job_result_get_labels (result, NULL)->nz, ==, 8);
  g_assert_cmpuint (result->n_centres, ==, result->stats.n_clusters);
  g_assert_cmpuint (result->stats.iterations, ==, 10);

  expected = direct_labels (v, &request.params);
  g_assert_cmpmem (sv_job_result_get_labels (result, NULL)->data,
                   sv_volume_n_voxels (v) * sizeof (gint32), expected,
                   sv_volume_n_voxels (v) * sizeof (gint32));

  sv_job_free (job);
  seen_clear (&s);
}

static void
test_newest_wins (void)
{
  g_autoptr (SvVolume) v = test_volume (2, 8, 8);
  SvJobRequest request;
  SvJobResult *result;
  Seen s;
  SvJob *job;

  gate_reset (FALSE);
  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "test-gate", sizeof request.backend);

  /* Generation 1 is running (held at the gate); 2 and 3 arrive meanwhile. */
  request.generation = 1;
  request.params.compactness = 1;
  sv_job_submit (job, &request);
  gate_wait_for_waiting ();
  request.generation = 2;
  request.params.compactness = 2;
  sv_job_submit (job, &request);
  request.generation = 3;
  request.params.compactness = 3;
  sv_job_submit (job, &request);
  gate_set_open ();

  result = wait_for_generation (&s, 3);
  drain (job);
  /* 1 was cancelled at its iteration boundary, 2 never ran, 3 delivered. */
  g_assert_cmpuint (gate_runs_started, ==, 2);
  g_assert_cmpuint (gate_runs_cancelled, ==, 1);
  g_assert_cmpuint (s.results->len, ==, 1);
  g_assert_cmpuint (result->generation, ==, 3);
  g_assert_cmpint (sv_job_result_get_labels (result, NULL)->data[0], ==, 3);
  g_assert_cmpuint (result->n_centres, ==, result->stats.n_clusters);
  g_assert_cmpfloat (result->centres[5], ==, 5.0f);

  sv_job_free (job);
  seen_clear (&s);
}

static void
test_cancellation (void)
{
  g_autoptr (SvVolume) v = test_volume (2, 8, 8);
  SvJobRequest request;
  Seen s;
  SvJob *job;

  gate_reset (TRUE);
  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "test-gate", sizeof request.backend);
  request.generation = 1;
  request.params.max_num_iter = 50;
  sv_job_submit (job, &request);
  gate_wait_for_waiting ();
  g_assert_true (sv_job_is_busy (job));

  sv_job_cancel (job);
  drain (job);
  g_assert_cmpuint (gate_runs_started, ==, 1);
  g_assert_cmpuint (gate_runs_cancelled, ==, 1);
  g_assert_cmpuint (s.results->len, ==, 0);
  g_assert_cmpuint (s.n_errors, ==, 0);

  /* The job still works after a cancellation. */
  gate_set_open ();
  request.generation = 2;
  request.params.compactness = 7;
  sv_job_submit (job, &request);
  g_assert_cmpint (sv_job_result_get_labels (wait_for_generation (&s, 2), NULL)->data[0], ==, 7);

  sv_job_free (job);
  seen_clear (&s);
}

static void
test_free_drops_queued (void)
{
  g_autoptr (SvVolume) v = test_volume (2, 8, 8);
  SvJobRequest request;
  Seen s;
  SvJob *job;

  gate_reset (FALSE);
  gate_set_open ();
  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "test-gate", sizeof request.backend);
  request.generation = 1;
  sv_job_submit (job, &request);
  /* Wait without running the main context, so the deliveries stay queued. */
  while (sv_job_is_busy (job))
    g_thread_yield ();
  sv_job_free (job);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (s.results->len, ==, 0);
  g_assert_cmpuint (s.n_progress, ==, 0);
  seen_clear (&s);
}

static void
test_rapid_submits (void)
{
  g_autoptr (SvVolume) v = test_volume (8, 32, 32);
  g_autofree gint32 *expected = NULL;
  SvJobRequest request;
  SvJobResult *result;
  Seen s;
  SvJob *job;

  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cpu", sizeof request.backend);
  for (guint i = 1; i <= 200; i++)
    {
      request.generation = i;
      request.params.n_segments = 8 + i % 40;
      request.params.compactness = 0.05 * i;
      sv_job_submit (job, &request);
      /* Let some deliveries through now and then, as a live UI would. */
      if (i % 10 == 0)
        g_main_context_iteration (NULL, FALSE);
    }
  result = wait_for_generation (&s, 200);
  drain (job);

  g_assert_cmpuint (result->generation, ==, 200);
  g_assert_cmpfloat (result->params.compactness, ==, request.params.compactness);
  g_assert_cmpint (result->params.n_segments, ==, request.params.n_segments);
  /* Results are delivered in increasing generation order. */
  for (guint i = 1; i < s.results->len; i++)
    g_assert_cmpuint (((SvJobResult *)g_ptr_array_index (s.results, i - 1))->generation, <,
                      ((SvJobResult *)g_ptr_array_index (s.results, i))->generation);
  g_test_message ("200 submits gave %u delivered results", s.results->len);

  expected = direct_labels (v, &request.params);
  g_assert_cmpmem (sv_job_result_get_labels (result, NULL)->data,
                   sv_volume_n_voxels (v) * sizeof (gint32), expected,
                   sv_volume_n_voxels (v) * sizeof (gint32));

  sv_job_free (job);
  seen_clear (&s);
}

static void
test_cuda_failure_falls_back (void)
{
  g_autoptr (SvVolume) v = test_volume (4, 16, 16);
  g_autofree gint32 *expected = NULL;
  SvJobRequest request;
  SvJobResult *result;
  Seen s;
  SvJob *job;

  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cuda", sizeof request.backend);
  request.params.n_segments = 8;
  request.generation = 1;
  sv_job_submit (job, &request);
  result = wait_for_generation (&s, 1);
  g_assert_cmpstr (result->backend_name, ==, "cpu");
  g_assert_nonnull (result->fallback_message);
  g_assert_nonnull (strstr (result->fallback_message, "out of device memory"));
  expected = direct_labels (v, &request.params);
  g_assert_cmpmem (sv_job_result_get_labels (result, NULL)->data,
                   sv_volume_n_voxels (v) * sizeof (gint32), expected,
                   sv_volume_n_voxels (v) * sizeof (gint32));

  /* Told once: the next run goes to the CPU without a new message. */
  request.generation = 2;
  request.params.compactness = 3;
  sv_job_submit (job, &request);
  result = wait_for_generation (&s, 2);
  g_assert_cmpstr (result->backend_name, ==, "cpu");
  g_assert_null (result->fallback_message);
  g_assert_cmpuint (s.n_errors, ==, 0);

  sv_job_free (job);
  seen_clear (&s);
}

/* Once a run has been timed, a run that the timings say is about to end
 * is not cancelled by a newer request: both results arrive, in order. A run
 * timed as slow is cancelled as before. */
static void
test_finishing_run_is_kept (gconstpointer data)
{
  gboolean slow = GPOINTER_TO_INT (data);
  g_autoptr (SvVolume) v = test_volume (2, 8, 8);
  SvJobRequest request;
  Seen s;
  SvJob *job;

  gate_reset (FALSE);
  gate_seconds_per_iteration = slow ? 30.0 : 0.0;
  gate_set_open ();
  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "test-gate", sizeof request.backend);
  request.params.max_num_iter = 4;
  request.generation = 1;
  request.params.compactness = 1;
  sv_job_submit (job, &request);
  wait_for_generation (&s, 1);
  drain (job);
  g_assert_cmpfloat (sv_job_estimate_seconds (job, &request), >=, slow ? 120.0 : 0.0);
  g_assert_cmpfloat (sv_job_estimate_seconds (job, &request), <, slow ? 121.0 : 0.035);

  /* Generation 2 is held at iteration 1 of 4; 3 arrives meanwhile. */
  g_mutex_lock (&gate_lock);
  gate_open = FALSE;
  g_mutex_unlock (&gate_lock);
  gate_honours_cancel = TRUE;
  request.generation = 2;
  request.params.compactness = 2;
  sv_job_submit (job, &request);
  gate_wait_for_waiting ();
  g_assert_cmpfloat (sv_job_get_seconds_left (job), >=, 0.0);
  request.generation = 3;
  request.params.compactness = 3;
  sv_job_submit (job, &request);
  gate_set_open ();
  wait_for_generation (&s, 3);
  drain (job);

  g_assert_cmpuint (gate_runs_cancelled, ==, slow ? 1 : 0);
  g_assert_cmpuint (s.results->len, ==, slow ? 2 : 3);
  if (!slow)
    g_assert_cmpint (
        sv_job_result_get_labels (((SvJobResult *)g_ptr_array_index (s.results, 1)), NULL)->data[0],
        ==, 2);
  g_assert_cmpint (sv_job_result_get_labels (seen_last (&s), NULL)->data[0], ==, 3);
  g_assert_cmpfloat (sv_job_get_seconds_left (job), <, 0.0);
  sv_job_free (job);
  seen_clear (&s);
}

/* Stop: a result the worker finished but the main loop has not delivered
 * yet is dropped too, so the labels on screen stay as they were. */
static void
test_cancel_drops_queued_result (void)
{
  g_autoptr (SvVolume) v = test_volume (4, 16, 16);
  SvJobRequest request;
  Seen s;
  SvJob *job;

  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cpu", sizeof request.backend);
  request.params.n_segments = 8;
  request.generation = 1;
  sv_job_submit (job, &request);
  /* Finished on the worker, its result queued on the main context. */
  while (sv_job_is_busy (job))
    g_thread_yield ();
  sv_job_cancel (job);
  drain (job);
  g_assert_cmpuint (s.results->len, ==, 0);
  g_assert_cmpuint (s.n_errors, ==, 0);

  request.generation = 2;
  sv_job_submit (job, &request);
  g_assert_cmpuint (wait_for_generation (&s, 2)->generation, ==, 2);
  sv_job_free (job);
  seen_clear (&s);
}

/* A preview is SLIC on the downsampled volume with translated parameters,
 * its labels repeated over each block: exactly what a direct run gives. */
static void
test_preview_matches_direct_run (void)
{
  g_autoptr (SvVolume) v = test_volume (8, 32, 40);
  g_autoptr (SvVolume) small = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree gint32 *direct = NULL;
  g_autofree gint32 *expected = NULL;
  SvSlicParams small_params;
  SvJobRequest request;
  SvJobResult *result;
  guint small_shape[3];
  const guint shape[3] = { 8, 32, 40 };
  Seen s;
  SvJob *job;

  seen_init (&s);
  job = sv_job_new (v, NULL, &seen_callbacks, &s);
  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cpu", sizeof request.backend);
  request.params.n_segments = 8;
  request.params.compactness = 0.3;
  request.params.spacing[0] = 2.0;
  request.preview_seconds = 0.05;
  request.generation = 1;
  sv_job_submit (job, &request);
  result = wait_for_generation (&s, 1);
  g_assert_cmpuint (result->preview_factor, ==, 2);
  /* Coarse labels, looked up block by block. */
  g_assert_cmpuint (sv_job_result_get_labels (result, NULL)->nz, ==, 4);
  g_assert_cmpuint (sv_job_result_get_labels (result, NULL)->nx, ==, 20);
  g_assert_true (sv_job_result_fits (result, 8, 32, 40));
  g_assert_false (sv_job_result_fits (result, 8, 32, 42));
  g_assert_cmpfloat (result->params.compactness, ==, 0.3);

  small = sv_preview_volume_new (v, NULL, 2, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (small->nz, ==, 4);
  g_assert_cmpuint (small->nx, ==, 20);
  /* The average of the first block. */
  g_assert_cmpfloat (fabs (small->data[0]
                           - (v->data[0] + v->data[1] + v->data[40] + v->data[41] + v->data[1280]
                              + v->data[1281] + v->data[1320] + v->data[1321])
                                 / 8.0),
                     <, 1e-6);
  /* A block is inside the mask when at least half of its voxels are, and
   * only those voxels enter its average. */
  {
    g_autoptr (SvVolume) masked = NULL;
    g_autofree guint8 *mask = g_malloc0 (sv_volume_n_voxels (v));
    g_autofree guint8 *small_mask = NULL;
    mask[0] = mask[1] = mask[40] = mask[41] = 1; /* block 0: 4 of 8 */
    mask[2] = mask[3] = mask[42] = 1;            /* block 1: 3 of 8 */
    masked = sv_preview_volume_new (v, mask, 2, &small_mask, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (small_mask[0], ==, 1);
    g_assert_cmpuint (small_mask[1], ==, 0);
    g_assert_cmpuint (small_mask[2], ==, 0);
    g_assert_cmpfloat (
        fabs (masked->data[0] - (v->data[0] + v->data[1] + v->data[40] + v->data[41]) / 4.0), <,
        1e-6);
  }
  sv_preview_params (&request.params, v, 2, &small_params);
  g_assert_cmpfloat (small_params.spacing[0], ==, 4.0);
  g_assert_cmpfloat (small_params.compactness, ==, 0.15);
  direct = direct_labels (small, &small_params);
  small_shape[0] = small->nz;
  small_shape[1] = small->ny;
  small_shape[2] = small->nx;
  expected = g_new (gint32, sv_volume_n_voxels (v));
  sv_preview_upsample_labels (direct, small_shape, 2, expected, shape);
  g_assert_cmpint (expected[(7 * 32 + 31) * 40 + 39], ==, direct[(3 * 16 + 15) * 20 + 19]);
  g_assert_cmpmem (sv_job_result_get_labels (result, NULL)->data,
                   sv_volume_n_voxels (small) * sizeof (gint32), direct,
                   sv_volume_n_voxels (small) * sizeof (gint32));
  for (guint z = 0; z < 8; z++)
    for (guint y = 0; y < 32; y++)
      for (guint x = 0; x < 40; x++)
        g_assert_cmpint (sv_job_result_label_at (result, z, y, x), ==,
                         expected[((gsize)z * 32 + y) * 40 + x]);

  /* The exact request after it is exact again. */
  request.preview_seconds = 0;
  request.generation = 2;
  sv_job_submit (job, &request);
  result = wait_for_generation (&s, 2);
  g_assert_cmpuint (result->preview_factor, ==, 1);
  sv_job_free (job);
  seen_clear (&s);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  sv_backend_register (&gate_class);
  sv_backend_register (&broken_cuda_class);

  g_test_add_func ("/engine/job/results-on-main-context", test_results_on_main_context);
  g_test_add_func ("/engine/job/newest-wins", test_newest_wins);
  g_test_add_func ("/engine/job/cancellation", test_cancellation);
  g_test_add_func ("/engine/job/free-drops-queued-deliveries", test_free_drops_queued);
  g_test_add_func ("/engine/job/rapid-submits-end-with-last-params", test_rapid_submits);
  g_test_add_func ("/engine/job/cuda-failure-falls-back-to-cpu", test_cuda_failure_falls_back);
  g_test_add_data_func ("/engine/job/finishing-run-is-kept", GINT_TO_POINTER (FALSE),
                        test_finishing_run_is_kept);
  g_test_add_data_func ("/engine/job/slow-run-is-cancelled", GINT_TO_POINTER (TRUE),
                        test_finishing_run_is_kept);
  g_test_add_func ("/engine/job/preview-matches-direct-run", test_preview_matches_direct_run);
  g_test_add_func ("/engine/job/cancel-drops-queued-result", test_cancel_drops_queued_result);
  g_test_add_func ("/engine/job/teaching-steps-from-snapshots", test_teaching_steps_from_snapshots);
  g_test_add_func ("/engine/job/live-iterations", test_live_iterations);
  return g_test_run ();
}

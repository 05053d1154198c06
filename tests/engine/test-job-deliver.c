/* Tests of sv_job_deliver_when_ready (supervox/sv-job.h): the main thread
 * waits for a request's result and runs the queued deliveries itself, in
 * order, before the main loop would (the window's frame that shows a
 * change shows its result); what it ran is not delivered again, and a
 * wait that ends before the result delivers what there is. */
#define G_LOG_DOMAIN "test-job-deliver"

#include "supervox/sv-job.h"

typedef struct
{
  guint n_progress;
  guint n_results;
  guint64 last_generation;
  gboolean progress_after_result; /* a progress delivery of a generation already delivered */
} Seen;

static void
seen_progress (guint64 generation, SvStage stage, guint i, guint n, gpointer user_data)
{
  Seen *s = user_data;

  s->n_progress++;
  if (s->n_results > 0 && generation <= s->last_generation)
    s->progress_after_result = TRUE;
}

static void
seen_result (SvJobResult *result, gpointer user_data)
{
  Seen *s = user_data;

  if (result->in_progress_iteration == 0)
    {
      s->n_results++;
      s->last_generation = result->generation;
    }
}

static const SvJobCallbacks callbacks = { seen_progress, seen_result, NULL };

/* A volume with structure: a ramp plus bright blocks. */
static SvVolume *
ramp_volume (guint nz, guint ny, guint nx)
{
  g_autoptr (GError) error = NULL;
  SvVolume *v = sv_volume_new (nz, ny, nx, 1, &error);
  gsize i = 0;

  g_assert_no_error (error);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++, i++)
        v->data[i] = 0.01f * (float)(x + y + z) + (float)(((x / 7) + (y / 5) + z / 3) % 2);
  return v;
}

static void
submit (SvJob *job, guint64 generation, double compactness, int iterations)
{
  SvJobRequest request;

  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cpu", sizeof request.backend);
  request.params.n_segments = 64;
  request.params.compactness = compactness;
  request.params.max_num_iter = iterations;
  request.generation = generation;
  sv_job_submit (job, &request);
}

static void
test_deliver_when_ready (void)
{
  g_autoptr (SvVolume) v = ramp_volume (24, 64, 64);
  Seen s = { 0 };
  SvJob *job = sv_job_new (v, NULL, &callbacks, &s);

  /* Waited for: the result and the run's progress, here, before any
   * iteration of the main loop. */
  submit (job, 1, 1.0, 10);
  g_assert_true (sv_job_deliver_when_ready (job, 1, 60 * G_USEC_PER_SEC));
  g_assert_cmpuint (s.n_results, ==, 1);
  g_assert_cmpuint (s.last_generation, ==, 1);
  g_assert_cmpuint (s.n_progress, >, 0);
  /* The main loop's sources find nothing left: no delivery twice. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (s.n_results, ==, 1);
  g_assert_false (s.progress_after_result);

  /* A wait that ends first (a run of 200 iterations): FALSE, and the
   * result comes through the main loop as before. */
  submit (job, 2, 0.01, 200);
  g_assert_false (sv_job_deliver_when_ready (job, 2, 0));
  g_assert_cmpuint (s.n_results, ==, 1);
  while (s.n_results < 2)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (s.last_generation, ==, 2);

  /* Waiting for an older generation takes the newer result. */
  submit (job, 3, 5.0, 10);
  g_assert_true (sv_job_deliver_when_ready (job, 2, 60 * G_USEC_PER_SEC));
  g_assert_cmpuint (s.last_generation, ==, 3);
  sv_job_free (job);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (s.n_results, ==, 3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/job/deliver-when-ready", test_deliver_when_ready);
  return g_test_run ();
}

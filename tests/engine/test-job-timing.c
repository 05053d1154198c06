/* Tests of the job's time model (engine/job/job-timing.c) on recorded stage
 * times: no clock is read, every instant is given. */
#define G_LOG_DOMAIN "test-job-timing"

#include <math.h>
#include <string.h>

#include "job-timing.h"

#define US G_USEC_PER_SEC

/* The last run: 10 iterations in 2 s, connect 0.1 s, 0.1 s handing over,
 * prepare 0.05 s (its image is reused by the next request). */
static void
record_slow_run (SvJobTiming *timing, SvJobRequest *request)
{
  SvRunStats stats = { 0 };

  memset (timing, 0, sizeof *timing);
  sv_job_request_init (request);
  request->params.max_num_iter = 10;
  stats.iterations = 10;
  stats.seconds_prepare = 0.05;
  stats.seconds_iterate = 2.0;
  stats.seconds_connect = 0.1;
  sv__job_timing_record (timing, request, &stats, 2.25, 1000);
}

static SvJobRun
start_run (const SvJobTiming *timing, const SvJobRequest *request, gint64 t0)
{
  SvJobRun run = { 0 };

  run.prepare_s = sv__job_timing_prepare (timing, &request->params);
  run.iterations = sv__job_request_iterations (request);
  run.connect = sv__job_request_connects (request);
  run.stage = SV_STAGE_PREPARE;
  run.stage_t0 = run.t0 = t0;
  run.estimate = sv__job_timing_estimate (timing, request);
  return run;
}

/* Before its own iterations are timed, the run is expected to go as the
 * last one went. */
static void
test_before_own_pace (void)
{
  SvJobTiming timing;
  SvJobRequest request;
  SvJobRun run;

  record_slow_run (&timing, &request);
  run = start_run (&timing, &request, 10 * US);
  g_assert_cmpfloat (run.prepare_s, ==, 0.0);
  /* 10 × 0.2 + 0.1 + 0.1 (the handing over: 2.25 − 2.15) */
  g_assert_cmpfloat_with_epsilon (sv__job_run_left (&run, &timing, 10 * US), 2.2, 1e-9);
  sv__job_run_progress (&run, SV_STAGE_ITERATE, 1, 10, 10 * US + 300000);
  g_assert_cmpfloat_with_epsilon (sv__job_run_left (&run, &timing, 10 * US + 300000), 2.0, 1e-9);
}

/* The last run shared the processors and went at 0.2 s an iteration; this
 * one goes at 0.1 s: once two iterations are timed, the time left is this
 * run's pace, not twice it. */
static void
test_own_pace_once_timed (void)
{
  SvJobTiming timing;
  SvJobRequest request;
  SvJobRun run;
  gint64 t = 10 * US;

  record_slow_run (&timing, &request);
  run = start_run (&timing, &request, t);
  /* Iteration 1 ends after seeding and the first assignment: 0.3 s. */
  sv__job_run_progress (&run, SV_STAGE_ITERATE, 1, 10, t + 300000);
  for (guint i = 2; i <= 4; i++)
    sv__job_run_progress (&run, SV_STAGE_ITERATE, i, 10, t + 300000 + (i - 1) * 100000);
  /* At iteration 4: 6 more at 0.1 s, connect 0.1 s, handing over 0.1 s. */
  g_assert_cmpfloat_with_epsilon (sv__job_run_left (&run, &timing, t + 600000), 0.8, 1e-9);
  /* 50 ms into iteration 5. */
  g_assert_cmpfloat_with_epsilon (sv__job_run_left (&run, &timing, t + 650000), 0.75, 1e-9);
  /* The last iteration: only connect and the handing over are left. */
  sv__job_run_progress (&run, SV_STAGE_ITERATE, 10, 10, t + 1200000);
  g_assert_cmpfloat_with_epsilon (sv__job_run_left (&run, &timing, t + 1200000), 0.2, 1e-9);
}

/* maskSLIC's two passes count 2 × max_num_iter iterations in progress. */
static void
test_two_passes (void)
{
  SvJobTiming timing;
  SvJobRequest request;
  SvJobRun run;
  gint64 t = 5 * US;

  record_slow_run (&timing, &request);
  run = start_run (&timing, &request, t);
  sv__job_run_progress (&run, SV_STAGE_ITERATE, 1, 20, t + 200000);
  sv__job_run_progress (&run, SV_STAGE_ITERATE, 11, 20, t + 1200000);
  /* 9 more at 0.1 s, connect and handing over. */
  g_assert_cmpfloat_with_epsilon (sv__job_run_left (&run, &timing, t + 1200000), 1.1, 1e-9);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/job-timing/last-run-before-own-pace", test_before_own_pace);
  g_test_add_func ("/engine/job-timing/own-pace-once-timed", test_own_pace_once_timed);
  g_test_add_func ("/engine/job-timing/two-passes-of-masked-runs", test_two_passes);
  return g_test_run ();
}

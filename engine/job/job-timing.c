/* Supervox engine: the job's time model (engine-internal). */
#define G_LOG_DOMAIN "sv-job"

#include "job-timing.h"

#include <string.h>

guint
sv__job_request_iterations (const SvJobRequest *request)
{
  SvSlicParams run;

  sv_slic_params_apply_teaching (&request->params, request->stop_after_iteration, &run);
  return (guint)MAX (run.max_num_iter, 0);
}

gboolean
sv__job_request_connects (const SvJobRequest *request)
{
  SvSlicParams run;

  sv_slic_params_apply_teaching (&request->params, request->stop_after_iteration, &run);
  return run.enforce_connectivity;
}

double
sv__job_timing_prepare (const SvJobTiming *t, const SvSlicParams *params)
{
  return t->has_last && sv_slic_params_same_prepare (&t->last_params, params) ? 0.0 : t->prepare_s;
}

double
sv__job_timing_estimate (const SvJobTiming *t, const SvJobRequest *request)
{
  if (!t->valid)
    return -1.0;
  return sv__job_timing_prepare (t, &request->params)
         + sv__job_request_iterations (request) * t->iterate_s
         + (sv__job_request_connects (request) ? t->connect_s : 0.0) + t->other_s;
}

void
sv__job_timing_record (SvJobTiming *t, const SvJobRequest *request, const SvRunStats *stats,
                       double seconds_total, gsize n_voxels)
{
  double stages;

  if (t->n_voxels != n_voxels)
    memset (t, 0, sizeof *t);
  t->n_voxels = n_voxels;
  if (!stats->prepare_reused || !t->valid)
    t->prepare_s = stats->seconds_prepare;
  if (stats->iterations > 0)
    t->iterate_s = stats->seconds_iterate / stats->iterations;
  if (sv__job_request_connects (request))
    t->connect_s = stats->seconds_connect;
  stages = stats->seconds_prepare + stats->seconds_iterate + stats->seconds_connect;
  t->other_s = MAX (seconds_total - stages, 0.0);
  t->has_last = TRUE;
  t->last_params = request->params;
  t->valid = TRUE;
}

void
sv__job_run_progress (SvJobRun *run, SvStage stage, guint iteration, guint n_iterations, gint64 now)
{
  run->stage = stage;
  run->iteration = iteration;
  run->stage_t0 = now;
  if (stage == SV_STAGE_ITERATE)
    {
      run->n_reported = n_iterations;
      if (iteration == 1)
        run->first_iteration_t = now;
    }
}

double
sv__job_run_left (const SvJobRun *run, const SvJobTiming *t, gint64 now)
{
  double in_stage, left;

  if (!t->valid)
    {
      /* A first preview: it aims at its target. */
      if (run->estimate < 0)
        return -1.0;
      return MAX (run->estimate - (double)(now - run->t0) / G_USEC_PER_SEC, 0.0);
    }
  in_stage = (double)(now - run->stage_t0) / G_USEC_PER_SEC;
  switch (run->stage)
    {
    case SV_STAGE_PREPARE:
      left = MAX (run->prepare_s - in_stage, 0.0) + run->iterations * t->iterate_s
             + (run->connect ? t->connect_s : 0.0);
      break;
    case SV_STAGE_ITERATE:
      if (run->iteration >= 2 && run->first_iteration_t > 0 && run->n_reported >= run->iteration)
        {
          /* Its own pace: the iterations since the first (which also seeds). */
          double pace = (double)(run->stage_t0 - run->first_iteration_t) / G_USEC_PER_SEC
                        / (run->iteration - 1);
          left = MAX ((run->n_reported - run->iteration) * pace - in_stage, 0.0);
        }
      else
        left = MAX ((run->iterations - MIN (run->iteration, run->iterations)) * t->iterate_s
                        - in_stage,
                    0.0);
      left += run->connect ? t->connect_s : 0.0;
      break;
    case SV_STAGE_CONNECT:
      left = MAX (t->connect_s - in_stage, 0.0);
      break;
    case SV_STAGE_DONE:
    default:
      left = 0.0;
      break;
    }
  return left + t->other_s;
}

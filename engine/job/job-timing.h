/* Supervox engine: the job's time model (engine-internal). The job keeps,
 * per volume it runs on (the exact one, the preview), the last runs' time
 * per stage, and for the running request where it stands, so that it can
 * say how long a request will take and how long the running one has left:
 * for the progress bar, and to let a run that is about to end finish. */
#pragma once

#include <glib.h>

#include "supervox/sv-job.h"

G_BEGIN_DECLS

/* Time per stage of the last runs on one volume. */
typedef struct
{
  gboolean valid;
  double prepare_s; /* the last prepare that was not reused */
  double iterate_s; /* per iteration */
  double connect_s;
  double other_s; /* collecting labels, the result hook */
  gboolean has_last;
  SvSlicParams last_params; /* the last request's: what the backend has prepared */
  gsize n_voxels;
} SvJobTiming;

/* Where the running request stands. */
typedef struct
{
  gboolean preview; /* it runs on the preview volume */
  double prepare_s; /* its expected prepare time */
  guint iterations; /* its iterations */
  gboolean connect; /* whether it enforces connectivity */
  SvStage stage;
  guint iteration; /* iterations done */
  gint64 stage_t0; /* when the current stage (or iteration) began, µs */
  gint64 first_iteration_t; /* when its first iteration ended, µs; 0 before */
  guint n_reported;         /* the iterations its progress counts to (both passes of maskSLIC) */
  gint64 t0;       /* when it began */
  double estimate; /* its seconds as estimated at the start; negative when unknown */
} SvJobRun;

/* The iterations a request runs, and whether it runs connectivity. */
guint sv__job_request_iterations (const SvJobRequest *request);
gboolean sv__job_request_connects (const SvJobRequest *request);

/* The prepare time `params` will take: none when the last run's prepared
 * image can be reused. */
double sv__job_timing_prepare (const SvJobTiming *timing, const SvSlicParams *params);

/* Seconds `request` will take on the volume `timing` times; negative when
 * nothing has run there. */
double sv__job_timing_estimate (const SvJobTiming *timing, const SvJobRequest *request);

/* Notes a finished run of `request` (n_voxels in the volume it ran on; a
 * volume of another size starts afresh). */
void sv__job_timing_record (SvJobTiming *timing, const SvJobRequest *request,
                            const SvRunStats *stats, double seconds_total, gsize n_voxels);

/* Notes a progress report of the running request at `now` (µs). */
void sv__job_run_progress (SvJobRun *run, SvStage stage, guint iteration, guint n_iterations,
                           gint64 now);

/* Seconds the run has left at `now` (µs, monotonic); negative when unknown.
 * The last runs give each stage's time; once the running request has timed
 * iterations of its own (two reported), its remaining iterations go at its
 * own pace: the last run may have shared the processors with other work
 * (the first run after a file opens runs beside the histogram, the views'
 * textures and the quality numbers) and then took twice as long. */
double sv__job_run_left (const SvJobRun *run, const SvJobTiming *timing, gint64 now);

G_END_DECLS

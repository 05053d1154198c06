/* Supervox engine: the job's state, shared by job.c (the thread and the
 * requests) and job-run.c (what the worker does with one request). Not
 * public API. */
#pragma once

#include "supervox/sv-job.h"
#include "supervox/sv-run-execute.h"

#include "job-delivery.h"
#include "job-teaching.h"
#include "job-timing.h"

G_BEGIN_DECLS

/* One backend with its volume: the exact one, or the preview's. */
typedef struct
{
  SvBackend *backend;
  char request[16]; /* the name the backend was created for */
  const SvVolume *volume;
  const guint8 *mask;
} SvJobSlot;

struct _SvJob
{
  const SvVolume *volume;
  const guint8 *mask;
  SvJobSink *sink;
  GThread *thread;

  GMutex lock;
  GCond cond;
  SvJobRequest *pending; /* owned, under lock */
  GCancellable *running; /* the running request's, under lock */
  gboolean quit;         /* under lock */
  gboolean busy;         /* under lock */
  SvJobResultHook hook;  /* under lock */
  gpointer hook_data;    /* under lock */

  /* Timings and the running request's place, under lock (job-timing.h). */
  SvJobTiming exact_timing, preview_timing;
  SvJobRun run;

  /* Worker thread only. */
  SvJobSlot exact, preview;
  SvVolume *preview_volume;  /* owned; preview.volume points here */
  guint8 *preview_mask;      /* owned */
  guint preview_factor;      /* of preview_volume; 0 when none */
  SvTeachingCache *teaching; /* the teaching steps of the exact volume */
  gboolean fallback_reported;

  /* The devices the runs may use, and whether one failed: after one
   * device failure every run goes to the CPU (sv_run_execute's rule). */
  SvRunDevices devices;

  /* A streamed job (sv_job_new_streamed): its file, the folder of its
   * label files and how many it wrote. */
  char *stream_input;
  char *scratch_dir;
  guint n_streamed;
};

/* Under job->lock. Seconds `request` would take; negative when unknown. */
double sv__job_estimate_locked (SvJob *job, const SvJobRequest *request);

/* Worker thread: runs `request` and delivers its result or error (nothing
 * when cancelled). */
void sv__job_process (SvJob *job, const SvJobRequest *request, GCancellable *cancellable);

/* The same for a streamed job (job-stream.c). */
void sv__job_process_streamed (SvJob *job, const SvJobRequest *request,
                               GCancellable *cancellable);

G_END_DECLS

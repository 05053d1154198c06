/* Supervox engine: how a job's progress, results and errors reach the
 * caller's main context (job-delivery.c). Not public API. */
#pragma once

#include "supervox/sv-job.h"

G_BEGIN_DECLS

/* The part of a job that queued deliveries may still touch after
 * sv_job_free: reference counted, and closed (main thread only) to stop
 * every later callback. Keeps the generations that decide what is still of
 * interest. */
typedef struct _SvJobSink SvJobSink;

/* Deliveries go to `context` (referenced). */
SvJobSink *sv__job_sink_new (GMainContext *context, const SvJobCallbacks *callbacks,
                             gpointer user_data);
/* On the main context: no callback runs after this; drops the job's reference. */
void sv__job_sink_close (SvJobSink *sink);

/* A request of `generation` was submitted. */
void sv__job_sink_submitted (SvJobSink *sink, guint64 generation);
/* Every request submitted so far is cancelled: nothing more of them arrives. */
void sv__job_sink_cancel_all (SvJobSink *sink);
/* The newest generation submitted. */
guint64 sv__job_sink_latest (SvJobSink *sink);

/* Queue one delivery (any thread; never runs the callback inline). */
void sv__job_deliver_progress (SvJobSink *sink, guint64 generation, SvStage stage, guint iteration,
                               guint n_iterations);
/* Takes `result`. */
void sv__job_deliver_result (SvJobSink *sink, SvJobResult *result);
/* On the main context: waits at most timeout_us until the final result
 * (or the error) of request `generation` or a newer one is queued, then
 * runs every queued delivery here, in order. TRUE when it came. */
gboolean sv__job_sink_deliver_when_ready (SvJobSink *sink, guint64 generation,
                                          gint64 timeout_us);
/* Takes `error`. */
void sv__job_deliver_error (SvJobSink *sink, guint64 generation, GError *error);

G_END_DECLS

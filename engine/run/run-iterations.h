/* Supervox engine: the passes and iterations of a SLIC run, once for both
 * ways of running it (engine-internal). The loop starts each pass, checks
 * for cancellation before each iteration, reports progress after it and
 * shows the run to the iteration hook; a schedule says how one iteration
 * is carried out: whole-volume stages on a backend (slic-pipeline.c) or
 * slab steps over a file (stream-slic.c). */
#pragma once

#include "supervox/sv-backend-class.h"

G_BEGIN_DECLS

/* What an iteration hook reads. In memory `run` is the backend's run (its
 * labels can be snapshot, its clusters read back from the device); a
 * streamed run has no `run`, only its clusters, which live on the host. */
struct _SvIterationView
{
  SvBackend *backend; /* names the backend */
  SvSlicRun *run;     /* in memory; NULL when streamed */
  SvClusters *clusters;
};

typedef struct
{
  SvSlicContext *ctx;   /* its ignore_colour is set per pass */
  SvClusters *clusters; /* their SLIC-zero maxima start afresh each pass */
  guint n_passes;       /* 2 under a mask (maskSLIC moves the seeds first), else 1 */
  guint n_iterations;   /* per pass */
  gpointer self;        /* for the functions below */
  /* Before each pass (may be NULL). */
  gboolean (*begin_pass) (gpointer self, guint pass, GError **error);
  /* Iteration `iteration` (0 …) of the run's n_total, all passes counted. */
  gboolean (*iterate) (gpointer self, guint iteration, guint n_total, GError **error);
  /* Waits for queued work; called only when someone looks between
   * iterations (may be NULL). */
  gboolean (*sync) (gpointer self, GError **error);
  const SvIterationView *view; /* what control->iteration reads */
} SvIterationSchedule;

/* Runs every pass of `schedule`; control's progress, cancellable and
 * iteration hook are used (the others are the caller's). Fails with the
 * schedule's error or G_IO_ERROR_CANCELLED. */
gboolean sv__run_iterations (const SvIterationSchedule *schedule, const SvRunControl *control,
                             GError **error);

/* The clusters' positions as callers see them: k × 3, NaN when dead (g_free). */
float *sv__clusters_centres_zyx (const SvClusters *clusters);

G_END_DECLS

/* Supervox engine: the quality of each result, computed on a worker thread
 * of its own so that the window stays responsive: the engine's metrics
 * (metrics.h; against a ground truth when one is set), per-supervoxel
 * statistics (label-stats.h) and the size histogram, and, when a reference
 * result is pinned, the adjusted Rand index between the two and the voxels
 * where they differ (partition-compare.h); for teaching,
 * the convergence of the iterations (convergence.h). Like SvJob,
 * requests are coalesced (the newest pending one wins) and results are
 * delivered on the main context that created the worker. */
#pragma once

#include <glib.h>

#include "sv-convergence.h"
#include "sv-job.h"
#include "sv-label-stats.h"
#include "sv-metrics.h"
#include "sv-volume.h"

G_BEGIN_DECLS

#define SV_QUALITY_SIZE_BINS 24
/* Boundary recall counts a truth boundary voxel found within this many
 * voxels (Chebyshev), as supervoxel papers do at 2 pixels. */
#define SV_QUALITY_BOUNDARY_RADIUS 2

typedef struct
{
  guint64 generation; /* of the result analysed */
  SvMetrics metrics;  /* truth metrics NaN without a truth */
  gboolean has_truth;
  SvLabelTable *table; /* every label's statistics */
  double target_size;  /* voxels per segment asked for (volume / n_segments) */
  double size_edges[SV_QUALITY_SIZE_BINS + 1];
  guint64 size_counts[SV_QUALITY_SIZE_BINS]; /* background left out */
  double reference_ari;                      /* vs the reference result; NaN when none */
  guint64 reference_generation;              /* 0 when none */
  /* Voxels whose labels differ from the reference's (sv-partition-compare.h),
   * and the nz·ny·nx bytes that say which (1: differs); NULL when none. */
  guint64 reference_differing;
  GBytes *reference_difference;
  double seconds;                            /* time the analysis took */
} SvQuality;

SvQuality *sv_quality_ref (SvQuality *quality);
void sv_quality_unref (SvQuality *quality);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvQuality, sv_quality_unref)

/* Computes the quality of `result` (its labels must be of the volume's
 * shape: not a preview) in the calling thread. `truth` and `reference`
 * may be NULL. On every core. */
SvQuality *sv_quality_compute (const SvVolume *volume, const SvJobResult *result,
                               const SvLabels *truth, const SvJobResult *reference, GError **error);
/* The same on n_threads threads (0: every core, as sv_quality_compute):
 * every number is the same for any n_threads. */
SvQuality *sv_quality_compute_threads (const SvVolume *volume, const SvJobResult *result,
                                       const SvLabels *truth, const SvJobResult *reference,
                                       int n_threads, GError **error);

typedef struct _SvQualityWorker SvQualityWorker;

/* Called on the worker's main context with each finished analysis
 * (borrowed: take a reference to keep it), in submission order, or with the
 * error of one that failed. */
typedef struct
{
  void (*done) (SvQuality *quality, gpointer user_data);
  void (*failed) (guint64 generation, const GError *error, gpointer user_data);
  /* A convergence asked for with sv_quality_worker_request_convergence. */
  void (*converged) (SvConvergence *convergence, gpointer user_data);
} SvQualityCallbacks;

/* A worker thread for `volume`, its mask and its ground truth (NULL for
 * none; of the volume's shape: the caller checks), all borrowed until
 * sv_quality_worker_free: another mask or truth needs another worker. */
SvQualityWorker *sv_quality_worker_new (const SvVolume *volume, const guint8 *mask,
                                        const SvLabels *truth, const SvQualityCallbacks *callbacks,
                                        gpointer user_data);
/* Computes the convergence for `params` (copied) before any pending
 * analysis; a newer request replaces one not started and cancels one
 * running. */
void sv_quality_worker_request_convergence (SvQualityWorker *worker, const SvSlicParams *params);
/* The result later ones are compared with (a reference is taken; NULL for
 * none). With `analyse` its own quality is computed and delivered too,
 * before any pending request (sv_quality_worker_analyse). */
void sv_quality_worker_set_reference (SvQualityWorker *worker, SvJobResult *reference,
                                      gboolean analyse);
/* Computes `result`'s own quality, compared with nothing (a reference is
 * taken), before any pending request; several such wait in turn, and one
 * already waiting is not added twice. */
void sv_quality_worker_analyse (SvQualityWorker *worker, SvJobResult *result);
/* Analyses `result` (a reference is taken), replacing a pending request. */
void sv_quality_worker_submit (SvQualityWorker *worker, SvJobResult *result);
/* Cancels a convergence being computed, waits for the running analysis,
 * joins the thread and frees the worker; no callback runs after this
 * returns. */
void sv_quality_worker_free (SvQualityWorker *worker);

G_END_DECLS

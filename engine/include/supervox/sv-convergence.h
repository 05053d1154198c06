/* Supervox engine: how SLIC's k-means converges, iteration by iteration,
 * for teaching: the voxels whose label changed and the distance the
 * centres moved in each iteration. Computed from what any backend gives
 * (labels and centres after n iterations, SvRunControl's
 * stop_after_iteration), on the CPU backend: one run watched after each
 * iteration (SvRunControl's iteration hook), or with a mask n + 1 runs of
 * 0 … n iterations that share one prepared image. */
#pragma once

#include <gio/gio.h>
#include <glib.h>

#include "sv-params.h"
#include "sv-volume.h"

G_BEGIN_DECLS

typedef struct
{
  guint n_iterations; /* params->max_num_iter */
  /* Index i is iteration i + 1: voxels whose label after it differs from
   * before it (iteration 1 counts against the labels before any
   * assignment), and the summed Euclidean distance, in voxels, that the
   * live centres moved in it; mean_moved is that sum over the live
   * centres (the mean shift of one centre, in voxels). */
  guint64 *changed;
  double *moved;
  double *mean_moved;
  SvSlicParams params;
} SvConvergence;

/* Runs SLIC on `volume` (and `mask`, may be NULL) with `params` (without
 * connectivity, as teaching steps do) for 0 … max_num_iter iterations and
 * compares each with the one before. Cancellable between and inside runs
 * (G_IO_ERROR_CANCELLED). */
SvConvergence *sv_convergence_compute (const SvVolume *volume, const guint8 *mask,
                                       const SvSlicParams *params, GCancellable *cancellable,
                                       GError **error);
SvConvergence *sv_convergence_ref (SvConvergence *convergence);
void sv_convergence_unref (SvConvergence *convergence);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvConvergence, sv_convergence_unref)

G_END_DECLS

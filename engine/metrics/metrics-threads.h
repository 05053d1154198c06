/* Supervox engine: the quality metrics on several threads (not public
 * API). Work is split into contiguous shares of voxels or labels; every
 * floating sum is either one label's, taken by the thread that owns the
 * label in voxel order, or added up in blocks of SV_METRICS_BLOCK voxels
 * whose partial sums are then added in block order, so that every number
 * is the same whatever the number of threads. */
#pragma once

#include <glib.h>

#include "contingency.h"
#include "internal.h"
#include "supervox/sv-label-stats.h"
#include "supervox/sv-metrics.h"
#include "supervox/sv-partition-compare.h"

G_BEGIN_DECLS

#define SV_METRICS_BLOCK ((gsize)1 << 16)

/* The threads for n_threads (<= 0: every core), fewer for a small n. */
static inline int
sv__metrics_threads (int n_threads, gsize n)
{
  int t = sv__resolve_threads (n_threads);
  return (int)MIN ((gsize)t, n / SV_METRICS_BLOCK + 1);
}

/* Thread t's share [*a, *b) of n items among n_threads. */
static inline void
sv__metrics_share (gsize n, int t, int n_threads, gsize *a, gsize *b)
{
  *a = (gsize)((guint64)n * (guint64)t / (guint64)n_threads);
  *b = (gsize)((guint64)n * (guint64)(t + 1) / (guint64)n_threads);
}

/* Splits dense labels 0..n_labels-1 into n_threads contiguous ranges of
 * about equal voxel counts: thread t owns [bounds[t], bounds[t + 1]). */
void sv__metrics_label_bounds (const guint64 *sizes, gsize n_labels, int n_threads, gsize *bounds);

/* sum[k] = Σ_t counts[t · n_labels + k] over n_tables per-thread tables
 * of n_labels counts, on n_threads threads (0: every core). */
void sv__metrics_sum_counts (const guint64 *counts, gsize n_labels, int n_tables, guint64 *sum,
                             int n_threads);
/* Turns n_tables per-thread tables of n_labels counts into places: label
 * after label, table after table, each count becomes the sum of those
 * before it, as a counting sort places the items that thread t found of
 * label k; counts of 0 stay 0. start[k] (n_labels + 1, may be NULL) gets
 * label k's first place. Returns the sum of all counts. On n_threads
 * threads (0: every core). */
guint64 sv__metrics_place_counts (guint64 *counts, gsize n_labels, int n_tables, gsize *start,
                                  int n_threads);

/* The share of voxels on the boundary of the dense map truth_index
 * (with a 6-neighbour of another label, 4 in 2D) that lie within a
 * Chebyshev distance `radius` of the boundary of label_index, both of
 * nz·ny·nx voxels; NaN when the truth has no boundary
 * (boundary-recall.c). On n_threads threads (0: every core). */
double sv__metrics_boundary_recall (const guint32 *truth_index, const guint32 *label_index,
                                    guint nz, guint ny, guint nx, guint radius, int n_threads);

/* The functions below take the labels' dense indices when the caller has
 * them (`dense`, borrowed; NULL: computed here), so that one analysis
 * makes them once. */

/* sv_metrics_compute_background on n_threads threads (0: every core). */
gboolean sv__metrics_compute_threads (const SvLabels *labels, const SvDenseLabels *dense,
                                      const SvLabels *truth, const SvVolume *image,
                                      guint boundary_radius, gboolean background_valid,
                                      gint32 background, int n_threads, SvMetrics *metrics,
                                      GError **error);
/* sv_label_table_new on n_threads threads (0: every core). */
SvLabelTable *sv__label_table_new_threads (const SvLabels *labels, const SvDenseLabels *dense,
                                           const SvVolume *image, int n_threads, GError **error);
/* sv_partition_compare on n_threads threads (0: every core); `dense_b`
 * are b's. */
void sv__partition_compare_threads (const gint32 *a, const gint32 *b, const SvDenseLabels *dense_b,
                                    gsize n, int n_threads, SvPartitionDifference *difference,
                                    guint8 *differing);

G_END_DECLS

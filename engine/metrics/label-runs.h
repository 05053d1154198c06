/* Supervox engine: each label's voxels as runs along x, in voxel order
 * (label-runs.c). Not public API.
 *
 * A label's sums over its voxels in voxel order (the label table's
 * intensities and centres, explained variation's between-supervoxel term)
 * are a sequential loop per label. On threads that own labels, each
 * thread used to read every voxel to find its own; over the runs it reads
 * only its labels', so the work divides among threads, and the sums are
 * the same: intensities still added voxel by voxel in voxel order, the
 * coordinates (integers, exact in a double) a run at a time. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Voxels [x0, x1) of row `row` (z · ny + y). */
typedef struct
{
  guint32 row;
  guint32 x0, x1;
} SvLabelRun;

typedef struct _SvLabelRuns
{
  gsize n_labels;
  gsize *start; /* n_labels + 1: label k's runs are runs[start[k]] to runs[start[k + 1] - 1] */
  SvLabelRun *runs;
} SvLabelRuns;

/* The runs of the dense labels `index` (index[i] − shift in
 * 0..n_labels-1, as SvDenseLabels holds them) of an nz·ny·nx volume,
 * found on n_threads threads (0: every core); NULL when there would be
 * more than one run for every four voxels (labels that change along most
 * rows: the runs would take more memory than they save) or the memory is
 * not there. */
SvLabelRuns *sv__label_runs_new (const guint32 *index, guint32 shift, gsize n_labels, guint nz,
                                 guint ny, guint nx, int n_threads);
void sv__label_runs_free (SvLabelRuns *runs);
/* Each label's voxel count (n_labels of them), from its runs: a read of
 * the runs, fewer than a quarter of the voxels, on n_threads threads. */
void sv__label_runs_sizes (const SvLabelRuns *runs, guint64 *sizes, int n_threads);

G_END_DECLS

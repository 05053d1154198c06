/* Supervox engine: two label maps of the same voxels, overlapped
 * (contingency.c). Not public API; shared by metrics.c and
 * partition-compare.c.
 *
 * Labels of any gint32 values are first mapped to dense indices 0..n-1 in
 * increasing value order. The overlap of two such maps is a sparse
 * contingency table built by grouping voxels by the first map's label (a
 * counting sort), which is exact in 64-bit integers and needs 4 bytes per
 * voxel, whatever the number of distinct label pairs. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Dense relabelling of a label map. */
typedef struct
{
  /* Per voxel, index[i] − shift is 0..n_distinct-1 in increasing label
   * value (sv__dense_at). Labels that fill [min_label, max_label], as a
   * segmentation's numbered labels do, are their own index: the labels
   * read as guint32 with shift = min_label, no copy and no pass writing
   * one. Equal labels have equal index values either way. */
  const guint32 *index;
  guint32 shift;
  guint32 *owned; /* the index when it had to be made, else NULL */
  gsize n_distinct;
  gint32 min_label, max_label; /* with any voxel */
  /* Each label's runs along x (label-runs.h), when made: per-label sums
   * in voxel order then divide among threads. */
  struct _SvLabelRuns *runs;
} SvDenseLabels;

/* Fills `d` (g_free'd by sv__dense_labels_clear) from n labels. */
void sv__dense_labels_init (SvDenseLabels *d, const gint32 *data, gsize n);
/* The same on n_threads threads (0: every core); the same indices. */
void sv__dense_labels_init_threads (SvDenseLabels *d, const gint32 *data, gsize n,
                                    int n_threads);
/* Makes d->runs for labels of nz·ny·nx voxels, unless the labels change
 * along most rows (then d->runs stays NULL and each label's sums are
 * found by its thread reading every voxel). */
void sv__dense_labels_make_runs (SvDenseLabels *d, guint nz, guint ny, guint nx, int n_threads);
void sv__dense_labels_clear (SvDenseLabels *d);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SvDenseLabels, sv__dense_labels_clear)

/* Voxel i's dense label. */
static inline guint32
sv__dense_at (const SvDenseLabels *d, gsize i)
{
  return d->index[i] - d->shift;
}

/* Sparse contingency table of two dense label maps, in rows by `a`. */
typedef struct
{
  gsize n;          /* voxels */
  gsize n_a, n_b;   /* distinct labels in each map */
  guint64 *size_a;  /* n_a voxel counts */
  guint64 *size_b;  /* n_b voxel counts */
  gsize *row_start; /* n_a + 1: pairs of row s are [row_start[s], row_start[s+1]) */
  guint32 *pair_b;  /* column of each nonzero entry */
  guint64 *pair_n;  /* its count */
} SvContingency;

/* The table of two dense maps of the same n voxels. */
void sv__contingency_init (SvContingency *t, const SvDenseLabels *a, const SvDenseLabels *b,
                           gsize n);
/* The same on n_threads threads (0: every core); the same table. */
void sv__contingency_init_threads (SvContingency *t, const SvDenseLabels *a,
                                   const SvDenseLabels *b, gsize n, int n_threads);
void sv__contingency_clear (SvContingency *t);
/* The adjusted Rand index of the two maps (sv_adjusted_rand_index). */
double sv__contingency_ari (const SvContingency *t);

G_END_DECLS

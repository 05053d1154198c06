/* Supervox engine: how two label maps of the same voxels differ: the
 * adjusted Rand index (sv-metrics.h) and the voxels where they disagree.
 *
 * A voxel agrees when its two labels are each other's best match: its
 * label in `b` is the one that overlaps its label in `a` most, and its
 * label in `a` is the one that overlaps its label in `b` most (ties go to
 * the lowest label value). Every other voxel differs. The rule is
 * symmetric, and no voxel differs exactly when the two maps are the same
 * partition, whatever numbers the labels carry. A segment split in two
 * makes the smaller part differ; two segments merged make the smaller one
 * differ. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  double adjusted_rand; /* Hubert & Arabie (1985), as sv_adjusted_rand_index */
  guint64 n_differing;  /* voxels that differ (see above) */
  gsize n_labels_a;     /* distinct values in a */
  gsize n_labels_b;     /* distinct values in b */
} SvPartitionDifference;

/* Compares label maps `a` and `b` of n voxels (any gint32 values) into
 * *difference. `differing` (NULL for none) receives n bytes, 1 where the
 * voxel differs and 0 where it agrees. On every core; 12 bytes per voxel
 * of working memory. */
void sv_partition_compare (const gint32 *a, const gint32 *b, gsize n,
                           SvPartitionDifference *difference, guint8 *differing);

G_END_DECLS

/* Supervox engine: per-supervoxel statistics of a label volume: voxel
 * count, intensity (mean, min, max per channel, in the volume's held
 * values), bounding box and centre. What the window shows for a picked
 * supervoxel, and the sizes behind its size histogram. */
#pragma once

#include <glib.h>

#include "sv-volume.h"

G_BEGIN_DECLS

#define SV_LABEL_STATS_MAX_CHANNELS 3

typedef struct
{
  gint32 label;
  guint64 n_voxels;
  /* Over the label's voxels, per channel (the first nc of the volume). */
  double mean[SV_LABEL_STATS_MAX_CHANNELS];
  double min[SV_LABEL_STATS_MAX_CHANNELS];
  double max[SV_LABEL_STATS_MAX_CHANNELS];
  guint lo[3], hi[3]; /* bounding box z, y, x, both inclusive */
  double centre[3];   /* mean voxel index z, y, x */
} SvLabelStats;

typedef struct _SvLabelTable SvLabelTable;

/* One pass over `labels` (and `image`, may be NULL: intensities are then
 * NaN), which must have the same nz×ny×nx (else
 * SV_ENGINE_ERROR_INVALID_DATA). Every distinct value is a label, as in
 * sv_metrics_compute. Memory: about 150 bytes per label, plus 4 bytes per
 * value between the smallest and largest label while it runs (a hash
 * table instead when they span more values than there are voxels).
 * On every core (4 bytes per voxel more while it runs, and up to 3 for
 * each label's runs along x); each label's intensity sums are added in
 * voxel order, whatever the number of cores. */
SvLabelTable *sv_label_table_new (const SvLabels *labels, const SvVolume *image, GError **error);
void sv_label_table_free (SvLabelTable *table);

/* Number of distinct labels. */
gsize sv_label_table_get_n_labels (const SvLabelTable *table);
/* The i-th label in increasing label order (borrowed). */
const SvLabelStats *sv_label_table_get (const SvLabelTable *table, gsize i);
/* The statistics of `label`, or NULL when no voxel has it (borrowed). */
const SvLabelStats *sv_label_table_lookup (const SvLabelTable *table, gint32 label);

/* Sizes in n_bins bins spaced evenly in log(size) from the smallest to the
 * largest label (edges[0] = smallest, edges[n_bins] = largest, both in
 * voxels); counts[i] labels have edges[i] <= size < edges[i + 1] (the last
 * bin includes the largest). Labels equal to `skip` are left out when
 * skip_valid (the background). All zero when no label is counted. */
void sv_label_table_size_histogram (const SvLabelTable *table, gboolean skip_valid, gint32 skip,
                                    guint n_bins, double *edges, guint64 *counts);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvLabelTable, sv_label_table_free)

G_END_DECLS

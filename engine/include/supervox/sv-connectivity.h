/* Supervox engine: connectivity enforcement after SLIC. */
#pragma once

#include <glib.h>

#include "supervox/sv-params.h"

G_BEGIN_DECLS

/* scikit-image's _enforce_label_connectivity_cython: raster scan,
 * breadth-first search over 6 face neighbours (+x −x +y −y +z −z) through
 * voxels of the same input label, components stop growing at max_size,
 * components smaller than min_size take the last adjacent final label seen.
 * A small piece that sees no final label keeps a new label: under
 * SV_CONNECTIVITY_RULE_CONNECTED the counter then advances (scikit-image PR
 * #8334), under SV_CONNECTIVITY_RULE_LEGACY it does not (scikit-image
 * <= 0.26, exactly; the next piece reuses the label). Voxels whose input is
 * start_label − 1 are background and stay so. `out` (nz*ny*nx) receives
 * labels consecutive from start_label. Returns the number of labels
 * (background excluded). */
gint64 sv_connectivity_enforce (const gint32 *in, guint nz, guint ny, guint nx, gint64 min_size,
                                gint64 max_size, int start_label, SvConnectivityRule rule,
                                gint32 *out);

/* The same labels, the components found on up to n_threads threads (<= 0:
 * every processor). */
gint64 sv_connectivity_enforce_threads (const gint32 *in, guint nz, guint ny, guint nx,
                                        gint64 min_size, gint64 max_size, int start_label,
                                        SvConnectivityRule rule, gint32 *out, int n_threads);

/* min_size and max_size for a run, as scikit-image derives them:
 * segment_size = n_voxels / n_clusters (n_voxels counts mask-in voxels). */
void sv_connectivity_sizes (gsize n_voxels, gsize n_clusters, double min_size_factor,
                            double max_size_factor, gint64 *min_size, gint64 *max_size);

G_END_DECLS

/* Supervox engine: superpixel quality metrics. */
#pragma once

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

typedef struct
{
  gsize n_labels;
  double size_min, size_max, size_mean, size_median, size_std;
  double asa;                 /* achievable segmentation accuracy (truth needed) */
  double undersegmentation;   /* corrected undersegmentation error (truth needed) */
  double boundary_recall;     /* at radius boundary_radius (truth needed) */
  double explained_variation; /* image needed */
  double compactness;         /* mean isoperimetric quotient, size-weighted */
  double adjusted_rand;       /* vs truth (truth needed) */
} SvMetrics;

/* Computes every metric that the given inputs allow; those that need a
 * missing truth or image are NaN. Shapes must match (error otherwise). */
gboolean sv_metrics_compute (const SvLabels *labels, const SvLabels *truth,
                             const SvVolume *image, guint boundary_radius, SvMetrics *metrics,
                             GError **error);

/* Adjusted Rand index between two label maps of the same shape. */
double sv_adjusted_rand_index (const gint32 *a, const gint32 *b, gsize n);

G_END_DECLS

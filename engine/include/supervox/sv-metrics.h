/* Supervox engine: superpixel quality metrics.
 *
 * N is the number of voxels; s runs over superpixels (the distinct values of
 * the label map, whatever they are: 0 and negative values count as labels
 * like any other), g over truth segments (distinct truth values).
 *
 * - asa: achievable segmentation accuracy, Σ_s max_g |s∩g| / N
 *   (Liu et al., CVPR 2011).
 * - undersegmentation: the "corrected" undersegmentation error in the form
 *   (1/N) Σ_s |s − argmax_g |s∩g||, i.e. the voxels of each superpixel
 *   outside the truth segment it overlaps most; this equals 1 − asa. It is
 *   the form used by Van den Bergh et al. (SEEDS, IJCV 2015). Note that
 *   Neubert & Protzel (2012) and Stutz et al. (2018) define their corrected
 *   UE differently, as (1/N) Σ_g Σ_{s∩g≠∅} min(|s∩g|, |s−g|), which is not
 *   computed here.
 * - boundary_recall: the fraction of truth boundary voxels (a voxel with a
 *   6-neighbour, 4 in 2D, of another truth label) that have a superpixel
 *   boundary voxel (same definition on the labels) within Chebyshev
 *   distance boundary_radius; NaN when the truth has no boundary.
 * - explained_variation: Σ_s |s|(μ_s − μ)² / Σ_v (I_v − μ)² (Moore et al.,
 *   CVPR 2008), per channel, averaged over the channels whose variance is
 *   not zero; NaN when every channel is constant.
 * - compactness: Σ_s |s| Q_s / N (Schick et al., ICPR 2012) with the
 *   isoperimetric quotient Q = 36π V² / A³ in 3D and 4π V / P² in 2D
 *   (nz == 1), V the voxel count, A the number of voxel faces (P of pixel
 *   edges) between the superpixel and other labels or the volume border.
 *   On a voxel grid the largest value is π/6 for a cube (π/4 for a square).
 * - adjusted_rand: Hubert & Arabie (1985), as scikit-learn's
 *   adjusted_rand_score (1 for two identical trivial partitions).
 * - sizes: min, max, mean, median (mean of the middle two for an even
 *   count) and population standard deviation of the superpixel voxel counts.
 */
#pragma once

#include <glib.h>

#include "sv-volume.h"

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

/* Computes every metric that the given inputs allow into *metrics; those
 * that need a missing truth or image (either may be NULL) are NaN. labels,
 * truth and image must have the same nz×ny×nx (the image may have any number
 * of channels); otherwise SV_ENGINE_ERROR_INVALID_DATA, e.g. "labels are
 * 10×20×30 but truth is 10×20×31", and *metrics is untouched. Working memory
 * is 14 to 30 bytes per voxel. On every core; the numbers are the same
 * for any number of cores. */
gboolean sv_metrics_compute (const SvLabels *labels, const SvLabels *truth, const SvVolume *image,
                             guint boundary_radius, SvMetrics *metrics, GError **error);

/* The same, with the voxels labelled `background` (when background_valid:
 * masked-out voxels, start_label − 1) left out as no superpixel: not in
 * n_labels, the sizes, compactness (their faces still bound the
 * superpixels beside them) or explained variation (computed over the other
 * voxels). The truth metrics still cover every voxel. */
gboolean sv_metrics_compute_background (const SvLabels *labels, const SvLabels *truth,
                                        const SvVolume *image, guint boundary_radius,
                                        gboolean background_valid, gint32 background,
                                        SvMetrics *metrics, GError **error);

/* Adjusted Rand index between two label maps of n voxels (any gint32
 * values). Symmetric; 1.0 when n < 2 or both maps are the same trivial
 * partition. Exact integer pair counts up to about 6·10⁹ voxels. */
double sv_adjusted_rand_index (const gint32 *a, const gint32 *b, gsize n);

G_END_DECLS

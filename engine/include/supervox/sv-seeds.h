/* Supervox engine: seeding of cluster centres. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* scikit-image's util.regular_grid for a 3D shape: per axis start and step
 * (step 1, start 0 when every voxel is a seed). */
void sv_regular_grid (const guint shape_zyx[3], double n_points, guint start[3], guint step[3]);

/* Seeds of a run. */
typedef struct
{
  gsize n;            /* K, the number of clusters */
  float *zyx;         /* K × 3 initial centre positions, owned */
  float step;         /* S: max of the grid steps, for spatial_weight */
  int window_step[3]; /* z, y, x search window steps: regular_grid(shape, K) */
} SvSeeds;

void sv_seeds_clear (SvSeeds *seeds);

/* Grid seeding without a mask, exactly as scikit-image: all grid points of
 * regular_grid(shape, n_segments) in z-major order. */
gboolean sv_seeds_grid (const guint shape_zyx[3], gint64 n_segments, SvSeeds *seeds,
                        GError **error);

/* maskSLIC seeding: deterministic seeds inside the mask (nonzero bytes) such
 * that every mask-in voxel lies in some seed's search window. Fails when the
 * mask is empty. */
gboolean sv_seeds_mask (const guint shape_zyx[3], const guint8 *mask, gint64 n_segments,
                        SvSeeds *seeds, GError **error);

/* The box [lo, hi) per axis (z, y, x) in which a cluster centred at
 * centre_zyx searches for voxels, in a run of n_clusters clusters on a
 * volume of shape_zyx: the iterations' window (sv_arith_window) with the
 * steps regular_grid(shape, K). Teaching mode draws it. */
void sv_slic_search_window (const guint shape_zyx[3], gsize n_clusters, const float centre_zyx[3],
                            int lo[3], int hi[3]);

G_END_DECLS

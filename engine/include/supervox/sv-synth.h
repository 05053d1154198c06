/* Supervox engine: synthetic volumes with ground truth, for tests, the
 * bundled sample and benchmarks. */
#pragma once

#include <glib.h>

#include "sv-volume.h"

G_BEGIN_DECLS

typedef struct
{
  guint nz, ny, nx;
  guint n_cells;         /* Voronoi cells */
  double nucleus_radius; /* voxels; 0 for no nuclei */
  double blur_sigma;     /* voxels */
  double noise_sigma;    /* Gaussian noise, in units of the [0,1] intensity range */
  guint64 seed;
} SvSynthParams;

/* Defaults: 64×128×128, 60 cells, nucleus radius 5, blur 1.0, noise 0.03,
 * seed 1. */
void sv_synth_params_init_defaults (SvSynthParams *params);

/* A phantom of Voronoi cells with ground truth, one channel, values in
 * [0,1], spacing 1:
 * - n_cells seeds on distinct voxel centres drawn uniformly; every voxel
 *   belongs to its nearest seed (squared Euclidean distance in voxels, ties
 *   to the lowest seed index), so every cell owns at least its seed voxel;
 * - cell means 0.2 + 0.4·k/(n_cells−1), k = 0..n_cells−1, dealt to the cells
 *   in a random order (all distinct);
 * - a nucleus: voxels within nucleus_radius of the seed and in the seed's
 *   own cell are brighter by 0.3;
 * - a separable Gaussian blur of blur_sigma voxels (scipy.ndimage
 *   gaussian_filter, mode 'reflect', truncate 4);
 * - Gaussian noise of std noise_sigma (Box–Muller), then clamped to [0,1].
 * truth (may be NULL) receives the cell labels 1..n_cells. Single-threaded
 * and driven by one xoshiro256** stream (rng.h), so the same parameters give
 * the same bytes everywhere. Bad parameters (an empty axis, n_cells of 0 or
 * more than the voxels, negative or non-finite radius/sigmas) give
 * SV_ENGINE_ERROR_INVALID_PARAM. About 1 s for 256³ with 60 cells. */
SvVolume *sv_synth_cells (const SvSynthParams *params, SvLabels **truth, GError **error);

/* A volume of 0/1 blobs after skimage.data.binary_blobs: with L the longest
 * axis and d the number of axes longer than one, int(1/blob_size_fraction)^d
 * random voxels are set to 1 (for a cube; other shapes get the same number
 * per voxel), the result is Gaussian-blurred with sigma
 * 0.25·L·blob_size_fraction (mode 'reflect', where scikit-image uses
 * 'nearest') and thresholded at numpy's percentile 100·(1 − volume_fraction)
 * (value ≥ threshold → 1). Seeded like sv_synth_cells, but the random
 * sequence is ours, not numpy's. blob_size_fraction in (0, 1],
 * volume_fraction in [0, 1], else SV_ENGINE_ERROR_INVALID_PARAM. */
SvVolume *sv_synth_blobs (guint nz, guint ny, guint nx, double blob_size_fraction,
                          double volume_fraction, guint64 seed, GError **error);

G_END_DECLS

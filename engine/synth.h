/* Supervox engine: synthetic volumes with ground truth, for tests, the
 * bundled sample and benchmarks. */
#pragma once

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

typedef struct
{
  guint nz, ny, nx;
  guint n_cells;        /* Voronoi cells */
  double nucleus_radius; /* voxels; 0 for no nuclei */
  double blur_sigma;    /* voxels */
  double noise_sigma;   /* Gaussian noise, in units of the [0,1] intensity range */
  guint64 seed;
} SvSynthParams;

void sv_synth_params_init_defaults (SvSynthParams *params);

/* A phantom of Voronoi cells with distinct mean intensities, a brighter
 * spherical nucleus in each cell, blurred and with noise; values in [0,1].
 * truth (may be NULL) receives the cell labels 1..n_cells. Deterministic for
 * a seed. */
SvVolume *sv_synth_cells (const SvSynthParams *params, SvLabels **truth, GError **error);

/* A binary_blobs-like volume: smoothed noise thresholded to 0/1, seeded. */
SvVolume *sv_synth_blobs (guint nz, guint ny, guint nx, double blob_size_fraction,
                          double volume_fraction, guint64 seed, GError **error);

G_END_DECLS

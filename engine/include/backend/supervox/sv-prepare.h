/* Supervox engine: the prepare stage (rescale, Lab, smoothing) that turns a
 * loaded volume into the image SLIC clusters. Its result depends only on the
 * volume, the mask, sigma, spacing and convert2lab, so a compactness or
 * n_segments change reuses it. */
#pragma once

#include <glib.h>

#include "supervox/sv-params.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

/* A prepared image: float32 Z×Y×X×C, channel fastest (C = 3 after Lab). */
typedef struct
{
  guint nz, ny, nx, nc;
  float *data;      /* owned */
  float max_abs;    /* max |value| over mask-in voxels and channels */
  gboolean is_lab;
} SvPrepared;

void sv_prepared_free (SvPrepared *prepared);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvPrepared, sv_prepared_free)

/* Runs the whole stage. mask may be NULL (nz*ny*nx bytes, nonzero = in).
 * Errors: NaN/inf among mask-in voxels (SV_ENGINE_ERROR_INVALID_DATA),
 * convert2lab YES without 3 channels (INVALID_PARAM). n_threads <= 0 means
 * all cores. */
SvPrepared *sv_prepare (const SvVolume *volume, const guint8 *mask, const SvSlicParams *params,
                        int n_threads, GError **error);

/* Step 1: v = (v − min) / max(v − min) over mask-in voxels and all channels,
 * in place, float32 as scikit-image does (no division when the max is 0).
 * Fails on NaN/inf among mask-in voxels. */
gboolean sv_rescale (float *data, gsize n_voxels, guint nc, const guint8 *mask, GError **error);

/* The error for NaN/inf voxels, shared by both backends so that users see
 * one message: counts, and the first bad voxel as z, y, x (a flat index
 * when ny or nx is 0). */
void sv_set_non_finite_error (GError **error, gsize n_nan, gsize n_inf, gsize first_bad,
                              guint ny, guint nx);

/* Step 2: sRGB in [0,1] → CIELAB (D65, 2° observer), in place, 3 channels,
 * in float32 arithmetic as skimage.color.rgb2lab does for a float32 image
 * (sources that scikit-image computes in float32, sv_sample_type_float64). */
void sv_rgb_to_lab (float *data, gsize n_voxels);

/* Step 1 in float64, for sources that scikit-image computes in float64: a
 * sample's img_as_float double (sv_sample_to_double) less `shift`, divided
 * by `scale` when `divide`. */
typedef struct
{
  SvSampleType type;
  double shift, scale;
  gboolean divide;
} SvRescale64;

/* The float64 rescale for the mask-in range [min, max] of the float32
 * samples (any_in FALSE: no voxel is in, nothing is shifted or divided). */
void sv_rescale64_init (SvRescale64 *rescale, SvSampleType type, gboolean any_in, float min,
                        float max);

/* Steps 1 and 2 for a 3-channel source that scikit-image computes in
 * float64: in place, each voxel's float32 samples are taken back to their
 * doubles, rescaled and converted to Lab in float64 as rgb2lab does for a
 * float64 image, and rounded to float32 once. mask may be NULL; non-finite
 * samples of masked-out voxels become 0 as in sv_rescale. */
void sv_rgb_to_lab_double (float *data, gsize n_voxels, const SvRescale64 *rescale,
                           const guint8 *mask);

/* Step 3: separable Gaussian per axis (z, y, x; sigma in voxels, 0 skips the
 * axis) with scipy.ndimage's 'reflect' boundary, truncate 4.0, kernel and
 * accumulation in double, each axis rounded to float32 (scipy's order). */
void sv_gaussian_smooth (float *data, guint nz, guint ny, guint nx, guint nc,
                         const float sigma_zyx[3], int n_threads);

/* scipy's _gaussian_kernel1d(sigma, 0, radius) with radius = (int)(4σ + 0.5):
 * the 2·radius + 1 float64 weights sv_gaussian_smooth uses (numpy's pairwise
 * sum normalises them). Shared with the CUDA backend so both smooth with
 * identical taps. Free with g_free. */
double *sv_gaussian_kernel (float sigma, int *radius_out);

G_END_DECLS

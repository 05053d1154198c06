/* Supervox engine: the arithmetic both backends share, so that the CPU
 * reference and the CUDA backend produce bit-identical labels.
 *
 * Everything here is plain IEEE float32/float64/int64 arithmetic written out
 * in one order; both sides compile it without FMA contraction. The header is
 * valid C11 and CUDA C++ (functions become __host__ __device__). */
#pragma once

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define SV_HD __host__ __device__ __forceinline__
#else
#define SV_HD static inline
#endif

/* Spatial distance term of SLIC-SEMANTICS.md, in exactly scikit-image's
 * float32 order: ((dz² + dy²) + dx²) · spatial_weight, where
 * d_a = s_a · (c_a − p_a). */
SV_HD float
sv_arith_spatial (float cz, float cy, float cx, float z, float y, float x, float sz, float sy,
                  float sx, float spatial_weight)
{
  float dz = sz * (cz - z);
  float dy = sy * (cy - y);
  float dx = sx * (cx - x);
  dz = dz * dz;
  dy = dy * dy;
  dx = dx * dx;
  return ((dz + dy) + dx) * spatial_weight;
}

/* One channel's contribution: t = I·ratio − C; returns t·t. The voxel value
 * is scaled by ratio on the fly (scikit-image multiplies the image by
 * ratio = 1/compactness in float32 before the iterations). */
SV_HD float
sv_arith_colour_term (float value, float ratio, float centre)
{
  float t = value * ratio - centre;
  return t * t;
}

/* spatial_weight = 1 / (S·S) with S the float grid step, as scikit-image
 * computes it: the product in float32, the division in double. */
SV_HD float
sv_arith_spatial_weight (float step)
{
  return (float) (1.0 / (double) (step * step));
}

/* The full SLIC distance: spatial + colour, the colour sum divided by the
 * cluster's max colour distance under SLIC-zero. colour_sum is
 * ((0 + t0²) + t1²) + … in channel order. */
SV_HD float
sv_arith_distance (float spatial, float colour_sum, int slic_zero, float max_dist_colour)
{
  if (slic_zero)
    colour_sum = colour_sum / max_dist_colour;
  return spatial + colour_sum;
}

/* Window bounds of a cluster along one axis, as scikit-image computes them in
 * float32: [max(c − 2·step, 0), min(c + 2·step + 1, dim)), truncated. */
SV_HD void
sv_arith_window (float c, int step, int dim, int *lo, int *hi)
{
  float a = c - (float) (2 * step);
  float b = (c + (float) (2 * step)) + 1.0f;
  *lo = a > 0.0f ? (int) a : 0;
  *hi = b < (float) dim ? (int) b : dim;
}

/* The cell of side `step` that holds centre coordinate c along an axis of
 * ncell cells, clamped to [0, ncell − 1]. Centres lie in [0, dim): (int) c
 * is floor (c), and integer division gives floor (c / step) exactly. (This
 * equals floorf (c / (float) step) for 0 <= c < 2^24: a float quotient
 * just below an integer never rounds up to it.) */
SV_HD int
sv_arith_cell_of (float c, int step, int ncell)
{
  int i = (int) c;
  i = i < 0 ? 0 : i / step;
  return i < ncell ? i : ncell - 1;
}

/* Distance along one axis from centre c to the nearest integer in
 * [a0, a1], for the lower bounds of the tiled searches. */
SV_HD double
sv_arith_axis_gap (double c, int a0, int a1)
{
  if (c < a0)
    return a0 - c;
  if (c > a1)
    return c - a1;
  return 0.0;
}

/* Lexicographic (distance, cluster) order: a candidate wins when strictly
 * closer, or equally close with a lower index. This equals scikit-image's
 * "visit k in increasing order, take strictly smaller" in any visiting order. */
SV_HD int
sv_arith_better (float d, int64_t k, float best_d, int64_t best_k)
{
  return d < best_d || (d == best_d && k < best_k);
}

/* Fixed-point colour accumulation. Each scaled colour value v (= I·ratio) is
 * added to its cluster's sum as llrint(v · 2^shift); integer addition is
 * associative, so the sums do not depend on thread count or visiting order.
 * shift keeps |sum| < 2^62 for n_voxels values of magnitude ≤ max_abs. */
SV_HD int
sv_arith_colour_shift (float max_abs, uint64_t n_voxels)
{
  int e_val = 0, e_n = 0;
  if (!(max_abs > 0.0f))
    max_abs = 1.0f;
  frexp ((double) max_abs, &e_val);        /* max_abs < 2^e_val */
  frexp ((double) (n_voxels + 1), &e_n);   /* n_voxels < 2^e_n */
  int shift = 62 - e_val - e_n;
  return shift < 0 ? 0 : (shift > 60 ? 60 : shift);
}

SV_HD int64_t
sv_arith_colour_fixed (float v, int shift)
{
  return (int64_t) llrint (ldexp ((double) v, shift));
}

/* Mean of a fixed-point colour sum over count voxels, as float32. */
SV_HD float
sv_arith_colour_mean (int64_t sum, int shift, int64_t count)
{
  return (float) (ldexp ((double) sum, -shift) / (double) count);
}

/* Mean of an exact integer coordinate sum, as float32. */
SV_HD float
sv_arith_coord_mean (int64_t sum, int64_t count)
{
  return (float) ((double) sum / (double) count);
}

/* Supervox CUDA backend: a tile's list of candidate clusters in the
 * assignment (slic-assign.cu): the colour part of their lower bounds, and
 * their sort by bound. */
#pragma once

#include "slic-kernels-common.cuh"

struct TileCandidate
{
  float bound; /* lower bound of the float32 distance over the tile */
  int k;
};

/* One step of a bitonic sort of a[0, m) by (bound, k): pairs p taken by
 * the threads first, first + stride, ... */
__device__ __forceinline__ void
bitonic_step (TileCandidate *a, int m, int size, int step, int first, int stride)
{
  for (int p = first; p < m / 2; p += stride)
    {
      const int i = (p & ~(step - 1)) << 1 | (p & (step - 1)), j = i + step;
      const TileCandidate x = a[i], y = a[j];
      const bool x_after = x.bound > y.bound || (x.bound == y.bound && x.k > y.k);
      if (x_after == ((i & size) == 0))
        {
          a[i] = y;
          a[j] = x;
        }
    }
}

/* Lower bound of the float32 colour sum of a centre over every value of a
 * tile, from the tile's per-channel value range. Exact by monotonicity
 * alone: value·ratio, the difference and the square are each rounded
 * monotonically, so the float32 term of any value in [lo, hi] is at least
 * the float32 term at the interval's point nearest the centre (0 inside). */
template <int NC>
__device__ __forceinline__ float
colour_lower_bound (const float *vlo, const float *vhi, float ratio, const float *centre)
{
  float colour = 0.0f;
  for (int c = 0; c < NC; c++)
    {
      float lo = vlo[c] * ratio - centre[c];
      float hi = vhi[c] * ratio - centre[c];
      float m = lo > 0.0f ? lo * lo : (hi < 0.0f ? hi * hi : 0.0f);
      colour = colour + m;
    }
  return colour;
}

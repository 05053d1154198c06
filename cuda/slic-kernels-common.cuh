/* Supervox CUDA backend: what the SLIC iteration kernels share (slic-kernels.cu,
 * slic-assign.cu): grid sizes, a slab's place in the volume, a centre's
 * bin, and the warp's segmented sum. */
#pragma once

#include <limits.h>
#include <math.h>

#include "cuda-kernels.h"
#include "supervox/sv-slic-arith.h"

#define SV_BLOCK 256
#define SV_FULL_MASK 0xffffffffu

static inline unsigned int
grid_for (long long n, int block)
{
  return (unsigned int)((n + block - 1) / block);
}

/* The slab's voxels: [first, end) in whole-volume indices. */
__host__ __device__ static inline long long
slab_first (const SvCudaIter &it)
{
  return (long long)it.z_begin * sv_cuda_plane (it);
}

__host__ __device__ static inline long long
slab_voxels (const SvCudaIter &it)
{
  return (long long)(it.z_end - it.z_begin) * sv_cuda_plane (it);
}

/* Where element 0 of the whole volume would be for an array that holds the
 * slab's slices (`per_voxel` elements each): the kernels index it with
 * global voxel indices and touch only the slab's. NULL stays NULL. */
template <typename T>
static inline T *
volume_base (T *slab, const SvCudaIter &it, int per_voxel)
{
  if (slab == NULL)
    return NULL;
  return (T *)((uintptr_t)slab - (uintptr_t)(slab_first (it) * per_voxel * (long long)sizeof (T)));
}

__device__ __forceinline__ int
cell_index (const SvCudaIter &it, const float *c)
{
  int cz = sv_arith_cell_of (c[0], it.wstep[0], it.ncell[0]);
  int cy = sv_arith_cell_of (c[1], it.wstep[1], it.ncell[1]);
  int cx = sv_arith_cell_of (c[2], it.wstep[2], it.ncell[2]);
  return (cz * it.ncell[1] + cy) * it.ncell[2] + cx;
}

/* Inclusive sum of `value` over the lanes from seg_start to this one. */
__device__ __forceinline__ long long
warp_run_sum (long long value, int lane, int seg_start)
{
  for (int off = 1; off < 32; off <<= 1)
    {
      long long other = __shfl_up_sync (SV_FULL_MASK, value, off);
      if (lane - off >= seg_start)
        value += other;
    }
  return value;
}

/* Supervox CUDA backend: the assignment's update sums, a tile at a time
 * (slic-assign.cu). */
#pragma once

#include "slic-kernels-common.cuh"

/* Update sums by tiles. A block sums the voxels of its tile, which meet a
 * handful of clusters, into a small table in shared memory keyed by
 * cluster, and adds each cluster's totals to global memory once. Runs of
 * equal labels within a row of a warp are summed first: their count and
 * coordinate sums follow from their first and last voxel, and only the
 * colour needs the warp's shuffles. A cluster that finds the table full adds
 * its run straight to global memory: the totals are integers, so any split
 * gives the same sums. The assignment adds its voxels this way as it writes
 * them (no second pass over the volume). */
#define ACC_SLOTS 128
#define ACC_ROW 16 /* lanes per run segment: a warp holds whole rows of 16 or 32 x */
#define ACC_MAX_FIELDS 8 /* 4 + nc with nc <= 4; more channels take the raster kernel */

struct AccTable
{
  int *key;                /* ACC_SLOTS clusters, -1 free */
  unsigned long long *sum; /* ACC_SLOTS × fields */
  int fields;
};

__device__ __forceinline__ void
acc_clear (AccTable t, int tid, int n_threads)
{
  for (int i = tid; i < ACC_SLOTS; i += n_threads)
    t.key[i] = -1;
  for (int i = tid; i < ACC_SLOTS * t.fields; i += n_threads)
    t.sum[i] = 0;
}

/* One voxel per lane, lanes in rows of ROW consecutive x (or a multiple of
 * ROW); k < 0 adds nothing. Every lane of the warp must call it. */
template <int ROW = ACC_ROW>
__device__ __forceinline__ void
acc_add (const SvCudaIter &it, AccTable t, unsigned long long *__restrict__ sums,
         const float *__restrict__ image, int k, long long v, int x, int y, int z, int lane)
{
  const int prev = __shfl_up_sync (SV_FULL_MASK, k, 1);
  const int next = __shfl_down_sync (SV_FULL_MASK, k, 1);
  const bool head = lane % ROW == 0 || prev != k;
  const bool tail = lane % ROW == ROW - 1 || next != k;
  const unsigned heads = __ballot_sync (SV_FULL_MASK, head);
  const unsigned below = heads & (lane == 31 ? 0xffffffffu : ((2u << lane) - 1u));
  const int seg_start = 31 - __clz (below);

  /* The slot of this run's cluster, found by the run's last lane. */
  int slot = -1;
  if (tail && k >= 0)
    {
      int h = (int)(((unsigned)k * 2654435761u) >> 25) & (ACC_SLOTS - 1);
      for (int probe = 0; probe < ACC_SLOTS; probe++)
        {
          int old = atomicCAS (&t.key[h], -1, k);
          if (old == -1 || old == k)
            {
              slot = h;
              break;
            }
          h = (h + 1) & (ACC_SLOTS - 1);
        }
    }
  unsigned long long *dst
      = slot >= 0 ? t.sum + (size_t)slot * t.fields : sums + (size_t)(k >= 0 ? k : 0) * t.fields;
  if (tail && k >= 0)
    {
      const long long count = lane - seg_start + 1;
      const long long first_x = x - (count - 1);
      atomicAdd (dst + 0, (unsigned long long)count);
      atomicAdd (dst + 1, (unsigned long long)(count * z));
      atomicAdd (dst + 2, (unsigned long long)(count * y));
      atomicAdd (dst + 3, (unsigned long long)(count * first_x + count * (count - 1) / 2));
    }
  for (int c = 0; c < it.nc; c++)
    {
      long long value = 0;
      if (k >= 0)
        value = sv_arith_colour_fixed (image[v * it.nc + c] * it.ratio, it.colour_shift);
      value = warp_run_sum (value, lane, seg_start);
      if (tail && k >= 0)
        atomicAdd (dst + 4 + c, (unsigned long long)value);
    }
}

__device__ __forceinline__ void
acc_flush (AccTable t, unsigned long long *__restrict__ sums, int tid, int n_threads)
{
  for (int i = tid; i < ACC_SLOTS * t.fields; i += n_threads)
    {
      const int k = t.key[i / t.fields];
      if (k >= 0 && t.sum[i] != 0)
        atomicAdd (sums + (size_t)k * t.fields + i % t.fields, t.sum[i]);
    }
}

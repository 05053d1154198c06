/* Supervox CUDA backend: the cut of oversized components in the
 * connectivity step.
 *
 * The sequential scan cuts a component C of max_size voxels or more into
 * pieces: a BFS from the raster-first voxel of C not yet taken, stopped
 * after max_size voxels, then the next. One thread block per component
 * runs each of those BFSs level by level and keeps the sequential queue
 * order exactly: within a level a newly found voxel belongs to the first
 * frontier entry (and, for that entry, the first direction +x −x +y −y +z
 * −z) that reaches it, which an atomicMin on the key entry·6 + direction
 * decides; a block-wide scan over the frontier in queue order then gives
 * every winner its queue position, and only the first max_size voxels
 * join the piece. Keys stay below 2³² because a level of a BFS on a grid
 * of fewer than 2³¹ voxels holds far fewer than 2³²/6 of them. */
#define G_LOG_DOMAIN "sv-cuda"

#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <limits.h>

#include "connectivity-private.cuh"
#include "cuda-check.h"

#define SPLIT_BLOCK 256
#define UNCLAIMED 0xffffffffu

/* Lists the roots of oversized components; index[root] = position. */
__global__ void
cc_collect_kernel (int n, const int *__restrict__ parent, const int *__restrict__ size,
                   long long max_size, int *__restrict__ roots, int *__restrict__ comp_size,
                   int *__restrict__ index, int *counters)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || parent[v] != v || size[v] < max_size)
    return;
  int i = atomicAdd (&counters[COUNTER_COLLECT], 1);
  roots[i] = v;
  comp_size[i] = size[v];
  index[v] = i;
}

/* Sort keys: the oversized component's position, or k for every other
 * voxel; values: the voxel itself. */
__global__ void
cc_key_kernel (int n, const int *__restrict__ parent, const int *__restrict__ size,
               long long max_size, const int *__restrict__ index, int k, int *__restrict__ keys,
               int *__restrict__ values)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int r = parent[v];
  keys[v] = r >= 0 && size[r] >= max_size ? index[r] : k;
  values[v] = v;
}

/* Whether neighbour j of a frontier voxel is an untaken voxel of the
 * component. */
__device__ __forceinline__ bool
cc_open (const int32_t *in, const uint8_t *taken, int label, const int nb[6], const bool ok[6],
         int j)
{
  return ok[j] && in[nb[j]] == label && !taken[nb[j]];
}

/* One block per oversized component (see the file comment). list holds
 * the component's voxels in raster order, q its queue space. */
__global__ void
__launch_bounds__ (SPLIT_BLOCK)
    cc_split_kernel (int nz, int ny, int nx, const int32_t *__restrict__ in,
                     const int *__restrict__ roots, const int *__restrict__ offsets,
                     const int *__restrict__ comp_size, const int *__restrict__ sorted,
                     int *__restrict__ queue, long long max_size, uint8_t *taken,
                     unsigned int *claim, int *__restrict__ parent, int *__restrict__ size)
{
  typedef cub::BlockScan<int, SPLIT_BLOCK> BlockScan;
  __shared__ typename BlockScan::TempStorage scan_storage;
  __shared__ int s_found;

  const int c = blockIdx.x;
  const int label = in[roots[c]];
  const int *list = sorted + offsets[c];
  int *q = queue + offsets[c];
  const int count = comp_size[c];
  int used = 0, scan_from = 0;

  for (;;)
    {
      /* The next piece starts at the first voxel of the list not taken;
       * everything before scan_from is taken already. */
      int start_at = -1;
      while (scan_from < count)
        {
          if (threadIdx.x == 0)
            s_found = INT_MAX;
          __syncthreads ();
          int t = scan_from + threadIdx.x;
          if (t < count && !taken[list[t]])
            atomicMin (&s_found, t);
          __syncthreads ();
          int found = s_found;
          __syncthreads ();
          if (found != INT_MAX)
            {
              start_at = found;
              break;
            }
          scan_from += blockDim.x;
        }
      if (start_at < 0)
        break;
      scan_from = start_at + 1;

      int *p = q + used;
      const int start = list[start_at];
      if (threadIdx.x == 0)
        {
          p[0] = start;
          taken[start] = 1;
        }
      __syncthreads ();

      long long lo = 0, hi = 1;
      while (lo < hi && hi < max_size)
        {
          for (long long e = lo + threadIdx.x; e < hi; e += blockDim.x)
            {
              int nb[6];
              bool ok[6];
              cc_neighbours (p[e], nx, ny, nz, nb, ok);
              for (int j = 0; j < 6; j++)
                if (cc_open (in, taken, label, nb, ok, j))
                  atomicMin (&claim[nb[j]], (unsigned int)((e - lo) * 6 + j));
            }
          __syncthreads ();

          /* Winners in queue order, chunk by chunk of the frontier. */
          long long tail = hi;
          for (long long base = lo; base < hi; base += blockDim.x)
            {
              const long long e = base + threadIdx.x;
              int won[6], n_won = 0;
              if (e < hi)
                {
                  int nb[6];
                  bool ok[6];
                  cc_neighbours (p[e], nx, ny, nz, nb, ok);
                  for (int j = 0; j < 6; j++)
                    if (cc_open (in, taken, label, nb, ok, j)
                        && claim[nb[j]] == (unsigned int)((e - lo) * 6 + j))
                      won[n_won++] = nb[j];
                }
              int before, chunk_total;
              BlockScan (scan_storage).ExclusiveSum (n_won, before, chunk_total);
              for (int w = 0; w < n_won; w++)
                {
                  const long long pos = tail + before + w;
                  if (pos < max_size)
                    {
                      p[pos] = won[w];
                      taken[won[w]] = 1;
                    }
                  else
                    /* Past the cap: left for a later piece, unclaimed. */
                    claim[won[w]] = UNCLAIMED;
                }
              tail += chunk_total;
              __syncthreads ();
            }
          lo = hi;
          hi = tail < max_size ? tail : max_size;
        }

      for (long long j = threadIdx.x; j < hi; j += blockDim.x)
        parent[p[j]] = start;
      if (threadIdx.x == 0)
        size[start] = (int)hi;
      used += (int)hi;
      __syncthreads ();
    }
}

cudaError_t
sv__cuda_cc_split_oversized (const int32_t *labels, int nz, int ny, int nx, long long max_size,
                             int k, SvCudaConnScratch *s, cudaStream_t stream)
{
  cudaError_t err;
  int nn = nz * ny * nx;
  int *roots = NULL, *comp_size = NULL, *offsets = NULL;
  size_t tmp = 0;
  int end_bit = 1;
  while (end_bit < 31 && (1 << end_bit) <= k)
    end_bit++;
  cub::DoubleBuffer<int> keys (s->link, s->small_roots);
  cub::DoubleBuffer<int> values (s->small_offsets, s->queue);

  SV_CUDA_TRY (cudaMallocAsync (&roots, (size_t)k * sizeof (int), stream));
  SV_CUDA_TRY (cudaMallocAsync (&comp_size, (size_t)(k + 1) * sizeof (int), stream));
  SV_CUDA_TRY (cudaMallocAsync (&offsets, (size_t)(k + 1) * sizeof (int), stream));
  SV_CUDA_TRY (cudaMemsetAsync (comp_size, 0, (size_t)(k + 1) * sizeof (int), stream));
  cc_collect_kernel<<<sv_cc_grid (nn), SV_CC_BLOCK, 0, stream>>> (
      nn, s->parent, s->size, max_size, roots, comp_size, s->queue, s->counters);
  SV_CUDA_TRY (cudaGetLastError ());
  cc_key_kernel<<<sv_cc_grid (nn), SV_CC_BLOCK, 0, stream>>> (
      nn, s->parent, s->size, max_size, s->queue, k, s->link, s->small_offsets);
  SV_CUDA_TRY (cudaGetLastError ());
  /* Stable: within a component the voxels stay in raster order. */
  SV_CUDA_TRY (cub::DeviceRadixSort::SortPairs (NULL, tmp, keys, values, nn, 0, end_bit, stream));
  if (tmp > s->scan_tmp_bytes)
    SV_CUDA_TRY (sv__cuda_cc_grow_scratch (s, tmp));
  tmp = s->scan_tmp_bytes;
  SV_CUDA_TRY (
      cub::DeviceRadixSort::SortPairs (s->scan_tmp, tmp, keys, values, nn, 0, end_bit, stream));
  tmp = 0;
  SV_CUDA_TRY (cub::DeviceScan::ExclusiveSum (NULL, tmp, comp_size, offsets, k + 1, stream));
  if (tmp > s->scan_tmp_bytes)
    SV_CUDA_TRY (sv__cuda_cc_grow_scratch (s, tmp));
  tmp = s->scan_tmp_bytes;
  SV_CUDA_TRY (cub::DeviceScan::ExclusiveSum (s->scan_tmp, tmp, comp_size, offsets, k + 1, stream));
  /* The sort keys are spent: one of their buffers holds the claims. */
  SV_CUDA_TRY (cudaMemsetAsync (keys.Alternate (), 0xff, (size_t)nn * sizeof (int), stream));
  SV_CUDA_TRY (cudaMemsetAsync (s->visited, 0, (size_t)nn, stream));
  cc_split_kernel<<<k, SPLIT_BLOCK, 0, stream>>> (
      nz, ny, nx, labels, roots, offsets, comp_size, values.Current (), values.Alternate (),
      max_size, s->visited, (unsigned int *)keys.Alternate (), s->parent, s->size);
  SV_CUDA_TRY (cudaGetLastError ());
out:
  cudaFreeAsync (roots, stream);
  cudaFreeAsync (comp_size, stream);
  cudaFreeAsync (offsets, stream);
  return err;
}

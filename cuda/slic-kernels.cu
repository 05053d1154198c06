/* Supervox CUDA backend: the SLIC iteration kernels but the assignment
 * (slic-assign.cu): binning, the exact update, SLIC-zero maxima, labels and
 * the fill of unreached voxels.
 *
 * All arithmetic that decides labels goes through supervox/sv-slic-arith.h, the
 * functions the CPU reference uses, compiled with --fmad=false so that the
 * float32 results are bit-identical. Order independence comes from
 * sv_arith_better (lexicographic (distance, index) minimum) and from integer
 * sums, so thread scheduling cannot change a label. */
#include "slic-kernels-common.cuh"

__global__ void
bin_count_kernel (SvCudaIter it, const float *__restrict__ centres,
                  const uint8_t *__restrict__ alive, int *__restrict__ cell_count)
{
  int k = it.band0 + blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= it.band1 || !alive[k])
    return;
  atomicAdd (&cell_count[cell_index (it, centres + (size_t)k * (3 + it.nc))], 1);
}

__global__ void
bin_fill_kernel (SvCudaIter it, const float *__restrict__ centres,
                 const uint8_t *__restrict__ alive, const int *__restrict__ cell_start,
                 int *__restrict__ cell_fill, int *__restrict__ cell_items)
{
  int k = it.band0 + blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= it.band1 || !alive[k])
    return;
  int cell = cell_index (it, centres + (size_t)k * (3 + it.nc));
  /* The order inside a cell is arbitrary; the assignment does not depend on it. */
  int slot = atomicAdd (&cell_fill[cell], 1);
  cell_items[cell_start[cell] + slot] = k;
}

cudaError_t
sv_cuda_bin_count (const SvCudaIter &it, const float *centres, const uint8_t *alive,
                   int *cell_count, cudaStream_t stream)
{
  if (it.band1 <= it.band0)
    return cudaSuccess;
  bin_count_kernel<<<grid_for (it.band1 - it.band0, SV_BLOCK), SV_BLOCK, 0, stream>>> (
      it, centres, alive, cell_count);
  return cudaGetLastError ();
}

cudaError_t
sv_cuda_bin_fill (const SvCudaIter &it, const float *centres, const uint8_t *alive,
                  const int *cell_start, int *cell_fill, int *cell_items, cudaStream_t stream)
{
  if (it.band1 <= it.band0)
    return cudaSuccess;
  bin_fill_kernel<<<grid_for (it.band1 - it.band0, SV_BLOCK), SV_BLOCK, 0, stream>>> (
      it, centres, alive, cell_start, cell_fill, cell_items);
  return cudaGetLastError ();
}

/* Warp-level segmented sum of consecutive lanes with the same cluster, so
 * that one atomic per run of equal labels reaches global memory. Integer
 * addition is exact, so any grouping gives the same totals. */
__device__ __forceinline__ void
warp_add (unsigned long long *sums, int k, long long value, int lane, int seg_start, bool tail)
{
  value = warp_run_sum (value, lane, seg_start);
  if (tail && k >= 0)
    atomicAdd (sums, (unsigned long long)value);
}

__global__ void
accumulate_kernel (SvCudaIter it, const float *__restrict__ image,
                   const int32_t *__restrict__ nearest, unsigned long long *__restrict__ sums)
{
  /* Every lane of the warp takes part in the shuffles, also past the end. */
  const long long v_end = slab_first (it) + slab_voxels (it);
  long long v = slab_first (it) + (long long)blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int k = v < v_end ? nearest[v] : -1;
  int prev = __shfl_up_sync (SV_FULL_MASK, k, 1);
  int next = __shfl_down_sync (SV_FULL_MASK, k, 1);
  bool head = lane == 0 || prev != k;
  bool tail = lane == 31 || next != k;
  unsigned heads = __ballot_sync (SV_FULL_MASK, head);
  unsigned below = heads & (lane == 31 ? 0xffffffffu : ((2u << lane) - 1u));
  int seg_start = 31 - __clz (below);

  int x = 0, y = 0, z = 0;
  if (k >= 0)
    {
      /* 32-bit division where the index fits: 64-bit division is a long
       * instruction sequence on the device. */
      if (v_end <= 0xffffffffLL)
        {
          unsigned int u = (unsigned int)v, t = u / (unsigned int)it.nx;
          x = (int)(u - t * (unsigned int)it.nx);
          y = (int)(t % (unsigned int)it.ny);
          z = (int)(t / (unsigned int)it.ny);
        }
      else
        {
          x = (int)(v % it.nx);
          long long t = v / it.nx;
          y = (int)(t % it.ny);
          z = (int)(t / it.ny);
        }
    }
  const int stride = 4 + it.nc;
  unsigned long long *s = sums + (size_t)(k >= 0 ? k : 0) * stride;
  warp_add (s + 0, k, k >= 0 ? 1 : 0, lane, seg_start, tail);
  warp_add (s + 1, k, z, lane, seg_start, tail);
  warp_add (s + 2, k, y, lane, seg_start, tail);
  warp_add (s + 3, k, x, lane, seg_start, tail);
  for (int c = 0; c < it.nc; c++)
    {
      long long f = 0;
      if (k >= 0)
        f = sv_arith_colour_fixed (image[v * it.nc + c] * it.ratio, it.colour_shift);
      warp_add (s + 4 + c, k, f, lane, seg_start, tail);
    }
}

cudaError_t
sv_cuda_accumulate (const SvCudaIter &it, const float *image, const int32_t *nearest,
                    unsigned long long *sums, cudaStream_t stream)
{
  if (slab_voxels (it) == 0)
    return cudaSuccess;
  accumulate_kernel<<<grid_for (slab_voxels (it), SV_BLOCK), SV_BLOCK, 0, stream>>> (
      it, volume_base (image, it, it.nc), volume_base (nearest, it, 1), sums);
  return cudaGetLastError ();
}

__global__ void
finalize_kernel (SvCudaIter it, const unsigned long long *__restrict__ sums,
                 float *__restrict__ centres, uint8_t *__restrict__ alive)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= it.k || !alive[k])
    return;
  const unsigned long long *s = sums + (size_t)k * (4 + it.nc);
  int64_t count = (int64_t)s[0];
  if (count == 0)
    {
      /* Dead for the rest of the run: never binned, never wins again. */
      alive[k] = 0;
      return;
    }
  float *c = centres + (size_t)k * (3 + it.nc);
  c[0] = sv_arith_coord_mean ((int64_t)s[1], count);
  c[1] = sv_arith_coord_mean ((int64_t)s[2], count);
  c[2] = sv_arith_coord_mean ((int64_t)s[3], count);
  for (int j = 0; j < it.nc; j++)
    c[3 + j] = sv_arith_colour_mean ((int64_t)s[4 + j], it.colour_shift, count);
}

cudaError_t
sv_cuda_finalize (const SvCudaIter &it, const unsigned long long *sums, float *centres,
                  uint8_t *alive, cudaStream_t stream)
{
  if (it.k == 0)
    return cudaSuccess;
  finalize_kernel<<<grid_for (it.k, SV_BLOCK), SV_BLOCK, 0, stream>>> (it, sums, centres, alive);
  return cudaGetLastError ();
}

__global__ void
slic_zero_max_kernel (SvCudaIter it, const float *__restrict__ image,
                      const int32_t *__restrict__ nearest, const float *__restrict__ centres,
                      float *__restrict__ max_dist_colour)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= slab_voxels (it))
    return;
  long long v = slab_first (it) + i;
  int k = nearest[v];
  if (k < 0)
    return;
  const float *cen = centres + (size_t)k * (3 + it.nc);
  const float *pix = image + v * it.nc;
  float colour = 0.0f;
  for (int c = 0; c < it.nc; c++)
    colour = colour + sv_arith_colour_term (pix[c], it.ratio, cen[3 + c]);
  /* Distances are >= 0, where the integer order of the bit patterns is the
   * float order; atomicMax only raises. */
  if (colour > max_dist_colour[k])
    atomicMax ((unsigned int *)&max_dist_colour[k], __float_as_uint (colour));
}

cudaError_t
sv_cuda_slic_zero_max (const SvCudaIter &it, const float *image, const int32_t *nearest,
                       const float *centres, float *max_dist_colour, cudaStream_t stream)
{
  if (slab_voxels (it) == 0)
    return cudaSuccess;
  slic_zero_max_kernel<<<grid_for (slab_voxels (it), SV_BLOCK), SV_BLOCK, 0, stream>>> (
      it, volume_base (image, it, it.nc), volume_base (nearest, it, 1), centres, max_dist_colour);
  return cudaGetLastError ();
}

__global__ void
labels_kernel (long long n, const int32_t *__restrict__ nearest, int start_label,
               int32_t *__restrict__ labels, uint8_t *__restrict__ used)
{
  long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int k = nearest[v];
  labels[v] = k + start_label;
  if (used != NULL && k >= 0)
    used[k] = 1;
}

cudaError_t
sv_cuda_labels_from_nearest (long long n, const int32_t *nearest, int start_label, int32_t *labels,
                             uint8_t *used, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  labels_kernel<<<grid_for (n, SV_BLOCK), SV_BLOCK, 0, stream>>> (n, nearest, start_label, labels,
                                                                    used);
  return cudaGetLastError ();
}

/* Voxels that no live window reached take the live cluster with the
 * smallest spatial term over all clusters (ties to the lowest index), as
 * the CPU reference does after the last iteration. Such voxels are rare, so
 * the brute-force loop costs little. */
__global__ void
fill_unassigned_kernel (SvCudaIter it, const uint8_t *__restrict__ mask,
                        const float *__restrict__ centres, const uint8_t *__restrict__ alive,
                        int32_t *__restrict__ nearest)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= slab_voxels (it))
    return;
  long long v = slab_first (it) + i;
  if (nearest[v] >= 0 || (mask != NULL && mask[v] == 0))
    return;
  int x = (int)(v % it.nx);
  long long t = v / it.nx;
  int y = (int)(t % it.ny);
  int z = (int)(t / it.ny);
  float best_d = INFINITY;
  int best_k = -1;
  for (int k = 0; k < it.k; k++)
    {
      if (!alive[k])
        continue;
      const float *c = centres + (size_t)k * (3 + it.nc);
      float s = sv_arith_spatial (c[0], c[1], c[2], (float)z, (float)y, (float)x, it.sz, it.sy,
                                  it.sx, it.spatial_weight);
      if (sv_arith_better (s, k, best_d, best_k))
        {
          best_d = s;
          best_k = k;
        }
    }
  nearest[v] = best_k;
}

cudaError_t
sv_cuda_fill_unassigned (const SvCudaIter &it, const uint8_t *mask, const float *centres,
                         const uint8_t *alive, int32_t *nearest, cudaStream_t stream)
{
  if (slab_voxels (it) == 0)
    return cudaSuccess;
  fill_unassigned_kernel<<<grid_for (slab_voxels (it), SV_BLOCK), SV_BLOCK, 0, stream>>> (
      it, volume_base (mask, it, 1), centres, alive, volume_base (nearest, it, 1));
  return cudaGetLastError ();
}

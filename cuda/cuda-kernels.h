/* Supervox CUDA backend: kernel launchers shared by the backend's .cu files
 * (internal, C++). Every launcher enqueues on `stream` and returns the launch
 * status; nothing here synchronises. */
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "supervox/sv-backend.h"

/* What one SLIC iteration needs besides the device arrays. */
struct SvCudaIter
{
  int nz, ny, nx, nc;
  long long n; /* nz*ny*nx */
  float ratio; /* 1/compactness as float32 */
  float spatial_weight;
  float sz, sy, sx; /* spacing as float32 */
  int wstep[3];     /* search window steps z, y, x (>= 1) */
  int ncell[3];     /* centre bins per axis: ceil(dim / wstep) */
  int slic_zero;
  int ignore_colour; /* maskSLIC's spatial-only pass */
  int colour_shift;  /* fixed-point shift of the colour sums */
  int k;             /* number of clusters */
  /* The clusters that are binned and whose windows are made, [band0,
   * band1): all k but in a streamed pass of a device whose slabs only
   * those can reach (SvSlabSteps.begin_pass). */
  int band0, band1;
  /* The slices the assignment, update, SLIC-zero and fill kernels visit,
   * [z_begin, z_end) of the nz above (the whole volume: 0, nz). Their
   * image, mask and nearest arrays hold these slices only, from z_begin
   * on; voxels keep their global coordinates, so a slab's sums and labels
   * are those of the same voxels in the whole volume. */
  int z_begin, z_end;
};

/* Voxels per z slice, and the first and end voxel index of the slab. */
__host__ __device__ static inline long long
sv_cuda_plane (const SvCudaIter &it)
{
  return (long long)it.ny * it.nx;
}

/* Centres are k × (3 + nc) floats: z, y, x, colour (scaled by ratio). Sums
 * are k × (4 + nc) 64-bit integers: count, Σz, Σy, Σx, Σ fixed-point colour. */

/* Bins live centres into cells of wstep voxels: cell_count (ncells + 1
 * ints) must be zero on entry; then an exclusive scan turns it into
 * cell_start and sv_cuda_bin_fill writes the items. */
cudaError_t sv_cuda_bin_count (const SvCudaIter &it, const float *centres, const uint8_t *alive,
                               int *cell_count, cudaStream_t stream);
cudaError_t sv_cuda_bin_fill (const SvCudaIter &it, const float *centres, const uint8_t *alive,
                              const int *cell_start, int *cell_fill, int *cell_items,
                              cudaStream_t stream);

/* Assignment: nearest[v] = the (distance, index)-minimal live cluster whose
 * window holds v, −1 for masked-out voxels and voxels in no window.
 * windows (k × 6 ints) is scratch: each live cluster's window lo z,y,x and
 * hi z,y,x. With sums (zeroed on entry) it also does the update's step 1
 * (as sv_cuda_accumulate) in the same pass over the volume. */
cudaError_t sv_cuda_assign (const SvCudaIter &it, const float *image, const uint8_t *mask,
                            const float *centres, const float *max_dist_colour,
                            const uint8_t *alive, int *windows, const int *cell_start,
                            const int *cell_items, int32_t *nearest, unsigned long long *sums,
                            cudaStream_t stream);

/* Update, step 1: exact integer sums per cluster (sums zeroed on entry). */
cudaError_t sv_cuda_accumulate (const SvCudaIter &it, const float *image, const int32_t *nearest,
                                unsigned long long *sums, cudaStream_t stream);

/* Update, step 2: centres = sums / count; a live cluster with count 0 dies. */
cudaError_t sv_cuda_finalize (const SvCudaIter &it, const unsigned long long *sums, float *centres,
                              uint8_t *alive, cudaStream_t stream);

/* SLIC-zero: raise each cluster's max colour distance to the largest colour
 * distance among its voxels (against the updated centres). */
cudaError_t sv_cuda_slic_zero_max (const SvCudaIter &it, const float *image, const int32_t *nearest,
                                   const float *centres, float *max_dist_colour,
                                   cudaStream_t stream);

/* After the last iteration: mask-in voxels with nearest −1 take the live
 * cluster with the smallest spatial term (ties to the lowest index). */
cudaError_t sv_cuda_fill_unassigned (const SvCudaIter &it, const uint8_t *mask,
                                     const float *centres, const uint8_t *alive, int32_t *nearest,
                                     cudaStream_t stream);

/* labels[v] = nearest[v] + start_label (−1 becomes start_label − 1). Marks
 * used[k] = 1 for every cluster that owns a voxel (used may be NULL). */
cudaError_t sv_cuda_labels_from_nearest (long long n, const int32_t *nearest, int start_label,
                                         int32_t *labels, uint8_t *used, cudaStream_t stream);

/* Device scratch of the connectivity step; parent may alias another n-int
 * buffer that is free at that point. */
struct SvCudaConnScratch
{
  int *parent;        /* n: union-find parent, then component root */
  int *size;          /* n + 1: component sizes, then rank of large pieces */
  int *link;          /* n + 1: large-piece flags, then links of small pieces */
  int *queue;         /* n: BFS queues of the small pieces */
  int *small_roots;   /* n */
  int *small_offsets; /* n */
  uint8_t *visited;   /* n */
  int *counters;      /* a few device counters */
  void *scan_tmp;     /* cub scratch, grown on demand, owned */
  size_t scan_tmp_bytes;
};

/* Device bytes the scratch needs for n voxels, besides parent and scan_tmp. */
size_t sv_cuda_connectivity_bytes (long long n);

/* Connectivity enforcement in place on `labels` (SLIC labels in, final
 * labels out), bit-identical to sv_connectivity_enforce. Synchronises the
 * stream. *handled is false, with labels untouched, for volumes of 2³¹ − 3
 * voxels or more (32-bit indices); the caller then runs
 * sv_connectivity_enforce. */
cudaError_t sv_cuda_connectivity (int32_t *labels, int nz, int ny, int nx, long long min_size,
                                  long long max_size, int start_label, SvConnectivityRule rule,
                                  SvCudaConnScratch *scratch, cudaStream_t stream,
                                  long long *n_labels, bool *handled);

/* Prepare stage (prepare.cu). */
struct SvCudaScan
{
  unsigned int min_key, max_key; /* order-preserving float keys */
  int any_in;                    /* a finite mask-in value was seen */
  unsigned long long n_nan;      /* mask-in voxels with a NaN */
  unsigned long long n_inf;      /* … with ±inf and no NaN */
  unsigned long long first_bad;  /* lowest such voxel index */
};

/* Scans mask-in voxels for min, max and non-finite values (synchronises). */
cudaError_t sv_cuda_rescale_scan (const float *data, long long n, int nc, const uint8_t *mask,
                                  SvCudaScan *scan, cudaStream_t stream);
float sv_cuda_key_to_float (unsigned int key);
/* v = (v − shift) / scale (no division when divide is 0); non-finite
 * masked-out values become 0. */
cudaError_t sv_cuda_rescale_apply (float *data, long long n, int nc, const uint8_t *mask,
                                   float shift, float scale, int divide, cudaStream_t stream);
/* One Gaussian pass along `axis` (0 z, 1 y, 2 x) of a z-major volume with
 * nc channels; weights[0..radius] are the centred float64 taps. */
cudaError_t sv_cuda_gaussian_axis (const float *in, float *out, const int dims[3], int nc, int axis,
                                   const double *weights, int radius, cudaStream_t stream);
/* *result = bits of max |v| over mask-in values (0 when none). */
cudaError_t sv_cuda_max_abs (const float *data, long long n, int nc, const uint8_t *mask,
                             unsigned int *result, cudaStream_t stream);

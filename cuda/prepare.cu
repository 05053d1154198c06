/* Supervox CUDA backend: the prepare stage on the device (rescale and
 * Gaussian smoothing), bit-identical to the CPU's sv_rescale and
 * sv_gaussian_smooth.
 *
 * Rescale: min and max are exact whatever the reduction order; the rewrite
 * is the same float32 subtraction and division per value. Smoothing: each
 * output sample is the same float64 sum in the same order as the CPU's
 * (centre·w0, then (left + right)·wt for t = radius … 1), from the same
 * host-computed weights, rounded to float32 once per axis; nvcc's
 * --fmad=false keeps double arithmetic uncontracted as well. */
#include <math.h>
#include <string.h>

#include "cuda-kernels.h"

#define SV_BLOCK 256

static inline unsigned int
grid_for (long long n)
{
  return (unsigned int)((n + SV_BLOCK - 1) / SV_BLOCK);
}

/* Float keys whose unsigned order is the float order (negative numbers
 * included), for atomicMin/atomicMax. */
__device__ __forceinline__ unsigned int
float_key (float f)
{
  unsigned int b = __float_as_uint (f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__host__ __device__ __forceinline__ float
key_float (unsigned int k)
{
  unsigned int b = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
#ifdef __CUDA_ARCH__
  return __uint_as_float (b);
#else
  float f;
  memcpy (&f, &b, sizeof f);
  return f;
#endif
}

float
sv_cuda_key_to_float (unsigned int key)
{
  return key_float (key);
}

/* Blocks of the reductions below: a capped grid with a grid-stride loop
 * and one atomic per block, so that the reductions do not queue on one
 * address (min and max are exact in any order). */
#define SV_REDUCE_MAX_BLOCKS 2048

static inline unsigned int
reduce_grid (long long n)
{
  long long g = ((long long)n + SV_BLOCK - 1) / SV_BLOCK;
  return (unsigned int)(g < SV_REDUCE_MAX_BLOCKS ? g : SV_REDUCE_MAX_BLOCKS);
}

__global__ void
scan_kernel (const float *__restrict__ data, long long n, int nc, const uint8_t *__restrict__ mask,
             SvCudaScan *scan)
{
  __shared__ unsigned s_lo[SV_BLOCK / 32], s_hi[SV_BLOCK / 32];
  __shared__ int s_any[SV_BLOCK / 32];
  bool any = false;
  float lo = INFINITY, hi = -INFINITY;
  for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n;
       v += (long long)gridDim.x * blockDim.x)
    {
      if (mask != NULL && mask[v] == 0)
        continue;
      bool nan = false, inf = false;
      for (int c = 0; c < nc; c++)
        {
          float x = data[v * nc + c];
          if (isnan (x))
            nan = true;
          else if (isinf (x))
            inf = true;
          else
            {
              lo = fminf (lo, x);
              hi = fmaxf (hi, x);
              any = true;
            }
        }
      if (nan || inf)
        {
          if (nan)
            atomicAdd (&scan->n_nan, 1ull);
          else
            atomicAdd (&scan->n_inf, 1ull);
          atomicMin (&scan->first_bad, (unsigned long long)v);
        }
    }
  /* Every lane takes part in the reductions. */
  unsigned lo_key = any ? float_key (lo) : 0xffffffffu;
  unsigned hi_key = any ? float_key (hi) : 0u;
  for (int off = 16; off > 0; off >>= 1)
    {
      lo_key = min (lo_key, __shfl_down_sync (0xffffffffu, lo_key, off));
      hi_key = max (hi_key, __shfl_down_sync (0xffffffffu, hi_key, off));
    }
  unsigned any_lanes = __ballot_sync (0xffffffffu, any);
  __syncthreads ();
  if ((threadIdx.x & 31) == 0)
    {
      s_lo[threadIdx.x >> 5] = lo_key;
      s_hi[threadIdx.x >> 5] = hi_key;
      s_any[threadIdx.x >> 5] = any_lanes != 0;
    }
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      int block_any = s_any[0];
      for (int w = 1; w < SV_BLOCK / 32; w++)
        {
          lo_key = min (lo_key, s_lo[w]);
          hi_key = max (hi_key, s_hi[w]);
          block_any |= s_any[w];
        }
      if (!block_any)
        return;
      atomicMin (&scan->min_key, lo_key);
      atomicMax (&scan->max_key, hi_key);
      if (scan->any_in == 0)
        scan->any_in = 1;
    }
}

cudaError_t
sv_cuda_rescale_scan (const float *data, long long n, int nc, const uint8_t *mask, SvCudaScan *scan,
                      cudaStream_t stream)
{
  SvCudaScan init;
  cudaError_t err;
  init.min_key = 0xffffffffu;
  init.max_key = 0u;
  init.any_in = 0;
  init.n_nan = 0;
  init.n_inf = 0;
  init.first_bad = ~0ull;
  err = cudaMemcpyAsync (scan, &init, sizeof init, cudaMemcpyHostToDevice, stream);
  if (err != cudaSuccess || n == 0)
    return err;
  scan_kernel<<<reduce_grid (n), SV_BLOCK, 0, stream>>> (data, n, nc, mask, scan);
  err = cudaGetLastError ();
  if (err != cudaSuccess)
    return err;
  /* The init struct lives on this stack frame: wait for the copy. */
  return cudaStreamSynchronize (stream);
}

__global__ void
rescale_kernel (float *__restrict__ data, long long n, int nc, const uint8_t *__restrict__ mask,
                float shift, float scale, int divide)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n * nc)
    return;
  /* numpy: image -= image.min(); image /= imax, both in float32. */
  float v = data[i] - shift;
  if (divide)
    v = v / scale;
  /* Masked-out voxels may hold NaN/inf; zeroed so smoothing cannot carry
   * them into the mask. */
  if (!isfinite (v) && mask != NULL && mask[i / nc] == 0)
    v = 0.0f;
  data[i] = v;
}

cudaError_t
sv_cuda_rescale_apply (float *data, long long n, int nc, const uint8_t *mask, float shift,
                       float scale, int divide, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  rescale_kernel<<<grid_for (n * nc), SV_BLOCK, 0, stream>>> (data, n, nc, mask, shift, scale,
                                                                divide);
  return cudaGetLastError ();
}

/* 'reflect' extension (d c b a | a b c d), periodic with period 2L, as the
 * CPU's reflect_index. */
__device__ __forceinline__ long long
reflect_index (long long i, long long length)
{
  long long period = 2 * length;
  long long m = i % period;
  if (m < 0)
    m += period;
  if (m >= length)
    m = period - 1 - m;
  return m;
}

__global__ void
gaussian_axis_kernel (const float *__restrict__ in, float *__restrict__ out, long long total,
                      long long length, long long stride, const double *__restrict__ w, int radius)
{
  long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= total)
    return;
  long long inner = e % stride;
  long long k = (e / stride) % length;
  long long outer = e / (stride * length);
  const float *line = in + outer * length * stride + inner;
  double acc = (double)line[k * stride] * w[0];
  for (int t = radius; t >= 1; t--)
    {
      double lo = (double)line[reflect_index (k - t, length) * stride];
      double hi = (double)line[reflect_index (k + t, length) * stride];
      acc += (lo + hi) * w[t];
    }
  out[e] = (float)acc;
}

cudaError_t
sv_cuda_gaussian_axis (const float *in, float *out, const int dims[3], int nc, int axis,
                       const double *weights, int radius, cudaStream_t stream)
{
  long long stride = nc, total = (long long)dims[0] * dims[1] * dims[2] * nc;
  for (int a = axis + 1; a < 3; a++)
    stride *= dims[a];
  if (total == 0)
    return cudaSuccess;
  gaussian_axis_kernel<<<grid_for (total), SV_BLOCK, 0, stream>>> (in, out, total, dims[axis],
                                                                     stride, weights, radius);
  return cudaGetLastError ();
}

__global__ void
max_abs_kernel (const float *__restrict__ data, long long n, int nc,
                const uint8_t *__restrict__ mask, unsigned int *result)
{
  __shared__ float s_m[SV_BLOCK / 32];
  float m = 0.0f;
  for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n;
       v += (long long)gridDim.x * blockDim.x)
    if (mask == NULL || mask[v] != 0)
      for (int c = 0; c < nc; c++)
        m = fmaxf (m, fabsf (data[v * nc + c]));
  for (int off = 16; off > 0; off >>= 1)
    m = fmaxf (m, __shfl_down_sync (0xffffffffu, m, off));
  if ((threadIdx.x & 31) == 0)
    s_m[threadIdx.x >> 5] = m;
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      for (int w = 1; w < SV_BLOCK / 32; w++)
        m = fmaxf (m, s_m[w]);
      /* Non-negative floats order like their bit patterns. */
      if (m > 0.0f)
        atomicMax (result, __float_as_uint (m));
    }
}

cudaError_t
sv_cuda_max_abs (const float *data, long long n, int nc, const uint8_t *mask, unsigned int *result,
                 cudaStream_t stream)
{
  cudaError_t err = cudaMemsetAsync (result, 0, sizeof (unsigned int), stream);
  if (err != cudaSuccess || n == 0)
    return err;
  max_abs_kernel<<<reduce_grid (n), SV_BLOCK, 0, stream>>> (data, n, nc, mask, result);
  return cudaGetLastError ();
}

/* Supervox CUDA backend: slice extraction from the device label volume, for
 * get_slice and for the GUI's interop path (straight into a mapped buffer). */
#include "cuda-kernels.h"

__global__ void
extract_slice_kernel (const int32_t *__restrict__ volume, int nz, int ny, int nx, int axis,
                      int index, int32_t *__restrict__ out)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long src;
  switch (axis)
    {
    case SV_AXIS_XY: /* ny × nx at z = index */
      if (i >= (long long)ny * nx)
        return;
      src = (long long)index * ny * nx + i;
      break;
    case SV_AXIS_XZ: /* nz × nx at y = index */
      if (i >= (long long)nz * nx)
        return;
      src = ((i / nx) * ny + index) * (long long)nx + i % nx;
      break;
    default: /* SV_AXIS_YZ: nz × ny at x = index */
      if (i >= (long long)nz * ny)
        return;
      src = i * nx + index;
      break;
    }
  out[i] = volume[src];
}

cudaError_t
sv_cuda_extract_slice (const int32_t *volume, int nz, int ny, int nx, SvAxis axis, int index,
                       int32_t *out, cudaStream_t stream)
{
  long long n = axis == SV_AXIS_XY   ? (long long)ny * nx
                : axis == SV_AXIS_XZ ? (long long)nz * nx
                                     : (long long)nz * ny;
  if (n == 0)
    return cudaSuccess;
  extract_slice_kernel<<<(unsigned int)((n + 255) / 256), 256, 0, stream>>> (
      volume, nz, ny, nx, (int)axis, index, out);
  return cudaGetLastError ();
}

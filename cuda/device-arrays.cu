/* Supervox CUDA backend: caller arrays in device memory (the C API's device
 * entry): any scikit-image dtype and strides into the backend's float32
 * volume, masks into bytes, labels out as int32 or int64. The conversion
 * is engine/api-array.c's, bit for bit (double arithmetic, no FMA). */
#include <cuda_fp16.h>

#include "device-arrays.h"

template <typename T>
__device__ static inline T
load (const char *p)
{
  return *(const T *)p;
}

__device__ static float
element_to_float (const char *p, int dtype)
{
  switch (dtype)
    {
    case SUPERVOX_BOOL: return load<uint8_t> (p) != 0 ? 1.0f : 0.0f;
    case SUPERVOX_UINT8: return (float)(load<uint8_t> (p) * (1.0 / 255.0));
    case SUPERVOX_UINT16: return (float)(load<uint16_t> (p) * (1.0 / 65535.0));
    case SUPERVOX_UINT32: return (float)(load<uint32_t> (p) * (1.0 / 4294967295.0));
    case SUPERVOX_UINT64:
      return (float)((double)load<unsigned long long> (p) * (1.0 / 18446744073709551615.0));
    case SUPERVOX_INT8: return (float)fmax (load<int8_t> (p) * (1.0 / 127.0), -1.0);
    case SUPERVOX_INT16: return (float)fmax (load<int16_t> (p) * (1.0 / 32767.0), -1.0);
    case SUPERVOX_INT32: return (float)fmax (load<int32_t> (p) * (1.0 / 2147483647.0), -1.0);
    case SUPERVOX_INT64:
      return (float)fmax ((double)load<long long> (p) * (1.0 / 9223372036854775807.0), -1.0);
    case SUPERVOX_FLOAT16: return __half2float (load<__half> (p));
    case SUPERVOX_FLOAT32: return load<float> (p);
    case SUPERVOX_FLOAT64: return (float)load<double> (p);
    default: return __int_as_float (0x7fc00000);
    }
}

/* The strided layout, passed by value to the kernels. */
struct Layout
{
  const char *data;
  int dtype;
  int elem;
  long long shape[4];
  long long strides[4];
};

static Layout
layout_of (const SupervoxArray *a)
{
  static const int sizes[SUPERVOX_N_DTYPES] = { 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8 };
  Layout l;
  l.data = (const char *)a->data;
  l.dtype = (int)a->dtype;
  l.elem = a->dtype >= 0 && a->dtype < SUPERVOX_N_DTYPES ? sizes[a->dtype] : 1;
  for (int i = 0; i < 4; i++)
    {
      l.shape[i] = a->shape[i];
      l.strides[i] = a->strides[i];
    }
  return l;
}

/* Offset of flat element i of the z, y, x, c order (c fastest). */
__device__ static inline long long
offset_of (const Layout &l, long long i)
{
  long long c = i % l.shape[3];
  long long v = i / l.shape[3];
  long long x = v % l.shape[2];
  long long zy = v / l.shape[2];
  long long y = zy % l.shape[1];
  long long z = zy / l.shape[1];
  return z * l.strides[0] + y * l.strides[1] + x * l.strides[2] + c * l.strides[3];
}

__global__ static void
gather_volume_kernel (Layout l, long long n, float *__restrict__ out)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = element_to_float (l.data + offset_of (l, i), l.dtype);
}

__global__ static void
gather_mask_kernel (Layout l, long long n, uint8_t *__restrict__ out)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    {
      const char *p = l.data + offset_of (l, i);
      uint8_t any = 0;
      /* Any nonzero byte is "in": masks come as bool or uint8. */
      for (int b = 0; b < l.elem; b++)
        any |= (uint8_t)p[b];
      out[i] = any != 0;
    }
}

__global__ static void
store_labels_kernel (const int32_t *__restrict__ labels, long long n, void *dst, int wide)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    {
      if (wide)
        ((long long *)dst)[i] = labels[i];
      else
        ((int32_t *)dst)[i] = labels[i];
    }
}

static unsigned int
blocks_for (long long n)
{
  long long b = (n + 255) / 256;
  return (unsigned int)(b < 65535 * 16 ? (b > 0 ? b : 1) : 65535 * 16);
}

cudaError_t
sv_cuda_gather_volume (const SupervoxArray *image, float *out, cudaStream_t stream)
{
  Layout l = layout_of (image);
  long long n = l.shape[0] * l.shape[1] * l.shape[2] * l.shape[3];
  if (n == 0)
    return cudaSuccess;
  gather_volume_kernel<<<blocks_for (n), 256, 0, stream>>> (l, n, out);
  return cudaGetLastError ();
}

cudaError_t
sv_cuda_gather_mask (const SupervoxArray *mask, uint8_t *out, cudaStream_t stream)
{
  Layout l = layout_of (mask);
  long long n = l.shape[0] * l.shape[1] * l.shape[2];
  l.shape[3] = 1;
  if (n == 0)
    return cudaSuccess;
  gather_mask_kernel<<<blocks_for (n), 256, 0, stream>>> (l, n, out);
  return cudaGetLastError ();
}

cudaError_t
sv_cuda_store_labels (const int32_t *labels, long long n, void *dst, int wide, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  store_labels_kernel<<<blocks_for (n), 256, 0, stream>>> (labels, n, dst, wide);
  return cudaGetLastError ();
}

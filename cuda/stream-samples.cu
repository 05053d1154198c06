/* Supervox CUDA backend: a streamed slab prepared on the device from the
 * file's samples (SvSlabSteps.take_samples). Without Lab or smoothing a
 * slab's preparation is img_as_float and the rescale, value by value; the
 * device does it on the samples as read, so that a uint8 slab crosses the
 * bus as a quarter of its float32 bytes and the host converts nothing.
 * The arithmetic is the host's (io-tiff-read.c's SV_CONVERT and
 * stream-image.c's rescale): the sample times 1 / max in double, clamped
 * at −1 for signed types, rounded to float32, then (v − shift) / scale in
 * float32; IEEE division and no contraction give the same bits. */
#define G_LOG_DOMAIN "sv-cuda"

#include "stream-steps-private.h"
#include "supervox/sv-error.h"

#define SAMPLES_BLOCK 256

template <typename T>
__global__ void
samples_kernel (const T *__restrict__ raw, long long n, double inv_max, int is_signed, float shift,
                float scale, int divide, float *__restrict__ out)
{
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  double v = (double)raw[i] * inv_max;
  if (is_signed)
    v = fmax (v, -1.0);
  float x = (float)v - shift;
  if (divide)
    x = x / scale;
  out[i] = x;
}

/* The type's bytes and largest value; 0 bytes for a type the device does
 * not convert. */
static gsize
sample_size (SvSampleType type, double *max, int *is_signed)
{
  *is_signed = type == SV_SAMPLE_I8 || type == SV_SAMPLE_I16 || type == SV_SAMPLE_I32;
  switch (type)
    {
    case SV_SAMPLE_U8:
      *max = G_MAXUINT8;
      return 1;
    case SV_SAMPLE_I8:
      *max = G_MAXINT8;
      return 1;
    case SV_SAMPLE_U16:
      *max = G_MAXUINT16;
      return 2;
    case SV_SAMPLE_I16:
      *max = G_MAXINT16;
      return 2;
    case SV_SAMPLE_U32:
      *max = G_MAXUINT32;
      return 4;
    case SV_SAMPLE_I32:
      *max = G_MAXINT32;
      return 4;
    default:
      return 0;
    }
}

static cudaError_t
launch (SvSampleType type, const void *raw, long long n, double inv_max, int is_signed,
        const SvSlabSamples *how, float *out, cudaStream_t stream)
{
  const unsigned grid = (unsigned)((n + SAMPLES_BLOCK - 1) / SAMPLES_BLOCK);
  const float shift = how->shift, scale = how->scale;
  const int divide = how->divide ? 1 : 0;

  if (n == 0)
    return cudaSuccess;
#define SV_LAUNCH(ctype)                                                                           \
  samples_kernel<<<grid, SAMPLES_BLOCK, 0, stream>>> ((const ctype *)raw, n, inv_max, is_signed,    \
                                                      shift, scale, divide, out)
  switch (type)
    {
    case SV_SAMPLE_U8:
      SV_LAUNCH (uint8_t);
      break;
    case SV_SAMPLE_I8:
      SV_LAUNCH (int8_t);
      break;
    case SV_SAMPLE_U16:
      SV_LAUNCH (uint16_t);
      break;
    case SV_SAMPLE_I16:
      SV_LAUNCH (int16_t);
      break;
    case SV_SAMPLE_U32:
      SV_LAUNCH (uint32_t);
      break;
    default:
      SV_LAUNCH (int32_t);
    }
#undef SV_LAUNCH
  return cudaGetLastError ();
}

int
sv__cuda_slab_take_samples (SvBackend *backend, guint z0, guint z1, const void *raw,
                            const SvSlabSamples *how, const guint8 *mask, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const SvCudaResident *r = NULL;
  double max = 0.0;
  int is_signed = 0;
  gsize size, n, bytes;
  gint64 t0;
  int b;

  if (s == NULL)
    return -1;
  g_return_val_if_fail (s->have_pass && how->nc == s->ctx.image->nc, -1);
  size = sample_size (how->type, &max, &is_signed);
  n = (gsize)(z1 - z0) * s->ctx.image->ny * s->ctx.image->nx * how->nc;
  bytes = n * size;
  /* The slab buffers (and the steps' plane, which the mask's bytes
   * follow) are made with the first. */
  if (size == 0 || (b = sv__slab_take_buffer (s, z1 - z0, mask != NULL, error)) < 0)
    return size == 0 ? 0 : -1;
  /* Samples narrower than float32 are held as they are and prepared each
   * pass (a kernel at the memory's pace): at 4096³ uint8 a device's share
   * of the slabs is 16 GiB instead of 64, which leaves room for its
   * labels. Four-byte samples are prepared once. */
  if (size < sizeof (float))
    {
      if (!sv__cuda_resident_add (s, z0, z1, mask != NULL, bytes, &r, error))
        return -1;
      if (r == NULL)
        return 0;
      ((SvCudaResident *)r)->how = *how;
      t0 = g_get_monotonic_time ();
      SV_CUDA_CHECK (sv__cuda_staged_copy (s->owner, r->d_raw, raw, bytes, TRUE));
      if (mask != NULL)
        SV_CUDA_CHECK (sv__cuda_staged_copy (s->owner, r->d_mask, mask + (gsize)z0 * s->plane,
                                             (gsize)(z1 - z0) * s->plane, TRUE));
      s->times.staging_ms += (double)(g_get_monotonic_time () - t0) / 1000.0;
      return 1;
    }
  /* The samples go up into the slab's assignment buffer (4 bytes a
   * voxel): types wider than that per voxel are prepared on the host. */
  if (bytes > (gsize)(z1 - z0) * s->ctx.image->ny * s->ctx.image->nx * 4)
    return 0;
  if (!sv__cuda_resident_add (s, z0, z1, mask != NULL, 0, &r, error))
    return -1;
  if (r == NULL)
    return 0;
  t0 = g_get_monotonic_time ();
  /* The last kernels and download that used buffer b are done. */
  SV_CUDA_CHECK (cudaEventSynchronize (s->computed[b]));
  SV_CUDA_CHECK (sv__cuda_staged_copy (s->owner, s->d_nearest[b], raw, bytes, TRUE));
  if (mask != NULL)
    SV_CUDA_CHECK (sv__cuda_staged_copy (s->owner, r->d_mask, mask + (gsize)z0 * s->plane,
                                         (gsize)(z1 - z0) * s->plane, TRUE));
  s->times.staging_ms += (double)(g_get_monotonic_time () - t0) / 1000.0;
  SV_CUDA_CHECK (launch (how->type, s->d_nearest[b], (long long)n, 1.0 / max, is_signed, how,
                         r->d_image, s->compute));
  SV_CUDA_CHECK (cudaEventRecord (s->computed[b], s->compute));
  return 1;
out:
  return -1;
}

gboolean
sv__cuda_resident_prepare (SvCudaSlabs *s, const SvCudaResident *r, float *dst, GError **error)
{
  const gsize n = (gsize)(r->z1 - r->z0) * s->plane * r->how.nc;
  double max = 0.0;
  int is_signed = 0;

  sample_size (r->how.type, &max, &is_signed);
  SV_CUDA_CHECK (launch (r->how.type, r->d_raw, (long long)n, 1.0 / max, is_signed, &r->how, dst,
                         s->compute));
  return TRUE;
out:
  return FALSE;
}

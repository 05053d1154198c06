/* libsupervox: host arrays of any scikit-image dtype and layout into the
 * engine's float32 volume, masks into bytes, labels out. */
#define G_LOG_DOMAIN "sv-api"

#include "api-private.h"

#include <math.h>
#include <string.h>

#include "supervox/sv-memory.h"
#include "supervox/sv-error.h"

gsize
sv_api_dtype_size (SupervoxDtype dtype)
{
  switch (dtype)
    {
    case SUPERVOX_BOOL:
    case SUPERVOX_UINT8:
    case SUPERVOX_INT8:
      return 1;
    case SUPERVOX_UINT16:
    case SUPERVOX_INT16:
    case SUPERVOX_FLOAT16:
      return 2;
    case SUPERVOX_UINT32:
    case SUPERVOX_INT32:
    case SUPERVOX_FLOAT32:
      return 4;
    case SUPERVOX_UINT64:
    case SUPERVOX_INT64:
    case SUPERVOX_FLOAT64:
      return 8;
    default:
      return 0;
    }
}

SvSampleType
sv_api_sample_type (SupervoxDtype dtype)
{
  switch (dtype)
    {
    case SUPERVOX_BOOL:
      return SV_SAMPLE_BOOL;
    case SUPERVOX_UINT8:
      return SV_SAMPLE_U8;
    case SUPERVOX_UINT16:
      return SV_SAMPLE_U16;
    case SUPERVOX_UINT32:
      return SV_SAMPLE_U32;
    case SUPERVOX_UINT64:
      return SV_SAMPLE_U64;
    case SUPERVOX_INT8:
      return SV_SAMPLE_I8;
    case SUPERVOX_INT16:
      return SV_SAMPLE_I16;
    case SUPERVOX_INT32:
      return SV_SAMPLE_I32;
    case SUPERVOX_INT64:
      return SV_SAMPLE_I64;
    case SUPERVOX_FLOAT16:
      return SV_SAMPLE_F16;
    case SUPERVOX_FLOAT64:
      return SV_SAMPLE_F64;
    case SUPERVOX_FLOAT32:
    default:
      return SV_SAMPLE_F32;
    }
}

gsize
sv_api_array_n_voxels (const SupervoxArray *array)
{
  return (gsize)array->shape[0] * (gsize)array->shape[1] * (gsize)array->shape[2];
}

gboolean
sv_api_array_check (const SupervoxArray *array, const char *what, GError **error)
{
  gsize n = 1;

  if (array == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM, "%s is NULL", what);
      return FALSE;
    }
  if (sv_api_dtype_size (array->dtype) == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s has an unknown dtype code %d", what, (int)array->dtype);
      return FALSE;
    }
  for (int a = 0; a < 4; a++)
    {
      /* The engine indexes axes with 32-bit sizes. */
      if (array->shape[a] < 0 || array->shape[a] > G_MAXINT32)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "%s axis %d has size %" G_GINT64_FORMAT " (must be 0 … 2³¹−1)", what, a,
                       array->shape[a]);
          return FALSE;
        }
      n *= (gsize)array->shape[a];
    }
  if (array->shape[3] == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s has no channels (channel axis of size 0)", what);
      return FALSE;
    }
  if (n > 0 && array->data == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s has %" G_GSIZE_FORMAT " elements but no data", what, n);
      return FALSE;
    }
  return TRUE;
}

/* IEEE half to float (exact: every half is a float). */
static float
half_to_float (guint16 h)
{
  guint32 sign = (guint32)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  float f;

  if (exp == 0x1f)
    bits = sign | 0x7f800000u | (man << 13);
  else if (exp != 0)
    bits = sign | ((exp + 112) << 23) | (man << 13);
  else if (man == 0)
    bits = sign;
  else
    {
      /* Subnormal half: normalise into a float. */
      exp = 113;
      while ((man & 0x400) == 0)
        {
          man <<= 1;
          exp--;
        }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  memcpy (&f, &bits, sizeof f);
  return f;
}

/* One element as img_as_float gives it, rounded to float32: v × (1/max) in
 * double (the io readers' rule, engine/io/io-tiff-read.c). */
static float
element_to_float (const char *p, SupervoxDtype dtype)
{
#define SV_READ(type, var) type var; memcpy (&var, p, sizeof var)
  switch (dtype)
    {
    case SUPERVOX_BOOL: { SV_READ (guint8, v); return v != 0 ? 1.0f : 0.0f; }
    case SUPERVOX_UINT8: { SV_READ (guint8, v); return (float)(v * (1.0 / 255.0)); }
    case SUPERVOX_UINT16: { SV_READ (guint16, v); return (float)(v * (1.0 / 65535.0)); }
    case SUPERVOX_UINT32: { SV_READ (guint32, v); return (float)(v * (1.0 / 4294967295.0)); }
    case SUPERVOX_UINT64:
      { SV_READ (guint64, v); return (float)((double)v * (1.0 / 18446744073709551615.0)); }
    case SUPERVOX_INT8: { SV_READ (gint8, v); return (float)fmax (v * (1.0 / 127.0), -1.0); }
    case SUPERVOX_INT16: { SV_READ (gint16, v); return (float)fmax (v * (1.0 / 32767.0), -1.0); }
    case SUPERVOX_INT32:
      { SV_READ (gint32, v); return (float)fmax (v * (1.0 / 2147483647.0), -1.0); }
    case SUPERVOX_INT64:
      {
        SV_READ (gint64, v);
        return (float)fmax ((double)v * (1.0 / 9223372036854775807.0), -1.0);
      }
    case SUPERVOX_FLOAT16: { SV_READ (guint16, v); return half_to_float (v); }
    case SUPERVOX_FLOAT32: { SV_READ (float, v); return v; }
    case SUPERVOX_FLOAT64: { SV_READ (double, v); return (float)v; }
    default:
      return NAN;
    }
#undef SV_READ
}

SvVolume *
sv_api_volume_from_host (const SupervoxArray *image, GError **error)
{
  const gint64 *st = image->strides;
  guint nz = (guint)image->shape[0], ny = (guint)image->shape[1], nx = (guint)image->shape[2];
  guint nc = (guint)image->shape[3];
  SvVolume *volume = sv_volume_new (nz, ny, nx, nc, error);
  float *out;

  if (volume == NULL)
    return NULL;
  volume->source_type = sv_api_sample_type (image->dtype);
  out = volume->data;
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      {
        const char *row = (const char *)image->data + (gint64)z * st[0] + (gint64)y * st[1];
        for (guint x = 0; x < nx; x++)
          for (guint c = 0; c < nc; c++)
            *out++ = element_to_float (row + (gint64)x * st[2] + (gint64)c * st[3],
                                       image->dtype);
      }
  return volume;
}

gboolean
sv_api_mask_check_shape (const SupervoxArray *mask, const SupervoxArray *image, GError **error)
{
  if (!sv_api_array_check (mask, "mask", error))
    return FALSE;
  if (mask->shape[0] != image->shape[0] || mask->shape[1] != image->shape[1]
      || mask->shape[2] != image->shape[2] || mask->shape[3] != 1)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "image and mask should have the same shape: image is %" G_GINT64_FORMAT
                   "×%" G_GINT64_FORMAT "×%" G_GINT64_FORMAT ", mask is %" G_GINT64_FORMAT
                   "×%" G_GINT64_FORMAT "×%" G_GINT64_FORMAT " (%" G_GINT64_FORMAT " channels)",
                   image->shape[0], image->shape[1], image->shape[2], mask->shape[0],
                   mask->shape[1], mask->shape[2], mask->shape[3]);
      return FALSE;
    }
  return TRUE;
}

guint8 *
sv_api_mask_from_host (const SupervoxArray *mask, const SupervoxArray *image, GError **error)
{
  gsize n, size = sv_api_dtype_size (mask->dtype), i = 0;
  guint8 *out;
  static const char zero[8] = { 0 };

  if (!sv_api_mask_check_shape (mask, image, error))
    return NULL;
  n = sv_api_array_n_voxels (mask);
  out = sv_try_alloc_n (n, 1, FALSE, error, "a mask of %" G_GSIZE_FORMAT " voxels", n);
  if (out == NULL)
    return NULL;
  for (gint64 z = 0; z < mask->shape[0]; z++)
    for (gint64 y = 0; y < mask->shape[1]; y++)
      for (gint64 x = 0; x < mask->shape[2]; x++)
        {
          const char *p = (const char *)mask->data + z * mask->strides[0] + y * mask->strides[1]
                          + x * mask->strides[2];
          /* Any nonzero byte is "in": masks come as bool or uint8. */
          out[i++] = memcmp (p, zero, size) != 0;
        }
  return out;
}

void
sv_api_labels_store (const gint32 *src, gsize n, void *dst, SupervoxDtype label_dtype)
{
  if (label_dtype == SUPERVOX_INT32)
    {
      memcpy (dst, src, n * sizeof (gint32));
      return;
    }
  for (gsize i = 0; i < n; i++)
    ((gint64 *)dst)[i] = src[i];
}

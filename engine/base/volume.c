#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-volume.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>

#include "supervox/sv-error.h"

/* Zero-filled voxel memory. Big buffers ask the kernel for transparent huge
 * pages: filling 1 GiB page by page costs 262144 page faults, which in a
 * virtual machine take longer than reading the same bytes from the page
 * cache. */
static gpointer
voxels_alloc0 (gsize bytes)
{
  gpointer data = g_try_malloc0 (bytes);

#ifdef MADV_HUGEPAGE
  const gsize huge = 2 * 1024 * 1024;
  if (data != NULL && bytes >= 4 * huge)
    {
      guintptr start = ((guintptr)data + huge - 1) & ~(guintptr)(huge - 1);
      guintptr end = ((guintptr)data + bytes) & ~(guintptr)(huge - 1);
      if (end > start)
        madvise ((void *)start, end - start, MADV_HUGEPAGE);
    }
#endif
  return data;
}

/* nz*ny*nx*per_voxel elements of elem_size bytes, or FALSE on overflow. */
static gboolean
checked_size (guint nz, guint ny, guint nx, guint per_voxel, gsize elem_size, gsize *out)
{
  gsize n = 1;
  guint dims[] = { nz, ny, nx, per_voxel };

  for (guint i = 0; i < G_N_ELEMENTS (dims); i++)
    if (!g_size_checked_mul (&n, n, dims[i]))
      return FALSE;
  return g_size_checked_mul (out, n, elem_size);
}

SvVolume *
sv_volume_new (guint nz, guint ny, guint nx, guint nc, GError **error)
{
  gsize bytes;
  float *data;
  SvVolume *volume;

  g_return_val_if_fail (nz > 0 && ny > 0 && nx > 0 && nc > 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!checked_size (nz, ny, nx, nc, sizeof (float), &bytes))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "a %u×%u×%u volume with %u channels is too large for this computer", nz, ny, nx,
                   nc);
      return NULL;
    }
  data = voxels_alloc0 (bytes);
  if (data == NULL)
    {
      g_autofree char *size = g_format_size (bytes);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "not enough memory for a %u×%u×%u volume (%s)", nz, ny, nx, size);
      return NULL;
    }

  volume = g_new0 (SvVolume, 1);
  volume->nz = nz;
  volume->ny = ny;
  volume->nx = nx;
  volume->nc = nc;
  volume->data = data;
  volume->spacing[0] = volume->spacing[1] = volume->spacing[2] = 1.0;
  volume->source_type = SV_SAMPLE_F32;
  return volume;
}

void
sv_volume_free (SvVolume *volume)
{
  if (volume == NULL)
    return;
  g_free (volume->data);
  g_free (volume->unit);
  g_free (volume);
}

gsize
sv_volume_n_voxels (const SvVolume *volume)
{
  g_return_val_if_fail (volume != NULL, 0);
  return (gsize)volume->nz * volume->ny * volume->nx;
}

SvVolume *
sv_volume_extract_channel (const SvVolume *in, guint channel, GError **error)
{
  SvVolume *out;
  gsize n;

  g_return_val_if_fail (in != NULL, NULL);
  if (channel >= in->nc)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "has %u channel%s (0 to %u), not channel %u", in->nc, in->nc == 1 ? "" : "s",
                   in->nc - 1, channel);
      return NULL;
    }
  out = sv_volume_new (in->nz, in->ny, in->nx, 1, error);
  if (out == NULL)
    return NULL;
  n = sv_volume_n_voxels (in);
  for (gsize i = 0; i < n; i++)
    out->data[i] = in->data[i * in->nc + channel];
  memcpy (out->spacing, in->spacing, sizeof out->spacing);
  out->spacing_from_file = in->spacing_from_file;
  out->unit = g_strdup (in->unit);
  out->source_type = in->source_type;
  return out;
}

const char *
sv_sample_type_to_string (SvSampleType type)
{
  switch (type)
    {
    case SV_SAMPLE_U8:
      return "uint8";
    case SV_SAMPLE_U16:
      return "uint16";
    case SV_SAMPLE_U32:
      return "uint32";
    case SV_SAMPLE_I8:
      return "int8";
    case SV_SAMPLE_I16:
      return "int16";
    case SV_SAMPLE_I32:
      return "int32";
    case SV_SAMPLE_F32:
      return "float32";
    case SV_SAMPLE_F64:
      return "float64";
    case SV_SAMPLE_BOOL:
      return "bool";
    case SV_SAMPLE_U64:
      return "uint64";
    case SV_SAMPLE_I64:
      return "int64";
    case SV_SAMPLE_F16:
      return "float16";
    default:
      return "unknown";
    }
}

gboolean
sv_sample_type_float64 (SvSampleType type)
{
  return type != SV_SAMPLE_F32 && type != SV_SAMPLE_F16;
}

/* A sample v = fl32(k · (1 / max)) is within 2⁻²⁴ of k / max, so
 * k = rint(v · max) for |k| < 2²³ (the clamp at −1 maps −max − 1 where it
 * maps −max). A value that is no sample (a preview's average) stays as it
 * is. */
static double
integer_to_double (float value, double max, gboolean is_signed)
{
  double v = rint ((double)value * max) * (1.0 / max);

  if (is_signed)
    v = fmax (v, -1.0);
  return (float)v == value ? v : (double)value;
}

double
sv_sample_to_double (SvSampleType type, float value)
{
  switch (type)
    {
    case SV_SAMPLE_U8:
      return integer_to_double (value, 255.0, FALSE);
    case SV_SAMPLE_U16:
      return integer_to_double (value, 65535.0, FALSE);
    case SV_SAMPLE_I8:
      return integer_to_double (value, 127.0, TRUE);
    case SV_SAMPLE_I16:
      return integer_to_double (value, 32767.0, TRUE);
    default:
      return (double)value;
    }
}

SvLabels *
sv_labels_new (guint nz, guint ny, guint nx, GError **error)
{
  gsize bytes;
  gint32 *data;
  SvLabels *labels;

  g_return_val_if_fail (nz > 0 && ny > 0 && nx > 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!checked_size (nz, ny, nx, 1, sizeof (gint32), &bytes))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "a %u×%u×%u label volume is too large for this computer", nz, ny, nx);
      return NULL;
    }
  data = voxels_alloc0 (bytes);
  if (data == NULL)
    {
      g_autofree char *size = g_format_size (bytes);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "not enough memory for a %u×%u×%u label volume (%s)", nz, ny, nx, size);
      return NULL;
    }

  labels = g_new0 (SvLabels, 1);
  labels->nz = nz;
  labels->ny = ny;
  labels->nx = nx;
  labels->data = data;
  labels->spacing[0] = labels->spacing[1] = labels->spacing[2] = 1.0;
  return labels;
}

void
sv_labels_free (SvLabels *labels)
{
  if (labels == NULL)
    return;
  g_free (labels->data);
  g_free (labels->unit);
  g_free (labels);
}

gsize
sv_labels_n_voxels (const SvLabels *labels)
{
  g_return_val_if_fail (labels != NULL, 0);
  return (gsize)labels->nz * labels->ny * labels->nx;
}

const char *
sv_label_calibration (const double input_spacing[3], const char *input_unit,
                      const double *run_spacing, double spacing[3])
{
  static const double ones[3] = { 1.0, 1.0, 1.0 };

  /* ImageJ's own files say "pixel" when they know no length; Supervox's
   * write spacing=1.0 with no unit. */
  if (input_unit != NULL && input_unit[0] != '\0' && g_ascii_strcasecmp (input_unit, "pixel") != 0
      && g_ascii_strcasecmp (input_unit, "pixels") != 0)
    {
      memcpy (spacing, input_spacing, 3 * sizeof (double));
      return input_unit;
    }
  /* Numbers with no unit: what the run took the voxels to be. */
  memcpy (spacing, run_spacing != NULL ? run_spacing : ones, 3 * sizeof (double));
  return NULL;
}


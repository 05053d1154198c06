/* Supervox engine: coarse previews for live parameter changes. */
#define G_LOG_DOMAIN "sv-engine"

#include "preview.h"

#include <string.h>

#include "supervox/sv-memory.h"
#include "supervox/sv-error.h"

static guint
axis_factor (guint n, guint factor)
{
  return n > 1 ? factor : 1;
}

void
sv_preview_shape (const SvVolume *volume, guint factor, guint shape_zyx[3])
{
  const guint n[3] = { volume->nz, volume->ny, volume->nx };

  g_return_if_fail (factor >= 1);
  for (int a = 0; a < 3; a++)
    shape_zyx[a] = (n[a] + axis_factor (n[a], factor) - 1) / axis_factor (n[a], factor);
}

SvVolume *
sv_preview_volume_new (const SvVolume *volume, const guint8 *mask, guint factor, guint8 **mask_out,
                       GError **error)
{
  const guint n[3] = { volume->nz, volume->ny, volume->nx };
  const guint nc = volume->nc;
  guint s[3], f[3];
  g_autoptr (SvVolume) out = NULL;
  g_autofree guint8 *small_mask = NULL;
  g_autofree double *sum = NULL;
  g_autofree guint32 *count = NULL;
  g_autofree guint32 *total = NULL;
  gsize n_small;

  g_return_val_if_fail (volume != NULL && factor >= 1, NULL);

  sv_preview_shape (volume, factor, s);
  for (int a = 0; a < 3; a++)
    f[a] = axis_factor (n[a], factor);
  out = sv_volume_new (s[0], s[1], s[2], nc, error);
  if (!out)
    return NULL;
  n_small = (gsize)s[0] * s[1] * s[2];
  sum = g_try_new0 (double, n_small *nc);
  count = g_try_new0 (guint32, n_small);
  total = g_try_new0 (guint32, n_small);
  if (!sum || !count || !total)
    {
      sv_set_no_memory (error, "a preview of %u×%u×%u voxels", s[0], s[1], s[2]);
      return NULL;
    }

  /* One pass over the volume in memory order. */
  for (guint z = 0; z < n[0]; z++)
    for (guint y = 0; y < n[1]; y++)
      {
        gsize row = ((gsize)z * n[1] + y) * n[2];
        gsize srow = ((gsize)(z / f[0]) * s[1] + y / f[1]) * s[2];
        for (guint x = 0; x < n[2]; x++)
          {
            gsize i = row + x, j = srow + x / f[2];
            total[j]++;
            if (mask && !mask[i])
              continue;
            count[j]++;
            for (guint c = 0; c < nc; c++)
              sum[j * nc + c] += volume->data[i * nc + c];
          }
      }

  if (mask)
    small_mask = g_malloc (n_small);
  for (gsize j = 0; j < n_small; j++)
    {
      for (guint c = 0; c < nc; c++)
        out->data[j * nc + c] = count[j] ? (float)(sum[j * nc + c] / count[j]) : 0.0f;
      if (small_mask)
        small_mask[j] = 2 * count[j] >= total[j] && count[j] > 0;
    }

  for (int a = 0; a < 3; a++)
    out->spacing[a] = volume->spacing[a] * f[a];
  out->spacing_from_file = volume->spacing_from_file;
  out->unit = g_strdup (volume->unit);
  out->source_type = volume->source_type;
  if (mask_out)
    *mask_out = g_steal_pointer (&small_mask);
  return g_steal_pointer (&out);
}

void
sv_preview_params (const SvSlicParams *params, const SvVolume *volume, guint factor,
                   SvSlicParams *out)
{
  const guint n[3] = { volume->nz, volume->ny, volume->nx };

  g_return_if_fail (factor >= 1);
  *out = *params;
  for (int a = 0; a < 3; a++)
    {
      guint f = axis_factor (n[a], factor);
      out->spacing[a] = params->spacing[a] * f;
      if (params->sigma_per_axis)
        out->sigma[a] = params->sigma[a] / f;
    }
  out->compactness = params->compactness / factor;
}

void
sv_preview_upsample_labels (const gint32 *preview, const guint preview_zyx[3], guint factor,
                            gint32 *labels, const guint shape_zyx[3])
{
  guint f[3];

  for (int a = 0; a < 3; a++)
    f[a] = axis_factor (shape_zyx[a], factor);
  for (guint z = 0; z < shape_zyx[0]; z++)
    for (guint y = 0; y < shape_zyx[1]; y++)
      {
        gsize slice = (gsize)shape_zyx[1] * shape_zyx[2];
        const gint32 *src
            = preview + ((gsize)(z / f[0]) * preview_zyx[1] + y / f[1]) * preview_zyx[2];
        gint32 *dst = labels + ((gsize)z * shape_zyx[1] + y) * shape_zyx[2];
        /* Slices and rows inside a block repeat the block's first one. */
        if (z % f[0] != 0)
          {
            if (y == 0)
              memcpy (dst, dst - slice, slice * sizeof (gint32));
            continue;
          }
        if (y % f[1] != 0)
          {
            memcpy (dst, dst - shape_zyx[2], shape_zyx[2] * sizeof (gint32));
            continue;
          }
        for (guint x = 0; x < shape_zyx[2]; x++)
          dst[x] = src[x / f[2]];
      }
}

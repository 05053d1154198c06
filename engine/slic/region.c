/* Supervox engine: boxes of volumes, masks and labels. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-region.h"

#include <string.h>

#include "supervox/sv-error.h"

gboolean
sv_region_valid (const guint lo[3], const guint hi[3], guint nz, guint ny, guint nx)
{
  const guint n[3] = { nz, ny, nx };

  for (guint a = 0; a < 3; a++)
    if (lo[a] >= hi[a] || hi[a] > n[a])
      return FALSE;
  return TRUE;
}

static gboolean
check_box (const guint lo[3], const guint hi[3], guint nz, guint ny, guint nx, GError **error)
{
  if (sv_region_valid (lo, hi, nz, ny, nx))
    return TRUE;
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
               "the region z %u–%u, y %u–%u, x %u–%u is empty or outside the %u×%u×%u volume",
               lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], nz, ny, nx);
  return FALSE;
}

SvVolume *
sv_volume_crop (const SvVolume *v, const guint lo[3], const guint hi[3], GError **error)
{
  SvVolume *out;
  gsize row;

  if (!check_box (lo, hi, v->nz, v->ny, v->nx, error))
    return NULL;
  out = sv_volume_new (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], v->nc, error);
  if (!out)
    return NULL;
  memcpy (out->spacing, v->spacing, sizeof out->spacing);
  out->spacing_from_file = v->spacing_from_file;
  out->unit = g_strdup (v->unit);
  out->source_type = v->source_type;
  row = (gsize)out->nx * v->nc;
  for (guint z = 0; z < out->nz; z++)
    for (guint y = 0; y < out->ny; y++)
      memcpy (out->data + ((gsize)z * out->ny + y) * row,
              v->data + (((gsize)(z + lo[0]) * v->ny + y + lo[1]) * v->nx + lo[2]) * v->nc,
              row * sizeof (float));
  return out;
}

SvLabels *
sv_labels_crop (const SvLabels *l, const guint lo[3], const guint hi[3], GError **error)
{
  SvLabels *out;

  if (!check_box (lo, hi, l->nz, l->ny, l->nx, error))
    return NULL;
  out = sv_labels_new (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], error);
  if (!out)
    return NULL;
  memcpy (out->spacing, l->spacing, sizeof out->spacing);
  out->unit = g_strdup (l->unit);
  for (guint z = 0; z < out->nz; z++)
    for (guint y = 0; y < out->ny; y++)
      memcpy (out->data + ((gsize)z * out->ny + y) * out->nx,
              l->data + ((gsize)(z + lo[0]) * l->ny + y + lo[1]) * l->nx + lo[2],
              out->nx * sizeof (gint32));
  return out;
}

guint8 *
sv_mask_crop (const guint8 *mask, guint nz, guint ny, guint nx, const guint lo[3],
              const guint hi[3])
{
  guint oz = hi[0] - lo[0], oy = hi[1] - lo[1], ox = hi[2] - lo[2];
  guint8 *out;

  g_return_val_if_fail (sv_region_valid (lo, hi, nz, ny, nx), NULL);
  out = g_malloc ((gsize)oz * oy * ox);
  for (guint z = 0; z < oz; z++)
    for (guint y = 0; y < oy; y++)
      memcpy (out + ((gsize)z * oy + y) * ox,
              mask + ((gsize)(z + lo[0]) * ny + y + lo[1]) * nx + lo[2], ox);
  return out;
}

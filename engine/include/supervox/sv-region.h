/* Supervox engine: a box of a volume (the window's region preview): copies
 * of a volume, mask or label volume cropped to [lo, hi) along z, y, x, so
 * that SLIC runs on the region alone as it would on a file holding just
 * those voxels. */
#pragma once

#include <glib.h>

#include "sv-volume.h"

G_BEGIN_DECLS

/* TRUE when lo < hi <= the shape along every axis. */
gboolean sv_region_valid (const guint lo[3], const guint hi[3], guint nz, guint ny, guint nx);

/* The voxels of `volume` in [lo, hi) (z, y, x), with its spacing, unit and
 * sample type; NULL with SV_ENGINE_ERROR_INVALID_PARAM for a box that is
 * empty or reaches outside. */
SvVolume *sv_volume_crop (const SvVolume *volume, const guint lo[3], const guint hi[3],
                          GError **error);
SvLabels *sv_labels_crop (const SvLabels *labels, const guint lo[3], const guint hi[3],
                          GError **error);
/* A mask (nz × ny × nx bytes) cropped the same way; the box must be valid. */
guint8 *sv_mask_crop (const guint8 *mask, guint nz, guint ny, guint nx, const guint lo[3],
                      const guint hi[3]);

G_END_DECLS

/* Supervox tests: OME-Zarr images made for tests, written as Zarr v2
 * stores by hand (JSON and raw little-endian chunks), so that a store
 * with several resolution levels needs neither the engine's writer (one
 * level) nor Python. */
#pragma once

#include "supervox/sv-volume.h"

G_BEGIN_DECLS

/* Writes dir/name, an NGFF 0.4 image whose level i ("i") holds
 * levels[i] as float32 in chunks of 4 slices, scaled by its spacing, with
 * axes (c,) z, y, x in `ngff_unit` ("micrometer"; NULL: none). `outer`
 * (NULL: none) is the multiscale's own scale, by which each level's is
 * multiplied. Returns the image's path (g_free). */
char *sv_test_write_ome_zarr (const char *dir, const char *name, SvVolume *const *levels,
                              guint n_levels, const char *ngff_unit, const double outer[3]);

/* `v` at half its size in y and x, and in z when it has more than one
 * slice: the mean of each 2×2(×2) block, and twice the spacing. */
SvVolume *sv_test_downsample (const SvVolume *v);

G_END_DECLS

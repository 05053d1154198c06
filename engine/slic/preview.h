/* Supervox engine: coarse previews for live parameter changes.
 *
 * A preview runs SLIC on the volume averaged over f×f×f blocks (axes of one
 * voxel stay whole), with parameters translated so that the supervoxels
 * keep their physical size and the balance between intensity and distance:
 * spacing × f, compactness / f (the spatial term is measured in grid steps,
 * which shrink f times). Its labels are drawn at full size, each block
 * showing its label (sv_job_result_label_at). A preview is an approximation for the eye while a
 * slider moves; it is never exported or reproduced by a command. */
#pragma once

#include <glib.h>

#include "supervox/sv-params.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

/* The shape of `volume` downsampled by `factor` (>= 1): ceil(n / f) per axis,
 * or n where n == 1. */
void sv_preview_shape (const SvVolume *volume, guint factor, guint shape_zyx[3]);

/* The volume averaged over factor³ blocks (partial blocks at the far edges
 * average what they hold), spacing × factor on the downsampled axes. With a
 * mask (nz*ny*nx bytes, may be NULL), *mask_out receives the downsampled
 * mask (a block is inside when at least half of its voxels are) and masked
 * voxels do not enter the average. Fails only when memory runs out. */
SvVolume *sv_preview_volume_new (const SvVolume *volume, const guint8 *mask, guint factor,
                                 guint8 **mask_out, GError **error);

/* The parameters to run on the preview volume: spacing × factor on the
 * downsampled axes, compactness / factor; per-axis sigma (in voxels after
 * spacing) follows the spacing. */
void sv_preview_params (const SvSlicParams *params, const SvVolume *volume, guint factor,
                        SvSlicParams *out);

/* Full-size labels (nz*ny*nx of `volume`) from the preview's labels
 * (shape from sv_preview_shape): nearest block. */
void sv_preview_upsample_labels (const gint32 *preview, const guint preview_zyx[3], guint factor,
                                 gint32 *labels, const guint shape_zyx[3]);

G_END_DECLS

/* Supervox engine: TIFF input and output through libtiff. */
#pragma once

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* What a file holds, read from its header without loading the voxels
 * (value range excepted, see sv_tiff_info). */
typedef struct
{
  guint nz, ny, nx, nc;
  SvSampleType sample_type;
  gboolean bigtiff;
  gboolean tiled;
  char *compression;       /* "none", "deflate", "lzw", ... owned */
  double spacing[3];       /* z, y, x; 1 when unknown */
  gboolean spacing_from_file;
  char *unit;              /* owned, may be NULL */
  double value_min, value_max; /* raw sample values, over all voxels */
} SvTiffInfo;

void sv_tiff_info_clear (SvTiffInfo *info);

/* Reads header, spacing and value range of `path`. */
gboolean sv_tiff_info (const char *path, SvTiffInfo *info, GError **error);

/* Reads a multi-page TIFF (one page per z) as float32 after img_as_float.
 * 8/16/32-bit signed/unsigned, float32/64, 1 or 3 samples (contiguous or
 * planar), strips or tiles, any compression libtiff decodes, BigTIFF.
 * Spacing comes from ImageJ metadata (spacing=, unit=, X/Y resolution) or
 * OME-XML PhysicalSize{X,Y,Z}. Errors (SV_ENGINE_ERROR_IO / _FORMAT) name
 * the file and the problem; nothing is allocated from a size the file
 * cannot back. */
SvVolume *sv_tiff_read_volume (const char *path, GError **error);

/* Reads an integer label or mask TIFF (one sample per pixel) into gint32.
 * Float files or values outside gint32 are an error. */
SvLabels *sv_tiff_read_labels (const char *path, GError **error);

/* Reads a mask: any one-sample TIFF, nonzero = inside. Returns nz*ny*nx
 * bytes (0 or 1) and the shape through the out arguments. */
guint8 *sv_tiff_read_mask (const char *path, guint *nz, guint *ny, guint *nx, GError **error);

/* Writes labels as uint32 (int32 when any label is negative), one page per
 * z, deflate-compressed, BigTIFF above 4 GiB, with ImageJ spacing metadata.
 * Written to a temporary name beside `path` and renamed on success: a
 * failure leaves no partial file. */
gboolean sv_tiff_write_labels (const char *path, const SvLabels *labels, GError **error);

/* Writes a volume's float data as `as` (SV_SAMPLE_F32, _U8 or _U16; integer
 * types scale [0,1] to the full range), same conventions as above. */
gboolean sv_tiff_write_volume (const char *path, const SvVolume *volume, SvSampleType as,
                               GError **error);

G_END_DECLS

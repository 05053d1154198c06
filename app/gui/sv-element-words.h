/* Supervox GUI: what the elements of the image on screen are called: a
 * volume has voxels and supervoxels, a 2D image (one slice, a photo)
 * pixels and superpixels, as people who work with either say. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  const char *voxel, *voxels;           /* "voxel" / "pixel" */
  const char *supervoxel, *supervoxels; /* "supervoxel" / "superpixel" */
  const char *count_unit;               /* after a count of them: "voxels" / "px" */
} SvElementWords;

/* The words for a 2D image when `planar`, else for a volume; static. */
const SvElementWords *sv_element_words (gboolean planar);

/* `n` and the word for that many elements: "1 supervoxel", "486
 * superpixels"; numbers from 10 000 on grouped ("12 400"). Free with g_free. */
char *sv_element_count (guint64 n, const char *one, const char *many);

/* A count as people write it: digits from 10 000 on in groups of three
 * with a narrow space ("120 000"), as sv_format_quantity writes. */
char *sv_format_count (guint64 n);

/* A count in at most five characters where it is 100 000 or more: three
 * significant digits and k, M, G or T ("172 k", "1.23 M"); below that
 * sv_format_count's. */
char *sv_format_count_short (guint64 n);

G_END_DECLS

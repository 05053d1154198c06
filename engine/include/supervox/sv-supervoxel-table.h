/* Supervox engine: the table after the labels. Per supervoxel: voxel
 * count, centroid, bounding box and, per channel of an image, mean,
 * standard deviation, min and max in the image's own sample values; and
 * which supervoxels touch (6-connectivity), with the shared face area and
 * the mean intensity across the boundary.
 *
 * Built slab by slab in z order, so a volume never has to be held whole.
 * Each z slice is summed on its own (in raster order, on any thread) and
 * the slices' sums are merged in z order, label by label: the table is
 * the same, bit for bit, for any number of threads and any slab depth.
 * Counts and coordinates are summed in integers (exact). Intensities go
 * through a shifted sum and sum of squares per slice (shift: the label's
 * first value in the slice) and the slices are combined in z order with
 * Chan's parallel-variance update. */
#pragma once

#include <glib.h>
#include <stdio.h>

#include "sv-volume.h"

G_BEGIN_DECLS

typedef struct _SvSupervoxelTable SvSupervoxelTable;

typedef struct
{
  gboolean has_background; /* voxels equal to `background` are left out */
  gint32 background;
  gboolean adjacency; /* also collect the pairs of touching supervoxels */
  int n_threads;      /* <= 0: all processors */
} SvSupervoxelTableOptions;

/* No background, no adjacency, all processors. */
void sv_supervoxel_table_options_init_defaults (SvSupervoxelTableOptions *options);

/* An empty table for a volume of nz×ny×nx voxels and an image of nc
 * channels of `image_type` (nc 0: no image). Image types: 8/16/32-bit
 * integers, float32 and float64. options NULL: the defaults. */
SvSupervoxelTable *sv_supervoxel_table_new (guint nz, guint ny, guint nx, guint nc,
                                            SvSampleType image_type,
                                            const SvSupervoxelTableOptions *options);
void sv_supervoxel_table_free (SvSupervoxelTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvSupervoxelTable, sv_supervoxel_table_free)

/* TRUE when the table can take an image of this sample type. */
gboolean sv_supervoxel_table_image_type_supported (SvSampleType type);

/* Adds the next `depth` slices: depth·ny·nx labels and, with an image,
 * depth·ny·nx·nc samples of its type (z-major, channel fastest). Slabs
 * come in z order and together cover nz slices; the table keeps the last
 * slice of each for the faces to the next. */
void sv_supervoxel_table_add_slab (SvSupervoxelTable *table, const gint32 *labels,
                                   const void *image, guint depth);

/* After the last slab: sorts the supervoxels by label and the pairs by
 * (a, b). */
void sv_supervoxel_table_finish (SvSupervoxelTable *table);

/* One supervoxel. Intensity arrays hold nc values (NULL without an
 * image); std is the population standard deviation (NumPy's ddof=0). */
typedef struct
{
  gint32 label;
  guint64 n_voxels;
  double centroid[3]; /* mean voxel index z, y, x */
  guint lo[3], hi[3]; /* bounding box z, y, x, half-open like scikit-image's bbox */
  const double *mean, *std, *min, *max;
} SvSupervoxelRow;

/* Two supervoxels a < b that share faces. faces[0] counts the faces
 * between slices (normal along z), faces[1] along y, faces[2] along x.
 * boundary_mean[c]: over every shared face, the mean of the two voxels'
 * values on channel c (each voxel counted once per face it has on the
 * boundary). NULL without an image. */
typedef struct
{
  gint32 a, b;
  guint64 faces[3];
  const double *boundary_mean;
} SvSupervoxelPair;

/* After sv_supervoxel_table_finish. */
guint sv_supervoxel_table_n_channels (const SvSupervoxelTable *table);
gsize sv_supervoxel_table_n_rows (const SvSupervoxelTable *table);
void sv_supervoxel_table_get_row (const SvSupervoxelTable *table, gsize i, SvSupervoxelRow *row);
gsize sv_supervoxel_table_n_pairs (const SvSupervoxelTable *table);
void sv_supervoxel_table_get_pair (const SvSupervoxelTable *table, gsize i,
                                   SvSupervoxelPair *pair);

/* The physical area of a pair's shared faces: each face times the area of
 * a voxel face across its axis (a face between slices spans y·x, and so
 * on). spacing: z, y, x. The CSV's area column and the C API's face_area. */
double sv_supervoxel_pair_area (const SvSupervoxelPair *pair, const double spacing[3]);

/* ---- from files (supervoxel-table-file.c) ------------------------------ */

/* Where the numbers come from, and what the physical columns use. */
typedef struct
{
  guint shape[3];        /* z, y, x */
  guint nc;              /* image channels; 0 without an image */
  SvSampleType image_type;
  double spacing[3];     /* z, y, x: the label file's, else the image's; 1 when neither has any */
  char *unit;            /* as the file names it ("micron"); NULL when unknown */
  guint slab_depth;      /* slices read at a time */
} SvSupervoxelTableSource;

void sv_supervoxel_table_source_clear (SvSupervoxelTableSource *source);

/* The table of a label TIFF (`labels_path`, integer samples) or of labels
 * in memory (`labels`, then labels_path is NULL), with the image TIFF
 * `image_path` (may be NULL; `channel` −1 for every channel, else one),
 * read slab by slab: at most `slab_depth` slices at a time (0: slabs of
 * about 64 M voxels). Fails with a message naming the file when a file
 * cannot be read, holds float labels, or has another z, y, x shape than
 * the labels. `source` (may be NULL) receives the shape, channels and
 * calibration; clear it with sv_supervoxel_table_source_clear. */
SvSupervoxelTable *sv_supervoxel_table_new_from_files (const char *labels_path,
                                                       const SvLabels *labels,
                                                       const char *image_path, int channel,
                                                       guint slab_depth,
                                                       const SvSupervoxelTableOptions *options,
                                                       SvSupervoxelTableSource *source,
                                                       GError **error);

/* ---- CSV (supervoxel-table-csv.c) -------------------------------------- */

/* The unit as a column suffix: "um" for micron, µm and um; "nm", "mm",
 * others with anything but letters and digits dropped; "px" when NULL or
 * empty. Free with g_free. */
char *sv_supervoxel_table_unit_suffix (const char *unit);

/* Writes the table as CSV to `out`: a header line, then one row per
 * supervoxel in label order. Columns: label, voxels, volume_<u>3,
 * centroid_z/y/x (voxels), centroid_z/y/x_<u>, bbox_min_z/y/x,
 * bbox_max_z/y/x (half-open), then per channel mean, std, min, max (with
 * _c<N> after each name when there are several channels). spacing (z, y,
 * x) and unit as for SvSupervoxelTableSource. */
gboolean sv_supervoxel_table_write_csv (const SvSupervoxelTable *table, const double spacing[3],
                                        const char *unit, FILE *out, GError **error);

/* Writes the pairs as CSV: a, b, faces, area_<u>2 (faces times their
 * physical areas), then boundary_mean per channel (as above). */
gboolean sv_supervoxel_table_write_adjacency_csv (const SvSupervoxelTable *table,
                                                  const double spacing[3], const char *unit,
                                                  FILE *out, GError **error);

G_END_DECLS

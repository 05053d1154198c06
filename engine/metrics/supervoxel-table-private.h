/* Supervox engine: what the supervoxel table's files share, the
 * accumulation (supervoxel-table.c) and the sorted rows
 * (supervoxel-table-rows.c). */
#pragma once

#include "supervox/sv-supervoxel-table.h"

#define N_SHARDS 64
#define EMPTY_KEY G_MAXUINT64

/* Per channel in a slice's table: shift, shifted sum, shifted sum of
 * squares, min, max. In a shard: mean, M2 (sum of squared deviations),
 * min, max. */
#define SLICE_CH 5
#define SHARD_CH 4

/* Open addressing from a 64-bit key to an index. */
typedef struct
{
  guint64 *keys;
  guint32 *values;
  gsize mask;
  gsize n;
} KeyMap;

typedef struct
{
  gint32 label;
  guint64 n;
  guint64 sum[3]; /* z, y, x index sums */
  guint lo[3], hi[3];
} RegionAcc;

typedef struct
{
  guint64 key; /* a << 32 | b as unsigned 32-bit halves */
  guint64 faces[3];
} PairAcc;

/* A set of supervoxels and pairs: one slice's or one shard's. */
typedef struct
{
  KeyMap regions_map;
  GArray *regions; /* RegionAcc */
  GArray *values;  /* per region, nc × SLICE_CH or SHARD_CH doubles */
  KeyMap pairs_map;
  GArray *pairs;       /* PairAcc */
  GArray *pair_values; /* per pair, nc sums of the two voxels' values */
  /* A slice's entries grouped by shard: order[start[k] .. start[k + 1]). */
  guint32 *region_order, *pair_order;
  gsize region_start[N_SHARDS + 1], pair_start[N_SHARDS + 1];
} Bucket;

struct _SvSupervoxelTable
{
  guint nz, ny, nx, nc;
  SvSampleType image_type;
  guint sample_bytes;
  SvSupervoxelTableOptions options;
  int n_threads;

  guint z;             /* slices added so far */
  gint32 *prev_labels; /* the last slice added, for the faces along z */
  guint8 *prev_image;

  Bucket shards[N_SHARDS];

  /* After finish: every row and pair, sorted. */
  gboolean finished;
  RegionAcc *rows;
  double *row_values; /* nc × 4 per row: mean, std, min, max */
  gsize n_rows;
  PairAcc *pairs;
  double *pair_means; /* nc per pair */
  gsize n_pairs;
};

/* Frees what a bucket holds (its maps, arrays and orders). */
void sv__supervoxel_bucket_clear (Bucket *b);

/* Supervox engine: the CPU assignment's shared parts (slic-assign.c, the
 * candidates' gathering in slic-assign-gather.c, the tile search in
 * slic-assign-tile.h). Not a public header. */
#pragma once

#include "supervox/sv-slic.h"

#include <math.h>
#include <string.h>

#include "internal.h"

G_BEGIN_DECLS

#define TILE_Z 8
#define TILE_Y 8
#define TILE_X 8

#define COLOUR_PAD 8
#define COLOUR_BUCKETS 64

/* Candidates of a tile as arrays, ascending in their first colour channel,
 * with `pad` sentinels (colour −inf before, +inf after, empty windows) on
 * each side. */
typedef struct
{
  int n, pad;
  gsize total; /* n + 2 pad */
  float *cz, *cy, *cx;
  float *colour; /* nc arrays of `total`; the first is the order's key */
  gint32 *k;
  gint32 *window_bits; /* which voxels of the tile the window holds, see bit_z */
  guint32 bit_z[16], bit_y[16], bit_x[16]; /* a voxel's bits: bit_z | bit_y | bit_x */
  float key_min, key_scale;
  int bucket[COLOUR_BUCKETS + 1]; /* about where a colour falls in the order */
  gsize capacity;
} ColourOrder;

/* One candidate cluster of a tile, ordered by `bound`. */
typedef struct
{
  float bound; /* lower bound of the float32 spatial term over the tile */
  float key;   /* <= bound, and never decreasing along the walk's order */
  float cz, cy, cx;
  float mdc;
  gint32 k;
  int lo[3], hi[3];
  gboolean covers_zy; /* the window holds every (z, y) of the tile */
  gboolean covers_x;  /* ... and every x */
  const float *colour;
} Candidate;

typedef struct
{
  const SvSlicContext *ctx;
  const SvClusters *clusters;
  gint32 *nearest;
  int *window;       /* per cluster 6 ints: lo z,y,x, hi z,y,x */
  guint *cell_start; /* CSR bins of live clusters by centre cell */
  guint *cell_items;
  /* The binned clusters' centres and windows along z, y, x, in the bins'
   * order, with 4 entries to spare. */
  float *csr_centre[3];
  gint32 *csr_lo[3], *csr_hi[3];
  int ncell[3];
  int tile[3];
  int ntile[3];
  gint n_tiles;
  gint next_tile;          /* atomic */
  int lanes;               /* 4, or 8 where the CPU has AVX2 */
  gboolean colour_ok;      /* the colour-ordered search applies */
  int order;               /* 0: chosen per tile; > 0 colour, < 0 bound (testing) */
  double colour_threshold; /* see prefer_colour_order */
  int block_walk_min;      /* see BLOCK_WALK_MIN */
  /* The colour (and SLIC-zero maximum) of every live cluster when they
   * all have the same, as at the first iteration; else NULL. */
  const float *same_colour;
  float same_max_dist_colour;
  gint64 evaluated[256]; /* per thread: distances computed (lanes) */
} AssignJob;

static inline int
floor_div (int a, int b)
{
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Four values at a time for the tile's value range. */
typedef float SvLanesF __attribute__ ((vector_size (4 * sizeof (float))));
typedef gint32 SvLanesI __attribute__ ((vector_size (4 * sizeof (gint32))));

static inline SvLanesF
lanes_select (SvLanesI take, SvLanesF a, SvLanesF b)
{
  return (SvLanesF)((take & (SvLanesI)a) | (~take & (SvLanesI)b));
}

static inline SvLanesI
lanes_max_i (SvLanesI a, SvLanesI b)
{
  SvLanesI t = a > b;
  return (t & a) | (~t & b);
}

static inline SvLanesI
lanes_min_i (SvLanesI a, SvLanesI b)
{
  SvLanesI t = a < b;
  return (t & a) | (~t & b);
}

/* Candidates are sorted through these small keys, then copied once. */
typedef struct
{
  float bound;
  gint32 index;
} SortKey;

/* A thread's growable candidate list. */
typedef struct
{
  Candidate *items;  /* in gathering order */
  Candidate *sorted; /* by bound */
  float *sorted_cz;  /* the sorted centres' z and y, for the tile search's */
  float *sorted_cy;  /* blocks; capacity + 8 each */
  SortKey *keys;
  SortKey *scratch;
  gint32 *bucket; /* order_by_bound's */
  gsize capacity;
} CandidateList;

/* The tile's candidates: the live clusters whose window meets it and
 * whose bound does not exceed an upper bound of every voxel's best
 * distance, into list->items; returns how many. vrange: 2·nc floats of
 * scratch. */
int sv__assign_gather (const AssignJob *job, const int t0[3], const int t1[3], CandidateList *list,
                       float *vrange);

/* Orders list->items[0..n) into list->sorted, see slic-assign-gather.c. */
void sv__assign_order_by_bound (CandidateList *list, int n);

/* Sorts keys[0..n) by bound through scratch (n entries). */
void sv__assign_sort_keys (SortKey *keys, SortKey *scratch, int n);

G_END_DECLS

/* Supervox engine: the SLIC assignment step on the CPU.
 *
 * The assignment visits the volume in 8×8×8 tiles. For each tile it gathers
 * the live clusters whose search window meets the tile, drops those whose
 * lower bound over the tile exceeds an upper bound of every voxel's best
 * distance, orders the rest by that lower bound and, for four voxels of a
 * row at a time (eight with AVX2, see slic-assign-tile.h), stops as soon as
 * no remaining cluster can beat any of their best distances. Where the
 * candidates' colours spread wide (low compactness, where spatial bounds
 * prune little) a tile instead orders them by colour and each voxel walks
 * outwards from its own colour until the colour term alone exceeds its best
 * distance. The winner is
 * the lexicographic (distance, index) minimum, which is exactly what
 * scikit-image's "visit k in increasing order, keep strictly smaller"
 * picks, so the result equals the brute-force loop bit for bit
 * (tests/engine/test-slic.c checks it). Threads take tiles from an atomic
 * counter and write disjoint voxels, so the labels do not depend on the
 * thread count. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-slic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "slic-assign-count.h"
#include "supervox/sv-slic-arith.h"

/* GCC on x86-64 also builds an eight-lane AVX2 tile search. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SV_HAVE_LANES8 1
#endif

#define TILE_Z 8
#define TILE_Y 8
#define TILE_X 8

/* From this many candidates on, a tile's rows walk them a block at a time
 * (slic-assign-tile.h). */
#define BLOCK_WALK_MIN 48

/* BLOCK_WALK_MIN, unless the environment variable SV_CPU_ASSIGN_WALK
 * (block or single) fixes the walk, for testing both; they give the same
 * labels. */
static int
slic_block_walk_min (void)
{
  const char *e = g_getenv ("SV_CPU_ASSIGN_WALK");

  if (e != NULL && g_str_equal (e, "block"))
    return 0;
  if (e != NULL && g_str_equal (e, "single"))
    return G_MAXINT;
  return BLOCK_WALK_MIN;
}

/* Lanes per vector in the tile search: 8 where the CPU has AVX2 (unless
 * the environment sets SV_CPU_NO_AVX2, for testing the other path), else 4.
 * Both give the same labels. */
static int
slic_lanes (void)
{
  static gint lanes; /* 0 until known */
  gint l = g_atomic_int_get (&lanes);

  if (l == 0)
    {
      l = 4;
#ifdef SV_HAVE_LANES8
      __builtin_cpu_init ();
      if (__builtin_cpu_supports ("avx2") && g_getenv ("SV_CPU_NO_AVX2") == NULL)
        l = 8;
#endif
      g_atomic_int_set (&lanes, l);
    }
  return l;
}

/* How a tile orders its candidates: 0 chooses per tile, > 0 always by
 * colour where that applies, < 0 always by spatial bound. The environment
 * variable SV_CPU_ASSIGN_ORDER (colour or bound) fixes it, for testing both
 * searches; they give the same labels. */
static int
slic_assign_order (void)
{
  const char *e = g_getenv ("SV_CPU_ASSIGN_ORDER");

  if (e == NULL)
    return 0;
  if (g_str_equal (e, "colour"))
    return 1;
  if (g_str_equal (e, "bound"))
    return -1;
  return 0;
}

/* A tile goes by colour when its candidates' colours spread wider (squared)
 * than this many times the spatial term of one grid step on every axis. */
#define COLOUR_SPREAD 100.0

/* ---- assignment ------------------------------------------------------- */

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

/* Per channel minimum and maximum of the tile's values. */
static void
tile_value_range (const SvPrepared *im, const int t0[3], const int t1[3], float *vmin, float *vmax)
{
  const guint nc = im->nc;
  const int len = t1[2] - t0[2];

  if (nc == 1)
    {
      /* One channel: four values per step. */
      SvLanesF lo = { INFINITY, INFINITY, INFINITY, INFINITY };
      SvLanesF hi = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
      float lo_s = INFINITY, hi_s = -INFINITY;

      for (int z = t0[0]; z < t1[0]; z++)
        for (int y = t0[1]; y < t1[1]; y++)
          {
            const float *row = im->data + ((gsize)z * im->ny + y) * im->nx + t0[2];
            int i = 0;
            for (; i + 4 <= len; i += 4)
              {
                SvLanesF v;
                memcpy (&v, row + i, sizeof v);
                lo = lanes_select (v < lo, v, lo);
                hi = lanes_select (v > hi, v, hi);
              }
            for (; i < len; i++)
              {
                lo_s = row[i] < lo_s ? row[i] : lo_s;
                hi_s = row[i] > hi_s ? row[i] : hi_s;
              }
          }
      for (int l = 0; l < 4; l++)
        {
          lo_s = lo[l] < lo_s ? lo[l] : lo_s;
          hi_s = hi[l] > hi_s ? hi[l] : hi_s;
        }
      vmin[0] = lo_s;
      vmax[0] = hi_s;
      return;
    }

  for (guint c = 0; c < nc; c++)
    {
      vmin[c] = INFINITY;
      vmax[c] = -INFINITY;
    }
  for (int z = t0[0]; z < t1[0]; z++)
    for (int y = t0[1]; y < t1[1]; y++)
      {
        const float *row = im->data + (((gsize)z * im->ny + y) * im->nx + t0[2]) * nc;
        for (guint c = 0; c < nc; c++)
          {
            float lo = vmin[c], hi = vmax[c];
            for (int i = 0; i < len; i++)
              {
                float v = row[(gsize)i * nc + c];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
              }
            vmin[c] = lo;
            vmax[c] = hi;
          }
      }
}

/* Candidates are sorted through these small keys, then copied once. */
typedef struct
{
  float bound;
  gint32 index;
} SortKey;

/* Sorts keys[0..n) by bound: insertion sort of runs of 8, then bottom-up
 * merges through scratch (n entries). */
static void
sort_keys (SortKey *keys, SortKey *scratch, int n)
{
  const int run = 8;
  SortKey *src = keys, *dst = scratch;

  for (int r = 0; r < n; r += run)
    {
      int end = MIN (r + run, n);
      for (int i = r + 1; i < end; i++)
        {
          SortKey t = keys[i];
          int j = i;
          while (j > r && keys[j - 1].bound > t.bound)
            {
              keys[j] = keys[j - 1];
              j--;
            }
          keys[j] = t;
        }
    }
  for (int width = run; width < n; width *= 2)
    {
      for (int lo = 0; lo < n; lo += 2 * width)
        {
          int mid = MIN (lo + width, n), hi = MIN (lo + 2 * width, n);
          int a = lo, b = mid, o = lo;
          while (a < mid && b < hi)
            dst[o++] = src[b].bound < src[a].bound ? src[b++] : src[a++];
          while (a < mid)
            dst[o++] = src[a++];
          while (b < hi)
            dst[o++] = src[b++];
        }
      {
        SortKey *t = src;
        src = dst;
        dst = t;
      }
    }
  if (src != keys)
    memcpy (keys, src, (gsize)n * sizeof *keys);
}

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

/* The largest distance, spatial plus colour, that cluster k can have at any
 * voxel of the tile when its window holds the whole tile (with a margin for
 * float32 rounding); infinity otherwise. Every voxel's best distance is at
 * most this. */
static double
covering_upper (const AssignJob *job, guint k, const int t0[3], const int t1[3], const float *vmin,
                const float *vmax)
{
  const SvSlicContext *ctx = job->ctx;
  const SvClusters *cl = job->clusters;
  const int *w = job->window + 6 * (gsize)k;
  const float *c = cl->centres + k * (3 + cl->nc);
  double g, sp = 0.0, col = 0.0;

  for (int a = 0; a < 3; a++)
    if (w[a] > t0[a] || t1[a] > w[3 + a])
      return INFINITY;
  for (int a = 0; a < 3; a++)
    {
      g = (double)ctx->spacing[a] * MAX (fabs (c[a] - t0[a]), fabs (c[a] - (t1[a] - 1)));
      sp += g * g;
    }
  sp *= (double)ctx->spatial_weight;
  if (!ctx->ignore_colour)
    {
      for (guint ch = 0; ch < cl->nc; ch++)
        {
          double lo = (double)vmin[ch] * ctx->ratio - c[3 + ch];
          double hi = (double)vmax[ch] * ctx->ratio - c[3 + ch];
          g = MAX (fabs (lo), fabs (hi));
          col += g * g;
        }
      if (ctx->slic_zero)
        col /= (double)cl->max_dist_colour[k];
    }
  return (sp + col) * (1.0 + 1e-5) + 1e-30;
}

/* Doubles a thread's candidate list (64 at first). */
static void
candidate_list_grow (CandidateList *list)
{
  list->capacity = MAX (2 * list->capacity, 64);
  list->items = g_renew (Candidate, list->items, list->capacity);
  list->sorted = g_renew (Candidate, list->sorted, list->capacity);
  list->sorted_cz = g_renew (float, list->sorted_cz, list->capacity + 8);
  list->sorted_cy = g_renew (float, list->sorted_cy, list->capacity + 8);
  list->keys = g_renew (SortKey, list->keys, list->capacity);
  list->scratch = g_renew (SortKey, list->scratch, list->capacity);
  list->bucket = g_renew (gint32, list->bucket, list->capacity);
}

static int
gather_candidates (const AssignJob *job, const int t0[3], const int t1[3], CandidateList *list,
                   float *vrange)
{
  const SvSlicContext *ctx = job->ctx;
  const SvClusters *cl = job->clusters;
  const guint nc = cl->nc;
  const gsize nf = 3 + nc;
  const float *vmin = vrange, *vmax = vrange + nc;
  int c0[3], c1[3], n = 0;
  double upper = INFINITY;
  float upper_f;
  Candidate *cand = list->items;

  for (int a = 0; a < 3; a++)
    {
      int ws = ctx->window_step[a];
      c0[a] = CLAMP (floor_div (t0[a] - 2 * ws - 1, ws), 0, job->ncell[a] - 1);
      c1[a] = CLAMP (floor_div (t1[a] + 2 * ws, ws), 0, job->ncell[a] - 1);
    }
  if (!ctx->ignore_colour)
    tile_value_range (ctx->image, t0, t1, vrange, vrange + nc);

  /* First the clusters centred in the tile's own cells: they usually cover
   * the tile and give a small upper bound, which then narrows the cells
   * worth scanning: a cluster whose centre lies more than `reach` voxels
   * off the tile along an axis has a lower bound above it. */
  {
    int n0[3], n1[3];
    for (int a = 0; a < 3; a++)
      {
        n0[a] = CLAMP (floor_div (t0[a], ctx->window_step[a]), 0, job->ncell[a] - 1);
        n1[a] = CLAMP (floor_div (t1[a] - 1, ctx->window_step[a]), 0, job->ncell[a] - 1);
      }
    for (int cz = n0[0]; cz <= n1[0]; cz++)
      for (int cy = n0[1]; cy <= n1[1]; cy++)
        for (int cx = n0[2]; cx <= n1[2]; cx++)
          {
            gsize cell = ((gsize)cz * job->ncell[1] + cy) * job->ncell[2] + cx;
            for (guint i = job->cell_start[cell]; i < job->cell_start[cell + 1]; i++)
              upper = MIN (upper, covering_upper (job, job->cell_items[i], t0, t1, vmin, vmax));
          }
    if (upper < INFINITY)
      for (int a = 0; a < 3; a++)
        {
          double reach = sqrt ((upper + 1e-30) / ((double)ctx->spatial_weight * (1.0 - 1e-6)))
                         / (double)ctx->spacing[a];
          if (reach < 1e9)
            {
              int r = (int)ceil (reach) + 1;
              int ws = ctx->window_step[a];
              c0[a] = MAX (c0[a], CLAMP (floor_div (t0[a] - r, ws), 0, job->ncell[a] - 1));
              c1[a] = MIN (c1[a], CLAMP (floor_div (t1[a] - 1 + r, ws), 0, job->ncell[a] - 1));
            }
        }
  }

  /* `upper` as a float not below it. */
  {
    float u = (float)upper;
    upper_f = (double)u < upper ? nextafterf (u, INFINITY) : u;
  }

  /* Each row of cells along x holds its clusters at consecutive places of
   * the bins; four at a time, the box where the window meets the tile and
   * the spatial term at the box's voxel nearest the centre, made of the
   * distance's own float32 operations (the coordinate clamped into the
   * box, so a centre within it along an axis gives c − c = 0): rounding
   * being monotone, no voxel of the box has a smaller term. */
  for (int cz = c0[0]; cz <= c1[0]; cz++)
    for (int cy = c0[1]; cy <= c1[1]; cy++)
      {
        const gsize row = ((gsize)cz * job->ncell[1] + cy) * job->ncell[2];
        const guint i_end = job->cell_start[row + c1[2] + 1];

        for (guint i = job->cell_start[row + c0[2]]; i < i_end; i += 4)
          {
            SvLanesF bound = { 0 };
            SvLanesI keep = { -1, -1, -1, -1 };
            float bounds[4];
            gint32 kept[4];

            for (int a = 0; a < 3; a++)
              {
                SvLanesF c, e, d;
                SvLanesI lo, hi, a0, a1;
                memcpy (&c, job->csr_centre[a] + i, sizeof c);
                memcpy (&lo, job->csr_lo[a] + i, sizeof lo);
                memcpy (&hi, job->csr_hi[a] + i, sizeof hi);
                a0 = lanes_max_i (lo, (SvLanesI){ 0 } + t0[a]);
                a1 = lanes_min_i (hi, (SvLanesI){ 0 } + t1[a]) - 1;
                keep &= a0 <= a1;
                e = lanes_select (c < __builtin_convertvector (a0, SvLanesF),
                                  __builtin_convertvector (a0, SvLanesF),
                                  lanes_select (c > __builtin_convertvector (a1, SvLanesF),
                                                __builtin_convertvector (a1, SvLanesF), c));
                d = ctx->spacing[a] * (c - e);
                d = d * d;
                /* ((dz² + dy²) + dx²), the distance's order */
                bound = a == 0 ? d : bound + d;
              }
            bound = bound * ctx->spatial_weight;
            /* No voxel of the tile ends with a best distance above
             * `upper`, so a cluster above it would never be looked at. */
            keep &= bound <= upper_f;
            for (int l = 0; l < 4; l++)
              keep[l] &= i + (guint)l < i_end ? -1 : 0;
            memcpy (bounds, &bound, sizeof bounds);
            memcpy (kept, &keep, sizeof kept);

            for (int l = 0; l < 4; l++)
              {
                guint k;
                const int *w;
                const float *c;
                Candidate *p;

                if (!kept[l])
                  continue;
                k = job->cell_items[i + l];
                w = job->window + 6 * (gsize)k;
                c = cl->centres + k * nf;
                if ((gsize)n == list->capacity)
                  {
                    candidate_list_grow (list);
                    cand = list->items;
                  }
                p = &cand[n++];
                p->bound = bounds[l];
                p->cz = c[0];
                p->cy = c[1];
                p->cx = c[2];
                p->mdc = cl->max_dist_colour[k];
                p->k = (gint32)k;
                for (int a = 0; a < 3; a++)
                  {
                    p->lo[a] = w[a];
                    p->hi[a] = w[3 + a];
                  }
                p->covers_zy = w[0] <= t0[0] && t1[0] <= w[3] && w[1] <= t0[1] && t1[1] <= w[4];
                p->covers_x = w[2] <= t0[2] && t1[2] <= w[5];
                p->colour = c + 3;
              }
          }
      }

  return n;
}

#define BOUND_BUCKETS_MAX 128

/* Orders the gathered candidates by their spatial lower bound into
 * list->sorted, nearly: a counting sort into about one bucket per
 * candidate of the bounds' range. The bucket of a bound never decreases
 * with it (monotone float32 steps, then truncation), so every bound of a
 * bucket is at least every bound of the buckets before; each candidate's
 * `key`, its bucket's smallest bound, then never decreases along the
 * order and never exceeds its own bound, which is all the walk's stop
 * needs. The order within a bucket does not matter: the winner is the
 * lexicographic minimum in any visiting order. */
static void
order_by_bound (CandidateList *list, int n)
{
  const int n_buckets = CLAMP (n, 1, BOUND_BUCKETS_MAX);
  int start[BOUND_BUCKETS_MAX + 1] = { 0 };
  float key[BOUND_BUCKETS_MAX];
  float lo = INFINITY, hi = -INFINITY, scale;
  gint32 *bucket;

  if (list->capacity == 0)
    candidate_list_grow (list); /* the padding below, even for none */
  bucket = list->bucket;

  for (int i = 0; i < n; i++)
    {
      lo = MIN (lo, list->items[i].bound);
      hi = MAX (hi, list->items[i].bound);
    }
  scale = hi > lo ? (float)n_buckets / (hi - lo) : 0.0f;
  for (int b = 0; b < n_buckets; b++)
    key[b] = INFINITY;
  for (int i = 0; i < n; i++)
    {
      const float bound = list->items[i].bound;
      const float f = (bound - lo) * scale;
      const int b = f < (float)n_buckets ? (int)f : n_buckets - 1;
      bucket[i] = b;
      start[b + 1]++;
      key[b] = MIN (key[b], bound);
    }
  for (int b = 0; b < n_buckets; b++)
    start[b + 1] += start[b];
  for (int i = 0; i < n; i++)
    {
      const int o = start[bucket[i]]++;
      list->sorted[o] = list->items[i];
      list->sorted[o].key = key[bucket[i]];
      list->sorted_cz[o] = list->items[i].cz;
      list->sorted_cy[o] = list->items[i].cy;
    }
  /* A block past the end reads these; its lanes are never taken. */
  for (int i = n; i < n + 8; i++)
    list->sorted_cz[i] = list->sorted_cy[i] = 0.0f;
}

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

static void
colour_order_clear (ColourOrder *co)
{
  g_free (co->cz);
  g_free (co->cy);
  g_free (co->cx);
  g_free (co->colour);
  g_free (co->k);
  g_free (co->window_bits);
}

/* The bits of tile positions [lo, hi) of an axis whose first bit is `shift`. */
static guint32
axis_bits (int lo, int hi, int t0, int len, int shift)
{
  int a = CLAMP (lo - t0, 0, len), b = CLAMP (hi - t0, 0, len);
  return a < b ? (guint32)((((guint64)1 << b) - ((guint64)1 << a)) << shift) : 0;
}

static void
order_by_colour (CandidateList *list, int n, guint nc, const int t0[3], const int t1[3],
                 ColourOrder *co)
{
  const int pad = COLOUR_PAD;
  const gsize total = (gsize)n + 2 * pad;
  const int len[3] = { t1[0] - t0[0], t1[1] - t0[1], t1[2] - t0[2] };
  /* One bit per tile position along x, then y, then z; a single z plane
   * needs none (every gathered window holds it). */
  const int shift[3] = { len[1] + len[2], len[2], 0 };

  if (total > co->capacity)
    {
      colour_order_clear (co);
      co->capacity = MAX (2 * total, 128);
      co->cz = g_new (float, co->capacity);
      co->cy = g_new (float, co->capacity);
      co->cx = g_new (float, co->capacity);
      co->colour = g_new (float, co->capacity *nc);
      co->k = g_new (gint32, co->capacity);
      co->window_bits = g_new (gint32, co->capacity);
    }
  co->n = n;
  co->pad = pad;
  co->total = total;

  for (int i = 0; i < n; i++)
    list->keys[i] = (SortKey){ list->items[i].colour[0], i };
  sort_keys (list->keys, list->scratch, n);
  for (gsize i = 0; i < total; i++)
    {
      gboolean real = i >= (gsize)pad && i < (gsize)pad + n;
      const Candidate *p = real ? &list->items[list->keys[i - pad].index] : NULL;
      co->cz[i] = real ? p->cz : 0.0f;
      co->cy[i] = real ? p->cy : 0.0f;
      co->cx[i] = real ? p->cx : 0.0f;
      co->k[i] = real ? p->k : G_MAXINT32;
      co->window_bits[i] = 0;
      for (int a = 0; a < 3 && real; a++)
        if (a > 0 || len[0] > 1)
          co->window_bits[i] |= (gint32)axis_bits (p->lo[a], p->hi[a], t0[a], len[a], shift[a]);
      co->colour[i] = real ? p->colour[0] : (i < (gsize)pad ? -INFINITY : INFINITY);
      for (guint c = 1; c < nc; c++)
        co->colour[c * total + i] = real ? p->colour[c] : 0.0f;
    }
  for (int a = 0; a < 3; a++)
    for (int l = 0; l < 16; l++)
      {
        guint32 *bits = a == 0 ? co->bit_z : a == 1 ? co->bit_y : co->bit_x;
        bits[l] = l < len[a] && (a > 0 || len[0] > 1) ? (guint32)1 << (shift[a] + l) : 0;
      }

  /* Bucket b of the colour range starts at the first candidate not below
   * key_min + b / key_scale (only a starting guess for the search). */
  {
    const float *key = co->colour;
    float lo = key[pad], hi = key[pad + n - 1];
    int i = pad;
    co->key_min = lo;
    co->key_scale = hi > lo ? (float)COLOUR_BUCKETS / (hi - lo) : 0.0f;
    for (int b = 0; b <= COLOUR_BUCKETS; b++)
      {
        float edge = co->key_scale > 0.0f ? lo + (float)b / co->key_scale : lo;
        while (i < pad + n && key[i] < edge)
          i++;
        co->bucket[b] = i;
      }
  }
}

/* Whether a tile's search goes by colour: when the spread of the
 * candidates' first colour channel (squared, in distance units) is large
 * against the spatial term one grid step away, the colour order passes
 * over most candidates and the spatial bounds would prune little. Either
 * search gives the same labels. */
static gboolean
prefer_colour_order (const AssignJob *job, const CandidateList *list, int n)
{
  float lo = INFINITY, hi = -INFINITY;

  if (job->order != 0)
    return job->order > 0;
  if (n < 2 * COLOUR_PAD)
    return FALSE;
  for (int i = 0; i < n; i++)
    {
      float c = list->items[i].colour[0];
      lo = MIN (lo, c);
      hi = MAX (hi, c);
    }
  return (double)(hi - lo) * (hi - lo) > job->colour_threshold;
}

/* The tile search, once with four lanes (SSE, or plain C elsewhere) and on
 * x86-64 once more with eight (AVX2), chosen at run time. */
#define LANES 4
#define SV_LANES_FN(name) lanes4_##name
#include "slic-assign-tile.h"
#undef LANES
#undef SV_LANES_FN

#ifdef SV_HAVE_LANES8
#pragma GCC push_options
#pragma GCC target("avx2")
#define LANES 8
#define SV_LANES_FN(name) lanes8_##name
#include "slic-assign-tile.h"
#undef LANES
#undef SV_LANES_FN
#pragma GCC pop_options
#endif

static void
assign_worker (gpointer data, int thread)
{
  AssignJob *job = data;
  const SvPrepared *im = job->ctx->image;
  const int dims[3] = { (int)im->nz, (int)im->ny, (int)im->nx };
  CandidateList list = { 0 };
  ColourOrder co = { 0 };
  float vrange[2 * 64];
  g_autofree float *vrange_heap = NULL;
  float *vr = vrange;
  gint64 evaluated = 0;

  if (job->clusters->nc > 64)
    vr = vrange_heap = g_new (float, 2 * job->clusters->nc);

  for (;;)
    {
      gint t = g_atomic_int_add (&job->next_tile, 1);
      int ti[3], t0[3], t1[3], n;

      if (t >= job->n_tiles)
        break;
      ti[2] = t % job->ntile[2];
      ti[1] = (t / job->ntile[2]) % job->ntile[1];
      ti[0] = t / (job->ntile[2] * job->ntile[1]);
      for (int a = 0; a < 3; a++)
        {
          t0[a] = ti[a] * job->tile[a];
          t1[a] = MIN (t0[a] + job->tile[a], dims[a]);
        }
      /* Tiles along z start at the slab's first slice. */
      t0[0] += (int)job->ctx->z_begin;
      t1[0] = MIN (t0[0] + job->tile[0], (int)job->ctx->z_end);
      n = gather_candidates (job, t0, t1, &list, vr);
      if (job->colour_ok && prefer_colour_order (job, &list, n))
        {
          order_by_colour (&list, n, job->clusters->nc, t0, t1, &co);
#ifdef SV_HAVE_LANES8
          if (job->lanes == 8)
            evaluated += lanes8_assign_tile_colour_nc (job, t0, t1, &co, job->clusters->nc);
          else
#endif
            evaluated += lanes4_assign_tile_colour_nc (job, t0, t1, &co, job->clusters->nc);
          continue;
        }
      order_by_bound (&list, n);
#ifdef SV_HAVE_LANES8
      if (job->lanes == 8)
        evaluated += lanes8_assign_tile_nc (job, t0, t1, &list, n, job->clusters->nc);
      else
#endif
        evaluated += lanes4_assign_tile_nc (job, t0, t1, &list, n, job->clusters->nc);
    }
  job->evaluated[thread] = evaluated;
  g_free (list.items);
  g_free (list.sorted);
  g_free (list.sorted_cz);
  g_free (list.sorted_cy);
  g_free (list.keys);
  g_free (list.scratch);
  g_free (list.bucket);
  colour_order_clear (&co);
}

/* Whether every live cluster has the same colour bits (and SLIC-zero
 * maximum): scikit-image starts every centre at colour 0. */
static void
same_colour (const SvClusters *cl, gboolean slic_zero, const float **colour, float *max_dist_colour)
{
  const gsize nf = 3 + cl->nc;
  const float *first = NULL;
  float first_max = 1.0f;

  *colour = NULL;
  for (gsize k = 0; k < cl->k; k++)
    {
      if (!cl->alive[k])
        continue;
      if (first == NULL)
        {
          first = cl->centres + k * nf + 3;
          first_max = cl->max_dist_colour[k];
        }
      else if (memcmp (first, cl->centres + k * nf + 3, cl->nc * sizeof (float)) != 0
               || (slic_zero && memcmp (&first_max, &cl->max_dist_colour[k], sizeof (float)) != 0))
        return;
    }
  *colour = first;
  *max_dist_colour = first_max;
}

void
sv_slic_assign (const SvSlicContext *ctx, const SvClusters *clusters, gint32 *nearest)
{
  const SvPrepared *im = ctx->image;
  const int dims[3] = { (int)im->nz, (int)im->ny, (int)im->nx };
  const gsize nf = 3 + clusters->nc;
  AssignJob job = { 0 };
  gsize n_cells = 1;
  int n_threads;
  g_autofree guint *cell_of_k = NULL;
  const gboolean counting = sv__slic_assign_counting ();
  const gint64 start = counting ? g_get_monotonic_time () : 0;
  const double start_cpu = counting ? sv__process_cpu_seconds () : 0.0;

  job.ctx = ctx;
  job.clusters = clusters;
  job.nearest = nearest;
  job.lanes = slic_lanes ();
  job.colour_ok = !ctx->slic_zero && !ctx->ignore_colour;
  job.order = slic_assign_order ();
  job.block_walk_min = slic_block_walk_min ();
  same_colour (clusters, ctx->slic_zero, &job.same_colour, &job.same_max_dist_colour);
  {
    double step2 = 0.0;
    for (int a = 0; a < 3; a++)
      step2
          += (double)ctx->spacing[a] * ctx->window_step[a] * ctx->spacing[a] * ctx->window_step[a];
    job.colour_threshold = COLOUR_SPREAD * step2 * ctx->spatial_weight;
  }

  /* Windows of the live clusters, and bins of their centres in cells of one
   * window step, so a tile finds its clusters without scanning all K. */
  job.window = g_new (int, 6 * MAX (clusters->k, 1));
  cell_of_k = g_new (guint, MAX (clusters->k, 1));
  for (int a = 0; a < 3; a++)
    {
      job.ncell[a] = (dims[a] + ctx->window_step[a] - 1) / ctx->window_step[a];
      n_cells *= (gsize)job.ncell[a];
    }
  job.cell_start = g_new0 (guint, n_cells + 1);
  for (gsize k = 0; k < clusters->k; k++)
    {
      const float *c = clusters->centres + k * nf;
      if (!clusters->alive[k])
        continue;
      for (int a = 0; a < 3; a++)
        sv_arith_window (c[a], ctx->window_step[a], dims[a], &job.window[6 * k + a],
                         &job.window[6 * k + 3 + a]);
      cell_of_k[k]
          = (guint)(((gsize)sv_arith_cell_of (c[0], ctx->window_step[0], job.ncell[0]) * job.ncell[1]
                     + sv_arith_cell_of (c[1], ctx->window_step[1], job.ncell[1]))
                        * job.ncell[2]
                    + sv_arith_cell_of (c[2], ctx->window_step[2], job.ncell[2]));
      job.cell_start[cell_of_k[k] + 1]++;
    }
  for (gsize i = 0; i < n_cells; i++)
    job.cell_start[i + 1] += job.cell_start[i];
  job.cell_items = g_new (guint, MAX (job.cell_start[n_cells], 1));
  {
    g_autofree guint *fill = g_memdup2 (job.cell_start, n_cells * sizeof (guint));
    for (gsize k = 0; k < clusters->k; k++)
      if (clusters->alive[k])
        job.cell_items[fill[cell_of_k[k]]++] = (guint)k;
  }
  for (int a = 0; a < 3; a++)
    {
      const gsize n_live = job.cell_start[n_cells];
      job.csr_centre[a] = g_new (float, n_live + 4);
      job.csr_lo[a] = g_new (gint32, n_live + 4);
      job.csr_hi[a] = g_new (gint32, n_live + 4);
      for (gsize i = 0; i < n_live + 4; i++)
        {
          const gsize k = i < n_live ? job.cell_items[i] : 0;
          job.csr_centre[a][i] = i < n_live ? clusters->centres[k * nf + a] : 0.0f;
          job.csr_lo[a][i] = i < n_live ? job.window[6 * k + a] : 1;
          job.csr_hi[a][i] = i < n_live ? job.window[6 * k + 3 + a] : 0;
        }
    }

  job.tile[0] = MIN (TILE_Z, (int)(ctx->z_end - ctx->z_begin));
  job.tile[1] = dims[0] == 1 ? MIN (2 * TILE_Y, dims[1]) : MIN (TILE_Y, dims[1]);
  job.tile[2] = dims[0] == 1 ? MIN (2 * TILE_X, dims[2]) : MIN (TILE_X, dims[2]);
  for (int a = 0; a < 3; a++)
    job.ntile[a] = (dims[a] + job.tile[a] - 1) / job.tile[a];
  job.ntile[0] = (int)(ctx->z_end - ctx->z_begin + job.tile[0] - 1) / MAX (job.tile[0], 1);
  job.n_tiles = job.ntile[0] * job.ntile[1] * job.ntile[2];

  n_threads = MIN (MIN (sv__resolve_threads (ctx->n_threads), MAX (job.n_tiles, 1)), 256);
  sv__run_parallel (n_threads, assign_worker, &job);
  if (counting)
    {
      gint64 evaluated = 0;
      for (int t = 0; t < n_threads; t++)
        evaluated += job.evaluated[t];
      sv__slic_assign_report (ctx, clusters, nearest, evaluated,
                              (g_get_monotonic_time () - start) * 1e-6,
                              sv__process_cpu_seconds () - start_cpu);
    }

  g_free (job.window);
  g_free (job.cell_start);
  g_free (job.cell_items);
  for (int a = 0; a < 3; a++)
    {
      g_free (job.csr_centre[a]);
      g_free (job.csr_lo[a]);
      g_free (job.csr_hi[a]);
    }
}

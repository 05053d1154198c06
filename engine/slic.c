/* Supervox engine: the SLIC iterations on the CPU, the reference backend.
 *
 * The assignment visits the volume in 8×8×8 tiles. For each tile it gathers
 * the live clusters whose search window meets the tile, drops those whose
 * lower bound over the tile exceeds an upper bound of every voxel's best
 * distance, orders the rest by that lower bound and, for four voxels of a
 * row at a time (eight with AVX2, see slic-assign-tile.h), stops as soon as
 * no remaining cluster can beat any of their best distances. The winner is
 * the lexicographic (distance, index) minimum, which is exactly what
 * scikit-image's "visit k in increasing order, keep strictly smaller"
 * picks, so the result equals the brute-force loop bit for bit
 * (tests/engine/test-slic.c checks it). Threads take tiles from an atomic
 * counter and write disjoint voxels, so the labels do not depend on the
 * thread count; the update sums integers. */
#define G_LOG_DOMAIN "sv-engine"

#include "slic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "connectivity.h"
#include "error.h"
#include "internal.h"
#include "slic-arith.h"

/* GCC on x86-64 also builds an eight-lane AVX2 tile search. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SV_HAVE_LANES8 1
#endif

#define TILE_Z 8
#define TILE_Y 8
#define TILE_X 8

int
sv__resolve_threads (int n_threads)
{
  if (n_threads <= 0)
    n_threads = (int)g_get_num_processors ();
  return CLAMP (n_threads, 1, 256);
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

/* ---- threads ---------------------------------------------------------- */

typedef void (*WorkFunc) (gpointer data, int thread);

typedef struct
{
  WorkFunc func;
  gpointer data;
  int thread;
} WorkArgs;

static gpointer
work_thread_main (gpointer p)
{
  WorkArgs *args = p;
  args->func (args->data, args->thread);
  return NULL;
}

/* Runs func(data, t) for t in [0, n_threads), on n_threads threads (the
 * caller's thread is one of them). */
static void
run_parallel (int n_threads, WorkFunc func, gpointer data)
{
  GThread *threads[256] = { NULL };
  WorkArgs args[256];

  for (int t = 1; t < n_threads; t++)
    {
      args[t] = (WorkArgs){ func, data, t };
      threads[t] = g_thread_try_new ("sv-slic", work_thread_main, &args[t], NULL);
      if (threads[t] == NULL)
        func (data, t); /* no thread to be had: do its share here */
    }
  func (data, 0);
  for (int t = 1; t < n_threads; t++)
    if (threads[t] != NULL)
      g_thread_join (threads[t]);
}

/* ---- context and clusters ------------------------------------------- */

void
sv_slic_context_init (SvSlicContext *ctx, const SvPrepared *image, const guint8 *mask,
                      const SvSeeds *seeds, const SvSlicParams *params, int n_threads)
{
  gsize n_voxels = (gsize)image->nz * image->ny * image->nx;

  memset (ctx, 0, sizeof *ctx);
  ctx->image = image;
  ctx->mask = mask;
  ctx->ratio = (float)(1.0 / params->compactness);
  ctx->spatial_weight = sv_arith_spatial_weight (seeds->step);
  for (int a = 0; a < 3; a++)
    {
      ctx->spacing[a] = (float)params->spacing[a];
      ctx->window_step[a] = seeds->window_step[a];
    }
  ctx->slic_zero = params->slic_zero;
  ctx->ignore_colour = FALSE;
  /* max |fl(v·ratio)| = fl(max |v| · ratio): multiplying by a positive
   * constant is monotone in float32. */
  ctx->colour_shift = sv_arith_colour_shift (image->max_abs * ctx->ratio, n_voxels);
  ctx->n_threads = n_threads;
}

gboolean
sv_clusters_init (SvClusters *clusters, const SvSeeds *seeds, guint nc, GError **error)
{
  gsize nf = 3 + nc;

  memset (clusters, 0, sizeof *clusters);
  clusters->centres = g_try_new0 (float, seeds->n *nf);
  clusters->alive = g_try_new (guint8, seeds->n);
  clusters->max_dist_colour = g_try_new (float, seeds->n);
  if (clusters->centres == NULL || clusters->alive == NULL || clusters->max_dist_colour == NULL)
    {
      sv_clusters_clear (clusters);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "not enough memory for %" G_GSIZE_FORMAT " clusters", seeds->n);
      return FALSE;
    }
  clusters->k = seeds->n;
  clusters->nc = nc;
  for (gsize k = 0; k < seeds->n; k++)
    {
      memcpy (clusters->centres + k * nf, seeds->zyx + 3 * k, 3 * sizeof (float));
      clusters->alive[k] = 1;
      clusters->max_dist_colour[k] = 1.0f;
    }
  return TRUE;
}

void
sv_clusters_clear (SvClusters *clusters)
{
  g_clear_pointer (&clusters->centres, g_free);
  g_clear_pointer (&clusters->alive, g_free);
  g_clear_pointer (&clusters->max_dist_colour, g_free);
  clusters->k = 0;
}

/* ---- assignment ------------------------------------------------------- */

/* One candidate cluster of a tile, ordered by `bound`. */
typedef struct
{
  float bound; /* lower bound of the float32 spatial term over the tile */
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
  int ncell[3];
  int tile[3];
  int ntile[3];
  gint n_tiles;
  gint next_tile; /* atomic */
  int lanes;      /* 4, or 8 where the CPU has AVX2 */
} AssignJob;

static inline int
cell_of (float c, int ws, int ncell)
{
  int i = (int)floorf (c / (float)ws);
  return CLAMP (i, 0, ncell - 1);
}

static inline int
floor_div (int a, int b)
{
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Distance along one axis from centre c to the nearest integer in [a0, a1]. */
static inline double
axis_gap (double c, int a0, int a1)
{
  if (c < a0)
    return a0 - c;
  if (c > a1)
    return c - a1;
  return 0.0;
}

/* Four values at a time for the tile's value range. */
typedef float SvLanesF __attribute__ ((vector_size (4 * sizeof (float))));
typedef gint32 SvLanesI __attribute__ ((vector_size (4 * sizeof (gint32))));

static inline SvLanesF
lanes_select (SvLanesI take, SvLanesF a, SvLanesF b)
{
  return (SvLanesF)((take & (SvLanesI)a) | (~take & (SvLanesI)b));
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
  SortKey *keys;
  SortKey *scratch;
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

  for (int cz = c0[0]; cz <= c1[0]; cz++)
    for (int cy = c0[1]; cy <= c1[1]; cy++)
      for (int cx = c0[2]; cx <= c1[2]; cx++)
        {
          gsize cell = ((gsize)cz * job->ncell[1] + cy) * job->ncell[2] + cx;
          for (guint i = job->cell_start[cell]; i < job->cell_start[cell + 1]; i++)
            {
              guint k = job->cell_items[i];
              const int *w = job->window + 6 * (gsize)k;
              const float *c = cl->centres + k * nf;
              int a0[3], a1[3];
              gboolean meets = TRUE;
              double g, bound = 0.0;
              Candidate *p;

              for (int a = 0; a < 3; a++)
                {
                  a0[a] = MAX (t0[a], w[a]);
                  a1[a] = MIN (t1[a], w[3 + a]) - 1;
                  meets = meets && a0[a] <= a1[a];
                }
              if (!meets)
                continue;

              /* The exact spatial term's minimum over the box, made a safe
               * lower bound of the float32 term (a handful of roundings of
               * relative size 2^-24, and denormals). */
              for (int a = 0; a < 3; a++)
                {
                  g = (double)ctx->spacing[a] * axis_gap (c[a], a0[a], a1[a]);
                  bound += g * g;
                }
              bound = bound * (double)ctx->spatial_weight * (1.0 - 1e-6) - 1e-30;

              /* No voxel of the tile ends with a best distance above
               * `upper`, so this cluster would never be looked at. */
              if (bound > upper)
                continue;

              if ((gsize)n == list->capacity)
                {
                  list->capacity = MAX (2 * list->capacity, 64);
                  list->items = g_renew (Candidate, list->items, list->capacity);
                  list->sorted = g_renew (Candidate, list->sorted, list->capacity);
                  list->keys = g_renew (SortKey, list->keys, list->capacity);
                  list->scratch = g_renew (SortKey, list->scratch, list->capacity);
                  cand = list->items;
                }
              p = &cand[n++];
              p->bound = (float)bound;
              if ((double)p->bound > bound)
                p->bound = nextafterf (p->bound, -INFINITY);
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

  /* Sort small keys by bound, then copy each candidate once. The order
   * among equal bounds does not matter: the winner is the lexicographic
   * minimum in any visiting order. */
  for (int i = 0; i < n; i++)
    list->keys[i] = (SortKey){ cand[i].bound, i };
  sort_keys (list->keys, list->scratch, n);
  for (int i = 0; i < n; i++)
    list->sorted[i] = cand[list->keys[i].index];
  return n;
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
  CandidateList list = { NULL, NULL, NULL, NULL, 0 };
  float vrange[2 * 64];
  g_autofree float *vrange_heap = NULL;
  float *vr = vrange;

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
      n = gather_candidates (job, t0, t1, &list, vr);
#ifdef SV_HAVE_LANES8
      if (job->lanes == 8)
        lanes8_assign_tile_nc (job, t0, t1, list.sorted, n, job->clusters->nc);
      else
#endif
        lanes4_assign_tile_nc (job, t0, t1, list.sorted, n, job->clusters->nc);
    }
  g_free (list.items);
  g_free (list.sorted);
  g_free (list.keys);
  g_free (list.scratch);
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

  job.ctx = ctx;
  job.clusters = clusters;
  job.nearest = nearest;
  job.lanes = slic_lanes ();

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
          = (guint)(((gsize)cell_of (c[0], ctx->window_step[0], job.ncell[0]) * job.ncell[1]
                     + cell_of (c[1], ctx->window_step[1], job.ncell[1]))
                        * job.ncell[2]
                    + cell_of (c[2], ctx->window_step[2], job.ncell[2]));
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

  job.tile[0] = MIN (TILE_Z, dims[0]);
  job.tile[1] = dims[0] == 1 ? MIN (2 * TILE_Y, dims[1]) : MIN (TILE_Y, dims[1]);
  job.tile[2] = dims[0] == 1 ? MIN (2 * TILE_X, dims[2]) : MIN (TILE_X, dims[2]);
  for (int a = 0; a < 3; a++)
    job.ntile[a] = (dims[a] + job.tile[a] - 1) / job.tile[a];
  job.n_tiles = job.ntile[0] * job.ntile[1] * job.ntile[2];

  n_threads = MIN (sv__resolve_threads (ctx->n_threads), MAX (job.n_tiles, 1));
  run_parallel (n_threads, assign_worker, &job);

  g_free (job.window);
  g_free (job.cell_start);
  g_free (job.cell_items);
}

/* ---- update ----------------------------------------------------------- */

typedef struct
{
  const SvSlicContext *ctx;
  const SvClusters *clusters;
  const gint32 *nearest;
  int n_threads;
  gint64 **sums;  /* per thread: K × (4 + nc): count, z, y, x, colour… */
  float **maxima; /* per thread: K SLIC-zero maxima */
} UpdateJob;

/* A thread's share of the nz·ny rows of the volume. */
static void
row_range (const SvPrepared *im, int n_threads, int thread, gsize *r0, gsize *r1)
{
  guint64 rows = (guint64)im->nz * im->ny;
  *r0 = (gsize)(rows * thread / n_threads);
  *r1 = (gsize)(rows * (thread + 1) / n_threads);
}

/* sv__colour_fixed (v, scale) for |v·scale| < 2^51: adding 1.5·2^52 puts
 * the value where the double spacing is 1, so the addition rounds to the
 * nearest integer, ties to even, as llrint does; the bits of the sum minus
 * those of 1.5·2^52 are that integer. */
static inline gint64
colour_fixed_small (float v, double scale)
{
  double t = (double)v * scale + 0x1.8p52;
  gint64 bits;

  memcpy (&bits, &t, sizeof bits);
  return bits - (gint64)0x4338000000000000;
}

/* The sums of rows [r0, r1). Runs of voxels with the same cluster along a
 * row are added at once (their x sum in closed form); the colour is added
 * voxel by voxel in fixed point. nc and small (every |v·ratio·scale| <
 * 2^51) are compile-time constants in the specialised callers. */
static inline void
sum_rows (const UpdateJob *job, gsize r0, gsize r1, gint64 *sums, guint nc, gboolean small)
{
  const SvSlicContext *ctx = job->ctx;
  const SvPrepared *im = ctx->image;
  const gsize ns = 4 + nc;
  const double scale = ldexp (1.0, ctx->colour_shift);
  const float ratio = ctx->ratio;
  const gint64 nx = im->nx;
  gint64 colour[16];
  g_autofree gint64 *colour_heap = nc > 16 ? g_new (gint64, nc) : NULL;
  gint64 *col = colour_heap != NULL ? colour_heap : colour;

  for (gsize r = r0; r < r1; r++)
    {
      const gint64 z = (gint64)(r / im->ny), y = (gint64)(r % im->ny);
      const gint32 *nearest = job->nearest + r * im->nx;
      const float *data = im->data + r * im->nx * nc;
      gint64 x = 0;

      while (x < nx)
        {
          const gint32 k = nearest[x];
          const gint64 x_start = x;
          gint64 n, *s;

          if (k < 0)
            {
              x++;
              continue;
            }
          for (guint c = 0; c < nc; c++)
            col[c] = 0;
          do
            {
              for (guint c = 0; c < nc; c++)
                {
                  float v = data[x * nc + c] * ratio;
                  col[c] += small ? colour_fixed_small (v, scale) : sv__colour_fixed (v, scale);
                }
              x++;
            }
          while (x < nx && nearest[x] == k);
          n = x - x_start;
          s = sums + (gsize)k * ns;
          s[0] += n;
          s[1] += n * z;
          s[2] += n * y;
          s[3] += n * x_start + n * (n - 1) / 2;
          for (guint c = 0; c < nc; c++)
            s[4 + c] += col[c];
        }
    }
}

static void
sum_worker (gpointer data, int thread)
{
  UpdateJob *job = data;
  const SvSlicContext *ctx = job->ctx;
  const guint nc = ctx->image->nc;
  gint64 *sums = job->sums[thread];
  /* The largest |fl(v·ratio)| is fl(max |v| · ratio) (monotone rounding). */
  const gboolean small
      = ldexp ((double)(ctx->image->max_abs * ctx->ratio), ctx->colour_shift) < 0x1p51;
  gsize r0, r1;

  memset (sums, 0, job->clusters->k * (4 + nc) * sizeof (gint64));
  row_range (ctx->image, job->n_threads, thread, &r0, &r1);
  if (small && nc == 1)
    sum_rows (job, r0, r1, sums, 1, TRUE);
  else if (small && nc == 3)
    sum_rows (job, r0, r1, sums, 3, TRUE);
  else
    sum_rows (job, r0, r1, sums, nc, small);
}

static void
max_worker (gpointer data, int thread)
{
  UpdateJob *job = data;
  const SvSlicContext *ctx = job->ctx;
  const SvPrepared *im = ctx->image;
  const SvClusters *cl = job->clusters;
  const guint nc = im->nc;
  const gsize nf = 3 + nc;
  float *maxima = job->maxima[thread];
  gsize r0, r1;

  for (gsize k = 0; k < cl->k; k++)
    maxima[k] = 0.0f;
  row_range (im, job->n_threads, thread, &r0, &r1);
  for (gsize v = r0 * im->nx; v < r1 * im->nx; v++)
    {
      gint32 k = job->nearest[v];
      float colour = 0.0f;
      if (k < 0)
        continue;
      for (guint c = 0; c < nc; c++)
        colour += sv_arith_colour_term (im->data[v * nc + c], ctx->ratio,
                                        cl->centres[(gsize)k * nf + 3 + c]);
      if (colour > maxima[k])
        maxima[k] = colour;
    }
}

void
sv_slic_update (const SvSlicContext *ctx, const gint32 *nearest, SvClusters *clusters)
{
  const SvPrepared *im = ctx->image;
  const guint nc = im->nc, ns = 4 + nc;
  const gsize nf = 3 + nc;
  UpdateJob job = { 0 };
  int n_threads
      = (int)MIN ((guint64)sv__resolve_threads (ctx->n_threads), MAX ((guint64)im->nz * im->ny, 1));

  g_return_if_fail (clusters->nc == nc);

  job.ctx = ctx;
  job.clusters = clusters;
  job.nearest = nearest;
  job.n_threads = n_threads;
  job.sums = g_new (gint64 *, n_threads);
  for (int t = 0; t < n_threads; t++)
    job.sums[t] = g_new (gint64, MAX (clusters->k, 1) * ns);
  run_parallel (n_threads, sum_worker, &job);

  /* Integer sums: the order of the additions does not matter. */
  for (int t = 1; t < n_threads; t++)
    for (gsize i = 0; i < clusters->k * ns; i++)
      job.sums[0][i] += job.sums[t][i];

  for (gsize k = 0; k < clusters->k; k++)
    {
      const gint64 *s = job.sums[0] + k * ns;
      float *c = clusters->centres + k * nf;

      if (!clusters->alive[k])
        continue;
      if (s[0] == 0)
        {
          /* scikit-image divides by zero here and the NaN centre never wins
           * again: the cluster is dead for the rest of the run. */
          clusters->alive[k] = 0;
          for (gsize f = 0; f < nf; f++)
            c[f] = NAN;
          continue;
        }
      for (int a = 0; a < 3; a++)
        c[a] = sv_arith_coord_mean (s[1 + a], s[0]);
      for (guint ch = 0; ch < nc; ch++)
        c[3 + ch] = sv_arith_colour_mean (s[4 + ch], ctx->colour_shift, s[0]);
    }

  for (int t = 0; t < n_threads; t++)
    g_free (job.sums[t]);
  g_free (job.sums);

  if (ctx->slic_zero)
    {
      job.maxima = g_new (float *, n_threads);
      for (int t = 0; t < n_threads; t++)
        job.maxima[t] = g_new (float, MAX (clusters->k, 1));
      run_parallel (n_threads, max_worker, &job);
      for (int t = 0; t < n_threads; t++)
        {
          for (gsize k = 0; k < clusters->k; k++)
            if (job.maxima[t][k] > clusters->max_dist_colour[k])
              clusters->max_dist_colour[k] = job.maxima[t][k];
          g_free (job.maxima[t]);
        }
      g_free (job.maxima);
    }
}

/* ---- the run ---------------------------------------------------------- */

/* Gives every mask-in voxel that no live window reached the live cluster
 * with the smallest spatial term (ties to the lowest index). The clusters
 * are binned in cubic cells; the search grows ring by ring and stops once no
 * unvisited cell can hold a closer centre. */
void
sv__slic_fill_unassigned (const SvSlicContext *ctx, const SvClusters *cl, gint32 *nearest)
{
  const SvPrepared *im = ctx->image;
  const int dims[3] = { (int)im->nz, (int)im->ny, (int)im->nx };
  const gsize nf = 3 + cl->nc;
  const int cs = MAX (ctx->window_step[0], MAX (ctx->window_step[1], ctx->window_step[2]));
  const float smin = MIN (ctx->spacing[0], MIN (ctx->spacing[1], ctx->spacing[2]));
  int ncell[3], max_r;
  gsize n_cells = 1, v = 0, n_missing = 0, n_live = 0;
  g_autofree guint *start = NULL;
  g_autofree guint *items = NULL;
  g_autofree guint *fill = NULL;
  g_autofree gsize *cell_of_k = NULL;

  for (gsize i = 0; i < (gsize)dims[0] * dims[1] * dims[2]; i++)
    n_missing += nearest[i] < 0 && (ctx->mask == NULL || ctx->mask[i]);
  for (gsize k = 0; k < cl->k; k++)
    n_live += cl->alive[k];
  if (n_missing == 0 || n_live == 0)
    return;

  for (int a = 0; a < 3; a++)
    {
      ncell[a] = (dims[a] + cs - 1) / cs;
      n_cells *= (gsize)ncell[a];
    }
  max_r = MAX (ncell[0], MAX (ncell[1], ncell[2]));
  start = g_new0 (guint, n_cells + 1);
  cell_of_k = g_new (gsize, MAX (cl->k, 1));
  for (gsize k = 0; k < cl->k; k++)
    {
      const float *c = cl->centres + k * nf;
      if (!cl->alive[k])
        continue;
      cell_of_k[k] = ((gsize)cell_of (c[0], cs, ncell[0]) * ncell[1] + cell_of (c[1], cs, ncell[1]))
                         * ncell[2]
                     + cell_of (c[2], cs, ncell[2]);
      start[cell_of_k[k] + 1]++;
    }
  for (gsize c = 0; c < n_cells; c++)
    start[c + 1] += start[c];
  items = g_new (guint, MAX (n_live, 1));
  fill = g_memdup2 (start, n_cells * sizeof (guint));
  for (gsize k = 0; k < cl->k; k++)
    if (cl->alive[k])
      items[fill[cell_of_k[k]]++] = (guint)k;

  for (int z = 0; z < dims[0]; z++)
    for (int y = 0; y < dims[1]; y++)
      for (int x = 0; x < dims[2]; x++, v++)
        {
          const int p[3] = { z, y, x };
          int home[3];
          float best_d = INFINITY;
          gint32 best_k = -1;

          if (nearest[v] >= 0 || (ctx->mask != NULL && !ctx->mask[v]))
            continue;
          for (int a = 0; a < 3; a++)
            home[a] = MIN (p[a] / cs, ncell[a] - 1);
          for (int r = 0; r <= max_r; r++)
            {
              /* A centre beyond ring r - 1 is more than (r - 1)·cs voxels
               * away along some axis; compare with a margin for rounding. */
              if (r > 0)
                {
                  double g = (double)smin * (double)(r - 1) * cs;
                  if (g * g * (double)ctx->spatial_weight * (1.0 - 1e-6) > (double)best_d)
                    break;
                }
              for (int cz = home[0] - r; cz <= home[0] + r; cz++)
                for (int cy = home[1] - r; cy <= home[1] + r; cy++)
                  for (int cx = home[2] - r; cx <= home[2] + r; cx++)
                    {
                      gsize c;
                      if (cz < 0 || cy < 0 || cx < 0 || cz >= ncell[0] || cy >= ncell[1]
                          || cx >= ncell[2])
                        continue;
                      if (MAX (abs (cz - home[0]), MAX (abs (cy - home[1]), abs (cx - home[2])))
                          != r)
                        continue;
                      c = ((gsize)cz * ncell[1] + cy) * ncell[2] + cx;
                      for (guint i = start[c]; i < start[c + 1]; i++)
                        {
                          const guint k = items[i];
                          const float *cc = cl->centres + (gsize)k * nf;
                          float s = sv_arith_spatial (cc[0], cc[1], cc[2], (float)z, (float)y,
                                                      (float)x, ctx->spacing[0], ctx->spacing[1],
                                                      ctx->spacing[2], ctx->spatial_weight);
                          if (sv_arith_better (s, (gint64)k, best_d, best_k))
                            {
                              best_d = s;
                              best_k = (gint32)k;
                            }
                        }
                    }
            }
          nearest[v] = best_k;
        }
}

gboolean
sv__slic_run (const SvPrepared *image, const guint8 *mask, const SvSlicParams *params,
              int n_threads, SvIterationFunc progress, gpointer user_data,
              GCancellable *cancellable, gint32 *labels, SvClusters *clusters_out,
              SvSlicTimings *timings, GError **error)
{
  const guint shape[3] = { image->nz, image->ny, image->nx };
  const gsize n_voxels = (gsize)image->nz * image->ny * image->nx;
  SvSeeds seeds = { 0 };
  SvClusters clusters = { 0 };
  SvSlicContext ctx;
  g_autofree gint32 *nearest = NULL;
  guint n_passes = mask != NULL ? 2 : 1;
  guint n_total, done = 0;
  gint64 t_start, t_connect;
  gboolean ok = FALSE;

  g_return_val_if_fail (image != NULL && params != NULL && labels != NULL, FALSE);

  if (!sv_slic_params_validate (params, error))
    return FALSE;

  t_start = g_get_monotonic_time ();
  if (mask != NULL)
    {
      if (!sv_seeds_mask (shape, mask, params->n_segments, &seeds, error))
        return FALSE;
    }
  else if (!sv_seeds_grid (shape, params->n_segments, &seeds, error))
    return FALSE;

  if (!sv_clusters_init (&clusters, &seeds, image->nc, error))
    goto out;
  sv_slic_context_init (&ctx, image, mask, &seeds, params, n_threads);

  nearest = g_try_new (gint32, MAX (n_voxels, 1));
  if (nearest == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "not enough memory for the labels of %" G_GSIZE_FORMAT " voxels", n_voxels);
      goto out;
    }
  for (gsize v = 0; v < n_voxels; v++)
    nearest[v] = -1;

  n_total = n_passes * (guint)params->max_num_iter;
  for (guint pass = 0; pass < n_passes; pass++)
    {
      /* maskSLIC first moves the seeds by position only; each pass starts
       * with fresh SLIC-zero maxima, as each _slic_cython call does. */
      ctx.ignore_colour = pass + 1 < n_passes;
      for (gsize k = 0; k < clusters.k; k++)
        clusters.max_dist_colour[k] = 1.0f;

      for (int i = 0; i < params->max_num_iter; i++)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            goto out;
          sv_slic_assign (&ctx, &clusters, nearest);
          sv_slic_update (&ctx, nearest, &clusters);
          done++;
          if (progress != NULL)
            progress (done, n_total, user_data);
        }
    }

  if (params->max_num_iter > 0)
    sv__slic_fill_unassigned (&ctx, &clusters, nearest);

  for (gsize v = 0; v < n_voxels; v++)
    nearest[v] = nearest[v] < 0 ? params->start_label - 1 : nearest[v] + params->start_label;

  t_connect = g_get_monotonic_time ();
  if (params->enforce_connectivity)
    {
      gsize n_in = n_voxels;
      gint64 min_size, max_size, n_labels;

      if (mask != NULL)
        {
          n_in = 0;
          for (gsize v = 0; v < n_voxels; v++)
            n_in += mask[v] != 0;
        }
      sv_connectivity_sizes (n_in, clusters.k, params->min_size_factor, params->max_size_factor,
                             &min_size, &max_size);
      n_labels = sv_connectivity_enforce (nearest, image->nz, image->ny, image->nx, min_size,
                                          max_size, params->start_label, labels);
      if (timings != NULL)
        timings->n_labels = n_labels;
    }
  else
    {
      memcpy (labels, nearest, n_voxels * sizeof (gint32));
      if (timings != NULL)
        {
          g_autofree guint8 *seen = g_new0 (guint8, clusters.k + 1);
          gint64 n_labels = 0;
          for (gsize v = 0; v < n_voxels; v++)
            {
              gint64 k = (gint64)labels[v] - params->start_label;
              if (k >= 0 && !seen[k])
                {
                  seen[k] = 1;
                  n_labels++;
                }
            }
          timings->n_labels = n_labels;
        }
    }

  if (timings != NULL)
    {
      gint64 t_end = g_get_monotonic_time ();
      timings->seconds_iterate = (double)(t_connect - t_start) / G_USEC_PER_SEC;
      timings->seconds_connect = (double)(t_end - t_connect) / G_USEC_PER_SEC;
      timings->iterations = done;
    }
  if (clusters_out != NULL)
    {
      *clusters_out = clusters;
      memset (&clusters, 0, sizeof clusters);
    }
  ok = TRUE;

out:
  sv_clusters_clear (&clusters);
  sv_seeds_clear (&seeds);
  return ok;
}

gboolean
sv_slic_run_cpu (const SvPrepared *image, const guint8 *mask, const SvSlicParams *params,
                 int n_threads, SvIterationFunc progress, gpointer user_data,
                 GCancellable *cancellable, gint32 *labels, gsize *n_clusters_out, GError **error)
{
  SvClusters clusters = { 0 };

  if (!sv__slic_run (image, mask, params, n_threads, progress, user_data, cancellable, labels,
                     &clusters, NULL, error))
    return FALSE;
  if (n_clusters_out != NULL)
    *n_clusters_out = clusters.k;
  sv_clusters_clear (&clusters);
  return TRUE;
}

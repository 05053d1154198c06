/* Supervox engine: the SLIC assignment step on the CPU.
 *
 * The assignment visits the volume in 8×8×8 tiles. For each tile it gathers
 * the live clusters whose search window meets the tile, drops those whose
 * lower bound over the tile exceeds an upper bound of every voxel's best
 * distance, orders the rest by that lower bound (slic-assign-gather.c) and,
 * for four voxels of a row at a time (eight with AVX2, see
 * slic-assign-tile.h), stops as soon as no remaining cluster can beat any
 * of their best distances. Where the
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

#include "slic-assign-private.h"

#include "slic-assign-count.h"
#include "supervox/sv-slic-arith.h"

/* GCC on x86-64 also builds an eight-lane AVX2 tile search. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SV_HAVE_LANES8 1
#endif

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
  sv__assign_sort_keys (list->keys, list->scratch, n);
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
      n = sv__assign_gather (job, t0, t1, &list, vr);
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
      sv__assign_order_by_bound (&list, n);
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

/* Supervox engine: the SLIC iterations on the CPU, the reference backend.
 *
 * The assignment visits the volume in small tiles. For each tile it gathers
 * the live clusters whose search window meets the tile, orders them by a
 * lower bound of their spatial term over the tile and, per voxel, stops as
 * soon as no remaining cluster can beat the best distance found. The winner
 * is the lexicographic (distance, index) minimum, which is exactly what
 * scikit-image's "visit k in increasing order, keep strictly smaller" picks,
 * so the result equals the brute-force loop bit for bit. */
#define G_LOG_DOMAIN "sv-engine"

#include "slic.h"

#include <math.h>
#include <string.h>

#include "connectivity.h"
#include "error.h"
#include "internal.h"
#include "slic-arith.h"

#define TILE_Z 8
#define TILE_Y 8
#define TILE_X 8

int
sv__resolve_threads (int n_threads)
{
  if (n_threads <= 0)
    n_threads = (int) g_get_num_processors ();
  return CLAMP (n_threads, 1, 256);
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
      args[t] = (WorkArgs) { func, data, t };
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
  gsize n_voxels = (gsize) image->nz * image->ny * image->nx;

  memset (ctx, 0, sizeof *ctx);
  ctx->image = image;
  ctx->mask = mask;
  ctx->ratio = (float) (1.0 / params->compactness);
  ctx->spatial_weight = sv_arith_spatial_weight (seeds->step);
  for (int a = 0; a < 3; a++)
    {
      ctx->spacing[a] = (float) params->spacing[a];
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
  clusters->centres = g_try_new0 (float, seeds->n * nf);
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
  const float *colour;
} Candidate;

typedef struct
{
  const SvSlicContext *ctx;
  const SvClusters *clusters;
  gint32 *nearest;
  int *window;          /* per cluster 6 ints: lo z,y,x, hi z,y,x */
  guint *cell_start;    /* CSR bins of live clusters by centre cell */
  guint *cell_items;
  int ncell[3];
  int tile[3];
  int ntile[3];
  gint n_tiles;
  gint next_tile;       /* atomic */
  Candidate **scratch;  /* per thread, K entries */
} AssignJob;

static inline int
cell_of (float c, int ws, int ncell)
{
  int i = (int) floorf (c / (float) ws);
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

static int
gather_candidates (const AssignJob *job, const int t0[3], const int t1[3], Candidate *cand)
{
  const SvSlicContext *ctx = job->ctx;
  const SvClusters *cl = job->clusters;
  const gsize nf = 3 + cl->nc;
  int c0[3], c1[3], n = 0;

  for (int a = 0; a < 3; a++)
    {
      int ws = ctx->window_step[a];
      c0[a] = CLAMP (floor_div (t0[a] - 2 * ws - 1, ws), 0, job->ncell[a] - 1);
      c1[a] = CLAMP (floor_div (t1[a] + 2 * ws, ws), 0, job->ncell[a] - 1);
    }

  for (int cz = c0[0]; cz <= c1[0]; cz++)
    for (int cy = c0[1]; cy <= c1[1]; cy++)
      for (int cx = c0[2]; cx <= c1[2]; cx++)
        {
          gsize cell = ((gsize) cz * job->ncell[1] + cy) * job->ncell[2] + cx;
          for (guint i = job->cell_start[cell]; i < job->cell_start[cell + 1]; i++)
            {
              guint k = job->cell_items[i];
              const int *w = job->window + 6 * (gsize) k;
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
                  g = (double) ctx->spacing[a] * axis_gap (c[a], a0[a], a1[a]);
                  bound += g * g;
                }
              bound = bound * (double) ctx->spatial_weight * (1.0 - 1e-6) - 1e-30;

              p = &cand[n++];
              p->bound = (float) bound;
              if ((double) p->bound > bound)
                p->bound = nextafterf (p->bound, -INFINITY);
              p->cz = c[0];
              p->cy = c[1];
              p->cx = c[2];
              p->mdc = cl->max_dist_colour[k];
              p->k = (gint32) k;
              for (int a = 0; a < 3; a++)
                {
                  p->lo[a] = w[a];
                  p->hi[a] = w[3 + a];
                }
              p->colour = c + 3;
            }
        }

  /* Insertion sort by bound; lists are short and often nearly sorted. */
  for (int i = 1; i < n; i++)
    {
      Candidate t = cand[i];
      int j = i;
      while (j > 0 && cand[j - 1].bound > t.bound)
        {
          cand[j] = cand[j - 1];
          j--;
        }
      cand[j] = t;
    }
  return n;
}

/* The per-voxel search. nc is a compile-time constant in the specialised
 * callers so the colour loop unrolls. */
static inline void
assign_tile (const AssignJob *job, const int t0[3], const int t1[3], const Candidate *cand,
             int n_cand, guint nc)
{
  const SvSlicContext *ctx = job->ctx;
  const SvPrepared *im = ctx->image;
  const gsize ny = im->ny, nx = im->nx;
  const float sz = ctx->spacing[0], sy = ctx->spacing[1], sx = ctx->spacing[2];
  const float sw = ctx->spatial_weight, ratio = ctx->ratio;
  const int slic_zero = ctx->slic_zero, ignore_colour = ctx->ignore_colour;
  const guint8 *mask = ctx->mask;

  for (int z = t0[0]; z < t1[0]; z++)
    for (int y = t0[1]; y < t1[1]; y++)
      for (int x = t0[2]; x < t1[2]; x++)
        {
          gsize v = ((gsize) z * ny + (gsize) y) * nx + (gsize) x;
          const float *val = im->data + v * nc;
          const float fz = (float) z, fy = (float) y, fx = (float) x;
          float best_d = INFINITY;
          gint32 best_k = -1;

          if (mask != NULL && !mask[v])
            {
              job->nearest[v] = -1;
              continue;
            }
          for (int j = 0; j < n_cand; j++)
            {
              const Candidate *p = &cand[j];
              float s, d;

              /* Ordered by bound: nothing further can be closer. A bound
               * equal to best_d could still tie and win on a lower index. */
              if (p->bound > best_d)
                break;
              if (z < p->lo[0] || z >= p->hi[0] || y < p->lo[1] || y >= p->hi[1] || x < p->lo[2]
                  || x >= p->hi[2])
                continue;
              s = sv_arith_spatial (p->cz, p->cy, p->cx, fz, fy, fx, sz, sy, sx, sw);
              /* d = fl(s + colour) >= s, so s > best_d cannot win. */
              if (s > best_d)
                continue;
              if (ignore_colour)
                d = s;
              else
                {
                  float colour = 0.0f;
                  for (guint c = 0; c < nc; c++)
                    colour += sv_arith_colour_term (val[c], ratio, p->colour[c]);
                  d = sv_arith_distance (s, colour, slic_zero, p->mdc);
                }
              if (sv_arith_better (d, p->k, best_d, best_k))
                {
                  best_d = d;
                  best_k = p->k;
                }
            }
          job->nearest[v] = best_k;
        }
}

static void
assign_worker (gpointer data, int thread)
{
  AssignJob *job = data;
  const SvPrepared *im = job->ctx->image;
  const int dims[3] = { (int) im->nz, (int) im->ny, (int) im->nx };
  Candidate *cand = job->scratch[thread];

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
      n = gather_candidates (job, t0, t1, cand);
      switch (job->clusters->nc)
        {
        case 1:
          assign_tile (job, t0, t1, cand, n, 1);
          break;
        case 3:
          assign_tile (job, t0, t1, cand, n, 3);
          break;
        default:
          assign_tile (job, t0, t1, cand, n, job->clusters->nc);
          break;
        }
    }
}

void
sv_slic_assign (const SvSlicContext *ctx, const SvClusters *clusters, gint32 *nearest)
{
  const SvPrepared *im = ctx->image;
  const int dims[3] = { (int) im->nz, (int) im->ny, (int) im->nx };
  const gsize nf = 3 + clusters->nc;
  AssignJob job = { 0 };
  gsize n_cells = 1;
  int n_threads;
  g_autofree guint *cell_of_k = NULL;

  job.ctx = ctx;
  job.clusters = clusters;
  job.nearest = nearest;

  /* Windows of the live clusters, and bins of their centres in cells of one
   * window step, so a tile finds its clusters without scanning all K. */
  job.window = g_new (int, 6 * MAX (clusters->k, 1));
  cell_of_k = g_new (guint, MAX (clusters->k, 1));
  for (int a = 0; a < 3; a++)
    {
      job.ncell[a] = (dims[a] + ctx->window_step[a] - 1) / ctx->window_step[a];
      n_cells *= (gsize) job.ncell[a];
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
      cell_of_k[k] = (guint) (((gsize) cell_of (c[0], ctx->window_step[0], job.ncell[0])
                                   * job.ncell[1]
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
        job.cell_items[fill[cell_of_k[k]]++] = (guint) k;
  }

  job.tile[0] = MIN (TILE_Z, dims[0]);
  job.tile[1] = dims[0] == 1 ? MIN (2 * TILE_Y, dims[1]) : MIN (TILE_Y, dims[1]);
  job.tile[2] = dims[0] == 1 ? MIN (2 * TILE_X, dims[2]) : MIN (TILE_X, dims[2]);
  for (int a = 0; a < 3; a++)
    job.ntile[a] = (dims[a] + job.tile[a] - 1) / job.tile[a];
  job.n_tiles = job.ntile[0] * job.ntile[1] * job.ntile[2];

  n_threads = MIN (sv__resolve_threads (ctx->n_threads), MAX (job.n_tiles, 1));
  job.scratch = g_new (Candidate *, n_threads);
  for (int t = 0; t < n_threads; t++)
    job.scratch[t] = g_new (Candidate, MAX (clusters->k, 1));

  run_parallel (n_threads, assign_worker, &job);

  for (int t = 0; t < n_threads; t++)
    g_free (job.scratch[t]);
  g_free (job.scratch);
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
  gint64 **sums;   /* per thread: K × (4 + nc): count, z, y, x, colour… */
  float **maxima;  /* per thread: K SLIC-zero maxima */
} UpdateJob;

/* A thread's share of the nz·ny rows of the volume. */
static void
row_range (const SvPrepared *im, int n_threads, int thread, gsize *r0, gsize *r1)
{
  guint64 rows = (guint64) im->nz * im->ny;
  *r0 = (gsize) (rows * thread / n_threads);
  *r1 = (gsize) (rows * (thread + 1) / n_threads);
}

static void
sum_worker (gpointer data, int thread)
{
  UpdateJob *job = data;
  const SvSlicContext *ctx = job->ctx;
  const SvPrepared *im = ctx->image;
  const guint nc = im->nc, ns = 4 + nc;
  const int shift = ctx->colour_shift;
  const float ratio = ctx->ratio;
  gint64 *sums = job->sums[thread];
  gsize r0, r1;

  memset (sums, 0, job->clusters->k * ns * sizeof (gint64));
  row_range (im, job->n_threads, thread, &r0, &r1);
  for (gsize r = r0; r < r1; r++)
      {
        const gint64 z = (gint64) (r / im->ny), y = (gint64) (r % im->ny);
        gsize v = r * im->nx;
        for (guint x = 0; x < im->nx; x++, v++)
          {
            gint32 k = job->nearest[v];
            gint64 *s;
            if (k < 0)
              continue;
            s = sums + (gsize) k * ns;
            s[0]++;
            s[1] += z;
            s[2] += y;
            s[3] += x;
            for (guint c = 0; c < nc; c++)
              s[4 + c] += sv_arith_colour_fixed (im->data[v * nc + c] * ratio, shift);
          }
      }
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
                                        cl->centres[(gsize) k * nf + 3 + c]);
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
  int n_threads = (int) MIN ((guint64) sv__resolve_threads (ctx->n_threads),
                             MAX ((guint64) im->nz * im->ny, 1));

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
 * with the smallest spatial term (ties to the lowest index). */
static void
fill_unassigned (const SvSlicContext *ctx, const SvClusters *cl, gint32 *nearest)
{
  const SvPrepared *im = ctx->image;
  const gsize nf = 3 + cl->nc;
  gsize v = 0;

  for (guint z = 0; z < im->nz; z++)
    for (guint y = 0; y < im->ny; y++)
      for (guint x = 0; x < im->nx; x++, v++)
        {
          float best_d = INFINITY;
          gint32 best_k = -1;

          if (nearest[v] >= 0 || (ctx->mask != NULL && !ctx->mask[v]))
            continue;
          for (gsize k = 0; k < cl->k; k++)
            {
              const float *c = cl->centres + k * nf;
              float s;
              if (!cl->alive[k])
                continue;
              s = sv_arith_spatial (c[0], c[1], c[2], (float) z, (float) y, (float) x,
                                    ctx->spacing[0], ctx->spacing[1], ctx->spacing[2],
                                    ctx->spatial_weight);
              if (sv_arith_better (s, (gint64) k, best_d, best_k))
                {
                  best_d = s;
                  best_k = (gint32) k;
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
  const gsize n_voxels = (gsize) image->nz * image->ny * image->nx;
  SvSeeds seeds = { 0 };
  SvClusters clusters = { 0 };
  SvSlicContext ctx;
  g_autofree gint32 *nearest = NULL;
  guint n_passes = mask != NULL ? 2 : 1;
  guint n_total, done = 0;
  gint64 t_start, t_connect;
  gboolean ok = FALSE;

  g_return_val_if_fail (image != NULL && params != NULL && labels != NULL, FALSE);

  if (params->compactness <= 0.0 || params->max_num_iter < 0
      || (params->start_label != 0 && params->start_label != 1))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "invalid SLIC parameters (compactness %g, max_num_iter %d, start_label %d)",
                   params->compactness, params->max_num_iter, params->start_label);
      return FALSE;
    }

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

  n_total = n_passes * (guint) params->max_num_iter;
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
    fill_unassigned (&ctx, &clusters, nearest);

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
              gint64 k = (gint64) labels[v] - params->start_label;
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
      timings->seconds_iterate = (double) (t_connect - t_start) / G_USEC_PER_SEC;
      timings->seconds_connect = (double) (t_end - t_connect) / G_USEC_PER_SEC;
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

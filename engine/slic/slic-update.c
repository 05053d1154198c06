/* Supervox engine: the SLIC update step on the CPU: per-thread integer
 * sums of each cluster's voxels (so the centres do not depend on the thread
 * count), the new centres, and the SLIC-zero colour maxima. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-slic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "supervox/sv-slic-arith.h"

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

/* A thread's share of the rows of the context's slab. */
static void
row_range (const SvSlicContext *ctx, int n_threads, int thread, gsize *r0, gsize *r1)
{
  const guint64 first = (guint64)ctx->z_begin * ctx->image->ny;
  const guint64 rows = (guint64)(ctx->z_end - ctx->z_begin) * ctx->image->ny;
  *r0 = (gsize)(first + rows * thread / n_threads);
  *r1 = (gsize)(first + rows * (thread + 1) / n_threads);
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
  row_range (ctx, job->n_threads, thread, &r0, &r1);
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
  row_range (job->ctx, job->n_threads, thread, &r0, &r1);
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

/* Threads for the slab's rows. */
static int
update_threads (const SvSlicContext *ctx)
{
  guint64 rows = (guint64)(ctx->z_end - ctx->z_begin) * ctx->image->ny;
  return (int)MIN ((guint64)sv__resolve_threads (ctx->n_threads), MAX (rows, 1));
}

void
sv__slic_sums_add (const SvSlicContext *ctx, const gint32 *nearest, const SvClusters *clusters,
                   gint64 *sums)
{
  const gsize ns = 4 + ctx->image->nc;
  UpdateJob job = { 0 };
  int n_threads = update_threads (ctx);

  job.ctx = ctx;
  job.clusters = clusters;
  job.nearest = nearest;
  job.n_threads = n_threads;
  job.sums = g_new (gint64 *, n_threads);
  for (int t = 0; t < n_threads; t++)
    job.sums[t] = g_new (gint64, MAX (clusters->k, 1) * ns);
  sv__run_parallel (n_threads, sum_worker, &job);

  /* Integer sums: the order of the additions does not matter. */
  for (int t = 0; t < n_threads; t++)
    {
      for (gsize i = 0; i < clusters->k * ns; i++)
        sums[i] += job.sums[t][i];
      g_free (job.sums[t]);
    }
  g_free (job.sums);
}

typedef struct
{
  const SvSlicContext *ctx;
  const gint64 *sums;
  SvClusters *clusters;
  int n_threads;
  gsize k0, k1; /* the clusters to update */
} CentresJob;

/* Each cluster's centre depends on its own sums only: threads take runs of
 * clusters (millions of them in a streamed run, every pass). */
static void
centres_worker (gpointer data, int thread)
{
  const CentresJob *job = data;
  const SvSlicContext *ctx = job->ctx;
  SvClusters *clusters = job->clusters;
  const guint nc = clusters->nc, ns = 4 + nc;
  const gsize nf = 3 + nc;
  const gsize n = job->k1 - job->k0;
  const gsize share = (n + (gsize)job->n_threads - 1) / (gsize)job->n_threads;
  const gsize end = job->k0 + MIN ((gsize)(thread + 1) * share, n);

  for (gsize k = job->k0 + (gsize)thread * share; k < end; k++)
    {
      const gint64 *s = job->sums + k * ns;
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
}

void
sv__slic_centres_from_sums_range (const SvSlicContext *ctx, const gint64 *sums,
                                  SvClusters *clusters, gsize k0, gsize k1)
{
  /* A thread for every 64 Ki clusters at most: below that one is quicker
   * than starting threads. */
  CentresJob job = { ctx, sums, clusters, 1, MIN (k0, k1), k1 };

  job.n_threads = (int)MIN ((gsize)sv__resolve_threads (ctx->n_threads),
                            (job.k1 - job.k0) / 65536 + 1);
  sv__run_parallel (job.n_threads, centres_worker, &job);
}

void
sv__slic_centres_from_sums (const SvSlicContext *ctx, const gint64 *sums, SvClusters *clusters)
{
  sv__slic_centres_from_sums_range (ctx, sums, clusters, 0, clusters->k);
}

void
sv__slic_raise_colour_maxima (const SvSlicContext *ctx, const gint32 *nearest, SvClusters *clusters)
{
  UpdateJob job = { 0 };
  int n_threads = update_threads (ctx);

  job.ctx = ctx;
  job.clusters = clusters;
  job.nearest = nearest;
  job.n_threads = n_threads;
  job.maxima = g_new (float *, n_threads);
  for (int t = 0; t < n_threads; t++)
    job.maxima[t] = g_new (float, MAX (clusters->k, 1));
  sv__run_parallel (n_threads, max_worker, &job);
  for (int t = 0; t < n_threads; t++)
    {
      for (gsize k = 0; k < clusters->k; k++)
        if (job.maxima[t][k] > clusters->max_dist_colour[k])
          clusters->max_dist_colour[k] = job.maxima[t][k];
      g_free (job.maxima[t]);
    }
  g_free (job.maxima);
}

void
sv_slic_update (const SvSlicContext *ctx, const gint32 *nearest, SvClusters *clusters)
{
  const gsize ns = 4 + ctx->image->nc;
  g_autofree gint64 *sums = NULL;

  g_return_if_fail (clusters->nc == ctx->image->nc);

  sums = g_new0 (gint64, MAX (clusters->k, 1) * ns);
  sv__slic_sums_add (ctx, nearest, clusters, sums);
  sv__slic_centres_from_sums (ctx, sums, clusters);
  if (ctx->slic_zero)
    sv__slic_raise_colour_maxima (ctx, nearest, clusters);
}

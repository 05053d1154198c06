/* Supervox engine: the compute floor of the assignment, for benchmarks.
 *
 * A cluster whose window holds a voxel must be evaluated there unless its
 * spatial term alone already loses to the voxel's best distance:
 * sv_slic_assign_floor counts, per voxel, the clusters with spatial term
 * below the best distance, or equal to it with a lower index, and the
 * winner itself, by a brute-force pass over every window. With
 * SV_CPU_ASSIGN_COUNT set in the environment, every sv_slic_assign prints
 * one line: the distances its tile search computed (vector lanes, idle
 * lanes included) and that floor, counted after the assignment. */
#define G_LOG_DOMAIN "sv-engine"

#include "slic-assign-count.h"

#include <sys/resource.h>

#include "internal.h"
#include "supervox/sv-slic-arith.h"

typedef struct
{
  const SvSlicContext *ctx;
  const SvClusters *clusters;
  const gint32 *nearest;
  float *best;        /* per voxel of the slab: its winner's distance */
  gint next;          /* atomic: the next cluster */
  gint64 needed[256]; /* per thread */
} FloorJob;

/* The distance of voxel (z, y, x) to cluster k, in the shared float32 order. */
static float
voxel_distance (const SvSlicContext *ctx, const SvClusters *cl, gsize k, int z, int y, int x)
{
  const SvPrepared *im = ctx->image;
  const float *c = cl->centres + k * (3 + cl->nc);
  const gsize v = ((gsize)z * im->ny + (gsize)y) * im->nx + (gsize)x;
  float s = sv_arith_spatial (c[0], c[1], c[2], (float)z, (float)y, (float)x, ctx->spacing[0],
                              ctx->spacing[1], ctx->spacing[2], ctx->spatial_weight);
  float colour = 0.0f;

  if (ctx->ignore_colour)
    return s;
  for (guint ch = 0; ch < cl->nc; ch++)
    colour = colour + sv_arith_colour_term (im->data[v * cl->nc + ch], ctx->ratio, c[3 + ch]);
  return sv_arith_distance (s, colour, ctx->slic_zero, cl->max_dist_colour[k]);
}

static void
best_worker (gpointer data, int thread)
{
  FloorJob *job = data;
  const SvSlicContext *ctx = job->ctx;
  const SvPrepared *im = ctx->image;
  const gsize plane = im->ny * im->nx, base = (gsize)ctx->z_begin * plane;
  const int n_threads = MIN (sv__resolve_threads (ctx->n_threads), 256);

  for (guint z = ctx->z_begin + thread; z < ctx->z_end; z += n_threads)
    for (gsize y = 0; y < im->ny; y++)
      for (gsize x = 0; x < im->nx; x++)
        {
          const gsize v = (gsize)z * plane + y * im->nx + x;
          const gint32 k = job->nearest[v];
          job->best[v - base]
              = k < 0 ? -INFINITY
                      : voxel_distance (ctx, job->clusters, (gsize)k, (int)z, (int)y, (int)x);
        }
}

static void
floor_worker (gpointer data, int thread)
{
  FloorJob *job = data;
  const SvSlicContext *ctx = job->ctx;
  const SvClusters *cl = job->clusters;
  const SvPrepared *im = ctx->image;
  const int dims[3] = { (int)im->nz, (int)im->ny, (int)im->nx };
  const gsize plane = im->ny * im->nx, base = (gsize)ctx->z_begin * plane;
  gint64 needed = 0;

  for (;;)
    {
      const gint k = g_atomic_int_add (&job->next, 1);
      const float *c;
      int lo[3], hi[3];

      if ((gsize)k >= cl->k)
        break;
      if (!cl->alive[k])
        continue;
      c = cl->centres + (gsize)k * (3 + cl->nc);
      for (int a = 0; a < 3; a++)
        sv_arith_window (c[a], ctx->window_step[a], dims[a], &lo[a], &hi[a]);
      lo[0] = MAX (lo[0], (int)ctx->z_begin);
      hi[0] = MIN (hi[0], (int)ctx->z_end);
      for (int z = lo[0]; z < hi[0]; z++)
        for (int y = lo[1]; y < hi[1]; y++)
          for (int x = lo[2]; x < hi[2]; x++)
            {
              const gsize v = (gsize)z * plane + (gsize)y * im->nx + (gsize)x;
              const gint32 w = job->nearest[v];
              const float best = job->best[v - base];
              float s;

              if (w < 0)
                continue;
              s = sv_arith_spatial (c[0], c[1], c[2], (float)z, (float)y, (float)x, ctx->spacing[0],
                                    ctx->spacing[1], ctx->spacing[2], ctx->spatial_weight);
              needed += s < best || (s == best && k <= w) || k == w;
            }
    }
  job->needed[thread] = needed;
}

gboolean
sv__slic_assign_counting (void)
{
  static gint counting = -1; /* -1 until known */
  gint c = g_atomic_int_get (&counting);

  if (c < 0)
    {
      c = g_getenv ("SV_CPU_ASSIGN_COUNT") != NULL;
      g_atomic_int_set (&counting, c);
    }
  return c;
}

double
sv__process_cpu_seconds (void)
{
  struct rusage u;

  if (getrusage (RUSAGE_SELF, &u) != 0)
    return 0.0;
  return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec
         + u.ru_stime.tv_usec * 1e-6;
}

gint64
sv_slic_assign_floor (const SvSlicContext *ctx, const SvClusters *clusters, const gint32 *nearest)
{
  const SvPrepared *im = ctx->image;
  const gsize n = (gsize)(ctx->z_end - ctx->z_begin) * im->ny * im->nx;
  FloorJob job = { ctx, clusters, nearest, NULL, 0, { 0 } };
  const int n_threads = MIN (sv__resolve_threads (ctx->n_threads), 256);
  gint64 needed = 0;

  job.best = g_new (float, MAX (n, 1));
  sv__run_parallel (n_threads, best_worker, &job);
  sv__run_parallel (n_threads, floor_worker, &job);
  g_free (job.best);
  for (int t = 0; t < n_threads; t++)
    needed += job.needed[t];
  return needed;
}

void
sv__slic_assign_report (const SvSlicContext *ctx, const SvClusters *clusters, const gint32 *nearest,
                        gint64 evaluated, double seconds, double cpu_seconds)
{
  const SvPrepared *im = ctx->image;
  const gsize n = (gsize)(ctx->z_end - ctx->z_begin) * im->ny * im->nx;
  const gint64 needed = sv_slic_assign_floor (ctx, clusters, nearest);

  g_message ("assign counts: voxels %" G_GSIZE_FORMAT " evaluated %" G_GINT64_FORMAT
             " needed %" G_GINT64_FORMAT " ratio %.3f seconds %.6f cpu %.6f",
             n, evaluated, needed, needed > 0 ? (double)evaluated / needed : 0.0, seconds,
             cpu_seconds);
}

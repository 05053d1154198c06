/* Supervox engine: the pieces of a SLIC run on the CPU, the reference
 * backend: the context and clusters, the fill of voxels no window reached,
 * and sv_slic_run_cpu over an image prepared already. The iterations are
 * sv_slic_assign (slic-assign.c) and sv_slic_update (slic-update.c); the
 * run itself is slic-pipeline.c's. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-memory.h"
#include "supervox/sv-slic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend-private.h"
#include "supervox/sv-error.h"
#include "internal.h"
#include "supervox/sv-slic-arith.h"

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
  ctx->z_begin = 0;
  ctx->z_end = image->nz;
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
      sv_set_no_memory (error, "%" G_GSIZE_FORMAT " clusters", seeds->n);
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

/* ---- the run ---------------------------------------------------------- */

typedef struct
{
  SvIterationFunc func;
  gpointer user_data;
} ProgressAdapter;

static void
progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  ProgressAdapter *adapter = user_data;

  if (stage == SV_STAGE_ITERATE)
    adapter->func (iteration, n_iterations, adapter->user_data);
}

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
  const gsize plane = (gsize)dims[1] * dims[2];
  gsize n_cells = 1, v = (gsize)ctx->z_begin * plane, n_missing = 0, n_live = 0;
  g_autofree guint *start = NULL;
  g_autofree guint *items = NULL;
  g_autofree guint *fill = NULL;
  g_autofree gsize *cell_of_k = NULL;

  for (gsize i = (gsize)ctx->z_begin * plane; i < (gsize)ctx->z_end * plane; i++)
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
      cell_of_k[k]
          = ((gsize)sv_arith_cell_of (c[0], cs, ncell[0]) * ncell[1] + sv_arith_cell_of (c[1], cs, ncell[1]))
                * ncell[2]
            + sv_arith_cell_of (c[2], cs, ncell[2]);
      start[cell_of_k[k] + 1]++;
    }
  for (gsize c = 0; c < n_cells; c++)
    start[c + 1] += start[c];
  items = g_new (guint, MAX (n_live, 1));
  fill = g_memdup2 (start, n_cells * sizeof (guint));
  for (gsize k = 0; k < cl->k; k++)
    if (cl->alive[k])
      items[fill[cell_of_k[k]]++] = (guint)k;

  for (int z = (int)ctx->z_begin; z < (int)ctx->z_end; z++)
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
sv_slic_run_cpu (const SvPrepared *image, const guint8 *mask, const SvSlicParams *params,
                 int n_threads, SvIterationFunc progress, gpointer user_data,
                 GCancellable *cancellable, gint32 *labels, gsize *n_clusters_out, GError **error)
{
  g_autoptr (SvBackend) backend = NULL;
  ProgressAdapter adapter = { progress, user_data };
  SvRunControl control = {
    .n_threads = n_threads,
    .stop_after_iteration = -1,
    .progress = progress != NULL ? progress_cb : NULL,
    .user_data = &adapter,
    .cancellable = cancellable,
  };
  SvRunStats stats;

  g_return_val_if_fail (image != NULL && params != NULL && labels != NULL, FALSE);
  backend = sv__backend_cpu_new_prepared (image, mask);
  if (!sv_backend_run (backend, params, &control, &stats, error)
      || !sv_backend_get_labels (backend, labels, error))
    return FALSE;
  if (n_clusters_out != NULL)
    *n_clusters_out = stats.n_clusters;
  return TRUE;
}

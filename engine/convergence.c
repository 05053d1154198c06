/* Supervox engine: per-iteration convergence of SLIC, for teaching. */
#define G_LOG_DOMAIN "sv-engine"

#include "convergence.h"

#include <math.h>

#include "backend.h"

static void
convergence_clear (gpointer data)
{
  SvConvergence *c = data;

  g_free (c->changed);
  g_free (c->moved);
}

SvConvergence *
sv_convergence_ref (SvConvergence *c)
{
  return g_atomic_rc_box_acquire (c);
}

void
sv_convergence_unref (SvConvergence *c)
{
  g_atomic_rc_box_release_full (c, convergence_clear);
}

SvConvergence *
sv_convergence_compute (const SvVolume *volume, const guint8 *mask, const SvSlicParams *params,
                        GCancellable *cancellable, GError **error)
{
  g_autoptr (SvConvergence) c = g_atomic_rc_box_new0 (SvConvergence);
  g_autoptr (SvBackend) backend = NULL;
  gsize n = sv_volume_n_voxels (volume), k_before = 0;
  g_autofree gint32 *before = NULL, *after = NULL;
  g_autofree float *centres_before = NULL, *centres_after = NULL;
  guint n_iter = (guint)MAX (params->max_num_iter, 0);

  c->params = *params;
  c->n_iterations = n_iter;
  c->changed = g_new0 (guint64, MAX (n_iter, 1));
  c->moved = g_new0 (double, MAX (n_iter, 1));
  backend = sv_backend_new ("cpu", error);
  if (!backend || !sv_backend_set_volume (backend, volume, mask, error))
    return NULL;
  before = g_try_new (gint32, n);
  after = g_try_new (gint32, n);
  if (!before || !after)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "not enough memory to follow %" G_GSIZE_FORMAT " voxels through the iterations",
                   n);
      return NULL;
    }

  /* Run i stops after i iterations; run 0 gives the seeds. */
  for (guint i = 0; i <= n_iter; i++)
    {
      SvRunControl control = { 0 };
      SvRunStats stats;
      gsize k = 0;

      control.stop_after_iteration = (int)i;
      control.cancellable = cancellable;
      if (!sv_backend_run (backend, params, &control, &stats, error)
          || !sv_backend_get_labels (backend, after, error))
        return NULL;
      centres_after = g_renew (float, centres_after, MAX (stats.n_clusters, 1) * 3);
      if (!sv_backend_get_centres (backend, centres_after, &k, error))
        return NULL;
      if (i > 0)
        {
          guint64 changed = 0;
          double moved = 0.0;

          for (gsize v = 0; v < n; v++)
            changed += after[v] != before[v];
          for (gsize j = 0; j < MIN (k, k_before); j++)
            {
              const float *a = centres_before + j * 3, *b = centres_after + j * 3;
              if (isnan (a[0]) || isnan (b[0]))
                continue;
              moved += sqrt ((double)(a[0] - b[0]) * (a[0] - b[0])
                             + (double)(a[1] - b[1]) * (a[1] - b[1])
                             + (double)(a[2] - b[2]) * (a[2] - b[2]));
            }
          c->changed[i - 1] = changed;
          c->moved[i - 1] = moved;
        }
      {
        gint32 *t = before;
        float *tc = centres_before;
        before = after;
        after = t;
        centres_before = centres_after;
        centres_after = tc;
        k_before = k;
      }
    }
  return g_steal_pointer (&c);
}

/* Supervox engine: the one pass and iteration loop of a SLIC run, in
 * memory and streamed (run-iterations.h), and the view its hook reads. */
#define G_LOG_DOMAIN "sv-engine"

#include "run-iterations.h"

#include <math.h>
#include <string.h>

#include "backend-private.h"
#include "internal.h"
#include "supervox/sv-error.h"

float *
sv__clusters_centres_zyx (const SvClusters *clusters)
{
  float *zyx = g_new (float, MAX (clusters->k, 1) * 3);
  const gsize nf = 3 + clusters->nc;

  for (gsize k = 0; k < clusters->k; k++)
    for (int a = 0; a < 3; a++)
      zyx[3 * k + a] = clusters->alive[k] ? clusters->centres[k * nf + a] : NAN;
  return zyx;
}

gboolean
sv_iteration_view_get_labels (const SvIterationView *view, gint32 *labels, GError **error)
{
  g_return_val_if_fail (view != NULL && labels != NULL, FALSE);
  if (view->run == NULL)
    {
      /* Reading them back would mean a pass over the whole label volume. */
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "a streamed run's labels are on disk until the run ends");
      return FALSE;
    }
  return view->backend->klass->snapshot_labels (view->backend, view->run, labels, error);
}

const char *
sv_iteration_view_get_backend_name (const SvIterationView *view)
{
  g_return_val_if_fail (view != NULL, NULL);
  return sv_backend_get_name (view->backend);
}

gboolean
sv_iteration_view_get_centres (const SvIterationView *view, float *zyx, gsize *k, GError **error)
{
  g_autofree float *all = NULL;

  g_return_val_if_fail (view != NULL && k != NULL, FALSE);
  /* A device backend keeps the run's clusters in its own memory. */
  if (view->run != NULL && view->backend->klass->read_clusters != NULL
      && !view->backend->klass->read_clusters (view->backend, view->run, error))
    return FALSE;
  *k = view->clusters->k;
  if (zyx != NULL)
    {
      all = sv__clusters_centres_zyx (view->clusters);
      memcpy (zyx, all, *k * 3 * sizeof (float));
    }
  return TRUE;
}

gboolean
sv__run_iterations (const SvIterationSchedule *schedule, const SvRunControl *control,
                    GError **error)
{
  const SvIterationSchedule *s = schedule;
  const guint n_total = s->n_passes * s->n_iterations;
  /* A device backend queues work; waiting for each iteration is only
   * needed when someone looks between them. */
  const gboolean watch
      = control->progress != NULL || control->cancellable != NULL || control->iteration != NULL;
  guint done = 0;

  for (guint pass = 0; pass < s->n_passes; pass++)
    {
      sv__slic_pass_start (s->ctx, s->clusters, pass, s->n_passes);
      if (s->begin_pass != NULL && !s->begin_pass (s->self, pass, error))
        return FALSE;
      for (guint i = 0; i < s->n_iterations; i++)
        {
          if (g_cancellable_set_error_if_cancelled (control->cancellable, error))
            return FALSE;
          if (!s->iterate (s->self, done, n_total, error))
            return FALSE;
          done++;
          if (watch && s->sync != NULL && !s->sync (s->self, error))
            return FALSE;
          if (control->progress != NULL)
            control->progress (SV_STAGE_ITERATE, done, n_total, control->user_data);
          if (control->iteration != NULL)
            control->iteration (s->view, done, n_total, control->user_data);
        }
    }
  return TRUE;
}

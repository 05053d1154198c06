/* Supervox engine: per-iteration convergence of SLIC, for teaching. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-memory.h"
#include "supervox/sv-convergence.h"

#include <math.h>

#include "supervox/sv-backend.h"

static void
convergence_clear (gpointer data)
{
  SvConvergence *c = data;

  g_free (c->changed);
  g_free (c->moved);
  g_free (c->mean_moved);
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

/* The labels and centres after the last step, and those after this one. */
typedef struct
{
  SvConvergence *c;
  gsize n;
  gint32 *before, *after;
  float *centres_before, *centres_after;
  gsize k_before;
  GError *error; /* from the iteration hook, which cannot stop the run */
} Follow;

/* Compares the state after iteration i (in after/centres_after, k
 * centres) with the one before it, then keeps it as the next "before". */
static void
compare_step (Follow *f, guint i, gsize k)
{
  if (i > 0)
    {
      guint64 changed = 0;
      gsize n_live = 0;
      double moved = 0.0;

      for (gsize v = 0; v < f->n; v++)
        changed += f->after[v] != f->before[v];
      for (gsize j = 0; j < MIN (k, f->k_before); j++)
        {
          const float *a = f->centres_before + j * 3, *b = f->centres_after + j * 3;
          if (isnan (a[0]) || isnan (b[0]))
            continue;
          n_live++;
          moved
              += sqrt ((double)(a[0] - b[0]) * (a[0] - b[0]) + (double)(a[1] - b[1]) * (a[1] - b[1])
                       + (double)(a[2] - b[2]) * (a[2] - b[2]));
        }
      f->c->changed[i - 1] = changed;
      f->c->moved[i - 1] = moved;
      f->c->mean_moved[i - 1] = n_live ? moved / (double)n_live : 0.0;
    }
  {
    gint32 *t = f->before;
    float *tc = f->centres_before;
    f->before = f->after;
    f->after = t;
    f->centres_before = f->centres_after;
    f->centres_after = tc;
    f->k_before = k;
  }
}

/* The state after a run of i iterations (teaching mode: no connectivity). */
static gboolean
run_step (SvBackend *backend, const SvSlicParams *params, guint i, GCancellable *cancellable,
          Follow *f, GError **error)
{
  SvRunControl control = { 0 };
  SvRunStats stats;
  gsize k = 0;

  control.stop_after_iteration = (int)i;
  control.cancellable = cancellable;
  if (!sv_backend_run (backend, params, &control, &stats, error)
      || !sv_backend_get_labels (backend, f->after, error))
    return FALSE;
  f->centres_after = g_renew (float, f->centres_after, MAX (stats.n_clusters, 1) * 3);
  if (!sv_backend_get_centres (backend, f->centres_after, &k, error))
    return FALSE;
  compare_step (f, i, k);
  return TRUE;
}

/* After each iteration of one run: the labels a run stopped there gives. */
static void
follow_cb (const SvIterationView *view, guint iteration, guint n_iterations, gpointer user_data)
{
  Follow *f = user_data;
  gsize k = 0;

  if (f->error != NULL || !sv_iteration_view_get_labels (view, f->after, &f->error)
      || !sv_iteration_view_get_centres (view, NULL, &k, &f->error))
    return;
  f->centres_after = g_renew (float, f->centres_after, MAX (k, 1) * 3);
  if (sv_iteration_view_get_centres (view, f->centres_after, &k, &f->error))
    compare_step (f, iteration, k);
}

SvConvergence *
sv_convergence_compute (const SvVolume *volume, const guint8 *mask, const SvSlicParams *params,
                        GCancellable *cancellable, GError **error)
{
  g_autoptr (SvConvergence) c = g_atomic_rc_box_new0 (SvConvergence);
  g_autoptr (SvBackend) backend = NULL;
  guint n_iter = (guint)MAX (params->max_num_iter, 0);
  Follow f = { 0 };
  gboolean ok = FALSE;

  c->params = *params;
  c->n_iterations = n_iter;
  c->changed = g_new0 (guint64, MAX (n_iter, 1));
  c->moved = g_new0 (double, MAX (n_iter, 1));
  c->mean_moved = g_new0 (double, MAX (n_iter, 1));
  backend = sv_backend_new ("cpu", error);
  if (!backend || !sv_backend_set_volume (backend, volume, mask, error))
    return NULL;
  f.c = c;
  f.n = sv_volume_n_voxels (volume);
  f.before = g_try_new (gint32, f.n);
  f.after = g_try_new (gint32, f.n);
  if (!f.before || !f.after)
    {
      sv_set_no_memory (error, "following %" G_GSIZE_FORMAT " voxels through the iterations",
                        f.n);
      goto out;
    }

  /* A run of 0 iterations gives the seeds. */
  if (!run_step (backend, params, 0, cancellable, &f, error))
    goto out;
  if (mask == NULL)
    {
      /* One run, watched after each iteration. */
      SvRunControl control = { 0 };

      control.stop_after_iteration = (int)n_iter;
      control.cancellable = cancellable;
      control.iteration = follow_cb;
      control.user_data = &f;
      if (!sv_backend_run (backend, params, &control, NULL, error))
        goto out;
      if (f.error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&f.error));
          goto out;
        }
    }
  else
    {
      /* maskSLIC's first pass is as long as the run: a run of i iterations
       * does not pass through the state of a shorter one, so each step is
       * its own run. */
      for (guint i = 1; i <= n_iter; i++)
        if (!run_step (backend, params, i, cancellable, &f, error))
          goto out;
    }
  ok = TRUE;

out:
  g_clear_error (&f.error);
  g_free (f.before);
  g_free (f.after);
  g_free (f.centres_before);
  g_free (f.centres_after);
  return ok ? g_steal_pointer (&c) : NULL;
}

/* Supervox engine: a copy of the clusters an iteration starts from, and
 * whether the iteration gave them back bit for bit (a pass at a fixed
 * point: the CPU backend and the streamed slab schedule skip the rest of
 * it). */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "internal.h"

/* The clusters' arrays as bytes, for copying and comparing them on
 * several threads: with millions of clusters they are hundreds of MiB,
 * once an iteration. */
typedef struct
{
  SvClusters *seen;
  const SvClusters *now;
  gboolean copy; /* copy now into seen, else compare */
  int n_threads;
  gint differ;
} ClusterBytes;

static void
cluster_bytes_worker (gpointer data, int thread)
{
  ClusterBytes *job = data;
  const gsize k = job->now->k, nf = 3 + job->now->nc;
  const gsize a = k * (gsize)thread / (gsize)job->n_threads;
  const gsize b = k * (gsize)(thread + 1) / (gsize)job->n_threads;
  struct
  {
    void *seen;
    const void *now;
    gsize size;
  } arrays[3] = {
    { job->seen->centres + a * nf, job->now->centres + a * nf, (b - a) * nf * sizeof (float) },
    { job->seen->max_dist_colour + a, job->now->max_dist_colour + a, (b - a) * sizeof (float) },
    { job->seen->alive + a, job->now->alive + a, b - a },
  };

  for (int i = 0; i < 3; i++)
    if (job->copy)
      memcpy (arrays[i].seen, arrays[i].now, arrays[i].size);
    else if (memcmp (arrays[i].seen, arrays[i].now, arrays[i].size) != 0)
      g_atomic_int_set (&job->differ, 1);
}

static gboolean
cluster_bytes (SvClusters *seen, const SvClusters *now, gboolean copy, int n_threads)
{
  ClusterBytes job = { seen, now, copy, 1, 0 };

  /* A thread for every 256 Ki clusters at most. */
  job.n_threads = (int)MIN ((gsize)sv__resolve_threads (n_threads), now->k / 262144 + 1);
  sv__run_parallel (job.n_threads, cluster_bytes_worker, &job);
  return job.differ == 0;
}

gboolean
sv__clusters_remember (SvClusters *seen, const SvClusters *cl, int n_threads)
{
  if (seen->k != cl->k || seen->centres == NULL)
    {
      sv_clusters_clear (seen);
      seen->centres = g_try_new (float, MAX (cl->k, 1) * (3 + cl->nc));
      seen->max_dist_colour = g_try_new (float, MAX (cl->k, 1));
      seen->alive = g_try_new (guint8, MAX (cl->k, 1));
      if (seen->centres == NULL || seen->max_dist_colour == NULL || seen->alive == NULL)
        {
          sv_clusters_clear (seen);
          return FALSE;
        }
      seen->k = cl->k;
      seen->nc = cl->nc;
    }
  cluster_bytes (seen, cl, TRUE, n_threads);
  return TRUE;
}

gboolean
sv__clusters_same (const SvClusters *seen, const SvClusters *cl, int n_threads)
{
  return seen->centres != NULL && seen->k == cl->k
         && cluster_bytes ((SvClusters *)seen, cl, FALSE, n_threads);
}

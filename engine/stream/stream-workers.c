/* Supervox engine: one pass of a streamed iteration over the slabs, shared
 * by the backends that run the slab steps. With one backend the slabs go
 * through it in z order on the caller's thread; with several (one per
 * GPU) each gets a worker thread and a run of neighbouring slabs, and
 * only the band of clusters that can reach them comes back from it after
 * the pass (not the sums of every cluster from every device). Reading the
 * image file (one reader, one cache) and handing a slab to a backend
 * happen under one lock; a device backend copies the slab to its own
 * memory and returns, so the devices compute while the next slab is read.
 * Devices that take the file's samples read their own slabs in the first
 * pass, each with its own reader, all at once. Each worker
 * sums into its own integers; they are added after the pass, so the
 * centres do not depend on which device took which slab. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "backend-private.h"
#include "internal.h"
#include "stream-private.h"
#include "supervox/sv-memory.h"
#include "supervox/sv-error.h"

typedef struct
{
  const SvSlabPlan *plan;
  SvSlabPassKind kind;
  gboolean keep;
  const SvSlicContext *ctx;
  const SvClusters *clusters;
  gint64 *sums;  /* shared, may be NULL */
  float *maxima; /* shared, may be NULL */
  gsize n_sums;
  gsize *band; /* worker w's clusters [band[2w], band[2w + 1]) */
  int n_threads;
  GMutex lock;
  gboolean failed; /* a worker failed: the others stop at their next slab */
  GError *error;   /* the first worker's error */
} Pass;

typedef struct
{
  Pass *pass;
  guint w;
} Worker;

static gboolean
spill_sink (guint z0, guint z1, const gint32 *nearest, gpointer user_data, GError **error)
{
  return sv__spill_write (user_data, z0, z1, nearest, error);
}

/* Hands one slab to the worker's backend; called under the lock. */
static gboolean
feed_slab (Pass *pass, SvBackend *backend, guint z0, guint z1, gint32 *nearest, GError **error)
{
  const SvSlabPlan *plan = pass->plan;
  const SvSlabSteps *steps = backend->klass->slab_steps;
  gboolean held = steps->holds_slab != NULL && steps->holds_slab (backend, z0, z1);
  const guint8 *mask = NULL;
  const float *data = NULL;
  gboolean ok;

  if (g_cancellable_set_error_if_cancelled (plan->cancellable, error))
    return FALSE;
  /* A backend that prepares the file's samples itself gets them as read
   * (a quarter of the bytes of uint8, and no conversion here), when the
   * slab would come from the file anyway: one the host keeps is not read
   * again. */
  if (!held && pass->kind == SV_SLAB_ASSIGN && steps->take_samples != NULL
      && !sv__stream_image_has_slab (plan->image, z0, z1))
    {
      SvSlabSamples how;
      const void *raw;
      int taken;

      if (sv__stream_image_samples_how (plan->image, &how))
        {
          if ((raw = sv__stream_image_samples (plan->image, z0, z1, error)) == NULL
              || (sv__stream_mask_any (plan->mask)
                  && (mask = sv__stream_mask_slab (plan->mask, z0, z1, error)) == NULL))
            return FALSE;
          if ((taken = steps->take_samples (backend, z0, z1, raw, &how, mask, error)) < 0)
            return FALSE;
          if (taken == 1)
            {
              held = TRUE;
              plan->image->n_resident++;
            }
        }
    }
  /* A slab the backend holds from an earlier pass is not prepared again. */
  if (!held && (data = sv__stream_image_slab (plan->image, z0, z1, error)) == NULL)
    return FALSE;
  /* After the image: its halo may have read other slices of the mask. */
  if (sv__stream_mask_any (plan->mask)
      && (mask = sv__stream_mask_slab (plan->mask, z0, z1, error)) == NULL)
    return FALSE;
  /* A backend that keeps the assignment needs no sink and no source. */
  if (pass->kind == SV_SLAB_ASSIGN)
    ok = steps->assign_sum (backend, z0, z1, data, mask,
                            pass->keep && !plan->assignment_kept ? spill_sink : NULL, plan->spill,
                            error);
  else if (plan->assignment_kept)
    ok = steps->raise_maxima (backend, z0, z1, data, mask, NULL, error);
  else
    ok = sv__spill_read (plan->spill, z0, z1, nearest, error)
         && steps->raise_maxima (backend, z0, z1, data, mask, nearest, error);
  /* The image keeps the prepared slab for the next passes unless the
   * backend has (just) taken it into its own memory. */
  if (!ok || held)
    return ok;
  if (steps->holds_slab != NULL && steps->holds_slab (backend, z0, z1))
    {
      plan->image->n_resident++;
      return TRUE;
    }
  return sv__stream_image_keep (plan->image, z0, z1, error);
}

/* Whether a slab can go to the backend without the lock: it holds the
 * slab's values, the mask's reader is not needed, and neither is the
 * spill file's reader. A device backend may wait in such a call for its
 * own earlier slabs; under the lock that wait held up every other device,
 * and the devices took their turns instead of working at once. The last
 * assignment's slices may go to the spill (its writes are safe from every
 * worker at once): under the lock, at 4096³ on four devices, that pass
 * took each device's 64 GiB of labels in turn, four minutes instead of one. */
static gboolean
feeds_alone (const Pass *pass, SvBackend *backend, guint z0, guint z1)
{
  const SvSlabPlan *plan = pass->plan;
  const SvSlabSteps *steps = backend->klass->slab_steps;

  if (steps->holds_slab == NULL || !steps->holds_slab (backend, z0, z1)
      || sv__stream_mask_any (plan->mask))
    return FALSE;
  return pass->kind == SV_SLAB_ASSIGN || plan->assignment_kept;
}

/* The first pass on several workers: slab [z0, z1) read with worker w's
 * own reader outside the lock and handed to its backend as samples, so
 * that the workers read and upload at once. 1: done; 0: not so, and the
 * caller feeds it under the lock (*declined when the backend had no room
 * to take it, which stops this for the rest of the pass); −1: error. */
static int
feed_own_read (Pass *pass, guint w, SvBackend *backend, guint z0, guint z1, gboolean *declined,
               GError **error)
{
  const SvSlabPlan *plan = pass->plan;
  const SvSlabSteps *steps = backend->klass->slab_steps;
  SvSlabSamples how;
  gboolean elsewhere;
  int taken;

  if (plan->readers == NULL || *declined || pass->kind != SV_SLAB_ASSIGN
      || !sv__stream_image_samples_how (plan->image, &how))
    return 0;
  g_mutex_lock (&pass->lock);
  elsewhere = pass->failed || steps->holds_slab (backend, z0, z1)
              || sv__stream_image_has_slab (plan->image, z0, z1);
  g_mutex_unlock (&pass->lock);
  if (elsewhere)
    return 0;
  if (g_cancellable_set_error_if_cancelled (plan->cancellable, error)
      || !sv_tiff_slab_reader_read (plan->readers[w], z0, z1, plan->raw[w], error))
    return -1;
  g_mutex_lock (&pass->lock);
  plan->image->slices_read += z1 - z0;
  g_mutex_unlock (&pass->lock);
  if ((taken = steps->take_samples (backend, z0, z1, plan->raw[w], &how, NULL, error)) < 0)
    return -1;
  if (taken == 0)
    {
      *declined = TRUE;
      return 0;
    }
  g_mutex_lock (&pass->lock);
  plan->image->n_resident++;
  plan->image->slabs_read_by_workers++;
  g_mutex_unlock (&pass->lock);
  /* The spill file takes the workers' slices at once. */
  return steps->assign_sum (backend, z0, z1, NULL, NULL,
                            pass->keep && !plan->assignment_kept ? spill_sink : NULL, plan->spill,
                            error)
             ? 1
             : -1;
}

/* The clusters [*k0, *k1) whose search windows can meet worker w's slabs,
 * from the centres the pass starts with: a window spans 2·step slices
 * either side of its centre (sv_slic_assign); one slice more on each side
 * keeps the rounding of the bounds out of the question. Every other
 * cluster's sums and maxima stay zero on that worker. */
static void
worker_clusters (const Pass *pass, guint w, gsize *k0, gsize *k1)
{
  const SvSlabPlan *plan = pass->plan;
  const SvClusters *clusters = pass->clusters;
  const gsize nf = 3 + clusters->nc;
  const guint n_slabs = (plan->z_end - plan->z_begin + plan->depth - 1) / plan->depth;
  const double reach = 2.0 * pass->ctx->window_step[0] + 2.0;
  guint first = G_MAXUINT, last = 0;
  double zlo, zhi;

  *k0 = *k1 = 0;
  for (guint slab = 0; slab < n_slabs; slab++)
    if (sv__slab_plan_worker (plan, slab) == w)
      {
        first = MIN (first, slab);
        last = slab;
      }
  if (first == G_MAXUINT)
    return;
  zlo = plan->z_begin + (double)first * plan->depth;
  zhi = MIN (plan->z_begin + (double)(last + 1) * plan->depth, plan->z_end);
  for (gsize k = 0; k < clusters->k; k++)
    {
      const double cz = clusters->centres[k * nf];

      if (!clusters->alive[k] || cz + reach < zlo || cz - reach >= zhi)
        continue;
      if (*k1 == 0)
        *k0 = k;
      *k1 = k + 1;
    }
}

static gboolean
worker_run (Pass *pass, guint w, GError **error)
{
  const SvSlabPlan *plan = pass->plan;
  SvBackend *backend = plan->workers[w];
  const SvSlabSteps *steps = backend->klass->slab_steps;
  const gsize k = pass->clusters->k;
  /* The only worker adds straight into the pass's sums and maxima (no
   * copy of hundreds of MiB with millions of clusters); several add their
   * own (made once for the run) under the lock at the end. */
  const gboolean alone = plan->n_workers == 1;
  const gsize ns = 4 + pass->clusters->nc;
  gint64 *own_sums = pass->sums != NULL && !alone ? plan->worker_sums[w] : NULL;
  g_autofree float *own_maxima = pass->maxima != NULL && !alone
                                     ? g_memdup2 (pass->maxima, MAX (k, 1) * sizeof (float))
                                     : NULL;
  gint64 *sums = alone ? pass->sums : own_sums;
  float *maxima = alone ? pass->maxima : own_maxima;
  g_autofree gint32 *nearest = NULL;
  gsize k0 = 0, k1 = k;
  gboolean ok, declined = FALSE;
  guint slab = 0;

  /* A rank's only worker sends back the band its slabs reach, too: under
   * MPI that is a share of the sums (8.6 M clusters at 2048³ are 345 MB). */
  if (!alone || plan->z_begin > 0 || plan->z_end < plan->image->nz)
    worker_clusters (pass, w, &k0, &k1);
  if (plan->assign_band != NULL && pass->kind == SV_SLAB_ASSIGN)
    {
      plan->assign_band[2 * w] = k0;
      plan->assign_band[2 * w + 1] = k1;
    }
  else if (plan->assign_band != NULL && plan->assign_band[2 * w + 1] > 0)
    {
      /* A cluster of the assignment whose centre moved out of reach still
       * has its voxels in these slabs. */
      k0 = k1 > 0 ? MIN (k0, plan->assign_band[2 * w]) : plan->assign_band[2 * w];
      k1 = MAX (k1, plan->assign_band[2 * w + 1]);
    }
  pass->band[2 * w] = k0;
  pass->band[2 * w + 1] = k1;
  if (own_sums != NULL && k0 < k1)
    memset (own_sums + k0 * ns, 0, (k1 - k0) * ns * sizeof (gint64));
  if (pass->kind == SV_SLAB_MAXIMA)
    {
      nearest = sv_try_alloc_n ((gsize)plan->depth * plan->plane, sizeof (gint32), FALSE, error,
                                "the labels of %u slices", plan->depth);
      if (nearest == NULL)
        return FALSE;
    }
  const gint64 t0 = g_get_monotonic_time ();
  gint64 t1, t2, t3;
  /* Outside the lock: a device backend uploads the centres here, every
   * device at once. */
  g_mutex_lock (&pass->lock);
  ok = !pass->failed;
  g_mutex_unlock (&pass->lock);
  ok = ok && steps->begin_pass (backend, pass->ctx, pass->clusters, k0, k1, error);
  t1 = g_get_monotonic_time ();
  for (guint z0 = plan->z_begin; ok && z0 < plan->z_end; z0 += plan->depth, slab++)
    {
      /* Its run of slabs, as sv__slab_plan_owner says. */
      const guint z1 = MIN (z0 + plan->depth, plan->z_end);

      if (sv__slab_plan_worker (plan, slab) != w)
        continue;
      if (feeds_alone (pass, backend, z0, z1))
        {
          g_mutex_lock (&pass->lock);
          ok = !pass->failed;
          g_mutex_unlock (&pass->lock);
          ok = ok && !g_cancellable_set_error_if_cancelled (plan->cancellable, error)
               && (pass->kind == SV_SLAB_ASSIGN
                       ? steps->assign_sum (backend, z0, z1, NULL, NULL,
                                            pass->keep && !plan->assignment_kept ? spill_sink
                                                                                 : NULL,
                                            plan->spill, error)
                       : steps->raise_maxima (backend, z0, z1, NULL, NULL, NULL, error));
          continue;
        }
      switch (feed_own_read (pass, w, backend, z0, z1, &declined, error))
        {
        case 1:
          continue;
        case -1:
          ok = FALSE;
          continue;
        default:
          break;
        }
      g_mutex_lock (&pass->lock);
      ok = !pass->failed && feed_slab (pass, backend, z0, z1, nearest, error);
      g_mutex_unlock (&pass->lock);
    }
  /* Waiting for the device happens outside the lock: the other workers
   * keep feeding theirs. */
  t2 = g_get_monotonic_time ();
  ok = ok && steps->end_pass (backend, sums, maxima, k0, k1, error);
  if (!ok)
    return FALSE;
  t3 = g_get_monotonic_time ();
  /* The workers' sums are added after the pass (merge_sums). */
  g_mutex_lock (&pass->lock);
  if (own_maxima != NULL)
    for (gsize i = k0; i < k1; i++)
      pass->maxima[i] = MAX (pass->maxima[i], own_maxima[i]);
  g_mutex_unlock (&pass->lock);
  g_debug ("pass worker %u: begin %.1f ms, slabs %.1f ms, end %.1f ms, merge %.1f ms "
           "(clusters %" G_GSIZE_FORMAT "-%" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT ")",
           w, (t1 - t0) / 1e3, (t2 - t1) / 1e3, (t3 - t2) / 1e3,
           (g_get_monotonic_time () - t3) / 1e3, k0, k1, k);
  return TRUE;
}

/* The workers' sums into the pass's, on every core, cluster by cluster in
 * worker order (exact integers: the order does not change them). */
static void
merge_worker (gpointer data, int thread)
{
  const Pass *pass = data;
  const SvSlabPlan *plan = pass->plan;
  const gsize ns = 4 + pass->clusters->nc, k = pass->clusters->k;
  const gsize share = (k + (gsize)pass->n_threads - 1) / (gsize)pass->n_threads;
  const gsize a = (gsize)thread * share, b = MIN (a + share, k);

  for (guint w = 0; w < plan->n_workers; w++)
    {
      const gsize k0 = MAX (a, pass->band[2 * w]), k1 = MIN (b, pass->band[2 * w + 1]);
      const gint64 *own = plan->worker_sums[w];

      for (gsize i = k0 * ns; i < k1 * ns; i++)
        pass->sums[i] += own[i];
    }
}

static void
merge_sums (Pass *pass)
{
  pass->n_threads = (int)MIN ((gsize)sv__resolve_threads (pass->ctx->n_threads),
                              pass->clusters->k / 65536 + 1);
  sv__run_parallel (pass->n_threads, merge_worker, pass);
}

static gpointer
worker_thread (gpointer data)
{
  Worker *worker = data;
  Pass *pass = worker->pass;
  GError *local = NULL;

  if (!worker_run (pass, worker->w, &local))
    {
      g_mutex_lock (&pass->lock);
      pass->failed = TRUE;
      if (pass->error == NULL && local != NULL)
        pass->error = g_steal_pointer (&local);
      g_mutex_unlock (&pass->lock);
      g_clear_error (&local);
    }
  return NULL;
}

void
sv__slab_plan_open_readers (SvSlabPlan *plan, const char *input, const SvTiffReadOptions *options,
                            gsize slab_bytes)
{
  SvSlabSamples how;
  SvTiffReadOptions own = *options;

  if (plan->n_workers < 2 || input == NULL || sv__stream_mask_any (plan->mask)
      || !sv__stream_image_samples_how (plan->image, &how))
    return;
  for (guint w = 0; w < plan->n_workers; w++)
    if (plan->workers[w]->klass->slab_steps->take_samples == NULL)
      return;
  /* The workers read at once: each with its share of the threads. */
  own.n_threads = MAX (sv__resolve_threads (options->n_threads) / (int)plan->n_workers, 1);
  plan->readers = g_new0 (SvTiffSlabReader *, plan->n_workers);
  plan->raw = g_new0 (guint8 *, plan->n_workers);
  for (guint w = 0; w < plan->n_workers; w++)
    if ((plan->readers[w] = sv_tiff_slab_reader_open (input, &own, NULL)) == NULL
        || (plan->raw[w] = g_try_malloc (MAX (slab_bytes, 1))) == NULL)
      {
        sv__slab_plan_close_readers (plan);
        return;
      }
}

void
sv__slab_plan_close_readers (SvSlabPlan *plan)
{
  for (guint w = 0; plan->readers != NULL && w < plan->n_workers; w++)
    {
      g_clear_pointer (&plan->readers[w], sv_tiff_slab_reader_free);
      g_clear_pointer (&plan->raw[w], g_free);
    }
  g_clear_pointer (&plan->readers, g_free);
  g_clear_pointer (&plan->raw, g_free);
}

gboolean
sv__slab_pass (const SvSlabPlan *plan, SvSlabPassKind kind, gboolean keep, const SvSlicContext *ctx,
               const SvClusters *clusters, gint64 *sums, float *maxima, GError **error)
{
  Pass pass = { 0 };
  gboolean ok;

  pass.plan = plan;
  pass.kind = kind;
  pass.keep = keep;
  pass.ctx = ctx;
  pass.clusters = clusters;
  pass.sums = sums;
  pass.maxima = maxima;
  pass.n_sums = MAX (clusters->k, 1) * (4 + clusters->nc);
  pass.band = g_new0 (gsize, 2 * MAX (plan->n_workers, 1));
  g_mutex_init (&pass.lock);
  if (plan->n_workers == 1)
    ok = worker_run (&pass, 0, error);
  else
    {
      g_autofree GThread **threads = g_new (GThread *, plan->n_workers);
      g_autofree Worker *workers = g_new (Worker, plan->n_workers);

      for (guint w = 0; w < plan->n_workers; w++)
        {
          workers[w] = (Worker){ &pass, w };
          threads[w] = g_thread_new ("sv-slab-worker", worker_thread, &workers[w]);
        }
      for (guint w = 0; w < plan->n_workers; w++)
        g_thread_join (threads[w]);
      ok = !pass.failed;
      if (ok && sums != NULL)
        merge_sums (&pass);
      if (!ok)
        {
          if (pass.error != NULL)
            g_propagate_error (error, g_steal_pointer (&pass.error));
          else
            g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                                 "a slab worker failed");
        }
    }
  g_mutex_clear (&pass.lock);
  g_free (pass.band);
  return ok;
}

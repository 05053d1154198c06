/* Supervox engine: the quality of each result, on a worker thread. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-quality.h"

#include <math.h>

#include "metrics-threads.h"
#include "supervox/sv-error.h"
#include "supervox/sv-partition-compare.h"

/* ---- one analysis ---- */

static void
quality_clear (gpointer data)
{
  SvQuality *q = data;
  g_clear_pointer (&q->table, sv_label_table_free);
  g_clear_pointer (&q->reference_difference, g_bytes_unref);
}

SvQuality *
sv_quality_ref (SvQuality *quality)
{
  return g_atomic_rc_box_acquire (quality);
}

void
sv_quality_unref (SvQuality *quality)
{
  g_atomic_rc_box_release_full (quality, quality_clear);
}

SvQuality *
sv_quality_compute (const SvVolume *volume, const SvJobResult *result, const SvLabels *truth,
                    const SvJobResult *reference, GError **error)
{
  return sv_quality_compute_threads (volume, result, truth, reference, 0, error);
}

SvQuality *
sv_quality_compute_threads (const SvVolume *volume, const SvJobResult *result,
                            const SvLabels *truth, const SvJobResult *reference, int n_threads,
                            GError **error)
{
  g_autoptr (SvQuality) q = g_atomic_rc_box_new0 (SvQuality);
  /* On the quality worker: a result whose labels stayed on the device is
   * copied here, off the main thread. */
  const SvLabels *labels = sv_job_result_get_labels (result, error);
  const SvLabels *ref_labels = NULL;
  g_auto (SvDenseLabels) dense = { 0 };
  gint64 start = g_get_monotonic_time ();
  gsize n;
  /* Masked-out voxels hold start_label − 1 (0 with the default start): no
   * supervoxel, left out of the count, the sizes and the histogram. */
  const gint32 background = result->params.start_label - 1;

  if (labels == NULL)
    return NULL;
  n = sv_labels_n_voxels (labels);
  /* The labels as they are: a region's are measured on the region's volume. */
  if (labels->nz != volume->nz || labels->ny != volume->ny || labels->nx != volume->nx
      || result->preview_factor > 1)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "a preview's labels are not the volume's shape");
      return NULL;
    }
  q->generation = result->generation;
  /* The dense indices once, for the metrics, the table and the comparison. */
  sv__dense_labels_init_threads (&dense, labels->data, n, n_threads);
  sv__dense_labels_make_runs (&dense, labels->nz, labels->ny, labels->nx, n_threads);
  if (!sv__metrics_compute_threads (labels, &dense, truth, volume, SV_QUALITY_BOUNDARY_RADIUS, TRUE,
                                    background, n_threads, &q->metrics, error))
    return NULL;
  q->has_truth = truth != NULL;
  q->table = sv__label_table_new_threads (labels, &dense, volume, n_threads, error);
  if (!q->table)
    return NULL;
  {
    /* maskSLIC spreads the segments over the voxels inside the mask. */
    const SvLabelStats *bg = sv_label_table_lookup (q->table, background);
    double inside = (double)n - (bg ? (double)bg->n_voxels : 0.0);
    q->target_size = result->params.n_segments > 0 ? inside / result->params.n_segments : NAN;
  }
  sv_label_table_size_histogram (q->table, TRUE, background, SV_QUALITY_SIZE_BINS, q->size_edges,
                                 q->size_counts);
  q->reference_ari = NAN;
  if (reference)
    ref_labels = sv_job_result_get_labels (reference, NULL);
  if (ref_labels && sv_labels_n_voxels (ref_labels) == n)
    {
      SvPartitionDifference d;
      guint8 *differing = g_malloc (MAX (n, 1));

      sv__partition_compare_threads (ref_labels->data, labels->data, &dense, n, n_threads, &d,
                                     differing);
      q->reference_ari = d.adjusted_rand;
      q->reference_differing = d.n_differing;
      q->reference_difference = g_bytes_new_take (differing, n);
      q->reference_generation = reference->generation;
    }
  q->seconds = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  return g_steal_pointer (&q);
}

/* ---- the worker ---- */

/* What a delivery needs after the worker may be gone: whether to call. */
typedef struct
{
  gboolean alive; /* main context only */
  SvQualityCallbacks callbacks;
  gpointer user_data;
} Link;

struct _SvQualityWorker
{
  const SvVolume *volume;
  const guint8 *mask;
  const SvLabels *truth;
  GCancellable *cancellable; /* the running convergence's; under lock */
  GMainContext *context;
  Link *link;
  GThread *thread;
  GMutex lock;
  GCond cond;
  gboolean quit;
  /* Under lock. */
  SvJobResult *pending;
  SvJobResult *reference;
  GQueue alone; /* results to analyse compared with nothing, first first */
  gboolean convergence_pending;
  SvSlicParams convergence_params;
};

typedef struct
{
  Link *link;
  SvQuality *quality;
  SvConvergence *convergence;
  guint64 generation;
  GError *error;
} Delivery;

static gboolean
deliver_cb (gpointer data)
{
  Delivery *d = data;

  if (!d->link->alive)
    return G_SOURCE_REMOVE;
  if (d->convergence && d->link->callbacks.converged)
    d->link->callbacks.converged (d->convergence, d->link->user_data);
  else if (d->quality && d->link->callbacks.done)
    d->link->callbacks.done (d->quality, d->link->user_data);
  else if (d->error && d->link->callbacks.failed)
    d->link->callbacks.failed (d->generation, d->error, d->link->user_data);
  return G_SOURCE_REMOVE;
}

static void
delivery_free (gpointer data)
{
  Delivery *d = data;

  g_atomic_rc_box_release (d->link);
  g_clear_pointer (&d->quality, sv_quality_unref);
  g_clear_pointer (&d->convergence, sv_convergence_unref);
  g_clear_error (&d->error);
  g_free (d);
}

static void
deliver (SvQualityWorker *w, Delivery *d)
{
  g_autoptr (GSource) source = g_idle_source_new ();

  /* Always queued, never run inline, as SvJob delivers. */
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, deliver_cb, d, delivery_free);
  g_source_set_static_name (source, "sv-quality delivery");
  g_source_attach (source, w->context);
}

static gpointer
worker_main (gpointer data)
{
  SvQualityWorker *w = data;

  for (;;)
    {
      SvJobResult *result, *reference;
      Delivery *d;

      g_mutex_lock (&w->lock);
      while (!w->quit && !w->pending && g_queue_is_empty (&w->alone) && !w->convergence_pending)
        g_cond_wait (&w->cond, &w->lock);
      if (w->quit)
        {
          g_mutex_unlock (&w->lock);
          return NULL;
        }
      if (w->convergence_pending)
        {
          SvSlicParams params = w->convergence_params;
          g_autoptr (GError) error = NULL;
          g_autoptr (GCancellable) cancellable = g_object_ref (w->cancellable);

          w->convergence_pending = FALSE;
          g_mutex_unlock (&w->lock);
          d = g_new0 (Delivery, 1);
          d->link = g_atomic_rc_box_acquire (w->link);
          d->convergence
              = sv_convergence_compute (w->volume, w->mask, &params, cancellable, &error);
          if (d->convergence)
            deliver (w, d);
          else
            {
              if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                g_message ("no convergence plot: %s", error->message);
              delivery_free (d);
            }
          continue;
        }
      if (!g_queue_is_empty (&w->alone))
        {
          /* Pinned results' own numbers first, compared with nothing. */
          result = g_queue_pop_head (&w->alone);
          reference = NULL;
        }
      else
        {
          result = g_steal_pointer (&w->pending);
          reference = w->reference ? sv_job_result_ref (w->reference) : NULL;
        }
      g_mutex_unlock (&w->lock);

      d = g_new0 (Delivery, 1);
      d->link = g_atomic_rc_box_acquire (w->link);
      d->generation = result->generation;
      d->quality = sv_quality_compute (w->volume, result, w->truth, reference, &d->error);
      sv_job_result_unref (result);
      g_clear_pointer (&reference, sv_job_result_unref);
      deliver (w, d);
    }
}

SvQualityWorker *
sv_quality_worker_new (const SvVolume *volume, const guint8 *mask, const SvLabels *truth,
                       const SvQualityCallbacks *callbacks, gpointer user_data)
{
  SvQualityWorker *w = g_new0 (SvQualityWorker, 1);

  w->volume = volume;
  w->mask = mask;
  w->cancellable = g_cancellable_new ();
  w->truth = truth;
  w->context = g_main_context_ref_thread_default ();
  w->link = g_atomic_rc_box_new0 (Link);
  w->link->alive = TRUE;
  w->link->callbacks = *callbacks;
  w->link->user_data = user_data;
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
  w->thread = g_thread_new ("sv-quality", worker_main, w);
  return w;
}

void
sv_quality_worker_set_reference (SvQualityWorker *w, SvJobResult *reference, gboolean analyse)
{
  SvJobResult *old;

  g_mutex_lock (&w->lock);
  old = w->reference;
  w->reference = reference ? sv_job_result_ref (reference) : NULL;
  g_cond_signal (&w->cond);
  g_mutex_unlock (&w->lock);
  g_clear_pointer (&old, sv_job_result_unref);
  if (analyse && reference)
    sv_quality_worker_analyse (w, reference);
}

void
sv_quality_worker_analyse (SvQualityWorker *w, SvJobResult *result)
{
  g_mutex_lock (&w->lock);
  if (!g_queue_find (&w->alone, result))
    g_queue_push_tail (&w->alone, sv_job_result_ref (result));
  g_cond_signal (&w->cond);
  g_mutex_unlock (&w->lock);
}

void
sv_quality_worker_request_convergence (SvQualityWorker *w, const SvSlicParams *params)
{
  g_mutex_lock (&w->lock);
  /* Newer parameters: the one being computed is of no use any more. */
  g_cancellable_cancel (w->cancellable);
  g_object_unref (w->cancellable);
  w->cancellable = g_cancellable_new ();
  w->convergence_params = *params;
  w->convergence_pending = TRUE;
  g_cond_signal (&w->cond);
  g_mutex_unlock (&w->lock);
}

void
sv_quality_worker_submit (SvQualityWorker *w, SvJobResult *result)
{
  SvJobResult *old;

  g_mutex_lock (&w->lock);
  old = w->pending;
  w->pending = sv_job_result_ref (result);
  g_cond_signal (&w->cond);
  g_mutex_unlock (&w->lock);
  g_clear_pointer (&old, sv_job_result_unref);
}

void
sv_quality_worker_free (SvQualityWorker *w)
{
  if (!w)
    return;
  g_mutex_lock (&w->lock);
  w->quit = TRUE;
  g_cond_signal (&w->cond);
  g_cancellable_cancel (w->cancellable);
  g_mutex_unlock (&w->lock);
  g_thread_join (w->thread);
  g_object_unref (w->cancellable);
  w->link->alive = FALSE;
  g_atomic_rc_box_release (w->link);
  g_clear_pointer (&w->pending, sv_job_result_unref);
  g_clear_pointer (&w->reference, sv_job_result_unref);
  g_queue_clear_full (&w->alone, (GDestroyNotify)sv_job_result_unref);
  g_main_context_unref (w->context);
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
  g_free (w);
}

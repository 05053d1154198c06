/* Supervox engine: a job's deliveries to the caller's main context. */
#define G_LOG_DOMAIN "sv-job"

#include "job-delivery.h"

struct _SvJobSink
{
  gatomicrefcount ref;
  GMainContext *context;
  SvJobCallbacks callbacks;
  gpointer user_data;
  gboolean closed;
  GMutex lock;
  guint64 latest_generation;    /* newest request submitted, under lock */
  guint64 cancelled_generation; /* requests up to this one were cancelled, under lock */
  guint64 delivered_generation; /* newest result delivered (main context only) */
  /* Deliveries not yet run, oldest first, under lock: each queued source
   * runs the oldest, and sv__job_sink_deliver_when_ready may run them all
   * sooner. `arrived` is signalled with each. */
  GQueue queue;
  GCond arrived;
};

static void delivery_free (gpointer data);

SvJobSink *
sv__job_sink_new (GMainContext *context, const SvJobCallbacks *callbacks, gpointer user_data)
{
  SvJobSink *sink = g_new0 (SvJobSink, 1);

  g_atomic_ref_count_init (&sink->ref);
  g_mutex_init (&sink->lock);
  g_cond_init (&sink->arrived);
  g_queue_init (&sink->queue);
  sink->context = g_main_context_ref (context);
  sink->callbacks = *callbacks;
  sink->user_data = user_data;
  return sink;
}

static SvJobSink *
sink_ref (SvJobSink *sink)
{
  g_atomic_ref_count_inc (&sink->ref);
  return sink;
}

static void
sink_unref (SvJobSink *sink)
{
  if (g_atomic_ref_count_dec (&sink->ref))
    {
      g_queue_clear_full (&sink->queue, delivery_free);
      g_main_context_unref (sink->context);
      g_cond_clear (&sink->arrived);
      g_mutex_clear (&sink->lock);
      g_free (sink);
    }
}

void
sv__job_sink_close (SvJobSink *sink)
{
  /* Queued deliveries still hold the sink; they see `closed` and do nothing. */
  sink->closed = TRUE;
  sink_unref (sink);
}

void
sv__job_sink_submitted (SvJobSink *sink, guint64 generation)
{
  g_mutex_lock (&sink->lock);
  sink->latest_generation = MAX (sink->latest_generation, generation);
  g_mutex_unlock (&sink->lock);
}

void
sv__job_sink_cancel_all (SvJobSink *sink)
{
  g_mutex_lock (&sink->lock);
  sink->cancelled_generation = sink->latest_generation;
  g_mutex_unlock (&sink->lock);
}

guint64
sv__job_sink_latest (SvJobSink *sink)
{
  guint64 g;

  g_mutex_lock (&sink->lock);
  g = sink->latest_generation;
  g_mutex_unlock (&sink->lock);
  return g;
}

typedef enum
{
  DELIVER_PROGRESS,
  DELIVER_RESULT,
  DELIVER_ERROR,
} DeliverKind;

typedef struct
{
  SvJobSink *sink; /* not referenced: the delivery lives in its queue */
  DeliverKind kind;
  guint64 generation;
  SvStage stage;
  guint iteration, n_iterations;
  SvJobResult *result;
  GError *error;
} Delivery;

static void
delivery_free (gpointer data)
{
  Delivery *d = data;

  g_clear_pointer (&d->result, sv_job_result_unref);
  g_clear_error (&d->error);
  g_free (d);
}

/* On the main context: one delivery's callback, if still of interest. */
static void
run_delivery (Delivery *d)
{
  SvJobSink *sink = d->sink;
  guint64 latest, cancelled;

  if (sink->closed)
    return;
  g_mutex_lock (&sink->lock);
  latest = sink->latest_generation;
  cancelled = sink->cancelled_generation;
  g_mutex_unlock (&sink->lock);
  if (d->generation <= cancelled)
    return;

  switch (d->kind)
    {
    case DELIVER_PROGRESS:
      /* Progress of a run older than the labels on screen is of no interest. */
      if (d->generation < sink->delivered_generation)
        break;
      if (sink->callbacks.progress)
        sink->callbacks.progress (d->generation, d->stage, d->iteration, d->n_iterations,
                                  sink->user_data);
      break;
    case DELIVER_RESULT:
      /* A run allowed to finish although superseded is still the newest
       * result there is; results never go back in time. */
      if (d->generation <= sink->delivered_generation)
        break;
      /* An iteration of a run still going leaves room for its final result. */
      if (d->result->in_progress_iteration == 0)
        sink->delivered_generation = d->generation;
      if (sink->callbacks.result)
        sink->callbacks.result (d->result, sink->user_data);
      break;
    case DELIVER_ERROR:
      /* A request superseded while its message was queued is of no interest. */
      if (d->generation < latest)
        break;
      if (sink->callbacks.error)
        sink->callbacks.error (d->generation, d->error, sink->user_data);
      break;
    }
}

/* Takes the oldest queued delivery, or NULL. */
static Delivery *
pop_delivery (SvJobSink *sink)
{
  Delivery *d;

  g_mutex_lock (&sink->lock);
  d = g_queue_pop_head (&sink->queue);
  g_mutex_unlock (&sink->lock);
  return d;
}

static gboolean
deliver_cb (gpointer data)
{
  Delivery *d = pop_delivery (data);

  /* None when they all ran sooner. */
  if (d != NULL)
    {
      run_delivery (d);
      delivery_free (d);
    }
  return G_SOURCE_REMOVE;
}

static void
deliver (SvJobSink *sink, Delivery *d)
{
  g_autoptr (GSource) source = g_idle_source_new ();

  d->sink = sink;
  g_mutex_lock (&sink->lock);
  g_queue_push_tail (&sink->queue, d);
  g_cond_broadcast (&sink->arrived);
  g_mutex_unlock (&sink->lock);
  /* Always queue: g_main_context_invoke would run the callback right here on
   * the worker when the context is the global default and nobody holds it. */
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, deliver_cb, sink_ref (sink), (GDestroyNotify)sink_unref);
  g_source_set_static_name (source, "sv-job delivery");
  g_source_attach (source, sink->context);
}

/* Whether a final result (or the error) of `generation` or a newer request
 * is queued; under lock. */
static gboolean
result_queued_locked (SvJobSink *sink, guint64 generation)
{
  for (GList *l = sink->queue.head; l != NULL; l = l->next)
    {
      const Delivery *d = l->data;

      if (d->generation >= generation
          && ((d->kind == DELIVER_RESULT && d->result->in_progress_iteration == 0)
              || d->kind == DELIVER_ERROR))
        return TRUE;
    }
  return FALSE;
}

gboolean
sv__job_sink_deliver_when_ready (SvJobSink *sink, guint64 generation, gint64 timeout_us)
{
  const gint64 end = g_get_monotonic_time () + MAX (timeout_us, 0);
  gboolean ready;
  Delivery *d;

  g_mutex_lock (&sink->lock);
  while (!(ready = result_queued_locked (sink, generation)))
    if (!g_cond_wait_until (&sink->arrived, &sink->lock, end))
      {
        ready = result_queued_locked (sink, generation);
        break;
      }
  g_mutex_unlock (&sink->lock);
  /* What is queued, in order, here; the sources find nothing left. */
  while ((d = pop_delivery (sink)) != NULL)
    {
      run_delivery (d);
      delivery_free (d);
    }
  return ready;
}

void
sv__job_deliver_progress (SvJobSink *sink, guint64 generation, SvStage stage, guint iteration,
                          guint n_iterations)
{
  Delivery *d = g_new0 (Delivery, 1);

  d->kind = DELIVER_PROGRESS;
  d->generation = generation;
  d->stage = stage;
  d->iteration = iteration;
  d->n_iterations = n_iterations;
  deliver (sink, d);
}

void
sv__job_deliver_result (SvJobSink *sink, SvJobResult *result)
{
  Delivery *d = g_new0 (Delivery, 1);

  d->kind = DELIVER_RESULT;
  d->generation = result->generation;
  d->result = result;
  deliver (sink, d);
}

void
sv__job_deliver_error (SvJobSink *sink, guint64 generation, GError *error)
{
  Delivery *d = g_new0 (Delivery, 1);

  d->kind = DELIVER_ERROR;
  d->generation = generation;
  d->error = error;
  deliver (sink, d);
}

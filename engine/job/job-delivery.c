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
};

SvJobSink *
sv__job_sink_new (GMainContext *context, const SvJobCallbacks *callbacks, gpointer user_data)
{
  SvJobSink *sink = g_new0 (SvJobSink, 1);

  g_atomic_ref_count_init (&sink->ref);
  g_mutex_init (&sink->lock);
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
      g_main_context_unref (sink->context);
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
  SvJobSink *sink;
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
  sink_unref (d->sink);
  g_free (d);
}

static gboolean
deliver_cb (gpointer data)
{
  Delivery *d = data;
  SvJobSink *sink = d->sink;
  guint64 latest, cancelled;

  if (sink->closed)
    return G_SOURCE_REMOVE;
  g_mutex_lock (&sink->lock);
  latest = sink->latest_generation;
  cancelled = sink->cancelled_generation;
  g_mutex_unlock (&sink->lock);
  if (d->generation <= cancelled)
    return G_SOURCE_REMOVE;

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
  return G_SOURCE_REMOVE;
}

static void
deliver (SvJobSink *sink, Delivery *d)
{
  g_autoptr (GSource) source = g_idle_source_new ();

  d->sink = sink_ref (sink);
  /* Always queue: g_main_context_invoke would run the callback right here on
   * the worker when the context is the global default and nobody holds it. */
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, deliver_cb, d, delivery_free);
  g_source_set_static_name (source, "sv-job delivery");
  g_source_attach (source, sink->context);
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

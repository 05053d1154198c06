/* Supervox engine: a slab sink on a thread of its own (see
 * supervox/sv-sink-thread.h). */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-sink-thread.h"

/* A slab for the thread; buffer NULL ends it. */
typedef struct
{
  gint32 *buffer;
  guint z0, z1;
} SinkJob;

struct _SvSinkThread
{
  SvSlabSink sink;
  gpointer user_data;
  GThread *thread;
  GAsyncQueue *full, *empty;
  gint32 **buffers;
  guint n_buffers;
  GMutex lock;
  GError *error; /* the sink's first error, under `lock` */
};

static gboolean
failed (SvSinkThread *t)
{
  gboolean failed;

  g_mutex_lock (&t->lock);
  failed = t->error != NULL;
  g_mutex_unlock (&t->lock);
  return failed;
}

static gpointer
sink_thread (gpointer data)
{
  SvSinkThread *t = data;

  for (;;)
    {
      SinkJob *job = g_async_queue_pop (t->full);
      GError *local = NULL;

      if (job->buffer == NULL)
        {
          g_free (job);
          return NULL;
        }
      /* After a failure the slabs only come back. */
      if (!failed (t) && !t->sink (job->z0, job->z1, job->buffer, t->user_data, &local))
        {
          g_mutex_lock (&t->lock);
          t->error = local;
          g_mutex_unlock (&t->lock);
        }
      g_async_queue_push (t->empty, job->buffer);
      g_free (job);
    }
}

static void
free_parts (SvSinkThread *t)
{
  for (guint i = 0; i < t->n_buffers; i++)
    g_free (t->buffers[i]);
  g_free (t->buffers);
  g_clear_pointer (&t->full, g_async_queue_unref);
  g_clear_pointer (&t->empty, g_async_queue_unref);
  g_clear_error (&t->error);
  g_mutex_clear (&t->lock);
  g_free (t);
}

SvSinkThread *
sv_sink_thread_new (SvSlabSink sink, gpointer user_data, gsize slab_values, guint n_buffers)
{
  SvSinkThread *t = g_new0 (SvSinkThread, 1);

  g_return_val_if_fail (sink != NULL && slab_values > 0 && n_buffers >= 2, NULL);
  t->sink = sink;
  t->user_data = user_data;
  g_mutex_init (&t->lock);
  t->full = g_async_queue_new ();
  t->empty = g_async_queue_new ();
  t->buffers = g_new0 (gint32 *, n_buffers);
  t->n_buffers = n_buffers;
  for (guint i = 0; i < n_buffers; i++)
    {
      t->buffers[i] = g_try_new (gint32, slab_values);
      if (t->buffers[i] == NULL)
        {
          free_parts (t);
          return NULL;
        }
      g_async_queue_push (t->empty, t->buffers[i]);
    }
  t->thread = g_thread_try_new ("sv-slab-sink", sink_thread, t, NULL);
  if (t->thread == NULL)
    {
      free_parts (t);
      return NULL;
    }
  return t;
}

gint32 *
sv_sink_thread_take (SvSinkThread *t, GError **error)
{
  gint32 *buffer = g_async_queue_pop (t->empty);

  g_mutex_lock (&t->lock);
  if (t->error != NULL)
    {
      g_propagate_error (error, g_error_copy (t->error));
      buffer = NULL;
    }
  g_mutex_unlock (&t->lock);
  /* After a failure the buffer stays out; finish frees every buffer. */
  return buffer;
}

void
sv_sink_thread_push (SvSinkThread *t, guint z0, guint z1, gint32 *buffer)
{
  SinkJob *job = g_new (SinkJob, 1);

  g_return_if_fail (buffer != NULL);
  *job = (SinkJob){ buffer, z0, z1 };
  g_async_queue_push (t->full, job);
}

gboolean
sv_sink_thread_finish (SvSinkThread *t, gboolean ok, GError **error)
{
  g_async_queue_push (t->full, g_new0 (SinkJob, 1));
  g_thread_join (t->thread);
  if (t->error != NULL)
    {
      if (ok)
        g_propagate_error (error, g_steal_pointer (&t->error));
      ok = FALSE;
    }
  free_parts (t);
  return ok;
}

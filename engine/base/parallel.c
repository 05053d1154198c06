/* Supervox engine: the small thread pool of the CPU backend. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "internal.h"

int
sv__resolve_threads (int n_threads)
{
  if (n_threads <= 0)
    n_threads = (int)g_get_num_processors ();
  return CLAMP (n_threads, 1, 256);
}

typedef struct
{
  SvWorkFunc func;
  gpointer data;
  int thread;
} WorkArgs;

static gpointer
work_thread_main (gpointer p)
{
  WorkArgs *args = p;
  args->func (args->data, args->thread);
  return NULL;
}

void
sv__run_parallel (int n_threads, SvWorkFunc func, gpointer data)
{
  GThread *threads[256] = { NULL };
  WorkArgs args[256];

  for (int t = 1; t < n_threads; t++)
    {
      args[t] = (WorkArgs){ func, data, t };
      threads[t] = g_thread_try_new ("sv-slic", work_thread_main, &args[t], NULL);
      if (threads[t] == NULL)
        func (data, t); /* no thread to be had: do its share here */
    }
  func (data, 0);
  for (int t = 1; t < n_threads; t++)
    if (threads[t] != NULL)
      g_thread_join (threads[t]);
}

typedef struct
{
  guint8 *dst;
  const guint8 *src; /* NULL: zeros */
  gsize bytes;
  int n_threads;
} Copy;

static void
copy_share (gpointer data, int thread)
{
  const Copy *c = data;
  gsize a, b;

  sv__share_bounds (c->bytes, thread, c->n_threads, &a, &b);
  if (c->src != NULL)
    memcpy (c->dst + a, c->src + a, b - a);
  else
    memset (c->dst + a, 0, b - a);
}

void
sv__copy_parallel (gpointer dst, gconstpointer src, gsize bytes, int n_threads)
{
  Copy c = { dst, src, bytes, CLAMP (n_threads, 1, 256) };

  if (c.n_threads == 1)
    copy_share (&c, 0);
  else
    sv__run_parallel (c.n_threads, copy_share, &c);
}

void
sv__clear_parallel (gpointer p, gsize bytes, int n_threads)
{
  /* Below this a core's memset is as quick as starting a thread. */
  const gsize per_thread = (gsize)32 << 20;

  sv__copy_parallel (p, NULL, bytes,
                     (int)MIN ((gsize)MIN (sv__resolve_threads (n_threads), 16),
                               MAX (bytes / per_thread, 1)));
}

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
  guint8 *p;
  gsize bytes;
  int n_threads;
} Clear;

static void
clear_share (gpointer data, int thread)
{
  const Clear *c = data;
  gsize a, b;

  sv__share_bounds (c->bytes, thread, c->n_threads, &a, &b);
  memset (c->p + a, 0, b - a);
}

void
sv__clear_parallel (gpointer p, gsize bytes, int n_threads)
{
  /* Below this one core's memset is as quick as starting threads. */
  const gsize per_thread = (gsize)32 << 20;
  Clear c = { p, bytes, (int)MIN ((gsize)MIN (sv__resolve_threads (n_threads), 16),
                                  MAX (bytes / per_thread, 1)) };

  if (c.n_threads <= 1)
    memset (p, 0, bytes);
  else
    sv__run_parallel (c.n_threads, clear_share, &c);
}

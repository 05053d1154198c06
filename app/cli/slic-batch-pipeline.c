/* supervox-cli slic: the three-stage pipeline over the inputs. The reader
 * and the writer are threads; the compute stage runs on the calling thread,
 * which owns the backend (and with it the one CUDA context). Every file
 * passes every stage in input order, also when it failed or was skipped,
 * so that reports come out in order and no stage waits for a file that
 * never arrives. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-batch-pipeline.h"

#include "slic-batch-lanes.h"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <glib/gstdio.h>

typedef struct
{
  SvCliSlicContext *ctx;
  SvCliSlicFile *const *files;
  guint n_files;
  const SvCliSlicBatchEvents *events;

  /* Slots bound the pipeline: the reader takes a load slot before reading
   * a file and the compute stage returns it when it takes that file; the
   * compute stage takes a write slot before handing labels on and the
   * writer returns it when they are on disk. One slot each: one file
   * ahead, one behind. */
  GAsyncQueue *loaded;
  GAsyncQueue *load_slots;
  GAsyncQueue *computed;
  GAsyncQueue *write_slots;
  gint stopped; /* the backend could not be opened: skip everything */
} Pipeline;

static char slot;

static gboolean
skipping (Pipeline *p)
{
  return g_atomic_int_get (&p->stopped) || g_cancellable_is_cancelled (p->ctx->cancellable);
}

/* Reading and writing yield to the compute threads: the CPU backend splits
 * each step evenly over the cores, so a core taken by the reader or the
 * writer holds the whole step back. At a lower priority they fill the gaps
 * instead. (On Linux the nice value of a thread id is that thread's own.) */
static void
yield_to_compute (void)
{
#ifdef __linux__
  setpriority (PRIO_PROCESS, (id_t)syscall (SYS_gettid), 10);
#endif
}

static gpointer
reader_thread (gpointer data)
{
  Pipeline *p = data;

  yield_to_compute ();
  for (guint i = 0; i < p->n_files; i++)
    {
      SvCliSlicFile *file = p->files[i];

      g_async_queue_pop (p->load_slots);
      if (!skipping (p))
        sv_cli_slic_file_load (file, p->ctx, &file->error);
      g_async_queue_push (p->loaded, file);
    }
  return NULL;
}

static gpointer
writer_thread (gpointer data)
{
  Pipeline *p = data;

  yield_to_compute ();
  for (guint i = 0; i < p->n_files; i++)
    {
      SvCliSlicFile *file = g_async_queue_pop (p->computed);

      sv_cli_slic_batch_write (file, p->ctx, skipping (p));
      if (!g_atomic_int_get (&p->stopped) && p->events->finished != NULL)
        p->events->finished (file, p->events->user_data);
      g_async_queue_push (p->write_slots, &slot);
    }
  return NULL;
}

void
sv_cli_slic_batch_write (SvCliSlicFile *file, const SvCliSlicContext *ctx, gboolean skip)
{
  /* A streamed file's label file left to finish (its sync and rename) is
   * completed here, on the writer's thread, while the next file computes;
   * a file skipped leaves nothing. */
  if (file->finish != NULL)
    {
      if (skip)
        g_clear_pointer (&file->finish, sv_file_finish_abort);
      else if (!sv_file_finish_complete (g_steal_pointer (&file->finish), &file->error))
        file->streamed = FALSE; /* no label file: no sidecar */
    }
  if ((file->labels != NULL || file->streamed) && !skip
      && sv_cli_slic_file_write (file, ctx, &file->error)
      && g_cancellable_is_cancelled (ctx->cancellable))
    {
      /* A cancel during writing takes effect now: both files go. */
      g_unlink (file->output);
      g_unlink (file->sidecar);
      g_clear_pointer (&file->json, g_free);
    }
  g_clear_pointer (&file->labels, sv_labels_free);
}

gboolean
sv_cli_slic_batch_pipeline_run (SvCliSlicContext *ctx, SvCliSlicFile *const *files, guint n_files,
                                const SvCliSlicBatchEvents *events, GError **error)
{
  g_autoptr (GError) local = NULL;
  Pipeline p = { 0 };
  GThread *reader, *writer;
  guint n_lanes;
  gboolean finish_later;

  g_return_val_if_fail (ctx != NULL && events != NULL, FALSE);

  n_lanes = sv_cli_slic_batch_lanes (ctx, n_files);
  if (n_lanes >= 2)
    return sv_cli_slic_batch_lanes_run (ctx, n_lanes, files, n_files, events, error);

  p.ctx = ctx;
  p.files = files;
  p.n_files = n_files;
  p.events = events;
  p.loaded = g_async_queue_new ();
  p.load_slots = g_async_queue_new ();
  p.computed = g_async_queue_new ();
  p.write_slots = g_async_queue_new ();
  g_async_queue_push (p.load_slots, &slot);
  g_async_queue_push (p.write_slots, &slot);

  /* The first file is read while the backend (a CUDA context) starts.
   * With the listed devices opening beside the run (every file read from
   * disk streams through them) it opens for the first file held in
   * memory instead: a context made here waits for the driver's start. */
  /* The writer thread finishes the streamed files' label files. */
  finish_later = ctx->finish_later;
  ctx->finish_later = TRUE;
  reader = g_thread_new ("sv-cli-reader", reader_thread, &p);
  writer = g_thread_new ("sv-cli-writer", writer_thread, &p);
  if (ctx->devices.opening == NULL && !sv_cli_slic_context_open_backend (ctx, &local))
    g_atomic_int_set (&p.stopped, TRUE);

  for (guint i = 0; i < n_files; i++)
    {
      SvCliSlicFile *file = g_async_queue_pop (p.loaded);

      g_async_queue_push (p.load_slots, &slot);
      if (file->volume != NULL && ctx->backend == NULL && !skipping (&p)
          && !sv_cli_slic_context_open_backend (ctx, &local))
        g_atomic_int_set (&p.stopped, TRUE);
      if ((file->volume != NULL || file->streaming) && !skipping (&p))
        {
          if (events->started != NULL)
            events->started (file, events->user_data);
          sv_cli_slic_file_compute (file, ctx, &file->error);
        }
      g_clear_pointer (&file->volume, sv_volume_free);
      g_async_queue_pop (p.write_slots);
      g_async_queue_push (p.computed, file);
    }
  g_thread_join (reader);
  g_thread_join (writer);
  ctx->finish_later = finish_later;

  g_async_queue_unref (p.loaded);
  g_async_queue_unref (p.load_slots);
  g_async_queue_unref (p.computed);
  g_async_queue_unref (p.write_slots);
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  return TRUE;
}

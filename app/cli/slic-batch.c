/* supervox-cli slic: the three-stage pipeline over the inputs. The reader
 * and the writer are threads; the compute stage runs on the calling thread,
 * which owns the backend (and with it the one CUDA context). Every file
 * passes every stage in input order, also when it failed or was skipped,
 * so that reports come out in order and no stage waits for a file that
 * never arrives. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-batch.h"

#include <stdio.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#endif

#include <glib/gstdio.h>

#include "cli-common.h"
#include "supervox/sv-json-writer.h"

typedef struct
{
  SvCliSlicContext *ctx;
  SvCliSlicFile *const *files;
  guint n_files;
  const SvCliSlicBatchOptions *options;

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

  /* Progress (compute thread) and reports (writer thread) share stderr. */
  GMutex print_lock;
  gboolean tty;
  gboolean progress_shown;

  /* Written by the writer thread only; read after it is joined. */
  guint n_written;
  guint n_failed;
  guint n_cancelled;
} Batch;

static char slot;

static gboolean
skipping (Batch *b)
{
  return g_atomic_int_get (&b->stopped) || g_cancellable_is_cancelled (b->ctx->cancellable);
}

/* Call with print_lock held. */
static void
clear_progress_locked (Batch *b)
{
  if (!b->progress_shown)
    return;
  /* Clear the progress line so that later messages start clean. */
  fprintf (stderr, "\r\033[K");
  fflush (stderr);
  b->progress_shown = FALSE;
}

static void
progress_cb (const SvCliSlicFile *file, guint iteration, guint n_iterations, gpointer user_data)
{
  Batch *b = user_data;

  g_mutex_lock (&b->print_lock);
  if (n_iterations == 0)
    clear_progress_locked (b);
  else if (b->n_files == 1)
    fprintf (stderr, "\r%s: iteration %u/%u", SV_CLI_PROGRAM, iteration, n_iterations);
  else
    fprintf (stderr, "\r%s: [%u/%u] %s: iteration %u/%u", SV_CLI_PROGRAM, file->index + 1,
             b->n_files, file->input, iteration, n_iterations);
  if (n_iterations > 0)
    {
      fflush (stderr);
      b->progress_shown = TRUE;
    }
  g_mutex_unlock (&b->print_lock);
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
  Batch *b = data;

  yield_to_compute ();
  for (guint i = 0; i < b->n_files; i++)
    {
      SvCliSlicFile *file = b->files[i];

      g_async_queue_pop (b->load_slots);
      if (!skipping (b))
        sv_cli_slic_file_load (file, b->ctx, &file->error);
      g_async_queue_push (b->loaded, file);
    }
  return NULL;
}

/* A failed file in the batch form's JSON lines: what failed and why. */
static void
print_failure_json (const SvCliSlicFile *file)
{
  g_autoptr (SvJsonWriter) w = sv_json_writer_new ();

  sv_json_writer_begin_object (w);
  sv_json_writer_key (w, "input");
  sv_json_writer_string (w, file->input);
  sv_json_writer_key (w, "output");
  sv_json_writer_string (w, file->output);
  sv_json_writer_key (w, "error");
  sv_json_writer_string (w, file->error->message);
  sv_json_writer_end_object (w);
  printf ("%s\n", sv_json_writer_get (w));
}

static void
report (Batch *b, const SvCliSlicFile *file)
{
  g_mutex_lock (&b->print_lock);
  clear_progress_locked (b);
  if (file->json != NULL)
    {
      b->n_written++;
      sv_cli_slic_file_print_result (file, b->options->json, "");
      fflush (stdout);
    }
  else if (file->error != NULL && !g_error_matches (file->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      b->n_failed++;
      sv_cli_report (file->error);
      if (b->options->json && b->options->summary)
        {
          print_failure_json (file);
          fflush (stdout);
        }
    }
  else if (!g_atomic_int_get (&b->stopped))
    b->n_cancelled++;
  g_mutex_unlock (&b->print_lock);
}

static gpointer
writer_thread (gpointer data)
{
  Batch *b = data;

  yield_to_compute ();
  for (guint i = 0; i < b->n_files; i++)
    {
      SvCliSlicFile *file = g_async_queue_pop (b->computed);

      if ((file->labels != NULL || file->streamed) && !skipping (b)
          && sv_cli_slic_file_write (file, b->ctx, &file->error)
          && g_cancellable_is_cancelled (b->ctx->cancellable))
        {
          /* An interrupt during writing takes effect now: both files go. */
          g_unlink (file->output);
          g_unlink (file->sidecar);
          g_clear_pointer (&file->json, g_free);
        }
      g_clear_pointer (&file->labels, sv_labels_free);
      if (!g_atomic_int_get (&b->stopped))
        report (b, file);
      g_async_queue_push (b->write_slots, &slot);
    }
  return NULL;
}

static void
print_totals (Batch *b, double seconds)
{
  double rate = seconds > 0 ? b->n_written / seconds : 0;

  if (b->options->json)
    {
      g_autoptr (SvJsonWriter) w = sv_json_writer_new ();

      sv_json_writer_begin_object (w);
      sv_json_writer_key (w, "batch");
      sv_json_writer_begin_object (w);
      sv_json_writer_key (w, "files");
      sv_json_writer_int (w, b->n_files);
      sv_json_writer_key (w, "written");
      sv_json_writer_int (w, b->n_written);
      sv_json_writer_key (w, "failed");
      sv_json_writer_int (w, b->n_failed);
      sv_json_writer_key (w, "cancelled");
      sv_json_writer_int (w, b->n_cancelled);
      sv_json_writer_key (w, "backend");
      sv_json_writer_string (w, sv_backend_get_name (b->ctx->backend));
      sv_json_writer_key (w, "seconds");
      sv_json_writer_seconds (w, seconds);
      sv_json_writer_key (w, "files_per_second");
      sv_json_writer_double (w, rate);
      sv_json_writer_end_object (w);
      sv_json_writer_end_object (w);
      printf ("%s\n", sv_json_writer_get (w));
    }
  else
    {
      printf ("%u file%s: %u written, %u failed", b->n_files, b->n_files == 1 ? "" : "s",
              b->n_written, b->n_failed);
      if (b->n_cancelled > 0)
        printf (", %u cancelled", b->n_cancelled);
      printf (" in %.2f s (%.2f files/s)\n", seconds, rate);
    }
  fflush (stdout);
}

int
sv_cli_slic_batch_run (SvCliSlicContext *ctx, SvCliSlicFile *const *files, guint n_files,
                       const SvCliSlicBatchOptions *options)
{
  g_autoptr (GError) error = NULL;
  Batch b = { 0 };
  GThread *reader, *writer;
  double t_start = sv_cli_now ();
  int status;

  b.ctx = ctx;
  b.files = files;
  b.n_files = n_files;
  b.options = options;
  b.loaded = g_async_queue_new ();
  b.load_slots = g_async_queue_new ();
  b.computed = g_async_queue_new ();
  b.write_slots = g_async_queue_new ();
  g_mutex_init (&b.print_lock);
  b.tty = isatty (STDERR_FILENO);
  g_async_queue_push (b.load_slots, &slot);
  g_async_queue_push (b.write_slots, &slot);
  if (b.tty)
    {
      ctx->progress = progress_cb;
      ctx->progress_data = &b;
    }

  /* The first file is read while the backend (a CUDA context) starts. */
  reader = g_thread_new ("sv-cli-reader", reader_thread, &b);
  writer = g_thread_new ("sv-cli-writer", writer_thread, &b);
  if (!sv_cli_slic_context_open_backend (ctx, &error))
    {
      sv_cli_report (error);
      g_atomic_int_set (&b.stopped, TRUE);
    }

  for (guint i = 0; i < n_files; i++)
    {
      SvCliSlicFile *file = g_async_queue_pop (b.loaded);

      g_async_queue_push (b.load_slots, &slot);
      if ((file->volume != NULL || file->streaming) && !skipping (&b))
        sv_cli_slic_file_compute (file, ctx, &file->error);
      g_clear_pointer (&file->volume, sv_volume_free);
      g_async_queue_pop (b.write_slots);
      g_async_queue_push (b.computed, file);
    }
  g_thread_join (reader);
  g_thread_join (writer);

  if (g_atomic_int_get (&b.stopped))
    status = 1;
  else
    {
      if (options->summary)
        print_totals (&b, sv_cli_now () - t_start);
      if (g_cancellable_is_cancelled (ctx->cancellable))
        {
          if (b.n_written == 0)
            sv_cli_error ("interrupted; no output written");
          else
            sv_cli_error ("interrupted; %u of %u files written, the others not", b.n_written,
                          n_files);
          status = 130;
        }
      else
        status = b.n_failed > 0 ? 1 : 0;
    }

  ctx->progress = NULL;
  g_mutex_clear (&b.print_lock);
  g_async_queue_unref (b.loaded);
  g_async_queue_unref (b.load_slots);
  g_async_queue_unref (b.computed);
  g_async_queue_unref (b.write_slots);
  return status;
}

/* supervox-cli slic: the batch's reports. The pipeline
 * (slic-batch-pipeline.c) tells when each file starts and finishes; this
 * prints its progress on a terminal, each file's line in input order, and
 * the totals. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-batch.h"

#include <stdio.h>
#include <unistd.h>

#include "cli-common.h"
#include "slic-batch-pipeline.h"
#include "supervox/sv-json-writer.h"

typedef struct
{
  SvCliSlicContext *ctx;
  guint n_files;
  const SvCliSlicBatchOptions *options;

  /* Progress (compute thread) and reports (writer thread) share stderr. */
  GMutex print_lock;
  gboolean tty;
  gboolean progress_shown;

  /* Written by the writer thread only; read after the pipeline returns. */
  guint n_written;
  guint n_failed;
  guint n_cancelled;
} Batch;

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
finished_cb (const SvCliSlicFile *file, gpointer user_data)
{
  Batch *b = user_data;

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
  else
    b->n_cancelled++;
  g_mutex_unlock (&b->print_lock);
}

void
sv_cli_slic_batch_print_totals (const SvCliSlicBatchTally *t, const char *backend, double seconds,
                                gboolean json)
{
  double rate = seconds > 0 ? t->written / seconds : 0;

  if (json)
    {
      g_autoptr (SvJsonWriter) w = sv_json_writer_new ();

      sv_json_writer_begin_object (w);
      sv_json_writer_key (w, "batch");
      sv_json_writer_begin_object (w);
      sv_json_writer_key (w, "files");
      sv_json_writer_int (w, t->files);
      sv_json_writer_key (w, "written");
      sv_json_writer_int (w, t->written);
      sv_json_writer_key (w, "failed");
      sv_json_writer_int (w, t->failed);
      sv_json_writer_key (w, "cancelled");
      sv_json_writer_int (w, t->cancelled);
      sv_json_writer_key (w, "backend");
      sv_json_writer_string (w, backend);
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
      printf ("%u file%s: %u written, %u failed", t->files, t->files == 1 ? "" : "s", t->written,
              t->failed);
      if (t->cancelled > 0)
        printf (", %u cancelled", t->cancelled);
      printf (" in %.2f s (%.2f files/s)\n", seconds, rate);
    }
  fflush (stdout);
}

static void
print_totals (Batch *b, double seconds)
{
  const SvCliSlicBatchTally t = { b->n_files, b->n_written, b->n_failed, b->n_cancelled };

  /* No backend was opened when every file streamed through devices that
   * opened beside the runs: those devices' class. */
  sv_cli_slic_batch_print_totals (&t,
                                  b->ctx->backend != NULL
                                      ? sv_backend_get_name (b->ctx->backend)
                                      : sv_backend_class_name (b->ctx->devices.klass),
                                  seconds, b->options->json);
}

int
sv_cli_slic_batch_run (SvCliSlicContext *ctx, SvCliSlicFile *const *files, guint n_files,
                       const SvCliSlicBatchOptions *options)
{
  g_autoptr (GError) error = NULL;
  Batch b = { 0 };
  SvCliSlicBatchEvents events = { NULL, finished_cb, &b };
  double t_start = sv_cli_now ();
  int status;

  b.ctx = ctx;
  b.n_files = n_files;
  b.options = options;
  g_mutex_init (&b.print_lock);
  b.tty = isatty (STDERR_FILENO);
  if (b.tty)
    {
      ctx->progress = progress_cb;
      ctx->progress_data = &b;
    }

  if (!sv_cli_slic_batch_pipeline_run (ctx, files, n_files, &events, &error))
    {
      sv_cli_report (error);
      status = 1;
    }
  else if (options->tally != NULL)
    {
      *options->tally = (SvCliSlicBatchTally){ n_files, b.n_written, b.n_failed, b.n_cancelled };
      status = g_cancellable_is_cancelled (ctx->cancellable) ? 130 : b.n_failed > 0 ? 1 : 0;
    }
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
  return status;
}

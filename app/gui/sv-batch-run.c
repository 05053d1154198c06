/* Supervox GUI: Run Batch…'s worker. One thread runs supervox-cli slic's
 * pipeline (which adds its reader and writer threads and opens its own
 * backend, apart from the window's job); what happens to each file goes
 * through a queue to a source on the main context, which applies it to
 * the main thread's copy of the files and tells the dialog. */
#define G_LOG_DOMAIN "sv-batch"

#include "sv-batch-run.h"

#include <string.h>

#include "cli-common.h"
#include "slic-batch-pipeline.h"
#include "slic-file.h"
#include "slic-mask.h"
#include "slic-outputs.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-sidecar.h"

#define END_OF_BATCH G_MAXUINT

/* One event, from a pipeline thread to the main thread. */
typedef struct
{
  guint index; /* END_OF_BATCH: the batch ended */
  SvBatchFileState state;
  guint iteration, n_iterations;
  gsize n_labels;
  double seconds;
  char *error; /* a failed file's, or why the batch could not run */
} Message;

struct _SvBatchRun
{
  SvBatchRunEvents events;
  GArray *files; /* SvBatchFile, the main thread's */
  gboolean running;

  /* The worker's, until it is joined. */
  GThread *thread;
  GCancellable *cancellable;
  SvCliSlicRequest request;
  SvCliSlicContext ctx;
  GPtrArray *cli_files; /* SvCliSlicFile */
  char *mask_path;
  char *backend_name;
  char *compression;
  guint8 *mask;

  GAsyncQueue *messages;
  GSource *source; /* ready while messages wait */
};

void
sv_batch_settings_clear (SvBatchSettings *settings)
{
  g_clear_pointer (&settings->mask, g_free);
  g_clear_pointer (&settings->backend, g_free);
}

char *
sv_batch_settings_command (const SvBatchSettings *settings, const char *const *inputs,
                           const char *output)
{
  GString *line = g_string_new (NULL);
  SvSlicCommand command = {
    .inputs = inputs,
    .output = output,
    .mask = settings->mask,
    .params = &settings->params,
    .channel = -1,
    .backend = settings->backend,
  };

  sv_slic_command_append (&command, line);
  return g_string_free (line, FALSE);
}

static void
message_free (Message *m)
{
  g_free (m->error);
  g_free (m);
}

/* Any pipeline thread. */
static void
post (SvBatchRun *run, Message *m)
{
  g_async_queue_push (run->messages, m);
  g_source_set_ready_time (run->source, 0);
}

static void
post_file (SvBatchRun *run, const SvCliSlicFile *file, SvBatchFileState state)
{
  Message *m = g_new0 (Message, 1);

  m->index = file->index;
  m->state = state;
  post (run, m);
}

static void
started_cb (const SvCliSlicFile *file, gpointer user_data)
{
  post_file (user_data, file, SV_BATCH_FILE_RUNNING);
}

static void
progress_cb (const SvCliSlicFile *file, guint iteration, guint n_iterations, gpointer user_data)
{
  Message *m = g_new0 (Message, 1);

  m->index = file->index;
  m->state = SV_BATCH_FILE_RUNNING;
  m->iteration = iteration;
  m->n_iterations = n_iterations;
  post (user_data, m);
}

/* A message on one line: the dialog's row has one. */
static char *
one_line (const char *message)
{
  char *line = g_strdup (message);

  g_strdelimit (line, "\r\n", ' ');
  return line;
}

static void
finished_cb (const SvCliSlicFile *file, gpointer user_data)
{
  Message *m = g_new0 (Message, 1);

  m->index = file->index;
  if (file->json != NULL)
    {
      m->state = SV_BATCH_FILE_DONE;
      m->n_labels = file->stats.n_labels;
      m->seconds = file->seconds[5];
    }
  else if (file->error != NULL && !g_error_matches (file->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      m->state = SV_BATCH_FILE_FAILED;
      m->error = one_line (file->error->message);
    }
  else
    m->state = SV_BATCH_FILE_STOPPED;
  post (user_data, m);
}

static gpointer
batch_thread (gpointer data)
{
  SvBatchRun *run = data;
  g_autoptr (GError) error = NULL;
  g_autofree const char **inputs = g_new0 (const char *, run->cli_files->len + 1);
  SvCliSlicBatchEvents events = { started_cb, finished_cb, run };
  Message *end = g_new0 (Message, 1);

  for (guint i = 0; i < run->cli_files->len; i++)
    inputs[i] = ((SvCliSlicFile *)run->cli_files->pdata[i])->input;
  /* The mask is read here, as supervox-cli reads it: it may be large. */
  if (run->mask_path != NULL
      && !sv_cli_slic_context_read_mask (&run->ctx, run->mask_path, inputs, FALSE, &run->mask,
                                         &error))
    end->error = one_line (error->message);
  else
    {
      run->ctx.mask = run->mask;
      if (!sv_cli_slic_batch_pipeline_run (&run->ctx, (SvCliSlicFile *const *)run->cli_files->pdata,
                                           run->cli_files->len, &events, &error))
        end->error = one_line (error->message);
    }
  g_clear_pointer (&run->ctx.backend, sv_backend_free);
  sv_run_devices_clear (&run->ctx.devices);
  end->index = END_OF_BATCH;
  post (run, end);
  return NULL;
}

static void
apply (SvBatchRun *run, Message *m)
{
  SvBatchFile *f;

  if (m->index == END_OF_BATCH)
    {
      /* Files that never finished (the batch could not run) did not run. */
      for (guint i = 0; i < run->files->len; i++)
        {
          f = &g_array_index (run->files, SvBatchFile, i);
          if (f->state == SV_BATCH_FILE_WAITING || f->state == SV_BATCH_FILE_RUNNING)
            {
              f->state = SV_BATCH_FILE_STOPPED;
              if (run->events.file_changed)
                run->events.file_changed (run, i, run->events.user_data);
            }
        }
      run->running = FALSE;
      if (run->events.finished)
        run->events.finished (run, m->error, run->events.user_data);
      return;
    }
  f = &g_array_index (run->files, SvBatchFile, m->index);
  /* Between stages (connectivity, writing) the bar stays where the
   * iterations left it. */
  if (!(m->state == SV_BATCH_FILE_RUNNING && f->state == SV_BATCH_FILE_RUNNING
        && m->n_iterations == 0))
    {
      f->iteration = m->iteration;
      f->n_iterations = m->n_iterations;
    }
  f->state = m->state;
  f->n_labels = m->n_labels;
  f->seconds = m->seconds;
  g_free (f->error);
  f->error = g_steal_pointer (&m->error);
  if (run->events.file_changed)
    run->events.file_changed (run, m->index, run->events.user_data);
}

static gboolean
messages_cb (gpointer data)
{
  SvBatchRun *run = data;
  Message *m;

  while ((m = g_async_queue_try_pop (run->messages)) != NULL)
    {
      apply (run, m);
      message_free (m);
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
messages_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  /* Ready again only when the next message comes. */
  g_source_set_ready_time (source, -1);
  return callback (user_data);
}

static GSourceFuncs messages_funcs = { NULL, NULL, messages_dispatch, NULL, NULL, NULL };

static gboolean
is_tiff_name (const char *path)
{
  g_autofree char *lower = g_ascii_strdown (path, -1);
  return g_str_has_suffix (lower, ".tif") || g_str_has_suffix (lower, ".tiff");
}

SvBatchRun *
sv_batch_run_start (const SvBatchSettings *settings, const char *const *inputs, const char *output,
                    const SvBatchRunEvents *events, GError **error)
{
  g_auto (GStrv) outputs = NULL;
  SvBatchRun *run;

  g_return_val_if_fail (settings != NULL && inputs != NULL && output != NULL, NULL);

  if (inputs[0] == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "no files: add the files to segment");
      return NULL;
    }
  if (!is_tiff_name (output))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "%s: label files are TIFFs: end the name in .tif", output);
      return NULL;
    }
  /* The checks supervox-cli makes before anything is computed. */
  outputs = sv_cli_slic_output_names (inputs, output, error);
  if (outputs == NULL
      || !sv_cli_slic_check_outputs (inputs, (const char *const *)outputs, settings->mask, error)
      || !sv_cli_slic_prepare_outputs ((const char *const *)outputs, sv_cli_output_kind (output),
                                       error))
    return NULL;

  run = g_new0 (SvBatchRun, 1);
  run->events = *events;
  run->files = g_array_new (FALSE, TRUE, sizeof (SvBatchFile));
  run->cli_files = g_ptr_array_new_with_free_func ((GDestroyNotify)sv_cli_slic_file_free);
  for (guint i = 0; inputs[i] != NULL; i++)
    {
      SvBatchFile f = { 0 };

      f.input = g_strdup (inputs[i]);
      f.output = g_strdup (outputs[i]);
      g_array_append_val (run->files, f);
      g_ptr_array_add (run->cli_files, sv_cli_slic_file_new (i, inputs[i], outputs[i]));
    }

  /* The request as supervox-cli reads the command line "Copy as command"
   * gives: every parameter, sigma and spacing as explicit values. */
  run->request.params = settings->params;
  run->request.n_sigma = settings->params.sigma_per_axis ? 3 : 1;
  memcpy (run->request.sigma, settings->params.sigma, sizeof run->request.sigma);
  run->request.n_spacing = 3;
  memcpy (run->request.spacing, settings->params.spacing, sizeof run->request.spacing);
  run->request.n_threads = sv_cli_n_cores ();

  run->mask_path = g_strdup (settings->mask);
  run->backend_name = g_strdup (settings->backend ? settings->backend : "auto");
  run->cancellable = g_cancellable_new ();
  run->ctx.request = &run->request;
  run->ctx.backend_name = run->backend_name;
  if (!sv_backend_choose (run->backend_name, &run->ctx.backend_choice, error)
      || !sv_cli_parse_compression (NULL, &run->ctx.write_options, error))
    {
      sv_batch_run_free (run);
      return NULL;
    }
  /* The devices supervox-cli uses without --devices: one. */
  sv_run_devices_init (&run->ctx.devices, run->ctx.backend_choice.device, NULL, -1, 0);
  run->compression = sv_tiff_write_options_to_string (&run->ctx.write_options);
  run->ctx.compression = run->compression;
  run->ctx.channel = -1;
  /* Notes belong in each sidecar, not on the terminal the window came from. */
  run->ctx.quiet = TRUE;
  run->ctx.cancellable = run->cancellable;
  run->ctx.progress = progress_cb;
  run->ctx.progress_data = run;

  run->messages = g_async_queue_new_full ((GDestroyNotify)message_free);
  run->source = g_source_new (&messages_funcs, sizeof (GSource));
  g_source_set_name (run->source, "sv-batch-messages");
  g_source_set_callback (run->source, messages_cb, run, NULL);
  g_source_attach (run->source, NULL);
  run->running = TRUE;
  run->thread = g_thread_new ("sv-batch", batch_thread, run);
  return run;
}

void
sv_batch_run_stop (SvBatchRun *run)
{
  g_return_if_fail (run != NULL);
  g_cancellable_cancel (run->cancellable);
}

void
sv_batch_run_free (SvBatchRun *run)
{
  if (run == NULL)
    return;
  /* Nothing half-written stays when the window closes during a batch. */
  if (run->cancellable)
    g_cancellable_cancel (run->cancellable);
  if (run->thread)
    g_thread_join (run->thread);
  if (run->source)
    {
      g_source_destroy (run->source);
      g_source_unref (run->source);
    }
  g_clear_pointer (&run->messages, g_async_queue_unref);
  for (guint i = 0; i < run->files->len; i++)
    {
      SvBatchFile *f = &g_array_index (run->files, SvBatchFile, i);
      g_free (f->input);
      g_free (f->output);
      g_free (f->error);
    }
  g_array_unref (run->files);
  g_ptr_array_unref (run->cli_files);
  g_clear_object (&run->cancellable);
  g_free (run->mask_path);
  g_free (run->backend_name);
  g_free (run->compression);
  g_free (run->mask);
  g_free (run);
}

gboolean
sv_batch_run_is_running (SvBatchRun *run)
{
  return run->running;
}

guint
sv_batch_run_get_n_files (SvBatchRun *run)
{
  return run->files->len;
}

const SvBatchFile *
sv_batch_run_get_file (SvBatchRun *run, guint index)
{
  g_return_val_if_fail (index < run->files->len, NULL);
  return &g_array_index (run->files, SvBatchFile, index);
}

double
sv_batch_run_get_fraction (SvBatchRun *run)
{
  double sum = 0;

  if (run->files->len == 0)
    return 0;
  for (guint i = 0; i < run->files->len; i++)
    {
      const SvBatchFile *f = &g_array_index (run->files, SvBatchFile, i);

      /* A stopped file did not get done: after Stop the bar says how far
       * the batch came. */
      if (f->state == SV_BATCH_FILE_DONE || f->state == SV_BATCH_FILE_FAILED)
        sum += 1;
      else if (f->state == SV_BATCH_FILE_RUNNING && f->n_iterations > 0)
        sum += (double)f->iteration / f->n_iterations;
    }
  return sum / run->files->len;
}

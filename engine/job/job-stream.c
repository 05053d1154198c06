/* Supervox engine: a streamed job's run. The volume stays in its file: each
 * request is planned and executed as supervox-cli plans and executes a run
 * (sv_run_plan, sv_run_execute) into a label file of the job's scratch
 * folder, which the result owns. The thread, the newest-wins rule and the
 * delivery are the in-memory job's (job.c, job-delivery.c). */
#define G_LOG_DOMAIN "sv-job"

#include "job-private.h"
#include "job-result.h"

#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-run-execute.h"

typedef struct
{
  SvJob *job;
  guint64 generation;
} StreamProgress;

static void
stream_progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  StreamProgress *p = user_data;

  sv__job_deliver_progress (p->job->sink, p->generation, stage, iteration, n_iterations);
}

void
sv__job_process_streamed (SvJob *job, const SvJobRequest *request, GCancellable *cancellable)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvTiffSlabReader) reader = NULL;
  g_autofree char *output = NULL;
  StreamProgress progress = { job, request->generation };
  const SvTiffSlabInfo *info;
  SvTiffReadOptions read_options;
  SvStreamOptions options;
  SvRunSource source;
  SvRunBudgets budgets = { 0 };
  SvRunPlan plan;
  SvRunJobSpec spec = { 0 };
  SvRunReport report = { 0 };
  SvJobResult *result;
  gint64 t0 = g_get_monotonic_time ();
  gboolean ok;

  /* No estimate: a newer request stops this run at once. */
  g_mutex_lock (&job->lock);
  memset (&job->run, 0, sizeof job->run);
  job->run.estimate = -1.0;
  g_mutex_unlock (&job->lock);

  sv_tiff_read_options_init_defaults (&read_options);
  read_options.channel = request->channel;
  reader = sv_tiff_slab_reader_open (job->stream_input, &read_options, &error);
  if (reader == NULL || !sv_backend_choose (request->backend, &budgets.backend, &error))
    {
      sv__job_deliver_error (job->sink, request->generation, g_steal_pointer (&error));
      return;
    }
  info = sv_tiff_slab_reader_info (reader);
  sv_run_source_from_header (&source, info);
  source.stays_in_file = TRUE;
  budgets.host_bytes = request->memory_limit;
  /* Room for the temporary files is checked before the run, as the CLI
   * does: a shortfall is one line at once, not a failure minutes in. */
  output = g_strdup_printf ("%s/labels-%u.tif", job->scratch_dir, job->n_streamed + 1);
  budgets.temp_measured = sv_stream_temp_free (output, &budgets.temp_free);
  budgets.output_name = job->scratch_dir;
  budgets.limit_name = "the window's memory budget";
  if (job->devices.klass == NULL)
    job->devices.klass = budgets.backend.device;
  sv_run_devices_measure (&job->devices, &budgets.backend, &budgets);
  if (!sv_run_plan (&source, &request->params, &budgets, &plan, &error))
    {
      sv__job_deliver_error (job->sink, request->generation, g_steal_pointer (&error));
      return;
    }
  /* The job's budget, not what the plan leaves of what is free. */
  plan.memory_limit = request->memory_limit;
  g_debug ("%s: %s", job->stream_input, plan.reason);

  job->n_streamed++;
  sv_stream_options_init_defaults (&options);
  options.channel = request->channel;
  options.n_threads = 0;
  options.label_spacing = request->params.spacing;
  options.progress = stream_progress_cb;
  options.user_data = &progress;
  options.cancellable = cancellable;
  spec.plan = &plan;
  spec.params = &request->params;
  spec.input = job->stream_input;
  spec.output = output;
  spec.stream = &options;
  spec.devices = &job->devices;
  ok = sv_run_execute (&spec, &report, &error);
  if (!ok)
    {
      /* A cancelled run leaves no file and delivers nothing. */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        sv__job_deliver_error (job->sink, request->generation, g_steal_pointer (&error));
      sv_run_report_clear (&report);
      return;
    }
  {
    const guint shape[3] = { info->nz, info->ny, info->nx };

    result = sv__job_result_new (request->generation, &request->params,
                                 sv_backend_class_name (report.ran_on), shape, info->spacing);
  }
  result->stats = report.stats;
  result->stream = report.stream;
  result->temp_planned = plan.temp_bytes;
  result->labels_path = g_steal_pointer (&output);
  result->seconds_total = (double)(g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  if (report.device_error != NULL && !job->fallback_reported)
    {
      result->fallback_message = g_strdup_printf (
          "%s failed (%s); streamed on the CPU instead",
          sv_backend_class_title (plan.backend, "the device"), report.device_error->message);
      job->fallback_reported = TRUE;
    }
  sv_run_report_clear (&report);
  sv__job_deliver_result (job->sink, result);
}

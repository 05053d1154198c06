/* Supervox GUI: the streamed SLIC runs of a volume larger than memory.
 * One run at a time on a worker thread writes its labels into the
 * window's scratch folder; a newer request cancels it and starts when it
 * has stopped (newest wins, as the in-memory job). A finished run's file
 * replaces the labels shown; a cancelled run leaves no file (the engine
 * writes through a temporary name), and a run finished after Stop or
 * after a newer request is removed unseen. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <glib/gstdio.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-run-plan.h"

#define TICK_MS 100

struct _SvOocRun
{
  SvWindow *window; /* a reference */
  guint64 generation;
  char *input, *output;
  SvSlicParams params;
  char *backend;       /* the panel's choice: auto, cpu or cuda */
  guint nz, ny, nx, nc;
  int channel; /* --channel: -1 every channel */
  SvSampleType sample_type;
  const char *ran_on;  /* the name of the backend whose slab steps ran */
  guint64 memory_limit;
  GCancellable *cancellable;
  gint stage, iteration, n_iterations; /* atomic: the progress */
  SvRunStats stats;
  SvStreamReport report;
  guint64 temp_planned; /* the plan's temporary files, for the sidecar */
  double seconds;
};

static void start_run (SvWindow *self);

int
sv_window_ooc_labels_channel (SvWindow *self)
{
  return self->ooc->labels_path ? self->ooc->labels_channel : self->segment_channel;
}

static void
run_free (SvOocRun *run)
{
  g_object_unref (run->window);
  g_free (run->input);
  g_free (run->output);
  g_free (run->backend);
  g_object_unref (run->cancellable);
  g_free (run);
}

static void
progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer data)
{
  SvOocRun *run = data;

  g_atomic_int_set (&run->stage, (gint)stage);
  g_atomic_int_set (&run->iteration, (gint)iteration);
  g_atomic_int_set (&run->n_iterations, (gint)n_iterations);
}

/* The plan of a streamed run of the volume: within the run's share of the
 * window's budget, on the backend the panel asks for, through device 0 as
 * `supervox-cli slic --backend cuda` streams. */
static void
plan_run (const SvOocRun *run, SvRunDevices *devices, SvRunPlan *plan)
{
  const SvRunSource source = { .nz = run->nz,
                               .ny = run->ny,
                               .nx = run->nx,
                               .nc = run->channel >= 0 ? 1 : run->nc,
                               .sample_type = run->sample_type,
                               .from_file = TRUE,
                               .stays_in_file = TRUE };
  SvRunBudgets budgets = { 0 };

  sv_backend_choose (run->backend, &budgets.backend, NULL);
  budgets.host_bytes = run->memory_limit;
  sv_run_devices_init (devices, budgets.backend.device, NULL, -1, 0);
  sv_run_devices_measure (devices, &budgets.backend, &budgets);
  /* The panel's parameters passed its checks; a Lab error would come
   * again from the run, in its words. */
  if (!sv_run_plan (&source, &run->params, &budgets, plan, NULL))
    memset (plan, 0, sizeof *plan);
  g_debug ("%s: %s", run->input, plan->reason);
}

static void
run_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  SvOocRun *run = data;
  g_autoptr (GError) error = NULL;
  SvStreamOptions options;
  SvRunDevices devices;
  SvRunJobSpec spec = { 0 };
  SvRunReport report;
  SvRunPlan plan;
  gint64 start = g_get_monotonic_time ();
  gboolean ok;

  sv_stream_options_init_defaults (&options);
  options.n_threads = 0;
  options.label_spacing = run->params.spacing;
  options.channel = run->channel;
  options.progress = progress_cb;
  options.user_data = run;
  options.cancellable = cancellable;
  plan_run (run, &devices, &plan);
  run->temp_planned = plan.temp_bytes;
  /* The window's budget, not what the plan leaves of what is free. */
  plan.memory_limit = run->memory_limit;
  spec.plan = &plan;
  spec.params = &run->params;
  spec.input = run->input;
  spec.output = run->output;
  spec.stream = &options;
  spec.devices = &devices;
  /* A GPU that fails (not bad data, not a cancel) hands the run to the
   * CPU under auto, as the in-memory job does. */
  ok = sv_run_execute (&spec, &report, &error);
  if (report.device_error != NULL)
    g_message ("the GPU failed (%s); streamed on the CPU instead", report.device_error->message);
  run->ran_on = report.ran_on != NULL ? sv_backend_class_name (report.ran_on) : sv_backend_class_name (sv_backend_cpu_class ());
  run->stats = report.stats;
  run->report = report.stream;
  sv_run_report_clear (&report);
  sv_run_devices_clear (&devices);
  g_debug ("streamed run on the %s backend: %s, %u slabs of %u slices", run->ran_on,
           ok ? "done" : error->message, run->report.n_slabs, run->report.slab_depth);
  if (!ok)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  run->seconds = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  g_task_return_boolean (task, TRUE);
}

/* The progress bar: the stage and the iteration, or the outcome. */
static void
show_progress (SvWindow *self)
{
  SvWindowOoc *ooc = self->ooc;
  SvOocRun *run = ooc->running;
  g_autofree char *text = NULL;
  double fraction = 0.0;

  if (run != NULL && !ooc->stopped)
    {
      SvStage stage = (SvStage)g_atomic_int_get (&run->stage);
      guint k = (guint)g_atomic_int_get (&run->iteration);
      guint n = (guint)g_atomic_int_get (&run->n_iterations);
      if (stage == SV_STAGE_ITERATE && n > 0)
        {
          text = g_strdup_printf ("Streaming SLIC: iteration %u of %u", MIN (k + 1, n), n);
          fraction = (double)k / n;
        }
      else if (stage == SV_STAGE_CONNECT || stage == SV_STAGE_DONE)
        {
          text = g_strdup ("Streaming SLIC: connectivity and labels");
          fraction = 1.0;
        }
      else
        text = g_strdup ("Streaming SLIC: preparing");
    }
  else if (ooc->stopped)
    text = g_strdup (ooc->labels ? "Stopped: the labels shown are of an earlier run" : "Stopped");
  else if (ooc->error)
    text = g_strdup_printf ("Failed: %s", ooc->error);
  else if (ooc->labels)
    {
      text = g_strdup_printf ("Done: %" G_GSIZE_FORMAT " supervoxels, streamed in %u slabs%s",
                              ooc->labels_stats.n_labels, ooc->labels_report.n_slabs,
                              sv_backend_class_is_device (
                                  sv_backend_class_lookup (ooc->labels_backend))
                                  ? " through the GPU"
                                  : "");
      fraction = 1.0;
    }
  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  gtk_progress_bar_set_text (self->progress_bar, text ? text : "");
}

static gboolean
tick_cb (gpointer data)
{
  SvWindow *self = data;

  if (self->ooc == NULL)
    return G_SOURCE_REMOVE;
  show_progress (self);
  if (self->ooc->running == NULL)
    {
      self->ooc->tick_source = 0;
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

/* A finished run's file becomes the labels shown. */
static void
show_labels (SvWindow *self, SvOocRun *run)
{
  SvWindowOoc *ooc = self->ooc;
  g_autoptr (GError) error = NULL;
  SvSliceCache *labels
      = sv_slice_cache_new (run->output, NULL, ooc->budget / SV_OOC_CACHE_SHARE, &error);
  g_autofree char *words = NULL;

  if (labels == NULL)
    {
      g_remove (run->output);
      ooc->error = g_strdup (error->message);
      return;
    }
  g_clear_pointer (&ooc->labels, sv_slice_cache_free);
  if (ooc->labels_path)
    g_remove (ooc->labels_path);
  g_free (ooc->labels_path);
  ooc->labels_path = g_strdup (run->output);
  ooc->labels = labels;
  /* A slice in the widest label type. */
  ooc->raw = g_realloc (ooc->raw, (gsize)ooc->shape->ny * ooc->shape->nx * sizeof (gint32));
  ooc->labels_params = run->params;
  ooc->labels_stats = run->stats;
  ooc->labels_report = run->report;
  ooc->labels_temp_planned = run->temp_planned;
  ooc->labels_backend = run->ran_on;
  ooc->labels_channel = run->channel;
  words = g_strdup_printf ("%" G_GSIZE_FORMAT " supervoxels · streamed from the file in %.1f s",
                           run->stats.n_labels, run->seconds);
  sv_window_set_status (self, self->result_label, words);
  sv_slice_view_source_changed (self->xy_view);
  sv_window_update_hover_status (self);
}

static void
run_done_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  SvWindow *self = SV_WINDOW (source);
  SvOocRun *run = g_task_get_task_data (G_TASK (res));
  SvWindowOoc *ooc = self->ooc;
  g_autoptr (GError) error = NULL;
  gboolean ok = g_task_propagate_boolean (G_TASK (res), &error);
  gboolean wanted = ooc != NULL && ooc->running == run && !ooc->stopped && !ooc->pending
                    && run->generation == ooc->generation;

  if (ok && !wanted)
    g_remove (run->output);
  if (ooc == NULL || ooc->running != run)
    {
      /* The volume closed meanwhile: its scratch folder goes once empty. */
      g_autofree char *dir = g_path_get_dirname (run->output);
      g_rmdir (dir);
      return;
    }
  ooc->running = NULL;
  if (wanted)
    {
      g_clear_pointer (&ooc->error, g_free);
      if (ok)
        show_labels (self, run);
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        ooc->error = g_strdup (error->message);
    }
  if (ooc->pending && !ooc->stopped)
    start_run (self);
  else
    gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", FALSE);
  show_progress (self);
}

static void
start_run (SvWindow *self)
{
  SvWindowOoc *ooc = self->ooc;
  g_autoptr (GTask) task = NULL;
  g_autoptr (GError) error = NULL;
  SvOocRun *run;

  ooc->pending = FALSE;
  if (ooc->scratch_dir == NULL)
    {
      ooc->scratch_dir = g_dir_make_tmp ("supervox-labels-XXXXXX", &error);
      if (ooc->scratch_dir == NULL)
        {
          g_free (ooc->error);
          ooc->error = g_strdup (error->message);
          return;
        }
    }
  run = g_new0 (SvOocRun, 1);
  run->window = g_object_ref (self);
  run->generation = ooc->generation;
  run->input = g_strdup (ooc->path);
  run->output
      = g_strdup_printf ("%s/labels-%" G_GUINT64_FORMAT ".tif", ooc->scratch_dir, ++ooc->n_runs);
  sv_params_panel_get_params (self->params_panel, &run->params);
  run->backend = g_strdup (sv_params_panel_get_backend (self->params_panel));
  run->nz = ooc->shape->nz;
  run->sample_type = ooc->shape->source_type;
  run->ny = ooc->shape->ny;
  run->nx = ooc->shape->nx;
  run->nc = ooc->shape->nc;
  run->channel = self->segment_channel;
  run->memory_limit = MAX (ooc->budget / SV_OOC_RUN_SHARE, 1);
  run->cancellable = g_cancellable_new ();
  ooc->running = run;
  task = g_task_new (self, run->cancellable, run_done_cb, NULL);
  g_task_set_task_data (task, run, (GDestroyNotify)run_free);
  g_task_set_name (task, "sv-window streamed run");
  g_task_run_in_thread (task, run_thread);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", TRUE);
  if (!ooc->tick_source)
    ooc->tick_source = g_timeout_add (TICK_MS, tick_cb, self);
  show_progress (self);
}

void
sv_window_ooc_submit (SvWindow *self)
{
  SvWindowOoc *ooc = self->ooc;

  ooc->generation++;
  ooc->stopped = FALSE;
  if (ooc->running != NULL)
    {
      /* It starts when the one running has stopped. */
      ooc->pending = TRUE;
      g_cancellable_cancel (ooc->running->cancellable);
      return;
    }
  start_run (self);
}

void
sv_window_ooc_stop (SvWindow *self)
{
  SvWindowOoc *ooc = self->ooc;

  ooc->stopped = TRUE;
  ooc->pending = FALSE;
  if (ooc->running != NULL)
    g_cancellable_cancel (ooc->running->cancellable);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", FALSE);
  show_progress (self);
}

gboolean
sv_window_ooc_busy (SvWindow *self)
{
  return self->ooc != NULL && self->ooc->running != NULL;
}

gboolean
sv_window_ooc_read_labels (SvWindowOoc *ooc, guint z, gint32 *out, GError **error)
{
  const SvTiffSlabInfo *info;
  gsize n = (gsize)ooc->shape->ny * ooc->shape->nx;

  if (ooc->labels == NULL)
    return FALSE;
  if (!sv_slice_cache_read (ooc->labels, z, ooc->raw, error))
    return FALSE;
  info = sv_slice_cache_info (ooc->labels);
  /* The label writer picks the narrowest type the labels fit. */
  for (gsize i = 0; i < n; i++)
    switch (info->sample_type)
      {
      case SV_SAMPLE_U8:
        out[i] = ((const guint8 *)ooc->raw)[i];
        break;
      case SV_SAMPLE_U16:
        out[i] = ((const guint16 *)ooc->raw)[i];
        break;
      case SV_SAMPLE_U32:
        out[i] = (gint32)((const guint32 *)ooc->raw)[i];
        break;
      case SV_SAMPLE_I32:
        out[i] = ((const gint32 *)ooc->raw)[i];
        break;
      default:
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                     "%s holds %s samples, not labels", ooc->labels_path,
                     sv_sample_type_to_string (info->sample_type));
        return FALSE;
      }
  return TRUE;
}

gboolean
sv_window_ooc_check_exportable (SvWindow *self, GError **error)
{
  SvWindowOoc *ooc = self->ooc;

  if (ooc->error)
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                 "the segmentation failed: %s", ooc->error);
  else if (ooc->labels == NULL || ooc->running != NULL || ooc->pending)
    g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                         "no labels for these parameters yet: wait for the streamed run to "
                         "finish");
  return ooc->error == NULL && ooc->labels != NULL && ooc->running == NULL && !ooc->pending;
}

gboolean
sv_window_ooc_export (SvWindow *self, const char *path, GError **error)
{
  SvWindowOoc *ooc = self->ooc;
  g_autoptr (GFile) from = NULL;
  g_autoptr (GFile) to = NULL;
  gint64 start;
  double write;

  if (!sv_window_ooc_check_exportable (self, error))
    return FALSE;
  /* The run's file is the export: copied in blocks, never held whole. */
  from = g_file_new_for_path (ooc->labels_path);
  to = g_file_new_for_path (path);
  start = g_get_monotonic_time ();
  if (!g_file_copy (from, to, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, error))
    return FALSE;
  write = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  {
    const SvRunStats *st = &ooc->labels_stats;
    SvSidecar sidecar = {
      .backend = ooc->labels_backend,
      .mode = "streaming",
      .memory_limit_bytes = ooc->budget,
      .slab_depth = ooc->labels_report.slab_depth,
      .connectivity_window = ooc->labels_report.connect_window,
      .temporary_bytes_planned = ooc->labels_temp_planned,
      .temporary_bytes = ooc->labels_report.kept_file_bytes + ooc->labels_report.labels_file_bytes,
      .seconds = { ooc->open_seconds, st->seconds_prepare, st->seconds_iterate, st->seconds_connect,
                   write, st->seconds_prepare + st->seconds_iterate + st->seconds_connect + write },
      .params = &ooc->labels_params,
    };
    return sv_window_write_sidecar (self, ooc->shape, st, path, &sidecar, error);
  }
}

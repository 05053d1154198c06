/* supervox-cli slic: the steps of one input — load the image, compute its
 * labels on the batch's backend, write the label TIFF and its sidecar. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-file.h"

#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "cli-common.h"
#include "slic-stream.h"
#include "stats-table.h"
#include "supervox/sv-error.h"
#include "supervox/sv-few-labels.h"
#include "supervox/sv-io.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-run-plan.h"
#include "supervox/sv-sidecar.h"
#include "sv-config.h"

SvCliSlicFile *
sv_cli_slic_file_new (guint index, const char *input, const char *output)
{
  SvCliSlicFile *file = g_new0 (SvCliSlicFile, 1);

  file->index = index;
  file->input = g_strdup (input);
  file->output = g_strdup (output);
  file->sidecar = sv_sidecar_path (output);
  file->notes = g_ptr_array_new_with_free_func (g_free);
  return file;
}

void
sv_cli_slic_file_free (SvCliSlicFile *file)
{
  if (file == NULL)
    return;
  g_free (file->input);
  g_free (file->zarr_image);
  g_free (file->output);
  g_free (file->sidecar);
  g_clear_pointer (&file->volume, sv_volume_free);
  g_clear_pointer (&file->labels, sv_labels_free);
  g_clear_pointer (&file->finish, sv_file_finish_abort);
  g_free (file->unit);
  g_free (file->json);
  g_ptr_array_unref (file->notes);
  g_clear_error (&file->error);
  g_free (file);
}

/* A batch reports each failure on one line that names the file. */
void
sv_cli_slic_propagate_naming (GError **error, GError *local, const char *path)
{
  if (strstr (local->message, path) == NULL)
    g_prefix_error (&local, "%s: ", path);
  g_propagate_error (error, local);
}

gboolean
sv_cli_slic_context_open_backend (SvCliSlicContext *ctx, GError **error)
{
  const SvBackendChoice *choice = &ctx->backend_choice;
  g_autoptr (GError) local = NULL;

  if (choice->wants_device && choice->device == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "no CUDA device: this build of %s has no CUDA backend", SV_CLI_PROGRAM);
      return FALSE;
    }
  if (choice->device != NULL)
    {
      ctx->backend = sv_backend_new_of_class (choice->device, &local);
      if (ctx->backend != NULL)
        return TRUE;
      if (choice->wants_device)
        {
          /* The backend's own message may already say it. */
          if (g_str_has_prefix (local->message, "no CUDA device"))
            g_propagate_error (error, g_steal_pointer (&local));
          else
            g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND, "no CUDA device: %s",
                         local->message);
          return FALSE;
        }
    }
  /* auto without a usable GPU is the ordinary case on most machines: the
   * CPU reference runs, and the summary line and the sidecar name it. */
  return (ctx->backend = sv_backend_new_of_class (sv_backend_cpu_class (), error)) != NULL;
}

static gboolean
check_mask_shape (const SvCliSlicFile *file, const SvCliSlicContext *ctx, GError **error)
{
  return ctx->mask_path == NULL
         || sv_run_check_mask (ctx->mask_path, ctx->mask_shape, file->input, file->shape, error);
}

gboolean
sv_cli_slic_file_load (SvCliSlicFile *file, const SvCliSlicContext *ctx, GError **error)
{
  g_autoptr (GError) local = NULL;
  SvVolume *volume;

  file->t_start = sv_cli_now ();
  g_debug ("%s: starts", file->input);
  if (!sv_cli_check_input (file->input, error) || !sv_cli_slic_file_plan (file, ctx, error))
    return FALSE;
  if (file->streaming)
    {
      file->streaming = check_mask_shape (file, ctx, error);
      return file->streaming;
    }
  volume = sv_cli_read_volume_channel (file->input, ctx->channel, &local);
  if (volume == NULL)
    {
      sv_cli_slic_propagate_naming (error, g_steal_pointer (&local), file->input);
      return FALSE;
    }
  file->volume = volume;
  file->shape[0] = volume->nz;
  file->shape[1] = volume->ny;
  file->shape[2] = volume->nx;
  file->nc = volume->nc;
  file->source_type = volume->source_type;
  file->unit = g_strdup (volume->unit);
  if (!check_mask_shape (file, ctx, error))
    {
      g_clear_pointer (&file->volume, sv_volume_free);
      return FALSE;
    }
  file->seconds[0] = sv_cli_now () - file->t_start;
  return TRUE;
}

/* Applies sigma and spacing now that the image's dimensionality is known:
 * a 2D image (one page) takes y,x lists (z is then 1 for spacing and 0 for
 * sigma) or z,y,x as scikit-image tolerates; a 3D volume needs z,y,x. */
gboolean
sv_cli_slic_resolve_axes (const SvCliSlicRequest *r, const char *input, const SvVolume *volume,
                          SvSlicParams *p, GPtrArray *notes, GError **error)
{
  gboolean is_2d = volume->nz == 1;

  *p = r->params;
  if (r->spacing_from_file && r->spacing_relative && !volume->spacing_from_file)
    {
      /* The window's default: a file with no spacing runs on ones there. */
      if (notes != NULL)
        g_ptr_array_add (notes, g_strdup_printf ("%s: no voxel spacing in the file (ImageJ or "
                                                 "OME metadata); --spacing file-relative uses "
                                                 "ones, as the window does",
                                                 input));
      p->spacing[0] = p->spacing[1] = p->spacing[2] = 1.0;
    }
  else if (r->spacing_from_file)
    {
      if (!volume->spacing_from_file)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                       "%s: no voxel spacing in the file (ImageJ or OME metadata) for --spacing %s",
                       input, r->spacing_relative ? "file-relative" : "file");
          return FALSE;
        }
      for (int i = is_2d ? 1 : 0; i < 3; i++)
        if (!(volume->spacing[i] > 0))
          {
            g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                         "%s: the file's voxel spacing %g,%g,%g is not > 0", input,
                         volume->spacing[0], volume->spacing[1], volume->spacing[2]);
            return FALSE;
          }
      if (r->spacing_relative)
        {
          /* A photo's z spacing means nothing: only y and x count. */
          const double in[3] = { is_2d ? volume->spacing[1] : volume->spacing[0],
                                 volume->spacing[1], volume->spacing[2] };
          sv_spacing_relative_to_finest (in, p->spacing);
        }
      else
        for (int i = 0; i < 3; i++)
          p->spacing[i] = volume->spacing[i];
      if (is_2d)
        p->spacing[0] = 1.0;
    }
  else if (r->n_spacing == 3)
    memcpy (p->spacing, r->spacing, sizeof p->spacing);
  else if (r->n_spacing == 2)
    {
      if (!is_2d)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--spacing needs 3 values z,y,x for a 3D volume (%u slices), got 2",
                       volume->nz);
          return FALSE;
        }
      p->spacing[0] = 1.0;
      p->spacing[1] = r->spacing[0];
      p->spacing[2] = r->spacing[1];
    }

  if (r->n_sigma == 1)
    {
      p->sigma_per_axis = FALSE;
      p->sigma[0] = p->sigma[1] = p->sigma[2] = r->sigma[0];
    }
  else if (r->n_sigma == 3)
    {
      p->sigma_per_axis = TRUE;
      memcpy (p->sigma, r->sigma, sizeof p->sigma);
    }
  else if (r->n_sigma == 2)
    {
      if (!is_2d)
        {
          g_set_error (
              error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
              "--sigma needs one value or 3 values z,y,x for a 3D volume (%u slices), got 2",
              volume->nz);
          return FALSE;
        }
      p->sigma_per_axis = TRUE;
      p->sigma[0] = 0.0;
      p->sigma[1] = r->sigma[0];
      p->sigma[2] = r->sigma[1];
    }
  return TRUE;
}

typedef struct
{
  const SvCliSlicContext *ctx;
  const SvCliSlicFile *file;
} ProgressAdapter;

static void
progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  ProgressAdapter *adapter = user_data;

  if (stage == SV_STAGE_ITERATE && n_iterations > 0)
    adapter->ctx->progress (adapter->file, iteration, n_iterations, adapter->ctx->progress_data);
  else
    adapter->ctx->progress (adapter->file, 0, 0, adapter->ctx->progress_data);
}

void
sv_cli_slic_note_fallback (const SvCliSlicFile *file, const SvCliSlicContext *ctx,
                           const SvRunPlan *plan, const SvRunReport *report)
{
  if (report->device_error == NULL || ctx->quiet)
    return;
  sv_cli_note ("%s: %s failed (%s); the CPU runs %s", file->input,
               sv_backend_class_display_name (plan->backend, "the device"),
               report->device_error->message,
               ctx->devices.broken ? "it and the files after it" : "it");
}

gboolean
sv_cli_slic_file_compute (SvCliSlicFile *file, SvCliSlicContext *ctx, GError **error)
{
  g_autoptr (GError) local = NULL;
  ProgressAdapter adapter = { ctx, file };
  SvRunControl control = { 0 };
  SvRunJobSpec spec = { 0 };
  SvRunReport report;
  SvRunSource source;
  SvRunBudgets budgets = { 0 };
  SvRunPlan plan;
  SvLabels *labels;
  gint32 *data;
  gboolean ok;

  if (file->streaming)
    return sv_cli_slic_file_stream (file, ctx, error);
  sv_run_source_from_volume (&source, file->volume, ctx->mask != NULL);
  budgets.backend = ctx->backend_choice;
  sv_run_devices_measure (&ctx->devices, &ctx->backend_choice, &budgets);
  if (!sv_cli_slic_resolve_axes (ctx->request, file->input, file->volume, &file->params,
                                 file->notes, &local)
      || !sv_slic_params_validate (&file->params, &local)
      || !sv_run_plan (&source, &file->params, &budgets, &plan, &local))
    {
      sv_cli_slic_propagate_naming (error, g_steal_pointer (&local), file->input);
      return FALSE;
    }

  control.n_threads = ctx->request->n_threads;
  control.stop_after_iteration = -1;
  control.progress = ctx->progress != NULL ? progress_cb : NULL;
  control.user_data = &adapter;
  control.cancellable = ctx->cancellable;

  spec.plan = &plan;
  spec.params = &file->params;
  spec.volume = file->volume;
  spec.mask = ctx->mask;
  spec.backend = ctx->backend;
  spec.control = &control;
  spec.devices = &ctx->devices;
  ok = sv_run_execute (&spec, &report, &local);
  sv_cli_slic_note_fallback (file, ctx, &plan, &report);
  if (ctx->progress != NULL)
    ctx->progress (file, 0, 0, ctx->progress_data);
  if (!ok)
    {
      sv_run_report_clear (&report);
      sv_cli_slic_propagate_naming (error, g_steal_pointer (&local), file->input);
      return FALSE;
    }
  file->stats = report.stats;
  file->backend = sv_backend_class_name (report.ran_on);
  file->seconds[1] = file->stats.seconds_prepare;
  file->seconds[2] = file->stats.seconds_iterate;
  file->seconds[3] = file->stats.seconds_connect;

  data = sv_backend_take_labels (sv_run_report_backend (&report, &spec),
                                 sv_volume_n_voxels (file->volume), error);
  sv_run_report_clear (&report);
  if (data == NULL)
    return FALSE;
  labels = g_new0 (SvLabels, 1);
  labels->nz = file->shape[0];
  labels->ny = file->shape[1];
  labels->nx = file->shape[2];
  labels->data = data;
  labels->unit = g_strdup (sv_label_calibration (file->volume->spacing, file->volume->unit,
                                                  file->params.spacing, labels->spacing));
  file->labels = labels;
  /* The backend borrows the volume until the next set_volume; it is not run
   * again before that, so the volume's memory can go to the next file now. */
  g_clear_pointer (&file->volume, sv_volume_free);
  return TRUE;
}

static char *
result_json (const SvCliSlicFile *file, const SvCliSlicContext *ctx)
{
  g_autoptr (GString) command = g_string_new (NULL);
  SvSlicCommand line = {
    .input = file->zarr_image != NULL ? file->zarr_image : file->input,
    .output = file->output,
    .mask = ctx->mask_path,
    .params = &file->params,
    .channel = ctx->channel,
    .zarr_image = file->zarr_image != NULL,
    .zarr_level = file->zarr_level,
    .compression = ctx->compression,
    /* A backend named on the command line is named again; auto has no option. */
    .backend = !ctx->backend_choice.is_auto ? ctx->backend_name : NULL,
  };
  SvSidecar sidecar = {
    .input = file->input,
    .output = file->output,
    .mask = ctx->mask_path,
    .shape = { file->shape[0], file->shape[1], file->shape[2] },
    .channels = file->nc,
    .channel = ctx->channel,
    .compression = ctx->compression,
    .sample_type = file->source_type,
    .spacing_unit = file->unit,
    .n_labels = file->stats.n_labels,
    .n_clusters = file->stats.n_clusters,
    .iterations = file->stats.iterations,
    .backend = file->backend,
    .mode = file->streamed ? "streaming" : "in-memory",
    .memory_limit_bytes = file->memory_limit,
    .peak_memory_bytes = sv_cli_peak_memory (),
    .slab_depth = file->streamed ? file->slab_depth : 0,
    .connectivity_window = file->connect_window,
    .temporary_bytes_planned = file->temp_planned,
    .temporary_bytes = file->temp_bytes,
    .mpi_ranks = ctx->ranks != NULL ? (guint)ctx->ranks->n_ranks : 0,
    .devices = file->streamed ? file->n_devices : 0,
    .peak_device_memory_bytes = file->device_peak_bytes,
    .resident_slabs = file->resident_slabs,
    .connectivity_on_device = file->connect_on_device,
    .connectivity_devices = file->connect_devices,
    .labels_on_device = file->labels_on_device,
    .slices_compressed_on_device = file->slices_compressed_on_device,
    .threads = ctx->request->n_threads,
    .params = &file->params,
  };

  sv_slic_command_append (&line, command);
  sidecar.command = command->str;
  sidecar.notes = (const char *const *)file->notes->pdata;
  sidecar.n_notes = file->notes->len;
  memcpy (sidecar.seconds, file->seconds, sizeof sidecar.seconds);
  return sv_sidecar_to_json (&sidecar);
}

/* Far fewer labels than asked for: why, and the options that would change
 * that, as the window says it. */
static void
add_few_labels_note (SvCliSlicFile *file, const SvCliSlicContext *ctx)
{
  const SvSlicParams *p = &file->params;
  gsize n_voxels = (gsize)file->shape[0] * file->shape[1] * file->shape[2];
  g_autoptr (GPtrArray) why = g_ptr_array_new ();
  g_autoptr (GPtrArray) tries = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GString) note = g_string_new (NULL);
  char buf[3][G_ASCII_DTOSTR_BUF_SIZE];
  SvFewLabelsHint hint;

  if (!sv_few_labels_hint (p, file->stats.n_labels, n_voxels, ctx->mask_path != NULL, &hint))
    return;
  if (hint.reasons & SV_FEW_LABELS_SMALL_SPACING)
    g_ptr_array_add (why, "the spacing is small");
  else if (hint.reasons & SV_FEW_LABELS_LOW_COMPACTNESS)
    g_ptr_array_add (why, "the compactness is low");
  if (hint.reasons & SV_FEW_LABELS_FEW_VOXELS)
    g_ptr_array_add (why, "there are few voxels per segment");
  if (hint.reasons & SV_FEW_LABELS_MASKED)
    g_ptr_array_add (why, "only voxels inside the mask are segmented");
  if (hint.tries & SV_FEW_LABELS_TRY_COMPACTNESS)
    g_ptr_array_add (tries, g_strdup_printf ("--compactness %s",
                                             sv_format_double (buf[0], hint.compactness)));
  if (hint.tries & SV_FEW_LABELS_TRY_RELATIVE_SPACING)
    g_ptr_array_add (tries, g_strdup_printf ("--spacing %s,%s,%s (relative to the finest axis)",
                                             sv_format_double (buf[0], hint.spacing[0]),
                                             sv_format_double (buf[1], hint.spacing[1]),
                                             sv_format_double (buf[2], hint.spacing[2])));
  if (hint.tries & SV_FEW_LABELS_TRY_NO_CONNECTIVITY)
    g_ptr_array_add (tries, g_strdup ("--no-enforce-connectivity to see the raw clusters"));

  g_string_printf (note, "%s: only %" G_GSIZE_FORMAT " %s for the %" G_GINT64_FORMAT
                   " segments asked for",
                   file->input, file->stats.n_labels,
                   file->stats.n_labels == 1 ? "label" : "labels", p->n_segments);
  for (guint i = 0; i < why->len; i++)
    g_string_append_printf (note, "%s%s", i == 0 ? " (" : ", ", (const char *)why->pdata[i]);
  g_string_append (note, why->len > 0 ? "); try " : "; try ");
  for (guint i = 0; i < tries->len; i++)
    g_string_append_printf (note, "%s%s",
                            i == 0               ? ""
                            : i + 1 == tries->len ? " or "
                                                  : ", ",
                            (const char *)tries->pdata[i]);
  g_ptr_array_add (file->notes, g_string_free (g_steal_pointer (&note), FALSE));
}

void
sv_cli_slic_file_print_result (const SvCliSlicFile *file, gboolean json, const char *how)
{
  g_autofree char *shape = NULL;

  if (json)
    {
      printf ("%s\n", file->json);
      return;
    }
  shape = sv_cli_format_shape (file->shape[0], file->shape[1], file->shape[2]);
  printf ("%s: %s, %" G_GSIZE_FORMAT " %s (%" G_GSIZE_FORMAT " %s) on %s%s in %.2f s -> %s\n",
          file->input, shape, file->stats.n_labels, file->stats.n_labels == 1 ? "label" : "labels",
          file->stats.n_clusters, file->stats.n_clusters == 1 ? "cluster" : "clusters",
          file->backend, how, file->seconds[5], file->output);
  /* The line first: a note is about the file it names. */
  fflush (stdout);
  for (guint i = 0; i < file->notes->len; i++)
    sv_cli_note ("%s", (const char *)file->notes->pdata[i]);
}

/* --stats: the table of the labels just written, from memory or, for a
 * streamed run, from the label file; intensities from the input file. */
static gboolean
write_stats (const SvCliSlicFile *file, const SvCliSlicContext *ctx, GError **error)
{
  SvCliStatsRequest request = { 0 };

  request.table_path = ctx->stats_path;
  request.has_background = TRUE;
  request.background = file->params.start_label - 1;
  request.channel = ctx->channel;
  request.n_threads = ctx->request->n_threads;
  return sv_cli_stats_write (&request, file->streamed ? file->output : NULL,
                             file->streamed ? NULL : file->labels, file->input, NULL, NULL, error);
}

gboolean
sv_cli_slic_file_write (SvCliSlicFile *file, const SvCliSlicContext *ctx, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *json = NULL;
  g_autofree char *text = NULL;
  g_autofree char *tmp = NULL;
  SvTiffWriteOptions write_options = ctx->write_options;
  double t = sv_cli_now ();

  write_options.n_threads = ctx->request->n_threads;
  /* Labels first (atomic in the engine; a streamed run wrote them), then
   * the sidecar through a temporary name; if the sidecar fails the labels
   * go too. */
  if (!file->streamed
      && !sv_tiff_write_labels_full (file->output, file->labels, &write_options, &local))
    {
      sv_cli_slic_propagate_naming (error, g_steal_pointer (&local), file->output);
      return FALSE;
    }
  file->seconds[4] = sv_cli_now () - t;
  file->seconds[5] = sv_cli_now () - file->t_start;

  add_few_labels_note (file, ctx);
  json = result_json (file, ctx);
  text = g_strconcat (json, "\n", NULL);
  tmp = sv_cli_write_temp_beside (file->sidecar, text, error);
  if (tmp == NULL || !sv_cli_commit_temp (tmp, file->sidecar, error))
    {
      g_unlink (file->output);
      return FALSE;
    }
  if (ctx->stats_path && !write_stats (file, ctx, error))
    {
      g_unlink (file->output);
      g_unlink (file->sidecar);
      return FALSE;
    }
  file->json = g_steal_pointer (&json);
  return TRUE;
}

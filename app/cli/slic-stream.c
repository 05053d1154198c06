/* supervox-cli slic: choosing between the in-memory and the streamed run,
 * and running the streamed one. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-stream.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli-common.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-memory.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-run-plan.h"
#include "supervox/sv-stream.h"
#include "sv-config.h"

#if SV_HAVE_PIXBUF
#include "sv-image-pixbuf.h"
#endif

gboolean
sv_cli_parse_size (const char *option, const char *text, guint64 *bytes, GError **error)
{
  return sv_parse_size (option, text, bytes, error);
}

guint64
sv_cli_memory_available (void)
{
  return sv_memory_available ();
}

guint64
sv_cli_peak_memory (void)
{
  struct rusage usage;

  if (getrusage (RUSAGE_SELF, &usage) != 0)
    return 0;
  /* Linux reports kibibytes. */
  return (guint64)usage.ru_maxrss * 1024;
}

/* The header of `input` as a slab reader, or NULL for a photo or a file
 * that the in-memory reader will report on. */
static SvTiffSlabReader *
open_header (const char *input, const SvCliSlicContext *ctx)
{
  g_autoptr (GError) local = NULL;
  SvTiffReadOptions options;

#if SV_HAVE_PIXBUF
  if (sv_image_is_photo (input))
    return NULL;
#endif
  sv_tiff_read_options_init_defaults (&options);
  options.channel = ctx->channel;
  return sv_tiff_slab_reader_open (input, &options, &local);
}

/* What this command lets a run use, measured now: --memory-limit or what
 * the system has free, beside what the process holds already; the GPUs;
 * the ranks; --slab-depth; the free space beside `output` (NULL: not
 * measured). */
static void
measure_budgets (const SvCliSlicContext *ctx, const char *output, SvRunBudgets *budgets)
{
  memset (budgets, 0, sizeof *budgets);
  budgets->backend = ctx->backend_choice;
  budgets->host_bytes = ctx->memory_limit > 0 ? ctx->memory_limit : sv_cli_memory_available ();
  budgets->host_held = sv_cli_peak_memory ();
  sv_run_devices_measure (&ctx->devices, &ctx->backend_choice, budgets);
  budgets->n_ranks = ctx->ranks != NULL ? ctx->ranks->n_ranks : 0;
  budgets->slab_depth = ctx->slab_depth;
  budgets->temp_measured = output != NULL && sv_stream_temp_free (output, &budgets->temp_free);
  budgets->output_name = output;
  budgets->limit_name = "--memory-limit";
}

/* The plan of a run of `params` on the file described by `info`, writing
 * `output` (NULL: the free space there is not checked). */
static gboolean
plan_file (const SvTiffSlabInfo *info, const SvCliSlicContext *ctx, const SvSlicParams *params,
           gboolean streams, const char *output, SvRunBudgets *budgets, SvRunPlan *plan,
           GError **error)
{
  SvRunSource source;

  sv_run_source_from_header (&source, info);
  source.mask = ctx->mask_path != NULL;
  source.mask_from_file = ctx->mask_streamed;
  source.stays_in_file = streams;
  measure_budgets (ctx, output, budgets);
  return sv_run_plan (&source, params, budgets, plan, error);
}

gboolean
sv_cli_slic_input_voxels (const char *input, const SvCliSlicContext *ctx, guint64 *voxels)
{
  g_autoptr (SvTiffSlabReader) reader = open_header (input, ctx);
  const SvTiffSlabInfo *info;

  if (reader == NULL)
    return FALSE;
  info = sv_tiff_slab_reader_info (reader);
  *voxels = (guint64)info->nz * info->ny * info->nx;
  return TRUE;
}

gboolean
sv_cli_slic_would_stream (const char *input, const SvCliSlicContext *ctx)
{
  g_autoptr (SvTiffSlabReader) reader = open_header (input, ctx);
  SvRunBudgets budgets;
  SvRunPlan plan;

  /* A plan that fails (the Lab rule) is reported when the file runs. */
  return reader != NULL
         && plan_file (sv_tiff_slab_reader_info (reader), ctx, &ctx->request->params, FALSE, NULL,
                       &budgets, &plan, NULL)
         && plan.mode == SV_RUN_STREAMED;
}

gboolean
sv_cli_slic_file_plan (SvCliSlicFile *file, const SvCliSlicContext *ctx, GError **error)
{
  g_autoptr (SvTiffSlabReader) reader = NULL;
  const SvTiffSlabInfo *info;
  SvRunBudgets budgets;
  SvRunPlan plan;

  file->streaming = FALSE;
  file->memory_limit = ctx->memory_limit > 0 ? ctx->memory_limit : sv_cli_memory_available ();
  g_debug ("%s: its header is read", file->input);
  reader = open_header (file->input, ctx);
  if (reader == NULL)
    return TRUE;
  g_debug ("%s: its header read, the run is planned", file->input);
  info = sv_tiff_slab_reader_info (reader);
  /* The Lab rule's error comes from the run, worded for the file, and so
   * does a lack of free space for its temporary files. */
  if (!plan_file (info, ctx, &ctx->request->params, FALSE, NULL, &budgets, &plan, NULL)
      || plan.mode != SV_RUN_STREAMED)
    return TRUE;
  g_debug ("%s: %s", file->input, plan.reason);

  file->streaming = TRUE;
  file->shape[0] = info->nz;
  file->shape[1] = info->ny;
  file->shape[2] = info->nx;
  file->nc = info->nc;
  file->source_type = info->sample_type;
  file->unit = g_strdup (info->unit);
  if (info->note != NULL && !ctx->quiet)
    sv_cli_note ("%s", info->note);
  (void)error;
  return TRUE;
}

static void
progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  SvCliSlicFile *file = user_data;
  const SvCliSlicContext *ctx = file->stream_ctx;

  if (stage == SV_STAGE_ITERATE && n_iterations > 0)
    ctx->progress (file, iteration, n_iterations, ctx->progress_data);
  else
    ctx->progress (file, 0, 0, ctx->progress_data);
}

gboolean
sv_cli_slic_file_stream (SvCliSlicFile *file, SvCliSlicContext *ctx, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (SvTiffSlabReader) reader = NULL;
  SvTiffReadOptions read_options;
  SvStreamOptions options;
  SvVolume header = { 0 };
  SvRunJobSpec spec = { 0 };
  SvRunReport report;
  SvRunBudgets budgets;
  SvRunPlan plan = { 0 };
  gboolean ok;

  /* The axes resolve as for a loaded volume: only its header counts. */
  sv_tiff_read_options_init_defaults (&read_options);
  read_options.channel = ctx->channel;
  reader = sv_tiff_slab_reader_open (file->input, &read_options, &local);
  if (reader != NULL)
    {
      const SvTiffSlabInfo *info = sv_tiff_slab_reader_info (reader);
      header.nz = info->nz;
      header.ny = info->ny;
      header.nx = info->nx;
      header.nc = info->nc;
      memcpy (header.spacing, info->spacing, sizeof header.spacing);
      header.spacing_from_file = info->spacing_from_file;
    }
  ok = reader != NULL
       && sv_cli_slic_resolve_axes (ctx->request, file->input, &header, &file->params, file->notes,
                                    &local)
       && sv_slic_params_validate (&file->params, &local)
       && plan_file (sv_tiff_slab_reader_info (reader), ctx, &file->params, TRUE, file->output,
                     &budgets, &plan, &local);
  /* Under mpirun a rank that cannot open the file stops the others here. */
  if (!sv_stream_ranks_agree (ctx->ranks, ok, &local))
    {
      sv_cli_slic_propagate_naming (error, g_steal_pointer (&local), file->input);
      return FALSE;
    }
  g_clear_pointer (&reader, sv_tiff_slab_reader_free);

  sv_stream_options_init_defaults (&options);
  options.channel = ctx->channel;
  options.n_threads = ctx->request->n_threads;
  options.slab_depth = ctx->slab_depth;
  options.write_options = ctx->write_options;
  options.write_options.n_threads = ctx->request->n_threads;
  /* An uncalibrated file's labels carry the run's spacing. */
  options.label_spacing = file->params.spacing;
  file->stream_ctx = ctx;
  options.progress = ctx->progress != NULL ? progress_cb : NULL;
  options.user_data = file;
  options.cancellable = ctx->cancellable;
  options.ranks = ctx->ranks;
  options.mask_path = ctx->mask_streamed ? ctx->mask_path : NULL;
  options.finish_later = ctx->finish_later;

  spec.plan = &plan;
  spec.params = &file->params;
  spec.mask = ctx->mask;
  spec.input = file->input;
  spec.output = file->output;
  spec.stream = &options;
  spec.devices = &ctx->devices;
  memset (&file->stats, 0, sizeof file->stats);
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
  file->n_devices = report.n_devices;
  file->device_peak_bytes = report.stream.device_peak_bytes;
  file->resident_slabs = report.stream.resident_slabs;
  file->connect_on_device = report.stream.connect_on_device;
  file->connect_devices = report.stream.connect_devices;
  file->labels_on_device = report.stream.labels_on_device;
  file->slices_compressed_on_device = report.stream.slices_compressed_on_device;
  file->streamed = TRUE;
  file->temp_planned = plan.temp_bytes;
  file->temp_bytes = report.stream.kept_file_bytes + report.stream.labels_file_bytes;
  file->slab_depth = report.stream.slab_depth;
  file->connect_window = report.stream.connect_window;
  file->finish = g_steal_pointer (&report.stream.finish);
  sv_run_report_clear (&report);
  file->seconds[1] = file->stats.seconds_prepare;
  file->seconds[2] = file->stats.seconds_iterate;
  file->seconds[3] = file->stats.seconds_connect;
  return TRUE;
}

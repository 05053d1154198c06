/* supervox-cli slic: the batch job's command line. Each input is loaded,
 * segmented and written as a uint32 label TIFF with its JSON sidecar by
 * slic-file.c, many inputs in one process by slic-batch.c. */
#define G_LOG_DOMAIN "sv-cli"

#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-sidecar.h"
#include "supervox/sv-params.h"
#include "slic-batch.h"
#include "slic-batch-lanes.h"
#include "slic-file.h"
#include "slic-mask.h"
#include "slic-outputs.h"
#include "slic-mpi.h"
#include "slic-stream.h"
#include "slic-zarr.h"
#include "sv-config.h"

/* Rows of the engine's parameter table that the options can hold. */
#define SV_CLI_MAX_PARAMS 24

typedef struct
{
  char *output;
  char *mask;
  char *backend;
  char *threads;
  char *compression;
  char *channel;
  char *memory_limit;
  char *slab_depth;
  char *devices;
  char *device_memory_limit;
  char *stats;
  char *output_format;
  char *zarr_labels;
  char *zarr_level;
  char *zarr_chunks;
  gboolean json;
  /* The parameters' options, by row of sv_slic_param_fields: the text of
   * a value, or a switch (its --no- form clears it; convert2lab's sets off[],
   * since auto is neither). */
  char *text[SV_CLI_MAX_PARAMS];
  gboolean on[SV_CLI_MAX_PARAMS];
  gboolean off[SV_CLI_MAX_PARAMS];
  char **inputs;
} SlicOptions;

static void
slic_options_clear (SlicOptions *o)
{
  g_free (o->output);
  for (guint i = 0; i < SV_CLI_MAX_PARAMS; i++)
    g_free (o->text[i]);
  g_free (o->mask);
  g_free (o->backend);
  g_free (o->threads);
  g_free (o->compression);
  g_free (o->channel);
  g_free (o->memory_limit);
  g_free (o->slab_depth);
  g_free (o->devices);
  g_free (o->device_memory_limit);
  g_free (o->stats);
  g_free (o->output_format);
  g_free (o->zarr_labels);
  g_free (o->zarr_level);
  g_free (o->zarr_chunks);
  g_strfreev (o->inputs);
}

/* --sigma and --spacing, read by the engine's table; the front-end rules
 * (y,x in 2D, the file's spacing) apply per input (slic-file.c). */
static gboolean
parse_list (const SvParamField *f, const char *text, SvCliSlicRequest *r, GError **error)
{
  double values[3];
  guint n = 0;
  int word = -1;

  if (!sv_slic_param_parse_list (f, text, values, &n, &word, error))
    return FALSE;
  if (f->type == SV_PARAM_SIGMA)
    {
      memcpy (r->sigma, values, n * sizeof (double));
      r->n_sigma = n;
    }
  else if (word >= 0)
    {
      /* One of the table's words: "file" or "file-relative". */
      r->spacing_from_file = TRUE;
      r->spacing_relative = g_strcmp0 (text, "file-relative") == 0;
    }
  else
    {
      memcpy (r->spacing, values, n * sizeof (double));
      r->n_spacing = n;
    }
  return TRUE;
}

/* The parameters, row by row of the engine's table. */
static gboolean
parse_params (const SlicOptions *o, SvCliSlicRequest *r, GError **error)
{
  SvSlicParams *p = &r->params;
  guint n = 0;
  const SvParamField *fields = sv_slic_param_fields (&n);

  for (guint i = 0; i < n; i++)
    {
      const SvParamField *f = &fields[i];
      g_autofree char *option = g_strconcat ("--", f->option, NULL);
      gboolean ok = TRUE;

      switch (f->type)
        {
        case SV_PARAM_INT64:
        case SV_PARAM_INT:
        case SV_PARAM_DOUBLE:
        case SV_PARAM_WORD:
          ok = o->text[i] == NULL || sv_slic_param_parse (f, o->text[i], p, error);
          break;
        case SV_PARAM_SIGMA:
        case SV_PARAM_TRIPLE:
          ok = o->text[i] == NULL || parse_list (f, o->text[i], r, error);
          break;
        case SV_PARAM_BOOL:
          *(gboolean *)((char *)p + f->offset) = o->on[i];
          break;
        case SV_PARAM_CONVERT2LAB:
          if (o->on[i] && o->off[i])
            {
              g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "%s and --no-%s cannot be used together", option, f->option);
              return FALSE;
            }
          *(SvConvert2Lab *)((char *)p + f->offset) = o->on[i]    ? SV_CONVERT2LAB_YES
                                                      : o->off[i] ? SV_CONVERT2LAB_NO
                                                                  : SV_CONVERT2LAB_AUTO;
          break;
        }
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static gboolean
parse_request (const SlicOptions *o, SvCliSlicRequest *r, GError **error)
{
  gint64 v;

  sv_slic_params_init_defaults (&r->params);
  r->n_threads = sv_cli_n_cores ();
  if (!parse_params (o, r, error))
    return FALSE;
  if (o->threads != NULL)
    {
      if (!sv_cli_parse_int64 ("--threads", o->threads, 1, 4096, &v, error))
        return FALSE;
      r->n_threads = (int)v;
    }
  return TRUE;
}

/* --devices all: a batch's lanes take every GPU; one file takes as many
 * as its size gains from (sv_run_devices_worth), and says so when that is
 * fewer. A list names exactly the GPUs to use. */
static void
all_devices_worth (const SlicOptions *o, SvCliSlicContext *ctx)
{
  guint64 voxels = 0;
  guint most = 0, n_all;

  if (g_strcmp0 (ctx->devices.list, "all") != 0)
    return;
  if (g_strv_length (o->inputs) == 1 && sv_cli_slic_input_voxels (o->inputs[0], ctx, &voxels))
    most = sv_run_devices_worth (voxels);
  if (!sv_run_devices_all_to_list (&ctx->devices, most, &n_all) || most == 0 || most >= n_all
      || o->json)
    return;
  sv_cli_note ("--devices all: %u of the %u GPUs for %s; a GPU more would cost more to start "
               "than it saves below about 1.5·10⁹ voxels a GPU (list them to use them all)",
               most, n_all, o->inputs[0]);
}

/* --memory-limit, --slab-depth, --devices and --device-memory-limit. */
static gboolean
parse_streaming (const SlicOptions *o, SvCliSlicContext *ctx, GError **error)
{
  gint64 v;

  if (o->memory_limit != NULL
      && !sv_cli_parse_size ("--memory-limit", o->memory_limit, &ctx->memory_limit, error))
    return FALSE;
  if (o->slab_depth != NULL)
    {
      if (!sv_cli_parse_int64 ("--slab-depth", o->slab_depth, 1, G_MAXINT32, &v, error))
        return FALSE;
      ctx->slab_depth = (guint)v;
    }
  guint64 device_limit = 0;
  const char *local_rank = g_getenv ("OMPI_COMM_WORLD_LOCAL_RANK");

  if (o->device_memory_limit != NULL
      && !sv_cli_parse_size ("--device-memory-limit", o->device_memory_limit, &device_limit, error))
    return FALSE;
  /* Under mpirun each rank drives the GPU of its rank on the host. */
  sv_run_devices_init (&ctx->devices, ctx->backend_choice.device, o->devices,
                       sv_cli_mpi_active () && local_rank != NULL ? atoi (local_rank) : -1,
                       device_limit);
  if (ctx->backend_choice.device != NULL && !sv_cli_mpi_active ())
    all_devices_worth (o, ctx);
  /* Nothing has started the CUDA driver yet (MPI_Init does not), and
   * this process runs only these devices. */
  if (ctx->backend_choice.device != NULL && g_getenv ("SV_ALL_DEVICES_VISIBLE") == NULL
      && sv_run_devices_show_only_used (&ctx->devices))
    {
      /* And they start now, while the first file's header, statistics and
       * seeds are read; a batch's lanes open theirs, a device each. */
      if (sv_cli_slic_batch_lanes (ctx, g_strv_length (o->inputs)) < 2
          && sv_run_devices_start (&ctx->devices, &ctx->backend_choice))
        g_debug ("devices: opening beside the run");
    }
  return TRUE;
}

/* --stats goes with one input and one label file, and overwrites neither
 * an input nor the labels or their sidecar. */
static gboolean
check_stats_output (const SlicOptions *o, const char *const *inputs, const char *labels,
                    SvCliOutputKind kind, GError **error)
{
  g_autofree char *sidecar = labels != NULL ? sv_sidecar_path (labels) : NULL;

  if (labels == NULL || kind != SV_CLI_OUTPUT_FILE || inputs[1] != NULL || sv_cli_mpi_active ())
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "--stats needs one input and -o OUT.tif (run 'supervox-cli stats' on each "
                   "label file of a batch)");
      return FALSE;
    }
  if (g_strcmp0 (o->stats, labels) == 0 || g_strcmp0 (o->stats, sidecar) == 0
      || g_strcmp0 (o->stats, inputs[0]) == 0 || sv_cli_same_file (o->stats, inputs[0])
      || (o->mask != NULL && sv_cli_same_file (o->stats, o->mask)))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s: the table would overwrite an input or the labels", o->stats);
      return FALSE;
    }
  return sv_cli_check_output (o->stats, error);
}

static int
run_slic (SlicOptions *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files
      = g_ptr_array_new_with_free_func ((GDestroyNotify)sv_cli_slic_file_free);
  g_auto (GStrv) outputs = NULL;
  g_autofree guint8 *mask = NULL;
  const char *const *inputs = (const char *const *)o->inputs;
  SvCliSlicRequest request = { 0 };
  SvCliSlicContext ctx = { 0 };
  SvCliSlicBatchOptions batch = { 0 };
  SvCliOutputKind kind;
  g_autofree char *compression = NULL;
  SvCliSlicZarr zarr = { 0 };
  int status;

  if (o->inputs == NULL || o->inputs[0] == NULL)
    {
      sv_cli_error ("slic: missing input file (try '%s slic --help')", SV_CLI_PROGRAM);
      return 1;
    }
  if (o->output == NULL && o->zarr_labels == NULL)
    {
      sv_cli_error ("slic: missing -o OUT.tif (try '%s slic --help')", SV_CLI_PROGRAM);
      return 1;
    }

  ctx.backend_name = o->backend != NULL ? o->backend : "auto";
  if (!sv_backend_choose (ctx.backend_name, &ctx.backend_choice, NULL))
    {
      sv_cli_error ("--backend must be cpu, cuda or auto, got %s", ctx.backend_name);
      return 1;
    }
  ctx.channel = -1;
  zarr.output_format = o->output_format;
  zarr.labels_name = o->zarr_labels;
  zarr.level = o->zarr_level;
  zarr.chunks = o->zarr_chunks;
  if (!parse_request (o, &request, &error)
      || !sv_cli_slic_zarr_setup (&zarr, inputs, &o->output, o->compression, &compression, &error)
      || !sv_cli_parse_compression (zarr.zarr_output ? NULL : o->compression, &ctx.write_options,
                                    &error)
      || !sv_cli_parse_channel (o->channel, &ctx.channel, &error)
      || !parse_streaming (o, &ctx, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (zarr.zarr_output)
    ctx.write_options.zarr = &zarr.write;
  else
    compression = sv_tiff_write_options_to_string (&ctx.write_options);
  ctx.compression = compression;
  ctx.request = &request;

  /* Everything that would make a file overwrite another is refused before
   * anything is computed. */
  kind = sv_cli_output_kind (o->output);
  outputs = sv_cli_slic_output_names (inputs, o->output, &error);
  /* DIR/ and templates name TIFFs; --output-format zarr makes them stores. */
  for (guint i = 0; zarr.zarr_output && outputs != NULL && outputs[i] != NULL; i++)
    if (g_str_has_suffix (outputs[i], ".tif"))
      {
        char *name = g_strconcat (outputs[i], "", NULL);
        strcpy (name + strlen (name) - 4, ".zarr");
        g_free (outputs[i]);
        outputs[i] = name;
      }
  if (outputs == NULL
      || !sv_cli_slic_check_outputs (inputs, (const char *const *)outputs, o->mask, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  /* Under mpirun the mask is read slab by slab with the image, as when
   * every input streams. */
  if (o->mask != NULL
      && !sv_cli_slic_context_read_mask (&ctx, o->mask, inputs, sv_cli_mpi_active (), &mask,
                                         &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if ((zarr.write.image_label
           ? !sv_cli_slic_zarr_check_labels (&zarr, inputs[0], &error)
           : !sv_cli_slic_prepare_outputs ((const char *const *)outputs, kind, &error))
      || (o->stats != NULL && !check_stats_output (o, inputs, outputs[0], kind, &error)))
    {
      sv_cli_report (error);
      return 1;
    }

  for (guint i = 0; inputs[i] != NULL; i++)
    {
      g_autofree char *source = sv_cli_slic_zarr_input (&zarr, inputs[i], &error);
      SvCliSlicFile *file;

      if (source == NULL)
        {
          sv_cli_report (error);
          sv_cli_slic_zarr_done (&zarr);
          return 1;
        }
      file = sv_cli_slic_file_new (i, source, outputs[i]);
      /* The sidecar's command names the image and its level as given. */
      if (zarr.level != NULL && sv_zarr_is_store (inputs[i]))
        {
          file->zarr_image = g_strdup (inputs[i]);
          file->zarr_level = zarr.level_index;
        }
      g_ptr_array_add (files, file);
    }
  ctx.request = &request;
  ctx.mask_path = o->mask;
  ctx.mask = mask;
  ctx.quiet = o->json;
  ctx.stats_path = o->stats;
  ctx.cancellable = sv_cli_watch_interrupts ();
  batch.json = o->json;
  batch.summary = kind != SV_CLI_OUTPUT_FILE;
  if (sv_cli_mpi_active ())
    status = sv_cli_slic_mpi_run (&ctx, (SvCliSlicFile *const *)files->pdata, files->len, &batch);
  else
    status = sv_cli_slic_batch_run (&ctx, (SvCliSlicFile *const *)files->pdata, files->len, &batch);
  g_clear_pointer (&ctx.backend, sv_backend_free);
  sv_run_devices_clear (&ctx.devices);
  sv_cli_slic_zarr_done (&zarr);
  return status;
}

/* The parameters' entries, from the engine's table; `names` keeps the
 * --no- names alive. */
static void
add_param_entries (SlicOptions *o, GArray *entries, GPtrArray *names)
{
  guint n = 0;
  const SvParamField *fields = sv_slic_param_fields (&n);
  SvSlicParams defaults;

  g_assert (n <= SV_CLI_MAX_PARAMS);
  sv_slic_params_init_defaults (&defaults);
  for (guint i = 0; i < n; i++)
    {
      const SvParamField *f = &fields[i];
      GOptionEntry e = { f->option, 0, 0, G_OPTION_ARG_STRING, &o->text[i], f->help, f->arg };
      GOptionEntry no = { NULL, 0, 0, G_OPTION_ARG_NONE, &o->on[i], f->help_no, NULL };

      if (f->type == SV_PARAM_BOOL || f->type == SV_PARAM_CONVERT2LAB)
        {
          e.arg = G_OPTION_ARG_NONE;
          e.arg_data = &o->on[i];
          if (f->type == SV_PARAM_BOOL)
            o->on[i] = *(const gboolean *)((const char *)&defaults + f->offset);
          /* A switch's --no- form clears it, and the last one given wins;
           * convert2lab's is a third state (auto is neither). */
          if (f->type == SV_PARAM_CONVERT2LAB)
            no.arg_data = &o->off[i];
          else
            no.flags = G_OPTION_FLAG_REVERSE;
        }
      g_array_append_val (entries, e);
      if (f->flags & SV_PARAM_FLAG_NEGATABLE)
        {
          no.long_name = g_strconcat ("no-", f->option, NULL);
          g_ptr_array_add (names, (gpointer)no.long_name);
          g_array_append_val (entries, no);
        }
    }
}

int
sv_cli_cmd_slic (int argc, char **argv)
{
  SlicOptions o = { 0 };
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GArray) entries = g_array_new (TRUE, TRUE, sizeof (GOptionEntry));
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int status;
  const GOptionEntry output[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
      "Label TIFF to write (uint32), an OME-Zarr store OUT.zarr, or a folder, or a name template "
      "(see below)",
      "OUT.tif|OUT.zarr|DIR/|TEMPLATE" },
  };
  const GOptionEntry rest[] = {
    { "mask", 0, 0, G_OPTION_ARG_FILENAME, &o.mask,
      "Only voxels where MASK.tif is nonzero are segmented", "MASK.tif" },
    { "backend", 0, 0, G_OPTION_ARG_STRING, &o.backend, "cpu, cuda or auto (default auto)",
      "NAME" },
    { "threads", 0, 0, G_OPTION_ARG_STRING, &o.threads, "CPU threads (default: all cores)", "N" },
    { "channel", 0, 0, G_OPTION_ARG_STRING, &o.channel,
      "Segment only this channel of a multichannel image, counted from 0 (default: all)", "N" },
    { "compression", 0, 0, G_OPTION_ARG_STRING, &o.compression, SV_CLI_COMPRESSION_HELP,
      "CODEC[:LEVEL]" },
    { "memory-limit", 0, 0, G_OPTION_ARG_STRING, &o.memory_limit,
      "Memory the run may use, e.g. 512M or 2G (default: what the system has free); a "
      "volume that needs more is streamed from its file in z-slabs, with the same labels",
      "SIZE" },
    { "slab-depth", 0, 0, G_OPTION_ARG_STRING, &o.slab_depth,
      "Stream in slabs of N slices whatever the memory (for tests)", "N" },
    { "devices", 0, 0, G_OPTION_ARG_STRING, &o.devices,
      "With the CUDA backend: stream the slabs over these GPUs, e.g. 0,1, or all (as many as "
      "the volume gains from; a batch: a file on each GPU at once) (default: one; under mpirun "
      "the local rank's)",
      "LIST" },
    { "device-memory-limit", 0, 0, G_OPTION_ARG_STRING, &o.device_memory_limit,
      "GPU memory a run may use per device, e.g. 2G (default: what the GPU has free); a volume "
      "that needs more is streamed through the GPU in z-slabs",
      "SIZE" },
    { "stats", 0, 0, G_OPTION_ARG_FILENAME, &o.stats,
      "Also write the supervoxel table (as 'supervox-cli stats LABELS --image IN' does)",
      "TABLE.csv" },
    { "output-format", 0, 0, G_OPTION_ARG_STRING, &o.output_format,
      "tiff or zarr (default: zarr for -o NAME.zarr, else tiff); a Zarr store is an OME-Zarr "
      "image (NGFF 0.4) and takes --compression none, zlib[:LEVEL|:runs], gzip, zstd or "
      "blosc[:CNAME][:LEVEL][:noshuffle|shuffle|bitshuffle] (default blosc:zstd:1, no shuffle)",
      "FORMAT" },
    { "zarr-level", 0, 0, G_OPTION_ARG_STRING, &o.zarr_level,
      "Resolution level of an OME-Zarr input, 0 the finest (default 0)", "N" },
    { "zarr-chunks", 0, 0, G_OPTION_ARG_STRING, &o.zarr_chunks,
      "Chunk shape of a label store, in slices, rows and columns (default 64,64,64, with fewer "
      "slices where a row of chunks would pass 256 MiB)",
      "Z,Y,X" },
    { "zarr-labels", 0, 0, G_OPTION_ARG_STRING, &o.zarr_labels,
      "Write the labels into the OME-Zarr input as IN.zarr/labels/NAME (NGFF image-label), "
      "instead of -o",
      "NAME" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json,
      "Print the results as JSON, one object per line (see below)", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.inputs, NULL, NULL },
  };

  /* The start of the command, for the timeline of a debug log. */
  g_debug ("slic: starts");
  g_array_append_vals (entries, output, G_N_ELEMENTS (output));
  add_param_entries (&o, entries, names);
  g_array_append_vals (entries, rest, G_N_ELEMENTS (rest));

  context = g_option_context_new ("IN.tif… -o OUT.tif|DIR/|TEMPLATE");
  g_option_context_set_summary (
      context, "Computes SLIC supervoxels (scikit-image's algorithm and parameters) and writes a\n"
               "uint32 label TIFF plus OUT.json with the parameters, backend and timings."
#if SV_HAVE_PIXBUF
               "\nIN may also be a PNG or JPEG photo, read as the GUI reads it."
#endif
  );
  g_option_context_set_description (
      context, "Many inputs run in one process on one backend: the next file is read and the\n"
               "previous one written while the current one computes.\n"
               "\n"
               "  -o OUT.tif      one input: its labels go to OUT.tif, the sidecar to OUT.json\n"
               "  -o DIR/         each input's labels go to DIR/{stem}.tif (and DIR/{stem}.json);\n"
               "                  DIR is created when missing (an existing folder needs no '/')\n"
               "  -o TEMPLATE     a name with placeholders, e.g. 'out/{stem}_labels.tif';\n"
               "                  missing folders are created\n"
               "      {stem}      the input's file name without its extension (and '.ome')\n"
               "      {name}      the input's file name\n"
               "      {dir}       the input's folder ('.' for a bare name)\n"
               "      {index}     the input's position, from 1, zero-padded (01 … 20)\n"
               "\n"
               "Spacing: supervox-cli's default is ones, as scikit-image's slic; the window's\n"
               "is file-relative (the file's spacing over its finest axis, ones for a file\n"
               "with none, with a note). The label file carries the input's own spacing and\n"
               "unit when it has them, whatever --spacing weighed the distances.\n"
               "\n"
               "Two inputs that would write the same file, or an output that is an input,\n"
               "are refused before anything is computed. A file that fails is reported on\n"
               "one line of stderr that names it, leaves no output, and the others go on.\n"
               "Under --backend auto a CUDA failure reruns that file on the CPU (after any\n"
               "CUDA error but running out of GPU memory, the files after it too).\n"
               "\n"
               "Exit status: 0 when every file was written; 1 when any failed or the command\n"
               "line is wrong; 130 when interrupted (files finished before stay, the file\n"
               "being written and those after it leave nothing).\n"
               "\n"
               "A note about a file (a fallback taken, far fewer labels than asked for and\n"
               "what to try) follows its line on stderr; the exit status stays 0.\n"
               "\n"
               "--json prints each written file's result (the same object as its sidecar,\n"
               "notes in its \"notes\" list and not on stderr) on its own line. With -o DIR/ or a "
               "template it also prints a line\n"
               "{\"input\", \"output\", \"error\"} for each failed file and, last, the totals:\n"
               "{\"batch\": {\"files\", \"written\", \"failed\", \"cancelled\", \"backend\",\n"
               "\"seconds\", \"files_per_second\"}}; without --json the totals are one line.");
  g_option_context_add_main_entries (context, (const GOptionEntry *)entries->data, NULL);
  if (!sv_cli_parse_options (context, "slic", &argc, &argv))
    status = 1;
  else
    status = run_slic (&o);
  slic_options_clear (&o);
  g_debug ("slic: ends");
  return status;
}

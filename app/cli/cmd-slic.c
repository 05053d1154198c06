/* supervox-cli slic: the batch job's command line. Each input is loaded,
 * segmented and written as a uint32 label TIFF with its JSON sidecar by
 * slic-file.c, many inputs in one process by slic-batch.c. */
#define G_LOG_DOMAIN "sv-cli"

#include <string.h>

#include "cli-common.h"
#include "error.h"
#include "io.h"
#include "params.h"
#include "slic-batch.h"
#include "slic-file.h"
#include "slic-outputs.h"
#include "slic-mpi.h"
#include "slic-stream.h"
#include "sv-config.h"

typedef struct
{
  char *output;
  char *n_segments;
  char *compactness;
  char *max_num_iter;
  char *sigma;
  char *spacing;
  char *min_size_factor;
  char *max_size_factor;
  char *start_label;
  char *mask;
  char *backend;
  char *threads;
  char *compression;
  char *channel;
  char *memory_limit;
  char *slab_depth;
  gboolean enforce_connectivity;
  gboolean slic_zero;
  gboolean convert2lab;
  gboolean no_convert2lab;
  gboolean json;
  char **inputs;
} SlicOptions;

static void
slic_options_clear (SlicOptions *o)
{
  g_free (o->output);
  g_free (o->n_segments);
  g_free (o->compactness);
  g_free (o->max_num_iter);
  g_free (o->sigma);
  g_free (o->spacing);
  g_free (o->min_size_factor);
  g_free (o->max_size_factor);
  g_free (o->start_label);
  g_free (o->mask);
  g_free (o->backend);
  g_free (o->threads);
  g_free (o->compression);
  g_free (o->channel);
  g_free (o->memory_limit);
  g_free (o->slab_depth);
  g_strfreev (o->inputs);
}

static gboolean
parse_request (const SlicOptions *o, SvCliSlicRequest *r, GError **error)
{
  SvSlicParams *p = &r->params;
  gint64 v;

  sv_slic_params_init_defaults (p);
  r->n_threads = sv_cli_n_cores ();

  if (o->n_segments != NULL)
    {
      if (!sv_cli_parse_int64 ("--n-segments", o->n_segments, 1, G_MAXINT64, &v, error))
        return FALSE;
      p->n_segments = v;
    }
  if (o->compactness != NULL)
    {
      if (!sv_cli_parse_double ("--compactness", o->compactness, &p->compactness, error))
        return FALSE;
      if (!(p->compactness > 0))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--compactness must be > 0, got %s", o->compactness);
          return FALSE;
        }
    }
  if (o->max_num_iter != NULL)
    {
      if (!sv_cli_parse_int64 ("--max-num-iter", o->max_num_iter, 0, G_MAXINT32, &v, error))
        return FALSE;
      p->max_num_iter = (int)v;
    }
  if (o->sigma != NULL)
    {
      if (!sv_cli_parse_double_list ("--sigma", o->sigma, r->sigma, 3, &r->n_sigma, error))
        return FALSE;
      for (guint i = 0; i < r->n_sigma; i++)
        if (r->sigma[i] < 0)
          {
            g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                         "--sigma must be >= 0, got %s", o->sigma);
            return FALSE;
          }
    }
  if (o->spacing != NULL)
    {
      if (g_strcmp0 (o->spacing, "file") == 0)
        r->spacing_from_file = TRUE;
      else if (g_strcmp0 (o->spacing, "file-relative") == 0)
        r->spacing_from_file = r->spacing_relative = TRUE;
      else
        {
          if (!sv_cli_parse_double_list ("--spacing", o->spacing, r->spacing, 3, &r->n_spacing,
                                         error))
            return FALSE;
          if (r->n_spacing < 2)
            {
              g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "--spacing expects z,y,x (or y,x for a 2D image), 'file' or "
                           "'file-relative', got %s",
                           o->spacing);
              return FALSE;
            }
          for (guint i = 0; i < r->n_spacing; i++)
            if (!(r->spacing[i] > 0))
              {
                g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                             "--spacing must be > 0 on every axis, got %s", o->spacing);
                return FALSE;
              }
        }
    }
  if (o->min_size_factor != NULL)
    {
      if (!sv_cli_parse_double ("--min-size-factor", o->min_size_factor, &p->min_size_factor,
                                error))
        return FALSE;
      if (p->min_size_factor < 0)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--min-size-factor must be >= 0, got %s", o->min_size_factor);
          return FALSE;
        }
    }
  if (o->max_size_factor != NULL)
    {
      if (!sv_cli_parse_double ("--max-size-factor", o->max_size_factor, &p->max_size_factor,
                                error))
        return FALSE;
      if (!(p->max_size_factor > 0))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--max-size-factor must be > 0, got %s", o->max_size_factor);
          return FALSE;
        }
    }
  if (o->start_label != NULL)
    {
      if (g_strcmp0 (o->start_label, "0") == 0)
        p->start_label = 0;
      else if (g_strcmp0 (o->start_label, "1") == 0)
        p->start_label = 1;
      else
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--start-label must be 0 or 1, got %s", o->start_label);
          return FALSE;
        }
    }
  if (o->threads != NULL)
    {
      if (!sv_cli_parse_int64 ("--threads", o->threads, 1, 4096, &v, error))
        return FALSE;
      r->n_threads = (int)v;
    }
  if (o->convert2lab && o->no_convert2lab)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "--convert2lab and --no-convert2lab cannot be used together");
      return FALSE;
    }
  p->convert2lab = o->convert2lab      ? SV_CONVERT2LAB_YES
                   : o->no_convert2lab ? SV_CONVERT2LAB_NO
                                       : SV_CONVERT2LAB_AUTO;
  p->enforce_connectivity = o->enforce_connectivity;
  p->slic_zero = o->slic_zero;
  return TRUE;
}

/* Reads --mask once for the whole batch; every input must have its shape. */
static guint8 *
read_mask (const char *path, guint shape[3], GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree guint8 *mask = NULL;

  if (!sv_cli_check_input (path, error))
    return NULL;
  mask = sv_tiff_read_mask (path, &shape[0], &shape[1], &shape[2], &local);
  if (mask == NULL)
    {
      if (strstr (local->message, path) == NULL)
        g_prefix_error (&local, "%s: ", path);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  if (memchr (mask, 1, (gsize)shape[0] * shape[1] * shape[2]) == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "%s: the mask is empty: no voxel is inside it", path);
      return NULL;
    }
  return g_steal_pointer (&mask);
}

/* --memory-limit and --slab-depth. */
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
  return TRUE;
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
  int status;

  if (o->inputs == NULL || o->inputs[0] == NULL)
    {
      sv_cli_error ("slic: missing input file (try '%s slic --help')", SV_CLI_PROGRAM);
      return 1;
    }
  if (o->output == NULL)
    {
      sv_cli_error ("slic: missing -o OUT.tif (try '%s slic --help')", SV_CLI_PROGRAM);
      return 1;
    }

  ctx.backend_name = o->backend != NULL ? o->backend : "auto";
  if (g_strcmp0 (ctx.backend_name, "cpu") != 0 && g_strcmp0 (ctx.backend_name, "cuda") != 0
      && g_strcmp0 (ctx.backend_name, "auto") != 0)
    {
      sv_cli_error ("--backend must be cpu, cuda or auto, got %s", ctx.backend_name);
      return 1;
    }
  ctx.channel = -1;
  if (!parse_request (o, &request, &error)
      || !sv_cli_parse_compression (o->compression, &ctx.write_options, &error)
      || !sv_cli_parse_channel (o->channel, &ctx.channel, &error)
      || !parse_streaming (o, &ctx, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  compression = sv_tiff_write_options_to_string (&ctx.write_options);
  ctx.compression = compression;

  /* Everything that would make a file overwrite another is refused before
   * anything is computed. */
  kind = sv_cli_output_kind (o->output);
  outputs = sv_cli_slic_output_names (inputs, o->output, &error);
  if (outputs == NULL
      || !sv_cli_slic_check_outputs (inputs, (const char *const *)outputs, o->mask, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (o->mask != NULL)
    {
      mask = read_mask (o->mask, ctx.mask_shape, &error);
      if (mask == NULL)
        {
          sv_cli_report (error);
          return 1;
        }
    }
  if (!sv_cli_slic_prepare_outputs ((const char *const *)outputs, kind, &error))
    {
      sv_cli_report (error);
      return 1;
    }

  for (guint i = 0; inputs[i] != NULL; i++)
    g_ptr_array_add (files, sv_cli_slic_file_new (i, inputs[i], outputs[i]));
  ctx.request = &request;
  ctx.mask_path = o->mask;
  ctx.mask = mask;
  ctx.quiet = o->json;
  ctx.cancellable = sv_cli_watch_interrupts ();
  batch.json = o->json;
  batch.summary = kind != SV_CLI_OUTPUT_FILE;
  if (sv_cli_mpi_active ())
    status = sv_cli_slic_mpi_run (&ctx, (SvCliSlicFile *const *)files->pdata, files->len, o->json);
  else
    status = sv_cli_slic_batch_run (&ctx, (SvCliSlicFile *const *)files->pdata, files->len, &batch);
  g_clear_pointer (&ctx.backend, sv_backend_free);
  return status;
}

int
sv_cli_cmd_slic (int argc, char **argv)
{
  SlicOptions o = { .enforce_connectivity = TRUE };
  g_autoptr (GOptionContext) context = NULL;
  int status;
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
      "Label TIFF to write (uint32), or a folder, or a name template (see below)",
      "OUT.tif|DIR/|TEMPLATE" },
    { "n-segments", 0, 0, G_OPTION_ARG_STRING, &o.n_segments,
      "Approximate number of supervoxels (default 100)", "N" },
    { "compactness", 0, 0, G_OPTION_ARG_STRING, &o.compactness,
      "Intensity vs. space balance, > 0 (default 10)", "C" },
    { "max-num-iter", 0, 0, G_OPTION_ARG_STRING, &o.max_num_iter, "Iterations (default 10)", "N" },
    { "sigma", 0, 0, G_OPTION_ARG_STRING, &o.sigma,
      "Gaussian pre-smoothing: one value (divided by spacing) or z,y,x (y,x in 2D)", "S|Z,Y,X" },
    { "spacing", 0, 0, G_OPTION_ARG_STRING, &o.spacing,
      "Voxel size z,y,x (y,x in 2D); 'file' for the file's ImageJ/OME spacing; 'file-relative' "
      "for it divided by its finest axis, as the window does (default ones)",
      "Z,Y,X|file|file-relative" },
    { "enforce-connectivity", 0, 0, G_OPTION_ARG_NONE, &o.enforce_connectivity,
      "Relabel connected components (default)", NULL },
    { "no-enforce-connectivity", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE,
      &o.enforce_connectivity, "Keep the raw SLIC labels", NULL },
    { "min-size-factor", 0, 0, G_OPTION_ARG_STRING, &o.min_size_factor,
      "Merge components smaller than this x N/K voxels (default 0.5)", "F" },
    { "max-size-factor", 0, 0, G_OPTION_ARG_STRING, &o.max_size_factor,
      "Split components larger than this x N/K voxels (default 3)", "F" },
    { "slic-zero", 0, 0, G_OPTION_ARG_NONE, &o.slic_zero, "SLIC-zero (SLICO)", NULL },
    { "start-label", 0, 0, G_OPTION_ARG_STRING, &o.start_label, "First label, 0 or 1 (default 1)",
      "0|1" },
    { "mask", 0, 0, G_OPTION_ARG_FILENAME, &o.mask,
      "Only voxels where MASK.tif is nonzero are segmented", "MASK.tif" },
    { "convert2lab", 0, 0, G_OPTION_ARG_NONE, &o.convert2lab,
      "Convert RGB to CIELAB (default for 3-channel 2D images)", NULL },
    { "no-convert2lab", 0, 0, G_OPTION_ARG_NONE, &o.no_convert2lab, "Never convert to CIELAB",
      NULL },
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
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json,
      "Print the results as JSON, one object per line (see below)", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.inputs, NULL, NULL },
    { NULL }
  };

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
               "--json prints each written file's result (the same object as its sidecar) on\n"
               "its own line. With -o DIR/ or a template it also prints a line\n"
               "{\"input\", \"output\", \"error\"} for each failed file and, last, the totals:\n"
               "{\"batch\": {\"files\", \"written\", \"failed\", \"cancelled\", \"backend\",\n"
               "\"seconds\", \"files_per_second\"}}; without --json the totals are one line.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!sv_cli_parse_options (context, "slic", &argc, &argv))
    status = 1;
  else
    status = run_slic (&o);
  slic_options_clear (&o);
  return status;
}

/* supervox-cli connect: the connectivity step alone on a label TIFF, as
 * scikit-image's _enforce_label_connectivity_cython. */
#define G_LOG_DOMAIN "sv-cli"

#include <stdio.h>

#include "cli-common.h"
#include "supervox/sv-connectivity.h"
#include "supervox/sv-io.h"
#include "supervox/sv-params.h"
#include "supervox/sv-volume.h"

typedef struct
{
  char *output;
  char *min_size;
  char *max_size;
  char *start_label;
  char *rule;
  char *compression;
  char **inputs;
} ConnectOptions;

/* --connectivity-rule is the slic parameter's row of the engine's table. */
static const SvParamField *
rule_field (void)
{
  guint n = 0;
  const SvParamField *fields = sv_slic_param_fields (&n);

  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (fields[i].name, "connectivity_rule") == 0)
      return &fields[i];
  g_return_val_if_reached (NULL);
}

static int
run_connect (ConnectOptions *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) in = NULL;
  g_autoptr (SvLabels) out = NULL;
  gint64 min_size = 0, max_size = 0, start_label = 1, n;
  SvSlicParams params;
  SvTiffWriteOptions write_options;
  const char *input;

  if (o->inputs == NULL || o->inputs[0] == NULL)
    {
      sv_cli_error ("connect: missing input file (try '%s connect --help')", SV_CLI_PROGRAM);
      return 1;
    }
  if (o->inputs[1] != NULL)
    {
      sv_cli_error ("connect: expected one input file, got %u (try '%s connect --help')",
                    g_strv_length (o->inputs), SV_CLI_PROGRAM);
      return 1;
    }
  input = o->inputs[0];
  if (o->output == NULL)
    {
      sv_cli_error ("connect: missing -o OUT.tif (try '%s connect --help')", SV_CLI_PROGRAM);
      return 1;
    }
  if (o->min_size == NULL || o->max_size == NULL)
    {
      sv_cli_error ("connect: missing %s N (try '%s connect --help')",
                    o->min_size == NULL ? "--min-size" : "--max-size", SV_CLI_PROGRAM);
      return 1;
    }
  if (!sv_cli_parse_int64 ("--min-size", o->min_size, 0, G_MAXINT64, &min_size, &error)
      || !sv_cli_parse_int64 ("--max-size", o->max_size, 1, G_MAXINT64, &max_size, &error)
      || !sv_cli_parse_compression (o->compression, &write_options, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (o->start_label != NULL)
    {
      if (g_strcmp0 (o->start_label, "0") == 0)
        start_label = 0;
      else if (g_strcmp0 (o->start_label, "1") == 0)
        start_label = 1;
      else
        {
          sv_cli_error ("--start-label must be 0 or 1, got %s", o->start_label);
          return 1;
        }
    }
  sv_slic_params_init_defaults (&params);
  if (o->rule != NULL && !sv_slic_param_parse (rule_field (), o->rule, &params, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (!sv_cli_check_input (input, &error) || !sv_cli_check_output (o->output, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (sv_cli_same_file (input, o->output))
    {
      sv_cli_error ("%s: the output would overwrite the input", o->output);
      return 1;
    }

  in = sv_tiff_read_labels (input, &error);
  if (in == NULL)
    {
      sv_cli_report_file (input, error);
      return 1;
    }
  out = sv_labels_new (in->nz, in->ny, in->nx, &error);
  if (out == NULL)
    {
      sv_cli_report (error);
      return 1;
    }
  for (int i = 0; i < 3; i++)
    out->spacing[i] = in->spacing[i];
  out->unit = g_strdup (in->unit);
  n = sv_connectivity_enforce_threads (in->data, in->nz, in->ny, in->nx, min_size, max_size,
                                       (int)start_label, params.connectivity_rule, out->data,
                                       sv_cli_n_cores ());
  if (!sv_tiff_write_labels_full (o->output, out, &write_options, &error))
    {
      sv_cli_report_file (o->output, error);
      return 1;
    }
  printf ("%s: %" G_GINT64_FORMAT " labels -> %s\n", input, n, o->output);
  return 0;
}

int
sv_cli_cmd_connect (int argc, char **argv)
{
  ConnectOptions o = { 0 };
  g_autoptr (GOptionContext) context = NULL;
  int status;
  const GOptionEntry entries[]
      = { { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output, "Label TIFF to write", "OUT.tif" },
          { "min-size", 0, 0, G_OPTION_ARG_STRING, &o.min_size,
            "Components smaller than this merge into a neighbour", "N" },
          { "max-size", 0, 0, G_OPTION_ARG_STRING, &o.max_size,
            "Components stop growing at this size (are split)", "N" },
          { "start-label", 0, 0, G_OPTION_ARG_STRING, &o.start_label,
            "First label, 0 or 1 (default 1); input voxels equal to start_label - 1 are background",
            "0|1" },
          { "connectivity-rule", 0, 0, G_OPTION_ARG_STRING, &o.rule, rule_field ()->help,
            rule_field ()->arg },
          { "compression", 0, 0, G_OPTION_ARG_STRING, &o.compression, SV_CLI_COMPRESSION_HELP,
            "CODEC[:LEVEL]" },
          { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.inputs, NULL, NULL },
          { NULL } };

  context = g_option_context_new ("LABELS.tif -o OUT.tif --min-size N --max-size N");
  g_option_context_set_summary (
      context, "Relabels connected components (6-neighbourhood), merges small ones and splits\n"
               "large ones, as scikit-image's _enforce_label_connectivity_cython (with\n"
               "--connectivity-rule legacy, exactly as scikit-image <= 0.26 does).");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!sv_cli_parse_options (context, "connect", &argc, &argv))
    status = 1;
  else
    status = run_connect (&o);
  g_free (o.output);
  g_free (o.min_size);
  g_free (o.max_size);
  g_free (o.start_label);
  g_free (o.rule);
  g_free (o.compression);
  g_strfreev (o.inputs);
  return status;
}

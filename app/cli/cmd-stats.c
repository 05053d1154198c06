/* supervox-cli stats: the per-supervoxel table of a label TIFF (and an
 * image), and optionally which supervoxels touch, as CSV. */
#define G_LOG_DOMAIN "sv-cli"

#include <stdio.h>

#include "cli-common.h"
#include "stats-table.h"

typedef struct
{
  char *output;
  char *image;
  char *adjacency;
  char *channel;
  char *background;
  gboolean no_background;
  char *threads;
  char *slab_depth;
  char **inputs;
} StatsOptions;

/* Refuses an output that is one of the inputs or the other output. */
static gboolean
check_paths (const StatsOptions *o, GError **error)
{
  const char *ins[2] = { o->inputs[0], o->image };
  const char *outs[2] = { o->output, o->adjacency };

  for (guint i = 0; i < 2; i++)
    if (outs[i] != NULL && !sv_cli_check_output (outs[i], error))
      return FALSE;
  if (o->adjacency != NULL
      && (g_strcmp0 (o->output, o->adjacency) == 0 || sv_cli_same_file (o->output, o->adjacency)))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "-o and --adjacency name the same file %s", o->output);
      return FALSE;
    }
  for (guint i = 0; i < 2; i++)
    for (guint j = 0; j < 2; j++)
      if (ins[i] != NULL && outs[j] != NULL
          && (g_strcmp0 (ins[i], outs[j]) == 0 || sv_cli_same_file (ins[i], outs[j])))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "%s: the output would overwrite an input", outs[j]);
          return FALSE;
        }
  return TRUE;
}

static int
run_stats (StatsOptions *o)
{
  g_autoptr (GError) error = NULL;
  SvCliStatsRequest request = { 0 };
  const char *input;
  gsize n_rows = 0, n_pairs = 0;
  gint64 v;

  if (o->inputs == NULL || o->inputs[0] == NULL)
    {
      sv_cli_error ("stats: missing label file (try '%s stats --help')", SV_CLI_PROGRAM);
      return 1;
    }
  if (o->inputs[1] != NULL)
    {
      sv_cli_error ("stats: expected one label file, got %u (try '%s stats --help')",
                    g_strv_length (o->inputs), SV_CLI_PROGRAM);
      return 1;
    }
  input = o->inputs[0];
  if (o->output == NULL)
    {
      sv_cli_error ("stats: missing -o TABLE.csv (try '%s stats --help')", SV_CLI_PROGRAM);
      return 1;
    }
  if (o->background != NULL && o->no_background)
    {
      sv_cli_error ("--background and --no-background cannot be used together");
      return 1;
    }
  if (o->channel != NULL && o->image == NULL)
    {
      sv_cli_error ("--channel needs --image");
      return 1;
    }
  request.table_path = o->output;
  request.adjacency_path = o->adjacency;
  request.n_threads = sv_cli_n_cores ();
  if (!sv_cli_parse_channel (o->channel, &request.channel, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (o->threads != NULL)
    {
      if (!sv_cli_parse_int64 ("--threads", o->threads, 1, 4096, &v, &error))
        {
          sv_cli_report (error);
          return 1;
        }
      request.n_threads = (int)v;
    }
  if (o->slab_depth != NULL)
    {
      if (!sv_cli_parse_int64 ("--slab-depth", o->slab_depth, 1, G_MAXINT32, &v, &error))
        {
          sv_cli_report (error);
          return 1;
        }
      request.slab_depth = (guint)v;
    }
  if (o->background != NULL)
    {
      if (!sv_cli_parse_int64 ("--background", o->background, G_MININT32, G_MAXINT32, &v, &error))
        {
          sv_cli_report (error);
          return 1;
        }
      request.has_background = TRUE;
      request.background = (gint32)v;
    }
  else if (!o->no_background)
    {
      gboolean from_sidecar;
      request.has_background = TRUE;
      request.background = sv_cli_stats_background (input, &from_sidecar);
    }

  if (!sv_cli_check_input (input, &error)
      || (o->image != NULL && !sv_cli_check_input (o->image, &error))
      || !check_paths (o, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (!sv_cli_stats_write (&request, input, NULL, o->image, &n_rows, &n_pairs, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  printf ("%s: %" G_GSIZE_FORMAT " supervoxels -> %s", input, n_rows, o->output);
  if (o->adjacency != NULL)
    printf (", %" G_GSIZE_FORMAT " touching pairs -> %s", n_pairs, o->adjacency);
  printf ("\n");
  return 0;
}

int
sv_cli_cmd_stats (int argc, char **argv)
{
  StatsOptions o = { 0 };
  g_autoptr (GOptionContext) context = NULL;
  int status;
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output, "Table to write, one row per supervoxel",
      "TABLE.csv" },
    { "image", 0, 0, G_OPTION_ARG_FILENAME, &o.image,
      "Intensity statistics of this image (same z, y, x shape), in its own values", "IMG.tif" },
    { "channel", 0, 0, G_OPTION_ARG_STRING, &o.channel,
      "Only this channel of the image, counted from 0 (default: all)", "N" },
    { "adjacency", 0, 0, G_OPTION_ARG_FILENAME, &o.adjacency,
      "Also write the pairs of touching supervoxels (6-neighbourhood)", "PAIRS.csv" },
    { "background", 0, 0, G_OPTION_ARG_STRING, &o.background,
      "Label left out of the table (default: start_label - 1 from the label file's sidecar, "
      "else 0)", "N" },
    { "no-background", 0, 0, G_OPTION_ARG_NONE, &o.no_background,
      "Every label is a supervoxel, 0 included", NULL },
    { "threads", 0, 0, G_OPTION_ARG_STRING, &o.threads, "CPU threads (default: all cores)", "N" },
    { "slab-depth", 0, 0, G_OPTION_ARG_STRING, &o.slab_depth,
      "Read N slices at a time (default: slabs of about 64 M voxels)", "N" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.inputs, NULL, NULL },
    { NULL },
  };

  context = g_option_context_new ("LABELS.tif -o TABLE.csv [--image IMG.tif] [--adjacency PAIRS.csv]");
  g_option_context_set_summary (
      context, "Writes one CSV row per supervoxel: label, voxels, volume, centroid (voxels and\n"
               "physical), bounding box (half-open, as scikit-image's bbox) and, with --image,\n"
               "mean, std, min and max of each channel in the image's own values.");
  g_option_context_set_description (
      context,
      "Physical columns use the label file's calibration (else the image's), and name\n"
      "the unit: volume_um3, centroid_z_um. Without calibration the unit is px.\n"
      "\n"
      "--adjacency writes one row per pair of touching supervoxels a < b: faces (voxel\n"
      "faces they share, 6-neighbourhood), area_<unit>2 (those faces' physical area)\n"
      "and boundary_mean: over every shared face, the mean of the two voxels' values,\n"
      "so a voxel counts once per face it has on the boundary.\n"
      "\n"
      "Both files are read slab by slab, so any volume fits; the numbers are the same\n"
      "for any --threads and --slab-depth. A failure leaves no output file.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!sv_cli_parse_options (context, "stats", &argc, &argv))
    status = 1;
  else
    status = run_stats (&o);
  g_free (o.output);
  g_free (o.image);
  g_free (o.adjacency);
  g_free (o.channel);
  g_free (o.background);
  g_free (o.threads);
  g_free (o.slab_depth);
  g_strfreev (o.inputs);
  return status;
}

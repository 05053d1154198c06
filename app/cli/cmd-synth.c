/* supervox-cli synth: synthetic volumes with ground truth (supervox/sv-synth.h). */
#define G_LOG_DOMAIN "sv-cli"

#include <stdio.h>

#include <glib/gstdio.h>

#include "cli-common.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-synth.h"

typedef struct
{
  char *output;
  char *truth;
  char *shape;
  char *cells;
  char *nucleus_radius;
  char *blur;
  char *noise;
  char *seed;
  char *compression;
  gboolean blobs;
  char **rest;
} SynthOptions;

static gboolean
parse_synth (const SynthOptions *o, SvSynthParams *p, GError **error)
{
  gint64 v;

  sv_synth_params_init_defaults (p);
  if (o->shape != NULL)
    {
      guint shape[3];
      if (!sv_cli_parse_shape ("--shape", o->shape, shape, error))
        return FALSE;
      p->nz = shape[0];
      p->ny = shape[1];
      p->nx = shape[2];
    }
  if (o->cells != NULL)
    {
      if (!sv_cli_parse_int64 ("--cells", o->cells, 1, G_MAXINT32, &v, error))
        return FALSE;
      p->n_cells = (guint)v;
    }
  if (o->seed != NULL)
    {
      if (!sv_cli_parse_int64 ("--seed", o->seed, 0, G_MAXINT64, &v, error))
        return FALSE;
      p->seed = (guint64)v;
    }
  {
    const struct
    {
      const char *name;
      const char *text;
      double *value;
    } reals[] = {
      { "--nucleus-radius", o->nucleus_radius, &p->nucleus_radius },
      { "--blur", o->blur, &p->blur_sigma },
      { "--noise", o->noise, &p->noise_sigma },
    };
    for (guint i = 0; i < G_N_ELEMENTS (reals); i++)
      {
        if (reals[i].text == NULL)
          continue;
        if (!sv_cli_parse_double (reals[i].name, reals[i].text, reals[i].value, error))
          return FALSE;
        if (*reals[i].value < 0)
          {
            g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                         "%s must be >= 0, got %s", reals[i].name, reals[i].text);
            return FALSE;
          }
      }
  }
  return TRUE;
}

static int
run_synth (SynthOptions *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) volume = NULL;
  g_autoptr (SvLabels) truth = NULL;
  SvTiffWriteOptions write_options, volume_options;
  SvSynthParams p;

  if (o->rest != NULL && o->rest[0] != NULL)
    {
      sv_cli_error ("synth: unexpected argument '%s' (try '%s synth --help')", o->rest[0],
                    SV_CLI_PROGRAM);
      return 1;
    }
  if (o->output == NULL)
    {
      sv_cli_error ("synth: missing -o VOL.tif (try '%s synth --help')", SV_CLI_PROGRAM);
      return 1;
    }
  /* The default codec is made for labels; the phantom's float samples
   * are stored with deflate level 6. */
  if (!parse_synth (o, &p, &error)
      || !sv_cli_parse_compression (o->compression, &write_options, &error)
      || !sv_cli_parse_compression (o->compression != NULL ? o->compression : "deflate:6",
                                    &volume_options, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (o->blobs && o->truth != NULL)
    {
      sv_cli_error ("--truth is not available with --blobs (blobs have no cell labels)");
      return 1;
    }
  if (!sv_cli_check_output (o->output, &error)
      || (o->truth != NULL && !sv_cli_check_output (o->truth, &error)))
    {
      sv_cli_report (error);
      return 1;
    }
  if (o->truth != NULL && g_strcmp0 (o->truth, o->output) == 0)
    {
      sv_cli_error ("%s: --truth and -o name the same file", o->truth);
      return 1;
    }

  if (o->blobs)
    volume = sv_synth_blobs (p.nz, p.ny, p.nx, 0.1, 0.5, p.seed, &error);
  else
    volume = sv_synth_cells (&p, o->truth != NULL ? &truth : NULL, &error);
  if (volume == NULL)
    {
      sv_cli_report (error);
      return 1;
    }
  if (!sv_tiff_write_volume_full (o->output, volume, SV_SAMPLE_F32, &volume_options, &error))
    {
      sv_cli_report_file (o->output, error);
      return 1;
    }
  if (truth != NULL && !sv_tiff_write_labels_full (o->truth, truth, &write_options, &error))
    {
      g_unlink (o->output);
      sv_cli_report_file (o->truth, error);
      return 1;
    }
  printf ("%s: %u×%u×%u float32 %s\n", o->output, p.nz, p.ny, p.nx,
          o->blobs ? "blobs" : "cell phantom");
  return 0;
}

int
sv_cli_cmd_synth (int argc, char **argv)
{
  SynthOptions o = { 0 };
  g_autoptr (GOptionContext) context = NULL;
  int status;
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output, "Volume TIFF to write (float32)",
      "VOL.tif" },
    { "truth", 0, 0, G_OPTION_ARG_FILENAME, &o.truth, "Also write the cell labels", "GT.tif" },
    { "shape", 0, 0, G_OPTION_ARG_STRING, &o.shape, "Volume size", "Z,Y,X" },
    { "cells", 0, 0, G_OPTION_ARG_STRING, &o.cells, "Number of Voronoi cells", "N" },
    { "nucleus-radius", 0, 0, G_OPTION_ARG_STRING, &o.nucleus_radius,
      "Nucleus radius in voxels (0: none)", "R" },
    { "blur", 0, 0, G_OPTION_ARG_STRING, &o.blur, "Gaussian blur sigma in voxels", "S" },
    { "noise", 0, 0, G_OPTION_ARG_STRING, &o.noise, "Gaussian noise sigma (intensity units)", "S" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &o.seed, "Random seed", "N" },
    { "blobs", 0, 0, G_OPTION_ARG_NONE, &o.blobs, "binary_blobs-like 0/1 volume instead of cells",
      NULL },
    { "compression", 0, 0, G_OPTION_ARG_STRING, &o.compression, SV_CLI_COMPRESSION_HELP,
      "CODEC[:LEVEL]" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.rest, NULL, NULL },
    { NULL }
  };

  context = g_option_context_new ("-o VOL.tif");
  g_option_context_set_summary (context,
                                "Writes a synthetic phantom (Voronoi cells with nuclei, blur and\n"
                                "noise) as float32, optionally with its ground-truth labels.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!sv_cli_parse_options (context, "synth", &argc, &argv))
    status = 1;
  else
    status = run_synth (&o);
  g_free (o.output);
  g_free (o.truth);
  g_free (o.shape);
  g_free (o.cells);
  g_free (o.nucleus_radius);
  g_free (o.blur);
  g_free (o.noise);
  g_free (o.seed);
  g_free (o.compression);
  g_strfreev (o.rest);
  return status;
}

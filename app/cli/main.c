/* supervox-cli: batch front-end on the Supervox engine. Dispatches to the
 * subcommands; each has its own options and --help. */
#define G_LOG_DOMAIN "sv-cli"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "supervox/sv-backend.h"
#include "cli-common.h"
#include "slic-mpi.h"
#include "sv-config.h"

#if SV_HAVE_CUDA && defined(SV_CLI_WITH_CUDA)
#define SV_CLI_CUDA 1
#include "sv-cuda.h"
#else
#define SV_CLI_CUDA 0
#endif

typedef struct
{
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} SvCliCommand;

static const SvCliCommand commands[] = {
  { "slic", sv_cli_cmd_slic, "SLIC supervoxels: IN.tif -o OUT.tif [options]" },
  { "connect", sv_cli_cmd_connect, "connectivity step alone on a label TIFF" },
  { "info", sv_cli_cmd_info, "shape, type, spacing and value range of a TIFF" },
  { "synth", sv_cli_cmd_synth, "synthetic cell phantom with ground truth" },
  { "eval", sv_cli_cmd_eval, "quality metrics of labels against ground truth" },
  { "stats", sv_cli_cmd_stats, "per-supervoxel table and adjacency of a label TIFF, as CSV" },
};

static void
print_usage (FILE *out)
{
  fprintf (out, "Usage: %s COMMAND [OPTION…]\n\nCommands:\n", SV_CLI_PROGRAM);
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf (out,
           "\nRun '%s COMMAND --help' for a command's options.\n"
           "Options:\n  -h, --help     this help\n  --version      program version\n",
           SV_CLI_PROGRAM);
}

static int
run_command (int argc, char **argv)
{
  const char *name;

  if (argc < 2)
    {
      sv_cli_error ("missing command (try '%s --help')", SV_CLI_PROGRAM);
      return 1;
    }
  name = argv[1];
  if (strcmp (name, "--help") == 0 || strcmp (name, "-h") == 0 || strcmp (name, "help") == 0)
    {
      print_usage (stdout);
      return 0;
    }
  if (strcmp (name, "--version") == 0)
    {
      printf ("%s %s (CUDA backend: %s)\n", SV_CLI_PROGRAM, SV_VERSION,
              SV_CLI_CUDA ? "built" : "not built");
      return 0;
    }
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (name, commands[i].name) == 0)
      {
        g_autofree char *prgname = g_strdup_printf ("%s %s", SV_CLI_PROGRAM, name);

        /* GOptionContext's usage line then reads "supervox-cli slic …". */
        g_set_prgname (prgname);
        return commands[i].run (argc - 1, argv + 1);
      }
  sv_cli_error ("unknown command '%s' (try '%s --help')", name, SV_CLI_PROGRAM);
  return 1;
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  /* Numbers in options and output always use a decimal point. */
  setlocale (LC_NUMERIC, "C");
  g_set_prgname (SV_CLI_PROGRAM);
  sv_cli_mpi_init (&argc, &argv);

#if SV_CLI_CUDA
  sv_cuda_register ();
#endif

  return sv_cli_mpi_finish (run_command (argc, argv));
}

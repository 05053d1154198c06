/* supervox-cli info: what a TIFF (or a PNG/JPEG photo) holds, without running anything. */
#define G_LOG_DOMAIN "sv-cli"

#include <stdio.h>

#include "cli-common.h"
#include "supervox/sv-io.h"
#include "supervox/sv-json-writer.h"
#include "sv-config.h"

static int
run_info (char **inputs, gboolean json)
{
  g_autoptr (GError) error = NULL;
  SvTiffInfo info = { 0 };
  const char *path;
  gboolean photo = FALSE;

  if (inputs == NULL || inputs[0] == NULL)
    {
      sv_cli_error ("info: missing input file (try '%s info --help')", SV_CLI_PROGRAM);
      return 1;
    }
  if (inputs[1] != NULL)
    {
      sv_cli_error ("info: expected one input file, got %u (try '%s info --help')",
                    g_strv_length (inputs), SV_CLI_PROGRAM);
      return 1;
    }
  path = inputs[0];
  if (!sv_cli_check_input (path, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (!sv_cli_read_info (path, &info, &photo, &error))
    {
      sv_tiff_info_clear (&info);
      sv_cli_report_file (path, error);
      return 1;
    }

  if (info.note != NULL)
    sv_cli_note ("%s", info.note);
  if (json)
    {
      g_autoptr (SvJsonWriter) w = sv_json_writer_new ();

      sv_json_writer_begin_object (w);
      sv_json_writer_key (w, "file");
      sv_json_writer_string (w, path);
      sv_json_writer_key (w, "shape");
      sv_json_writer_begin_array (w);
      sv_json_writer_int (w, info.nz);
      sv_json_writer_int (w, info.ny);
      sv_json_writer_int (w, info.nx);
      sv_json_writer_end_array (w);
      sv_json_writer_key (w, "channels");
      sv_json_writer_int (w, info.nc);
      sv_json_writer_key (w, "sample_type");
      sv_json_writer_string (w, sv_sample_type_to_string (info.sample_type));
      sv_json_writer_key (w, "spacing");
      sv_json_writer_begin_array (w);
      for (int i = 0; i < 3; i++)
        sv_json_writer_double (w, info.spacing[i]);
      sv_json_writer_end_array (w);
      sv_json_writer_key (w, "spacing_from_file");
      sv_json_writer_bool (w, info.spacing_from_file);
      sv_json_writer_key (w, "unit");
      sv_json_writer_string (w, info.unit);
      sv_json_writer_key (w, "value_min");
      sv_json_writer_double (w, info.value_min);
      sv_json_writer_key (w, "value_max");
      sv_json_writer_double (w, info.value_max);
      if (photo)
        {
          sv_json_writer_key (w, "format");
          sv_json_writer_string (w, info.compression);
        }
      sv_json_writer_key (w, "compression");
      sv_json_writer_string (w, info.compression);
      sv_json_writer_key (w, "bigtiff");
      sv_json_writer_bool (w, info.bigtiff);
      sv_json_writer_key (w, "tiled");
      sv_json_writer_bool (w, info.tiled);
      sv_json_writer_end_object (w);
      printf ("%s\n", sv_json_writer_get (w));
    }
  else
    {
      g_autofree char *shape = sv_cli_format_shape (info.nz, info.ny, info.nx);

      printf ("file:        %s\n", path);
      printf ("shape:       %s (z %u, y %u, x %u)\n", shape, info.nz, info.ny, info.nx);
      printf ("type:        %s\n", sv_sample_type_to_string (info.sample_type));
      printf ("channels:    %u\n", info.nc);
      printf ("spacing:     %g × %g × %g%s%s%s\n", info.spacing[0], info.spacing[1],
              info.spacing[2], info.unit != NULL ? " " : "", info.unit != NULL ? info.unit : "",
              info.spacing_from_file ? " (from file)" : " (not in file)");
      printf ("value range: %g … %g\n", info.value_min, info.value_max);
      if (photo)
        /* A photo has no TIFF layout to speak of. */
        printf ("format:      %s\n", info.compression);
      else
        {
          printf ("compression: %s\n", info.compression != NULL ? info.compression : "unknown");
          printf ("layout:      %s\n", info.tiled ? "tiles" : "strips");
          printf ("bigtiff:     %s\n", info.bigtiff ? "yes" : "no");
        }
    }
  sv_tiff_info_clear (&info);
  return 0;
}

int
sv_cli_cmd_info (int argc, char **argv)
{
  gboolean json = FALSE;
  char **inputs = NULL;
  g_autoptr (GOptionContext) context = NULL;
  int status;
  const GOptionEntry entries[]
      = { { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object", NULL },
          { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &inputs, NULL, NULL },
          { NULL } };

  context = g_option_context_new ("FILE.tif");
  g_option_context_set_summary (context, "Shape, sample type, channels, voxel spacing and unit,\n"
                                         "value range, compression and BigTIFF of a TIFF file"
#if SV_HAVE_PIXBUF
                                         "\n(or shape, channels and value range of a PNG/JPEG photo)"
#endif
                                         ".");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!sv_cli_parse_options (context, "info", &argc, &argv))
    status = 1;
  else
    status = run_info (inputs, json);
  g_strfreev (inputs);
  return status;
}

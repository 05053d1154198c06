/* Supervox engine: the JSON sidecar of a label TIFF, one schema for the CLI
 * and the window, and the supervox-cli line that reproduces the labels. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-sidecar.h"

#include <string.h>

#include "sv-config.h"
#include "supervox/sv-json-writer.h"

char *
sv_sidecar_to_json (const SvSidecar *sc)
{
  static const char *const stage_names[SV_SIDECAR_N_STAGES]
      = { "load", "prepare", "iterate", "connect", "write", "total" };
  g_autoptr (SvJsonWriter) w = sv_json_writer_new ();
  g_autofree char *params_json = NULL;

  g_return_val_if_fail (sc != NULL && sc->params != NULL, NULL);
  params_json = sv_slic_params_to_json (sc->params);
  sv_json_writer_begin_object (w);
  sv_json_writer_key (w, "input");
  sv_json_writer_string (w, sc->input);
  sv_json_writer_key (w, "output");
  sv_json_writer_string (w, sc->output);
  sv_json_writer_key (w, "mask");
  sv_json_writer_string (w, sc->mask);
  sv_json_writer_key (w, "shape");
  sv_json_writer_begin_array (w);
  for (int a = 0; a < 3; a++)
    sv_json_writer_int (w, sc->shape[a]);
  sv_json_writer_end_array (w);
  sv_json_writer_key (w, "channels");
  sv_json_writer_int (w, sc->channels);
  sv_json_writer_key (w, "channel");
  if (sc->channel >= 0)
    sv_json_writer_int (w, sc->channel);
  else
    sv_json_writer_null (w);
  sv_json_writer_key (w, "compression");
  sv_json_writer_string (w, sc->compression);
  sv_json_writer_key (w, "sample_type");
  sv_json_writer_string (w, sv_sample_type_to_string (sc->sample_type));
  sv_json_writer_key (w, "spacing_unit");
  sv_json_writer_string (w, sc->spacing_unit);
  sv_json_writer_key (w, "n_labels");
  sv_json_writer_int (w, (gint64)sc->n_labels);
  sv_json_writer_key (w, "n_clusters");
  sv_json_writer_int (w, (gint64)sc->n_clusters);
  sv_json_writer_key (w, "iterations");
  sv_json_writer_int (w, sc->iterations);
  sv_json_writer_key (w, "backend");
  sv_json_writer_string (w, sc->backend);
  if (sc->mode != NULL)
    {
      sv_json_writer_key (w, "mode");
      sv_json_writer_string (w, sc->mode);
      sv_json_writer_key (w, "memory_limit_bytes");
      sv_json_writer_int (w, (gint64)sc->memory_limit_bytes);
      sv_json_writer_key (w, "peak_memory_bytes");
      sv_json_writer_int (w, (gint64)sc->peak_memory_bytes);
      if (sc->slab_depth > 0)
        {
          sv_json_writer_key (w, "slab_depth");
          sv_json_writer_int (w, sc->slab_depth);
          /* Connectivity crosses slabs exactly, over a window of slices. */
          sv_json_writer_key (w, "connectivity_window");
          sv_json_writer_int (w, sc->connectivity_window);
          /* What did not stay in memory went beside the output. */
          sv_json_writer_key (w, "temporary_bytes_planned");
          sv_json_writer_int (w, (gint64)sc->temporary_bytes_planned);
          sv_json_writer_key (w, "temporary_bytes");
          sv_json_writer_int (w, (gint64)sc->temporary_bytes);
        }
      if (sc->devices > 0)
        {
          sv_json_writer_key (w, "devices");
          sv_json_writer_int (w, sc->devices);
          sv_json_writer_key (w, "peak_device_memory_bytes");
          sv_json_writer_int (w, (gint64)sc->peak_device_memory_bytes);
          sv_json_writer_key (w, "resident_slabs");
          sv_json_writer_int (w, sc->resident_slabs);
          sv_json_writer_key (w, "connectivity_on_device");
          sv_json_writer_bool (w, sc->connectivity_on_device);
          /* Devices that shared it, each on the slices it kept. */
          sv_json_writer_key (w, "connectivity_devices");
          sv_json_writer_int (w, sc->connectivity_devices);
          /* The last assignment stayed on the device for the labels. */
          sv_json_writer_key (w, "labels_on_device");
          sv_json_writer_bool (w, sc->labels_on_device);
          sv_json_writer_key (w, "slices_compressed_on_device");
          sv_json_writer_int (w, sc->slices_compressed_on_device);
        }
      if (sc->mpi_ranks > 0)
        {
          /* The z range was split across this many MPI ranks. */
          sv_json_writer_key (w, "mpi_ranks");
          sv_json_writer_int (w, sc->mpi_ranks);
        }
    }
  sv_json_writer_key (w, "threads");
  sv_json_writer_int (w, sc->threads);
  sv_json_writer_key (w, "seconds");
  sv_json_writer_begin_object (w);
  for (guint i = 0; i < SV_SIDECAR_N_STAGES; i++)
    {
      sv_json_writer_key (w, stage_names[i]);
      sv_json_writer_seconds (w, sc->seconds[i]);
    }
  sv_json_writer_end_object (w);
  sv_json_writer_key (w, "params");
  sv_json_writer_raw (w, params_json);
  sv_json_writer_key (w, "command");
  sv_json_writer_string (w, sc->command);
  sv_json_writer_key (w, "version");
  sv_json_writer_string (w, SV_VERSION);
  if (sc->program != NULL)
    {
      sv_json_writer_key (w, "program");
      sv_json_writer_string (w, sc->program);
    }
  if (sc->n_notes > 0)
    {
      sv_json_writer_key (w, "notes");
      sv_json_writer_begin_array (w);
      for (guint i = 0; i < sc->n_notes; i++)
        sv_json_writer_string (w, sc->notes[i]);
      sv_json_writer_end_array (w);
    }
  sv_json_writer_end_object (w);
  return g_strdup (sv_json_writer_get (w));
}

char *
sv_sidecar_path (const char *labels_path)
{
  static const char *const extensions[] = { ".tiff", ".tif" };
  const gsize len = strlen (labels_path);

  for (guint i = 0; i < G_N_ELEMENTS (extensions); i++)
    {
      const gsize elen = strlen (extensions[i]);

      if (len > elen && g_ascii_strcasecmp (labels_path + len - elen, extensions[i]) == 0)
        {
          g_autofree char *stem = g_strndup (labels_path, len - elen);
          return g_strconcat (stem, ".json", NULL);
        }
    }
  return g_strconcat (labels_path, ".json", NULL);
}

char *
sv_shell_word (const char *path)
{
  for (const char *c = path; *c; c++)
    if (!g_ascii_isalnum (*c) && !strchr ("/._-+,:@%", *c))
      return g_shell_quote (path);
  return g_strdup (path);
}

/* " PATH", quoted where it needs it. */
static void
append_shell_word (GString *line, const char *path)
{
  g_autofree char *word = sv_shell_word (path);
  g_string_append_printf (line, " %s", word);
}

void
sv_slic_command_append (const SvSlicCommand *c, GString *line)
{
  g_autofree char *output = sv_shell_word (c->output);

  if (c->before != NULL)
    g_string_append_printf (line, "%s && ", c->before);
  g_string_append (line, "supervox-cli slic");
  if (c->inputs == NULL)
    append_shell_word (line, c->input);
  for (guint i = 0; c->inputs != NULL && c->inputs[i] != NULL; i++)
    append_shell_word (line, c->inputs[i]);
  g_string_append_printf (line, " -o %s", output);
  if (c->mask != NULL)
    {
      g_autofree char *mask = sv_shell_word (c->mask);
      g_string_append_printf (line, " --mask %s", mask);
    }
  sv_slic_params_append_cli (c->params, line);
  if (c->zarr_image)
    g_string_append_printf (line, " --zarr-level %u", c->zarr_level);
  if (c->channel >= 0)
    g_string_append_printf (line, " --channel %d", c->channel);
  if (c->compression != NULL)
    g_string_append_printf (line, " --compression %s", c->compression);
  if (c->backend != NULL)
    g_string_append_printf (line, " --backend %s", c->backend);
}

/* A Python str literal of a UTF-8 string. */
static void
append_python_string (GString *code, const char *text)
{
  g_string_append_c (code, '\'');
  for (const char *c = text; *c; c++)
    {
      if (*c == '\\' || *c == '\'')
        g_string_append_printf (code, "\\%c", *c);
      else if ((guchar)*c < 0x20 || *c == 0x7f)
        g_string_append_printf (code, "\\x%02x", (guchar)*c);
      else
        g_string_append_c (code, *c);
    }
  g_string_append_c (code, '\'');
}

/* read_zyxc (path, shape): tifffile's series with its sample and channel
 * axes moved last, as the engine's reader orders a volume's values. */
static const char python_reader[]
    = "def read_zyxc(path, shape):\n"
      "    \"\"\"A TIFF's voxels as z, y, x, channel, as Supervox reads them.\"\"\"\n"
      "    with tifffile.TiffFile(path) as tif:\n"
      "        series = tif.series[0]\n"
      "        image, axes = series.asarray(), series.axes\n"
      "    for axis in \"SC\":\n"
      "        if axis in axes:\n"
      "            image = np.moveaxis(image, axes.index(axis), -1)\n"
      "            axes = axes.replace(axis, \"\") + axis\n"
      "    return image.reshape(shape)\n";

/* read_zarr_level (image, level, shape): an OME-Zarr image's level with
 * its channel axis moved last, as the engine's Zarr reader orders it. */
static const char python_zarr_reader[]
    = "def read_zarr_level(image, level, shape):\n"
      "    \"\"\"A level of an OME-Zarr image as z, y, x, channel, as Supervox reads it.\"\"\"\n"
      "    group = zarr.open_group(image, mode=\"r\")\n"
      "    multiscale = group.attrs[\"multiscales\"][0]\n"
      "    axes = [a[\"name\"] if isinstance(a, dict) else a for a in multiscale[\"axes\"]]\n"
      "    data = np.asarray(group[multiscale[\"datasets\"][level][\"path\"]])\n"
      "    if \"c\" in axes:\n"
      "        data = np.moveaxis(data, axes.index(\"c\"), -1)\n"
      "    return data.reshape(shape)\n";

static void
append_read (GString *code, const char *path, const SvSlicCommand *c, guint channels)
{
  g_string_append (code, "read_zyxc(");
  append_python_string (code, path);
  g_string_append_printf (code, ", (%u, %u, %u, %u))", c->shape[0], c->shape[1], c->shape[2],
                          channels);
}

void
sv_slic_python_append (const SvSlicCommand *c, GString *code)
{
  gboolean all_channels = c->channel < 0 && c->channels > 1;

  g_return_if_fail (c != NULL && c->params != NULL && code != NULL);
  g_return_if_fail (c->shape[0] > 0 && c->channels > 0);

  g_string_append (code, "import numpy as np\nimport tifffile\n");
  if (c->zarr_image)
    g_string_append (code, "import zarr\n");
  g_string_append (code, "\nimport supervox\n");
  if (c->before != NULL)
    {
      g_string_append (code, "import shlex\nimport subprocess\n\nsubprocess.run(shlex.split(");
      append_python_string (code, c->before);
      g_string_append (code, "), check=True)\n");
    }
  g_string_append_printf (code, "\n\n%s\n\n", python_reader);
  if (c->zarr_image)
    {
      g_string_append_printf (code, "%s\n\nimage = read_zarr_level(", python_zarr_reader);
      append_python_string (code, c->input);
      g_string_append_printf (code, ", %u, (%u, %u, %u, %u))", c->zarr_level, c->shape[0],
                              c->shape[1], c->shape[2], c->channels);
    }
  else
    {
      g_string_append (code, "image = ");
      append_read (code, c->input, c, c->channels);
    }
  if (!all_channels)
    g_string_append_printf (code, "[..., %d]", MAX (c->channel, 0));
  g_string_append_c (code, '\n');
  if (c->mask != NULL)
    {
      /* Any one-sample TIFF, nonzero inside. */
      g_string_append (code, "mask = ");
      append_read (code, c->mask, c, 1);
      g_string_append (code, "[..., 0] != 0\n");
    }
  g_string_append (code, "labels = supervox.slic(image");
  sv_slic_params_append_python (c->params, c->shape[0], all_channels ? c->channels : 1, code);
  if (c->mask != NULL)
    g_string_append (code, ", mask=mask");
  g_string_append_printf (code, ", channel_axis=%s", all_channels ? "-1" : "None");
  if (c->backend != NULL)
    {
      g_string_append (code, ", backend=");
      append_python_string (code, c->backend);
    }
  g_string_append (code, ")\n");
}

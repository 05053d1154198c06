/* Tests of the label sidecar (engine/io/sidecar.c): one schema, written the
 * same way by the CLI and the window. */
#define G_LOG_DOMAIN "test-sidecar"

#include <string.h>

#include "sv-config.h"
#include "supervox/sv-sidecar.h"

static void
fill (SvSidecar *sc, SvSlicParams *p)
{
  sv_slic_params_init_defaults (p);
  memset (sc, 0, sizeof *sc);
  sc->input = "in \"a\".tif";
  sc->output = "out.tif";
  sc->shape[0] = 2;
  sc->shape[1] = 3;
  sc->shape[2] = 4;
  sc->channels = 1;
  sc->channel = -1;
  sc->compression = "deflate:6";
  sc->sample_type = SV_SAMPLE_U16;
  sc->n_labels = 5;
  sc->n_clusters = 6;
  sc->iterations = 10;
  sc->backend = "cpu";
  sc->threads = 2;
  for (int i = 0; i < SV_SIDECAR_N_STAGES; i++)
    sc->seconds[i] = 0.25 * i;
  sc->params = p;
  sc->command = "supervox-cli slic x";
}

/* Every key in its place, nulls for what is absent, no "program" unless a
 * writer names itself. */
static void
test_sidecar_exact (void)
{
  SvSidecar sc;
  SvSlicParams p;
  g_autofree char *params = NULL;
  g_autofree char *json = NULL;
  g_autofree char *want = NULL;
  g_autofree char *named = NULL;

  fill (&sc, &p);
  params = sv_slic_params_to_json (&p);
  json = sv_sidecar_to_json (&sc);
  want = g_strdup_printf (
      "{\"input\":\"in \\\"a\\\".tif\",\"output\":\"out.tif\",\"mask\":null,\"shape\":[2,3,4],"
      "\"channels\":1,\"channel\":null,\"compression\":\"deflate:6\",\"sample_type\":\"uint16\","
      "\"spacing_unit\":null,\"n_labels\":5,\"n_clusters\":6,\"iterations\":10,"
      "\"backend\":\"cpu\",\"threads\":2,\"seconds\":{\"load\":0.0,\"prepare\":0.25,"
      "\"iterate\":0.5,\"connect\":0.75,\"write\":1.0,\"total\":1.25},"
      "\"params\":%s,\"command\":\"supervox-cli slic x\",\"version\":\"%s\"}",
      params, SV_VERSION);
  g_assert_cmpstr (json, ==, want);

  sc.mask = "m.tif";
  sc.channel = 1;
  sc.spacing_unit = "micron";
  sc.program = "supervox";
  named = sv_sidecar_to_json (&sc);
  g_assert_nonnull (strstr (named, "\"mask\":\"m.tif\""));
  g_assert_nonnull (strstr (named, "\"channel\":1,"));
  g_assert_nonnull (strstr (named, "\"spacing_unit\":\"micron\""));
  g_assert_true (g_str_has_suffix (named, ",\"program\":\"supervox\"}"));
}

/* The command both front ends write: names quoted where a shell needs it,
 * mask before the parameters, the optional options after them. */
static void
test_command (void)
{
  SvSlicParams p;
  g_autoptr (GString) line = g_string_new (NULL);
  g_autoptr (GString) params = g_string_new (NULL);
  g_autofree char *want = NULL;
  SvSlicCommand c = {
    .input = "my scan.tif",
    .output = "out/labels.tif",
    .mask = "it's.tif",
    .params = &p,
    .channel = 2,
    .compression = "zstd:3",
    .backend = "cpu",
  };

  sv_slic_params_init_defaults (&p);
  sv_slic_params_append_cli (&p, params);
  sv_slic_command_append (&c, line);
  want = g_strdup_printf ("supervox-cli slic 'my scan.tif' -o out/labels.tif --mask 'it'\\''s.tif'"
                          "%s --channel 2 --compression zstd:3 --backend cpu",
                          params->str);
  g_assert_cmpstr (line->str, ==, want);

  g_string_truncate (line, 0);
  c.mask = NULL;
  c.channel = -1;
  c.compression = NULL;
  c.backend = NULL;
  sv_slic_command_append (&c, line);
  g_clear_pointer (&want, g_free);
  want = g_strdup_printf ("supervox-cli slic 'my scan.tif' -o out/labels.tif%s", params->str);
  g_assert_cmpstr (line->str, ==, want);
}

/* A batch's line names every input, in order, before one -o. */
static void
test_command_batch (void)
{
  SvSlicParams p;
  const char *const inputs[] = { "a.tif", "day 2/b.tif", NULL };
  g_autoptr (GString) line = g_string_new (NULL);
  g_autoptr (GString) params = g_string_new (NULL);
  g_autofree char *want = NULL;
  SvSlicCommand c = {
    .input = "ignored.tif",
    .inputs = inputs,
    .output = "out/{stem}.tif",
    .params = &p,
    .channel = -1,
  };

  sv_slic_params_init_defaults (&p);
  p.n_segments = 250;
  sv_slic_params_append_cli (&p, params);
  sv_slic_command_append (&c, line);
  want = g_strdup_printf ("supervox-cli slic a.tif 'day 2/b.tif' -o 'out/{stem}.tif'%s",
                          params->str);
  g_assert_cmpstr (line->str, ==, want);
}

/* The Python form of the same description: every parameter by its
 * scikit-image name, "auto" Lab resolved as the engine resolves it, the
 * channel taken, names as Python literals. (The GUI suite runs it.) */
static void
test_python (void)
{
  SvSlicParams p;
  g_autoptr (GString) code = g_string_new (NULL);
  SvSlicCommand c = {
    .input = "my 'scan'.tif",
    .output = "labels.tif",
    .mask = "m\\ask.tif",
    .params = &p,
    .channel = -1,
    .backend = "cuda",
    .shape = { 1, 20, 30 },
    .channels = 3,
  };

  sv_slic_params_init_defaults (&p);
  p.sigma[0] = 1.5;
  sv_slic_python_append (&c, code);
  g_test_message ("%s", code->str);
  g_assert_true (g_str_has_prefix (code->str, "import numpy as np\nimport tifffile\n"));
  g_assert_null (strstr (code->str, "subprocess"));
  g_assert_nonnull (strstr (code->str, "image = read_zyxc('my \\'scan\\'.tif', (1, 20, 30, 3))\n"));
  g_assert_nonnull (
      strstr (code->str, "mask = read_zyxc('m\\\\ask.tif', (1, 20, 30, 1))[..., 0] != 0\n"));
  g_assert_nonnull (strstr (
      code->str, "labels = supervox.slic(image, n_segments=100, compactness=10, max_num_iter=10, "
                 "sigma=1.5, spacing=[1, 1, 1], convert2lab=True, enforce_connectivity=True, "
                 "min_size_factor=0.5, max_size_factor=3, slic_zero=False, start_label=1, "
                 "connectivity_rule='connected', mask=mask, channel_axis=-1, backend='cuda')\n"));

  /* One channel of three, or a volume: no Lab; a line to run first. */
  g_string_truncate (code, 0);
  c.channel = 1;
  c.shape[0] = 5;
  c.mask = NULL;
  c.backend = NULL;
  c.before = "supervox-cli synth -o sample.tif";
  sv_slic_python_append (&c, code);
  g_assert_nonnull (strstr (code->str, "subprocess.run(shlex.split('supervox-cli synth -o "
                                       "sample.tif'), check=True)\n"));
  g_assert_nonnull (strstr (code->str, "(5, 20, 30, 3))[..., 1]\n"));
  g_assert_nonnull (strstr (code->str, "convert2lab=False"));
  g_assert_nonnull (strstr (code->str, "connectivity_rule='connected', channel_axis=None)\n"));
}

/* An OME-Zarr image's level: the line names the image and the level as
 * supervox-cli takes them, the Python code reads that level with
 * zarr-python; level 0 is named too (the labels were made on it). */
static void
test_zarr_level (void)
{
  SvSlicParams p;
  g_autoptr (GString) line = g_string_new (NULL);
  g_autoptr (GString) params = g_string_new (NULL);
  g_autoptr (GString) code = g_string_new (NULL);
  g_autofree char *want = NULL;
  SvSlicCommand c = {
    .input = "day 1/cells.zarr",
    .output = "cells-labels.tif",
    .params = &p,
    .channel = 1,
    .zarr_image = TRUE,
    .zarr_level = 2,
    .shape = { 5, 20, 30 },
    .channels = 3,
  };

  sv_slic_params_init_defaults (&p);
  sv_slic_params_append_cli (&p, params);
  sv_slic_command_append (&c, line);
  want = g_strdup_printf ("supervox-cli slic 'day 1/cells.zarr' -o cells-labels.tif%s"
                          " --zarr-level 2 --channel 1",
                          params->str);
  g_assert_cmpstr (line->str, ==, want);

  g_string_truncate (line, 0);
  c.zarr_level = 0;
  sv_slic_command_append (&c, line);
  g_assert_nonnull (strstr (line->str, " --zarr-level 0 --channel 1"));

  c.zarr_level = 2;
  sv_slic_python_append (&c, code);
  g_test_message ("%s", code->str);
  g_assert_true (
      g_str_has_prefix (code->str, "import numpy as np\nimport tifffile\nimport zarr\n"));
  g_assert_nonnull (strstr (code->str, "def read_zarr_level(image, level, shape):\n"));
  g_assert_nonnull (strstr (
      code->str, "image = read_zarr_level('day 1/cells.zarr', 2, (5, 20, 30, 3))[..., 1]\n"));
  g_assert_null (strstr (code->str, "image = read_zyxc("));

  /* A TIFF needs no zarr. */
  g_string_truncate (code, 0);
  c.zarr_image = FALSE;
  c.input = "cells.tif";
  sv_slic_python_append (&c, code);
  g_assert_null (strstr (code->str, "zarr"));
}

/* The sidecar's name beside its labels, for every front end. */
static void
test_sidecar_path (void)
{
  static const char *const cases[][2] = {
    { "labels.tif", "labels.json" },   { "dir/brain.TIFF", "dir/brain.json" },
    { "a.ome.tif", "a.ome.json" },     { "labels.zarr", "labels.zarr.json" },
    { ".tif", ".tif.json" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = sv_sidecar_path (cases[i][0]);
      g_assert_cmpstr (path, ==, cases[i][1]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/sidecar/exact", test_sidecar_exact);
  g_test_add_func ("/engine/sidecar/command", test_command);
  g_test_add_func ("/engine/sidecar/command-batch", test_command_batch);
  g_test_add_func ("/engine/sidecar/python", test_python);
  g_test_add_func ("/engine/sidecar/zarr-level", test_zarr_level);
  g_test_add_func ("/engine/sidecar/path", test_sidecar_path);
  return g_test_run ();
}

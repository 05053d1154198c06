/* Supervox tests: supervox-cli slic streamed through the GPU (slab steps on
 * the CUDA backend, a device memory limit far below the volume, several
 * workers) writes the same label file, byte for byte, as the CPU
 * backend's in-memory run (an OME-Zarr store too, its chunks compressed
 * on the device; the connectivity shared by several workers); a cancelled
 * streamed run leaves no device memory behind. Skips without a CUDA device. */
#include <string.h>

#include <glib/gstdio.h>

#include "sv-cuda.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-sidecar.h"
#include "supervox/sv-stream.h"
#include "sv-test-files.h"
#include "sv-test-run.h"
#include "sv-test-volumes.h"

static char *cli_path;

typedef struct
{
  char *dir;
} Fixture;

static gboolean
have_device (void)
{
  g_autoptr (GError) error = NULL;

  if (sv_cuda_device_available (&error))
    return TRUE;
  g_test_skip (error->message);
  return FALSE;
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-cuda-stream");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

static char *
path_in (Fixture *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
}

/* Runs `slic IN -o OUT` with the space-separated `extra` arguments and
 * asserts success; returns the sidecar's text. */
static char *
run_slic (Fixture *f, const char *in, const char *out, const char *extra)
{
  g_autofree char *command = g_strdup_printf ("slic %s -o %s %s", in, out, extra);
  g_auto (GStrv) words = g_strsplit (command, " ", -1);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *sidecar = sv_sidecar_path (out);
  char *text = NULL;
  SvTestRun r;

  g_ptr_array_add (argv, cli_path);
  for (guint i = 0; words[i] != NULL; i++)
    if (words[i][0] != '\0')
      g_ptr_array_add (argv, words[i]);
  g_ptr_array_add (argv, NULL);
  r = sv_test_run_argv (f->dir, NULL, (const char *const *)argv->pdata);
  if (r.status != 0)
    g_test_message ("slic %s: %s", extra, r.err);
  g_assert_cmpint (r.status, ==, 0);
  sv_test_run_clear (&r);
  g_assert_true (g_file_get_contents (sidecar, &text, NULL, NULL));
  return text;
}

/* The CPU's in-memory labels, then the GPU's streamed ones under a device
 * limit that allows one slice per slab, in slabs of 2 and 7 slices, and
 * over two workers on device 0: every file the same. */
static void
assert_gpu_stream_identical (Fixture *f, const char *in, const char *params)
{
  static const char *const ways[] = {
    "--device-memory-limit 64K",
    "--slab-depth 2",
    "--slab-depth 7",
    "--devices 0,0 --slab-depth 3",
  };
  g_autofree char *expected = path_in (f, "memory.tif");
  g_autofree char *extra = g_strdup_printf ("%s --backend cpu", params);
  g_autofree char *json = run_slic (f, in, expected, extra);

  g_assert_nonnull (strstr (json, "\"mode\":\"in-memory\""));
  for (guint w = 0; w < G_N_ELEMENTS (ways); w++)
    {
      g_autofree char *out = path_in (f, "streamed.tif");
      g_autofree char *gpu = g_strdup_printf ("%s --backend cuda %s", params, ways[w]);
      g_autofree char *text = NULL;

      g_test_message ("%s", gpu);
      text = run_slic (f, in, out, gpu);
      sv_test_assert_same_file (expected, out);
      g_assert_nonnull (strstr (text, "\"mode\":\"streaming\""));
      g_assert_nonnull (strstr (text, "\"backend\":\"cuda\""));
      g_assert_nonnull (
          strstr (text, strstr (ways[w], "0,0") != NULL ? "\"devices\":2" : "\"devices\":1"));
      g_assert_null (strstr (text, "\"peak_device_memory_bytes\":0"));
      /* Without a device limit the connectivity runs on the device (under
       * 64K it does only for the smallest volumes). */
      if (strstr (params, "--no-enforce-connectivity") == NULL && strstr (ways[w], "64K") == NULL)
        g_assert_nonnull (strstr (text, "\"connectivity_on_device\":true"));
      /* With room, the devices keep the last assignment (two workers
       * on one device, each its own slabs). */
      if (strstr (ways[w], "64K") == NULL)
        g_assert_nonnull (strstr (text, "\"labels_on_device\":true"));
    }
}

/* The integer after "key": in a sidecar. */
static gint64
json_int (const char *json, const char *key)
{
  g_autofree char *quoted = g_strdup_printf ("\"%s\":", key);
  const char *at = strstr (json, quoted);

  g_assert_nonnull (at);
  return g_ascii_strtoll (at + strlen (quoted), NULL, 10);
}

/* A device limit that keeps some slabs on the device and not the others:
 * those go up every iteration beside the kept ones, and the labels are
 * still the CPU's in-memory ones. The limit comes from a run that keeps
 * them all and the last assignment (its peak, less the assignment and
 * room for two and a half slabs). Then a limit with room for every slab
 * and the assignment but not the connectivity: the labels made on the
 * device come to the host for its connectivity. */
static void
test_partial_resident (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (23, 19, 21, 1);
  /* A uint8 slab stays on the device as its samples: a byte a voxel. */
  const gint64 slab = 4 * 19 * 21;
  const gint64 assignment = 23 * 19 * 21 * sizeof (gint32);
  g_autofree char *in = NULL, *expected = NULL, *probe = NULL, *out = NULL;
  g_autofree char *all = NULL, *json = NULL, *memory_json = NULL, *extra = NULL;
  g_autofree char *kept_json = NULL, *kept_extra = NULL;
  gint64 limit, resident;

  if (!have_device ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
  expected = path_in (f, "memory.tif");
  probe = path_in (f, "probe.tif");
  out = path_in (f, "streamed.tif");
  memory_json = run_slic (f, in, expected, "--n-segments 40 --slic-zero --backend cpu");
  all = run_slic (f, in, probe,
                  "--n-segments 40 --slic-zero --backend cuda --slab-depth 4 "
                  "--no-enforce-connectivity");
  /* 23 slices: five slabs of 4 and one of 3. */
  g_assert_cmpint (json_int (all, "resident_slabs"), ==, 6);
  g_assert_nonnull (strstr (all, "\"labels_on_device\":true"));
  limit = json_int (all, "peak_device_memory_bytes") - assignment - 2 * slab - slab / 2;
  extra = g_strdup_printf ("--n-segments 40 --slic-zero --backend cuda --slab-depth 4 "
                           "--device-memory-limit %" G_GINT64_FORMAT,
                           limit);
  json = run_slic (f, in, out, extra);
  resident = json_int (json, "resident_slabs");
  g_assert_cmpint (resident, >, 0);
  g_assert_cmpint (resident, <, 6);
  g_assert_nonnull (strstr (json, "\"connectivity_on_device\":false"));
  g_assert_nonnull (strstr (json, "\"labels_on_device\":false"));
  sv_test_assert_same_file (expected, out);

  kept_extra = g_strdup_printf ("--n-segments 40 --slic-zero --backend cuda --slab-depth 4 "
                                "--device-memory-limit %" G_GINT64_FORMAT,
                                json_int (all, "peak_device_memory_bytes") + 1024);
  kept_json = run_slic (f, in, out, kept_extra);
  g_assert_cmpint (json_int (kept_json, "resident_slabs"), ==, 6);
  g_assert_nonnull (strstr (kept_json, "\"labels_on_device\":true"));
  g_assert_nonnull (strstr (kept_json, "\"connectivity_on_device\":false"));
  sv_test_assert_same_file (expected, out);
}

/* The connectivity window by window on the device: a limit with room
 * for a window of slices but not for the whole volume's rule (the
 * assignment, 256 KiB, and 1.2 MB: the whole rule takes about 1.7 MB, a
 * window of one core slice about 30 KB a slice of the label extent), and
 * windows of 1, 2 and 5 core slices asked for; the file is the CPU's in
 * memory, and the sidecar says how many slices the device held at once. */
static void
test_connectivity_windows (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (64, 32, 32, 1);
  const char *params[] = { "--n-segments 400", "--n-segments 150 --slic-zero --compactness 0.05",
                           "--n-segments 60 --min-size-factor 0.05 --max-size-factor 0.3" };
  g_autofree char *in = NULL, *expected = NULL, *out = NULL;

  if (!have_device ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  expected = path_in (f, "memory.tif");
  out = path_in (f, "streamed.tif");
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    {
      g_autofree char *cpu = g_strdup_printf ("%s --backend cpu", params[p]);
      g_autofree char *limited = g_strdup_printf (
          "%s --backend cuda --slab-depth 8 --device-memory-limit %d", params[p], 262144 + 1200000);
      g_autofree char *memory_json = run_slic (f, in, expected, cpu);
      g_autofree char *json = NULL;

      g_test_message ("%s", limited);
      json = run_slic (f, in, out, limited);
      sv_test_assert_same_file (expected, out);
      g_assert_nonnull (strstr (json, "\"connectivity_on_device\":true"));
      g_assert_cmpint (json_int (json, "connectivity_window"), <, 64);
      gint64 held[3];
      for (guint w = 0; w < 3; w++)
        {
          const char *depth = (const char *[]){ "1", "2", "5" }[w];
          g_autofree char *forced = g_strdup_printf ("%s --backend cuda --slab-depth 8", params[p]);
          g_autofree char *forced_json = NULL;

          g_setenv ("SV_CUDA_CONNECT_WINDOW", depth, TRUE);
          forced_json = run_slic (f, in, out, forced);
          g_unsetenv ("SV_CUDA_CONNECT_WINDOW");
          sv_test_assert_same_file (expected, out);
          g_assert_nonnull (strstr (forced_json, "\"connectivity_on_device\":true"));
          held[w] = json_int (forced_json, "connectivity_window");
        }
      /* A window holds its core, the label extent and one slice below. */
      g_assert_cmpint (held[1], ==, MIN (held[0] + 1, 64));
      g_assert_cmpint (held[2], ==, MIN (held[0] + 4, 64));
    }
}

/* An OME-Zarr store of zlib:runs chunks (64³, cut short at every edge of
 * a 150 × 40 × 70 volume) compressed by the devices that hold the labels:
 * the CPU's store file for file, with the connectivity over the whole
 * volume at once and window by window (windows of 1 and 5 slices cut the
 * rows of chunks), on one worker and on two whose slabs cut a row (one
 * device writes the store); on three whose slabs are whole rows, and on
 * two whose slabs the run chooses (it makes them whole rows), every
 * device writes its own rows; with the device sending labels instead
 * (SV_DEVICE_STRIPS=0), and a blosc store, whose chunks the host
 * encodes, shared the same way. */
static void
test_zarr_chunks (Fixture *f, gconstpointer data)
{
  static const struct
  {
    const char *window, *extra;
    gboolean compressed;
    gint64 devices; /* that shared the connectivity */
  } ways[] = {
    { NULL, "--slab-depth 8", TRUE, 1 },
    { "1", "--slab-depth 8", TRUE, 1 },
    { "5", "--slab-depth 8", TRUE, 1 },
    { NULL, "--slab-depth 8 --devices 0,0", TRUE, 1 },
    { "5", "--slab-depth 8 --devices 0,0", TRUE, 1 },
    { NULL, "--slab-depth 64 --devices 0,0,0", TRUE, 3 },
    { "5", "--slab-depth 64 --devices 0,0,0", TRUE, 3 },
    { "1", "--devices 0,0", TRUE, 2 },
    { NULL, "--slab-depth 8", FALSE, 1 },
    { NULL, "--slab-depth 64 --devices 0,0,0 --compression blosc:zstd:1", FALSE, 3 },
  };
  g_autoptr (SvVolume) v = sv_test_textured_volume (150, 40, 70, 1);
  const char *params = "--n-segments 300 --compactness 0.5";
  g_autofree char *in = NULL, *cpu = NULL, *gpu = NULL;

  if (!have_device ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  /* One name in two folders: the store's metadata names it. */
  for (guint side = 0; side < 2; side++)
    {
      g_autofree char *dir = path_in (f, side == 0 ? "cpu" : "gpu");
      g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
    }
  cpu = path_in (f, "cpu/labels.zarr");
  gpu = path_in (f, "gpu/labels.zarr");
  for (guint w = 0; w < G_N_ELEMENTS (ways); w++)
    {
      const gboolean blosc = strstr (ways[w].extra, "blosc") != NULL;
      g_autofree char *args = g_strdup_printf ("%s --backend cuda %s%s", params, ways[w].extra,
                                               blosc ? "" : " --compression zlib:runs");
      g_autofree char *cpu_args = g_strdup_printf (
          "%s --backend cpu --compression %s", params, blosc ? "blosc:zstd:1" : "zlib:runs");
      g_autofree char *cpu_json = run_slic (f, in, cpu, cpu_args);
      g_autofree char *json = NULL;

      g_test_message ("%s, window %s%s", args, ways[w].window ? ways[w].window : "whole",
                      ways[w].compressed || blosc ? "" : ", labels to the host");
      if (ways[w].window != NULL)
        g_setenv ("SV_CUDA_CONNECT_WINDOW", ways[w].window, TRUE);
      if (!ways[w].compressed && !blosc)
        g_setenv ("SV_DEVICE_STRIPS", "0", TRUE);
      json = run_slic (f, in, gpu, args);
      g_unsetenv ("SV_CUDA_CONNECT_WINDOW");
      g_unsetenv ("SV_DEVICE_STRIPS");
      g_assert_nonnull (strstr (json, "\"connectivity_on_device\":true"));
      g_assert_cmpint (json_int (json, "slices_compressed_on_device"), ==,
                       ways[w].compressed ? 150 : 0);
      g_assert_cmpint (json_int (json, "connectivity_devices"), ==, ways[w].devices);
      sv_test_assert_same_tree (cpu, gpu);
      sv_test_remove_tree (gpu);
      sv_test_remove_tree (cpu);
    }
}

static void
test_identical (Fixture *f, gconstpointer data)
{
  SvSampleType as = GPOINTER_TO_INT (data);
  /* 23 slices: odd, and more than one grid step per slab only at depth 7. */
  g_autoptr (SvVolume) v = sv_test_textured_volume (23, 19, 21, 1);
  g_autofree char *in = NULL;

  if (!have_device ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, as);
  for (guint p = 0; sv_test_stream_param_sets[p] != NULL; p++)
    assert_gpu_stream_identical (f, in, sv_test_stream_param_sets[p]);
}

static void
test_mask (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (17, 20, 18, 1);
  g_autoptr (SvVolume) m = sv_test_textured_volume (17, 20, 18, 1);
  g_autofree char *in = NULL, *mask = NULL, *params = NULL;

  if (!have_device ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  /* A ball, whose slices grow and shrink across slabs. */
  for (guint z = 0; z < 17; z++)
    for (guint y = 0; y < 20; y++)
      for (guint x = 0; x < 18; x++)
        m->data[((gsize)z * 20 + y) * 18 + x]
            = (z - 8.0) * (z - 8.0) + (y - 10.0) * (y - 9.0) + (x - 9.0) * (x - 9.0) < 70 ? 1 : 0;
  mask = sv_test_write_volume (f->dir, "mask.tif", m, SV_SAMPLE_U8);
  params = g_strdup_printf ("--mask %s --n-segments 20 --start-label 0", mask);
  assert_gpu_stream_identical (f, in, params);
  g_free (params);
  params = g_strdup_printf ("--mask %s --n-segments 20 --sigma 0.8 --slic-zero --compactness 0.05",
                            mask);
  assert_gpu_stream_identical (f, in, params);
}

static void
test_odd_shapes (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) thin = sv_test_textured_volume (3, 25, 22, 1);
  g_autoptr (SvVolume) flat = sv_test_textured_volume (1, 40, 37, 1);
  g_autoptr (SvVolume) rgb = sv_test_textured_volume (1, 33, 29, 3);
  g_autoptr (SvVolume) wide = sv_test_textured_volume (9, 70, 90, 1);
  g_autofree char *in_thin = NULL, *in_flat = NULL, *in_rgb = NULL, *in_wide = NULL;

  if (!have_device ())
    return;
  in_thin = sv_test_write_volume (f->dir, "thin.tif", thin, SV_SAMPLE_F32);
  in_flat = sv_test_write_volume (f->dir, "flat.tif", flat, SV_SAMPLE_U8);
  in_rgb = sv_test_write_volume (f->dir, "rgb.tif", rgb, SV_SAMPLE_U8);
  in_wide = sv_test_write_volume (f->dir, "wide.tif", wide, SV_SAMPLE_U8);
  assert_gpu_stream_identical (f, in_thin, "--n-segments 20 --sigma 2");
  assert_gpu_stream_identical (f, in_flat, "--n-segments 30 --sigma 1");
  assert_gpu_stream_identical (f, in_rgb, "--n-segments 30");
  /* Many clusters per slab: the tiled assignment's candidate lists. */
  assert_gpu_stream_identical (f, in_wide, "--n-segments 900 --sigma 0.5");
}

/* The connectivity shared by 2, 3 and 4 workers that kept the labels,
 * each numbering the pieces of its own slices: the CPU's in-memory file
 * with the whole volume at once and in windows of 2 slices, slabs of 4
 * slices (a worker's share is thinner than the label extent at low
 * compactness, so a warm-up reaches across several shares), with pieces
 * cut at max_size, small ones merged and a mask; the sidecar says how
 * many devices shared it. The legacy rule, and SV_DEVICE_PIECES=0, leave
 * it to one device. */
static void
test_shared_connectivity (Fixture *f, gconstpointer data)
{
  static const char *const devices[] = { "0,0", "0,0,0", "0,0,0,0" };
  static const char *const windows[] = { NULL, "2" };
  g_autoptr (SvVolume) v = sv_test_textured_volume (64, 32, 32, 1);
  g_autoptr (SvVolume) m = sv_test_textured_volume (64, 32, 32, 1);
  g_autofree char *in = NULL, *mask = NULL, *expected = NULL, *out = NULL;
  g_autofree char *masked = NULL;

  if (!have_device ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  /* Background in a band of slices and in a cylinder along z. */
  for (guint z = 0; z < 64; z++)
    for (guint y = 0; y < 32; y++)
      for (guint x = 0; x < 32; x++)
        m->data[((gsize)z * 32 + y) * 32 + x]
            = (z >= 20 && z < 23) || (y - 12.0) * (y - 12.0) + (x - 20.0) * (x - 20.0) < 20 ? 0 : 1;
  mask = sv_test_write_volume (f->dir, "mask.tif", m, SV_SAMPLE_U8);
  masked = g_strdup_printf ("--mask %s --n-segments 200 --start-label 0", mask);
  expected = path_in (f, "memory.tif");
  out = path_in (f, "shared.tif");
  const char *params[] = { "--n-segments 400", "--n-segments 150 --slic-zero --compactness 0.05",
                           "--n-segments 60 --min-size-factor 0.05 --max-size-factor 0.3",
                           "--n-segments 300 --min-size-factor 0.9 --compactness 0.2", masked };
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    {
      g_autofree char *cpu = g_strdup_printf ("%s --backend cpu", params[p]);
      g_autofree char *memory_json = run_slic (f, in, expected, cpu);

      for (guint d = 0; d < G_N_ELEMENTS (devices); d++)
        for (guint w = 0; w < G_N_ELEMENTS (windows); w++)
          {
            g_autofree char *args = g_strdup_printf ("%s --backend cuda --slab-depth 4 --devices %s",
                                                     params[p], devices[d]);
            g_autofree char *json = NULL;

            g_test_message ("%s, windows of %s", args, windows[w] ? windows[w] : "all");
            if (windows[w] != NULL)
              g_setenv ("SV_CUDA_CONNECT_WINDOW", windows[w], TRUE);
            json = run_slic (f, in, out, args);
            g_unsetenv ("SV_CUDA_CONNECT_WINDOW");
            sv_test_assert_same_file (expected, out);
            g_assert_cmpint (json_int (json, "connectivity_devices"), ==, (gint64)d + 2);
          }
    }
  /* One device runs the rules the shares do not. */
  for (guint way = 0; way < 2; way++)
    {
      const char *rule = way == 0 ? " --connectivity-rule legacy" : "";
      g_autofree char *cpu = g_strdup_printf ("--n-segments 150 --backend cpu%s", rule);
      g_autofree char *gpu = g_strdup_printf (
          "--n-segments 150 --backend cuda --slab-depth 4 --devices 0,0%s", rule);
      g_autofree char *memory_json = run_slic (f, in, expected, cpu);
      g_autofree char *json = NULL;

      if (way == 1)
        g_setenv ("SV_DEVICE_PIECES", "0", TRUE);
      json = run_slic (f, in, out, gpu);
      g_unsetenv ("SV_DEVICE_PIECES");
      sv_test_assert_same_file (expected, out);
      g_assert_cmpint (json_int (json, "connectivity_devices"), ==, 1);
    }
}

typedef struct
{
  GCancellable *cancellable;
  guint after;
} CancelAt;

static void
cancel_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  CancelAt *at = user_data;

  if (stage == SV_STAGE_ITERATE && iteration == at->after)
    g_cancellable_cancel (at->cancellable);
}

static gsize
device_free (void)
{
  g_autoptr (GError) error = NULL;
  gsize free_bytes = 0;

  g_assert_true (sv_cuda_mem_get_info (&free_bytes, NULL, &error));
  g_assert_no_error (error);
  return free_bytes;
}

/* A streamed run cancelled between iterations ends with G_IO_ERROR_CANCELLED,
 * no label file, and the device memory it had (slab buffers, pinned
 * buffers, clusters) given back. */
static void
test_cancel_frees_device (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (40, 64, 64, 1);
  g_autoptr (GError) error = NULL;
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *in = NULL, *out = NULL;
  SvBackend *backend;
  SvStreamOptions options;
  SvSlicParams params;
  CancelAt at = { cancellable, 2 };
  gsize before, during;

  if (!have_device ())
    return;
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
  out = path_in (f, "out.tif");
  sv_slic_params_init_defaults (&params);
  params.n_segments = 200;
  params.slic_zero = TRUE;
  backend = sv_cuda_backend_new_on_device (0, &error);
  g_assert_no_error (error);
  sv_stream_options_init_defaults (&options);
  options.slab_depth = 3;
  options.backends = &backend;
  options.n_backends = 1;

  /* A whole run first, so that the runtime's lazy loading is behind us. */
  g_assert_true (sv_stream_slic_run (in, out, &params, NULL, &options, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_test (out, G_FILE_TEST_EXISTS));
  g_assert_cmpint (g_unlink (out), ==, 0);

  before = device_free ();
  options.progress = cancel_cb;
  options.user_data = &at;
  options.cancellable = cancellable;
  g_assert_false (sv_stream_slic_run (in, out, &params, NULL, &options, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  during = device_free ();
  g_assert_cmpuint (during, ==, before);
  sv_backend_free (backend);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  sv_backend_register (sv_backend_cuda_class ());
  cli_path = g_strdup (g_getenv ("SV_CLI") != NULL ? g_getenv ("SV_CLI") : SV_CLI_PATH);
  /* Carried to another machine, the build's path is gone: say so once
   * instead of failing every test on a command that cannot start. */
  if (!g_file_test (cli_path, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_printerr ("test-cuda-stream: no supervox-cli at %s; set SV_CLI to its path\n", cli_path);
      return 1;
    }

#define ADD(path, func, data)                                                                      \
  g_test_add ((path), Fixture, (data), fixture_setup, (func), fixture_teardown)
  ADD ("/cuda/stream/identical-to-cpu/uint8", test_identical, GINT_TO_POINTER (SV_SAMPLE_U8));
  ADD ("/cuda/stream/identical-to-cpu/float32", test_identical, GINT_TO_POINTER (SV_SAMPLE_F32));
  ADD ("/cuda/stream/identical-to-cpu/mask", test_mask, NULL);
  ADD ("/cuda/stream/identical-to-cpu/odd-shapes", test_odd_shapes, NULL);
  ADD ("/cuda/stream/identical-to-cpu/partly-resident", test_partial_resident, NULL);
  ADD ("/cuda/stream/identical-to-cpu/connectivity-windows", test_connectivity_windows, NULL);
  ADD ("/cuda/stream/identical-to-cpu/zarr-chunks", test_zarr_chunks, NULL);
  ADD ("/cuda/stream/identical-to-cpu/shared-connectivity", test_shared_connectivity, NULL);
  ADD ("/cuda/stream/cancel-frees-device", test_cancel_frees_device, NULL);
#undef ADD
  return g_test_run ();
}

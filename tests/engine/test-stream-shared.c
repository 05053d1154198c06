/* Supervox engine tests: the connectivity shared by several pretend
 * devices that kept their labels (keeping-device-pieces.c), each handing
 * its slices to the label file or OME-Zarr store at once; the file must
 * be the CPU's streamed one byte for byte, and a device that fails must
 * leave one line and no file. */
#include "keeping-device.h"

#include <glib/gstdio.h>
#include <string.h>

#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io-zarr.h"
#include "supervox/sv-stream.h"
#include "backend-private.h"
#include "io-tiff-private.h"
#include "sv-test-files.h"
#include "sv-test-ranks.h"
#include "sv-test-volumes.h"

/* A run on four pretend devices (`options`' slabs) whose third fails
 * after its first slab or row of chunks: one line, and nothing left in
 * `dir` whose name starts with `prefix` or a dot ("": nothing at all). */
static void
assert_failing_device_leaves_nothing (const char *in, const char *out, const SvSlicParams *params,
                                      SvStreamOptions *options, SvBackend **keepers,
                                      const char *dir, const char *prefix)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) listing = NULL;
  const char *name;

  options->backends = keepers;
  options->n_backends = 4;
  device.emit_meet = 0;
  device.failing_emit = (gint)keeping_device_index (keepers[2]);
  g_assert_false (sv_stream_slic_run (in, out, params, NULL, options, NULL, NULL, &error));
  device.failing_emit = -1;
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND);
  g_assert_nonnull (strstr (error->message, "cannot be copied"));
  g_assert_null (strchr (error->message, '\n'));
  g_clear_error (&error);
  listing = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (listing)) != NULL)
    if (g_str_has_prefix (name, prefix) || name[0] == '.')
      g_error ("left behind: %s", name);
}

/* The connectivity shared by 2, 3 and 4 devices that kept their labels,
 * in slabs of 1, 2 and 3 of 40 slices (shares thinner than a cluster's
 * window, so that at low compactness a warm-up reaches across several
 * shares): the CPU's streamed file every time, with a mask whose
 * background fills whole slices and a cylinder, pieces cut at max_size
 * and small ones merged; the report says how many devices shared it.
 * The later devices hand their pages to the file at once (they meet in
 * emit_kept), holding their strips in memory until their turn: as much
 * as they like, none, or 2000 bytes. A device that fails after its first
 * slab leaves one line and no file. */
static void
test_shared_connectivity (Fixture *f, gconstpointer data)
{
  const guint nz = 40, ny = 19, nx = 21;
  g_autoptr (SvVolume) v = sv_test_textured_volume (nz, ny, nx, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  g_autofree char *cpu_out = g_build_filename (f->dir, "cpu.tif", NULL);
  g_autofree char *out = g_build_filename (f->dir, "shared.tif", NULL);
  g_autofree guint8 *mask = g_new (guint8, (gsize)nz * ny * nx);
  g_autoptr (GError) error = NULL;
  SvBackend *keepers[4];
  SvSlicParams params[5];

  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        mask[((gsize)z * ny + y) * nx + x]
            = !((z >= 17 && z < 20) || (y - 8.0) * (y - 8.0) + (x - 12.0) * (x - 12.0) < 10);
  make_params (params);
  keeping_devices_new (keepers, 4);
  device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
  device.only_first_keeps = FALSE;
  device.plane = (gsize)ny * nx;
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    for (guint depth = 1; depth <= 3; depth++)
      {
        const guint8 *m = p == 2 ? mask : NULL;
        SvStreamOptions options;

        if (!params[p].enforce_connectivity)
          continue;
        sv_stream_options_init_defaults (&options);
        options.slab_depth = depth;
        g_assert_true (sv_stream_slic_run (in, cpu_out, &params[p], m, &options, NULL, NULL,
                                           &error));
        g_assert_no_error (error);
        for (guint n_workers = 2; n_workers <= 4; n_workers++)
          {
            SvStreamReport report;

            g_test_message ("params %u, slabs of %u, %u devices", p, depth, n_workers);
            device.run++;
            device.emit_meet = (gint)n_workers - 1;
            device.emit_arrived = device.emit_met = 0;
            if (depth > 1)
              g_setenv ("SV_TIFF_SHARE_BYTES", depth == 2 ? "0" : "2000", TRUE);
            options.backends = keepers;
            options.n_backends = n_workers;
            g_assert_true (
                sv_stream_slic_run (in, out, &params[p], m, &options, NULL, &report, &error));
            g_unsetenv ("SV_TIFF_SHARE_BYTES");
            g_assert_no_error (error);
            sv_test_assert_same_file (cpu_out, out);
            g_assert_true (report.labels_on_device);
            g_assert_cmpuint (report.connect_devices, ==, n_workers);
            g_assert_cmpint (device.emit_met, ==, n_workers > 2 ? n_workers - 1 : 0);
            g_assert_cmpint (g_remove (out), ==, 0);
          }
      }
  /* The third of four devices fails after its first slab; the fourth
   * waits for its turn, which never comes. */
  {
    SvStreamOptions options;

    sv_stream_options_init_defaults (&options);
    options.slab_depth = 2;
    assert_failing_device_leaves_nothing (in, out, &params[0], &options, keepers, f->dir,
                                          "shared");
  }
  for (guint w = 0; w < 4; w++)
    sv_backend_free (keepers[w]);
}

/* An OME-Zarr store written by the devices that shared the connectivity,
 * each its own rows of chunks at once (4 × 8 × 16 chunks of 40 × 19 × 21,
 * short at the y and x edges): the CPU's store file for file, with
 * zlib:runs (every other row compressed by the devices) and blosc
 * (labels), on 2, 3 and 4 devices, the later ones all writing at once.
 * Slabs that cut rows (3 slices) leave zlib:runs to one device and blosc
 * to the devices in z order; slabs the run chooses itself are whole rows
 * on several devices. A device that fails after its first row leaves one
 * line and no store. */
static void
test_shared_zarr (Fixture *f, gconstpointer data)
{
  const guint nz = 40, ny = 19, nx = 21;
  g_autoptr (SvVolume) v = sv_test_textured_volume (nz, ny, nx, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  g_autofree char *cpu_out = NULL, *out = NULL, *dir = g_build_filename (f->dir, "shared", NULL);
  g_autoptr (GError) error = NULL;
  SvBackend *keepers[4];
  SvSlicParams params[5];
  SvZarrWriteOptions zarr;

  make_params (params);
  keeping_store_paths (f, "shared", &cpu_out, &out);
  keeping_devices_new (keepers, 4);
  device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
  device.only_first_keeps = FALSE;
  device.plane = (gsize)ny * nx;
  for (guint c = 0; c < 2; c++)
    {
      const gboolean runs = c == 0;

      keeping_small_chunks (&zarr, runs ? "zlib:runs" : "blosc:zstd:1");
      for (guint p = 0; p < G_N_ELEMENTS (params); p++)
        {
          SvStreamOptions options;

          if (!params[p].enforce_connectivity)
            continue;
          sv_stream_options_init_defaults (&options);
          options.write_options.zarr = &zarr;
          g_assert_true (
              sv_stream_slic_run (in, cpu_out, &params[p], NULL, &options, NULL, NULL, &error));
          g_assert_no_error (error);
          /* 0: the run's own slabs, at most 6 slices. */
          for (guint depth = 0; depth <= 8; depth++)
            for (guint n_workers = 2; n_workers <= 4; n_workers++)
              {
                const gboolean rows = depth == 0 || depth % 4 == 0;
                SvStreamReport report;

                if (depth != 0 && depth != 3 && depth != 4 && depth != 8)
                  continue;
                g_test_message ("%s, params %u, slabs of %u, %u devices",
                                runs ? "zlib:runs" : "blosc", p, depth, n_workers);
                device.run++;
                device.chunk_rows = 0;
                device.emit_meet = rows ? (gint)n_workers - 1 : 0;
                device.emit_arrived = device.emit_met = 0;
                options.slab_depth = depth;
                options.max_slab_depth = depth == 0 ? 6 : 0;
                options.backends = keepers;
                options.n_backends = n_workers;
                g_assert_true (
                    sv_stream_slic_run (in, out, &params[p], NULL, &options, NULL, &report, &error));
                g_assert_no_error (error);
                sv_test_assert_same_tree (cpu_out, out);
                sv_test_remove_tree (out);
                g_assert_true (report.labels_on_device);
                /* Rows of 4 slices, cut by slabs of 3. */
                if (depth == 0)
                  g_assert_cmpuint (report.slab_depth, ==, 4);
                g_assert_cmpuint (report.connect_devices, ==, runs && !rows ? 1 : n_workers);
                /* Every other row of the ten compressed. */
                g_assert_cmpint (device.chunk_rows, ==, runs ? 5 : 0);
                g_assert_cmpint (device.emit_met, ==, rows && n_workers > 2 ? n_workers - 1 : 0);
              }
          sv_test_remove_tree (cpu_out);
        }
    }
  /* The third of four devices fails after its first row. */
  {
    SvStreamOptions options;

    sv_stream_options_init_defaults (&options);
    options.write_options.zarr = &zarr;
    options.slab_depth = 4;
    assert_failing_device_leaves_nothing (in, out, &params[0], &options, keepers, dir, "");
  }
  for (guint w = 0; w < 4; w++)
    sv_backend_free (keepers[w]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  keeping_device_register ();
  g_test_add ("/engine/stream/shared/connectivity", Fixture, NULL, fixture_setup,
              test_shared_connectivity, fixture_teardown);
  g_test_add ("/engine/stream/shared/zarr", Fixture, NULL, fixture_setup, test_shared_zarr,
              fixture_teardown);
  return g_test_run ();
}

/* Supervox engine tests: a streamed run whose slab steps keep the last
 * assignment in their own memory (SvSlabSteps.keep_assignment) and
 * prepare slabs from the file's samples themselves (take_samples), as the
 * CUDA backend does on its device. The device here is host memory behind
 * the CPU's slab steps, so that the run's other paths (SLIC-zero's maxima,
 * the fill, the tally and the connectivity reading the kept assignment,
 * or taking it back to the host when the connectivity does not fit; slabs
 * held from their samples, or prepared by the host when there is no room)
 * run in CI (several devices sharing the connectivity and the file:
 * test-stream-shared.c); the labels must be the CPU's streamed ones byte
 * for byte, an OME-Zarr store's too, whose chunks the device
 * compresses. */
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

static void
test_kept_assignment (Fixture *f, gconstpointer data)
{
  static const struct
  {
    gboolean slabs, labels, connectivity, only_first;
  } rooms[] = {
    { TRUE, TRUE, TRUE, FALSE },    { FALSE, TRUE, TRUE, FALSE }, { TRUE, TRUE, FALSE, FALSE },
    { FALSE, FALSE, FALSE, FALSE }, { TRUE, TRUE, TRUE, TRUE },     { TRUE, FALSE, TRUE, FALSE },
  };
  g_autoptr (SvVolume) v = sv_test_textured_volume (23, 19, 21, 1);
  g_autofree char *in = NULL;
  g_autofree char *cpu_out = g_build_filename (f->dir, "cpu.tif", NULL);
  g_autofree char *out = g_build_filename (f->dir, "kept.tif", NULL);
  g_autofree guint8 *ball = g_new (guint8, (gsize)23 * 19 * 21);
  g_autoptr (GError) error = NULL;
  SvBackend *keepers[3];
  SvSlicParams params[5];

  /* Away from 0 and 1, so that the rescale's shift and scale both count. */
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = 0.25f + 0.5f * v->data[i];
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  for (guint z = 0; z < 23; z++)
    for (guint y = 0; y < 19; y++)
      for (guint x = 0; x < 21; x++)
        ball[((gsize)z * 19 + y) * 21 + x]
            = (z - 11.0) * (z - 11.0) + (y - 9.0) * (y - 9.0) + (x - 10.0) * (x - 10.0) < 90;
  make_params (params);
  keeping_devices_new (keepers, 3);

  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    {
      const guint8 *mask = p == 2 ? ball : NULL;
      SvStreamOptions options;

      sv_stream_options_init_defaults (&options);
      options.slab_depth = 4;
      g_assert_true (
          sv_stream_slic_run (in, cpu_out, &params[p], mask, &options, NULL, NULL, &error));
      g_assert_no_error (error);
      for (guint n_workers = 1; n_workers <= 3; n_workers++)
        for (guint r = 0; r < G_N_ELEMENTS (rooms); r++)
          {
            /* Kept only when every device has room for its share. */
            const gboolean kept = rooms[r].labels && (!rooms[r].only_first || n_workers == 1);
            SvStreamReport report;

            g_test_message ("params %u, %u devices, room for slabs %d, labels %d (only the "
                            "first %d), connectivity %d",
                            p, n_workers, rooms[r].slabs, rooms[r].labels, rooms[r].only_first,
                            rooms[r].connectivity);
            device.room_for_slabs = rooms[r].slabs;
            device.room_for_labels = rooms[r].labels;
            device.room_for_connectivity = rooms[r].connectivity;
            device.only_first_keeps = rooms[r].only_first;
            device.plane = 19 * 21;
            device.samples_taken = device.label_slabs = device.connected = device.given_back = 0;
            device.strip_slabs = 0;
            /* Devices that hold their slabs but not the labels hand the
             * last assignment to the host all at once. */
            device.spill_meet = rooms[r].slabs && !kept && mask == NULL ? (gint)n_workers : 0;
            device.spill_arrived = device.spill_met = 0;
            memset (device.host_fills, 0, sizeof device.host_fills);
            device.run++;
            options.backends = keepers;
            options.n_backends = n_workers;
            g_assert_true (
                sv_stream_slic_run (in, out, &params[p], mask, &options, NULL, &report, &error));
            g_assert_no_error (error);
            sv_test_assert_same_file (cpu_out, out);
            g_assert_cmpint (report.labels_on_device, ==, kept);
            g_assert_cmpuint (device.label_slabs, ==, kept ? 6 : 0);
            /* Each of several devices keeps the labels of its own slabs
             * only (slabs of 4 of the 23 slices, a run of them each). */
            for (guint w = 0; kept && w < n_workers; w++)
              {
                static const guint slices[3][3] = { { 23 }, { 12, 11 }, { 8, 8, 7 } };

                g_assert_cmpuint (keeping_device_kept_slices (keepers[w]), ==,
                                  slices[n_workers - 1][w]);
              }
            /* The first device's share is given back when the second has
             * no room. */
            g_assert_cmpuint (device.given_back, ==, rooms[r].labels && !kept ? 1 : 0);
            /* With room the first device runs the connectivity, on its
             * own labels or on what the source reads from the others or
             * the spill file. */
            g_assert_cmpint (report.connect_on_device, ==,
                             rooms[r].connectivity && params[p].enforce_connectivity);
            g_assert_cmpuint (device.connected, ==, report.connect_on_device ? 1 : 0);
            /* Several devices that kept their labels share it, each its
             * own slices, the first labelling and writing its own while
             * the others number their pieces. */
            g_assert_cmpuint (report.connect_devices, ==,
                              !report.connect_on_device ? 0
                              : kept && n_workers > 1   ? n_workers
                                                        : 1);
            /* The label file (deflate of runs, the default) takes its
             * strips compressed on the device: three of the six slabs. */
            g_assert_cmpuint (device.strip_slabs, ==, report.connect_on_device ? 3 : 0);
            /* Six slabs, each taken once from its samples when there is
             * room. */
            g_assert_cmpint (device.samples_taken, ==, rooms[r].slabs ? 6 : 0);
            g_assert_cmpuint (report.resident_slabs, ==, rooms[r].slabs ? 6 : 0);
            /* Several devices read their own slabs in the first pass,
             * without a mask (which is read under the pass's lock). */
            g_assert_cmpuint (report.slabs_read_by_workers, ==,
                              n_workers > 1 && rooms[r].slabs && mask == NULL ? 6 : 0);
            /* The statistics pass and the first pass read the file; every
             * slab is kept after that, on the devices or by the host. */
            g_assert_cmpuint (report.image_passes, ==, 2);
            g_assert_cmpint (device.spill_met, ==, device.spill_meet > 1 ? device.spill_meet : 0);
            /* Labels the host holds are made by every device at once,
             * each its own run of slabs (two or three of six), without a
             * mask; by the first alone with one. */
            for (guint w = 0; w < 3; w++)
              {
                const gboolean host_labels = !kept && params[p].max_num_iter > 0;
                const guint own = w < n_workers ? 6 / n_workers : 0;
                const guint fills = !host_labels         ? 0
                                    : mask != NULL       ? (w == 0 ? 6 : 0)
                                    : n_workers == 1     ? (w == 0 ? 6 : 0)
                                                         : own;

                g_assert_cmpint (device.host_fills[w], ==, fills);
              }
            for (guint w = 0; w < 3; w++)
              g_assert_false (keeping_device_keeps_labels (keepers[w]));
            g_assert_cmpint (g_remove (out), ==, 0);
          }
    }
  /* One slab for two devices: the second keeps an assignment it never
   * writes, and tallies nothing. */
  {
    SvStreamOptions options;
    SvStreamReport report;

    sv_stream_options_init_defaults (&options);
    options.slab_depth = 23;
    g_assert_true (
        sv_stream_slic_run (in, cpu_out, &params[1], NULL, &options, NULL, NULL, &error));
    g_assert_no_error (error);
    device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
    device.only_first_keeps = FALSE;
    device.label_slabs = 0;
    options.backends = keepers;
    options.n_backends = 2;
    g_assert_true (sv_stream_slic_run (in, out, &params[1], NULL, &options, NULL, &report, &error));
    g_assert_no_error (error);
    sv_test_assert_same_file (cpu_out, out);
    g_assert_true (report.labels_on_device);
    g_assert_cmpuint (device.label_slabs, ==, 1);
    g_assert_cmpuint (keeping_device_kept_slices (keepers[0]), ==, 23);
    g_assert_cmpuint (keeping_device_kept_slices (keepers[1]), ==, 0);
  }
  /* The devices' own readers and slab buffers only where the memory limit
   * leaves room for them beside what the run keeps: at 200 KiB there is
   * none, the slabs are read under the pass's lock, and the file is the
   * same. */
  {
    SvStreamOptions options;
    SvStreamReport report;

    sv_stream_options_init_defaults (&options);
    options.slab_depth = 4;
    g_assert_true (
        sv_stream_slic_run (in, cpu_out, &params[0], NULL, &options, NULL, NULL, &error));
    g_assert_no_error (error);
    device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
    device.only_first_keeps = FALSE;
    options.backends = keepers;
    options.n_backends = 3;
    options.memory_limit = 200 << 10;
    g_assert_true (sv_stream_slic_run (in, out, &params[0], NULL, &options, NULL, &report, &error));
    g_assert_no_error (error);
    sv_test_assert_same_file (cpu_out, out);
    g_assert_cmpuint (report.slabs_read_by_workers, ==, 0);
    g_assert_cmpuint (report.resident_slabs, ==, 6);
    options.memory_limit = 0;
    g_assert_true (sv_stream_slic_run (in, out, &params[0], NULL, &options, NULL, &report, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (report.slabs_read_by_workers, ==, 6);
    g_assert_cmpint (g_remove (out), ==, 0);
  }
  /* A file cut short fails with the reader's words on any number of
   * devices (the devices' own readers open it as the run's did), and
   * leaves no file. */
  {
    g_autofree char *cut = g_build_filename (f->dir, "cut.tif", NULL);
    g_autofree char *bytes = NULL;
    g_autofree char *messages[3] = { NULL };
    gsize len = 0;

    g_assert_true (g_file_get_contents (in, &bytes, &len, NULL));
    /* The last slab's pages; the directories are at the start. */
    g_assert_true (g_file_set_contents (cut, bytes, (gssize)(len - 2000), NULL));
    if (g_file_test (out, G_FILE_TEST_EXISTS))
      g_assert_cmpint (g_remove (out), ==, 0);
    device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
    device.only_first_keeps = FALSE;
    for (guint n_workers = 1; n_workers <= 3; n_workers++)
      {
        SvStreamOptions options;
        SvStreamReport report;

        sv_stream_options_init_defaults (&options);
        options.slab_depth = 4;
        options.backends = keepers;
        options.n_backends = n_workers;
        g_assert_false (
            sv_stream_slic_run (cut, out, &params[0], NULL, &options, NULL, &report, &error));
        g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT);
        g_test_message ("%u devices: %s", n_workers, error->message);
        messages[n_workers - 1] = g_strdup (error->message);
        g_clear_error (&error);
        g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
      }
    g_assert_cmpstr (messages[1], ==, messages[0]);
    g_assert_cmpstr (messages[2], ==, messages[0]);
    g_assert_nonnull (strstr (messages[0], "cut.tif"));
    for (guint i = 0; i < 3; i++)
      g_free (messages[i]);
    memset (messages, 0, sizeof messages);
    g_assert_cmpint (g_remove (cut), ==, 0);
  }
  /* A cancel once the connectivity has begun ends the device's at its next
   * slab: no file. */
  {
    g_autoptr (GCancellable) cancel = g_cancellable_new ();
    SvStreamOptions options;

    sv_stream_options_init_defaults (&options);
    options.slab_depth = 4;
    options.backends = keepers;
    options.n_backends = 1;
    options.cancellable = cancel;
    options.progress = cancel_at_connect;
    options.user_data = cancel;
    device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
    device.connected = 0;
    g_assert_false (sv_stream_slic_run (in, out, &params[0], NULL, &options, NULL, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error (&error);
    g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    g_assert_cmpuint (device.connected, ==, 1);
  }
  /* A device that fails on its share of the connectivity (the second or
   * the third of three; the first writes its slices meanwhile): one line
   * that says so, and no file. */
  for (guint failing = 1; failing < 3; failing++)
    {
      SvStreamOptions options;

      sv_stream_options_init_defaults (&options);
      options.slab_depth = 4;
      options.backends = keepers;
      options.n_backends = 3;
      device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
      device.failing_share = (gint)keeping_device_index (keepers[failing]);
      g_assert_false (
          sv_stream_slic_run (in, out, &params[0], NULL, &options, NULL, NULL, &error));
      device.failing_share = -1;
      g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY);
      g_assert_nonnull (strstr (error->message, "pieces"));
      g_assert_null (strchr (error->message, '\n'));
      g_clear_error (&error);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
  for (guint w = 0; w < 3; w++)
    sv_backend_free (keepers[w]);
}

/* An OME-Zarr store of zlib:runs chunks (4 × 8 × 16, short at every edge
 * of the 23 × 19 × 21 volume) takes every other row of chunks compressed
 * by the device that ran the connectivity, and the others as labels: the
 * store is the CPU's, file for file, on one and on two devices. A store of
 * another codec, and SV_DEVICE_STRIPS=0, take labels only. */
static void
test_zarr_chunks (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (23, 19, 21, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  g_autofree char *cpu_out = NULL, *out = NULL;
  g_autoptr (GError) error = NULL;
  SvBackend *keepers[2];
  SvSlicParams params[5];
  SvZarrWriteOptions zarr;

  make_params (params);
  keeping_store_paths (f, "kept", &cpu_out, &out);
  keeping_devices_new (keepers, 2);
  for (guint c = 0; c < 3; c++)
    {
      const char *codec = c == 1 ? "blosc:zstd:1" : "zlib:runs";
      /* Rows 0, 2, 4 of the six rows of 4 slices (the last of 3). */
      const guint compressed = c == 0 ? 12 : 0;
      SvStreamOptions options;
      SvStreamReport report;

      keeping_small_chunks (&zarr, codec);
      sv_stream_options_init_defaults (&options);
      options.slab_depth = 5;
      options.write_options.zarr = &zarr;
      g_assert_true (
          sv_stream_slic_run (in, cpu_out, &params[0], NULL, &options, NULL, NULL, &error));
      g_assert_no_error (error);
      if (c == 2)
        g_setenv ("SV_DEVICE_STRIPS", "0", TRUE);
      for (guint n_workers = 1; n_workers <= 2; n_workers++)
        {
          g_test_message ("%s, %u devices%s", codec, n_workers,
                          c == 2 ? ", SV_DEVICE_STRIPS=0" : "");
          device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
          device.only_first_keeps = FALSE;
          device.plane = 19 * 21;
          device.chunk_rows = device.strip_slabs = 0;
          device.run++;
          options.backends = keepers;
          options.n_backends = n_workers;
          g_assert_true (
              sv_stream_slic_run (in, out, &params[0], NULL, &options, NULL, &report, &error));
          g_assert_no_error (error);
          g_assert_true (report.connect_on_device);
          g_assert_cmpuint (report.slices_compressed_on_device, ==, compressed);
          g_assert_cmpuint (device.chunk_rows, ==, compressed > 0 ? 3 : 0);
          g_assert_cmpuint (device.strip_slabs, ==, 0);
          sv_test_assert_same_tree (cpu_out, out);
          sv_test_remove_tree (out);
        }
      g_unsetenv ("SV_DEVICE_STRIPS");
      sv_test_remove_tree (cpu_out);
    }
  for (guint w = 0; w < 2; w++)
    sv_backend_free (keepers[w]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  keeping_device_register ();
  g_test_add ("/engine/stream/kept/identical-to-cpu", Fixture, NULL, fixture_setup,
              test_kept_assignment, fixture_teardown);
  g_test_add ("/engine/stream/kept/zarr-chunks", Fixture, NULL, fixture_setup, test_zarr_chunks,
              fixture_teardown);
  return g_test_run ();
}

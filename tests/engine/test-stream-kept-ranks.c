/* Supervox engine tests: MPI ranks (threads here) whose pretend devices
 * keep their labels; rank 0's device takes the others' labels, through
 * the host or from their devices, and runs the connectivity: the file of
 * one process on the CPU, byte for byte. */
#include "keeping-device.h"

#include <glib/gstdio.h>
#include <string.h>

#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-stream.h"
#include "backend-private.h"
#include "io-tiff-private.h"
#include "sv-test-files.h"
#include "sv-test-ranks.h"
#include "sv-test-volumes.h"

/* What every rank runs: its own pretend device. */
typedef struct
{
  const char *in, *out;
  const SvSlicParams *params;
  const guint8 *mask;
  SvBackend **devices;
} RanksJob;

static gboolean
rank_on_device (const SvStreamRanks *ranks, gpointer user_data, SvStreamReport *report,
                GError **error)
{
  const RanksJob *job = user_data;
  SvStreamOptions options;

  sv_stream_options_init_defaults (&options);
  options.ranks = ranks;
  options.slab_depth = 3;
  options.backends = &job->devices[ranks->rank];
  options.n_backends = 1;
  return sv_stream_slic_run (job->in, job->out, job->params, job->mask, &options, NULL, report,
                             error);
}

/* Ranks with a device each keep their labels there; rank 0's device takes
 * the others' labels and runs the connectivity on the whole volume: the
 * file of one process on the CPU, byte for byte. */
static void
test_ranks_keep_on_devices (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (23, 19, 21, 1);
  g_autofree char *in = NULL;
  g_autofree char *cpu_out = g_build_filename (f->dir, "cpu.tif", NULL);
  g_autofree char *out = g_build_filename (f->dir, "ranks.tif", NULL);
  g_autofree guint8 *ball = g_new (guint8, (gsize)23 * 19 * 21);
  g_autoptr (GError) error = NULL;
  SvSlicParams params[5];

  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
  for (gsize i = 0; i < (gsize)23 * 19 * 21; i++)
    ball[i] = (i * 7919) % 13 != 0;
  make_params (params);
  device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
  device.only_first_keeps = FALSE;
  device.plane = 19 * 21;
  /* Rank 0's device takes the others' labels through the host (no
   * handles), from their devices, or from all but the last rank's. */
  for (guint way = 0; way < 3; way++)
    for (guint p = 0; p < 4; p++)
      for (guint n = 2; n <= 3; n++)
        {
          const guint8 *mask = p == 2 ? ball : NULL;
          g_autofree SvStreamReport *reports = g_new0 (SvStreamReport, n);
          g_autofree SvBackend **devices = g_new (SvBackend *, n);
          RanksJob job = { in, out, &params[p], mask, devices };
          SvStreamOptions options;
          guint z0, z1, last0, last1;

          g_test_message ("params %u, %u ranks, way %u", p, n, way);
          keeping_device_share_handles (way > 0);
          sv_stream_options_init_defaults (&options);
          g_assert_true (
              sv_stream_slic_run (in, cpu_out, &params[p], mask, &options, NULL, NULL, &error));
          g_assert_no_error (error);
          for (guint r = 0; r < n; r++)
            {
              devices[r] = sv_backend_new ("keeping-device", &error);
              g_assert_no_error (error);
            }
          device.unreachable = way == 2 ? keeping_device_index (devices[n - 1]) : G_MAXUINT;
          device.stored = device.imported = 0;
          device.connected = 0;
          g_assert_true (sv_test_ranks_run (n, rank_on_device, &job, reports, &error));
          g_assert_no_error (error);
          sv_test_assert_same_file (cpu_out, out);
          /* Rank 0's device keeps every slice, the others' their own. */
          for (guint r = 0; r < n; r++)
            {
              sv_stream_rank_range (23, r, n, &z0, &z1);
              g_assert_true (reports[r].labels_on_device);
              g_assert_cmpuint (keeping_device_kept_slices (devices[r]), ==,
                                r == 0 ? 23 : z1 - z0);
            }
          /* Rank 0's device took every other rank's slices, each once. */
          sv_stream_rank_range (23, 0, n, &z0, &z1);
          sv_stream_rank_range (23, n - 1, n, &last0, &last1);
          g_assert_cmpint (device.stored + device.imported, ==, 23 - (gint)(z1 - z0));
          g_assert_cmpint (device.stored, ==,
                           way == 0   ? 23 - (gint)(z1 - z0)
                           : way == 1 ? 0
                                      : (gint)(last1 - last0));
          g_assert_cmpint (reports[0].connect_on_device, ==, params[p].enforce_connectivity);
          g_assert_cmpuint (device.connected, ==, params[p].enforce_connectivity ? 1 : 0);
          for (guint r = 0; r < n; r++)
            sv_backend_free (devices[r]);
          g_assert_cmpint (g_remove (out), ==, 0);
        }
  keeping_device_share_handles (FALSE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  keeping_device_register ();
  g_test_add ("/engine/stream/kept/ranks-keep-on-devices", Fixture, NULL, fixture_setup,
              test_ranks_keep_on_devices, fixture_teardown);
  return g_test_run ();
}

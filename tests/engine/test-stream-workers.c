/* Supervox tests: one streamed run over several backends, one worker
 * thread each (what --devices does with GPUs): the file one backend
 * writes, each worker's band of clusters, and a failing device that hands
 * the run to the CPU. */
#include <string.h>

#include <glib/gstdio.h>

#include "stream-cases.h"
#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-params.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-stream.h"
#include "supervox/sv-volume.h"
#include "sv-test-files.h"

/* Slabs spread over several backends, one worker thread each (what
 * --devices does with GPUs), give the one-backend file: the workers' sums
 * are added after each pass, whichever slabs each took. */
static void
test_workers (Fixture *f, gconstpointer data)
{
  static const guint n_workers[] = { 2, 3, 5 };
  g_autofree char *in = write_input (f, CASE_NZ, CASE_NY, CASE_NX);
  g_autofree char *one = g_build_filename (f->dir, "one.tif", NULL);
  g_autofree char *spread = g_build_filename (f->dir, "spread.tif", NULL);
  g_autofree guint8 *ball = g_new (guint8, (gsize)CASE_NZ * CASE_NY * CASE_NX);
  SvBackend *backends[5];
  SvSlicParams params[4];

  make_cases (params, ball);
  for (guint w = 0; w < G_N_ELEMENTS (backends); w++)
    {
      g_autoptr (GError) error = NULL;
      backends[w] = sv_backend_new ("cpu", &error);
      g_assert_no_error (error);
    }
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    for (int masked = 0; masked < 2; masked++)
      {
        const guint8 *mask = masked ? ball : NULL;

        one_process (in, one, &params[p], mask);
        for (guint i = 0; i < G_N_ELEMENTS (n_workers); i++)
          {
            g_autoptr (GError) error = NULL;
            SvStreamOptions options;
            SvStreamReport report;

            g_test_message ("params %u, mask %d, %u workers", p, masked, n_workers[i]);
            sv_stream_options_init_defaults (&options);
            options.slab_depth = 1;
            options.backends = backends;
            options.n_backends = n_workers[i];
            g_assert_true (
                sv_stream_slic_run (in, spread, &params[p], mask, &options, NULL, &report, &error));
            g_assert_no_error (error);
            g_assert_cmpuint (report.n_workers, ==, n_workers[i]);
            sv_test_assert_same_file (one, spread);
          }
      }
  for (guint w = 0; w < G_N_ELEMENTS (backends); w++)
    sv_backend_free (backends[w]);
}

/* A device whose slab steps fail with the error a test chooses. */
static int failing_code;

static gboolean
failing_create (SvBackend *backend, GError **error)
{
  return TRUE;
}

static void
failing_destroy (SvBackend *backend)
{
}

static gboolean
failing_begin_pass (SvBackend *backend, const SvSlicContext *ctx, const SvClusters *clusters,
                    gsize k0, gsize k1, GError **error)
{
  g_set_error_literal (error, SV_ENGINE_ERROR, failing_code, "device says no");
  return FALSE;
}

static void
failing_release (SvBackend *backend)
{
}

static const SvSlabSteps failing_steps = {
  .begin_pass = failing_begin_pass,
  .release = failing_release,
};

static int
failing_device_count (void)
{
  return 1;
}

static const SvBackendClass failing_device_class = {
  .name = "failing-device",
  .is_device = TRUE,
  .device_count = failing_device_count,
  .create = failing_create,
  .destroy = failing_destroy,
  .slab_steps = &failing_steps,
};

/* A volume many windows tall: each of four workers takes a run of slabs
 * and sends back only the band of clusters that can reach them. A band
 * cut too narrow loses sums at its edges, and the labels differ from one
 * backend's; SLIC-zero's maxima and a mask take the same bands. */
static void
test_workers_bands (Fixture *f, gconstpointer data)
{
  const guint nz = 44, ny = 12, nx = 14;
  g_autofree char *in = write_input (f, nz, ny, nx);
  g_autofree char *one = g_build_filename (f->dir, "one.tif", NULL);
  g_autofree char *spread = g_build_filename (f->dir, "spread.tif", NULL);
  g_autofree guint8 *mask = g_new (guint8, (gsize)nz * ny * nx);
  SvBackend *backends[4];
  SvSlicParams params[3];

  for (gsize i = 0; i < (gsize)nz * ny * nx; i++)
    mask[i] = (i / nx) % ny > 1 && i % 7 != 3;
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    {
      sv_slic_params_init_defaults (&params[p]);
      params[p].n_segments = 400;
    }
  params[1].slic_zero = TRUE;
  params[1].compactness = 0.05;
  params[2].n_segments = 250;
  params[2].compactness = 0.02;
  params[2].max_num_iter = 20;
  for (guint w = 0; w < G_N_ELEMENTS (backends); w++)
    {
      g_autoptr (GError) error = NULL;
      backends[w] = sv_backend_new ("cpu", &error);
      g_assert_no_error (error);
    }
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    for (int masked = 0; masked < 2; masked++)
      {
        g_autoptr (GError) error = NULL;
        SvStreamOptions options;

        one_process (in, one, &params[p], masked ? mask : NULL);
        sv_stream_options_init_defaults (&options);
        options.slab_depth = 2;
        options.backends = backends;
        options.n_backends = G_N_ELEMENTS (backends);
        g_assert_true (sv_stream_slic_run (in, spread, &params[p], masked ? mask : NULL, &options,
                                           NULL, NULL, &error));
        g_assert_no_error (error);
        sv_test_assert_same_file (one, spread);
      }
  for (guint w = 0; w < G_N_ELEMENTS (backends); w++)
    sv_backend_free (backends[w]);
}

/* Executes a streamed run of `in` into `out` planned on `devices`' one
 * device; falls_back is auto's. */
static gboolean
execute_on_device (const char *in, const char *out, const SvSlicParams *params,
                   SvRunDevices *devices, gboolean falls_back, SvRunReport *report, GError **error)
{
  SvStreamOptions options;
  SvRunPlan plan = { .mode = SV_RUN_STREAMED,
                     .on_device = TRUE,
                     .falls_back = falls_back,
                     .slab_depth = 2,
                     .n_workers = 1 };
  SvRunJobSpec spec = { .plan = &plan,
                        .params = params,
                        .input = in,
                        .output = out,
                        .stream = &options,
                        .devices = devices };

  plan.backend = devices->klass;
  sv_stream_options_init_defaults (&options);
  options.slab_depth = 2;
  return sv_run_execute (&spec, report, error);
}

/* Under auto a device failure hands the streamed run to the CPU (the same
 * file as a CPU run, and the device's error for the caller's note), and
 * the device is not tried again; bad data, which the CPU would refuse
 * too, is not run again and leaves no file; nor is a device named by the
 * user (not auto) replaced by the CPU. */
static void
test_device_failure_falls_back (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_input (f, CASE_NZ, CASE_NY, CASE_NX);
  g_autofree char *cpu = g_build_filename (f->dir, "cpu.tif", NULL);
  g_autofree char *out = g_build_filename (f->dir, "out.tif", NULL);
  g_autofree guint8 *ball = g_new (guint8, (gsize)CASE_NZ * CASE_NY * CASE_NX);
  g_autoptr (GError) error = NULL;
  SvSlicParams params[4];
  SvRunDevices devices;
  SvRunReport report;

  make_cases (params, ball);
  one_process (in, cpu, &params[1], NULL);
  sv_backend_register (&failing_device_class);
  sv_run_devices_init (&devices, &failing_device_class, NULL, -1, 0);

  failing_code = SV_ENGINE_ERROR_INVALID_DATA;
  g_assert_false (execute_on_device (in, out, &params[1], &devices, TRUE, &report, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
  g_assert_null (report.device_error);
  g_assert_false (devices.broken);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  failing_code = SV_ENGINE_ERROR_NO_MEMORY;
  g_assert_false (execute_on_device (in, out, &params[1], &devices, FALSE, &report, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY);
  g_assert_null (report.device_error);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  /* Out of device memory: the CPU runs it, the device stays in use. */
  g_assert_true (execute_on_device (in, out, &params[1], &devices, TRUE, &report, &error));
  g_assert_no_error (error);
  g_assert_error (report.device_error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY);
  g_assert_true (report.ran_on == sv_backend_cpu_class ());
  g_assert_cmpuint (report.n_devices, ==, 0);
  g_assert_false (devices.broken);
  sv_test_assert_same_file (cpu, out);
  g_assert_cmpint (g_remove (out), ==, 0);
  sv_run_report_clear (&report);

  /* A device error: the CPU runs it and the device is out from then on. */
  failing_code = SV_ENGINE_ERROR_BACKEND;
  g_assert_true (execute_on_device (in, out, &params[1], &devices, TRUE, &report, &error));
  g_assert_error (report.device_error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND);
  g_assert_true (devices.broken);
  sv_test_assert_same_file (cpu, out);
  g_assert_cmpint (g_remove (out), ==, 0);
  sv_run_report_clear (&report);

  g_assert_true (execute_on_device (in, out, &params[1], &devices, FALSE, &report, &error));
  g_assert_no_error (error);
  g_assert_null (report.device_error);
  g_assert_true (report.ran_on == sv_backend_cpu_class ());
  sv_test_assert_same_file (cpu, out);
  g_assert_cmpint (g_remove (out), ==, 0);
  sv_run_devices_clear (&devices);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/engine/stream/workers/identical-to-one-backend", Fixture, NULL, fixture_setup,
              test_workers, fixture_teardown);
  g_test_add ("/engine/stream/workers/cluster-bands", Fixture, NULL, fixture_setup,
              test_workers_bands, fixture_teardown);
  g_test_add ("/engine/stream/workers/device-failure-falls-back-to-cpu", Fixture, NULL,
              fixture_setup, test_device_failure_falls_back, fixture_teardown);
  return g_test_run ();
}

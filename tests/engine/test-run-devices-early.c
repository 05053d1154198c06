/* Tests for devices opened beside the run (engine/run/run-devices-early.c,
 * sv_run_devices_start): with a stand-in device class on the CPU's slab
 * steps, whose free memory takes a while to ask, the devices open on a
 * thread of their own while the plan and the run's statistics go on; the
 * file is the one the CPU writes alone; devices that hold fewer slices a
 * slab than the plan chose make the run start again with slabs they hold,
 * and the same file; a device the driver cannot give fails the run with
 * the usual line and no file; and a start is refused where it does not
 * apply. */
#include <string.h>

#include <glib/gstdio.h>

#include "stream-cases.h"
#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-params.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-run-plan.h"
#include "supervox/sv-stream.h"
#include "sv-test-files.h"

/* The stand-in device: the CPU's class under another name, with a device
 * count, a slow free-memory question and a slab cap from that memory. */
static SvBackendClass early_class;

static struct
{
  int count;                /* devices the "driver" has */
  guint64 free_bytes;       /* what each says it has free */
  gint asks;                /* free-memory questions */
  GThread *asked_from;      /* the thread of the last one */
  gint created;             /* backends made on a device */
} stand_in;

static int
early_device_count (void)
{
  return stand_in.count;
}

static gboolean
early_device_free_bytes (int device, guint64 *free_bytes, GError **error)
{
  /* A driver's start and a context take their time. */
  g_usleep (100000);
  g_atomic_int_inc (&stand_in.asks);
  stand_in.asked_from = g_thread_self ();
  *free_bytes = stand_in.free_bytes;
  return TRUE;
}

static SvBackend *
early_new_on_device (int device, GError **error)
{
  g_atomic_int_inc (&stand_in.created);
  return sv_backend_new_of_class (&early_class, error);
}

/* A slice takes a KiB of the device. */
static guint
early_stream_max_depth (guint64 limit, guint ny, guint nx, guint nc, gint64 n_segments,
                        gboolean mask)
{
  return (guint)MAX (limit / 1024, 1);
}

static void
register_stand_in (void)
{
  early_class = *sv_backend_cpu_class ();
  early_class.name = "early-device";
  early_class.is_device = TRUE;
  early_class.device_count = early_device_count;
  early_class.device_free_bytes = early_device_free_bytes;
  early_class.new_on_device = early_new_on_device;
  early_class.stream_max_depth = early_stream_max_depth;
  sv_backend_register (&early_class);
}

static SvBackendChoice
named_choice (void)
{
  return (SvBackendChoice){ .wants_device = TRUE, .device = &early_class };
}

/* Devices "0,1" as supervox-cli leaves them after narrowing the driver to
 * them (two visible), started opening on a driver of `count` devices
 * whose free memory is `free_bytes` each. */
static void
start_two (SvRunDevices *devices, int count, guint64 free_bytes)
{
  const SvBackendChoice choice = named_choice ();

  stand_in.count = count;
  stand_in.free_bytes = free_bytes;
  stand_in.asks = stand_in.created = 0;
  sv_run_devices_init (devices, &early_class, "0,1", -1, 0);
  devices->n_visible = 2;
  g_assert_true (sv_run_devices_start (devices, &choice));
  g_assert_nonnull (devices->opening);
}

/* A test's input file, the CPU's file and the output's path, and the
 * parameter sets. */
typedef struct
{
  char *in, *cpu, *out;
  SvSlicParams params[4];
} Case;

static void
case_init (Case *c, Fixture *f)
{
  g_autofree guint8 *ball = g_new (guint8, (gsize)CASE_NZ * CASE_NY * CASE_NX);

  c->in = write_input (f, CASE_NZ, CASE_NY, CASE_NX);
  c->cpu = g_build_filename (f->dir, "cpu.tif", NULL);
  c->out = g_build_filename (f->dir, "out.tif", NULL);
  make_cases (c->params, ball);
}

static void
case_clear (Case *c)
{
  g_free (c->in);
  g_free (c->cpu);
  g_free (c->out);
}

/* A streamed run of `plan` on `devices`, as supervox-cli executes it. */
static gboolean
execute (SvRunDevices *devices, const Case *c, const SvSlicParams *params, const SvRunPlan *plan,
         SvRunReport *report, GError **error)
{
  SvStreamOptions options;
  SvRunJobSpec spec = { .plan = plan,
                        .params = params,
                        .input = c->in,
                        .output = c->out,
                        .stream = &options,
                        .devices = devices };

  sv_stream_options_init_defaults (&options);
  return sv_run_execute (&spec, report, error);
}

/* The CLI's way: budgets measured while the devices open, a plan, the
 * run. */
static gboolean
plan_and_run (SvRunDevices *devices, const Case *c, const SvSlicParams *params, SvRunPlan *plan,
              SvRunReport *report, GError **error)
{
  g_autoptr (SvTiffSlabReader) reader = NULL;
  SvTiffReadOptions read_options;
  SvRunBudgets budgets = { 0 };
  SvRunSource source;

  sv_tiff_read_options_init_defaults (&read_options);
  reader = sv_tiff_slab_reader_open (c->in, &read_options, error);
  g_assert_nonnull (reader);
  sv_run_source_from_header (&source, sv_tiff_slab_reader_info (reader));
  source.stays_in_file = TRUE;
  budgets.backend = named_choice ();
  budgets.host_bytes = (guint64)1 << 30;
  sv_run_devices_measure (devices, &budgets.backend, &budgets);
  g_assert_true (budgets.devices_opening);
  g_assert_cmpuint (budgets.n_devices, ==, 2);
  return sv_run_plan (&source, params, &budgets, plan, error)
         && execute (devices, c, params, plan, report, error);
}

static void
test_same_file (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  SvRunDevices devices;
  SvRunReport report;
  SvRunPlan plan;
  Case c;

  case_init (&c, f);
  one_process (c.in, c.cpu, &c.params[1], NULL);
  start_two (&devices, 2, (guint64)1 << 30);

  g_assert_true (plan_and_run (&devices, &c, &c.params[1], &plan, &report, &error));
  g_assert_no_error (error);
  /* Planned without the devices' memory, which was asked beside. */
  g_assert_cmpint (plan.mode, ==, SV_RUN_STREAMED);
  g_assert_true (plan.on_device);
  g_assert_cmpuint (plan.max_slab_depth, ==, 0);
  g_assert_cmpint (stand_in.asks, ==, 2);
  g_assert_true (stand_in.asked_from != g_thread_self ());
  g_assert_cmpint (stand_in.created, ==, 2);
  g_assert_null (devices.opening);
  g_assert_cmpuint (devices.n_backends, ==, 2);
  g_assert_true (report.ran_on == &early_class);
  g_assert_cmpuint (report.n_devices, ==, 2);
  g_assert_cmpuint (report.stream.n_workers, ==, 2);
  g_assert_cmpuint (report.stream.slab_depth, ==, (CASE_NZ + 1) / 2);
  sv_test_assert_same_file (c.cpu, c.out);
  sv_run_report_clear (&report);

  /* The next file of a batch runs on the devices now open. */
  g_assert_cmpint (g_remove (c.out), ==, 0);
  one_process (c.in, c.cpu, &c.params[2], NULL);
  g_assert_true (execute (&devices, &c, &c.params[2], &plan, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpint (stand_in.created, ==, 2);
  sv_test_assert_same_file (c.cpu, c.out);
  sv_run_report_clear (&report);
  sv_run_devices_clear (&devices);
  case_clear (&c);
}

/* Devices whose memory holds two slices a slab, where the plan chose the
 * whole volume: the run starts again with slabs of two, on the devices
 * already open, and writes the same file. */
static void
test_shallower (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  SvRunDevices devices;
  SvRunReport report;
  SvRunPlan plan;
  Case c;

  case_init (&c, f);
  one_process (c.in, c.cpu, &c.params[0], NULL);
  start_two (&devices, 2, 2 * 1024);

  g_assert_true (plan_and_run (&devices, &c, &c.params[0], &plan, &report, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (plan.slab_depth, >, 2);
  g_assert_cmpuint (report.stream.slab_depth, ==, 2);
  g_assert_cmpuint (report.stream.n_workers, ==, 2);
  g_assert_cmpint (stand_in.created, ==, 2);
  sv_test_assert_same_file (c.cpu, c.out);
  sv_run_report_clear (&report);
  sv_run_devices_clear (&devices);
  case_clear (&c);
}

/* The driver has one of the two devices listed: the run fails with the
 * line opening them gives, and leaves no file. */
static void
test_device_missing (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  SvRunDevices devices;
  SvRunReport report;
  SvRunPlan plan;
  Case c;

  case_init (&c, f);
  start_two (&devices, 1, (guint64)1 << 30);

  g_assert_false (plan_and_run (&devices, &c, &c.params[0], &plan, &report, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND);
  g_assert_true (g_str_has_prefix (error->message, "CUDA can use 1 of the 2 GPUs asked for"));
  g_assert_false (g_file_test (c.out, G_FILE_TEST_EXISTS));
  g_assert_null (devices.opening);
  g_assert_cmpuint (devices.n_backends, ==, 0);
  g_assert_cmpint (stand_in.created, ==, 0);
  sv_run_report_clear (&report);
  sv_run_devices_clear (&devices);
  case_clear (&c);
}

/* Devices started and never awaited (a run that failed before its first
 * pass, or none at all) are closed by sv_run_devices_clear. */
static void
test_clear_while_opening (void)
{
  SvRunDevices devices;

  start_two (&devices, 2, (guint64)1 << 30);
  sv_run_devices_clear (&devices);
  g_assert_null (devices.opening);
  g_assert_cmpint (stand_in.created, ==, 2);
}

/* Where a start does not apply, nothing starts: auto (which must know
 * before it plans whether a device is there), another class, no list,
 * a driver not narrowed, an MPI rank, a list that names no visible
 * device, devices open already. */
static void
test_refused (void)
{
  const SvBackendChoice named = named_choice ();
  SvBackendChoice automatic = named;
  SvBackendChoice cpu = { 0 };
  SvRunDevices devices;

  automatic.is_auto = TRUE;
  automatic.wants_device = FALSE;
  cpu.device = NULL;

  sv_run_devices_init (&devices, &early_class, "0,1", -1, 0);
  devices.n_visible = 2;
  g_assert_false (sv_run_devices_start (&devices, &automatic));
  g_assert_false (sv_run_devices_start (&devices, &cpu));
  devices.n_visible = 0;
  g_assert_false (sv_run_devices_start (&devices, &named));
  devices.n_visible = 2;
  devices.local_rank = 1;
  g_assert_false (sv_run_devices_start (&devices, &named));
  devices.local_rank = -1;
  g_free (devices.list);
  devices.list = g_strdup ("0,2");
  g_assert_false (sv_run_devices_start (&devices, &named));
  g_assert_null (devices.opening);
  sv_run_devices_clear (&devices);

  sv_run_devices_init (&devices, &early_class, NULL, -1, 0);
  devices.n_visible = 1;
  g_assert_false (sv_run_devices_start (&devices, &named));
  sv_run_devices_clear (&devices);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  register_stand_in ();
  g_test_add_func ("/run/devices-early/refused", test_refused);
  g_test_add_func ("/run/devices-early/clear-while-opening", test_clear_while_opening);
  g_test_add ("/run/devices-early/same-file", Fixture, NULL, fixture_setup, test_same_file,
              fixture_teardown);
  g_test_add ("/run/devices-early/shallower", Fixture, NULL, fixture_setup, test_shallower,
              fixture_teardown);
  g_test_add ("/run/devices-early/device-missing", Fixture, NULL, fixture_setup,
              test_device_missing, fixture_teardown);
  return g_test_run ();
}

/* Tests for a batch over several devices, a file a device at a time
 * (app/cli/slic-batch-lanes.c), on a stand-in device class that runs the
 * CPU's slab steps: the lanes are chosen only where they apply; two files
 * compute at once on two lanes, one on each device; every label file is
 * the bytes the CPU writes; the reports come in input order although a
 * later file finishes first; a bad file fails alone; and each lane plans
 * with its share of the memory limit. */
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "cli-common.h"
#include "slic-batch-lanes.h"
#include "slic-batch-pipeline.h"
#include "supervox/sv-backend-class.h"
#include "supervox/sv-io.h"
#include "supervox/sv-io-zarr.h"
#include "supervox/sv-params.h"
#include "supervox/sv-run-execute.h"
#include "sv-test-files.h"

#define N_FILES 4

/* The label files' extension: "tif", or "zarr" for OME-Zarr stores. */
static const char *output_extension = "tif";

static SvBackendClass lane_class;

static struct
{
  gint created[4]; /* backends made on each device */
  GMutex lock;
  GCond cond;
  guint n_started;
  GThread *started_on[N_FILES];
  guint finished[N_FILES]; /* file indices in the order reported */
  guint n_finished;
  gboolean meet; /* the first two files to start wait for each other */
  gboolean met;  /* and both got past: they were computing at once */
} seen;

static int
lane_device_count (void)
{
  return 4;
}

static gboolean
lane_device_free_bytes (int device, guint64 *free_bytes, GError **error)
{
  *free_bytes = (guint64)1 << 30;
  return TRUE;
}

static SvBackend *
lane_new_on_device (int device, GError **error)
{
  g_assert_cmpint (device, >=, 0);
  g_assert_cmpint (device, <, 4);
  g_atomic_int_inc (&seen.created[device]);
  return sv_backend_new_of_class (&lane_class, error);
}

static void
register_stand_in (void)
{
  lane_class = *sv_backend_cpu_class ();
  lane_class.name = "lane-device";
  lane_class.is_device = TRUE;
  lane_class.device_count = lane_device_count;
  lane_class.device_free_bytes = lane_device_free_bytes;
  lane_class.new_on_device = lane_new_on_device;
  sv_backend_register (&lane_class);
}

/* The first two files to start wait for each other (10 s at most): only
 * files that compute at once both get past. */
static void
started_cb (const SvCliSlicFile *file, gpointer user_data)
{
  const gint64 until = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;

  g_mutex_lock (&seen.lock);
  seen.started_on[file->index] = g_thread_self ();
  seen.n_started++;
  g_cond_broadcast (&seen.cond);
  while (seen.meet && seen.n_started < 2 && g_cond_wait_until (&seen.cond, &seen.lock, until))
    ;
  if (seen.n_started >= 2 && file->index <= 1)
    seen.met = TRUE;
  g_mutex_unlock (&seen.lock);
}

static void
finished_cb (const SvCliSlicFile *file, gpointer user_data)
{
  /* The lanes report from the caller's thread (the pipeline's writer
   * reports on its own). */
  g_assert_true (user_data == NULL || g_thread_self () == user_data);
  g_assert_cmpuint (seen.n_finished, <, N_FILES);
  seen.finished[seen.n_finished++] = file->index;
}

typedef struct
{
  char *dir;
  char *inputs[N_FILES];
  SvCliSlicRequest request;
} Fixture;

/* A uint16 volume of `nz` slices with a pattern of its own per `seed`. */
static char *
write_input (Fixture *f, guint i, guint nz, guint seed)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (nz, 26, 30, 1, &error);
  g_autofree char *name = g_strdup_printf ("in-%u.tif", i);
  char *path = g_build_filename (f->dir, name, NULL);
  guint32 h = seed;

  g_assert_no_error (error);
  for (gsize n = 0; n < sv_volume_n_voxels (v); n++)
    {
      const guint x = n % 30, y = n / 30 % 26, z = n / (30 * 26);

      h = h * 1664525u + 1013904223u;
      v->data[n] = (float)(0.3 + 0.2 * ((x / 6 + y / 5 + z / 3 + seed) % 3)
                           + 0.1 * ((h >> 8) / (double)(1u << 24)));
    }
  g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);
  return path;
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-lanes");
  /* The first file is the largest: the files after it finish first. */
  f->inputs[0] = write_input (f, 0, 90, 7);
  for (guint i = 1; i < N_FILES; i++)
    f->inputs[i] = write_input (f, i, 8, 7 + i);
  sv_slic_params_init_defaults (&f->request.params);
  f->request.params.n_segments = 40;
  f->request.n_threads = 4;
  memset (&seen, 0, sizeof seen);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  for (guint i = 0; i < N_FILES; i++)
    g_free (f->inputs[i]);
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

/* A context as supervox-cli makes it for --backend `backend` and
 * --devices `list`, the driver narrowed to `n_visible` devices. */
static void
context_init (SvCliSlicContext *ctx, Fixture *f, const char *backend, const char *list,
              guint n_visible)
{
  g_autoptr (GError) error = NULL;

  memset (ctx, 0, sizeof *ctx);
  ctx->request = &f->request;
  ctx->backend_name = backend;
  g_assert_true (sv_backend_choose (backend, &ctx->backend_choice, &error));
  g_assert_no_error (error);
  if (ctx->backend_choice.wants_device || ctx->backend_choice.is_auto)
    ctx->backend_choice.device = &lane_class;
  g_assert_true (sv_cli_parse_compression (NULL, &ctx->write_options, &error));
  ctx->channel = -1;
  ctx->quiet = TRUE;
  ctx->cancellable = g_cancellable_new ();
  sv_run_devices_init (&ctx->devices, ctx->backend_choice.device, list, -1, 0);
  ctx->devices.n_visible = n_visible;
}

static void
context_clear (SvCliSlicContext *ctx)
{
  g_clear_pointer (&ctx->backend, sv_backend_free);
  sv_run_devices_clear (&ctx->devices);
  g_clear_object (&ctx->cancellable);
}

/* Runs the batch of the fixture's first `n` inputs (input `bad` replaced
 * by a file that is no TIFF; N_FILES: none) into PREFIX/labels-i.tif (or
 * .zarr), and returns its files. */
static GPtrArray *
run_batch (Fixture *f, SvCliSlicContext *ctx, const char *prefix, guint bad, guint n)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *files = g_ptr_array_new_with_free_func ((GDestroyNotify)sv_cli_slic_file_free);
  const gboolean lanes = sv_cli_slic_batch_lanes (ctx, n) >= 2;
  const SvCliSlicBatchEvents events = { started_cb, finished_cb, lanes ? g_thread_self () : NULL };

  seen.meet = lanes;

  {
    g_autofree char *folder = g_build_filename (f->dir, prefix, NULL);

    g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  }
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("labels-%u.%s", i, output_extension);
      g_autofree char *out = g_build_filename (f->dir, prefix, name, NULL);
      g_autofree char *in = NULL;

      if (i == bad)
        {
          in = g_build_filename (f->dir, "bad.tif", NULL);
          g_assert_true (g_file_set_contents (in, "not a TIFF", -1, NULL));
        }
      g_ptr_array_add (files, sv_cli_slic_file_new (i, i == bad ? in : f->inputs[i], out));
    }
  g_assert_true (sv_cli_slic_batch_pipeline_run (ctx, (SvCliSlicFile *const *)files->pdata,
                                                 files->len, &events, &error));
  g_assert_no_error (error);
  return files;
}

/* The CPU's label files for the fixture's first `n` inputs, as the
 * reference; what the events saw is cleared for the run after it. */
static GPtrArray *
reference_batch (Fixture *f, guint n)
{
  SvCliSlicContext cpu;
  GPtrArray *reference;

  context_init (&cpu, f, "cpu", NULL, 0);
  reference = run_batch (f, &cpu, "cpu", N_FILES, n);
  context_clear (&cpu);
  memset (&seen, 0, sizeof seen);
  return reference;
}

static void
test_chosen (Fixture *f, gconstpointer data)
{
  SvCliSlicContext ctx;

  context_init (&ctx, f, "cuda", "0,1", 2);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 4), ==, 2);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 2), ==, 2);
  /* One file takes every device; the lanes need two files. */
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 1), ==, 0);
  g_setenv ("SV_BATCH_LANES", "0", TRUE);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 4), ==, 0);
  g_unsetenv ("SV_BATCH_LANES");
  context_clear (&ctx);

  /* Three devices for two files: two lanes. */
  context_init (&ctx, f, "cuda", "0,1,2", 3);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 2), ==, 2);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 9), ==, 3);
  context_clear (&ctx);
  /* Not narrowed: the class counts the devices ("all": four). */
  context_init (&ctx, f, "cuda", "all", 0);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 9), ==, 4);
  context_clear (&ctx);
  /* One GPU listed twice is one lane. */
  context_init (&ctx, f, "cuda", "0,0", 1);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 4), ==, 0);
  context_clear (&ctx);
  /* No list: one device. */
  context_init (&ctx, f, "cuda", NULL, 1);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 4), ==, 0);
  context_clear (&ctx);
  /* auto has the devices too (each lane falls back on the CPU alone); the
   * CPU has none. */
  context_init (&ctx, f, "auto", "0,1", 2);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 4), ==, 2);
  context_clear (&ctx);
  context_init (&ctx, f, "cpu", "0,1", 2);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 4), ==, 0);
  context_clear (&ctx);
  /* Devices already opening for the whole batch. */
  context_init (&ctx, f, "cuda", "0,1", 2);
  g_assert_true (sv_run_devices_start (&ctx.devices, &ctx.backend_choice));
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&ctx, 4), ==, 0);
  context_clear (&ctx);
}

static void
test_two_lanes (Fixture *f, gconstpointer data)
{
  SvCliSlicContext lanes;
  g_autoptr (GPtrArray) reference = NULL;
  g_autoptr (GPtrArray) files = NULL;
  const guint64 limit = (guint64)256 << 20;

  reference = reference_batch (f, N_FILES);

  context_init (&lanes, f, "cuda", "0,1", 2);
  lanes.memory_limit = limit;
  files = run_batch (f, &lanes, "lane", N_FILES, N_FILES);

  /* The first two files computed at once, on two threads not the
   * caller's, each on a device of its own. */
  g_assert_true (seen.met);
  g_assert_true (seen.started_on[0] != seen.started_on[1]);
  g_assert_true (seen.started_on[0] != g_thread_self ());
  g_assert_cmpint (seen.created[0], >=, 1);
  g_assert_cmpint (seen.created[1], >=, 1);
  g_assert_cmpint (seen.created[2], ==, 0);
  /* Reported in input order, though the first file took longest. */
  g_assert_cmpuint (seen.n_finished, ==, N_FILES);
  for (guint i = 0; i < N_FILES; i++)
    g_assert_cmpuint (seen.finished[i], ==, i);
  for (guint i = 0; i < N_FILES; i++)
    {
      const SvCliSlicFile *file = g_ptr_array_index (files, i);
      const SvCliSlicFile *ref = g_ptr_array_index (reference, i);

      g_assert_no_error (file->error);
      g_assert_nonnull (file->json);
      g_assert_true (file->streamed);
      g_assert_cmpuint (file->n_devices, ==, 1);
      g_assert_cmpstr (file->backend, ==, "lane-device");
      /* Each lane planned with half the limit. */
      g_assert_cmpuint (file->memory_limit, ==, limit / 2);
      sv_test_assert_same_file (file->output, ref->output);
    }
  context_clear (&lanes);
}

/* auto, the default backend, runs the lanes too (the devices open when
 * a lane's first file asks for them). */
static void
test_auto (Fixture *f, gconstpointer data)
{
  SvCliSlicContext lanes;
  g_autoptr (GPtrArray) reference = reference_batch (f, N_FILES);
  g_autoptr (GPtrArray) files = NULL;

  context_init (&lanes, f, "auto", "0,1", 2);
  files = run_batch (f, &lanes, "lane", N_FILES, N_FILES);
  g_assert_true (seen.met);
  g_assert_cmpint (seen.created[0], >=, 1);
  g_assert_cmpint (seen.created[1], >=, 1);
  for (guint i = 0; i < N_FILES; i++)
    {
      const SvCliSlicFile *file = g_ptr_array_index (files, i);
      const SvCliSlicFile *ref = g_ptr_array_index (reference, i);

      g_assert_no_error (file->error);
      g_assert_cmpuint (file->n_devices, ==, 1);
      g_assert_cmpstr (file->backend, ==, "lane-device");
      sv_test_assert_same_file (file->output, ref->output);
    }
  context_clear (&lanes);
}

/* OME-Zarr stores from the lanes: each lane writes its own, every file
 * of each the CPU's. */
static void
test_zarr (Fixture *f, gconstpointer data)
{
  SvCliSlicContext cpu, lanes;
  SvZarrWriteOptions zarr;
  g_autoptr (GPtrArray) reference = NULL;
  g_autoptr (GPtrArray) files = NULL;

  sv_zarr_write_options_init_defaults (&zarr);
  output_extension = "zarr";
  context_init (&cpu, f, "cpu", NULL, 0);
  cpu.write_options.zarr = &zarr;
  reference = run_batch (f, &cpu, "cpu", N_FILES, N_FILES);
  context_clear (&cpu);
  memset (&seen, 0, sizeof seen);
  context_init (&lanes, f, "cuda", "0,1", 2);
  lanes.write_options.zarr = &zarr;
  files = run_batch (f, &lanes, "lane", N_FILES, N_FILES);
  output_extension = "tif";
  g_assert_true (seen.met);
  for (guint i = 0; i < N_FILES; i++)
    {
      const SvCliSlicFile *file = g_ptr_array_index (files, i);
      const SvCliSlicFile *ref = g_ptr_array_index (reference, i);

      g_assert_no_error (file->error);
      g_assert_cmpuint (file->n_devices, ==, 1);
      g_assert_true (g_file_test (file->output, G_FILE_TEST_IS_DIR));
      sv_test_assert_same_tree (file->output, ref->output);
    }
  context_clear (&lanes);
}

/* Two files on four devices: two lanes of two devices each. */
static void
test_lanes_of_two (Fixture *f, gconstpointer data)
{
  SvCliSlicContext lanes;
  g_autoptr (GPtrArray) reference = NULL;
  g_autoptr (GPtrArray) files = NULL;

  reference = reference_batch (f, 2);

  context_init (&lanes, f, "cuda", "0,1,2,3", 4);
  g_assert_cmpuint (sv_cli_slic_batch_lanes (&lanes, 2), ==, 2);
  files = run_batch (f, &lanes, "lane", N_FILES, 2);
  g_assert_true (seen.met);
  for (guint d = 0; d < 4; d++)
    g_assert_cmpint (seen.created[d], ==, 1);
  for (guint i = 0; i < 2; i++)
    {
      const SvCliSlicFile *file = g_ptr_array_index (files, i);
      const SvCliSlicFile *ref = g_ptr_array_index (reference, i);

      g_assert_no_error (file->error);
      g_assert_cmpuint (file->n_devices, ==, 2);
      sv_test_assert_same_file (file->output, ref->output);
    }
  context_clear (&lanes);
}

static void
test_bad_file (Fixture *f, gconstpointer data)
{
  SvCliSlicContext lanes;
  g_autoptr (GPtrArray) reference = NULL;
  g_autoptr (GPtrArray) files = NULL;

  reference = reference_batch (f, N_FILES);

  context_init (&lanes, f, "cuda", "0,1", 2);
  files = run_batch (f, &lanes, "lane", 2, N_FILES);
  for (guint i = 0; i < N_FILES; i++)
    {
      const SvCliSlicFile *file = g_ptr_array_index (files, i);
      const SvCliSlicFile *ref = g_ptr_array_index (reference, i);

      g_assert_cmpuint (seen.finished[i], ==, i);
      if (i == 2)
        {
          g_assert_nonnull (file->error);
          g_assert_nonnull (strstr (file->error->message, "bad.tif"));
          g_assert_false (g_file_test (file->output, G_FILE_TEST_EXISTS));
          g_assert_false (g_file_test (file->sidecar, G_FILE_TEST_EXISTS));
          continue;
        }
      g_assert_no_error (file->error);
      sv_test_assert_same_file (file->output, ref->output);
    }
  context_clear (&lanes);
}

/* Cancels the batch once a file is two iterations in. */
static GCancellable *to_cancel;

static void
cancel_in_iterations (const SvCliSlicFile *file, guint iteration, guint n_iterations,
                      gpointer user_data)
{
  if (n_iterations > 0 && iteration >= 2)
    g_cancellable_cancel (to_cancel);
}

/* A cancel stops every lane: the files already written stay whole, the
 * others leave nothing (no label file, sidecar or temporary file). */
static void
test_cancel (Fixture *f, gconstpointer data)
{
  SvCliSlicContext lanes;
  g_autoptr (GPtrArray) files = NULL;
  g_autoptr (GDir) dir = NULL;
  g_autofree char *folder = NULL;
  const char *name;
  guint n_written = 0;

  context_init (&lanes, f, "cuda", "0,1", 2);
  to_cancel = lanes.cancellable;
  lanes.progress = cancel_in_iterations;
  files = run_batch (f, &lanes, "lane", N_FILES, N_FILES);
  g_assert_true (g_cancellable_is_cancelled (lanes.cancellable));
  g_assert_cmpuint (seen.n_finished, ==, N_FILES);
  for (guint i = 0; i < N_FILES; i++)
    {
      const SvCliSlicFile *file = g_ptr_array_index (files, i);
      const gboolean written = file->json != NULL;

      g_assert_cmpuint (seen.finished[i], ==, i);
      g_assert_true (written || file->error == NULL
                     || g_error_matches (file->error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
      g_assert_cmpint (g_file_test (file->output, G_FILE_TEST_EXISTS), ==, written);
      g_assert_cmpint (g_file_test (file->sidecar, G_FILE_TEST_EXISTS), ==, written);
      n_written += written;
    }
  g_assert_cmpuint (n_written, <, N_FILES);
  /* Nothing else in the folder: what was written. */
  folder = g_build_filename (f->dir, "lane", NULL);
  dir = g_dir_open (folder, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      guint i;

      char rest[16] = "";

      /* labels-I.tif or labels-I.json of a file written, nothing more. */
      if (sscanf (name, "labels-%u.%15s", &i, rest) == 2 && i < N_FILES
          && (strcmp (rest, "tif") == 0 || strcmp (rest, "json") == 0)
          && ((const SvCliSlicFile *)g_ptr_array_index (files, i))->json != NULL)
        continue;
      g_error ("left behind: %s", name);
    }
  context_clear (&lanes);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  register_stand_in ();
  g_test_add ("/batch-lanes/chosen", Fixture, NULL, fixture_setup, test_chosen, fixture_teardown);
  g_test_add ("/batch-lanes/two-lanes", Fixture, NULL, fixture_setup, test_two_lanes,
              fixture_teardown);
  g_test_add ("/batch-lanes/auto", Fixture, NULL, fixture_setup, test_auto, fixture_teardown);
  g_test_add ("/batch-lanes/zarr", Fixture, NULL, fixture_setup, test_zarr, fixture_teardown);
  g_test_add ("/batch-lanes/lanes-of-two", Fixture, NULL, fixture_setup, test_lanes_of_two,
              fixture_teardown);
  g_test_add ("/batch-lanes/cancel", Fixture, NULL, fixture_setup, test_cancel, fixture_teardown);
  g_test_add ("/batch-lanes/bad-file", Fixture, NULL, fixture_setup, test_bad_file,
              fixture_teardown);
  return g_test_run ();
}

/* Supervox tests: a streamed run shows each iteration to the iteration
 * hook as the in-memory run does (one loop, run-iterations.c): every
 * iteration once, in order, with the in-memory run's centres bit for bit;
 * its labels stay on disk until the run ends. */
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-params.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-stream.h"
#include "sv-test-files.h"
#include "sv-test-volumes.h"

enum
{
  NZ = 9,
  NY = 14,
  NX = 13,
};

/* What the hook saw: one entry per call. */
typedef struct
{
  GArray *iterations;   /* guint: the iteration it was told */
  GArray *totals;       /* guint: n_iterations it was told */
  GPtrArray *centres;   /* GBytes: k × 3 floats */
  GPtrArray *backends;  /* char *: the view's backend name */
  GError *labels_error; /* the first get_labels failure, or NULL */
  guint labels_read;    /* get_labels successes */
} Seen;

static void
seen_init (Seen *seen)
{
  seen->iterations = g_array_new (FALSE, FALSE, sizeof (guint));
  seen->totals = g_array_new (FALSE, FALSE, sizeof (guint));
  seen->centres = g_ptr_array_new_with_free_func ((GDestroyNotify)g_bytes_unref);
  seen->backends = g_ptr_array_new_with_free_func (g_free);
  seen->labels_error = NULL;
  seen->labels_read = 0;
}

static void
seen_clear (Seen *seen)
{
  g_array_unref (seen->iterations);
  g_array_unref (seen->totals);
  g_ptr_array_unref (seen->centres);
  g_ptr_array_unref (seen->backends);
  g_clear_error (&seen->labels_error);
}

static void
record_cb (const SvIterationView *view, guint iteration, guint n_iterations, gpointer user_data)
{
  Seen *seen = user_data;
  g_autoptr (GError) error = NULL;
  g_autofree gint32 *labels = g_new (gint32, NZ * NY * NX);
  float *zyx;
  gsize k = 0;

  g_array_append_val (seen->iterations, iteration);
  g_array_append_val (seen->totals, n_iterations);
  g_ptr_array_add (seen->backends, g_strdup (sv_iteration_view_get_backend_name (view)));
  g_assert_true (sv_iteration_view_get_centres (view, NULL, &k, &error));
  g_assert_no_error (error);
  zyx = g_new (float, k * 3);
  g_assert_true (sv_iteration_view_get_centres (view, zyx, &k, &error));
  g_assert_no_error (error);
  g_ptr_array_add (seen->centres, g_bytes_new_take (zyx, k * 3 * sizeof (float)));
  if (sv_iteration_view_get_labels (view, labels, &error))
    seen->labels_read++;
  else if (seen->labels_error == NULL)
    seen->labels_error = g_steal_pointer (&error);
}

/* The volume in memory on a CPU backend made for the run, the hook in
 * its control. */
static void
run_in_memory (const SvVolume *v, const guint8 *mask, const SvSlicParams *params, Seen *seen)
{
  g_autoptr (GError) error = NULL;
  SvRunControl control
      = { .n_threads = 2, .stop_after_iteration = -1, .user_data = seen, .iteration = record_cb };
  SvRunPlan plan = { .mode = SV_RUN_IN_MEMORY, .n_workers = 1 };
  SvRunJobSpec spec
      = { .plan = &plan, .params = params, .volume = v, .mask = mask, .control = &control };
  SvRunReport report;

  plan.backend = sv_backend_cpu_class ();
  g_assert_true (sv_run_execute (&spec, &report, &error));
  g_assert_no_error (error);
  g_assert_false (report.streamed);
  sv_run_report_clear (&report);
}

/* The file streamed in slabs of two slices on the CPU, the hook in the
 * stream's options. */
static void
run_streamed (const char *in, const char *out, const guint8 *mask, const SvSlicParams *params,
              Seen *seen)
{
  g_autoptr (GError) error = NULL;
  SvStreamOptions options;
  SvRunPlan plan = { .mode = SV_RUN_STREAMED, .n_workers = 1, .slab_depth = 2 };
  SvRunJobSpec spec = {
    .plan = &plan, .params = params, .input = in, .output = out, .mask = mask, .stream = &options
  };
  SvRunReport report;

  plan.backend = sv_backend_cpu_class ();
  sv_stream_options_init_defaults (&options);
  options.slab_depth = 2;
  options.n_threads = 2;
  options.iteration = record_cb;
  options.user_data = seen;
  g_assert_true (sv_run_execute (&spec, &report, &error));
  g_assert_no_error (error);
  g_assert_true (report.streamed);
  g_assert_cmpuint (report.stream.n_slabs, >, 1);
  sv_run_report_clear (&report);
}

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-stream-hook");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

/* Every iteration of every pass (a mask makes two: maskSLIC's spatial
 * one first) reaches the streamed run's hook once, in order, and the
 * centres there are the in-memory run's at the same iteration. */
static void
test_same_centres (Fixture *f, gconstpointer data)
{
  const gboolean masked = GPOINTER_TO_INT (data);
  g_autoptr (SvVolume) made = sv_test_textured_volume (NZ, NY, NX, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", made, SV_SAMPLE_U16);
  g_autofree char *out = g_build_filename (f->dir, "out.tif", NULL);
  g_autofree guint8 *mask = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_tiff_read_volume (in, &error);
  const guint n_passes = masked ? 2 : 1;
  SvSlicParams params;
  Seen memory, streamed;
  guint moved = 0;

  g_assert_no_error (error);
  if (masked)
    {
      /* A ball-like region off centre, so that the seeds move. */
      mask = g_new0 (guint8, NZ * NY * NX);
      for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
          for (int x = 0; x < NX; x++)
            mask[(z * NY + y) * NX + x]
                = (z - 4) * (z - 4) + (y - 6) * (y - 6) + (x - 5) * (x - 5) < 30;
    }
  sv_slic_params_init_defaults (&params);
  params.n_segments = 24;
  params.max_num_iter = 4;
  params.slic_zero = TRUE;
  params.compactness = 0.05;
  seen_init (&memory);
  seen_init (&streamed);
  run_in_memory (v, mask, &params, &memory);
  run_streamed (in, out, mask, &params, &streamed);

  g_assert_cmpuint (memory.centres->len, ==, n_passes * 4);
  g_assert_cmpuint (streamed.centres->len, ==, n_passes * 4);
  for (guint i = 0; i < streamed.centres->len; i++)
    {
      GBytes *a = g_ptr_array_index (memory.centres, i),
             *b = g_ptr_array_index (streamed.centres, i);

      g_assert_cmpuint (g_array_index (streamed.iterations, guint, i), ==, i + 1);
      g_assert_cmpuint (g_array_index (streamed.totals, guint, i), ==, n_passes * 4);
      g_assert_cmpstr (g_ptr_array_index (streamed.backends, i), ==, "cpu");
      g_assert_cmpuint (g_bytes_get_size (a), >, 0);
      g_assert_true (g_bytes_equal (a, b));
      /* The centres move between iterations: the hook sees each one's. */
      if (i > 0 && !g_bytes_equal (b, g_ptr_array_index (streamed.centres, i - 1)))
        moved++;
    }
  g_assert_cmpuint (moved, >, 0);
  seen_clear (&memory);
  seen_clear (&streamed);
}

/* In memory the hook reads the labels; streamed they are on disk until
 * the run ends, and it is told so. */
static void
test_labels_on_disk (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) made = sv_test_textured_volume (NZ, NY, NX, 1);
  g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", made, SV_SAMPLE_U16);
  g_autofree char *out = g_build_filename (f->dir, "out.tif", NULL);
  SvSlicParams params;
  Seen memory, streamed;

  sv_slic_params_init_defaults (&params);
  params.n_segments = 24;
  params.max_num_iter = 3;
  seen_init (&memory);
  seen_init (&streamed);
  run_in_memory (made, NULL, &params, &memory);
  run_streamed (in, out, NULL, &params, &streamed);

  g_assert_no_error (memory.labels_error);
  g_assert_cmpuint (memory.labels_read, ==, 3);
  g_assert_cmpuint (streamed.labels_read, ==, 0);
  g_assert_error (streamed.labels_error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_assert_cmpstr (streamed.labels_error->message, ==,
                   "a streamed run's labels are on disk until the run ends");
  seen_clear (&memory);
  seen_clear (&streamed);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/engine/stream/hook/same-centres-as-in-memory", Fixture, GINT_TO_POINTER (FALSE),
              fixture_setup, test_same_centres, fixture_teardown);
  g_test_add ("/engine/stream/hook/same-centres-as-in-memory-masked", Fixture,
              GINT_TO_POINTER (TRUE), fixture_setup, test_same_centres, fixture_teardown);
  g_test_add ("/engine/stream/hook/labels-on-disk", Fixture, NULL, fixture_setup,
              test_labels_on_disk, fixture_teardown);
  return g_test_run ();
}

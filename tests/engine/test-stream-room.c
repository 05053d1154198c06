/* Supervox tests: what a streamed run keeps between passes (the prepared
 * slabs, the labels before connectivity) goes to host memory first and
 * to temporary files only for what the memory limit does not hold
 * (stream-spill.c, stream-sizing.c). Slabs whose prepared values come
 * from the file's samples alone are kept as those samples (1 byte a voxel
 * for uint8, not 4) and prepared again when read back, so that the labels
 * are the in-memory run's, byte for byte; the bytes the run reports are
 * those its plan (sv_run_plan) allowed for. */
#include <string.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io.h"
#include "supervox/sv-run-plan.h"
#include "supervox/sv-stream.h"
#include "stream-private.h"
#include "sv-test-files.h"
#include "sv-test-volumes.h"

#define GIB (G_GUINT64_CONSTANT (1) << 30)

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-stream-room");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

/* Slices [2, 5) of 8 in memory, the others in the file: ranges across
 * both edges come back as written, each slice is counted once where it
 * went, and the memory part is read in place. */
static void
test_spill_host_first (Fixture *f, gconstpointer data)
{
  enum
  {
    NZ = 8,
    SLICE = 12
  };
  g_autofree char *beside = g_build_filename (f->dir, "out.tif", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvSpill) spill = sv__spill_new (beside, "test", NZ, SLICE, 2, 3, &error);
  guint8 in[NZ * SLICE], out[NZ * SLICE];

  g_assert_no_error (error);
  for (guint i = 0; i < NZ * SLICE; i++)
    in[i] = (guint8)(7 * i + 1);
  g_assert_true (sv__spill_write (spill, 0, 3, in, &error));
  g_assert_true (sv__spill_write (spill, 3, NZ, in + 3 * SLICE, &error));
  g_assert_no_error (error);
  g_assert_true (sv__spill_read (spill, 1, 6, out, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (out, 5 * SLICE, in + SLICE, 5 * SLICE);
  g_assert_cmpuint (sv__spill_host_bytes (spill), ==, 3 * SLICE);
  g_assert_cmpuint (sv__spill_file_bytes (spill), ==, 5 * SLICE);

  g_assert_nonnull (sv__spill_peek (spill, 2, 5));
  g_assert_cmpmem (sv__spill_peek (spill, 3, 5), 2 * SLICE, in + 3 * SLICE, 2 * SLICE);
  g_assert_null (sv__spill_peek (spill, 1, 3));
  g_assert_null (sv__spill_peek (spill, 4, 6));

  /* Written again: the same slices, the same count. */
  memset (in + 4 * SLICE, 0xab, 2 * SLICE);
  g_assert_true (sv__spill_write (spill, 4, 6, in + 4 * SLICE, &error));
  g_assert_true (sv__spill_read (spill, 0, NZ, out, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (out, NZ * SLICE, in, NZ * SLICE);
  g_assert_cmpuint (sv__spill_host_bytes (spill), ==, 3 * SLICE);
  g_assert_cmpuint (sv__spill_file_bytes (spill), ==, 5 * SLICE);
}

/* A spill that memory holds whole makes no file: beside a folder that
 * does not exist it works, where one that needs a file fails at once. */
static void
test_spill_no_file (Fixture *f, gconstpointer data)
{
  g_autofree char *beside = g_build_filename (f->dir, "missing", "out.tif", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvSpill) held = sv__spill_new (beside, "labels", 4, 16, 0, 4, &error);
  g_autoptr (SvSpill) spilled = NULL;
  guint8 in[64], out[64];

  g_assert_no_error (error);
  for (guint i = 0; i < 64; i++)
    in[i] = (guint8)i;
  g_assert_true (sv__spill_write (held, 0, 4, in, &error));
  g_assert_true (sv__spill_read (held, 0, 4, out, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (out, 64, in, 64);
  g_assert_cmpuint (sv__spill_file_bytes (held), ==, 0);

  spilled = sv__spill_new (beside, "labels", 4, 16, 0, 3, &error);
  g_assert_null (spilled);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "cannot make a temporary file beside it"));
}

/* The in-memory run's labels of the file at `in`. */
static gint32 *
memory_labels (const char *in, const SvSlicParams *params)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) volume = sv_tiff_read_volume (in, &error);
  SvBackend *backend = sv_backend_new ("cpu", &error);
  gint32 *labels;

  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, volume, NULL, &error));
  g_assert_true (sv_backend_run (backend, params, NULL, NULL, &error));
  labels = sv_backend_take_labels (backend, sv_volume_n_voxels (volume), &error);
  g_assert_no_error (error);
  sv_backend_free (backend);
  return labels;
}

/* What the plan of a streamed run of `in` in slabs of 3 under `limit`
 * allows for temporary files. */
static guint64
planned_temp_bytes (const char *in, const SvSlicParams *params, guint64 limit)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvTiffSlabReader) reader = sv_tiff_slab_reader_open (in, NULL, &error);
  SvRunSource source;
  SvRunBudgets budgets = { 0 };
  SvRunPlan plan;

  g_assert_no_error (error);
  sv_run_source_from_header (&source, sv_tiff_slab_reader_info (reader));
  budgets.host_bytes = limit;
  budgets.slab_depth = 3;
  g_assert_true (sv_run_plan (&source, params, &budgets, &plan, &error));
  g_assert_no_error (error);
  g_assert_cmpint (plan.mode, ==, SV_RUN_STREAMED);
  return plan.temp_bytes;
}

/* 20×32×36 with 40 segments (grid step 8: a connectivity window of 19
 * slices, 175104 bytes, and 6 MiB set aside) in slabs of 3 slices, each
 * slice 16128 bytes (uint8 twice, float32, assignment and labels):
 * 6514944 bytes beside what is kept. Kept: the image's 23040 uint8
 * samples (slabs of 3456 bytes, the last 2304), or 46080 bytes of uint16,
 * or float32 (92160 bytes: the float32 file, and the uint8 one smoothed),
 * and 92160 bytes of labels in slices of 4608. */
static void
test_kept_where_room_is (Fixture *f, gconstpointer data)
{
  static const struct
  {
    SvSampleType type;
    double sigma;
    guint64 limit;
    guint64 host, file, labels_host, labels_file;
  } cases[] = {
    /* Nothing held: a uint8 volume spills 1 byte a voxel, not 4. */
    { SV_SAMPLE_U8, 0, 1, 0, 23040, 0, 92160 },
    { SV_SAMPLE_U16, 0, 1, 0, 46080, 0, 92160 },
    { SV_SAMPLE_F32, 0, 1, 0, 92160, 0, 92160 },
    { SV_SAMPLE_U8, 0.8, 1, 0, 92160, 0, 92160 },
    /* Everything held: no temporary file is written. */
    { SV_SAMPLE_U8, 0, 1 * GIB, 23040, 0, 92160, 0 },
    { SV_SAMPLE_U16, 0, 1 * GIB, 46080, 0, 92160, 0 },
    { SV_SAMPLE_F32, 0, 1 * GIB, 92160, 0, 92160, 0 },
    { SV_SAMPLE_U8, 0.8, 1 * GIB, 92160, 0, 92160, 0 },
    /* Room for the samples and 10 slices of labels. */
    { SV_SAMPLE_U8, 0, 6514944 + 23040 + 10 * 4608, 23040, 0, 46080, 46080 },
    /* Room for three slabs and 100 bytes: the last slab, and every
     * label, go to the files. */
    { SV_SAMPLE_U8, 0, 6514944 + 3 * 3456 + 100, 3 * 3456, 23040 - 3 * 3456, 0, 92160 },
    /* Smoothed: 5 of the float32 image's slices of 4608 bytes. */
    { SV_SAMPLE_U8, 0.8, 6514944 + 5 * 4608 + 100, 5 * 4608, 15 * 4608, 0, 92160 },
  };
  g_autoptr (SvVolume) v = sv_test_textured_volume (20, 32, 36, 1);
  g_autofree char *out = g_build_filename (f->dir, "streamed.tif", NULL);

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *in = sv_test_write_volume (f->dir, "in.tif", v, cases[c].type);
      g_autofree gint32 *expected = NULL;
      g_autoptr (SvLabels) got = NULL;
      g_autoptr (GError) error = NULL;
      SvStreamOptions options;
      SvStreamReport report;
      SvSlicParams params;

      g_test_message ("case %u: %s, sigma %g, limit %" G_GUINT64_FORMAT, c,
                      sv_sample_type_to_string (cases[c].type), cases[c].sigma, cases[c].limit);
      sv_slic_params_init_defaults (&params);
      params.n_segments = 40;
      params.sigma[0] = params.sigma[1] = params.sigma[2] = cases[c].sigma;
      expected = memory_labels (in, &params);
      sv_stream_options_init_defaults (&options);
      options.slab_depth = 3;
      options.memory_limit = cases[c].limit;
      options.n_threads = 2;
      g_assert_true (sv_stream_slic_run (in, out, &params, NULL, &options, NULL, &report, &error));
      g_assert_no_error (error);

      got = sv_tiff_read_labels (out, &error);
      g_assert_no_error (error);
      g_assert_cmpmem (got->data, sv_labels_n_voxels (got) * sizeof (gint32), expected,
                       sv_volume_n_voxels (v) * sizeof (gint32));
      g_assert_cmpuint (report.kept_host_bytes, ==, cases[c].host);
      g_assert_cmpuint (report.kept_file_bytes, ==, cases[c].file);
      g_assert_cmpuint (report.labels_host_bytes, ==, cases[c].labels_host);
      g_assert_cmpuint (report.labels_file_bytes, ==, cases[c].labels_file);
      /* Kept slabs are not read from the image file again: one pass
       * for the statistics, one for the first iteration. */
      if (cases[c].sigma == 0)
        g_assert_cmpuint (report.image_passes, ==, 2);
      g_assert_cmpuint (planned_temp_bytes (in, &params, cases[c].limit), ==,
                        report.kept_file_bytes + report.labels_file_bytes);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/engine/stream/spill/host-first", Fixture, NULL, fixture_setup,
              test_spill_host_first, fixture_teardown);
  g_test_add ("/engine/stream/spill/no-file-when-held", Fixture, NULL, fixture_setup,
              test_spill_no_file, fixture_teardown);
  g_test_add ("/engine/stream/room/kept-where-room-is", Fixture, NULL, fixture_setup,
              test_kept_where_room_is, fixture_teardown);
  return g_test_run ();
}

/* Supervox tests: a streamed run reads the next slab on a thread while the
 * current one computes; the slabs it serves are the bytes of a read made
 * on the spot, and the label file is the same with and without it. */
#include <string.h>

#include "supervox/sv-io-slab.h"
#include "supervox/sv-io.h"
#include "supervox/sv-stream.h"
#include "rng.h"
#include "stream-private.h"
#include "sv-test-files.h"

typedef struct
{
  char *dir;
  char *image; /* uint16, 29·31·27, deflate */
  char *mask;  /* uint8, the same shape */
} Fixture;

enum
{
  NZ = 29,
  NY = 31,
  NX = 27
};

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (NZ, NY, NX, 1, &error);
  g_autoptr (SvVolume) m = sv_volume_new (NZ, NY, NX, 1, &error);
  SvRng rng;

  (void)data;
  g_assert_no_error (error);
  f->dir = sv_test_make_dir ("sv-test-stream-read-ahead");
  f->image = g_build_filename (f->dir, "image.tif", NULL);
  f->mask = g_build_filename (f->dir, "mask.tif", NULL);
  sv_rng_init (&rng, 5);
  for (gsize i = 0; i < (gsize)NZ * NY * NX; i++)
    {
      const guint z = (guint)(i / (NY * NX)), y = (guint)(i / NX % NY), x = (guint)(i % NX);
      v->data[i]
          = (float)((x / 6 + y / 5 + z / 4) % 3) * 0.3f + (float)sv_rng_uniform (&rng) * 0.1f;
      m->data[i] = (x + 2 * z) % 11 != 0 && y > 2;
    }
  g_assert_true (sv_tiff_write_volume (f->image, v, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);
  g_assert_true (sv_tiff_write_volume (f->mask, m, SV_SAMPLE_U8, &error));
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void)data;
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->image);
  g_free (f->mask);
}

/* A slab read ahead and then asked for swaps in the bytes a direct read
 * gives; asking for other slices waits for the thread and reads them. */
static void
test_read_ahead_slabs (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvTiffSlabReader) reader = sv_tiff_slab_reader_open (f->image, NULL, &error);
  const gsize slice = sv_tiff_slab_reader_slice_bytes (reader);
  g_autofree guint8 *expected = g_malloc (5 * slice);
  g_autofree guint8 *buffer = g_malloc (5 * slice);
  SvReadAhead *ra;
  guint8 *before;

  (void)data;
  g_assert_no_error (error);
  ra = sv__read_ahead_new (reader, 5 * slice);
  g_assert_nonnull (ra);

  sv__read_ahead_start (ra, 10, 15);
  before = buffer;
  g_assert_true (sv__read_ahead_read (ra, 10, 15, &buffer, &error));
  g_assert_no_error (error);
  g_assert_true (buffer != before);
  g_assert_cmpuint (sv__read_ahead_hits (ra), ==, 1);
  g_assert_true (sv_tiff_slab_reader_read (reader, 10, 15, expected, &error));
  g_assert_cmpmem (buffer, 5 * slice, expected, 5 * slice);

  /* The last slab, shorter; then a miss. */
  sv__read_ahead_start (ra, 25, NZ);
  g_assert_true (sv__read_ahead_read (ra, 25, NZ, &buffer, &error));
  g_assert_true (sv_tiff_slab_reader_read (reader, 25, NZ, expected, &error));
  g_assert_cmpmem (buffer, (NZ - 25) * slice, expected, (NZ - 25) * slice);
  sv__read_ahead_start (ra, 0, 5);
  before = buffer;
  g_assert_true (sv__read_ahead_read (ra, 5, 10, &buffer, &error));
  g_assert_true (buffer == before);
  g_assert_cmpuint (sv__read_ahead_hits (ra), ==, 2);
  g_assert_true (sv_tiff_slab_reader_read (reader, 5, 10, expected, &error));
  g_assert_cmpmem (buffer, 5 * slice, expected, 5 * slice);

  /* More slices than the buffer holds are not read ahead. */
  sv__read_ahead_start (ra, 0, 6);
  g_assert_true (sv__read_ahead_read (ra, 0, 5, &buffer, &error));
  g_assert_cmpuint (sv__read_ahead_hits (ra), ==, 2);
  sv__read_ahead_free (ra);
}

/* Runs the file through sv_stream_slic_run in slabs of 4 slices. */
static void
run_streamed (Fixture *f, const char *extra, gboolean read_ahead, const char *out,
              SvStreamReport *report)
{
  g_autoptr (GError) error = NULL;
  SvSlicParams params;
  SvStreamOptions options;

  sv_slic_params_init_defaults (&params);
  params.n_segments = 40;
  params.compactness = 0.2;
  sv_stream_options_init_defaults (&options);
  options.n_threads = 2;
  options.slab_depth = 4;
  options.no_read_ahead = !read_ahead;
  if (g_strcmp0 (extra, "sigma") == 0)
    params.sigma[0] = params.sigma[1] = params.sigma[2] = 1.0f;
  if (g_strcmp0 (extra, "mask") == 0)
    options.mask_path = f->mask;
  g_assert_true (sv_stream_slic_run (f->image, out, &params, NULL, &options, NULL, report, &error));
  g_assert_no_error (error);
}

static void
test_read_ahead_same_labels (Fixture *f, gconstpointer data)
{
  static const char *const cases[] = { "plain", "sigma", "mask" };
  g_autofree char *direct = g_build_filename (f->dir, "direct.tif", NULL);
  g_autofree char *ahead = g_build_filename (f->dir, "ahead.tif", NULL);

  (void)data;
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      SvStreamReport on, off;

      g_test_message ("%s", cases[c]);
      run_streamed (f, cases[c], FALSE, direct, &off);
      run_streamed (f, cases[c], TRUE, ahead, &on);
      sv_test_assert_same_file (direct, ahead);
      g_assert_cmpuint (off.slabs_read_ahead, ==, 0);
      /* Each pass over the file after its first slab (8 slabs of 4
       * slices). The file is read by the statistics passes (the second
       * one with a halo of 4 slices around each slab when smoothing) and,
       * without smoothing, by the first iteration; the prepared slabs are
       * kept after that. */
      g_assert_cmpuint (on.slabs_read_ahead, >=, 7);
      if (g_strcmp0 (cases[c], "sigma") == 0)
        g_assert_cmpuint (on.image_passes, <=, 3);
      else
        {
          g_assert_cmpuint (on.slabs_read_ahead, >=, 2 * 7);
          g_assert_cmpuint (on.image_passes, ==, 2);
          g_assert_cmpuint (off.image_passes, ==, 2);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/engine/stream/read-ahead/slabs", Fixture, NULL, fixture_setup,
              test_read_ahead_slabs, fixture_teardown);
  g_test_add ("/engine/stream/read-ahead/same-labels", Fixture, NULL, fixture_setup,
              test_read_ahead_same_labels, fixture_teardown);
  return g_test_run ();
}

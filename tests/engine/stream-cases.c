/* Supervox tests: the streamed ranks' and workers' shared cases
 * (stream-cases.h). */
#include "stream-cases.h"

#include <math.h>

#include "supervox/sv-io.h"
#include "supervox/sv-stream.h"
#include "supervox/sv-volume.h"
#include "sv-test-files.h"

void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-stream");
}

void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

char *
write_input (Fixture *f, guint nz, guint ny, guint nx)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (nz, ny, nx, 1, &error);
  char *path = g_build_filename (f->dir, "in.tif", NULL);
  guint32 h = 99;

  g_assert_no_error (error);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        {
          h = h * 1664525u + 1013904223u;
          v->data[((gsize)z * ny + y) * nx + x]
              = (float)(0.45 + 0.25 * sin (0.7 * x + 0.4 * z) * cos (0.5 * y)
                        + 0.15 * ((x / 5 + y / 4 + z / 2) % 3)
                        + 0.1 * ((h >> 8) / (double)(1u << 24)));
        }
  g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);
  return path;
}

void
one_process (const char *input, const char *output, const SvSlicParams *params, const guint8 *mask)
{
  g_autoptr (GError) error = NULL;
  SvStreamOptions options;

  sv_stream_options_init_defaults (&options);
  options.slab_depth = 3;
  g_assert_true (sv_stream_slic_run (input, output, params, mask, &options, NULL, NULL, &error));
  g_assert_no_error (error);
}

void
make_cases (SvSlicParams params[4], guint8 *ball)
{
  const guint nz = CASE_NZ, ny = CASE_NY, nx = CASE_NX;

  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        ball[((gsize)z * ny + y) * nx + x]
            = (z - 3.0) * (z - 3.0) * 4 + (y - 9.0) * (y - 9.0) + (x - 10.0) * (x - 10.0) < 70;
  for (guint p = 0; p < 4; p++)
    sv_slic_params_init_defaults (&params[p]);
  params[0].n_segments = 30;
  params[1].n_segments = 40;
  params[1].sigma[0] = 1.0;
  params[2].n_segments = 25;
  params[2].slic_zero = TRUE;
  params[2].compactness = 0.05;
  params[2].start_label = 0;
  params[3].n_segments = 15;
  params[3].sigma[0] = 0.8;
  params[3].min_size_factor = 0.9;
  params[3].max_size_factor = 1.0;
}

gboolean
rank_run (const SvStreamRanks *ranks, gpointer user_data, SvStreamReport *report, GError **error)
{
  const Job *job = user_data;
  SvStreamOptions options;

  sv_stream_options_init_defaults (&options);
  options.ranks = ranks;
  options.slab_depth = job->slab_depth > 0 ? job->slab_depth : 2;
  options.memory_limit = job->memory_limit;
  options.write_options.zarr = job->zarr;
  return sv_stream_slic_run (job->input, job->output, job->params, job->mask, &options, NULL,
                             report, error);
}

/* Supervox tests: volumes made for tests. */
#include "sv-test-volumes.h"

#include <math.h>

SvVolume *
sv_test_textured_volume (guint nz, guint ny, guint nx, guint nc)
{
  g_autoptr (GError) error = NULL;
  SvVolume *v = sv_volume_new (nz, ny, nx, nc, &error);
  guint32 h = 12345;

  g_assert_no_error (error);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        for (guint c = 0; c < nc; c++)
          {
            float noise;
            h = h * 1664525u + 1013904223u;
            noise = (float)(h >> 8) / (float)(1u << 24);
            v->data[(((gsize)z * ny + y) * nx + x) * nc + c]
                = (float)(0.45 + 0.25 * sin (0.7 * x + 0.3 * z + c) * cos (0.5 * y)
                          + 0.15 * ((x / 5 + y / 4 + z / 3) % 3) + 0.1 * noise);
          }
  return v;
}

char *
sv_test_write_volume (const char *dir, const char *name, const SvVolume *v, SvSampleType as)
{
  g_autoptr (GError) error = NULL;
  char *path = g_build_filename (dir, name, NULL);

  g_assert_true (sv_tiff_write_volume (path, v, as, &error));
  g_assert_no_error (error);
  return path;
}

const char *const sv_test_stream_param_sets[] = {
  "--n-segments 40",
  "--n-segments 40 --no-enforce-connectivity",
  "--n-segments 60 --sigma 1.3 --compactness 0.2",
  "--n-segments 30 --slic-zero --compactness 0.05 --start-label 0",
  /* Splits (max 1.0 × segment) and merges (min 0.9 ×) across slabs. */
  "--n-segments 25 --compactness 1 --min-size-factor 0.9 --max-size-factor 1.0",
  NULL,
};

void
sv_test_wrap_volume (SvVolume *vol, float *data, guint nz, guint ny, guint nx, guint nc)
{
  *vol = (SvVolume){ .nz = nz,
                     .ny = ny,
                     .nx = nx,
                     .nc = nc,
                     .data = data,
                     .spacing = { 1.0, 1.0, 1.0 },
                     .source_type = SV_SAMPLE_F32 };
}

/* What the CUDA test programs share: the skip without a device and the
 * test image they run on. */
#pragma once

#include <math.h>

#include "supervox/sv-volume.h"
#include "sv-cuda.h"

/* TRUE when a CUDA device is usable; otherwise the test skips with the reason. */
static inline gboolean
sv_test_need_cuda (void)
{
  g_autoptr (GError) error = NULL;

  if (!sv_cuda_device_available (&error))
    {
      g_test_skip (error->message);
      return FALSE;
    }
  return TRUE;
}

/* A deterministic test image: blocky regions of different means, a smooth
 * wave and noise, so that SLIC has real boundaries to find. */
static inline SvVolume *
sv_test_blocky_volume (guint nz, guint ny, guint nx, guint nc, guint32 seed)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  SvVolume *v = sv_volume_new (nz, ny, nx, nc, &error);

  g_assert_no_error (error);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        for (guint c = 0; c < nc; c++)
          {
            guint block = (x / 7) * 7 + (y / 5) * 3 + (z / 4) * 5 + c;
            double value = 0.2 * (block % 5) + 0.15 * sin (0.3 * x + 0.2 * y + 0.1 * z + c)
                           + 0.05 * g_rand_double (rand);
            v->data[(((gsize)z * ny + y) * nx + x) * nc + c] = (float)value;
          }
  return v;
}

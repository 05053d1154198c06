/* Supervox engine: sRGB → CIELAB as skimage.color.rgb2lab does it. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-prepare.h"

#include <math.h>

/* skimage.color.colorconv.xyz_from_rgb and the D65 2° white point it uses
 * for Lab (lab_ref_white). */
static const double xyz_from_rgb[3][3] = {
  { 0.412453, 0.357580, 0.180423 },
  { 0.212671, 0.715160, 0.072169 },
  { 0.019334, 0.119193, 0.950227 },
};
static const double ref_white[3] = { 0.95047, 1.0, 1.08883 };

static double
srgb_to_linear (double v)
{
  return v > 0.04045 ? pow ((v + 0.055) / 1.055, 2.4) : v / 12.92;
}

static double
lab_f (double t)
{
  return t > 0.008856 ? cbrt (t) : 7.787 * t + 16.0 / 116.0;
}

void
sv_rgb_to_lab (float *data, gsize n_voxels)
{
  g_return_if_fail (data != NULL || n_voxels == 0);

  for (gsize i = 0; i < n_voxels; i++)
    {
      float *px = data + 3 * i;
      double rgb[3], f[3];

      for (int c = 0; c < 3; c++)
        rgb[c] = srgb_to_linear ((double)px[c]);
      for (int r = 0; r < 3; r++)
        {
          const double xyz = xyz_from_rgb[r][0] * rgb[0] + xyz_from_rgb[r][1] * rgb[1]
                             + xyz_from_rgb[r][2] * rgb[2];
          f[r] = lab_f (xyz / ref_white[r]);
        }
      px[0] = (float)(116.0 * f[1] - 16.0);
      px[1] = (float)(500.0 * (f[0] - f[1]));
      px[2] = (float)(200.0 * (f[1] - f[2]));
    }
}

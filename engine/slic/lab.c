/* Supervox engine: sRGB → CIELAB as skimage.color.rgb2lab computes it, in
 * the float type scikit-image's slic works in for the source.
 *
 * numpy evaluates each step of rgb2xyz and xyz2lab in the array's dtype:
 * for float32 arrays every Python constant is first rounded to float32
 * (double → float, as the casts below do; a float literal could round
 * differently). The matrix product sums the three products left to right
 * without FMA (numpy's own loop and the reference BLAS both do). power and
 * cbrt are libm's pow and cbrt (powf and cbrtf for float32), which is what
 * numpy calls unless it dispatches them to Intel's SVML on AVX512_SKX CPUs
 * (see docs/SLIC-SEMANTICS.md). */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-prepare.h"

#include <math.h>

/* skimage.color.colorconv.xyz_from_rgb and the D65 2° white point it uses
 * for Lab (illuminants["D65"]["2"]). */
static const double xyz_from_rgb[3][3] = {
  { 0.412453, 0.357580, 0.180423 },
  { 0.212671, 0.715160, 0.072169 },
  { 0.019334, 0.119193, 0.950227 },
};
static const double ref_white[3] = { 0.95047, 1.0, 1.08883 };

/* One voxel in float32: rgb2xyz then xyz2lab on a float32 array. */
static void
lab_float (float *px)
{
  float lin[3], f[3];

  for (int c = 0; c < 3; c++)
    {
      const float v = px[c];
      lin[c] = v > (float)0.04045 ? powf ((v + (float)0.055) / (float)1.055, (float)2.4)
                                  : v / (float)12.92;
    }
  for (int r = 0; r < 3; r++)
    {
      const float xyz = lin[0] * (float)xyz_from_rgb[r][0] + lin[1] * (float)xyz_from_rgb[r][1]
                        + lin[2] * (float)xyz_from_rgb[r][2];
      const float t = xyz / (float)ref_white[r];
      f[r] = t > (float)0.008856 ? cbrtf (t) : (float)7.787 * t + (float)(16.0 / 116.0);
    }
  px[0] = (float)116.0 * f[1] - (float)16.0;
  px[1] = (float)500.0 * (f[0] - f[1]);
  px[2] = (float)200.0 * (f[1] - f[2]);
}

/* One voxel in float64, from its rescaled samples; rounded to float32 once. */
static void
lab_double (const double rgb[3], float *out)
{
  double lin[3], f[3];

  for (int c = 0; c < 3; c++)
    {
      const double v = rgb[c];
      lin[c] = v > 0.04045 ? pow ((v + 0.055) / 1.055, 2.4) : v / 12.92;
    }
  for (int r = 0; r < 3; r++)
    {
      const double xyz
          = lin[0] * xyz_from_rgb[r][0] + lin[1] * xyz_from_rgb[r][1] + lin[2] * xyz_from_rgb[r][2];
      const double t = xyz / ref_white[r];
      f[r] = t > 0.008856 ? cbrt (t) : 7.787 * t + 16.0 / 116.0;
    }
  out[0] = (float)(116.0 * f[1] - 16.0);
  out[1] = (float)(500.0 * (f[0] - f[1]));
  out[2] = (float)(200.0 * (f[1] - f[2]));
}

void
sv_rgb_to_lab (float *data, gsize n_voxels)
{
  g_return_if_fail (data != NULL || n_voxels == 0);

  for (gsize i = 0; i < n_voxels; i++)
    lab_float (data + 3 * i);
}

void
sv_rescale64_init (SvRescale64 *rescale, SvSampleType type, gboolean any_in, float min, float max)
{
  g_return_if_fail (rescale != NULL);

  rescale->type = type;
  rescale->shift = 0.0;
  rescale->scale = 1.0;
  rescale->divide = FALSE;
  if (!any_in)
    return;
  /* sv_sample_to_double is monotonic, so the doubles' minimum and maximum
   * are those of the float32 samples, and max(v − min) is (max − min)
   * rounded once. */
  rescale->shift = sv_sample_to_double (type, min);
  rescale->scale = sv_sample_to_double (type, max) - rescale->shift;
  rescale->divide = rescale->scale != 0.0;
}

void
sv_rgb_to_lab_double (float *data, gsize n_voxels, const SvRescale64 *rescale, const guint8 *mask)
{
  g_return_if_fail (data != NULL || n_voxels == 0);
  g_return_if_fail (rescale != NULL);

  for (gsize i = 0; i < n_voxels; i++)
    {
      float *px = data + 3 * i;
      double rgb[3];

      /* numpy: image -= image.min(); image /= imax, in float64. */
      for (int c = 0; c < 3; c++)
        {
          double v = sv_sample_to_double (rescale->type, px[c]) - rescale->shift;
          if (rescale->divide)
            v = v / rescale->scale;
          /* As sv_rescale: masked-out NaN/inf must not reach the smoothing. */
          if (mask != NULL && mask[i] == 0 && !isfinite (v))
            v = 0.0;
          rgb[c] = v;
        }
      lab_double (rgb, px);
    }
}

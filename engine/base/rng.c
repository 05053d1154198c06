/* Supervox engine: xoshiro256** with splitmix64 seeding.
 *
 * Why not GRand: GRand (Mersenne Twister) is documented as stable, but its
 * seeding from a 64-bit value and its double conversion are GLib's own
 * choices; xoshiro256** is defined by a dozen lines of published reference
 * code (https://prng.di.unimi.it/), which a Python or CUDA reimplementation
 * can match exactly, and it is fast enough for per-voxel noise. */
#define G_LOG_DOMAIN "sv-engine"

#include "rng.h"

#include <math.h>

static guint64
splitmix64_next (guint64 *x)
{
  guint64 z = (*x += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static inline guint64
rotl (guint64 x, int k)
{
  return (x << k) | (x >> (64 - k));
}

void
sv_rng_init (SvRng *rng, guint64 seed)
{
  g_return_if_fail (rng != NULL);

  guint64 x = seed;
  for (int i = 0; i < 4; i++)
    rng->s[i] = splitmix64_next (&x);
  rng->spare_normal = 0.0;
  rng->has_spare = FALSE;
}

guint64
sv_rng_next_u64 (SvRng *rng)
{
  guint64 *s = rng->s;
  guint64 result = rotl (s[1] * 5, 7) * 9;
  guint64 t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl (s[3], 45);

  return result;
}

double
sv_rng_uniform (SvRng *rng)
{
  return (double)(sv_rng_next_u64 (rng) >> 11) * 0x1.0p-53;
}

guint64
sv_rng_below (SvRng *rng, guint64 bound)
{
  g_return_val_if_fail (bound > 0, 0);

  /* Lemire (2019): the high word of a 64×64 product is uniform in
   * [0, bound) once the low word's biased range is rejected. Done with
   * 32-bit halves so it needs no 128-bit type. */
  guint64 threshold = (0 - bound) % bound;
  for (;;)
    {
      guint64 x = sv_rng_next_u64 (rng);
      guint64 x_lo = x & 0xffffffffu, x_hi = x >> 32;
      guint64 b_lo = bound & 0xffffffffu, b_hi = bound >> 32;
      guint64 ll = x_lo * b_lo, lh = x_lo * b_hi, hl = x_hi * b_lo, hh = x_hi * b_hi;
      guint64 mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
      guint64 lo = (mid << 32) | (ll & 0xffffffffu);
      guint64 hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
      if (lo >= threshold)
        return hi;
    }
}

double
sv_rng_normal (SvRng *rng)
{
  if (rng->has_spare)
    {
      rng->has_spare = FALSE;
      return rng->spare_normal;
    }

  /* 1 - u lies in (0, 1], so the logarithm is finite. */
  double u1 = 1.0 - sv_rng_uniform (rng);
  double u2 = sv_rng_uniform (rng);
  double r = sqrt (-2.0 * log (u1));
  double theta = 2.0 * G_PI * u2;

  rng->spare_normal = r * sin (theta);
  rng->has_spare = TRUE;
  return r * cos (theta);
}

/* Supervox engine: a small seeded pseudo-random generator whose sequence is
 * fixed by its published definition, so synthetic data are identical on
 * every machine and in every version. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* xoshiro256** 1.0 (Blackman & Vigna, 2018), state seeded with splitmix64.
 * Plain struct so it can live on the stack. */
typedef struct
{
  guint64 s[4];
  double spare_normal; /* second Box–Muller value, valid when has_spare */
  gboolean has_spare;
} SvRng;

/* Seeds the state: the four state words are four successive outputs of
 * splitmix64 started at seed (any seed is fine, 0 included). */
void sv_rng_init (SvRng *rng, guint64 seed);

/* The next 64-bit output of xoshiro256**. */
guint64 sv_rng_next_u64 (SvRng *rng);

/* A uniform double in [0, 1): the top 53 bits of the next output times 2^-53. */
double sv_rng_uniform (SvRng *rng);

/* A uniform integer in [0, bound) without modulo bias (bound > 0), by
 * Lemire's multiply-and-reject method on 64-bit outputs. */
guint64 sv_rng_below (SvRng *rng, guint64 bound);

/* A standard normal deviate by the Box–Muller transform; values come in
 * pairs (cos, then sin) from two uniforms. Depends on libm's log, sqrt, cos
 * and sin, which glibc evaluates the same way on every x86-64/aarch64
 * machine; other C libraries may differ in the last bit. */
double sv_rng_normal (SvRng *rng);

G_END_DECLS

/* Tests for the rescale to [0, 1] alone: exact values, any order of
 * equal extremes, and the errors for NaN and infinities (against numpy:
 * test-prepare.c). */
#include <math.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-prepare.h"
#include "sv-test-volumes.h"

static void
test_rescale_constant (void)
{
  float v[12];
  g_autoptr (GError) error = NULL;
  for (int i = 0; i < 12; i++)
    v[i] = 5.5f;
  g_assert_true (sv_rescale (v, 4, 3, NULL, &error));
  for (int i = 0; i < 12; i++)
    g_assert_cmpfloat (v[i], ==, 0.0f);
}

static void
test_rescale_small_exact (void)
{
  float v[4] = { 2.0f, 4.0f, 6.0f, 10.0f };
  g_assert_true (sv_rescale (v, 4, 1, NULL, NULL));
  g_assert_cmpfloat (v[0], ==, 0.0f);
  g_assert_cmpfloat (v[1], ==, 0.25f);
  g_assert_cmpfloat (v[2], ==, 0.5f);
  g_assert_cmpfloat (v[3], ==, 1.0f);
}

/* The rescale of values read one after another, as numpy's min and max
 * and the voxel loop do: MIN and MAX keep the later of equal values, so
 * −0 and +0 as extremes are told apart by their order. */
static void
rescale_in_order (const float *in, gsize n, float *out)
{
  float lo = INFINITY, hi = -INFINITY, scale;

  for (gsize i = 0; i < n; i++)
    {
      lo = MIN (lo, in[i]);
      hi = MAX (hi, in[i]);
    }
  scale = hi - lo;
  for (gsize i = 0; i < n; i++)
    out[i] = scale != 0.0f ? (in[i] - lo) / scale : in[i] - lo;
}

/* The rescale's scan takes four values at a time where that cannot
 * change its result: the values come out bit for bit as read one after
 * another, for lengths that leave every remainder of four, extremes
 * anywhere, and extremes of −0 and +0 in either order. */
static void
test_rescale_any_order (void)
{
  static const gsize lengths[] = { 1, 2, 3, 4, 5, 7, 8, 9, 13, 100003 };
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);

  for (guint l = 0; l < G_N_ELEMENTS (lengths); l++)
    for (int kind = 0; kind < 5; kind++)
      {
        const gsize n = lengths[l];
        g_autofree float *v = g_new (float, n);
        g_autofree float *want = g_new (float, n);

        for (gsize i = 0; i < n; i++)
          v[i] = (float)g_rand_double_range (rng, kind == 4 ? -3.0 : 0.5, 3.0);
        /* 0: positive values; 1: −0 then +0 as the minimum; 2: +0 then
         * −0; 3: every value ≤ 0, zeros of both signs the maximum; 4: of both signs. */
        if (kind == 1 || kind == 2)
          {
            /* The later zero in a lower lane of the next four (or last). */
            const gsize a = n >= 8 ? 4 * (n / 12) + 3 : n / 3;
            const gsize b = n >= 8 ? a + 1 : n - 1;

            v[a] = kind == 1 ? -0.0f : 0.0f;
            v[b] = kind == 1 ? 0.0f : -0.0f;
          }
        if (kind == 3)
          {
            for (gsize i = 0; i < n; i++)
              v[i] = -v[i];
            /* +0 in the last lane of four, −0 (later) in the first of
             * the next. */
            v[n >= 8 ? 4 * (n / 8) : n / 2] = -0.0f;
            if (n >= 8)
              v[4 * (n / 8) - 1] = 0.0f;
          }
        rescale_in_order (v, n, want);
        g_assert_true (sv_rescale (v, n, 1, NULL, NULL));
        for (gsize i = 0; i < n; i++)
          if (memcmp (&v[i], &want[i], sizeof (float)) != 0)
            g_error ("length %" G_GSIZE_FORMAT ", kind %d, value %" G_GSIZE_FORMAT ": %a, not %a",
                     n, kind, i, v[i], want[i]);
      }
}

static void
test_rescale_nan_error (void)
{
  const guint nz = 2, ny = 6, nx = 9;
  const gsize n = (gsize)nz * ny * nx;
  g_autofree float *data = g_new0 (float, n);
  SvVolume vol;
  SvSlicParams params;
  g_autoptr (GError) error = NULL;

  for (gsize i = 0; i < n; i++)
    data[i] = (float)i;
  data[(0 * ny + 4) * nx + 7] = NAN;
  data[(1 * ny + 0) * nx + 0] = NAN;
  data[(1 * ny + 5) * nx + 8] = NAN;
  sv_test_wrap_volume (&vol, data, nz, ny, nx, 1);
  sv_slic_params_init_defaults (&params);

  g_autoptr (SvPrepared) prepared = sv_prepare (&vol, NULL, &params, 2, &error);
  g_assert_null (prepared);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, "NaN values at 3 voxels"));
  g_assert_nonnull (strstr (error->message, "first at z=0, y=4, x=7"));
  g_assert_nonnull (strstr (error->message, "mask them out"));
  /* The volume itself is untouched. */
  g_assert_cmpfloat (data[1], ==, 1.0f);
}

static void
test_rescale_inf_error (void)
{
  float v[6] = { 0.0f, 1.0f, 2.0f, INFINITY, -INFINITY, 3.0f };
  g_autoptr (GError) error = NULL;

  g_assert_false (sv_rescale (v, 6, 1, NULL, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, "infinite values at 2 voxels"));
  g_assert_nonnull (strstr (error->message, "first at voxel 3"));
}

static void
test_rescale_masked_nan_accepted (void)
{
  const guint nz = 3, ny = 8, nx = 8;
  const gsize n = (gsize)nz * ny * nx;
  g_autofree float *data = g_new (float, n);
  g_autofree guint8 *mask = g_new (guint8, n);
  SvVolume vol;
  SvSlicParams params;
  g_autoptr (GError) error = NULL;

  for (gsize i = 0; i < n; i++)
    {
      const gsize x = i % nx;
      mask[i] = x >= 2;
      data[i] = mask[i] ? (float)(i % 17) : (x == 0 ? NAN : INFINITY);
    }
  sv_test_wrap_volume (&vol, data, nz, ny, nx, 1);
  sv_slic_params_init_defaults (&params);
  params.sigma[0] = 2.0;

  g_autoptr (SvPrepared) prepared = sv_prepare (&vol, mask, &params, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (prepared);
  float max_abs = 0.0f;
  for (gsize i = 0; i < n; i++)
    {
      g_assert_true (isfinite (prepared->data[i]));
      if (mask[i])
        max_abs = MAX (max_abs, fabsf (prepared->data[i]));
    }
  g_assert_cmpfloat (prepared->max_abs, ==, max_abs);
  g_assert_cmpfloat (max_abs, >, 0.1f);
  g_assert_cmpfloat (max_abs, <=, 1.0f);
  g_assert_false (prepared->is_lab);
}

/* ---- Lab --------------------------------------------------------------- */

/* Supervox's Lab reproduces numpy's libm cbrt and power; meson test turns
 * off numpy's SVML ones (docs/SLIC-SEMANTICS.md). Asserts that the
 * reference ran that way. */
int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/prepare/rescale/constant", test_rescale_constant);
  g_test_add_func ("/engine/prepare/rescale/small-exact", test_rescale_small_exact);
  g_test_add_func ("/engine/prepare/rescale/any-order", test_rescale_any_order);
  g_test_add_func ("/engine/prepare/rescale/nan-error", test_rescale_nan_error);
  g_test_add_func ("/engine/prepare/rescale/inf-error", test_rescale_inf_error);
  g_test_add_func ("/engine/prepare/rescale/masked-nan-accepted", test_rescale_masked_nan_accepted);
  return g_test_run ();
}

/* Tests for the synthetic phantoms. */
#define G_LOG_DOMAIN "sv-test"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "rng.h"
#include "supervox/sv-synth.h"
#include "sv-test-python.h"

static SvSynthParams
small_params (void)
{
  SvSynthParams p;
  sv_synth_params_init_defaults (&p);
  p.nz = 20;
  p.ny = 36;
  p.nx = 44;
  p.n_cells = 25;
  p.nucleus_radius = 3.0;
  return p;
}

static void
test_defaults (void)
{
  SvSynthParams p;
  sv_synth_params_init_defaults (&p);
  g_assert_cmpuint (p.nz, ==, 64);
  g_assert_cmpuint (p.ny, ==, 128);
  g_assert_cmpuint (p.nx, ==, 128);
  g_assert_cmpuint (p.n_cells, ==, 60);
  g_assert_cmpfloat (p.nucleus_radius, ==, 5.0);
  g_assert_cmpfloat (p.blur_sigma, ==, 1.0);
  g_assert_cmpfloat (p.noise_sigma, ==, 0.03);
  g_assert_cmpuint (p.seed, ==, 1);
}

/* Same seed, same stream; uniforms in [0, 1), bounded integers in range,
 * normals with mean 0 and variance 1. The exact sequence is checked against
 * an independent Python transcription in test_rng_matches_python. */
static void
test_rng_sequence (void)
{
  SvRng a, b;
  sv_rng_init (&a, 42);
  sv_rng_init (&b, 42);
  for (int i = 0; i < 1000; i++)
    g_assert_cmpuint (sv_rng_next_u64 (&a), ==, sv_rng_next_u64 (&b));

  sv_rng_init (&a, 7);
  for (int i = 0; i < 10000; i++)
    {
      double u = sv_rng_uniform (&a);
      g_assert_cmpfloat (u, >=, 0.0);
      g_assert_cmpfloat (u, <, 1.0);
      g_assert_cmpuint (sv_rng_below (&a, 13), <, 13);
    }

  /* Normal deviates: sample mean and variance of 200000 draws. */
  sv_rng_init (&a, 3);
  double sum = 0.0, sum2 = 0.0;
  const int n = 200000;
  for (int i = 0; i < n; i++)
    {
      double z = sv_rng_normal (&a);
      sum += z;
      sum2 += z * z;
    }
  g_assert_cmpfloat (fabs (sum / n), <, 0.01);
  g_assert_cmpfloat (fabs (sum2 / n - 1.0), <, 0.02);
}

static const char rng_script[] = "import sys\n"
                                 "M = (1 << 64) - 1\n"
                                 "def sm(x):\n"
                                 "    x = (x + 0x9e3779b97f4a7c15) & M\n"
                                 "    z = x\n"
                                 "    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M\n"
                                 "    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M\n"
                                 "    return x, z ^ (z >> 31)\n"
                                 "rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M\n"
                                 "x = int(sys.argv[1]); s = []\n"
                                 "for _ in range(4):\n"
                                 "    x, z = sm(x); s.append(z)\n"
                                 "out = []\n"
                                 "for _ in range(8):\n"
                                 "    r = (rotl((s[1] * 5) & M, 7) * 9) & M\n"
                                 "    t = (s[1] << 17) & M\n"
                                 "    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] "
                                 "^= t; s[3] = rotl(s[3], 45)\n"
                                 "    out.append(str(r))\n"
                                 "print(' '.join(out))\n";

static void
test_rng_matches_python (void)
{
  if (!sv_test_python_has ("sys"))
    {
      g_test_skip ("/usr/bin/python3 not available");
      return;
    }
  g_autofree char *out = sv_test_python_args (rng_script, "12345");
  g_auto (GStrv) words = g_strsplit (g_strstrip (out), " ", -1);
  g_assert_cmpuint (g_strv_length (words), ==, 8);
  SvRng rng;
  sv_rng_init (&rng, 12345);
  for (int i = 0; i < 8; i++)
    g_assert_cmpuint (sv_rng_next_u64 (&rng), ==, g_ascii_strtoull (words[i], NULL, 10));
}

static void
test_cells_deterministic (void)
{
  SvSynthParams p = small_params ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) t1 = NULL, t2 = NULL, t3 = NULL;
  g_autoptr (SvVolume) v1 = sv_synth_cells (&p, &t1, &error);
  g_assert_no_error (error);
  g_autoptr (SvVolume) v2 = sv_synth_cells (&p, &t2, &error);
  g_assert_no_error (error);
  p.seed = 2;
  g_autoptr (SvVolume) v3 = sv_synth_cells (&p, &t3, &error);
  g_assert_no_error (error);

  gsize n = (gsize)p.nz * p.ny * p.nx;
  g_assert_cmpuint (v1->nz, ==, p.nz);
  g_assert_cmpuint (v1->ny, ==, p.ny);
  g_assert_cmpuint (v1->nx, ==, p.nx);
  g_assert_cmpuint (v1->nc, ==, 1);
  g_assert_cmpmem (v1->data, n * sizeof (float), v2->data, n * sizeof (float));
  g_assert_cmpmem (t1->data, n * sizeof (gint32), t2->data, n * sizeof (gint32));
  g_assert_true (memcmp (v1->data, v3->data, n * sizeof (float)) != 0);
  g_assert_true (memcmp (t1->data, t3->data, n * sizeof (gint32)) != 0);

  /* Without a truth pointer the image is the same. */
  g_autoptr (SvVolume) v4 = sv_synth_cells (&p, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (v3->data, n * sizeof (float), v4->data, n * sizeof (float));
}

static void
test_cells_truth_and_range (void)
{
  SvSynthParams p;
  sv_synth_params_init_defaults (&p);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) truth = NULL;
  g_autoptr (SvVolume) v = sv_synth_cells (&p, &truth, &error);
  g_assert_no_error (error);

  gsize n = (gsize)p.nz * p.ny * p.nx;
  g_autofree gsize *count = g_new0 (gsize, p.n_cells + 1);
  for (gsize i = 0; i < n; i++)
    {
      g_assert_cmpint (truth->data[i], >=, 1);
      g_assert_cmpint (truth->data[i], <=, (gint32)p.n_cells);
      count[truth->data[i]]++;
      g_assert_cmpfloat (v->data[i], >=, 0.0f);
      g_assert_cmpfloat (v->data[i], <=, 1.0f);
    }
  for (guint c = 1; c <= p.n_cells; c++)
    g_assert_cmpuint (count[c], >, 0);
}

/* With no blur and no noise, nuclei of radius 0.5 mark exactly the seed
 * voxel of each cell (brighter by 0.3); the truth must then be the
 * brute-force nearest seed, ties to the lowest index. This checks the
 * bucket-grid search on shapes where the rings must grow. */
static void
check_voronoi_brute_force (guint nz, guint ny, guint nx, guint n_cells, guint64 seed)
{
  SvSynthParams p;
  sv_synth_params_init_defaults (&p);
  p.nz = nz;
  p.ny = ny;
  p.nx = nx;
  p.n_cells = n_cells;
  p.nucleus_radius = 0.5;
  p.blur_sigma = 0.0;
  p.noise_sigma = 0.0;
  p.seed = seed;
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) truth = NULL;
  g_autoptr (SvVolume) v = sv_synth_cells (&p, &truth, &error);
  g_assert_no_error (error);

  gsize n = (gsize)nz * ny * nx;
  g_autofree gint64 *sz = g_new (gint64, n_cells), *sy = g_new (gint64, n_cells),
                    *sx = g_new (gint64, n_cells);
  g_autofree float *base = g_new (float, n_cells);
  g_autofree guint *n_bright = g_new0 (guint, n_cells);
  for (guint c = 0; c < n_cells; c++)
    base[c] = 2.0f;
  for (gsize i = 0; i < n; i++)
    base[truth->data[i] - 1] = MIN (base[truth->data[i] - 1], v->data[i]);
  for (gsize i = 0; i < n; i++)
    {
      guint c = truth->data[i] - 1;
      if (v->data[i] > base[c] + 0.2f)
        {
          g_assert_cmpfloat (fabs (v->data[i] - base[c] - 0.3), <, 1e-6);
          n_bright[c]++;
          sz[c] = (gint64)(i / ((gsize)ny * nx));
          sy[c] = (gint64)(i / nx % ny);
          sx[c] = (gint64)(i % nx);
        }
    }
  /* A cell of one voxel has no darker cytoplasm: its voxel is the seed. */
  g_autofree guint *n_vox = g_new0 (guint, n_cells);
  for (gsize i = 0; i < n; i++)
    n_vox[truth->data[i] - 1]++;
  for (gsize i = 0; i < n; i++)
    {
      guint c = truth->data[i] - 1;
      if (n_vox[c] == 1)
        {
          n_bright[c] = 1;
          sz[c] = (gint64)(i / ((gsize)ny * nx));
          sy[c] = (gint64)(i / nx % ny);
          sx[c] = (gint64)(i % nx);
        }
    }
  for (guint c = 0; c < n_cells; c++)
    g_assert_cmpuint (n_bright[c], ==, 1);

  for (gsize i = 0; i < n; i++)
    {
      gint64 z = (gint64)(i / ((gsize)ny * nx)), y = (gint64)(i / nx % ny), x = (gint64)(i % nx);
      gint64 best = G_MAXINT64;
      guint best_c = 0;
      for (guint c = 0; c < n_cells; c++)
        {
          gint64 d
              = (z - sz[c]) * (z - sz[c]) + (y - sy[c]) * (y - sy[c]) + (x - sx[c]) * (x - sx[c]);
          if (d < best)
            {
              best = d;
              best_c = c;
            }
        }
      if (truth->data[i] != (gint32)best_c + 1)
        g_error ("voxel %" G_GSIZE_FORMAT " has label %d, nearest seed is %u", i, truth->data[i],
                 best_c + 1);
    }
}

static void
test_cells_voronoi_exact (void)
{
  check_voronoi_brute_force (12, 30, 27, 40, 1);
  check_voronoi_brute_force (7, 50, 9, 300, 5);
  check_voronoi_brute_force (1, 64, 80, 30, 9);    /* 2D */
  check_voronoi_brute_force (16, 16, 16, 3, 11);   /* few cells: rings grow */
  check_voronoi_brute_force (3, 4, 5, 60, 13);     /* every voxel a seed */
  check_voronoi_brute_force (1, 1, 50, 4, 17);     /* 1D */
  check_voronoi_brute_force (20, 70, 45, 500, 19); /* many blocks and buckets */
}

static void
test_cells_nuclei_brighter (void)
{
  SvSynthParams p;
  sv_synth_params_init_defaults (&p);
  p.nz = 32;
  p.ny = 64;
  p.nx = 64;
  p.n_cells = 30;
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) truth = NULL;
  g_autoptr (SvVolume) v = sv_synth_cells (&p, &truth, &error);
  g_assert_no_error (error);

  /* The same seed without nuclei and without blur and noise shows where the
   * nuclei are: everything else about the phantom is drawn identically. */
  SvSynthParams flat = p;
  flat.blur_sigma = 0.0;
  flat.noise_sigma = 0.0;
  g_autoptr (SvVolume) with_nuclei = sv_synth_cells (&flat, NULL, &error);
  g_assert_no_error (error);
  flat.nucleus_radius = 0.0;
  g_autoptr (SvVolume) without = sv_synth_cells (&flat, NULL, &error);
  g_assert_no_error (error);

  gsize n = (gsize)p.nz * p.ny * p.nx;
  g_autofree double *sum_in = g_new0 (double, p.n_cells), *sum_out = g_new0 (double, p.n_cells);
  g_autofree gsize *n_in = g_new0 (gsize, p.n_cells), *n_out = g_new0 (gsize, p.n_cells);
  for (gsize i = 0; i < n; i++)
    {
      guint c = truth->data[i] - 1;
      float dv = with_nuclei->data[i] - without->data[i];
      if (dv != 0.0f)
        {
          g_assert_cmpfloat (fabs (dv - 0.3), <, 1e-6);
          sum_in[c] += v->data[i];
          n_in[c]++;
        }
      else
        {
          sum_out[c] += v->data[i];
          n_out[c]++;
        }
    }

  /* A ball of radius 5 has 515 voxels; cut by its cell or the border it
   * keeps some. Every nucleus must be brighter than its cytoplasm. */
  double mean_diff = 0.0;
  guint n_with = 0;
  for (guint c = 0; c < p.n_cells; c++)
    {
      g_assert_cmpuint (n_in[c], <=, 515);
      if (n_in[c] == 0 || n_out[c] == 0)
        continue;
      double diff = sum_in[c] / n_in[c] - sum_out[c] / n_out[c];
      g_assert_cmpfloat (diff, >, 0.0);
      mean_diff += diff;
      n_with++;
    }
  g_assert_cmpuint (n_with, >=, p.n_cells * 3 / 4);
  g_assert_cmpfloat (mean_diff / n_with, >, 0.15);
}

/* The blur is scipy.ndimage.gaussian_filter(mode='reflect', truncate=4):
 * blur a noise-free phantom here and there and compare. */
static void
test_cells_blur_matches_scipy (void)
{
  if (!sv_test_python_has ("scipy.ndimage"))
    {
      g_test_skip ("/usr/bin/python3 with scipy not available");
      return;
    }
  SvSynthParams p = small_params ();
  /* Four slices: the 15-tap kernel folds at the z borders more than once. */
  p.nz = 4;
  p.noise_sigma = 0.0;
  p.blur_sigma = 1.7;
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) blurred = sv_synth_cells (&p, NULL, &error);
  g_assert_no_error (error);
  p.blur_sigma = 0.0;
  g_autoptr (SvVolume) sharp = sv_synth_cells (&p, NULL, &error);
  g_assert_no_error (error);

  g_autofree char *dir = g_dir_make_tmp ("sv-synth-XXXXXX", &error);
  g_assert_no_error (error);
  gsize n = (gsize)p.nz * p.ny * p.nx;
  g_autofree char *in = g_build_filename (dir, "sharp.f32", NULL);
  g_autofree char *out = g_build_filename (dir, "blurred.f32", NULL);
  g_file_set_contents (in, (const char *)sharp->data, n * sizeof (float), &error);
  g_assert_no_error (error);

  g_autofree char *script = g_strdup_printf (
      "import sys, numpy as np, scipy.ndimage as ndi\n"
      "a = np.fromfile(sys.argv[1] + '/sharp.f32', dtype='<f4').reshape(%u, %u, %u)\n"
      "b = ndi.gaussian_filter(a.astype(np.float64), 1.7, mode='reflect', truncate=4.0)\n"
      "b.astype('<f4').tofile(sys.argv[1] + '/blurred.f32')\n",
      p.nz, p.ny, p.nx);
  g_autofree char *stdout_text = sv_test_python_args (script, dir);

  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_file_get_contents (out, &bytes, &len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (len, ==, n * sizeof (float));
  const float *ref = (const float *)bytes;
  double worst = 0.0;
  for (gsize i = 0; i < n; i++)
    worst = MAX (worst, fabs ((double)blurred->data[i] - ref[i]));
  g_assert_cmpfloat (worst, <, 1e-6);

  g_unlink (in);
  g_unlink (out);
  g_rmdir (dir);
}

static void
test_cells_bad_params (void)
{
  SvSynthParams p = small_params ();
  g_autoptr (GError) error = NULL;
  p.n_cells = 0;
  g_assert_null (sv_synth_cells (&p, NULL, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_clear_error (&error);

  p = small_params ();
  p.nx = 0;
  g_assert_null (sv_synth_cells (&p, NULL, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_clear_error (&error);

  p = small_params ();
  p.blur_sigma = NAN;
  g_assert_null (sv_synth_cells (&p, NULL, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_clear_error (&error);

  p = small_params ();
  p.nz = 2, p.ny = 2, p.nx = 2, p.n_cells = 9;
  g_assert_null (sv_synth_cells (&p, NULL, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
}

static void
test_blobs (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) a = sv_synth_blobs (32, 48, 40, 0.2, 0.3, 5, &error);
  g_assert_no_error (error);
  g_autoptr (SvVolume) b = sv_synth_blobs (32, 48, 40, 0.2, 0.3, 5, &error);
  g_assert_no_error (error);
  g_autoptr (SvVolume) c = sv_synth_blobs (32, 48, 40, 0.2, 0.3, 6, &error);
  g_assert_no_error (error);

  gsize n = 32 * 48 * 40, ones = 0;
  g_assert_cmpmem (a->data, n * sizeof (float), b->data, n * sizeof (float));
  g_assert_true (memcmp (a->data, c->data, n * sizeof (float)) != 0);
  for (gsize i = 0; i < n; i++)
    {
      g_assert_true (a->data[i] == 0.0f || a->data[i] == 1.0f);
      ones += a->data[i] == 1.0f;
    }
  /* Thresholded at the percentile: the fraction is exact up to ties. */
  g_assert_cmpfloat (fabs ((double)ones / n - 0.3), <, 0.005);

  /* 2D, and the extreme fractions. */
  g_autoptr (SvVolume) d = sv_synth_blobs (1, 64, 64, 0.1, 0.5, 1, &error);
  g_assert_no_error (error);
  ones = 0;
  for (gsize i = 0; i < 64 * 64; i++)
    ones += d->data[i] == 1.0f;
  g_assert_cmpfloat (fabs ((double)ones / (64 * 64) - 0.5), <, 0.01);
  g_autoptr (SvVolume) e = sv_synth_blobs (4, 4, 4, 0.5, 1.0, 1, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < 64; i++)
    g_assert_cmpfloat (e->data[i], ==, 1.0f);

  g_assert_null (sv_synth_blobs (4, 4, 4, 0.0, 0.5, 1, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/synth/defaults", test_defaults);
  g_test_add_func ("/engine/synth/rng/sequence", test_rng_sequence);
  g_test_add_func ("/engine/synth/rng/matches-python", test_rng_matches_python);
  g_test_add_func ("/engine/synth/cells/deterministic", test_cells_deterministic);
  g_test_add_func ("/engine/synth/cells/truth-and-range", test_cells_truth_and_range);
  g_test_add_func ("/engine/synth/cells/voronoi-exact", test_cells_voronoi_exact);
  g_test_add_func ("/engine/synth/cells/nuclei-brighter", test_cells_nuclei_brighter);
  g_test_add_func ("/engine/synth/cells/blur-matches-scipy", test_cells_blur_matches_scipy);
  g_test_add_func ("/engine/synth/cells/bad-params", test_cells_bad_params);
  g_test_add_func ("/engine/synth/blobs", test_blobs);
  return g_test_run ();
}

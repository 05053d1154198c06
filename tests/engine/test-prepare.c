/* Tests for the prepare stage: rescale, Lab and Gaussian smoothing against
 * numpy, scikit-image and scipy run by /usr/bin/python3. */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "supervox/sv-error.h"
#include "supervox/sv-prepare.h"
#include "sv-test-files.h"
#include "sv-test-volumes.h"

#define PYTHON "/usr/bin/python3"

/* Python prologue: skips (exit 77) when numpy/scipy/skimage are missing,
 * reads raw float32 files from the temporary folder argv[1]. */
static const char python_prologue[]
    = "import sys, os\n"
      "try:\n"
      "    import numpy as np\n"
      "    from scipy import ndimage as ndi\n"
      "    import skimage.color\n"
      "except ImportError:\n"
      "    sys.exit(77)\n"
      "d = sys.argv[1]\n"
      "def rd(name, shape, dtype=np.float32):\n"
      "    return np.fromfile(os.path.join(d, name), dtype=dtype).reshape(shape)\n"
      "def wr(name, a):\n"
      "    np.ascontiguousarray(a, dtype=np.float32).tofile(os.path.join(d, name))\n";

typedef struct
{
  char *dir;
} PyDir;

static PyDir *
py_dir_new (void)
{
  g_autoptr (GError) error = NULL;
  PyDir *pd = g_new0 (PyDir, 1);
  pd->dir = g_dir_make_tmp ("sv-test-prepare-XXXXXX", &error);
  g_assert_no_error (error);
  return pd;
}

static void
py_dir_free (PyDir *pd)
{
  sv_test_remove_tree (pd->dir);
  g_free (pd->dir);
  g_free (pd);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PyDir, py_dir_free)

static void
py_write (PyDir *pd, const char *name, const void *data, gsize size)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (pd->dir, name, NULL);
  g_file_set_contents (path, data, (gssize)size, &error);
  g_assert_no_error (error);
}

static float *
py_read (PyDir *pd, const char *name, gsize n_floats)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (pd->dir, name, NULL);
  char *contents = NULL;
  gsize length = 0;
  g_file_get_contents (path, &contents, &length, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (length, ==, n_floats * sizeof (float));
  return (float *)contents;
}

/* Runs the prologue + body; returns FALSE (and marks the test skipped)
 * when python3 or its scientific packages are missing. */
static gboolean
py_run (PyDir *pd, const char *body)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *script = g_strconcat (python_prologue, body, NULL);
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  const char *argv[] = { PYTHON, "-c", script, pd->dir, NULL };

  if (!g_file_test (PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip (PYTHON " not found");
      return FALSE;
    }
  if (!g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                     &error))
    {
      g_test_skip (error->message);
      return FALSE;
    }
  if (!g_spawn_check_wait_status (status, &error))
    {
      if (g_error_matches (error, G_SPAWN_EXIT_ERROR, 77))
        {
          g_test_skip ("numpy, scipy or scikit-image not installed for " PYTHON);
          return FALSE;
        }
      g_printerr ("%s", err);
      g_error ("python failed: %s", error->message);
    }
  return TRUE;
}

static float *
random_floats (GRand *rand, gsize n, double lo, double hi)
{
  float *v = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    v[i] = (float)g_rand_double_range (rand, lo, hi);
  return v;
}

static gsize
count_bit_differences (const float *a, const float *b, gsize n)
{
  gsize d = 0;
  for (gsize i = 0; i < n; i++)
    d += memcmp (&a[i], &b[i], sizeof (float)) != 0;
  return d;
}

/* ---- Gaussian ---------------------------------------------------------- */

typedef struct
{
  guint nz, ny, nx, nc;
  float sigma[3];
} GaussCase;

static const GaussCase gauss_cases[] = {
  { 5, 7, 9, 1, { 1.0f, 0.7f, 2.3f } },
  /* z much shorter than the radius: 'reflect' wraps several times. */
  { 3, 4, 50, 1, { 2.5f, 0.0f, 1.2f } },
  /* 2D colour image: a z sigma on a length-1 axis scales by the weight sum. */
  { 1, 13, 11, 3, { 1.5f, 1.5f, 1.5f } },
  { 2, 1, 31, 2, { 0.3f, 5.0f, 10.0f } },
  { 7, 6, 5, 1, { 0.0f, 0.0f, 0.5f } },
  { 4, 9, 5, 1, { 30.0f, 0.2f, 7.77f } },
  /* Wider than one block of lines along z. */
  { 6, 3, 70, 1, { 1.3f, 0.9f, 0.0f } },
};

static void
test_gaussian_matches_scipy (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (4242);

  for (gsize c = 0; c < G_N_ELEMENTS (gauss_cases); c++)
    {
      const GaussCase *gc = &gauss_cases[c];
      const gsize n = (gsize)gc->nz * gc->ny * gc->nx * gc->nc;
      g_autofree float *in = random_floats (rand, n, -1.0, 3.0);
      g_autofree float *mine = g_memdup2 (in, n * sizeof (float));
      g_autoptr (PyDir) pd = py_dir_new ();

      sv_gaussian_smooth (mine, gc->nz, gc->ny, gc->nx, gc->nc, gc->sigma, 1);

      py_write (pd, "in.raw", in, n * sizeof (float));
      py_write (pd, "sigma.raw", gc->sigma, sizeof gc->sigma);
      g_autofree char *body = g_strdup_printf (
          "a = rd('in.raw', (%u, %u, %u, %u))\n"
          "s = rd('sigma.raw', (3,))\n"
          /* scikit-image's slic: list(float32 sigma) + [0], mode 'reflect'. */
          "wr('out.raw', ndi.gaussian_filter(a, list(s) + [0], mode='reflect'))\n",
          gc->nz, gc->ny, gc->nx, gc->nc);
      if (!py_run (pd, body))
        return;
      g_autofree float *ref = py_read (pd, "out.raw", n);

      g_test_message ("case %" G_GSIZE_FORMAT ": %ux%ux%ux%u sigma %g,%g,%g", c, gc->nz, gc->ny,
                      gc->nx, gc->nc, gc->sigma[0], gc->sigma[1], gc->sigma[2]);
      g_assert_cmpuint (count_bit_differences (mine, ref, n), ==, 0);
    }
}

static void
test_gaussian_thread_independent (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  const guint nz = 9, ny = 17, nx = 70, nc = 2;
  const gsize n = (gsize)nz * ny * nx * nc;
  const float sigma[3] = { 1.7f, 2.2f, 0.8f };
  g_autofree float *in = random_floats (rand, n, 0.0, 1.0);
  g_autofree float *one = g_memdup2 (in, n * sizeof (float));

  sv_gaussian_smooth (one, nz, ny, nx, nc, sigma, 1);
  g_assert_cmpuint (count_bit_differences (one, in, n), >, n / 2);

  const int threads[] = { 2, 3, 7, 0 };
  for (gsize t = 0; t < G_N_ELEMENTS (threads); t++)
    {
      g_autofree float *many = g_memdup2 (in, n * sizeof (float));
      sv_gaussian_smooth (many, nz, ny, nx, nc, sigma, threads[t]);
      g_assert_cmpuint (count_bit_differences (one, many, n), ==, 0);
    }
}

static void
test_gaussian_zero_sigma_is_identity (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (8);
  const float sigma[3] = { 0.0f, 1e-16f, 0.0f };
  g_autofree float *in = random_floats (rand, 60, 0.0, 1.0);
  g_autofree float *out = g_memdup2 (in, 60 * sizeof (float));

  sv_gaussian_smooth (out, 3, 4, 5, 1, sigma, 0);
  g_assert_cmpuint (count_bit_differences (in, out, 60), ==, 0);
}

/* A constant line stays constant up to the kernel's rounding, and a unit
 * impulse in a long line gives back the normalised kernel, which sums to 1. */
static void
test_gaussian_impulse (void)
{
  const guint nx = 41;
  const float sigma[3] = { 0.0f, 0.0f, 2.0f };
  float line[41] = { 0 };
  line[20] = 1.0f;

  sv_gaussian_smooth (line, 1, 1, nx, 1, sigma, 1);
  double sum = 0.0;
  for (guint i = 0; i < nx; i++)
    sum += line[i];
  g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (line[20], 1.0 / (2.0 * sqrt (2.0 * G_PI)), 1e-4);
  g_assert_cmpfloat (line[19], ==, line[21]);
  /* radius is int(4 * 2 + 0.5) = 8 */
  g_assert_cmpfloat (line[12], >, 0.0f);
  g_assert_cmpfloat (line[11], ==, 0.0f);
  g_assert_cmpfloat (line[29], ==, 0.0f);
}

/* ---- Rescale ----------------------------------------------------------- */

static void
test_rescale_matches_numpy (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (99);
  const gsize n_voxels = 3001;
  const guint nc = 3;
  const gsize n = n_voxels * nc;
  g_autofree float *in = random_floats (rand, n, -37.25, 1234.5);
  g_autofree guint8 *mask = g_new (guint8, n_voxels);
  for (gsize i = 0; i < n_voxels; i++)
    mask[i] = g_rand_int_range (rand, 0, 4) != 0;
  g_autoptr (PyDir) pd = py_dir_new ();
  py_write (pd, "in.raw", in, n * sizeof (float));
  py_write (pd, "mask.raw", mask, n_voxels);

  g_autofree float *plain = g_memdup2 (in, n * sizeof (float));
  g_autofree float *masked = g_memdup2 (in, n * sizeof (float));
  g_autoptr (GError) error = NULL;
  g_assert_true (sv_rescale (plain, n_voxels, nc, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sv_rescale (masked, n_voxels, nc, mask, &error));
  g_assert_no_error (error);

  g_autofree char *body
      = g_strdup_printf ("a = rd('in.raw', (%" G_GSIZE_FORMAT ", %u))\n"
                         "m = rd('mask.raw', (%" G_GSIZE_FORMAT ",), np.uint8) != 0\n"
                         "b = a.copy()\n"
                         "b -= b.min()\n"
                         "imax = b.max()\n"
                         "if imax != 0:\n"
                         "    b /= imax\n"
                         "wr('plain.raw', b)\n"
                         "c = a.copy()\n"
                         "c -= c[m].min()\n"
                         "imax = c[m].max()\n"
                         "if imax != 0:\n"
                         "    c /= imax\n"
                         "wr('masked.raw', c)\n",
                         n_voxels, nc, n_voxels);
  if (!py_run (pd, body))
    return;
  g_autofree float *ref_plain = py_read (pd, "plain.raw", n);
  g_autofree float *ref_masked = py_read (pd, "masked.raw", n);
  g_assert_cmpuint (count_bit_differences (plain, ref_plain, n), ==, 0);
  g_assert_cmpuint (count_bit_differences (masked, ref_masked, n), ==, 0);
}

static const char python_math[]
    = "import ctypes\n"
      "libm = ctypes.CDLL('libm.so.6')\n"
      "libm.cbrtf.restype = ctypes.c_float\n"
      "libm.cbrtf.argtypes = [ctypes.c_float]\n"
      "x = np.linspace(0.01, 1.0, 4001, dtype=np.float32)\n"
      "ref = np.array([libm.cbrtf(float(v)) for v in x], dtype=np.float32)\n"
      "math = 'libm' if np.array_equal(np.cbrt(x), ref) else 'svml'\n"
      "open(os.path.join(d, 'math.txt'), 'w').write(math)\n";

static void
assert_portable_numpy (PyDir *pd)
{
  g_autofree char *path = g_build_filename (pd->dir, "math.txt", NULL);
  g_autofree char *math = NULL;

  g_assert_true (g_file_get_contents (path, &math, NULL, NULL));
  if (strcmp (math, "libm") != 0)
    g_test_message ("numpy computes cbrt and power with SVML here: run with "
                    "NPY_DISABLE_CPU_FEATURES=AVX512_SKX (meson test sets it)");
  g_assert_cmpstr (math, ==, "libm");
}

/* float32 input: rgb2lab on a float32 array, bit for bit. */
static void
test_lab_float32_exact (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  const guint ny = 23, nx = 31;
  const gsize n = (gsize)ny * nx * 3;
  g_autofree float *rgb = random_floats (rand, n, 0.0, 1.0);
  /* Include the corners of the cube and values near the gamma knee. */
  const float special[] = { 0.0f, 1.0f, 0.04045f, 0.0404f, 0.0405f, 0.008f, 0.5f };
  for (gsize i = 0; i < G_N_ELEMENTS (special); i++)
    for (int c = 0; c < 3; c++)
      rgb[i * 3 + c] = special[(i + (gsize)c) % G_N_ELEMENTS (special)];
  g_autofree float *lab = g_memdup2 (rgb, n * sizeof (float));
  g_autoptr (PyDir) pd = py_dir_new ();

  sv_rgb_to_lab (lab, (gsize)ny * nx);
  py_write (pd, "rgb.raw", rgb, n * sizeof (float));
  g_autofree char *body = g_strdup_printf ("%s"
                                           "a = rd('rgb.raw', (%u, %u, 3))\n"
                                           "wr('lab.raw', skimage.color.rgb2lab(a))\n",
                                           python_math, ny, nx);
  if (!py_run (pd, body))
    return;
  assert_portable_numpy (pd);
  g_autofree float *ref = py_read (pd, "lab.raw", n);
  g_assert_cmpuint (count_bit_differences (lab, ref, n), ==, 0);
}

/* Integer input, which scikit-image computes in float64: the volume's
 * float32 samples, rescaled and converted in float64 by sv_prepare, are
 * scikit-image's float64 Lab rounded to float32 once, bit for bit. */
static void
test_lab_float64_exact (void)
{
  static const struct
  {
    SvSampleType type;
    const char *dtype;
    double max;
    int lo, hi;
  } types[] = {
    { SV_SAMPLE_U8, "uint8", 255.0, 20, 230 },
    { SV_SAMPLE_U16, "uint16", 65535.0, 3000, 61000 },
    { SV_SAMPLE_I16, "int16", 32767.0, -32768, 30000 },
  };
  g_autoptr (GRand) rand = g_rand_new_with_seed (4);
  const guint ny = 19, nx = 27;
  const gsize n = (gsize)ny * nx * 3;

  for (gsize t = 0; t < G_N_ELEMENTS (types); t++)
    {
      g_autofree gint32 *samples = g_new (gint32, n);
      g_autofree float *in = g_new (float, n);
      g_autoptr (PyDir) pd = py_dir_new ();
      g_autoptr (GError) error = NULL;
      SvVolume vol;
      SvSlicParams params;

      /* The samples as img_as_float gives them, in float32. */
      for (gsize i = 0; i < n; i++)
        {
          samples[i] = g_rand_int_range (rand, types[t].lo, types[t].hi + 1);
          in[i] = (float)fmax (samples[i] * (1.0 / types[t].max), -1.0);
        }
      sv_test_wrap_volume (&vol, in, 1, ny, nx, 3);
      vol.source_type = types[t].type;
      sv_slic_params_init_defaults (&params);
      g_autoptr (SvPrepared) prepared = sv_prepare (&vol, NULL, &params, 2, &error);
      g_assert_no_error (error);
      g_assert_true (prepared->is_lab);

      py_write (pd, "samples.raw", samples, n * sizeof (gint32));
      g_autofree char *body = g_strdup_printf (
          "%s"
          "from skimage import img_as_float\n"
          "a = img_as_float(rd('samples.raw', (%u, %u, 3), np.int32).astype(np.%s))\n"
          "assert a.dtype == np.float64\n"
          "a -= a.min()\n"
          "a /= a.max()\n"
          "wr('lab.raw', skimage.color.rgb2lab(a))\n",
          python_math, ny, nx, types[t].dtype);
      if (!py_run (pd, body))
        return;
      assert_portable_numpy (pd);
      g_autofree float *ref = py_read (pd, "lab.raw", n);
      g_test_message ("%s", types[t].dtype);
      g_assert_cmpuint (count_bit_differences (prepared->data, ref, n), ==, 0);
    }
}

/* Every 8- and 16-bit sample comes back from its float32 as img_as_float's
 * double; other values, and other types, stay as they are. */
static void
test_lab_sample_doubles (void)
{
  static const struct
  {
    SvSampleType type;
    int lo, hi;
    double max;
  } types[] = {
    { SV_SAMPLE_U8, 0, 255, 255.0 },
    { SV_SAMPLE_U16, 0, 65535, 65535.0 },
    { SV_SAMPLE_I8, -128, 127, 127.0 },
    { SV_SAMPLE_I16, -32768, 32767, 32767.0 },
  };

  for (gsize t = 0; t < G_N_ELEMENTS (types); t++)
    {
      g_assert_true (sv_sample_type_float64 (types[t].type));
      for (int k = types[t].lo; k <= types[t].hi; k++)
        {
          const double expected = fmax (k * (1.0 / types[t].max), -1.0);
          g_assert_cmpfloat (sv_sample_to_double (types[t].type, (float)expected), ==, expected);
        }
    }
  /* A preview's average of two uint8 samples is no sample. */
  const float mean = (float)((1 * (1.0 / 255.0) + 2 * (1.0 / 255.0)) / 2);
  g_assert_cmpfloat (sv_sample_to_double (SV_SAMPLE_U8, mean), ==, (double)mean);
  g_assert_cmpfloat (sv_sample_to_double (SV_SAMPLE_F64, 0.1f), ==, (double)0.1f);
  g_assert_cmpfloat (sv_sample_to_double (SV_SAMPLE_U32, 0.1f), ==, (double)0.1f);
  g_assert_true (sv_sample_type_float64 (SV_SAMPLE_F64));
  g_assert_true (sv_sample_type_float64 (SV_SAMPLE_BOOL));
  g_assert_false (sv_sample_type_float64 (SV_SAMPLE_F32));
  g_assert_false (sv_sample_type_float64 (SV_SAMPLE_F16));
}

static void
test_lab_requires_rgb (void)
{
  float data[8] = { 0 };
  SvVolume vol;
  SvSlicParams params;
  g_autoptr (GError) error = NULL;

  sv_test_wrap_volume (&vol, data, 1, 2, 2, 2);
  sv_slic_params_init_defaults (&params);
  params.convert2lab = SV_CONVERT2LAB_YES;
  g_autoptr (SvPrepared) prepared = sv_prepare (&vol, NULL, &params, 1, &error);
  g_assert_null (prepared);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (error->message, "Lab colorspace conversion requires a RGB image"));
}

/* ---- Whole stage ------------------------------------------------------- */

typedef struct
{
  guint nz, ny, nx, nc;
  SvConvert2Lab convert2lab;
  gboolean per_axis;
  double sigma[3];
  double spacing[3];
  gboolean expect_lab;
} PrepareCase;

static const PrepareCase prepare_cases[] = {
  /* 2D RGB with AUTO: Lab, scalar sigma also smooths the length-1 z axis. */
  { 1, 20, 17, 3, SV_CONVERT2LAB_AUTO, FALSE, { 1.3, 0, 0 }, { 1, 1, 1 }, TRUE },
  /* 3D grey, scalar sigma divided by an anisotropic spacing. */
  { 6, 11, 13, 1, SV_CONVERT2LAB_AUTO, FALSE, { 2.0, 0, 0 }, { 3.0, 0.7, 1.1 }, FALSE },
  /* Per-axis sigma used as given; Lab disabled for RGB. */
  { 1, 15, 9, 3, SV_CONVERT2LAB_NO, TRUE, { 0.0, 0.8, 2.5 }, { 1, 1, 1 }, FALSE },
  /* No smoothing, 2 channels. */
  { 4, 5, 6, 2, SV_CONVERT2LAB_AUTO, FALSE, { 0.0, 0, 0 }, { 1, 2, 3 }, FALSE },
};

static void
test_prepare_matches_skimage (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);

  for (gsize c = 0; c < G_N_ELEMENTS (prepare_cases); c++)
    {
      const PrepareCase *pc = &prepare_cases[c];
      const gsize n = (gsize)pc->nz * pc->ny * pc->nx * pc->nc;
      g_autofree float *in = random_floats (rand, n, 10.0, 200.0);
      SvVolume vol;
      SvSlicParams params;
      g_autoptr (GError) error = NULL;
      g_autoptr (PyDir) pd = py_dir_new ();

      sv_test_wrap_volume (&vol, in, pc->nz, pc->ny, pc->nx, pc->nc);
      sv_slic_params_init_defaults (&params);
      params.convert2lab = pc->convert2lab;
      params.sigma_per_axis = pc->per_axis;
      memcpy (params.sigma, pc->sigma, sizeof params.sigma);
      memcpy (params.spacing, pc->spacing, sizeof params.spacing);

      g_autoptr (SvPrepared) prepared = sv_prepare (&vol, NULL, &params, 3, &error);
      g_assert_no_error (error);
      g_assert_cmpint (prepared->is_lab, ==, pc->expect_lab);
      g_assert_cmpuint (prepared->nc, ==, pc->nc);

      /* The same steps as skimage.segmentation.slic, in its words. */
      const double s3[6] = { pc->sigma[0],   pc->sigma[1],   pc->sigma[2],
                             pc->spacing[0], pc->spacing[1], pc->spacing[2] };
      py_write (pd, "in.raw", in, n * sizeof (float));
      py_write (pd, "params.raw", s3, sizeof s3);
      g_autofree char *body = g_strdup_printf (
          "%s"
          "image = rd('in.raw', (%u, %u, %u, %u))\n"
          "p = np.fromfile(os.path.join(d, 'params.raw'))\n"
          "image -= image.min()\n"
          "imax = image.max()\n"
          "if imax != 0:\n"
          "    image /= imax\n"
          "if %d:\n"
          "    image = skimage.color.rgb2lab(image)\n"
          "spacing = np.ascontiguousarray(p[3:], dtype=np.float32)\n"
          "if %d:\n"
          "    sigma = np.asarray(p[:3], dtype=np.float32)\n"
          "else:\n"
          "    sigma = np.array([p[0]] * 3, dtype=np.float32)\n"
          "    sigma /= spacing\n"
          "if (sigma > 0).any():\n"
          "    from skimage._shared.filters import gaussian\n"
          "    image = gaussian(image, list(sigma) + [0], mode='reflect')\n"
          "wr('out.raw', image)\n",
          python_math, pc->nz, pc->ny, pc->nx, pc->nc, pc->expect_lab, pc->per_axis);
      if (!py_run (pd, body))
        return;
      if (pc->expect_lab)
        assert_portable_numpy (pd);
      g_autofree float *ref = py_read (pd, "out.raw", n);

      float max_abs = 0.0f;
      double max_diff = 0.0;
      for (gsize i = 0; i < n; i++)
        {
          max_abs = MAX (max_abs, fabsf (prepared->data[i]));
          max_diff = MAX (max_diff, fabs ((double)prepared->data[i] - ref[i]));
        }
      g_test_message ("case %" G_GSIZE_FORMAT ": max diff %g", c, max_diff);
      g_assert_cmpfloat (prepared->max_abs, ==, max_abs);
      g_assert_cmpuint (count_bit_differences (prepared->data, ref, n), ==, 0);
    }
}

/* Rescale and smoothing split work over threads; the bytes must not move. */
static void
test_prepare_thread_independent (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (12);
  const guint nz = 40, ny = 96, nx = 160, nc = 1;
  const gsize n = (gsize)nz * ny * nx * nc;
  g_autofree float *in = random_floats (rand, n, -5.0, 5.0);
  g_autofree guint8 *mask = g_new (guint8, n);
  SvVolume vol;
  SvSlicParams params;

  for (gsize i = 0; i < n; i++)
    mask[i] = (i / nx) % 7 != 0;
  sv_test_wrap_volume (&vol, in, nz, ny, nx, nc);
  sv_slic_params_init_defaults (&params);
  params.sigma[0] = 1.2;
  params.spacing[0] = 2.0;

  g_autoptr (SvPrepared) one = sv_prepare (&vol, mask, &params, 1, NULL);
  g_assert_nonnull (one);
  const int threads[] = { 2, 5, 0 };
  for (gsize t = 0; t < G_N_ELEMENTS (threads); t++)
    {
      g_autoptr (SvPrepared) many = sv_prepare (&vol, mask, &params, threads[t], NULL);
      g_assert_nonnull (many);
      g_assert_cmpuint (count_bit_differences (one->data, many->data, n), ==, 0);
      g_assert_cmpfloat (one->max_abs, ==, many->max_abs);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/engine/prepare/gaussian/matches-scipy", test_gaussian_matches_scipy);
  g_test_add_func ("/engine/prepare/gaussian/thread-independent", test_gaussian_thread_independent);
  g_test_add_func ("/engine/prepare/gaussian/zero-sigma", test_gaussian_zero_sigma_is_identity);
  g_test_add_func ("/engine/prepare/gaussian/impulse", test_gaussian_impulse);
  g_test_add_func ("/engine/prepare/rescale/matches-numpy", test_rescale_matches_numpy);
  g_test_add_func ("/engine/prepare/lab/float32-exact", test_lab_float32_exact);
  g_test_add_func ("/engine/prepare/lab/float64-exact", test_lab_float64_exact);
  g_test_add_func ("/engine/prepare/lab/sample-doubles", test_lab_sample_doubles);
  g_test_add_func ("/engine/prepare/lab/requires-rgb", test_lab_requires_rgb);
  g_test_add_func ("/engine/prepare/stage/matches-skimage", test_prepare_matches_skimage);
  g_test_add_func ("/engine/prepare/stage/thread-independent", test_prepare_thread_independent);

  return g_test_run ();
}

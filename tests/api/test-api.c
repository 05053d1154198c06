/* libsupervox's C API from C: parameters, the host run on every dtype and
 * layout, masks, errors with their per-thread message, cancellation. Links
 * the shared library only, as another program would. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "supervox/supervox.h"

#define NY 10
#define NX 12

/* A 2D image, left half 0, right half 1: two segments, 1 left and 2 right
 * (scikit-image gives the same for n_segments=2, compactness=0.1). */
static void
two_regions (float image[NY][NX])
{
  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++)
      image[y][x] = x < NX / 2 ? 0.0f : 1.0f;
}

static SupervoxArray
array_2d (const void *data, SupervoxDtype dtype, gint64 elem, gint64 stride_y, gint64 stride_x)
{
  SupervoxArray a = { data, dtype, { 1, NY, NX, 1 }, { 0, stride_y, stride_x, elem } };
  return a;
}

static SupervoxParams
two_segments (void)
{
  SupervoxParams p;
  supervox_params_init (&p);
  p.n_segments = 2;
  p.compactness = 0.1;
  return p;
}

static void
assert_two_regions (const gint64 *labels, gint64 left, gint64 right)
{
  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++)
      g_assert_cmpint (labels[y * NX + x], ==, x < NX / 2 ? left : right);
}

static void
test_version (void)
{
  g_assert_cmpstr (supervox_version (), ==, "0.1.0");
  g_assert_cmpint (supervox_api_version () / 1000, ==, SUPERVOX_API_VERSION_MAJOR);
  g_assert_cmpstr (supervox_status_name (SUPERVOX_ERROR_NON_FINITE), ==,
                   "SUPERVOX_ERROR_NON_FINITE");
}

static void
test_params_defaults (void)
{
  SupervoxParams p;
  memset (&p, 0xab, sizeof p);
  supervox_params_init (&p);
  g_assert_cmpint (p.n_segments, ==, 100);
  g_assert_cmpfloat (p.compactness, ==, 10.0);
  g_assert_cmpint (p.max_num_iter, ==, 10);
  g_assert_cmpfloat (p.sigma[0], ==, 0.0);
  g_assert_cmpint (p.sigma_per_axis, ==, 0);
  for (int a = 0; a < 3; a++)
    g_assert_cmpfloat (p.spacing[a], ==, 1.0);
  g_assert_cmpint (p.convert2lab, ==, SUPERVOX_CONVERT2LAB_AUTO);
  g_assert_cmpint (p.enforce_connectivity, ==, 1);
  g_assert_cmpfloat (p.min_size_factor, ==, 0.5);
  g_assert_cmpfloat (p.max_size_factor, ==, 3.0);
  g_assert_cmpint (p.slic_zero, ==, 0);
  g_assert_cmpint (p.start_label, ==, 1);
}

static void
test_host_two_regions (void)
{
  float image[NY][NX];
  gint64 labels[NY * NX];
  gint32 labels32[NY * NX];
  SupervoxParams p = two_segments ();
  SupervoxRunInfo info = { 0 };
  SupervoxArray a = array_2d (image, SUPERVOX_FLOAT32, 4, NX * 4, 4);

  two_regions (image);
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, &info), ==, SUPERVOX_OK);
  assert_two_regions (labels, 1, 2);
  g_assert_cmpint (info.n_labels, ==, 2);
  g_assert_cmpint (info.backend, ==, SUPERVOX_BACKEND_CPU);
  g_assert_cmpint (info.iterations, ==, 10);

  p.start_label = 0;
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels32, SUPERVOX_INT32,
                                  NULL, NULL), ==, SUPERVOX_OK);
  for (int i = 0; i < NY * NX; i++)
    g_assert_cmpint (labels32[i], ==, labels[i] - 1);
}

/* The same image as uint8 (0/255), uint16, float64, and transposed in
 * memory (x-major): the same labels. */
static void
test_host_dtypes_and_strides (void)
{
  guint8 u8[NY][NX];
  guint16 u16[NY][NX];
  double f64[NX][NY]; /* stored transposed */
  gint64 labels[NY * NX];
  SupervoxParams p = two_segments ();
  SupervoxArray a;

  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++)
      {
        u8[y][x] = x < NX / 2 ? 0 : 255;
        u16[y][x] = x < NX / 2 ? 100 : 40000;
        f64[x][y] = x < NX / 2 ? -3.0 : 7.5;
      }
  a = array_2d (u8, SUPERVOX_UINT8, 1, NX, 1);
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_OK);
  assert_two_regions (labels, 1, 2);
  a = array_2d (u16, SUPERVOX_UINT16, 2, NX * 2, 2);
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_OK);
  assert_two_regions (labels, 1, 2);
  a = array_2d (f64, SUPERVOX_FLOAT64, 8, 8, NY * 8);
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_OK);
  assert_two_regions (labels, 1, 2);
}

/* A mask: outside is start_label − 1, inside the two halves. */
static void
test_host_mask (void)
{
  float image[NY][NX];
  guint8 mask[NY][NX];
  gint64 labels[NY * NX];
  SupervoxParams p = two_segments ();
  SupervoxArray a = array_2d (image, SUPERVOX_FLOAT32, 4, NX * 4, 4);
  SupervoxArray m = array_2d (mask, SUPERVOX_BOOL, 1, NX, 1);

  two_regions (image);
  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++)
      mask[y][x] = y >= 2 && y < 8 && x >= 1 && x < 11;
  m.strides[3] = 0;
  g_assert_cmpint (supervox_slic (&a, &m, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_OK);
  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++)
      g_assert_cmpint (labels[y * NX + x], ==, !mask[y][x] ? 0 : x < NX / 2 ? 1 : 2);

  m.shape[1] = NY - 1;
  g_assert_cmpint (supervox_slic (&a, &m, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (supervox_last_error (), "same shape"));
}

static void
test_host_non_finite (void)
{
  float image[NY][NX];
  gint64 labels[NY * NX];
  SupervoxParams p = two_segments ();
  SupervoxArray a = array_2d (image, SUPERVOX_FLOAT32, 4, NX * 4, 4);

  two_regions (image);
  image[3][4] = NAN;
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_ERROR_NON_FINITE);
  g_assert_nonnull (strstr (supervox_last_error (), "NaN"));
  g_assert_nonnull (strstr (supervox_last_error (), "y=3, x=4"));

  /* The next run is not affected, and clears the message. */
  image[3][4] = 0.0f;
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_OK);
  assert_two_regions (labels, 1, 2);
  g_assert_cmpstr (supervox_last_error (), ==, "");
}

static void
test_bad_arguments (void)
{
  float image[NY][NX];
  gint64 labels[NY * NX];
  SupervoxParams p = two_segments ();
  SupervoxArray a = array_2d (image, SUPERVOX_FLOAT32, 4, NX * 4, 4);

  two_regions (image);
  g_assert_cmpint (supervox_slic (NULL, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_FLOAT32,
                                  NULL, NULL), ==, SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (supervox_last_error (), "int32 or int64"));
  a.dtype = (SupervoxDtype)99;
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (supervox_last_error (), "dtype"));
  a.dtype = SUPERVOX_FLOAT32;
  p.compactness = -1.0;
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (supervox_last_error (), "compactness"));
  p = two_segments ();
  p.start_label = 2;
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_ERROR_INVALID_PARAM);
}

/* supervox_slic_file's errors: no paths, a missing input (an I/O status
 * naming the file, no output made), a bad backend code. Its runs are in
 * tests/python/test_file.py, which writes TIFFs. */
static void
test_file_errors (void)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-api-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing.tif", NULL);
  g_autofree char *out = g_build_filename (dir, "labels.tif", NULL);
  SupervoxParams p = two_segments ();
  SupervoxFileInfo info = { 0 };

  g_assert_nonnull (dir);
  g_assert_cmpint (supervox_slic_file (NULL, out, NULL, &p, SUPERVOX_BACKEND_CPU, 0, NULL, &info),
                   ==, SUPERVOX_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (
      supervox_slic_file (missing, NULL, NULL, &p, SUPERVOX_BACKEND_CPU, 0, NULL, &info), ==,
      SUPERVOX_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (supervox_slic_file (missing, out, NULL, &p, SUPERVOX_BACKEND_CPU, 0, NULL,
                                       &info), ==, SUPERVOX_ERROR_IO);
  g_assert_nonnull (strstr (supervox_last_error (), "missing.tif"));
  g_assert_cmpstr (supervox_status_name (SUPERVOX_ERROR_IO), ==, "SUPERVOX_ERROR_IO");
  g_assert_cmpint (supervox_slic_file (missing, out, NULL, &p, (SupervoxBackend)7, 0, NULL,
                                       &info), ==, SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

typedef struct
{
  int calls;
  int last_stage;
} Progress;

static void
progress_cb (int stage, int iteration, int n_iterations, void *user_data)
{
  Progress *progress = user_data;
  progress->calls++;
  progress->last_stage = stage;
}

static void
test_progress_and_cancel (void)
{
  float image[NY][NX];
  gint64 labels[NY * NX];
  SupervoxParams p = two_segments ();
  SupervoxArray a = array_2d (image, SUPERVOX_FLOAT32, 4, NX * 4, 4);
  Progress progress = { 0, -1 };
  volatile int32_t cancel = 0;
  SupervoxControl control = { progress_cb, &progress, &cancel };

  two_regions (image);
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  &control, NULL), ==, SUPERVOX_OK);
  g_assert_cmpint (progress.calls, >=, p.max_num_iter);
  g_assert_cmpint (progress.last_stage, ==, 3);

  cancel = 1;
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  &control, NULL), ==, SUPERVOX_ERROR_CANCELLED);
}

static gpointer
fail_in_thread (gpointer data)
{
  gint64 labels[1];
  SupervoxArray a = { NULL, SUPERVOX_FLOAT32, { 1, 1, 1, 1 }, { 0, 0, 0, 0 } };

  /* An image of one voxel without data: this thread's own message. */
  supervox_slic (&a, NULL, NULL, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64, NULL, NULL);
  return g_strdup (supervox_last_error ());
}

static void
test_last_error_per_thread (void)
{
  float image[NY][NX];
  gint64 labels[NY * NX];
  SupervoxParams p = two_segments ();
  SupervoxArray a = array_2d (image, SUPERVOX_FLOAT32, 4, NX * 4, 4);
  g_autofree char *other = NULL;

  two_regions (image);
  image[0][0] = INFINITY;
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_ERROR_NON_FINITE);
  other = g_thread_join (g_thread_new ("other", fail_in_thread, NULL));
  g_assert_nonnull (strstr (other, "no data"));
  g_assert_nonnull (strstr (supervox_last_error (), "infinite"));
}

static void
test_device_without_cuda (void)
{
  gint64 labels[1];
  SupervoxArray a = { (void *)labels, SUPERVOX_FLOAT32, { 1, 1, 1, 1 }, { 4, 4, 4, 4 } };

  if (supervox_cuda_available ())
    {
      g_test_skip ("a CUDA device is present (the Python CuPy tests cover the device path)");
      return;
    }
  g_assert_cmpint (supervox_slic_device (&a, NULL, NULL, labels, SUPERVOX_INT64, NULL, NULL,
                                         NULL), ==, SUPERVOX_ERROR_BACKEND);
  g_assert_nonnull (strstr (supervox_last_error (), "CUDA"));
  g_assert_cmpint (supervox_slic (&a, NULL, NULL, SUPERVOX_BACKEND_CUDA, labels, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_ERROR_BACKEND);
}

/* With a device: CUDA runs one after another reuse the kept backend and
 * give the CPU's labels, also after the cache is released; the device entry
 * refuses host memory with a message instead of reading it as device
 * memory. */
static void
test_cuda_kept_backend (void)
{
  float image[NY][NX];
  gint64 cpu[NY * NX], gpu[NY * NX];
  SupervoxArray a = array_2d (image, SUPERVOX_FLOAT32, 0, NX * 4, 4);
  SupervoxParams p = two_segments ();
  SupervoxRunInfo info;

  supervox_cuda_release_cache ();
  if (!supervox_cuda_available ())
    {
      g_test_skip ("no CUDA device");
      return;
    }
  two_regions (image);
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, cpu, SUPERVOX_INT64, NULL,
                                  NULL), ==, SUPERVOX_OK);
  for (int round = 0; round < 3; round++)
    {
      if (round == 2)
        supervox_cuda_release_cache ();
      memset (gpu, 0, sizeof gpu);
      g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CUDA, gpu, SUPERVOX_INT64,
                                      NULL, &info), ==, SUPERVOX_OK);
      g_assert_cmpint (info.backend, ==, SUPERVOX_BACKEND_CUDA);
      g_assert_cmpmem (gpu, sizeof gpu, cpu, sizeof cpu);
    }
  g_assert_cmpint (supervox_slic_device (&a, NULL, &p, gpu, SUPERVOX_INT64, NULL, NULL, NULL), ==,
                   SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (supervox_last_error (), "image is not in GPU memory"));
  supervox_cuda_release_cache ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/api/version", test_version);
  g_test_add_func ("/api/params/defaults-are-skimage", test_params_defaults);
  g_test_add_func ("/api/host/two-regions", test_host_two_regions);
  g_test_add_func ("/api/host/dtypes-and-strides", test_host_dtypes_and_strides);
  g_test_add_func ("/api/host/mask", test_host_mask);
  g_test_add_func ("/api/file/errors", test_file_errors);
  g_test_add_func ("/api/host/non-finite", test_host_non_finite);
  g_test_add_func ("/api/host/bad-arguments", test_bad_arguments);
  g_test_add_func ("/api/host/progress-and-cancel", test_progress_and_cancel);
  g_test_add_func ("/api/last-error/per-thread", test_last_error_per_thread);
  g_test_add_func ("/api/device/without-cuda", test_device_without_cuda);
  g_test_add_func ("/api/cuda/kept-backend-same-labels", test_cuda_kept_backend);
  return g_test_run ();
}

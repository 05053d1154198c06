/* libsupervox's slab source (supervox_slic_source) from C: a volume served
 * by a read function, a few slices at a time, gives the label file of
 * supervox_slic's labels on the same array, also with a mask served the
 * same way (supervox_slic_sources); a read function that fails stops the
 * run with its message and leaves no file. The label TIFF is read back
 * with libtiff, a second reader. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <tiffio.h>

#include "supervox/supervox.h"

#define NZ 9
#define NY 14
#define NX 13

typedef struct
{
  const guint16 *volume;
  int calls;
  gint64 most_slices;   /* the deepest slab asked for */
  gint64 fail_from;     /* a read that reaches this slice fails; −1: none */
} Served;

static int
read_cb (int64_t z0, int64_t z1, void *samples, void *user_data, char *message,
         size_t message_size)
{
  Served *served = user_data;
  const gsize plane = (gsize)NY * NX;

  served->calls++;
  served->most_slices = MAX (served->most_slices, z1 - z0);
  if (served->fail_from >= 0 && z1 > served->fail_from)
    {
      g_strlcpy (message, "the chunk server went away", message_size);
      return 5;
    }
  memcpy (samples, served->volume + (gsize)z0 * plane, (gsize)(z1 - z0) * plane * 2);
  return 0;
}

static void
make_volume (guint16 *volume)
{
  for (int z = 0; z < NZ; z++)
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++)
        volume[((gsize)z * NY + y) * NX + x]
            = (guint16)(20000 + 9000 * sin (z / 2.0) * cos (y / 3.0) + 7000 * ((x / 4 + y / 5) % 2)
                        + (x * 7919 + y * 104729 + z * 1299709) % 900);
}

static SupervoxParams
params (void)
{
  SupervoxParams p;
  supervox_params_init (&p);
  p.n_segments = 12;
  p.compactness = 0.1;
  p.convert2lab = SUPERVOX_CONVERT2LAB_NO;
  return p;
}

/* A one-channel NZ·NY·NX source. */
static SupervoxSlabSource
slab_source (SupervoxDtype dtype, const char *name, SupervoxSlabReadFunc read, void *user_data)
{
  SupervoxSlabSource source;

  supervox_slab_source_init (&source);
  source.dtype = dtype;
  source.shape[0] = NZ;
  source.shape[1] = NY;
  source.shape[2] = NX;
  source.shape[3] = 1;
  source.name = name;
  source.read = read;
  source.user_data = user_data;
  return source;
}

static SupervoxSlabSource
source_of (Served *served)
{
  return slab_source (SUPERVOX_UINT16, "served volume", read_cb, served);
}

/* The label TIFF's pages as z-major uint32 labels. */
static guint32 *
read_labels (const char *path)
{
  TIFF *tif = TIFFOpen (path, "r");
  guint32 *labels = g_new0 (guint32, (gsize)NZ * NY * NX);
  int z = 0;

  g_assert_nonnull (tif);
  do
    {
      guint32 w = 0, h = 0;
      guint16 bits = 0;

      g_assert_cmpint (z, <, NZ);
      TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w);
      TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h);
      TIFFGetField (tif, TIFFTAG_BITSPERSAMPLE, &bits);
      g_assert_cmpuint (w, ==, NX);
      g_assert_cmpuint (h, ==, NY);
      g_assert_cmpuint (bits, ==, 32);
      for (guint32 y = 0; y < h; y++)
        g_assert_cmpint (TIFFReadScanline (tif, labels + ((gsize)z * NY + y) * NX, y, 0), ==, 1);
      z++;
    }
  while (TIFFReadDirectory (tif));
  g_assert_cmpint (z, ==, NZ);
  TIFFClose (tif);
  return labels;
}

static void
test_source_matches_array (void)
{
  g_autofree guint16 *volume = g_new (guint16, (gsize)NZ * NY * NX);
  g_autofree gint64 *expected = g_new (gint64, (gsize)NZ * NY * NX);
  g_autofree guint32 *labels = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sv-api-source-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "labels.tif", NULL);
  SupervoxParams p = params ();
  SupervoxArray a = { NULL, SUPERVOX_UINT16, { NZ, NY, NX, 1 },
                      { NY * NX * 2, NX * 2, 2, 2 } };
  Served served = { NULL, 0, 0, -1 };
  SupervoxSlabSource source;
  SupervoxFileInfo info = { 0 };
  gint64 n_differ = 0, max_label = 0;

  make_volume (volume);
  a.data = volume;
  served.volume = volume;
  source = source_of (&served);
  g_assert_cmpint (supervox_slic (&a, NULL, &p, SUPERVOX_BACKEND_CPU, expected, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_OK);
  /* A memory limit this small makes slabs of a few slices. */
  g_assert_cmpint (supervox_slic_source (&source, out, NULL, &p, SUPERVOX_BACKEND_CPU, 20000, NULL,
                                         &info), ==, SUPERVOX_OK);
  g_assert_cmpint (info.streamed, ==, 1);
  g_assert_cmpint (served.calls, >, 1);
  g_assert_cmpint (served.most_slices, <, NZ);

  labels = read_labels (out);
  for (gsize i = 0; i < (gsize)NZ * NY * NX; i++)
    {
      n_differ += (gint64)labels[i] != expected[i];
      max_label = MAX (max_label, expected[i]);
    }
  g_assert_cmpint (n_differ, ==, 0);
  g_assert_cmpint (max_label, >, 4);
  g_assert_cmpint (info.n_labels, ==, max_label);
  g_assert_cmpint (g_unlink (out), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static void
test_source_read_fails (void)
{
  g_autofree guint16 *volume = g_new (guint16, (gsize)NZ * NY * NX);
  g_autofree char *dir = g_dir_make_tmp ("sv-api-source-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "labels.tif", NULL);
  SupervoxParams p = params ();
  Served served = { NULL, 0, 0, 6 };
  SupervoxSlabSource source;
  g_autoptr (GDir) left = NULL;

  make_volume (volume);
  served.volume = volume;
  source = source_of (&served);
  g_assert_cmpint (supervox_slic_source (&source, out, NULL, &p, SUPERVOX_BACKEND_CPU, 20000, NULL,
                                         NULL), ==, SUPERVOX_ERROR_IO);
  g_assert_nonnull (strstr (supervox_last_error (), "served volume: slice"));
  g_assert_nonnull (strstr (supervox_last_error (), "could not be read: the chunk server went away"));
  /* Neither the labels nor a temporary file stay behind. */
  left = g_dir_open (dir, 0, NULL);
  g_assert_null (g_dir_read_name (left));
  g_assert_cmpint (g_rmdir (dir), ==, 0);

  /* A dtype the streamed run does not read, and no read function. */
  served.fail_from = -1;
  source.dtype = SUPERVOX_BOOL;
  g_assert_cmpint (supervox_slic_source (&source, out, NULL, &p, SUPERVOX_BACKEND_CPU, 0, NULL,
                                         NULL), ==, SUPERVOX_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (supervox_last_error (), "uint8, uint16"));
  source.dtype = SUPERVOX_UINT16;
  source.read = NULL;
  g_assert_cmpint (supervox_slic_source (&source, out, NULL, &p, SUPERVOX_BACKEND_CPU, 0, NULL,
                                         NULL), ==, SUPERVOX_ERROR_INVALID_ARGUMENT);
}

/* A mask served a slab at a time: a ball, nonzero (3) inside. */
static int
mask_read_cb (int64_t z0, int64_t z1, void *samples, void *user_data, char *message,
              size_t message_size)
{
  guint8 *out = samples;
  int *calls = user_data;

  (*calls)++;
  for (int64_t z = z0; z < z1; z++)
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++)
        *out++ = (z - 4) * (z - 4) + (y - 7) * (y - 7) + (x - 6) * (x - 6) < 30 ? 3 : 0;
  return 0;
}

static void
test_sources_with_mask (void)
{
  g_autofree guint16 *volume = g_new (guint16, (gsize)NZ * NY * NX);
  g_autofree guint8 *mask = g_new (guint8, (gsize)NZ * NY * NX);
  g_autofree gint64 *expected = g_new (gint64, (gsize)NZ * NY * NX);
  g_autofree guint32 *labels = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sv-api-source-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "labels.tif", NULL);
  SupervoxParams p = params ();
  SupervoxArray a = { NULL, SUPERVOX_UINT16, { NZ, NY, NX, 1 },
                      { NY * NX * 2, NX * 2, 2, 2 } };
  SupervoxArray m = { NULL, SUPERVOX_UINT8, { NZ, NY, NX, 1 }, { NY * NX, NX, 1, 1 } };
  Served served = { NULL, 0, 0, -1 };
  SupervoxSlabSource source, mask_source;
  int mask_calls = 0;
  gint64 n_differ = 0, n_out = 0;

  make_volume (volume);
  a.data = volume;
  served.volume = volume;
  source = source_of (&served);
  mask_source = slab_source (SUPERVOX_UINT8, "served mask", mask_read_cb, &mask_calls);
  g_assert_cmpint (mask_read_cb (0, NZ, mask, &mask_calls, NULL, 0), ==, 0);
  mask_calls = 0;
  for (gsize i = 0; i < (gsize)NZ * NY * NX; i++)
    mask[i] = mask[i] != 0;
  m.data = mask;
  g_assert_cmpint (supervox_slic (&a, &m, &p, SUPERVOX_BACKEND_CPU, expected, SUPERVOX_INT64,
                                  NULL, NULL), ==, SUPERVOX_OK);
  g_assert_cmpint (supervox_slic_sources (&source, &mask_source, out, &p, SUPERVOX_BACKEND_CPU,
                                          20000, NULL, NULL), ==, SUPERVOX_OK);
  /* The mask too came a slab at a time. */
  g_assert_cmpint (mask_calls, >, 1);
  labels = read_labels (out);
  for (gsize i = 0; i < (gsize)NZ * NY * NX; i++)
    {
      n_differ += (gint64)labels[i] != expected[i];
      n_out += !mask[i] && labels[i] == 0;
    }
  g_assert_cmpint (n_differ, ==, 0);
  g_assert_cmpint (n_out, >, 0);
  g_assert_cmpint (g_unlink (out), ==, 0);

  /* A mask of another shape, or with channels: one line, no file. */
  mask_source.shape[2] = NX - 1;
  g_assert_cmpint (supervox_slic_sources (&source, &mask_source, out, &p, SUPERVOX_BACKEND_CPU,
                                          20000, NULL, NULL), !=, SUPERVOX_OK);
  g_test_message ("%s", supervox_last_error ());
  g_assert_nonnull (strstr (supervox_last_error (), "mask"));
  g_assert_null (strchr (supervox_last_error (), '\n'));
  mask_source.shape[2] = NX;
  mask_source.shape[3] = 2;
  g_assert_cmpint (supervox_slic_sources (&source, &mask_source, out, &p, SUPERVOX_BACKEND_CPU,
                                          20000, NULL, NULL), !=, SUPERVOX_OK);
  g_assert_nonnull (strstr (supervox_last_error (), "one sample per voxel"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/api/source/matches-array", test_source_matches_array);
  g_test_add_func ("/api/source/read-fails", test_source_read_fails);
  g_test_add_func ("/api/source/with-mask", test_sources_with_mask);
  return g_test_run ();
}

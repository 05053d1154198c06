/* Tests of the label file's strips compressed on the GPU
 * (cuda/label-strips.cu): a file whose strips come from the device is
 * the same bytes as the host's writer makes of the same labels, for
 * supervoxel-like boxes, labels with no repeats, one label everywhere
 * (matches cut into pieces), columns that repeat only from the row above,
 * labels using all four bytes and negative ones; for pages of one strip,
 * pages whose last strip is shorter, rows wider than deflate's window and
 * a single voxel; with slabs from the device and from the host mixed in
 * one file. A negative label in a file started for labels >= 0 is one
 * line naming its slice, and no file. An OME-Zarr store's chunks
 * compressed on the GPU are the host's zlib:runs chunks. Every test
 * skips with the reason where there is no CUDA device. */
#define G_LOG_DOMAIN "sv-test-cuda-strips"

#include <glib/gstdio.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io-zarr.h"
#include "sv-test-cuda.h"
#include "sv-test-files.h"

typedef enum
{
  BOXES,
  NO_REPEATS,
  ONE_LABEL,
  COLUMNS,
  WIDE_VALUES,
  NEGATIVE,
  N_PATTERNS
} Pattern;

static const char *const pattern_names[N_PATTERNS]
    = { "boxes", "no repeats", "one label", "columns", "wide values", "negative" };

static gint32 *
make_labels (Pattern p, guint nz, guint ny, guint nx)
{
  gint32 *l = g_new (gint32, (gsize)nz * ny * nx);
  g_autoptr (GRand) rand = g_rand_new_with_seed (7 + p);

  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        {
          const gsize i = ((gsize)z * ny + y) * nx + x;
          const gint32 box = (gint32)((z / 3) * 10000 + (y / 5) * 100 + x / 7 + 1);

          switch (p)
            {
            case BOXES:
              l[i] = box;
              break;
            case NO_REPEATS:
              l[i] = (gint32)g_rand_int_range (rand, 0, 1 << 30);
              break;
            case ONE_LABEL:
              l[i] = 1;
              break;
            case COLUMNS:
              l[i] = (gint32)(x * 3 + z);
              break;
            case WIDE_VALUES:
              l[i] = (gint32)((guint32)box * 16777259u % 2147483647u);
              break;
            case NEGATIVE:
              l[i] = (x + y) % 11 == 0 ? -1 - (gint32)(x % 3) : box;
              break;
            default:
              g_assert_not_reached ();
            }
        }
  return l;
}

static char *
write_file (const char *dir, const char *name, const gint32 *labels, guint nz, guint ny, guint nx,
            gboolean negative, guint device_slices, GError **error)
{
  static const double spacing[3] = { 1, 1, 1 };
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr (SvTiffLabelWriter) w
      = sv_tiff_label_writer_new (path, nz, ny, nx, negative, spacing, NULL, NULL, error);
  gboolean ok = w != NULL;
  const gsize plane = (gsize)ny * nx;

  /* The first device_slices from the device, the rest from the host. */
  if (ok && device_slices > 0)
    {
      const guint rows = sv_tiff_label_writer_strip_rows (w);
      g_autofree guint64 *sizes = NULL;
      g_autofree guint8 *bytes = NULL;
      gsize n_bytes = 0;
      gint64 negative_slice = -2;

      g_assert_cmpuint (rows, >, 0);
      ok = sv_cuda_compress_label_strips (0, labels, device_slices, ny, nx, rows, 0, &sizes, &bytes,
                                          &n_bytes, &negative_slice, error)
           && sv_tiff_label_writer_append_strips (w, device_slices, sizes, bytes, negative_slice,
                                                  error);
    }
  if (ok && device_slices < nz)
    ok = sv_tiff_label_writer_append (w, labels + device_slices * plane, nz - device_slices, error);
  ok = ok && sv_tiff_label_writer_finish (w, error);
  if (!ok)
    g_clear_pointer (&path, g_free);
  return path;
}

static void
assert_same_bytes (const char *a, const char *b, const char *what)
{
  g_autofree char *da = NULL, *db = NULL;
  gsize la = 0, lb = 0;

  g_assert_true (g_file_get_contents (a, &da, &la, NULL));
  g_assert_true (g_file_get_contents (b, &db, &lb, NULL));
  if (la != lb || memcmp (da, db, la) != 0)
    {
      gsize i = 0;
      while (i < MIN (la, lb) && da[i] == db[i])
        i++;
      g_error ("%s: the files differ (%" G_GSIZE_FORMAT " and %" G_GSIZE_FORMAT
               " bytes, first at byte %" G_GSIZE_FORMAT ")",
               what, la, lb, i);
    }
}

static void
test_same_file (void)
{
  static const guint shapes[][3] = {
    { 1, 1, 1 },      /* one voxel */
    { 3, 5, 7 },      /* small pages, one strip each */
    { 4, 300, 256 },  /* 300 KiB pages, one strip each */
    { 3, 70, 2048 },  /* strips of 64 rows, the last of 6 */
    { 2, 3, 9000 },   /* rows wider than deflate's window */
    { 1, 40, 40000 }, /* 160 KB rows, strips of 3 rows */
    { 6, 129, 1031 }, /* 127 rows a strip, odd sizes */
  };
  g_autofree char *dir = NULL;

  if (!sv_test_need_cuda ())
    return;
  dir = sv_test_make_dir ("sv-test-cuda-strips");
  for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (Pattern p = 0; p < N_PATTERNS; p++)
      {
        const guint nz = shapes[s][0], ny = shapes[s][1], nx = shapes[s][2];
        g_autofree gint32 *labels = make_labels (p, nz, ny, nx);
        g_autoptr (GError) error = NULL;
        g_autofree char *what = g_strdup_printf ("%u×%u×%u, %s", nz, ny, nx, pattern_names[p]);
        g_autofree char *host = NULL, *device = NULL, *mixed = NULL;
        const gboolean negative = p == NEGATIVE;

        host = write_file (dir, "host.tif", labels, nz, ny, nx, negative, 0, &error);
        g_assert_no_error (error);
        device = write_file (dir, "device.tif", labels, nz, ny, nx, negative, nz, &error);
        g_assert_no_error (error);
        assert_same_bytes (host, device, what);
        if (nz > 1)
          {
            mixed = write_file (dir, "mixed.tif", labels, nz, ny, nx, negative, nz / 2, &error);
            g_assert_no_error (error);
            assert_same_bytes (host, mixed, what);
          }
        g_test_message ("%s: the same bytes", what);
      }
  sv_test_remove_tree (dir);
}

/* Negative labels in a file started for labels >= 0: the device says
 * which slice, the writer says it in one line, and no file is left. */
static void
test_negative_in_unsigned_file (void)
{
  const guint nz = 5, ny = 20, nx = 30;
  g_autofree gint32 *labels = NULL;
  g_autofree char *dir = NULL, *path = NULL, *expected = NULL;
  g_autoptr (GError) error = NULL;

  if (!sv_test_need_cuda ())
    return;
  labels = make_labels (BOXES, nz, ny, nx);
  labels[(gsize)3 * ny * nx + 17] = -4;
  dir = sv_test_make_dir ("sv-test-cuda-strips");
  path = write_file (dir, "out.tif", labels, nz, ny, nx, FALSE, nz, &error);
  g_assert_null (path);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (error->message, "a negative label in slice 3 of a file started for "
                                            "labels >= 0"));
  g_assert_null (strchr (error->message, '\n'));
  expected = g_build_filename (dir, "out.tif", NULL);
  g_assert_false (g_file_test (expected, G_FILE_TEST_EXISTS));
  /* Nor a temporary file beside it. */
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* An OME-Zarr store (zlib:runs) of the labels: its first device_slices
 * (whole rows of chunks) compressed on the device, the rest by the host. */
static char *
write_store (const char *dir, const char *name, const gint32 *labels, guint nz, guint ny,
             guint nx, const guint chunks[3], gboolean negative, guint device_slices,
             GError **error)
{
  static const double spacing[3] = { 1, 1, 1 };
  char *path = g_build_filename (dir, name, NULL);
  SvZarrWriteOptions zarr;
  SvTiffWriteOptions options;
  g_autoptr (SvTiffLabelWriter) w = NULL;
  gboolean ok;
  guint shape[3];

  sv_zarr_write_options_init_defaults (&zarr);
  g_assert_true (sv_zarr_write_options_parse (&zarr, "zlib:runs", NULL));
  memcpy (zarr.chunks, chunks, sizeof zarr.chunks);
  sv_tiff_write_options_init_defaults (&options);
  options.zarr = &zarr;
  w = sv_tiff_label_writer_new (path, nz, ny, nx, negative, spacing, NULL, &options, error);
  ok = w != NULL;
  if (ok && device_slices > 0)
    {
      g_autofree guint64 *sizes = NULL;
      g_autofree guint8 *bytes = NULL;
      gsize n_bytes = 0;
      gint64 negative_chunk = -2;
      const guint per_row = ((ny + chunks[1] - 1) / chunks[1]) * ((nx + chunks[2] - 1) / chunks[2]);

      g_assert_true (sv_tiff_label_writer_chunk_shape (w, shape));
      ok = sv_cuda_compress_label_chunks (0, labels, device_slices, ny, nx, chunks, &sizes, &bytes,
                                          &n_bytes, &negative_chunk, error)
           && sv_tiff_label_writer_append_chunks (
               w, device_slices, sizes, bytes,
               negative_chunk < 0 ? -1 : negative_chunk / per_row * chunks[0], error);
    }
  if (ok && device_slices < nz)
    ok = sv_tiff_label_writer_append (w, labels + (gsize)device_slices * ny * nx,
                                      nz - device_slices, error);
  ok = ok && sv_tiff_label_writer_finish (w, error);
  if (!ok)
    g_clear_pointer (&path, g_free);
  return path;
}

/* Every chunk file of two stores of the same shape is the same bytes. */
static void
assert_same_chunks (const char *a, const char *b, guint nz, guint ny, guint nx,
                    const guint chunks[3], const char *what)
{
  for (guint kz = 0; kz * chunks[0] < nz; kz++)
    for (guint ky = 0; ky * chunks[1] < ny; ky++)
      for (guint kx = 0; kx * chunks[2] < nx; kx++)
        {
          g_autofree char *key = g_strdup_printf ("%u/%u/%u", kz, ky, kx);
          g_autofree char *fa = g_build_filename (a, "0", key, NULL);
          g_autofree char *fb = g_build_filename (b, "0", key, NULL);
          g_autofree char *chunk = g_strdup_printf ("%s, chunk %s", what, key);

          assert_same_bytes (fa, fb, chunk);
        }
}

/* A store's chunks compressed on the device are the host's zlib:runs
 * chunks of the same labels: edge chunks (filled with 0) on every side,
 * rows of chunks cut short by the volume, rows wider than deflate's
 * window, a single voxel; and with the device's rows and the host's mixed
 * in one store. */
static void
test_zarr_chunks (void)
{
  static const guint cases[][6] = {
    /* nz, ny, nx, chunk z, y, x */
    { 1, 1, 1, 1, 1, 1 },      { 3, 20, 20, 2, 8, 16 },    { 5, 70, 130, 4, 64, 64 },
    { 2, 3, 9000, 1, 3, 9000 }, { 6, 129, 1031, 3, 32, 100 }, { 8, 64, 64, 8, 64, 64 },
  };
  g_autofree char *dir = NULL;

  if (!sv_test_need_cuda ())
    return;
  dir = sv_test_make_dir ("sv-test-cuda-chunks");
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    for (Pattern p = 0; p < N_PATTERNS; p++)
      {
        const guint nz = cases[c][0], ny = cases[c][1], nx = cases[c][2];
        const guint *chunks = cases[c] + 3;
        g_autofree gint32 *labels = make_labels (p, nz, ny, nx);
        g_autoptr (GError) error = NULL;
        g_autofree char *what = g_strdup_printf ("%u×%u×%u in %u×%u×%u chunks, %s", nz, ny, nx,
                                                 chunks[0], chunks[1], chunks[2], pattern_names[p]);
        g_autofree char *host = NULL, *device = NULL, *mixed = NULL;
        const gboolean negative = p == NEGATIVE;

        host = write_store (dir, "host.zarr", labels, nz, ny, nx, chunks, negative, 0, &error);
        g_assert_no_error (error);
        device = write_store (dir, "device.zarr", labels, nz, ny, nx, chunks, negative, nz, &error);
        g_assert_no_error (error);
        assert_same_chunks (host, device, nz, ny, nx, chunks, what);
        if (nz > chunks[0])
          {
            mixed = write_store (dir, "mixed.zarr", labels, nz, ny, nx, chunks, negative,
                                 chunks[0], &error);
            g_assert_no_error (error);
            assert_same_chunks (host, mixed, nz, ny, nx, chunks, what);
          }
        g_test_message ("%s: the same chunks", what);
      }
  /* A negative label in a store for labels >= 0: named, and no store. */
  {
    static const guint chunks[3] = { 2, 8, 16 };
    g_autofree gint32 *labels = make_labels (BOXES, 5, 20, 30);
    g_autoptr (GError) error = NULL;
    g_autofree char *path = NULL, *expected = g_build_filename (dir, "bad.zarr", NULL);

    labels[(gsize)3 * 20 * 30 + 17] = -4;
    path = write_store (dir, "bad.zarr", labels, 5, 20, 30, chunks, FALSE, 5, &error);
    g_assert_null (path);
    g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
    g_assert_nonnull (strstr (error->message, "a negative label in slice 2 of a store"));
    g_assert_false (g_file_test (expected, G_FILE_TEST_EXISTS));
  }
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/strips/same-file", test_same_file);
  g_test_add_func ("/cuda/strips/negative-in-unsigned-file", test_negative_in_unsigned_file);
  g_test_add_func ("/cuda/strips/zarr-chunks", test_zarr_chunks);
  return g_test_run ();
}

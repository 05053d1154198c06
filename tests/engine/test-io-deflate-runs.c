/* Tests for deflate of runs (engine/io/io-tiff-deflate-runs.c): every
 * strip it writes is a zlib stream that libtiff's own reader (zlib's
 * inflate) and tifffile decode to the samples written, for labels of
 * every kind (runs, repeats of the row above, no repeats at all, labels
 * with all four bytes used, negative ones), rows too wide for a match to
 * the row above, one-voxel files, and 8-bit and 16-bit images with one or
 * three channels; it is smaller than the raw samples where labels repeat,
 * and the same bytes for any number of threads. */
#define G_LOG_DOMAIN "sv-test-io-deflate-runs"

#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <tiffio.h>

#include "supervox/sv-deflate-runs.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "sv-test-files.h"
#include "sv-test-python.h"

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-io-deflate-runs");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

static guint32
hash32 (guint32 x)
{
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

typedef enum
{
  BLOCKS,   /* boxes of 7×5×9 voxels: runs along x and repeated rows */
  ROUGH,    /* boxes with a ragged edge: short runs, broken repeats */
  NOISE,    /* every voxel its own label: literals only */
  CONSTANT, /* one label: one run */
  WIDE,     /* labels of every byte width, negative ones */
} Pattern;

static gint32
label_at (Pattern p, guint z, guint y, guint x)
{
  switch (p)
    {
    case BLOCKS:
      return (gint32)(hash32 ((z / 7) * 7919u + (y / 5) * 104729u + x / 9) % 5000);
    case ROUGH:
      return (gint32)(hash32 ((z / 3) * 7919u + (y / 4) * 104729u
                              + (x + hash32 (z * 1000u + y) % 3) / 4)
                      % 300);
    case NOISE:
      return (gint32)hash32 (z * 1000003u + y * 1009u + x);
    case CONSTANT:
      return 42;
    case WIDE:
    default:
      {
        guint32 h = hash32 ((y / 2) * 31u + x / 3 + z);
        return (h & 1) ? -(gint32)(h >> 8) : (gint32)h;
      }
    }
}

static SvLabels *
make_labels (Pattern p, guint nz, guint ny, guint nx)
{
  SvLabels *l = sv_labels_new (nz, ny, nx, NULL);

  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        l->data[((gsize)z * ny + y) * nx + x] = label_at (p, z, y, x);
  return l;
}

/* The file's pages through libtiff's reader (inflate is zlib's there),
 * byte for byte against `expected`. */
static void
assert_libtiff_reads (const char *path, const guint8 *expected, gsize page_bytes, guint nz)
{
  TIFF *tif = TIFFOpen (path, "r");
  g_autofree guint8 *page = g_malloc (page_bytes);
  guint z = 0;

  g_assert_nonnull (tif);
  do
    {
      tmsize_t strip_size = TIFFStripSize (tif);
      guint16 compression = 0;
      gsize at = 0;

      g_assert_true (TIFFGetField (tif, TIFFTAG_COMPRESSION, &compression));
      g_assert_cmpuint (compression, ==, COMPRESSION_ADOBE_DEFLATE);
      for (tstrip_t s = 0; s < TIFFNumberOfStrips (tif); s++)
        {
          tmsize_t got = TIFFReadEncodedStrip (tif, s, page + at, strip_size);
          g_assert_cmpint (got, >, 0);
          at += (gsize)got;
        }
      g_assert_cmpuint (at, ==, page_bytes);
      g_assert_true (memcmp (page, expected + (gsize)z * page_bytes, page_bytes) == 0);
      z++;
    }
  while (TIFFReadDirectory (tif));
  g_assert_cmpuint (z, ==, nz);
  TIFFClose (tif);
}

static SvTiffWriteOptions
runs_options (int n_threads)
{
  g_autoptr (GError) error = NULL;
  SvTiffWriteOptions o;

  sv_tiff_write_options_init_defaults (&o);
  g_assert_true (sv_tiff_write_options_parse (&o, "deflate:runs", &error));
  g_assert_no_error (error);
  o.n_threads = n_threads;
  return o;
}

static gsize
file_size (const char *path)
{
  GStatBuf st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  return (gsize)st.st_size;
}

/* Labels of each pattern and shape: libtiff reads back what was written;
 * one and three threads write the same bytes. */
static void
test_labels_decode (Fixture *f, gconstpointer data)
{
  static const guint shapes[][3] = {
    { 3, 70, 200 },   /* several strips a page (rows of 800 bytes) */
    { 2, 3, 9000 },   /* rows of 36000 bytes: beyond deflate's window */
    { 1, 1, 1 },      /* one voxel */
    { 4, 1, 7 },      /* one-row pages */
    { 2, 300, 1100 }, /* strips of a few rows */
  };
  g_autofree char *one = g_build_filename (f->dir, "one.tif", NULL);
  g_autofree char *three = g_build_filename (f->dir, "three.tif", NULL);

  for (Pattern p = BLOCKS; p <= WIDE; p++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      {
        g_autoptr (SvLabels) l = make_labels (p, shapes[s][0], shapes[s][1], shapes[s][2]);
        g_autoptr (GError) error = NULL;
        SvTiffWriteOptions o1 = runs_options (1), o3 = runs_options (3);

        g_assert_true (sv_tiff_write_labels_full (one, l, &o1, &error));
        g_assert_no_error (error);
        g_assert_true (sv_tiff_write_labels_full (three, l, &o3, &error));
        g_assert_no_error (error);
        sv_test_assert_same_file (one, three);
        assert_libtiff_reads (one, (const guint8 *)l->data,
                              (gsize)shapes[s][1] * shapes[s][2] * sizeof (gint32), shapes[s][0]);
      }
}

/* Where labels repeat the file is much smaller than the samples; where
 * nothing repeats it is not much larger. */
static void
test_labels_size (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "size.tif", NULL);
  const guint nz = 8, ny = 128, nx = 256;
  const gsize raw = (gsize)nz * ny * nx * sizeof (gint32);
  static const struct
  {
    Pattern p;
    double at_most; /* of the raw size */
  } cases[] = { { CONSTANT, 0.008 }, { BLOCKS, 0.05 }, { ROUGH, 0.2 }, { NOISE, 1.05 } };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (SvLabels) l = make_labels (cases[c].p, nz, ny, nx);
      g_autoptr (GError) error = NULL;
      SvTiffWriteOptions o = runs_options (2);
      gsize size;

      g_assert_true (sv_tiff_write_labels_full (path, l, &o, &error));
      g_assert_no_error (error);
      size = file_size (path);
      g_test_message ("pattern %d: %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " bytes", cases[c].p,
                      size, raw);
      g_assert_cmpfloat ((double)size, <=, cases[c].at_most * (double)raw);
    }
}

/* Images: 8-bit with three channels (samples of 3 bytes) and 16-bit, with
 * the predictor's default (horizontal differences for both), read back
 * the same as the file written without compression. */
static void
test_images_decode (Fixture *f, gconstpointer data)
{
  static const struct
  {
    SvSampleType as;
    guint nc;
  } kinds[] = { { SV_SAMPLE_U8, 3 }, { SV_SAMPLE_U16, 1 }, { SV_SAMPLE_U8, 1 } };
  g_autofree char *path = g_build_filename (f->dir, "image.tif", NULL);
  g_autofree char *plain = g_build_filename (f->dir, "plain.tif", NULL);

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      g_autoptr (SvVolume) v = sv_volume_new (2, 40, 90, kinds[k].nc, NULL);
      g_autoptr (SvVolume) back = NULL;
      g_autoptr (SvVolume) reference = NULL;
      g_autoptr (GError) error = NULL;
      SvTiffWriteOptions o = runs_options (2), none = runs_options (1);
      gsize n;

      g_assert_true (sv_tiff_write_options_parse (&none, "none", &error));
      n = sv_volume_n_voxels (v) * v->nc;
      for (gsize i = 0; i < n; i++)
        v->data[i] = (float)((i / 5) % 7) / 7.0f + (float)(hash32 ((guint32)i) % 3) * 0.01f;
      g_assert_true (sv_tiff_write_volume_full (path, v, kinds[k].as, &o, &error));
      g_assert_true (sv_tiff_write_volume_full (plain, v, kinds[k].as, &none, &error));
      g_assert_no_error (error);
      back = sv_tiff_read_volume (path, &error);
      g_assert_no_error (error);
      reference = sv_tiff_read_volume (plain, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (back->nc, ==, kinds[k].nc);
      g_assert_true (memcmp (back->data, reference->data, n * sizeof (float)) == 0);
    }
}

/* tifffile (inflate through Python's zlib) reads a label file. */
static void
test_tifffile_reads (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "labels.tif", NULL);
  g_autoptr (SvLabels) l = make_labels (ROUGH, 5, 60, 70);
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *expected = NULL;
  SvTiffWriteOptions o = runs_options (2);
  guint64 sum = 0;

  g_assert_true (sv_tiff_write_labels_full (path, l, &o, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < sv_labels_n_voxels (l); i++)
    sum += (guint64)(guint32)l->data[i] * (i % 7 + 1);
  out = sv_test_python_args ("import sys, numpy, tifffile\n"
                             "a = tifffile.imread(sys.argv[1]).astype(numpy.uint64).ravel()\n"
                             "w = numpy.arange(a.size, dtype=numpy.uint64) % 7 + 1\n"
                             "print(a.shape[0], int((a * w).sum()) % 2**64)\n",
                             path);
  if (out == NULL)
    return;
  expected = g_strdup_printf ("%" G_GSIZE_FORMAT " %" G_GUINT64_FORMAT "\n", sv_labels_n_voxels (l),
                              sum);
  g_assert_cmpstr (out, ==, expected);
}

/* The length symbols every encoder computes (sv-deflate-runs.h) against
 * RFC 1951's table, for every match length. */
static void
test_length_symbols (void)
{
  static const guint base[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                  31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
  static const guint extra[29]
      = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };

  for (guint i = 0; i < 29; i++)
    {
      g_assert_cmpuint (sv_runs_length_base (i), ==, base[i]);
      g_assert_cmpuint (sv_runs_length_extra (i), ==, extra[i]);
    }
  for (guint len = 3; len <= 258; len++)
    {
      guint i = 28;
      while (base[i] > len)
        i--;
      g_assert_cmpuint (sv_runs_length_index (len), ==, i);
    }
  /* Pieces of a long match: at most 258 bytes, none under 3. */
  for (gsize bytes = 3; bytes < 2000; bytes++)
    for (gsize rest = bytes; rest > 0;)
      {
        const gsize take = sv_runs_piece (rest);
        g_assert_cmpuint (take, >=, 3);
        g_assert_cmpuint (take, <=, 258);
        rest -= take;
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/io/deflate-runs/length-symbols", test_length_symbols);
  g_test_add ("/io/deflate-runs/labels-decode", Fixture, NULL, fixture_setup, test_labels_decode,
              fixture_teardown);
  g_test_add ("/io/deflate-runs/labels-size", Fixture, NULL, fixture_setup, test_labels_size,
              fixture_teardown);
  g_test_add ("/io/deflate-runs/images-decode", Fixture, NULL, fixture_setup, test_images_decode,
              fixture_teardown);
  g_test_add ("/io/deflate-runs/tifffile-reads", Fixture, NULL, fixture_setup, test_tifffile_reads,
              fixture_teardown);
  return g_test_run ();
}

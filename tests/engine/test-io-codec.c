/* Tests for the TIFF codecs and threads (engine/io/io-tiff-codec.c,
 * io-tiff-write.c, io-tiff-decode.c, io-tiff-options.c) and for ImageJ
 * layouts as tifffile writes them. Arrays are compared through a weighted
 * sum of their bit patterns, sum(v[i] * (i % 7 + 1)) mod 2^64, computed
 * here and in NumPy. */
#define G_LOG_DOMAIN "sv-test-io-codec"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <tiffio.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "sv-test-files.h"
#include "sv-test-python.h"
#include "supervox/sv-volume.h"

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  GError *error = NULL;

  f->dir = g_dir_make_tmp ("sv-test-io-codec-XXXXXX", &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

static char *
fixture_path (Fixture *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
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

/* Label-like data: runs along x with jumps both ways, so that horizontal
 * differences wrap around. */
static SvLabels *
make_labels (guint nz, guint ny, guint nx, gboolean negative)
{
  SvLabels *l = sv_labels_new (nz, ny, nx, NULL);

  for (gsize i = 0; i < sv_labels_n_voxels (l); i++)
    l->data[i] = (gint32)(hash32 ((guint32)(i / 7)) % 5000);
  l->data[1] = G_MAXINT32;
  if (negative)
    l->data[2] = -1;
  return l;
}

static guint64
weighted_sum_u32 (const guint32 *v, gsize n)
{
  guint64 s = 0;

  for (gsize i = 0; i < n; i++)
    s += (guint64)v[i] * (i % 7 + 1);
  return s;
}

/* The Python expression for the same sum over array `a`. */
#define PY_WSUM(a)                                                                                 \
  "int((" a ".reshape(-1).astype(numpy.uint64) * (numpy.arange(" a ".size, "                       \
  "dtype=numpy.uint64) % 7 + 1)).sum())"

static void
assert_tags (const char *path, guint16 compression, guint16 predictor)
{
  TIFF *tif = TIFFOpen (path, "r");
  guint16 c = 0, p = PREDICTOR_NONE;

  g_assert_nonnull (tif);
  TIFFGetField (tif, TIFFTAG_COMPRESSION, &c);
  if (c != COMPRESSION_NONE)
    TIFFGetField (tif, TIFFTAG_PREDICTOR, &p);
  TIFFClose (tif);
  g_assert_cmpuint (c, ==, compression);
  g_assert_cmpuint (p, ==, predictor);
}

static char *
read_file (const char *path)
{
  g_autofree char *contents = NULL;
  gsize len = 0;

  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  return g_base64_encode ((const guchar *)contents, len);
}

/* ------------------------------------------------------------------------ */
/* Options */

static void
test_options (void)
{
  static const struct
  {
    const char *text;
    SvTiffCompression compression;
    const char *canonical;
  } good[] = {
    { "none", SV_TIFF_COMPRESSION_NONE, "none" },
    { "deflate", SV_TIFF_COMPRESSION_DEFLATE, "deflate:6" },
    { "deflate:1", SV_TIFF_COMPRESSION_DEFLATE, "deflate:1" },
    { "DEFLATE:12", SV_TIFF_COMPRESSION_DEFLATE, "deflate:12" },
    { "zstd", SV_TIFF_COMPRESSION_ZSTD, "zstd:3" },
    { "zstd:22", SV_TIFF_COMPRESSION_ZSTD, "zstd:22" },
    { "lzw", SV_TIFF_COMPRESSION_LZW, "lzw" },
    { "deflate:runs", SV_TIFF_COMPRESSION_DEFLATE_RUNS, "deflate:runs" },
    { "Deflate:RUNS", SV_TIFF_COMPRESSION_DEFLATE_RUNS, "deflate:runs" },
  };
  static const char *const bad[] = { "",
                                     "gzip",
                                     "deflate:",
                                     "deflate:0",
                                     "deflate:13",
                                     "zstd:3x",
                                     "zstd:-1",
                                     "lzw:2",
                                     "none:1",
                                     ":3",
                                     "deflate:99999999999999999999",
                                     "deflate:run",
                                     "zstd:runs",
                                     "runs" };
  SvTiffWriteOptions o;
  g_autofree char *defaults = NULL;

  sv_tiff_write_options_init_defaults (&o);
  defaults = sv_tiff_write_options_to_string (&o);
  g_assert_cmpstr (defaults, ==, "deflate:runs");
  g_assert_cmpint (o.predictor, ==, SV_TIFF_PREDICTOR_AUTO);
  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      GError *error = NULL;
      g_autofree char *back = NULL;

      g_assert_true (sv_tiff_write_options_parse (&o, good[i].text, &error));
      g_assert_no_error (error);
      g_assert_cmpint (o.compression, ==, good[i].compression);
      back = sv_tiff_write_options_to_string (&o);
      g_assert_cmpstr (back, ==, good[i].canonical);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      GError *error = NULL;

      g_assert_false (sv_tiff_write_options_parse (&o, bad[i], &error));
      g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
      g_assert_nonnull (strstr (error->message, "compression"));
      g_assert_null (strchr (error->message, '\n'));
      g_clear_error (&error);
    }
}

/* ------------------------------------------------------------------------ */
/* Our writer, our reader */

static const struct
{
  const char *codec;
  guint16 tag;
} codecs[] = {
  { "none", COMPRESSION_NONE },
  { "deflate:1", COMPRESSION_ADOBE_DEFLATE },
  { "deflate:12", COMPRESSION_ADOBE_DEFLATE },
  { "zstd:1", COMPRESSION_ZSTD },
  { "zstd:19", COMPRESSION_ZSTD },
  { "lzw", COMPRESSION_LZW },
};

/* Every codec and predictor, on 1 and 3 threads: the files read back
 * exactly and are byte-identical whatever the number of threads. */
static void
test_roundtrip_every_codec (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "l.tif");
  /* 600×600 uint32 pages are 1.4 MB: three strips each. */
  g_autoptr (SvLabels) big = make_labels (2, 600, 600, FALSE);
  g_autoptr (SvLabels) neg = make_labels (3, 17, 23, TRUE);
  g_autoptr (SvVolume) rgb = sv_volume_new (2, 9, 11, 3, NULL);

  for (gsize i = 0; i < sv_volume_n_voxels (rgb) * 3; i++)
    rgb->data[i] = (float)((double)(hash32 ((guint32)i) % 256) * (1.0 / 255.0));
  for (guint c = 0; c < G_N_ELEMENTS (codecs); c++)
    for (int pred = 0; pred < 2; pred++)
      {
        SvLabels *cases[] = { big, neg };
        SvTiffWriteOptions o;
        GError *error = NULL;
        guint16 ptag
            = pred && codecs[c].tag != COMPRESSION_NONE ? PREDICTOR_HORIZONTAL : PREDICTOR_NONE;

        sv_tiff_write_options_init_defaults (&o);
        g_assert_true (sv_tiff_write_options_parse (&o, codecs[c].codec, &error));
        o.predictor = pred ? SV_TIFF_PREDICTOR_HORIZONTAL : SV_TIFF_PREDICTOR_NONE;
        for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
          {
            g_autofree char *one_thread = NULL;
            g_autofree char *three = NULL;
            g_autoptr (SvLabels) back = NULL;

            o.n_threads = 1;
            g_assert_true (sv_tiff_write_labels_full (path, cases[k], &o, &error));
            g_assert_no_error (error);
            one_thread = read_file (path);
            o.n_threads = 3;
            g_assert_true (sv_tiff_write_labels_full (path, cases[k], &o, &error));
            three = read_file (path);
            g_assert_cmpstr (one_thread, ==, three);
            assert_tags (path, codecs[c].tag, ptag);
            back = sv_tiff_read_labels (path, &error);
            g_assert_no_error (error);
            g_assert_cmpmem (back->data, sv_labels_n_voxels (back) * 4, cases[k]->data,
                             sv_labels_n_voxels (cases[k]) * 4);
          }
        /* Colour: the predictor works on samples 3 apart. */
        {
          g_autoptr (SvVolume) back = NULL;
          g_assert_true (sv_tiff_write_volume_full (path, rgb, SV_SAMPLE_U8, &o, &error));
          g_assert_no_error (error);
          back = sv_tiff_read_volume (path, &error);
          g_assert_no_error (error);
          g_assert_cmpuint (back->nc, ==, 3);
          g_assert_cmpmem (back->data, sv_volume_n_voxels (back) * 12, rgb->data,
                           sv_volume_n_voxels (rgb) * 12);
        }
      }
}

/* tifffile (with a second decoder for zstd, LZW and the predictors where
 * imagecodecs is missing) reads every file we write as we meant it. */
static void
test_tifffile_reads_ours (Fixture *f, gconstpointer data)
{
  g_autoptr (SvLabels) l = make_labels (3, 40, 48, FALSE);
  g_autoptr (SvVolume) v = sv_volume_new (4, 33, 35, 1, NULL);
  g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GString) expected = g_string_new (NULL);
  g_autofree char *code = NULL;
  g_autofree char *out = NULL;
  g_autofree guint32 *u16 = g_new (guint32, sv_volume_n_voxels (v));
  guint64 label_sum = weighted_sum_u32 ((const guint32 *)l->data, sv_labels_n_voxels (l));

  if (!sv_test_python_has ("numpy, tifffile"))
    {
      g_test_skip ("/usr/bin/python3 with numpy and tifffile is not available");
      return;
    }
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    {
      u16[i] = (guint32)((i * 37 + hash32 ((guint32)i) % 50) % 65536);
      v->data[i] = (float)((double)u16[i] / 65535.0);
    }
  for (guint c = 0; c < G_N_ELEMENTS (codecs); c++)
    for (int pred = 0; pred < 2; pred++)
      {
        SvTiffWriteOptions o;
        GError *error = NULL;
        char *lp = g_strdup_printf ("%s/l-%u-%d.tif", f->dir, c, pred);
        char *vp = g_strdup_printf ("%s/v-%u-%d.tif", f->dir, c, pred);

        sv_tiff_write_options_init_defaults (&o);
        g_assert_true (sv_tiff_write_options_parse (&o, codecs[c].codec, &error));
        o.predictor = pred ? SV_TIFF_PREDICTOR_HORIZONTAL : SV_TIFF_PREDICTOR_NONE;
        g_assert_true (sv_tiff_write_labels_full (lp, l, &o, &error));
        g_assert_true (sv_tiff_write_volume_full (vp, v, SV_SAMPLE_U16, &o, &error));
        g_assert_no_error (error);
        g_ptr_array_add (args, lp);
        g_ptr_array_add (args, vp);
        g_string_append_printf (expected, "uint32 (3, 40, 48) %" G_GUINT64_FORMAT "\n", label_sum);
        g_string_append_printf (expected, "uint16 (4, 33, 35) %" G_GUINT64_FORMAT "\n",
                                weighted_sum_u32 (u16, sv_volume_n_voxels (v)));
      }
  g_ptr_array_add (args, NULL);
  code = g_strconcat (sv_test_tifffile_prelude,
                      "import sys\n"
                      "for p in sys.argv[1:]:\n"
                      "    a = tifffile.imread(p)\n"
                      "    print(a.dtype, a.shape, " PY_WSUM ("a") ")\n",
                      NULL);
  out = sv_test_python (code, (const char *const *)args->pdata);
  if (out == NULL)
    return;
  g_assert_cmpstr (out, ==, expected->str);
}

/* Files written by tifffile: deflate, zstd and LZW, with horizontal and
 * floating-point predictors, tiled, BigTIFF, colour. */
static void
test_reads_tifffile_files (Fixture *f, gconstpointer data)
{
  static const char *const script
      = "import sys, os\n"
        "d = sys.argv[1]\n"
        "rng = numpy.random.default_rng(7)\n"
        "u = (rng.integers(0, 40, (4, 37, 45)).cumsum(axis=2) % 65536).astype(numpy.uint16)\n"
        "fl = rng.normal(size=(4, 20, 30)).astype(numpy.float32)\n"
        "rgb = rng.integers(0, 256, (2, 20, 30, 3)).astype(numpy.uint8)\n"
        "cases = [\n"
        "  ('zlib', dict(compression='zlib'), u),\n"
        "  ('zlib-pred', dict(compression='zlib', predictor=True), u),\n"
        "  ('zstd', dict(compression='zstd'), u),\n"
        "  ('zstd-pred', dict(compression='zstd', predictor=True), u),\n"
        "  ('lzw', dict(compression='lzw'), u),\n"
        "  ('lzw-pred', dict(compression='lzw', predictor=True), u),\n"
        "  ('tiled', dict(compression='zlib', predictor=True, tile=(16, 16)), u),\n"
        "  ('bigtiff', dict(compression='zstd', bigtiff=True), u),\n"
        "  ('float-pred3', dict(compression='zlib', predictor=3), fl),\n"
        "  ('float-zstd-pred3', dict(compression='zstd', predictor=3), fl),\n"
        "  ('float-tiled-pred3', dict(compression='zlib', predictor=3, tile=(16, 16)), fl),\n"
        "  ('rgb-pred', dict(compression='zlib', predictor=True, photometric='rgb'), rgb),\n"
        "]\n"
        "for name, kw, a in cases:\n"
        "    kw.setdefault('photometric', 'minisblack')\n"
        "    tifffile.imwrite(os.path.join(d, name + '.tif'), a, **kw)\n"
        "    b = a.view(numpy.uint32) if a.dtype == numpy.float32 else a\n"
        "    print(name, " PY_WSUM ("b") ")\n";
  g_autofree char *code = g_strconcat (sv_test_tifffile_prelude, script, NULL);
  g_autofree char *out = NULL;
  g_auto (GStrv) lines = NULL;

  if (!sv_test_python_has ("numpy, tifffile"))
    {
      g_test_skip ("/usr/bin/python3 with numpy and tifffile is not available");
      return;
    }
  out = sv_test_python_args (code, f->dir);
  if (out == NULL)
    return;
  lines = g_strsplit (g_strstrip (out), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 12);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) parts = g_strsplit (lines[i], " ", 2);
      g_autofree char *name = g_strconcat (parts[0], ".tif", NULL);
      g_autofree char *path = fixture_path (f, name);
      guint64 want = g_ascii_strtoull (parts[1], NULL, 10), got;
      GError *error = NULL;
      g_autoptr (SvVolume) v = sv_tiff_read_volume (path, &error);
      g_autofree guint32 *raw = NULL;
      gsize n;

      g_test_message ("%s", parts[0]);
      g_assert_no_error (error);
      n = sv_volume_n_voxels (v) * v->nc;
      raw = g_new (guint32, n);
      /* Back to the file's values: img_as_float is exact and invertible. */
      for (gsize k = 0; k < n; k++)
        {
          if (v->source_type == SV_SAMPLE_F32)
            memcpy (&raw[k], &v->data[k], 4);
          else if (v->source_type == SV_SAMPLE_U16)
            raw[k] = (guint32)lrint (v->data[k] * 65535.0);
          else
            raw[k] = (guint32)lrint (v->data[k] * 255.0);
        }
      got = weighted_sum_u32 (raw, n);
      g_assert_cmpuint (got, ==, want);
    }
}

/* ------------------------------------------------------------------------ */
/* ImageJ layouts from tifffile */

static void
test_imagej_hyperstack (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "zcyx.tif");
  g_autofree char *code = g_strconcat (
      sv_test_tifffile_prelude,
      "import sys\n"
      "a = (numpy.arange(5 * 3 * 8 * 9) * 7 % 65536).astype(numpy.uint16).reshape(5, 3, 8, 9)\n"
      "tifffile.imwrite(sys.argv[1], a, imagej=True, metadata={'axes': 'ZCYX'})\n"
      "b = numpy.moveaxis(a, 1, -1)\n"
      "c = a[:, 2]\n"
      "print(" PY_WSUM ("b") ", " PY_WSUM ("c") ")\n",
      NULL);
  g_autofree char *out = NULL;
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (SvVolume) one = NULL;
  g_autofree guint32 *raw = NULL;
  g_autofree char *got = NULL;
  SvTiffReadOptions options;
  GError *error = NULL;
  char *note = NULL;
  gsize n;

  if (!sv_test_python_has ("numpy, tifffile"))
    {
      g_test_skip ("/usr/bin/python3 with numpy and tifffile is not available");
      return;
    }
  out = sv_test_python_args (code, path);
  if (out == NULL)
    return;
  v = sv_tiff_read_volume_full (path, NULL, &note, &error);
  g_assert_no_error (error);
  g_assert_null (note);
  g_assert_cmpuint (v->nz, ==, 5);
  g_assert_cmpuint (v->nc, ==, 3);
  sv_tiff_read_options_init_defaults (&options);
  options.channel = 2;
  one = sv_tiff_read_volume_full (path, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (one->nc, ==, 1);

  n = sv_volume_n_voxels (v) * 3;
  raw = g_new (guint32, n);
  for (gsize k = 0; k < n; k++)
    raw[k] = (guint32)lrint (v->data[k] * 65535.0);
  {
    guint64 all = weighted_sum_u32 (raw, n);
    for (gsize k = 0; k < sv_volume_n_voxels (one); k++)
      raw[k] = (guint32)lrint (one->data[k] * 65535.0);
    got = g_strdup_printf ("%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n", all,
                           weighted_sum_u32 (raw, sv_volume_n_voxels (one)));
  }
  g_assert_cmpstr (got, ==, out);
}

/* tifffile's imagej=True on a plain 3D array says "channels=N" and no
 * slices: that is read as N z slices, with a note. */
static void
test_imagej_plain_3d (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "zyx.tif");
  g_autofree char *code
      = g_strconcat (sv_test_tifffile_prelude,
                     "import sys\n"
                     "a = (numpy.arange(5 * 8 * 9) % 251).astype(numpy.uint8).reshape(5, 8, 9)\n"
                     "tifffile.imwrite(sys.argv[1], a, imagej=True)\n"
                     "with tifffile.TiffFile(sys.argv[1]) as t:\n"
                     "    print(t.pages[0].description.replace(chr(10), ' '))\n",
                     NULL);
  g_autofree char *out = NULL;
  g_autofree char *note = NULL;
  g_autoptr (SvVolume) v = NULL;
  SvTiffInfo info;
  GError *error = NULL;

  if (!sv_test_python_has ("numpy, tifffile"))
    {
      g_test_skip ("/usr/bin/python3 with numpy and tifffile is not available");
      return;
    }
  out = sv_test_python_args (code, path);
  if (out == NULL)
    return;
  /* What this test is about: channels without slices. */
  g_assert_nonnull (strstr (out, "channels=5"));
  g_assert_null (strstr (out, "slices="));
  v = sv_tiff_read_volume_full (path, NULL, &note, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (v->nz, ==, 5);
  g_assert_cmpuint (v->nc, ==, 1);
  for (gsize k = 0; k < sv_volume_n_voxels (v); k++)
    g_assert_cmpfloat (v->data[k], ==, (float)((double)(k % 251) * (1.0 / 255.0)));
  g_assert_nonnull (note);
  g_assert_nonnull (strstr (note, "read as 5 z slices"));
  g_assert_null (strchr (note, '\n'));

  g_assert_true (sv_tiff_info (path, &info, &error));
  g_assert_cmpuint (info.nz, ==, 5);
  g_assert_nonnull (info.note);
  sv_tiff_info_clear (&info);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  g_test_add_func ("/engine/io/codec/options", test_options);
  ADD ("/engine/io/codec/roundtrip-every-codec", test_roundtrip_every_codec);
  ADD ("/engine/io/codec/tifffile-reads-ours", test_tifffile_reads_ours);
  ADD ("/engine/io/codec/reads-tifffile-files", test_reads_tifffile_files);
  ADD ("/engine/io/imagej/tifffile-hyperstack", test_imagej_hyperstack);
  ADD ("/engine/io/imagej/tifffile-plain-3d", test_imagej_plain_3d);
#undef ADD

  return g_test_run ();
}

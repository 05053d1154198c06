/* Tests for engine/base/volume.c and engine/io-tiff.c. Every TIFF is made in the
 * test, with libtiff or by hand where the byte layout matters. */
#define G_LOG_DOMAIN "sv-test-io"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <tiffio.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-volume.h"
#include "sv-test-files.h"
#include "sv-test-python.h"

#ifdef __SANITIZE_ADDRESS__
/* The allocation-failure tests need malloc to return NULL under ASan too. */
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "allocator_may_return_null=1";
}
#endif

/* ------------------------------------------------------------------------ */
/* Fixture: a fresh temporary folder per test */

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  GError *error = NULL;

  f->dir = g_dir_make_tmp ("sv-test-io-XXXXXX", &error);
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

static guint
count_entries (const char *dir_path)
{
  GDir *dir = g_dir_open (dir_path, 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  g_dir_close (dir);
  return n;
}

/* ------------------------------------------------------------------------ */
/* Writing test files with libtiff */

typedef struct
{
  guint nz, ny, nx, spp;
  guint16 bps, format, planar, compression;
  guint32 tile;           /* tile edge; 0 for strips */
  guint32 rows_per_strip; /* 0: libtiff's default */
  gboolean bigtiff;
  const char *description; /* on the first page */
  double xres, yres;       /* 0: not written */
} TestTiff;

static guint
bytes_of (const TestTiff *t)
{
  return t->bps / 8;
}

/* `data` holds nz*ny*nx*spp samples, channel fastest. */
static void
write_test_tiff (const char *path, const TestTiff *t, const void *data)
{
  TIFF *tif = TIFFOpen (path, t->bigtiff ? "w8" : "w");
  guint b = bytes_of (t);
  gsize row = (gsize)t->nx * t->spp * b;
  gboolean separate = t->planar == PLANARCONFIG_SEPARATE;
  guint planes = separate ? t->spp : 1;

  g_assert_nonnull (tif);
  for (guint z = 0; z < t->nz; z++)
    {
      const guint8 *page = (const guint8 *)data + z * row * t->ny;
      g_autofree guint8 *plane = g_malloc0 ((gsize)t->ny * t->nx * b);

      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (guint32)t->nx);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (guint32)t->ny);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, (guint16)t->spp);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, t->bps);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, t->format);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC,
                    t->spp == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, t->planar ? t->planar : PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_COMPRESSION, t->compression ? t->compression : COMPRESSION_NONE);
      if (z == 0 && t->description)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, t->description);
      if (t->xres > 0)
        {
          TIFFSetField (tif, TIFFTAG_XRESOLUTION, t->xres);
          TIFFSetField (tif, TIFFTAG_YRESOLUTION, t->yres);
          TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
        }
      if (t->tile)
        {
          gsize tile_row = (gsize)t->tile * (separate ? 1 : t->spp) * b;
          g_autofree guint8 *tile = g_malloc (tile_row * t->tile);

          TIFFSetField (tif, TIFFTAG_TILEWIDTH, t->tile);
          TIFFSetField (tif, TIFFTAG_TILELENGTH, t->tile);
          for (guint p = 0; p < planes; p++)
            for (guint ty = 0; ty < t->ny; ty += t->tile)
              for (guint tx = 0; tx < t->nx; tx += t->tile)
                {
                  memset (tile, 0, tile_row * t->tile);
                  for (guint y = ty; y < MIN (ty + t->tile, t->ny); y++)
                    for (guint x = tx; x < MIN (tx + t->tile, t->nx); x++)
                      for (guint c = 0; c < (separate ? 1 : t->spp); c++)
                        {
                          guint ch = separate ? p : c;
                          memcpy (tile + (y - ty) * tile_row
                                      + ((x - tx) * (separate ? 1 : t->spp) + c) * b,
                                  page + y * row + ((gsize)x * t->spp + ch) * b, b);
                        }
                  g_assert_cmpint (
                      TIFFWriteEncodedTile (tif, TIFFComputeTile (tif, tx, ty, 0, (guint16)p), tile,
                                            (tmsize_t)(tile_row * t->tile)),
                      >=, 0);
                }
        }
      else
        {
          guint32 rps = t->rows_per_strip ? t->rows_per_strip : TIFFDefaultStripSize (tif, 0);
          guint32 per_plane = (t->ny + rps - 1) / rps;
          gsize plane_row = separate ? (gsize)t->nx * b : row;

          TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, rps);
          for (guint p = 0; p < planes; p++)
            {
              const guint8 *src = page;
              if (separate)
                {
                  for (gsize i = 0; i < (gsize)t->ny * t->nx; i++)
                    memcpy (plane + i * b, page + (i * t->spp + p) * b, b);
                  src = plane;
                }
              for (guint32 k = 0; k < per_plane; k++)
                {
                  guint32 rows = MIN (rps, t->ny - k * rps);
                  g_assert_cmpint (TIFFWriteEncodedStrip (tif, p * per_plane + k,
                                                          (void *)(src + k * rps * plane_row),
                                                          (tmsize_t)(rows * plane_row)),
                                   >=, 0);
                }
            }
        }
      g_assert_true (TIFFWriteDirectory (tif));
    }
  TIFFClose (tif);
}

/* ------------------------------------------------------------------------ */
/* Sample patterns and the expected img_as_float values */

typedef struct
{
  SvSampleType type;
  guint16 bps, format;
} TypeCase;

static const TypeCase type_cases[] = {
  { SV_SAMPLE_U8, 8, SAMPLEFORMAT_UINT },     { SV_SAMPLE_U16, 16, SAMPLEFORMAT_UINT },
  { SV_SAMPLE_U32, 32, SAMPLEFORMAT_UINT },   { SV_SAMPLE_I8, 8, SAMPLEFORMAT_INT },
  { SV_SAMPLE_I16, 16, SAMPLEFORMAT_INT },    { SV_SAMPLE_I32, 32, SAMPLEFORMAT_INT },
  { SV_SAMPLE_F32, 32, SAMPLEFORMAT_IEEEFP }, { SV_SAMPLE_F64, 64, SAMPLEFORMAT_IEEEFP },
};

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

/* Samples spread over the whole range of the type; the first two are the
 * type's minimum and maximum. */
static void *
make_pattern (SvSampleType type, gsize n)
{
  guint8 *buf = g_malloc (n * 8);

  for (gsize i = 0; i < n; i++)
    {
      guint32 h = hash32 ((guint32)i * 2654435761U + 12345);
      switch (type)
        {
        case SV_SAMPLE_U8:
          ((guint8 *)buf)[i] = i == 0 ? 0 : i == 1 ? G_MAXUINT8 : (guint8)h;
          break;
        case SV_SAMPLE_U16:
          ((guint16 *)buf)[i] = i == 0 ? 0 : i == 1 ? G_MAXUINT16 : (guint16)h;
          break;
        case SV_SAMPLE_U32:
          ((guint32 *)buf)[i] = i == 0 ? 0 : i == 1 ? G_MAXUINT32 : h;
          break;
        case SV_SAMPLE_I8:
          ((gint8 *)buf)[i] = i == 0 ? G_MININT8 : i == 1 ? G_MAXINT8 : (gint8)h;
          break;
        case SV_SAMPLE_I16:
          ((gint16 *)buf)[i] = i == 0 ? G_MININT16 : i == 1 ? G_MAXINT16 : (gint16)h;
          break;
        case SV_SAMPLE_I32:
          ((gint32 *)buf)[i] = i == 0 ? G_MININT32 : i == 1 ? G_MAXINT32 : (gint32)h;
          break;
        case SV_SAMPLE_F32:
          ((float *)buf)[i] = (float)((double)h / 4294967296.0 * 4.0 - 2.0);
          break;
        case SV_SAMPLE_F64:
          ((double *)buf)[i] = (double)h / 4294967296.0 * 1e6 - 5e5 + 1e-9 * i;
          break;
        default:
          g_assert_not_reached ();
        }
    }
  return buf;
}

/* scikit-image's img_as_float written out per type (dtype.py, 0.16+). */
static float
expected_float (SvSampleType type, const void *buf, gsize i)
{
  double v;

  switch (type)
    {
    case SV_SAMPLE_U8:
      return (float)(((const guint8 *)buf)[i] * (1.0 / 255.0));
    case SV_SAMPLE_U16:
      return (float)(((const guint16 *)buf)[i] * (1.0 / 65535.0));
    case SV_SAMPLE_U32:
      return (float)(((const guint32 *)buf)[i] * (1.0 / 4294967295.0));
    case SV_SAMPLE_I8:
      v = ((const gint8 *)buf)[i] * (1.0 / 127.0);
      return (float)fmax (v, -1.0);
    case SV_SAMPLE_I16:
      v = ((const gint16 *)buf)[i] * (1.0 / 32767.0);
      return (float)fmax (v, -1.0);
    case SV_SAMPLE_I32:
      v = ((const gint32 *)buf)[i] * (1.0 / 2147483647.0);
      return (float)fmax (v, -1.0);
    case SV_SAMPLE_F32:
      return ((const float *)buf)[i];
    case SV_SAMPLE_F64:
      return (float)((const double *)buf)[i];
    default:
      break;
    }
  g_assert_not_reached ();
}

static void
assert_volume_matches (const SvVolume *v, SvSampleType type, const void *raw, guint nz, guint ny,
                       guint nx, guint nc)
{
  gsize n = (gsize)nz * ny * nx * nc;

  g_assert_cmpuint (v->nz, ==, nz);
  g_assert_cmpuint (v->ny, ==, ny);
  g_assert_cmpuint (v->nx, ==, nx);
  g_assert_cmpuint (v->nc, ==, nc);
  g_assert_cmpint (v->source_type, ==, type);
  for (gsize i = 0; i < n; i++)
    if (memcmp (&v->data[i], &(float){ expected_float (type, raw, i) }, sizeof (float)) != 0)
      g_error ("voxel %" G_GSIZE_FORMAT ": got %.9g, expected %.9g (%s)", i, v->data[i],
               expected_float (type, raw, i), sv_sample_type_to_string (type));
}

/* ------------------------------------------------------------------------ */
/* Volumes */

static void
test_volume_new (void)
{
  GError *error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (3, 4, 5, 3, &error);
  g_autoptr (SvLabels) l = sv_labels_new (2, 3, 4, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (sv_volume_n_voxels (v), ==, 60);
  for (gsize i = 0; i < 180; i++)
    g_assert_cmpfloat (v->data[i], ==, 0.0f);
  g_assert_cmpfloat (v->spacing[0], ==, 1.0);
  g_assert_cmpfloat (v->spacing[2], ==, 1.0);
  g_assert_false (v->spacing_from_file);
  g_assert_null (v->unit);
  g_assert_cmpuint (sv_labels_n_voxels (l), ==, 24);
  for (gsize i = 0; i < 24; i++)
    g_assert_cmpint (l->data[i], ==, 0);
  g_assert_cmpstr (sv_sample_type_to_string (SV_SAMPLE_I16), ==, "int16");
}

static void
test_volume_too_large (void)
{
  GError *error = NULL;
  SvVolume *v = sv_volume_new (G_MAXUINT, G_MAXUINT, G_MAXUINT, 3, &error);
  SvLabels *l;

  g_assert_null (v);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY);
  g_clear_error (&error);
  /* 2^62 bytes do not overflow but cannot be allocated. */
  l = sv_labels_new (1u << 20, 1u << 20, 1u << 20, &error);
  g_assert_null (l);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY);
  g_clear_error (&error);
}

/* ------------------------------------------------------------------------ */
/* Round trips through files written with libtiff */

static void
roundtrip_one (Fixture *f, const TypeCase *tc, guint nz, guint spp, guint16 planar, guint32 tile,
               guint16 compression, gboolean bigtiff)
{
  g_autofree char *path = fixture_path (f, "in.tif");
  guint ny = 37, nx = 29;
  gsize n = (gsize)nz * ny * nx * spp;
  g_autofree void *raw = make_pattern (tc->type, n);
  TestTiff t = { .nz = nz,
                 .ny = ny,
                 .nx = nx,
                 .spp = spp,
                 .bps = tc->bps,
                 .format = tc->format,
                 .planar = planar,
                 .compression = compression,
                 .tile = tile,
                 .rows_per_strip = 5,
                 .bigtiff = bigtiff };
  GError *error = NULL;
  g_autoptr (SvVolume) v = NULL;
  SvTiffInfo info;

  write_test_tiff (path, &t, raw);
  v = sv_tiff_read_volume (path, &error);
  g_assert_no_error (error);
  assert_volume_matches (v, tc->type, raw, nz, ny, nx, spp);
  g_assert_false (v->spacing_from_file);
  g_assert_cmpfloat (v->spacing[0], ==, 1.0);

  g_assert_true (sv_tiff_info (path, &info, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (info.nz, ==, nz);
  g_assert_cmpuint (info.nc, ==, spp);
  g_assert_cmpint (info.sample_type, ==, tc->type);
  g_assert_cmpint (info.tiled, ==, tile != 0);
  g_assert_cmpint (info.bigtiff, ==, bigtiff);
  if (tc->format != SAMPLEFORMAT_IEEEFP)
    {
      /* The pattern starts with the type's minimum and maximum. */
      static const double mins[] = { 0, 0, 0, G_MININT8, G_MININT16, G_MININT32 };
      static const double maxs[]
          = { G_MAXUINT8, G_MAXUINT16, G_MAXUINT32, G_MAXINT8, G_MAXINT16, G_MAXINT32 };
      g_assert_cmpfloat (info.value_min, ==, mins[tc->type]);
      g_assert_cmpfloat (info.value_max, ==, maxs[tc->type]);
    }
  sv_tiff_info_clear (&info);
}

static void
test_roundtrip_types (Fixture *f, gconstpointer data)
{
  for (guint i = 0; i < G_N_ELEMENTS (type_cases); i++)
    for (guint spp = 1; spp <= 3; spp += 2)
      for (guint tiled = 0; tiled < 2; tiled++)
        {
          roundtrip_one (f, &type_cases[i], 3, spp, PLANARCONFIG_CONTIG, tiled ? 16 : 0,
                         COMPRESSION_NONE, FALSE);
          if (spp == 3)
            roundtrip_one (f, &type_cases[i], 3, spp, PLANARCONFIG_SEPARATE, tiled ? 16 : 0,
                           COMPRESSION_NONE, FALSE);
        }
}

static void
test_roundtrip_compressions (Fixture *f, gconstpointer data)
{
  static const guint16 compressions[]
      = { COMPRESSION_NONE, COMPRESSION_ADOBE_DEFLATE, COMPRESSION_LZW, COMPRESSION_PACKBITS };
  static const char *const names[] = { "none", "deflate", "lzw", "packbits" };
  g_autofree char *path = fixture_path (f, "in.tif");

  for (guint c = 0; c < G_N_ELEMENTS (compressions); c++)
    for (guint i = 0; i < G_N_ELEMENTS (type_cases); i++)
      for (guint tiled = 0; tiled < 2; tiled++)
        {
          SvTiffInfo info;
          GError *error = NULL;

          roundtrip_one (f, &type_cases[i], 2, 1, PLANARCONFIG_CONTIG, tiled ? 16 : 0,
                         compressions[c], FALSE);
          roundtrip_one (f, &type_cases[i], 2, 3, PLANARCONFIG_SEPARATE, tiled ? 16 : 0,
                         compressions[c], FALSE);
          g_assert_true (sv_tiff_info (path, &info, &error));
          g_assert_cmpstr (info.compression, ==, names[c]);
          sv_tiff_info_clear (&info);
        }
}

static void
test_read_bigtiff (Fixture *f, gconstpointer data)
{
  roundtrip_one (f, &type_cases[1], 4, 1, PLANARCONFIG_CONTIG, 0, COMPRESSION_ADOBE_DEFLATE, TRUE);
  roundtrip_one (f, &type_cases[6], 2, 3, PLANARCONFIG_CONTIG, 16, COMPRESSION_LZW, TRUE);
}

/* Single pages with 3 samples are 2D colour; with 1 sample 2D grey. */
static void
test_shapes (Fixture *f, gconstpointer data)
{
  roundtrip_one (f, &type_cases[0], 1, 3, PLANARCONFIG_CONTIG, 0, COMPRESSION_NONE, FALSE);
  roundtrip_one (f, &type_cases[0], 1, 1, PLANARCONFIG_CONTIG, 0, COMPRESSION_NONE, FALSE);
}

/* JPEG colour is stored as YCbCr; the reader must hand back RGB. */
static void
test_jpeg_ycbcr (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "photo.tif");
  guint ny = 32, nx = 48;
  g_autofree guint8 *rgb = g_malloc ((gsize)ny * nx * 3);
  g_autoptr (SvVolume) v = NULL;
  GError *error = NULL;
  TIFF *tif;

  if (!TIFFIsCODECConfigured (COMPRESSION_JPEG))
    {
      g_test_skip ("libtiff was built without JPEG");
      return;
    }
  /* Smooth colour ramps that JPEG keeps within a few levels. */
  for (guint y = 0; y < ny; y++)
    for (guint x = 0; x < nx; x++)
      {
        guint8 *p = rgb + ((gsize)y * nx + x) * 3;
        p[0] = (guint8)(40 + 4 * x);
        p[1] = (guint8)(200 - 5 * y);
        p[2] = 128;
      }
  tif = TIFFOpen (path, "w");
  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, nx);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, ny);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 3);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField (tif, TIFFTAG_COMPRESSION, COMPRESSION_JPEG);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_YCBCR);
  TIFFSetField (tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
  TIFFSetField (tif, TIFFTAG_JPEGQUALITY, 95);
  TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 16);
  for (guint s = 0; s < 2; s++)
    g_assert_cmpint (TIFFWriteEncodedStrip (tif, s, rgb + (gsize)s * 16 * nx * 3, 16 * nx * 3), >=,
                     0);
  TIFFClose (tif);

  v = sv_tiff_read_volume (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (v->nz, ==, 1);
  g_assert_cmpuint (v->nc, ==, 3);
  for (gsize i = 0; i < (gsize)ny * nx * 3; i++)
    g_assert_cmpfloat_with_epsilon (v->data[i], rgb[i] / 255.0, 6.0 / 255.0);
}

/* img_as_float values worked out by hand. */
static void
test_img_as_float_by_hand (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "v.tif");
  GError *error = NULL;
  struct
  {
    const TypeCase *tc;
    double value;
    float expected;
  } cases[] = {
    { &type_cases[0], 255, 1.0f },          { &type_cases[0], 51, 0.2f },
    { &type_cases[1], 65535, 1.0f },        { &type_cases[1], 0, 0.0f },
    { &type_cases[2], 4294967295.0, 1.0f }, { &type_cases[3], 0, 0.0f },
    { &type_cases[3], -128, -1.0f },        { &type_cases[3], 127, 1.0f },
    { &type_cases[4], -32768, -1.0f },      { &type_cases[4], -32767, -1.0f },
    { &type_cases[4], 32767, 1.0f },        { &type_cases[5], -2147483648.0, -1.0f },
    { &type_cases[7], 0.1, 0.1f },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint8 raw[8];
      TestTiff t = {
        .nz = 1, .ny = 1, .nx = 1, .spp = 1, .bps = cases[i].tc->bps, .format = cases[i].tc->format
      };
      g_autoptr (SvVolume) v = NULL;
      double d = cases[i].value;

      switch (cases[i].tc->type)
        {
        case SV_SAMPLE_U8:
          raw[0] = (guint8)d;
          break;
        case SV_SAMPLE_U16:
          *(guint16 *)raw = (guint16)d;
          break;
        case SV_SAMPLE_U32:
          *(guint32 *)raw = (guint32)d;
          break;
        case SV_SAMPLE_I8:
          *(gint8 *)raw = (gint8)d;
          break;
        case SV_SAMPLE_I16:
          *(gint16 *)raw = (gint16)d;
          break;
        case SV_SAMPLE_I32:
          *(gint32 *)raw = (gint32)d;
          break;
        case SV_SAMPLE_F32:
          *(float *)raw = (float)d;
          break;
        case SV_SAMPLE_F64:
          memcpy (raw, &d, 8);
          break;
        default:
          g_assert_not_reached ();
        }
      write_test_tiff (path, &t, raw);
      v = sv_tiff_read_volume (path, &error);
      g_assert_no_error (error);
      g_assert_cmpfloat (v->data[0], ==, cases[i].expected);
    }

  /* int16 64 is 64/32767, not (64 + 0.5) * 2 / 65535 (the rule before
   * scikit-image 0.16). */
  {
    gint16 raw = 64;
    TestTiff t = { .nz = 1, .ny = 1, .nx = 1, .spp = 1, .bps = 16, .format = SAMPLEFORMAT_INT };
    g_autoptr (SvVolume) v = NULL;
    write_test_tiff (path, &t, &raw);
    v = sv_tiff_read_volume (path, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (v->data[0], ==, (float)(64.0 / 32767.0));
    g_assert_cmpfloat (v->data[0], !=, (float)(64.5 * 2.0 / 65535.0));
  }
}

/* The same integer samples through our reader and through scikit-image's
 * img_as_float must give the same float32 bits. */
static void
test_img_as_float_matches_skimage (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "v.tif");

  if (!sv_test_python_has ("skimage"))
    {
      g_test_skip ("/usr/bin/python3 with scikit-image is not available");
      return;
    }
  for (guint i = 0; i < 6; i++)
    {
      const TypeCase *tc = &type_cases[i];
      gsize n = 64;
      g_autofree void *raw = make_pattern (tc->type, n);
      TestTiff t = { .nz = 1, .ny = 8, .nx = 8, .spp = 1, .bps = tc->bps, .format = tc->format };
      g_autoptr (SvVolume) v = NULL;
      GError *error = NULL;
      GString *values = g_string_new (NULL);
      g_autofree char *code = NULL;
      g_autofree char *out = NULL;
      g_auto (GStrv) words = NULL;

      write_test_tiff (path, &t, raw);
      v = sv_tiff_read_volume (path, &error);
      g_assert_no_error (error);
      for (gsize k = 0; k < n; k++)
        {
          gint64 s = 0;
          switch (tc->type)
            {
            case SV_SAMPLE_U8:
              s = ((guint8 *)raw)[k];
              break;
            case SV_SAMPLE_U16:
              s = ((guint16 *)raw)[k];
              break;
            case SV_SAMPLE_U32:
              s = ((guint32 *)raw)[k];
              break;
            case SV_SAMPLE_I8:
              s = ((gint8 *)raw)[k];
              break;
            case SV_SAMPLE_I16:
              s = ((gint16 *)raw)[k];
              break;
            case SV_SAMPLE_I32:
              s = ((gint32 *)raw)[k];
              break;
            default:
              g_assert_not_reached ();
            }
          g_string_append_printf (values, "%s%" G_GINT64_FORMAT, k ? "," : "", s);
        }
      code = g_strdup_printf ("import numpy as np, skimage.util as u\n"
                              "a = u.img_as_float(np.array([%s], dtype=np.%s)).astype(np.float32)\n"
                              "print(' '.join(repr(float(x)) for x in a))\n",
                              values->str, sv_sample_type_to_string (tc->type));
      g_string_free (values, TRUE);
      out = sv_test_python (code, NULL);
      words = g_strsplit (g_strstrip (out), " ", -1);
      g_assert_cmpuint (g_strv_length (words), ==, n);
      for (gsize k = 0; k < n; k++)
        {
          float expected = (float)g_ascii_strtod (words[k], NULL);
          if (v->data[k] != expected)
            g_error ("%s sample %" G_GSIZE_FORMAT ": got %.9g, scikit-image %.9g",
                     sv_sample_type_to_string (tc->type), k, v->data[k], expected);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Spacing metadata */

static void assert_read_fails (const char *path, gint code, const char *fragment);

static void
test_spacing_imagej_description (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "ij.tif");
  guint8 raw[3 * 4 * 5] = { 0 };
  TestTiff t = { .nz = 3,
                 .ny = 4,
                 .nx = 5,
                 .spp = 1,
                 .bps = 8,
                 .format = SAMPLEFORMAT_UINT,
                 .description
                 = "ImageJ=1.53t\nimages=3\nslices=3\nunit=\\u00B5m\nspacing=2.5\nloop=false\n",
                 .xres = 4.0,
                 .yres = 1.0 / 0.3 };
  GError *error = NULL;
  g_autoptr (SvVolume) v = NULL;
  SvTiffInfo info;

  write_test_tiff (path, &t, raw);
  v = sv_tiff_read_volume (path, &error);
  g_assert_no_error (error);
  g_assert_true (v->spacing_from_file);
  g_assert_cmpfloat (v->spacing[0], ==, 2.5);
  g_assert_cmpfloat (v->spacing[1], ==, 0.3);
  g_assert_cmpfloat (v->spacing[2], ==, 0.25);
  g_assert_cmpstr (v->unit, ==, "µm");

  g_assert_true (sv_tiff_info (path, &info, &error));
  g_assert_true (info.spacing_from_file);
  g_assert_cmpfloat (info.spacing[0], ==, 2.5);
  g_assert_cmpstr (info.unit, ==, "µm");
  sv_tiff_info_clear (&info);
}

/* Channels in pages (ImageJ order, channel fastest) become the volume's
 * last axis; --channel keeps one of them. */
static void
test_spacing_imagej_channels (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "ij.tif");
  guint8 raw[4 * 2 * 2];
  TestTiff t = { .nz = 4,
                 .ny = 2,
                 .nx = 2,
                 .spp = 1,
                 .bps = 8,
                 .format = SAMPLEFORMAT_UINT,
                 .description = "ImageJ=1.53t\nimages=4\nchannels=2\nslices=2\nhyperstack=true\n" };
  SvTiffReadOptions options;
  GError *error = NULL;
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (SvVolume) one = NULL;
  char *note = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (raw); i++)
    raw[i] = (guint8)(i * 10);
  write_test_tiff (path, &t, raw);
  v = sv_tiff_read_volume_full (path, NULL, &note, &error);
  g_assert_no_error (error);
  g_assert_null (note);
  g_assert_cmpuint (v->nz, ==, 2);
  g_assert_cmpuint (v->nc, ==, 2);
  /* Page p is slice p / 2, channel p % 2. */
  for (guint z = 0; z < 2; z++)
    for (guint i = 0; i < 4; i++)
      for (guint c = 0; c < 2; c++)
        g_assert_cmpfloat (v->data[(z * 4 + i) * 2 + c], ==,
                           (float)(raw[(z * 2 + c) * 4 + i] * (1.0 / 255.0)));

  sv_tiff_read_options_init_defaults (&options);
  options.channel = 1;
  one = sv_tiff_read_volume_full (path, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (one->nc, ==, 1);
  for (guint i = 0; i < 8; i++)
    g_assert_cmpfloat (one->data[i], ==, v->data[i * 2 + 1]);
  /* The window's copy of a channel is the reader's, value for value. */
  {
    g_autoptr (SvVolume) copy = sv_volume_extract_channel (v, 1, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (copy->nc, ==, 1);
    g_assert_cmpmem (copy->data, 8 * sizeof (float), one->data, 8 * sizeof (float));
    g_assert_cmpuint (copy->source_type, ==, one->source_type);
    g_assert_cmpfloat (copy->spacing[0], ==, one->spacing[0]);
    g_assert_null (sv_volume_extract_channel (v, 2, &error));
    g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
    g_assert_nonnull (strstr (error->message, "has 2 channels (0 to 1), not channel 2"));
    g_clear_error (&error);
  }

  options.channel = 2;
  g_assert_null (sv_tiff_read_volume_full (path, &options, NULL, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (error->message, "has 2 channels"));
  g_clear_error (&error);
  /* Labels need one channel. */
  g_assert_null (sv_tiff_read_labels (path, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT);
  g_clear_error (&error);
}

/* Time series without slices read as z; headers that promise more images
 * than there are pages, or OME channels in pages, are refused. */
static void
test_stack_layouts (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "layout.tif");
  guint8 raw[3 * 2 * 2] = { 0 };
  TestTiff t = { .nz = 3, .ny = 2, .nx = 2, .spp = 1, .bps = 8, .format = SAMPLEFORMAT_UINT };
  GError *error = NULL;

  t.description = "ImageJ=1.53t\nimages=3\nframes=3\nfinterval=0.5\n";
  write_test_tiff (path, &t, raw);
  {
    g_autoptr (SvVolume) v = sv_tiff_read_volume (path, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (v->nz, ==, 3);
  }
  t.description = "ImageJ=1.53t\nimages=6\nslices=3\nframes=2\n";
  write_test_tiff (path, &t, raw);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT, "time series of 3D stacks are not supported");
  t.description = "ImageJ=1.53t\nimages=5\nslices=5\n";
  write_test_tiff (path, &t, raw);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT, "announces 5 images but the file has 3 pages");
  t.description = "<?xml version=\"1.0\"?><OME><Image><Pixels SizeX=\"2\" SizeY=\"2\" SizeZ=\"1\" "
                  "SizeC=\"3\" SizeT=\"1\" PhysicalSizeX=\"0.5\"/></Image></OME>";
  write_test_tiff (path, &t, raw);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT,
                     "multi-channel OME-TIFF files are not supported");
}

static void
test_spacing_ome (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "ome.tif");
  guint16 raw[2 * 3 * 4] = { 0 };
  const char *xml
      = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\" "
        "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
        "xsi:schemaLocation=\"http://www.openmicroscopy.org/Schemas/OME/2016-06 "
        "http://www.openmicroscopy.org/Schemas/OME/2016-06/ome.xsd\">"
        "<Image ID=\"Image:0\" Name=\"brain\"><Pixels ID=\"Pixels:0\" DimensionOrder=\"XYZCT\" "
        "Type=\"uint16\" "
        "SizeX=\"4\" SizeY=\"3\" SizeZ=\"2\" SizeC=\"1\" SizeT=\"1\" PhysicalSizeX=\"0.65\" "
        "PhysicalSizeXUnit=\"µm\" PhysicalSizeY=\"0.7\" PhysicalSizeZ=\"2000\" "
        "PhysicalSizeZUnit=\"nm\">"
        "<Channel ID=\"Channel:0:0\" SamplesPerPixel=\"1\"/><TiffData IFD=\"0\" PlaneCount=\"2\"/>"
        "</Pixels></Image></OME>";
  TestTiff t = {
    .nz = 2, .ny = 3, .nx = 4, .spp = 1, .bps = 16, .format = SAMPLEFORMAT_UINT, .description = xml
  };
  GError *error = NULL;
  g_autoptr (SvVolume) v = NULL;

  write_test_tiff (path, &t, raw);
  v = sv_tiff_read_volume (path, &error);
  g_assert_no_error (error);
  g_assert_true (v->spacing_from_file);
  g_assert_cmpfloat_with_epsilon (v->spacing[0], 2.0, 1e-12);
  g_assert_cmpfloat (v->spacing[1], ==, 0.7); /* Y has no unit: OME's default, µm */
  g_assert_cmpfloat (v->spacing[2], ==, 0.65);
  g_assert_cmpstr (v->unit, ==, "µm");
}

static void
test_spacing_absent (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "plain.tif");
  guint8 raw[2 * 2 * 2] = { 0 };
  TestTiff t = { .nz = 2,
                 .ny = 2,
                 .nx = 2,
                 .spp = 1,
                 .bps = 8,
                 .format = SAMPLEFORMAT_UINT,
                 .description = "a plain description",
                 .xres = 72,
                 .yres = 72 };
  GError *error = NULL;
  g_autoptr (SvVolume) v = NULL;

  write_test_tiff (path, &t, raw);
  v = sv_tiff_read_volume (path, &error);
  g_assert_no_error (error);
  g_assert_false (v->spacing_from_file);
  for (guint a = 0; a < 3; a++)
    g_assert_cmpfloat (v->spacing[a], ==, 1.0);
  g_assert_null (v->unit);
}

/* ------------------------------------------------------------------------ */
/* Writing labels and volumes */

static SvLabels *
make_labels (guint nz, guint ny, guint nx, gint32 first)
{
  SvLabels *l = sv_labels_new (nz, ny, nx, NULL);

  for (gsize i = 0; i < sv_labels_n_voxels (l); i++)
    l->data[i] = (gint32)(hash32 ((guint32)i) % 1000);
  l->data[0] = first;
  l->data[1] = G_MAXINT32;
  return l;
}

static void
assert_tiff_tags (const char *path, guint16 format, guint expect_pages, gboolean bigtiff)
{
  TIFF *tif = TIFFOpen (path, "r");
  guint16 bps = 0, fmt = 0, compression = 0, predictor = 0;
  guint pages = 0;

  g_assert_nonnull (tif);
  g_assert_cmpint (TIFFIsBigTIFF (tif), ==, bigtiff);
  do
    {
      g_assert_true (TIFFGetField (tif, TIFFTAG_BITSPERSAMPLE, &bps));
      g_assert_true (TIFFGetField (tif, TIFFTAG_SAMPLEFORMAT, &fmt));
      g_assert_true (TIFFGetField (tif, TIFFTAG_COMPRESSION, &compression));
      TIFFGetFieldDefaulted (tif, TIFFTAG_PREDICTOR, &predictor);
      g_assert_cmpuint (bps, ==, 32);
      g_assert_cmpuint (fmt, ==, format);
      g_assert_cmpuint (compression, ==, COMPRESSION_ADOBE_DEFLATE);
      g_assert_cmpuint (predictor, ==, PREDICTOR_NONE);
      pages++;
    }
  while (TIFFReadDirectory (tif));
  TIFFClose (tif);
  g_assert_cmpuint (pages, ==, expect_pages);
}

static void
test_write_labels_uint32 (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "labels.tif");
  g_autoptr (SvLabels) l = make_labels (4, 50, 70, 0);
  g_autoptr (SvLabels) back = NULL;
  GError *error = NULL;

  l->spacing[0] = 2.0;
  l->spacing[1] = 0.3;
  l->spacing[2] = 0.1625;
  l->unit = g_strdup ("micron");
  g_assert_true (sv_tiff_write_labels (path, l, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_entries (f->dir), ==, 1);
  assert_tiff_tags (path, SAMPLEFORMAT_UINT, 4, FALSE);

  back = sv_tiff_read_labels (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->nz, ==, 4);
  g_assert_cmpuint (back->ny, ==, 50);
  g_assert_cmpuint (back->nx, ==, 70);
  g_assert_cmpmem (back->data, sv_labels_n_voxels (back) * 4, l->data, sv_labels_n_voxels (l) * 4);
  g_assert_cmpfloat (back->spacing[0], ==, 2.0);
  g_assert_cmpfloat (back->spacing[1], ==, 0.3);
  g_assert_cmpfloat (back->spacing[2], ==, 0.1625);
  g_assert_cmpstr (back->unit, ==, "micron");

  /* Writing again replaces the file and leaves nothing else behind. */
  g_assert_true (sv_tiff_write_labels (path, l, &error));
  g_assert_cmpuint (count_entries (f->dir), ==, 1);
}

static void
test_write_labels_int32 (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "labels.tif");
  g_autoptr (SvLabels) l = make_labels (3, 9, 11, -1);
  g_autoptr (SvLabels) back = NULL;
  GError *error = NULL;

  g_assert_true (sv_tiff_write_labels (path, l, &error));
  g_assert_no_error (error);
  assert_tiff_tags (path, SAMPLEFORMAT_INT, 3, FALSE);
  back = sv_tiff_read_labels (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (back->data[0], ==, -1);
  g_assert_cmpmem (back->data, sv_labels_n_voxels (back) * 4, l->data, sv_labels_n_voxels (l) * 4);
}

static void
test_write_labels_bigtiff (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "big.tif");
  g_autoptr (SvLabels) l = make_labels (2, 20, 30, 5);
  g_autoptr (SvLabels) back = NULL;
  GError *error = NULL;
  SvTiffInfo info;

  g_setenv ("SV_TIFF_FORCE_BIGTIFF", "1", TRUE);
  g_assert_true (sv_tiff_write_labels (path, l, &error));
  g_unsetenv ("SV_TIFF_FORCE_BIGTIFF");
  g_assert_no_error (error);
  assert_tiff_tags (path, SAMPLEFORMAT_UINT, 2, TRUE);
  g_assert_true (sv_tiff_info (path, &info, &error));
  g_assert_true (info.bigtiff);
  g_assert_cmpstr (info.compression, ==, "deflate");
  g_assert_cmpfloat (info.value_max, ==, G_MAXINT32);
  sv_tiff_info_clear (&info);
  back = sv_tiff_read_labels (path, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (back->data, sv_labels_n_voxels (back) * 4, l->data, sv_labels_n_voxels (l) * 4);
}

static void
test_read_labels_types (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "l.tif");
  GError *error = NULL;

  /* uint16 and int8 labels widen to gint32. */
  {
    guint16 raw[4] = { 0, 1, 65535, 7 };
    TestTiff t = { .nz = 1, .ny = 2, .nx = 2, .spp = 1, .bps = 16, .format = SAMPLEFORMAT_UINT };
    g_autoptr (SvLabels) l = NULL;
    write_test_tiff (path, &t, raw);
    l = sv_tiff_read_labels (path, &error);
    g_assert_no_error (error);
    g_assert_cmpint (l->data[2], ==, 65535);
  }
  {
    gint8 raw[2] = { -1, 100 };
    TestTiff t = { .nz = 2, .ny = 1, .nx = 1, .spp = 1, .bps = 8, .format = SAMPLEFORMAT_INT };
    g_autoptr (SvLabels) l = NULL;
    write_test_tiff (path, &t, raw);
    l = sv_tiff_read_labels (path, &error);
    g_assert_no_error (error);
    g_assert_cmpint (l->data[0], ==, -1);
    g_assert_cmpint (l->data[1], ==, 100);
  }
  /* uint32 above G_MAXINT32 does not fit. */
  {
    guint32 raw[2] = { 1, 3000000000u };
    TestTiff t = { .nz = 2, .ny = 1, .nx = 1, .spp = 1, .bps = 32, .format = SAMPLEFORMAT_UINT };
    SvLabels *l;
    write_test_tiff (path, &t, raw);
    l = sv_tiff_read_labels (path, &error);
    g_assert_null (l);
    g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
    g_assert_nonnull (strstr (error->message, "3000000000"));
    g_assert_nonnull (strstr (error->message, "page 2"));
    g_clear_error (&error);
  }
  /* Floats are not labels; neither are colour images. */
  {
    float raw[3] = { 1, 2, 3 };
    TestTiff t = { .nz = 1, .ny = 1, .nx = 3, .spp = 1, .bps = 32, .format = SAMPLEFORMAT_IEEEFP };
    TestTiff rgb = { .nz = 1, .ny = 1, .nx = 1, .spp = 3, .bps = 8, .format = SAMPLEFORMAT_UINT };
    guint8 raw_rgb[3] = { 1, 2, 3 };
    write_test_tiff (path, &t, raw);
    g_assert_null (sv_tiff_read_labels (path, &error));
    g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT);
    g_clear_error (&error);
    write_test_tiff (path, &rgb, raw_rgb);
    g_assert_null (sv_tiff_read_labels (path, &error));
    g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT);
    g_clear_error (&error);
  }
}

static void
test_read_mask (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "m.tif");
  GError *error = NULL;
  guint nz = 0, ny = 0, nx = 0;

  {
    guint16 raw[6] = { 0, 5, 65535, 0, 1, 0 };
    TestTiff t = { .nz = 2,
                   .ny = 1,
                   .nx = 3,
                   .spp = 1,
                   .bps = 16,
                   .format = SAMPLEFORMAT_UINT,
                   .compression = COMPRESSION_LZW };
    g_autofree guint8 *m = NULL;
    const guint8 expected[6] = { 0, 1, 1, 0, 1, 0 };
    write_test_tiff (path, &t, raw);
    m = sv_tiff_read_mask (path, &nz, &ny, &nx, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (nz, ==, 2);
    g_assert_cmpuint (ny, ==, 1);
    g_assert_cmpuint (nx, ==, 3);
    g_assert_cmpmem (m, 6, expected, 6);
  }
  {
    float raw[4] = { 0.0f, -0.0f, 0.5f, -2.0f };
    TestTiff t = { .nz = 1, .ny = 2, .nx = 2, .spp = 1, .bps = 32, .format = SAMPLEFORMAT_IEEEFP };
    g_autofree guint8 *m = NULL;
    const guint8 expected[4] = { 0, 0, 1, 1 };
    write_test_tiff (path, &t, raw);
    m = sv_tiff_read_mask (path, &nz, &ny, &nx, &error);
    g_assert_no_error (error);
    g_assert_cmpmem (m, 4, expected, 4);
  }
}

static void
test_write_volume (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "vol.tif");
  g_autoptr (SvVolume) v = sv_volume_new (2, 1, 3, 1, NULL);
  const float values[6] = { 0.0f, 0.5f, 1.0f, 1.25f, -0.1f, 0.2f };
  GError *error = NULL;

  memcpy (v->data, values, sizeof values);
  v->spacing[0] = 3.0;
  v->unit = g_strdup ("nm");
  {
    /* 0.5 * 255 = 127.5 rounds to even, 128; out-of-range values clamp. */
    const guint8 expected[6] = { 0, 128, 255, 255, 0, 51 };
    g_autoptr (SvVolume) back = NULL;
    g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U8, &error));
    g_assert_no_error (error);
    back = sv_tiff_read_volume (path, &error);
    g_assert_no_error (error);
    g_assert_cmpint (back->source_type, ==, SV_SAMPLE_U8);
    for (guint i = 0; i < 6; i++)
      g_assert_cmpfloat (back->data[i], ==, (float)(expected[i] * (1.0 / 255.0)));
    g_assert_cmpfloat (back->spacing[0], ==, 3.0);
    g_assert_cmpstr (back->unit, ==, "nm");
  }
  {
    const guint16 expected[6] = { 0, 32768, 65535, 65535, 0, 13107 };
    g_autoptr (SvVolume) back = NULL;
    g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U16, &error));
    back = sv_tiff_read_volume (path, &error);
    g_assert_no_error (error);
    g_assert_cmpint (back->source_type, ==, SV_SAMPLE_U16);
    for (guint i = 0; i < 6; i++)
      g_assert_cmpfloat (back->data[i], ==, (float)(expected[i] * (1.0 / 65535.0)));
  }
  {
    g_autoptr (SvVolume) back = NULL;
    g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_F32, &error));
    back = sv_tiff_read_volume (path, &error);
    g_assert_no_error (error);
    g_assert_cmpmem (back->data, sizeof values, values, sizeof values);
  }
  {
    g_autoptr (SvVolume) rgb = sv_volume_new (1, 2, 2, 3, NULL);
    g_autoptr (SvVolume) back = NULL;
    for (guint i = 0; i < 12; i++)
      rgb->data[i] = (float)i / 11.0f;
    g_assert_true (sv_tiff_write_volume (path, rgb, SV_SAMPLE_F32, &error));
    back = sv_tiff_read_volume (path, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (back->nz, ==, 1);
    g_assert_cmpuint (back->nc, ==, 3);
    g_assert_cmpmem (back->data, 12 * sizeof (float), rgb->data, 12 * sizeof (float));
  }
  g_assert_cmpuint (count_entries (f->dir), ==, 1);
}

static void
test_write_failures_leave_nothing (Fixture *f, gconstpointer data)
{
  g_autoptr (SvLabels) l = make_labels (2, 4, 4, 1);
  g_autofree char *missing_dir = fixture_path (f, "no-such-folder");
  g_autofree char *in_missing = g_build_filename (missing_dir, "labels.tif", NULL);
  g_autofree char *a_dir = fixture_path (f, "labels.tif");
  GError *error = NULL;

  /* A folder that does not exist. */
  g_assert_false (sv_tiff_write_labels (in_missing, l, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "labels.tif"));
  g_assert_nonnull (strstr (error->message, "No such file or directory"));
  g_clear_error (&error);
  g_assert_cmpuint (count_entries (f->dir), ==, 0);

  /* The output name is taken by a folder: the final rename fails after the
   * whole file was written, and the temporary file must go. */
  g_assert_cmpint (g_mkdir (a_dir, 0755), ==, 0);
  g_assert_false (sv_tiff_write_labels (a_dir, l, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
  g_clear_error (&error);
  g_assert_cmpuint (count_entries (f->dir), ==, 1);
  g_assert_cmpuint (count_entries (a_dir), ==, 0);

  /* A folder we may not write in (root may write anywhere). */
  if (geteuid () != 0)
    {
      g_autofree char *ro = fixture_path (f, "read-only");
      g_autofree char *target = g_build_filename (ro, "labels.tif", NULL);
      g_assert_cmpint (g_mkdir (ro, 0555), ==, 0);
      g_assert_false (sv_tiff_write_labels (target, l, &error));
      g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
      g_assert_nonnull (strstr (error->message, "Permission denied"));
      g_clear_error (&error);
      g_assert_cmpuint (count_entries (ro), ==, 0);
      g_chmod (ro, 0755);
    }
}

/* ------------------------------------------------------------------------ */
/* Bad input */

static void
assert_read_fails (const char *path, gint code, const char *fragment)
{
  GError *error = NULL;
  SvVolume *v = sv_tiff_read_volume (path, &error);
  SvTiffInfo info;

  g_assert_null (v);
  g_assert_error (error, SV_ENGINE_ERROR, code);
  g_test_message ("%s", error->message);
  if (strstr (error->message, fragment) == NULL)
    g_error ("message \"%s\" lacks \"%s\"", error->message, fragment);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_null (strchr (error->message, '\n'));
  g_clear_error (&error);

  g_assert_false (sv_tiff_info (path, &info, &error));
  g_assert_error (error, SV_ENGINE_ERROR, code);
  g_clear_error (&error);
  g_assert_null (sv_tiff_read_labels (path, &error));
  g_assert_error (error, SV_ENGINE_ERROR, code);
  g_clear_error (&error);
}

static void
test_bad_missing_empty_not_tiff (Fixture *f, gconstpointer data)
{
  g_autofree char *missing = fixture_path (f, "missing.tif");
  g_autofree char *empty = fixture_path (f, "empty.tif");
  g_autofree char *png = fixture_path (f, "picture.tif");
  g_autofree char *short_header = fixture_path (f, "short.tif");
  static const char png_bytes[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
  GError *error = NULL;

  assert_read_fails (missing, SV_ENGINE_ERROR_IO, "No such file or directory");
  g_assert_true (g_file_set_contents (empty, "", 0, &error));
  assert_read_fails (empty, SV_ENGINE_ERROR_FORMAT, "empty file");
  g_assert_true (g_file_set_contents (png, png_bytes, sizeof png_bytes - 1, &error));
  assert_read_fails (png, SV_ENGINE_ERROR_FORMAT, "not a TIFF file");
  g_assert_true (g_file_set_contents (short_header, "II*\0\x08", 5, &error));
  assert_read_fails (short_header, SV_ENGINE_ERROR_FORMAT, "truncated");
  assert_read_fails (f->dir, SV_ENGINE_ERROR_IO, "folder");
  g_assert_true (g_file_set_contents (short_header, "II*\0\x00\x10\0\0\0\0\0\0", 12, &error));
  assert_read_fails (short_header, SV_ENGINE_ERROR_FORMAT,
                     "truncated: page 1 starts beyond the end");
}

/* A deflate stream that does not decode: libtiff's own message ends up in
 * the GError, and nothing is printed. */
static void
test_bad_compressed_data (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "garbled.tif");

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDOUT);
      g_test_trap_assert_passed ();
      g_test_trap_assert_stderr ("");
      return;
    }

  {
    gsize n = 2 * 32 * 32;
    g_autofree void *raw = make_pattern (SV_SAMPLE_U16, n);
    TestTiff t = { .nz = 2,
                   .ny = 32,
                   .nx = 32,
                   .spp = 1,
                   .bps = 16,
                   .format = SAMPLEFORMAT_UINT,
                   .compression = COMPRESSION_ADOBE_DEFLATE,
                   .rows_per_strip = 32 };
    guint8 junk[16];
    guint64 offset;
    TIFF *tif;
    int fd;

    write_test_tiff (path, &t, raw);
    tif = TIFFOpen (path, "r");
    TIFFReadDirectory (tif);
    offset = TIFFGetStrileOffset (tif, 0);
    TIFFClose (tif);
    memset (junk, 0xA5, sizeof junk);
    fd = g_open (path, O_WRONLY, 0);
    g_assert_cmpint (pwrite (fd, junk, sizeof junk, (off_t)offset), ==, sizeof junk);
    close (fd);
    assert_read_fails (path, SV_ENGINE_ERROR_FORMAT, "cannot decode page 2: ");
  }
}

/* A file written by libtiff (data, then the page index) cut in the middle
 * of its last page loses that page's index. */
static void
test_bad_truncated_libtiff (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "cut.tif");
  gsize n = 3 * 64 * 64;
  g_autofree void *raw = make_pattern (SV_SAMPLE_U16, n);
  TestTiff t = { .nz = 3, .ny = 64, .nx = 64, .spp = 1, .bps = 16, .format = SAMPLEFORMAT_UINT };
  GStatBuf st;

  write_test_tiff (path, &t, raw);
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (truncate (path, st.st_size - 3000), ==, 0);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT,
                     "truncated: page 3 starts beyond the end of the file");
}

/* A little-endian classic TIFF written by hand with every page index first
 * and the pixel data after them, as ImageJ and tifffile lay files out. One
 * uncompressed strip per page unless told otherwise. */
typedef struct
{
  guint32 width, height;
  guint16 compression;
  guint32 claimed_bytes; /* StripByteCounts and bytes stored; 0: the whole page, or 64 compressed */
} HandPage;

static void
put16 (GByteArray *b, gsize at, guint16 v)
{
  b->data[at] = v & 0xff;
  b->data[at + 1] = v >> 8;
}

static void
put32 (GByteArray *b, gsize at, guint32 v)
{
  for (guint i = 0; i < 4; i++)
    b->data[at + i] = (v >> (8 * i)) & 0xff;
}

#define HAND_ENTRIES 9
#define HAND_IFD_SIZE (2 + HAND_ENTRIES * 12 + 4)
#define HAND_STRIP_OFFSET_VALUE(page) (8 + (page)*HAND_IFD_SIZE + 2 + 5 * 12 + 8)

/* Writes uint16 pages filled with their page number; returns the offset of
 * each page's data in `data_offsets`. */
static void
write_hand_tiff (const char *path, const HandPage *pages, guint n_pages, guint32 *data_offsets)
{
  g_autoptr (GByteArray) b = g_byte_array_new ();
  guint32 data_at = 8 + n_pages * HAND_IFD_SIZE;
  GError *error = NULL;

  g_byte_array_set_size (b, data_at);
  memset (b->data, 0, b->len);
  memcpy (b->data, "II*\0", 4);
  put32 (b, 4, 8);
  for (guint p = 0; p < n_pages; p++)
    {
      gsize ifd = 8 + p * HAND_IFD_SIZE;
      guint32 stored = pages[p].claimed_bytes ? pages[p].claimed_bytes
                       : pages[p].compression == COMPRESSION_NONE
                           ? pages[p].width * pages[p].height * 2
                           : 64;
      const guint32 entries[HAND_ENTRIES][3] = {
        { 256, 4, pages[p].width },
        { 257, 4, pages[p].height },
        { 258, 3, 16 },
        { 259, 3, pages[p].compression },
        { 262, 3, PHOTOMETRIC_MINISBLACK },
        { 273, 4, data_at },
        { 277, 3, 1 },
        { 278, 4, pages[p].height },
        { 279, 4, stored },
      };
      put16 (b, ifd, HAND_ENTRIES);
      for (guint e = 0; e < HAND_ENTRIES; e++)
        {
          gsize at = ifd + 2 + e * 12;
          put16 (b, at, (guint16)entries[e][0]);
          put16 (b, at + 2, (guint16)entries[e][1]);
          put32 (b, at + 4, 1);
          if (entries[e][1] == 3)
            put16 (b, at + 8, (guint16)entries[e][2]);
          else
            put32 (b, at + 8, entries[e][2]);
        }
      put32 (b, ifd + 2 + HAND_ENTRIES * 12, p + 1 < n_pages ? (guint32)(ifd + HAND_IFD_SIZE) : 0);
      data_offsets[p] = data_at;
      {
        gsize old = b->len;
        g_byte_array_set_size (b, old + stored);
        for (gsize i = 0; i < stored; i += 2)
          put16 (b, old + i, (guint16)(p + 1));
      }
      data_at += stored;
    }
  g_assert_true (g_file_set_contents (path, (const char *)b->data, b->len, &error));
}

static void
test_hand_tiff_reads (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "hand.tif");
  /* The large pages are single strips that libtiff chops into many. */
  HandPage pages[3] = { { 512, 256, COMPRESSION_NONE, 0 },
                        { 512, 256, COMPRESSION_NONE, 0 },
                        { 512, 256, COMPRESSION_NONE, 0 } };
  HandPage small[2] = { { 16, 8, COMPRESSION_NONE, 0 }, { 16, 8, COMPRESSION_NONE, 0 } };
  gsize page = 512 * 256;
  guint32 offsets[3];
  GError *error = NULL;

  for (guint k = 0; k < 2; k++)
    {
      g_autoptr (SvLabels) l = NULL;
      guint n = k == 0 ? 3 : 2;
      gsize per = k == 0 ? page : 128;
      write_hand_tiff (path, k == 0 ? pages : small, n, offsets);
      l = sv_tiff_read_labels (path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (l->nz, ==, n);
      for (gsize i = 0; i < n * per; i++)
        if (l->data[i] != (gint32)(i / per + 1))
          g_error ("voxel %" G_GSIZE_FORMAT ": %d", i, l->data[i]);
    }
}

/* With the page index first, a cut file still lists page 3, whose data
 * now runs past the end. */
static void
test_bad_truncated_data (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "brain.tif");
  HandPage pages[3] = { { 512, 256, COMPRESSION_NONE, 0 },
                        { 512, 256, COMPRESSION_NONE, 0 },
                        { 512, 256, COMPRESSION_NONE, 0 } };
  guint32 offsets[3];

  write_hand_tiff (path, pages, 3, offsets);
  g_assert_cmpint (truncate (path, offsets[2]), ==, 0);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT,
                     "truncated or corrupt: page 3 data starts at byte");
  /* Cut inside page 3: exactly 262144 - 1000 bytes are missing. */
  write_hand_tiff (path, pages, 3, offsets);
  g_assert_cmpint (truncate (path, offsets[2] + 1000), ==, 0);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT,
                     "truncated: page 3 needs 261144 bytes beyond the end of the file");
}

static void
patch32 (const char *path, gsize at, guint32 value)
{
  int fd = g_open (path, O_WRONLY, 0);
  guint8 bytes[4] = { value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff, value >> 24 };

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pwrite (fd, bytes, 4, (off_t)at), ==, 4);
  close (fd);
}

static void
test_bad_strip_offset (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "offset.tif");
  HandPage pages[2] = { { 32, 32, COMPRESSION_NONE, 0 }, { 32, 32, COMPRESSION_NONE, 0 } };
  guint32 offsets[2];

  write_hand_tiff (path, pages, 2, offsets);
  patch32 (path, HAND_STRIP_OFFSET_VALUE (1), 0x7ffffff0u);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT,
                     "page 2 data starts at byte 2147483632, beyond the end");
  /* An offset inside the file whose strip then runs past the end. */
  write_hand_tiff (path, pages, 2, offsets);
  patch32 (path, HAND_STRIP_OFFSET_VALUE (0), offsets[1] + 100);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT, "page 1 needs 100 bytes beyond the end");
}

/* Headers that claim far more image than the file holds are refused
 * before any allocation. */
static void
test_bad_huge_claims (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "huge.tif");
  guint32 offsets[1];
  HandPage raw_claim = { 100000, 100000, COMPRESSION_NONE, 64 };
  HandPage packed_claim = { 100000, 100000, COMPRESSION_ADOBE_DEFLATE, 0 };

  write_hand_tiff (path, &raw_claim, 1, offsets);
  /* libtiff replaces a single uncompressed strip's byte count by the one the
   * image size implies; either way the data runs past the end. */
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT,
                     "page 1 needs 19999999936 bytes beyond the end of the file");
  write_hand_tiff (path, &packed_claim, 1, offsets);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT,
                     "claims 20000000000 bytes of image but stores only 64");
}

static void
test_bad_page_sizes (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "sizes.tif");
  HandPage pages[3] = { { 512, 512, COMPRESSION_NONE, 0 },
                        { 512, 512, COMPRESSION_NONE, 0 },
                        { 510, 512, COMPRESSION_NONE, 0 } };
  guint32 offsets[3];

  write_hand_tiff (path, pages, 3, offsets);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT,
                     "slices have different sizes: page 3 is 510×512, page 1 is 512×512");
}

static void
test_bad_page_formats (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "formats.tif");
  TIFF *tif = TIFFOpen (path, "w");
  guint8 row8[4] = { 0 };
  guint16 row16[4] = { 0 };

  for (guint z = 0; z < 2; z++)
    {
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 4);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 1);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, z == 0 ? 8 : 16);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 1);
      TIFFWriteEncodedStrip (tif, 0, z == 0 ? (void *)row8 : (void *)row16, z == 0 ? 4 : 8);
      TIFFWriteDirectory (tif);
    }
  TIFFClose (tif);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT,
                     "slices have different sample formats: page 2 is 16-bit unsigned integer");
}

static void
test_bad_unsupported (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "rgba.tif");
  guint8 raw[4 * 4] = { 0 };
  TIFF *tif = TIFFOpen (path, "w");
  guint16 extra = EXTRASAMPLE_UNASSALPHA;

  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 2);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 2);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 4);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
  TIFFSetField (tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
  TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 2);
  TIFFWriteEncodedStrip (tif, 0, raw, sizeof raw);
  TIFFClose (tif);
  assert_read_fails (path, SV_ENGINE_ERROR_FORMAT, "4 samples per pixel are not supported");
}

/* ------------------------------------------------------------------------ */
/* Interoperability */

static void
test_interop_tifffile (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "labels.tif");
  g_autoptr (SvLabels) l = make_labels (3, 10, 12, 0);
  GError *error = NULL;
  g_autofree char *code = NULL;
  g_autofree char *out = NULL;
  g_autofree char *quoted = g_shell_quote (path);
  gint64 sum = 0;

  if (!sv_test_python_has ("tifffile"))
    {
      g_test_skip ("/usr/bin/python3 with tifffile is not available");
      return;
    }
  l->spacing[0] = 2.0;
  l->spacing[1] = 0.5;
  l->spacing[2] = 0.25;
  l->unit = g_strdup ("µm");
  g_assert_true (sv_tiff_write_labels (path, l, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < sv_labels_n_voxels (l); i++)
    sum += (gint64)l->data[i] * (gint64)(i % 7 + 1);

  code = g_strdup_printf (
      "import numpy as np, tifffile\n"
      "with tifffile.TiffFile(%s) as t:\n"
      "    a = t.asarray()\n"
      "    ij = t.imagej_metadata\n"
      "    p = t.pages[0]\n"
      "    xr = p.tags['XResolution'].value\n"
      "    yr = p.tags['YResolution'].value\n"
      "w = (np.arange(a.size) %% 7 + 1).reshape(a.shape)\n"
      "print(a.dtype, a.shape, int((a.astype(np.int64) * w).sum()), ij['spacing'], ij['unit'], "
      "ij['slices'],\n"
      "      round(xr[0] / xr[1], 6), round(yr[0] / yr[1], 6), p.compression.name)\n",
      quoted);
  out = sv_test_python (code, NULL);
  g_strstrip (out);
  {
    g_autofree char *expected = g_strdup_printf (
        "uint32 (3, 10, 12) %" G_GINT64_FORMAT " 2.0 micron 3 4.0 2.0 ADOBE_DEFLATE", sum);
    g_assert_cmpstr (out, ==, expected);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  g_test_add_func ("/engine/volume/new", test_volume_new);
  g_test_add_func ("/engine/volume/too-large", test_volume_too_large);
  ADD ("/engine/io/roundtrip/types", test_roundtrip_types);
  ADD ("/engine/io/roundtrip/compressions", test_roundtrip_compressions);
  ADD ("/engine/io/roundtrip/bigtiff", test_read_bigtiff);
  ADD ("/engine/io/roundtrip/2d-shapes", test_shapes);
  ADD ("/engine/io/roundtrip/jpeg-ycbcr", test_jpeg_ycbcr);
  ADD ("/engine/io/img-as-float/by-hand", test_img_as_float_by_hand);
  ADD ("/engine/io/img-as-float/matches-skimage", test_img_as_float_matches_skimage);
  ADD ("/engine/io/spacing/imagej-description", test_spacing_imagej_description);
  ADD ("/engine/io/spacing/imagej-channels", test_spacing_imagej_channels);
  ADD ("/engine/io/spacing/ome-xml", test_spacing_ome);
  ADD ("/engine/io/spacing/stack-layouts", test_stack_layouts);
  ADD ("/engine/io/spacing/absent", test_spacing_absent);
  ADD ("/engine/io/labels/write-uint32", test_write_labels_uint32);
  ADD ("/engine/io/labels/write-int32", test_write_labels_int32);
  ADD ("/engine/io/labels/write-bigtiff", test_write_labels_bigtiff);
  ADD ("/engine/io/labels/read-types", test_read_labels_types);
  ADD ("/engine/io/mask/nonzero", test_read_mask);
  ADD ("/engine/io/volume/write", test_write_volume);
  ADD ("/engine/io/write/failures-leave-nothing", test_write_failures_leave_nothing);
  ADD ("/engine/io/bad/missing-empty-not-tiff", test_bad_missing_empty_not_tiff);
  ADD ("/engine/io/bad/compressed-data", test_bad_compressed_data);
  ADD ("/engine/io/bad/hand-written-reads", test_hand_tiff_reads);
  ADD ("/engine/io/bad/truncated-libtiff", test_bad_truncated_libtiff);
  ADD ("/engine/io/bad/truncated-data", test_bad_truncated_data);
  ADD ("/engine/io/bad/strip-offset", test_bad_strip_offset);
  ADD ("/engine/io/bad/huge-claims", test_bad_huge_claims);
  ADD ("/engine/io/bad/page-sizes", test_bad_page_sizes);
  ADD ("/engine/io/bad/page-formats", test_bad_page_formats);
  ADD ("/engine/io/bad/unsupported", test_bad_unsupported);
  ADD ("/engine/io/interop/tifffile", test_interop_tifffile);
#undef ADD

  return g_test_run ();
}

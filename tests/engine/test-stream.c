/* Supervox tests: the streaming pieces against their in-memory
 * counterparts: the slab label writer (same bytes as the in-memory
 * writer), the slab reader (same values as the whole-volume reader) and the
 * windowed connectivity (same labels as sv_connectivity_enforce). */
#include <math.h>
#include <string.h>
#include <tiffio.h>

#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io.h"
#include "supervox/sv-params.h"
#include "supervox/sv-prepare.h"
#include "rng.h"
#include "stream-private.h"
#include "sv-test-files.h"

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-stream");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

/* Labels in runs along x with some negative ones when asked. */
static SvLabels *
make_labels (guint nz, guint ny, guint nx, gboolean negative, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  SvLabels *l = sv_labels_new (nz, ny, nx, &error);
  SvRng rng;

  g_assert_no_error (error);
  sv_rng_init (&rng, seed);
  for (gsize i = 0; i < sv_labels_n_voxels (l); i++)
    l->data[i] = i % 7 == 0 ? (gint32)sv_rng_below (&rng, 1000) : (gint32)(i / 5 % 300);
  if (negative)
    l->data[sv_labels_n_voxels (l) / 2] = -1;
  l->spacing[0] = 2.5;
  l->spacing[1] = l->spacing[2] = 0.5;
  l->unit = g_strdup ("micron");
  return l;
}

/* Writes `l` in slabs of `depth` slices with the options of `codec`. */
static void
write_in_slabs (const char *path, const SvLabels *l, guint depth, gboolean negative,
                const SvTiffWriteOptions *options)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvTiffLabelWriter) w = sv_tiff_label_writer_new (path, l->nz, l->ny, l->nx, negative,
                                                              l->spacing, l->unit, options, &error);
  const gsize plane = (gsize)l->ny * l->nx;

  g_assert_no_error (error);
  for (guint z0 = 0; z0 < l->nz; z0 += depth)
    {
      guint d = MIN (depth, l->nz - z0);
      g_assert_true (sv_tiff_label_writer_append (w, l->data + z0 * plane, d, &error));
      g_assert_no_error (error);
    }
  g_assert_true (sv_tiff_label_writer_finish (w, &error));
  g_assert_no_error (error);
}

static void
test_writer_same_bytes (Fixture *f, gconstpointer data)
{
  static const char *const codecs[] = { "deflate", "zstd:3", "lzw", "none" };
  static const guint depths[] = { 1, 2, 7, 100 };
  /* Pages of one strip and pages cut into strips (over 1 MiB). */
  static const guint shapes[][3] = { { 9, 13, 11 }, { 3, 700, 400 } };

  for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (int negative = 0; negative < 2; negative++)
      {
        g_autoptr (SvLabels) l
            = make_labels (shapes[s][0], shapes[s][1], shapes[s][2], negative, 7 + s);
        for (guint c = 0; c < G_N_ELEMENTS (codecs); c++)
          {
            g_autoptr (GError) error = NULL;
            g_autofree char *whole = g_build_filename (f->dir, "whole.tif", NULL);
            SvTiffWriteOptions options;

            sv_tiff_write_options_init_defaults (&options);
            g_assert_true (sv_tiff_write_options_parse (&options, codecs[c], &error));
            options.n_threads = 2;
            g_assert_true (sv_tiff_write_labels_full (whole, l, &options, &error));
            g_assert_no_error (error);
            for (guint d = 0; d < G_N_ELEMENTS (depths); d++)
              {
                g_autofree char *name = g_strdup_printf ("slabs-%u.tif", depths[d]);
                g_autofree char *path = g_build_filename (f->dir, name, NULL);
                write_in_slabs (path, l, depths[d], negative, &options);
                sv_test_assert_same_file (whole, path);
              }
          }
      }
}

static void
test_writer_refuses_negative (Fixture *f, gconstpointer data)
{
  g_autoptr (SvLabels) l = make_labels (4, 6, 5, TRUE, 3);
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (f->dir, "out.tif", NULL);
  g_autoptr (SvTiffLabelWriter) w
      = sv_tiff_label_writer_new (path, 4, 6, 5, FALSE, l->spacing, NULL, NULL, &error);
  g_autoptr (GDir) dir = NULL;

  g_assert_no_error (error);
  g_assert_true (sv_tiff_label_writer_append (w, l->data, 1, &error));
  g_assert_false (sv_tiff_label_writer_append (w, l->data + 30, 3, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_clear_pointer (&w, sv_tiff_label_writer_free);
  /* Nothing is left, not even the temporary file. */
  dir = g_dir_open (f->dir, 0, NULL);
  g_assert_null (g_dir_read_name (dir));
}

/* Slabs of every sample type read back as the whole-volume reader reads. */
static void
test_reader_slabs (Fixture *f, gconstpointer data)
{
  static const SvSampleType types[] = { SV_SAMPLE_U8, SV_SAMPLE_U16, SV_SAMPLE_F32 };
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (11, 9, 7, 3, &error);
  SvRng rng;

  g_assert_no_error (error);
  sv_rng_init (&rng, 11);
  for (gsize i = 0; i < sv_volume_n_voxels (v) * 3; i++)
    v->data[i] = (float)sv_rng_uniform (&rng);
  for (guint t = 0; t < G_N_ELEMENTS (types); t++)
    for (int channel = -1; channel < 3; channel += 2)
      {
        g_autofree char *path = g_build_filename (f->dir, "vol.tif", NULL);
        g_autoptr (SvVolume) whole = NULL;
        g_autoptr (SvTiffSlabReader) r = NULL;
        SvTiffReadOptions options;
        g_autofree guint8 *raw = NULL;
        g_autofree float *values = NULL;
        const SvTiffSlabInfo *info;
        gsize slice;

        g_assert_true (sv_tiff_write_volume (path, v, types[t], &error));
        g_assert_no_error (error);
        sv_tiff_read_options_init_defaults (&options);
        options.channel = channel;
        whole = sv_tiff_read_volume_full (path, &options, NULL, &error);
        g_assert_no_error (error);
        r = sv_tiff_slab_reader_open (path, &options, &error);
        g_assert_no_error (error);
        info = sv_tiff_slab_reader_info (r);
        g_assert_cmpuint (info->nz, ==, 11);
        g_assert_cmpuint (info->nc, ==, whole->nc);
        g_assert_cmpint (info->sample_type, ==, types[t]);
        slice = (gsize)9 * 7 * whole->nc;
        raw = g_malloc (3 * sv_tiff_slab_reader_slice_bytes (r));
        values = g_new (float, 3 * slice);
        for (guint z0 = 0; z0 < 11; z0 += 3)
          {
            guint z1 = MIN (z0 + 3, 11);
            g_assert_true (sv_tiff_slab_reader_read (r, z0, z1, raw, &error));
            g_assert_no_error (error);
            sv_tiff_samples_to_float (info->sample_type, raw, (z1 - z0) * slice, values);
            g_assert_true (
                memcmp (values, whole->data + z0 * slice, (z1 - z0) * slice * sizeof (float)) == 0);
          }
      }
}

/* v (values in [0, 1]) as a TIFF of `as`: one page a slice, samples
 * from the type's least value (at 0) to its greatest (at 1), F64 as they
 * are. The engine's writer knows U8, U16 and F32; the other types are
 * written here with libtiff. */
static void
write_volume_as (const char *path, const SvVolume *v, SvSampleType as)
{
  static const struct
  {
    SvSampleType as;
    guint16 bps, format;
    double lo, hi;
  } types[] = {
    { SV_SAMPLE_I8, 8, SAMPLEFORMAT_INT, G_MININT8, G_MAXINT8 },
    { SV_SAMPLE_I16, 16, SAMPLEFORMAT_INT, G_MININT16, G_MAXINT16 },
    { SV_SAMPLE_I32, 32, SAMPLEFORMAT_INT, G_MININT32, G_MAXINT32 },
    { SV_SAMPLE_U32, 32, SAMPLEFORMAT_UINT, 0, G_MAXUINT32 },
    { SV_SAMPLE_F64, 64, SAMPLEFORMAT_IEEEFP, 0, 1 },
  };
  const gsize values = (gsize)v->ny * v->nx * v->nc;
  g_autoptr (GError) error = NULL;
  g_autofree guint8 *page = NULL;
  TIFF *tif;
  guint t = 0;

  if (as == SV_SAMPLE_U8 || as == SV_SAMPLE_U16 || as == SV_SAMPLE_F32)
    {
      g_assert_true (sv_tiff_write_volume (path, v, as, &error));
      g_assert_no_error (error);
      return;
    }
  while (types[t].as != as)
    t++;
  page = g_malloc (values * types[t].bps / 8);
  tif = TIFFOpen (path, "w");
  g_assert_nonnull (tif);
  for (guint z = 0; z < v->nz; z++)
    {
      for (gsize i = 0; i < values; i++)
        {
          const double x
              = floor (types[t].lo + v->data[z * values + i] * (types[t].hi - types[t].lo));

          switch (as)
            {
            case SV_SAMPLE_I8:
              ((gint8 *)page)[i] = (gint8)x;
              break;
            case SV_SAMPLE_I16:
              ((gint16 *)page)[i] = (gint16)x;
              break;
            case SV_SAMPLE_I32:
              ((gint32 *)page)[i] = (gint32)x;
              break;
            case SV_SAMPLE_F64:
              ((double *)page)[i] = v->data[z * values + i];
              break;
            default:
              ((guint32 *)page)[i] = (guint32)x;
            }
        }
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, v->nx);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, v->ny);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, (guint16)v->nc);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, types[t].bps);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, types[t].format);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC,
                    v->nc == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, v->ny);
      TIFFSetField (tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
      g_assert_cmpint (TIFFWriteEncodedStrip (tif, 0, page, values * types[t].bps / 8), >=, 0);
      g_assert_true (TIFFWriteDirectory (tif));
    }
  TIFFClose (tif);
}

/* The streamed prepare gives sv_prepare's values, slab by slab, and its
 * max |value|: without smoothing (where the second pass is skipped), with a
 * halo, with Lab (in float32 for float32 files, in float64 for the others)
 * and with a mask that leaves NaN outside a float image and the type's
 * least value outside an integer one (whose first pass scans the samples
 * as they are), for every integer type. */
static void
test_image_matches_prepare (Fixture *f, gconstpointer data)
{
  static const struct
  {
    guint nz, nc;
    SvSampleType as;
    double sigma;
    gboolean mask;
    gboolean lab3d; /* convert2lab YES (AUTO converts 2D RGB only) */
  } cases[] = {
    { 13, 1, SV_SAMPLE_U8, 0.0, FALSE },      { 13, 1, SV_SAMPLE_F32, 0.0, TRUE },
    { 13, 1, SV_SAMPLE_U16, 1.5, FALSE },     { 9, 1, SV_SAMPLE_F32, 0.6, TRUE },
    { 1, 3, SV_SAMPLE_U8, 0.0, FALSE },       { 1, 3, SV_SAMPLE_U8, 1.0, FALSE },
    { 13, 1, SV_SAMPLE_U16, 0.0, TRUE },      { 7, 3, SV_SAMPLE_U8, 0.0, TRUE },
    { 13, 1, SV_SAMPLE_I8, 0.0, FALSE },      { 13, 1, SV_SAMPLE_I16, 0.0, TRUE },
    { 13, 1, SV_SAMPLE_I32, 0.0, TRUE },      { 11, 1, SV_SAMPLE_U32, 0.0, TRUE },
    { 1, 3, SV_SAMPLE_U16, 0.0, FALSE },      { 1, 3, SV_SAMPLE_F32, 0.0, TRUE },
    { 9, 3, SV_SAMPLE_F32, 0.0, TRUE, TRUE }, { 9, 3, SV_SAMPLE_U8, 0.0, TRUE, TRUE },
    { 9, 3, SV_SAMPLE_U16, 0.8, TRUE, TRUE }, { 9, 3, SV_SAMPLE_I16, 0.0, FALSE, TRUE },
    { 9, 3, SV_SAMPLE_F64, 0.0, TRUE, TRUE }, { 9, 3, SV_SAMPLE_F64, 1.0, FALSE, TRUE },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      const guint nz = cases[c].nz, ny = 17, nx = 15, nc = cases[c].nc;
      const gsize plane = (gsize)ny * nx;
      g_autoptr (GError) error = NULL;
      g_autoptr (SvVolume) v = sv_volume_new (nz, ny, nx, nc, &error);
      g_autoptr (SvVolume) read_back = NULL;
      g_autoptr (SvPrepared) whole = NULL;
      g_autofree guint8 *mask = NULL;
      g_autofree char *path = g_build_filename (f->dir, "image.tif", NULL);
      g_autofree char *mask_path = g_build_filename (f->dir, "mask.tif", NULL);
      SvSlicParams params;
      SvRng rng;

      g_assert_no_error (error);
      sv_rng_init (&rng, 100 + c);
      for (gsize i = 0; i < plane * nz * nc; i++)
        v->data[i] = (float)(0.2 + 0.6 * sv_rng_uniform (&rng));
      /* The extremes among the last values, after the statistics pass's
       * whole blocks: the scan's tail must see them. */
      v->data[plane * nz * nc - 1] = 0.05f;
      v->data[plane * nz * nc - 2] = 0.95f;
      if (cases[c].mask)
        {
          mask = g_new (guint8, plane * nz);
          for (gsize i = 0; i < plane * nz; i++)
            mask[i] = i % 5 != 0;
          /* Outside the mask a NaN, which the rescale zeroes, or the
           * least value: neither may count. */
          for (guint k = 0; k < nc; k++)
            v->data[5 * nc + k]
                = cases[c].as == SV_SAMPLE_F32 || cases[c].as == SV_SAMPLE_F64 ? NAN : 0.0f;
        }
      write_volume_as (path, v, cases[c].as);
      read_back = sv_tiff_read_volume (path, &error);
      g_assert_no_error (error);
      sv_slic_params_init_defaults (&params);
      params.sigma[0] = cases[c].sigma;
      if (cases[c].lab3d)
        params.convert2lab = SV_CONVERT2LAB_YES;
      whole = sv_prepare (read_back, mask, &params, 2, &error);
      g_assert_no_error (error);
      g_assert_cmpint (whole->is_lab, ==, nc == 3 && (nz == 1 || cases[c].lab3d));

      /* The mask as bytes in memory, and as a 16-bit file read in slabs. */
      if (mask != NULL)
        {
          g_autoptr (SvVolume) m = sv_volume_new (nz, ny, nx, 1, &error);
          for (gsize i = 0; i < plane * nz; i++)
            m->data[i] = mask[i] ? 7.0f : 0.0f;
          g_assert_true (sv_tiff_write_volume (mask_path, m, SV_SAMPLE_U16, &error));
          g_assert_no_error (error);
        }
      for (guint run = 0; run < (mask != NULL ? 4u : 2u); run++)
        {
          const guint depth = run % 2 == 0 ? 1 : 5;
          const gboolean from_file = run >= 2;
          g_autoptr (SvTiffSlabReader) r = sv_tiff_slab_reader_open (path, NULL, &error);
          const gsize sample_bytes = sv_tiff_slab_reader_slice_bytes (r) / (plane * nc);
          /* Samples narrower than float32 are kept as they are, and
           * prepared again, unless Lab or smoothing comes between. */
          const gboolean samples = !whole->is_lab && cases[c].sigma == 0.0 && sample_bytes < 4;
          SvStreamImage img;
          SvStreamMask m;

          g_assert_no_error (error);
          g_assert_true (sv__stream_mask_open (
              &m, from_file ? NULL : mask, from_file ? mask_path : NULL, NULL, NULL, nz, ny, nx, 2,
              &error));
          g_assert_no_error (error);
          /* Room in host memory for two slabs: the others are kept in the
           * temporary file, and the second pass reads neither the image
           * file nor smooths again. */
          g_assert_true (sv__stream_image_init (
              &img, r, &m, &params, depth + 1, depth, 2, run % 2 == 0,
              2 * (guint64)depth * plane * nc * (samples ? sample_bytes : sizeof (float)), path,
              NULL, &error));
          g_assert_no_error (error);
          g_assert_cmpfloat (img.max_abs, ==, whole->max_abs);
          g_assert_cmpint (img.lab64, ==, whole->is_lab && cases[c].as != SV_SAMPLE_F32);
          g_assert_cmpint (img.keep_samples, ==, samples);
          for (guint pass = 0; pass < 2; pass++)
            {
              const guint64 read_before = img.slices_read;

              for (guint z0 = 0; z0 < nz; z0 += depth)
                {
                  guint z1 = MIN (z0 + depth, nz);
                  const float *slab = sv__stream_image_slab (&img, z0, z1, &error);
                  g_assert_no_error (error);
                  g_assert_true (memcmp (slab, whole->data + z0 * plane * nc,
                                         (z1 - z0) * plane * nc * sizeof (float))
                                 == 0);
                  g_assert_true (sv__stream_image_keep (&img, z0, z1, &error));
                  g_assert_no_error (error);
                }
              if (pass == 1)
                g_assert_cmpuint (img.slices_read, ==, read_before);
            }
          g_assert_cmpuint (img.kept_bytes + sv__spill_host_bytes (img.prepared), ==,
                            MIN (2 * depth, nz) * plane * nc
                                * (samples ? sample_bytes : sizeof (float)));
          if ((nz + depth - 1) / depth > 2)
            g_assert_cmpuint (sv__spill_file_bytes (img.prepared), >, 0);
          sv__stream_image_clear (&img);
          sv__stream_mask_clear (&m);
        }
    }
}

/* Input labels of blocks that wander along z, with single voxels and thin
 * bridges, so that pieces are split, merged and cross many slices. */
static gint32 *
make_slic_labels (guint nz, guint ny, guint nx, gboolean background, guint64 seed)
{
  gint32 *in = g_new (gint32, (gsize)nz * ny * nx);
  SvRng rng;

  sv_rng_init (&rng, seed);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        {
          gsize v = ((gsize)z * ny + y) * nx + x;
          gint32 l = (gint32)((z / 4) * 100 + ((y + z) / 5) * 10 + (x + z / 2) / 6) + 1;
          if (sv_rng_below (&rng, 9) == 0)
            l = (gint32)((z / 4) * 100 + sv_rng_below (&rng, 40)) + 1;
          if (background && (x + 2 * y + 3 * z) % 17 == 0)
            l = 0;
          in[v] = l;
        }
  return in;
}

static void
test_connectivity_window (Fixture *f, gconstpointer data)
{
  static const guint shapes[][3] = { { 1, 30, 40 }, { 17, 21, 19 }, { 30, 9, 11 } };
  static const gint64 sizes[][2] = { { 0, 1000000 }, { 8, 40 }, { 30, 60 }, { 3, 9 }, { 100, 5 } };

  for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (guint c = 0; c < G_N_ELEMENTS (sizes); c++)
      for (int background = 0; background < 2; background++)
        {
          const guint nz = shapes[s][0], ny = shapes[s][1], nx = shapes[s][2];
          const gsize plane = (gsize)ny * nx, n = nz * plane;
          g_autofree gint32 *in = make_slic_labels (nz, ny, nx, background, s * 10 + c);
          g_autofree gint32 *expected = g_new (gint32, n);
          /* Both rules, on every shape and size. */
          const SvConnectivityRule rule
              = (s + c + background) % 2 ? SV_CONNECTIVITY_RULE_LEGACY : SV_CONNECTIVITY_RULE_CONNECTED;
          g_autofree char *out = g_build_filename (f->dir, "cc.tif", NULL);
          g_autofree char *beside = g_build_filename (f->dir, "x.tif", NULL);
          g_autoptr (GHashTable) zmin = g_hash_table_new (NULL, NULL);
          g_autoptr (GError) error = NULL;
          g_autoptr (SvLabels) got = NULL;
          guint extent = 0;
          gint64 n_expected;

          n_expected
              = sv_connectivity_enforce (in, nz, ny, nx, sizes[c][0], sizes[c][1], 1, rule, expected);
          /* The window the streamed run takes: the largest z extent of one
           * label, plus 3. */
          for (gsize v = 0; v < n; v++)
            {
              gpointer key = GINT_TO_POINTER (in[v]);
              guint z = (guint)(v / plane);
              if (in[v] == 0)
                continue;
              if (!g_hash_table_contains (zmin, key))
                g_hash_table_insert (zmin, key, GUINT_TO_POINTER (z));
              extent = MAX (extent, z - GPOINTER_TO_UINT (g_hash_table_lookup (zmin, key)));
            }
          for (guint depth = 1; depth <= 7; depth += 6)
            {
              /* With slabs of 7, slices 2 to 4 are held in memory. */
              g_autoptr (SvSpill) spill
                  = sv__spill_new (beside, "labels", nz, plane * sizeof (gint32),
                                   depth == 7 ? 2 : 0, depth == 7 ? 3 : 0, &error);
              g_autoptr (SvTiffLabelWriter) w = NULL;
              double spacing[3] = { 1, 1, 1 };
              gint64 n_labels;

              g_assert_no_error (error);
              g_assert_true (sv__spill_write (spill, 0, nz, in, &error));
              w = sv_tiff_label_writer_new (out, nz, ny, nx, FALSE, spacing, NULL, NULL, &error);
              g_assert_no_error (error);
              n_labels
                  = sv__stream_connectivity (sv__spill_source, spill, nz, ny, nx, extent + 3,
                                             sizes[c][0], sizes[c][1], 1, rule, w, depth, NULL,
                                             &error);
              g_assert_no_error (error);
              g_assert_cmpint (n_labels, ==, n_expected);
              g_assert_true (sv_tiff_label_writer_finish (w, &error));
              got = sv_tiff_read_labels (out, &error);
              g_assert_no_error (error);
              g_assert_true (memcmp (got->data, expected, n * sizeof (gint32)) == 0);
              g_clear_pointer (&got, sv_labels_free);
            }
        }
}

/* The labels of make_slic_labels, a slice at a time, failing at slice
 * `fail_at`. */
typedef struct
{
  const gint32 *labels;
  gsize plane;
  guint fail_at;
} FailingSource;

static gboolean
failing_source (guint z0, guint z1, gint32 *labels, gpointer user_data, GError **error)
{
  const FailingSource *s = user_data;

  if (z1 > s->fail_at)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "slice %u cannot be read", z0);
      return FALSE;
    }
  memcpy (labels, s->labels + (gsize)z0 * s->plane, (gsize)(z1 - z0) * s->plane * sizeof (gint32));
  return TRUE;
}

/* A source that fails, or a writer that refuses a slab (an unsigned file
 * gets the background label −1), ends the window's pass with that error,
 * whichever thread the writer runs on, and nothing hangs. */
static void
test_connectivity_errors (Fixture *f, gconstpointer data)
{
  const guint nz = 30, ny = 9, nx = 11;
  g_autofree gint32 *in = make_slic_labels (nz, ny, nx, FALSE, 7);
  g_autofree gint32 *from_0 = make_slic_labels (nz, ny, nx, TRUE, 7);

  /* Labels from 0 with background −1: start label 0. */
  for (gsize v = 0; v < (gsize)nz * ny * nx; v++)
    from_0[v]--;
  g_autofree char *out = g_build_filename (f->dir, "cc.tif", NULL);
  double spacing[3] = { 1, 1, 1 };

  for (guint depth = 1; depth <= 4; depth += 3)
    {
      FailingSource source = { in, (gsize)ny * nx, 17 };
      g_autoptr (GError) error = NULL;
      g_autoptr (SvTiffLabelWriter) w
          = sv_tiff_label_writer_new (out, nz, ny, nx, FALSE, spacing, NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_cmpint (sv__stream_connectivity (failing_source, &source, nz, ny, nx, nz, 3, 60, 1,
                                                SV_CONNECTIVITY_RULE_CONNECTED, w, depth, NULL,
                                                &error),
                       ==, -1);
      g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
    }
  for (guint depth = 1; depth <= 4; depth += 3)
    {
      FailingSource source = { from_0, (gsize)ny * nx, G_MAXUINT };
      g_autoptr (GError) error = NULL;
      g_autoptr (SvTiffLabelWriter) w
          = sv_tiff_label_writer_new (out, nz, ny, nx, FALSE, spacing, NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_cmpint (sv__stream_connectivity (failing_source, &source, nz, ny, nx, nz, 3, 60, 0,
                                                SV_CONNECTIVITY_RULE_CONNECTED, w, depth, NULL,
                                                &error),
                       ==, -1);
      g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
    }
}

/* Slab sizes: what fits in the limit beside the fixed part, at least one
 * slice and at most the volume, and never past the slab target even when
 * the limit is all of a large machine's memory (a 2048³ uint8 volume's
 * 56 MiB slices under 120 GiB once made slabs of 1200 slices, and the
 * process ran out of memory). */
static void
test_slab_depth (void)
{
  const guint64 mib = 1 << 20, gib = mib << 10;

  g_assert_cmpuint (sv__stream_depth_within (10 * mib, 6 * mib, 106 * mib, 2048), ==, 10);
  g_assert_cmpuint (sv__stream_depth_within (10 * mib, 6 * mib, 1 * mib, 2048), ==, 1);
  g_assert_cmpuint (sv__stream_depth_within (10 * mib, 6 * mib, 0, 2048), ==,
                    (gib - 6 * mib) / (10 * mib));
  g_assert_cmpuint (sv__stream_depth_within (1024, 0, 100 * mib, 30), ==, 30);
  g_assert_cmpuint (sv__stream_depth_within (56 * mib, 300 * mib, 120 * gib, 2048), ==,
                    SV_STREAM_SLAB_TARGET_BYTES / (56 * mib));
  g_assert_cmpuint (sv__stream_depth_within (56 * mib, 300 * mib, 120 * gib, 2048) * 56 * mib, <=,
                    SV_STREAM_SLAB_TARGET_BYTES);
  /* A single slice past the target is still one slice. */
  g_assert_cmpuint (sv__stream_depth_within (8 * gib, 0, 120 * gib, 4), ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, func) g_test_add ((path), Fixture, NULL, fixture_setup, (func), fixture_teardown)
  ADD ("/engine/stream/writer/same-bytes-as-in-memory", test_writer_same_bytes);
  ADD ("/engine/stream/writer/refuses-negative", test_writer_refuses_negative);
  ADD ("/engine/stream/reader/slabs-match-volume", test_reader_slabs);
  ADD ("/engine/stream/image/slabs-match-prepare", test_image_matches_prepare);
  ADD ("/engine/stream/connectivity/window-matches-whole", test_connectivity_window);
  ADD ("/engine/stream/connectivity/errors-end-the-pass", test_connectivity_errors);
#undef ADD
  g_test_add_func ("/engine/stream/sizing/slab-depth", test_slab_depth);
  return g_test_run ();
}

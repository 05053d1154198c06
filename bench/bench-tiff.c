/* bench-tiff: write and read speed and compressed size of label and image
 * TIFFs per codec and level (not a test; see bench/README.md).
 *
 * Data: SLIC labels of an N³ cell phantom (uint32, made in-process with the
 * CPU backend unless --labels gives a file) and the phantom itself as
 * uint16. Every case is written with sv_tiff_write_*_full (threads,
 * temporary file, fsync, rename: what supervox-cli does) and read back with
 * the engine's reader from the page cache; the reference row is libtiff's
 * own deflate at zlib level 6 on one thread, as the writer did before. */
#define G_LOG_DOMAIN "sv-bench"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <tiffio.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-io.h"
#include "supervox/sv-params.h"
#include "supervox/sv-synth.h"

typedef struct
{
  const char *name;
  SvTiffCompression compression;
  int level;
  SvTiffPredictor predictor;
  gboolean libtiff_reference; /* libtiff's zlib, level 6, one thread */
} Case;

static const Case cases[] = {
  { "none", SV_TIFF_COMPRESSION_NONE, 0, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "deflate:1", SV_TIFF_COMPRESSION_DEFLATE, 1, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "deflate:1+pred", SV_TIFF_COMPRESSION_DEFLATE, 1, SV_TIFF_PREDICTOR_HORIZONTAL, FALSE },
  { "deflate:2", SV_TIFF_COMPRESSION_DEFLATE, 2, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "deflate:3", SV_TIFF_COMPRESSION_DEFLATE, 3, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "deflate:4", SV_TIFF_COMPRESSION_DEFLATE, 4, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "deflate:6", SV_TIFF_COMPRESSION_DEFLATE, 6, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "deflate:6+pred", SV_TIFF_COMPRESSION_DEFLATE, 6, SV_TIFF_PREDICTOR_HORIZONTAL, FALSE },
  { "zstd:1", SV_TIFF_COMPRESSION_ZSTD, 1, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "zstd:1+pred", SV_TIFF_COMPRESSION_ZSTD, 1, SV_TIFF_PREDICTOR_HORIZONTAL, FALSE },
  { "zstd:3", SV_TIFF_COMPRESSION_ZSTD, 3, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "zstd:3+pred", SV_TIFF_COMPRESSION_ZSTD, 3, SV_TIFF_PREDICTOR_HORIZONTAL, FALSE },
  { "zstd:9", SV_TIFF_COMPRESSION_ZSTD, 9, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "lzw", SV_TIFF_COMPRESSION_LZW, 0, SV_TIFF_PREDICTOR_NONE, FALSE },
  { "lzw+pred", SV_TIFF_COMPRESSION_LZW, 0, SV_TIFF_PREDICTOR_HORIZONTAL, FALSE },
  { "libtiff zlib:6", SV_TIFF_COMPRESSION_DEFLATE, 6, SV_TIFF_PREDICTOR_NONE, TRUE },
  { "libtiff zlib:6+pred", SV_TIFF_COMPRESSION_DEFLATE, 6, SV_TIFF_PREDICTOR_HORIZONTAL, TRUE },
};

static double
now (void)
{
  return (double)g_get_monotonic_time () / G_USEC_PER_SEC;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
median (double *v, guint n)
{
  qsort (v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* libtiff alone, one strip per page (pages here are 256 KiB or less),
 * 32-bit labels or 16-bit image samples. */
static gboolean
write_libtiff (const char *path, const void *data, guint nz, guint ny, guint nx, guint bytes,
               gboolean predictor)
{
  TIFF *tif = TIFFOpen (path, "w");
  gsize page = (gsize)ny * nx * bytes;
  g_autofree guint8 *buf = g_malloc (page);

  if (tif == NULL)
    return FALSE;
  for (guint z = 0; z < nz; z++)
    {
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (guint32)nx);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (guint32)ny);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, bytes * 8);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
      TIFFSetField (tif, TIFFTAG_ZIPQUALITY, 6);
      TIFFSetField (tif, TIFFTAG_PREDICTOR, predictor ? PREDICTOR_HORIZONTAL : PREDICTOR_NONE);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, (guint32)ny);
      /* libtiff may difference the buffer in place. */
      memcpy (buf, (const guint8 *)data + z * page, page);
      if (TIFFWriteEncodedStrip (tif, 0, buf, (tmsize_t)page) < 0 || !TIFFWriteDirectory (tif))
        {
          TIFFClose (tif);
          return FALSE;
        }
    }
  TIFFClose (tif);
  return TRUE;
}

typedef struct
{
  const char *data_name;
  const Case *c;
  double write_s, read_s;
  guint64 raw_bytes, file_bytes;
} Row;

static SvLabels *
make_labels (const SvVolume *volume, int n_threads, GError **error)
{
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", error);
  g_autoptr (SvLabels) labels = NULL;
  SvSlicParams params;
  SvRunControl control = { .n_threads = n_threads, .stop_after_iteration = -1 };
  SvRunStats stats = { 0 };

  if (backend == NULL)
    return NULL;
  sv_slic_params_init_defaults (&params);
  /* As bench-cpu.py at 256³: 16000 segments. */
  params.n_segments = (gint64)volume->nz * volume->ny * volume->nx / 1048;
  labels = sv_labels_new (volume->nz, volume->ny, volume->nx, error);
  if (labels == NULL || !sv_backend_set_volume (backend, volume, NULL, error)
      || !sv_backend_run (backend, &params, &control, &stats, error)
      || !sv_backend_get_labels (backend, labels->data, error))
    return NULL;
  return g_steal_pointer (&labels);
}

/* One case on labels (image NULL) or on the uint16 image; all repeats. */
static gboolean
run_case (const char *dir, const Case *c, const SvLabels *labels, const SvVolume *image,
          const guint16 *image_u16, guint repeats, int n_threads, Row *row, GError **error)
{
  g_autofree char *path = g_build_filename (dir, "bench-tiff.tif", NULL);
  g_autofree double *w = g_new (double, repeats);
  g_autofree double *r = g_new (double, repeats);
  SvTiffWriteOptions options = { .compression = c->compression,
                                 .level = c->level,
                                 .predictor = c->predictor,
                                 .n_threads = n_threads };
  SvTiffReadOptions read_options = { .channel = -1, .n_threads = n_threads };
  guint nz = labels ? labels->nz : image->nz, ny = labels ? labels->ny : image->ny;
  guint nx = labels ? labels->nx : image->nx;
  GStatBuf st;

  row->c = c;
  row->raw_bytes = (guint64)nz * ny * nx * (labels ? 4 : 2);
  for (guint i = 0; i < repeats; i++)
    {
      double t = now ();
      gboolean ok;

      if (c->libtiff_reference)
        ok = write_libtiff (path, labels ? (const void *)labels->data : image_u16, nz, ny, nx,
                            labels ? 4 : 2, c->predictor == SV_TIFF_PREDICTOR_HORIZONTAL);
      else if (labels != NULL)
        ok = sv_tiff_write_labels_full (path, labels, &options, error);
      else
        ok = sv_tiff_write_volume_full (path, image, SV_SAMPLE_U16, &options, error);
      w[i] = now () - t;
      if (!ok)
        {
          if (error != NULL && *error == NULL)
            g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "libtiff failed on %s", path);
          return FALSE;
        }

      t = now ();
      if (labels != NULL)
        {
          g_autoptr (SvLabels) back = sv_tiff_read_labels (path, error);
          r[i] = now () - t;
          if (back == NULL)
            return FALSE;
          if (i == 0 && memcmp (back->data, labels->data, row->raw_bytes) != 0)
            g_error ("%s: labels read back differ", c->name);
        }
      else
        {
          g_autoptr (SvVolume) back = sv_tiff_read_volume_full (path, &read_options, NULL, error);
          r[i] = now () - t;
          if (back == NULL)
            return FALSE;
          if (i == 0)
            for (gsize k = 0; k < (gsize)nz * ny * nx; k++)
              if (back->data[k] != (float)(image_u16[k] * (1.0 / 65535.0)))
                g_error ("%s: image read back differs at %" G_GSIZE_FORMAT, c->name, k);
        }
    }
  g_stat (path, &st);
  row->file_bytes = (guint64)st.st_size;
  row->write_s = median (w, repeats);
  row->read_s = median (r, repeats);
  g_unlink (path);
  return TRUE;
}

/* Reads an uncompressed uint16 stack of `mib` MiB from the page cache. */
static gboolean
run_big_read (const char *dir, guint mib, guint repeats, int n_threads, GString *json,
              GError **error)
{
  g_autofree char *path = g_build_filename (dir, "bench-tiff-big.tif", NULL);
  guint nx = 1024, ny = 1024, nz = MAX (1u, mib / 2);
  g_autoptr (SvVolume) v = sv_volume_new (nz, ny, nx, 1, error);
  SvTiffWriteOptions options;
  SvTiffReadOptions read_options = { .channel = -1, .n_threads = n_threads };
  g_autofree double *r = g_new (double, repeats);
  GStatBuf st;
  double t;

  if (v == NULL)
    return FALSE;
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = (float)((i * 2654435761u) % 65536) / 65535.0f;
  sv_tiff_write_options_init_defaults (&options);
  options.compression = SV_TIFF_COMPRESSION_NONE;
  options.n_threads = n_threads;
  t = now ();
  if (!sv_tiff_write_volume_full (path, v, SV_SAMPLE_U16, &options, error))
    return FALSE;
  t = now () - t;
  g_clear_pointer (&v, sv_volume_free);
  g_stat (path, &st);
  for (guint i = 0; i < repeats; i++)
    {
      double t0 = now ();
      g_autoptr (SvVolume) back = sv_tiff_read_volume_full (path, &read_options, NULL, error);
      r[i] = now () - t0;
      if (back == NULL)
        return FALSE;
    }
  {
    double rs = median (r, repeats);
    printf ("\nuncompressed uint16 %u×%u×%u, %.0f MiB file: write %.3f s (%.0f MB/s), read "
            "%.3f s = %.0f MB/s of file (median of %u, from the page cache)\n",
            nz, ny, nx, (double)st.st_size / 1048576.0, t, (double)st.st_size / t / 1e6, rs,
            (double)st.st_size / rs / 1e6, repeats);
    g_string_append_printf (json,
                            ",\"big_read\":{\"shape\":[%u,%u,%u],\"file_bytes\":%" G_GINT64_FORMAT
                            ",\"write_s\":%.6f,\"read_s\":%.6f,\"read_MBps\":%.1f}",
                            nz, ny, nx, (gint64)st.st_size, t, rs, (double)st.st_size / rs / 1e6);
  }
  g_unlink (path);
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (SvVolume) image = NULL;
  g_autoptr (SvLabels) labels = NULL;
  g_autofree guint16 *image_u16 = NULL;
  g_autoptr (GString) json = g_string_new ("{");
  g_autoptr (GArray) rows = g_array_new (FALSE, TRUE, sizeof (Row));
  g_autofree char *dir = NULL;
  g_autofree char *labels_path = NULL;
  g_autofree char *json_path = NULL;
  gint size = 256, repeats = 3, threads = 0, big = 0;
  GOptionEntry entries[] = {
    { "size", 0, 0, G_OPTION_ARG_INT, &size, "Phantom edge N (N³ voxels, default 256)", "N" },
    { "labels", 0, 0, G_OPTION_ARG_FILENAME, &labels_path,
      "Label TIFF to use instead of running SLIC", "FILE" },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &repeats, "Runs per case; medians (default 3)", "R" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, "Codec threads (default: all cores)", "N" },
    { "dir", 0, 0, G_OPTION_ARG_FILENAME, &dir, "Folder for the files (default: /tmp)", "DIR" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Also write the results as JSON", "FILE" },
    { "big-read", 0, 0, G_OPTION_ARG_INT, &big,
      "Also read an uncompressed uint16 stack of this many MiB (e.g. 1024)", "MIB" },
    { NULL }
  };
  SvSynthParams sp;
  double t;

  context = g_option_context_new ("- TIFF codec speed and size");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "bench-tiff: %s\n", error->message);
      return 1;
    }
  if (dir == NULL)
    dir = g_strdup (g_get_tmp_dir ());
  repeats = MAX (repeats, 1);

  sv_synth_params_init_defaults (&sp);
  sp.nz = sp.ny = sp.nx = (guint)size;
  sp.n_cells = 400;
  t = now ();
  image = sv_synth_cells (&sp, NULL, &error);
  if (image == NULL)
    goto fail;
  if (labels_path != NULL)
    labels = sv_tiff_read_labels (labels_path, &error);
  else
    labels = make_labels (image, threads, &error);
  if (labels == NULL)
    goto fail;
  fprintf (stderr, "bench-tiff: data ready in %.1f s\n", now () - t);
  image_u16 = g_new (guint16, sv_volume_n_voxels (image));
  for (gsize i = 0; i < sv_volume_n_voxels (image); i++)
    {
      float x = image->data[i] * 65535.0f;
      image_u16[i] = (guint16)(x > 0.0f ? (x < 65535.0f ? lrintf (x) : 65535) : 0);
    }

  for (guint d = 0; d < 2; d++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        Row row = { .data_name = d == 0 ? "labels uint32" : "image uint16" };
        if (!run_case (dir, &cases[i], d == 0 ? labels : NULL, d == 0 ? NULL : image, image_u16,
                       (guint)repeats, threads, &row, &error))
          goto fail;
        g_array_append_val (rows, row);
      }

  printf ("%u³ voxels, %d repeat(s), median seconds; MB/s = uncompressed bytes / s; files in "
          "%s\n",
          (guint)size, repeats, dir);
  printf ("%-14s %-20s %9s %9s %9s %9s %10s %8s %10s\n", "data", "codec", "write s", "write MB/s",
          "read s", "read MB/s", "MiB", "ratio", "vs zlib:6");
  g_string_append_printf (json, "\"size\":%d,\"repeats\":%d,\"rows\":[", size, repeats);
  for (guint i = 0; i < rows->len; i++)
    {
      Row *row = &g_array_index (rows, Row, i);
      guint d = g_str_has_prefix (row->data_name, "labels") ? 0 : 1;
      const char *ref_name = d == 0 ? "libtiff zlib:6" : "libtiff zlib:6+pred";
      double ref = 0;

      for (guint j = 0; j < rows->len; j++)
        {
          Row *o = &g_array_index (rows, Row, j);
          if (g_str_equal (o->data_name, row->data_name) && g_str_equal (o->c->name, ref_name))
            ref = (double)o->file_bytes;
        }
      printf ("%-14s %-20s %9.3f %10.0f %9.3f %9.0f %10.2f %7.1fx %9.2fx\n", row->data_name,
              row->c->name, row->write_s, (double)row->raw_bytes / row->write_s / 1e6, row->read_s,
              (double)row->raw_bytes / row->read_s / 1e6, (double)row->file_bytes / 1048576.0,
              (double)row->raw_bytes / (double)row->file_bytes,
              ref > 0 ? (double)row->file_bytes / ref : NAN);
      g_string_append_printf (json,
                              "%s{\"data\":\"%s\",\"codec\":\"%s\",\"write_s\":%.6f,"
                              "\"read_s\":%.6f,\"raw_bytes\":%" G_GUINT64_FORMAT
                              ",\"file_bytes\":%" G_GUINT64_FORMAT "}",
                              i ? "," : "", row->data_name, row->c->name, row->write_s, row->read_s,
                              row->raw_bytes, row->file_bytes);
    }
  g_string_append (json, "]");
  if (big > 0 && !run_big_read (dir, (guint)big, (guint)repeats, threads, json, &error))
    goto fail;
  g_string_append (json, "}\n");
  if (json_path != NULL && !g_file_set_contents (json_path, json->str, -1, &error))
    goto fail;
  return 0;

fail:
  fprintf (stderr, "bench-tiff: %s\n", error ? error->message : "failed");
  return 1;
}

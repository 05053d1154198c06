/* Supervox engine tests: how an OME-Zarr label store fails. One that runs
 * out of memory while it compresses a row of chunks ends with one error
 * that says so, and leaves no store: for every codec (c-blosc included,
 * which does not survive a failed allocation of its own). The process's
 * address space is limited (RLIMIT_AS) around the append, so that the
 * chunk's buffer, or the codec's, cannot be had. A negative label in a
 * store for labels >= 0 is named, the first in raster order, whichever
 * worker finds it. Chunk files synced on the writer's threads are all
 * closed at its end. A zlib:runs store takes rows of chunks compressed
 * elsewhere. */
#include <glib/gstdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io-zarr.h"
#include "io-tiff-private.h"

#define NY 2048
#define NX 2048
/* One chunk of a slice: 16 MiB of int32 labels. */
#define CHUNK_BYTES ((gsize)NY * NX * sizeof (gint32))

/* The process's mapped bytes now (VmSize). */
static guint64
mapped_bytes (void)
{
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  line = strstr (status, "VmSize:");
  g_assert_nonnull (line);
  return g_ascii_strtoull (line + strlen ("VmSize:"), NULL, 10) * 1024;
}

static int
remove_store (const char *path)
{
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", path);

  return system (rm);
}

/* Appends two slices of labels to a store of chunks (1, NY, NX) with the
 * address space limited to what is mapped now plus `room`: the error, or
 * NULL when it fits. */
static GError *
append_within (const char *path, const char *codec, gint32 *labels, guint64 room)
{
  static const double ones[3] = { 1, 1, 1 };
  SvZarrWriteOptions zarr;
  SvTiffWriteOptions options;
  g_autoptr (SvTiffLabelWriter) w = NULL;
  struct rlimit saved, limit;
  GError *error = NULL;
  gboolean ok;

  sv_zarr_write_options_init_defaults (&zarr);
  g_assert_true (sv_zarr_write_options_parse (&zarr, codec, NULL));
  zarr.chunks[0] = 1;
  zarr.chunks[1] = NY;
  zarr.chunks[2] = NX;
  sv_tiff_write_options_init_defaults (&options);
  /* On this thread: a worker's stack would count against the limit. */
  options.n_threads = 1;
  options.zarr = &zarr;
  w = sv_tiff_label_writer_new (path, 2, NY, NX, FALSE, ones, NULL, &options, &error);
  g_assert_no_error (error);

  g_assert_cmpint (getrlimit (RLIMIT_AS, &saved), ==, 0);
  limit = saved;
  limit.rlim_cur = mapped_bytes () + room;
  g_assert_cmpint (setrlimit (RLIMIT_AS, &limit), ==, 0);
  ok = sv_tiff_label_writer_append (w, labels, 2, &error);
  g_assert_cmpint (setrlimit (RLIMIT_AS, &saved), ==, 0);
  if (ok)
    {
      ok = sv_tiff_label_writer_finish (w, &error);
      g_assert_no_error (error);
      return NULL;
    }
  g_assert_nonnull (error);
  return error;
}

G_GNUC_UNUSED static void
test_out_of_memory (void)
{
  static const char *const codecs[] = { "blosc:zstd:5", "blosc:lz4:5", "zstd:3", "zlib:5", "none" };
  g_autofree char *dir = g_dir_make_tmp ("sv-zarr-memory-XXXXXX", NULL);
  g_autofree gint32 *labels = g_new (gint32, 2 * (gsize)NY * NX);
  g_autofree char *path = g_build_filename (dir, "labels.zarr", NULL);

  for (gsize i = 0; i < 2 * (gsize)NY * NX; i++)
    labels[i] = 1 + (gint32)(i / 1000);
  for (guint c = 0; c < G_N_ELEMENTS (codecs); c++)
    {
      GError *error;

      g_test_message ("%s", codecs[c]);
      /* No room for the chunk's buffer. */
      error = append_within (path, codecs[c], labels, CHUNK_BYTES / 2);
      g_assert_nonnull (error);
      g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY);
      g_assert_nonnull (strstr (error->message, "not enough memory for a chunk of 2048×2048×1"));
      g_assert_null (strchr (error->message, '\n'));
      g_clear_error (&error);
      g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

      /* Room for it, none for what the codec writes (without one, the
       * chunk's own bytes are written). */
      error = append_within (path, codecs[c], labels, CHUNK_BYTES + CHUNK_BYTES / 4);
      if (strcmp (codecs[c], "none") == 0)
        {
          g_assert_no_error (error);
          g_assert_cmpint (remove_store (path), ==, 0);
        }
      else
        {
          g_assert_nonnull (error);
          g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY);
          g_assert_nonnull (
              strstr (error->message, "cannot compress chunk 0/0/0/0: not enough memory"));
          g_clear_error (&error);
        }
      g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

      /* With room the same labels make a store. */
      error = append_within (path, codecs[c], labels, 8 * CHUNK_BYTES);
      g_assert_no_error (error);
      g_assert_true (g_file_test (path, G_FILE_TEST_IS_DIR));
      g_assert_cmpint (remove_store (path), ==, 0);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* Three rows of chunks (2, 8, 8) over 5 × 16 × 16, on four threads; the
 * labels of slices 2 and 3 hold negative ones, the first at (3, 9, 12). */
static void
test_negative_label (void)
{
  static const double ones[3] = { 1, 1, 1 };
  g_autofree char *dir = g_dir_make_tmp ("sv-zarr-negative-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "labels.zarr", NULL);
  g_autofree gint32 *labels = g_new (gint32, 5 * 16 * 16);
  g_autoptr (SvTiffLabelWriter) w = NULL;
  g_autoptr (GError) error = NULL;
  SvZarrWriteOptions zarr;
  SvTiffWriteOptions options;

  for (guint i = 0; i < 5 * 16 * 16; i++)
    labels[i] = 1 + (gint32)i;
  labels[(3 * 16 + 9) * 16 + 12] = -4;
  labels[(3 * 16 + 15) * 16 + 2] = -5;
  labels[(2 * 16 + 12) * 16 + 1] = 7; /* not negative */
  labels[(3 * 16 + 9) * 16 + 13] = -6;
  sv_zarr_write_options_init_defaults (&zarr);
  zarr.chunks[0] = 2;
  zarr.chunks[1] = 8;
  zarr.chunks[2] = 8;
  sv_tiff_write_options_init_defaults (&options);
  options.n_threads = 4;
  options.zarr = &zarr;
  w = sv_tiff_label_writer_new (path, 5, 16, 16, FALSE, ones, NULL, &options, &error);
  g_assert_no_error (error);
  /* The first row is written; the second holds the negative labels. */
  g_assert_true (sv_tiff_label_writer_append (w, labels, 3, &error));
  g_assert_no_error (error);
  g_assert_false (sv_tiff_label_writer_append (w, labels + 3 * 16 * 16, 2, &error));
  g_test_message ("%s", error->message);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
  g_assert_nonnull (
      strstr (error->message, "label -4 in slice 3 of a store started for labels >= 0"));
  g_clear_pointer (&w, sv_tiff_label_writer_free);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* The open files of this process. */
static guint
open_files (void)
{
  g_autoptr (GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* More chunk files than the writer keeps open while they are synced on
 * its threads: the store is complete, every file closed, and a writer
 * freed before its end closes its files too and leaves no store. */
static void
test_files_synced_and_closed (void)
{
  static const double ones[3] = { 1, 1, 1 };
  g_autofree char *dir = g_dir_make_tmp ("sv-zarr-sync-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "labels.zarr", NULL);
  g_autofree gint32 *labels = g_new (gint32, 4 * 40 * 40);
  g_autoptr (GError) error = NULL;
  SvZarrWriteOptions zarr;
  SvTiffWriteOptions options;
  const guint before = open_files ();

  for (guint i = 0; i < 4 * 40 * 40; i++)
    labels[i] = 1 + (gint32)(i / 7);
  sv_zarr_write_options_init_defaults (&zarr);
  zarr.chunks[0] = 1;
  zarr.chunks[1] = 2;
  zarr.chunks[2] = 2;
  sv_tiff_write_options_init_defaults (&options);
  options.n_threads = 4;
  options.zarr = &zarr;
  for (guint finish = 0; finish < 2; finish++)
    {
      g_autoptr (SvTiffLabelWriter) w
          = sv_tiff_label_writer_new (path, 4, 40, 40, FALSE, ones, NULL, &options, &error);

      g_assert_no_error (error);
      /* 1600 chunk files: four rows of 400. */
      g_assert_true (sv_tiff_label_writer_append (w, labels, 4, &error));
      g_assert_no_error (error);
      if (finish)
        {
          g_autofree char *last = g_build_filename (path, "0", "3", "19", "19", NULL);
          g_autofree guint8 *bytes = NULL;
          gsize len = 0;

          g_assert_true (sv_tiff_label_writer_finish (w, &error));
          g_assert_no_error (error);
          g_assert_true (g_file_get_contents (last, (char **)&bytes, &len, NULL));
          g_assert_cmpuint (len, >, 0);
        }
      g_clear_pointer (&w, sv_tiff_label_writer_free);
      g_assert_cmpuint (open_files (), ==, before);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS) == (finish == 1));
    }
  g_assert_cmpint (remove_store (dir), ==, 0);
}

/* The small store of the zlib:runs tests: 3 × 20 × 20 labels in chunks of
 * 2 × 8 × 16, so that every edge is short. */
#define RZ 3
#define RY 20
#define RX 20
static const guint run_chunks[3] = { 2, 8, 16 };
#define RUN_CHUNK_BYTES (2 * 8 * 16 * sizeof (gint32))

static gint32 *
runs_labels (void)
{
  gint32 *labels = g_new (gint32, RZ * RY * RX);

  for (guint i = 0; i < RZ * RY * RX; i++)
    labels[i] = 1 + (gint32)((i % RX) / 3 + (i / RX % RY) / 5 * 7 + i / (RY * RX) * 50);
  return labels;
}

static SvTiffLabelWriter *
runs_store (const char *path, SvZarrWriteOptions *zarr, SvTiffWriteOptions *options)
{
  static const double ones[3] = { 1, 1, 1 };
  g_autoptr (GError) error = NULL;
  SvTiffLabelWriter *w;

  sv_zarr_write_options_init_defaults (zarr);
  g_assert_true (sv_zarr_write_options_parse (zarr, "zlib:runs", &error));
  g_assert_no_error (error);
  memcpy (zarr->chunks, run_chunks, sizeof run_chunks);
  sv_tiff_write_options_init_defaults (options);
  options->n_threads = 2;
  options->zarr = zarr;
  w = sv_tiff_label_writer_new (path, RZ, RY, RX, FALSE, ones, NULL, options, &error);
  g_assert_no_error (error);
  return w;
}

/* Chunk (kz, ky, kx) of the labels, 0 outside the volume, as the runs
 * encoder makes it: its bytes into `out`, their number returned. */
static gsize
encode_run_chunk (SvTiffRunsCoder *coder, const gint32 *labels, guint kz, guint ky, guint kx,
                  guint8 *out)
{
  const guint cz = run_chunks[0], cy = run_chunks[1], cx = run_chunks[2];
  g_autofree gint32 *chunk = g_new0 (gint32, cz * cy * cx);

  for (guint z = 0; z < cz; z++)
    for (guint y = 0; y < cy; y++)
      for (guint x = 0; x < cx; x++)
        {
          const guint gz = kz * cz + z, gy = ky * cy + y, gx = kx * cx + x;

          if (gz < RZ && gy < RY && gx < RX)
            chunk[(z * cy + y) * cx + x] = labels[(gz * RY + gy) * RX + gx];
        }
  return sv__tiff_deflate_runs (coder, (const guint8 *)chunk, RUN_CHUNK_BYTES,
                                cx * sizeof (gint32), sizeof (gint32), out);
}

/* zlib:runs chunks are the label TIFF's deflate of runs over the chunk's
 * rows (x extent): each file is that encoder's stream of the chunk, edge
 * chunks with their fill, not libdeflate's. */
static void
test_zlib_runs_chunks (void)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-zarr-runs-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "labels.zarr", NULL);
  g_autofree gint32 *labels = runs_labels ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SvTiffLabelWriter) w = NULL;
  SvTiffRunsCoder *coder = sv__tiff_runs_coder_new ();
  SvZarrWriteOptions zarr;
  SvTiffWriteOptions options;

  w = runs_store (path, &zarr, &options);
  g_assert_true (sv_tiff_label_writer_append (w, labels, RZ, &error));
  g_assert_true (sv_tiff_label_writer_finish (w, &error));
  g_assert_no_error (error);
  for (guint kz = 0; kz < 2; kz++)
    for (guint ky = 0; ky < 3; ky++)
      for (guint kx = 0; kx < 2; kx++)
        {
          g_autofree char *name = g_strdup_printf ("%u/%u/%u", kz, ky, kx);
          g_autofree char *file = g_build_filename (path, "0", name, NULL);
          g_autofree guint8 *expected
              = g_new (guint8, sv__tiff_deflate_runs_bound (RUN_CHUNK_BYTES));
          g_autofree char *bytes = NULL;
          gsize len = 0, n = encode_run_chunk (coder, labels, kz, ky, kx, expected);

          g_assert_true (g_file_get_contents (file, &bytes, &len, NULL));
          g_assert_cmpmem (bytes, len, expected, n);
        }
  sv__tiff_runs_coder_free (coder);
  g_assert_cmpint (remove_store (dir), ==, 0);
}

/* A zlib:runs store takes rows of chunks compressed elsewhere (a device
 * that holds the labels): its files are then those of a store given the
 * labels. Another codec's store takes labels only; a negative label in a
 * row is refused. */
static void
test_compressed_chunk_rows (void)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-zarr-rows-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "labels.zarr", NULL);
  g_autofree char *other = g_build_filename (dir, "other.zarr", NULL);
  g_autofree gint32 *labels = runs_labels ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SvTiffLabelWriter) w = NULL;
  SvTiffRunsCoder *coder = sv__tiff_runs_coder_new ();
  const gsize bound = sv__tiff_deflate_runs_bound (RUN_CHUNK_BYTES);
  SvZarrWriteOptions zarr;
  SvTiffWriteOptions options;
  guint shape[3] = { 0 };

  /* The store's chunks, a row of chunks at a time: 2 slices, then 1. */
  w = runs_store (path, &zarr, &options);
  g_assert_true (sv_tiff_label_writer_chunk_shape (w, shape));
  g_assert_cmpmem (shape, sizeof shape, run_chunks, sizeof run_chunks);
  for (guint kz = 0; kz < 2; kz++)
    {
      guint64 sizes[6];
      g_autofree guint8 *bytes = g_new (guint8, 6 * bound);
      gsize at = 0;

      for (guint i = 0; i < 6; i++)
        {
          sizes[i] = encode_run_chunk (coder, labels, kz, i / 2, i % 2, bytes + at);
          at += sizes[i];
        }
      g_assert_true (
          sv_tiff_label_writer_append_chunks (w, kz == 0 ? 2 : 1, sizes, bytes, -1, &error));
      g_assert_no_error (error);
    }
  g_assert_true (sv_tiff_label_writer_finish (w, &error));
  g_assert_no_error (error);
  g_clear_pointer (&w, sv_tiff_label_writer_free);
  /* The same labels given as labels. */
  w = runs_store (other, &zarr, &options);
  g_assert_true (sv_tiff_label_writer_append (w, labels, RZ, &error));
  g_assert_true (sv_tiff_label_writer_finish (w, &error));
  g_assert_no_error (error);
  g_clear_pointer (&w, sv_tiff_label_writer_free);
  for (guint i = 0; i < 12; i++)
    {
      g_autofree char *name = g_strdup_printf ("%u/%u/%u", i / 6, i % 6 / 2, i % 2);
      g_autofree char *a = g_build_filename (path, "0", name, NULL);
      g_autofree char *b = g_build_filename (other, "0", name, NULL);
      g_autofree char *bytes_a = NULL, *bytes_b = NULL;
      gsize len_a = 0, len_b = 0;

      g_assert_true (g_file_get_contents (a, &bytes_a, &len_a, NULL));
      g_assert_true (g_file_get_contents (b, &bytes_b, &len_b, NULL));
      g_assert_cmpmem (bytes_a, len_a, bytes_b, len_b);
    }
  g_assert_cmpint (remove_store (path), ==, 0);

  /* A negative label named by its row's first slice; no store. */
  w = runs_store (path, &zarr, &options);
  {
    guint64 sizes[6] = { 0 };
    guint8 none = 0;

    g_assert_false (sv_tiff_label_writer_append_chunks (w, 2, sizes, &none, 0, &error));
    g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
    g_assert_nonnull (strstr (error->message, "negative label in slice 0"));
    g_clear_error (&error);
  }
  g_clear_pointer (&w, sv_tiff_label_writer_free);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  /* blosc chunks are not the runs encoder's: labels only. */
  g_assert_true (sv_zarr_write_options_parse (&zarr, "blosc:zstd:1", &error));
  w = sv_tiff_label_writer_new (path, RZ, RY, RX, FALSE, (const double[3]){ 1, 1, 1 }, NULL,
                                &options, &error);
  g_assert_no_error (error);
  g_assert_false (sv_tiff_label_writer_chunk_shape (w, shape));
  g_clear_pointer (&w, sv_tiff_label_writer_free);
  sv__tiff_runs_coder_free (coder);
  g_assert_cmpint (remove_store (dir), ==, 0);
}

G_GNUC_UNUSED static void
skip_under_asan (void)
{
  g_test_skip ("AddressSanitizer's allocator stops the process where malloc would return NULL");
}

int
main (int argc, char **argv)
{
  /* Large blocks from mmap, and back to the system when freed: glibc
   * would otherwise raise that threshold after the first free and serve
   * the next chunk from memory it kept, under any limit. */
  mallopt (M_MMAP_THRESHOLD, 1 << 20);
  /* One malloc arena for every thread: an allocation that mmap refuses
   * under the limit would otherwise be served from the reserved heap of
   * an arena that a syncer thread of an earlier store made, already
   * counted as mapped (the limit then held more than its room, now and
   * then). */
  mallopt (M_ARENA_MAX, 1);
  g_test_init (&argc, &argv, NULL);
#if defined(__SANITIZE_ADDRESS__)
  g_test_add_func ("/io/zarr/out-of-memory", skip_under_asan);
#else
  g_test_add_func ("/io/zarr/out-of-memory", test_out_of_memory);
#endif
  g_test_add_func ("/io/zarr/negative-label", test_negative_label);
  g_test_add_func ("/io/zarr/files-synced-and-closed", test_files_synced_and_closed);
  g_test_add_func ("/io/zarr/zlib-runs-chunks", test_zlib_runs_chunks);
  g_test_add_func ("/io/zarr/compressed-chunk-rows", test_compressed_chunk_rows);
  return g_test_run ();
}

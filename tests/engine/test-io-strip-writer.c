/* Tests for the strip writer (engine/io/io-tiff-strip-writer.c,
 * io-tiff-layout.c): every file it writes holds the bytes libtiff's own
 * in-order writer (io-tiff-write-libtiff.c, SV_TIFF_WRITER=libtiff) writes
 * for the same data, whatever the codec, level, predictor, classic TIFF or
 * BigTIFF, number of threads, or slabs; the layout's steps compose as
 * separate writers (MPI ranks) would use them; a full disk leaves no file.
 * The strip writer runs with SV_TIFF_WRITER=strips, which makes a layout it
 * does not know an error instead of a quiet fallback to libtiff. */
#define G_LOG_DOMAIN "sv-test-io-strip-writer"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "io-tiff-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io.h"
#include "sv-test-files.h"

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-io-strip-writer");
  g_setenv ("SV_TIFF_WRITER", "strips", TRUE);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_unsetenv ("SV_TIFF_WRITER");
  g_unsetenv ("SV_TIFF_FORCE_BIGTIFF");
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

/* Label-like data: runs along x of hashed labels, so that every codec
 * finds something to do and the predictor's differences wrap around. */
static SvLabels *
make_labels (guint nz, guint ny, guint nx, gboolean negative)
{
  SvLabels *l = sv_labels_new (nz, ny, nx, NULL);
  const gsize n = sv_labels_n_voxels (l);

  for (gsize i = 0; i < n; i++)
    l->data[i] = (gint32)(hash32 ((guint32)(i / 9)) % 70000);
  /* The widest label, and a negative one (a volume of one voxel has
   * room for neither). */
  if (n > 1)
    l->data[1] = G_MAXINT32;
  if (negative && n > 2)
    l->data[2] = -5;
  l->spacing[0] = 2.0;
  l->spacing[1] = l->spacing[2] = 0.25;
  l->unit = g_strdup ("micron");
  return l;
}

/* Pages of 500×600 int32 (1.2 MB) are cut into strips of 218, 218 and 64
 * rows: several strips per page and a short last one. */
#define NY 500
#define NX 600

static SvTiffWriteOptions
options_for (const char *codec, SvTiffPredictor predictor, int n_threads)
{
  g_autoptr (GError) error = NULL;
  SvTiffWriteOptions o;

  sv_tiff_write_options_init_defaults (&o);
  g_assert_true (sv_tiff_write_options_parse (&o, codec, &error));
  g_assert_no_error (error);
  o.predictor = predictor;
  o.n_threads = n_threads;
  return o;
}

/* libtiff's writer: the reference. */
static void
write_labels_libtiff (const char *path, const SvLabels *l, const SvTiffWriteOptions *o)
{
  g_autoptr (GError) error = NULL;

  g_setenv ("SV_TIFF_WRITER", "libtiff", TRUE);
  g_assert_true (sv_tiff_write_labels_full (path, l, o, &error));
  g_assert_no_error (error);
  g_setenv ("SV_TIFF_WRITER", "strips", TRUE);
}

static void
check_labels (Fixture *f, const SvLabels *l, const char *codec, SvTiffPredictor predictor)
{
  static const int threads[] = { 1, 3 };
  g_autofree char *ref = fixture_path (f, "ref.tif");
  g_autofree char *path = fixture_path (f, "strips.tif");
  SvTiffWriteOptions o = options_for (codec, predictor, 1);

  write_labels_libtiff (ref, l, &o);
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    {
      g_autoptr (GError) error = NULL;

      o.n_threads = threads[t];
      g_assert_true (sv_tiff_write_labels_full (path, l, &o, &error));
      g_assert_no_error (error);
      sv_test_assert_same_file (ref, path);
    }
}

static const char *const codecs[]
    = { "none",   "deflate:1", "deflate:6", "deflate:12", "deflate:runs",
        "zstd:1", "zstd:3",    "zstd:9",    "lzw" };

static void
test_labels_same_as_libtiff (Fixture *f, gconstpointer data)
{
  gboolean bigtiff = GPOINTER_TO_INT (data);
  g_autoptr (SvLabels) l = make_labels (2, NY, NX, FALSE);

  if (bigtiff)
    g_setenv ("SV_TIFF_FORCE_BIGTIFF", "1", TRUE);
  for (guint c = 0; c < G_N_ELEMENTS (codecs); c++)
    {
      check_labels (f, l, codecs[c], SV_TIFF_PREDICTOR_NONE);
      if (!g_str_equal (codecs[c], "none"))
        check_labels (f, l, codecs[c], SV_TIFF_PREDICTOR_HORIZONTAL);
    }
}

/* int32 files, one-strip pages, a file of one page. */
static void
test_labels_other_shapes (Fixture *f, gconstpointer data)
{
  static const guint shapes[][3] = { { 5, 13, 11 }, { 1, NY, NX }, { 1, 1, 1 }, { 2, 1, 300000 } };

  for (int big = 0; big < 2; big++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      {
        g_autoptr (SvLabels) l = make_labels (shapes[s][0], shapes[s][1], shapes[s][2], s == 0);

        if (big)
          g_setenv ("SV_TIFF_FORCE_BIGTIFF", "1", TRUE);
        check_labels (f, l, "deflate:6", SV_TIFF_PREDICTOR_NONE);
        check_labels (f, l, "deflate:runs", SV_TIFF_PREDICTOR_NONE);
        check_labels (f, l, "lzw", SV_TIFF_PREDICTOR_HORIZONTAL);
        check_labels (f, l, "none", SV_TIFF_PREDICTOR_NONE);
        g_unsetenv ("SV_TIFF_FORCE_BIGTIFF");
      }
}

/* Images with the predictor's default (horizontal for 8 and 16 bits),
 * three channels, float32. */
static void
test_volumes_same_as_libtiff (Fixture *f, gconstpointer data)
{
  static const struct
  {
    SvSampleType as;
    guint nc;
  } kinds[] = { { SV_SAMPLE_U16, 1 }, { SV_SAMPLE_U8, 3 }, { SV_SAMPLE_F32, 1 } };
  static const char *const volume_codecs[] = { "none", "deflate:6", "deflate:runs", "zstd:3", "lzw" };
  g_autofree char *ref = fixture_path (f, "ref.tif");
  g_autofree char *path = fixture_path (f, "strips.tif");

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      g_autoptr (SvVolume) v = sv_volume_new (2, 700, 800, kinds[k].nc, NULL);

      for (gsize i = 0; i < sv_volume_n_voxels (v) * v->nc; i++)
        v->data[i] = (float)((i % 800) / 800.0 * 0.7 + (hash32 ((guint32)i) % 1000) * 1e-4);
      for (guint c = 0; c < G_N_ELEMENTS (volume_codecs); c++)
        for (int big = 0; big < 2; big++)
          {
            g_autoptr (GError) error = NULL;
            SvTiffWriteOptions o = options_for (volume_codecs[c], SV_TIFF_PREDICTOR_AUTO, 1);

            if (big)
              g_setenv ("SV_TIFF_FORCE_BIGTIFF", "1", TRUE);
            g_setenv ("SV_TIFF_WRITER", "libtiff", TRUE);
            g_assert_true (sv_tiff_write_volume_full (ref, v, kinds[k].as, &o, &error));
            g_setenv ("SV_TIFF_WRITER", "strips", TRUE);
            o.n_threads = 2;
            g_assert_true (sv_tiff_write_volume_full (path, v, kinds[k].as, &o, &error));
            g_assert_no_error (error);
            g_unsetenv ("SV_TIFF_FORCE_BIGTIFF");
            sv_test_assert_same_file (ref, path);
          }
    }
}

/* The streamed run's writer, slab after slab, uneven slabs. */
static void
test_slabs_same_as_libtiff (Fixture *f, gconstpointer data)
{
  static const char *const slab_codecs[] = { "none", "deflate:6", "deflate:runs", "zstd:3", "lzw" };
  static const guint depths[] = { 1, 3 };
  g_autoptr (SvLabels) l = make_labels (5, NY, NX, FALSE);
  g_autofree char *ref = fixture_path (f, "ref.tif");
  g_autofree char *path = fixture_path (f, "slabs.tif");
  const gsize plane = (gsize)NY * NX;

  for (int big = 0; big < 2; big++)
    for (guint c = 0; c < G_N_ELEMENTS (slab_codecs); c++)
      {
        SvTiffWriteOptions o = options_for (slab_codecs[c], SV_TIFF_PREDICTOR_AUTO, 2);

        if (big)
          g_setenv ("SV_TIFF_FORCE_BIGTIFF", "1", TRUE);
        write_labels_libtiff (ref, l, &o);
        for (guint d = 0; d < G_N_ELEMENTS (depths); d++)
          {
            g_autoptr (GError) error = NULL;
            g_autoptr (SvTiffLabelWriter) w = sv_tiff_label_writer_new (
                path, l->nz, NY, NX, FALSE, l->spacing, l->unit, &o, &error);

            g_assert_no_error (error);
            for (guint z0 = 0; z0 < l->nz; z0 += depths[d])
              {
                guint n = MIN (depths[d], l->nz - z0);
                g_assert_true (sv_tiff_label_writer_append (w, l->data + z0 * plane, n, &error));
                g_assert_no_error (error);
              }
            g_assert_true (sv_tiff_label_writer_finish (w, &error));
            g_assert_no_error (error);
            sv_test_assert_same_file (ref, path);
          }
        g_unsetenv ("SV_TIFF_FORCE_BIGTIFF");
      }
}

/* A negative label in a file started for labels >= 0 (uint32): the slab
 * that holds it fails with the slice named, whichever writer threads met
 * it, and no file is left; the in-memory writer makes such labels int32. */
static void
test_slab_negative_label (Fixture *f, gconstpointer data)
{
  g_autoptr (SvLabels) l = make_labels (5, NY, NX, FALSE);
  g_autofree char *path = fixture_path (f, "negative.tif");
  const gsize plane = (gsize)NY * NX;
  const char *codecs_here[] = { "deflate:runs", "lzw" };

  l->data[3 * plane + 7 * NX + 11] = -4;
  for (guint c = 0; c < G_N_ELEMENTS (codecs_here); c++)
    {
      g_autoptr (GError) error = NULL;
      SvTiffWriteOptions o = options_for (codecs_here[c], SV_TIFF_PREDICTOR_NONE, 3);
      SvTiffLabelWriter *w
          = sv_tiff_label_writer_new (path, l->nz, NY, NX, FALSE, l->spacing, l->unit, &o, &error);

      g_assert_no_error (error);
      g_assert_true (sv_tiff_label_writer_append (w, l->data, 2, &error));
      g_assert_no_error (error);
      g_assert_false (sv_tiff_label_writer_append (w, l->data + 2 * plane, 3, &error));
      g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
      g_assert_nonnull (strstr (error->message, "a negative label in slice 3 of a file started "
                                                "for labels >= 0"));
      sv_tiff_label_writer_free (w);
      g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
    }
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (SvLabels) back = NULL;
    SvTiffWriteOptions o = options_for ("deflate:runs", SV_TIFF_PREDICTOR_NONE, 3);

    g_assert_true (sv_tiff_write_labels_full (path, l, &o, &error));
    g_assert_no_error (error);
    back = sv_tiff_read_labels (path, &error);
    g_assert_no_error (error);
    g_assert_cmpint (back->data[3 * plane + 7 * NX + 11], ==, -4);
    g_assert_cmpmem (back->data, plane * 5 * sizeof (gint32), l->data, plane * 5 * sizeof (gint32));
  }
}

/* ------------------------------------------------------------------------ */
/* The steps as separate writers use them */

static void
fill_labels_cb (guint z, guint y0, guint rows, guint8 *dst, gpointer user_data)
{
  const SvLabels *l = user_data;

  memcpy (dst, l->data + ((gsize)z * l->ny + y0) * l->nx, (gsize)rows * l->nx * sizeof (gint32));
}

/* Page z's compressed strips (owned) and their sizes. */
typedef struct
{
  guint8 **strips;
  guint64 *sizes, *offsets;
  guint64 directory;
} Page;

/* Two writers own pages [0, split) and [split, nz): each compresses its
 * strips and places them from a cursor of its first page's parity, the
 * second's offsets move by the first's extent (the exclusive scan MPI
 * would do), both write their strips at their offsets, and one writer
 * writes the header and every directory. */
static void
test_steps_compose (Fixture *f, gconstpointer data)
{
  gboolean bigtiff = GPOINTER_TO_INT (data);
  g_autoptr (SvLabels) l = make_labels (5, NY, NX, FALSE);
  g_autofree char *ref = fixture_path (f, "ref.tif");
  g_autofree char *path = fixture_path (f, "steps.tif");
  SvTiffWriteOptions o = options_for ("zstd:3", SV_TIFF_PREDICTOR_NONE, 1);
  SvTiffWriteJob job = { .nz = l->nz,
                         .ny = NY,
                         .nx = NX,
                         .nc = 1,
                         .bps = 32,
                         .format = SAMPLEFORMAT_UINT,
                         .spacing = l->spacing,
                         .unit = l->unit,
                         .fill = fill_labels_cb,
                         .user_data = l };
  g_autoptr (SvTiffLayout) layout = NULL;
  g_autofree char *problem = NULL;
  g_autofree guint8 *raw = NULL;
  SvTiffCodec *codec = sv__tiff_codec_new ();
  const guint split = 2, ranges[][2] = { { 0, split }, { split, 5 } };
  guint64 start[2], extent[2];
  Page pages[5];
  SvStripGeometry g;
  int fd, saved_errno;

  if (bigtiff)
    g_setenv ("SV_TIFF_FORCE_BIGTIFF", "1", TRUE);
  write_labels_libtiff (ref, l, &o);
  sv__tiff_write_job_set_codec (&job, &o, FALSE);
  layout = sv__tiff_layout_new (&job, bigtiff, &problem);
  g_assert_null (problem);
  g_assert_nonnull (layout);
  sv__tiff_strip_geometry (&job, &g);
  g_assert_cmpuint (g.strips_per_page, ==, 3);
  raw = g_malloc (g.strip_bytes);

  /* Each writer alone: compress → sizes → offsets from its own cursor. */
  for (guint r = 0; r < 2; r++)
    {
      guint parity = sv__tiff_layout_strip_parity (layout, ranges[r][0]);
      guint64 cursor = r == 0 ? sv__tiff_layout_header_size (layout) : parity;

      start[r] = cursor;
      for (guint z = ranges[r][0]; z < ranges[r][1]; z++)
        {
          Page *p = &pages[z];
          p->strips = g_new0 (guint8 *, g.strips_per_page);
          p->sizes = g_new0 (guint64, g.strips_per_page);
          p->offsets = g_new0 (guint64, g.strips_per_page);
          for (guint32 k = 0; k < g.strips_per_page; k++)
            {
              gsize len;
              const guint8 *bytes = sv__tiff_strip_encode (
                  &job, &g, codec, (guint64)z * g.strips_per_page + k, raw, &len);
              g_assert_nonnull (bytes);
              p->strips[k] = g_memdup2 (bytes, len);
              p->sizes[k] = len;
            }
          g_assert_true (
              sv__tiff_layout_place_page (layout, z, p->sizes, p->offsets, &cursor, &p->directory));
        }
      extent[r] = cursor - start[r];
    }
  /* The exclusive scan: the second writer starts where the first ends,
   * on the parity it assumed. */
  {
    guint64 second = start[0] + extent[0];
    guint64 shift = second - start[1];

    g_assert_cmpuint (second % 2, ==, start[1]);
    for (guint z = split; z < l->nz; z++)
      {
        for (guint32 k = 0; k < g.strips_per_page; k++)
          pages[z].offsets[k] += shift;
        pages[z].directory += shift;
      }
  }

  fd = g_open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  g_assert_cmpint (fd, >=, 0);
  for (guint z = 0; z < l->nz; z++)
    for (guint32 k = 0; k < g.strips_per_page; k++)
      g_assert_true (sv__tiff_write_at (fd, pages[z].offsets[k], pages[z].strips[k],
                                        pages[z].sizes[k], &saved_errno));
  /* The one writer of the directories. */
  {
    guint8 header[16];
    sv__tiff_layout_header (layout, pages[0].directory, header);
    g_assert_true (
        sv__tiff_write_at (fd, 0, header, sv__tiff_layout_header_size (layout), &saved_errno));
  }
  for (guint z = 0; z < l->nz; z++)
    {
      gsize len = sv__tiff_layout_directory_size (layout, z);
      g_autofree guint8 *dir = g_malloc (len);
      guint64 next = z + 1 < l->nz ? pages[z + 1].directory : 0;

      g_assert_true (sv__tiff_layout_directory (layout, z, pages[z].offsets, pages[z].sizes,
                                                pages[z].directory, next, dir));
      g_assert_true (sv__tiff_write_at (fd, pages[z].directory, dir, len, &saved_errno));
    }
  close (fd);
  sv_test_assert_same_file (ref, path);

  for (guint z = 0; z < l->nz; z++)
    {
      for (guint32 k = 0; k < g.strips_per_page; k++)
        g_free (pages[z].strips[k]);
      g_free (pages[z].strips);
      g_free (pages[z].sizes);
      g_free (pages[z].offsets);
    }
  sv__tiff_codec_free (codec);
}

/* ------------------------------------------------------------------------ */
/* Failures */

static guint
count_entries (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  while (g_dir_read_name (d) != NULL)
    n++;
  return n;
}

/* A disk that fills up (here: a file size limit) fails the write with the
 * system's words and leaves nothing behind, in memory and in slabs. */
static void
test_disk_full (Fixture *f, gconstpointer data)
{
  g_autoptr (SvLabels) l = make_labels (4, NY, NX, FALSE);
  g_autofree char *path = fixture_path (f, "full.tif");
  SvTiffWriteOptions o = options_for ("none", SV_TIFF_PREDICTOR_NONE, 2);
  struct rlimit saved, limit;
  void (*saved_handler) (int) = signal (SIGXFSZ, SIG_IGN);
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) slab_error = NULL;
  g_autoptr (SvTiffLabelWriter) w = NULL;

  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &saved), ==, 0);
  limit = saved;
  limit.rlim_cur = 1500000;
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &limit), ==, 0);
  g_assert_false (sv_tiff_write_labels_full (path, l, &o, &error));
  w = sv_tiff_label_writer_new (path, l->nz, NY, NX, FALSE, l->spacing, NULL, &o, &slab_error);
  g_assert_nonnull (w);
  g_assert_true (sv_tiff_label_writer_append (w, l->data, 1, &slab_error));
  g_assert_false (sv_tiff_label_writer_append (w, l->data + (gsize)NY * NX, 3, &slab_error));
  g_clear_pointer (&w, sv_tiff_label_writer_free);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &saved), ==, 0);
  signal (SIGXFSZ, saved_handler);

  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
  g_assert_true (g_str_has_prefix (error->message, path));
  g_assert_nonnull (strstr (error->message, ": cannot write page "));
  g_assert_nonnull (strstr (error->message, g_strerror (EFBIG)));
  g_assert_null (strchr (error->message, '\n'));
  g_assert_error (slab_error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
  g_assert_nonnull (strstr (slab_error->message, g_strerror (EFBIG)));
  g_assert_cmpuint (count_entries (f->dir), ==, 0);
}

/* Writeback asked for on a thread of the file's own (io-writeback.c): a
 * request every MiB written (SV_WRITEBACK_MIB=1) is made while the writer
 * goes on, none below that, and the file's bytes are the writer's. */
static void
test_writeback_requests (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fixture_path (f, "written.bin");
  g_autofree guint8 *block = g_malloc (1 << 20);
  g_autofree char *back = NULL;
  gint64 end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  SvWriteback *wb;
  gsize len = 0;
  int fd;

  g_setenv ("SV_WRITEBACK_MIB", "1", TRUE);
  fd = g_open (path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  g_assert_cmpint (fd, >=, 0);

  /* Four MiB, counted half a MiB at a time: a request is due after each
   * whole MiB (the thread may take several at once), none before. */
  wb = sv__writeback_new (fd);
  for (guint b = 0; b < 4; b++)
    {
      memset (block, (int)b + 1, 1 << 20);
      g_assert_cmpint (pwrite (fd, block, 1 << 20, (off_t)b << 20), ==, 1 << 20);
      sv__writeback_written (wb, 1 << 19);
      g_assert_cmpuint (sv__writeback_requests (wb), <=, b);
      sv__writeback_written (wb, 1 << 19);
    }
  while (sv__writeback_requests (wb) == 0 && g_get_monotonic_time () < end)
    g_usleep (1000);
  g_assert_cmpuint (sv__writeback_requests (wb), >=, 1);
  g_assert_cmpuint (sv__writeback_requests (wb), <=, 4);
  sv__writeback_free (wb);

  /* Three quarters of a MiB: no request. */
  wb = sv__writeback_new (fd);
  memset (block, 17, 1 << 20);
  g_assert_cmpint (pwrite (fd, block, 1 << 20, (off_t)4 << 20), ==, 1 << 20);
  sv__writeback_written (wb, 1 << 19);
  sv__writeback_written (wb, 1 << 18);
  g_assert_cmpuint (sv__writeback_requests (wb), ==, 0);
  sv__writeback_free (wb);

  g_assert_cmpint (fsync (fd), ==, 0);
  g_assert_cmpint (close (fd), ==, 0);
  g_unsetenv ("SV_WRITEBACK_MIB");
  g_assert_true (g_file_get_contents (path, &back, &len, NULL));
  g_assert_cmpuint (len, ==, 5u << 20);
  for (guint b = 0; b < 5; b++)
    g_assert_cmpint (back[(gsize)b << 20], ==, b < 4 ? (int)b + 1 : 17);
}

/* A label file of several MiB written with a writeback request every
 * MiB, by one and three threads: libtiff's bytes. */
static void
test_writeback_same_as_libtiff (Fixture *f, gconstpointer data)
{
  g_autoptr (SvLabels) l = make_labels (12, NY, NX, FALSE);

  g_setenv ("SV_WRITEBACK_MIB", "1", TRUE);
  check_labels (f, l, "none", SV_TIFF_PREDICTOR_NONE);
  check_labels (f, l, "deflate:1", SV_TIFF_PREDICTOR_HORIZONTAL);
  g_unsetenv ("SV_WRITEBACK_MIB");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, data, fn) g_test_add (path, Fixture, data, fixture_setup, fn, fixture_teardown)
  ADD ("/engine/io/strip-writer/same-as-libtiff/labels-classic", GINT_TO_POINTER (FALSE),
       test_labels_same_as_libtiff);
  ADD ("/engine/io/strip-writer/same-as-libtiff/labels-bigtiff", GINT_TO_POINTER (TRUE),
       test_labels_same_as_libtiff);
  ADD ("/engine/io/strip-writer/same-as-libtiff/other-shapes", NULL, test_labels_other_shapes);
  ADD ("/engine/io/strip-writer/same-as-libtiff/volumes", NULL, test_volumes_same_as_libtiff);
  ADD ("/engine/io/strip-writer/same-as-libtiff/slabs", NULL, test_slabs_same_as_libtiff);
  ADD ("/engine/io/strip-writer/steps-compose/classic", GINT_TO_POINTER (FALSE),
       test_steps_compose);
  ADD ("/engine/io/strip-writer/steps-compose/bigtiff", GINT_TO_POINTER (TRUE), test_steps_compose);
  ADD ("/engine/io/strip-writer/disk-full", NULL, test_disk_full);
  ADD ("/engine/io/strip-writer/writeback/requests", NULL, test_writeback_requests);
  ADD ("/engine/io/strip-writer/writeback/same-as-libtiff", NULL, test_writeback_same_as_libtiff);
  ADD ("/engine/io/strip-writer/slab-negative-label", NULL, test_slab_negative_label);
  return g_test_run ();
}

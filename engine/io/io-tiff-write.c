/* Supervox engine: writing label and volume TIFFs.
 *
 * Strips are filled (labels copied, volumes converted), run through the
 * predictor and compressed on a pool of worker threads, a window of strips
 * ahead of the writer; the calling thread hands them to libtiff raw
 * (TIFFWriteRawStrip) in file order, so the file is the same whatever the
 * number of threads. LZW goes through libtiff's own encoder on the calling
 * thread; the workers still fill its strips. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "internal.h"
#include "io-tiff-private.h"
#include "io-zarr-private.h"
#include "sv-config.h"

/* Above this many bytes of uncompressed data a file is written as BigTIFF;
 * classic TIFF offsets stop at 4 GiB and the margin leaves room for
 * directories and data that the codec could not shrink. */
#define SV_BIGTIFF_THRESHOLD (G_GUINT64_CONSTANT (0xFFFFFFFF) - (G_GUINT64_CONSTANT (1) << 25))

/* Pages up to 1 MiB are one strip (one codec call, one read for readers);
 * larger pages are cut into strips of about 512 KiB, which keeps every
 * worker busy on big 2D images and readers' buffers small. */
#define SV_PAGE_STRIP_MAX_BYTES (1024 * 1024)
#define SV_STRIP_TARGET_BYTES (512 * 1024)

/* At most this much raw strip data waits in the window. */
#define SV_WINDOW_MAX_BYTES (64 * 1024 * 1024)

/* One strip on its way to the file. */
typedef struct
{
  guint index; /* strip number from the first page written */
  guint8 *raw; /* filled rows */
  gsize raw_len;
  const guint8 *data; /* what goes to the file: raw or encoded */
  gsize len;
  SvTiffCodec *codec;
  gboolean done, failed;
} SvStripSlot;

typedef struct
{
  const SvTiffWriteJob *job;
  gsize row_bytes;
  guint32 rows_per_strip, strips_per_page;
  guint first_strip; /* strip number over the whole file of slot index 0 */
  gboolean encode; /* we compress; else libtiff does (LZW) */
  GMutex lock;
  GCond cond;
} SvStripPipeline;

static void
strip_encode_cb (gpointer data, gpointer user_data)
{
  SvStripSlot *slot = data;
  SvStripPipeline *pl = user_data;
  const SvTiffWriteJob *job = pl->job;
  guint z = (pl->first_strip + slot->index) / pl->strips_per_page;
  guint y0 = (slot->index % pl->strips_per_page) * pl->rows_per_strip;
  guint rows = MIN (pl->rows_per_strip, job->ny - y0);
  gboolean ok = TRUE;

  job->fill (z, y0, rows, slot->raw, job->user_data);
  slot->raw_len = rows * pl->row_bytes;
  slot->data = slot->raw;
  slot->len = slot->raw_len;
  if (pl->encode)
    {
      if (job->predictor)
        sv__tiff_predictor_apply (slot->raw, rows, job->nx, job->nc, job->bps / 8);
      slot->data = sv__tiff_codec_encode (slot->codec, job->compression, job->level, slot->raw,
                                          slot->raw_len, &slot->len);
      ok = slot->data != NULL;
    }
  g_mutex_lock (&pl->lock);
  slot->done = TRUE;
  slot->failed = !ok;
  g_cond_broadcast (&pl->cond);
  g_mutex_unlock (&pl->lock);
}

static double
resolution_from_spacing (double spacing)
{
  return spacing > 0.0 && isfinite (spacing) ? 1.0 / spacing : 1.0;
}

static guint16
tiff_compression_tag (SvTiffCompression compression)
{
  switch (compression)
    {
    case SV_TIFF_COMPRESSION_DEFLATE:
      return COMPRESSION_ADOBE_DEFLATE;
    case SV_TIFF_COMPRESSION_ZSTD:
      return COMPRESSION_ZSTD;
    case SV_TIFF_COMPRESSION_LZW:
      return COMPRESSION_LZW;
    case SV_TIFF_COMPRESSION_NONE:
    default:
      return COMPRESSION_NONE;
    }
}

static void
set_page_fields (TIFF *tif, const SvTiffWriteJob *job, guint32 rows_per_strip, guint z,
                 const char *description)
{
  guint16 compression = tiff_compression_tag (job->compression);

  TIFFSetField (tif, TIFFTAG_SUBFILETYPE, 0);
  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (guint32)job->nx);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (guint32)job->ny);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, (guint16)job->nc);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, job->bps);
  TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, job->format);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, job->nc == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField (tif, TIFFTAG_COMPRESSION, compression);
  /* Only codecs with a predictor know the tag. */
  if (compression != COMPRESSION_NONE)
    TIFFSetField (tif, TIFFTAG_PREDICTOR, job->predictor ? PREDICTOR_HORIZONTAL : PREDICTOR_NONE);
  TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip);
  /* ImageJ stores pixels per unit with no TIFF unit; the unit is in the
   * description. */
  TIFFSetField (tif, TIFFTAG_XRESOLUTION, resolution_from_spacing (job->spacing[2]));
  TIFFSetField (tif, TIFFTAG_YRESOLUTION, resolution_from_spacing (job->spacing[1]));
  TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
  if (z == 0)
    TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, description);
  TIFFSetField (tif, TIFFTAG_SOFTWARE, "supervox " SV_VERSION);
}

/* Writes pages [z0, z1) to `tif`; FALSE with the problem in `problem`. */
static gboolean
write_pages (TIFF *tif, const SvTiffWriteJob *job, guint z0, guint z1, SvTiffMessages *msgs,
             char **problem)
{
  SvStripPipeline pl = { .job = job };
  g_autofree char *description = sv__imagej_description (job->nz, job->spacing, job->unit);
  int n_threads = sv__resolve_threads (job->n_threads);
  SvStripSlot *slots;
  GThreadPool *pool;
  gsize strip_bytes;
  guint n_slots, total, pushed = 0;
  gboolean ok = TRUE;
  g_autoptr (GError) thread_error = NULL;

  pl.row_bytes = (gsize)job->nx * job->nc * (job->bps / 8);
  pl.rows_per_strip = pl.row_bytes * job->ny <= SV_PAGE_STRIP_MAX_BYTES
                          ? job->ny
                          : (guint32)CLAMP (SV_STRIP_TARGET_BYTES / pl.row_bytes, 1, job->ny);
  pl.strips_per_page = (job->ny + pl.rows_per_strip - 1) / pl.rows_per_strip;
  pl.encode = job->compression != SV_TIFF_COMPRESSION_LZW;
  strip_bytes = pl.row_bytes * pl.rows_per_strip;
  pl.first_strip = z0 * pl.strips_per_page;
  total = (z1 - z0) * pl.strips_per_page;
  n_slots = (guint)CLAMP (SV_WINDOW_MAX_BYTES / strip_bytes, 2, 2 * (gsize)n_threads + 2);
  n_slots = MIN (n_slots, total);

  if (!TIFFIsCODECConfigured (tiff_compression_tag (job->compression)))
    {
      g_autofree char *name = sv__tiff_compression_name (tiff_compression_tag (job->compression));
      *problem = g_strdup_printf ("this build of libtiff cannot write %s compression", name);
      return FALSE;
    }
  slots = g_new0 (SvStripSlot, n_slots);
  for (guint i = 0; i < n_slots && ok; i++)
    {
      slots[i].raw = g_try_malloc (strip_bytes);
      slots[i].codec = sv__tiff_codec_new ();
      ok = slots[i].raw != NULL;
    }
  if (!ok)
    {
      *problem = g_strdup ("not enough memory for the strip buffers");
      goto out;
    }
  /* Threads started now: a pool that starts them on demand queues a strip
   * even when its thread cannot start (no address space left), and the
   * wait below would never end. */
  pool = g_thread_pool_new (strip_encode_cb, &pl, n_threads, TRUE, &thread_error);
  if (thread_error != NULL)
    {
      *problem
          = g_strdup_printf ("cannot start the compression threads: %s", thread_error->message);
      g_thread_pool_free (pool, TRUE, TRUE);
      ok = FALSE;
      goto out;
    }
  g_mutex_init (&pl.lock);
  g_cond_init (&pl.cond);

  for (guint s = 0; s < total && ok; s++)
    {
      guint z = z0 + s / pl.strips_per_page, k = s % pl.strips_per_page;
      SvStripSlot *slot = &slots[s % n_slots];
      tmsize_t written;

      /* Keep the window full: slot of s + n_slots - 1 is the one of s - 1,
       * written in the previous round. */
      for (; pushed < total && pushed < s + n_slots; pushed++)
        {
          SvStripSlot *next = &slots[pushed % n_slots];
          next->index = pushed;
          next->done = FALSE;
          g_thread_pool_push (pool, next, NULL);
        }
      if (k == 0)
        set_page_fields (tif, job, pl.rows_per_strip, z, description);

      g_mutex_lock (&pl.lock);
      while (!slot->done)
        g_cond_wait (&pl.cond, &pl.lock);
      g_mutex_unlock (&pl.lock);
      if (slot->failed)
        {
          *problem = g_strdup_printf ("cannot compress page %u", z + 1);
          ok = FALSE;
          break;
        }

      written = pl.encode ? TIFFWriteRawStrip (tif, k, (void *)slot->data, (tmsize_t)slot->len)
                          : TIFFWriteEncodedStrip (tif, k, slot->raw, (tmsize_t)slot->raw_len);
      if (written < 0 || (k + 1 == pl.strips_per_page && !TIFFWriteDirectory (tif)))
        {
          *problem = g_strdup_printf ("cannot write page %u: %s", z + 1,
                                      sv__tiff_messages_text (msgs, "write error"));
          ok = FALSE;
        }
    }
  /* Waits for strips still in flight after a failure. */
  g_thread_pool_free (pool, FALSE, TRUE);
  g_mutex_clear (&pl.lock);
  g_cond_clear (&pl.cond);

out:
  for (guint i = 0; i < n_slots; i++)
    {
      g_free (slots[i].raw);
      sv__tiff_codec_free (slots[i].codec);
    }
  g_free (slots);
  return ok;
}

static gboolean
force_bigtiff (void)
{
  const char *env = g_getenv ("SV_TIFF_FORCE_BIGTIFF");
  return env != NULL && g_str_equal (env, "1");
}

static void
set_write_error (GError **error, SvEngineError code, const char *path, const char *problem)
{
  g_autofree char *name = g_filename_display_name (path);
  g_set_error (error, SV_ENGINE_ERROR, code, "%s: %s", name, problem);
}

gboolean
sv__tiff_output_begin (SvTiffOutput *out, const char *path, const SvTiffWriteJob *job,
                       GError **error)
{
  guint64 raw_bytes = (guint64)job->nz * job->ny * job->nx * job->nc * (job->bps / 8);
  gboolean bigtiff = raw_bytes > SV_BIGTIFF_THRESHOLD || force_bigtiff ();
  g_autofree char *problem = NULL;
  int fd, saved_errno;

  memset (out, 0, sizeof *out);
  out->path = g_strdup (path);
  out->tmp_path = g_strdup_printf ("%s.XXXXXX", path);
  out->msgs.name = out->path;
  fd = g_mkstemp_full (out->tmp_path, O_RDWR | O_CLOEXEC, 0666);
  if (fd < 0)
    {
      g_autofree char *dir = g_path_get_dirname (path);
      g_autofree char *dir_name = g_filename_display_name (dir);
      saved_errno = errno;
      problem
          = g_strdup_printf ("cannot write in folder %s: %s", dir_name, g_strerror (saved_errno));
      set_write_error (error, SV_ENGINE_ERROR_IO, path, problem);
      g_clear_pointer (&out->tmp_path, g_free);
      sv__tiff_output_abort (out);
      return FALSE;
    }

  out->opts = sv__tiff_options_new (&out->msgs);
  out->tif = TIFFFdOpenExt (fd, out->tmp_path, bigtiff ? "w8" : "w", out->opts);
  if (out->tif == NULL)
    {
      problem = g_strdup_printf ("cannot start the file: %s",
                                 sv__tiff_messages_text (&out->msgs, "libtiff failed"));
      close (fd);
      set_write_error (error, SV_ENGINE_ERROR_IO, path, problem);
      sv__tiff_output_abort (out);
      return FALSE;
    }
  return TRUE;
}

gboolean
sv__tiff_output_pages (SvTiffOutput *out, const SvTiffWriteJob *job, guint z0, guint z1,
                       GError **error)
{
  g_autofree char *problem = NULL;

  if (!write_pages (out->tif, job, z0, z1, &out->msgs, &problem))
    {
      set_write_error (error, SV_ENGINE_ERROR_IO, out->path, problem);
      sv__tiff_output_abort (out);
      return FALSE;
    }
  return TRUE;
}

gboolean
sv__tiff_output_finish (SvTiffOutput *out, GError **error)
{
  g_autofree char *problem = NULL;
  int saved_errno;

  sv__tiff_messages_reset (&out->msgs);
  if (!TIFFFlush (out->tif) || out->msgs.first_error != NULL)
    problem = g_strdup_printf ("cannot finish the file: %s",
                               sv__tiff_messages_text (&out->msgs, "write error"));
  /* Data on disk before the rename, and late errors (disk full on network
   * drives) surface here rather than after we reported success. */
  else if (fsync (TIFFFileno (out->tif)) != 0)
    {
      saved_errno = errno;
      problem = g_strdup_printf ("cannot finish the file: %s", g_strerror (saved_errno));
    }
  TIFFClose (out->tif);
  out->tif = NULL;

  if (problem == NULL && g_rename (out->tmp_path, out->path) != 0)
    {
      saved_errno = errno;
      problem = g_strdup_printf ("cannot replace the file: %s", g_strerror (saved_errno));
    }
  if (problem != NULL)
    {
      set_write_error (error, SV_ENGINE_ERROR_IO, out->path, problem);
      sv__tiff_output_abort (out);
      return FALSE;
    }
  g_clear_pointer (&out->tmp_path, g_free);
  sv__tiff_output_abort (out);
  return TRUE;
}

void
sv__tiff_output_abort (SvTiffOutput *out)
{
  if (out->tif != NULL)
    TIFFClose (out->tif);
  out->tif = NULL;
  if (out->tmp_path != NULL)
    g_unlink (out->tmp_path);
  g_clear_pointer (&out->tmp_path, g_free);
  g_clear_pointer (&out->opts, TIFFOpenOptionsFree);
  g_clear_pointer (&out->msgs.first_error, g_free);
  g_clear_pointer (&out->path, g_free);
}

/* Writes to "<path>.XXXXXX" beside `path`, then renames over `path`; any
 * failure removes the temporary file, so no partial output is left. */
static gboolean
write_tiff_atomically (const char *path, const SvTiffWriteJob *job, GError **error)
{
  SvTiffOutput out;

  return sv__tiff_output_begin (&out, path, job, error)
         && sv__tiff_output_pages (&out, job, 0, job->nz, error)
         && sv__tiff_output_finish (&out, error);
}

static void
fill_labels_cb (guint z, guint y0, guint rows, guint8 *dst, gpointer user_data)
{
  const SvLabels *labels = user_data;
  gsize offset = ((gsize)z * labels->ny + y0) * labels->nx;

  /* uint32 and int32 share the bit pattern of non-negative labels. */
  memcpy (dst, labels->data + offset, (gsize)rows * labels->nx * sizeof (gint32));
}

void
sv__tiff_write_job_set_codec (SvTiffWriteJob *job, const SvTiffWriteOptions *options,
                              gboolean auto_predictor)
{
  SvTiffWriteOptions defaults;

  if (options == NULL)
    {
      sv_tiff_write_options_init_defaults (&defaults);
      options = &defaults;
    }
  job->compression = options->compression;
  job->level = sv__tiff_write_options_level (options);
  job->n_threads = options->n_threads;
  job->predictor = options->predictor == SV_TIFF_PREDICTOR_AUTO
                       ? auto_predictor
                       : options->predictor == SV_TIFF_PREDICTOR_HORIZONTAL;
  /* Differencing float bit patterns helps nobody, and ImageJ cannot undo it. */
  if (job->format == SAMPLEFORMAT_IEEEFP || job->compression == SV_TIFF_COMPRESSION_NONE)
    job->predictor = FALSE;
}

gboolean
sv_tiff_write_labels_full (const char *path, const SvLabels *labels,
                           const SvTiffWriteOptions *options, GError **error)
{
  gsize n;
  gboolean negative = FALSE;
  SvTiffWriteJob job = { 0 };

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (labels != NULL && labels->data != NULL, FALSE);
  g_return_val_if_fail (labels->nz > 0 && labels->ny > 0 && labels->nx > 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  n = sv_labels_n_voxels (labels);
  for (gsize i = 0; i < n && !negative; i++)
    negative = labels->data[i] < 0;
  if (options != NULL && options->zarr != NULL)
    return sv__tiff_write_labels_zarr (path, labels, negative, options, error);

  job.nz = labels->nz;
  job.ny = labels->ny;
  job.nx = labels->nx;
  job.nc = 1;
  job.bps = 32;
  job.format = negative ? SAMPLEFORMAT_INT : SAMPLEFORMAT_UINT;
  /* No predictor by default: ImageJ undoes horizontal differencing of
   * 32-bit integers in floating point, which breaks on negative steps; runs
   * of equal labels deflate well without it. */
  sv__tiff_write_job_set_codec (&job, options, FALSE);
  job.spacing = labels->spacing;
  job.unit = labels->unit;
  job.fill = fill_labels_cb;
  job.user_data = (gpointer)labels;
  return write_tiff_atomically (path, &job, error);
}

gboolean
sv_tiff_write_labels (const char *path, const SvLabels *labels, GError **error)
{
  return sv_tiff_write_labels_full (path, labels, NULL, error);
}

typedef struct
{
  const SvVolume *volume;
  SvSampleType as;
} SvVolumeFill;

static void
fill_volume_cb (guint z, guint y0, guint rows, guint8 *dst, gpointer user_data)
{
  const SvVolumeFill *f = user_data;
  const SvVolume *v = f->volume;
  gsize n = (gsize)rows * v->nx * v->nc;
  const float *src = v->data + ((gsize)z * v->ny + y0) * v->nx * v->nc;

  switch (f->as)
    {
    case SV_SAMPLE_F32:
      memcpy (dst, src, n * sizeof (float));
      break;
    case SV_SAMPLE_U8:
      for (gsize i = 0; i < n; i++)
        {
          float x = src[i] * 255.0f;
          dst[i] = (guint8)(x > 0.0f ? (x < 255.0f ? lrintf (x) : 255) : 0);
        }
      break;
    case SV_SAMPLE_U16:
      {
        guint16 *out = (guint16 *)(void *)dst;
        for (gsize i = 0; i < n; i++)
          {
            float x = src[i] * 65535.0f;
            out[i] = (guint16)(x > 0.0f ? (x < 65535.0f ? lrintf (x) : 65535) : 0);
          }
      }
      break;
    default:
      g_assert_not_reached ();
    }
}

gboolean
sv_tiff_write_volume_full (const char *path, const SvVolume *volume, SvSampleType as,
                           const SvTiffWriteOptions *options, GError **error)
{
  SvTiffWriteJob job = { 0 };
  SvVolumeFill fill = { volume, as };

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (volume != NULL && volume->data != NULL, FALSE);
  g_return_val_if_fail (volume->nc == 1 || volume->nc == 3, FALSE);
  g_return_val_if_fail (as == SV_SAMPLE_F32 || as == SV_SAMPLE_U8 || as == SV_SAMPLE_U16, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  job.nz = volume->nz;
  job.ny = volume->ny;
  job.nx = volume->nx;
  job.nc = volume->nc;
  job.bps = (guint16)(sv__sample_type_bytes (as) * 8);
  job.format = as == SV_SAMPLE_F32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT;
  /* Horizontal differencing helps smooth 8/16-bit images and every common
   * reader undoes it. */
  sv__tiff_write_job_set_codec (&job, options, TRUE);
  job.spacing = volume->spacing;
  job.unit = volume->unit;
  job.fill = fill_volume_cb;
  job.user_data = &fill;
  return write_tiff_atomically (path, &job, error);
}

gboolean
sv_tiff_write_volume (const char *path, const SvVolume *volume, SvSampleType as, GError **error)
{
  return sv_tiff_write_volume_full (path, volume, as, NULL, error);
}

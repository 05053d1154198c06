/* Supervox engine: writing label and volume TIFFs.
 *
 * Strips are filled (labels copied, volumes converted), run through the
 * predictor and compressed on a pool of worker threads, which also write
 * them at their offsets (io-tiff-strip-writer.c) in the layout libtiff
 * gives a file (io-tiff-layout.c); so the file is the same whatever the
 * number of threads, and the same as libtiff's own in-order writer
 * (io-tiff-write-libtiff.c), which stays for the tests and as a way out. */
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

/* Above this many bytes of uncompressed data a file is written as BigTIFF;
 * classic TIFF offsets stop at 4 GiB and the margin leaves room for
 * directories and data that the codec could not shrink. */
#define SV_BIGTIFF_THRESHOLD (G_GUINT64_CONSTANT (0xFFFFFFFF) - (G_GUINT64_CONSTANT (1) << 25))

static gboolean
env_is (const char *name, const char *value)
{
  const char *env = g_getenv (name);
  return env != NULL && g_str_equal (env, value);
}

/* The strip writer, or NULL (with `problem` unset) when libtiff writes the
 * file: asked for (SV_TIFF_WRITER=libtiff), or a layout we do not know
 * (an error instead with SV_TIFF_WRITER=strips, which the tests set). */
static SvTiffStripWriter *
start_strip_writer (int fd, const SvTiffWriteJob *job, gboolean bigtiff, char **problem)
{
  g_autofree char *why = NULL;
  SvTiffLayout *layout;

  if (env_is ("SV_TIFF_WRITER", "libtiff"))
    return NULL;
  layout = sv__tiff_layout_new (job, bigtiff, &why);
  if (layout == NULL && env_is ("SV_TIFF_WRITER", "strips"))
    {
      *problem = g_strdup_printf ("cannot lay out the file: %s", why);
      return NULL;
    }
  if (layout == NULL)
    {
      g_debug ("libtiff writes the file: %s", why);
      return NULL;
    }
  return sv__tiff_strip_writer_new (fd, job, layout, problem);
}

static void
set_write_error (GError **error, SvEngineError code, const char *path, const char *problem)
{
  g_autofree char *name = g_filename_display_name (path);
  g_set_error (error, SV_ENGINE_ERROR, code, "%s: %s", name, problem);
}

void
sv__tiff_label_job_init (SvTiffWriteJob *job, guint nz, guint ny, guint nx, gboolean negative,
                         const SvTiffWriteOptions *options, const double *spacing,
                         const char *unit, SvFillRows fill, gpointer user_data)
{
  memset (job, 0, sizeof *job);
  job->nz = nz;
  job->ny = ny;
  job->nx = nx;
  job->nc = 1;
  job->bps = 32;
  job->format = negative ? SAMPLEFORMAT_INT : SAMPLEFORMAT_UINT;
  /* No predictor by default: ImageJ undoes horizontal differencing of
   * 32-bit integers in floating point, which breaks on negative steps; runs
   * of equal labels deflate well without it. */
  sv__tiff_write_job_set_codec (job, options, FALSE);
  job->spacing = spacing;
  job->unit = unit;
  job->fill = fill;
  job->user_data = user_data;
}

gboolean
sv__tiff_wants_bigtiff (guint64 raw_bytes)
{
  return raw_bytes > SV_BIGTIFF_THRESHOLD || env_is ("SV_TIFF_FORCE_BIGTIFF", "1");
}

gboolean
sv__tiff_output_begin (SvTiffOutput *out, const char *path, const SvTiffWriteJob *job,
                       GError **error)
{
  guint64 raw_bytes = (guint64)job->nz * job->ny * job->nx * job->nc * (job->bps / 8);
  gboolean bigtiff = sv__tiff_wants_bigtiff (raw_bytes);
  guint16 compression = sv__tiff_compression_tag (job->compression);
  g_autofree char *problem = NULL;
  int fd, saved_errno;

  memset (out, 0, sizeof *out);
  out->fd = -1;
  if (!TIFFIsCODECConfigured (compression))
    {
      g_autofree char *name = sv__tiff_compression_name (compression);
      problem = g_strdup_printf ("this build of libtiff cannot write %s compression", name);
      set_write_error (error, SV_ENGINE_ERROR_IO, path, problem);
      sv__tiff_output_abort (out);
      return FALSE;
    }
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

  out->fd = fd;
  out->strips = start_strip_writer (fd, job, bigtiff, &problem);
  if (problem != NULL)
    {
      set_write_error (error, SV_ENGINE_ERROR_IO, path, problem);
      sv__tiff_output_abort (out);
      return FALSE;
    }
  if (out->strips != NULL)
    return TRUE;

  out->opts = sv__tiff_options_new (&out->msgs);
  out->tif = TIFFFdOpenExt (fd, out->tmp_path, bigtiff ? "w8" : "w", out->opts);
  if (out->tif == NULL)
    {
      problem = g_strdup_printf ("cannot start the file: %s",
                                 sv__tiff_messages_text (&out->msgs, "libtiff failed"));
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
  gboolean ok = out->strips != NULL
                    ? sv__tiff_strip_writer_pages (out->strips, z0, z1, &problem)
                    : sv__tiff_write_pages_libtiff (out->tif, job, z0, z1, &out->msgs, &problem);

  if (!ok)
    {
      set_write_error (error, SV_ENGINE_ERROR_IO, out->path, problem);
      sv__tiff_output_abort (out);
      return FALSE;
    }
  return TRUE;
}

gboolean
sv__tiff_output_strips (SvTiffOutput *out, guint z0, guint z1, const guint64 *sizes,
                        const guint8 *bytes, GError **error)
{
  g_autofree char *problem = NULL;

  g_return_val_if_fail (out->strips != NULL, FALSE);
  if (!sv__tiff_strip_writer_put_strips (out->strips, z0, z1, sizes, bytes, &problem))
    {
      set_write_error (error, SV_ENGINE_ERROR_IO, out->path, problem);
      sv__tiff_output_abort (out);
      return FALSE;
    }
  return TRUE;
}

GArray *
sv__tiff_output_place_strips (SvTiffOutput *out, guint z0, guint z1, const guint64 *sizes,
                              const guint8 *bytes, GError **error)
{
  g_autofree char *problem = NULL;
  GArray *placed;

  g_return_val_if_fail (out->strips != NULL, NULL);
  placed = sv__tiff_strip_writer_place_strips (out->strips, z0, z1, sizes, bytes, &problem);
  if (placed == NULL)
    set_write_error (error, SV_ENGINE_ERROR_IO, out->path, problem);
  return placed;
}

gboolean
sv__tiff_output_write_placed (SvTiffOutput *out, GArray *placed, GError **error)
{
  g_autofree char *problem = NULL;

  if (!sv__tiff_strip_writer_write_placed (out->strips, placed, &problem))
    {
      set_write_error (error, SV_ENGINE_ERROR_IO, out->path, problem);
      return FALSE;
    }
  return TRUE;
}

gboolean
sv__tiff_output_finish (SvTiffOutput *out, GError **error)
{
  return sv__tiff_output_finish_later (out, NULL, error);
}

gboolean
sv__tiff_output_finish_later (SvTiffOutput *out, SvFileFinish **later, GError **error)
{
  g_autofree char *problem = NULL;
  int saved_errno, sync_fd = -1;

  sv__tiff_messages_reset (&out->msgs);
  /* The strip writer has written every directory with its page. */
  if (out->tif != NULL && (!TIFFFlush (out->tif) || out->msgs.first_error != NULL))
    problem = g_strdup_printf ("cannot finish the file: %s",
                               sv__tiff_messages_text (&out->msgs, "write error"));
  /* Left for later: a descriptor of its own on the file for the sync. */
  else if (later != NULL && (sync_fd = dup (out->fd)) < 0)
    {
      saved_errno = errno;
      problem = g_strdup_printf ("cannot finish the file: %s", g_strerror (saved_errno));
    }
  /* Data on disk before the rename, and late errors (disk full on network
   * drives) surface here rather than after we reported success. */
  else if (later == NULL && fsync (out->fd) != 0)
    {
      saved_errno = errno;
      problem = g_strdup_printf ("cannot finish the file: %s", g_strerror (saved_errno));
    }
  g_clear_pointer (&out->strips, sv__tiff_strip_writer_free);
  if (out->tif != NULL)
    TIFFClose (out->tif);
  else if (close (out->fd) != 0 && problem == NULL)
    {
      saved_errno = errno;
      problem = g_strdup_printf ("cannot finish the file: %s", g_strerror (saved_errno));
    }
  out->tif = NULL;
  out->fd = -1;

  if (problem == NULL && later != NULL)
    {
      /* The temporary file is the finish's from now on. */
      *later = sv__file_finish_new (sync_fd, g_steal_pointer (&out->tmp_path),
                                    g_strdup (out->path));
      sv__tiff_output_abort (out);
      return TRUE;
    }
  if (sync_fd >= 0)
    close (sync_fd);
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
  /* Waits for the strips in flight before their file goes. */
  g_clear_pointer (&out->strips, sv__tiff_strip_writer_free);
  if (out->tif != NULL)
    TIFFClose (out->tif);
  else if (out->fd >= 0)
    close (out->fd);
  out->tif = NULL;
  out->fd = -1;
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

/* Whether any label is negative, on every core: one core reading a 1024³
 * volume took a tenth of a GPU run. */
typedef struct
{
  const gint32 *data;
  gsize n;
  int n_threads;
  gint found;
} NegativeScan;

static void
negative_scan_cb (gpointer data, int thread)
{
  NegativeScan *scan = data;
  const gsize share = (scan->n + (gsize)scan->n_threads - 1) / (gsize)scan->n_threads;
  const gsize end = MIN ((gsize)(thread + 1) * share, scan->n);

  for (gsize i0 = (gsize)thread * share; i0 < end && !g_atomic_int_get (&scan->found);)
    {
      const gsize i1 = MIN (i0 + ((gsize)1 << 20), end);
      gint32 any = 0;

      for (gsize i = i0; i < i1; i++)
        any |= scan->data[i];
      if (any < 0)
        g_atomic_int_set (&scan->found, 1);
      i0 = i1;
    }
}

static gboolean
any_negative (const SvLabels *labels, const SvTiffWriteOptions *options)
{
  NegativeScan scan = { labels->data, sv_labels_n_voxels (labels), 1, 0 };

  scan.n_threads = (int)MIN ((gsize)sv__resolve_threads (options ? options->n_threads : 0),
                             scan.n / ((gsize)1 << 20) + 1);
  sv__run_parallel (scan.n_threads, negative_scan_cb, &scan);
  return scan.found != 0;
}

gboolean
sv_tiff_write_labels_full (const char *path, const SvLabels *labels,
                           const SvTiffWriteOptions *options, GError **error)
{
  gboolean negative;
  SvTiffWriteJob job = { 0 };

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (labels != NULL && labels->data != NULL, FALSE);
  g_return_val_if_fail (labels->nz > 0 && labels->ny > 0 && labels->nx > 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  negative = any_negative (labels, options);
  if (options != NULL && options->zarr != NULL)
    return sv__tiff_write_labels_zarr (path, labels, negative, options, error);

  sv__tiff_label_job_init (&job, labels->nz, labels->ny, labels->nx, negative, options,
                           labels->spacing, labels->unit, fill_labels_cb, (gpointer)labels);
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

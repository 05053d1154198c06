/* Supervox engine: the pages [z0, z1) of a label file that several writers
 * (MPI ranks) share, each writing its own. A writer compresses its strips
 * on all its threads and places them from a cursor of the parity of its
 * first strip's offset (io-tiff-layout.c); the writers exchange their
 * extents (an exclusive scan) and their first directories' places, then
 * each writes its strips and directories at their final offsets into the
 * one file, and the first writes the header: the file single writer
 * writes, byte for byte, with no writer receiving another's labels. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-io-slab.h"

#include <string.h>

#include "internal.h"
#include "io-tiff-private.h"

typedef struct
{
  guint8 **strips; /* compressed, owned */
  guint64 *sizes, *offsets;
  guint64 directory;
} PartPage;

struct _SvTiffPartWriter
{
  SvTiffWriteJob job;
  SvStripGeometry geometry;
  SvTiffLayout *layout;
  gboolean negative;
  double spacing[3];
  char *unit;
  guint z0, z1, z_next;
  PartPage *pages;    /* z1 − z0 */
  guint64 origin;     /* where the cursor started: the header's end, or a parity */
  guint64 cursor;     /* the end of what is placed */
  const gint32 *slab; /* being appended, slices [slab_z0, …) */
  guint slab_z0;
  gint bad_slice; /* 1 + a slice with a negative label in a file for labels >= 0 */
};

static void
fill_cb (guint z, guint y0, guint rows, guint8 *dst, gpointer user_data)
{
  SvTiffPartWriter *w = user_data;
  const gint32 *src = w->slab + ((gsize)(z - w->slab_z0) * w->job.ny + y0) * w->job.nx;

  if (sv__tiff_copy_labels (dst, src, (gsize)rows * w->job.nx) && !w->negative)
    g_atomic_int_compare_and_exchange (&w->bad_slice, 0, (gint)z + 1);
}

SvTiffPartWriter *
sv_tiff_part_writer_new (guint nz, guint ny, guint nx, gboolean negative, const double spacing[3],
                         const char *unit, const SvTiffWriteOptions *options, guint z0, guint z1,
                         GError **error)
{
  g_autoptr (SvTiffPartWriter) w = g_new0 (SvTiffPartWriter, 1);
  const guint64 raw_bytes = (guint64)nz * ny * nx * sizeof (gint32);
  g_autofree char *problem = NULL;

  g_return_val_if_fail (nz > 0 && ny > 0 && nx > 0 && z0 <= z1 && z1 <= nz, NULL);
  w->negative = negative;
  if (spacing != NULL)
    memcpy (w->spacing, spacing, sizeof w->spacing);
  else
    w->spacing[0] = w->spacing[1] = w->spacing[2] = 1.0;
  w->unit = g_strdup (unit);
  sv__tiff_label_job_init (&w->job, nz, ny, nx, negative, options, w->spacing, w->unit, fill_cb,
                           w);
  sv__tiff_strip_geometry (&w->job, &w->geometry);
  w->layout = sv__tiff_layout_new (&w->job, sv__tiff_wants_bigtiff (raw_bytes), &problem);
  if (w->layout == NULL)
    {
      /* Deterministic: every writer of the file gets the same answer. */
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                   "the label file cannot be shared among writers: %s", problem);
      return NULL;
    }
  w->z0 = w->z_next = z0;
  w->z1 = z1;
  w->pages = g_new0 (PartPage, MAX (z1 - z0, 1));
  /* The first writer's strips follow the header; any other's start on
   * the parity its first strip has in every file of this layout. */
  w->origin = z0 == 0   ? sv__tiff_layout_header_size (w->layout)
              : z0 < z1 ? sv__tiff_layout_strip_parity (w->layout, z0)
                        : 0;
  w->cursor = w->origin;
  return g_steal_pointer (&w);
}

/* Strips compressed by threads in shares of the slab's strips; each keeps
 * its own copy of what its codec made. */
typedef struct
{
  SvTiffPartWriter *w;
  guint64 first, count; /* strips over the file */
  int n_threads;
  gint failed;
} EncodeJob;

static void
encode_share (gpointer data, int t)
{
  EncodeJob *job = data;
  SvTiffPartWriter *w = job->w;
  const guint32 per_page = w->geometry.strips_per_page;
  SvTiffCodec *codec = sv__tiff_codec_new ();
  g_autofree guint8 *raw = g_try_malloc (w->geometry.strip_bytes);

  for (guint64 s = job->first + (guint64)t; raw != NULL && s < job->first + job->count;
       s += (guint64)job->n_threads)
    {
      PartPage *page = &w->pages[s / per_page - w->z0];
      gsize len = 0;
      const guint8 *bytes = sv__tiff_strip_encode (&w->job, &w->geometry, codec, s, raw, &len);

      if (bytes == NULL)
        {
          g_atomic_int_set (&job->failed, 1);
          break;
        }
      page->strips[s % per_page] = g_memdup2 (bytes, len);
      page->sizes[s % per_page] = len;
    }
  if (raw == NULL)
    g_atomic_int_set (&job->failed, 1);
  sv__tiff_codec_free (codec);
}

gboolean
sv_tiff_part_writer_append (SvTiffPartWriter *w, const gint32 *labels, guint depth, GError **error)
{
  const guint32 per_page = w->geometry.strips_per_page;
  EncodeJob job = { w, (guint64)w->z_next * per_page, (guint64)depth * per_page, 1, 0 };

  g_return_val_if_fail (w->z_next + depth <= w->z1, FALSE);
  for (guint z = w->z_next; z < w->z_next + depth; z++)
    {
      PartPage *page = &w->pages[z - w->z0];
      page->strips = g_new0 (guint8 *, per_page);
      page->sizes = g_new0 (guint64, per_page);
      page->offsets = g_new0 (guint64, per_page);
    }
  w->slab = labels;
  w->slab_z0 = w->z_next;
  job.n_threads = (int)MIN ((guint64)sv__resolve_threads (w->job.n_threads), job.count);
  sv__run_parallel (MAX (job.n_threads, 1), encode_share, &job);
  w->slab = NULL;
  if (job.failed)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                   "cannot compress slices %u to %u of the labels", w->z_next, w->z_next + depth);
      return FALSE;
    }
  if (g_atomic_int_get (&w->bad_slice) != 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "a negative label in slice %d of a file started for labels >= 0",
                   g_atomic_int_get (&w->bad_slice) - 1);
      return FALSE;
    }
  for (guint z = w->z_next; z < w->z_next + depth; z++)
    {
      PartPage *page = &w->pages[z - w->z0];
      if (!sv__tiff_layout_place_page (w->layout, z, page->sizes, page->offsets, &w->cursor,
                                       &page->directory))
        {
          g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                               "the file would pass the 4 GiB a classic TIFF can hold");
          return FALSE;
        }
    }
  w->z_next += depth;
  return TRUE;
}

void
sv_tiff_part_writer_extent (const SvTiffPartWriter *w, guint64 *origin, guint64 *extent,
                            guint64 *first_directory)
{
  *origin = w->origin;
  *extent = w->cursor - w->origin;
  *first_directory = w->z0 < w->z1 ? w->pages[0].directory - w->origin : 0;
}

gboolean
sv_tiff_part_writer_write (SvTiffPartWriter *w, int fd, guint64 start, guint64 next_directory,
                           GError **error)
{
  /* Offsets placed from `origin` move to start at `start`: an even shift
   * (the parity matched), so the directories stay where libtiff puts
   * them. */
  const guint64 shift = start - w->origin;
  int saved_errno = 0;

  g_return_val_if_fail (w->z_next == w->z1, FALSE);
  for (guint z = w->z0; z < w->z1; z++)
    {
      PartPage *page = &w->pages[z - w->z0];

      for (guint32 k = 0; k < w->geometry.strips_per_page; k++)
        {
          page->offsets[k] += shift;
          if (!sv__tiff_write_at (fd, page->offsets[k], page->strips[k], page->sizes[k],
                                  &saved_errno))
            goto failed;
        }
      page->directory += shift;
    }
  for (guint z = w->z0; z < w->z1; z++)
    {
      PartPage *page = &w->pages[z - w->z0];
      const gsize len = sv__tiff_layout_directory_size (w->layout, z);
      g_autofree guint8 *dir = g_malloc (len);
      const guint64 next = z + 1 < w->z1 ? w->pages[z + 1 - w->z0].directory : next_directory;

      if (!sv__tiff_layout_directory (w->layout, z, page->offsets, page->sizes, page->directory,
                                      next, dir))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                       "cannot write page %u: a strip is too large for its directory", z + 1);
          return FALSE;
        }
      if (!sv__tiff_write_at (fd, page->directory, dir, len, &saved_errno))
        goto failed;
    }
  if (w->z0 == 0 && w->z0 < w->z1)
    {
      guint8 header[16];

      sv__tiff_layout_header (w->layout, w->pages[0].directory, header);
      if (!sv__tiff_write_at (fd, 0, header, sv__tiff_layout_header_size (w->layout), &saved_errno))
        goto failed;
    }
  return TRUE;
failed:
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "cannot write the label file: %s",
               g_strerror (saved_errno));
  return FALSE;
}

void
sv_tiff_part_writer_free (SvTiffPartWriter *w)
{
  if (w == NULL)
    return;
  for (guint z = w->z0; w->pages != NULL && z < w->z1; z++)
    {
      PartPage *page = &w->pages[z - w->z0];
      for (guint32 k = 0; page->strips != NULL && k < w->geometry.strips_per_page; k++)
        g_free (page->strips[k]);
      g_free (page->strips);
      g_free (page->sizes);
      g_free (page->offsets);
    }
  g_free (w->pages);
  sv__tiff_layout_free (w->layout);
  g_free (w->unit);
  g_free (w);
}

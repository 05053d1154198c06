/* Supervox engine: decoding TIFF pages on worker threads.
 *
 * Pages whose codec we handle (none, deflate, zstd; predictors 2 and 3) are
 * decoded by every thread at once: strips and tiles are read with pread
 * from the offsets recorded when the file was opened, decompressed with
 * libdeflate or libzstd and un-predicted, straight into a per-thread page
 * buffer. Pages with other codecs go through libtiff's own on the first
 * thread (one TIFF handle is not shared between threads), and so does a
 * page whose data our decoder rejects, so that libtiff's message is the one
 * the user sees. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "internal.h"
#include "io-tiff-private.h"

/* Copies `n` samples of `size` bytes from a packed plane into every
 * `stride`-th sample of `dst`. */
static void
scatter_samples (guint8 *dst, const guint8 *src, gsize n, guint size, guint stride)
{
  gsize step = (gsize)size * stride;

  switch (size)
    {
    case 1:
      for (gsize i = 0; i < n; i++)
        dst[i * step] = src[i];
      break;
    case 2:
      for (gsize i = 0; i < n; i++)
        memcpy (dst + i * step, src + i * 2, 2);
      break;
    case 4:
      for (gsize i = 0; i < n; i++)
        memcpy (dst + i * step, src + i * 4, 4);
      break;
    default:
      for (gsize i = 0; i < n; i++)
        memcpy (dst + i * step, src + (gsize)i * size, size);
      break;
    }
}

/* One thread's buffers. */
typedef struct
{
  guint8 *page;    /* ny*nx*spp samples, channel fastest */
  guint8 *scratch; /* one strip plane or one tile */
  gsize scratch_size;
  guint8 *raw; /* stored (compressed) bytes of one strip or tile */
  gsize raw_size;
  SvTiffCodec *codec;
} SvPageBuffers;

static void
buffers_clear (SvPageBuffers *b)
{
  g_free (b->page);
  g_free (b->scratch);
  g_free (b->raw);
  sv__tiff_codec_free (b->codec);
  memset (b, 0, sizeof *b);
}

static gboolean
ensure_buffer (guint8 **buf, gsize *have, gsize size)
{
  if (*have >= size)
    return TRUE;
  g_free (*buf);
  *buf = g_try_malloc (size);
  *have = *buf ? size : 0;
  return *buf != NULL;
}

/* Where one strip or tile comes from and what it decodes to. */
typedef struct
{
  guint32 index;
  gsize bytes;       /* decoded size */
  gsize rows, width; /* pixels */
  guint stride;      /* samples per pixel in this chunk */
} SvChunk;

/* Reads and decodes one chunk: with libtiff when `tif` is set, else with
 * pread and our codec. */
static gboolean
read_chunk (SvTiffReader *r, TIFF *tif, const SvTiffPage *p, SvPageBuffers *b, const SvChunk *c,
            guint8 *dst)
{
  const SvPageLayout *l = &p->layout;
  guint64 offset = p->offsets[c->index], count = p->counts[c->index];

  if (tif != NULL)
    {
      tmsize_t got = l->tiled ? TIFFReadEncodedTile (tif, c->index, dst, (tmsize_t)c->bytes)
                              : TIFFReadEncodedStrip (tif, c->index, dst, (tmsize_t)c->bytes);
      return l->tiled ? got >= 0 : got >= (tmsize_t)c->bytes;
    }
  if (l->compression == COMPRESSION_NONE)
    return count >= c->bytes && sv__tiff_read_at (r->fd, offset, dst, c->bytes);
  if (count == 0 || !ensure_buffer (&b->raw, &b->raw_size, count)
      || !sv__tiff_read_at (r->fd, offset, b->raw, count))
    return FALSE;
  if (b->codec == NULL)
    b->codec = sv__tiff_codec_new ();
  if (!sv__tiff_codec_decode (b->codec, l->compression, b->raw, count, dst, c->bytes))
    return FALSE;
  return sv__tiff_predictor_undo (b->codec, l->predictor, dst, c->rows, c->width, c->stride,
                                  l->bps / 8);
}

/* Decodes page `p` into b->page in contiguous sample order. With tif NULL
 * a failure sets no error: the caller hands the page to libtiff. */
static gboolean
decode_page (SvTiffReader *r, TIFF *tif, const SvTiffPage *p, SvPageBuffers *b, GError **error)
{
  const SvPageLayout *l = &p->layout;
  guint bsize = l->bps / 8;
  guint nc = l->spp;
  gsize row_bytes = (gsize)l->width * nc * bsize;
  gboolean separate = l->planar == PLANARCONFIG_SEPARATE && nc > 1;
  guint planes = separate ? nc : 1;
  const char *what = l->tiled ? "tile data is incomplete" : "strip data is incomplete";

  if (tif != NULL)
    sv__tiff_messages_reset (&r->msgs);
  if (!l->tiled)
    {
      guint32 per_plane = (l->height + l->rows_per_strip - 1) / l->rows_per_strip;
      gsize plane_row_bytes = (gsize)l->width * bsize;

      if (separate
          && !ensure_buffer (&b->scratch, &b->scratch_size,
                             (gsize)l->rows_per_strip * plane_row_bytes))
        goto no_memory;
      for (guint pl = 0; pl < planes; pl++)
        for (guint32 k = 0; k < per_plane; k++)
          {
            guint32 y0 = k * l->rows_per_strip;
            guint32 rows = MIN (l->rows_per_strip, l->height - y0);
            SvChunk c = { .index = pl * per_plane + k,
                          .bytes = rows * (separate ? plane_row_bytes : row_bytes),
                          .rows = rows,
                          .width = l->width,
                          .stride = separate ? 1 : nc };
            guint8 *dst = separate ? b->scratch : b->page + y0 * row_bytes;

            if (c.index >= p->n_chunks || !read_chunk (r, tif, p, b, &c, dst))
              goto failed;
            if (separate)
              scatter_samples (b->page + y0 * row_bytes + (gsize)pl * bsize, dst,
                               (gsize)rows * l->width, bsize, nc);
          }
    }
  else
    {
      gsize tile_row_bytes = (gsize)l->tile_width * (separate ? 1 : nc) * bsize;
      gsize tile_bytes = tile_row_bytes * l->tile_height;

      if (!ensure_buffer (&b->scratch, &b->scratch_size, tile_bytes))
        goto no_memory;
      for (guint pl = 0; pl < planes; pl++)
        for (guint32 ty = 0; ty < l->height; ty += l->tile_height)
          for (guint32 tx = 0; tx < l->width; tx += l->tile_width)
            {
              guint32 tiles_across = (l->width + l->tile_width - 1) / l->tile_width;
              guint32 tiles_down = (l->height + l->tile_height - 1) / l->tile_height;
              SvChunk c = { .index = (pl * tiles_down + ty / l->tile_height) * tiles_across
                                     + tx / l->tile_width,
                            .bytes = tile_bytes,
                            .rows = l->tile_height,
                            .width = l->tile_width,
                            .stride = separate ? 1 : nc };
              guint32 rows = MIN (l->tile_height, l->height - ty);
              guint32 cols = MIN (l->tile_width, l->width - tx);

              if (c.index >= p->n_chunks || !read_chunk (r, tif, p, b, &c, b->scratch))
                goto failed;
              for (guint32 y = 0; y < rows; y++)
                {
                  guint8 *dst = b->page + (ty + y) * row_bytes + (gsize)tx * nc * bsize;
                  const guint8 *src = b->scratch + y * tile_row_bytes;
                  if (separate)
                    scatter_samples (dst + (gsize)pl * bsize, src, cols, bsize, nc);
                  else
                    memcpy (dst, src, (gsize)cols * nc * bsize);
                }
            }
    }
  return TRUE;

failed:
  if (tif != NULL)
    sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT, "cannot decode page %u: %s", p->number,
                           sv__tiff_messages_text (&r->msgs, what));
  return FALSE;

no_memory:
  sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_NO_MEMORY,
                         "not enough memory for a decoding buffer");
  return FALSE;
}

/* ------------------------------------------------------------------------ */
/* Threads */

typedef struct
{
  SvTiffReader *r;
  SvPageFunc func;
  gpointer user_data;
  gsize page_bytes, n_samples;

  gboolean *todo;  /* per page: still to decode */
  gboolean *retry; /* per page: our decoder failed, libtiff's turn */
  guint *fast;     /* indices of the pages the threads share */
  guint n_fast;
  gint next;              /* atomic: next entry of `fast` */
  gboolean libtiff_first; /* thread 0 has libtiff pages to do first */

  GMutex lock;
  guint error_page; /* index of the page `error` is about */
  GError *error;
  gint stop; /* atomic */
} SvDecodeJob;

static void
job_fail (SvDecodeJob *job, guint index, GError *error)
{
  g_mutex_lock (&job->lock);
  if (job->error == NULL || index < job->error_page)
    {
      g_clear_error (&job->error);
      job->error = error;
      job->error_page = index;
    }
  else
    g_error_free (error);
  g_mutex_unlock (&job->lock);
  g_atomic_int_set (&job->stop, 1);
}

/* Walks the directories in order and decodes the pages `which` marks with
 * libtiff. Runs on one thread only: it owns r->tif and r->msgs. */
static void
decode_with_libtiff (SvDecodeJob *job, SvPageBuffers *b, const gboolean *which)
{
  SvTiffReader *r = job->r;
  TIFF *tif = r->tif;

  for (guint i = 0; i < r->pages->len && !g_atomic_int_get (&job->stop); i++)
    {
      const SvTiffPage *p = sv__tiff_reader_page (r, i);
      GError *error = NULL;

      if (!which[i])
        continue;
      sv__tiff_messages_reset (&r->msgs);
      if (TIFFCurrentDirectory (tif) > p->dir && !TIFFSetDirectory (tif, 0))
        goto corrupt;
      while (TIFFCurrentDirectory (tif) < p->dir)
        if (!TIFFReadDirectory (tif))
          goto corrupt;
      /* Ask libtiff for RGB out of JPEG YCbCr. */
      if (p->layout.compression == COMPRESSION_JPEG && p->layout.photometric == PHOTOMETRIC_YCBCR)
        TIFFSetField (tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
      if (!decode_page (r, tif, p, b, &error)
          || !job->func (r, p, b->page, job->n_samples, job->user_data, &error))
        {
          job_fail (job, i, error);
          return;
        }
      continue;

    corrupt:
      sv__tiff_reader_error (
          r, &error, SV_ENGINE_ERROR_FORMAT, "corrupt: cannot read page %u: %s", p->number,
          sv__tiff_messages_text (&r->msgs, "the file changed while it was read"));
      job_fail (job, i, error);
      return;
    }
}

static void
decode_thread (gpointer data, int thread)
{
  SvDecodeJob *job = data;
  SvTiffReader *r = job->r;
  SvPageBuffers b = { 0 };

  b.page = g_try_malloc (job->page_bytes);
  if (b.page == NULL)
    {
      GError *error = NULL;
      g_autofree char *text = g_format_size (job->page_bytes);
      sv__tiff_reader_error (r, &error, SV_ENGINE_ERROR_NO_MEMORY,
                             "not enough memory for one %s page", text);
      job_fail (job, 0, error);
      return;
    }
  if (thread == 0 && job->libtiff_first)
    {
      g_autofree gboolean *slow = g_new0 (gboolean, r->pages->len);
      for (guint i = 0; i < r->pages->len; i++)
        slow[i] = job->todo[i] && !sv__tiff_reader_page (r, i)->fast;
      decode_with_libtiff (job, &b, slow);
    }
  while (!g_atomic_int_get (&job->stop))
    {
      guint k = (guint)g_atomic_int_add (&job->next, 1);
      const SvTiffPage *p;
      GError *error = NULL;

      if (k >= job->n_fast)
        break;
      p = sv__tiff_reader_page (r, job->fast[k]);
      if (!decode_page (r, NULL, p, &b, &error))
        {
          if (error != NULL)
            {
              job_fail (job, job->fast[k], error);
              break;
            }
          g_debug ("%s: page %u: our decoder declined, libtiff decodes it", r->path, p->number);
          job->retry[job->fast[k]] = TRUE;
          continue;
        }
      if (!job->func (r, p, b.page, job->n_samples, job->user_data, &error))
        {
          job_fail (job, job->fast[k], error);
          break;
        }
    }
  buffers_clear (&b);
}

gboolean
sv__tiff_reader_for_each_page (SvTiffReader *r, const gboolean *want, int n_threads,
                               SvPageFunc func, gpointer user_data, GError **error)
{
  guint n = r->pages->len;
  SvDecodeJob job = { .r = r, .func = func, .user_data = user_data };
  gboolean any_retry = FALSE;
  int threads;

  job.n_samples = (gsize)r->first.width * r->first.height * r->first.spp;
  job.page_bytes = job.n_samples * (r->first.bps / 8);
  job.todo = g_new0 (gboolean, n);
  job.retry = g_new0 (gboolean, n);
  job.fast = g_new (guint, n);
  g_mutex_init (&job.lock);
  for (guint i = 0; i < n; i++)
    {
      job.todo[i] = want == NULL || want[i];
      if (job.todo[i] && sv__tiff_reader_page (r, i)->fast)
        job.fast[job.n_fast++] = i;
      else if (job.todo[i])
        job.libtiff_first = TRUE;
    }

  threads = MIN (sv__resolve_threads (n_threads), (int)MAX (job.n_fast, 1u));
  sv__run_parallel (threads, decode_thread, &job);

  /* Pages our decoder turned down: libtiff decodes them or says why not. */
  for (guint i = 0; i < n; i++)
    any_retry |= job.retry[i];
  if (any_retry && job.error == NULL)
    {
      SvPageBuffers b = { 0 };
      b.page = g_try_malloc (job.page_bytes);
      if (b.page == NULL)
        sv__tiff_reader_error (r, &job.error, SV_ENGINE_ERROR_NO_MEMORY,
                               "not enough memory for one page");
      else
        decode_with_libtiff (&job, &b, job.retry);
      buffers_clear (&b);
    }

  g_free (job.todo);
  g_free (job.retry);
  g_free (job.fast);
  g_mutex_clear (&job.lock);
  if (job.error != NULL)
    {
      g_propagate_error (error, job.error);
      return FALSE;
    }
  return TRUE;
}

/* Supervox engine: pages written through libtiff, in order.
 *
 * Strips are still filled and compressed on worker threads, a window of
 * strips ahead; the calling thread hands them to libtiff raw
 * (TIFFWriteRawStrip), or for LZW to libtiff's own encoder, and libtiff
 * places them and writes the directories. This was the only writer before
 * the strip writer (io-tiff-strip-writer.c); it stays as the reference the
 * tests compare that one with, and as the way out when libtiff's layout is
 * not the one io-tiff-layout.c knows (SV_TIFF_WRITER=libtiff forces it). */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "internal.h"
#include "io-tiff-private.h"

/* At most this much raw strip data waits in the window. */
#define SV_WINDOW_MAX_BYTES (64 * 1024 * 1024)

/* One strip on its way to the file. */
typedef struct
{
  guint64 strip; /* over the whole file */
  guint8 *raw;   /* filled rows */
  gsize raw_len;
  const guint8 *data; /* what goes to the file: raw or encoded */
  gsize len;
  SvTiffCodec *codec;
  gboolean done, failed;
} SvStripSlot;

typedef struct
{
  const SvTiffWriteJob *job;
  SvStripGeometry g;
  gboolean encode; /* we compress; else libtiff does (LZW) */
  GMutex lock;
  GCond cond;
} SvStripPipeline;

static void
strip_encode_cb (gpointer data, gpointer user_data)
{
  SvStripSlot *slot = data;
  SvStripPipeline *pl = user_data;
  gboolean ok = TRUE;

  if (pl->encode)
    {
      slot->data = sv__tiff_strip_encode (pl->job, &pl->g, slot->codec, slot->strip, slot->raw,
                                          &slot->len);
      ok = slot->data != NULL;
    }
  else
    slot->raw_len = sv__tiff_strip_fill (pl->job, &pl->g, slot->strip, slot->raw, NULL);
  g_mutex_lock (&pl->lock);
  slot->done = TRUE;
  slot->failed = !ok;
  g_cond_broadcast (&pl->cond);
  g_mutex_unlock (&pl->lock);
}

gboolean
sv__tiff_write_pages_libtiff (TIFF *tif, const SvTiffWriteJob *job, guint z0, guint z1,
                              SvTiffMessages *msgs, char **problem)
{
  SvStripPipeline pl = { .job = job };
  g_autofree char *description = sv__imagej_description (job->nz, job->spacing, job->unit);
  int n_threads = sv__resolve_threads (job->n_threads);
  SvStripSlot *slots;
  GThreadPool *pool;
  guint64 first, total, pushed = 0;
  guint n_slots;
  gboolean ok = TRUE;
  g_autoptr (GError) thread_error = NULL;

  sv__tiff_strip_geometry (job, &pl.g);
  pl.encode = job->compression != SV_TIFF_COMPRESSION_LZW;
  first = (guint64)z0 * pl.g.strips_per_page;
  total = (guint64)(z1 - z0) * pl.g.strips_per_page;
  n_slots = (guint)CLAMP (SV_WINDOW_MAX_BYTES / pl.g.strip_bytes, 2, 2 * (gsize)n_threads + 2);
  n_slots = (guint)MIN ((guint64)n_slots, total);

  slots = g_new0 (SvStripSlot, n_slots);
  for (guint i = 0; i < n_slots && ok; i++)
    {
      slots[i].raw = g_try_malloc (pl.g.strip_bytes);
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

  for (guint64 s = 0; s < total && ok; s++)
    {
      guint z = (guint)((first + s) / pl.g.strips_per_page);
      guint32 k = (guint32)((first + s) % pl.g.strips_per_page);
      SvStripSlot *slot = &slots[s % n_slots];
      tmsize_t written;

      /* Keep the window full: slot of s + n_slots - 1 is the one of s - 1,
       * written in the previous round. */
      for (; pushed < total && pushed < s + n_slots; pushed++)
        {
          SvStripSlot *next = &slots[pushed % n_slots];
          next->strip = first + pushed;
          next->done = FALSE;
          g_thread_pool_push (pool, next, NULL);
        }
      if (k == 0)
        sv__tiff_set_page_fields (tif, job, pl.g.rows_per_strip, z, description);

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
      if (written < 0 || (k + 1 == pl.g.strips_per_page && !TIFFWriteDirectory (tif)))
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

/* Supervox engine: a TIFF's strips compressed and written by a pool of
 * worker threads, in the layout libtiff would give them
 * (io-tiff-layout.c).
 *
 * A worker takes the next strip of the pages asked for, fills it, runs the
 * predictor and compresses it into its slot of a window of strips (the
 * workers take strips themselves: handing them out one by one from the
 * caller's thread woke a sleeping worker for every strip, and with 64
 * cores the workers spent most of the time waiting for that); then, under
 * the lock, it places every strip
 * whose turn has come (in file order, the next free offset: a prefix sum of
 * the compressed sizes) and, when a page's last strip is placed, that
 * page's directory; out of the lock it writes what it placed with pwrite.
 * So strips of one page go to the file from several threads at once and
 * nobody waits for a single writer; the bytes are those of libtiff's
 * in-order writer whatever the number of threads. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "io-tiff-private.h"

/* At most this much raw strip data waits in the window. */
#define SV_WINDOW_MAX_BYTES (64 * 1024 * 1024)

typedef enum
{
  SLOT_FREE,
  SLOT_ENCODING,
  SLOT_ENCODED, /* waiting for its turn to be placed */
  SLOT_PLACED,  /* being written */
} SlotState;

typedef struct
{
  guint64 strip; /* over the whole file */
  guint8 *raw;
  const guint8 *data; /* what goes to the file: raw or the codec's output */
  gsize len;
  guint64 offset;
  SvTiffCodec *codec;
  SlotState state;
} Slot;

/* A page's strips as placed; its directory waits for the next page's
 * offset (the link), except the last page's. */
typedef struct
{
  guint64 *offsets, *sizes;
  guint64 directory;
} PagePlan;

/* A run of bytes to write once the lock is released. */
typedef struct
{
  guint64 offset;
  const guint8 *data;
  gsize len;
  guint8 *owned; /* a directory or the header */
  Slot *slot;    /* a strip, freed after writing */
  guint z;       /* for messages */
} Piece;

struct _SvTiffStripWriter
{
  int fd;
  const SvTiffWriteJob *job;
  SvTiffLayout *layout;
  SvStripGeometry geometry;
  GThreadPool *pool;
  SvWriteback *writeback;
  Slot *slots;
  guint n_slots;
  GMutex lock;
  GCond cond;
  /* Under the lock: */
  guint n_busy;       /* slots not free */
  guint n_workers;    /* workers taking strips */
  int n_threads;
  guint64 next_strip; /* the next strip to take */
  guint64 end_strip;  /* the end of the pages asked for */
  guint64 next_place; /* the next strip to place */
  guint64 cursor;     /* the end of what is placed */
  PagePlan pages[2];  /* page z at z % 2 */
  char *problem;      /* the first failure */
};

static void
fail_locked (SvTiffStripWriter *w, char *problem)
{
  if (w->problem == NULL)
    w->problem = problem;
  else
    g_free (problem);
  /* Strips behind a failure are never placed: give their slots back. */
  for (guint i = 0; i < w->n_slots; i++)
    if (w->slots[i].state == SLOT_ENCODED)
      {
        w->slots[i].state = SLOT_FREE;
        w->n_busy--;
      }
  g_cond_broadcast (&w->cond);
}

static void
add_directory (SvTiffStripWriter *w, GArray *pieces, guint z, guint64 next)
{
  const PagePlan *page = &w->pages[z % 2];
  Piece piece = { .offset = page->directory, .z = z };

  piece.len = sv__tiff_layout_directory_size (w->layout, z);
  piece.owned = g_malloc (piece.len);
  piece.data = piece.owned;
  if (!sv__tiff_layout_directory (w->layout, z, page->offsets, page->sizes, page->directory, next,
                                  piece.owned))
    {
      g_free (piece.owned);
      fail_locked (w, g_strdup_printf ("cannot write page %u: a strip is too large for its "
                                       "directory",
                                       z + 1));
      return;
    }
  g_array_append_val (pieces, piece);
}

/* Page z's strips are all placed: its directory goes after them, and the
 * previous page's directory can now point to it. */
static void
place_directory_locked (SvTiffStripWriter *w, guint z, GArray *pieces)
{
  PagePlan *page = &w->pages[z % 2];

  if (!sv__tiff_layout_place_directory (w->layout, z, &w->cursor, &page->directory))
    {
      fail_locked (w, g_strdup ("the file would pass the 4 GiB a classic TIFF can hold"));
      return;
    }
  if (z == 0)
    {
      Piece header = { .offset = 0, .z = 0 };
      header.len = sv__tiff_layout_header_size (w->layout);
      header.owned = g_malloc (header.len);
      header.data = header.owned;
      sv__tiff_layout_header (w->layout, page->directory, header.owned);
      g_array_append_val (pieces, header);
    }
  else
    add_directory (w, pieces, z - 1, page->directory);
  if (z + 1 == w->job->nz)
    add_directory (w, pieces, z, 0);
}

/* Places every strip whose turn has come. */
static void
place_ready_locked (SvTiffStripWriter *w, GArray *pieces)
{
  const guint32 per_page = w->geometry.strips_per_page;

  while (w->problem == NULL)
    {
      Slot *slot = &w->slots[w->next_place % w->n_slots];
      guint z = (guint)(w->next_place / per_page);
      guint32 k = (guint32)(w->next_place % per_page);
      PagePlan *page = &w->pages[z % 2];
      Piece piece = { .z = z, .slot = slot };

      if (slot->state != SLOT_ENCODED || slot->strip != w->next_place)
        break;
      slot->offset = sv__tiff_layout_place_strip (&w->cursor, slot->len);
      slot->state = SLOT_PLACED;
      page->offsets[k] = slot->offset;
      page->sizes[k] = slot->len;
      piece.offset = slot->offset;
      piece.data = slot->data;
      piece.len = slot->len;
      g_array_append_val (pieces, piece);
      w->next_place++;
      if (k + 1 == per_page)
        place_directory_locked (w, z, pieces);
    }
}

gboolean
sv__tiff_write_at (int fd, guint64 offset, const void *data, gsize len, int *saved_errno)
{
  const guint8 *p = data;

  while (len > 0)
    {
      ssize_t n = pwrite (fd, p, MIN (len, (gsize)G_MAXSSIZE), (off_t)offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          /* A write of nothing on a full disk. */
          *saved_errno = n < 0 ? errno : ENOSPC;
          return FALSE;
        }
      p += n;
      offset += (guint64)n;
      len -= (gsize)n;
    }
  return TRUE;
}

/* Writes the pieces and gives their slots back. */
static void
write_pieces (SvTiffStripWriter *w, GArray *pieces)
{
  char *problem = NULL;
  guint64 written = 0;

  for (guint i = 0; i < pieces->len && problem == NULL; i++)
    {
      Piece *piece = &g_array_index (pieces, Piece, i);
      int saved_errno;

      if (!sv__tiff_write_at (w->fd, piece->offset, piece->data, piece->len, &saved_errno))
        problem
            = g_strdup_printf ("cannot write page %u: %s", piece->z + 1, g_strerror (saved_errno));
      written += piece->len;
    }
  sv__writeback_written (w->writeback, written);
  g_mutex_lock (&w->lock);
  for (guint i = 0; i < pieces->len; i++)
    {
      Piece *piece = &g_array_index (pieces, Piece, i);
      g_free (piece->owned);
      if (piece->slot != NULL)
        {
          piece->slot->state = SLOT_FREE;
          w->n_busy--;
        }
    }
  if (problem != NULL)
    fail_locked (w, problem);
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
}

static void
encode_strip (SvTiffStripWriter *w, Slot *slot)
{
  g_autoptr (GArray) pieces = g_array_new (FALSE, FALSE, sizeof (Piece));
  const guint8 *out = NULL;
  gboolean skip;
  gsize len = 0;

  g_mutex_lock (&w->lock);
  skip = w->problem != NULL;
  g_mutex_unlock (&w->lock);
  if (!skip)
    out = sv__tiff_strip_encode (w->job, &w->geometry, slot->codec, slot->strip, slot->raw, &len);

  g_mutex_lock (&w->lock);
  slot->data = out;
  slot->len = len;
  if (!skip && out == NULL)
    fail_locked (w, g_strdup_printf ("cannot compress page %u",
                                     (guint)(slot->strip / w->geometry.strips_per_page) + 1));
  if (w->problem != NULL)
    {
      slot->state = SLOT_FREE;
      w->n_busy--;
      g_cond_broadcast (&w->cond);
    }
  else
    {
      slot->state = SLOT_ENCODED;
      place_ready_locked (w, pieces);
    }
  g_mutex_unlock (&w->lock);
  if (pieces->len > 0)
    write_pieces (w, pieces);
}

/* A worker: takes strips until the pages asked for are all taken. A strip
 * waits for its slot, whose strip n_slots back is placed and written by
 * the worker that placed it, so a waiting worker holds nothing another
 * one needs. */
static void
strip_cb (gpointer data, gpointer user_data)
{
  SvTiffStripWriter *w = user_data;

  g_mutex_lock (&w->lock);
  while (w->problem == NULL && w->next_strip < w->end_strip)
    {
      Slot *slot = &w->slots[w->next_strip % w->n_slots];

      if (slot->state != SLOT_FREE)
        {
          g_cond_wait (&w->cond, &w->lock);
          continue;
        }
      slot->strip = w->next_strip++;
      slot->state = SLOT_ENCODING;
      w->n_busy++;
      g_mutex_unlock (&w->lock);
      encode_strip (w, slot);
      g_mutex_lock (&w->lock);
    }
  w->n_workers--;
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
}

SvTiffStripWriter *
sv__tiff_strip_writer_new (int fd, const SvTiffWriteJob *job, SvTiffLayout *layout, char **problem)
{
  SvTiffStripWriter *w = g_new0 (SvTiffStripWriter, 1);
  int n_threads = sv__resolve_threads (job->n_threads);
  guint64 total;
  GError *thread_error = NULL;

  w->fd = fd;
  w->job = job;
  w->n_threads = n_threads;
  w->writeback = sv__writeback_new (fd);
  w->layout = layout;
  sv__tiff_strip_geometry (job, &w->geometry);
  w->cursor = sv__tiff_layout_header_size (layout);
  total = (guint64)job->nz * w->geometry.strips_per_page;
  w->n_slots
      = (guint)CLAMP (SV_WINDOW_MAX_BYTES / w->geometry.strip_bytes, 2, 2 * (gsize)n_threads + 2);
  w->n_slots = (guint)MIN ((guint64)w->n_slots, total);
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
  for (guint p = 0; p < 2; p++)
    {
      w->pages[p].offsets = g_new0 (guint64, w->geometry.strips_per_page);
      w->pages[p].sizes = g_new0 (guint64, w->geometry.strips_per_page);
    }
  w->slots = g_new0 (Slot, w->n_slots);
  for (guint i = 0; i < w->n_slots; i++)
    {
      w->slots[i].codec = sv__tiff_codec_new ();
      w->slots[i].raw = g_try_malloc (w->geometry.strip_bytes);
      if (w->slots[i].raw == NULL)
        {
          *problem = g_strdup ("not enough memory for the strip buffers");
          sv__tiff_strip_writer_free (w);
          return NULL;
        }
    }
  /* Threads started now: a pool that starts them on demand queues a strip
   * even when its thread cannot start (no address space left), and the
   * wait for it would never end. */
  w->pool = g_thread_pool_new (strip_cb, w, n_threads, TRUE, &thread_error);
  if (thread_error != NULL)
    {
      *problem
          = g_strdup_printf ("cannot start the compression threads: %s", thread_error->message);
      g_error_free (thread_error);
      sv__tiff_strip_writer_free (w);
      return NULL;
    }
  return w;
}

gboolean
sv__tiff_strip_writer_pages (SvTiffStripWriter *w, guint z0, guint z1, char **problem)
{
  const guint64 end = (guint64)z1 * w->geometry.strips_per_page;
  gboolean ok;

  /* Pages come in order, each call after the last one's strips. */
  g_return_val_if_fail (w->next_strip == (guint64)z0 * w->geometry.strips_per_page, FALSE);
  g_mutex_lock (&w->lock);
  w->end_strip = end;
  for (guint i = 0; i < (guint)w->n_threads && (guint64)i < end - w->next_strip; i++)
    {
      w->n_workers++;
      /* The pool's data must not be NULL; the workers read the writer. */
      g_thread_pool_push (w->pool, w, NULL);
    }
  /* The caller's rows must not be read after we return. */
  while (w->n_workers > 0 || w->n_busy > 0)
    g_cond_wait (&w->cond, &w->lock);
  ok = w->problem == NULL;
  if (!ok)
    *problem = g_strdup (w->problem);
  g_mutex_unlock (&w->lock);
  return ok;
}

GArray *
sv__tiff_strip_writer_place_strips (SvTiffStripWriter *w, guint z0, guint z1,
                                    const guint64 *sizes, const guint8 *bytes, char **problem)
{
  const guint32 per_page = w->geometry.strips_per_page;
  GArray *pieces = g_array_new (FALSE, FALSE, sizeof (Piece));

  g_return_val_if_fail (w->next_strip == (guint64)z0 * per_page, NULL);
  g_mutex_lock (&w->lock);
  for (guint z = z0; z < z1 && w->problem == NULL; z++)
    {
      PagePlan *page = &w->pages[z % 2];
      Piece piece = { .z = z, .data = bytes };

      piece.offset = w->cursor;
      for (guint32 k = 0; k < per_page; k++)
        {
          page->offsets[k] = sv__tiff_layout_place_strip (&w->cursor, sizes[k]);
          page->sizes[k] = sizes[k];
          piece.len += sizes[k];
        }
      g_array_append_val (pieces, piece);
      place_directory_locked (w, z, pieces);
      bytes += piece.len;
      sizes += per_page;
    }
  w->next_strip = w->next_place = w->end_strip = (guint64)z1 * per_page;
  if (w->problem != NULL)
    {
      *problem = g_strdup (w->problem);
      g_mutex_unlock (&w->lock);
      sv__tiff_strip_writer_drop_placed (pieces);
      return NULL;
    }
  g_mutex_unlock (&w->lock);
  return pieces;
}

gboolean
sv__tiff_strip_writer_write_placed (SvTiffStripWriter *w, GArray *placed, char **problem)
{
  gboolean ok;

  write_pieces (w, placed);
  g_array_free (placed, TRUE);
  g_mutex_lock (&w->lock);
  ok = w->problem == NULL;
  if (!ok)
    *problem = g_strdup (w->problem);
  g_mutex_unlock (&w->lock);
  return ok;
}

void
sv__tiff_strip_writer_drop_placed (GArray *placed)
{
  if (placed == NULL)
    return;
  for (guint i = 0; i < placed->len; i++)
    g_free (g_array_index (placed, Piece, i).owned);
  g_array_free (placed, TRUE);
}

gboolean
sv__tiff_strip_writer_put_strips (SvTiffStripWriter *w, guint z0, guint z1, const guint64 *sizes,
                                  const guint8 *bytes, char **problem)
{
  GArray *placed = sv__tiff_strip_writer_place_strips (w, z0, z1, sizes, bytes, problem);

  return placed != NULL && sv__tiff_strip_writer_write_placed (w, placed, problem);
}

void
sv__tiff_strip_writer_free (SvTiffStripWriter *w)
{
  if (w == NULL)
    return;
  if (w->pool != NULL)
    g_thread_pool_free (w->pool, FALSE, TRUE);
  sv__writeback_free (w->writeback);
  for (guint i = 0; w->slots != NULL && i < w->n_slots; i++)
    {
      g_free (w->slots[i].raw);
      sv__tiff_codec_free (w->slots[i].codec);
    }
  g_free (w->slots);
  for (guint p = 0; p < 2; p++)
    {
      g_free (w->pages[p].offsets);
      g_free (w->pages[p].sizes);
    }
  sv__tiff_layout_free (w->layout);
  g_free (w->problem);
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
  g_free (w);
}

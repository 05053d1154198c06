/* Supervox engine: a label TIFF's later slices from other threads (the
 * devices that share the connectivity), while its writer goes on. A
 * TIFF's pages lie in order, so only the share whose slices come next
 * places them (their offsets and directories, at once); the others keep
 * the strips their devices compressed for them in memory until their
 * turn. A share's turn ends once its slices are placed: it writes them
 * while the next share places and writes its own, so the devices
 * compress at once, the shares write at once, and the file is still the
 * one writer's, byte for byte. Labels that are still to be compressed
 * (the owner's pool compresses them), and strips beyond a share's memory,
 * wait for its turn. A share that fails or goes unfinished ends the
 * turns: the shares after it fail with one line instead of waiting for
 * slices that never come. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "io-tiff-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-memory.h"

struct _SvTiffTurns
{
  GMutex lock;
  GCond moved;
  guint z_next;      /* the next slice the file takes */
  guint failed_from; /* the first slice of a share that failed, or G_MAXUINT */
};

/* Slices a share holds, compressed, until its turn. */
typedef struct
{
  guint depth;
  gint64 negative_slice;
} HeldSlices;

struct _SvTiffShare
{
  SvTiffLabelWriter *owner;
  SvTiffTurns *turns;
  const char *path;
  guint strips_per_page;
  guint z0;
  guint z_written; /* the next of its slices the file takes */
  guint z_next;    /* the next slice appended to it */
  GArray *held;    /* HeldSlices, from z_written on */
  GArray *sizes;   /* guint64, their strips' */
  guint8 *bytes;   /* their strips, one after the other */
  gsize n_bytes, room;
  gsize limit; /* bytes it may hold */
  gboolean done;
};

SvTiffTurns *
sv__tiff_turns_new (void)
{
  SvTiffTurns *turns = g_new0 (SvTiffTurns, 1);

  g_mutex_init (&turns->lock);
  g_cond_init (&turns->moved);
  turns->failed_from = G_MAXUINT;
  return turns;
}

void
sv__tiff_turns_free (SvTiffTurns *turns)
{
  if (turns == NULL)
    return;
  g_mutex_clear (&turns->lock);
  g_cond_clear (&turns->moved);
  g_free (turns);
}

void
sv__tiff_turns_advance (SvTiffTurns *turns, guint z_next)
{
  g_mutex_lock (&turns->lock);
  turns->z_next = z_next;
  g_cond_broadcast (&turns->moved);
  g_mutex_unlock (&turns->lock);
}

/* The shares after z0 cannot have their turns; those before go on. */
static void
turns_fail (SvTiffTurns *turns, guint z0)
{
  g_mutex_lock (&turns->lock);
  turns->failed_from = MIN (turns->failed_from, z0);
  g_cond_broadcast (&turns->moved);
  g_mutex_unlock (&turns->lock);
}

/* How much a share may hold: what the run gives it, and an eighth of
 * the memory free now at most (a device's strips are about 1 GB at
 * 2048³), unless SV_TIFF_SHARE_BYTES says (for the tests of the waits). */
static gsize
share_limit (guint64 held_bytes)
{
  const char *forced = g_getenv ("SV_TIFF_SHARE_BYTES");

  if (forced != NULL)
    return (gsize)g_ascii_strtoull (forced, NULL, 10);
  return (gsize)MIN (held_bytes, sv_memory_available () / 8);
}

SvTiffShare *
sv__tiff_share_new (SvTiffLabelWriter *owner, SvTiffTurns *turns, const char *path, guint z0,
                    guint strips_per_page, guint64 held_bytes)
{
  SvTiffShare *s = g_new0 (SvTiffShare, 1);

  s->owner = owner;
  s->turns = turns;
  s->path = path;
  s->strips_per_page = strips_per_page;
  s->z0 = s->z_written = s->z_next = z0;
  s->held = g_array_new (FALSE, FALSE, sizeof (HeldSlices));
  s->sizes = g_array_new (FALSE, FALSE, sizeof (guint64));
  s->limit = share_limit (held_bytes);
  g_debug ("%s: the share from slice %u may hold %.1f MB until its turn", path, z0,
           s->limit / 1e6);
  return s;
}

static gboolean
its_turn (SvTiffShare *s)
{
  gboolean now;

  g_mutex_lock (&s->turns->lock);
  now = s->turns->failed_from > s->z0 && s->turns->z_next == s->z_written;
  g_mutex_unlock (&s->turns->lock);
  return now;
}

static gboolean
wait_turn (SvTiffShare *s, GError **error)
{
  gboolean failed;

  g_mutex_lock (&s->turns->lock);
  while (s->turns->failed_from > s->z0 && s->turns->z_next != s->z_written)
    g_cond_wait (&s->turns->moved, &s->turns->lock);
  failed = s->turns->failed_from <= s->z0 && s->turns->z_next != s->z_written;
  g_mutex_unlock (&s->turns->lock);
  if (failed)
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                 "%s: the slices before %u did not reach the file", s->path, s->z_written);
  return !failed;
}

/* Its slices placed: the next share's turn may come. */
static void
written (SvTiffShare *s, guint depth)
{
  s->z_written += depth;
  sv__tiff_turns_advance (s->turns, s->z_written);
}

/* Writes what was placed, in order, and drops it. */
static gboolean
write_placed (SvTiffShare *s, GPtrArray *placed, gboolean ok, GError **error)
{
  for (guint i = 0; i < placed->len; i++)
    if (ok)
      ok = sv__tiff_label_writer_write_placed (s->owner, placed->pdata[i], error);
    else
      sv__tiff_strip_writer_drop_placed (placed->pdata[i]);
  g_ptr_array_free (placed, TRUE);
  return ok;
}

/* On its turn: what it holds, and then (when `depth` > 0) the strips
 * given, placed in the file; the next share's turn comes before they are
 * written. */
static gboolean
hand_over (SvTiffShare *s, guint depth, const guint64 *more_sizes, const guint8 *more_bytes,
           gint64 negative_slice, GError **error)
{
  const guint64 *sizes = (const guint64 *)s->sizes->data;
  GPtrArray *placed = g_ptr_array_new ();
  gsize at_size = 0, at_byte = 0;
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < s->held->len; i++)
    {
      const HeldSlices *h = &g_array_index (s->held, HeldSlices, i);
      const gsize n = (gsize)h->depth * s->strips_per_page;
      GArray *pieces;
      gsize len = 0;

      for (gsize j = 0; j < n; j++)
        len += sizes[at_size + j];
      pieces = sv__tiff_label_writer_place_strips (s->owner, h->depth, sizes + at_size,
                                                   s->bytes + at_byte, h->negative_slice, error);
      if ((ok = pieces != NULL))
        g_ptr_array_add (placed, pieces);
      at_size += n;
      at_byte += len;
    }
  if (ok && depth > 0)
    {
      GArray *pieces = sv__tiff_label_writer_place_strips (s->owner, depth, more_sizes, more_bytes,
                                                           negative_slice, error);

      if ((ok = pieces != NULL))
        g_ptr_array_add (placed, pieces);
    }
  /* Placed: the turn goes on while they are written. */
  if (ok)
    written (s, s->z_next - s->z_written);
  ok = write_placed (s, placed, ok, error);
  g_array_set_size (s->held, 0);
  g_array_set_size (s->sizes, 0);
  s->n_bytes = 0;
  return ok;
}

/* Room for n bytes held; FALSE when the memory is not there (the strips
 * then wait for the share's turn instead). */
static gboolean
hold_room (SvTiffShare *s, gsize n)
{
  guint8 *bigger;

  if (n <= s->room)
    return TRUE;
  n = MAX (n, MIN (s->room + s->room / 2, s->limit));
  if ((bigger = g_try_realloc (s->bytes, n)) == NULL)
    return FALSE;
  s->bytes = bigger;
  s->room = n;
  return TRUE;
}

static gboolean
failed (SvTiffShare *s)
{
  s->done = TRUE;
  turns_fail (s->turns, s->z0);
  return FALSE;
}

gboolean
sv__tiff_share_append (SvTiffShare *s, const gint32 *labels, guint depth, GError **error)
{
  g_return_val_if_fail (!s->done, FALSE);

  if (!wait_turn (s, error) || !hand_over (s, 0, NULL, NULL, -1, error)
      || !sv__tiff_label_writer_put (s->owner, labels, depth, error))
    return failed (s);
  s->z_next += depth;
  written (s, depth);
  return TRUE;
}

gboolean
sv__tiff_share_append_strips (SvTiffShare *s, guint depth, const guint64 *sizes,
                              const guint8 *bytes, gint64 negative_slice, GError **error)
{
  const gsize n = (gsize)depth * s->strips_per_page;
  gsize len = 0;

  g_return_val_if_fail (!s->done, FALSE);

  for (gsize j = 0; j < n; j++)
    len += sizes[j];
  if (!its_turn (s) && s->n_bytes + len <= s->limit && hold_room (s, s->n_bytes + len))
    {
      const HeldSlices h = { depth, negative_slice };

      g_array_append_val (s->held, h);
      g_array_append_vals (s->sizes, sizes, (guint)n);
      memcpy (s->bytes + s->n_bytes, bytes, len);
      s->n_bytes += len;
      s->z_next += depth;
      return TRUE;
    }
  /* Its turn, or no room to hold them: they go after what it holds. */
  s->z_next += depth;
  if (!wait_turn (s, error) || !hand_over (s, depth, sizes, bytes, negative_slice, error))
    return failed (s);
  return TRUE;
}

gboolean
sv__tiff_share_finish (SvTiffShare *s, GError **error)
{
  g_return_val_if_fail (!s->done, FALSE);

  /* Once its last slice is in, the next share may have written its own
   * already: only a share that holds slices waits. */
  if (s->held->len > 0 && (!wait_turn (s, error) || !hand_over (s, 0, NULL, NULL, -1, error)))
    return failed (s);
  s->done = TRUE;
  return TRUE;
}

void
sv__tiff_share_free (SvTiffShare *s)
{
  if (s == NULL)
    return;
  if (!s->done)
    failed (s);
  g_array_free (s->held, TRUE);
  g_array_free (s->sizes, TRUE);
  g_free (s->bytes);
  g_free (s);
}

/* Supervox engine: reading the next slab while this one computes. A
 * streamed run visits its slabs in a known order, so while the steps work
 * on slab i, a thread reads and decodes the pages of slab i + 1 into a
 * second buffer; when the run asks for those slices the buffers swap. The
 * bytes are those of a read made on the spot, so the labels do not change. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

struct _SvReadAhead
{
  SvTiffSlabReader *reader; /* borrowed; used by one thread at a time */
  gsize capacity;           /* bytes of each buffer */
  guint8 *spare;            /* the buffer the thread fills */
  GThread *thread;          /* a read under way, or NULL */
  guint z0, z1;             /* its slices */
  gboolean ok;
  GError *error;
  guint64 hits;
};

SvReadAhead *
sv__read_ahead_new (SvTiffSlabReader *reader, gsize capacity)
{
  SvReadAhead *ra = g_new0 (SvReadAhead, 1);

  ra->reader = reader;
  ra->capacity = capacity;
  ra->spare = g_try_malloc (MAX (capacity, 1));
  if (ra->spare == NULL)
    g_clear_pointer (&ra, g_free);
  return ra;
}

/* Waits for the read under way, if any. */
static void
join (SvReadAhead *ra)
{
  if (ra->thread != NULL)
    g_thread_join (g_steal_pointer (&ra->thread));
}

void
sv__read_ahead_free (SvReadAhead *ra)
{
  if (ra == NULL)
    return;
  join (ra);
  g_clear_error (&ra->error);
  g_free (ra->spare);
  g_free (ra);
}

guint64
sv__read_ahead_hits (const SvReadAhead *ra)
{
  return ra != NULL ? ra->hits : 0;
}

static gpointer
read_thread (gpointer data)
{
  SvReadAhead *ra = data;

  ra->ok = sv_tiff_slab_reader_read (ra->reader, ra->z0, ra->z1, ra->spare, &ra->error);
  return NULL;
}

void
sv__read_ahead_start (SvReadAhead *ra, guint z0, guint z1)
{
  if (ra == NULL || z0 >= z1
      || (gsize)(z1 - z0) * sv_tiff_slab_reader_slice_bytes (ra->reader) > ra->capacity)
    return;
  join (ra);
  g_clear_error (&ra->error);
  ra->z0 = z0;
  ra->z1 = z1;
  ra->ok = FALSE;
  /* Without a thread the slab is read when it is asked for. */
  ra->thread = g_thread_try_new ("sv-read-ahead", read_thread, ra, NULL);
}

gboolean
sv__read_ahead_read (SvReadAhead *ra, guint z0, guint z1, guint8 **buffer, GError **error)
{
  gboolean pending = ra->thread != NULL;

  join (ra);
  if (pending && ra->z0 == z0 && ra->z1 == z1)
    {
      guint8 *filled = ra->spare;

      if (!ra->ok)
        {
          g_propagate_error (error, g_steal_pointer (&ra->error));
          return FALSE;
        }
      ra->spare = *buffer;
      *buffer = filled;
      ra->hits++;
      return TRUE;
    }
  return sv_tiff_slab_reader_read (ra->reader, z0, z1, *buffer, error);
}

/* Supervox engine: a file's written pages on their way to the disk while
 * its writer goes on.
 *
 * A label file is synced before it takes its name. Left to the kernel, a
 * machine with hundreds of GiB of memory keeps a whole label file in the
 * page cache and the final fsync then writes gigabytes with nothing left
 * to overlap them. Asking for writeback (sync_file_range) every few
 * hundred MiB from the writer's own thread, as before, made that thread
 * submit the pages itself: its appends went at the disk's pace (a 2048³
 * label file on the GPU machine: 3.1 s of appends while the device
 * waited). Here one thread per file makes the requests; the writer only
 * counts bytes and signals it. */
#define G_LOG_DOMAIN "sv-engine"

#include <fcntl.h>
#include <stdlib.h>

#include "io-tiff-private.h"

#define SV_WRITEBACK_DEFAULT_BYTES ((guint64)256 << 20)

struct _SvWriteback
{
  int fd;
  guint64 every; /* bytes between requests */
  GThread *thread;
  GMutex lock;
  GCond cond;
  /* Under the lock: */
  guint64 unsynced; /* bytes written since the last request */
  gboolean wanted, stopping;
  guint done; /* requests made */
};

static void
request_writeback (int fd)
{
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
  /* The whole file, without waiting for it; a failure here only means a
   * longer fsync at the end. */
  (void)sync_file_range (fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
#endif
}

static gpointer
writeback_thread (gpointer data)
{
  SvWriteback *wb = data;

  g_mutex_lock (&wb->lock);
  for (;;)
    {
      while (!wb->wanted && !wb->stopping)
        g_cond_wait (&wb->cond, &wb->lock);
      if (!wb->wanted)
        break;
      wb->wanted = FALSE;
      g_mutex_unlock (&wb->lock);
      request_writeback (wb->fd);
      g_mutex_lock (&wb->lock);
      wb->done++;
    }
  g_mutex_unlock (&wb->lock);
  return NULL;
}

/* SV_WRITEBACK_MIB (tests) sets the distance between requests. */
SvWriteback *
sv__writeback_new (int fd)
{
  SvWriteback *wb = g_new0 (SvWriteback, 1);
  const char *mib = g_getenv ("SV_WRITEBACK_MIB");

  wb->fd = fd;
  wb->every = SV_WRITEBACK_DEFAULT_BYTES;
  if (mib != NULL && g_ascii_strtoull (mib, NULL, 10) > 0)
    wb->every = g_ascii_strtoull (mib, NULL, 10) << 20;
  g_mutex_init (&wb->lock);
  g_cond_init (&wb->cond);
  return wb;
}

void
sv__writeback_written (SvWriteback *wb, guint64 bytes)
{
  gboolean here = FALSE;

  g_mutex_lock (&wb->lock);
  wb->unsynced += bytes;
  if (wb->unsynced >= wb->every)
    {
      wb->unsynced = 0;
      wb->wanted = TRUE;
      /* Started at the first request: most files never reach one. */
      if (wb->thread == NULL)
        wb->thread = g_thread_try_new ("sv-writeback", writeback_thread, wb, NULL);
      if (wb->thread != NULL)
        g_cond_signal (&wb->cond);
      else
        {
          /* No thread to be had: the request from here, as before. */
          wb->wanted = FALSE;
          wb->done++;
          here = TRUE;
        }
    }
  g_mutex_unlock (&wb->lock);
  if (here)
    request_writeback (wb->fd);
}

guint
sv__writeback_requests (SvWriteback *wb)
{
  guint done;

  g_mutex_lock (&wb->lock);
  done = wb->done;
  g_mutex_unlock (&wb->lock);
  return done;
}

/* Waits for a request under way (the file may close right after), drops
 * one not yet begun. */
void
sv__writeback_free (SvWriteback *wb)
{
  if (wb == NULL)
    return;
  g_mutex_lock (&wb->lock);
  wb->stopping = TRUE;
  wb->wanted = FALSE;
  g_cond_signal (&wb->cond);
  g_mutex_unlock (&wb->lock);
  if (wb->thread != NULL)
    g_thread_join (wb->thread);
  g_mutex_clear (&wb->lock);
  g_cond_clear (&wb->cond);
  g_free (wb);
}

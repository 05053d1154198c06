/* Supervox engine: a label store's chunk files reaching the disk while the
 * writer goes on.
 *
 * Each chunk file must be on the disk before the store appears under its
 * name. A worker that waited for its own file's fdatasync spent most of a
 * store's time waiting: on the GPU machine's virtual disk a sync takes
 * milliseconds, and a 1024³ store has 4096 chunk files. The workers now
 * hand each written file to a pool of threads that sync and close them,
 * at once (the file system joins syncs that come together), and the store
 * waits for all of them only before its rename. At most a bounded number
 * of files is open and unsynced, so that the process stays well inside
 * its limit of open files. Each file's writeback is asked for as it is
 * handed over, as the label TIFF's is (io-writeback.c): the disk then
 * takes every pending file at once instead of the few being synced, and
 * a sync finds its data on the way. SV_ZARR_WRITEBACK=0 leaves that to
 * the syncs, for measuring. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "io-zarr-write-private.h"
#include "supervox/sv-error.h"

#define SYNC_THREADS 32
#define SYNC_MAX_OPEN 256

typedef struct
{
  int fd;
  char *path;
} PendingFile;

/* Tells a thread that no more files come. */
static PendingFile no_more;

struct _SvZarrSyncer
{
  GAsyncQueue *queue;
  /* Started as files come, joined at the end (their stacks are then
   * free at once, which the writer's memory tests rely on). */
  GThread *threads[SYNC_THREADS];
  guint n_threads;
  GMutex lock;
  GCond drained;
  guint pending;
  /* The first failure: its file and errno. */
  char *failed_path;
  int failed_errno;
  gboolean writeback; /* asked for as each file comes */
};

static void
sync_one (SvZarrSyncer *s, PendingFile *f)
{
  int saved = 0;

  if (fdatasync (f->fd) != 0 && errno != EINVAL && errno != EROFS)
    saved = errno;
  if (close (f->fd) != 0 && saved == 0)
    saved = errno;
  g_mutex_lock (&s->lock);
  if (saved != 0 && s->failed_path == NULL)
    {
      s->failed_path = g_steal_pointer (&f->path);
      s->failed_errno = saved;
    }
  s->pending--;
  g_cond_broadcast (&s->drained);
  g_mutex_unlock (&s->lock);
  g_free (f->path);
  g_free (f);
}

static gpointer
sync_thread (gpointer data)
{
  SvZarrSyncer *s = data;
  PendingFile *f;

  while ((f = g_async_queue_pop (s->queue)) != &no_more)
    sync_one (s, f);
  return NULL;
}

SvZarrSyncer *
sv__zarr_syncer_new (void)
{
  SvZarrSyncer *s = g_new0 (SvZarrSyncer, 1);

  g_mutex_init (&s->lock);
  g_cond_init (&s->drained);
  s->queue = g_async_queue_new ();
  s->writeback = g_strcmp0 (g_getenv ("SV_ZARR_WRITEBACK"), "0") != 0;
  return s;
}

void
sv__zarr_syncer_take (SvZarrSyncer *s, int fd, const char *path)
{
  PendingFile *f = g_new (PendingFile, 1);
  gboolean more;

  f->fd = fd;
  f->path = g_strdup (path);
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
  if (s->writeback)
    (void)sync_file_range (fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
  g_mutex_lock (&s->lock);
  while (s->pending >= SYNC_MAX_OPEN)
    g_cond_wait (&s->drained, &s->lock);
  s->pending++;
  /* Another thread while every one has a file. */
  more = s->n_threads < SYNC_THREADS && s->pending > s->n_threads;
  if (more
      && (s->threads[s->n_threads] = g_thread_try_new ("sv-zarr-sync", sync_thread, s, NULL))
             != NULL)
    s->n_threads++;
  more = s->n_threads > 0;
  g_mutex_unlock (&s->lock);
  /* Without a thread to be had the file is synced here. */
  if (more)
    g_async_queue_push (s->queue, f);
  else
    sync_one (s, f);
}

gboolean
sv__zarr_syncer_finish (SvZarrSyncer *s, GError **error)
{
  gboolean ok;

  if (s == NULL)
    return TRUE;
  for (guint t = 0; t < s->n_threads; t++)
    g_async_queue_push (s->queue, &no_more);
  for (guint t = 0; t < s->n_threads; t++)
    g_thread_join (s->threads[t]);
  g_assert (s->pending == 0);
  ok = s->failed_path == NULL;
  if (!ok)
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "cannot write %s: %s", s->failed_path,
                 g_strerror (s->failed_errno));
  g_async_queue_unref (s->queue);
  g_mutex_clear (&s->lock);
  g_cond_clear (&s->drained);
  g_free (s->failed_path);
  g_free (s);
  return ok;
}

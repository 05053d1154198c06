/* Supervox engine: volumes that a streamed run needs again (the assignment
 * of the last iteration, the labels before connectivity, the prepared
 * image), held in host memory as far as the run's memory limit allows and
 * in a raw temporary file for the rest. The file lives beside the output,
 * on the disk that must hold the output anyway, and is unlinked as soon
 * as it is open so that nothing is left behind. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "internal.h"
#include "supervox/sv-error.h"

struct _SvSpill
{
  int fd; /* −1: no file, the host part holds every slice written */
  guint nz;
  gsize slice_bytes;
  guint host_z0, host_z1; /* the slices held in `host` */
  guint8 *host;
  guint8 *written; /* nz: the slice was written (to the host part or the file) */
  guint64 host_bytes, file_bytes;
  int copy_threads; /* for large copies of the host part (sv__spill_set_threads) */
  /* Workers write their own slices at once (pwrite, memcpy); the tally of
   * what was written is theirs in turn. */
  GMutex tally;
};

/* The temporary file, "BESIDE.WHAT-XXXXXX", unlinked at once. */
static int
open_file (const char *beside, const char *what, GError **error)
{
  g_autofree char *tmp_path = g_strdup_printf ("%s.%s-XXXXXX", beside, what);
  int fd = g_mkstemp_full (tmp_path, O_RDWR | O_CLOEXEC, 0600);

  if (fd < 0)
    {
      int saved_errno = errno;
      g_autofree char *name = g_filename_display_name (beside);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                   "%s: cannot make a temporary file beside it: %s", name,
                   g_strerror (saved_errno));
      return -1;
    }
  g_unlink (tmp_path);
  return fd;
}

SvSpill *
sv__spill_new (const char *beside, const char *what, guint nz, gsize slice_bytes, guint host_z0,
               guint host_slices, GError **error)
{
  SvSpill *spill = g_new0 (SvSpill, 1);

  spill->fd = -1;
  spill->copy_threads = 1;
  g_mutex_init (&spill->tally);
  spill->nz = nz;
  spill->slice_bytes = slice_bytes;
  host_z0 = MIN (host_z0, nz);
  host_slices = MIN (host_slices, nz - host_z0);
  /* Pages are only touched where slices are written: a part that the run
   * never uses (a device keeps the assignment) costs nothing. */
  if (host_slices > 0 && slice_bytes > 0
      && (spill->host = g_try_malloc ((gsize)host_slices * slice_bytes)) != NULL)
    {
      spill->host_z0 = host_z0;
      spill->host_z1 = host_z0 + host_slices;
    }
  /* The file is opened now when some slice may go there, so that a folder
   * that cannot take it fails the run before it starts. */
  if (spill->host_z0 > 0 || spill->host_z1 < nz)
    {
      spill->fd = open_file (beside, what, error);
      if (spill->fd < 0)
        {
          sv__spill_free (spill);
          return NULL;
        }
    }
  spill->written = g_new0 (guint8, MAX (nz, 1));
  return spill;
}

void
sv__spill_free (SvSpill *spill)
{
  if (spill == NULL)
    return;
  if (spill->fd >= 0)
    close (spill->fd);
  g_free (spill->host);
  g_free (spill->written);
  g_mutex_clear (&spill->tally);
  g_free (spill);
}

/* pread or pwrite of all `len` bytes at `offset`, through short counts. */
static gboolean
transfer (SvSpill *spill, gboolean write, guint64 offset, guint8 *buf, gsize len, GError **error)
{
  while (len > 0)
    {
      ssize_t n = write ? pwrite (spill->fd, buf, len, (off_t)offset)
                        : pread (spill->fd, buf, len, (off_t)offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved_errno = errno;
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "cannot %s a temporary file: %s",
                       write ? "write" : "read",
                       n < 0 ? g_strerror (saved_errno) : "it is shorter than expected");
          return FALSE;
        }
      buf += n;
      offset += (guint64)n;
      len -= (gsize)n;
    }
  return TRUE;
}

/* Copies of the host part this large are split over threads: a worker
 * alone copied the last assignment of a 4096³ run into fresh pages at
 * about 1 GB/s, the page faults' pace on one core. */
#define SPILL_PARALLEL_BYTES (64u << 20)
#define SPILL_COPY_THREADS 8

static void
spill_copy (const SvSpill *spill, guint8 *dst, const guint8 *src, gsize len)
{
  sv__copy_parallel (dst, src, len,
                     len < SPILL_PARALLEL_BYTES ? 1 : MIN (spill->copy_threads, SPILL_COPY_THREADS));
}

void
sv__spill_set_threads (SvSpill *spill, int n_threads)
{
  spill->copy_threads = sv__resolve_threads (n_threads);
}

/* Slices [z0, z1) to or from `buf`: those of the host part by copy, the
 * others through the file (at their own offset; the host part is a hole
 * there). */
static gboolean
move_slices (SvSpill *spill, gboolean write, guint z0, guint z1, guint8 *buf, GError **error)
{
  const guint cuts[4] = { z0, CLAMP (spill->host_z0, z0, z1), CLAMP (spill->host_z1, z0, z1), z1 };

  for (guint part = 0; part < 3; part++)
    {
      const guint a = cuts[part], b = cuts[part + 1];
      guint8 *slices = buf + (gsize)(a - z0) * spill->slice_bytes;
      const gsize len = (gsize)(b - a) * spill->slice_bytes;

      if (a >= b)
        continue;
      if (part == 1)
        {
          guint8 *host = spill->host + (gsize)(a - spill->host_z0) * spill->slice_bytes;
          spill_copy (spill, write ? host : slices, write ? slices : host, len);
        }
      else if (!transfer (spill, write, (guint64)a * spill->slice_bytes, slices, len, error))
        return FALSE;
      if (!write)
        continue;
      g_mutex_lock (&spill->tally);
      for (guint z = a; z < b; z++)
        if (!spill->written[z])
          {
            spill->written[z] = 1;
            *(part == 1 ? &spill->host_bytes : &spill->file_bytes) += spill->slice_bytes;
          }
      g_mutex_unlock (&spill->tally);
    }
  return TRUE;
}

gboolean
sv__spill_write (SvSpill *spill, guint z0, guint z1, gconstpointer slices, GError **error)
{
  g_return_val_if_fail (z0 <= z1 && z1 <= spill->nz, FALSE);
  return move_slices (spill, TRUE, z0, z1, (guint8 *)slices, error);
}

gboolean
sv__spill_read (SvSpill *spill, guint z0, guint z1, gpointer slices, GError **error)
{
  g_return_val_if_fail (z0 <= z1 && z1 <= spill->nz, FALSE);
  return move_slices (spill, FALSE, z0, z1, slices, error);
}

gconstpointer
sv__spill_peek (const SvSpill *spill, guint z0, guint z1)
{
  if (spill == NULL || z0 < spill->host_z0 || z1 > spill->host_z1 || z0 >= z1)
    return NULL;
  return spill->host + (gsize)(z0 - spill->host_z0) * spill->slice_bytes;
}

guint64
sv__spill_file_bytes (const SvSpill *spill)
{
  return spill != NULL ? spill->file_bytes : 0;
}

guint64
sv__spill_host_bytes (const SvSpill *spill)
{
  return spill != NULL ? spill->host_bytes : 0;
}

gboolean
sv__spill_source (guint z0, guint z1, gint32 *labels, gpointer user_data, GError **error)
{
  return sv__spill_read (user_data, z0, z1, labels, error);
}

/* SV_TEST_DISK_FREE's SIZE: bytes, or K, M, G or T of 1024. */
static gboolean
pretend_size (const char *text, guint64 *bytes)
{
  char *end = NULL;
  guint64 value = g_ascii_strtoull (text, &end, 10);
  const char *units = "KMGT";
  const char *unit;

  if (end == text)
    return FALSE;
  if (*end != '\0' && (unit = strchr (units, g_ascii_toupper (*end))) != NULL && end[1] == '\0')
    value <<= 10 * (unit - units + 1);
  else if (*end != '\0')
    return FALSE;
  *bytes = value;
  return TRUE;
}

gboolean
sv_stream_temp_free (const char *output, guint64 *bytes)
{
  const char *pretend = g_getenv ("SV_TEST_DISK_FREE");

  if (pretend != NULL && pretend_size (pretend, bytes))
    return TRUE;
  g_autofree char *folder = g_path_get_dirname (output);
  g_autoptr (GFile) file = g_file_new_for_path (folder);
  g_autoptr (GFileInfo) info
      = g_file_query_filesystem_info (file, G_FILE_ATTRIBUTE_FILESYSTEM_FREE, NULL, NULL);

  if (info == NULL || !g_file_info_has_attribute (info, G_FILE_ATTRIBUTE_FILESYSTEM_FREE))
    return FALSE;
  *bytes = g_file_info_get_attribute_uint64 (info, G_FILE_ATTRIBUTE_FILESYSTEM_FREE);
  return TRUE;
}

/* Supervox engine: volumes that do not fit in memory, kept in a raw
 * temporary file while a streamed run needs them again (the assignment of
 * the last iteration, the labels before connectivity, the smoothed image).
 * The file lives
 * beside the output, on the disk that must hold the output anyway, and is
 * unlinked as soon as it is open so that nothing is left behind. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "supervox/sv-error.h"

struct _SvSpill
{
  int fd;
  guint nz;
  gsize slice_bytes;
};

SvSpill *
sv__spill_new (const char *beside, const char *what, guint nz, gsize slice_bytes, GError **error)
{
  g_autofree char *tmp_path = g_strdup_printf ("%s.%s-XXXXXX", beside, what);
  SvSpill *spill;
  int fd = g_mkstemp_full (tmp_path, O_RDWR | O_CLOEXEC, 0600);

  if (fd < 0)
    {
      int saved_errno = errno;
      g_autofree char *name = g_filename_display_name (beside);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                   "%s: cannot make a temporary file beside it: %s", name,
                   g_strerror (saved_errno));
      return NULL;
    }
  g_unlink (tmp_path);
  spill = g_new0 (SvSpill, 1);
  spill->fd = fd;
  spill->nz = nz;
  spill->slice_bytes = slice_bytes;
  return spill;
}

void
sv__spill_free (SvSpill *spill)
{
  if (spill == NULL)
    return;
  close (spill->fd);
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

gboolean
sv__spill_write (SvSpill *spill, guint z0, guint z1, gconstpointer slices, GError **error)
{
  g_return_val_if_fail (z0 <= z1 && z1 <= spill->nz, FALSE);
  return transfer (spill, TRUE, (guint64)z0 * spill->slice_bytes, (guint8 *)slices,
                   (gsize)(z1 - z0) * spill->slice_bytes, error);
}

gboolean
sv__spill_read (SvSpill *spill, guint z0, guint z1, gpointer slices, GError **error)
{
  g_return_val_if_fail (z0 <= z1 && z1 <= spill->nz, FALSE);
  return transfer (spill, FALSE, (guint64)z0 * spill->slice_bytes, slices,
                   (gsize)(z1 - z0) * spill->slice_bytes, error);
}

gboolean
sv__spill_source (guint z0, guint z1, gint32 *labels, gpointer user_data, GError **error)
{
  return sv__spill_read (user_data, z0, z1, labels, error);
}

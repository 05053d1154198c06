/* Supervox engine: a label file written whole whose last step, the sync of
 * its data and its rename into place, its caller takes. A batch's lane
 * starts its next file while this one's data reaches the disk: the final
 * fsync of four 1024³ label files at once took 0.76 s at the end of their
 * 4.4 s batch on the GPU machine. Until it completes the file is only its
 * temporary name; abort removes that. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "io-tiff-private.h"
#include "supervox/sv-error.h"

struct _SvFileFinish
{
  int fd; /* open on the written file, for its sync */
  char *tmp_path;
  char *path;
};

SvFileFinish *
sv__file_finish_new (int fd, char *tmp_path, char *path)
{
  SvFileFinish *f = g_new (SvFileFinish, 1);

  f->fd = fd;
  f->tmp_path = tmp_path;
  f->path = path;
  return f;
}

static void
file_finish_free (SvFileFinish *f)
{
  if (f->fd >= 0)
    close (f->fd);
  g_free (f->tmp_path);
  g_free (f->path);
  g_free (f);
}

gboolean
sv_file_finish_complete (SvFileFinish *f, GError **error)
{
  const char *problem = NULL;
  int saved = 0;

  g_return_val_if_fail (f != NULL, FALSE);
  /* As the writer's own finish: the data on disk before the name, and
   * late errors (disk full on network drives) surface here. */
  if (fsync (f->fd) != 0)
    {
      saved = errno;
      problem = "cannot finish the file";
    }
  if (close (f->fd) != 0 && problem == NULL)
    {
      saved = errno;
      problem = "cannot finish the file";
    }
  f->fd = -1;
  if (problem == NULL && g_rename (f->tmp_path, f->path) != 0)
    {
      saved = errno;
      problem = "cannot replace the file";
    }
  if (problem != NULL)
    {
      g_autofree char *name = g_filename_display_name (f->path);

      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: %s: %s", name, problem,
                   g_strerror (saved));
      g_unlink (f->tmp_path);
    }
  file_finish_free (f);
  return problem == NULL;
}

void
sv_file_finish_abort (SvFileFinish *f)
{
  if (f == NULL)
    return;
  g_unlink (f->tmp_path);
  file_finish_free (f);
}

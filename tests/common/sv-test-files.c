/* Supervox tests: temporary folders. */
#include "sv-test-files.h"

#include <glib/gstdio.h>

void
sv_test_remove_tree (const char *path)
{
  GDir *dir;
  const char *name;

  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_unlink (path);
      return;
    }
  g_chmod (path, 0755);
  dir = g_dir_open (path, 0, NULL);
  if (dir != NULL)
    {
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          sv_test_remove_tree (child);
        }
      g_dir_close (dir);
    }
  g_rmdir (path);
}

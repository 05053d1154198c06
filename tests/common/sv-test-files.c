/* Supervox tests: temporary folders and file comparison. */
#include "sv-test-files.h"

#include <string.h>

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

char *
sv_test_make_dir (const char *prefix)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tmpl = g_strconcat (prefix, "-XXXXXX", NULL);
  char *dir = g_dir_make_tmp (tmpl, &error);

  g_assert_no_error (error);
  return dir;
}

void
sv_test_assert_same_file (const char *a, const char *b)
{
  g_autofree char *ca = NULL;
  g_autofree char *cb = NULL;
  gsize la = 0, lb = 0;

  g_assert_true (g_file_get_contents (a, &ca, &la, NULL));
  g_assert_true (g_file_get_contents (b, &cb, &lb, NULL));
  g_assert_cmpuint (la, ==, lb);
  g_assert_true (memcmp (ca, cb, la) == 0);
}

void
sv_test_assert_same_tree (const char *a, const char *b)
{
  const char *const roots[2] = { a, b };

  for (guint side = 0; side < 2; side++)
    {
      g_autoptr (GPtrArray) folders = g_ptr_array_new_with_free_func (g_free);

      g_ptr_array_add (folders, g_strdup (""));
      for (guint f = 0; f < folders->len; f++)
        {
          const char *rel = folders->pdata[f];
          g_autofree char *dir_path = g_build_filename (roots[side], rel, NULL);
          g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
          const char *entry;

          g_assert_nonnull (dir);
          while ((entry = g_dir_read_name (dir)) != NULL)
            {
              g_autofree char *entry_rel = g_build_filename (rel, entry, NULL);
              g_autofree char *here = g_build_filename (roots[side], entry_rel, NULL);
              g_autofree char *there = g_build_filename (roots[1 - side], entry_rel, NULL);

              if (g_file_test (here, G_FILE_TEST_IS_DIR))
                {
                  g_ptr_array_add (folders, g_steal_pointer (&entry_rel));
                  continue;
                }
              if (!g_file_test (there, G_FILE_TEST_EXISTS))
                g_error ("%s is in %s, not in %s", entry_rel, roots[side], roots[1 - side]);
              if (side == 0)
                sv_test_assert_same_file (here, there);
            }
        }
    }
}


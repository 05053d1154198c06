#define G_LOG_DOMAIN "sv-test"

#include "sv-test-python.h"

#include <string.h>

#define SV_TEST_PYTHON "/usr/bin/python3"

gboolean
sv_test_python_has (const char *modules)
{
  g_autofree char *code = g_strdup_printf ("import %s", modules);
  const char *argv[] = { SV_TEST_PYTHON, "-c", code, NULL };
  int status = 0;

  if (!g_file_test (SV_TEST_PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    return FALSE;
  if (!g_spawn_sync (NULL, (char **)argv, NULL,
                     G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL,
                     NULL, &status, NULL))
    return FALSE;
  return g_spawn_check_wait_status (status, NULL);
}

char *
sv_test_python (const char *script, const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;

  if (!g_file_test (SV_TEST_PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip (SV_TEST_PYTHON " is not installed");
      return NULL;
    }
  g_ptr_array_add (argv, (gpointer)SV_TEST_PYTHON);
  g_ptr_array_add (argv, (gpointer)"-c");
  g_ptr_array_add (argv, (gpointer)script);
  for (gsize i = 0; args != NULL && args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer)args[i]);
  g_ptr_array_add (argv, NULL);

  if (!g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                     &status, &error))
    g_error ("cannot run " SV_TEST_PYTHON ": %s", error->message);
  if (!g_spawn_check_wait_status (status, &error))
    {
      /* A missing reference library is a skip, not a failure. */
      if (err != NULL && strstr (err, "ModuleNotFoundError") != NULL)
        {
          g_test_skip_printf ("a Python module is missing: %s", g_strstrip (err));
          return NULL;
        }
      g_error ("python failed (%s): %s", error->message, err != NULL ? err : "");
    }
  return g_steal_pointer (&out);
}

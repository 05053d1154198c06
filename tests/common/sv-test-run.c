/* Supervox tests: running a program and keeping what it printed. */
#include "sv-test-run.h"

#include <sys/wait.h>

SvTestRun
sv_test_run_argv (const char *dir, char **envp, const char *const *argv)
{
  g_autoptr (GError) error = NULL;
  SvTestRun r = { 0 };
  int wait_status = 0;

  g_spawn_sync (dir, (char **)argv, envp, G_SPAWN_SEARCH_PATH, NULL, NULL, &r.out, &r.err,
                &wait_status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (wait_status));
  r.status = WEXITSTATUS (wait_status);
  return r;
}

void
sv_test_run_clear (SvTestRun *run)
{
  g_clear_pointer (&run->out, g_free);
  g_clear_pointer (&run->err, g_free);
}

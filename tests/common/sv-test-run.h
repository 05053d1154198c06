/* Supervox tests: running a program and keeping what it printed. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  int status; /* exit status */
  char *out;
  char *err;
} SvTestRun;

/* Runs argv (NULL-terminated; argv[0] is the program, looked up in PATH) in
 * `dir` with the environment `envp` (NULL: this process's); fails the test
 * unless the program could start and exited normally. */
SvTestRun sv_test_run_argv (const char *dir, char **envp, const char *const *argv);

void sv_test_run_clear (SvTestRun *run);

G_END_DECLS

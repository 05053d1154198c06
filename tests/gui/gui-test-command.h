/* The command line beside the window for the GUI tests
 * (gui-test-command.c): supervox-cli run as a user runs it, and the line
 * "Copy as command" puts on the clipboard. */
#pragma once

#include <gtk/gtk.h>

#include "sv-test-run.h"
#include "sv-window.h"

/* Runs `line` with /bin/sh in `dir`, the built supervox-cli first on PATH. */
SvTestRun run_shell (const char *dir, const char *line);
/* Ctrl+Shift+C with the pointer over the views; returns what the clipboard
 * then holds. */
char *copy_command_with_keys (SvWindow *w);
/* Export Labels into `dir`, and the line copied with Ctrl+Shift+C run in
 * `dir`/cli: the two label files hold the same bytes. Returns the path of
 * the one supervox-cli wrote. */
char *assert_copied_command_writes_export (SvWindow *w, const char *dir);
/* The window's sidecar and supervox-cli's: "same" apart from what says
 * how and where each ran (timings, threads, program, mode, memory, the
 * output), else what differs (g_free). */
char *compare_sidecars (const char *window_json, const char *cli_json);

/* The command line beside the window for the GUI tests: supervox-cli run
 * as a user runs it, and the line "Copy as command" puts on the
 * clipboard. */
#define G_LOG_DOMAIN "test-gui"

#include "gui-test-command.h"

#include <glib/gstdio.h>

#include "gui-test-pointer.h"
#include "gui-test-util.h"
#include "sv-test-files.h"
#include "sv-test-python.h"

SvTestRun
run_shell (const char *dir, const char *line)
{
  g_autofree char *cli_dir = g_build_filename (g_getenv ("SV_BUILD_DIR"), "app", "cli", NULL);
  g_auto (GStrv) envp = g_get_environ ();
  g_autofree char *path_env = g_strconcat (cli_dir, ":", g_environ_getenv (envp, "PATH"), NULL);
  const char *argv[] = { "/bin/sh", "-c", line, NULL };

  g_assert_nonnull (g_getenv ("SV_BUILD_DIR"));
  envp = g_environ_setenv (envp, "PATH", path_env, TRUE);
  g_test_message ("$ %s", line);
  return sv_test_run_argv (dir, envp, argv);
}

static void
set_flag (gboolean *flag)
{
  *flag = TRUE;
}

static gboolean
flag_set (gpointer data)
{
  return *(gboolean *)data;
}

static void
clipboard_text_cb (GObject *clipboard, GAsyncResult *result, gpointer data)
{
  char *text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (clipboard), result, NULL);
  *(char **)data = text ? text : g_strdup ("");
}

static gboolean
text_read (gpointer data)
{
  return *(char **)data != NULL;
}

char *
copy_command_with_keys (SvWindow *w)
{
  GdkClipboard *clipboard = gtk_widget_get_clipboard (GTK_WIDGET (w));
  gboolean copied = FALSE;
  char *text = NULL;
  gulong handler;

  /* Emptied first: the line read is the one the keys copied. */
  gdk_clipboard_set_text (clipboard, "");
  handler = g_signal_connect_swapped (clipboard, "changed", G_CALLBACK (set_flag), &copied);
  point_at_widget (w, GTK_WIDGET (sv_window_get_slice_view (w, SV_AXIS_XY)), 0.5, 0.5);
  xdotool (w, "key ctrl+shift+c");
  wait_until (flag_set, &copied, "Ctrl+Shift+C");
  g_signal_handler_disconnect (clipboard, handler);
  gdk_clipboard_read_text_async (clipboard, NULL, clipboard_text_cb, &text);
  wait_until (text_read, &text, "the clipboard");
  return text;
}

char *
assert_copied_command_writes_export (SvWindow *w, const char *dir)
{
  g_autofree char *cli_dir = g_build_filename (dir, "cli", NULL);
  g_autofree char *name = sv_window_default_export_name (w);
  g_autofree char *exported = g_build_filename (dir, name, NULL);
  g_autofree char *from_cli = g_build_filename (cli_dir, name, NULL);
  g_autofree char *line = copy_command_with_keys (w);
  g_autoptr (GError) error = NULL;
  SvTestRun run;

  g_assert_cmpint (g_mkdir_with_parents (cli_dir, 0755), ==, 0);
  g_assert_true (g_str_has_prefix (line, "supervox-cli slic "));
  g_assert_true (sv_window_export_labels (w, exported, &error));
  g_assert_no_error (error);
  run = run_shell (cli_dir, line);
  if (run.status != 0)
    g_error ("the copied line failed (%d):\n%s%s", run.status, run.out, run.err);
  sv_test_run_clear (&run);
  sv_test_assert_same_file (exported, from_cli);
  return g_steal_pointer (&from_cli);
}

/* The window's sidecar and the CLI's, apart from what says how each ran
 * (timings, threads, who wrote it, how the CLI held the volume) and where
 * the labels went. */
static const char compare_sidecars_script[]
    = "import json, sys\n"
      "w, c = (json.load(open(p)) for p in sys.argv[1:3])\n"
      "for d in (w, c):\n"
      "    for k in ('seconds', 'threads', 'program', 'mode', 'memory_limit_bytes',\n"
      "              'peak_memory_bytes'):\n"
      "        d.pop(k, None)\n"
      "w['command'] = w['command'].replace(' -o ' + w['output'] + ' ',\n"
      "                                    ' -o ' + c['output'] + ' ')\n"
      "w['output'] = c['output']\n"
      "print('same' if w == c else {k: (w.get(k), c.get(k)) for k in set(w) | set(c)\n"
      "                             if w.get(k) != c.get(k)}, end='')\n";

char *
compare_sidecars (const char *window_json, const char *cli_json)
{
  return sv_test_python_args (compare_sidecars_script, window_json, cli_json);
}

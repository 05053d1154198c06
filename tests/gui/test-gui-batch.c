/* Tests of the window's Run Batch… under Xvfb: the dialog, driven through
 * its widgets and a real click on Start, runs the parameters on screen on
 * a folder of TIFFs; the labels equal, byte for byte, what supervox-cli
 * slic writes with the options "Copy as command" gives; a truncated file
 * fails its row alone and leaves nothing; the window's own job goes on;
 * Stop during a larger file leaves nothing of it and keeps the file done. */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <string.h>

#include "gui-test-pointer.h"
#include "gui-test-util.h"
#include "supervox/sv-io.h"
#include "supervox/sv-synth.h"
#include "sv-batch-dialog.h"
#include "sv-test-files.h"
#include "sv-test-run.h"

/* Writes a phantom of cells of that shape to dir/name. */
static char *
write_cells (const char *dir, const char *name, guint nz, guint ny, guint nx, guint64 seed)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = NULL;
  SvSynthParams p;

  sv_synth_params_init_defaults (&p);
  p.nz = nz;
  p.ny = ny;
  p.nx = nx;
  p.n_cells = 40;
  p.seed = seed;
  v = sv_synth_cells (&p, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sv_tiff_write_volume (path, v, SV_SAMPLE_U16, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

/* A TIFF cut off in the middle of its pixels. */
static void
write_truncated (const char *dir, const char *name)
{
  g_autofree char *whole = write_cells (dir, name, 12, 40, 40, 9);
  g_autofree char *bytes = NULL;
  gsize length = 0;

  g_assert_true (g_file_get_contents (whole, &bytes, &length, NULL));
  g_assert_true (g_file_set_contents (whole, bytes, length / 2, NULL));
}

static SvBatchDialog *
find_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GObject) w = g_list_model_get_item (toplevels, i);
      if (SV_IS_BATCH_DIALOG (w))
        return SV_BATCH_DIALOG (w);
    }
  return NULL;
}

static GtkWidget *
child (SvBatchDialog *dialog, const char *name)
{
  GObject *widget = gtk_widget_get_template_child (GTK_WIDGET (dialog), SV_TYPE_BATCH_DIALOG, name);
  g_assert_nonnull (widget);
  return GTK_WIDGET (widget);
}

static gboolean
is_laid_out (gpointer widget)
{
  return gtk_widget_get_mapped (widget) && gtk_widget_get_width (widget) > 0;
}

/* File ▸ Run Batch…, and the dialog on screen. */
static SvBatchDialog *
open_dialog (SvWindow *w)
{
  SvBatchDialog *dialog;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.run-batch", NULL));
  dialog = find_dialog ();
  g_assert_nonnull (dialog);
  wait_until (is_laid_out, child (dialog, "start_button"), "the batch dialog on screen");
  return dialog;
}

static gboolean
batch_ended (gpointer dialog)
{
  return !sv_batch_dialog_is_running (dialog)
         && g_str_has_suffix (sv_batch_dialog_get_status_text (dialog), " s");
}

static gboolean
batch_started (gpointer dialog)
{
  return sv_batch_dialog_is_running (dialog) || batch_ended (dialog);
}

/* The options of "Copy as command" (after its -o OUT), as argv words. */
static GStrv
copied_options (SvWindow *w)
{
  g_autofree char *command = sv_window_build_command (w);
  g_auto (GStrv) words = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GStrvBuilder) options = g_strv_builder_new ();
  guint i = 0;

  g_test_message ("copied: %s", command);
  g_assert_true (g_shell_parse_argv (strrchr (command, '&') ? strrchr (command, '&') + 1 : command,
                                     NULL, &words, &error));
  g_assert_no_error (error);
  while (words[i] && !g_str_equal (words[i], "-o"))
    i++;
  g_assert_nonnull (words[i]);
  for (i += 2; words[i]; i++)
    g_strv_builder_add (options, words[i]);
  return g_strv_builder_end (options);
}

/* `supervox-cli slic input -o output OPTIONS…` with the built CLI. */
static void
run_cli_slic (const char *input, const char *output, const char *const *options)
{
  g_autofree char *cli
      = g_build_filename (g_getenv ("SV_BUILD_DIR"), "app", "cli", "supervox-cli", NULL);
  g_autoptr (GStrvBuilder) argv = g_strv_builder_new ();
  g_auto (GStrv) args = NULL;
  SvTestRun run;

  g_strv_builder_add_many (argv, cli, "slic", input, "-o", output, NULL);
  g_strv_builder_addv (argv, (const char **)options);
  args = g_strv_builder_end (argv);
  run = sv_test_run_argv (NULL, NULL, (const char *const *)args);
  if (run.status != 0)
    g_error ("supervox-cli slic failed (%d):\n%s%s", run.status, run.out, run.err);
  sv_test_run_clear (&run);
}

static guint
count_entries (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d))
    n++;
  return n;
}

/* Parameters unlike the defaults, so that a batch that ignored them would
 * write other labels. */
static void
set_window_params (SvWindow *w, gint64 n_segments, int max_num_iter)
{
  SvParamsPanel *panel = sv_window_get_params_panel (w);
  SvSlicParams p;

  sv_params_panel_get_params (panel, &p);
  p.n_segments = n_segments;
  p.compactness = 0.05;
  p.max_num_iter = max_num_iter;
  p.sigma[0] = 0.5;
  p.spacing[0] = 2;
  sv_params_panel_set_params (panel, &p);
  sv_params_panel_set_backend (panel, "cpu");
  wait_for_current_result (w);
}

static void
test_batch_equals_cli (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-batch");
  g_autofree char *in = g_build_filename (dir, "in", NULL);
  g_autofree char *out = g_build_filename (dir, "out", NULL);
  g_autofree char *ref = g_build_filename (dir, "ref", NULL);
  g_autofree char *a = NULL, *c = NULL, *command = NULL, *shown_options = NULL;
  g_auto (GStrv) options = NULL;
  g_autoptr (GError) error = NULL;
  const char *const good[] = { "a", "c" };
  SvBatchDialog *dialog;
  SvBatchRow *bad;

  if (!have_xdotool ())
    return;
  g_assert_cmpint (g_mkdir (in, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (ref, 0755), ==, 0);
  a = write_cells (in, "a.tif", 16, 48, 56, 3);
  write_truncated (in, "b.tif");
  c = write_cells (in, "c.tif", 20, 40, 40, 5);

  set_window_params (f->window, 60, 6);
  options = copied_options (f->window);
  dialog = open_dialog (f->window);
  g_assert_cmpuint (sv_batch_dialog_add_folder (dialog, in, &error), ==, 3);
  g_assert_no_error (error);
  sv_batch_dialog_set_output_folder (dialog, out);
  gtk_editable_set_text (GTK_EDITABLE (child (dialog, "names_entry")), "{stem}-labels.tif");

  /* The command shown runs the three files with the copied options. */
  command = sv_batch_dialog_get_command (dialog);
  g_test_message ("shown: %s", command);
  shown_options = g_strjoinv (" ", options);
  g_assert_true (g_str_has_prefix (command, "supervox-cli slic "));
  g_assert_nonnull (strstr (command, "/in/a.tif "));
  g_assert_nonnull (strstr (command, "/in/b.tif "));
  g_assert_nonnull (strstr (command, "/out/{stem}-labels.tif' "));
  g_assert_true (g_str_has_suffix (command, shown_options));
  g_assert_nonnull (strstr (command, "--n-segments 60 "));

  click_widget (GTK_WINDOW (dialog), child (dialog, "start_button"));
  wait_until (batch_started, dialog, "the click on Start");
  /* The window's own job goes on meanwhile, with its own parameters. */
  set_window_params (f->window, 90, 6);
  g_assert_cmpint (sv_window_get_result (f->window)->params.n_segments, ==, 90);
  wait_until (batch_ended, dialog, "the batch to end");
  save_toplevel_png (GTK_WINDOW (dialog), "gui-batch-done.png");
  g_test_message ("status: %s", sv_batch_dialog_get_status_text (dialog));
  g_assert_true (g_str_has_prefix (sv_batch_dialog_get_status_text (dialog),
                                   "3 files: 2 written, 1 failed in "));
  g_assert_cmpfloat (sv_batch_dialog_get_fraction (dialog), ==, 1.0);

  /* The bad file: its row says why, and no label file or sidecar. */
  bad = sv_batch_dialog_get_row (dialog, 1);
  g_test_message ("bad row: %s: %s", sv_batch_row_get_state_text (bad),
                  sv_batch_row_get_error_text (bad));
  g_assert_cmpint (sv_batch_row_get_state (bad), ==, SV_BATCH_FILE_FAILED);
  g_assert_nonnull (strstr (sv_batch_row_get_error_text (bad), "b.tif"));
  g_assert_null (strchr (sv_batch_row_get_error_text (bad), '\n'));
  {
    g_autofree char *labels = g_build_filename (out, "b-labels.tif", NULL);
    g_autofree char *sidecar = g_build_filename (out, "b-labels.json", NULL);
    g_assert_false (g_file_test (labels, G_FILE_TEST_EXISTS));
    g_assert_false (g_file_test (sidecar, G_FILE_TEST_EXISTS));
  }
  g_assert_cmpuint (count_entries (out), ==, 4);

  /* The good ones: the labels supervox-cli writes with the copied options,
   * and their rows name the labels' count. */
  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autofree char *name = g_strconcat (good[i], ".tif", NULL);
      g_autofree char *input = g_build_filename (in, name, NULL);
      g_autofree char *mine_name = g_strconcat (good[i], "-labels.tif", NULL);
      g_autofree char *mine = g_build_filename (out, mine_name, NULL);
      g_autofree char *theirs = g_build_filename (ref, name, NULL);
      g_autoptr (SvLabels) labels = NULL;
      g_autofree char *count = NULL;
      SvBatchRow *row = sv_batch_dialog_get_row (dialog, i * 2);
      gint32 max = 0;

      g_assert_cmpint (sv_batch_row_get_state (row), ==, SV_BATCH_FILE_DONE);
      run_cli_slic (input, theirs, (const char *const *)options);
      sv_test_assert_same_file (mine, theirs);
      labels = sv_tiff_read_labels (mine, &error);
      g_assert_no_error (error);
      for (gsize k = 0; k < (gsize)labels->nz * labels->ny * labels->nx; k++)
        max = MAX (max, labels->data[k]);
      count = g_strdup_printf ("done: %d labels in ", max);
      g_test_message ("%s: %s", name, sv_batch_row_get_state_text (row));
      g_assert_true (g_str_has_prefix (sv_batch_row_get_state_text (row), count));
    }
  sv_test_remove_tree (dir);
}

static gboolean
large_file_running (gpointer dialog)
{
  SvBatchRow *small = sv_batch_dialog_get_row (dialog, 0);
  SvBatchRow *large = sv_batch_dialog_get_row (dialog, 1);

  /* Stop once the small file is written and the large one iterates. */
  return sv_batch_row_get_state (small) == SV_BATCH_FILE_DONE
         && sv_batch_row_get_state (large) == SV_BATCH_FILE_RUNNING
         && sv_batch_row_get_fraction (large) > 0;
}

static void
test_stop_leaves_no_partial_file (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-batch-stop");
  g_autofree char *in = g_build_filename (dir, "in", NULL);
  g_autofree char *out = g_build_filename (dir, "out", NULL);
  g_autofree char *small = NULL, *large = NULL, *small_labels = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) labels = NULL;
  SvBatchDialog *dialog;
  SvBatchRow *row;

  if (!have_xdotool ())
    return;
  g_assert_cmpint (g_mkdir (in, 0755), ==, 0);
  small = write_cells (in, "a-small.tif", 8, 32, 32, 4);
  /* Many iterations on a larger volume: Stop comes long before its end. */
  large = write_cells (in, "b-large.tif", 48, 160, 160, 6);
  set_window_params (f->window, 60, 100);

  dialog = open_dialog (f->window);
  g_assert_cmpuint (sv_batch_dialog_add_folder (dialog, in, &error), ==, 2);
  sv_batch_dialog_set_output_folder (dialog, out);
  click_widget (GTK_WINDOW (dialog), child (dialog, "start_button"));
  wait_until (large_file_running, dialog, "the large file to iterate");
  /* The window's own job runs beside the batch's. */
  set_window_params (f->window, 75, 100);
  g_assert_cmpint (sv_window_get_result (f->window)->params.n_segments, ==, 75);
  save_toplevel_png (GTK_WINDOW (dialog), "gui-batch-running.png");
  click_widget (GTK_WINDOW (dialog), child (dialog, "stop_button"));
  wait_until (batch_ended, dialog, "the batch to stop");
  save_toplevel_png (GTK_WINDOW (dialog), "gui-batch-stopped.png");
  g_test_message ("status: %s", sv_batch_dialog_get_status_text (dialog));

  row = sv_batch_dialog_get_row (dialog, 1);
  g_assert_cmpint (sv_batch_row_get_state (row), ==, SV_BATCH_FILE_STOPPED);
  g_assert_true (g_str_has_prefix (sv_batch_dialog_get_status_text (dialog),
                                   "2 files: 1 written, 0 failed, 1 stopped in "));
  g_assert_cmpfloat (sv_batch_dialog_get_fraction (dialog), ==, 0.5);
  /* Only the small file's labels and sidecar: no part of the large one,
   * no temporary file. */
  g_assert_cmpuint (count_entries (out), ==, 2);
  small_labels = g_build_filename (out, "a-small.tif", NULL);
  labels = sv_tiff_read_labels (small_labels, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (labels->nz, ==, 8);
  sv_test_remove_tree (dir);
}

/* The names follow supervox-cli's rules: one plain name for several files
 * is refused before anything runs, with the CLI's message. */
static void
test_names_refused_as_cli (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-batch-names");
  g_autofree char *out = g_build_filename (dir, "out", NULL);
  g_autofree char *a = write_cells (dir, "a.tif", 4, 16, 16, 1);
  g_autofree char *b = write_cells (dir, "b.tif", 4, 16, 16, 2);
  SvBatchDialog *dialog = open_dialog (f->window);

  sv_batch_dialog_add_file (dialog, a);
  sv_batch_dialog_add_file (dialog, b);
  sv_batch_dialog_add_file (dialog, a);
  g_assert_cmpuint (sv_batch_dialog_get_n_files (dialog), ==, 2);
  sv_batch_dialog_set_output_folder (dialog, out);
  gtk_editable_set_text (GTK_EDITABLE (child (dialog, "names_entry")), "labels.tif");
  g_signal_emit_by_name (child (dialog, "start_button"), "clicked");
  g_test_message ("status: %s", sv_batch_dialog_get_status_text (dialog));
  g_assert_false (sv_batch_dialog_is_running (dialog));
  g_assert_nonnull (
      strstr (sv_batch_dialog_get_status_text (dialog), "2 inputs would all be written to "));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/batch/equals-supervox-cli", Fixture, NULL, fixture_setup, test_batch_equals_cli,
              fixture_teardown);
  g_test_add ("/gui/batch/stop-leaves-no-partial-file", Fixture, NULL, fixture_setup,
              test_stop_leaves_no_partial_file, fixture_teardown);
  g_test_add ("/gui/batch/names-refused-as-supervox-cli", Fixture, NULL, fixture_setup,
              test_names_refused_as_cli, fixture_teardown);
  return g_test_run ();
}

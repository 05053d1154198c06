/* Supervox GUI tests: a volume larger than the window's memory budget
 * opens out of core: slices read from the file through a bounded cache,
 * SLIC streamed on a worker thread, labels read back from their file and
 * exported byte for byte as supervox-cli's in-memory run writes them. */
#include <glib/gstdio.h>
#include <string.h>

#include "gui-test-util.h"
#include "supervox/sv-io.h"
#include "supervox/sv-sidecar.h"
#include "supervox/sv-synth.h"
#include "sv-test-files.h"
#include "sv-test-run.h"

/* 40 slices of 64×64 uint16: 8 KiB a slice in the file's type, 2.5 MiB for
 * the in-memory run; the budget below gives the image cache 64 KiB. */
#define OZ 40
#define OY 64
#define OX 64
#define BUDGET "256K"
#define CACHE_BOUND (256u << 10) / 4

static gboolean
ooc_shown (gpointer data)
{
  return sv_window_is_out_of_core (data) && !sv_window_is_busy (data);
}

static gboolean
ooc_open (gpointer data)
{
  return sv_window_is_out_of_core (data);
}

/* The scratch folder holds no file: a stopped run's label file goes with
 * its worker, or, when the run had just finished, with its result once
 * that is delivered, a moment after the window stops showing it busy. */
static gboolean
scratch_empty (gpointer data)
{
  const char *scratch = sv_window_get_scratch_dir (data);
  g_autoptr (GDir) d = scratch != NULL ? g_dir_open (scratch, 0, NULL) : NULL;

  return d != NULL && g_dir_read_name (d) == NULL;
}

/* Wakes the main loop while a test waits for something no event marks. */
static gboolean
tick_cb (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* Grey g in 0..255 at voxel (z, y, x): values that a 0..1 window shows as
 * themselves. */
static guint
grey_at (guint z, guint y, guint x)
{
  return (x * 3 + y * 5 + z * 7) % 256;
}

static void
write_ramp (const char *path)
{
  g_autoptr (SvVolume) v = sv_volume_new (OZ, OY, OX, 1, NULL);
  g_autoptr (GError) error = NULL;

  for (guint z = 0; z < OZ; z++)
    for (guint y = 0; y < OY; y++)
      for (guint x = 0; x < OX; x++)
        v->data[((gsize)z * OY + y) * OX + x] = (float)(grey_at (z, y, x) * 257) / 65535.0f;
  g_assert_true (sv_tiff_write_volume_full (path, v, SV_SAMPLE_U16, NULL, &error));
  g_assert_no_error (error);
}

static void
test_slices_from_file (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-ooc-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "ramp.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  g_autoptr (GdkTexture) t = NULL;
  g_autofree guint8 *px = NULL;
  guint64 bytes = 0, budget = 0;
  gsize stride;
  guint n_checked = 0;

  write_ramp (path);
  g_setenv ("SV_MEMORY_LIMIT", BUDGET, TRUE);
  g_assert_true (sv_window_open_file (f->window, file));
  wait_until (ooc_open, f->window, "the volume to open out of core");
  g_unsetenv ("SV_MEMORY_LIMIT");
  g_assert_null (sv_window_get_volume (f->window));
  g_assert_nonnull (strstr (sv_window_get_memory_text (f->window), "out of core"));
  /* XZ says why it is off. */
  {
    GtkWidget *xz = GTK_WIDGET (sv_window_get_slice_view (f->window, SV_AXIS_XZ));
    const char *tip = gtk_widget_get_tooltip_text (xz);
    g_assert_false (gtk_widget_get_sensitive (xz));
    g_assert_nonnull (tip);
    g_assert_nonnull (strstr (tip, "only the XY view reads slices from the file"));
  }

  /* Stop while the streamed run goes: no label file is left behind. */
  sv_window_stop (f->window);
  wait_until (ooc_shown, f->window, "the run to stop");
  {
    const guint ticker = g_timeout_add (10, tick_cb, NULL);
    g_autofree gint32 *row = g_new (gint32, OY * OX);

    g_assert_nonnull (sv_window_get_scratch_dir (f->window));
    wait_until (scratch_empty, f->window, "the stopped run's label file to go");
    g_source_remove (ticker);
    g_assert_false (sv_window_read_label_slice (f->window, 0, row, NULL));
  }

  /* The first slice, drawn grey with a 0..1 window, is the file's. */
  sv_params_panel_set_gamma (panel, 1.0);
  sv_params_panel_set_window (panel, 0.0, 1.0);
  sv_slice_view_set_slice (xy, 0);
  t = capture_xy (f->window);
  px = texture_bytes (t, &stride);
  for (int py = 4; py < gdk_texture_get_height (t); py += 37)
    for (int pxl = 4; pxl < gdk_texture_get_width (t); pxl += 41)
      {
        guint zyx[3];
        const guint8 *p = px + (gsize)py * stride + (gsize)pxl * 4;
        guint left[3], right[3];
        /* Pixel centres well inside a voxel: its edges blend on some GL. */
        if (!sv_slice_view_pixel_to_voxel (xy, pxl + 0.5, py + 0.5, zyx)
            || !sv_slice_view_pixel_to_voxel (xy, pxl - 1.5, py - 1.5, left)
            || !sv_slice_view_pixel_to_voxel (xy, pxl + 2.5, py + 2.5, right)
            || memcmp (left, zyx, sizeof zyx) != 0 || memcmp (right, zyx, sizeof zyx) != 0)
          continue;
        g_assert_cmpuint (zyx[0], ==, 0);
        g_assert_cmpint (ABS ((int)p[0] - (int)grey_at (0, zyx[1], zyx[2])), <=, 1);
        g_assert_cmpint (ABS ((int)p[1] - (int)grey_at (0, zyx[1], zyx[2])), <=, 1);
        n_checked++;
      }
  g_assert_cmpuint (n_checked, >, 20);
  /* Hover reads the voxel from the file in its own values. */
  {
    g_autofree char *expected = g_strdup_printf ("x 9  y 7  z 3  ·  I %u", grey_at (3, 7, 9) * 257);
    g_signal_emit_by_name (xy, "hover", 3, 7, 9);
    g_test_message ("hover: %s", sv_window_get_hover_text (f->window));
    g_assert_cmpstr (sv_window_get_hover_text (f->window), ==, expected);
  }

  /* Every slice once: the cache keeps to its share of the budget. */
  for (guint z = 0; z < OZ; z++)
    {
      g_autoptr (GdkTexture) each = NULL;
      sv_slice_view_set_slice (xy, z);
      each = capture_xy (f->window);
      sv_window_get_cache_bytes (f->window, &bytes, &budget);
      g_assert_cmpuint (bytes, >, 0);
      g_assert_cmpuint (bytes, <=, CACHE_BOUND);
    }
  g_assert_cmpuint (budget, <=, CACHE_BOUND);
  sv_test_remove_tree (dir);
}

static gboolean
labels_shown (gpointer data)
{
  g_autofree gint32 *row = g_new (gint32, OY * OX);
  return !sv_window_is_busy (data) && sv_window_read_label_slice (data, 0, row, NULL);
}

/* supervox-cli slic, in memory, with the window's "Copy as command" line:
 * the label file's path. */
static char *
run_cli (SvWindow *w, const char *dir)
{
  const char *build = g_getenv ("SV_BUILD_DIR");
  g_autofree char *cmd = sv_window_build_command (w);
  g_autofree char *line = g_strconcat (cmd, " --memory-limit 1G", NULL);
  g_autofree char *cli_dir = NULL;
  g_autofree char *path_env = NULL;
  g_autofree char *name = sv_window_default_export_name (w);
  g_autofree char *out = g_build_filename (dir, name, NULL);
  g_autofree char *json_path = sv_sidecar_path (out);
  g_autofree char *json = NULL;
  g_auto (GStrv) envp = g_get_environ ();
  const char *argv[] = { "/bin/sh", "-c", line, NULL };
  SvTestRun run;

  g_assert_nonnull (build);
  cli_dir = g_build_filename (build, "app", "cli", NULL);
  path_env = g_strconcat (cli_dir, ":", g_environ_getenv (envp, "PATH"), NULL);
  envp = g_environ_setenv (envp, "PATH", path_env, TRUE);
  envp = g_environ_unsetenv (envp, "SV_MEMORY_LIMIT");
  g_test_message ("command: %s", line);
  run = sv_test_run_argv (dir, envp, argv);
  if (run.status != 0)
    g_error ("supervox-cli failed (%d):\n%s%s", run.status, run.out, run.err);
  sv_test_run_clear (&run);
  g_assert_true (g_file_get_contents (json_path, &json, NULL, NULL));
  g_assert_nonnull (strstr (json, "\"mode\":\"in-memory\""));
  return g_steal_pointer (&out);
}

static void
test_streamed_labels (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-ooc-XXXXXX", NULL);
  g_autofree char *cli_dir = g_build_filename (dir, "cli", NULL);
  g_autofree char *path = g_build_filename (dir, "cells.tif", NULL);
  g_autofree char *exported = g_build_filename (dir, "exported.tif", NULL);
  g_autofree char *json_path = sv_sidecar_path (exported);
  g_autofree char *json = NULL;
  g_autofree char *scratch = NULL;
  g_autofree char *cli_out = NULL;
  g_autofree gint32 *row = g_new (gint32, OY * OX);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (SvLabels) expected = NULL;
  g_autoptr (GError) error = NULL;
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvSynthParams sp;
  SvSlicParams params;

  sv_synth_params_init_defaults (&sp);
  sp.nz = OZ;
  sp.ny = OY;
  sp.nx = OX;
  sp.n_cells = 12;
  {
    g_autoptr (SvVolume) v = sv_synth_cells (&sp, NULL, &error);
    g_assert_no_error (error);
    g_assert_true (sv_tiff_write_volume_full (path, v, SV_SAMPLE_U8, NULL, &error));
    g_assert_no_error (error);
  }
  g_assert_cmpint (g_mkdir (cli_dir, 0755), ==, 0);

  g_setenv ("SV_MEMORY_LIMIT", BUDGET, TRUE);
  g_assert_true (sv_window_open_file (f->window, file));
  wait_until (ooc_open, f->window, "the volume to open out of core");
  g_unsetenv ("SV_MEMORY_LIMIT");
  /* A change while the first run goes: the newest request wins. */
  sv_params_panel_get_params (panel, &params);
  params.n_segments = 60;
  params.compactness = 0.2;
  sv_params_panel_set_params (panel, &params);
  wait_until (labels_shown, f->window, "the streamed labels");
  g_assert_true (sv_window_is_settled (f->window));
  scratch = g_strdup (sv_window_get_scratch_dir (f->window));
  g_assert_nonnull (strstr (sv_window_get_progress_text (f->window), "Done"));

  cli_out = run_cli (f->window, cli_dir);
  expected = sv_tiff_read_labels (cli_out, &error);
  g_assert_no_error (error);
  for (guint z = 0; z < OZ; z += 13)
    {
      g_assert_true (sv_window_read_label_slice (f->window, z, row, &error));
      g_assert_no_error (error);
      g_assert_cmpmem (row, sizeof (gint32) * OY * OX, expected->data + (gsize)z * OY * OX,
                       sizeof (gint32) * OY * OX);
    }
  g_assert_true (sv_window_export_labels (f->window, exported, &error));
  g_assert_no_error (error);
  sv_test_assert_same_file (exported, cli_out);
  g_assert_true (g_file_get_contents (json_path, &json, NULL, NULL));
  g_assert_nonnull (strstr (json, "\"mode\":\"streaming\""));
  g_assert_nonnull (strstr (json, "\"shape\":[40,64,64]"));
  {
    /* Hover reads the label from the label file. */
    g_autofree char *label
        = g_strdup_printf ("label %d", expected->data[(gsize)(2 * OY + 3) * OX + 4]);
    g_signal_emit_by_name (sv_window_get_slice_view (f->window, SV_AXIS_XY), "hover", 2, 3, 4);
    g_assert_true (g_str_has_suffix (sv_window_get_hover_text (f->window), label));
  }
  save_window_png (f->window, "gui-out-of-core.png");

  /* A budget above the need: the same file opens in memory, with the same
   * labels, and the streamed runs' files are gone. */
  g_setenv ("SV_MEMORY_LIMIT", "1G", TRUE);
  open_and_wait (f->window, file);
  g_unsetenv ("SV_MEMORY_LIMIT");
  g_assert_false (sv_window_is_out_of_core (f->window));
  g_assert_true (
      gtk_widget_get_sensitive (GTK_WIDGET (sv_window_get_slice_view (f->window, SV_AXIS_XZ))));
  g_assert_false (g_file_test (scratch, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (sv_window_get_volume (f->window)->nz, ==, OZ);
  wait_for_current_result (f->window);
  {
    const SvLabels *shown = sv_job_result_get_labels (sv_window_get_result (f->window), &error);
    g_assert_no_error (error);
    g_assert_cmpmem (shown->data, sizeof (gint32) * OZ * OY * OX, expected->data,
                     sizeof (gint32) * OZ * OY * OX);
  }
  sv_test_remove_tree (dir);
}

static gboolean
run_failed (gpointer data)
{
  return g_str_has_prefix (sv_window_get_progress_text (data), "Failed: ");
}

/* No room on the disk for the streamed run's temporary files: the window
 * says so in one line before any work (the plan's check, as the CLI's),
 * and leaves nothing in its scratch folder. SV_TEST_DISK_FREE stands in
 * for the disk's free space. */
static void
test_disk_full (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-ooc-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "ramp.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  const char *text;

  write_ramp (path);
  g_setenv ("SV_MEMORY_LIMIT", BUDGET, TRUE);
  g_setenv ("SV_TEST_DISK_FREE", "1K", TRUE);
  g_assert_true (sv_window_open_file (f->window, file));
  wait_until (ooc_open, f->window, "the volume to open out of core");
  wait_until (run_failed, f->window, "the streamed run to fail");
  g_unsetenv ("SV_TEST_DISK_FREE");
  g_unsetenv ("SV_MEMORY_LIMIT");
  text = sv_window_get_progress_text (f->window);
  g_test_message ("%s", text);
  g_assert_nonnull (strstr (text, "the streamed run needs "));
  g_assert_nonnull (strstr (text, "but only 1.0 KiB is free there"));
  g_assert_nonnull (strstr (text, "the window's memory budget"));
  g_assert_null (strchr (text, '\n'));
  {
    const char *scratch = sv_window_get_scratch_dir (f->window);
    g_autoptr (GDir) d = scratch ? g_dir_open (scratch, 0, NULL) : NULL;
    g_assert_nonnull (d);
    g_assert_null (g_dir_read_name (d));
  }
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/ooc/slices-from-file-stop-leaves-nothing", Fixture, NULL, fixture_setup,
              test_slices_from_file, fixture_teardown);
  g_test_add ("/gui/ooc/disk-full-says-so-before-work", Fixture, NULL, fixture_setup,
              test_disk_full, fixture_teardown);
  g_test_add ("/gui/ooc/streamed-labels-equal-cli-in-memory", Fixture, NULL, fixture_setup,
              test_streamed_labels, fixture_teardown);
  return g_test_run ();
}

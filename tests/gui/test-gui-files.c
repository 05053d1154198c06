/* Tests of the window's files under Xvfb: export after a failed run, the
 * exported labels' unit, sidecar and name, the same file from "Copy as
 * command" on calibrated files, presets without an extension,
 * the screenshot of the orthogonal layout, NaN files, a one-voxel volume. */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-command.h"
#include "gui-test-util.h"
#include "supervox/sv-io.h"
#include "supervox/sv-sidecar.h"
#include "supervox/sv-synth.h"
#include "sv-test-files.h"
#include "sv-test-python.h"
#include "sv-test-run.h"

static guint
n_toplevels (void)
{
  return g_list_model_get_n_items (gtk_window_get_toplevels ());
}

static void
test_export_after_failed_run (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *mask_path = g_build_filename (dir, "empty-mask.tif", NULL);
  g_autofree char *out = g_build_filename (dir, "labels.tif", NULL);
  g_autoptr (GFile) mask = g_file_new_for_path (mask_path);
  g_autoptr (SvLabels) m = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *secondary = NULL;
  GtkWindow *dialog;
  guint before;

  /* An empty mask makes the run fail. */
  m = sv_labels_new (NZ, NY, NX, &error);
  g_assert_no_error (error);
  g_assert_true (sv_tiff_write_labels (mask_path, m, &error));
  g_assert_no_error (error);
  g_assert_true (sv_window_open_mask (f->window, mask));
  wait_until (not_busy, f->window, "the run with an empty mask");
  g_assert_cmpstr (sv_window_get_progress_text (f->window), ==, "failed");

  g_assert_false (sv_window_export_labels (f->window, out, &error));
  g_assert_nonnull (strstr (error->message, "the segmentation failed"));
  g_assert_nonnull (strstr (error->message, "the mask is empty"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));

  /* The action says so in a dialog, and opens no file chooser. */
  before = n_toplevels ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.export-labels", NULL));
  dialog = sv_window_get_error_dialog (f->window);
  g_assert_nonnull (dialog);
  g_object_get (dialog, "secondary-text", &secondary, NULL);
  g_assert_nonnull (strstr (secondary, "failed"));
  g_assert_nonnull (strstr (secondary, "mask is empty"));
  g_assert_cmpuint (n_toplevels (), ==, before + 1);
  gtk_window_destroy (dialog);
  sv_test_remove_tree (dir);
}

static void
test_preset_without_extension (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *bare = g_build_filename (dir, "my settings", NULL);
  g_autofree char *saved = g_strconcat (bare, ".svpreset", NULL);
  g_autofree char *ini = g_build_filename (dir, "old.ini", NULL);
  g_autofree char *ini_path = sv_window_preset_path (ini);
  g_autoptr (GError) error = NULL;
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  g_autoptr (GFileInfo) info = g_file_info_new ();
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvSlicParams p, q;

  sv_params_panel_get_params (panel, &p);
  p.compactness = 0.42;
  p.n_segments = 77;
  sv_params_panel_set_params (panel, &p);
  wait_for_current_result (f->window);
  g_assert_true (sv_window_save_preset (f->window, bare, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (bare, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (saved, G_FILE_TEST_EXISTS));
  g_assert_cmpstr (ini_path, ==, ini);

  /* The Load Preset dialog's filter lists it. */
  gtk_file_filter_add_pattern (filter, "*" SV_PRESET_EXTENSION);
  g_file_info_set_display_name (info, "my settings.svpreset");
  g_file_info_set_name (info, "my settings.svpreset");
  g_assert_true (gtk_filter_match (GTK_FILTER (filter), info));

  sv_params_panel_set_compactness (panel, 3.0);
  wait_for_current_result (f->window);
  g_assert_true (sv_window_load_preset (f->window, saved, &error));
  g_assert_no_error (error);
  sv_params_panel_get_params (panel, &q);
  g_assert_cmpfloat (q.compactness, ==, 0.42);
  g_assert_cmpint (q.n_segments, ==, 77);
  sv_test_remove_tree (dir);
}

static gboolean
file_exists (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* Distinct colours in a rectangle of an RGBA image. */
static guint
n_colours (const guint8 *px, gsize stride, int x0, int y0, int x1, int y1)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);

  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        const guint8 *p = px + (gsize)y * stride + (gsize)x * 4;
        g_hash_table_add (seen, GUINT_TO_POINTER ((guint)p[0] << 16 | (guint)p[1] << 8 | p[2]));
      }
  return g_hash_table_size (seen);
}

static void
test_screenshot_orthogonal (Fixture *f, gconstpointer data)
{
  const char *log_dir = g_getenv ("SV_LOG_DIR");
  /* Kept beside the other screenshots the suite writes. */
  g_autofree char *path
      = g_build_filename (log_dir ? log_dir : ".", "gui-screenshot-orthogonal.png", NULL);
  g_autoptr (GdkTexture) shot = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree guint8 *px = NULL;
  GtkWidget *area = sv_window_get_views_area (f->window);
  SvSliceView *yz = sv_window_get_slice_view (f->window, SV_AXIS_YZ);
  SvSliceView *xz = sv_window_get_slice_view (f->window, SV_AXIS_XZ);
  graphene_rect_t yz_box, xz_box;
  gsize stride;
  int w, h;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.orthogonal", NULL));
  g_object_unref (capture_xy (f->window));
  g_unlink (path);
  sv_window_save_screenshot (f->window, path);
  wait_until (file_exists, path, "the screenshot");
  shot = gdk_texture_new_from_filename (path, &error);
  g_assert_no_error (error);
  w = gdk_texture_get_width (shot);
  h = gdk_texture_get_height (shot);
  g_test_message ("screenshot %d×%d, views' area %d×%d", w, h, gtk_widget_get_width (area),
                  gtk_widget_get_height (area));
  g_assert_cmpint (w, ==, gtk_widget_get_width (area) * gtk_widget_get_scale_factor (area));
  g_assert_cmpint (h, ==, gtk_widget_get_height (area) * gtk_widget_get_scale_factor (area));

  /* The YZ and XZ views are in it with their image, not a blank. */
  px = texture_bytes (shot, &stride);
  g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (yz), area, &yz_box));
  g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (xz), area, &xz_box));
  g_assert_cmpuint (n_colours (px, stride, (int)yz_box.origin.x, (int)yz_box.origin.y,
                               (int)(yz_box.origin.x + yz_box.size.width),
                               (int)(yz_box.origin.y + yz_box.size.height)),
                    >, 50);
  g_assert_cmpuint (n_colours (px, stride, (int)xz_box.origin.x, (int)xz_box.origin.y,
                               (int)(xz_box.origin.x + xz_box.size.width),
                               (int)(xz_box.origin.y + xz_box.size.height)),
                    >, 50);
}

static void
test_export_unit_sidecar_name (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *in = g_build_filename (dir, "brain.tif", NULL);
  g_autofree char *out = g_build_filename (dir, "brain-labels.tif", NULL);
  g_autofree char *json_path = g_build_filename (dir, "brain-labels.json", NULL);
  g_autoptr (GFile) in_file = g_file_new_for_path (in);
  g_autoptr (SvVolume) v = sv_volume_new (6, 20, 24, 1, NULL);
  g_autoptr (SvLabels) back = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *name = NULL;
  g_autofree char *json = NULL;
  g_autofree char *cmd = NULL;
  g_autofree char *shape = NULL;
  SvJobResult *r;

  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = (float)((i * 37) % 101) / 100.0f;
  v->spacing[0] = 2.0;
  v->spacing[1] = v->spacing[2] = 0.5;
  v->unit = g_strdup ("micron");
  g_assert_true (sv_tiff_write_volume_full (in, v, SV_SAMPLE_U16, NULL, &error));
  g_assert_no_error (error);
  open_and_wait (f->window, in_file);
  wait_for_current_result (f->window);
  r = sv_window_get_result (f->window);

  name = sv_window_default_export_name (f->window);
  g_assert_cmpstr (name, ==, "brain-labels.tif");
  cmd = sv_window_build_command (f->window);
  g_assert_nonnull (strstr (cmd, " -o brain-labels.tif"));

  g_assert_true (sv_window_export_labels (f->window, out, &error));
  g_assert_no_error (error);
  back = sv_tiff_read_labels (out, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (back->data, sizeof (gint32) * 6 * 20 * 24,
                   sv_job_result_get_labels (r, NULL)->data, sizeof (gint32) * 6 * 20 * 24);
  g_assert_cmpstr (back->unit, ==, "micron");
  g_assert_cmpfloat_with_epsilon (back->spacing[0], 2.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (back->spacing[1], 0.5, 1e-6);
  g_assert_cmpfloat_with_epsilon (back->spacing[2], 0.5, 1e-6);

  /* The sidecar is supervox-cli slic's (supervox/sv-sidecar.h). */
  g_assert_true (g_file_get_contents (json_path, &json, NULL, NULL));
  g_test_message ("%s", json);
  {
    g_autofree char *input = g_strdup_printf ("\"input\":\"%s\"", in);
    g_assert_nonnull (strstr (json, input));
  }
  shape = g_strdup ("\"shape\":[6,20,24]");
  g_assert_nonnull (strstr (json, shape));
  g_assert_nonnull (strstr (json, "\"spacing_unit\":\"micron\""));
  g_assert_nonnull (strstr (json, "\"seconds\":{\"load\":"));
  g_assert_nonnull (strstr (json, "\"iterate\":"));
  g_assert_nonnull (strstr (json, "\"command\":\"supervox-cli slic "));
  {
    /* The line that makes this file, not the name the dialog offered. */
    g_autofree char *written = g_strdup_printf (" -o %s ", out);
    g_assert_nonnull (strstr (json, written));
  }
  g_assert_nonnull (strstr (json, "\"params\":{"));
  g_assert_nonnull (strstr (json, "\"n_labels\":"));
  sv_test_remove_tree (dir);
}

/* Runs the window's "Copy as command" line in `dir` with the built
 * supervox-cli first on PATH; returns the label file's path. */
static char *
run_copied_command (SvWindow *w, const char *dir)
{
  const char *build = g_getenv ("SV_BUILD_DIR");
  g_autofree char *line = sv_window_build_command (w);
  g_autofree char *cli_dir = NULL;
  g_autofree char *path_env = NULL;
  g_autofree char *name = sv_window_default_export_name (w);
  g_auto (GStrv) envp = g_get_environ ();
  const char *argv[] = { "/bin/sh", "-c", line, NULL };
  SvTestRun run;

  g_assert_nonnull (build);
  cli_dir = g_build_filename (build, "app", "cli", NULL);
  path_env = g_strconcat (cli_dir, ":", g_environ_getenv (envp, "PATH"), NULL);
  envp = g_environ_setenv (envp, "PATH", path_env, TRUE);
  g_test_message ("command: %s", line);
  run = sv_test_run_argv (dir, envp, argv);
  if (run.status != 0)
    g_error ("supervox-cli failed (%d):\n%s%s", run.status, run.out, run.err);
  sv_test_run_clear (&run);
  return g_build_filename (dir, name, NULL);
}

/* "Copy as command" writes the very file Export Labels writes, with the
 * input's calibration, on an EM stack of 40×4×4 nm, an MRI of
 * 1.2×0.9×0.9 mm (whose relative spacing, 4/3 in z, the line must spell
 * so that it reads back to the same double) and a 3-channel 16-bit
 * fluorescence stack segmented on its channel 2 ("Segment on", the
 * line's --channel 1). */
static void
test_export_same_as_command (Fixture *f, gconstpointer data)
{
  static const struct
  {
    const char *stem;
    double spacing[3];
    const char *unit;
    SvSampleType type;
    guint nc;
    int channel; /* "Segment on", counted from 0; -1: all channels */
  } files[] = {
    { "em", { 40.0, 4.0, 4.0 }, "nm", SV_SAMPLE_U8, 1, -1 },
    { "mri", { 1.2, 0.9, 0.9 }, "mm", SV_SAMPLE_U16, 1, -1 },
    { "fluo", { 1.0, 0.2, 0.2 }, "micron", SV_SAMPLE_U16, 3, 1 },
  };
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *window_dir = g_build_filename (dir, "window", NULL);
  g_autofree char *cli_dir = g_build_filename (dir, "cli", NULL);

  g_assert_cmpint (g_mkdir (window_dir, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (cli_dir, 0755), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *name = g_strconcat (files[i].stem, ".tif", NULL);
      g_autofree char *in = g_build_filename (dir, name, NULL);
      g_autofree char *labels_name = g_strconcat (files[i].stem, "-labels.tif", NULL);
      g_autofree char *exported = g_build_filename (window_dir, labels_name, NULL);
      g_autofree char *exported_json = sv_sidecar_path (exported);
      g_autofree char *from_cli = NULL;
      g_autofree char *cli_json = NULL;
      g_autofree char *same = NULL;
      g_autoptr (GFile) file = g_file_new_for_path (in);
      g_autoptr (SvLabels) back = NULL;
      g_autoptr (GError) error = NULL;
      SvSynthParams sp;

      sv_synth_params_init_defaults (&sp);
      sp.nz = 12;
      sp.ny = 40;
      sp.nx = 44;
      sp.n_cells = 6;
      {
        g_autoptr (SvVolume) v = sv_volume_new (sp.nz, sp.ny, sp.nx, files[i].nc, &error);
        g_assert_no_error (error);
        /* Each channel its own cells. */
        for (guint c = 0; c < files[i].nc; c++)
          {
            g_autoptr (SvVolume) one = NULL;
            sp.seed = 1 + c;
            one = sv_synth_cells (&sp, NULL, &error);
            g_assert_no_error (error);
            for (gsize k = 0; k < sv_volume_n_voxels (v); k++)
              v->data[k * files[i].nc + c] = one->data[k];
          }
        memcpy (v->spacing, files[i].spacing, sizeof v->spacing);
        v->unit = g_strdup (files[i].unit);
        g_assert_true (sv_tiff_write_volume_full (in, v, files[i].type, NULL, &error));
        g_assert_no_error (error);
      }
      open_and_wait (f->window, file);
      wait_for_current_result (f->window);
      if (files[i].channel >= 0)
        {
          GtkWidget *segment_on
              = find_by_tooltip (GTK_WIDGET (sv_window_get_params_panel (f->window)),
                                 GTK_TYPE_DROP_DOWN, "Segment on");
          g_assert_nonnull (segment_on);
          /* Its entries: all channels, then channel 1, 2, 3. */
          gtk_drop_down_set_selected (GTK_DROP_DOWN (segment_on), (guint)files[i].channel + 1);
          wait_for_current_result (f->window);
        }

      g_assert_true (sv_window_export_labels (f->window, exported, &error));
      g_assert_no_error (error);
      from_cli = run_copied_command (f->window, cli_dir);
      sv_test_assert_same_file (exported, from_cli);

      /* The input's calibration, not the relative spacing the run used. */
      back = sv_tiff_read_labels (from_cli, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (back->unit, ==, files[i].unit);
      for (int a = 0; a < 3; a++)
        g_assert_cmpfloat_with_epsilon (back->spacing[a], files[i].spacing[a], 1e-6);

      cli_json = sv_sidecar_path (from_cli);
      same = compare_sidecars (exported_json, cli_json);
      g_assert_cmpstr (same, ==, "same");
      {
        g_autofree char *json = NULL;
        g_autofree char *channel = files[i].channel >= 0
                                       ? g_strdup_printf ("\"channel\":%d,", files[i].channel)
                                       : g_strdup ("\"channel\":null,");
        g_assert_true (g_file_get_contents (exported_json, &json, NULL, NULL));
        g_assert_nonnull (strstr (json, channel));
      }
    }
  sv_test_remove_tree (dir);
}

/* Magenta pixels (the colour of NaN and ±inf) in the XY view. */
static gsize
count_magenta (SvWindow *w)
{
  g_autoptr (GdkTexture) t = capture_xy (w);
  gsize stride, n = 0;
  g_autofree guint8 *px = texture_bytes (t, &stride);

  for (int y = 0; y < gdk_texture_get_height (t); y++)
    for (int x = 0; x < gdk_texture_get_width (t); x++)
      {
        const guint8 *p = px + (gsize)y * stride + (gsize)x * 4;
        n += p[0] > 240 && p[1] < 16 && p[2] > 240;
      }
  return n;
}

static gboolean
nonfinite_result (gpointer data)
{
  SvWindow *w = data;
  return !sv_window_is_busy (w) && sv_window_get_result (w) != NULL;
}

/* A float file with one NaN opens: the bar counts it and the view shows it
 * in magenta; the run without a mask fails with the engine's one line; the
 * bar's button masks it out and SLIC runs on the rest. */
static void
test_nan_file_opens_and_masks (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "holes.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (SvVolume) v = sv_volume_new (4, 30, 36, 1, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *command = NULL;
  SvSliceView *xy = sv_window_get_slice_view (f->window, SV_AXIS_XY);
  const char *bar;
  SvJobResult *r;

  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = (float)(i % 7);
  v->data[(gsize)(2 * 30 + 3) * 36 + 5] = NAN;
  g_assert_true (sv_tiff_write_volume_full (path, v, SV_SAMPLE_F32, NULL, &error));
  g_assert_no_error (error);
  open_and_wait (f->window, file);

  g_assert_null (sv_window_get_error_dialog (f->window));
  g_assert_cmpuint (sv_window_get_volume (f->window)->nx, ==, 36);
  g_assert_cmpuint (sv_window_get_n_nonfinite (f->window), ==, 1);
  bar = sv_window_get_nonfinite_text (f->window);
  g_test_message ("bar: %s", bar);
  g_assert_nonnull (bar);
  g_assert_nonnull (strstr (bar, "1 voxel holds NaN"));
  g_assert_nonnull (strstr (bar, "x 5, y 3, z 2"));
  /* The engine's own line, in the status bar. */
  g_test_message ("status: %s", sv_window_get_result_text (f->window));
  g_assert_cmpstr (sv_window_get_progress_text (f->window), ==, "failed");
  g_assert_nonnull (strstr (sv_window_get_result_text (f->window), "NaN values at 1 voxel"));
  g_assert_nonnull (strstr (sv_window_get_result_text (f->window), "z=2, y=3, x=5"));
  g_assert_null (sv_window_get_result (f->window));

  /* Magenta where the NaN is (slice 2), nowhere else. */
  sv_slice_view_set_slice (xy, 0);
  g_assert_cmpuint (count_magenta (f->window), ==, 0);
  sv_slice_view_set_slice (xy, 2);
  g_assert_cmpuint (count_magenta (f->window), >, 0);

  g_assert_true (sv_window_mask_nonfinite (f->window));
  wait_until (nonfinite_result, f->window, "the run with the NaN masked out");
  r = sv_window_get_result (f->window);
  g_test_message ("status: %s", sv_window_get_result_text (f->window));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (f->window), "exact"));
  g_assert_cmpint (sv_job_result_label_at (r, 2, 3, 5), ==, r->params.start_label - 1);
  g_assert_cmpint (sv_job_result_label_at (r, 2, 3, 6), >=, r->params.start_label);
  bar = sv_window_get_nonfinite_text (f->window);
  g_assert_nonnull (strstr (bar, "masked out"));
  g_assert_false (sv_window_mask_nonfinite (f->window));
  /* The command makes the same mask first. */
  command = sv_window_build_command (f->window);
  g_test_message ("%s", command);
  g_assert_nonnull (strstr (command, "np.isfinite"));
  g_assert_nonnull (strstr (command, "--mask holes-finite-mask.tif"));
  sv_test_remove_tree (dir);
}

static void
test_single_voxel_is_grey (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) t = NULL;
  g_autofree guint8 *px = NULL;
  SvVolume *v = sv_volume_new (1, 1, 1, 1, &error);
  gsize stride;
  const guint8 *centre;

  g_assert_no_error (error);
  v->data[0] = 0.7f;
  sv_window_set_volume (f->window, v, "one voxel");
  wait_until (has_result, f->window, "the one voxel's label");
  t = capture_xy (f->window);
  px = texture_bytes (t, &stride);
  centre = px + (gsize)(gdk_texture_get_height (t) / 2) * stride
           + (gsize)(gdk_texture_get_width (t) / 2) * 4;
  g_test_message ("centre pixel %u %u %u", centre[0], centre[1], centre[2]);
  for (int c = 0; c < 3; c++)
    g_assert_cmpint (ABS ((int)centre[c] - 128), <=, 4);
}

/* An OME-Zarr image opens from its folder as a TIFF does, at its finest
 * level: supervox-cli's Zarr labels of a phantom open as a volume whose
 * voxels are the same run's TIFF labels, and the window segments it. */
static void
test_open_ome_zarr (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-zarr-XXXXXX", NULL);
  g_autofree char *zarr = g_build_filename (dir, "labels.zarr", NULL);
  g_autofree char *tif = g_build_filename (dir, "labels.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (zarr);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) expected = NULL;
  SvTestRun run = run_shell (dir, "supervox-cli synth -o cells.tif --shape 12,30,36"
                                  " && supervox-cli slic cells.tif -o labels.zarr"
                                  " --output-format zarr --n-segments 40"
                                  " && supervox-cli slic cells.tif -o labels.tif --n-segments 40");
  const SvVolume *v;

  g_assert_cmpint (run.status, ==, 0);
  sv_test_run_clear (&run);
  g_assert_true (g_file_test (zarr, G_FILE_TEST_IS_DIR));
  open_and_wait (f->window, file);
  v = sv_window_get_volume (f->window);
  g_assert_nonnull (v);
  g_assert_cmpuint (v->nz, ==, 12);
  g_assert_cmpuint (v->ny, ==, 30);
  g_assert_cmpuint (v->nx, ==, 36);
  expected = sv_tiff_read_volume (tif, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (v->data, sv_volume_n_voxels (v) * sizeof (float), expected->data,
                   sv_volume_n_voxels (expected) * sizeof (float));
  g_assert_true (has_result (f->window));
  /* File ▸ Open OME-Zarr… asks for such a folder. */
  {
    const char *name = NULL, *property = NULL;
    const GVariantType *type = NULL;
    GType owner;
    gboolean found = FALSE;

    for (guint i = 0; gtk_widget_class_query_action (GTK_WIDGET_GET_CLASS (f->window), i, &owner,
                                                     &name, &type, &property);
         i++)
      found = found || g_strcmp0 (name, "win.open-zarr") == 0;
    g_assert_true (found);
  }
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/export/failed-run-says-why-before-any-dialog", Fixture, NULL, fixture_setup,
              test_export_after_failed_run, fixture_teardown);
  g_test_add ("/gui/export/unit-sidecar-and-name", Fixture, NULL, fixture_setup,
              test_export_unit_sidecar_name, fixture_teardown);
  g_test_add ("/gui/export/same-file-as-copied-command", Fixture, NULL, fixture_setup,
              test_export_same_as_command, fixture_teardown);
  g_test_add ("/gui/presets/round-trip-without-extension", Fixture, NULL, fixture_setup,
              test_preset_without_extension, fixture_teardown);
  g_test_add ("/gui/screenshot/orthogonal-saves-all-views", Fixture, NULL, fixture_setup,
              test_screenshot_orthogonal, fixture_teardown);
  g_test_add ("/gui/load/nan-opens-shown-and-masked", Fixture, NULL, fixture_setup,
              test_nan_file_opens_and_masks, fixture_teardown);
  g_test_add ("/gui/load/ome-zarr-folder", Fixture, NULL, fixture_setup, test_open_ome_zarr,
              fixture_teardown);
  g_test_add ("/gui/view/single-voxel-is-grey", Fixture, NULL, fixture_setup,
              test_single_voxel_is_grey, fixture_teardown);
  return g_test_run ();
}

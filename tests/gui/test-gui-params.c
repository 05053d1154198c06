/* Tests of the parameter panel's connectivity rule under Xvfb: the
 * dropdown restarts the job, reaches the labels, "Copy as command", "Copy
 * as Python", the sidecar and presets, and follows "Enforce connectivity". */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "gui-test-util.h"
#include "supervox/sv-io.h"
#include "supervox/sv-synth.h"
#include "sv-test-files.h"

static GtkDropDown *
rule_dropdown (Fixture *f)
{
  GtkWidget *w = find_by_tooltip (GTK_WIDGET (sv_window_get_params_panel (f->window)),
                                  GTK_TYPE_DROP_DOWN, "connectivity_rule");

  g_assert_nonnull (w);
  return GTK_DROP_DOWN (w);
}

/* Picks an entry as a click in the dropdown's list does. */
static void
choose_rule (Fixture *f, SvConnectivityRule rule)
{
  GtkDropDown *dropdown = rule_dropdown (f);
  guint i = rule == SV_CONNECTIVITY_RULE_LEGACY ? 1 : 0;
  g_autofree char *entry = NULL;

  g_assert_cmpuint (g_list_model_get_n_items (gtk_drop_down_get_model (dropdown)), ==, 2);
  entry = g_strdup (
      gtk_string_list_get_string (GTK_STRING_LIST (gtk_drop_down_get_model (dropdown)), i));
  /* The entries say what they are; the order is the panel's mapping. */
  g_assert_nonnull (strstr (entry, rule == SV_CONNECTIVITY_RULE_LEGACY ? "Legacy" : "Own label"));
  gtk_drop_down_set_selected (dropdown, i);
}

/* Labels ≥ start_label in pieces: the number of 6-connected components
 * over all labels, as scikit-image's connectivity step counts them. */
static gsize
count_pieces (const SvLabels *l, int start_label)
{
  gsize n = (gsize)l->nz * l->ny * l->nx, pieces = 0;
  g_autofree guint8 *seen = g_new0 (guint8, n);
  g_autofree gsize *stack = g_new (gsize, n);

  for (gsize i = 0; i < n; i++)
    {
      gsize top = 0;

      if (seen[i] || l->data[i] < start_label)
        continue;
      pieces++;
      seen[i] = 1;
      stack[top++] = i;
      while (top)
        {
          gsize v = stack[--top];
          guint x = v % l->nx, y = (v / l->nx) % l->ny, z = v / ((gsize)l->nx * l->ny);
          gsize next[6];
          guint k = 0;

          if (x > 0)
            next[k++] = v - 1;
          if (x + 1 < l->nx)
            next[k++] = v + 1;
          if (y > 0)
            next[k++] = v - l->nx;
          if (y + 1 < l->ny)
            next[k++] = v + l->nx;
          if (z > 0)
            next[k++] = v - (gsize)l->nx * l->ny;
          if (z + 1 < l->nz)
            next[k++] = v + (gsize)l->nx * l->ny;
          for (guint j = 0; j < k; j++)
            if (!seen[next[j]] && l->data[next[j]] == l->data[v])
              {
                seen[next[j]] = 1;
                stack[top++] = next[j];
              }
        }
    }
  return pieces;
}

/* A mask of binary blobs over the sample: its holes leave small pieces
 * that touch no relabelled voxel, where the two rules differ. */
static void
open_blob_mask (Fixture *f, const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) blobs = sv_synth_blobs (NZ, NY, NX, 0.1, 0.5, 1, &error);
  g_autoptr (SvLabels) mask = NULL;
  g_autoptr (GFile) file = g_file_new_for_path (path);

  g_assert_no_error (error);
  mask = sv_labels_new (NZ, NY, NX, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < (gsize)NZ * NY * NX; i++)
    mask->data[i] = blobs->data[i] > 0.5f;
  g_assert_true (sv_tiff_write_labels (path, mask, &error));
  g_assert_no_error (error);
  g_assert_true (sv_window_open_mask (f->window, file));
  wait_for_current_result (f->window);
}

static void
test_rule_restarts_job (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *mask_path = g_build_filename (dir, "mask.tif", NULL);
  g_autoptr (SvJobResult) before = NULL;
  SvJobResult *after;
  const SvLabels *a, *b;
  guint64 gen;

  open_blob_mask (f, mask_path);
  before = sv_job_result_ref (sv_window_get_result (f->window));
  g_assert_cmpint (before->params.connectivity_rule, ==, SV_CONNECTIVITY_RULE_CONNECTED);
  a = sv_job_result_get_labels (before, NULL);
  /* The default: every label is one piece. */
  g_assert_cmpuint (count_pieces (a, before->params.start_label), ==, before->stats.n_labels);

  gen = sv_window_get_generation (f->window);
  choose_rule (f, SV_CONNECTIVITY_RULE_LEGACY);
  g_assert_cmpuint (sv_window_get_generation (f->window), ==, gen + 1);
  wait_for_current_result (f->window);
  after = sv_window_get_result (f->window);
  g_assert_cmpint (after->params.connectivity_rule, ==, SV_CONNECTIVITY_RULE_LEGACY);
  b = sv_job_result_get_labels (after, NULL);
  g_test_message ("connected: %" G_GSIZE_FORMAT " labels; legacy: %" G_GSIZE_FORMAT
                  " labels in %" G_GSIZE_FORMAT " pieces",
                  before->stats.n_labels, after->stats.n_labels,
                  count_pieces (b, after->params.start_label));
  /* Legacy shares labels between pieces: fewer labels than pieces. */
  g_assert_cmpuint (after->stats.n_labels, <, before->stats.n_labels);
  g_assert_cmpuint (count_pieces (b, after->params.start_label), >, after->stats.n_labels);

  g_unlink (mask_path);
  g_rmdir (dir);
}

static void
test_rule_in_command_python_sidecar (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *tif = g_build_filename (dir, "labels.tif", NULL);
  g_autofree char *json = g_build_filename (dir, "labels.json", NULL);
  g_autofree char *cmd = NULL, *python = NULL, *sidecar = NULL;
  g_autoptr (GError) error = NULL;

  cmd = sv_window_build_command (f->window);
  g_assert_nonnull (strstr (cmd, " --connectivity-rule connected"));
  g_clear_pointer (&cmd, g_free);

  choose_rule (f, SV_CONNECTIVITY_RULE_LEGACY);
  wait_for_current_result (f->window);
  cmd = sv_window_build_command (f->window);
  g_test_message ("command: %s", cmd);
  g_assert_nonnull (strstr (cmd, " --connectivity-rule legacy"));
  g_assert_null (strstr (cmd, "--connectivity-rule connected"));
  python = sv_window_build_python (f->window);
  g_assert_nonnull (strstr (python, "connectivity_rule='legacy'"));

  g_assert_true (sv_window_export_labels (f->window, tif, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (json, &sidecar, NULL, NULL));
  g_assert_nonnull (strstr (sidecar, "\"connectivity_rule\": \"legacy\""));

  g_unlink (tif);
  g_unlink (json);
  g_rmdir (dir);
}

static void
test_rule_preset (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autofree char *preset = g_build_filename (dir, "legacy.svpreset", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  SvSlicParams p;

  choose_rule (f, SV_CONNECTIVITY_RULE_LEGACY);
  wait_for_current_result (f->window);
  g_assert_true (sv_window_save_preset (f->window, preset, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (preset, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "connectivity_rule=legacy"));

  choose_rule (f, SV_CONNECTIVITY_RULE_CONNECTED);
  wait_for_current_result (f->window);
  g_assert_cmpint (sv_window_get_result (f->window)->params.connectivity_rule, ==,
                   SV_CONNECTIVITY_RULE_CONNECTED);

  g_assert_true (sv_window_load_preset (f->window, preset, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (gtk_drop_down_get_selected (rule_dropdown (f)), ==, 1);
  sv_params_panel_get_params (panel, &p);
  g_assert_cmpint (p.connectivity_rule, ==, SV_CONNECTIVITY_RULE_LEGACY);
  wait_for_current_result (f->window);
  g_assert_cmpint (sv_window_get_result (f->window)->params.connectivity_rule, ==,
                   SV_CONNECTIVITY_RULE_LEGACY);

  g_unlink (preset);
  g_rmdir (dir);
}

static void
test_rule_follows_connectivity (Fixture *f, gconstpointer data)
{
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  GtkWidget *check
      = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_CHECK_BUTTON, "relabel connected components");
  GtkWidget *min_size
      = find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "min_size_factor");
  GtkWidget *dropdown = GTK_WIDGET (rule_dropdown (f));

  g_assert_nonnull (check);
  g_assert_nonnull (min_size);
  g_assert_true (gtk_widget_get_sensitive (dropdown));

  gtk_check_button_set_active (GTK_CHECK_BUTTON (check), FALSE);
  g_assert_false (gtk_widget_get_sensitive (min_size));
  g_assert_false (gtk_widget_get_sensitive (dropdown));
  gtk_check_button_set_active (GTK_CHECK_BUTTON (check), TRUE);
  g_assert_true (gtk_widget_get_sensitive (dropdown));

  /* A teaching step never enforces connectivity. */
  sv_params_panel_set_teaching (panel, TRUE);
  g_assert_false (gtk_widget_get_sensitive (dropdown));
  sv_params_panel_set_teaching (panel, FALSE);
  g_assert_true (gtk_widget_get_sensitive (dropdown));
  wait_for_current_result (f->window);
}

/* A TIFF of random values: nz × ny × nx, `nc` samples, spacing in µm. */
static GFile *
write_file (const char *dir, const char *name, guint nz, guint ny, guint nx, guint nc,
            double spacing_z, double spacing_xy)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (SvVolume) v = sv_volume_new (nz, ny, nx, nc, NULL);
  g_autoptr (GError) error = NULL;
  GRand *rand = g_rand_new_with_seed (7);

  for (gsize i = 0; i < sv_volume_n_voxels (v) * nc; i++)
    v->data[i] = (float)g_rand_double (rand);
  g_rand_free (rand);
  v->spacing[0] = spacing_z;
  v->spacing[1] = v->spacing[2] = spacing_xy;
  v->unit = g_strdup ("micron");
  g_assert_true (sv_tiff_write_volume_full (path, v, nc == 3 ? SV_SAMPLE_U8 : SV_SAMPLE_U16, NULL,
                                            &error));
  g_assert_no_error (error);
  return g_file_new_for_path (path);
}

/* A new file: what the window set for the last one (compactness 10 for a
 * photo, segments from its size) goes; what the user set stays, and the
 * panel says so, with Reset. The segments give a supervoxel size, shown. */
static void
test_new_file_resets_own_keeps_users (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-XXXXXX", NULL);
  g_autoptr (GFile) photo = write_file (dir, "photo.tif", 1, 120, 160, 3, 1.0, 1.0);
  g_autoptr (GFile) stack = write_file (dir, "stack.tif", 20, 60, 60, 1, 0.5, 0.1);
  g_autoptr (GFile) other = write_file (dir, "other.tif", 10, 80, 80, 1, 1.0, 1.0);
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  GtkSpinButton *segments
      = GTK_SPIN_BUTTON (find_by_tooltip (GTK_WIDGET (panel), GTK_TYPE_SPIN_BUTTON, "n_segments"));
  SvSlicParams p;

  /* The photo: compactness 10 (Lab) and 120·160 / 20² = 48 segments. */
  open_and_wait (f->window, photo);
  sv_params_panel_get_params (panel, &p);
  g_test_message ("photo: %" G_GINT64_FORMAT " segments, compactness %g, %s", p.n_segments,
                  p.compactness, sv_params_panel_get_segment_size_text (panel));
  g_assert_cmpfloat (p.compactness, ==, 10.0);
  g_assert_cmpint (p.n_segments, ==, 48);
  g_assert_null (sv_params_panel_get_kept_text (panel));
  g_assert_cmpstr (sv_params_panel_get_segment_size_text (panel), ==, "≈ 400 px each\n400 µm²");

  /* The stack: the window's compactness again, 20·60·60 / 10³ = 72
   * segments, and nothing said to be kept. */
  open_and_wait (f->window, stack);
  sv_params_panel_get_params (panel, &p);
  g_test_message ("stack: %" G_GINT64_FORMAT " segments, compactness %g, %s", p.n_segments,
                  p.compactness, sv_params_panel_get_segment_size_text (panel));
  g_assert_cmpfloat (p.compactness, ==, 0.1);
  g_assert_cmpint (p.n_segments, ==, 72);
  g_assert_null (sv_params_panel_get_kept_text (panel));
  g_assert_cmpfloat (sv_window_get_result (f->window)->params.compactness, ==, 0.1);
  /* 1000 voxels of 0.5 × 0.1 × 0.1 µm. */
  g_assert_cmpstr (sv_params_panel_get_segment_size_text (panel), ==,
                   "≈ 1\u202f000 voxels each\n5 µm³");
  /* The size follows the field. */
  gtk_spin_button_set_value (segments, 144);
  g_assert_cmpstr (sv_params_panel_get_segment_size_text (panel), ==, "≈ 500 voxels each\n2.5 µm³");
  sv_params_panel_set_compactness (panel, 3.0);
  wait_until (window_settled, f->window, "the user's values");

  /* Another stack: the user's values stay, and the panel says which. */
  open_and_wait (f->window, other);
  sv_params_panel_get_params (panel, &p);
  g_test_message ("kept: %s", sv_params_panel_get_kept_text (panel));
  g_assert_cmpint (p.n_segments, ==, 144);
  g_assert_cmpfloat (p.compactness, ==, 3.0);
  g_assert_cmpstr (sv_params_panel_get_kept_text (panel), ==,
                   "Kept 144 segments and compactness 3 from the last file.");
  g_assert_cmpfloat (sv_window_get_result (f->window)->params.compactness, ==, 3.0);

  /* Reset: this file's defaults (10·80·80 / 10³ = 64), and a run with them. */
  sv_params_panel_reset_to_defaults (panel);
  g_assert_null (sv_params_panel_get_kept_text (panel));
  wait_until (window_settled, f->window, "the run after Reset");
  sv_params_panel_get_params (panel, &p);
  g_assert_cmpint (p.n_segments, ==, 64);
  g_assert_cmpfloat (p.compactness, ==, 0.1);
  g_assert_cmpint (sv_window_get_result (f->window)->params.n_segments, ==, 64);
  sv_test_remove_tree (dir);
}

/* Segments for about 10³ voxels (20² pixels in 2D), two digits, in range. */
static void
test_default_segments (void)
{
  g_assert_cmpint (sv_params_default_n_segments (48, 160, 160, 1e6), ==, 1200);
  g_assert_cmpint (sv_params_default_n_segments (512, 512, 512, 1e6), ==, 130000);
  g_assert_cmpint (sv_params_default_n_segments (1, 480, 640, 1e6), ==, 770);
  g_assert_cmpint (sv_params_default_n_segments (1, 1, 1, 1e6), ==, 1);
  g_assert_cmpint (sv_params_default_n_segments (2048, 2048, 2048, 1e6), ==, 1000000);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gui/params/default-segments-from-size", test_default_segments);
  g_test_add ("/gui/params/new-file-resets-own-keeps-users", Fixture, NULL, fixture_setup,
              test_new_file_resets_own_keeps_users, fixture_teardown);
  g_test_add ("/gui/params/connectivity-rule-restarts-job", Fixture, NULL, fixture_setup,
              test_rule_restarts_job, fixture_teardown);
  g_test_add ("/gui/params/connectivity-rule-in-command-python-sidecar", Fixture, NULL,
              fixture_setup, test_rule_in_command_python_sidecar, fixture_teardown);
  g_test_add ("/gui/params/connectivity-rule-preset", Fixture, NULL, fixture_setup,
              test_rule_preset, fixture_teardown);
  g_test_add ("/gui/params/connectivity-rule-insensitive-without-connectivity", Fixture, NULL,
              fixture_setup, test_rule_follows_connectivity, fixture_teardown);
  return g_test_run ();
}

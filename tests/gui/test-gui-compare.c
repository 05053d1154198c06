/* Tests of comparing labels in the window under Xvfb: a label file that
 * supervox-cli wrote, opened with Open Labels…, against the live labels
 * (the adjusted Rand index and the differing voxels against numbers this
 * file computes from the two arrays itself, the file read with libtiff,
 * and the highlight drawn where they differ); a file of another shape or
 * none at all refused in one line; and the pin history: three pins, their
 * rows, Restore clicked on one of them, Show and remove. Real clicks come
 * from xdotool (the tests that need them skip without it). */
#define G_LOG_DOMAIN "test-gui"

#include <gtk/gtk.h>
#include <math.h>
#include <string.h>
#include <tiffio.h>

#include "gui-test-pointer.h"
#include "gui-test-util.h"
#include "supervox/sv-backend.h"
#include "supervox/sv-io.h"
#include "sv-test-files.h"
#include "sv-test-run.h"

/* ---- an oracle of their own ---- */

/* A label file as libtiff reads it, page by page and row by row: 8, 16 or
 * 32 bits, signed or not. */
static gint32 *
read_labels_with_libtiff (const char *path, gsize *n)
{
  TIFF *tif = TIFFOpen (path, "r");
  GArray *values = g_array_new (FALSE, FALSE, sizeof (gint32));

  g_assert_nonnull (tif);
  do
    {
      guint32 width = 0, height = 0;
      guint16 bits = 0, format = SAMPLEFORMAT_UINT, spp = 1;
      g_autofree guint8 *row = NULL;

      TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &width);
      TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &height);
      TIFFGetField (tif, TIFFTAG_BITSPERSAMPLE, &bits);
      TIFFGetField (tif, TIFFTAG_SAMPLEFORMAT, &format);
      TIFFGetField (tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
      g_assert_cmpuint (spp, ==, 1);
      row = g_malloc (TIFFScanlineSize (tif));
      for (guint32 y = 0; y < height; y++)
        {
          g_assert_cmpint (TIFFReadScanline (tif, row, y, 0), ==, 1);
          for (guint32 x = 0; x < width; x++)
            {
              gint32 v;
              if (bits == 8)
                v = format == SAMPLEFORMAT_INT ? ((gint8 *)row)[x] : row[x];
              else if (bits == 16)
                v = format == SAMPLEFORMAT_INT ? ((gint16 *)row)[x] : ((guint16 *)row)[x];
              else
                v = ((gint32 *)row)[x];
              g_array_append_val (values, v);
            }
        }
    }
  while (TIFFReadDirectory (tif));
  TIFFClose (tif);
  *n = values->len;
  return (gint32 *)g_array_free (values, FALSE);
}

static guint64
pair_key (gint32 a, gint32 b)
{
  return (guint64)(guint32)a << 32 | (guint32)b;
}

static double
choose2 (double k)
{
  return k * (k - 1) / 2;
}

/* For each label of one map, the label of the other it overlaps most,
 * the lowest on a tie. */
static GHashTable *
best_matches (GHashTable *pairs, gboolean by_first)
{
  GHashTable *best = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_iter_init (&it, pairs);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      guint64 k = *(guint64 *)key, count = *(guint64 *)value;
      gint32 a = (gint32)(guint32)(k >> 32), b = (gint32)(guint32)k;
      gint32 from = by_first ? a : b, to = by_first ? b : a;
      gint64 *entry = g_hash_table_lookup (best, GINT_TO_POINTER (from));
      /* entry: [count, label] */
      if (!entry)
        {
          entry = g_new (gint64, 2);
          entry[0] = -1;
          g_hash_table_insert (best, GINT_TO_POINTER (from), entry);
        }
      if ((gint64)count > entry[0] || ((gint64)count == entry[0] && to < entry[1]))
        {
          entry[0] = (gint64)count;
          entry[1] = to;
        }
    }
  return best;
}

/* The adjusted Rand index (Hubert & Arabie) from a contingency table in a
 * hash table, and the voxels whose two labels are not each other's best
 * match, into `differs` (n bytes). */
static double
oracle_compare (const gint32 *a, const gint32 *b, gsize n, guint64 *n_differing, guint8 *differs)
{
  g_autoptr (GHashTable) pairs
      = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr (GHashTable) rows = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_autoptr (GHashTable) cols = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_autoptr (GHashTable) best_b = NULL, best_a = NULL;
  GHashTable *margins[2] = { rows, cols };
  double sum_ij = 0, sum_a = 0, sum_b = 0, expected, max_index;
  GHashTableIter it;
  gpointer key, value;

  for (gsize i = 0; i < n; i++)
    {
      guint64 k = pair_key (a[i], b[i]);
      guint64 *count = g_hash_table_lookup (pairs, &k);
      gint32 labels[2] = { a[i], b[i] };
      if (!count)
        {
          count = g_new0 (guint64, 1);
          g_hash_table_insert (pairs, g_memdup2 (&k, sizeof k), count);
        }
      (*count)++;
      for (guint m = 0; m < 2; m++)
        {
          guint64 *c = g_hash_table_lookup (margins[m], GINT_TO_POINTER (labels[m]));
          if (!c)
            {
              c = g_new0 (guint64, 1);
              g_hash_table_insert (margins[m], GINT_TO_POINTER (labels[m]), c);
            }
          (*c)++;
        }
    }
  g_hash_table_iter_init (&it, pairs);
  while (g_hash_table_iter_next (&it, &key, &value))
    sum_ij += choose2 ((double)*(guint64 *)value);
  g_hash_table_iter_init (&it, rows);
  while (g_hash_table_iter_next (&it, &key, &value))
    sum_a += choose2 ((double)*(guint64 *)value);
  g_hash_table_iter_init (&it, cols);
  while (g_hash_table_iter_next (&it, &key, &value))
    sum_b += choose2 ((double)*(guint64 *)value);

  best_b = best_matches (pairs, TRUE);
  best_a = best_matches (pairs, FALSE);
  *n_differing = 0;
  for (gsize i = 0; i < n; i++)
    {
      gint64 *ab = g_hash_table_lookup (best_b, GINT_TO_POINTER (a[i]));
      gint64 *ba = g_hash_table_lookup (best_a, GINT_TO_POINTER (b[i]));
      differs[i] = ab[1] != b[i] || ba[1] != a[i];
      *n_differing += differs[i];
    }
  expected = sum_a * sum_b / choose2 ((double)n);
  max_index = 0.5 * (sum_a + sum_b);
  return (sum_ij - expected) / (max_index - expected);
}

/* ---- the window ---- */

/* The live labels of the newest request, compared with the pinned ones. */
static gboolean
comparison_ready (gpointer data)
{
  SvWindow *w = data;
  return sv_window_is_settled (w) && sv_window_get_comparison (w, NULL, NULL);
}

static gboolean
notice_shown (gpointer data)
{
  const char *t = sv_window_get_warning_text (data);
  return t && strstr (t, " as labels: ");
}

static gboolean
has_one_pin (gpointer data)
{
  return sv_window_get_n_pins (data) == 1;
}

static gboolean
has_two_pins (gpointer data)
{
  return sv_window_get_n_pins (data) == 2;
}

static gboolean
showing_pinned (gpointer data)
{
  return sv_window_get_showing_pinned (data);
}

static gboolean
highlight_on (gpointer data)
{
  return sv_pin_list_get_highlight_differences (data);
}

/* The Pins tab shown, with room for its rows under the parameters. */
static void
show_pins_tab (SvWindow *w)
{
  GtkWidget *list = GTK_WIDGET (sv_window_get_pin_list (w));
  GtkWidget *notebook = gtk_widget_get_ancestor (list, GTK_TYPE_NOTEBOOK);
  GtkWidget *page = list;

  while (gtk_widget_get_parent (page) != notebook)
    page = gtk_widget_get_parent (page);
  gtk_notebook_set_current_page (GTK_NOTEBOOK (notebook),
                                 gtk_notebook_page_num (GTK_NOTEBOOK (notebook), page));
  gtk_paned_set_position (GTK_PANED (gtk_widget_get_ancestor (notebook, GTK_TYPE_PANED)), 60);
  wait_for_layout (w);
}

/* A real click in the middle of `widget`, which must be on screen. */
static void
click (SvWindow *w, GtkWidget *widget)
{
  GtkWidget *scroller = gtk_widget_get_ancestor (widget, GTK_TYPE_SCROLLED_WINDOW);
  graphene_rect_t bounds, room;
  int x, y;

  wait_for_layout (w);
  g_assert_true (gtk_widget_compute_bounds (widget, scroller, &bounds));
  g_assert_true (gtk_widget_compute_bounds (scroller, scroller, &room));
  /* Not scrolled out of sight: the click would land elsewhere. */
  g_assert_true (graphene_rect_contains_rect (&room, &bounds));
  surface_point (w, widget, gtk_widget_get_width (widget) / 2.0,
                 gtk_widget_get_height (widget) / 2.0, &x, &y);
  /* As a hand does: onto it first, then the click. */
  xdotool (w, "mousemove --window WINDOW %d %d", x, y);
  wait_for_layout (w);
  xdotool (w, "click 1");
}

/* The sample as a float TIFF in `dir`, opened in the window and segmented;
 * then supervox-cli run with the window's "Copy as command" line: the
 * label file's path. */
static char *
open_sample_and_run_cli (SvWindow *w, const char *dir)
{
  const char *build = g_getenv ("SV_BUILD_DIR");
  g_autofree char *input = g_build_filename (dir, "cells.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (input);
  g_autoptr (SvVolume) copy = NULL;
  g_autoptr (GError) error = NULL;
  const SvVolume *v = sv_window_get_volume (w);
  g_autofree char *line = NULL, *cli_dir = NULL, *path_env = NULL, *name = NULL;
  g_auto (GStrv) envp = g_get_environ ();
  SvTestRun run;

  copy = sv_volume_new (v->nz, v->ny, v->nx, v->nc, &error);
  g_assert_no_error (error);
  memcpy (copy->data, v->data, sv_volume_n_voxels (v) * v->nc * sizeof (float));
  g_assert_true (sv_tiff_write_volume (input, copy, SV_SAMPLE_F32, &error));
  g_assert_no_error (error);
  open_and_wait (w, file);
  wait_for_current_result (w);

  g_assert_nonnull (build);
  line = sv_window_build_command (w);
  name = sv_window_default_export_name (w);
  cli_dir = g_build_filename (build, "app", "cli", NULL);
  path_env = g_strconcat (cli_dir, ":", g_environ_getenv (envp, "PATH"), NULL);
  envp = g_environ_setenv (envp, "PATH", path_env, TRUE);
  g_test_message ("command: %s", line);
  {
    const char *argv[] = { "/bin/sh", "-c", line, NULL };
    run = sv_test_run_argv (dir, envp, argv);
  }
  if (run.status != 0)
    g_error ("supervox-cli failed (%d):\n%s%s", run.status, run.out, run.err);
  sv_test_run_clear (&run);
  return g_build_filename (dir, name, NULL);
}

/* How many pixels of two captures of one size differ. */
static gsize
n_differing_pixels (GdkTexture *a, GdkTexture *b, guint8 **changed, int *width, int *height)
{
  gsize sa, sb, n = 0;
  g_autofree guint8 *pa = texture_bytes (a, &sa);
  g_autofree guint8 *pb = texture_bytes (b, &sb);

  *width = gdk_texture_get_width (a);
  *height = gdk_texture_get_height (a);
  g_assert_cmpint (*width, ==, gdk_texture_get_width (b));
  g_assert_cmpint (*height, ==, gdk_texture_get_height (b));
  *changed = g_new0 (guint8, (gsize)*width * *height);
  for (int y = 0; y < *height; y++)
    for (int x = 0; x < *width; x++)
      {
        gboolean c
            = memcmp (pa + (gsize)y * sa + (gsize)x * 4, pb + (gsize)y * sb + (gsize)x * 4, 3) != 0;
        (*changed)[(gsize)y * *width + x] = c;
        n += c;
      }
  return n;
}

static void
test_open_labels_from_cli (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-compare-XXXXXX", NULL);
  g_autofree char *labels_path = open_sample_and_run_cli (w, dir);
  g_autoptr (GFile) labels_file = g_file_new_for_path (labels_path);
  SvPinList *list = sv_window_get_pin_list (w);
  SvSliceView *xy = sv_window_get_slice_view (w, SV_AXIS_XY);
  g_autofree gint32 *file_labels = NULL;
  g_autofree guint8 *differs = NULL, *changed = NULL;
  g_autoptr (GdkTexture) plain = NULL, highlighted = NULL;
  g_autofree char *name = g_path_get_basename (labels_path);
  g_autofree char *status = NULL;
  const SvLabels *live;
  double ari = 0, expected_ari;
  guint64 n_differing = 1, expected_differing;
  gsize n = 0, mismatched = 0, differing_pixels = 0, on_slice = 0;
  int width, height;

  if (!have_xdotool ())
    return;
  /* The same parameters: the same partition. */
  g_assert_true (sv_window_open_labels (w, labels_file));
  wait_until (has_one_pin, w, "the label file to be read");
  wait_until (comparison_ready, w, "the comparison with the label file");
  g_assert_true (sv_window_get_comparison (w, &ari, &n_differing));
  g_test_message ("same parameters: %s", sv_pin_list_get_comparison (list));
  g_assert_cmpfloat (ari, ==, 1.0);
  g_assert_cmpuint (n_differing, ==, 0);
  g_assert_cmpstr (sv_pin_list_get_text (list, 0, "title"), ==, name);
  g_assert_nonnull (strstr (sv_pin_list_get_comparison (list), "ARI 1.0000 · 0 voxels differ"));
  /* A file has no parameters to restore. */
  g_assert_false (gtk_widget_get_visible (sv_pin_list_get_button (list, 0, "restore")));

  /* Other parameters live: the numbers against this file's own. */
  sv_params_panel_set_compactness (sv_window_get_params_panel (w), 0.5);
  wait_until (comparison_ready, w, "the comparison with other parameters");
  g_assert_true (sv_window_get_comparison (w, &ari, &n_differing));
  g_test_message ("compactness 0.5: %s", sv_pin_list_get_comparison (list));
  file_labels = read_labels_with_libtiff (labels_path, &n);
  live = sv_job_result_get_labels (sv_window_get_result (w), NULL);
  g_assert_cmpuint (n, ==, sv_labels_n_voxels (live));
  differs = g_new (guint8, n);
  expected_ari = oracle_compare (file_labels, live->data, n, &expected_differing, differs);
  g_test_message ("window: ARI %.12f, %" G_GUINT64_FORMAT
                  " differ; here: ARI %.12f, %" G_GUINT64_FORMAT " differ",
                  ari, n_differing, expected_ari, expected_differing);
  g_assert_cmpfloat (ari, <, 1.0);
  g_assert_cmpfloat_with_epsilon (ari, expected_ari, 1e-9);
  g_assert_cmpuint (n_differing, ==, expected_differing);
  g_assert_cmpuint (n_differing, >, 0);

  /* The toggle, clicked: the differing voxels of the slice turn red, and
   * only they. */
  show_pins_tab (w);
  plain = capture_xy (w);
  click (w, sv_pin_list_get_highlight_check (list));
  wait_until (highlight_on, list, "the highlight to be on");
  g_assert_true (sv_slice_view_get_difference_shown (xy));
  highlighted = capture_xy (w);
  n_differing_pixels (plain, highlighted, &changed, &width, &height);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        guint zyx[3];
        gboolean red;
        if (!sv_slice_view_pixel_to_voxel (xy, x + 0.5, y + 0.5, zyx))
          continue;
        red = differs[((gsize)zyx[0] * NY + zyx[1]) * NX + zyx[2]];
        on_slice++;
        differing_pixels += red;
        mismatched += changed[(gsize)y * width + x] != red;
      }
  g_test_message ("%" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
                  " pixels over differing voxels, %" G_GSIZE_FORMAT " not as expected",
                  differing_pixels, on_slice, mismatched);
  g_assert_cmpuint (differing_pixels, >, 100);
  /* Pixel centres on a voxel edge may fall either side of it. */
  g_assert_cmpuint (mismatched, <, on_slice / 100);
  save_window_png (w, "gui-compare-highlight.png");

  /* Show, clicked: the file's labels in the views, named in the status. */
  click (w, sv_pin_list_get_button (list, 0, "show"));
  wait_until (showing_pinned, w, "the file's labels");
  status = g_strdup_printf ("%s · ", name);
  g_test_message ("status: %s", sv_window_get_result_text (w));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), status));
  {
    const SvLabels *shown = sv_job_result_get_labels (sv_slice_view_get_result (xy), NULL);
    g_assert_cmpmem (shown->data, n * sizeof (gint32), file_labels, n * sizeof (gint32));
  }
  /* The highlight stays: the differences are the same either way round. */
  g_assert_true (sv_slice_view_get_difference_shown (xy));
  sv_test_remove_tree (dir);
}

/* A file of another shape, or no TIFF at all: one line, nothing else. */
static void
test_open_labels_refused (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  g_autofree char *dir = g_dir_make_tmp ("sv-gui-compare-XXXXXX", NULL);
  g_autofree char *wrong_path = g_build_filename (dir, "wrong.tif", NULL);
  g_autofree char *bad_path = g_build_filename (dir, "notes.tif", NULL);
  g_autoptr (GFile) wrong_file = g_file_new_for_path (wrong_path);
  g_autoptr (GFile) bad_file = g_file_new_for_path (bad_path);
  g_autoptr (SvLabels) wrong = sv_labels_new (NZ, NY, NX + 1, NULL);
  g_autoptr (GError) error = NULL;
  SvSliceView *xy = sv_window_get_slice_view (w, SV_AXIS_XY);
  SvJobResult *live = sv_window_get_result (w);
  g_autofree char *expected
      = g_strdup_printf ("%u×%u×%u (z×y×x) but the image is %u×%u×%u", NZ, NY, NX + 1, NZ, NY, NX);

  for (gsize i = 0; i < sv_labels_n_voxels (wrong); i++)
    wrong->data[i] = 1 + (gint32)(i % 7);
  g_assert_true (sv_tiff_write_labels (wrong_path, wrong, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (bad_path, "not an image\n", -1, NULL));
  sv_window_pin (w);
  g_assert_cmpuint (sv_window_get_n_pins (w), ==, 1);

  g_assert_true (sv_window_open_labels (w, wrong_file));
  wait_until (notice_shown, w, "the refusal");
  g_test_message ("%s", sv_window_get_warning_text (w));
  g_assert_nonnull (strstr (sv_window_get_warning_text (w), expected));
  g_assert_true (g_str_has_prefix (sv_window_get_warning_text (w), "Cannot open wrong.tif"));
  g_assert_null (strchr (sv_window_get_warning_text (w), '\n'));
  g_assert_cmpuint (sv_window_get_n_pins (w), ==, 1);
  g_assert_cmpuint (sv_pin_list_get_n_rows (sv_window_get_pin_list (w)), ==, 1);
  g_assert_true (sv_window_get_result (w) == live);
  g_assert_true (sv_slice_view_get_result (xy) == live);
  g_assert_false (sv_window_get_showing_pinned (w));

  gtk_revealer_set_reveal_child (
      GTK_REVEALER (gtk_widget_get_ancestor (
          GTK_WIDGET (find_by_tooltip (GTK_WIDGET (w), GTK_TYPE_BUTTON, "Hide this warning")),
          GTK_TYPE_REVEALER)),
      FALSE);
  g_assert_true (sv_window_open_labels (w, bad_file));
  wait_until (notice_shown, w, "the refusal of a file that is no TIFF");
  g_test_message ("%s", sv_window_get_warning_text (w));
  g_assert_true (g_str_has_prefix (sv_window_get_warning_text (w), "Cannot open notes.tif"));
  g_assert_null (strchr (sv_window_get_warning_text (w), '\n'));
  g_assert_cmpuint (sv_window_get_n_pins (w), ==, 1);
  g_assert_true (sv_slice_view_get_result (xy) == live);
  sv_test_remove_tree (dir);
}

/* ---- the pin history ---- */

static void
set_compactness_and_pin (SvWindow *w, double compactness, SvJobResult **result)
{
  sv_params_panel_set_compactness (sv_window_get_params_panel (w), compactness);
  wait_for_current_result (w);
  *result = sv_job_result_ref (sv_window_get_result (w));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.pin", NULL));
}

static char *
expected_summary (SvJobResult *r, double compactness)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup_printf ("%" G_GINT64_FORMAT " → %" G_GSIZE_FORMAT " supervoxels · compactness %s",
                          r->params.n_segments, r->stats.n_labels,
                          sv_format_double (buf, compactness));
}

static gboolean
restored (gpointer data)
{
  SvWindow *w = data;
  SvSlicParams p;

  sv_params_panel_get_params (sv_window_get_params_panel (w), &p);
  return p.compactness == 0.5 && sv_window_is_settled (w);
}

static gboolean
compared_with_pin_1 (gpointer data)
{
  SvWindow *w = data;
  return comparison_ready (w)
         && g_str_has_prefix (sv_pin_list_get_comparison (sv_window_get_pin_list (w)),
                              "Live labels against pin 1:");
}

static void
test_pin_history_restore (Fixture *f, gconstpointer data)
{
  SvWindow *w = f->window;
  SvPinList *list = sv_window_get_pin_list (w);
  const double compactness[3] = { 0.05, 0.5, 5.0 };
  SvJobResult *pinned[3] = { NULL };
  g_autoptr (SvBackend) backend = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree gint32 *fresh = NULL;
  g_autofree char *pin_json = NULL, *panel_json = NULL;
  SvRunControl control = { 0 };
  SvRunStats stats;
  SvSlicParams p;
  const SvLabels *live;
  gsize n;

  if (!have_xdotool ())
    return;
  for (guint i = 0; i < 3; i++)
    set_compactness_and_pin (w, compactness[i], &pinned[i]);
  /* Three rows, newest first, each with its own compactness and count. */
  g_assert_cmpuint (sv_pin_list_get_n_rows (list), ==, 3);
  for (guint row = 0; row < 3; row++)
    {
      guint i = 2 - row;
      g_autofree char *summary = expected_summary (pinned[i], compactness[i]);
      g_autofree char *title = g_strdup_printf ("Pin %u", i + 1);
      g_test_message ("row %u: %s · %s · %s", row, sv_pin_list_get_text (list, row, "title"),
                      sv_pin_list_get_text (list, row, "summary"),
                      sv_pin_list_get_text (list, row, "measures"));
      g_assert_cmpstr (sv_pin_list_get_text (list, row, "title"), ==, title);
      g_assert_cmpstr (sv_pin_list_get_text (list, row, "summary"), ==, summary);
    }
  /* Three different partitions. */
  for (guint i = 0; i < 3; i++)
    {
      const SvLabels *a = sv_job_result_get_labels (pinned[i], NULL);
      const SvLabels *b = sv_job_result_get_labels (pinned[(i + 1) % 3], NULL);
      g_assert_true (memcmp (a->data, b->data, sv_labels_n_voxels (a) * sizeof (gint32)) != 0);
    }

  /* Another value live, then Restore clicked on the second row (pin 2). */
  sv_params_panel_set_compactness (sv_window_get_params_panel (w), 7.0);
  wait_for_current_result (w);
  show_pins_tab (w);
  click (w, sv_pin_list_get_button (list, 1, "restore"));
  wait_until (restored, w, "pin 2's parameters back in the panel");
  sv_params_panel_get_params (sv_window_get_params_panel (w), &p);
  panel_json = sv_slic_params_to_json (&p);
  pin_json = sv_slic_params_to_json (&pinned[1]->params);
  g_assert_cmpstr (panel_json, ==, pin_json);

  /* The labels are a fresh run's with those values, and pin 2's. */
  live = sv_job_result_get_labels (sv_window_get_result (w), NULL);
  n = sv_labels_n_voxels (live);
  backend = sv_backend_new ("cpu", &error);
  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, sv_window_get_volume (w), NULL, &error));
  control.stop_after_iteration = -1;
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_no_error (error);
  fresh = g_new (gint32, n);
  g_assert_true (sv_backend_get_labels (backend, fresh, &error));
  g_assert_cmpmem (live->data, n * sizeof (gint32), fresh, n * sizeof (gint32));
  g_assert_cmpmem (sv_job_result_get_labels (pinned[1], NULL)->data, n * sizeof (gint32), fresh,
                   n * sizeof (gint32));
  save_window_png (w, "gui-compare-pins.png");

  /* A click on the last row compares with pin 1; its Show flips to it. */
  click (w, sv_pin_list_get_row (list, 2));
  wait_until (compared_with_pin_1, w, "the comparison with pin 1");
  g_test_message ("%s", sv_pin_list_get_comparison (list));
  g_assert_true (
      g_str_has_prefix (sv_pin_list_get_comparison (list), "Live labels against pin 1:"));
  {
    double ari;
    guint64 n_differing;
    g_autofree guint8 *differs = g_new (guint8, n);
    guint64 expected_differing;
    double expected_ari
        = oracle_compare (sv_job_result_get_labels (pinned[0], NULL)->data,
                          sv_job_result_get_labels (sv_window_get_result (w), NULL)->data, n,
                          &expected_differing, differs);
    g_assert_true (sv_window_get_comparison (w, &ari, &n_differing));
    g_assert_cmpfloat_with_epsilon (ari, expected_ari, 1e-9);
    g_assert_cmpuint (n_differing, ==, expected_differing);
  }
  click (w, sv_pin_list_get_button (list, 2, "show"));
  wait_until (showing_pinned, w, "pin 1 on screen");
  g_test_message ("status: %s", sv_window_get_result_text (w));
  g_assert_true (g_str_has_prefix (sv_window_get_result_text (w), "pin 1 · "));
  g_assert_true (sv_slice_view_get_result (sv_window_get_slice_view (w, SV_AXIS_XY)) == pinned[0]);

  /* The cross on pin 1: two rows left, the live labels on screen, and
   * the newest pin compared with. */
  click (w, sv_pin_list_get_button (list, 2, "remove"));
  wait_until (has_two_pins, w, "pin 1 removed");
  g_assert_cmpuint (sv_pin_list_get_n_rows (list), ==, 2);
  g_assert_cmpstr (sv_pin_list_get_text (list, 1, "title"), ==, "Pin 2");
  g_assert_false (sv_window_get_showing_pinned (w));
  g_assert_true (sv_slice_view_get_result (sv_window_get_slice_view (w, SV_AXIS_XY))
                 == sv_window_get_result (w));
  g_assert_true (g_str_has_prefix (sv_pin_list_get_comparison (list), "Live labels against pin 3"));
  for (guint i = 0; i < 3; i++)
    sv_job_result_unref (pinned[i]);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/compare/open-labels-from-supervox-cli", Fixture, NULL, fixture_setup,
              test_open_labels_from_cli, fixture_teardown);
  g_test_add ("/gui/compare/open-labels-refused-changes-nothing", Fixture, NULL, fixture_setup,
              test_open_labels_refused, fixture_teardown);
  g_test_add ("/gui/compare/pin-history-restore", Fixture, NULL, fixture_setup,
              test_pin_history_restore, fixture_teardown);
  return g_test_run ();
}

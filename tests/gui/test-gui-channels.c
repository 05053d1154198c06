/* GUI tests of multichannel volumes under Xvfb: a 3-channel 16-bit TIFF
 * drawn as a composite (each channel windowed on its own and added in its
 * colour) on the GL path and, run again with GDK_DEBUG=gl-disable, on the
 * software path; an 8-bit RGB photo still drawn as the photo; "Segment on"
 * channel 2 gives the labels of supervox-cli slic --channel 1 and reaches
 * "Copy as command" and "Copy as Python". */
#define G_LOG_DOMAIN "test-gui"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>
#include <tiffio.h>

#include "gui-test-util.h"
#include "supervox/sv-io.h"
#include "supervox/sv-synth.h"
#include "sv-test-files.h"
#include "sv-test-run.h"

/* The colour test's volume: two blocks side by side along x, each of
 * three 16-bit values. */
#define BLOCK_NZ 3
#define BLOCK_NY 40
#define BLOCK_NX 60
static const guint16 block_a[3] = { 20000, 40000, 10000 }; /* x < 30 */
static const guint16 block_b[3] = { 60000, 5000, 30000 };  /* x ≥ 30 */

static GtkWidget *
contrast_widget (Fixture *f, GType type, const char *tooltip)
{
  GtkWidget *w
      = find_by_tooltip (GTK_WIDGET (sv_window_get_contrast_panel (f->window)), type, tooltip);

  if (w == NULL)
    g_error ("the contrast panel has no %s whose tooltip starts “%s”", g_type_name (type), tooltip);
  return w;
}

static GtkDropDown *
segment_on_dropdown (Fixture *f)
{
  GtkWidget *w = find_by_tooltip (GTK_WIDGET (sv_window_get_params_panel (f->window)),
                                  GTK_TYPE_DROP_DOWN, "Segment on");

  if (w == NULL)
    g_error ("the parameter panel has no “Segment on” dropdown");
  return GTK_DROP_DOWN (w);
}

static void
open_volume (Fixture *f, const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);

  open_and_wait (f->window, file);
  g_assert_null (sv_window_get_error_dialog (f->window));
  wait_for_current_result (f->window);
}

static void
write_blocks (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (BLOCK_NZ, BLOCK_NY, BLOCK_NX, 3, &error);

  g_assert_no_error (error);
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    for (guint c = 0; c < 3; c++)
      v->data[i * 3 + c] = (float)((i % BLOCK_NX < BLOCK_NX / 2 ? block_a : block_b)[c] / 65535.0);
  /* Two corner voxels at 0 and 65535: the black and white sliders span
   * every 16-bit value. */
  for (guint c = 0; c < 3; c++)
    {
      v->data[c] = 0.0f;
      v->data[3 + c] = 1.0f;
    }
  /* Three samples per pixel, 16 bits each. */
  g_assert_true (sv_tiff_write_volume_full (path, v, SV_SAMPLE_U16, NULL, &error));
  g_assert_no_error (error);
}

/* The capture's pixels as red, green, blue, alpha bytes
 * (gdk_texture_download gives cairo's native-endian ARGB32). */
static guint8 *
rgba_bytes (GdkTexture *t, gsize *stride)
{
  guint8 *data = texture_bytes (t, stride);
  gsize n = *stride / 4 * (gsize)gdk_texture_get_height (t);

  for (gsize i = 0; i < n; i++)
    {
      guint32 argb;
      memcpy (&argb, data + i * 4, 4);
      data[i * 4] = (guint8)(argb >> 16);
      data[i * 4 + 1] = (guint8)(argb >> 8);
      data[i * 4 + 2] = (guint8)argb;
      data[i * 4 + 3] = (guint8)(argb >> 24);
    }
  return data;
}

/* The XY capture's pixel over voxel (y, x) of the slice shown. */
static const guint8 *
pixel_at_voxel (SvWindow *w, const guint8 *px, gsize stride, guint y, guint x)
{
  SvSliceView *xy = sv_window_get_slice_view (w, SV_AXIS_XY);
  GtkWidget *area = GTK_WIDGET (sv_slice_view_get_gl_area (xy));
  int scale = gtk_widget_get_scale_factor (area);

  for (int py = 0; py < gtk_widget_get_height (area); py++)
    for (int pxl = 0; pxl < gtk_widget_get_width (area); pxl++)
      {
        guint zyx[3];
        if (sv_slice_view_pixel_to_voxel (xy, pxl + 0.5, py + 0.5, zyx) && zyx[1] == y
            && zyx[2] == x)
          return px + (gsize)(py * scale) * stride + (gsize)(pxl * scale) * 4;
      }
  g_error ("voxel y %u, x %u is not on screen", y, x);
  return NULL;
}

/* A channel's value through a window [low, high] of 16-bit values. */
static double
windowed (guint16 value, double low, double high)
{
  return CLAMP ((value - low) / (high - low), 0.0, 1.0);
}

static void
assert_colour (const guint8 *p, double r, double g, double b, const char *what)
{
  g_test_message ("%s: %u %u %u, expected %.1f %.1f %.1f", what, p[0], p[1], p[2], r * 255, g * 255,
                  b * 255);
  g_assert_cmpfloat (fabs (p[0] - r * 255), <=, 2.0);
  g_assert_cmpfloat (fabs (p[1] - g * 255), <=, 2.0);
  g_assert_cmpfloat (fabs (p[2] - b * 255), <=, 2.0);
}

/* Each block's pixel against its expected mix: colour[c] (red, green,
 * blue) × channel c through window[c], added and clipped. */
static void
assert_composite (Fixture *f, const double window[3][2], const double colour[3][3],
                  const char *what)
{
  g_autoptr (GdkTexture) t = capture_xy (f->window);
  gsize stride;
  g_autofree guint8 *px = rgba_bytes (t, &stride);
  const guint16 *blocks[2] = { block_a, block_b };
  const guint xs[2] = { BLOCK_NX / 4, BLOCK_NX * 3 / 4 };

  for (guint k = 0; k < 2; k++)
    {
      double rgb[3] = { 0, 0, 0 };
      g_autofree char *name = g_strdup_printf ("%s, block %c", what, 'a' + k);

      for (guint c = 0; c < 3; c++)
        for (guint i = 0; i < 3; i++)
          rgb[i] += colour[c][i] * windowed (blocks[k][c], window[c][0], window[c][1]);
      assert_colour (pixel_at_voxel (f->window, px, stride, BLOCK_NY / 2, xs[k]), MIN (rgb[0], 1.0),
                     MIN (rgb[1], 1.0), MIN (rgb[2], 1.0), name);
    }
}

/* Each channel's own window, set as a user does: the channel chosen in the
 * contrast panel, then its black and white points. */
static void
set_channel_windows (Fixture *f, const double window[3][2])
{
  GtkDropDown *channel
      = GTK_DROP_DOWN (contrast_widget (f, GTK_TYPE_DROP_DOWN, "Channel of the composite"));
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);

  g_assert_cmpuint (g_list_model_get_n_items (gtk_drop_down_get_model (channel)), ==, 3);
  for (guint c = 0; c < 3; c++)
    {
      gtk_drop_down_set_selected (channel, c);
      sv_params_panel_set_window (panel, window[c][0] / 65535.0, window[c][1] / 65535.0);
    }
  /* Back on channel 1: the sliders show its window, not the last one set. */
  gtk_drop_down_set_selected (channel, 0);
}

static void
test_composite_colours (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-channels");
  g_autofree char *path = g_build_filename (dir, "blocks.tif", NULL);
  const double window[3][2] = { { 0, 40000 }, { 20000, 60000 }, { 0, 40000 } };
  double colour[3][3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  GtkDropDown *channel, *colour_dropdown;
  GtkCheckButton *shown;
  SvDisplay d;

  write_blocks (path);
  open_volume (f, path);
  g_assert_cmpuint (sv_window_get_volume (f->window)->nc, ==, 3);
  sv_params_panel_set_overlay (sv_window_get_params_panel (f->window), SV_OVERLAY_OFF);
  channel = GTK_DROP_DOWN (contrast_widget (f, GTK_TYPE_DROP_DOWN, "Channel of the composite"));
  colour_dropdown = GTK_DROP_DOWN (contrast_widget (f, GTK_TYPE_DROP_DOWN, "Colour of this"));
  shown = GTK_CHECK_BUTTON (contrast_widget (f, GTK_TYPE_CHECK_BUTTON, "Show this channel"));
  g_assert_true (gtk_widget_is_visible (GTK_WIDGET (channel)));

  /* Three channels: red, green and blue, as Fiji's composite. */
  set_channel_windows (f, window);
  sv_params_panel_get_display (sv_window_get_params_panel (f->window), &d);
  g_assert_cmpfloat_with_epsilon (d.high, window[0][1] / 65535.0, 1e-6);
  assert_composite (f, window, colour, "red, green, blue");

  /* Channel 3 in yellow: it adds to red and green. */
  gtk_drop_down_set_selected (channel, 2);
  g_assert_cmpstr (
      gtk_string_list_get_string (GTK_STRING_LIST (gtk_drop_down_get_model (colour_dropdown)), 5),
      ==, "Yellow");
  gtk_drop_down_set_selected (colour_dropdown, 5);
  colour[2][0] = colour[2][1] = 1.0;
  colour[2][2] = 0.0;
  assert_composite (f, window, colour, "channel 3 yellow");

  /* Channel 2 hidden. */
  gtk_drop_down_set_selected (channel, 1);
  gtk_check_button_set_active (shown, FALSE);
  colour[1][1] = 0.0;
  assert_composite (f, window, colour, "channel 2 hidden");
  save_window_png (f->window,
                   sv_slice_view_is_software (sv_window_get_slice_view (f->window, SV_AXIS_XY))
                       ? "gui-channels-composite-software.png"
                       : "gui-channels-composite.png");
  sv_test_remove_tree (dir);
}

/* Two channels: green and magenta by default, each with its window. */
static void
test_two_channels_green_magenta (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-channels");
  g_autofree char *path = g_build_filename (dir, "two.tif", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (2, 30, 40, 1, &error);
  g_autoptr (GdkTexture) t = NULL;
  g_autofree guint8 *px = NULL;
  GtkDropDown *channel;
  gsize stride;
  TIFF *tif;

  /* An ImageJ hyperstack: pages z0c0, z0c1, z1c0, z1c1, 16-bit. */
  g_assert_no_error (error);
  tif = TIFFOpen (path, "w");
  g_assert_nonnull (tif);
  for (guint p = 0; p < 4; p++)
    {
      g_autofree guint16 *page = g_new (guint16, 30 * 40);
      for (guint i = 0; i < 30 * 40; i++)
        page[i] = p % 2 == 0 ? 30000 : 12000;
      /* A corner at 0 and one at 65535: the sliders span every value. */
      page[0] = 0;
      page[1] = 65535;
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 40);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 30);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 16);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 30);
      if (p == 0)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION,
                      "ImageJ=1.53t\nimages=4\nchannels=2\nslices=2\nhyperstack=true\n"
                      "mode=composite\n");
      g_assert_cmpint (TIFFWriteEncodedStrip (tif, 0, page, 30 * 40 * 2), >=, 0);
      g_assert_true (TIFFWriteDirectory (tif));
    }
  TIFFClose (tif);

  open_volume (f, path);
  g_assert_cmpuint (sv_window_get_volume (f->window)->nc, ==, 2);
  sv_params_panel_set_overlay (sv_window_get_params_panel (f->window), SV_OVERLAY_OFF);
  channel = GTK_DROP_DOWN (contrast_widget (f, GTK_TYPE_DROP_DOWN, "Channel of the composite"));
  g_assert_cmpuint (g_list_model_get_n_items (gtk_drop_down_get_model (channel)), ==, 2);
  gtk_drop_down_set_selected (channel, 0);
  sv_params_panel_set_window (sv_window_get_params_panel (f->window), 0.0, 60000 / 65535.0);
  gtk_drop_down_set_selected (channel, 1);
  sv_params_panel_set_window (sv_window_get_params_panel (f->window), 0.0, 48000 / 65535.0);
  t = capture_xy (f->window);
  px = rgba_bytes (t, &stride);
  /* Channel 1 (0.5) in green, channel 2 (0.25) in magenta. */
  assert_colour (pixel_at_voxel (f->window, px, stride, 15, 20), 0.25, 0.5, 0.25,
                 "green and magenta");
  sv_test_remove_tree (dir);
}

/* An 8-bit RGB photo is no composite: one window over red, green, blue. */
static void
test_photo_stays_rgb (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-channels");
  g_autofree char *path = g_build_filename (dir, "photo.tif", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (1, 30, 40, 3, &error);
  g_autoptr (GdkTexture) t = NULL;
  g_autofree guint8 *px = NULL;
  GtkWidget *channel;
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  gsize stride;

  g_assert_no_error (error);
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    {
      v->data[i * 3] = 200 / 255.0f;
      v->data[i * 3 + 1] = 100 / 255.0f;
      v->data[i * 3 + 2] = 50 / 255.0f;
    }
  /* A black and a white pixel: the sliders span 0 to 255. */
  for (guint c = 0; c < 3; c++)
    {
      v->data[c] = 0.0f;
      v->data[3 + c] = 1.0f;
    }
  g_assert_true (sv_tiff_write_volume_full (path, v, SV_SAMPLE_U8, NULL, &error));
  g_assert_no_error (error);
  open_volume (f, path);
  sv_params_panel_set_overlay (panel, SV_OVERLAY_OFF);
  channel = find_by_tooltip (GTK_WIDGET (sv_window_get_contrast_panel (f->window)),
                             GTK_TYPE_DROP_DOWN, "Channel of the composite");
  g_assert_true (channel == NULL || !gtk_widget_is_visible (channel));
  sv_params_panel_set_window (panel, 0.0, 1.0);
  t = capture_xy (f->window);
  px = rgba_bytes (t, &stride);
  assert_colour (pixel_at_voxel (f->window, px, stride, 15, 20), 200 / 255.0, 100 / 255.0,
                 50 / 255.0, "the photo");
  sv_test_remove_tree (dir);
}

/* Three channels that differ: each gives its own segmentation. */
static void
write_fluorescence (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (10, 36, 40, 3, &error);
  SvSynthParams sp;

  g_assert_no_error (error);
  sv_synth_params_init_defaults (&sp);
  sp.nz = 10;
  sp.ny = 36;
  sp.nx = 40;
  sp.n_cells = 8;
  for (guint c = 0; c < 3; c++)
    {
      g_autoptr (SvVolume) one = NULL;
      sp.seed = 11 + c;
      one = sv_synth_cells (&sp, NULL, &error);
      g_assert_no_error (error);
      for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
        v->data[i * 3 + c] = one->data[i] * (0.3f + 0.3f * c);
    }
  v->spacing[0] = 2.0;
  v->spacing[1] = v->spacing[2] = 0.5;
  v->unit = g_strdup ("micron");
  g_assert_true (sv_tiff_write_volume_full (path, v, SV_SAMPLE_U16, NULL, &error));
  g_assert_no_error (error);
}

/* supervox-cli slic on `input` with the parameters `p` and, unless NULL,
 * --channel `channel`. */
static void
run_cli (const char *dir, const char *input, const char *output, const SvSlicParams *p,
         const char *channel)
{
  const char *build = g_getenv ("SV_BUILD_DIR");
  g_autofree char *cli = NULL, *in = g_shell_quote (input), *out = g_shell_quote (output);
  g_autoptr (GString) line = g_string_new (NULL);
  g_auto (GStrv) argv = NULL;
  g_autoptr (GError) error = NULL;
  SvTestRun run;

  g_assert_nonnull (build);
  cli = g_build_filename (build, "app", "cli", "supervox-cli", NULL);
  g_string_printf (line, "%s slic %s -o %s", cli, in, out);
  sv_slic_params_append_cli (p, line);
  if (channel)
    g_string_append_printf (line, " --channel %s", channel);
  g_test_message ("%s", line->str);
  g_assert_true (g_shell_parse_argv (line->str, NULL, &argv, &error));
  g_assert_no_error (error);
  run = sv_test_run_argv (dir, NULL, (const char *const *)argv);
  if (run.status != 0)
    g_error ("supervox-cli failed (%d):\n%s%s", run.status, run.out, run.err);
  sv_test_run_clear (&run);
}

static gboolean
labels_equal (const char *a, const char *b)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) la = sv_tiff_read_labels (a, &error);
  g_autoptr (SvLabels) lb = sv_tiff_read_labels (b, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (sv_labels_n_voxels (la), ==, sv_labels_n_voxels (lb));
  return memcmp (la->data, lb->data, sv_labels_n_voxels (la) * sizeof (gint32)) == 0;
}

/* "Segment on: Channel 2" is supervox-cli's --channel 1 (counted from 0):
 * the window's labels are those of the CLI run on that channel alone, and
 * not those of every channel or of channel 1. */
static void
test_segment_on_channel (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = sv_test_make_dir ("sv-gui-channels");
  g_autofree char *path = g_build_filename (dir, "fluo.tif", NULL);
  g_autofree char *exported = g_build_filename (dir, "window-labels.tif", NULL);
  g_autofree char *cli_one = g_build_filename (dir, "cli-channel-1.tif", NULL);
  g_autofree char *cli_zero = g_build_filename (dir, "cli-channel-0.tif", NULL);
  g_autofree char *cli_all = g_build_filename (dir, "cli-all.tif", NULL);
  g_autofree char *command = NULL, *python = NULL;
  g_autoptr (GError) error = NULL;
  SvParamsPanel *panel = sv_window_get_params_panel (f->window);
  GtkDropDown *segment_on;
  GListModel *names;
  SvSlicParams p;

  write_fluorescence (path);
  open_volume (f, path);
  segment_on = segment_on_dropdown (f);
  g_assert_true (gtk_widget_is_visible (GTK_WIDGET (segment_on)));
  names = gtk_drop_down_get_model (segment_on);
  g_assert_cmpuint (g_list_model_get_n_items (names), ==, 4);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (names), 0), ==, "All channels");
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (names), 2), ==, "Channel 2");
  command = sv_window_build_command (f->window);
  g_assert_null (strstr (command, "--channel"));

  gtk_drop_down_set_selected (segment_on, 2);
  wait_for_current_result (f->window);
  g_assert_true (sv_window_export_labels (f->window, exported, &error));
  g_assert_no_error (error);
  sv_params_panel_get_params (panel, &p);
  run_cli (dir, path, cli_one, &p, "1");
  run_cli (dir, path, cli_zero, &p, "0");
  run_cli (dir, path, cli_all, &p, NULL);
  g_assert_true (labels_equal (exported, cli_one));
  g_assert_false (labels_equal (exported, cli_zero));
  g_assert_false (labels_equal (exported, cli_all));

  /* Both "Copy as" forms name the channel. */
  g_clear_pointer (&command, g_free);
  command = sv_window_build_command (f->window);
  g_test_message ("%s", command);
  g_assert_nonnull (strstr (command, " --channel 1"));
  python = sv_window_build_python (f->window);
  g_assert_nonnull (strstr (python, "(10, 36, 40, 3))[..., 1]"));
  g_assert_nonnull (strstr (python, "channel_axis=None"));

  /* Back to every channel: the next run's labels are the CLI's without
   * --channel. */
  gtk_drop_down_set_selected (segment_on, 0);
  wait_for_current_result (f->window);
  g_assert_true (sv_window_export_labels (f->window, exported, &error));
  g_assert_no_error (error);
  g_assert_true (labels_equal (exported, cli_all));
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/gui/channels/composite-colours", Fixture, NULL, fixture_setup,
              test_composite_colours, fixture_teardown);
  g_test_add ("/gui/channels/two-channels-green-magenta", Fixture, NULL, fixture_setup,
              test_two_channels_green_magenta, fixture_teardown);
  g_test_add ("/gui/channels/photo-stays-rgb", Fixture, NULL, fixture_setup, test_photo_stays_rgb,
              fixture_teardown);
  g_test_add ("/gui/channels/segment-on-channel-2-is-cli-channel-1", Fixture, NULL, fixture_setup,
              test_segment_on_channel, fixture_teardown);
  return g_test_run ();
}

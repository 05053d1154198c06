/* Helpers shared by the GUI tests (gui-test-util.c). */
#pragma once

#include <gtk/gtk.h>

#include "sv-params-panel.h"
#include "sv-slice-view.h"
#include "sv-window.h"

/* A small sample keeps llvmpipe fast. */
#define NZ 32
#define NY 64
#define NX 64

typedef struct
{
  SvWindow *window;
  gpointer weak_window, weak_xy, weak_panel;
  GtkApplication *app; /* fixture_setup_app's; NULL otherwise */
} Fixture;

/* Runs the main loop until `done` says so; fails after 90 s. */
void wait_until (gboolean (*done) (gpointer), gpointer data, const char *what);
/* Runs the main loop until `done` says so or `ms` have passed: whether it
 * did. */
gboolean wait_within (gboolean (*done) (gpointer), gpointer data, guint ms);
/* The exact labels of the newest request are on screen (not a preview). */
gboolean result_is_current (gpointer window);
void wait_for_current_result (SvWindow *w);
gboolean has_result (gpointer window);
gboolean window_settled (gpointer window);
gboolean not_busy (gpointer window);
/* Opens a file (read on a worker thread) and waits until it is shown or
 * refused and its first segmentation, if any, is done. */
void open_and_wait (SvWindow *w, GFile *file);
/* The XY view's pixels as GL drew them, and their RGBA bytes. */
GdkTexture *capture_xy (SvWindow *w);
guint8 *texture_bytes (GdkTexture *t, gsize *stride);
/* A window with the NZ×NY×NX sample, segmented. */
void fixture_setup (Fixture *f, gconstpointer data);
/* The same window in an SvApplication, whose accelerators (Ctrl+Shift+C)
 * it then has, as a user's window does. */
void fixture_setup_app (Fixture *f, gconstpointer data);
void fixture_teardown (Fixture *f, gconstpointer data);
/* The window's content as a PNG in the build's log folder. */
void save_window_png (SvWindow *window, const char *name);
/* The same for another toplevel, such as a dialog. */
void save_toplevel_png (GtkWindow *window, const char *name);
/* The first descendant of `type` whose tooltip starts with `prefix`. */
GtkWidget *find_by_tooltip (GtkWidget *root, GType type, const char *prefix);
/* The widget's event controller of that name, or NULL. */
GtkEventController *find_controller (GtkWidget *widget, const char *name);
/* Two frames after a resize is asked for: any layout is done. */
void wait_for_layout (SvWindow *w);
/* The window is `width` wide and its minimum fits in it. */
void assert_width (SvWindow *w, int width, const char *after);
/* A laptop's 1024×740 window; returns its width. */
int narrow_window (SvWindow *w);
/* wait_until conditions: the quality panel shows the numbers of the
 * result on screen; the pick panel shows the picked supervoxel's count. */
gboolean quality_current (gpointer window);
gboolean pick_has_count (gpointer window);
/* For screenshots: the side panel's tab that holds `panel` open, with
 * room for it under the parameters. */
void show_side_panel (GtkWidget *panel);

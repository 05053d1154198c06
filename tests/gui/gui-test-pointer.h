/* Real pointer and keys for the GUI tests (gui-test-pointer.c). */
#pragma once

#include <gtk/gtk.h>

#include "sv-window.h"

/* xdotool is there and reaches the window; otherwise skips the test. */
gboolean have_xdotool (void);
/* Runs xdotool with `format`'s arguments; WINDOW stands for the window's X
 * id (window coordinates become the surface's). */
void xdotool (SvWindow *w, const char *format, ...) G_GNUC_PRINTF (2, 3);
/* The same against another toplevel, such as a dialog. */
void xdotool_window (GtkWindow *window, const char *format, ...) G_GNUC_PRINTF (2, 3);
/* `widget`'s point (x, y) in the surface's coordinates. */
void surface_point (SvWindow *w, GtkWidget *widget, double x, double y, int *sx, int *sy);
void surface_point_in (GtkWindow *window, GtkWidget *widget, double x, double y, int *sx, int *sy);
/* A real click in the middle of `widget`, which `window` holds. */
void click_widget (GtkWindow *window, GtkWidget *widget);
/* The knob of a GtkScale (its CSS node "slider"). */
GtkWidget *find_knob (GtkWidget *widget);
/* The pointer moved to (fx, fy) of `widget`'s size: keys, without a
 * window manager, go to the window under it. */
void point_at_widget (SvWindow *w, GtkWidget *widget, double fx, double fy);
/* A click into the text of `entry` (not on a spin button's buttons), all
 * of it selected and `text` typed; returns once the field holds it. */
void type_into (SvWindow *w, GtkWidget *entry, const char *text);
/* A number typed into a spin button and taken with Return; returns once
 * the button's value is that number. */
void enter_number (SvWindow *w, GtkWidget *spin, const char *text);
/* A click on the tab of the notebook page that holds `widget`. */
void click_tab (SvWindow *w, GtkWidget *widget);
/* A real click on `dropdown`, then on the entry at `position` in the
 * list that opens; returns once the dropdown shows it. */
void choose_in_dropdown (SvWindow *w, GtkDropDown *dropdown, guint position);

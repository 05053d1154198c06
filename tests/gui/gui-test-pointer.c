/* Real pointer and keys for the GUI tests: xdotool against the window's X
 * window, and where a widget lies on the surface. */
#define G_LOG_DOMAIN "test-gui"

#include "gui-test-pointer.h"

#include <gdk/x11/gdkx.h>
#include <string.h>

gboolean
have_xdotool (void)
{
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");

  if (!xdotool)
    {
      g_test_skip ("xdotool is not installed: no real pointer or keys");
      return FALSE;
    }
  if (!GDK_IS_X11_DISPLAY (gdk_display_get_default ()))
    {
      g_test_skip ("not on X11: xdotool cannot reach the window");
      return FALSE;
    }
  return TRUE;
}

/* Runs xdotool with `args` against `window`'s X window (window
 * coordinates become the surface's). */
static void
run_xdotool (GtkWindow *window, const char *args)
{
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (window));
  g_autofree char *line = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;

  line = g_strdup_printf ("xdotool %s", args);
  /* WINDOW stands for the X window's id. */
  if (strstr (line, "WINDOW"))
    {
      g_autofree char *xid = g_strdup_printf ("%lu", (gulong)gdk_x11_surface_get_xid (surface));
      g_auto (GStrv) parts = g_strsplit (line, "WINDOW", -1);
      g_free (line);
      line = g_strjoinv (xid, parts);
    }
  g_assert_true (g_spawn_command_line_sync (line, NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_cmpint (status, ==, 0);
}

void
xdotool (SvWindow *w, const char *format, ...)
{
  g_autofree char *args = NULL;
  va_list ap;

  va_start (ap, format);
  args = g_strdup_vprintf (format, ap);
  va_end (ap);
  run_xdotool (GTK_WINDOW (w), args);
}

void
xdotool_window (GtkWindow *window, const char *format, ...)
{
  g_autofree char *args = NULL;
  va_list ap;

  va_start (ap, format);
  args = g_strdup_vprintf (format, ap);
  va_end (ap);
  run_xdotool (window, args);
}

/* `widget`'s point (x, y) in the surface's coordinates. */
void
surface_point (SvWindow *w, GtkWidget *widget, double x, double y, int *sx, int *sy)
{
  surface_point_in (GTK_WINDOW (w), widget, x, y, sx, sy);
}

void
surface_point_in (GtkWindow *window, GtkWidget *widget, double x, double y, int *sx, int *sy)
{
  graphene_point_t in = GRAPHENE_POINT_INIT (x, y), out;
  double tx, ty;

  g_assert_true (gtk_widget_compute_point (widget, GTK_WIDGET (window), &in, &out));
  gtk_native_get_surface_transform (GTK_NATIVE (window), &tx, &ty);
  *sx = (int)lround (out.x + tx);
  *sy = (int)lround (out.y + ty);
}

void
click_widget (GtkWindow *window, GtkWidget *widget)
{
  int x, y;

  surface_point_in (window, widget, gtk_widget_get_width (widget) / 2.0,
                    gtk_widget_get_height (widget) / 2.0, &x, &y);
  xdotool_window (window, "mousemove --window WINDOW %d %d click 1", x, y);
}

/* The knob of a GtkScale (its CSS node "slider"). */
GtkWidget *
find_knob (GtkWidget *widget)
{
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found;
      if (g_str_equal (gtk_widget_get_css_name (c), "slider"))
        return c;
      if ((found = find_knob (c)))
        return found;
    }
  return NULL;
}

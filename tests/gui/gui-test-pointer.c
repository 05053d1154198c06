/* Real pointer and keys for the GUI tests: xdotool against the window's X
 * window, where a widget lies on the surface, and typing into fields as a
 * user types. */
#define G_LOG_DOMAIN "test-gui"

#include "gui-test-pointer.h"
#include "gui-test-util.h"

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

/* Runs xdotool with `args` against the X window of `native` (a window or
 * a popover; window coordinates become the surface's). */
static void
run_xdotool (GtkNative *native, const char *args)
{
  GdkSurface *surface = gtk_native_get_surface (native);
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
  run_xdotool (GTK_NATIVE (w), args);
}

void
xdotool_window (GtkWindow *window, const char *format, ...)
{
  g_autofree char *args = NULL;
  va_list ap;

  va_start (ap, format);
  args = g_strdup_vprintf (format, ap);
  va_end (ap);
  run_xdotool (GTK_NATIVE (window), args);
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

void
point_at_widget (SvWindow *w, GtkWidget *widget, double fx, double fy)
{
  int x, y;

  surface_point (w, widget, gtk_widget_get_width (widget) * fx, gtk_widget_get_height (widget) * fy,
                 &x, &y);
  xdotool (w, "mousemove --window WINDOW %d %d", x, y);
}

/* The text part of a field. */
static GtkWidget *
find_text (GtkWidget *widget)
{
  if (GTK_IS_TEXT (widget))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_text (c);
      if (found)
        return found;
    }
  return NULL;
}

static gboolean
has_focus_within (gpointer widget)
{
  return gtk_widget_has_focus (widget) || gtk_widget_get_focus_child (widget) != NULL;
}

static gboolean
holds_wanted_text (gpointer editable)
{
  return g_str_equal (gtk_editable_get_text (editable),
                      (const char *)g_object_get_data (G_OBJECT (editable), "sv-test-typed"));
}

void
type_into (SvWindow *w, GtkWidget *entry, const char *text)
{
  GtkWidget *text_widget = find_text (entry);
  int x, y;

  g_assert_nonnull (text_widget);
  surface_point (w, text_widget, 8, gtk_widget_get_height (text_widget) / 2.0, &x, &y);
  xdotool (w, "mousemove --window WINDOW %d %d click 1", x, y);
  wait_until (has_focus_within, entry, "the focus in the field");
  xdotool (w, "key ctrl+a");
  xdotool (w, "type --delay 20 '%s'", text);
  g_object_set_data_full (G_OBJECT (entry), "sv-test-typed", g_strdup (text), g_free);
  wait_until (holds_wanted_text, entry, "the typed text");
}

static gboolean
value_taken (gpointer spin)
{
  const char *text = g_object_get_data (G_OBJECT (spin), "sv-test-typed");
  return gtk_spin_button_get_value (spin) == g_ascii_strtod (text, NULL);
}

void
enter_number (SvWindow *w, GtkWidget *spin, const char *text)
{
  type_into (w, spin, text);
  xdotool (w, "key Return");
  wait_until (value_taken, spin, "the typed number to be taken");
}

void
click_tab (SvWindow *w, GtkWidget *widget)
{
  GtkNotebook *notebook = GTK_NOTEBOOK (gtk_widget_get_ancestor (widget, GTK_TYPE_NOTEBOOK));

  g_assert_nonnull (notebook);
  for (int i = 0; i < gtk_notebook_get_n_pages (notebook); i++)
    {
      GtkWidget *page = gtk_notebook_get_nth_page (notebook, i);
      if (page == widget || gtk_widget_is_ancestor (widget, page))
        {
          click_widget (GTK_WINDOW (w), gtk_notebook_get_tab_label (notebook, page));
          return;
        }
    }
  g_assert_not_reached ();
}

/* The first descendant of `root` of `type` (NULL: any) that is a label
 * reading `text`, or of `type` when text is NULL. */
static GtkWidget *
find_descendant (GtkWidget *root, GType type, const char *text)
{
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found;
      if (G_TYPE_CHECK_INSTANCE_TYPE (c, type)
          && (text == NULL || g_strcmp0 (gtk_label_get_text (GTK_LABEL (c)), text) == 0))
        return c;
      if ((found = find_descendant (c, type, text)))
        return found;
    }
  return NULL;
}

static gboolean
shown_with_size (gpointer widget)
{
  return gtk_widget_get_mapped (widget) && gtk_widget_get_width (widget) > 0;
}

static gboolean
dropdown_shows (gpointer dropdown)
{
  return gtk_drop_down_get_selected (dropdown)
         == GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (dropdown), "sv-test-chosen"));
}

void
choose_in_dropdown (SvWindow *w, GtkDropDown *dropdown, guint position)
{
  GtkStringList *names = GTK_STRING_LIST (gtk_drop_down_get_model (dropdown));
  const char *name = gtk_string_list_get_string (names, position);
  GtkWidget *popover, *entry;
  GtkNative *native;
  graphene_point_t in, out;
  double tx, ty;

  g_assert_nonnull (name);
  click_widget (GTK_WINDOW (w), GTK_WIDGET (dropdown));
  popover = find_descendant (GTK_WIDGET (dropdown), GTK_TYPE_POPOVER, NULL);
  g_assert_nonnull (popover);
  wait_until (shown_with_size, popover, "the dropdown's list");
  entry = find_descendant (popover, GTK_TYPE_LABEL, name);
  g_assert_nonnull (entry);
  wait_until (shown_with_size, entry, "the entry in the dropdown's list");
  /* The list is a popup surface of its own: the click goes to its X window. */
  native = gtk_widget_get_native (entry);
  in = GRAPHENE_POINT_INIT (gtk_widget_get_width (entry) / 2.0,
                            gtk_widget_get_height (entry) / 2.0);
  g_assert_true (gtk_widget_compute_point (entry, GTK_WIDGET (native), &in, &out));
  gtk_native_get_surface_transform (native, &tx, &ty);
  {
    g_autofree char *args = g_strdup_printf ("mousemove --window WINDOW %ld %ld click 1",
                                             lround (out.x + tx), lround (out.y + ty));
    run_xdotool (native, args);
  }
  g_object_set_data (G_OBJECT (dropdown), "sv-test-chosen", GUINT_TO_POINTER (position));
  wait_until (dropdown_shows, dropdown, "the entry chosen");
}

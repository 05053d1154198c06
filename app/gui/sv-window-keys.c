/* Supervox GUI: the window's keys that are not the application's
 * accelerators (sv-application.c): slice keys while the views have the
 * focus, single letters, Page Up/Down and Escape. One table, so that the
 * shortcuts window (ui/help-overlay.ui) can be checked against it. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

static const SvWindowKey window_keys[] = {
  /* Arrows only while the views have the focus: sliders and spin buttons
   * keep their own. */
  { "win.slice-next", "Up", TRUE },
  { "win.slice-next", "Right", TRUE },
  { "win.slice-prev", "Down", TRUE },
  { "win.slice-prev", "Left", TRUE },
  /* The rest anywhere in the window, after the focused widget: a text
   * field takes its letters (and a spin button its Page keys) first. */
  { "win.slice-next", "Page_Down", FALSE },
  { "win.slice-prev", "Page_Up", FALSE },
  { "win.pin", "p", FALSE },
  { "win.flip-pinned", "c", FALSE },
  { "win.escape", "Escape", FALSE },
};

const SvWindowKey *
sv_window_get_keys (guint *n_keys)
{
  *n_keys = G_N_ELEMENTS (window_keys);
  return window_keys;
}

static GtkEventController *
keys_controller (gboolean in_views, const char *name)
{
  GtkShortcutController *sc = GTK_SHORTCUT_CONTROLLER (gtk_shortcut_controller_new ());

  gtk_event_controller_set_name (GTK_EVENT_CONTROLLER (sc), name);
  /* Bubble phase: the focused widget sees the key first and keeps what it
   * uses, as an entry keeps "p". */
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (sc), GTK_PHASE_BUBBLE);
  for (guint i = 0; i < G_N_ELEMENTS (window_keys); i++)
    if (window_keys[i].in_views == in_views)
      gtk_shortcut_controller_add_shortcut (
          sc, gtk_shortcut_new (gtk_shortcut_trigger_parse_string (window_keys[i].accelerator),
                                gtk_named_action_new (window_keys[i].action)));
  return GTK_EVENT_CONTROLLER (sc);
}

void
sv_window_keys_init (SvWindow *self)
{
  gtk_widget_add_controller (GTK_WIDGET (self->views_grid), keys_controller (TRUE, "sv-view-keys"));
  gtk_widget_add_controller (GTK_WIDGET (self), keys_controller (FALSE, "sv-window-keys"));
}

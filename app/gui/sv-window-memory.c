/* Supervox GUI: memory. The status bar shows what the process holds
 * resident, refreshed every second, so that a volume near the machine's
 * limit can be watched while it loads and segments. A volume whose
 * in-memory run would not fit the window's budget opens out of core
 * (sv-window-ooc.c) rather than swapping the machine to a halt. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include "supervox/sv-memory.h"

void
sv_window_update_memory_status (SvWindow *self)
{
  guint64 resident = sv_memory_resident ();
  g_autofree char *size = NULL;
  g_autofree char *text = NULL;
  g_autofree char *ooc = sv_window_ooc_memory_words (self);

  if (resident == 0)
    {
      gtk_label_set_text (self->memory_label, "");
      return;
    }
  size = g_format_size_full (resident, G_FORMAT_SIZE_IEC_UNITS);
  text = g_strdup_printf ("%s in memory%s", size, ooc);
  gtk_label_set_text (self->memory_label, text);
  /* The label ellipsizes: out of core its words are longer than it. */
  {
    g_autofree char *tip = g_strdup_printf ("%s: memory this program holds now (resident)", text);
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->memory_label), tip);
  }
}

static gboolean
memory_tick_cb (gpointer data)
{
  sv_window_update_memory_status (data);
  return G_SOURCE_CONTINUE;
}

void
sv_window_memory_start (SvWindow *self)
{
  sv_window_update_memory_status (self);
  self->memory_source = g_timeout_add_seconds (1, memory_tick_cb, self);
}

void
sv_window_memory_stop (SvWindow *self)
{
  g_clear_handle_id (&self->memory_source, g_source_remove);
}

const char *
sv_window_get_memory_text (SvWindow *self)
{
  return gtk_label_get_text (self->memory_label);
}

guint64
sv_window_memory_budget (void)
{
  const char *limit = g_getenv ("SV_MEMORY_LIMIT");
  guint64 bytes;

  /* Checked when the application starts (--memory-limit sets it). */
  if (limit != NULL && sv_parse_size ("SV_MEMORY_LIMIT", limit, &bytes, NULL))
    return bytes;
  return sv_memory_available ();
}

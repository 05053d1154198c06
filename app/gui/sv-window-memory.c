/* Supervox GUI: memory. The status bar shows what the process holds
 * resident, refreshed every second, so that a volume near the machine's
 * limit can be watched while it loads and segments; a volume whose
 * in-memory run would not fit the window's budget is refused before it is
 * read, rather than swapping the machine to a halt. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-memory.h"
#include "supervox/sv-stream.h"

void
sv_window_update_memory_status (SvWindow *self)
{
  guint64 resident = sv_memory_resident ();
  g_autofree char *size = NULL;
  g_autofree char *text = NULL;

  if (resident == 0)
    {
      gtk_label_set_text (self->memory_label, "");
      return;
    }
  size = g_format_size_full (resident, G_FORMAT_SIZE_IEC_UNITS);
  text = g_strdup_printf ("%s in memory", size);
  gtk_label_set_text (self->memory_label, text);
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

gboolean
sv_window_check_memory (const char *path, GError **error)
{
  g_autoptr (SvTiffSlabReader) reader = NULL;
  g_autofree char *need_text = NULL;
  g_autofree char *budget_text = NULL;
  g_autofree char *name = NULL;
  const SvTiffSlabInfo *info;
  guint64 budget = sv_window_memory_budget (), need;

  /* The reader reports what else is wrong with the file. */
  reader = budget > 0 ? sv_tiff_slab_reader_open (path, NULL, NULL) : NULL;
  if (reader == NULL)
    return TRUE;
  info = sv_tiff_slab_reader_info (reader);
  need = sv_stream_in_memory_bytes (info->nz, info->ny, info->nx, info->nc, FALSE);
  if (need <= budget)
    return TRUE;
  need_text = g_format_size_full (need, G_FORMAT_SIZE_IEC_UNITS);
  budget_text = g_format_size_full (budget, G_FORMAT_SIZE_IEC_UNITS);
  name = g_filename_display_basename (path);
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
               "%s needs %s to segment in memory, more than the window's memory limit of %s; "
               "supervox-cli slic segments it in slabs (--memory-limit)",
               name, need_text, budget_text);
  return FALSE;
}

/* Supervox GUI: the status bar's words. Each label there has a fixed width
 * and ellipsizes, its whole text in the tooltip: the window never grows
 * with what the status bar says, so that nothing under the pointer moves
 * while a slider is dragged. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

void
sv_window_set_status (SvWindow *self, GtkLabel *label, const char *text)
{
  gtk_label_set_text (label, text ? text : "");
  /* What the label cannot show is one hover away. */
  gtk_widget_set_tooltip_text (GTK_WIDGET (label), text && *text ? text : NULL);
}

/* Where the overlay comes from, in words, and why in the tooltip; nothing
 * in the usual case (labels computed in this computer's memory, drawn with
 * OpenGL). */
void
sv_window_update_path_status (SvWindow *self)
{
  const char *path = sv_slice_view_get_label_path (self->xy_view);
  const char *words = NULL, *why = NULL;

  if (g_strcmp0 (path, "drawn without OpenGL") == 0)
    {
      words = "drawn without OpenGL";
      why = sv_slice_view_get_gl_off_reason (self->xy_view);
    }
  else if (g_strcmp0 (path, "drawn from the GPU") == 0)
    {
      words = "GPU overlay, direct";
      why = "the labels go from the GPU that computed them to the screen without a copy "
            "through the computer's memory";
    }
  else if (self->result
           && sv_backend_class_is_device (sv_backend_class_lookup (self->result->backend_name)))
    {
      words = "GPU overlay, via RAM";
      why = "the labels computed on the GPU reach the screen through the computer's memory "
            "(the display runs on another graphics card, or remotely)";
    }
  gtk_label_set_text (self->path_label, words ? words : "");
  gtk_widget_set_visible (GTK_WIDGET (self->path_label), words != NULL);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->path_label), why);
}

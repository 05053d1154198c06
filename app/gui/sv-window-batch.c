/* Supervox GUI: the main window's "Run Batch…": the dialog that runs the
 * parameters on screen on a list of files (sv-batch-dialog.c), made on
 * first use and kept, hidden when closed, while the window lives; its
 * settings are what "Copy as command" passes (sv-window-actions.c). */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include "sv-batch-dialog.h"

static void
batch_settings_cb (gpointer source, SvBatchSettings *settings)
{
  sv_window_get_batch_settings (SV_WINDOW (source), settings);
}

static void
run_batch_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);

  if (self->batch_dialog == NULL)
    {
      self->batch_dialog
          = GTK_WINDOW (sv_batch_dialog_new (GTK_WINDOW (self), batch_settings_cb, self));
      g_object_add_weak_pointer (G_OBJECT (self->batch_dialog), (gpointer *)&self->batch_dialog);
    }
  sv_batch_dialog_refresh_settings (SV_BATCH_DIALOG (self->batch_dialog));
  gtk_window_present (self->batch_dialog);
}

void
sv_window_class_add_batch_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.run-batch", NULL, run_batch_action);
}

/* Supervox GUI: Open Labels…: a label TIFF of the image's shape (written
 * by supervox-cli or another tool; integers of 8 to 32 bits, 0 the
 * background) read on a worker thread and added to the pin history
 * (sv-window-pins.c) as the pin compared with: the views flip to it with C
 * or its Show button as to a pinned run, and the quality panel gives its
 * adjusted Rand index with the live labels and the voxels where the two
 * differ. A file that cannot be read, or of another shape, is said in one
 * line over the status bar, and nothing changes.
 *
 * It is not the ground truth (Open Ground Truth…, sv-window-quality.c):
 * a truth is what every result is scored against, with measures that are
 * not symmetric (boundary recall, undersegmentation, achievable accuracy)
 * and is never drawn; opened labels are another partition to look at and
 * to compare with, both ways, as with a pinned run. One file can be both. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io.h"

typedef struct
{
  SvLabels *labels;
  double seconds; /* reading them */
} LabelsRead;

static void
labels_read_free (gpointer data)
{
  LabelsRead *read = data;

  g_clear_pointer (&read->labels, sv_labels_free);
  g_free (read);
}

static void
read_labels_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GError *error = NULL;
  gint64 start = g_get_monotonic_time ();
  SvLabels *labels = sv_tiff_read_labels (data, &error);
  LabelsRead *read;

  if (!labels)
    {
      g_task_return_error (task, error);
      return;
    }
  read = g_new0 (LabelsRead, 1);
  read->labels = labels;
  read->seconds = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  g_task_return_pointer (task, read, labels_read_free);
}

/* One line over the status bar; it stays until closed or the next run. */
static void
show_notice (SvWindow *self, const char *path, const GError *error)
{
  g_autofree char *name = g_path_get_basename (path);
  g_autofree char *line = g_strdup (error->message);
  g_autofree char *text = NULL;
  char *nl = strchr (line, '\n');

  if (nl)
    *nl = '\0';
  text = g_strdup_printf ("Cannot open %s as labels: %s. Nothing changed.", name, line);
  gtk_label_set_text (self->warning_label, text);
  gtk_revealer_set_reveal_child (self->warning_revealer, TRUE);
}

static void
labels_read_cb (GObject *source, GAsyncResult *res, gpointer user_data)
{
  SvWindow *self = SV_WINDOW (source);
  const char *path = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  LabelsRead *read = g_task_propagate_pointer (G_TASK (res), &error);
  const SvVolume *v = self->volume;
  g_autofree char *name = NULL, *text = NULL;
  SvJobResult *result;
  SvPin *pin;

  /* The window was closed while the file was read. */
  if (!self->quality_panel)
    {
      g_clear_pointer (&read, labels_read_free);
      return;
    }
  if (read && !v)
    g_set_error_literal (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                         "open an image first");
  else if (read
           && (read->labels->nz != v->nz || read->labels->ny != v->ny || read->labels->nx != v->nx))
    g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                 "they are %u×%u×%u (z×y×x) but the image is %u×%u×%u", read->labels->nz,
                 read->labels->ny, read->labels->nx, v->nz, v->ny, v->nx);
  if (error)
    {
      show_notice (self, path, error);
      g_clear_pointer (&read, labels_read_free);
      return;
    }
  /* From the top of the range down: never a request's generation. */
  result = sv_job_result_new_for_labels (g_steal_pointer (&read->labels),
                                         G_MAXUINT64 - self->last_file_generation++,
                                         "from the file", read->seconds);
  labels_read_free (read);
  /* An earlier refusal no longer holds. */
  if (gtk_revealer_get_reveal_child (self->warning_revealer)
      && strstr (gtk_label_get_text (self->warning_label), " as labels: "))
    gtk_revealer_set_reveal_child (self->warning_revealer, FALSE);
  pin = sv_pin_new_file (sv_window_pins_next_id (self), result, path);
  sv_window_pins_add (self, pin);
  name = sv_pin_name (pin);
  text = g_strdup_printf ("%s opened: C flips between it and the live labels", name);
  sv_window_show_toast (self, text);
  sv_window_pins_show_tab (self);
}

gboolean
sv_window_open_labels (SvWindow *self, GFile *file)
{
  g_autoptr (GTask) task = NULL;
  g_autoptr (GError) error = NULL;
  char *path;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  path = g_file_get_path (file);
  if (!path)
    {
      g_autofree char *uri = g_file_get_uri (file);
      error = g_error_new_literal (SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "it is not a local file");
      show_notice (self, uri, error);
      return FALSE;
    }
  task = g_task_new (self, NULL, labels_read_cb, NULL);
  g_task_set_task_data (task, path, g_free);
  g_task_run_in_thread (task, read_labels_thread);
  return TRUE;
}

static void
labels_chosen (SvWindow *self, GFile *file, gpointer data)
{
  sv_window_open_labels (self, file);
}

static void
open_labels_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", NULL };

  sv_window_choose_file (SV_WINDOW (widget), "Open Labels", FALSE,
                         "Label TIFFs (one value per segment)", patterns, NULL, labels_chosen,
                         NULL);
}

void
sv_window_class_add_labels_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.open-labels", NULL, open_labels_action);
}

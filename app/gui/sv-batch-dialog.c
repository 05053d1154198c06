/* Supervox GUI: the Run Batch… dialog. It keeps the list of inputs, the
 * output folder and names, and the settings read from the window; Start
 * hands them to an SvBatchRun and its rows follow the run's events. */
#define G_LOG_DOMAIN "sv-batch"

#include "sv-batch-dialog.h"

#include <string.h>

#include "sv-tiff-chooser.h"

struct _SvBatchDialog
{
  GtkWindow parent_instance;

  GtkListBox *file_list;
  GtkButton *add_files_button, *add_folder_button, *remove_button;
  GtkButton *output_button, *start_button, *stop_button;
  GtkLabel *output_label, *status_label;
  GtkEntry *names_entry;
  GtkTextView *command_view;
  GtkProgressBar *overall_bar;

  SvBatchSettingsFunc settings_func;
  GObject *settings_source; /* weak */
  SvBatchSettings settings;
  char *output_folder; /* NULL: labels/ beside the first input */
  SvBatchRun *run;     /* the running or last batch */
  gint64 start_us;
};

G_DEFINE_FINAL_TYPE (SvBatchDialog, sv_batch_dialog, GTK_TYPE_WINDOW)

static guint
n_rows (SvBatchDialog *self)
{
  guint n = 0;

  while (gtk_list_box_get_row_at_index (self->file_list, n) != NULL)
    n++;
  return n;
}

/* The inputs in list order, NULL-terminated; the strings are the rows'. */
static const char **
list_inputs (SvBatchDialog *self)
{
  guint n = n_rows (self);
  const char **inputs = g_new0 (const char *, n + 1);

  for (guint i = 0; i < n; i++)
    inputs[i]
        = sv_batch_row_get_path (SV_BATCH_ROW (gtk_list_box_get_row_at_index (self->file_list, i)));
  return inputs;
}

static char *
output_folder (SvBatchDialog *self)
{
  GtkListBoxRow *first;
  g_autofree char *dir = NULL;

  if (self->output_folder)
    return g_strdup (self->output_folder);
  /* supervox-cli's examples write to labels/; beside the data by default. */
  first = gtk_list_box_get_row_at_index (self->file_list, 0);
  if (first == NULL)
    return g_strdup ("labels");
  dir = g_path_get_dirname (sv_batch_row_get_path (SV_BATCH_ROW (first)));
  return g_build_filename (dir, "labels", NULL);
}

/* -o as supervox-cli takes it: the folder and the names' template. */
static char *
output_template (SvBatchDialog *self)
{
  g_autofree char *folder = output_folder (self);
  const char *names = gtk_editable_get_text (GTK_EDITABLE (self->names_entry));

  return g_build_filename (folder, names, NULL);
}

static void
update_command (SvBatchDialog *self)
{
  g_autofree const char **inputs = NULL;
  g_autofree char *output = NULL, *command = NULL, *folder = NULL, *shown = NULL;

  /* A running batch shows what it runs. */
  if (self->run && sv_batch_run_is_running (self->run))
    return;
  inputs = list_inputs (self);
  output = output_template (self);
  command = sv_batch_settings_command (&self->settings, inputs, output);
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (self->command_view), command, -1);
  folder = output_folder (self);
  shown = g_filename_display_name (folder);
  gtk_label_set_text (self->output_label, shown);
}

static void
update_sensitivity (SvBatchDialog *self)
{
  gboolean running = self->run && sv_batch_run_is_running (self->run);
  GList *selected = gtk_list_box_get_selected_rows (self->file_list);

  gtk_widget_set_sensitive (GTK_WIDGET (self->add_files_button), !running);
  gtk_widget_set_sensitive (GTK_WIDGET (self->add_folder_button), !running);
  gtk_widget_set_sensitive (GTK_WIDGET (self->remove_button), !running && selected != NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (self->output_button), !running);
  gtk_widget_set_sensitive (GTK_WIDGET (self->names_entry), !running);
  gtk_widget_set_sensitive (GTK_WIDGET (self->start_button), !running && n_rows (self) > 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->stop_button), running);
  g_list_free (selected);
}

static void
set_status (SvBatchDialog *self, const char *text, gboolean is_error)
{
  gtk_label_set_text (self->status_label, text);
  if (is_error)
    gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "error");
}

/* A change to the list: the rows of the last batch go back to waiting. */
static void
forget_last_run (SvBatchDialog *self)
{
  if (self->run == NULL || sv_batch_run_is_running (self->run))
    return;
  g_clear_pointer (&self->run, sv_batch_run_free);
  for (guint i = 0; i < n_rows (self); i++)
    sv_batch_row_update (SV_BATCH_ROW (gtk_list_box_get_row_at_index (self->file_list, i)), NULL);
  gtk_progress_bar_set_fraction (self->overall_bar, 0);
  gtk_progress_bar_set_text (self->overall_bar, "");
  set_status (self, "", FALSE);
}

static void
list_changed (SvBatchDialog *self)
{
  forget_last_run (self);
  update_command (self);
  update_sensitivity (self);
}

void
sv_batch_dialog_add_file (SvBatchDialog *self, const char *path)
{
  g_return_if_fail (SV_IS_BATCH_DIALOG (self));
  g_return_if_fail (!sv_batch_dialog_is_running (self));

  for (guint i = 0; i < n_rows (self); i++)
    if (g_str_equal (sv_batch_row_get_path (
                         SV_BATCH_ROW (gtk_list_box_get_row_at_index (self->file_list, i))),
                     path))
      return;
  gtk_list_box_append (self->file_list, sv_batch_row_new (path));
  list_changed (self);
}

static gboolean
is_tiff (const char *name)
{
  g_autofree char *lower = g_ascii_strdown (name, -1);
  return g_str_has_suffix (lower, ".tif") || g_str_has_suffix (lower, ".tiff");
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

guint
sv_batch_dialog_add_folder (SvBatchDialog *self, const char *folder, GError **error)
{
  g_autoptr (GDir) dir = NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  guint before = n_rows (self);
  const char *name;

  g_return_val_if_fail (SV_IS_BATCH_DIALOG (self), 0);
  dir = g_dir_open (folder, 0, error);
  if (dir == NULL)
    return 0;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (folder, name, NULL);
      if (is_tiff (name) && g_file_test (path, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add (names, g_steal_pointer (&path));
    }
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    sv_batch_dialog_add_file (self, names->pdata[i]);
  return n_rows (self) - before;
}

void
sv_batch_dialog_set_output_folder (SvBatchDialog *self, const char *folder)
{
  g_return_if_fail (SV_IS_BATCH_DIALOG (self));
  g_free (self->output_folder);
  self->output_folder = g_strdup (folder);
  update_command (self);
}

static void
files_chosen (GListModel *files, gpointer data)
{
  SvBatchDialog *self = data;

  for (guint i = 0; i < g_list_model_get_n_items (files); i++)
    {
      g_autoptr (GFile) file = g_list_model_get_item (files, i);
      g_autofree char *path = g_file_get_path (file);
      if (path)
        sv_batch_dialog_add_file (self, path);
    }
}

static void
folder_chosen (GListModel *files, gpointer data)
{
  SvBatchDialog *self = data;
  g_autoptr (GFile) folder = g_list_model_get_item (files, 0);
  g_autofree char *path = g_file_get_path (folder);
  g_autoptr (GError) error = NULL;

  if (path && sv_batch_dialog_add_folder (self, path, &error) == 0)
    {
      g_autofree char *text = NULL;

      if (error)
        text = g_strdup (error->message);
      else
        text = g_strdup_printf ("%s: no TIFF files that are not listed already", path);
      set_status (self, text, TRUE);
    }
}

static void
output_chosen (GListModel *files, gpointer data)
{
  SvBatchDialog *self = data;
  g_autoptr (GFile) folder = g_list_model_get_item (files, 0);
  g_autofree char *path = g_file_get_path (folder);

  if (path)
    sv_batch_dialog_set_output_folder (self, path);
}

static void
add_files_clicked_cb (SvBatchDialog *self)
{
  sv_tiff_chooser_run (GTK_WINDOW (self), "Add Files to the Batch", FALSE, files_chosen, self);
}

static void
add_folder_clicked_cb (SvBatchDialog *self)
{
  sv_tiff_chooser_run (GTK_WINDOW (self), "Add a Folder's TIFF Files", TRUE, folder_chosen, self);
}

static void
output_clicked_cb (SvBatchDialog *self)
{
  sv_tiff_chooser_run (GTK_WINDOW (self), "Output Folder", TRUE, output_chosen, self);
}

static void
remove_clicked_cb (SvBatchDialog *self)
{
  GList *selected = gtk_list_box_get_selected_rows (self->file_list);

  for (GList *l = selected; l; l = l->next)
    gtk_list_box_remove (self->file_list, l->data);
  g_list_free (selected);
  list_changed (self);
}

/* ---- running ---- */

static void
file_changed_cb (SvBatchRun *run, guint index, gpointer data)
{
  SvBatchDialog *self = data;
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (self->file_list, index);
  guint n = sv_batch_run_get_n_files (run), finished = 0;
  g_autofree char *text = NULL;

  sv_batch_row_update (SV_BATCH_ROW (row), sv_batch_run_get_file (run, index));
  for (guint i = 0; i < n; i++)
    {
      SvBatchFileState state = sv_batch_run_get_file (run, i)->state;
      finished += state == SV_BATCH_FILE_DONE || state == SV_BATCH_FILE_FAILED;
    }
  text = g_strdup_printf ("%u of %u file%s", finished, n, n == 1 ? "" : "s");
  gtk_progress_bar_set_fraction (self->overall_bar, sv_batch_run_get_fraction (run));
  gtk_progress_bar_set_text (self->overall_bar, text);
}

static void
finished_cb (SvBatchRun *run, const char *error, gpointer data)
{
  SvBatchDialog *self = data;
  guint n = sv_batch_run_get_n_files (run), written = 0, failed = 0, stopped = 0;
  double seconds = (g_get_monotonic_time () - self->start_us) / (double)G_USEC_PER_SEC;
  g_autoptr (GString) text = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    switch (sv_batch_run_get_file (run, i)->state)
      {
      case SV_BATCH_FILE_DONE:
        written++;
        break;
      case SV_BATCH_FILE_FAILED:
        failed++;
        break;
      default:
        stopped++;
        break;
      }
  /* supervox-cli's summary line. */
  g_string_printf (text, "%u file%s: %u written, %u failed", n, n == 1 ? "" : "s", written, failed);
  if (stopped > 0)
    g_string_append_printf (text, ", %u stopped", stopped);
  g_string_append_printf (text, " in %.1f s", seconds);
  if (error)
    g_string_append_printf (text, "; %s", error);
  set_status (self, text->str, error != NULL || failed > 0);
  gtk_progress_bar_set_fraction (self->overall_bar, sv_batch_run_get_fraction (run));
  update_sensitivity (self);
}

static void
start_clicked_cb (SvBatchDialog *self)
{
  SvBatchRunEvents events = { file_changed_cb, finished_cb, self };
  g_autofree const char **inputs = NULL;
  g_autofree char *output = NULL;
  g_autoptr (GError) error = NULL;

  if (self->run && sv_batch_run_is_running (self->run))
    return;
  /* The parameters as they are now, shown before they run. */
  sv_batch_dialog_refresh_settings (self);
  forget_last_run (self);
  inputs = list_inputs (self);
  output = output_template (self);
  self->run = sv_batch_run_start (&self->settings, inputs, output, &events, &error);
  if (self->run == NULL)
    {
      set_status (self, error->message, TRUE);
      return;
    }
  self->start_us = g_get_monotonic_time ();
  set_status (self, "running…", FALSE);
  gtk_progress_bar_set_text (self->overall_bar, "");
  update_sensitivity (self);
}

static void
stop_clicked_cb (SvBatchDialog *self)
{
  if (self->run && sv_batch_run_is_running (self->run))
    {
      sv_batch_run_stop (self->run);
      set_status (self, "stopping…", FALSE);
      gtk_widget_set_sensitive (GTK_WIDGET (self->stop_button), FALSE);
    }
}

/* ---- the type ---- */

static void
active_changed_cb (SvBatchDialog *self)
{
  /* Back from the window, perhaps with other parameters. */
  if (gtk_window_is_active (GTK_WINDOW (self)))
    sv_batch_dialog_refresh_settings (self);
}

static void
sv_batch_dialog_dispose (GObject *object)
{
  SvBatchDialog *self = SV_BATCH_DIALOG (object);

  /* Stops a batch still running and waits for its threads: nothing is
   * left half-written. */
  g_clear_pointer (&self->run, sv_batch_run_free);
  if (self->settings_source)
    g_object_remove_weak_pointer (self->settings_source, (gpointer *)&self->settings_source);
  self->settings_source = NULL;
  gtk_widget_dispose_template (GTK_WIDGET (self), SV_TYPE_BATCH_DIALOG);
  G_OBJECT_CLASS (sv_batch_dialog_parent_class)->dispose (object);
}

static void
sv_batch_dialog_finalize (GObject *object)
{
  SvBatchDialog *self = SV_BATCH_DIALOG (object);

  sv_batch_settings_clear (&self->settings);
  g_free (self->output_folder);
  G_OBJECT_CLASS (sv_batch_dialog_parent_class)->finalize (object);
}

static void
sv_batch_dialog_class_init (SvBatchDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sv_batch_dialog_dispose;
  object_class->finalize = sv_batch_dialog_finalize;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-batch-dialog.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, SvBatchDialog, name)
  BIND (file_list);
  BIND (add_files_button);
  BIND (add_folder_button);
  BIND (remove_button);
  BIND (output_button);
  BIND (start_button);
  BIND (stop_button);
  BIND (output_label);
  BIND (status_label);
  BIND (names_entry);
  BIND (command_view);
  BIND (overall_bar);
#undef BIND
  /* Esc hides it, as closing does; a batch running goes on. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
sv_batch_dialog_init (SvBatchDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect_swapped (self->add_files_button, "clicked", G_CALLBACK (add_files_clicked_cb),
                            self);
  g_signal_connect_swapped (self->add_folder_button, "clicked", G_CALLBACK (add_folder_clicked_cb),
                            self);
  g_signal_connect_swapped (self->remove_button, "clicked", G_CALLBACK (remove_clicked_cb), self);
  g_signal_connect_swapped (self->output_button, "clicked", G_CALLBACK (output_clicked_cb), self);
  g_signal_connect_swapped (self->start_button, "clicked", G_CALLBACK (start_clicked_cb), self);
  g_signal_connect_swapped (self->stop_button, "clicked", G_CALLBACK (stop_clicked_cb), self);
  g_signal_connect_swapped (self->names_entry, "changed", G_CALLBACK (update_command), self);
  g_signal_connect_swapped (self->file_list, "selected-rows-changed",
                            G_CALLBACK (update_sensitivity), self);
  g_signal_connect_swapped (self, "notify::is-active", G_CALLBACK (active_changed_cb), self);
}

GtkWidget *
sv_batch_dialog_new (GtkWindow *parent, SvBatchSettingsFunc func, gpointer source)
{
  SvBatchDialog *self = g_object_new (SV_TYPE_BATCH_DIALOG, "transient-for", parent, NULL);

  self->settings_func = func;
  self->settings_source = source;
  g_object_add_weak_pointer (source, (gpointer *)&self->settings_source);
  sv_batch_dialog_refresh_settings (self);
  update_sensitivity (self);
  return GTK_WIDGET (self);
}

void
sv_batch_dialog_refresh_settings (SvBatchDialog *self)
{
  g_return_if_fail (SV_IS_BATCH_DIALOG (self));
  if (sv_batch_dialog_is_running (self) || self->settings_source == NULL)
    return;
  sv_batch_settings_clear (&self->settings);
  self->settings_func (self->settings_source, &self->settings);
  update_command (self);
}

char *
sv_batch_dialog_get_command (SvBatchDialog *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->command_view);
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

guint
sv_batch_dialog_get_n_files (SvBatchDialog *self)
{
  return n_rows (self);
}

SvBatchRow *
sv_batch_dialog_get_row (SvBatchDialog *self, guint index)
{
  return SV_BATCH_ROW (gtk_list_box_get_row_at_index (self->file_list, index));
}

gboolean
sv_batch_dialog_is_running (SvBatchDialog *self)
{
  return self->run && sv_batch_run_is_running (self->run);
}

const char *
sv_batch_dialog_get_status_text (SvBatchDialog *self)
{
  return gtk_label_get_text (self->status_label);
}

double
sv_batch_dialog_get_fraction (SvBatchDialog *self)
{
  return gtk_progress_bar_get_fraction (self->overall_bar);
}

/* Supervox GUI: a row of Run Batch…'s list of files. */
#define G_LOG_DOMAIN "sv-batch"

#include "sv-batch-row.h"

struct _SvBatchRow
{
  GtkListBoxRow parent_instance;

  GtkLabel *name_label, *state_label, *error_label;
  GtkProgressBar *progress_bar;
  char *path;
  SvBatchFileState state;
};

G_DEFINE_FINAL_TYPE (SvBatchRow, sv_batch_row, GTK_TYPE_LIST_BOX_ROW)

static void
sv_batch_row_finalize (GObject *object)
{
  SvBatchRow *self = SV_BATCH_ROW (object);

  g_free (self->path);
  G_OBJECT_CLASS (sv_batch_row_parent_class)->finalize (object);
}

static void
sv_batch_row_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), SV_TYPE_BATCH_ROW);
  G_OBJECT_CLASS (sv_batch_row_parent_class)->dispose (object);
}

static void
sv_batch_row_class_init (SvBatchRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sv_batch_row_dispose;
  object_class->finalize = sv_batch_row_finalize;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-batch-row.ui");
  gtk_widget_class_bind_template_child (widget_class, SvBatchRow, name_label);
  gtk_widget_class_bind_template_child (widget_class, SvBatchRow, state_label);
  gtk_widget_class_bind_template_child (widget_class, SvBatchRow, error_label);
  gtk_widget_class_bind_template_child (widget_class, SvBatchRow, progress_bar);
}

static void
sv_batch_row_init (SvBatchRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
sv_batch_row_new (const char *path)
{
  SvBatchRow *self = g_object_new (SV_TYPE_BATCH_ROW, NULL);
  g_autofree char *name = g_path_get_basename (path);
  g_autofree char *shown = g_filename_display_name (name);
  g_autofree char *tip = g_filename_display_name (path);

  self->path = g_strdup (path);
  gtk_label_set_text (self->name_label, shown);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->name_label), tip);
  return GTK_WIDGET (self);
}

const char *
sv_batch_row_get_path (SvBatchRow *row)
{
  g_return_val_if_fail (SV_IS_BATCH_ROW (row), NULL);
  return row->path;
}

void
sv_batch_row_update (SvBatchRow *row, const SvBatchFile *file)
{
  g_autofree char *text = NULL;
  double fraction = 0;

  g_return_if_fail (SV_IS_BATCH_ROW (row));
  row->state = file ? file->state : SV_BATCH_FILE_WAITING;
  switch (row->state)
    {
    case SV_BATCH_FILE_WAITING:
      text = g_strdup ("waiting");
      break;
    case SV_BATCH_FILE_RUNNING:
      if (file->n_iterations > 0)
        {
          text = g_strdup_printf ("running: iteration %u of %u", file->iteration,
                                  file->n_iterations);
          fraction = (double)file->iteration / file->n_iterations;
        }
      else
        text = g_strdup ("running");
      break;
    case SV_BATCH_FILE_DONE:
      text = g_strdup_printf ("done: %" G_GSIZE_FORMAT " %s in %.1f s", file->n_labels,
                              file->n_labels == 1 ? "label" : "labels", file->seconds);
      fraction = 1;
      break;
    case SV_BATCH_FILE_FAILED:
      text = g_strdup ("failed");
      break;
    case SV_BATCH_FILE_STOPPED:
      text = g_strdup ("stopped: nothing written");
      break;
    }
  gtk_label_set_text (row->state_label, text);
  gtk_progress_bar_set_fraction (row->progress_bar, fraction);
  gtk_widget_set_visible (GTK_WIDGET (row->progress_bar), row->state == SV_BATCH_FILE_RUNNING);
  gtk_label_set_text (row->error_label,
                      row->state == SV_BATCH_FILE_FAILED && file->error ? file->error : "");
  gtk_widget_set_visible (GTK_WIDGET (row->error_label), row->state == SV_BATCH_FILE_FAILED);
  if (row->state == SV_BATCH_FILE_DONE && file->output)
    {
      g_autofree char *output = g_filename_display_name (file->output);
      g_autofree char *tip = g_strdup_printf ("labels written to %s", output);
      gtk_widget_set_tooltip_text (GTK_WIDGET (row->state_label), tip);
    }
  else
    gtk_widget_set_tooltip_text (GTK_WIDGET (row->state_label), NULL);
}

SvBatchFileState
sv_batch_row_get_state (SvBatchRow *row)
{
  g_return_val_if_fail (SV_IS_BATCH_ROW (row), SV_BATCH_FILE_WAITING);
  return row->state;
}

const char *
sv_batch_row_get_state_text (SvBatchRow *row)
{
  g_return_val_if_fail (SV_IS_BATCH_ROW (row), NULL);
  return gtk_label_get_text (row->state_label);
}

const char *
sv_batch_row_get_error_text (SvBatchRow *row)
{
  g_return_val_if_fail (SV_IS_BATCH_ROW (row), NULL);
  return gtk_label_get_text (row->error_label);
}

double
sv_batch_row_get_fraction (SvBatchRow *row)
{
  g_return_val_if_fail (SV_IS_BATCH_ROW (row), 0);
  return gtk_progress_bar_get_fraction (row->progress_bar);
}

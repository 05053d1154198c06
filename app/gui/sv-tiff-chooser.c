/* Supervox GUI: the chooser of TIFF files or a folder (Run Batch…'s). */
#define G_LOG_DOMAIN "sv-batch"

#include "sv-tiff-chooser.h"

typedef struct
{
  GtkWindow *parent; /* a reference */
  SvTiffChosenFunc func;
  gpointer data;
} Choice;

static void
choice_done (Choice *c, GListModel *files)
{
  if (files != NULL)
    c->func (files, c->data);
  g_object_unref (c->parent);
  g_free (c);
}

#if GTK_CHECK_VERSION(4, 10, 0)
static void
dialog_files_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GListModel) files
      = gtk_file_dialog_open_multiple_finish (GTK_FILE_DIALOG (source), res, NULL);
  choice_done (data, files);
}

static void
dialog_folder_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GFile) folder
      = gtk_file_dialog_select_folder_finish (GTK_FILE_DIALOG (source), res, NULL);
  g_autoptr (GListStore) files = g_list_store_new (G_TYPE_FILE);

  if (folder)
    g_list_store_append (files, folder);
  choice_done (data, folder ? G_LIST_MODEL (files) : NULL);
}
#else
static void
native_response_cb (GtkNativeDialog *native, int response, gpointer data)
{
  g_autoptr (GListModel) files = NULL;

  if (response == GTK_RESPONSE_ACCEPT)
    files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (native));
  choice_done (data, files);
  g_object_unref (native);
}
#endif

void
sv_tiff_chooser_run (GtkWindow *parent, const char *title, gboolean folder, SvTiffChosenFunc func,
                     gpointer data)
{
  Choice *c = g_new0 (Choice, 1);
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();

  c->parent = g_object_ref (parent);
  c->func = func;
  c->data = data;
  gtk_file_filter_set_name (filter, "TIFF images");
  gtk_file_filter_add_pattern (filter, "*.tif");
  gtk_file_filter_add_pattern (filter, "*.tiff");
  gtk_file_filter_add_pattern (filter, "*.TIF");
  gtk_file_filter_add_pattern (filter, "*.TIFF");
#if GTK_CHECK_VERSION(4, 10, 0)
  {
    g_autoptr (GtkFileDialog) dialog = gtk_file_dialog_new ();
    g_autoptr (GListStore) filters = g_list_store_new (GTK_TYPE_FILE_FILTER);

    gtk_file_dialog_set_title (dialog, title);
    gtk_file_dialog_set_modal (dialog, TRUE);
    if (folder)
      gtk_file_dialog_select_folder (dialog, parent, NULL, dialog_folder_cb, c);
    else
      {
        g_list_store_append (filters, filter);
        gtk_file_dialog_set_filters (dialog, G_LIST_MODEL (filters));
        gtk_file_dialog_open_multiple (dialog, parent, NULL, dialog_files_cb, c);
      }
  }
#else
  {
    GtkFileChooserNative *native = gtk_file_chooser_native_new (
        title, parent,
        folder ? GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER : GTK_FILE_CHOOSER_ACTION_OPEN,
        folder ? "_Select" : "_Add", "_Cancel");

    if (!folder)
      {
        gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), filter);
        gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (native), TRUE);
      }
    gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
    g_signal_connect (native, "response", G_CALLBACK (native_response_cb), c);
    gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
  }
#endif
}

/* Supervox GUI: asks for TIFF files (several at once) or a folder, over a
 * window: GtkFileDialog from GTK 4.10, a native chooser before (Debian 12
 * has GTK 4.8). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Gets the chosen GFiles (a folder: one); not called when cancelled. */
typedef void (*SvTiffChosenFunc) (GListModel *files, gpointer data);

/* Shows a modal chooser over `parent`, which it keeps alive until `func`
 * has run (so `data` may be the parent itself). */
void sv_tiff_chooser_run (GtkWindow *parent, const char *title, gboolean folder,
                          SvTiffChosenFunc func, gpointer data);

G_END_DECLS

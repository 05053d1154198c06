/* Supervox GUI: the Pins tab beside the quality numbers: how the live
 * labels compare with the pinned ones (a line set by the window), the
 * toggle that highlights the voxels where they differ (property
 * "highlight-differences"), and a row per pin (sv-pin.h), newest first,
 * with its numbers. A click on a row compares the live labels with that
 * pin (action win.compare-pin); its buttons show it in the views
 * (win.show-pin), put its parameters back into the panel
 * (win.restore-pin) and drop it (win.remove-pin); each action's target is
 * the pin's number (uint32). The row compared with is selected. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SV_TYPE_PIN_LIST (sv_pin_list_get_type ())
G_DECLARE_FINAL_TYPE (SvPinList, sv_pin_list, SV, PIN_LIST, GtkWidget)

typedef struct
{
  guint id;             /* the pin's number, the actions' target */
  const char *title;    /* "Pin 3", "labels.tif" */
  const char *summary;  /* sv_pin_summary */
  const char *measures; /* sv_pin_measures */
  gboolean restorable;  /* a pinned run: Restore puts its parameters back */
} SvPinRow;

GtkWidget *sv_pin_list_new (void);
/* Shows `rows` (copied); the row of `compared` is selected and the one of
 * `shown` (0: the live labels are shown) offers Live instead of Show.
 * Rows of the same pins as before are updated where they are. */
void sv_pin_list_set (SvPinList *list, const SvPinRow *rows, guint n_rows, guint compared,
                      guint shown);
guint sv_pin_list_get_n_rows (SvPinList *list);
/* The line above the rows: the comparison, or what to do without pins. */
void sv_pin_list_set_comparison (SvPinList *list, const char *text);
const char *sv_pin_list_get_comparison (SvPinList *list);
gboolean sv_pin_list_get_highlight_differences (SvPinList *list);
void sv_pin_list_set_highlight_differences (SvPinList *list, gboolean highlight);
/* The toggle itself (tests click it). */
GtkWidget *sv_pin_list_get_highlight_check (SvPinList *list);
/* Row i (0: the newest): its widget; the text of its "title", "summary"
 * or "measures"; its "show", "restore" or "remove" button. NULL for
 * another name or a row that is not there. */
GtkWidget *sv_pin_list_get_row (SvPinList *list, guint i);
const char *sv_pin_list_get_text (SvPinList *list, guint i, const char *part);
GtkWidget *sv_pin_list_get_button (SvPinList *list, guint i, const char *which);

G_END_DECLS

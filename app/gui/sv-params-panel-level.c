/* Supervox GUI: the parameter panel's "Level": the resolution levels of
 * an OME-Zarr image, the first row of the SLIC values since it says what
 * the labels are made on (as "Segment on" does). The panel only lists and
 * reports the pick; the window reads the level (sv-window-levels.c). */
#define G_LOG_DOMAIN "sv-params-panel"

#include "sv-params-panel-private.h"

static guint level_chosen_signal;

static void
zarr_level_selected_cb (SvParamsPanel *self)
{
  guint level = gtk_drop_down_get_selected (self->zarr_level_dropdown);

  if (self->updating > 0 || level == GTK_INVALID_LIST_POSITION)
    return;
  g_signal_emit (self, level_chosen_signal, 0, level);
}

/* The list holds `names` (NULL: none) already. */
static gboolean
same_names (GtkStringList *list, const char *const *names)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (list));
  guint i = 0;

  for (; names != NULL && names[i] != NULL; i++)
    if (i >= n || g_strcmp0 (gtk_string_list_get_string (list, i), names[i]) != 0)
      return FALSE;
  return i == n;
}

void
sv_params_panel_set_levels (SvParamsPanel *self, const char *const *names, guint selected)
{
  GtkStringList *list = GTK_STRING_LIST (gtk_drop_down_get_model (self->zarr_level_dropdown));
  guint n = names != NULL ? g_strv_length ((char **)names) : 0;

  g_return_if_fail (SV_IS_PARAMS_PANEL (self));
  self->updating++;
  /* The same levels keep their list: replacing it while its popup
   * handles a click would have the click pick again. */
  if (!same_names (list, n > 1 ? names : NULL))
    gtk_string_list_splice (list, 0, g_list_model_get_n_items (G_LIST_MODEL (list)),
                            n > 1 ? names : NULL);
  gtk_drop_down_set_selected (self->zarr_level_dropdown, n > 1 ? MIN (selected, n - 1) : 0);
  /* One level is nothing to choose: the row is hidden, as "Segment on"
   * is for one channel. */
  gtk_widget_set_visible (GTK_WIDGET (self->zarr_level_dropdown), n > 1);
  gtk_widget_set_visible (self->zarr_level_name, n > 1);
  self->updating--;
}

guint
sv_params_panel_get_level (SvParamsPanel *self)
{
  guint level;

  g_return_val_if_fail (SV_IS_PARAMS_PANEL (self), 0);
  level = gtk_drop_down_get_selected (self->zarr_level_dropdown);
  if (!gtk_widget_get_visible (GTK_WIDGET (self->zarr_level_dropdown))
      || level == GTK_INVALID_LIST_POSITION)
    return 0;
  return level;
}

void
sv_params_panel_keep_for_level (SvParamsPanel *self)
{
  g_return_if_fail (SV_IS_PARAMS_PANEL (self));
  self->keep_for_level = TRUE;
}

void
sv_params_panel_class_add_level (GtkWidgetClass *widget_class)
{
  /* The user picked another level (guint, 0 the finest). */
  level_chosen_signal
      = g_signal_new ("level-chosen", G_TYPE_FROM_CLASS (widget_class), G_SIGNAL_RUN_LAST, 0, NULL,
                      NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  gtk_widget_class_bind_template_child (widget_class, SvParamsPanel, zarr_level_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SvParamsPanel, zarr_level_name);
  gtk_widget_class_bind_template_callback (widget_class, zarr_level_selected_cb);
}

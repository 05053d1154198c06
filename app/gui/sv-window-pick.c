/* Supervox GUI: the main window's selection: a click picks the supervoxel
 * under the pointer; it is tinted in every view and described in the
 * selection panel from the engine's per-supervoxel statistics (computed
 * with the quality, label-stats.h). The selection is held as the voxel
 * clicked, so it follows that place through new results (and shows
 * nothing while no supervoxel is there). Escape stops a
 * running job first and clears the selection when nothing runs. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

/* The label at the selected voxel in the shown result. */
static gboolean
selected_label (SvWindow *self, gint32 *label)
{
  SvJobResult *shown = sv_window_shown_result (self);
  const SvVolume *v = self->volume;

  if (!self->selection_valid || !shown || !v || !sv_job_result_fits (shown, v->nz, v->ny, v->nx))
    return FALSE;
  *label = sv_job_result_probe_label (shown, self->selection_zyx[0], self->selection_zyx[1],
                                      self->selection_zyx[2]);
  /* Below the first label lies no supervoxel (a voxel masked out, or
   * teaching's step 0, where no voxel has a cluster yet): nothing to tint
   * or describe, until a result puts one there again. */
  return *label >= shown->params.start_label;
}

void
sv_window_update_selection (SvWindow *self)
{
  gboolean only = sv_pick_panel_get_selected_only (self->pick_panel);
  SvQuality *q = sv_window_shown_quality (self);
  SvJobResult *shown = sv_window_shown_result (self);
  gint32 label = 0;
  gboolean valid = selected_label (self, &label);
  const SvLabelStats *stats;
  SvLabelStats moved;

  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_selection (sv_window_view (self, i), valid, label, only);
  sv_volume_view_set_result (self->volume_view, shown);
  sv_volume_view_set_selection (self->volume_view, valid, label);
  if (!valid)
    {
      sv_pick_panel_clear (self->pick_panel);
      return;
    }
  /* A preview's labels are coarse: its numbers would not be the voxels'.
   * A stopped run's iteration is measured (the quality is of it). */
  stats = q && shown->preview_factor <= 1 ? sv_label_table_lookup (q->table, label) : NULL;
  if (stats && shown->region)
    {
      /* A region's statistics count from its corner. */
      moved = *stats;
      for (guint a = 0; a < 3; a++)
        {
          moved.lo[a] += shown->region_offset[a];
          moved.hi[a] += shown->region_offset[a];
          moved.centre[a] += shown->region_offset[a];
        }
      stats = &moved;
    }
  sv_pick_panel_show (self->pick_panel, label, stats, self->volume,
                      sv_window_intensity_scale (self->volume));
}

void
sv_window_select_at (SvWindow *self, guint z, guint y, guint x)
{
  g_return_if_fail (SV_IS_WINDOW (self));
  if (!self->volume || z >= self->volume->nz || y >= self->volume->ny || x >= self->volume->nx)
    return;
  self->selection_valid = TRUE;
  self->selection_zyx[0] = z;
  self->selection_zyx[1] = y;
  self->selection_zyx[2] = x;
  /* The panel's page is the scrolled window around it. */
  {
    GtkWidget *page = GTK_WIDGET (self->pick_panel);
    while (page && gtk_notebook_page_num (self->side_notebook, page) < 0)
      page = gtk_widget_get_parent (page);
    gtk_notebook_set_current_page (self->side_notebook,
                                   gtk_notebook_page_num (self->side_notebook, page));
  }
  /* The supervoxel's details come with the quality. */
  sv_window_quality_ensure (self);
  sv_window_update_selection (self);
}

void
sv_window_clear_selection (SvWindow *self)
{
  g_return_if_fail (SV_IS_WINDOW (self));
  self->selection_valid = FALSE;
  sv_window_update_selection (self);
}

gboolean
sv_window_get_selected (SvWindow *self, gint32 *label)
{
  gint32 l = 0;
  gboolean valid = selected_label (self, &l);

  if (label)
    *label = l;
  return valid;
}

SvPickPanel *
sv_window_get_pick_panel (SvWindow *self)
{
  return self->pick_panel;
}

static void
clear_selection_action (GtkWidget *widget, const char *name, GVariant *param)
{
  sv_window_clear_selection (SV_WINDOW (widget));
}

/* Escape: a running job or load is stopped first; with nothing running it
 * clears the selection. */
static void
escape_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);

  if (sv_window_is_busy (self))
    sv_window_stop (self);
  else
    sv_window_clear_selection (self);
}

static void
selected_only_cb (SvPickPanel *panel, GParamSpec *pspec, SvWindow *self)
{
  sv_window_update_selection (self);
}

void
sv_window_pick_init (SvWindow *self)
{
  g_signal_connect (self->pick_panel, "notify::selected-only", G_CALLBACK (selected_only_cb), self);
}

void
sv_window_class_add_pick_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_child (widget_class, SvWindow, pick_panel);
  gtk_widget_class_install_action (widget_class, "win.clear-selection", NULL,
                                   clear_selection_action);
  gtk_widget_class_install_action (widget_class, "win.escape", NULL, escape_action);
}

/* Supervox GUI: the main window: the type, the volume shown, the views'
 * crosshair and the panels' signals (see sv-window-private.h for the other
 * files). */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <math.h>
#include <string.h>

#include "sv-application.h"

G_DEFINE_FINAL_TYPE (SvWindow, sv_window, GTK_TYPE_APPLICATION_WINDOW)

enum
{
  PROP_0,
  PROP_ORTHOGONAL,
  PROP_LINK_ZOOM,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

gboolean
sv_window_verbose (SvWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  return SV_IS_APPLICATION (app) && sv_application_get_verbose (SV_APPLICATION (app));
}

SvSliceView *
sv_window_view (SvWindow *self, guint i)
{
  SvSliceView *v[3] = { self->xy_view, self->xz_view, self->yz_view };
  return v[i];
}

static void
hover_cb (SvSliceView *view, int z, int y, int x, SvWindow *self)
{
  self->active_view = view;
  self->hover_valid = z >= 0;
  if (self->hover_valid)
    {
      self->hover_zyx[0] = (guint)z;
      self->hover_zyx[1] = (guint)y;
      self->hover_zyx[2] = (guint)x;
    }
  sv_window_update_hover_status (self);
  sv_window_update_search_window (self);
}

static void
view_resize_cb (SvSliceView *view, int width, int height, SvWindow *self)
{
  sv_window_update_fit (self);
}

static void
update_crosshairs (SvWindow *self)
{
  sv_volume_view_set_planes (self->volume_view, self->cursor_zyx[0], self->cursor_zyx[1],
                             self->cursor_zyx[2]);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_crosshair (sv_window_view (self, i), self->orthogonal, self->cursor_zyx[0],
                                 self->cursor_zyx[1], self->cursor_zyx[2]);
}

static void
pick_cb (SvSliceView *view, int z, int y, int x, SvWindow *self)
{
  self->cursor_zyx[0] = (guint)z;
  self->cursor_zyx[1] = (guint)y;
  self->cursor_zyx[2] = (guint)x;
  sv_window_select_at (self, (guint)z, (guint)y, (guint)x);
  if (self->orthogonal)
    {
      sv_slice_view_set_slice (self->xy_view, (guint)z);
      sv_slice_view_set_slice (self->xz_view, (guint)y);
      sv_slice_view_set_slice (self->yz_view, (guint)x);
    }
  update_crosshairs (self);
}

static void
slice_notify_cb (SvSliceView *view, GParamSpec *pspec, SvWindow *self)
{
  /* Each view's slice is one coordinate of the shared cursor. */
  guint axis_to_zyx[3] = { 0, 1, 2 };
  self->cursor_zyx[axis_to_zyx[sv_slice_view_get_axis (view)]] = sv_slice_view_get_slice (view);
  update_crosshairs (self);
}

/* ---- volume ---- */

double
sv_window_intensity_scale (const SvVolume *volume)
{
  /* The reader's img_as_float divided integer samples by their type's maximum. */
  switch (volume->source_type)
    {
    case SV_SAMPLE_U8:
      return 255.0;
    case SV_SAMPLE_U16:
      return 65535.0;
    case SV_SAMPLE_U32:
      return 4294967295.0;
    case SV_SAMPLE_I8:
      return 127.0;
    case SV_SAMPLE_I16:
      return 32767.0;
    case SV_SAMPLE_I32:
      return 2147483647.0;
    case SV_SAMPLE_F32:
    case SV_SAMPLE_F64:
    default:
      return 0.0;
    }
}

void
sv_window_forget_volume (SvWindow *self)
{
  /* The job borrows the volume: stop it before the volume goes. */
  sv_window_stop_job (self);
  sv_window_ooc_close (self);
  sv_window_quality_forget (self);
  sv_window_region_forget (self);
  g_clear_pointer (&self->result, sv_job_result_unref);
  g_clear_pointer (&self->run_error, g_free);
  g_clear_pointer (&self->export_path, g_free);
  self->load_seconds = 0.0;
  /* A mask belongs to the volume it was opened for. */
  g_clear_pointer (&self->mask, g_free);
  g_clear_pointer (&self->mask_path, g_free);
  sv_window_channel_forget (self);
  sv_window_levels_forget (self);
  self->n_nan = self->n_inf = 0;
  self->mask_nonfinite = FALSE;
  gtk_revealer_set_reveal_child (self->nonfinite_revealer, FALSE);
}

void
sv_window_set_volume (SvWindow *self, SvVolume *volume, const char *name)
{
  float vmin, vmax;
  g_autofree char *title = NULL;

  g_return_if_fail (SV_IS_WINDOW (self));
  g_return_if_fail (volume != NULL);

  sv_window_forget_volume (self);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_volume (sv_window_view (self, i), volume);
  sv_volume_view_set_volume (self->volume_view, volume);
  g_clear_pointer (&self->volume, sv_volume_free);
  self->volume = volume;
  g_free (self->volume_name);
  self->volume_name = g_strdup (name);
  self->hover_valid = FALSE;
  self->cursor_zyx[0] = volume->nz / 2;
  self->cursor_zyx[1] = volume->ny / 2;
  self->cursor_zyx[2] = volume->nx / 2;
  sv_window_zoom_reset (self);
  update_crosshairs (self);

  /* A 2D image's size as a photo's: height × width. */
  if (volume->nz == 1)
    title = g_strdup_printf ("%s — %u×%u%s", name, volume->ny, volume->nx,
                             sv_window_channel_words (volume));
  else
    title = g_strdup_printf ("%s — %u×%u×%u%s", name, volume->nz, volume->ny, volume->nx,
                             sv_window_channel_words (volume));
  gtk_label_set_text (self->title_label, title);
  gtk_window_set_title (GTK_WINDOW (self), title);
  sv_window_set_status (self, self->result_label, NULL);
  gtk_label_set_text (self->hover_label, "");
  sv_window_update_path_status (self);
  if (sv_window_verbose (self))
    g_message ("%s: %s", name, sv_slice_view_get_label_path (self->xy_view));

  sv_params_panel_set_file_spacing (self->params_panel, volume->spacing, volume->unit);
  sv_params_panel_set_file (self->params_panel, (const guint[]){ volume->nz, volume->ny, volume->nx },
                            volume->nc);
  sv_params_panel_set_intensity_scale (self->params_panel, sv_window_intensity_scale (volume));
  sv_quality_panel_set_planar (self->quality_panel, volume->nz == 1);
  sv_pick_panel_set_planar (self->pick_panel, volume->nz == 1);
  sv_window_region_set_planar (self, volume->nz == 1);
  /* A 2D image has no XZ or YZ to show. */
  if (volume->nz == 1)
    g_object_set (self, "orthogonal", FALSE, NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.orthogonal", volume->nz > 1);
  sv_window_finite_range (volume, &vmin, &vmax);
  sv_params_panel_set_intensity_range (self->params_panel, vmin, vmax);
  sv_window_contrast_set_volume (self);
  sv_window_auto_contrast (self);
  sv_window_nonfinite_scan (self);

  sv_window_start_job (self);
}

gboolean
sv_window_load_sample (SvWindow *self, guint nz, guint ny, guint nx, GError **error)
{
  SvSynthParams params;
  SvVolume *volume;

  sv_synth_params_init_defaults (&params);
  params.nz = nz;
  params.ny = ny;
  params.nx = nx;
  params.n_cells = MAX (4, (guint)((double)nz * ny * nx / (24.0 * 24 * 24)));
  params.nucleus_radius = MAX (1.5, MIN (MIN (nz, ny), nx) / 14.0);
  volume = sv_synth_cells (&params, NULL, error);
  if (!volume)
    return FALSE;
  g_clear_pointer (&self->volume_path, g_free);
  sv_window_set_volume (self, volume, "Sample: cells and nuclei");
  self->sample = params;
  return TRUE;
}

/* ---- panel ---- */

static void
display_changed_cb (SvWindow *self)
{
  sv_params_panel_get_display (self->params_panel, &self->display);
  self->display.colormap = sv_contrast_panel_get_colormap (self->contrast_panel);
  sv_window_contrast_sync (self);
  /* Teaching mode explains what it draws. */
  gtk_revealer_set_reveal_child (self->teach_revealer, self->display.show_centres);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_display (sv_window_view (self, i), &self->display);
  sv_volume_view_set_display (self->volume_view, &self->display);
}

static void
params_changed_cb (SvWindow *self)
{
  /* Teaching mode also decides whether centres are drawn. */
  display_changed_cb (self);
  sv_window_params_changed (self);
}

static void
warning_close_cb (SvWindow *self)
{
  gtk_revealer_set_reveal_child (self->warning_revealer, FALSE);
}

const char *
sv_window_get_warning_text (SvWindow *self)
{
  return gtk_revealer_get_reveal_child (self->warning_revealer)
             ? gtk_label_get_text (self->warning_label)
             : NULL;
}

static void
dragging_notify_cb (SvParamsPanel *panel, GParamSpec *pspec, SvWindow *self)
{
  sv_window_set_dragging (self, sv_params_panel_get_dragging (panel));
}

static void
stop_action (GtkWidget *widget, const char *name, GVariant *param)
{
  sv_window_stop (SV_WINDOW (widget));
}

static void
set_orthogonal (SvWindow *self, gboolean orthogonal)
{
  if (self->orthogonal == orthogonal)
    return;
  self->orthogonal = orthogonal;
  gtk_widget_set_visible (GTK_WIDGET (self->xz_view), self->orthogonal);
  gtk_widget_set_visible (GTK_WIDGET (self->yz_view), self->orthogonal);
  gtk_widget_set_visible (GTK_WIDGET (self->volume_view), self->orthogonal);
  if (self->orthogonal)
    {
      sv_slice_view_set_slice (self->xy_view, self->cursor_zyx[0]);
      sv_slice_view_set_slice (self->xz_view, self->cursor_zyx[1]);
      sv_slice_view_set_slice (self->yz_view, self->cursor_zyx[2]);
    }
  sv_window_zoom_layout_changed (self);
  update_crosshairs (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ORTHOGONAL]);
}

static gboolean
drop_cb (GtkDropTarget *target, const GValue *value, double x, double y, SvWindow *self)
{
  GSList *files;

  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  files = gdk_file_list_get_files (g_value_get_boxed (value));
  if (!files)
    return FALSE;
  sv_window_open_file (self, files->data);
  g_slist_free (files);
  return TRUE;
}

/* ---- accessors ---- */

const SvVolume *
sv_window_get_volume (SvWindow *self)
{
  return self->volume;
}

SvJobResult *
sv_window_get_result (SvWindow *self)
{
  return self->result;
}

guint64
sv_window_get_generation (SvWindow *self)
{
  return self->generation;
}

SvParamsPanel *
sv_window_get_params_panel (SvWindow *self)
{
  return self->params_panel;
}

SvVolumeView *
sv_window_get_volume_view (SvWindow *self)
{
  return self->volume_view;
}

SvSliceView *
sv_window_get_slice_view (SvWindow *self, SvAxis axis)
{
  return sv_window_view (self, axis == SV_AXIS_XY ? 0 : axis == SV_AXIS_XZ ? 1 : 2);
}

GtkWindow *
sv_window_get_error_dialog (SvWindow *self)
{
  return self->error_dialog;
}

const char *
sv_window_get_progress_text (SvWindow *self)
{
  return gtk_progress_bar_get_text (self->progress_bar);
}

const char *
sv_window_get_result_text (SvWindow *self)
{
  return gtk_label_get_text (self->result_label);
}

const char *
sv_window_get_hover_text (SvWindow *self)
{
  return gtk_label_get_text (self->hover_label);
}

GtkWidget *
sv_window_get_views_area (SvWindow *self)
{
  return GTK_WIDGET (self->views_grid);
}

char *
sv_window_get_teaching_legend (SvWindow *self)
{
  if (!gtk_revealer_get_reveal_child (self->teach_revealer))
    return NULL;
  return g_strdup_printf ("%s\n%s", gtk_label_get_text (self->teach_legend),
                          gtk_label_get_text (self->teach_note));
}

GtkWidget *
sv_window_new (GtkApplication *application)
{
  return g_object_new (SV_TYPE_WINDOW, "application", application, NULL);
}

static void
sv_window_dispose (GObject *object)
{
  SvWindow *self = SV_WINDOW (object);

  g_clear_handle_id (&self->play_source, g_source_remove);
  g_clear_handle_id (&self->toast_source, g_source_remove);
  sv_window_memory_stop (self);
  /* The worker borrows the volume and calls back into the window. */
  sv_window_stop_job (self);
  sv_window_ooc_close (self);
  sv_window_cancel_loading (self);
  sv_window_quality_stop (self);
  g_clear_pointer (&self->quality, sv_quality_unref);
  self->pinned = NULL;
  g_clear_pointer (&self->pins, g_ptr_array_unref);
  g_clear_pointer (&self->convergence, sv_convergence_unref);
  g_clear_pointer (&self->result, sv_job_result_unref);
#if SV_HAVE_CUDA
  /* Buffers still held by the views' results go with those results. */
  g_clear_pointer (&self->cuda_labels, sv_cuda_labels_pool_free);
#endif
  if (self->error_dialog)
    gtk_window_destroy (self->error_dialog);
  gtk_widget_dispose_template (GTK_WIDGET (self), SV_TYPE_WINDOW);
  G_OBJECT_CLASS (sv_window_parent_class)->dispose (object);
}

static void
sv_window_finalize (GObject *object)
{
  SvWindow *self = SV_WINDOW (object);

  g_clear_pointer (&self->volume, sv_volume_free);
  g_free (self->volume_name);
  g_free (self->volume_path);
  g_free (self->mask);
  g_free (self->mask_path);
  g_free (self->run_error);
  g_free (self->export_path);
  g_clear_pointer (&self->truth, sv_labels_free);
  g_free (self->truth_path);
  g_clear_pointer (&self->region_volume, sv_volume_free);
  g_clear_pointer (&self->channel_volume, sv_volume_free);
  g_free (self->zarr_image);
  g_clear_pointer (&self->zarr_levels, g_ptr_array_unref);
  g_free (self->region_mask);
  g_clear_pointer (&self->region_truth, sv_labels_free);
  g_free (self->convergence_key);
  G_OBJECT_CLASS (sv_window_parent_class)->finalize (object);
}

static void
sv_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SvWindow *self = SV_WINDOW (object);

  switch (prop_id)
    {
    case PROP_ORTHOGONAL:
      g_value_set_boolean (value, self->orthogonal);
      break;
    case PROP_LINK_ZOOM:
      g_value_set_boolean (value, self->link_zoom);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_window_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  SvWindow *self = SV_WINDOW (object);

  switch (prop_id)
    {
    case PROP_ORTHOGONAL:
      set_orthogonal (self, g_value_get_boolean (value));
      break;
    case PROP_LINK_ZOOM:
      if (sv_window_set_link_zoom (self, g_value_get_boolean (value)))
        g_object_notify_by_pspec (object, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

void
sv_window_class_init (SvWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sv_window_dispose;
  object_class->finalize = sv_window_finalize;
  object_class->get_property = sv_window_get_property;
  object_class->set_property = sv_window_set_property;

  /* XY, XZ and YZ views linked by a crosshair. */
  properties[PROP_ORTHOGONAL]
      = g_param_spec_boolean ("orthogonal", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* The orthogonal views share one scale (sv-window-zoom.c). */
  properties[PROP_LINK_ZOOM]
      = g_param_spec_boolean ("link-zoom", NULL, NULL, TRUE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (SV_TYPE_SLICE_VIEW);
  g_type_ensure (SV_TYPE_PARAMS_PANEL);
  g_type_ensure (SV_TYPE_QUALITY_PANEL);
  g_type_ensure (SV_TYPE_PICK_PANEL);
  g_type_ensure (SV_TYPE_CONTRAST_PANEL);
  g_type_ensure (SV_TYPE_VOLUME_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-window.ui");
  gtk_widget_class_bind_template_child (widget_class, SvWindow, title_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, views_grid);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, xy_view);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, xz_view);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, yz_view);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, volume_view);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, params_panel);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, progress_bar);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, result_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, hover_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, path_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, memory_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, recent_section);
  gtk_widget_class_bind_template_callback (widget_class, params_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, display_changed_cb);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, warning_revealer);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, warning_label);
  gtk_widget_class_bind_template_callback (widget_class, warning_close_cb);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, toast_revealer);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, toast_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, teach_revealer);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, teach_legend);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, teach_note);

  sv_window_class_add_open_actions (widget_class);
  sv_window_class_add_file_actions (widget_class);
  sv_window_class_add_export_actions (widget_class);
  sv_window_class_add_table_actions (widget_class);
  sv_window_class_add_batch_actions (widget_class);
  sv_window_class_add_view_actions (widget_class);
  sv_window_class_add_zoom_actions (widget_class);
  sv_window_class_add_quality_actions (widget_class);
  sv_window_class_add_pick_actions (widget_class);
  sv_window_class_add_contrast_actions (widget_class);
  sv_window_class_add_region_actions (widget_class);
  sv_window_class_add_nonfinite_actions (widget_class);
  gtk_widget_class_install_property_action (widget_class, "win.orthogonal", "orthogonal");
  gtk_widget_class_install_property_action (widget_class, "win.link-zoom", "link-zoom");
  gtk_widget_class_install_action (widget_class, "win.stop", NULL, stop_action);
}

/* The window's style sheet and the app's icon, once per display: the icon
 * comes from the GResource so that About and the window show it also when
 * it is not installed, and without a GtkApplication (tests). */
static void
ensure_display_resources (GdkDisplay *display)
{
  g_autoptr (GtkCssProvider) css = NULL;

  if (g_object_get_data (G_OBJECT (display), "sv-resources"))
    return;
  g_object_set_data (G_OBJECT (display), "sv-resources", GINT_TO_POINTER (1));
  css = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (css, "/org/supervox/Supervox/ui/supervox.css");
  gtk_style_context_add_provider_for_display (display, GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  gtk_icon_theme_add_resource_path (gtk_icon_theme_get_for_display (display),
                                    "/org/supervox/Supervox/icons");
}

void
sv_window_init (SvWindow *self)
{
  GtkDropTarget *drop;

  ensure_display_resources (gtk_widget_get_display (GTK_WIDGET (self)));
  gtk_widget_init_template (GTK_WIDGET (self));
  self->active_view = self->xy_view;
  sv_display_init_defaults (&self->display);
  sv_window_channel_forget (self);

  g_signal_connect (self->params_panel, "notify::dragging", G_CALLBACK (dragging_notify_cb), self);
  sv_window_pick_init (self);
  sv_window_quality_init (self);
  sv_window_frame_init (self);
  sv_window_pins_init (self);
  sv_window_contrast_init (self);
  sv_window_region_init (self);
  sv_window_levels_init (self);
  sv_window_zoom_init (self);
  sv_window_memory_start (self);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", FALSE);
  for (guint i = 0; i < 3; i++)
    {
      g_signal_connect (sv_window_view (self, i), "hover", G_CALLBACK (hover_cb), self);
      g_signal_connect (sv_window_view (self, i), "pick", G_CALLBACK (pick_cb), self);
      g_signal_connect (sv_window_view (self, i), "notify::slice", G_CALLBACK (slice_notify_cb),
                        self);
      g_signal_connect (sv_window_view (self, i), "resize", G_CALLBACK (view_resize_cb), self);
    }

  /* The recent-files section lives in the template's menu. */
  sv_window_rebuild_recent_menu (self);

  drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (drop_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  sv_window_keys_init (self);
}

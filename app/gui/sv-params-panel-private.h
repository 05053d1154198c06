/* Supervox GUI: the parameter panel's instance struct and what its files
 * share: sv-params-panel.c (the type, parameters and display settings) and
 * sv-params-panel-fields.c (compactness and segment sliders and entries,
 * relative spacing, the mouse wheel, intensities in the file's values). */
#pragma once

#include "sv-params-panel.h"

G_BEGIN_DECLS

struct _SvParamsPanel
{
  GtkWidget parent_instance;

  GtkAdjustment *n_segments_adj, *compactness_log_adj, *max_num_iter_adj, *sigma_adj;
  GtkWidget *spacing_z_name, *spacing_z_spin; /* hidden for a 2D image */
  GtkAdjustment *spacing_z_adj, *spacing_y_adj, *spacing_x_adj, *min_size_adj, *max_size_adj;
  GtkAdjustment *start_label_adj, *iteration_adj;
  GtkAdjustment *thickness_adj, *boundary_opacity_adj, *fill_opacity_adj;
  GtkAdjustment *low_adj, *high_adj, *gamma_log_adj;
  GtkAdjustment *compactness_adj, *n_segments_log_adj;
  GtkLabel *spacing_unit_label, *note_label;
  GtkCheckButton *spacing_relative_check;
  GtkScrolledWindow *scroller;
  GtkScale *low_scale, *high_scale, *gamma_scale;
  GtkWidget *n_segments_spin;
  GtkCheckButton *connectivity_check, *slic_zero_check, *teach_check;
  GtkDropDown *backend_dropdown, *overlay_dropdown, *connectivity_rule_dropdown;
  GtkDropDown *segment_channel_dropdown; /* all channels, then channel 1, 2, … */
  GtkWidget *segment_channel_name;
  GtkDropDown *zarr_level_dropdown; /* an OME-Zarr image's levels (sv-params-panel-level.c) */
  GtkWidget *zarr_level_name;
  gboolean keep_for_level; /* the next set_file is the same image at another level */
  GtkColorButton *boundary_colour;
  GtkWidget *min_size_spin, *max_size_spin, *iteration_spin;

  guint32 shuffle;
  guint updating;         /* > 0 while the panel sets its own widgets */
  double compactness;     /* as typed, or from the slider with two significant digits */
  double file_spacing[3]; /* z, y, x as the file gives them */
  char *unit;             /* the file's unit, NULL when none */
  double intensity_scale; /* file value = shown value × this, for integer files; 0 otherwise */
  gboolean dragging;

  /* The values for each file (sv-params-panel-defaults.c). */
  GtkLabel *segment_size_label, *kept_label;
  GtkWidget *kept_box;
  SvSlicParams template_params; /* as the template sets them */
  SvSlicParams defaults;        /* the window's for the file shown */
  gboolean has_defaults;
  guint shape[3]; /* z, y, x of the file shown; 0 before any */
};

/* A SLIC parameter changed: emits "params-changed" unless the panel is
 * setting its own widgets. */
void sv_params_panel_changed (SvParamsPanel *self);

/* Sets every SLIC widget without emitting "params-changed". */
void sv_params_panel_apply_params (SvParamsPanel *self, const SvSlicParams *p);

/* sv-params-panel-defaults.c */
void sv_params_panel_init_defaults (SvParamsPanel *self);
void sv_params_panel_class_bind_defaults (GtkWidgetClass *widget_class);
/* The user changed a value: the line about kept values no longer holds. */
void sv_params_panel_hide_kept (SvParamsPanel *self);

/* sv-params-panel-fields.c */
/* The note under the SLIC fields; NULL hides it. */
void sv_params_panel_set_note (SvParamsPanel *self, const char *text);
/* `value` within the window's compactness range, with a note saying so
 * when it was outside (supervox-cli takes what the engine's table allows). */
double sv_params_panel_clamp_compactness (SvParamsPanel *self, double value);
/* The segment slider at the entry's count, without emitting anything
 * (call with `updating` raised). */
void sv_params_panel_show_n_segments (SvParamsPanel *self);
/* After the template: value formats, wheel guards, the spacing unit line. */
void sv_params_panel_init_fields (SvParamsPanel *self);
/* "Segment on" for a file of `channels`: all of them, then each; hidden
 * for one channel. Does not emit. */
void sv_params_panel_set_channels (SvParamsPanel *self, guint channels);
void sv_params_panel_class_bind_field_callbacks (GtkWidgetClass *widget_class);

/* sv-params-panel-level.c: "Level", its signal and widgets. */
void sv_params_panel_class_add_level (GtkWidgetClass *widget_class);

G_END_DECLS

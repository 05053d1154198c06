/* Supervox GUI: the parameter side panel: the type, its signals and
 * properties, and the parameters and display settings it holds (fields
 * that need care are in sv-params-panel-fields.c). */
#define G_LOG_DOMAIN "sv-params-panel"

#include "sv-params-panel-private.h"

#include <math.h>
#include <string.h>

static const char *const backend_names[] = { "auto", "cpu", "cuda" };
/* The connectivity rule dropdown's entries, in the template's order. */
static const SvConnectivityRule connectivity_rules[]
    = { SV_CONNECTIVITY_RULE_CONNECTED, SV_CONNECTIVITY_RULE_LEGACY };

G_DEFINE_FINAL_TYPE (SvParamsPanel, sv_params_panel, GTK_TYPE_WIDGET)

enum
{
  SIGNAL_PARAMS_CHANGED,
  SIGNAL_DISPLAY_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

enum
{
  PROP_0,
  PROP_DRAGGING,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
set_dragging (SvParamsPanel *self, gboolean dragging)
{
  if (self->dragging == dragging)
    return;
  self->dragging = dragging;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DRAGGING]);
}

/* Capture phase: sees the press and release of any drag in the panel
 * before the slider's own gesture, and lets them through. */
static gboolean
pointer_event_cb (GtkEventControllerLegacy *controller, GdkEvent *event, SvParamsPanel *self)
{
  GdkEventType type = gdk_event_get_event_type (event);

  if (type == GDK_BUTTON_PRESS || type == GDK_TOUCH_BEGIN)
    set_dragging (self, TRUE);
  else if (type == GDK_BUTTON_RELEASE || type == GDK_TOUCH_END || type == GDK_TOUCH_CANCEL
           || type == GDK_GRAB_BROKEN)
    set_dragging (self, FALSE);
  return GDK_EVENT_PROPAGATE;
}

gboolean
sv_params_panel_get_dragging (SvParamsPanel *self)
{
  g_return_val_if_fail (SV_IS_PARAMS_PANEL (self), FALSE);
  return self->dragging;
}

static void
sv_params_panel_set_property (GObject *object, guint prop_id, const GValue *value,
                              GParamSpec *pspec)
{
  SvParamsPanel *self = SV_PARAMS_PANEL (object);

  switch (prop_id)
    {
    case PROP_DRAGGING:
      set_dragging (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_params_panel_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SvParamsPanel *self = SV_PARAMS_PANEL (object);

  switch (prop_id)
    {
    case PROP_DRAGGING:
      g_value_set_boolean (value, self->dragging);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sync_sensitivity (SvParamsPanel *self)
{
  gboolean conn = gtk_check_button_get_active (self->connectivity_check);
  gboolean teach = gtk_check_button_get_active (self->teach_check);

  gtk_widget_set_sensitive (self->min_size_spin, conn && !teach);
  gtk_widget_set_sensitive (self->max_size_spin, conn && !teach);
  gtk_widget_set_sensitive (GTK_WIDGET (self->connectivity_rule_dropdown), conn && !teach);
  gtk_widget_set_sensitive (self->iteration_spin, teach);
  gtk_adjustment_set_upper (self->iteration_adj, gtk_adjustment_get_value (self->max_num_iter_adj));
}

/* "params-changed" with the parameters now shown. */
static void
emit_params_changed (SvParamsPanel *self)
{
  SvSlicParams params;

  sv_params_panel_get_params (self, &params);
  g_signal_emit (self, signals[SIGNAL_PARAMS_CHANGED], 0, &params);
}

void
sv_params_panel_changed (SvParamsPanel *self)
{
  if (self->updating)
    return;
  self->updating++;
  sync_sensitivity (self);
  self->updating--;
  sv_params_panel_hide_kept (self);
  emit_params_changed (self);
}

static void
display_changed_cb (SvParamsPanel *self)
{
  if (self->updating)
    return;
  g_signal_emit (self, signals[SIGNAL_DISPLAY_CHANGED], 0);
}

static void
shuffle_clicked_cb (SvParamsPanel *self)
{
  self->shuffle = self->shuffle * 1664525u + 1013904223u;
  display_changed_cb (self);
}

void
sv_params_panel_get_params (SvParamsPanel *self, SvSlicParams *p)
{
  g_return_if_fail (SV_IS_PARAMS_PANEL (self));
  sv_slic_params_init_defaults (p);
  p->n_segments = (gint64)gtk_adjustment_get_value (self->n_segments_adj);
  p->compactness = self->compactness;
  p->max_num_iter = (int)gtk_adjustment_get_value (self->max_num_iter_adj);
  p->sigma[0] = p->sigma[1] = p->sigma[2] = gtk_adjustment_get_value (self->sigma_adj);
  p->sigma_per_axis = FALSE;
  p->spacing[0] = gtk_adjustment_get_value (self->spacing_z_adj);
  p->spacing[1] = gtk_adjustment_get_value (self->spacing_y_adj);
  p->spacing[2] = gtk_adjustment_get_value (self->spacing_x_adj);
  p->enforce_connectivity = gtk_check_button_get_active (self->connectivity_check);
  p->min_size_factor = gtk_adjustment_get_value (self->min_size_adj);
  p->max_size_factor = gtk_adjustment_get_value (self->max_size_adj);
  p->slic_zero = gtk_check_button_get_active (self->slic_zero_check);
  p->start_label = (int)gtk_adjustment_get_value (self->start_label_adj);
  {
    guint i = gtk_drop_down_get_selected (self->connectivity_rule_dropdown);
    p->connectivity_rule = i < G_N_ELEMENTS (connectivity_rules) ? connectivity_rules[i]
                                                                 : SV_CONNECTIVITY_RULE_CONNECTED;
  }
}

void
sv_params_panel_set_params (SvParamsPanel *self, const SvSlicParams *p)
{
  g_return_if_fail (SV_IS_PARAMS_PANEL (self));
  sv_params_panel_apply_params (self, p);
  sv_params_panel_hide_kept (self);
  emit_params_changed (self);
}

void
sv_params_panel_apply_params (SvParamsPanel *self, const SvSlicParams *p)
{
  self->updating++;
  /* A preset or command may ask for more segments than the window takes. */
  if ((double)p->n_segments > gtk_adjustment_get_upper (self->n_segments_adj))
    {
      g_autofree char *note = g_strdup_printf (
          "Segments: %" G_GINT64_FORMAT " is more than this window computes; lowered to %.0f. "
          "supervox-cli takes any number.",
          p->n_segments, gtk_adjustment_get_upper (self->n_segments_adj));
      sv_params_panel_set_note (self, note);
    }
  gtk_adjustment_set_value (self->n_segments_adj, (double)p->n_segments);
  sv_params_panel_show_n_segments (self);
  self->compactness = sv_params_panel_clamp_compactness (self, p->compactness);
  gtk_adjustment_set_value (self->compactness_log_adj, log10 (self->compactness));
  gtk_adjustment_set_value (self->compactness_adj, self->compactness);
  gtk_adjustment_set_value (self->max_num_iter_adj, p->max_num_iter);
  gtk_adjustment_set_value (self->sigma_adj, p->sigma[0]);
  gtk_adjustment_set_value (self->spacing_z_adj, p->spacing[0]);
  gtk_adjustment_set_value (self->spacing_y_adj, p->spacing[1]);
  gtk_adjustment_set_value (self->spacing_x_adj, p->spacing[2]);
  gtk_check_button_set_active (self->connectivity_check, p->enforce_connectivity);
  gtk_adjustment_set_value (self->min_size_adj, p->min_size_factor);
  gtk_adjustment_set_value (self->max_size_adj, p->max_size_factor);
  gtk_check_button_set_active (self->slic_zero_check, p->slic_zero);
  gtk_adjustment_set_value (self->start_label_adj, p->start_label);
  for (guint i = 0; i < G_N_ELEMENTS (connectivity_rules); i++)
    if (connectivity_rules[i] == p->connectivity_rule)
      gtk_drop_down_set_selected (self->connectivity_rule_dropdown, i);
  sync_sensitivity (self);
  self->updating--;
}

void
sv_params_panel_set_compactness (SvParamsPanel *self, double compactness)
{
  g_return_if_fail (compactness > 0);
  gtk_adjustment_set_value (self->compactness_adj,
                            sv_params_panel_clamp_compactness (self, compactness));
}

const char *
sv_params_panel_get_backend (SvParamsPanel *self)
{
  guint i = gtk_drop_down_get_selected (self->backend_dropdown);
  return i < G_N_ELEMENTS (backend_names) ? backend_names[i] : "auto";
}

void
sv_params_panel_set_backend (SvParamsPanel *self, const char *backend)
{
  for (guint i = 0; i < G_N_ELEMENTS (backend_names); i++)
    if (g_strcmp0 (backend, backend_names[i]) == 0)
      gtk_drop_down_set_selected (self->backend_dropdown, i);
}

int
sv_params_panel_get_stop_after_iteration (SvParamsPanel *self)
{
  if (!gtk_check_button_get_active (self->teach_check))
    return -1;
  return (int)gtk_adjustment_get_value (self->iteration_adj);
}

void
sv_params_panel_set_iteration (SvParamsPanel *self, int iteration)
{
  gtk_adjustment_set_value (self->iteration_adj, iteration);
}

void
sv_params_panel_set_teaching (SvParamsPanel *self, gboolean teaching)
{
  gtk_check_button_set_active (self->teach_check, teaching);
}

void
sv_params_panel_get_display (SvParamsPanel *self, SvDisplay *d)
{
  GdkRGBA rgba;

  sv_display_init_defaults (d);
  d->low = (float)gtk_adjustment_get_value (self->low_adj);
  d->high = (float)gtk_adjustment_get_value (self->high_adj);
  d->gamma = (float)pow (10.0, gtk_adjustment_get_value (self->gamma_log_adj));
  d->overlay = (SvOverlayMode)MIN (gtk_drop_down_get_selected (self->overlay_dropdown), 2);
  gtk_color_chooser_get_rgba (GTK_COLOR_CHOOSER (self->boundary_colour), &rgba);
  d->boundary[0] = rgba.red;
  d->boundary[1] = rgba.green;
  d->boundary[2] = rgba.blue;
  d->boundary[3] = (float)gtk_adjustment_get_value (self->boundary_opacity_adj);
  d->thickness = (int)gtk_adjustment_get_value (self->thickness_adj);
  d->fill_opacity = (float)gtk_adjustment_get_value (self->fill_opacity_adj);
  d->shuffle = self->shuffle;
  d->show_centres = gtk_check_button_get_active (self->teach_check);
}

void
sv_params_panel_set_intensity_range (SvParamsPanel *self, double min, double max)
{
  double step = (max - min) / 1000.0;

  if (!(max > min))
    max = min + 1.0, step = 0.001;
  self->updating++;
  gtk_adjustment_configure (self->low_adj, min, min, max, step, step * 50, 0);
  gtk_adjustment_configure (self->high_adj, max, min, max, step, step * 50, 0);
  self->updating--;
  display_changed_cb (self);
}

void
sv_params_panel_set_window (SvParamsPanel *self, double low, double high)
{
  self->updating++;
  gtk_adjustment_set_value (self->low_adj, low);
  gtk_adjustment_set_value (self->high_adj, high);
  self->updating--;
  display_changed_cb (self);
}

void
sv_params_panel_set_gamma (SvParamsPanel *self, double gamma)
{
  gtk_adjustment_set_value (self->gamma_log_adj, log10 (gamma));
}

void
sv_params_panel_set_overlay (SvParamsPanel *self, SvOverlayMode mode)
{
  gtk_drop_down_set_selected (self->overlay_dropdown, mode);
}

GtkWidget *
sv_params_panel_new (void)
{
  return g_object_new (SV_TYPE_PARAMS_PANEL, NULL);
}

static void
sv_params_panel_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), SV_TYPE_PARAMS_PANEL);
  /* Unnamed template children too. */
  for (GtkWidget *child; (child = gtk_widget_get_first_child (GTK_WIDGET (object)));)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (sv_params_panel_parent_class)->dispose (object);
}

static void
sv_params_panel_finalize (GObject *object)
{
  g_free (SV_PARAMS_PANEL (object)->unit);
  G_OBJECT_CLASS (sv_params_panel_parent_class)->finalize (object);
}

static void
sv_params_panel_class_init (SvParamsPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sv_params_panel_dispose;
  object_class->finalize = sv_params_panel_finalize;
  object_class->get_property = sv_params_panel_get_property;
  object_class->set_property = sv_params_panel_set_property;

  /* A pointer button is held in the panel: parameter changes are a drag.
   * Set by the panel on press and release; scripts and tests may set it to
   * play a drag. */
  properties[PROP_DRAGGING]
      = g_param_spec_boolean ("dragging", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* Any SLIC parameter (or the backend, or teaching) changed: restart the
   * job. It carries the parameters shown (const SvSlicParams *, valid
   * during the emission). */
  signals[SIGNAL_PARAMS_CHANGED]
      = g_signal_new ("params-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  /* Only the look changed: redraw. */
  signals[SIGNAL_DISPLAY_CHANGED]
      = g_signal_new ("display-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                      NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-params-panel.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, SvParamsPanel, name)
  BIND (n_segments_adj);
  BIND (compactness_log_adj);
  BIND (max_num_iter_adj);
  BIND (sigma_adj);
  BIND (spacing_z_adj);
  BIND (spacing_z_name);
  BIND (spacing_z_spin);
  BIND (spacing_y_adj);
  BIND (spacing_x_adj);
  BIND (min_size_adj);
  BIND (max_size_adj);
  BIND (start_label_adj);
  BIND (iteration_adj);
  BIND (thickness_adj);
  BIND (boundary_opacity_adj);
  BIND (fill_opacity_adj);
  BIND (low_adj);
  BIND (high_adj);
  BIND (gamma_log_adj);
  BIND (compactness_adj);
  BIND (n_segments_log_adj);
  BIND (spacing_unit_label);
  BIND (note_label);
  BIND (spacing_relative_check);
  BIND (scroller);
  BIND (low_scale);
  BIND (high_scale);
  BIND (gamma_scale);
  BIND (n_segments_spin);
  BIND (connectivity_check);
  BIND (slic_zero_check);
  BIND (teach_check);
  BIND (backend_dropdown);
  BIND (overlay_dropdown);
  BIND (connectivity_rule_dropdown);
  BIND (segment_channel_dropdown);
  BIND (segment_channel_name);
  BIND (boundary_colour);
#undef BIND
  gtk_widget_class_bind_template_child_full (widget_class, "min_size_spin", FALSE,
                                             G_STRUCT_OFFSET (SvParamsPanel, min_size_spin));
  gtk_widget_class_bind_template_child_full (widget_class, "max_size_spin", FALSE,
                                             G_STRUCT_OFFSET (SvParamsPanel, max_size_spin));
  gtk_widget_class_bind_template_child_full (widget_class, "iteration_spin", FALSE,
                                             G_STRUCT_OFFSET (SvParamsPanel, iteration_spin));
  gtk_widget_class_bind_template_callback_full (widget_class, "params_changed_cb",
                                                G_CALLBACK (sv_params_panel_changed));
  gtk_widget_class_bind_template_callback (widget_class, display_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, shuffle_clicked_cb);
  sv_params_panel_class_bind_field_callbacks (widget_class);
  sv_params_panel_class_bind_defaults (widget_class);
  sv_params_panel_class_add_level (widget_class);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
sv_params_panel_init (SvParamsPanel *self)
{
  GtkEventController *legacy = gtk_event_controller_legacy_new ();

  gtk_event_controller_set_propagation_phase (legacy, GTK_PHASE_CAPTURE);
  g_signal_connect (legacy, "event", G_CALLBACK (pointer_event_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), legacy);
  self->shuffle = 0;
  self->updating++;
  gtk_widget_init_template (GTK_WIDGET (self));
  self->compactness = gtk_adjustment_get_value (self->compactness_adj);
  self->file_spacing[0] = self->file_spacing[1] = self->file_spacing[2] = 1.0;
  sv_params_panel_init_fields (self);
  sv_params_panel_init_defaults (self);
  sync_sensitivity (self);
  self->updating--;
}

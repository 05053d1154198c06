/* Supervox GUI: the parameter side panel. */
#define G_LOG_DOMAIN "sv-params-panel"

#include "sv-params-panel.h"

#include <math.h>
#include <string.h>

static const char *const backend_names[] = { "auto", "cpu", "cuda" };

struct _SvParamsPanel
{
  GtkWidget parent_instance;

  GtkAdjustment *n_segments_adj, *compactness_log_adj, *max_num_iter_adj, *sigma_adj;
  GtkAdjustment *spacing_z_adj, *spacing_y_adj, *spacing_x_adj, *min_size_adj, *max_size_adj;
  GtkAdjustment *start_label_adj, *iteration_adj;
  GtkAdjustment *thickness_adj, *boundary_opacity_adj, *fill_opacity_adj;
  GtkAdjustment *low_adj, *high_adj, *gamma_log_adj;
  GtkAdjustment *compactness_adj;
  GtkLabel *spacing_unit_label, *note_label;
  GtkCheckButton *spacing_relative_check;
  GtkScrolledWindow *scroller;
  GtkScale *low_scale, *high_scale, *gamma_scale;
  GtkWidget *n_segments_spin;
  GtkCheckButton *connectivity_check, *slic_zero_check, *teach_check;
  GtkDropDown *backend_dropdown, *overlay_dropdown;
  GtkColorButton *boundary_colour;
  GtkWidget *min_size_spin, *max_size_spin, *iteration_spin;

  guint32 shuffle;
  guint updating;         /* > 0 while the panel sets its own widgets */
  double compactness;     /* as typed, or from the slider with two significant digits */
  double file_spacing[3]; /* z, y, x as the file gives them */
  char *unit;             /* the file's unit, NULL when none */
  double intensity_scale; /* file value = shown value × this, for integer files; 0 otherwise */
  gboolean dragging;
};

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
  else if (type == GDK_BUTTON_RELEASE || type == GDK_TOUCH_END || type == GDK_TOUCH_CANCEL)
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

/* Three significant digits keep a slider value exactly reproducible on the CLI. */
static double
slider_value (double c)
{
  double mag = pow (10.0, floor (log10 (c)) - 2);
  return round (c / mag) * mag;
}

static void
sync_sensitivity (SvParamsPanel *self)
{
  gboolean conn = gtk_check_button_get_active (self->connectivity_check);
  gboolean teach = gtk_check_button_get_active (self->teach_check);

  gtk_widget_set_sensitive (self->min_size_spin, conn && !teach);
  gtk_widget_set_sensitive (self->max_size_spin, conn && !teach);
  gtk_widget_set_sensitive (self->iteration_spin, teach);
  gtk_adjustment_set_upper (self->iteration_adj, gtk_adjustment_get_value (self->max_num_iter_adj));
}

static void
params_changed_cb (SvParamsPanel *self)
{
  if (self->updating)
    return;
  self->updating++;
  sync_sensitivity (self);
  self->updating--;
  g_signal_emit (self, signals[SIGNAL_PARAMS_CHANGED], 0);
}

/* The log slider moved: the value it means, in the entry too. */
static void
compactness_slid_cb (SvParamsPanel *self)
{
  if (self->updating)
    return;
  self->compactness
      = slider_value (pow (10.0, gtk_adjustment_get_value (self->compactness_log_adj)));
  self->updating++;
  gtk_adjustment_set_value (self->compactness_adj, self->compactness);
  self->updating--;
  params_changed_cb (self);
}

/* A value typed in the entry is taken as it is; the slider follows. */
static void
compactness_typed_cb (SvParamsPanel *self)
{
  if (self->updating)
    return;
  self->compactness = gtk_adjustment_get_value (self->compactness_adj);
  self->updating++;
  gtk_adjustment_set_value (self->compactness_log_adj, log10 (self->compactness));
  self->updating--;
  params_changed_cb (self);
}

static void
set_note (SvParamsPanel *self, const char *text)
{
  gtk_label_set_text (self->note_label, text ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->note_label), text != NULL);
}

/* A number above the largest segment count is lowered to it, and the panel
 * says so instead of changing it silently. */
static int
n_segments_input_cb (GtkSpinButton *spin, double *value, SvParamsPanel *self)
{
  g_autofree char *text = g_strdup (gtk_editable_get_text (GTK_EDITABLE (spin)));
  GtkAdjustment *adj = self->n_segments_adj;
  char *end;
  double v;

  /* Digit groups typed with spaces or commas. */
  g_strdelimit (text, ", ", ' ');
  g_strstrip (text);
  {
    char *w = text;
    for (char *r = text; *r; r++)
      if (*r != ' ')
        *w++ = *r;
    *w = '\0';
  }
  v = g_ascii_strtod (text, &end);
  if (end == text || *end != '\0' || !isfinite (v))
    return GTK_INPUT_ERROR;
  if (v > gtk_adjustment_get_upper (adj))
    {
      g_autofree char *note
          = g_strdup_printf ("Segments: %.0f is more than this window computes; lowered to %.0f. "
                             "supervox-cli takes any number.",
                             v, gtk_adjustment_get_upper (adj));
      set_note (self, note);
    }
  else if (v < gtk_adjustment_get_lower (adj))
    {
      g_autofree char *note = g_strdup_printf ("Segments: %.0f raised to %.0f, the least.", v,
                                               gtk_adjustment_get_lower (adj));
      set_note (self, note);
    }
  else
    set_note (self, NULL);
  *value = CLAMP (round (v), gtk_adjustment_get_lower (adj), gtk_adjustment_get_upper (adj));
  return TRUE;
}

/* ---- spacing: relative to the finest axis, or the file's own ---- */

static double
finest (const double s[3])
{
  return MIN (MIN (s[0], s[1]), s[2]);
}

/* Six significant digits: 0.03 / 0.01 shows and runs as 3, not 2.9999999999999996. */
static double
six_digits (double v)
{
  double mag = pow (10.0, floor (log10 (v)) - 5);
  return round (v / mag) * mag;
}

static void
show_spacing_unit (SvParamsPanel *self)
{
  gboolean relative = gtk_check_button_get_active (self->spacing_relative_check);
  g_autofree char *text = NULL;

  if (relative)
    text = g_strdup_printf ("in multiples of the finest axis, %g %s", finest (self->file_spacing),
                            self->unit ? self->unit : "(no unit in the file)");
  else
    text = g_strdup_printf ("in %s, as the file says",
                            self->unit ? self->unit : "file units (none given)");
  gtk_label_set_text (self->spacing_unit_label, text);
}

static void
set_spacing_widgets (SvParamsPanel *self, const double s[3])
{
  gtk_adjustment_set_value (self->spacing_z_adj, s[0]);
  gtk_adjustment_set_value (self->spacing_y_adj, s[1]);
  gtk_adjustment_set_value (self->spacing_x_adj, s[2]);
}

/* Toggled: the values shown convert (edits kept) and the job restarts. */
static void
spacing_mode_toggled_cb (SvParamsPanel *self)
{
  gboolean relative = gtk_check_button_get_active (self->spacing_relative_check);
  double f = finest (self->file_spacing);
  double s[3] = { gtk_adjustment_get_value (self->spacing_z_adj),
                  gtk_adjustment_get_value (self->spacing_y_adj),
                  gtk_adjustment_get_value (self->spacing_x_adj) };

  show_spacing_unit (self);
  if (self->updating || !(f > 0))
    return;
  /* Unedited values become the file's own exactly; edits convert. */
  {
    gboolean unedited = TRUE;
    for (int a = 0; a < 3; a++)
      {
        double from_file
            = relative ? self->file_spacing[a] : six_digits (self->file_spacing[a] / f);
        unedited = unedited && fabs (s[a] - from_file) <= 1e-12 * from_file;
      }
    for (int a = 0; a < 3; a++)
      {
        if (unedited)
          s[a] = relative ? six_digits (self->file_spacing[a] / f) : self->file_spacing[a];
        else
          s[a] = relative ? six_digits (s[a] / f) : s[a] * f;
      }
  }
  self->updating++;
  set_spacing_widgets (self, s);
  self->updating--;
  params_changed_cb (self);
}

/* ---- the mouse wheel ---- */

/* Over a number field or slider without focus the wheel scrolls the panel,
 * as in a web page: scrolling through the panel must not change values and
 * start runs. With focus the field takes the wheel as usual. */
static gboolean
wheel_cb (GtkEventControllerScroll *controller, double dx, double dy, SvParamsPanel *self)
{
  GtkWidget *field = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (controller));
  GtkAdjustment *v = gtk_scrolled_window_get_vadjustment (self->scroller);
  GtkRoot *root = gtk_widget_get_root (field);
  GtkWidget *focus = root ? gtk_root_get_focus (root) : NULL;

  if (focus && (focus == field || gtk_widget_is_ancestor (focus, field)))
    return FALSE;
  gtk_adjustment_set_value (v, gtk_adjustment_get_value (v)
                                   + dy * MAX (gtk_adjustment_get_step_increment (v), 40.0));
  return TRUE;
}

static void
add_wheel_guards (SvParamsPanel *self, GtkWidget *widget)
{
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      if (GTK_IS_SPIN_BUTTON (c) || GTK_IS_SCALE (c))
        {
          GtkEventController *wheel
              = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
          gtk_event_controller_set_name (wheel, "sv-wheel-scrolls-panel");
          gtk_event_controller_set_propagation_phase (wheel, GTK_PHASE_CAPTURE);
          g_signal_connect (wheel, "scroll", G_CALLBACK (wheel_cb), self);
          gtk_widget_add_controller (c, wheel);
          continue;
        }
      add_wheel_guards (self, c);
    }
}

/* ---- intensities in the file's values ---- */

char *
sv_params_panel_format_intensity (SvParamsPanel *self, double value)
{
  if (self->intensity_scale > 0)
    return g_strdup_printf ("%.0f", round (value * self->intensity_scale));
  return g_strdup_printf ("%.4g", value);
}

static char *
format_intensity_cb (GtkScale *scale, double value, gpointer data)
{
  return sv_params_panel_format_intensity (data, value);
}

static char *
format_gamma_cb (GtkScale *scale, double value, gpointer data)
{
  return g_strdup_printf ("%.2f", pow (10.0, value));
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
}

void
sv_params_panel_set_params (SvParamsPanel *self, const SvSlicParams *p)
{
  g_return_if_fail (SV_IS_PARAMS_PANEL (self));
  self->updating++;
  /* A preset or command may ask for more segments than the window takes. */
  if ((double)p->n_segments > gtk_adjustment_get_upper (self->n_segments_adj))
    {
      g_autofree char *note = g_strdup_printf (
          "Segments: %" G_GINT64_FORMAT " is more than this window computes; lowered to %.0f. "
          "supervox-cli takes any number.",
          p->n_segments, gtk_adjustment_get_upper (self->n_segments_adj));
      set_note (self, note);
    }
  gtk_adjustment_set_value (self->n_segments_adj, (double)p->n_segments);
  self->compactness = p->compactness;
  gtk_adjustment_set_value (self->compactness_log_adj, log10 (p->compactness));
  gtk_adjustment_set_value (self->compactness_adj, p->compactness);
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
  sync_sensitivity (self);
  self->updating--;
  g_signal_emit (self, signals[SIGNAL_PARAMS_CHANGED], 0);
}

void
sv_params_panel_set_compactness (SvParamsPanel *self, double compactness)
{
  g_return_if_fail (compactness > 0);
  gtk_adjustment_set_value (self->compactness_adj, compactness);
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
sv_params_panel_set_file_spacing (SvParamsPanel *self, const double spacing[3], const char *unit)
{
  gboolean relative = gtk_check_button_get_active (self->spacing_relative_check);
  double f = finest (spacing);
  double s[3];

  g_return_if_fail (SV_IS_PARAMS_PANEL (self));
  memcpy (self->file_spacing, spacing, sizeof self->file_spacing);
  g_free (self->unit);
  self->unit = g_strdup (unit);
  for (int a = 0; a < 3; a++)
    s[a] = relative && f > 0 ? six_digits (spacing[a] / f) : spacing[a];
  self->updating++;
  set_spacing_widgets (self, s);
  self->updating--;
  show_spacing_unit (self);
}

gboolean
sv_params_panel_get_spacing_relative (SvParamsPanel *self)
{
  return gtk_check_button_get_active (self->spacing_relative_check);
}

void
sv_params_panel_set_spacing_relative (SvParamsPanel *self, gboolean relative)
{
  gtk_check_button_set_active (self->spacing_relative_check, relative);
}

const char *
sv_params_panel_get_spacing_unit_text (SvParamsPanel *self)
{
  return gtk_label_get_text (self->spacing_unit_label);
}

const char *
sv_params_panel_get_note (SvParamsPanel *self)
{
  return gtk_widget_get_visible (GTK_WIDGET (self->note_label))
             ? gtk_label_get_text (self->note_label)
             : NULL;
}

void
sv_params_panel_show_backend_ran (SvParamsPanel *self, const char *backend, const char *why)
{
  g_autofree char *note = NULL;

  /* The dropdown shows what ran, without asking for another run. */
  self->updating++;
  sv_params_panel_set_backend (self, backend);
  self->updating--;
  note = g_strdup_printf ("Backend: %s ran. %s", backend, why);
  set_note (self, note);
}

void
sv_params_panel_set_intensity_scale (SvParamsPanel *self, double scale)
{
  self->intensity_scale = scale;
  /* The scales redraw their values with the new format. */
  gtk_widget_queue_resize (GTK_WIDGET (self->low_scale));
  gtk_widget_queue_resize (GTK_WIDGET (self->high_scale));
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

  /* Any SLIC parameter (or the backend, or teaching) changed: restart the job. */
  signals[SIGNAL_PARAMS_CHANGED]
      = g_signal_new ("params-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 0);
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
  BIND (boundary_colour);
#undef BIND
  gtk_widget_class_bind_template_child_full (widget_class, "min_size_spin", FALSE,
                                             G_STRUCT_OFFSET (SvParamsPanel, min_size_spin));
  gtk_widget_class_bind_template_child_full (widget_class, "max_size_spin", FALSE,
                                             G_STRUCT_OFFSET (SvParamsPanel, max_size_spin));
  gtk_widget_class_bind_template_child_full (widget_class, "iteration_spin", FALSE,
                                             G_STRUCT_OFFSET (SvParamsPanel, iteration_spin));
  gtk_widget_class_bind_template_callback (widget_class, params_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, display_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, shuffle_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, compactness_slid_cb);
  gtk_widget_class_bind_template_callback (widget_class, compactness_typed_cb);
  gtk_widget_class_bind_template_callback (widget_class, n_segments_input_cb);
  gtk_widget_class_bind_template_callback (widget_class, spacing_mode_toggled_cb);
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
  show_spacing_unit (self);
  gtk_scale_set_format_value_func (self->low_scale, format_intensity_cb, self, NULL);
  gtk_scale_set_format_value_func (self->high_scale, format_intensity_cb, self, NULL);
  gtk_scale_set_format_value_func (self->gamma_scale, format_gamma_cb, NULL, NULL);
  add_wheel_guards (self, GTK_WIDGET (self));
  sync_sensitivity (self);
  self->updating--;
}

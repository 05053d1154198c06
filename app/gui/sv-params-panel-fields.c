/* Supervox GUI: parameter panel fields that need care: the compactness
 * and segment sliders (log scale) and their entries (exact values), the
 * segment count's limit, spacing relative to the finest axis, the mouse wheel over fields,
 * and intensities in the file's own values. */
#define G_LOG_DOMAIN "sv-params-panel"

#include "sv-params-panel-private.h"

#include <math.h>
#include <string.h>

/* Three significant digits keep a slider value short and exactly
 * reproducible on the CLI. */
static double
slider_value (double c)
{
  return sv_round_significant (c, 3);
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
  sv_params_panel_changed (self);
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
  sv_params_panel_changed (self);
}

/* The engine's row for compactness: the limits supervox-cli checks. */
static const SvParamField *
compactness_field (void)
{
  guint n = 0;
  const SvParamField *fields = sv_slic_param_fields (&n);

  for (guint i = 0; i < n; i++)
    if (g_str_equal (fields[i].name, "compactness"))
      return &fields[i];
  g_return_val_if_reached (NULL);
}

double
sv_params_panel_clamp_compactness (SvParamsPanel *self, double value)
{
  GtkAdjustment *adj = self->compactness_adj;
  const SvParamField *f = compactness_field ();
  double least = gtk_adjustment_get_lower (adj), most = gtk_adjustment_get_upper (adj);
  char asked[G_ASCII_DTOSTR_BUF_SIZE], limit[G_ASCII_DTOSTR_BUF_SIZE], cli[32];
  g_autofree char *note = NULL;

  /* The window's range is its slider's; say so rather than change a value
   * silently. */
  if (value >= least && value <= most)
    return value;
  g_snprintf (cli, sizeof cli, "%s %g", f->bound == SV_PARAM_BOUND_ABOVE ? ">" : ">=", f->min);
  note = g_strdup_printf ("Compactness: %s is %s than this window takes; %s to %s. "
                          "supervox-cli takes any value %s.",
                          sv_format_double (asked, value), value < least ? "less" : "more",
                          value < least ? "raised" : "lowered",
                          sv_format_double (limit, value < least ? least : most), cli);
  sv_params_panel_set_note (self, note);
  return CLAMP (value, least, most);
}

/* A typed compactness, checked as supervox-cli checks it. */
static int
compactness_input_cb (GtkSpinButton *spin, double *value, SvParamsPanel *self)
{
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (spin))));
  const SvParamField *f = compactness_field ();
  g_autoptr (GError) error = NULL;
  SvSlicParams p;

  if (!sv_slic_param_parse (f, text, &p, &error))
    {
      char kept[G_ASCII_DTOSTR_BUF_SIZE];
      g_autofree char *note = NULL;

      /* "--compactness must be > 0, got 0" in the panel's words. */
      note = g_strdup_printf ("Compactness %s; kept at %s.",
                              error->message + strlen ("--compactness "),
                              sv_format_double (kept, self->compactness));
      sv_params_panel_set_note (self, note);
      *value = self->compactness;
      return TRUE;
    }
  sv_params_panel_set_note (self, NULL);
  *value = sv_params_panel_clamp_compactness (self, p.compactness);
  return TRUE;
}

/* The value as it is, not rounded to the entry's digits (0.00015 would
 * show as 0.0002). */
static gboolean
compactness_output_cb (GtkSpinButton *spin, SvParamsPanel *self)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];

  sv_format_double (text, gtk_adjustment_get_value (gtk_spin_button_get_adjustment (spin)));
  if (g_strcmp0 (text, gtk_editable_get_text (GTK_EDITABLE (spin))) != 0)
    gtk_editable_set_text (GTK_EDITABLE (spin), text);
  return TRUE;
}

void
sv_params_panel_set_note (SvParamsPanel *self, const char *text)
{
  gtk_label_set_text (self->note_label, text ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->note_label), text != NULL);
}

/* The segment slider moved: the count it means, with three significant
 * digits as the compactness slider gives them, in the entry too. */
static void
n_segments_slid_cb (SvParamsPanel *self)
{
  GtkAdjustment *adj = self->n_segments_adj;
  double n = round (sv_round_significant (
      pow (10.0, gtk_adjustment_get_value (self->n_segments_log_adj)), 3));

  if (self->updating)
    return;
  self->updating++;
  gtk_adjustment_set_value (adj,
                            CLAMP (n, gtk_adjustment_get_lower (adj), gtk_adjustment_get_upper (adj)));
  self->updating--;
  sv_params_panel_changed (self);
}

/* A count typed in the entry is taken as it is; the slider follows. */
static void
n_segments_typed_cb (SvParamsPanel *self)
{
  if (self->updating)
    return;
  self->updating++;
  sv_params_panel_show_n_segments (self);
  self->updating--;
  sv_params_panel_changed (self);
}

void
sv_params_panel_show_n_segments (SvParamsPanel *self)
{
  gtk_adjustment_set_value (self->n_segments_log_adj,
                            log10 (MAX (1.0, gtk_adjustment_get_value (self->n_segments_adj))));
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
  /* Not a number ("10p": a key meant for the views): the count stays, where
   * GTK would otherwise take 0 and run with the least. */
  if (end == text || *end != '\0' || !isfinite (v))
    {
      g_autofree char *note = g_strdup_printf (
          "Segments: “%s” is not a number; kept %.0f.", gtk_editable_get_text (GTK_EDITABLE (spin)),
          gtk_adjustment_get_value (adj));
      sv_params_panel_set_note (self, note);
      *value = gtk_adjustment_get_value (adj);
      return TRUE;
    }
  if (v > gtk_adjustment_get_upper (adj))
    {
      g_autofree char *note
          = g_strdup_printf ("Segments: %.0f is more than this window computes; lowered to %.0f. "
                             "supervox-cli takes any number.",
                             v, gtk_adjustment_get_upper (adj));
      sv_params_panel_set_note (self, note);
    }
  else if (v < gtk_adjustment_get_lower (adj))
    {
      g_autofree char *note = g_strdup_printf ("Segments: %.0f raised to %.0f, the least.", v,
                                               gtk_adjustment_get_lower (adj));
      sv_params_panel_set_note (self, note);
    }
  else
    sv_params_panel_set_note (self, NULL);
  *value = CLAMP (round (v), gtk_adjustment_get_lower (adj), gtk_adjustment_get_upper (adj));
  return TRUE;
}

/* ---- spacing: relative to the finest axis, or the file's own ---- */

static double
finest (const double s[3])
{
  return MIN (MIN (s[0], s[1]), s[2]);
}

static void
show_spacing_unit (SvParamsPanel *self)
{
  gboolean relative = gtk_check_button_get_active (self->spacing_relative_check);
  g_autofree char *text = NULL;

  if (relative && self->unit)
    text = g_strdup_printf ("in multiples of the finest axis, %g %s", finest (self->file_spacing),
                            self->unit);
  else if (relative)
    text = g_strdup ("in multiples of the finest axis (the file gives no unit)");
  else if (self->unit)
    text = g_strdup_printf ("in %s, as the file says", self->unit);
  else
    text = g_strdup ("as the file says (it gives no unit)");
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
            = relative ? self->file_spacing[a] : sv_spacing_relative (self->file_spacing[a], f);
        unedited = unedited && fabs (s[a] - from_file) <= 1e-12 * from_file;
      }
    for (int a = 0; a < 3; a++)
      {
        if (unedited)
          s[a] = relative ? sv_spacing_relative (self->file_spacing[a], f) : self->file_spacing[a];
        else
          s[a] = relative ? sv_spacing_relative (s[a], f) : s[a] * f;
      }
  }
  self->updating++;
  set_spacing_widgets (self, s);
  self->updating--;
  sv_params_panel_changed (self);
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
    s[a] = relative && f > 0 ? sv_spacing_relative (spacing[a], f) : spacing[a];
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
  sv_params_panel_set_note (self, note);
}

/* ---- the channels SLIC segments ---- */

void
sv_params_panel_set_channels (SvParamsPanel *self, guint channels)
{
  GtkStringList *names = GTK_STRING_LIST (gtk_drop_down_get_model (self->segment_channel_dropdown));

  self->updating++;
  gtk_string_list_splice (names, 0, g_list_model_get_n_items (G_LIST_MODEL (names)), NULL);
  gtk_string_list_append (names, "All channels");
  /* Counted from 1, as Fiji's C1, C2; supervox-cli counts from 0. */
  for (guint c = 0; c < channels && channels > 1; c++)
    {
      g_autofree char *name = g_strdup_printf ("Channel %u", c + 1);
      gtk_string_list_append (names, name);
    }
  gtk_drop_down_set_selected (self->segment_channel_dropdown, 0);
  gtk_widget_set_visible (GTK_WIDGET (self->segment_channel_dropdown), channels > 1);
  gtk_widget_set_visible (self->segment_channel_name, channels > 1);
  self->updating--;
}

int
sv_params_panel_get_channel (SvParamsPanel *self)
{
  guint i = gtk_drop_down_get_selected (self->segment_channel_dropdown);

  g_return_val_if_fail (SV_IS_PARAMS_PANEL (self), -1);
  return i == 0 || i == GTK_INVALID_LIST_POSITION ? -1 : (int)i - 1;
}

void
sv_params_panel_set_channel (SvParamsPanel *self, int channel)
{
  GListModel *names = gtk_drop_down_get_model (self->segment_channel_dropdown);

  g_return_if_fail (SV_IS_PARAMS_PANEL (self));
  g_return_if_fail (channel + 1 < (int)g_list_model_get_n_items (names));
  gtk_drop_down_set_selected (self->segment_channel_dropdown, channel < 0 ? 0 : (guint)channel + 1);
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
sv_params_panel_init_fields (SvParamsPanel *self)
{
  show_spacing_unit (self);
  /* The slider spans exactly the counts the entry takes. */
  gtk_adjustment_set_lower (self->n_segments_log_adj,
                            log10 (MAX (1.0, gtk_adjustment_get_lower (self->n_segments_adj))));
  gtk_adjustment_set_upper (self->n_segments_log_adj,
                            log10 (gtk_adjustment_get_upper (self->n_segments_adj)));
  sv_params_panel_show_n_segments (self);
  gtk_scale_set_format_value_func (self->low_scale, format_intensity_cb, self, NULL);
  gtk_scale_set_format_value_func (self->high_scale, format_intensity_cb, self, NULL);
  gtk_scale_set_format_value_func (self->gamma_scale, format_gamma_cb, NULL, NULL);
  add_wheel_guards (self, GTK_WIDGET (self));
}

void
sv_params_panel_class_bind_field_callbacks (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_callback (widget_class, compactness_slid_cb);
  gtk_widget_class_bind_template_callback (widget_class, compactness_typed_cb);
  gtk_widget_class_bind_template_callback (widget_class, n_segments_input_cb);
  gtk_widget_class_bind_template_callback (widget_class, n_segments_slid_cb);
  gtk_widget_class_bind_template_callback (widget_class, n_segments_typed_cb);
  gtk_widget_class_bind_template_callback (widget_class, compactness_input_cb);
  gtk_widget_class_bind_template_callback (widget_class, compactness_output_cb);
  gtk_widget_class_bind_template_callback (widget_class, spacing_mode_toggled_cb);
}

/* Supervox GUI: the selection panel. */
#define G_LOG_DOMAIN "sv-pick-panel"

#include "sv-pick-panel.h"

#include <math.h>

#include "sv-element-words.h"
#include <string.h>

struct _SvPickPanel
{
  GtkWidget parent_instance;

  GtkLabel *hint_label;
  GtkLabel *id_name, *voxels_name, *volume_name;
  gboolean planar; /* a 2D image: pixels, an area, no z */
  GtkLabel *id_value, *voxels_value, *volume_value, *intensity_value, *bounds_value, *centre_value;
  GtkCheckButton *only_check;
};

G_DEFINE_FINAL_TYPE (SvPickPanel, sv_pick_panel, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_SELECTED_ONLY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

char *
sv_format_quantity (double value)
{
  GString *s;
  char *text, *point;
  double step;
  int magnitude;

  if (!isfinite (value))
    return g_strdup ("—");
  if (value == 0)
    return g_strdup ("0");
  magnitude = (int)floor (log10 (fabs (value)));
  step = pow (10.0, magnitude - 3);
  text = g_strdup_printf ("%.*f", MAX (0, 3 - magnitude), round (value / step) * step);
  /* 1.500 -> 1.5 */
  if ((point = strchr (text, '.')))
    {
      char *end = text + strlen (text) - 1;
      while (end > point && *end == '0')
        *end-- = '\0';
      if (end == point)
        *end = '\0';
    }
  point = strchr (text, '.');
  {
    const char *digits = text[0] == '-' ? text + 1 : text;
    gsize n_int = point ? (gsize)(point - digits) : strlen (digits);

    if (n_int < 5)
      return text;
    s = g_string_new (text[0] == '-' ? "-" : "");
    for (gsize i = 0; i < n_int; i++)
      {
        if (i > 0 && (n_int - i) % 3 == 0)
          g_string_append (s, "\u202f");
        g_string_append_c (s, digits[i]);
      }
    g_string_append (s, digits + n_int);
  }
  g_free (text);
  return g_string_free (s, FALSE);
}

const char *
sv_unit_symbol (const char *unit)
{
  if (!unit)
    return NULL;
  if (g_ascii_strcasecmp (unit, "micron") == 0 || g_ascii_strcasecmp (unit, "microns") == 0
      || g_ascii_strcasecmp (unit, "um") == 0 || g_strcmp0 (unit, "\u00b5m") == 0
      || g_strcmp0 (unit, "\u03bcm") == 0)
    return "µm";
  if (g_ascii_strcasecmp (unit, "nanometer") == 0 || g_ascii_strcasecmp (unit, "nm") == 0)
    return "nm";
  if (g_ascii_strcasecmp (unit, "millimeter") == 0 || g_ascii_strcasecmp (unit, "mm") == 0)
    return "mm";
  return unit;
}

/* Held value in the file's own values, as the status bar's hover shows. */
static char *
format_value (double value, double scale, gboolean mean)
{
  if (scale > 0)
    return mean ? g_strdup_printf ("%.1f", value * scale)
                : g_strdup_printf ("%.0f", round (value * scale));
  return g_strdup_printf ("%.4g", value);
}

static void
set_all (SvPickPanel *self, const char *text)
{
  GtkLabel *all[] = { self->id_value,        self->voxels_value, self->volume_value,
                      self->intensity_value, self->bounds_value, self->centre_value };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    gtk_label_set_text (all[i], text);
}

void
sv_pick_panel_show (SvPickPanel *self, gint32 label, const SvLabelStats *s, const SvVolume *volume,
                    double scale)
{
  g_autofree char *text = NULL;
  GString *intensity;
  const char *unit;

  g_return_if_fail (SV_IS_PICK_PANEL (self));
  set_all (self, s ? "—" : "computing…");
  text = g_strdup_printf ("%d", label);
  gtk_label_set_text (self->id_value, text);
  g_clear_pointer (&text, g_free);
  if (!s)
    return;

  text = g_strdup_printf ("%" G_GUINT64_FORMAT, s->n_voxels);
  gtk_label_set_text (self->voxels_value, text);
  g_clear_pointer (&text, g_free);

  unit = volume->spacing_from_file ? sv_unit_symbol (volume->unit) : NULL;
  if (volume->nz == 1)
    {
      /* A 2D image's superpixel has an area. */
      double a = (double)s->n_voxels * volume->spacing[1] * volume->spacing[2];
      g_autofree char *number = sv_format_quantity (a);
      text = unit ? g_strdup_printf ("%s %s²", number, unit)
                  : g_strdup_printf ("%s square pixels (the file gives no pixel size)", number);
    }
  else
    {
      double v = (double)s->n_voxels * volume->spacing[0] * volume->spacing[1] * volume->spacing[2];
      g_autofree char *number = sv_format_quantity (v);
      text = unit ? g_strdup_printf ("%s %s³", number, unit)
                  : g_strdup_printf ("%s cubic voxels (the file gives no voxel size)", number);
    }
  gtk_label_set_text (self->volume_value, text);
  g_clear_pointer (&text, g_free);

  intensity = g_string_new (NULL);
  for (guint c = 0; c < MIN (volume->nc, SV_LABEL_STATS_MAX_CHANNELS); c++)
    {
      g_autofree char *mean = format_value (s->mean[c], scale, TRUE);
      g_autofree char *lo = format_value (s->min[c], scale, FALSE);
      g_autofree char *hi = format_value (s->max[c], scale, FALSE);
      g_string_append_printf (intensity, "%smean %s · min %s · max %s", c ? "\n" : "", mean, lo,
                              hi);
    }
  gtk_label_set_text (self->intensity_value, intensity->str);
  g_string_free (intensity, TRUE);

  /* x, y, z as the status bar's hover orders them; no z in 2D. */
  if (volume->nz == 1)
    text = g_strdup_printf ("x %u–%u · y %u–%u", s->lo[2], s->hi[2], s->lo[1], s->hi[1]);
  else
    text = g_strdup_printf ("x %u–%u · y %u–%u · z %u–%u", s->lo[2], s->hi[2], s->lo[1], s->hi[1],
                            s->lo[0], s->hi[0]);
  gtk_label_set_text (self->bounds_value, text);
  g_clear_pointer (&text, g_free);
  if (volume->nz == 1)
    text = g_strdup_printf ("x %.1f · y %.1f", s->centre[2], s->centre[1]);
  else
    text = g_strdup_printf ("x %.1f · y %.1f · z %.1f", s->centre[2], s->centre[1], s->centre[0]);
  gtk_label_set_text (self->centre_value, text);
}

void
sv_pick_panel_clear (SvPickPanel *self)
{
  g_return_if_fail (SV_IS_PICK_PANEL (self));
  set_all (self, "—");
}

void
sv_pick_panel_set_planar (SvPickPanel *self, gboolean planar)
{
  const SvElementWords *words = sv_element_words (planar);
  g_autofree char *hint = NULL, *id = NULL, *count = NULL;

  g_return_if_fail (SV_IS_PICK_PANEL (self));
  self->planar = planar;
  hint = g_strdup_printf ("Click a %s to select it; Esc clears.", words->supervoxel);
  id = g_strdup_printf ("%c%s", g_ascii_toupper (words->supervoxel[0]), words->supervoxel + 1);
  count = g_strdup_printf ("%c%s", g_ascii_toupper (words->voxels[0]), words->voxels + 1);
  gtk_label_set_text (self->hint_label, hint);
  gtk_label_set_text (self->id_name, id);
  gtk_label_set_text (self->voxels_name, count);
  gtk_label_set_text (self->volume_name, planar ? "Area" : "Volume");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->voxels_name),
                               planar ? "its pixel count" : "its voxel count");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->volume_name),
                               planar ? "pixels × the file's pixel size"
                                      : "voxels × the file's voxel size");
}

gboolean
sv_pick_panel_get_selected_only (SvPickPanel *self)
{
  return gtk_check_button_get_active (self->only_check);
}

void
sv_pick_panel_set_selected_only (SvPickPanel *self, gboolean only)
{
  gtk_check_button_set_active (self->only_check, only);
}

const char *
sv_pick_panel_get_text (SvPickPanel *self, const char *row)
{
  struct
  {
    const char *name;
    GtkLabel *label;
  } rows[] = {
    { "id", self->id_value },         { "voxels", self->voxels_value },
    { "volume", self->volume_value }, { "intensity", self->intensity_value },
    { "bounds", self->bounds_value }, { "centre", self->centre_value },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    if (g_strcmp0 (rows[i].name, row) == 0)
      return gtk_label_get_text (rows[i].label);
  return NULL;
}

static void
only_toggled_cb (SvPickPanel *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_ONLY]);
}

GtkWidget *
sv_pick_panel_new (void)
{
  return g_object_new (SV_TYPE_PICK_PANEL, NULL);
}

static void
sv_pick_panel_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_SELECTED_ONLY:
      g_value_set_boolean (value, sv_pick_panel_get_selected_only (SV_PICK_PANEL (object)));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_pick_panel_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_SELECTED_ONLY:
      sv_pick_panel_set_selected_only (SV_PICK_PANEL (object), g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_pick_panel_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), SV_TYPE_PICK_PANEL);
  /* The template's unnamed top child too. */
  for (GtkWidget *child; (child = gtk_widget_get_first_child (GTK_WIDGET (object)));)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (sv_pick_panel_parent_class)->dispose (object);
}

static void
sv_pick_panel_class_init (SvPickPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sv_pick_panel_dispose;
  object_class->get_property = sv_pick_panel_get_property;
  object_class->set_property = sv_pick_panel_set_property;
  properties[PROP_SELECTED_ONLY]
      = g_param_spec_boolean ("selected-only", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-pick-panel.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, SvPickPanel, name)
  BIND (hint_label);
  BIND (id_name);
  BIND (voxels_name);
  BIND (volume_name);
  BIND (id_value);
  BIND (voxels_value);
  BIND (volume_value);
  BIND (intensity_value);
  BIND (bounds_value);
  BIND (centre_value);
  BIND (only_check);
#undef BIND
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "sv-pick-panel");
}

static void
sv_pick_panel_init (SvPickPanel *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect_swapped (self->only_check, "toggled", G_CALLBACK (only_toggled_cb), self);
}

/* Supervox GUI: the parameter panel's values for each file: the defaults
 * the window derives from a file (segments from its size, compactness 10
 * for a colour photo, clustered in Lab), what a new file does to the
 * values the user changed (kept, and said so, with Reset), and the
 * supervoxel size that the segment count gives, beside the field.
 *
 * Segments aim at supervoxels of about 10³ voxels in 3D and 20² pixels in
 * 2D: ten voxels across still average out noise in a supervoxel's mean
 * and follow the outline of a nucleus, and 20 pixels is the size
 * scikit-image's photo examples give (a 640×480 photo gets about 770). */
#define G_LOG_DOMAIN "sv-params-panel"

#include "sv-params-panel-private.h"

#include <math.h>
#include <string.h>

#define TARGET_VOXELS_3D 1000.0
#define TARGET_PIXELS_2D 400.0

gint64
sv_params_default_n_segments (guint nz, guint ny, guint nx, double most)
{
  double voxels = (double)nz * ny * nx;
  double n = voxels / (nz > 1 ? TARGET_VOXELS_3D : TARGET_PIXELS_2D);
  double mag;

  /* Two significant digits: a number that reads as chosen, not computed. */
  if (n >= 100)
    {
      mag = pow (10.0, floor (log10 (n)) - 1);
      n = round (n / mag) * mag;
    }
  return (gint64)CLAMP (round (n), 1.0, most);
}

/* "1 200" with a narrow no-break space between groups of three digits
 * (a wrapped line never splits a number). */
static char *
group_digits (double value)
{
  g_autofree char *digits = g_strdup_printf ("%.0f", value);
  GString *s = g_string_new (NULL);
  gsize n = strlen (digits);

  for (gsize i = 0; i < n; i++)
    {
      if (i > 0 && (n - i) % 3 == 0)
        g_string_append (s, "\u202f");
      g_string_append_c (s, digits[i]);
    }
  return g_string_free (s, FALSE);
}

/* Two significant digits (three from 1 000), grouped when large. */
static char *
format_amount (double value)
{
  if (value >= 100)
    {
      double mag = pow (10.0, floor (log10 (value)) - (value >= 1000 ? 2 : 1));
      return group_digits (round (value / mag) * mag);
    }
  return g_strdup_printf ("%.2g", value);
}

/* Metres per unit, for the units files give. */
static double
unit_metres (const char *unit)
{
  static const struct
  {
    const char *name;
    double metres;
  } units[] = { { "nm", 1e-9 },     { "µm", 1e-6 },     { "um", 1e-6 },
                { "micron", 1e-6 }, { "microns", 1e-6 }, { "mm", 1e-3 },
                { "cm", 1e-2 },     { "m", 1.0 } };

  for (guint i = 0; unit && i < G_N_ELEMENTS (units); i++)
    if (g_strcmp0 (unit, units[i].name) == 0)
      return units[i].metres;
  return 0.0;
}

/* A physical size of `dim` dimensions, in the largest of mm, µm and nm that
 * keeps it at 0.001 or more ("0.38 µm³", "0.0021 µm³", "640 nm²"). */
static char *
format_physical (double amount, const char *unit, int dim)
{
  static const struct
  {
    const char *name;
    double metres;
  } scales[] = { { "mm", 1e-3 }, { "µm", 1e-6 }, { "nm", 1e-9 } };
  const char *power = dim == 3 ? "³" : "²";
  double m = unit_metres (unit);
  g_autofree char *text = NULL;

  if (m <= 0)
    {
      text = format_amount (amount);
      return g_strdup_printf ("%s %s%s", text, unit, power);
    }
  for (guint i = 0; i < G_N_ELEMENTS (scales); i++)
    {
      double v = amount * pow (m / scales[i].metres, dim);
      if (v >= 0.001 || i + 1 == G_N_ELEMENTS (scales))
        {
          text = format_amount (v);
          return g_strdup_printf ("%s %s%s", text, scales[i].name, power);
        }
    }
  return NULL;
}

static void
update_segment_size (SvParamsPanel *self)
{
  double voxels = (double)self->shape[0] * self->shape[1] * self->shape[2];
  double n = gtk_adjustment_get_value (self->n_segments_adj);
  double each = voxels / MAX (n, 1.0);
  gboolean planar = self->shape[0] == 1;
  g_autofree char *count = NULL, *physical = NULL, *text = NULL;

  if (voxels <= 0)
    {
      gtk_label_set_text (self->segment_size_label, "");
      return;
    }
  count = format_amount (each);
  if (self->unit && *self->unit)
    {
      const double *s = self->file_spacing;
      physical = format_physical (each * (planar ? s[1] * s[2] : s[0] * s[1] * s[2]), self->unit,
                                  planar ? 2 : 3);
    }
  /* The physical size on a line of its own: how many lines the label takes
   * then depends on the file alone, not on the count, so that the rows
   * below do not jump as the segments change. */
  text = g_strdup_printf ("≈ %s %s each%s%s", count, planar ? "px" : "voxels", physical ? "\n" : "",
                          physical ? physical : "");
  gtk_label_set_text (self->segment_size_label, text);
}

const char *
sv_params_panel_get_segment_size_text (SvParamsPanel *self)
{
  g_return_val_if_fail (SV_IS_PARAMS_PANEL (self), NULL);
  return gtk_label_get_text (self->segment_size_label);
}

static void
show_kept (SvParamsPanel *self, const char *text)
{
  gtk_label_set_text (self->kept_label, text ? text : "");
  gtk_widget_set_visible (self->kept_box, text != NULL);
}

void
sv_params_panel_hide_kept (SvParamsPanel *self)
{
  show_kept (self, NULL);
}

const char *
sv_params_panel_get_kept_text (SvParamsPanel *self)
{
  g_return_val_if_fail (SV_IS_PARAMS_PANEL (self), NULL);
  return gtk_widget_get_visible (self->kept_box) ? gtk_label_get_text (self->kept_label) : NULL;
}

/* Each value the user set (it differs from the last file's default) stays
 * in `next` and is named in `kept`. */
static void
keep_changed (const SvSlicParams *cur, const SvSlicParams *old, SvSlicParams *next,
              GPtrArray *kept)
{
  /* Values as the panel and the command line write them (0.123456789,
   * not %g's 0.123457, nor a locale's comma). */
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

#define KEEP(field, ...)                                                                           \
  if (cur->field != old->field)                                                                    \
    {                                                                                              \
      next->field = cur->field;                                                                    \
      g_ptr_array_add (kept, g_strdup_printf (__VA_ARGS__));                                       \
    }
  KEEP (n_segments, "%" G_GINT64_FORMAT " segments", cur->n_segments);
  KEEP (compactness, "compactness %s", sv_format_double (buf, cur->compactness));
  KEEP (max_num_iter, "%d iterations", cur->max_num_iter);
  KEEP (sigma[0], "sigma %s", sv_format_double (buf, cur->sigma[0]));
  KEEP (enforce_connectivity, "connectivity %s", cur->enforce_connectivity ? "on" : "off");
  KEEP (min_size_factor, "smallest size %s", sv_format_double (buf, cur->min_size_factor));
  KEEP (max_size_factor, "largest size %s", sv_format_double (buf, cur->max_size_factor));
  KEEP (slic_zero, "SLIC-zero %s", cur->slic_zero ? "on" : "off");
  KEEP (start_label, "first label %d", cur->start_label);
  KEEP (connectivity_rule, "the %s connectivity rule",
        cur->connectivity_rule == SV_CONNECTIVITY_RULE_LEGACY ? "legacy" : "connected");
#undef KEEP
  next->sigma[1] = next->sigma[2] = next->sigma[0];
}

void
sv_params_panel_set_file (SvParamsPanel *self, const guint shape[3], guint channels)
{
  SvSlicParams cur, fresh, next;
  g_autoptr (GPtrArray) kept = g_ptr_array_new_with_free_func (g_free);

  g_return_if_fail (SV_IS_PARAMS_PANEL (self));
  sv_params_panel_get_params (self, &cur);
  memcpy (self->shape, shape, sizeof self->shape);
  /* A 2D image has no z to space. */
  gtk_widget_set_visible (self->spacing_z_name, shape[0] > 1);
  gtk_widget_set_visible (self->spacing_z_spin, shape[0] > 1);
  if (self->keep_for_level)
    {
      self->keep_for_level = FALSE;
      update_segment_size (self);
      return;
    }
  sv_params_panel_set_channels (self, channels);
  fresh = self->template_params;
  fresh.n_segments = sv_params_default_n_segments (
      shape[0], shape[1], shape[2], gtk_adjustment_get_upper (self->n_segments_adj));
  /* Colour photos are clustered in Lab, where scikit-image's compactness
   * of 10 is the sensible start. */
  if (shape[0] == 1 && channels == 3)
    fresh.compactness = 10.0;
  /* The spacing is the new file's (set with it). */
  memcpy (fresh.spacing, cur.spacing, sizeof fresh.spacing);
  next = fresh;
  if (self->has_defaults)
    keep_changed (&cur, &self->defaults, &next, kept);
  self->defaults = fresh;
  self->has_defaults = TRUE;
  sv_params_panel_apply_params (self, &next);
  update_segment_size (self);
  if (kept->len == 0)
    show_kept (self, NULL);
  else
    {
      GString *s = g_string_new ("Kept ");
      g_autofree char *text = NULL;
      for (guint i = 0; i < kept->len; i++)
        g_string_append_printf (s, "%s%s", i == 0 ? "" : i + 1 == kept->len ? " and " : ", ",
                                (char *)g_ptr_array_index (kept, i));
      g_string_append (s, " from the last file.");
      text = g_string_free (s, FALSE);
      show_kept (self, text);
    }
}

void
sv_params_panel_reset_to_defaults (SvParamsPanel *self)
{
  SvSlicParams p;

  g_return_if_fail (SV_IS_PARAMS_PANEL (self));
  if (!self->has_defaults)
    return;
  sv_params_panel_get_params (self, &p);
  /* The spacing stays: it is the file's, or what the user made of it. */
  memcpy (self->defaults.spacing, p.spacing, sizeof p.spacing);
  sv_params_panel_set_params (self, &self->defaults);
}

static void
reset_clicked_cb (SvParamsPanel *self)
{
  sv_params_panel_reset_to_defaults (self);
}

void
sv_params_panel_init_defaults (SvParamsPanel *self)
{
  sv_params_panel_get_params (self, &self->template_params);
  g_signal_connect_swapped (self->n_segments_adj, "value-changed",
                            G_CALLBACK (update_segment_size), self);
  show_kept (self, NULL);
}

void
sv_params_panel_class_bind_defaults (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_child (widget_class, SvParamsPanel, segment_size_label);
  gtk_widget_class_bind_template_child (widget_class, SvParamsPanel, kept_box);
  gtk_widget_class_bind_template_child (widget_class, SvParamsPanel, kept_label);
  gtk_widget_class_bind_template_callback (widget_class, reset_clicked_cb);
}

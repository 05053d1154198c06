/* Supervox GUI: the quality panel: numbers and small plots of the labels
 * on screen. */
#define G_LOG_DOMAIN "sv-quality-panel"

#include "sv-quality-panel.h"

#include <math.h>

#include "sv-axis-labels.h"
#include "sv-convergence-plot.h"
#include "sv-element-words.h"

struct _SvQualityPanel
{
  GtkWidget parent_instance;

  GtkLabel *state_label;
  GtkLabel *labels_name, *labels_value, *sizes_name, *sizes_value;
  GtkLabel *explained_variation_value, *compactness_value;
  GtkLabel *truth_value;
  GtkLabel *boundary_recall_name, *undersegmentation_name, *achievable_accuracy_name;
  GtkLabel *boundary_recall_value, *undersegmentation_value, *achievable_accuracy_value;
  GtkLabel *time_value, *time_legend, *compare_value;
  GtkDrawingArea *size_plot, *time_plot;
  GtkLabel *convergence_name, *convergence_value;
  GtkDrawingArea *convergence_plot;
  SvConvergence *convergence;
  int convergence_step;

  SvQuality *quality, *other;
  SvJobResult *result, *other_result;
  gboolean shown_pinned;
  gboolean planar; /* a 2D image: pixels, not voxels */
};

G_DEFINE_FINAL_TYPE (SvQualityPanel, sv_quality_panel, GTK_TYPE_WIDGET)

/* Stage colours of the time bar: prepare, iterate, connect. */
static const double stage_rgb[3][3]
    = { { 0.55, 0.55, 0.95 }, { 0.95, 0.6, 0.2 }, { 0.3, 0.8, 0.5 } };

static double
median_size (const SvQuality *q)
{
  return q->metrics.size_median;
}

/* "0.873" and, with another result, " (Δ +0.023)". */
static char *
format_metric (double value, const SvQuality *other, double other_value, const char *format)
{
  g_autofree char *text = NULL;

  if (isnan (value))
    return g_strdup ("—");
  text = g_strdup_printf (format, value);
  if (other && !isnan (other_value))
    {
      g_autofree char *delta = g_strdup_printf ("%+.3f", value - other_value);
      return g_strdup_printf ("%s  (Δ %s)", text, delta);
    }
  return g_steal_pointer (&text);
}

static char *
backend_words (const char *name)
{
  const SvBackendClass *ran = sv_backend_class_lookup (name);

  /* "on the GPU", "on the CPU". */
  return ran != NULL ? g_strconcat ("on ", sv_backend_class_display_name (ran, name), NULL)
                     : g_strdup (name ? name : "");
}

/* A stage's time, short: "0.4 ms", "360 ms", "12.40 s". */
static char *
format_stage_time (double seconds)
{
  if (seconds < 0.00095)
    return g_strdup_printf ("%.1f\u202fms", seconds * 1e3);
  if (seconds < 0.9995)
    return g_strdup_printf ("%.0f\u202fms", seconds * 1e3);
  return g_strdup_printf ("%.2f\u202fs", seconds);
}

/* The time bar's legend: each stage's colour before its name and time,
 * held together (no-break spaces) so that a wrapped line never leaves a
 * colour beside the time of the stage before it; connect always starts
 * the second line, so that the tab is as tall whatever the times. */
static char *
time_legend_markup (const SvJobResult *r)
{
  static const char *const names[3] = { "prepare", "iterate", "connect" };
  double seconds[3]
      = { r->stats.seconds_prepare, r->stats.seconds_iterate, r->stats.seconds_connect };
  GString *s = g_string_new ("<small>");

  for (guint i = 0; i < 3; i++)
    {
      /* A run stopped in its iterations timed no stage: no time, not 0. */
      g_autofree char *time = r->in_progress_iteration > 0        ? g_strdup ("—")
                              : i == 0 && r->stats.prepare_reused ? g_strdup ("reused")
                                                                  : format_stage_time (seconds[i]);
      g_string_append_printf (s, "%s<span foreground=\"#%02x%02x%02x\">■</span>\u202f%s\u00a0%s",
                              i == 2 ? "\n" : i ? "\u2002" : "", (guint)(stage_rgb[i][0] * 255),
                              (guint)(stage_rgb[i][1] * 255), (guint)(stage_rgb[i][2] * 255),
                              names[i], time);
    }
  g_string_append (s, "</small>");
  return g_string_free (s, FALSE);
}

static void
show_truth_rows (SvQualityPanel *self, gboolean truth)
{
  GtkWidget *rows[] = {
    GTK_WIDGET (self->boundary_recall_name),     GTK_WIDGET (self->boundary_recall_value),
    GTK_WIDGET (self->undersegmentation_name),   GTK_WIDGET (self->undersegmentation_value),
    GTK_WIDGET (self->achievable_accuracy_name), GTK_WIDGET (self->achievable_accuracy_value)
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    gtk_widget_set_visible (rows[i], truth);
  gtk_widget_set_visible (GTK_WIDGET (self->truth_value), !truth);
}

static void
update_texts (SvQualityPanel *self)
{
  const SvQuality *q = self->quality, *o = self->other;
  const SvJobResult *r = self->result;
  const SvElementWords *words = sv_element_words (self->planar);
  g_autofree char *text = NULL;

  /* Superpixels of a 2D image, supervoxels of a volume. */
  text = g_strdup_printf ("%c%s", g_ascii_toupper (words->supervoxels[0]), words->supervoxels + 1);
  gtk_label_set_text (self->labels_name, text);
  g_clear_pointer (&text, g_free);
  text = g_strdup_printf ("Size (%s)", words->voxels);
  gtk_label_set_text (self->sizes_name, text);
  g_clear_pointer (&text, g_free);
  show_truth_rows (self, q && q->has_truth);

  if (!q || !r)
    {
      GtkLabel *all[] = { self->labels_value,
                          self->sizes_value,
                          self->explained_variation_value,
                          self->compactness_value,
                          self->boundary_recall_value,
                          self->undersegmentation_value,
                          self->achievable_accuracy_value,
                          self->time_value,
                          self->compare_value };
      for (guint i = 0; i < G_N_ELEMENTS (all); i++)
        gtk_label_set_text (all[i], "—");
      gtk_label_set_text (self->time_legend, "");
      gtk_widget_queue_draw (GTK_WIDGET (self->size_plot));
      gtk_widget_queue_draw (GTK_WIDGET (self->time_plot));
      return;
    }

  text = g_strdup_printf ("%" G_GSIZE_FORMAT, q->metrics.n_labels);
  if (o)
    {
      g_autofree char *t
          = g_strdup_printf ("%s  (Δ %+" G_GINT64_FORMAT ")", text,
                             (gint64)q->metrics.n_labels - (gint64)o->metrics.n_labels);
      g_clear_pointer (&text, g_free);
      text = g_steal_pointer (&t);
    }
  gtk_label_set_text (self->labels_value, text);
  g_clear_pointer (&text, g_free);

  /* Smallest · median · largest on one line (three six-digit counts did
   * not fit: from 100 000 on they are shortened, and the tooltip has them
   * in full); the size asked for is the plot's red line, with its number
   * under it. */
  {
    const guint64 sizes[3] = { (guint64)llround (q->metrics.size_min),
                               (guint64)llround (median_size (q)),
                               (guint64)llround (q->metrics.size_max) };
    const gboolean shorten = sizes[2] >= 100000;
    char *full[3], *shown[3];
    g_autofree char *tip = NULL;

    for (guint i = 0; i < 3; i++)
      {
        full[i] = sv_format_count (sizes[i]);
        shown[i] = shorten ? sv_format_count_short (sizes[i]) : g_strdup (full[i]);
      }
    text = g_strdup_printf ("%s · %s · %s", shown[0], shown[1], shown[2]);
    tip = g_strdup_printf ("voxels per supervoxel: smallest %s · median %s (blue) · largest %s; "
                           "the red dashed line is the size asked for (volume ÷ segments)",
                           full[0], full[1], full[2]);
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->sizes_value), tip);
    for (guint i = 0; i < 3; i++)
      {
        g_free (full[i]);
        g_free (shown[i]);
      }
  }
  gtk_label_set_text (self->sizes_value, text);
  g_clear_pointer (&text, g_free);

  text = format_metric (q->metrics.explained_variation, o, o ? o->metrics.explained_variation : NAN,
                        "%.3f");
  gtk_label_set_text (self->explained_variation_value, text);
  g_clear_pointer (&text, g_free);
  text = format_metric (q->metrics.compactness, o, o ? o->metrics.compactness : NAN, "%.3f");
  gtk_label_set_text (self->compactness_value, text);
  g_clear_pointer (&text, g_free);

  if (q->has_truth)
    {
      text = format_metric (q->metrics.boundary_recall, o, o ? o->metrics.boundary_recall : NAN,
                            "%.3f");
      gtk_label_set_text (self->boundary_recall_value, text);
      g_clear_pointer (&text, g_free);
      text = format_metric (q->metrics.undersegmentation, o, o ? o->metrics.undersegmentation : NAN,
                            "%.3f");
      gtk_label_set_text (self->undersegmentation_value, text);
      g_clear_pointer (&text, g_free);
      text = format_metric (q->metrics.asa, o, o ? o->metrics.asa : NAN, "%.3f");
      gtk_label_set_text (self->achievable_accuracy_value, text);
      g_clear_pointer (&text, g_free);
    }
  else
    {
      gtk_label_set_text (self->boundary_recall_value, "—");
      gtk_label_set_text (self->undersegmentation_value, "—");
      gtk_label_set_text (self->achievable_accuracy_value, "—");
    }

  {
    g_autofree char *where = backend_words (r->backend_name);
    text = g_strdup_printf ("%.3f s %s", r->seconds_total, where);
  }
  gtk_label_set_text (self->time_value, text);
  g_clear_pointer (&text, g_free);
  text = time_legend_markup (r);
  gtk_label_set_markup (self->time_legend, text);
  g_clear_pointer (&text, g_free);

  if (o)
    {
      /* The live analysis holds the index, against the pin it was compared
       * with: none while that is another pin. */
      const SvJobResult *ro = self->other_result;
      double ari = ro && q->reference_generation == ro->generation ? q->reference_ari
                   : o->reference_generation == r->generation      ? o->reference_ari
                                                                   : NAN;
      if (isnan (ari))
        text = g_strdup_printf ("%s shown", self->shown_pinned ? "pinned" : "live");
      else
        text = g_strdup_printf ("%s shown · ARI %.4f", self->shown_pinned ? "pinned" : "live", ari);
    }
  else
    text = g_strdup ("none (P pins)");
  gtk_label_set_text (self->compare_value, text);
  g_clear_pointer (&text, g_free);

  gtk_widget_queue_draw (GTK_WIDGET (self->size_plot));
  gtk_widget_queue_draw (GTK_WIDGET (self->time_plot));
}

/* ---- plots ---- */

static void
draw_marker (cairo_t *cr, double x, double height, double r, double g, double b, gboolean dashed)
{
  cairo_save (cr);
  cairo_set_source_rgb (cr, r, g, b);
  cairo_set_line_width (cr, 1.5);
  if (dashed)
    cairo_set_dash (cr, (double[]){ 3.0, 2.0 }, 2, 0.0);
  cairo_move_to (cr, x, 0);
  cairo_line_to (cr, x, height);
  cairo_stroke (cr);
  cairo_restore (cr);
}

/* Bars of the size histogram on a log axis that also spans the target
 * size; the median (blue) and the target (red, dashed) as lines. */
static void
draw_sizes (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SvQualityPanel *self = data;
  const SvQuality *q = self->quality;
  double lo, hi, plot_h = height - 13;
  guint64 most = 0;

  cairo_set_source_rgba (cr, 0.5, 0.5, 0.5, 0.12);
  cairo_rectangle (cr, 0, 0, width, plot_h);
  cairo_fill (cr);
  if (!q || q->size_edges[SV_QUALITY_SIZE_BINS] <= 0)
    return;
  lo = log (q->size_edges[0]);
  hi = log (q->size_edges[SV_QUALITY_SIZE_BINS]);
  if (q->target_size > 0 && isfinite (q->target_size))
    {
      lo = MIN (lo, log (q->target_size));
      hi = MAX (hi, log (q->target_size));
    }
  /* A little room on both sides so that the end bars and lines show. */
  lo -= 0.05 * MAX (hi - lo, 1.0);
  hi += 0.05 * MAX (hi - lo, 1.0);
  for (guint b = 0; b < SV_QUALITY_SIZE_BINS; b++)
    most = MAX (most, q->size_counts[b]);
  cairo_set_source_rgb (cr, 0.45, 0.6, 0.8);
  for (guint b = 0; b < SV_QUALITY_SIZE_BINS && most; b++)
    {
      double x0 = (log (q->size_edges[b]) - lo) / (hi - lo) * width;
      double x1 = (log (q->size_edges[b + 1]) - lo) / (hi - lo) * width;
      double h = (double)q->size_counts[b] / most * (plot_h - 2);
      cairo_rectangle (cr, x0, plot_h - h, MAX (x1 - x0 - 0.5, 1.0), h);
    }
  cairo_fill (cr);
  draw_marker (cr, (log (median_size (q)) - lo) / (hi - lo) * width, plot_h, 0.15, 0.35, 0.9,
               FALSE);
  if (q->target_size > 0 && isfinite (q->target_size))
    draw_marker (cr, (log (q->target_size) - lo) / (hi - lo) * width, plot_h, 0.9, 0.2, 0.2, TRUE);

  /* Under the axis: the smallest and largest sizes at their bars, and the
   * size asked for under its red line, each only where it does not run
   * into one placed before it. */
  {
    double xs[3] = { (log (q->size_edges[0]) - lo) / (hi - lo) * width,
                     (log (q->size_edges[SV_QUALITY_SIZE_BINS]) - lo) / (hi - lo) * width,
                     q->target_size > 0 && isfinite (q->target_size)
                         ? (log (q->target_size) - lo) / (hi - lo) * width
                         : -1.0 };
    double values[3] = { q->size_edges[0], q->size_edges[SV_QUALITY_SIZE_BINS], q->target_size };
    static const double anchors[3] = { 0.0, 1.0, 0.5 };
    PangoLayout *layouts[3] = { NULL, NULL, NULL };
    SvAxisLabel labels[3];
    guint n = xs[2] >= 0 ? 3 : 2;
    GdkRGBA fg;

    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    for (guint i = 0; i < n; i++)
      {
        g_autofree char *number = sv_format_count ((guint64)llround (values[i]));
        g_autofree char *markup = g_strdup_printf ("<small>%s</small>", number);
        int tw, th;

        layouts[i] = gtk_widget_create_pango_layout (GTK_WIDGET (area), NULL);
        pango_layout_set_markup (layouts[i], markup, -1);
        pango_layout_get_pixel_size (layouts[i], &tw, &th);
        labels[i] = (SvAxisLabel){ .x = xs[i], .width = tw, .anchor = anchors[i] };
      }
    /* One size for all: the same number once. */
    if (llround (values[0]) == llround (values[1]))
      labels[1].width = width + 1.0;
    sv_axis_labels_place (labels, n, width, 6.0);
    for (guint i = 0; i < n; i++)
      {
        if (labels[i].shown)
          {
            if (i == 2)
              cairo_set_source_rgb (cr, 0.9, 0.2, 0.2);
            else
              gdk_cairo_set_source_rgba (cr, &fg);
            cairo_move_to (cr, labels[i].left, plot_h);
            pango_cairo_show_layout (cr, layouts[i]);
          }
        g_object_unref (layouts[i]);
      }
  }
}

/* One bar split by the time each stage took. */
static void
draw_times (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SvQualityPanel *self = data;
  const SvJobResult *r = self->result;
  double t[3], total, x = 0;

  cairo_set_source_rgba (cr, 0.5, 0.5, 0.5, 0.12);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_fill (cr);
  if (!r)
    return;
  t[0] = r->stats.seconds_prepare;
  t[1] = r->stats.seconds_iterate;
  t[2] = r->stats.seconds_connect;
  total = t[0] + t[1] + t[2];
  if (!(total > 0))
    return;
  for (guint s = 0; s < 3; s++)
    {
      double w = t[s] / total * width;
      cairo_set_source_rgb (cr, stage_rgb[s][0], stage_rgb[s][1], stage_rgb[s][2]);
      cairo_rectangle (cr, x, 0, w, height);
      cairo_fill (cr);
      x += w;
    }
}

/* Teaching's convergence plot (sv-convergence-plot.c), in the theme's ink. */
static void
draw_convergence (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SvQualityPanel *self = data;
  GdkRGBA fg;

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  sv_convergence_plot_draw (cr, width, height, self->convergence, self->convergence_step,
                            (const double[4]){ fg.red, fg.green, fg.blue, fg.alpha });
}

static void
update_convergence_text (SvQualityPanel *self)
{
  const SvConvergence *c = self->convergence;
  g_autofree char *text = NULL;
  int step = self->convergence_step;

  gtk_widget_set_visible (GTK_WIDGET (self->convergence_name), c != NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->convergence_value), c != NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->convergence_plot), c != NULL);
  if (!c)
    return;
  if (step >= 1 && (guint)step <= c->n_iterations)
    text = g_strdup_printf ("iteration %d of %u: %" G_GUINT64_FORMAT
                            " %s changed cluster, a centre moved %.2f %s on average",
                            step, c->n_iterations, c->changed[step - 1],
                            sv_element_words (self->planar)->voxels, c->mean_moved[step - 1],
                            sv_element_words (self->planar)->voxels);
  else
    text = g_strdup_printf ("%u iterations", c->n_iterations);
  gtk_label_set_text (self->convergence_value, text);
  gtk_widget_queue_draw (GTK_WIDGET (self->convergence_plot));
}

void
sv_quality_panel_set_convergence (SvQualityPanel *self, SvConvergence *convergence, int step)
{
  g_return_if_fail (SV_IS_QUALITY_PANEL (self));
  if (convergence)
    sv_convergence_ref (convergence);
  g_clear_pointer (&self->convergence, sv_convergence_unref);
  self->convergence = convergence;
  self->convergence_step = step;
  update_convergence_text (self);
}

SvConvergence *
sv_quality_panel_get_convergence (SvQualityPanel *self)
{
  return self->convergence;
}

int
sv_quality_panel_get_convergence_step (SvQualityPanel *self)
{
  return self->convergence_step;
}

/* ---- API ---- */

void
sv_quality_panel_set (SvQualityPanel *self, SvQuality *quality, SvJobResult *result,
                      SvQuality *other, SvJobResult *other_result, gboolean shown_pinned)
{
  g_return_if_fail (SV_IS_QUALITY_PANEL (self));
  if (quality)
    sv_quality_ref (quality);
  if (other)
    sv_quality_ref (other);
  if (result)
    sv_job_result_ref (result);
  if (other_result)
    sv_job_result_ref (other_result);
  g_clear_pointer (&self->quality, sv_quality_unref);
  g_clear_pointer (&self->other, sv_quality_unref);
  g_clear_pointer (&self->result, sv_job_result_unref);
  g_clear_pointer (&self->other_result, sv_job_result_unref);
  self->quality = quality;
  self->other = other;
  self->result = result;
  self->other_result = other_result;
  self->shown_pinned = shown_pinned;
  update_texts (self);
}

void
sv_quality_panel_set_planar (SvQualityPanel *self, gboolean planar)
{
  g_return_if_fail (SV_IS_QUALITY_PANEL (self));
  self->planar = planar;
  update_texts (self);
}

void
sv_quality_panel_set_state (SvQualityPanel *self, const char *state)
{
  g_return_if_fail (SV_IS_QUALITY_PANEL (self));
  gtk_label_set_text (self->state_label, state ? state : "");
  gtk_widget_set_visible (GTK_WIDGET (self->state_label), state != NULL);
}

const char *
sv_quality_panel_get_state (SvQualityPanel *self)
{
  g_return_val_if_fail (SV_IS_QUALITY_PANEL (self), NULL);
  return gtk_widget_get_visible (GTK_WIDGET (self->state_label))
             ? gtk_label_get_text (self->state_label)
             : NULL;
}

SvQuality *
sv_quality_panel_get_quality (SvQualityPanel *self)
{
  return self->quality;
}

const char *
sv_quality_panel_get_text (SvQualityPanel *self, const char *row)
{
  struct
  {
    const char *name;
    GtkLabel *label;
  } rows[] = {
    { "labels", self->labels_value },
    { "sizes", self->sizes_value },
    { "explained-variation", self->explained_variation_value },
    { "compactness", self->compactness_value },
    { "boundary-recall", self->boundary_recall_value },
    { "undersegmentation", self->undersegmentation_value },
    { "achievable-accuracy", self->achievable_accuracy_value },
    { "time", self->time_value },
    { "truth", self->truth_value },
    { "time-legend", self->time_legend },
    { "compare", self->compare_value },
    { "convergence", self->convergence_value },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    if (g_strcmp0 (rows[i].name, row) == 0)
      return gtk_label_get_text (rows[i].label);
  return NULL;
}

GtkWidget *
sv_quality_panel_new (void)
{
  return g_object_new (SV_TYPE_QUALITY_PANEL, NULL);
}

static void
sv_quality_panel_dispose (GObject *object)
{
  SvQualityPanel *self = SV_QUALITY_PANEL (object);

  g_clear_pointer (&self->quality, sv_quality_unref);
  g_clear_pointer (&self->other, sv_quality_unref);
  g_clear_pointer (&self->result, sv_job_result_unref);
  g_clear_pointer (&self->other_result, sv_job_result_unref);
  g_clear_pointer (&self->convergence, sv_convergence_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), SV_TYPE_QUALITY_PANEL);
  /* The template's unnamed top child too. */
  for (GtkWidget *child; (child = gtk_widget_get_first_child (GTK_WIDGET (object)));)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (sv_quality_panel_parent_class)->dispose (object);
}

static void
sv_quality_panel_class_init (SvQualityPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sv_quality_panel_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-quality-panel.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, SvQualityPanel, name)
  BIND (state_label);
  BIND (labels_name);
  BIND (labels_value);
  BIND (sizes_name);
  BIND (sizes_value);
  BIND (truth_value);
  BIND (boundary_recall_name);
  BIND (undersegmentation_name);
  BIND (achievable_accuracy_name);
  BIND (time_legend);
  BIND (explained_variation_value);
  BIND (compactness_value);
  BIND (boundary_recall_value);
  BIND (undersegmentation_value);
  BIND (achievable_accuracy_value);
  BIND (time_value);
  BIND (compare_value);
  BIND (size_plot);
  BIND (time_plot);
  BIND (convergence_name);
  BIND (convergence_value);
  BIND (convergence_plot);
#undef BIND
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "sv-quality-panel");
}

static void
sv_quality_panel_init (SvQualityPanel *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_drawing_area_set_draw_func (self->size_plot, draw_sizes, self, NULL);
  gtk_drawing_area_set_draw_func (self->time_plot, draw_times, self, NULL);
  gtk_drawing_area_set_draw_func (self->convergence_plot, draw_convergence, self, NULL);
  update_texts (self);
}

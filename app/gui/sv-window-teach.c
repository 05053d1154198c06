/* Supervox GUI: teaching mode's words under the views: what the step on
 * screen did, with its numbers. Step 0 is the seeding; step i is one
 * k-means iteration, an assignment inside each centre's search window and
 * then the centre update, and the convergence record (sv-convergence.h)
 * says how many voxels changed cluster in it and how far the centres
 * moved. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include "sv-element-words.h"

#include <math.h>

#include "supervox/sv-seeds.h"

/* The live centres of a result (a masked run can lose some: NaN). */
static gsize
live_centres (const SvJobResult *r)
{
  gsize n = 0;

  for (gsize k = 0; k < r->n_centres; k++)
    n += !isnan (r->centres[k * 3]);
  return n;
}

/* The legend over the note: the marks the views draw. */
#define TEACH_LEGEND_VOLUME                                                                        \
  "<span foreground=\"#ff3350\" weight=\"bold\">●</span> cluster centre on this slice, "         \
  "<span foreground=\"#ff3350\" alpha=\"45%\" size=\"small\">●</span> fainter and smaller: a "   \
  "centre off the slice whose search window still reaches it      "                                \
  "<span foreground=\"#4de6ff\" weight=\"bold\">□</span> search window of the cluster under "    \
  "the pointer: its centre looks for voxels only inside it (2 grid steps each way). Teaching "     \
  "steps skip the connectivity step, so a cluster can show as several pieces."
#define TEACH_LEGEND_PLANAR                                                                        \
  "<span foreground=\"#ff3350\" weight=\"bold\">●</span> cluster centre      "                   \
  "<span foreground=\"#4de6ff\" weight=\"bold\">□</span> search window of the cluster under "    \
  "the pointer: its centre looks for pixels only inside it (2 grid steps each way). Teaching "     \
  "steps skip the connectivity step, so a cluster can show as several pieces."

/* The grid steps of the run, z y x, as "6 × 8 × 8 voxels" (2D: "8 × 8
 * pixels (y × x)"). */
static char *
grid_words (const SvJobResult *r, const SvElementWords *words)
{
  const guint *shape = r->region ? r->region_shape : r->labels_shape;
  guint start[3], step[3];

  sv_regular_grid (shape, (double)r->n_centres, start, step);
  if (shape[0] == 1)
    return g_strdup_printf ("%u × %u %s (y × x)", step[1], step[2], words->voxels);
  return g_strdup_printf ("%u × %u × %u %s (z × y × x)", step[0], step[1], step[2], words->voxels);
}

/* The note for the step of `r`; `c` is its convergence record or NULL
 * while it is being measured. Kept to about two lines so that the views
 * do not jump from step to step. */
static char *
step_note (const SvJobResult *r, const SvConvergence *c, const SvElementWords *words)
{
  const guint *shape = r->region ? r->region_shape : r->labels_shape;
  int step = r->stop_after_iteration, n_iter = r->params.max_num_iter;
  g_autofree char *grid = grid_words (r, words);
  GString *s = g_string_new (NULL);

  if (step == 0)
    {
      g_string_append_printf (s,
                              "Step 0 of %d, seeding: %" G_GSIZE_FORMAT
                              " cluster centres on a regular grid, one every %s, each with colour "
                              "0, as in scikit-image. No %s belongs to a cluster yet.",
                              n_iter, live_centres (r), grid, words->voxel);
      return g_string_free (s, FALSE);
    }
  g_string_append_printf (s,
                          "Step %d of %d. Assignment: each %s joins the nearest centre (colour "
                          "and space) whose search window, 2 grid steps of %s each way, holds it. "
                          "Update: each centre moves to the mean of its %s. ",
                          step, n_iter, words->voxel, grid, words->voxels);
  if (step == 1)
    g_string_append (s, "The centres still have colour 0, as in scikit-image: this first "
                        "assignment goes by distance alone. ");
  if (c && step <= (int)c->n_iterations)
    {
      guint64 changed = c->changed[step - 1];
      gsize n = (gsize)shape[0] * shape[1] * shape[2];

      if (step == 1)
        g_string_append_printf (s, "All %" G_GUINT64_FORMAT " %s got their first cluster", changed,
                                words->voxels);
      else
        g_string_append_printf (s, "%" G_GUINT64_FORMAT " %s changed cluster (%.2g %%)", changed,
                                changed == 1 ? words->voxel : words->voxels,
                                100.0 * (double)changed / (double)MAX (n, 1));
      g_string_append_printf (s, "; a centre moved %.2f %s on average.", c->mean_moved[step - 1],
                              words->voxels);
      if (changed == 0 && step > 1)
        g_string_append (s, " Nothing changed: converged.");
    }
  else
    g_string_append (s, "(Measuring how much changed…)");
  return g_string_free (s, FALSE);
}

void
sv_window_teach_update (SvWindow *self)
{
  SvJobResult *shown = sv_window_shown_result (self);
  g_autofree char *note = NULL;
  const SvConvergence *c = NULL;
  int reserved;

  if (!shown || shown->stop_after_iteration < 0)
    return;
  /* The record is of the parameters on screen only once it has come. */
  if (self->convergence && self->convergence_key)
    {
      g_autofree char *key = sv_slic_params_to_json (&shown->params);
      if (g_strcmp0 (key, self->convergence_key) == 0)
        c = self->convergence;
    }
  note = step_note (shown, c, sv_element_words (self->volume && self->volume->nz == 1));
  gtk_label_set_text (self->teach_note, note);
  /* A 2D image has no centres off its slice, and its pixels are searched. */
  gtk_label_set_markup (self->teach_legend, self->volume && self->volume->nz == 1
                                                ? TEACH_LEGEND_PLANAR
                                                : TEACH_LEGEND_VOLUME);
  /* Room for three lines whatever the step says: the views keep their size. */
  gtk_widget_get_size_request (GTK_WIDGET (self->teach_note), NULL, &reserved);
  if (reserved < 0)
    {
      g_autoptr (PangoLayout) layout
          = gtk_widget_create_pango_layout (GTK_WIDGET (self->teach_note), "X\nX\nX");
      int height = 0;

      pango_layout_get_pixel_size (layout, NULL, &height);
      gtk_widget_set_size_request (GTK_WIDGET (self->teach_note), -1, height);
    }
}

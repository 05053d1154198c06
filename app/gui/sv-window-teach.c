/* Supervox GUI: teaching mode's words under the views: what the step on
 * screen did, with its numbers. Step 0 is the seeding; step i is one
 * k-means iteration, an assignment inside each centre's search window and
 * then the centre update, and the convergence record (sv-convergence.h)
 * says how many voxels changed cluster in it and how far the centres
 * moved. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

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

/* The grid steps of the run, z y x, as "6 × 8 × 8 voxels" (2D: "8 × 8
 * voxels (y × x)": the window says voxels for a photo's pixels too). */
static char *
grid_words (const SvJobResult *r)
{
  const guint *shape = r->region ? r->region_shape : r->labels_shape;
  guint start[3], step[3];

  sv_regular_grid (shape, (double)r->n_centres, start, step);
  if (shape[0] == 1)
    return g_strdup_printf ("%u × %u voxels (y × x)", step[1], step[2]);
  return g_strdup_printf ("%u × %u × %u voxels (z × y × x)", step[0], step[1], step[2]);
}

/* The note for the step of `r`; `c` is its convergence record or NULL
 * while it is being measured. Kept to about two lines so that the views
 * do not jump from step to step. */
static char *
step_note (const SvJobResult *r, const SvConvergence *c)
{
  const guint *shape = r->region ? r->region_shape : r->labels_shape;
  int step = r->stop_after_iteration, n_iter = r->params.max_num_iter;
  g_autofree char *grid = grid_words (r);
  GString *s = g_string_new (NULL);

  if (step == 0)
    {
      g_string_append_printf (s,
                              "Step 0 of %d, seeding: %" G_GSIZE_FORMAT
                              " cluster centres on a regular grid, one every %s, each with colour "
                              "0, as in scikit-image. No voxel belongs to a cluster yet.",
                              n_iter, live_centres (r), grid);
      return g_string_free (s, FALSE);
    }
  g_string_append_printf (s,
                          "Step %d of %d. Assignment: each voxel joins the nearest centre (colour "
                          "and space) whose search window, 2 grid steps of %s each way, holds it. "
                          "Update: each centre moves to the mean of its voxels. ",
                          step, n_iter, grid);
  if (step == 1)
    g_string_append (s, "The centres still have colour 0, as in scikit-image: this first "
                        "assignment goes by distance alone. ");
  if (c && step <= (int)c->n_iterations)
    {
      guint64 changed = c->changed[step - 1];
      gsize n = (gsize)shape[0] * shape[1] * shape[2];

      if (step == 1)
        g_string_append_printf (s, "All %" G_GUINT64_FORMAT " voxels got their first cluster",
                                changed);
      else
        g_string_append_printf (s, "%" G_GUINT64_FORMAT " %s changed cluster (%.2g %%)", changed,
                                changed == 1 ? "voxel" : "voxels",
                                100.0 * (double)changed / (double)MAX (n, 1));
      g_string_append_printf (s, "; a centre moved %.2f voxels on average.",
                              c->mean_moved[step - 1]);
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
  note = step_note (shown, c);
  gtk_label_set_text (self->teach_note, note);
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

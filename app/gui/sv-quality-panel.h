/* Supervox GUI: the quality panel: what the engine measured of the labels
 * on screen (quality.h), as numbers and small plots: label count, the size
 * histogram against the target size, explained variation, compactness,
 * time per stage (a bar and its legend) and backend, and with a ground
 * truth boundary recall, undersegmentation error and achievable accuracy. With a pinned result
 * each number also shows its difference from the other one. */
#pragma once

#include <gtk/gtk.h>

#include "supervox/sv-job.h"
#include "supervox/sv-quality.h"

G_BEGIN_DECLS

#define SV_TYPE_QUALITY_PANEL (sv_quality_panel_get_type ())
G_DECLARE_FINAL_TYPE (SvQualityPanel, sv_quality_panel, SV, QUALITY_PANEL, GtkWidget)

GtkWidget *sv_quality_panel_new (void);

/* Shows `quality` of `result` (references taken; both NULL clears).
 * `other`/`other_result` (may be NULL): the pinned result when the live one
 * is shown, or the live one when the pinned one is; each number then shows
 * its difference, shown − other. `shown_pinned` says which is shown. */
void sv_quality_panel_set (SvQualityPanel *panel, SvQuality *quality, SvJobResult *result,
                           SvQuality *other, SvJobResult *other_result, gboolean shown_pinned);
/* A 2D image: its rows say superpixels and pixels. */
void sv_quality_panel_set_planar (SvQualityPanel *panel, gboolean planar);
/* A line above the numbers: "computing…", "preview: numbers of the last
 * exact result", or NULL for none. */
void sv_quality_panel_set_state (SvQualityPanel *panel, const char *state);
/* That line, or NULL when none is shown. */
const char *sv_quality_panel_get_state (SvQualityPanel *panel);
SvQuality *sv_quality_panel_get_quality (SvQualityPanel *panel);
/* Teaching: the convergence plot (a reference is taken; NULL hides it) with
 * a marker at iteration `step` (1-based; 0 for none). */
void sv_quality_panel_set_convergence (SvQualityPanel *panel, SvConvergence *convergence, int step);
SvConvergence *sv_quality_panel_get_convergence (SvQualityPanel *panel);
/* The marker's iteration (0 for none). */
int sv_quality_panel_get_convergence_step (SvQualityPanel *panel);

/* The text of one row's value: "labels", "sizes", "explained-variation",
 * "compactness", "truth" (the line shown without a ground truth),
 * "boundary-recall", "undersegmentation", "achievable-accuracy", "time"
 * (seconds and backend), "time-legend", "compare", "convergence"; NULL for
 * another. */
const char *sv_quality_panel_get_text (SvQualityPanel *panel, const char *row);

G_END_DECLS

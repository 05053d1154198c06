/* The new user's pass through one window (test-gui-walkthrough.c): what
 * its steps share, and the steps, in the files that hold them. */
#pragma once

#include <gtk/gtk.h>

#include "sv-application.h"
#include "sv-window.h"
#include "supervox/sv-io.h"

/* What the steps hand on: the one window and what the user did in it. */
typedef struct
{
  SvApplication *app;
  SvWindow *window;
  char *dir;          /* the user's files */
  int width;          /* the window's width, which nothing may change */
  double compactness; /* a value the user set, for the next file to keep */
} Walk;

extern Walk walk;

SvParamsPanel *walk_panel (void);
/* The panel's field of `type` whose tooltip starts with `tooltip`. */
GtkWidget *walk_field (GType type, const char *tooltip);
/* The pointer over the XY view at (fx, fy) of its size. */
void walk_point_at_view (double fx, double fy);
/* The window's width is the one it opened with. */
void walk_assert_width (const char *after);
/* walkthrough-NAME.png in the build's log folder. */
void walk_shoot (const char *name);
/* A phantom of cells (sv_synth_cells) in walk.dir, `scale` times its
 * [0, 1] values, with `spacing` and `unit` when given; a float one holds a
 * NaN at z 7, y 30, x 41. Returns its path. */
char *walk_write_stack (const char *name, const guint shape[3], const double spacing[3],
                        const char *unit, SvSampleType type, double scale);
/* Opens `path` as File ▸ Open does and waits for its first result. */
void walk_open (const char *path);
/* "15 640 nm³" → 15640: a number whose digit groups a narrow space
 * parts, with no exponent, then a space. */
double walk_read_quantity (const char *text);
/* The quality of the labels on screen is measured. */
gboolean walk_quality_current (gpointer unused);
/* The status bar's hover readout names the slice the XY view shows. */
gboolean walk_hover_on_slice_shown (gpointer unused);
/* The panel shows a note. */
gboolean walk_note_shown (gpointer unused);
/* The label of the panel's note (the widget the user reads). */
GtkWidget *walk_note_label (void);
/* `widget` lies wholly in the part of the side panel in view. */
void walk_assert_in_view (GtkWidget *widget, const char *what);

/* The steps of walkthrough-em.c. */
void step_em_stack_opens (void);
void step_hover_pick_and_drag (void);
void step_copy_as_command (void);
void step_spacing_defaults_said (void);
void step_stop_mid_run (void);
/* The steps of walkthrough-teach-keys.c. */
void step_teaching_in_3d (void);
void step_keys (void);
/* The steps of walkthrough-files.c. */
void step_float_file_with_nan (void);
void step_few_labels (void);
void step_quality_fits (void);
void step_photo (void);

/* Supervox GUI: numbers along a plot's axis that never run into each
 * other: each label asks for a place, the first ones asked for are placed
 * first, and a label that would overlap one already placed is left out
 * (its number is in the text beside the plot). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  double x;      /* where its value sits on the axis, in pixels */
  double width;  /* the text's width, in pixels */
  double anchor; /* 0: the text starts at x, 0.5: centred on x, 1: ends at x */
  /* Out: the text's left edge, inside [0, axis width − width]; FALSE when
   * left out. */
  double left;
  gboolean shown;
} SvAxisLabel;

/* Places `n` labels in order of priority along an axis `axis_width` pixels
 * long, keeping `gap` pixels between any two shown; returns how many are
 * shown. */
guint sv_axis_labels_place (SvAxisLabel *labels, guint n, double axis_width, double gap);

G_END_DECLS

/* Supervox GUI: axis labels without overlaps. */
#define G_LOG_DOMAIN "sv-axis-labels"

#include "sv-axis-labels.h"

guint
sv_axis_labels_place (SvAxisLabel *labels, guint n, double axis_width, double gap)
{
  guint shown = 0;

  for (guint i = 0; i < n; i++)
    {
      SvAxisLabel *l = &labels[i];
      double left = l->x - l->anchor * l->width;

      /* Labels near an end slide inwards rather than off the plot. */
      left = CLAMP (left, 0.0, MAX (axis_width - l->width, 0.0));
      l->left = left;
      l->shown = l->width <= axis_width;
      for (guint j = 0; j < i && l->shown; j++)
        if (labels[j].shown && left < labels[j].left + labels[j].width + gap
            && labels[j].left < left + l->width + gap)
          l->shown = FALSE;
      shown += l->shown;
    }
  return shown;
}

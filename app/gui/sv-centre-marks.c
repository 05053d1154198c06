/* Supervox GUI: teaching mode's centre marks on one slice. */
#define G_LOG_DOMAIN "sv-centre-marks"

#include "sv-centre-marks.h"

#include <math.h>
#include <stdlib.h>

#include "supervox/sv-seeds.h"
#include "supervox/sv-slic-arith.h"

/* Marks too faint to see are not worth a pixel. */
#define WEAKEST 0.12f

static int
by_strength (const void *a, const void *b)
{
  const SvCentreMark *x = a, *y = b;

  return (x->strength > y->strength) - (x->strength < y->strength);
}

SvCentreMark *
sv_centre_marks_collect (const SvJobResult *result, int u, int v, int w, guint slice, gsize *n)
{
  const guint zero[3] = { 0, 0, 0 };
  const guint *shape, *offset;
  guint start[3], step[3];
  SvCentreMark *marks;
  gsize count = 0;

  *n = 0;
  if (!result || !result->n_centres)
    return NULL;
  /* A region's centres are in the region's voxels. */
  shape = result->region ? result->region_shape : result->labels_shape;
  offset = result->region ? result->region_offset : zero;
  /* The steps of the search window, as the iterations and the hovered
   * window (sv_slic_search_window) have them. */
  sv_regular_grid (shape, (double)result->n_centres, start, step);
  marks = g_new (SvCentreMark, result->n_centres);
  for (gsize k = 0; k < result->n_centres; k++)
    {
      const float *c = result->centres + k * 3;
      float s = (float)slice - (float)offset[w], d, t;
      int lo, hi;

      if (isnan (c[0]))
        continue;
      sv_arith_window (c[w], (int)step[w], (int)shape[w], &lo, &hi);
      if (s < (float)lo || s >= (float)hi)
        continue;
      /* Full strength within the slice's own voxel, fading to WEAKEST at
       * the window's reach of two grid steps; squared, so that a centre a
       * grid step away is clearly fainter than one on the slice. */
      d = fabsf (c[w] - s);
      t = CLAMP ((d - 0.5f) / MAX (2.0f * (float)step[w] - 0.5f, 0.5f), 0.0f, 1.0f);
      marks[count].u = c[u] + 0.5f + (float)offset[u];
      marks[count].v = c[v] + 0.5f + (float)offset[v];
      marks[count].strength = d <= 0.5f ? 1.0f : MAX (WEAKEST, (1.0f - t) * (1.0f - t));
      count++;
    }
  qsort (marks, count, sizeof *marks, by_strength);
  *n = count;
  if (count == 0)
    g_clear_pointer (&marks, g_free);
  return marks;
}

float
sv_centre_mark_alpha (float strength)
{
  return 0.95f * CLAMP (strength, 0.0f, 1.0f);
}

float
sv_centre_mark_size (float strength, float full)
{
  return full * (0.5f + 0.5f * CLAMP (strength, 0.0f, 1.0f));
}

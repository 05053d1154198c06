/* Supervox GUI: teaching mode's centre marks on one slice. A centre is
 * drawn on every slice its search window reaches (2 grid steps each way
 * along the slice's normal), faded and smaller the further it lies from
 * the slice, so that a 3D volume shows the centres around any slice and
 * not only the few exactly on it. Plain C: the GL and the software
 * renderers draw the same marks. */
#pragma once

#include <glib.h>

#include "supervox/sv-job.h"

G_BEGIN_DECLS

typedef struct
{
  float u, v;     /* texel coordinates in the slice (a voxel's middle is i + 0.5) */
  float strength; /* 1 for a centre on the slice, down towards 0 at its window's reach */
} SvCentreMark;

/* The marks of `result`'s centres on slice `slice` of the axis whose
 * horizontal, vertical and normal directions are u, v and w (indices into
 * z, y, x), weakest first so that the nearest are drawn on top (g_free;
 * NULL with *n = 0 when there are none). */
SvCentreMark *sv_centre_marks_collect (const SvJobResult *result, int u, int v, int w, guint slice,
                                       gsize *n);

/* How a mark of that strength is drawn: its opacity (0.95 on the slice)
 * and its size in device pixels, `full` on the slice and half of it at
 * the window's reach. */
float sv_centre_mark_alpha (float strength);
float sv_centre_mark_size (float strength, float full);

G_END_DECLS

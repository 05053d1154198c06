/* Supervox engine: what connectivity.c shares with its parts. */
#pragma once

#include <glib.h>

/* Component ids are stored in `out` as −2 − id: below the background label
 * (−1 or 0) and below every final label. */
#define SV_COMP_ENCODE(id) ((gint32)(-2 - (gint64)(id)))
#define SV_COMP_DECODE(o) ((gsize)(-2 - (gint64)(o)))

/* A queued voxel: its index and coordinates, so that the search never
 * divides to recover them. */
typedef struct
{
  gsize idx;
  guint32 z, y, x;
} QueuedVoxel;

/* The six face neighbours of queued voxel q in scikit-image's search
 * order, +x −x +y −y +z −z: V (inside, offset, z, y, x) for each. */
#define SV_FOR_NEIGHBOURS(V, q, nz, ny, nx, plane)                                                 \
  V ((q).x + 1 < (nx), 1, (q).z, (q).y, (q).x + 1)                                                 \
  V ((q).x > 0, -1, (q).z, (q).y, (q).x - 1)                                                       \
  V ((q).y + 1 < (ny), (nx), (q).z, (q).y + 1, (q).x)                                              \
  V ((q).y > 0, -(gsize)(nx), (q).z, (q).y - 1, (q).x)                                             \
  V ((q).z + 1 < (nz), (plane), (q).z + 1, (q).y, (q).x)                                           \
  V ((q).z > 0, -(plane), (q).z - 1, (q).y, (q).x)

/* The connected rule's labels from the components alone, the searches of
 * the small ones on n_threads threads (connectivity-small.c). `out` holds
 * each voxel's component id (encoded) or mask_label; components are
 * numbered in raster order of their first voxels `first`, none is cut
 * (every one is below the search's cap), and min_size <= the cap. On
 * success `out` holds the labels and *n_labels their number; FALSE (out
 * untouched) when memory for it was lacking. */
gboolean sv__connect_small_at_once (const gint32 *in, guint nz, guint ny, guint nx,
                                    gint32 mask_label, gint32 *out, const guint32 *sizes,
                                    const guint32 *first, gsize n_comp, gint64 min_size,
                                    int start_label, int n_threads, gint64 *n_labels);

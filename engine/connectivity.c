/* Supervox engine: connectivity enforcement after SLIC, following
 * scikit-image's _enforce_label_connectivity_cython step by step. */
#define G_LOG_DOMAIN "sv-engine"

#include "connectivity.h"

/* A queued voxel: its index and coordinates, so that the search never
 * divides to recover them. */
typedef struct
{
  gsize idx;
  guint32 z, y, x;
} QueuedVoxel;

gint64
sv_connectivity_enforce (const gint32 *in, guint nz, guint ny, guint nx, gint64 min_size,
                         gint64 max_size, int start_label, gint32 *out)
{
  g_return_val_if_fail (in != NULL && out != NULL, 0);

  const gsize n_voxels = (gsize)nz * ny * nx;
  const gsize plane = (gsize)ny * nx;
  const gint32 mask_label = start_label - 1;
  gint32 current_new_label = start_label;
  /* A small piece with no final neighbour keeps current_new_label without
   * advancing it; that label is in use and must be counted. */
  gboolean current_in_use = FALSE;

  for (gsize i = 0; i < n_voxels; i++)
    out[i] = mask_label;
  if (n_voxels == 0)
    return 0;

  /* scikit-image allocates max_size queue entries; a component never holds
   * more than n_voxels, and at least one entry is always written. */
  gsize queue_len = max_size > 0 ? (gsize)max_size : 1;
  if (queue_len > n_voxels)
    queue_len = n_voxels;
  g_autofree QueuedVoxel *queue = g_new (QueuedVoxel, queue_len);
  guint32 sz = 0, sy = 0, sx = 0; /* coordinates of `start` */

  for (gsize start = 0; start < n_voxels; start++)
    {
      if (start > 0 && ++sx == nx)
        {
          sx = 0;
          if (++sy == ny)
            {
              sy = 0;
              sz++;
            }
        }
      if (in[start] == mask_label || out[start] > mask_label)
        continue;

      gint32 adjacent = current_new_label;
      const gint32 label = in[start];
      gint64 size = 1;
      gint64 visited = 0;

      out[start] = current_new_label;
      queue[0] = (QueuedVoxel){ start, sz, sy, sx };

      while (visited < size && size < max_size)
        {
          const QueuedVoxel q = queue[visited];
          /* The six neighbours written out, in scikit-image's order, each
           * with only the boundary test of its own axis. */
#define SV_VISIT(inside, offset, nz_, ny_, nx_)                                                    \
  if (inside)                                                                                      \
    {                                                                                              \
      const gsize n = q.idx + (offset);                                                            \
      if (in[n] == label && out[n] == mask_label)                                                  \
        {                                                                                          \
          out[n] = current_new_label;                                                              \
          queue[size] = (QueuedVoxel){ n, (nz_), (ny_), (nx_) };                                   \
          size++;                                                                                  \
          if (size >= max_size)                                                                    \
            goto neighbours_done;                                                                  \
        }                                                                                          \
      else if (out[n] > mask_label && out[n] != current_new_label)                                 \
        adjacent = out[n];                                                                         \
    }
          SV_VISIT (q.x + 1 < nx, 1, q.z, q.y, q.x + 1)
          SV_VISIT (q.x > 0, -1, q.z, q.y, q.x - 1)
          SV_VISIT (q.y + 1 < ny, nx, q.z, q.y + 1, q.x)
          SV_VISIT (q.y > 0, -(gsize)nx, q.z, q.y - 1, q.x)
          SV_VISIT (q.z + 1 < nz, plane, q.z + 1, q.y, q.x)
          SV_VISIT (q.z > 0, -plane, q.z - 1, q.y, q.x)
#undef SV_VISIT
        neighbours_done:
          visited++;
        }

      /* Like the original SLIC paper: a small piece joins the last adjacent
       * final label seen; with none it keeps the current new label, and the
       * counter does not advance. */
      if (size < min_size)
        {
          for (gint64 i = 0; i < size; i++)
            out[queue[i].idx] = adjacent;
          if (adjacent == current_new_label)
            current_in_use = TRUE;
        }
      else
        {
          current_new_label++;
          current_in_use = FALSE;
        }
    }

  return (gint64)current_new_label - start_label + (current_in_use ? 1 : 0);
}

void
sv_connectivity_sizes (gsize n_voxels, gsize n_clusters, double min_size_factor,
                       double max_size_factor, gint64 *min_size, gint64 *max_size)
{
  g_return_if_fail (n_clusters > 0);

  /* Python's n / k is a double division; int() truncates toward zero. */
  const double segment_size = (double)n_voxels / (double)n_clusters;
  if (min_size != NULL)
    *min_size = (gint64)(min_size_factor * segment_size);
  if (max_size != NULL)
    *max_size = (gint64)(max_size_factor * segment_size);
}

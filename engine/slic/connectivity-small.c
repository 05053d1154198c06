/* Supervox engine: the connected rule's labels from the components alone,
 * the small components' searches on every thread (connectivity.c).
 *
 * When no component is cut by the search's cap, the raster scan meets each
 * component first at its first voxel, and a small one's search covers
 * exactly that component. What the search finds there is the last
 * neighbour, in its breadth-first order, whose component the scan has
 * passed: the components numbered before it (ids follow the first voxels'
 * raster order), whose labels are final by then, all below the current
 * counter. So each small component's search depends on the components
 * alone and runs on any thread, in any order; one pass in id order then
 * gives the labels: a large component, or a small one that met no passed
 * neighbour, takes a new label, any other the label of the one it met. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "connectivity-private.h"
#include "internal.h"
#include "supervox/sv-memory.h"

/* Components a thread takes at a time. */
#define SMALL_BATCH 64

typedef struct
{
  const gint32 *in;
  const gint32 *out; /* component ids, read only here */
  guint nz, ny, nx;
  gsize plane;
  gint32 mask_label;
  const guint32 *sizes, *first;
  gsize n_comp;
  gint64 min_size;
  guint8 *seen; /* voxels a search has queued */
  gint32 *met;  /* per component: the passed neighbour found, or −1 */
  gint next;    /* the next batch of components (atomic) */
  gint failed;  /* a thread had no memory for its queue (atomic) */
} SmallJob;

/* One small component's search from its first voxel, in scikit-image's
 * order (+x −x +y −y +z −z); `*queue` grows as needed. The last neighbour
 * of a passed component (id below `id`) it meets, or −1; −2 without
 * memory. */
static gint32
search_small (SmallJob *job, gsize id, QueuedVoxel **queue, gsize *capacity)
{
  const gint32 *in = job->in, *out = job->out;
  const gsize start = job->first[id], plane = job->plane;
  const guint nz = job->nz, ny = job->ny, nx = job->nx;
  const gint32 label = in[start];
  gsize size = 1, visited = 0;
  gint32 met = -1;

  (*queue)[0] = (QueuedVoxel){ start, (guint32)(start / plane), (guint32)(start % plane / nx),
                               (guint32)(start % nx) };
  job->seen[start] = 1;
  while (visited < size)
    {
      const QueuedVoxel q = (*queue)[visited++];
#define SV_MEET(inside, offset, nz_, ny_, nx_)                                                     \
  if (inside)                                                                                      \
    {                                                                                              \
      const gsize n = q.idx + (offset);                                                            \
      if (in[n] == label)                                                                          \
        {                                                                                          \
          if (!job->seen[n])                                                                       \
            {                                                                                      \
              if (size == *capacity)                                                               \
                {                                                                                  \
                  QueuedVoxel *more = g_try_renew (QueuedVoxel, *queue, 2 * *capacity);            \
                  if (more == NULL)                                                                \
                    return -2;                                                                     \
                  *queue = more;                                                                   \
                  *capacity *= 2;                                                                  \
                }                                                                                  \
              job->seen[n] = 1;                                                                    \
              (*queue)[size++] = (QueuedVoxel){ n, (nz_), (ny_), (nx_) };                          \
            }                                                                                      \
        }                                                                                          \
      else if (out[n] < job->mask_label && SV_COMP_DECODE (out[n]) < id)                           \
        met = (gint32)SV_COMP_DECODE (out[n]);                                                     \
    }
      SV_FOR_NEIGHBOURS (SV_MEET, q, nz, ny, nx, plane)
#undef SV_MEET
    }
  return met;
}

static void
small_worker (gpointer data, int thread)
{
  SmallJob *job = data;
  gsize capacity = 4096;
  QueuedVoxel *queue = g_try_new (QueuedVoxel, capacity);

  if (queue == NULL)
    {
      g_atomic_int_set (&job->failed, 1);
      return;
    }
  for (;;)
    {
      const gsize c0 = (gsize)g_atomic_int_add (&job->next, SMALL_BATCH);

      if (c0 >= job->n_comp || g_atomic_int_get (&job->failed))
        break;
      for (gsize id = c0; id < MIN (c0 + SMALL_BATCH, job->n_comp); id++)
        {
          if ((gint64)job->sizes[id] >= job->min_size)
            continue;
          job->met[id] = search_small (job, id, &queue, &capacity);
          if (job->met[id] == -2)
            {
              g_atomic_int_set (&job->failed, 1);
              break;
            }
        }
    }
  g_free (queue);
}

typedef struct
{
  gint32 *out;
  gsize n;
  gint32 mask_label;
  const gint32 *label;
  int n_threads;
} RelabelJob;

static void
relabel_share (gpointer data, int t)
{
  const RelabelJob *job = data;
  gsize a, b;

  sv__share_bounds (job->n, t, job->n_threads, &a, &b);
  for (gsize v = a; v < b; v++)
    if (job->out[v] < job->mask_label)
      job->out[v] = job->label[SV_COMP_DECODE (job->out[v])];
}

gboolean
sv__connect_small_at_once (const gint32 *in, guint nz, guint ny, guint nx, gint32 mask_label,
                           gint32 *out, const guint32 *sizes, const guint32 *first, gsize n_comp,
                           gint64 min_size, int start_label, int n_threads, gint64 *n_labels)
{
  const gsize n = (gsize)nz * ny * nx;
  const int threads = sv__resolve_threads (n_threads);
  g_autofree guint8 *seen = NULL;
  g_autofree gint32 *met = NULL;
  g_autofree gint32 *label = NULL;
  SmallJob job
      = { in, out, nz, ny, nx, (gsize)ny * nx, mask_label, sizes, first, n_comp, min_size };
  RelabelJob relabel = { out, n, mask_label, NULL, threads };
  gint32 current = start_label;

  /* Component ids are ints: batches are counted in an int. */
  if (n_comp >= (gsize)G_MAXINT - SMALL_BATCH * (gsize)threads || (seen = g_try_malloc0 (n)) == NULL
      || (met = g_try_new (gint32, MAX (n_comp, 1))) == NULL
      || (label = g_try_new (gint32, MAX (n_comp, 1))) == NULL)
    return FALSE;
  job.seen = seen;
  job.met = met;
  sv__run_parallel (threads, small_worker, &job);
  if (job.failed)
    return FALSE;
  /* Every component met in a search comes before the searching one. */
  for (gsize id = 0; id < n_comp; id++)
    label[id] = (gint64)sizes[id] >= min_size || met[id] < 0 ? current++ : label[met[id]];
  relabel.label = label;
  sv__run_parallel (threads, relabel_share, &relabel);
  *n_labels = (gint64)current - start_label;
  return TRUE;
}

/* Supervox engine: connectivity enforcement after SLIC, with exactly the
 * output of scikit-image's _enforce_label_connectivity_cython.
 *
 * scikit-image scans the voxels in raster order and runs a breadth-first
 * search, capped at max_size voxels, from every voxel not yet relabelled.
 * Most searches cover a whole same-label component smaller than max_size
 * and at least min_size voxels; such a piece simply takes the next label,
 * whatever order the search visits it in. So the work is done in two
 * passes:
 *
 * 1. Components: union-find over the −x, −y, −z neighbours in raster order,
 *    always linking to the smaller index, so each component's root is its
 *    raster-first voxel. Components are then numbered in raster order of
 *    their roots and counted.
 * 2. The raster scan itself. A component whose size lies in
 *    [min_size, max_size) takes the next label at its first voxel and its
 *    other voxels are written as the scan passes them, without a search.
 *    Components smaller than min_size (which need the last adjacent label
 *    the search sees) and components of max_size voxels or more (which the
 *    capped search cuts into pieces) go through scikit-image's search, step
 *    by step.
 *
 * Between the passes `out` holds, for a voxel not yet relabelled, its
 * component number encoded below the background label, so the search tells
 * "not yet relabelled" from "final label" with one load, and looks up the
 * label a passed component will get in a small per-component table. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-connectivity.h"
#include "internal.h"

#include "connectivity-private.h"

typedef struct
{
  const gint32 *in;
  gint32 *out;
  guint nz, ny, nx;
  gsize plane;
  gint32 mask_label;
  gint64 max_size;
  /* Per component: the label it takes, mask_label while the scan has not
   * reached it (and for small ones, whose voxels are written directly), or
   * below mask_label for components that the capped search cuts. */
  gint32 *comp_label;
  QueuedVoxel *queue;
} Scan;

/* The final label voxel n has at this point of the scan, or a value <=
 * mask_label when it has none yet (or is background). */
static inline gint32
final_label (const Scan *s, gsize n)
{
  const gint32 o = s->out[n];
  return o >= s->mask_label ? o : s->comp_label[SV_COMP_DECODE (o)];
}

/* scikit-image's search from `start` (not yet relabelled): breadth-first
 * over the six neighbours in the order +x −x +y −y +z −z through voxels of
 * the same input label not yet relabelled, stopping at max_size voxels.
 * Marks the piece with `current` in `out` and leaves it in s->queue.
 * *adjacent receives the last neighbour's final label seen that differs
 * from `current` (or `current`). Returns the piece's size. */
static gint64
search_piece (const Scan *s, gsize start, guint32 z, guint32 y, guint32 x, gint32 current,
              gint32 *adjacent)
{
  const gint32 *in = s->in;
  gint32 *out = s->out;
  QueuedVoxel *queue = s->queue;
  const guint nz = s->nz, ny = s->ny, nx = s->nx;
  const gsize plane = s->plane;
  const gint32 mask_label = s->mask_label;
  const gint64 max_size = s->max_size;
  const gint32 label = in[start];
  gint32 adj = current;
  gint64 size = 1, visited = 0;

  out[start] = current;
  queue[0] = (QueuedVoxel){ start, z, y, x };

  while (visited < size && size < max_size)
    {
      const QueuedVoxel q = queue[visited];
      /* The six neighbours written out, in scikit-image's order, each with
       * only the boundary test of its own axis. */
#define SV_VISIT(inside, offset, nz_, ny_, nx_)                                                    \
  if (inside)                                                                                      \
    {                                                                                              \
      const gsize n = q.idx + (offset);                                                            \
      if (in[n] == label && out[n] < mask_label)                                                   \
        {                                                                                          \
          out[n] = current;                                                                        \
          queue[size] = (QueuedVoxel){ n, (nz_), (ny_), (nx_) };                                   \
          size++;                                                                                  \
          if (size >= max_size)                                                                    \
            goto neighbours_done;                                                                  \
        }                                                                                          \
      else                                                                                         \
        {                                                                                          \
          const gint32 f = final_label (s, n);                                                     \
          if (f > mask_label && f != current)                                                      \
            adj = f;                                                                               \
        }                                                                                          \
    }
      SV_FOR_NEIGHBOURS (SV_VISIT, q, nz, ny, nx, plane)
#undef SV_VISIT
    neighbours_done:
      visited++;
    }
  *adjacent = adj;
  return size;
}

/* The adjacent label a search from lone voxel v (no neighbour of its input
 * label) ends with: the last of its neighbours, in the search's order
 * +x −x +y −y +z −z, with a final label other than `current`, or
 * `current`. */
static inline gint32
lone_voxel_adjacent (const Scan *s, gsize v, guint32 z, guint32 y, guint32 x, gint32 current)
{
  gint32 f;

#define SV_LAST(inside, n)                                                                         \
  if ((inside) && (f = final_label (s, (n))) > s->mask_label && f != current)                     \
    return f;
  SV_LAST (z > 0, v - s->plane)
  SV_LAST (z + 1 < s->nz, v + s->plane)
  SV_LAST (y > 0, v - s->nx)
  SV_LAST (y + 1 < s->ny, v + s->nx)
  SV_LAST (x > 0, v - 1)
  SV_LAST (x + 1 < s->nx, v + 1)
#undef SV_LAST
  return current;
}

/* The root of v's set, halving the path on the way (parents never point to
 * a larger index). */
static inline gint32
comp_find (gint32 *parent, gint32 v)
{
  while (parent[v] != v)
    {
      parent[v] = parent[parent[v]];
      v = parent[v];
    }
  return v;
}

/* Joins root a with b's set; returns the new root, the smaller index. */
static inline gint32
comp_unite (gint32 *parent, gint32 a, gint32 b)
{
  b = comp_find (parent, b);
  if (a == b)
    return a;
  if (a < b)
    {
      parent[b] = a;
      return a;
    }
  parent[a] = b;
  return b;
}

/* Below this many voxels a volume's components are found on one thread. */
#define SV_CONNECT_PARALLEL_VOXELS (1u << 20)

/* The union-find of find_components over slices [z0, z1) alone. */
typedef struct
{
  const gint32 *in;
  gint32 *parent;
  guint nz, ny, nx;
  gint32 mask_label;
  int n_parts;
} UnionJob;

static void
union_slices (const UnionJob *job, guint z0, guint z1)
{
  const gint32 *in = job->in;
  gint32 *parent = job->parent;
  const guint ny = job->ny, nx = job->nx;
  const gint32 mask_label = job->mask_label;
  const gsize plane = (gsize)ny * nx;
  gsize v = (gsize)z0 * plane;

  /* Union-find in raster order. The −x neighbour's root is the one found
   * for it a step earlier (no union happens in between); a neighbour
   * already joined to an earlier one through a common neighbour needs no
   * union. Slice z0's −z neighbours are another part's (joined later). */
  for (guint z = z0; z < z1; z++)
    for (guint y = 0; y < ny; y++)
      {
        gint32 r_left = 0;
        for (guint x = 0; x < nx; x++, v++)
          {
            const gint32 l = in[v];
            gint32 r = (gint32)v;
            gboolean left, up = FALSE;

            if (l == mask_label)
              {
                parent[v] = r;
                continue;
              }
            left = x > 0 && in[v - 1] == l;
            if (left)
              r = r_left;
            if (y > 0 && in[v - nx] == l)
              {
                up = TRUE;
                if (!(left && in[v - nx - 1] == l))
                  r = comp_unite (parent, r, (gint32)(v - nx));
              }
            if (z > z0 && in[v - plane] == l && !(left && in[v - plane - 1] == l)
                && !(up && in[v - plane - nx] == l))
              r = comp_unite (parent, r, (gint32)(v - plane));
            parent[v] = r;
            r_left = r;
          }
      }
}

static void
union_part (gpointer data, int t)
{
  const UnionJob *job = data;

  union_slices (job, (guint)((guint64)job->nz * t / job->n_parts),
                (guint)((guint64)job->nz * (t + 1) / job->n_parts));
}

/* Joins the sets of slice z with those of slice z − 1 where their voxels
 * share a label, the larger root under the smaller, as the raster scan
 * would have; a voxel whose −x neighbour and the slice below it were
 * joined a step earlier needs nothing more. */
static void
join_slices (const UnionJob *job, guint z)
{
  const gsize plane = (gsize)job->ny * job->nx;
  const gint32 *in = job->in;
  gint32 *parent = job->parent;

  for (guint y = 0; y < job->ny; y++)
    for (guint x = 0; x < job->nx; x++)
      {
        const gsize v = (gsize)z * plane + (gsize)y * job->nx + x;
        const gint32 l = in[v];
        gint32 a, b;

        if (l == job->mask_label || in[v - plane] != l
            || (x > 0 && in[v - 1] == l && in[v - plane - 1] == l))
          continue;
        a = comp_find (parent, (gint32)v);
        b = comp_find (parent, (gint32)(v - plane));
        if (a < b)
          parent[b] = a;
        else if (b < a)
          parent[a] = b;
      }
}

/* Pass 1: writes each voxel's component id (encoded) into out, background
 * voxels get mask_label. Returns the number of components; *sizes_out
 * receives their sizes (g_free). Needs n_voxels < 2^31 − 2. Runs of
 * slices are joined on up to n_threads threads, then the runs' edges:
 * every link still goes from a larger index to a smaller one, so each
 * set's root is its first voxel in raster order, as one scan makes it. */
static gsize
find_components (const gint32 *in, guint nz, guint ny, guint nx, gint32 mask_label, gint32 *out,
                 guint32 **sizes_out, guint32 **first_out, int n_threads)
{
  gint32 *parent = out;
  gsize v = 0, n_comp = 0, capacity = 1024;
  guint32 *sizes = g_new (guint32, capacity);
  guint32 *first = g_new (guint32, capacity);
  UnionJob job = { in, parent, nz, ny, nx, mask_label, 1 };

  if ((gsize)nz * ny * nx >= SV_CONNECT_PARALLEL_VOXELS)
    job.n_parts = (int)MIN ((guint)sv__resolve_threads (n_threads), nz);
  sv__run_parallel (job.n_parts, union_part, &job);
  for (int t = 1; t < job.n_parts; t++)
    join_slices (&job, (guint)((guint64)nz * t / job.n_parts));

  /* Number the roots in raster order; every parent precedes its child and
   * is numbered by then. */
  v = 0;
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++, v++)
        {
          const gint32 p = parent[v];
          gsize id;

          if (in[v] == mask_label)
            {
              out[v] = mask_label;
              continue;
            }
          if ((gsize)p == v)
            {
              if (n_comp == capacity)
                {
                  capacity *= 2;
                  sizes = g_renew (guint32, sizes, capacity);
                  first = g_renew (guint32, first, capacity);
                }
              id = n_comp++;
              sizes[id] = 0;
              first[id] = (guint32)v;
              out[v] = SV_COMP_ENCODE (id);
            }
          else
            {
              out[v] = out[p];
              id = SV_COMP_DECODE (out[v]);
            }
          sizes[id]++;
        }
  *sizes_out = sizes;
  *first_out = first;
  return n_comp;
}

/* Whether most voxels differ from their −x neighbour (sampled on every
 * fourth row): then nearly every component is a few voxels, each needs the
 * search anyway, and finding the components first does not pay. */
static gboolean
is_fragmented (const gint32 *in, guint nz, guint ny, guint nx)
{
  gsize n_pairs = 0, n_changes = 0;

  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y += 4)
      {
        const gint32 *row = in + ((gsize)z * ny + y) * nx;
        guint changes = 0;
        for (guint x = 1; x < nx; x++)
          changes += row[x] != row[x - 1];
        n_changes += changes;
        n_pairs += nx - 1;
      }
  return n_changes * 4 > n_pairs * 3;
}

gint64
sv_connectivity_enforce (const gint32 *in, guint nz, guint ny, guint nx, gint64 min_size,
                         gint64 max_size, int start_label, SvConnectivityRule rule, gint32 *out)
{
  return sv_connectivity_enforce_threads (in, nz, ny, nx, min_size, max_size, start_label, rule,
                                          out, 1);
}

gint64
sv_connectivity_enforce_threads (const gint32 *in, guint nz, guint ny, guint nx, gint64 min_size,
                                 gint64 max_size, int start_label, SvConnectivityRule rule,
                                 gint32 *out, int n_threads)
{
  g_return_val_if_fail (in != NULL && out != NULL, 0);

  const gsize n_voxels = (gsize)nz * ny * nx;
  const gint32 mask_label = start_label - 1;
  const gint32 cut = mask_label - 1; /* comp_label of components the search cuts */
  gint32 current_new_label = start_label;
  /* Under the legacy rule a small piece with no final neighbour keeps
   * current_new_label without advancing it; that label is in use and must
   * be counted. */
  gboolean current_in_use = FALSE;
  const gboolean legacy = rule == SV_CONNECTIVITY_RULE_LEGACY;
  g_autofree guint32 *sizes = NULL;
  g_autofree guint32 *first = NULL;
  g_autofree gint32 *comp_label = NULL;
  g_autofree QueuedVoxel *queue = NULL;
  gsize n_comp;

  if (n_voxels == 0)
    return 0;

  if (n_voxels < (gsize)G_MAXINT32 - 2 && !is_fragmented (in, nz, ny, nx))
    {
      gboolean any_cut = FALSE;
      gint64 n_labels;

      n_comp = find_components (in, nz, ny, nx, mask_label, out, &sizes, &first, n_threads);
      comp_label = g_new (gint32, MAX (n_comp, 1));
      for (gsize c = 0; c < n_comp; c++)
        {
          comp_label[c] = (gint64)sizes[c] >= max_size ? cut : mask_label;
          any_cut |= comp_label[c] == cut;
        }
      /* Under the connected rule, with no component cut, a small piece is
       * its whole component and its label follows from the components
       * before it alone: the searches run on every thread. */
      if (rule == SV_CONNECTIVITY_RULE_CONNECTED && !any_cut && min_size <= max_size
          && sv__resolve_threads (n_threads) > 1 && n_voxels >= SV_CONNECT_PARALLEL_VOXELS
          && sv__connect_small_at_once (in, nz, ny, nx, mask_label, out, sizes, first, n_comp,
                                        min_size, start_label, n_threads, &n_labels))
        return n_labels;
    }
  else
    {
      /* Too many voxels for 32-bit parents, or so many tiny components
       * that finding them first costs more than it saves: one component
       * that the search cuts everywhere, which is scikit-image's loop as it
       * stands. */
      for (gsize i = 0; i < n_voxels; i++)
        out[i] = in[i] == mask_label ? mask_label : SV_COMP_ENCODE (0);
      n_comp = 1;
      comp_label = g_new (gint32, 1);
      comp_label[0] = cut;
    }

  /* scikit-image allocates max_size queue entries; a piece never holds
   * more than n_voxels, and at least one entry is always written. */
  {
    gsize queue_len = max_size > 0 ? (gsize)max_size : 1;
    if (queue_len > n_voxels)
      queue_len = n_voxels;
    queue = g_new (QueuedVoxel, queue_len);
  }

  Scan s = {
    .in = in,
    .out = out,
    .nz = nz,
    .ny = ny,
    .nx = nx,
    .plane = (gsize)ny * nx,
    .mask_label = mask_label,
    .max_size = max_size,
    .comp_label = comp_label,
    .queue = queue,
  };
  gsize v = 0;

  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++, v++)
        {
          const gint32 o = out[v];
          gsize id;
          gint32 lab, adjacent;
          gint64 size;

          /* Background, or relabelled already. */
          if (o >= mask_label)
            continue;
          id = SV_COMP_DECODE (o);
          lab = comp_label[id];
          /* A component the scan has labelled at its first voxel. */
          if (lab > mask_label)
            {
              out[v] = lab;
              continue;
            }
          /* The first voxel of a component of at least min_size that the
           * search does not cut: the search would cover all of it. */
          if (lab == mask_label && (gint64)sizes[id] >= min_size)
            {
              comp_label[id] = current_new_label;
              out[v] = current_new_label;
              current_new_label++;
              current_in_use = FALSE;
              continue;
            }

          if (lab == mask_label && sizes[id] == 1)
            {
              /* A lone voxel: the search would only look at its six
               * neighbours; the last of them with a final label other than
               * the current one wins. */
              adjacent = lone_voxel_adjacent (&s, v, z, y, x, current_new_label);
              out[v] = adjacent;
              if (adjacent == current_new_label && legacy)
                current_in_use = TRUE;
              else if (adjacent == current_new_label)
                current_new_label++;
              continue;
            }

          size = search_piece (&s, v, z, y, x, current_new_label, &adjacent);
          /* Like the original SLIC paper: a small piece joins the last
           * adjacent final label seen. With none it keeps the current new
           * label; the legacy rule does not advance the counter then, so
           * the next piece, wherever it is, shares that label. */
          if (size < min_size && (adjacent != current_new_label || legacy))
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

/* Supervox engine: boundary recall, the share of the truth's boundary
 * voxels that lie within a distance of the labels' boundary, on threads
 * (metrics-threads.h). Each step works on whole rows or lines of its
 * thread's share; the counts are integers, the same for any split. */
#define G_LOG_DOMAIN "sv-engine"

#include <math.h>

#include "metrics-threads.h"

typedef struct
{
  const guint32 *index; /* the map whose boundary is marked */
  guint nz, ny, nx;
  int n_threads;
  guint8 *mask;
  guint r;
  int axis;
  const guint8 *truth_edge, *label_edge;
  guint64 *n_edge, *n_hit; /* per thread */
} EdgeWork;

/* Marks voxels with a 6-neighbour (4 in 2D) of a different label: each
 * voxel looks at its own neighbours, so that a thread writes only its
 * own rows. */
static void
boundary_cb (gpointer p, int t)
{
  EdgeWork *w = p;
  const guint32 *index = w->index;
  const guint ny = w->ny, nx = w->nx;
  const gsize sy = nx, sz = (gsize)ny * nx;
  gsize r0, r1;

  sv__metrics_share ((gsize)w->nz * ny, t, w->n_threads, &r0, &r1);
  for (gsize row = r0; row < r1; row++)
    {
      const guint z = (guint)(row / ny), y = (guint)(row % ny);
      const gsize i0 = row * nx;

      for (guint x = 0; x < nx; x++)
        {
          const gsize i = i0 + x;
          const guint32 l = index[i];

          w->mask[i] = (x > 0 && index[i - 1] != l) || (x + 1 < nx && index[i + 1] != l)
                       || (y > 0 && index[i - sy] != l) || (y + 1 < ny && index[i + sy] != l)
                       || (z > 0 && index[i - sz] != l) || (z + 1 < w->nz && index[i + sz] != l);
        }
    }
}

static guint8 *
boundary_mask (EdgeWork *w, const guint32 *index)
{
  w->index = index;
  w->mask = g_new (guint8, MAX ((gsize)w->nz * w->ny * w->nx, 1));
  sv__run_parallel (w->n_threads, boundary_cb, w);
  return w->mask;
}

/* The lines along w->axis of this thread's share of the next axis (none
 * when there are fewer of those than threads): in place, the maximum
 * over a (2r+1)-wide window clipped to the volume. */
static void
dilate_cb (gpointer p, int t)
{
  EdgeWork *w = p;
  const guint dims[3] = { w->nz, w->ny, w->nx };
  const gsize strides[3] = { (gsize)w->ny * w->nx, w->nx, 1 };
  const int axis = w->axis, a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
  const gsize n = dims[axis], stride = strides[axis], r = w->r;
  g_autofree guint8 *line = g_new (guint8, n);
  gsize i10, i11;

  sv__metrics_share (dims[a1], t, w->n_threads, &i10, &i11);
  for (gsize i1 = i10; i1 < i11; i1++)
    for (gsize i2 = 0; i2 < dims[a2]; i2++)
      {
        guint8 *base = w->mask + i1 * strides[a1] + i2 * strides[a2];
        for (gsize i = 0; i < n; i++)
          line[i] = base[i * stride];
        /* Distance to the last set voxel at or before i, and at or after. */
        gsize last = G_MAXSIZE;
        for (gsize i = 0; i < n; i++)
          {
            if (line[i])
              last = i;
            base[i * stride] = last != G_MAXSIZE && i - last <= r;
          }
        last = G_MAXSIZE;
        for (gsize i = n; i-- > 0;)
          {
            if (line[i])
              last = i;
            if (last != G_MAXSIZE && last - i <= r)
              base[i * stride] = 1;
          }
      }
}

/* In place, a dilation by a Chebyshev ball of radius r: the window's
 * maximum along every axis in turn. */
static void
dilate_box (EdgeWork *w, guint8 *mask, guint r)
{
  const guint dims[3] = { w->nz, w->ny, w->nx };

  if (r == 0)
    return;
  w->mask = mask;
  w->r = r;
  for (int axis = 0; axis < 3; axis++)
    {
      if (dims[axis] < 2)
        continue;
      w->axis = axis;
      sv__run_parallel (w->n_threads, dilate_cb, w);
    }
}

static void
count_cb (gpointer p, int t)
{
  EdgeWork *w = p;
  guint64 n_edge = 0, n_hit = 0;
  gsize a, b;

  sv__metrics_share ((gsize)w->nz * w->ny * w->nx, t, w->n_threads, &a, &b);
  for (gsize i = a; i < b; i++)
    if (w->truth_edge[i])
      {
        n_edge++;
        n_hit += w->label_edge[i];
      }
  w->n_edge[t] = n_edge;
  w->n_hit[t] = n_hit;
}

double
sv__metrics_boundary_recall (const guint32 *truth_index, const guint32 *label_index, guint nz,
                             guint ny, guint nx, guint radius, int n_threads)
{
  const gsize n = (gsize)nz * ny * nx;
  EdgeWork w = { NULL, nz, ny, nx, sv__metrics_threads (n_threads, n) };
  guint64 n_edge = 0, n_hit = 0;

  g_autofree guint8 *truth_edge = boundary_mask (&w, truth_index);
  g_autofree guint8 *label_edge = boundary_mask (&w, label_index);
  g_autofree guint64 *counts = g_new (guint64, 2 * (gsize)w.n_threads);
  dilate_box (&w, label_edge, radius);
  w.truth_edge = truth_edge;
  w.label_edge = label_edge;
  w.n_edge = counts;
  w.n_hit = counts + w.n_threads;
  sv__run_parallel (w.n_threads, count_cb, &w);
  for (int t = 0; t < w.n_threads; t++)
    {
      n_edge += w.n_edge[t];
      n_hit += w.n_hit[t];
    }
  return n_edge > 0 ? (double)n_hit / (double)n_edge : NAN;
}

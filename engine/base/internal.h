/* Supervox engine: helpers shared between engine files, not public API. */
#pragma once

#include <glib.h>
#include <gio/gio.h>
#include <math.h>

#include "supervox/sv-params.h"
#include "supervox/sv-prepare.h"
#include "supervox/sv-seeds.h"
#include "supervox/sv-slic.h"

G_BEGIN_DECLS

/* What the in-memory run (slic-pipeline.c) and the streamed one
 * (stream-slic.c) share: the seeds (maskSLIC's inside the mask, else the
 * grid's), and the start of pass `pass` of n_passes (maskSLIC first moves
 * the seeds by position only; every pass starts with fresh SLIC-zero
 * maxima, as each of scikit-image's _slic_cython calls does). */
gboolean sv__slic_seed (const guint shape[3], const guint8 *mask, gint64 n_segments,
                        SvSeeds *seeds, GError **error);
void sv__slic_pass_start (SvSlicContext *ctx, SvClusters *clusters, guint pass, guint n_passes);
/* cluster-snapshot.c: keeps a copy of `cl` in `seen` (FALSE, nothing kept,
 * without memory for it); whether `cl` is bit for bit that copy (centres,
 * SLIC-zero maxima, live marks). Copy and comparison run on n_threads. */
gboolean sv__clusters_remember (SvClusters *seen, const SvClusters *cl, int n_threads);
gboolean sv__clusters_same (const SvClusters *seen, const SvClusters *cl, int n_threads);

/* Gives every mask-in voxel whose nearest[] is −1 the live cluster with the
 * smallest spatial term (sv_arith_spatial; ties to the lowest index). */
void sv__slic_fill_unassigned (const SvSlicContext *ctx, const SvClusters *clusters,
                               gint32 *nearest);

/* The update in steps, over the context's slab [z_begin, z_end), so that
 * slabs (streamed, on several devices or ranks) can be summed separately:
 * sums (K × (4 + nc): count, z, y, x, colour… as exact integers) receives
 * the slab's voxels added; the centres are then the sums' means (clusters
 * with no voxel die); under SLIC-zero the maxima are raised over each slab
 * with the new centres. sv_slic_update is the three over the whole volume. */
void sv__slic_sums_add (const SvSlicContext *ctx, const gint32 *nearest, const SvClusters *clusters,
                        gint64 *sums);
void sv__slic_centres_from_sums (const SvSlicContext *ctx, const gint64 *sums,
                                 SvClusters *clusters);
/* The same for clusters [k0, k1) only. */
void sv__slic_centres_from_sums_range (const SvSlicContext *ctx, const gint64 *sums,
                                       SvClusters *clusters, gsize k0, gsize k1);
void sv__slic_raise_colour_maxima (const SvSlicContext *ctx, const gint32 *nearest,
                                   SvClusters *clusters);

/* sv_arith_colour_fixed (v, shift) without library calls, for the hot loop:
 * scale = 2^shift, so v·scale is exact in double, and adding and removing
 * 2^52 rounds to the nearest integer, ties to even, as llrint does in the
 * default rounding mode. Values of magnitude >= 2^52 are integers already. */
static inline gint64
sv__colour_fixed (float v, double scale)
{
  double x = (double)v * scale;
  if (fabs (x) < 0x1p52)
    {
      double t = copysign (0x1p52, x);
      x = (x + t) - t;
    }
  return (gint64)x;
}

/* The rescale statistics of one voxel's nc values, as the in-memory and
 * the streamed preparation scan them: finite values widen [*min, *max]
 * and set *any_in; *nan and *inf say whether the voxel holds such values. */
static inline void
sv__scan_voxel (const float *px, guint nc, float *min, float *max, gboolean *any_in,
                gboolean *nan, gboolean *inf)
{
  *nan = *inf = FALSE;
  for (guint c = 0; c < nc; c++)
    {
      const float v = px[c];
      if (isnan (v))
        *nan = TRUE;
      else if (isinf (v))
        *inf = TRUE;
      else
        {
          *min = MIN (*min, v);
          *max = MAX (*max, v);
          *any_in = TRUE;
        }
    }
}

/* ---- threads (parallel.c) ----------------------------------------------- */

/* The number of worker threads for n_threads (<= 0: all processors). */
int sv__resolve_threads (int n_threads);

/* One thread's share of a parallel job: thread is in [0, n_threads). */
typedef void (*SvWorkFunc) (gpointer data, int thread);

/* Runs func(data, t) for t in [0, n_threads), on n_threads threads (the
 * caller's thread is one of them). */
void sv__run_parallel (int n_threads, SvWorkFunc func, gpointer data);

/* memcpy (dst, src, bytes), or memset (dst, 0, bytes) when src is NULL,
 * in n_threads even shares, each on a thread of its own (the caller's is
 * one): one core copies into fresh pages at about 1 GB/s. */
void sv__copy_parallel (gpointer dst, gconstpointer src, gsize bytes, int n_threads);
/* memset (p, 0, bytes) on up to n_threads threads (16 at most) when it is
 * large: the sums of 67 M clusters (2.7 GB) are cleared every pass. */
void sv__clear_parallel (gpointer p, gsize bytes, int n_threads);

/* Thread t's share [*a, *b) of n items split evenly over n_threads. */
static inline void
sv__share_bounds (gsize n, int t, int n_threads, gsize *a, gsize *b)
{
  *a = n * (gsize)t / (gsize)n_threads;
  *b = n * (gsize)(t + 1) / (gsize)n_threads;
}

/* ---- maskSLIC seeding over a mask served in slabs (grid.c) ---------------- */

/* Slices [z0, z1) of a mask: returns p such that p[(z·ny + y)·nx + x] is
 * the voxel's byte (nonzero = in) for z in [z0, z1), valid until the next
 * call; NULL with `error` set when the mask cannot be read. */
typedef const guint8 *(*SvMaskSlabFunc) (gpointer user_data, guint z0, guint z1, GError **error);

/* sv_seeds_mask with the mask read `depth` slices at a time (a few passes
 * over it) and the coverage map held for one slab: the same seeds. */
gboolean sv__seeds_mask_slabs (const guint shape_zyx[3], SvMaskSlabFunc slab, gpointer user_data,
                               guint depth, gint64 n_segments, SvSeeds *seeds, GError **error);

G_END_DECLS

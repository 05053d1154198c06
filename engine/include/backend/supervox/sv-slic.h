/* Supervox engine: the SLIC iterations on the CPU (the reference backend). */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "supervox/sv-seeds.h"
#include "supervox/sv-params.h"
#include "supervox/sv-prepare.h"

G_BEGIN_DECLS

/* Everything an iteration needs besides the centres. */
typedef struct
{
  const SvPrepared *image;
  const guint8 *mask;      /* NULL or nz*ny*nx bytes, nonzero = in */
  float ratio;             /* (float)(1.0 / compactness) */
  float spatial_weight;    /* sv_arith_spatial_weight (seeds.step) */
  float spacing[3];        /* z, y, x as float32 */
  int window_step[3];      /* from SvSeeds */
  gboolean slic_zero;
  gboolean ignore_colour;  /* maskSLIC's spatial-only first pass */
  int colour_shift;        /* sv_arith_colour_shift (max |v·ratio|, n voxels) */
  int n_threads;           /* <= 0: all cores */
  /* The slab [z_begin, z_end) that assignment, sums and fill visit:
   * [0, nz) for the whole volume. A streamed slab keeps global coordinates,
   * so that a slab computes exactly what the whole volume computes there;
   * image->data and nearest are then read and written in that range only. */
  guint z_begin, z_end;
} SvSlicContext;

/* Cluster centres: position and mean colour (scaled by ratio, as the
 * distance uses it). A cluster that lost all its voxels is dead for the rest
 * of the run and never wins again. */
typedef struct
{
  gsize k;
  guint nc;
  float *centres;          /* k × (3 + nc): z, y, x, colour… owned */
  guint8 *alive;           /* k, owned */
  float *max_dist_colour;  /* k, SLIC-zero maxima, start at 1; owned */
} SvClusters;

/* Fills ctx from prepared image, mask, seeds and params. */
void sv_slic_context_init (SvSlicContext *ctx, const SvPrepared *image, const guint8 *mask,
                           const SvSeeds *seeds, const SvSlicParams *params, int n_threads);

/* Clusters at the seeds with colour 0 (scikit-image does not sample the image). */
gboolean sv_clusters_init (SvClusters *clusters, const SvSeeds *seeds, guint nc, GError **error);
void sv_clusters_clear (SvClusters *clusters);

/* Assignment: nearest[v] = index of the winning cluster (lexicographic
 * (distance, index) minimum over clusters whose window holds v), or −1 for
 * masked-out voxels and voxels in no live window. Independent of n_threads. */
void sv_slic_assign (const SvSlicContext *ctx, const SvClusters *clusters, gint32 *nearest);

/* The distances the exact rule needs for the assignment `nearest` of the
 * slab [ctx->z_begin, ctx->z_end) to `clusters`: per assigned voxel, the
 * clusters whose window holds it and whose spatial term alone is below
 * the voxel's best distance (or equal to it with an index no higher than
 * the winner's), the winner included. A brute-force pass over every
 * window on ctx->n_threads threads, for benchmarks (slic-assign-count.c). */
gint64 sv_slic_assign_floor (const SvSlicContext *ctx, const SvClusters *clusters,
                             const gint32 *nearest);

/* Update: every live cluster's centre becomes the mean position and colour of
 * its voxels (exact integer / fixed-point sums, one division); clusters with
 * no voxels die. Under SLIC-zero the max colour distances are then raised. */
void sv_slic_update (const SvSlicContext *ctx, const gint32 *nearest, SvClusters *clusters);

typedef void (*SvIterationFunc) (guint iteration, guint n_iterations, gpointer user_data);

/* The whole CPU pipeline after prepare: seeding, exactly params->max_num_iter
 * iterations (maskSLIC runs its spatial-only pass first), labels = index +
 * start_label, then connectivity when enabled. labels receives nz*ny*nx
 * values. progress (may be NULL) is called after each iteration; a cancelled
 * `cancellable` stops at the next iteration boundary with G_IO_ERROR_CANCELLED.
 * n_clusters_out (may be NULL) receives K. */
gboolean sv_slic_run_cpu (const SvPrepared *image, const guint8 *mask, const SvSlicParams *params,
                          int n_threads, SvIterationFunc progress, gpointer user_data,
                          GCancellable *cancellable, gint32 *labels, gsize *n_clusters_out,
                          GError **error);

G_END_DECLS

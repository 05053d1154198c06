/* Supervox engine: the slab steps of a streamed run on the CPU. They are
 * the whole-volume steps (slic-assign.c, slic-update.c, slic-run.c) told
 * to visit one slab: the context keeps the volume's shape and global
 * coordinates, and the slab's buffers are addressed as if they were part
 * of the whole volume, so each voxel is computed exactly as in the
 * in-memory run. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include "internal.h"

/* Where element 0 of the volume would be if `slab`, which holds slices
 * from z0 on, were part of it; only the slab's slices are touched. */
static inline gpointer
volume_base (gconstpointer slab, guint z0, gsize slice_bytes)
{
  return (gpointer)((guintptr)slab - (guintptr)z0 * slice_bytes);
}

/* The context for slab [z0, z1) with prepared values `data` (NULL: steps
 * that read no image); `view` holds the image's shape. */
static void
slab_context (const SvSlicContext *ctx, guint z0, guint z1, const float *data, SvPrepared *view,
              SvSlicContext *slab)
{
  const SvPrepared *im = ctx->image;

  *view = *im;
  view->data = data != NULL
                   ? volume_base (data, z0, (gsize)im->ny * im->nx * im->nc * sizeof (float))
                   : NULL;
  *slab = *ctx;
  slab->image = view;
  slab->z_begin = z0;
  slab->z_end = z1;
}

static gint32 *
nearest_base (const SvSlicContext *ctx, gint32 *nearest, guint z0)
{
  return volume_base (nearest, z0, (gsize)ctx->image->ny * ctx->image->nx * sizeof (gint32));
}

static gboolean
cpu_assign_sum (gpointer self, const SvSlicContext *ctx, const SvClusters *clusters, guint z0,
                guint z1, const float *data, gint32 *nearest, gint64 *sums, GError **error)
{
  SvPrepared view;
  SvSlicContext slab;
  gint32 *base = nearest_base (ctx, nearest, z0);

  slab_context (ctx, z0, z1, data, &view, &slab);
  sv_slic_assign (&slab, clusters, base);
  sv__slic_sums_add (&slab, base, clusters, sums);
  return TRUE;
}

static gboolean
cpu_raise_maxima (gpointer self, const SvSlicContext *ctx, SvClusters *clusters, guint z0, guint z1,
                  const float *data, const gint32 *nearest, GError **error)
{
  SvPrepared view;
  SvSlicContext slab;

  slab_context (ctx, z0, z1, data, &view, &slab);
  sv__slic_raise_colour_maxima (&slab, nearest_base (ctx, (gint32 *)nearest, z0), clusters);
  return TRUE;
}

static gboolean
cpu_fill_unassigned (gpointer self, const SvSlicContext *ctx, const SvClusters *clusters, guint z0,
                     guint z1, gint32 *nearest, GError **error)
{
  SvPrepared view;
  SvSlicContext slab;

  slab_context (ctx, z0, z1, NULL, &view, &slab);
  sv__slic_fill_unassigned (&slab, clusters, nearest_base (ctx, nearest, z0));
  return TRUE;
}

const SvSlabSteps sv__slab_steps_cpu = {
  .name = "cpu",
  .assign_sum = cpu_assign_sum,
  .raise_maxima = cpu_raise_maxima,
  .fill_unassigned = cpu_fill_unassigned,
};

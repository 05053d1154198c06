/* Supervox engine: the slab steps of a streamed run on the CPU backend.
 * They are the whole-volume steps (slic-assign.c, slic-update.c,
 * slic-run.c) told to visit one slab: the context keeps the volume's shape
 * and global coordinates, and the slab's buffers are addressed as if they
 * were part of the whole volume, so each voxel is computed exactly as in
 * the in-memory run. Nothing is queued: each slab is done when its call
 * returns. */
#define G_LOG_DOMAIN "sv-engine"

#include "backend-private.h"
#include "internal.h"
#include "supervox/sv-memory.h"
#include "supervox/sv-error.h"

/* One pass: its context and clusters (borrowed) and its sums. */
typedef struct
{
  SvSlicContext ctx;
  const SvClusters *clusters;
  SvClusters maxima; /* SLIC-zero: the clusters with the pass's own maxima */
  gint64 *sums;      /* k × (4 + nc) */
  gsize n_sums;
  /* A slab's assignment buffer, kept for the next slab and pass: made
   * and freed for every slab, its pages were faulted in and zeroed again
   * each time (a tenth of a two-rank run at compactness 10). */
  GMutex spare_lock;
  gint32 *spare;
  gsize spare_n;
} CpuPass;

/* The spare buffer when it holds n values (else a new one), or NULL. */
static gint32 *
take_buffer (CpuPass *pass, gsize n)
{
  gint32 *buffer = NULL;

  g_mutex_lock (&pass->spare_lock);
  if (pass->spare != NULL && pass->spare_n >= n)
    buffer = g_steal_pointer (&pass->spare);
  g_mutex_unlock (&pass->spare_lock);
  return buffer != NULL ? buffer : g_try_new (gint32, n);
}

static void
give_back_buffer (CpuPass *pass, gint32 *buffer, gsize n)
{
  g_mutex_lock (&pass->spare_lock);
  if (pass->spare == NULL || pass->spare_n < n)
    {
      g_free (pass->spare);
      pass->spare = g_steal_pointer (&buffer);
      pass->spare_n = n;
    }
  g_mutex_unlock (&pass->spare_lock);
  g_free (buffer);
}

static CpuPass *
cpu_pass (SvBackend *backend)
{
  return backend->slab_pass;
}

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
slab_context (const SvSlicContext *ctx, guint z0, guint z1, const float *data,
              const guint8 *mask, SvPrepared *view, SvSlicContext *slab)
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
  slab->mask = mask;
}

static gint32 *
nearest_base (const SvSlicContext *ctx, const gint32 *nearest, guint z0)
{
  return volume_base (nearest, z0, (gsize)ctx->image->ny * ctx->image->nx * sizeof (gint32));
}

static void
cpu_release (SvBackend *backend)
{
  CpuPass *pass = cpu_pass (backend);

  if (pass == NULL)
    return;
  g_free (pass->sums);
  g_free (pass->maxima.max_dist_colour);
  g_free (pass->spare);
  g_mutex_clear (&pass->spare_lock);
  g_free (pass);
  backend->slab_pass = NULL;
}

static gboolean
cpu_begin_pass (SvBackend *backend, const SvSlicContext *ctx, const SvClusters *clusters,
                gsize k0, gsize k1, GError **error)
{
  CpuPass *pass = cpu_pass (backend);
  const gsize k = clusters->k;

  if (pass == NULL)
    {
      pass = backend->slab_pass = g_new0 (CpuPass, 1);
      g_mutex_init (&pass->spare_lock);
    }
  pass->ctx = *ctx;
  pass->clusters = clusters;
  pass->n_sums = MAX (k, 1) * (4 + clusters->nc);
  g_free (pass->sums);
  pass->sums = g_new0 (gint64, pass->n_sums);
  /* The maxima this pass raises start from the clusters'. */
  g_free (pass->maxima.max_dist_colour);
  pass->maxima = *clusters;
  pass->maxima.max_dist_colour = g_memdup2 (clusters->max_dist_colour, MAX (k, 1) * sizeof (float));
  return TRUE;
}

static gboolean
cpu_assign_sum (SvBackend *backend, guint z0, guint z1, const float *data, const guint8 *mask,
                SvSlabSink sink, gpointer sink_data, GError **error)
{
  CpuPass *pass = cpu_pass (backend);
  const gsize n = (gsize)(z1 - z0) * pass->ctx.image->ny * pass->ctx.image->nx;
  gint32 *nearest = take_buffer (pass, MAX (n, 1));
  SvPrepared view;
  SvSlicContext slab;
  gint32 *base;
  gboolean ok;

  if (nearest == NULL)
    {
      sv_set_no_memory (error, "the assignment of %u slices", z1 - z0);
      return FALSE;
    }
  base = nearest_base (&pass->ctx, nearest, z0);
  slab_context (&pass->ctx, z0, z1, data, mask, &view, &slab);
  sv_slic_assign (&slab, pass->clusters, base);
  sv__slic_sums_add (&slab, base, pass->clusters, pass->sums);
  ok = sink == NULL || sink (z0, z1, nearest, sink_data, error);
  give_back_buffer (pass, nearest, MAX (n, 1));
  return ok;
}

static gboolean
cpu_raise_maxima (SvBackend *backend, guint z0, guint z1, const float *data,
                  const guint8 *mask, const gint32 *nearest, GError **error)
{
  CpuPass *pass = cpu_pass (backend);
  SvPrepared view;
  SvSlicContext slab;

  slab_context (&pass->ctx, z0, z1, data, mask, &view, &slab);
  sv__slic_raise_colour_maxima (&slab, nearest_base (&pass->ctx, nearest, z0), &pass->maxima);
  return TRUE;
}

static gboolean
cpu_fill_unassigned (SvBackend *backend, guint z0, guint z1, const guint8 *mask, gint32 *nearest,
                     GError **error)
{
  CpuPass *pass = cpu_pass (backend);
  SvPrepared view;
  SvSlicContext slab;

  slab_context (&pass->ctx, z0, z1, NULL, mask, &view, &slab);
  sv__slic_fill_unassigned (&slab, pass->clusters, nearest_base (&pass->ctx, nearest, z0));
  return TRUE;
}

static gboolean
cpu_end_pass (SvBackend *backend, gint64 *sums, float *max_dist_colour, gsize k0, gsize k1,
              GError **error)
{
  CpuPass *pass = cpu_pass (backend);
  const gsize ns = pass->clusters->k > 0 ? pass->n_sums / pass->clusters->k : 0;

  /* The final labels' end (nothing to add): no slab is assigned after
   * it, and the connectivity may use the room. */
  if (sums == NULL && max_dist_colour == NULL)
    {
      g_mutex_lock (&pass->spare_lock);
      g_clear_pointer (&pass->spare, g_free);
      g_mutex_unlock (&pass->spare_lock);
    }
  if (sums != NULL)
    for (gsize i = k0 * ns; i < k1 * ns; i++)
      sums[i] += pass->sums[i];
  if (max_dist_colour != NULL)
    for (gsize k = k0; k < k1; k++)
      max_dist_colour[k] = MAX (max_dist_colour[k], pass->maxima.max_dist_colour[k]);
  return TRUE;
}

const SvSlabSteps sv__slab_steps_cpu = {
  .begin_pass = cpu_begin_pass,
  .assign_sum = cpu_assign_sum,
  .raise_maxima = cpu_raise_maxima,
  .fill_unassigned = cpu_fill_unassigned,
  .end_pass = cpu_end_pass,
  .release = cpu_release,
};

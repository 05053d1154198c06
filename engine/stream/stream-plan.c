/* Supervox engine: a streamed run's plan of workers. The backends that
 * run the slab steps (the caller's, or a CPU one), the slabs they share,
 * their sums and, in the first pass, their own readers of the file; and
 * whether they keep the assignment in their own memory. Used by
 * stream-slic.c. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "backend-private.h"
#include "internal.h"
#include "stream-run-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-memory.h"

/* The backends that run the slab steps (the caller's, or a CPU one) and
 * the slabs they share. */
gboolean
sv__stream_run_plan_workers (Run *run, const SvTiffReadOptions *read_options, GError **error)
{
  const SvStreamOptions *options = run->options;
  SvSlabPlan *plan = &run->plan;

  if (run->n_backends > 0)
    {
      plan->workers = run->backends;
      plan->n_workers = run->n_backends;
    }
  else
    {
      run->own_cpu = sv_backend_new ("cpu", error);
      if (run->own_cpu == NULL)
        return FALSE;
      plan->workers = &run->own_cpu;
      plan->n_workers = 1;
    }
  for (guint w = 0; w < plan->n_workers; w++)
    if (plan->workers[w]->klass->slab_steps == NULL)
      {
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                     "the %s backend cannot stream a volume", plan->workers[w]->klass->name);
        plan->n_workers = 0;
        return FALSE;
      }
  plan->image = &run->image;
  plan->mask = &run->mask;
  plan->spill = run->spill;
  plan->z_begin = run->z_begin;
  plan->z_end = run->z_end;
  plan->depth = run->depth;
  plan->plane = run->plane;
  plan->cancellable = options->cancellable;
  if (plan->n_workers > 1)
    {
      const gsize n_sums = MAX (run->clusters.k, 1) * (4 + run->nc);

      plan->worker_sums = g_new0 (gint64 *, plan->n_workers);
      for (guint w = 0; w < plan->n_workers; w++)
        if ((plan->worker_sums[w]
             = sv_try_alloc_n (n_sums, sizeof (gint64), FALSE, error,
                               "the sums of %" G_GSIZE_FORMAT " clusters", run->clusters.k))
            == NULL)
          {
            return FALSE;
          }
    }
  plan->assign_band = g_new0 (gsize, 2 * MAX (plan->n_workers, 1));
  /* A slab for each reader, in what the memory limit leaves. */
  {
    const gsize slab_bytes
        = (gsize)plan->depth * sv_tiff_slab_reader_slice_bytes (run->image.reader);

    if (run->options->source == NULL
        && (guint64)plan->n_workers * slab_bytes <= run->room.left)
      sv__slab_plan_open_readers (plan, run->input, read_options, slab_bytes);
  }
  return TRUE;
}

void
sv__stream_run_plan_clear (SvSlabPlan *plan)
{
  sv__slab_plan_close_readers (plan);
  for (guint w = 0; plan->worker_sums != NULL && w < plan->n_workers; w++)
    g_free (plan->worker_sums[w]);
  g_clear_pointer (&plan->worker_sums, g_free);
  g_clear_pointer (&plan->assign_band, g_free);
}

/* Before a pass whose assignment is needed again: the workers are asked,
 * once, to keep the assignment of their slabs in their own memory, all or
 * none. Several workers each keep only the slices of their own slabs (at
 * 4096³ on four devices a quarter of the labels fits beside a device's
 * slabs, and all of them did not). One worker keeps every slice, where
 * its connectivity starts. Under MPI a rank keeps it when its one device
 * can also take the other ranks' labels for rank 0's connectivity there
 * (store_kept): rank 0 every slice, the others their own; each rank
 * decides for itself, since the labels travel between ranks through host
 * memory either way. SV_STREAM_KEEP_ASSIGNMENT=off keeps it in the spill
 * file, for measuring. */
gboolean
sv__stream_run_try_keep (Run *run, GError **error)
{
  SvSlabPlan *plan = &run->plan;
  GError *local = NULL;
  guint kept = 0;

  const gboolean ranks = run->ranks != NULL && run->ranks->n_ranks > 1;

  if (run->keep_asked || g_strcmp0 (g_getenv ("SV_STREAM_KEEP_ASSIGNMENT"), "off") == 0)
    return TRUE;
  for (guint w = 0; w < plan->n_workers; w++)
    if (plan->workers[w]->klass->slab_steps->keep_assignment == NULL)
      return TRUE;
  if (ranks
      && (plan->n_workers != 1 || plan->workers[0]->klass->slab_steps->store_kept == NULL
          || plan->workers[0]->klass->slab_steps->connect_volume == NULL))
    return TRUE;
  /* The slabs' places were settled by the first pass: room does not grow. */
  run->keep_asked = TRUE;
  while (kept < plan->n_workers)
    {
      guint z0 = 0, z1 = run->nz;

      if (plan->n_workers > 1)
        sv__slab_plan_worker_slices (plan, kept, &z0, &z1);
      else if (ranks && run->ranks->rank != 0)
        z0 = plan->z_begin, z1 = plan->z_end;
      if (!plan->workers[kept]->klass->slab_steps->keep_assignment (
              plan->workers[kept], run->nz, z0, z1, run->plane, run->clusters.k, &local))
        break;
      kept++;
    }
  plan->assignment_kept = kept == plan->n_workers;
  /* One that could not: the others give theirs back. */
  for (guint w = 0; !plan->assignment_kept && w < kept; w++)
    plan->workers[w]->klass->slab_steps->keep_assignment (plan->workers[w], 0, 0, 0, 0, 0, NULL);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  return TRUE;
}

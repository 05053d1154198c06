/* Supervox engine: the CPU backend, the reference implementation of the
 * backend stages. It borrows the caller's volume and mask, caches the
 * prepared image across runs that share sigma, spacing and convert2lab,
 * iterates on the pipeline's host clusters and keeps the last run's labels. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "backend-private.h"
#include "supervox/sv-memory.h"
#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "internal.h"

typedef struct
{
  SvVolume volume;    /* shallow copy: data borrowed from the caller, unit not kept */
  const guint8 *mask; /* NULL or nz*ny*nx bytes, borrowed */

  SvPrepared *prepared; /* cache, valid for prepared_params */
  SvSlicParams prepared_params;
  const SvPrepared *given; /* an image prepared by the caller, borrowed */

  gint32 *nearest; /* the assignment while a run is going, nz*ny*nx */
  gint32 *labels;  /* the last run's, nz*ny*nx, owned */

  /* The clusters the last assignment of the pass used, and whether its
   * update gave them back unchanged (see cpu_iterate). */
  SvClusters seen;
  gboolean settled;

  /* Benchmarks: the exact rule's floor of each assignment of the run
   * (sv_backend_cpu_set_floor_counting). */
  gboolean count_floor;
  GArray *floor_counts; /* gint64, one per iteration */
} SvBackendCpu;

static SvBackendCpu *
cpu (SvBackend *backend)
{
  return sv_backend_get_priv (backend);
}

static gsize
n_voxels (const SvBackendCpu *self)
{
  return (gsize)self->volume.nz * self->volume.ny * self->volume.nx;
}

static gboolean
cpu_create (SvBackend *backend, GError **error)
{
  sv_backend_set_priv (backend, g_new0 (SvBackendCpu, 1));
  return TRUE;
}

static void
cpu_destroy (SvBackend *backend)
{
  SvBackendCpu *self = cpu (backend);

  g_clear_pointer (&self->prepared, sv_prepared_free);
  g_clear_pointer (&self->nearest, g_free);
  g_clear_pointer (&self->labels, g_free);
  sv_clusters_clear (&self->seen);
  g_clear_pointer (&self->floor_counts, g_array_unref);
  g_free (self);
}

static gboolean
cpu_set_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask, GError **error)
{
  SvBackendCpu *self = cpu (backend);

  if (sv_volume_n_voxels (volume) == 0 || volume->nc == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "the volume is empty (%u×%u×%u, %u channels)", volume->nz, volume->ny,
                   volume->nx, volume->nc);
      return FALSE;
    }
  self->volume = *volume;
  self->volume.unit = NULL;
  self->mask = mask;
  g_clear_pointer (&self->prepared, sv_prepared_free);
  g_clear_pointer (&self->labels, g_free);
  return TRUE;
}

static const SvPrepared *
cpu_prepare (SvBackend *backend, const SvSlicParams *params, int n_threads, gboolean *reused,
             GError **error)
{
  SvBackendCpu *self = cpu (backend);

  if (self->given != NULL)
    return self->given;
  if (self->prepared != NULL && sv_slic_params_same_prepare (&self->prepared_params, params))
    {
      *reused = TRUE;
      return self->prepared;
    }
  g_clear_pointer (&self->prepared, sv_prepared_free);
  self->prepared = sv_prepare (&self->volume, self->mask, params, n_threads, error);
  if (self->prepared != NULL)
    self->prepared_params = *params;
  return self->prepared;
}

static gboolean
cpu_start (SvBackend *backend, const SvSlicRun *run, GError **error)
{
  SvBackendCpu *self = cpu (backend);
  const gsize n = n_voxels (self);

  self->settled = FALSE;
  if (self->floor_counts != NULL)
    g_array_set_size (self->floor_counts, 0);
  g_clear_pointer (&self->labels, g_free);
  g_clear_pointer (&self->nearest, g_free);
  self->nearest = sv_try_alloc_n (n, sizeof (gint32), FALSE, error,
                                  "the labels of %" G_GSIZE_FORMAT " voxels", n);
  if (self->nearest == NULL)
    return FALSE;
  for (gsize v = 0; v < n; v++)
    self->nearest[v] = -1;
  return TRUE;
}

/* The host clusters are the CPU's own: the pipeline has reset the maxima. */
static gboolean
cpu_begin_pass (SvBackend *backend, const SvSlicRun *run, GError **error)
{
  cpu (backend)->settled = FALSE;
  return TRUE;
}

/* Within a pass an iteration is a function of the clusters alone (the
 * image, mask and parameters stay): once an update gives back, bit for
 * bit, the clusters its assignment used, every later iteration of the pass
 * would compute the same assignment and clusters again, so it is skipped.
 * The labels and centres are those of running it. */
static gboolean
cpu_iterate (SvBackend *backend, SvSlicRun *run, GError **error)
{
  SvBackendCpu *self = cpu (backend);

  if (self->settled)
    {
      /* A skipped iteration repeats the last assignment, and its floor. */
      if (self->count_floor && self->floor_counts->len > 0)
        {
          const gint64 last
              = g_array_index (self->floor_counts, gint64, self->floor_counts->len - 1);
          g_array_append_val (self->floor_counts, last);
        }
      return TRUE;
    }
  const gboolean remembered = sv__clusters_remember (&self->seen, &run->clusters, run->ctx.n_threads);

  sv_slic_assign (&run->ctx, &run->clusters, self->nearest);
  if (self->count_floor)
    {
      gint64 needed = sv_slic_assign_floor (&run->ctx, &run->clusters, self->nearest);
      g_array_append_val (self->floor_counts, needed);
    }
  sv_slic_update (&run->ctx, self->nearest, &run->clusters);
  self->settled = remembered && sv__clusters_same (&self->seen, &run->clusters, run->ctx.n_threads);
  return TRUE;
}

/* Labels from an assignment, in place. */
static void
assignment_to_labels (const SvBackendCpu *self, const SvSlicRun *run, gboolean fill,
                      gint32 *nearest)
{
  const int start_label = run->params->start_label;

  if (fill)
    sv__slic_fill_unassigned (&run->ctx, &run->clusters, nearest);
  for (gsize v = 0; v < n_voxels (self); v++)
    nearest[v] = nearest[v] < 0 ? start_label - 1 : nearest[v] + start_label;
}

static gboolean
cpu_assignment_labels (SvBackend *backend, const SvSlicRun *run, gboolean fill, GError **error)
{
  SvBackendCpu *self = cpu (backend);

  assignment_to_labels (self, run, fill, self->nearest);
  return TRUE;
}

static gboolean
cpu_snapshot_labels (SvBackend *backend, const SvSlicRun *run, gint32 *labels, GError **error)
{
  SvBackendCpu *self = cpu (backend);

  if (self->nearest == NULL)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA, "no run is going");
      return FALSE;
    }
  memcpy (labels, self->nearest, n_voxels (self) * sizeof (gint32));
  assignment_to_labels (self, run, run->iteration > 0, labels);
  return TRUE;
}

static gboolean
cpu_connect (SvBackend *backend, const SvSlicRun *run, gint64 min_size, gint64 max_size,
             gint64 *n_labels, GError **error)
{
  SvBackendCpu *self = cpu (backend);
  const gsize n = n_voxels (self);

  self->labels = sv_try_alloc_n (n, sizeof (gint32), FALSE, error,
                                 "the labels of %" G_GSIZE_FORMAT " voxels", n);
  if (self->labels == NULL)
    return FALSE;
  *n_labels = sv_connectivity_enforce_threads (
      self->nearest, self->volume.nz, self->volume.ny, self->volume.nx, min_size, max_size,
      run->params->start_label, run->params->connectivity_rule, self->labels, run->ctx.n_threads);
  g_clear_pointer (&self->nearest, g_free);
  return TRUE;
}

static gboolean
cpu_count_labels (SvBackend *backend, const SvSlicRun *run, gint64 *n_labels, GError **error)
{
  SvBackendCpu *self = cpu (backend);
  g_autofree guint8 *seen = g_new0 (guint8, run->clusters.k + 1);

  self->labels = g_steal_pointer (&self->nearest);
  *n_labels = 0;
  for (gsize v = 0; v < n_voxels (self); v++)
    {
      gint64 k = (gint64)self->labels[v] - run->params->start_label;
      if (k >= 0 && !seen[k])
        {
          seen[k] = 1;
          (*n_labels)++;
        }
    }
  return TRUE;
}

static void
cpu_finish (SvBackend *backend, gboolean ok)
{
  g_clear_pointer (&cpu (backend)->nearest, g_free);
}

static gboolean
cpu_get_labels (SvBackend *backend, gint32 *labels, GError **error)
{
  SvBackendCpu *self = cpu (backend);

  if (self->labels == NULL)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "there are no labels yet: run SLIC first");
      return FALSE;
    }
  memcpy (labels, self->labels, n_voxels (self) * sizeof (gint32));
  return TRUE;
}

static gint32 *
cpu_take_labels (SvBackend *backend, GError **error)
{
  SvBackendCpu *self = cpu (backend);

  if (self->labels == NULL)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "there are no labels yet: run SLIC first");
      return NULL;
    }
  return g_steal_pointer (&self->labels);
}

static const SvBackendClass cpu_class = {
  .name = "cpu",
  .display_name = "the CPU",
  .title = "CPU",
  .is_device = FALSE,
  .create = cpu_create,
  .destroy = cpu_destroy,
  .set_volume = cpu_set_volume,
  .prepare = cpu_prepare,
  .start = cpu_start,
  .begin_pass = cpu_begin_pass,
  .iterate = cpu_iterate,
  .assignment_labels = cpu_assignment_labels,
  .connect = cpu_connect,
  .count_labels = cpu_count_labels,
  .snapshot_labels = cpu_snapshot_labels,
  .finish = cpu_finish,
  .get_labels = cpu_get_labels,
  .take_labels = cpu_take_labels,
  .slab_steps = &sv__slab_steps_cpu,
};

const SvBackendClass *
sv_backend_cpu_class (void)
{
  return &cpu_class;
}

gboolean
sv_backend_cpu_set_floor_counting (SvBackend *backend, gboolean enable)
{
  SvBackendCpu *self;

  g_return_val_if_fail (backend != NULL, FALSE);
  if (backend->klass != &cpu_class)
    return FALSE;
  self = cpu (backend);
  self->count_floor = enable;
  if (enable && self->floor_counts == NULL)
    self->floor_counts = g_array_new (FALSE, FALSE, sizeof (gint64));
  return TRUE;
}

const gint64 *
sv_backend_cpu_get_floor_counts (SvBackend *backend, guint *n_iterations)
{
  SvBackendCpu *self;

  g_return_val_if_fail (backend != NULL && n_iterations != NULL, NULL);
  *n_iterations = 0;
  if (backend->klass != &cpu_class)
    return NULL;
  self = cpu (backend);
  if (self->floor_counts == NULL)
    return NULL;
  *n_iterations = self->floor_counts->len;
  return (const gint64 *)(gpointer)self->floor_counts->data;
}

SvBackend *
sv__backend_cpu_new_prepared (const SvPrepared *image, const guint8 *mask)
{
  SvBackend *backend = sv_backend_new ("cpu", NULL);
  SvBackendCpu *self = cpu (backend);
  SvVolume *shape = &self->volume;

  /* The pipeline reads the shape from the volume; the data is the image's. */
  shape->nz = image->nz;
  shape->ny = image->ny;
  shape->nx = image->nx;
  shape->nc = image->nc;
  self->mask = mask;
  self->given = image;
  sv__backend_loaded (backend, shape, mask);
  return backend;
}

/* Supervox engine: the CPU backend, the reference implementation of the
 * backend interface. It keeps a copy of the volume and mask, caches the
 * prepared image across runs that share sigma, spacing and convert2lab, and
 * keeps the last run's labels and centres. */
#define G_LOG_DOMAIN "sv-engine"

#include "backend.h"

#include <math.h>
#include <string.h>

#include "error.h"
#include "internal.h"
#include "prepare.h"
#include "slic.h"

typedef struct
{
  SvVolume volume; /* shallow copy: data borrowed from the caller, unit not kept */
  gboolean has_volume;
  const guint8 *mask; /* NULL or nz*ny*nx bytes, borrowed */

  SvPrepared *prepared; /* cache, valid for prepared_params */
  SvSlicParams prepared_params;

  gint32 *labels; /* last run, nz*ny*nx, owned */
  float *centres; /* last run, k × 3 */
  gsize k;
} SvBackendCpu;

static gpointer
cpu_create (GError **error)
{
  return g_new0 (SvBackendCpu, 1);
}

static void
cpu_forget_results (SvBackendCpu *self)
{
  g_clear_pointer (&self->labels, g_free);
  g_clear_pointer (&self->centres, g_free);
  self->k = 0;
}

static void
cpu_destroy (gpointer p)
{
  SvBackendCpu *self = p;

  g_clear_pointer (&self->prepared, sv_prepared_free);
  cpu_forget_results (self);
  g_free (self);
}

static gboolean
cpu_set_volume (gpointer p, const SvVolume *volume, const guint8 *mask, GError **error)
{
  SvBackendCpu *self = p;
  gsize n_voxels = (gsize)volume->nz * volume->ny * volume->nx;

  if (n_voxels == 0 || volume->nc == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "the volume is empty (%u×%u×%u, %u channels)", volume->nz, volume->ny,
                   volume->nx, volume->nc);
      return FALSE;
    }
  /* Borrowed: the caller keeps them alive (backend.h). */
  self->volume = *volume;
  self->volume.unit = NULL;
  self->mask = mask;
  self->has_volume = TRUE;
  g_clear_pointer (&self->prepared, sv_prepared_free);
  cpu_forget_results (self);
  return TRUE;
}

typedef struct
{
  const SvRunControl *control;
} ProgressAdapter;

static void
iteration_cb (guint iteration, guint n_iterations, gpointer user_data)
{
  ProgressAdapter *adapter = user_data;
  adapter->control->progress (SV_STAGE_ITERATE, iteration, n_iterations,
                              adapter->control->user_data);
}

static gboolean
cpu_run (gpointer p, const SvSlicParams *params, const SvRunControl *control, SvRunStats *stats,
         GError **error)
{
  SvBackendCpu *self = p;
  gsize n_voxels;
  SvSlicParams run_params;
  SvClusters clusters = { 0 };
  SvSlicTimings timings = { 0 };
  ProgressAdapter adapter = { control };
  g_autofree gint32 *labels = NULL;
  gint64 t0;

  memset (stats, 0, sizeof *stats);
  if (!self->has_volume)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "no volume is loaded");
      return FALSE;
    }
  if (!sv_slic_params_validate (params, error))
    return FALSE;
  n_voxels = (gsize)self->volume.nz * self->volume.ny * self->volume.nx;

  if (control->progress != NULL)
    control->progress (SV_STAGE_PREPARE, 0, 0, control->user_data);
  t0 = g_get_monotonic_time ();
  if (self->prepared != NULL && sv_slic_params_same_prepare (&self->prepared_params, params))
    stats->prepare_reused = TRUE;
  else
    {
      g_clear_pointer (&self->prepared, sv_prepared_free);
      self->prepared = sv_prepare (&self->volume, self->mask, params, control->n_threads, error);
      if (self->prepared == NULL)
        return FALSE;
      self->prepared_params = *params;
    }
  stats->seconds_prepare = (double)(g_get_monotonic_time () - t0) / G_USEC_PER_SEC;

  if (g_cancellable_set_error_if_cancelled (control->cancellable, error))
    return FALSE;

  /* Teaching mode: the state after n iterations, before connectivity. */
  run_params = *params;
  if (control->stop_after_iteration >= 0)
    {
      run_params.max_num_iter = MIN (run_params.max_num_iter, control->stop_after_iteration);
      run_params.enforce_connectivity = FALSE;
    }

  labels = g_try_new (gint32, n_voxels);
  if (labels == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "not enough memory for the labels of %" G_GSIZE_FORMAT " voxels", n_voxels);
      return FALSE;
    }
  if (!sv__slic_run (self->prepared, self->mask, &run_params, control->n_threads,
                     control->progress != NULL ? iteration_cb : NULL, &adapter,
                     control->cancellable, labels, &clusters, &timings, error))
    return FALSE;

  if (control->progress != NULL && run_params.enforce_connectivity)
    control->progress (SV_STAGE_CONNECT, timings.iterations, timings.iterations,
                       control->user_data);

  cpu_forget_results (self);
  self->labels = g_steal_pointer (&labels);
  self->k = clusters.k;
  self->centres = g_new (float, MAX (clusters.k, 1) * 3);
  for (gsize k = 0; k < clusters.k; k++)
    for (int a = 0; a < 3; a++)
      self->centres[3 * k + a]
          = clusters.alive[k] ? clusters.centres[k * (3 + clusters.nc) + a] : NAN;
  sv_clusters_clear (&clusters);

  stats->n_clusters = self->k;
  stats->n_labels = (gsize)MAX (timings.n_labels, 0);
  stats->iterations = timings.iterations;
  stats->seconds_iterate = timings.seconds_iterate;
  stats->seconds_connect = timings.seconds_connect;

  if (control->progress != NULL)
    control->progress (SV_STAGE_DONE, timings.iterations, timings.iterations, control->user_data);
  return TRUE;
}

static gboolean
check_result (SvBackendCpu *self, GError **error)
{
  if (self->labels == NULL)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "there are no labels yet: run SLIC first");
      return FALSE;
    }
  return TRUE;
}

static gboolean
cpu_get_labels (gpointer p, gint32 *labels, GError **error)
{
  SvBackendCpu *self = p;

  if (!check_result (self, error))
    return FALSE;
  memcpy (labels, self->labels,
          (gsize)self->volume.nz * self->volume.ny * self->volume.nx * sizeof (gint32));
  return TRUE;
}

static gint32 *
cpu_take_labels (gpointer p, GError **error)
{
  SvBackendCpu *self = p;

  if (!check_result (self, error))
    return NULL;
  return g_steal_pointer (&self->labels);
}

static gboolean
cpu_get_slice (gpointer p, SvAxis axis, guint index, gint32 *out, GError **error)
{
  SvBackendCpu *self = p;
  const gsize nz = self->volume.nz, ny = self->volume.ny, nx = self->volume.nx;
  const guint limit = axis == SV_AXIS_XY ? nz : axis == SV_AXIS_XZ ? ny : nx;

  if (!check_result (self, error))
    return FALSE;
  if (index >= limit)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "slice %u is out of range: the volume has %u along that axis", index, limit);
      return FALSE;
    }
  switch (axis)
    {
    case SV_AXIS_XY:
      memcpy (out, self->labels + index * ny * nx, ny * nx * sizeof (gint32));
      break;
    case SV_AXIS_XZ:
      for (gsize z = 0; z < nz; z++)
        memcpy (out + z * nx, self->labels + (z * ny + index) * nx, nx * sizeof (gint32));
      break;
    case SV_AXIS_YZ:
      for (gsize z = 0; z < nz; z++)
        for (gsize y = 0; y < ny; y++)
          out[z * ny + y] = self->labels[(z * ny + y) * nx + index];
      break;
    default:
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM, "unknown axis %d",
                   (int)axis);
      return FALSE;
    }
  return TRUE;
}

static gboolean
cpu_get_centres (gpointer p, float *zyx, gsize *k, GError **error)
{
  SvBackendCpu *self = p;

  /* Centres outlive the labels, which sv_backend_take_labels may have taken. */
  if (self->centres == NULL)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "there are no centres yet: run SLIC first");
      return FALSE;
    }
  *k = self->k;
  if (zyx != NULL)
    memcpy (zyx, self->centres, self->k * 3 * sizeof (float));
  return TRUE;
}

static const SvBackendClass cpu_class = {
  .name = "cpu",
  .create = cpu_create,
  .destroy = cpu_destroy,
  .take_labels = cpu_take_labels,
  .set_volume = cpu_set_volume,
  .run = cpu_run,
  .get_labels = cpu_get_labels,
  .get_slice = cpu_get_slice,
  .get_centres = cpu_get_centres,
};

const SvBackendClass *
sv_backend_cpu_class (void)
{
  return &cpu_class;
}

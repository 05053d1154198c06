/* Supervox engine: a job's results and their labels, on the host or left on
 * the device until something needs them. */
#define G_LOG_DOMAIN "sv-job"

#include "job-result.h"

#include <string.h>

#include <glib/gstdio.h>

#include "contingency.h"
#include "supervox/sv-memory.h"
#include "supervox/sv-error.h"

/* The public result and what only this file touches. */
typedef struct
{
  SvJobResult result;
  GMutex lock;          /* serialises the one copy from the device */
  SvLabels labels;      /* shape and spacing always; data once on the host */
  const SvLabels *host; /* &labels once labels.data is there (atomic) */
} ResultBox;

G_STATIC_ASSERT (G_STRUCT_OFFSET (ResultBox, result) == 0);

SvJobResult *
sv__job_result_new (guint64 generation, const SvSlicParams *params, const char *backend_name,
                    const guint shape[3], const double spacing[3])
{
  ResultBox *box = g_atomic_rc_box_new0 (ResultBox);
  SvJobResult *result = &box->result;

  g_mutex_init (&box->lock);
  result->generation = generation;
  result->params = *params;
  result->stop_after_iteration = -1;
  result->preview_factor = 1;
  result->backend_name = g_strdup (backend_name);
  memcpy (result->labels_shape, shape, sizeof result->labels_shape);
  box->labels.nz = shape[0];
  box->labels.ny = shape[1];
  box->labels.nx = shape[2];
  memcpy (box->labels.spacing, spacing, sizeof box->labels.spacing);
  return result;
}

void
sv__job_result_set_host_labels (SvJobResult *result, gint32 *labels)
{
  ResultBox *box = (ResultBox *)result;

  g_return_if_fail (box->labels.data == NULL);
  box->labels.data = labels;
  g_atomic_pointer_set (&box->host, &box->labels);
}

SvJobResult *
sv__job_step_result_new (const SvJobRequest *request, const SvVolume *volume,
                         const char *backend_name, gint32 *labels, float *centres, gsize n_centres,
                         guint iterations)
{
  const guint shape[3] = { volume->nz, volume->ny, volume->nx };
  SvJobResult *result = sv__job_result_new (request->generation, &request->params, backend_name,
                                            shape, request->params.spacing);

  sv__job_result_set_host_labels (result, labels);
  result->centres = centres;
  result->n_centres = n_centres;
  result->stats.n_clusters = n_centres;
  result->stats.iterations = iterations;
  return result;
}

SvJobResult *
sv_job_result_new_for_labels (SvLabels *labels, guint64 generation, const char *source,
                              double seconds)
{
  const guint shape[3] = { labels->nz, labels->ny, labels->nx };
  const gsize n = sv_labels_n_voxels (labels);
  SvDenseLabels dense = { 0 };
  SvSlicParams params;
  SvJobResult *result;
  gboolean has_background = FALSE;

  sv_slic_params_init_defaults (&params);
  params.start_label = 1;
  params.n_segments = 0;
  memcpy (params.spacing, labels->spacing, sizeof params.spacing);
  result = sv__job_result_new (generation, &params, source, shape, labels->spacing);
  for (gsize i = 0; i < n && !has_background; i++)
    has_background = labels->data[i] == 0;
  sv__dense_labels_init (&dense, labels->data, n);
  result->stats.n_labels = dense.n_distinct - has_background;
  sv__dense_labels_clear (&dense);
  result->seconds_total = seconds;
  sv__job_result_set_host_labels (result, g_steal_pointer (&labels->data));
  sv_labels_free (labels);
  return result;
}

SvJobResult *
sv_job_result_ref (SvJobResult *result)
{
  g_return_val_if_fail (result != NULL, NULL);
  return g_atomic_rc_box_acquire (result);
}

static void
job_result_clear (gpointer data)
{
  ResultBox *box = data;
  SvJobResult *result = &box->result;

  g_clear_pointer (&box->labels.data, g_free);
  g_mutex_clear (&box->lock);
  g_clear_pointer (&result->centres, g_free);
  g_clear_pointer (&result->backend_name, g_free);
  g_clear_pointer (&result->fallback_message, g_free);
  /* A streamed result's label file is its own. */
  if (result->labels_path != NULL)
    g_remove (result->labels_path);
  g_clear_pointer (&result->labels_path, g_free);
  if (result->device_data && result->device_data_free)
    result->device_data_free (result->device_data);
  result->device_data = NULL;
}

void
sv_job_result_unref (SvJobResult *result)
{
  g_return_if_fail (result != NULL);
  g_atomic_rc_box_release_full (result, job_result_clear);
}

gboolean
sv_job_result_has_host_labels (const SvJobResult *result)
{
  g_return_val_if_fail (result != NULL, FALSE);
  return g_atomic_pointer_get (&((ResultBox *)result)->host) != NULL;
}

const SvLabels *
sv_job_result_get_labels (const SvJobResult *result, GError **error)
{
  ResultBox *box = (ResultBox *)result;
  const SvLabels *labels;

  g_return_val_if_fail (result != NULL, NULL);
  labels = g_atomic_pointer_get (&box->host);
  if (labels != NULL)
    return labels;

  g_mutex_lock (&box->lock);
  if (box->host == NULL)
    {
      const SvDeviceLabelsReader *reader = result->device_labels;
      gsize n = sv_labels_n_voxels (&box->labels);
      gint32 *data = NULL;

      if (reader == NULL)
        g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                             "the result has no labels");
      else if ((data = sv_try_alloc_n (n, sizeof (gint32), FALSE, error, "the labels")) == NULL)
        ;
      else if (!reader->download (result->device_data, data, error))
        g_clear_pointer (&data, g_free);
      if (data != NULL)
        sv__job_result_set_host_labels ((SvJobResult *)result, data);
    }
  labels = box->host;
  g_mutex_unlock (&box->lock);
  return labels;
}

gint32
sv_job_result_probe_label (const SvJobResult *result, guint z, guint y, guint x)
{
  g_autoptr (GError) error = NULL;
  gint32 label;
  gsize i;

  g_return_val_if_fail (result != NULL, 0);
  if (sv_job_result_has_host_labels (result) || result->device_labels == NULL)
    return sv_job_result_label_at (result, z, y, x);
  if (!sv_job_result_label_index (result, z, y, x, &i))
    return result->params.start_label - 1;
  if (!result->device_labels->read (result->device_data, i, &label, &error))
    {
      g_debug ("label of voxel (%u, %u, %u) not read: %s", z, y, x, error->message);
      return result->params.start_label - 1;
    }
  return label;
}

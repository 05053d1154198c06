/* Supervox engine: the teaching steps of a job, kept as snapshots. */
#include "job-teaching.h"

struct _SvTeachingCache
{
  gsize n_voxels;
  gboolean valid;
  char *key; /* the parameters as JSON, with what does not change a step cleared */
  char backend[16];
  int start_label;
  GPtrArray *steps; /* SvTeachingStep * by iteration; NULL where not stored */
};

static void
step_free (gpointer data)
{
  SvTeachingStep *step = data;

  if (step == NULL)
    return;
  g_free (step->labels);
  g_free (step->centres);
  g_free (step);
}

/* The parameters that decide a step, as text (JSON compares every field
 * and no padding): the iteration count and connectivity do not (a step
 * stops early and never enforces connectivity). */
static char *
step_key (const SvSlicParams *params)
{
  SvSlicParams key = *params;

  key.max_num_iter = 0;
  key.enforce_connectivity = FALSE;
  key.min_size_factor = 0;
  key.max_size_factor = 0;
  key.connectivity_rule = SV_CONNECTIVITY_RULE_CONNECTED;
  return sv_slic_params_to_json (&key);
}

static gboolean
key_equal (const SvTeachingCache *cache, const SvSlicParams *params, const char *backend)
{
  g_autofree char *key = NULL;

  if (!cache->valid || g_strcmp0 (backend, cache->backend) != 0)
    return FALSE;
  key = step_key (params);
  return g_strcmp0 (key, cache->key) == 0;
}

SvTeachingCache *
sv__teaching_cache_new (gsize n_voxels)
{
  SvTeachingCache *cache = g_new0 (SvTeachingCache, 1);

  cache->n_voxels = n_voxels;
  cache->steps = g_ptr_array_new_with_free_func (step_free);
  return cache;
}

void
sv__teaching_cache_free (SvTeachingCache *cache)
{
  if (cache == NULL)
    return;
  g_ptr_array_unref (cache->steps);
  g_free (cache->key);
  g_free (cache);
}

const SvTeachingStep *
sv__teaching_cache_lookup (SvTeachingCache *cache, const SvSlicParams *params,
                           const char *backend, guint iteration)
{
  if (!key_equal (cache, params, backend) || iteration >= cache->steps->len)
    return NULL;
  return g_ptr_array_index (cache->steps, iteration);
}

gboolean
sv__teaching_cache_begin (SvTeachingCache *cache, const SvSlicParams *params, const char *backend)
{
  guint64 bytes = (guint64)cache->n_voxels * sizeof (gint32) * (guint64)MAX (params->max_num_iter, 0);

  if (key_equal (cache, params, backend))
    return TRUE;
  g_ptr_array_set_size (cache->steps, 0);
  cache->valid = FALSE;
  if (bytes > SV_TEACHING_CACHE_MAX_BYTES)
    return FALSE;
  g_free (cache->key);
  cache->key = step_key (params);
  cache->start_label = params->start_label;
  g_strlcpy (cache->backend, backend, sizeof cache->backend);
  cache->valid = TRUE;
  return TRUE;
}

gboolean
sv__teaching_cache_store (SvTeachingCache *cache, const SvIterationView *view, guint iteration,
                          GError **error)
{
  g_autoptr (GError) local = NULL;
  SvTeachingStep *step;
  gsize k = 0;

  if (!cache->valid)
    return TRUE;
  if (iteration < cache->steps->len && g_ptr_array_index (cache->steps, iteration) != NULL)
    return TRUE;
  step = g_new0 (SvTeachingStep, 1);
  step->labels = g_new (gint32, MAX (cache->n_voxels, 1));
  if (!sv_iteration_view_get_labels (view, step->labels, error)
      || !sv_iteration_view_get_centres (view, NULL, &k, error))
    {
      step_free (step);
      return FALSE;
    }
  step->centres = g_new0 (float, MAX (k, 1) * 3);
  if (k > 0 && !sv_iteration_view_get_centres (view, step->centres, &k, error))
    {
      step_free (step);
      return FALSE;
    }
  step->n_centres = k;
  g_strlcpy (step->backend, sv_iteration_view_get_backend_name (view), sizeof step->backend);

  /* Teaching labels are cluster index + start label: a bitmap over the
   * clusters counts the distinct ones. */
  {
    g_autofree guint8 *seen = g_new0 (guint8, k + 1);
    const gint32 first = cache->start_label;
    for (gsize i = 0; i < cache->n_voxels; i++)
      {
        gint64 c = (gint64)step->labels[i] - first;
        if (c >= 0 && c < (gint64)k && !seen[c])
          {
            seen[c] = 1;
            step->n_labels++;
          }
      }
  }

  if (iteration >= cache->steps->len)
    g_ptr_array_set_size (cache->steps, iteration + 1);
  g_ptr_array_index (cache->steps, iteration) = step;
  return TRUE;
}

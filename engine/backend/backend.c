/* Supervox engine: the backend registry, the backend handle and the
 * dispatch of sv_backend_* calls to the chosen backend's table. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-memory.h"
#include "supervox/sv-backend.h"

#include <string.h>

#include "backend-private.h"
#include "supervox/sv-error.h"

#define MAX_BACKENDS 8

static GMutex registry_lock;
static const SvBackendClass *registry[MAX_BACKENDS];
static guint n_registered;

void
sv_backend_register (const SvBackendClass *klass)
{
  g_return_if_fail (klass != NULL && klass->name != NULL && klass->create != NULL);

  g_mutex_lock (&registry_lock);
  for (guint i = 0; i < n_registered; i++)
    if (strcmp (registry[i]->name, klass->name) == 0)
      {
        /* A second registration under the same name replaces the first. */
        registry[i] = klass;
        g_mutex_unlock (&registry_lock);
        return;
      }
  if (n_registered < MAX_BACKENDS)
    registry[n_registered++] = klass;
  else
    g_critical ("too many backends registered; '%s' ignored", klass->name);
  g_mutex_unlock (&registry_lock);
}

/* The class registered under name; the CPU class is always there. */
static const SvBackendClass *
lookup (const char *name)
{
  const SvBackendClass *found = NULL;

  if (strcmp (name, "cpu") == 0)
    return sv_backend_cpu_class ();
  g_mutex_lock (&registry_lock);
  for (guint i = 0; i < n_registered && found == NULL; i++)
    if (strcmp (registry[i]->name, name) == 0)
      found = registry[i];
  g_mutex_unlock (&registry_lock);
  return found;
}

static SvBackend *
instantiate (const SvBackendClass *klass, GError **error)
{
  SvBackend *backend = g_new0 (SvBackend, 1);

  backend->klass = klass;
  if (!klass->create (backend, error))
    {
      g_free (backend);
      return NULL;
    }
  return backend;
}

SvBackend *
sv_backend_new (const char *name, GError **error)
{
  const SvBackendClass *klass;

  if (name == NULL)
    name = "auto";

  if (strcmp (name, "auto") == 0)
    {
      klass = lookup ("cuda");
      if (klass != NULL)
        {
          g_autoptr (GError) local = NULL;
          SvBackend *backend = instantiate (klass, &local);
          if (backend != NULL)
            return backend;
          g_info ("CUDA backend unavailable, using the CPU: %s", local->message);
        }
      return instantiate (sv_backend_cpu_class (), error);
    }

  klass = lookup (name);
  if (klass == NULL)
    {
      if (strcmp (name, "cuda") == 0)
        g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                             "this build has no CUDA backend");
      else
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                     "unknown backend '%s': use cpu, cuda or auto", name);
      return NULL;
    }
  return instantiate (klass, error);
}

SvBackend *
sv_backend_new_of_class (const SvBackendClass *klass, GError **error)
{
  g_return_val_if_fail (klass != NULL, NULL);
  return instantiate (klass, error);
}

gboolean
sv_backend_choose (const char *word, SvBackendChoice *choice, GError **error)
{
  memset (choice, 0, sizeof *choice);
  if (word == NULL)
    word = "auto";
  choice->is_auto = strcmp (word, "auto") == 0;
  choice->wants_device = strcmp (word, "cuda") == 0;
  if (!choice->is_auto && !choice->wants_device && strcmp (word, "cpu") != 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "unknown backend '%s': use cpu, cuda or auto", word);
      return FALSE;
    }
  if (choice->is_auto || choice->wants_device)
    choice->device = lookup ("cuda");
  return TRUE;
}

const SvBackendClass *
sv_backend_resolve (const SvBackendChoice *choice, guint n_devices)
{
  if (choice->wants_device)
    return choice->device;
  if (choice->is_auto && choice->device != NULL && n_devices > 0)
    return choice->device;
  return sv_backend_cpu_class ();
}

const SvBackendClass *
sv_backend_class_lookup (const char *name)
{
  return name != NULL ? lookup (name) : NULL;
}

const SvBackendClass *
sv_backend_get_class (SvBackend *backend)
{
  g_return_val_if_fail (backend != NULL, NULL);
  return backend->klass;
}

gboolean
sv_backend_class_is_device (const SvBackendClass *klass)
{
  return klass != NULL && klass->is_device;
}

gboolean
sv_backend_class_can_stream (const SvBackendClass *klass)
{
  return klass != NULL && klass->slab_steps != NULL;
}

gboolean
sv_backend_class_keeps_labels_on_device (const SvBackendClass *klass)
{
  return klass != NULL && klass->device_labels != NULL;
}

const char *
sv_backend_class_display_name (const SvBackendClass *klass, const char *fallback)
{
  if (klass == NULL)
    return fallback;
  return klass->display_name != NULL ? klass->display_name : klass->name;
}

const char *
sv_backend_class_title (const SvBackendClass *klass, const char *fallback)
{
  if (klass == NULL)
    return fallback;
  return klass->title != NULL ? klass->title : klass->name;
}

const char *
sv_backend_class_name (const SvBackendClass *klass)
{
  return klass != NULL ? klass->name : NULL;
}

int
sv_backend_class_device_count (const SvBackendClass *klass)
{
  return klass != NULL && klass->device_count != NULL ? klass->device_count () : 0;
}

gboolean
sv_backend_class_device_free_bytes (const SvBackendClass *klass, int device, guint64 *free_bytes)
{
  *free_bytes = 0;
  return klass != NULL && klass->device_free_bytes != NULL
         && klass->device_free_bytes (device, free_bytes, NULL);
}

SvBackend *
sv_backend_new_on_device (const SvBackendClass *klass, int device, GError **error)
{
  g_return_val_if_fail (klass != NULL, NULL);
  if (klass->new_on_device == NULL)
    return sv_backend_new_of_class (klass, error);
  return klass->new_on_device (device, error);
}

void
sv_backend_set_memory_limit (SvBackend *backend, guint64 bytes)
{
  if (backend->klass->set_memory_limit != NULL)
    backend->klass->set_memory_limit (backend, bytes);
}

void
sv_backend_free (SvBackend *backend)
{
  if (backend == NULL)
    return;
  if (backend->klass->slab_steps != NULL)
    backend->klass->slab_steps->release (backend);
  backend->klass->destroy (backend);
  g_free (backend->centres);
  g_free (backend);
}

gpointer
sv_backend_get_priv (SvBackend *backend)
{
  return backend->priv;
}

void
sv_backend_set_priv (SvBackend *backend, gpointer priv)
{
  backend->priv = priv;
}

const char *
sv_backend_get_name (SvBackend *backend)
{
  g_return_val_if_fail (backend != NULL, NULL);
  return backend->klass->name;
}

gboolean
sv_backend_is_reference (SvBackend *backend)
{
  g_return_val_if_fail (backend != NULL, FALSE);
  return backend->klass == sv_backend_cpu_class ();
}

void
sv__backend_loaded (SvBackend *backend, const SvVolume *volume, const guint8 *mask)
{
  const gsize n_voxels = sv_volume_n_voxels (volume);

  backend->loaded = *volume;
  backend->loaded.unit = NULL;
  backend->volume = &backend->loaded;
  backend->mask = mask;
  backend->n_mask_in = n_voxels;
  if (mask != NULL)
    {
      backend->n_mask_in = 0;
      for (gsize v = 0; v < n_voxels; v++)
        backend->n_mask_in += mask[v] != 0;
    }
}

void
sv_backend_set_loaded (SvBackend *backend, const SvVolume *volume, const guint8 *mask)
{
  g_return_if_fail (backend != NULL && volume != NULL);
  backend->has_result = FALSE;
  sv__backend_loaded (backend, volume, mask);
}

gboolean
sv_backend_set_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask,
                       GError **error)
{
  g_return_val_if_fail (backend != NULL && volume != NULL, FALSE);
  backend->has_result = FALSE;
  /* The implementation borrows the handle's copy, which lives as long as
   * the backend, rather than the caller's struct. */
  sv__backend_loaded (backend, volume, mask);
  if (!backend->klass->set_volume (backend, &backend->loaded, mask, error))
    {
      backend->volume = NULL;
      backend->mask = NULL;
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_backend_run (SvBackend *backend, const SvSlicParams *params, const SvRunControl *control,
                SvRunStats *stats, GError **error)
{
  SvRunControl defaults = { .n_threads = 0, .stop_after_iteration = -1 };
  SvRunStats unused;

  g_return_val_if_fail (backend != NULL && params != NULL, FALSE);
  return sv__slic_pipeline_run (backend, params, control != NULL ? control : &defaults,
                                stats != NULL ? stats : &unused, error);
}

gboolean
sv_backend_error_is_device_failure (const GError *error)
{
  return g_error_matches (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND)
         || g_error_matches (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY);
}

gboolean
sv__backend_holds_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask)
{
  return backend->volume != NULL && backend->loaded.data == volume->data
         && backend->loaded.nz == volume->nz && backend->loaded.ny == volume->ny
         && backend->loaded.nx == volume->nx && backend->loaded.nc == volume->nc
         && backend->mask == mask;
}

static gboolean
check_result (SvBackend *backend, GError **error)
{
  if (!backend->has_result)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "there are no labels yet: run SLIC first");
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_backend_get_labels (SvBackend *backend, gint32 *labels, GError **error)
{
  g_return_val_if_fail (backend != NULL && labels != NULL, FALSE);
  return check_result (backend, error) && backend->klass->get_labels (backend, labels, error);
}

gint32 *
sv_backend_take_labels (SvBackend *backend, gsize n_voxels, GError **error)
{
  g_autofree gint32 *labels = NULL;

  g_return_val_if_fail (backend != NULL, NULL);
  if (!check_result (backend, error))
    return NULL;
  if (backend->klass->take_labels != NULL)
    return backend->klass->take_labels (backend, error);
  labels = sv_try_alloc_n (n_voxels, sizeof (gint32), FALSE, error,
                           "%" G_GSIZE_FORMAT " labels", n_voxels);
  if (labels == NULL)
    return NULL;
  if (!backend->klass->get_labels (backend, labels, error))
    return NULL;
  return g_steal_pointer (&labels);
}

gboolean
sv_backend_get_centres (SvBackend *backend, float *zyx, gsize *k, GError **error)
{
  g_return_val_if_fail (backend != NULL && k != NULL, FALSE);
  /* Centres outlive the labels, which sv_backend_take_labels may have taken. */
  if (backend->centres == NULL)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "there are no centres yet: run SLIC first");
      return FALSE;
    }
  *k = backend->k;
  if (zyx != NULL && backend->k > 0)
    memcpy (zyx, backend->centres, backend->k * 3 * sizeof (float));
  return TRUE;
}

const gint32 *
sv_backend_get_device_labels (SvBackend *backend, guint shape_zyx[3])
{
  g_return_val_if_fail (backend != NULL, NULL);
  if (backend->klass->device_labels == NULL || !backend->has_result)
    return NULL;
  return backend->klass->device_labels (backend, shape_zyx);
}

gpointer
sv_backend_get_device_stream (SvBackend *backend)
{
  g_return_val_if_fail (backend != NULL, NULL);
  if (backend->klass->device_stream == NULL)
    return NULL;
  return backend->klass->device_stream (backend);
}

gboolean
sv_labels_get_slice (const gint32 *labels, const guint shape_zyx[3], SvAxis axis, guint index,
                     gint32 *out, GError **error)
{
  const gsize nz = shape_zyx[0], ny = shape_zyx[1], nx = shape_zyx[2];
  const guint limit = axis == SV_AXIS_XY ? nz : axis == SV_AXIS_XZ ? ny : nx;

  if (index >= limit)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "slice %u is out of range: the volume has %u along that axis", index, limit);
      return FALSE;
    }
  switch (axis)
    {
    case SV_AXIS_XY:
      memcpy (out, labels + index * ny * nx, ny * nx * sizeof (gint32));
      break;
    case SV_AXIS_XZ:
      for (gsize z = 0; z < nz; z++)
        memcpy (out + z * nx, labels + (z * ny + index) * nx, nx * sizeof (gint32));
      break;
    case SV_AXIS_YZ:
      for (gsize z = 0; z < nz; z++)
        for (gsize y = 0; y < ny; y++)
          out[z * ny + y] = labels[(z * ny + y) * nx + index];
      break;
    default:
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM, "unknown axis %d",
                   (int)axis);
      return FALSE;
    }
  return TRUE;
}

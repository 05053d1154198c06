/* Supervox engine: the backend registry and the dispatch of sv_backend_*
 * calls to the chosen backend's table of functions. */
#define G_LOG_DOMAIN "sv-engine"

#include "backend.h"

#include <string.h>

#include "error.h"

struct _SvBackend
{
  const SvBackendClass *klass;
  gpointer self;
};

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
  gpointer self = klass->create (error);
  SvBackend *backend;

  if (self == NULL)
    return NULL;
  backend = g_new0 (SvBackend, 1);
  backend->klass = klass;
  backend->self = self;
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

void
sv_backend_free (SvBackend *backend)
{
  if (backend == NULL)
    return;
  backend->klass->destroy (backend->self);
  g_free (backend);
}

gpointer
sv_backend_get_instance (SvBackend *backend)
{
  g_return_val_if_fail (backend != NULL, NULL);
  return backend->self;
}

const char *
sv_backend_get_name (SvBackend *backend)
{
  g_return_val_if_fail (backend != NULL, NULL);
  return backend->klass->name;
}

gboolean
sv_backend_set_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask,
                       GError **error)
{
  g_return_val_if_fail (backend != NULL && volume != NULL, FALSE);
  return backend->klass->set_volume (backend->self, volume, mask, error);
}

gboolean
sv_backend_run (SvBackend *backend, const SvSlicParams *params, const SvRunControl *control,
                SvRunStats *stats, GError **error)
{
  SvRunControl defaults = { .n_threads = 0, .stop_after_iteration = -1 };
  SvRunStats unused;

  g_return_val_if_fail (backend != NULL && params != NULL, FALSE);
  return backend->klass->run (backend->self, params, control != NULL ? control : &defaults,
                              stats != NULL ? stats : &unused, error);
}

gboolean
sv_backend_get_labels (SvBackend *backend, gint32 *labels, GError **error)
{
  g_return_val_if_fail (backend != NULL && labels != NULL, FALSE);
  return backend->klass->get_labels (backend->self, labels, error);
}

gint32 *
sv_backend_take_labels (SvBackend *backend, gsize n_voxels, GError **error)
{
  g_autofree gint32 *labels = NULL;

  g_return_val_if_fail (backend != NULL, NULL);
  if (backend->klass->take_labels != NULL)
    return backend->klass->take_labels (backend->self, error);
  labels = g_try_malloc_n (MAX (n_voxels, 1), sizeof (gint32));
  if (labels == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "not enough memory for %" G_GSIZE_FORMAT " labels", n_voxels);
      return NULL;
    }
  if (!backend->klass->get_labels (backend->self, labels, error))
    return NULL;
  return g_steal_pointer (&labels);
}

gboolean
sv_backend_get_slice (SvBackend *backend, SvAxis axis, guint index, gint32 *out, GError **error)
{
  g_return_val_if_fail (backend != NULL && out != NULL, FALSE);
  return backend->klass->get_slice (backend->self, axis, index, out, error);
}

gboolean
sv_backend_get_centres (SvBackend *backend, float *zyx, gsize *k, GError **error)
{
  g_return_val_if_fail (backend != NULL && k != NULL, FALSE);
  return backend->klass->get_centres (backend->self, zyx, k, error);
}

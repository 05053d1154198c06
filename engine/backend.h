/* Supervox engine: the interface every compute backend implements.
 *
 * A backend holds one volume (and its mask) and runs SLIC on it with given
 * parameters, keeping what it can between runs: the prepared image is reused
 * while sigma, spacing and convert2lab stay the same. The CPU backend is
 * always registered; the CUDA one is registered by the application when it
 * was built (the engine never includes CUDA headers). A backend object is
 * used from one thread at a time. */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "params.h"
#include "volume.h"

G_BEGIN_DECLS

typedef enum
{
  SV_AXIS_XY, /* a z slice: ny × nx */
  SV_AXIS_XZ, /* a y slice: nz × nx */
  SV_AXIS_YZ, /* an x slice: nz × ny */
} SvAxis;

typedef enum
{
  SV_STAGE_PREPARE,
  SV_STAGE_ITERATE,
  SV_STAGE_CONNECT,
  SV_STAGE_DONE,
} SvStage;

/* Called from the backend's thread at stage and iteration boundaries. */
typedef void (*SvProgressFunc) (SvStage stage, guint iteration, guint n_iterations,
                                gpointer user_data);

typedef struct
{
  int n_threads;            /* CPU threads; <= 0 all cores */
  int stop_after_iteration; /* < 0: run all; n >= 0: stop after n iterations, no
                             * connectivity (teaching mode: labels are index + start_label) */
  SvProgressFunc progress;  /* may be NULL */
  gpointer user_data;
  GCancellable *cancellable; /* may be NULL */
} SvRunControl;

typedef struct
{
  gsize n_clusters;           /* K */
  gsize n_labels;             /* distinct labels, background excluded */
  guint iterations;           /* iterations run */
  double seconds_prepare;
  double seconds_iterate;
  double seconds_connect;
  gboolean prepare_reused;
} SvRunStats;

typedef struct _SvBackendClass SvBackendClass;
struct _SvBackendClass
{
  const char *name;                 /* "cpu", "cuda" */
  /* NULL with an error when the backend cannot run here ("no CUDA device"). */
  gpointer (*create) (GError **error);
  void (*destroy) (gpointer self);
  /* The caller keeps `volume` and `mask` (may be NULL) alive and unchanged
   * until the next set_volume or destroy: a backend may borrow them instead
   * of holding a second copy of a volume that can be gigabytes. */
  gboolean (*set_volume) (gpointer self, const SvVolume *volume, const guint8 *mask,
                          GError **error);
  gboolean (*run) (gpointer self, const SvSlicParams *params, const SvRunControl *control,
                   SvRunStats *stats, GError **error);
  /* The last run's labels, nz*ny*nx values. */
  gboolean (*get_labels) (gpointer self, gint32 *labels, GError **error);
  /* One slice of the last run's labels (size per SvAxis). */
  gboolean (*get_slice) (gpointer self, SvAxis axis, guint index, gint32 *out, GError **error);
  /* The last run's centres: k × 3 floats z, y, x (NaN for dead clusters). */
  gboolean (*get_centres) (gpointer self, float *zyx, gsize *k, GError **error);
  /* Optional: hands the last run's host label buffer (nz*ny*nx, g_free)
   * to the caller, who then holds the only copy; the backend forgets it.
   * Last in the table so that positional initialisers stay valid. */
  gint32 *(*take_labels) (gpointer self, GError **error);
};

typedef struct _SvBackend SvBackend;

/* Makes a backend class available to sv_backend_new. The CPU backend is
 * built in; applications register the CUDA one at start-up. */
void sv_backend_register (const SvBackendClass *klass);

/* "cpu", "cuda" or "auto" (CUDA when registered and a device is usable,
 * else CPU). Fails with SV_ENGINE_ERROR_BACKEND and the reason. */
SvBackend *sv_backend_new (const char *name, GError **error);
void sv_backend_free (SvBackend *backend);
const char *sv_backend_get_name (SvBackend *backend);
/* The object the class's create returned, for a backend's own entry points
 * (the CUDA backend's device labels in cuda/sv-cuda.h). */
gpointer sv_backend_get_instance (SvBackend *backend);

gboolean sv_backend_set_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask,
                                GError **error);
gboolean sv_backend_run (SvBackend *backend, const SvSlicParams *params,
                         const SvRunControl *control, SvRunStats *stats, GError **error);
gboolean sv_backend_get_labels (SvBackend *backend, gint32 *labels, GError **error);

/* The last run's labels in a new buffer of nz*ny*nx values (free with
 * g_free). Backends that keep host labels hand over their own buffer instead
 * of copying it, so a volume's labels exist once; after that, get_labels and
 * get_slice fail until the next run. */
gint32 *sv_backend_take_labels (SvBackend *backend, gsize n_voxels, GError **error);
gboolean sv_backend_get_slice (SvBackend *backend, SvAxis axis, guint index, gint32 *out,
                               GError **error);
gboolean sv_backend_get_centres (SvBackend *backend, float *zyx, gsize *k, GError **error);

/* The CPU backend's class (always available). */
const SvBackendClass *sv_backend_cpu_class (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvBackend, sv_backend_free)

G_END_DECLS

/* Supervox engine: compute backends and the SLIC runs on them.
 *
 * A backend holds one volume (and its mask) and runs SLIC on it with given
 * parameters, keeping what it can between runs: the prepared image is reused
 * while sigma, spacing and convert2lab stay the same. The CPU backend is
 * always registered; the CUDA one is registered by the application when it
 * was built (the engine never includes CUDA headers). A backend object is
 * used from one thread at a time. Implementers see sv-backend-class.h. */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "sv-params.h"
#include "sv-volume.h"

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

/* The state of a run between two iterations, readable during an
 * SvIterationHook call only. */
typedef struct _SvIterationView SvIterationView;

/* Called from the backend's thread after each iteration; `view` reads the
 * run's current labels and centres. */
typedef void (*SvIterationHook) (const SvIterationView *view, guint iteration,
                                 guint n_iterations, gpointer user_data);

typedef struct
{
  int n_threads;            /* CPU threads; <= 0 all cores */
  int stop_after_iteration; /* < 0: run all; n >= 0: teaching mode, see
                             * sv_slic_params_apply_teaching */
  SvProgressFunc progress;  /* may be NULL */
  gpointer user_data;       /* for progress and iteration */
  GCancellable *cancellable; /* may be NULL */
  /* May be NULL. A device backend waits for each iteration when it is set. */
  SvIterationHook iteration;
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

/* A backend's table of functions (sv-backend-class.h, for implementers). */
typedef struct _SvBackendClass SvBackendClass;
typedef struct _SvBackend SvBackend;

/* Makes a backend class available to sv_backend_new. The CPU backend is
 * built in; applications register the CUDA one at start-up. */
void sv_backend_register (const SvBackendClass *klass);

/* What the user's word for a backend asks for, read once by
 * sv_backend_choose; the run plan (sv-run-plan.h) resolves auto. */
typedef struct
{
  gboolean is_auto;      /* "auto" (or none): a device when one is usable, else the CPU */
  gboolean wants_device; /* a device named ("cuda"), whether or not this build has it */
  /* The device class: the one named or the one auto tries; NULL when this
   * build registered none. */
  const SvBackendClass *device;
} SvBackendChoice;

/* Reads "cpu", "cuda" or "auto" (NULL: auto) into `choice`; fails with
 * SV_ENGINE_ERROR_BACKEND "unknown backend 'WORD': use cpu, cuda or auto". */
gboolean sv_backend_choose (const char *word, SvBackendChoice *choice, GError **error);

/* The class "auto", "cpu" or "cuda" comes to with `n_devices` usable
 * devices: the device class when one is asked for (NULL when this build
 * has none) or when auto finds a device, else the CPU's. The one place
 * where auto is decided (the run plan asks it). */
const SvBackendClass *sv_backend_resolve (const SvBackendChoice *choice, guint n_devices);

/* The CPU backend's class, the reference (always available). */
const SvBackendClass *sv_backend_cpu_class (void);

/* For benchmarks: with `enable`, every later run on the CPU backend
 * `backend` also counts, after each assignment, the distances the exact
 * rule needs (sv_slic_assign_floor, a brute-force pass over every window
 * that costs a few assignments' time; the labels do not change). FALSE,
 * and nothing set, for a backend of another class. */
gboolean sv_backend_cpu_set_floor_counting (SvBackend *backend, gboolean enable);

/* The counts of the last run on the CPU backend with floor counting on,
 * one per iteration (*n_iterations of them): an iteration skipped because
 * the previous update gave back its clusters repeats the count of the
 * assignment it would have repeated. Owned by the backend, valid until its
 * next run; NULL with *n_iterations = 0 without counting or for another
 * class. */
const gint64 *sv_backend_cpu_get_floor_counts (SvBackend *backend, guint *n_iterations);

/* The name results and sidecars give a class: "cpu", "cuda". */
const char *sv_backend_class_name (const SvBackendClass *klass);

/* The class registered under `name` ("cpu", "cuda"), as results and
 * sidecars name it, or NULL. */
const SvBackendClass *sv_backend_class_lookup (const char *name);
const SvBackendClass *sv_backend_get_class (SvBackend *backend);

/* What a class can do; each takes NULL (an unknown name) as a class that
 * can do nothing. is_device: computes in a device's memory; can_stream:
 * has slab steps (sv-stream.h); keeps_labels_on_device: its labels stay
 * in device memory (sv_backend_get_device_labels). */
gboolean sv_backend_class_is_device (const SvBackendClass *klass);
gboolean sv_backend_class_can_stream (const SvBackendClass *klass);
gboolean sv_backend_class_keeps_labels_on_device (const SvBackendClass *klass);
/* "the CPU", "the GPU" (in a sentence) and "CPU", "GPU (CUDA)" (as a
 * title); for NULL, `fallback`. */
const char *sv_backend_class_display_name (const SvBackendClass *klass, const char *fallback);
const char *sv_backend_class_title (const SvBackendClass *klass, const char *fallback);

/* A device class's devices (sv-backend-class.h): how many (0 for a class
 * without devices, or NULL), what device `device` has free (FALSE when
 * it cannot say), a backend on device `device` (SV_ENGINE_ERROR_BACKEND
 * "no CUDA device 3: this machine has 2"), and the device memory a
 * backend may use (ignored by the CPU). */
int sv_backend_class_device_count (const SvBackendClass *klass);
gboolean sv_backend_class_device_free_bytes (const SvBackendClass *klass, int device,
                                             guint64 *free_bytes);
SvBackend *sv_backend_new_on_device (const SvBackendClass *klass, int device, GError **error);
void sv_backend_set_memory_limit (SvBackend *backend, guint64 bytes);

/* "cpu", "cuda" or "auto" (CUDA when registered and a device is usable,
 * else CPU). Fails with SV_ENGINE_ERROR_BACKEND and the reason. */
SvBackend *sv_backend_new (const char *name, GError **error);
/* A backend of `klass` (a registered class, or one a plan chose); fails
 * with the reason the class cannot run here. */
SvBackend *sv_backend_new_of_class (const SvBackendClass *klass, GError **error);
void sv_backend_free (SvBackend *backend);
const char *sv_backend_get_name (SvBackend *backend);
/* TRUE for the CPU reference backend. */
gboolean sv_backend_is_reference (SvBackend *backend);

/* Loads the volume (and mask, NULL or nz*ny*nx bytes) that the next runs
 * use. Both are borrowed: the caller keeps them alive and unchanged until
 * the next set_volume or sv_backend_free. */
gboolean sv_backend_set_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask,
                                GError **error);

/* Runs SLIC (slic-pipeline.c) on the loaded volume. control and stats may
 * be NULL. Fails on bad parameters, without a volume, on cancellation
 * (G_IO_ERROR_CANCELLED) and on backend failures. */
gboolean sv_backend_run (SvBackend *backend, const SvSlicParams *params,
                         const SvRunControl *control, SvRunStats *stats, GError **error);

/* TRUE for the failures a device backend has and the CPU reference does
 * not: a CUDA error (SV_ENGINE_ERROR_BACKEND) or too little device memory
 * (SV_ENGINE_ERROR_NO_MEMORY). Bad data fails the same way everywhere. */
gboolean sv_backend_error_is_device_failure (const GError *error);

/* The labels and centres of a run, read from an iteration hook; same
 * layouts as sv_backend_get_labels and sv_backend_get_centres. The labels
 * are those that a run stopped after this iteration (teaching mode) gives. */
gboolean sv_iteration_view_get_labels (const SvIterationView *view, gint32 *labels,
                                       GError **error);
gboolean sv_iteration_view_get_centres (const SvIterationView *view, float *zyx, gsize *k,
                                        GError **error);
/* The name of the backend the viewed run is on ("cpu", "cuda"). */
const char *sv_iteration_view_get_backend_name (const SvIterationView *view);

/* The last run's labels, nz*ny*nx values. */
gboolean sv_backend_get_labels (SvBackend *backend, gint32 *labels, GError **error);

/* The last run's labels in a new buffer of nz*ny*nx values (free with
 * g_free). Backends that keep host labels hand over their own buffer instead
 * of copying it, so a volume's labels exist once; after that, get_labels
 * fails until the next run. */
gint32 *sv_backend_take_labels (SvBackend *backend, gsize n_voxels, GError **error);

/* The last run's centres: k × 3 floats z, y, x (NaN for dead clusters);
 * zyx may be NULL to ask for k only. */
gboolean sv_backend_get_centres (SvBackend *backend, float *zyx, gsize *k, GError **error);

/* A device backend's last label volume in device memory (nz*ny*nx gint32,
 * z-major), valid until the next run, set_volume or free; NULL for backends
 * without device memory and before a run. shape_zyx (may be NULL) receives
 * the shape. */
const gint32 *sv_backend_get_device_labels (SvBackend *backend, guint shape_zyx[3]);

/* The stream a device backend queues its work on (a cudaStream_t), for
 * ordering other device work after it; NULL for the CPU. */
gpointer sv_backend_get_device_stream (SvBackend *backend);

/* Copies slice `index` along `axis` of a z-major label volume of shape
 * shape_zyx into out (XY: ny rows of nx; XZ: nz rows of nx; YZ: nz rows of
 * ny). Fails with SV_ENGINE_ERROR_INVALID_PARAM when index is out of range. */
gboolean sv_labels_get_slice (const gint32 *labels, const guint shape_zyx[3], SvAxis axis,
                              guint index, gint32 *out, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvBackend, sv_backend_free)

G_END_DECLS

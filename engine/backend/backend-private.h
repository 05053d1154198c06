/* Supervox engine: the backend handle as the registry and the SLIC
 * pipeline see it (engine-internal). */
#pragma once

#include "supervox/sv-backend-class.h"

G_BEGIN_DECLS

struct _SvBackend
{
  const SvBackendClass *klass;
  gpointer priv;

  /* The loaded volume: a shallow copy whose data is borrowed (the caller
   * may pass a volume struct on its stack), or NULL; the mask, borrowed. */
  SvVolume loaded;
  const SvVolume *volume;
  const guint8 *mask;
  gsize n_mask_in; /* voxels inside the mask, all without one */

  /* The last run's centres, k × 3, NaN for dead clusters. */
  float *centres;
  gsize k;
  gboolean has_result;

  /* The CPU slab steps' pass (stream-steps-cpu.c), or NULL. */
  gpointer slab_pass;
};

/* The CPU backend's slab steps (stream-steps-cpu.c). */
extern const SvSlabSteps sv__slab_steps_cpu;

/* Records the volume and mask a backend has loaded (counts the mask). */
void sv__backend_loaded (SvBackend *backend, const SvVolume *volume, const guint8 *mask);

/* TRUE when the last sv_backend_set_volume was of this volume (the same
 * data, shape and mask): a run of it needs no new upload. */
gboolean sv__backend_holds_volume (SvBackend *backend, const SvVolume *volume, const guint8 *mask);

/* The SLIC run on `backend` (slic-pipeline.c); control and stats are set. */
gboolean sv__slic_pipeline_run (SvBackend *backend, const SvSlicParams *params,
                                const SvRunControl *control, SvRunStats *stats, GError **error);

/* The CPU backend over an image that is prepared already (borrowed), as
 * sv_slic_run_cpu runs it. */
SvBackend *sv__backend_cpu_new_prepared (const SvPrepared *image, const guint8 *mask);

G_END_DECLS

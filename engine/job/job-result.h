/* Supervox engine: making job results (job-result.c). Not public API.
 *
 * A result's host labels are either set when it is made (CPU runs, the
 * teaching snapshots, live iterations) or left on the device by a result
 * hook and copied once on first use (sv_job_result_get_labels). */
#pragma once

#include "supervox/sv-job.h"

G_BEGIN_DECLS

/* A new result of `generation` with `params`, made by `backend_name`, whose
 * labels have `shape` (z, y, x) and `spacing`; no labels yet. */
SvJobResult *sv__job_result_new (guint64 generation, const SvSlicParams *params,
                                 const char *backend_name, const guint shape[3],
                                 const double spacing[3]);

/* Gives the result its host labels (taken: g_free'd with it). */
void sv__job_result_set_host_labels (SvJobResult *result, gint32 *labels);

/* A result of the whole volume after one iteration (a teaching step, or an
 * iteration of a long run): takes `labels` (nz*ny*nx) and `centres`
 * (n_centres × 3); stats counts the clusters. */
SvJobResult *sv__job_step_result_new (const SvJobRequest *request, const SvVolume *volume,
                                      const char *backend_name, gint32 *labels, float *centres,
                                      gsize n_centres, guint iterations);

G_END_DECLS

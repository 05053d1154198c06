/* supervox-cli slic: a batch over several GPUs, a file a GPU at a time.
 *
 * One file split over four GPUs runs 1.5× faster than on one at 2048³,
 * and slower below that: every device added costs its start and the
 * steps that do not divide. The files of a batch do not depend on each
 * other, so with two files or more each listed GPU takes whole files, one
 * after the other, each on its own lane (a thread with a context of its
 * own: its device, its share of the host's memory and cores); with fewer
 * files than GPUs each lane takes an even share of them. Every file's
 * labels are the bytes a run on one GPU writes; the reports come in input
 * order, as from the pipeline. */
#pragma once

#include <glib.h>

#include "slic-batch-pipeline.h"
#include "slic-file.h"

G_BEGIN_DECLS

/* How many lanes a batch of `n_files` under `ctx` runs on: the distinct
 * GPUs --devices lists, at most one a file (fewer files than GPUs: each
 * lane drives an even share of them), when --backend cuda or auto has them
 * and no MPI ranks share the files; 0 otherwise (one file at a time on
 * every listed device), or with SV_BATCH_LANES=0 (for measuring). Call
 * before the devices start opening: the lanes open their own. */
guint sv_cli_slic_batch_lanes (const SvCliSlicContext *ctx, guint n_files);

/* Runs every file on the lanes: each lane loads, computes and writes its
 * files in turn; `events` come from the calling thread, in input order.
 * As sv_cli_slic_batch_pipeline_run otherwise. */
gboolean sv_cli_slic_batch_lanes_run (SvCliSlicContext *ctx, guint n_lanes,
                                      SvCliSlicFile *const *files, guint n_files,
                                      const SvCliSlicBatchEvents *events, GError **error);

G_END_DECLS

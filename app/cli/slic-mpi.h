/* supervox-cli under mpirun: every rank runs the same command; the z range
 * of each volume is split across the ranks (engine/stream.h,
 * SvStreamRanks), and rank 0 writes the label file's sidecar and the
 * output; a batch's files are shared out among the ranks. Built with the mpi feature; without it,
 * or when the process was not started by mpirun, it is one process as always. */
#pragma once

#include <glib.h>

#include "slic-batch.h"
#include "slic-file.h"
#include "supervox/sv-stream.h"
#include "sv-config.h"

G_BEGIN_DECLS

#if SV_HAVE_MPI

/* Joins the MPI job when mpirun started this process (its environment
 * says so); on ranks other than 0 messages are then held
 * (sv_cli_hold_messages). */
void sv_cli_mpi_init (int *argc, char ***argv);

/* Leaves the job with the command's exit status: a rank that stopped
 * before the ranks met (bad options, an unreadable mask) tells the others
 * here, so that none waits for it. Returns the exit status. */
int sv_cli_mpi_finish (int status);

/* TRUE when this process is one of several ranks. */
gboolean sv_cli_mpi_active (void);

/* The slic command on every rank. One file streams across the ranks; a
 * batch's files are shared out: each rank takes whole files (file i to
 * rank i mod the ranks) and runs them as one process would, reporting its
 * own; with fewer files than ranks, each file streams across a group of
 * them. World rank 0 prints the batch's totals. Returns the exit status,
 * the same on every rank. */
int sv_cli_slic_mpi_run (SvCliSlicContext *ctx, SvCliSlicFile *const *files, guint n_files,
                         const SvCliSlicBatchOptions *options);

#else

static inline void
sv_cli_mpi_init (int *argc, char ***argv)
{
}
static inline int
sv_cli_mpi_finish (int status)
{
  return status;
}
static inline gboolean
sv_cli_mpi_active (void)
{
  return FALSE;
}
static inline int
sv_cli_slic_mpi_run (SvCliSlicContext *ctx, SvCliSlicFile *const *files, guint n_files,
                     const SvCliSlicBatchOptions *options)
{
  return 1;
}

#endif

G_END_DECLS

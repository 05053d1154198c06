/* Supervox tests: MPI ranks as threads of one process. */
#pragma once

#include <glib.h>

#include "supervox/sv-stream.h"

G_BEGIN_DECLS

/* One rank's share of a run: ranks->rank of ranks->n_ranks; returns its
 * outcome, its report in *report. */
typedef gboolean (*SvTestRankRun) (const SvStreamRanks *ranks, gpointer user_data,
                                   SvStreamReport *report, GError **error);

/* Runs `run` in n ranks, each a thread, and checks that they agreed (the
 * same outcome and message, every message read). Returns rank 0's
 * outcome (its error in `error`); reports (may be NULL) receives the n
 * reports. */
gboolean sv_test_ranks_run (guint n, SvTestRankRun run, gpointer user_data, SvStreamReport *reports,
                            GError **error);

/* How many times the ranks exchanged messages (SvStreamRanks.exchange),
 * counted once for all ranks, since the program started. */
guint sv_test_ranks_n_exchanges (void);

G_END_DECLS

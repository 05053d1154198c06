/* Supervox engine: the CPU assignment's work against the exact rule's
 * floor (slic-assign-count.c). Not a public header. */
#pragma once

#include "supervox/sv-slic.h"

G_BEGIN_DECLS

/* Whether SV_CPU_ASSIGN_COUNT asks for the counts. */
gboolean sv__slic_assign_counting (void);

/* CPU seconds of the process so far, every thread. */
double sv__process_cpu_seconds (void);

/* Prints one line: distances evaluated (by the tile search), distances the
 * exact rule needs for the labels in `nearest`, and the assignment's wall
 * and CPU seconds. */
void sv__slic_assign_report (const SvSlicContext *ctx, const SvClusters *clusters,
                             const gint32 *nearest, gint64 evaluated, double seconds,
                             double cpu_seconds);

G_END_DECLS

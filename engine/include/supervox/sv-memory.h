/* Supervox engine: how much memory this process holds and the system has
 * to give, for choosing between in-memory and out-of-core work and for
 * showing it. Linux's /proc; 0 where unknown. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Bytes of this process now resident in memory (VmRSS). */
guint64 sv_memory_resident (void);

/* Bytes the system could give this process now (MemAvailable). */
guint64 sv_memory_available (void);

G_END_DECLS

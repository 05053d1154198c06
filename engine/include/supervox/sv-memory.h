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

/* Parses a size: bytes, or a number with K, M, G or T (powers of 1024,
 * an optional trailing "B" or "iB"), e.g. "512M", "1.5G". The error
 * (SV_ENGINE_ERROR_INVALID_PARAM) names `option`. */
gboolean sv_parse_size (const char *option, const char *text, guint64 *bytes, GError **error);

/* n items of `size` bytes (zeroed when `zero`), at least one byte; NULL
 * when they cannot be had (or n·size overflows), with
 * SV_ENGINE_ERROR_NO_MEMORY "not enough memory for WHAT (SIZE)", where
 * `what` (printf) says what they were for: "the sums of 100 clusters". */
gpointer sv_try_alloc_n (gsize n, gsize size, gboolean zero, GError **error, const char *what, ...)
    G_GNUC_PRINTF (5, 6);

/* The same error for an allocation made otherwise (several at once):
 * "not enough memory for WHAT". */
void sv_set_no_memory (GError **error, const char *what, ...) G_GNUC_PRINTF (2, 3);

G_END_DECLS

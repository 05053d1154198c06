/* Supervox engine: a slab sink on a thread of its own.
 *
 * Whoever makes labels slab after slab (the streamed connectivity on the
 * host or on a device) hands each finished slab to the sink thread and goes
 * on with the next while the sink (a label file's writer: compression and
 * I/O) takes the last one. The thread owns the slab buffers: take one, fill
 * it, push it; it comes back for a later take once the sink is done with
 * it. The sink sees the slabs in the order pushed, on one thread. */
#pragma once

#include <glib.h>

#include "supervox/sv-backend-class.h"

G_BEGIN_DECLS

typedef struct _SvSinkThread SvSinkThread;

/* A thread calling sink(z0, z1, buffer, user_data) with n_buffers (at
 * least 2) buffers of slab_values labels each; NULL when there is no
 * memory for them or no thread (the caller then calls its sink itself). */
SvSinkThread *sv_sink_thread_new (SvSlabSink sink, gpointer user_data, gsize slab_values,
                                  guint n_buffers);
/* A buffer the sink is done with (waits for one); NULL with the sink's
 * error once it has failed. */
gint32 *sv_sink_thread_take (SvSinkThread *thread, GError **error);
/* Hands slices [z0, z1) in `buffer` (from sv_sink_thread_take) to the
 * sink. After a failure the sink is not called any more. */
void sv_sink_thread_push (SvSinkThread *thread, guint z0, guint z1, gint32 *buffer);
/* Waits until every pushed slab is through and frees the thread and its
 * buffers. Returns `ok` and the sink's success; the sink's first error
 * goes to `error` only when `ok` (the caller's own error wins). */
gboolean sv_sink_thread_finish (SvSinkThread *thread, gboolean ok, GError **error);

G_END_DECLS

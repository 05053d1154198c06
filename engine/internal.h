/* Supervox engine: helpers shared between engine files, not public API. */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "params.h"
#include "prepare.h"
#include "slic.h"

G_BEGIN_DECLS

/* Wall-clock seconds spent in the stages of one SLIC run. */
typedef struct
{
  double seconds_iterate;
  double seconds_connect;
  guint iterations;   /* iterations run, both maskSLIC passes counted */
  gint64 n_labels;    /* distinct labels, background excluded */
} SvSlicTimings;

/* sv_slic_run_cpu with more results: clusters_out (may be NULL) receives the
 * final clusters (caller clears them with sv_clusters_clear), timings (may be
 * NULL) the stage times and label count. */
gboolean sv__slic_run (const SvPrepared *image, const guint8 *mask, const SvSlicParams *params,
                       int n_threads, SvIterationFunc progress, gpointer user_data,
                       GCancellable *cancellable, gint32 *labels, SvClusters *clusters_out,
                       SvSlicTimings *timings, GError **error);

/* The number of worker threads for n_threads (<= 0: all processors). */
int sv__resolve_threads (int n_threads);

G_END_DECLS

/* Supervox engine: the teaching steps of a job, kept as snapshots.
 *
 * Stepping through the k-means iterations asks for "the labels after n
 * iterations" again and again with the same parameters. Instead of a run
 * from scratch per step, a teaching run goes on to the last iteration and
 * its iteration hook keeps every iteration's labels and centres; the next
 * steps are then copies. The labels of iteration n in a run are those of a
 * run stopped after n iterations (slic-pipeline.c), so a snapshot is the
 * step's exact result. Not public API. */
#pragma once

#include <glib.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-params.h"

G_BEGIN_DECLS

/* Snapshots stop being kept above this much memory: a big volume's steps
 * are computed per step as before. */
#define SV_TEACHING_CACHE_MAX_BYTES ((guint64)512 << 20)

typedef struct _SvTeachingCache SvTeachingCache;

typedef struct
{
  gint32 *labels; /* nz·ny·nx, as a run stopped after `iteration` gives them */
  float *centres; /* n_centres × 3 */
  gsize n_centres;
  gsize n_labels; /* distinct labels, the background excluded */
  char backend[16]; /* the backend that ran it */
} SvTeachingStep;

SvTeachingCache *sv__teaching_cache_new (gsize n_voxels);
void sv__teaching_cache_free (SvTeachingCache *cache);

/* The stored step `iteration` of a run with `params` on `backend`, or NULL. */
const SvTeachingStep *sv__teaching_cache_lookup (SvTeachingCache *cache,
                                                 const SvSlicParams *params, const char *backend,
                                                 guint iteration);

/* Makes the cache hold the steps of `params` on `backend` (dropping other
 * parameters' steps). FALSE when they would not fit in
 * SV_TEACHING_CACHE_MAX_BYTES: then nothing is kept. */
gboolean sv__teaching_cache_begin (SvTeachingCache *cache, const SvSlicParams *params,
                                   const char *backend);

/* From an iteration hook: keeps the view's labels and centres as step
 * `iteration` (a no-op when it is stored already). */
gboolean sv__teaching_cache_store (SvTeachingCache *cache, const SvIterationView *view,
                                   guint iteration, GError **error);

G_END_DECLS

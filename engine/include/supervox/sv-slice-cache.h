/* Supervox engine: the slices of a volume larger than memory, for viewing.
 * A slice is read from its TIFF page when it is first asked for and kept,
 * in the file's sample type, in a cache of bounded size from which the
 * least recently used slice leaves first. Safe to use from several
 * threads (one lock). */
#pragma once

#include <glib.h>

#include "sv-histogram.h"
#include "sv-io-slab.h"

G_BEGIN_DECLS

typedef struct _SvSliceCache SvSliceCache;

/* Opens `path` (options as for sv_tiff_read_volume_full; NULL: defaults)
 * and checks its pages; no voxel is read. The cache holds at most
 * `budget` bytes of slices, and always one slice however small the
 * budget. Errors are the slab reader's. */
SvSliceCache *sv_slice_cache_new (const char *path, const SvTiffReadOptions *options,
                                  guint64 budget, GError **error);
void sv_slice_cache_free (SvSliceCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvSliceCache, sv_slice_cache_free)

/* Shape, sample type and spacing of the volume. */
const SvTiffSlabInfo *sv_slice_cache_info (const SvSliceCache *cache);

/* Slice z (ny·nx·nc values, channel fastest) as img_as_float, exactly as
 * the whole-volume reader converts it, into `out`. Errors name the file
 * and the page. */
gboolean sv_slice_cache_read_float (SvSliceCache *cache, guint z, float *out, GError **error);

/* Slice z in the file's sample type (sv_tiff_slab_reader_slice_bytes)
 * into `out`. */
gboolean sv_slice_cache_read (SvSliceCache *cache, guint z, void *out, GError **error);

/* What the cache holds now and may hold, in bytes, and how often a slice
 * was found in it or read. */
guint64 sv_slice_cache_bytes (SvSliceCache *cache);
guint64 sv_slice_cache_budget (const SvSliceCache *cache);
void sv_slice_cache_counts (SvSliceCache *cache, guint64 *hits, guint64 *misses);

/* The intensity histogram (as sv_histogram_new) of a sample of the
 * volume: every k-th slice, k as small as keeps the sample within
 * `sample_bytes` as float32 (every slice when the volume fits). The
 * slices are read past the cache, which keeps what it holds. */
SvHistogram *sv_slice_cache_sample_histogram (SvSliceCache *cache, guint n_bins,
                                              guint64 sample_bytes, GError **error);

G_END_DECLS

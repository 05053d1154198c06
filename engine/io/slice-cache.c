/* Supervox engine: a bounded cache of a TIFF stack's slices, for viewing a
 * volume larger than memory. Slices keep the file's sample type (a uint8
 * slice costs a quarter of its float32 copy) and are converted when they
 * are copied out. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-memory.h"
#include "supervox/sv-slice-cache.h"

#include <string.h>

#include "supervox/sv-error.h"

typedef struct
{
  guint z;
  guint8 *samples;
  GList link; /* in the cache's queue; data points to this entry */
} Entry;

struct _SvSliceCache
{
  GMutex lock;
  SvTiffSlabReader *reader;
  gsize slice_bytes;
  guint64 budget;
  GHashTable *entries; /* z → Entry */
  GQueue order;        /* most recently used first */
  guint64 hits, misses;
};

static void
entry_free (gpointer data)
{
  Entry *e = data;

  g_free (e->samples);
  g_free (e);
}

SvSliceCache *
sv_slice_cache_new (const char *path, const SvTiffReadOptions *options, guint64 budget,
                    GError **error)
{
  SvTiffSlabReader *reader;
  SvSliceCache *cache;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  reader = sv_tiff_slab_reader_open (path, options, error);
  if (reader == NULL)
    return NULL;
  cache = g_new0 (SvSliceCache, 1);
  g_mutex_init (&cache->lock);
  cache->reader = reader;
  cache->slice_bytes = sv_tiff_slab_reader_slice_bytes (reader);
  cache->budget = budget;
  cache->entries = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, entry_free);
  g_queue_init (&cache->order);
  return cache;
}

void
sv_slice_cache_free (SvSliceCache *cache)
{
  if (cache == NULL)
    return;
  g_hash_table_destroy (cache->entries);
  sv_tiff_slab_reader_free (cache->reader);
  g_mutex_clear (&cache->lock);
  g_free (cache);
}

const SvTiffSlabInfo *
sv_slice_cache_info (const SvSliceCache *cache)
{
  return sv_tiff_slab_reader_info (cache->reader);
}

guint64
sv_slice_cache_budget (const SvSliceCache *cache)
{
  return cache->budget;
}

guint64
sv_slice_cache_bytes (SvSliceCache *cache)
{
  guint64 bytes;

  g_mutex_lock (&cache->lock);
  bytes = (guint64)g_queue_get_length (&cache->order) * cache->slice_bytes;
  g_mutex_unlock (&cache->lock);
  return bytes;
}

void
sv_slice_cache_counts (SvSliceCache *cache, guint64 *hits, guint64 *misses)
{
  g_mutex_lock (&cache->lock);
  *hits = cache->hits;
  *misses = cache->misses;
  g_mutex_unlock (&cache->lock);
}

/* The entry of slice z, read when it is not held; with the lock held. The
 * least recently used slices leave until the new one fits the budget. */
static Entry *
lookup (SvSliceCache *cache, guint z, GError **error)
{
  Entry *e = g_hash_table_lookup (cache->entries, GUINT_TO_POINTER (z));
  guint8 *samples;

  if (e != NULL)
    {
      cache->hits++;
      g_queue_unlink (&cache->order, &e->link);
      g_queue_push_head_link (&cache->order, &e->link);
      return e;
    }
  cache->misses++;
  samples = sv_try_alloc_n (cache->slice_bytes, 1, FALSE, error, "slice %u", z + 1);
  if (samples == NULL)
    return NULL;
  if (!sv_tiff_slab_reader_read (cache->reader, z, z + 1, samples, error))
    {
      g_free (samples);
      return NULL;
    }
  while (cache->order.length > 0
         && (guint64)(cache->order.length + 1) * cache->slice_bytes > cache->budget)
    {
      Entry *old = g_queue_peek_tail (&cache->order);
      g_queue_unlink (&cache->order, &old->link);
      g_hash_table_remove (cache->entries, GUINT_TO_POINTER (old->z));
    }
  e = g_new0 (Entry, 1);
  e->z = z;
  e->samples = samples;
  e->link.data = e;
  g_hash_table_insert (cache->entries, GUINT_TO_POINTER (z), e);
  g_queue_push_head_link (&cache->order, &e->link);
  return e;
}

gboolean
sv_slice_cache_read (SvSliceCache *cache, guint z, void *out, GError **error)
{
  Entry *e;

  g_return_val_if_fail (z < sv_slice_cache_info (cache)->nz, FALSE);
  g_mutex_lock (&cache->lock);
  e = lookup (cache, z, error);
  if (e != NULL)
    memcpy (out, e->samples, cache->slice_bytes);
  g_mutex_unlock (&cache->lock);
  return e != NULL;
}

gboolean
sv_slice_cache_read_float (SvSliceCache *cache, guint z, float *out, GError **error)
{
  const SvTiffSlabInfo *info = sv_slice_cache_info (cache);
  Entry *e;

  g_return_val_if_fail (z < info->nz, FALSE);
  g_mutex_lock (&cache->lock);
  e = lookup (cache, z, error);
  if (e != NULL)
    sv_tiff_samples_to_float (info->sample_type, e->samples, (gsize)info->ny * info->nx * info->nc,
                              out);
  g_mutex_unlock (&cache->lock);
  return e != NULL;
}

SvHistogram *
sv_slice_cache_sample_histogram (SvSliceCache *cache, guint n_bins, guint64 sample_bytes,
                                 GError **error)
{
  const SvTiffSlabInfo *info = sv_slice_cache_info (cache);
  const gsize values = (gsize)info->ny * info->nx * info->nc;
  const guint64 slice_floats = MAX ((guint64)values * sizeof (float), 1);
  guint n_sample = (guint)MIN (MAX (sample_bytes / slice_floats, 1), MAX (info->nz, 1));
  guint stride = (info->nz + n_sample - 1) / MAX (n_sample, 1);
  g_autoptr (SvVolume) sample = NULL;
  g_autofree guint8 *raw = NULL;
  guint n = 0;

  stride = MAX (stride, 1);
  n_sample = (info->nz + stride - 1) / stride;
  sample = sv_volume_new (MAX (n_sample, 1), info->ny, info->nx, info->nc, error);
  if (sample == NULL)
    return NULL;
  raw = sv_try_alloc_n (cache->slice_bytes, 1, FALSE, error, "a slice");
  if (raw == NULL)
    return NULL;
  /* Past the cache: the slices on screen stay in it. */
  for (guint z = 0; z < info->nz; z += stride, n++)
    {
      gboolean ok;

      g_mutex_lock (&cache->lock);
      ok = sv_tiff_slab_reader_read (cache->reader, z, z + 1, raw, error);
      g_mutex_unlock (&cache->lock);
      if (!ok)
        return NULL;
      sv_tiff_samples_to_float (info->sample_type, raw, values, sample->data + (gsize)n * values);
    }
  return sv_histogram_new (sample, n_bins);
}

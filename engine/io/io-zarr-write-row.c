/* Supervox engine: a row of an OME-Zarr label store's chunks, written by
 * every worker (see io-zarr-write-private.h). Each worker takes chunks in
 * turn: it gathers one from the row, checks it for negative labels when
 * the store is for labels >= 0, compresses it and writes its file, with a
 * chunk buffer and an encoder it keeps for the next rows. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "internal.h"
#include "io-zarr-write-private.h"
#include "supervox/sv-error.h"

char *
sv__zarr_chunk_key (guint kz, guint ky, guint kx)
{
  return g_strdup_printf ("0" G_DIR_SEPARATOR_S "%u" G_DIR_SEPARATOR_S "%u" G_DIR_SEPARATOR_S "%u",
                          kz, ky, kx);
}

gboolean
sv__zarr_row_folders (SvZarrLabelWriter *w, guint kz0, guint n_rows, GError **error)
{
  const guint n_y = (w->ny + w->chunks[1] - 1) / w->chunks[1];

  for (guint kz = kz0; kz < kz0 + n_rows; kz++)
    for (guint ky = 0; ky <= n_y; ky++)
      {
        /* The row's folder first, then one for each of its y. */
        g_autofree char *name
            = ky == 0 ? g_strdup_printf ("0" G_DIR_SEPARATOR_S "%u", kz)
                      : g_strdup_printf ("0" G_DIR_SEPARATOR_S "%u" G_DIR_SEPARATOR_S "%u", kz,
                                         ky - 1);
        g_autofree char *folder = g_build_filename (w->tmp, name, NULL);

        if (g_mkdir (folder, 0777) != 0 && errno != EEXIST)
          {
            int saved = errno;
            g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot create %s: %s",
                         w->path, name, g_strerror (saved));
            return FALSE;
          }
      }
  return TRUE;
}

typedef struct
{
  SvZarrLabelWriter *w;
  guint kz;
  guint n_y, n_x; /* chunks across */
  gint next;
  SvZarrRowOutcome outcome;
  /* The row's first negative label in raster order (−1: none yet), under
   * outcome.lock: the one an in-order check would name. Once one is found
   * the workers go on gathering chunks, to find the first, and write
   * none. */
  gint64 negative_at;
  gint32 negative_value;
  gint negative; /* atomic: one was found */
} FlushJob;

/* Chunk (ky, kx) of the row into `chunk` (edge chunks are full-size in
 * Zarr, what lies outside is fill_value); FALSE at a negative label in a
 * store for labels >= 0, noted in the job. */
static gboolean
gather_chunk (FlushJob *job, guint ky, guint kx, gint32 *chunk)
{
  SvZarrLabelWriter *w = job->w;
  const guint cz = w->chunks[0], cy = w->chunks[1], cx = w->chunks[2];
  const guint y0 = ky * cy, x0 = kx * cx;
  const guint ny = MIN (cy, w->ny - y0), nx = MIN (cx, w->nx - x0);
  const gint32 *row = w->row_src != NULL ? w->row_src : w->row;

  if (ny < cy || nx < cx || w->row_fill < cz)
    memset (chunk, 0, (gsize)cz * cy * cx * sizeof (gint32));
  for (guint z = 0; z < w->row_fill; z++)
    for (guint y = 0; y < ny; y++)
      {
        gint32 *dst = chunk + ((gsize)z * cy + y) * cx;

        memcpy (dst, row + ((gsize)z * w->ny + y0 + y) * w->nx + x0, nx * sizeof (gint32));
        for (guint x = 0; !w->negative && x < nx; x++)
          if (dst[x] < 0)
            {
              const gint64 at = (((gint64)w->row_z0 + z) * w->ny + y0 + y) * w->nx + x0 + x;

              g_mutex_lock (&job->outcome.lock);
              if (job->negative_at < 0 || at < job->negative_at)
                {
                  job->negative_at = at;
                  job->negative_value = dst[x];
                }
              g_mutex_unlock (&job->outcome.lock);
              g_atomic_int_set (&job->negative, 1);
              return FALSE;
            }
      }
  return TRUE;
}

static void
flush_worker (gpointer data, int thread)
{
  FlushJob *job = data;
  SvZarrLabelWriter *w = job->w;
  const guint cz = w->chunks[0], cy = w->chunks[1], cx = w->chunks[2];
  const gsize chunk_bytes = (gsize)cz * cy * cx * sizeof (gint32);
  for (;;)
    {
      const gint i = g_atomic_int_add (&job->next, 1);
      const guint ky = (guint)i / MAX (job->n_x, 1), kx = (guint)i % MAX (job->n_x, 1);
      g_autofree char *key = NULL;
      g_autofree char *file = NULL;
      g_autofree char *why = NULL;
      const guint8 *encoded;
      GError *local = NULL;
      gsize size = 0;

      if (i >= (gint)(job->n_y * job->n_x) || g_atomic_int_get (&job->outcome.failed))
        return;
      key = sv__zarr_chunk_key (job->kz, ky, kx);
      if (w->chunk[thread] == NULL && (w->chunk[thread] = g_try_malloc (chunk_bytes)) == NULL)
        {
          sv__zarr_row_fail (&job->outcome,
                             g_error_new (SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                                          "not enough memory for a chunk of %u×%u×%u labels", cx,
                                          cy, cz));
          return;
        }
      if (w->encoder[thread] == NULL
          && (w->encoder[thread] = sv__zarr_encoder_new (&w->zarr, chunk_bytes, cx * sizeof (gint32)))
                 == NULL)
        {
          sv__zarr_row_fail (&job->outcome,
                             g_error_new (SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                                          "cannot compress chunk %s: not enough memory to "
                                          "compress a chunk of %" G_GSIZE_FORMAT " bytes",
                                          key, chunk_bytes));
          return;
        }
      if (!gather_chunk (job, ky, kx, w->chunk[thread]) || g_atomic_int_get (&job->negative))
        continue;
      encoded = sv__zarr_encoder_run (w->encoder[thread], sizeof (gint32),
                                      (const guint8 *)w->chunk[thread], chunk_bytes, &size, &why);
      if (encoded == NULL)
        local = g_error_new (SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                             "cannot compress chunk %s: %s", key, why);
      file = g_build_filename (w->tmp, key, NULL);
      if (local != NULL || !sv__zarr_write_bytes (file, encoded, size, w->syncer, &local))
        {
          sv__zarr_row_fail (&job->outcome, local);
          return;
        }
    }
}

gboolean
sv__zarr_row_flush (SvZarrLabelWriter *w, GError **error)
{
  FlushJob job = { 0 };
  const gsize plane = (gsize)w->ny * w->nx;
  int threads;

  job.w = w;
  job.kz = w->row_z0 / w->chunks[0];
  job.n_y = (w->ny + w->chunks[1] - 1) / w->chunks[1];
  job.n_x = (w->nx + w->chunks[2] - 1) / w->chunks[2];
  job.negative_at = -1;
  threads = MAX (MIN (sv__resolve_threads (w->n_threads), (int)(job.n_y * job.n_x)), 1);
  if (w->chunk == NULL)
    {
      w->n_workers = threads;
      w->chunk = g_new0 (gint32 *, threads);
      w->encoder = g_new0 (SvZarrEncoder *, threads);
    }
  threads = MIN (threads, w->n_workers);
  if (!sv__zarr_row_folders (w, job.kz, 1, error))
    return FALSE;
  g_mutex_init (&job.outcome.lock);
  sv__run_parallel (threads, flush_worker, &job);
  g_mutex_clear (&job.outcome.lock);
  w->row_z0 += w->row_fill;
  w->row_fill = 0;
  if (job.negative_at >= 0)
    {
      g_clear_error (&job.outcome.error);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s: label %d in slice %u of a store started for labels >= 0", w->path,
                   job.negative_value, (guint)(job.negative_at / (gint64)plane));
      return FALSE;
    }
  if (job.outcome.error != NULL)
    {
      g_propagate_prefixed_error (error, job.outcome.error, "%s: ", w->path);
      return FALSE;
    }
  return TRUE;
}

void
sv__zarr_row_clear (SvZarrLabelWriter *w)
{
  for (int t = 0; t < w->n_workers; t++)
    {
      g_free (w->chunk[t]);
      sv__zarr_encoder_free (w->encoder[t]);
    }
  g_clear_pointer (&w->chunk, g_free);
  g_clear_pointer (&w->encoder, g_free);
  w->n_workers = 0;
}

gboolean
sv__zarr_label_writer_chunk_shape (const SvZarrLabelWriter *w, guint chunks[3])
{
  if (w->zarr.compressor != SV_ZARR_COMPRESSOR_ZLIB || !w->zarr.runs)
    return FALSE;
  memcpy (chunks, w->chunks, sizeof w->chunks);
  return TRUE;
}

/* Rows of chunks that came compressed: each worker writes files in turn. */
typedef struct
{
  SvZarrLabelWriter *w;
  guint kz0, n_y, n_x;
  gsize n_chunks;
  const guint64 *sizes;
  const guint64 *offsets;
  const guint8 *bytes;
  gint next;
  SvZarrRowOutcome outcome;
} ChunksJob;

static void
chunks_worker (gpointer data, int thread)
{
  ChunksJob *job = data;
  const gsize per_row = (gsize)job->n_y * job->n_x;

  (void)thread;
  for (;;)
    {
      const gsize i = (gsize)g_atomic_int_add (&job->next, 1);
      g_autofree char *key = NULL;
      g_autofree char *file = NULL;
      GError *local = NULL;

      if (i >= job->n_chunks || g_atomic_int_get (&job->outcome.failed))
        return;
      key = sv__zarr_chunk_key (job->kz0 + (guint)(i / per_row), (guint)(i % per_row / job->n_x),
                                (guint)(i % job->n_x));
      file = g_build_filename (job->w->tmp, key, NULL);
      if (!sv__zarr_write_bytes (file, job->bytes + job->offsets[i], job->sizes[i],
                                 job->w->syncer, &local))
        {
          sv__zarr_row_fail (&job->outcome, local);
          return;
        }
    }
}

gboolean
sv__zarr_label_writer_append_chunks (SvZarrLabelWriter *w, guint depth, const guint64 *sizes,
                                     const guint8 *bytes, gint64 negative_slice, GError **error)
{
  const guint cz = w->chunks[0];
  ChunksJob job = { 0 };
  g_autofree guint64 *offsets = NULL;
  guint64 at = 0;

  g_return_val_if_fail (w->open && w->row_fill == 0 && w->row_z0 % cz == 0, FALSE);
  g_return_val_if_fail (w->row_z0 + depth <= w->nz && depth > 0, FALSE);
  g_return_val_if_fail (depth % cz == 0 || w->row_z0 + depth == w->nz, FALSE);

  if (negative_slice >= 0 && !w->negative)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s: a negative label in slice %" G_GINT64_FORMAT
                   " of a store started for labels >= 0",
                   w->path, negative_slice);
      return FALSE;
    }
  job.w = w;
  job.kz0 = w->row_z0 / cz;
  job.n_y = (w->ny + w->chunks[1] - 1) / w->chunks[1];
  job.n_x = (w->nx + w->chunks[2] - 1) / w->chunks[2];
  job.n_chunks = (gsize)((depth + cz - 1) / cz) * job.n_y * job.n_x;
  offsets = g_new (guint64, job.n_chunks);
  for (gsize i = 0; i < job.n_chunks; i++)
    {
      offsets[i] = at;
      at += sizes[i];
    }
  if (!sv__zarr_row_folders (w, job.kz0, (depth + cz - 1) / cz, error))
    return FALSE;
  job.sizes = sizes;
  job.offsets = offsets;
  job.bytes = bytes;
  g_mutex_init (&job.outcome.lock);
  /* Threads for the files' opens and writes; their syncs go to the
   * syncer's. */
  sv__run_parallel (MAX (MIN (sv__resolve_threads (w->n_threads), (int)MIN (job.n_chunks, 64)), 1),
                    chunks_worker, &job);
  g_mutex_clear (&job.outcome.lock);
  if (job.outcome.error != NULL)
    {
      g_propagate_prefixed_error (error, job.outcome.error, "%s: ", w->path);
      return FALSE;
    }
  w->row_z0 += depth;
  return TRUE;
}

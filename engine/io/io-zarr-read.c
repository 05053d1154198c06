/* Supervox engine: reading a Zarr array's voxels. A z-range decodes the
 * chunks that hold it on worker threads, each chunk into the part of the
 * caller's buffer it covers (z-major, channel fastest, as TIFF slabs are);
 * a chunk that is missing holds fill_value, as the Zarr spec says. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "internal.h"
#include "io-zarr-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"

typedef struct
{
  guint64 idx[SV_ZARR_N_AXES]; /* t, c, z, y, x */
} ChunkTask;

typedef struct
{
  const SvZarrArray *a;
  guint c_lo, c_hi; /* channels wanted */
  guint z0, z1;
  guint8 *dst;
  GArray *tasks; /* ChunkTask */
  gint next;
  SvZarrRowOutcome outcome;
} ReadJob;

static void
swap_bytes (guint8 *p, guint bytes)
{
  for (guint i = 0; i < bytes / 2; i++)
    {
      guint8 t = p[i];
      p[i] = p[bytes - 1 - i];
      p[bytes - 1 - i] = t;
    }
}

/* Copies the chunk at idx (decoded in `buf`) into the job's slab. */
static void
copy_chunk (const ReadJob *job, const guint64 *idx, const guint8 *buf)
{
  const SvZarrArray *a = job->a;
  const guint item = a->item_bytes;
  const guint *ch = a->chunks;
  const guint64 oc = idx[SV_ZARR_C] * ch[SV_ZARR_C], oz = idx[SV_ZARR_Z] * ch[SV_ZARR_Z];
  const guint64 oy = idx[SV_ZARR_Y] * ch[SV_ZARR_Y], ox = idx[SV_ZARR_X] * ch[SV_ZARR_X];
  const guint64 ny = a->shape[SV_ZARR_Y], nx = a->shape[SV_ZARR_X];
  const guint nc_out = job->c_hi - job->c_lo;
  const guint64 c_a = MAX (oc, job->c_lo), c_b = MIN (oc + ch[SV_ZARR_C], job->c_hi);
  const guint64 z_a = MAX (oz, job->z0), z_b = MIN (oz + ch[SV_ZARR_Z], job->z1);
  const guint64 y_b = MIN (oy + ch[SV_ZARR_Y], ny), x_b = MIN (ox + ch[SV_ZARR_X], nx);
  const gsize run = (gsize)(x_b - ox);

  for (guint64 c = c_a; c < c_b; c++)
    for (guint64 z = z_a; z < z_b; z++)
      for (guint64 y = oy; y < y_b; y++)
        {
          const guint8 *src
              = buf
                + ((((c - oc) * ch[SV_ZARR_Z] + (z - oz)) * ch[SV_ZARR_Y] + (y - oy))
                   * ch[SV_ZARR_X])
                      * item;
          guint8 *d = job->dst + ((((z - job->z0) * ny + y) * nx + ox) * nc_out + (c - job->c_lo)) * item;

          if (nc_out == 1 && !a->swap)
            {
              memcpy (d, src, run * item);
              continue;
            }
          for (gsize x = 0; x < run; x++)
            {
              memcpy (d + x * nc_out * item, src + x * item, item);
              if (a->swap)
                swap_bytes (d + x * nc_out * item, item);
            }
        }
}

void
sv__zarr_row_fail (SvZarrRowOutcome *outcome, GError *error)
{
  g_mutex_lock (&outcome->lock);
  if (outcome->error == NULL)
    outcome->error = error;
  else
    g_error_free (error);
  g_mutex_unlock (&outcome->lock);
  g_atomic_int_set (&outcome->failed, 1);
}

static void
read_worker (gpointer data, int thread)
{
  ReadJob *job = data;
  const SvZarrArray *a = job->a;
  gsize chunk_bytes = a->item_bytes;
  g_autofree guint8 *buf = NULL;

  (void)thread;
  for (int k = 0; k < SV_ZARR_N_AXES; k++)
    chunk_bytes *= a->chunks[k];
  buf = g_try_malloc (chunk_bytes);
  if (buf == NULL)
    {
      sv__zarr_row_fail (&job->outcome,
                         g_error_new (SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                                      "%s: no memory for a chunk of %" G_GSIZE_FORMAT " bytes",
                                      a->name, chunk_bytes));
      return;
    }
  for (;;)
    {
      gint i = g_atomic_int_add (&job->next, 1);
      const guint64 *idx;
      g_autofree char *path = NULL;
      g_autofree char *bytes = NULL;
      g_autofree char *why = NULL;
      g_autoptr (GError) local = NULL;
      gsize len = 0;

      if (i >= (gint)job->tasks->len || g_atomic_int_get (&job->outcome.failed))
        return;
      idx = g_array_index (job->tasks, ChunkTask, i).idx;
      path = sv__zarr_chunk_path (a, idx);
      if (!g_file_get_contents (path, &bytes, &len, &local))
        {
          if (!g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
            {
              sv__zarr_row_fail (&job->outcome, g_error_new (SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                                                             "%s: cannot read chunk %s: %s",
                                                             a->name, path, local->message));
              return;
            }
          /* A chunk never written holds fill_value everywhere. */
          for (gsize o = 0; o < chunk_bytes; o += a->item_bytes)
            {
              memcpy (buf + o, a->fill, a->item_bytes);
              if (a->swap)
                swap_bytes (buf + o, a->item_bytes);
            }
        }
      else if (!sv__zarr_chunk_decode (a->compressor, (const guint8 *)bytes, len, buf, chunk_bytes,
                                       &why))
        {
          g_autofree char *key = g_path_get_basename (path);
          sv__zarr_row_fail (
              &job->outcome,
              g_error_new (SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                           "%s: chunk %s is damaged or cut short (%s)", a->name,
                           g_str_has_prefix (path, a->folder) ? path + strlen (a->folder) + 1 : key,
                           why));
          return;
        }
      copy_chunk (job, idx, buf);
    }
}

gboolean
sv__zarr_array_read (const SvZarrArray *a, int channel, guint z0, guint z1, void *samples,
                     int n_threads, GError **error)
{
  ReadJob job = { 0 };
  ChunkTask t = { { 0 } };
  guint64 *idx = t.idx;
  guint64 lo[SV_ZARR_N_AXES], hi[SV_ZARR_N_AXES];
  int threads;

  g_return_val_if_fail (z0 <= z1 && z1 <= a->shape[SV_ZARR_Z], FALSE);
  if (z0 == z1)
    return TRUE;

  job.a = a;
  job.c_lo = channel >= 0 ? (guint)channel : 0;
  job.c_hi = channel >= 0 ? (guint)channel + 1 : (guint)a->shape[SV_ZARR_C];
  job.z0 = z0;
  job.z1 = z1;
  job.dst = samples;
  job.tasks = g_array_new (FALSE, FALSE, sizeof (ChunkTask));
  g_mutex_init (&job.outcome.lock);

  /* The chunks that hold [z0, z1) of the channels wanted, in file order. */
  for (int k = 0; k < SV_ZARR_N_AXES; k++)
    {
      lo[k] = 0;
      hi[k] = (a->shape[k] + a->chunks[k] - 1) / a->chunks[k];
    }
  lo[SV_ZARR_C] = job.c_lo / a->chunks[SV_ZARR_C];
  hi[SV_ZARR_C] = (job.c_hi - 1) / a->chunks[SV_ZARR_C] + 1;
  lo[SV_ZARR_Z] = z0 / a->chunks[SV_ZARR_Z];
  hi[SV_ZARR_Z] = (z1 - 1) / a->chunks[SV_ZARR_Z] + 1;
  for (idx[SV_ZARR_C] = lo[SV_ZARR_C]; idx[SV_ZARR_C] < hi[SV_ZARR_C]; idx[SV_ZARR_C]++)
    for (idx[SV_ZARR_Z] = lo[SV_ZARR_Z]; idx[SV_ZARR_Z] < hi[SV_ZARR_Z]; idx[SV_ZARR_Z]++)
      for (idx[SV_ZARR_Y] = 0; idx[SV_ZARR_Y] < hi[SV_ZARR_Y]; idx[SV_ZARR_Y]++)
        for (idx[SV_ZARR_X] = 0; idx[SV_ZARR_X] < hi[SV_ZARR_X]; idx[SV_ZARR_X]++)
          g_array_append_val (job.tasks, t);

  threads = MIN (sv__resolve_threads (n_threads), (int)job.tasks->len);
  sv__run_parallel (MAX (threads, 1), read_worker, &job);
  g_array_free (job.tasks, TRUE);
  g_mutex_clear (&job.outcome.lock);
  if (job.outcome.error != NULL)
    {
      g_propagate_error (error, job.outcome.error);
      return FALSE;
    }
  return TRUE;
}

SvVolume *
sv__zarr_read_volume (const char *path, const SvTiffReadOptions *options, GError **error)
{
  g_autoptr (SvZarrArray) a = NULL;
  g_autoptr (SvVolume) volume = NULL;
  g_autofree guint8 *samples = NULL;
  guint nz, ny, nx, nc, step;
  gsize plane;

  a = sv__zarr_array_open (path, error);
  if (a == NULL)
    return NULL;
  nz = (guint)a->shape[SV_ZARR_Z];
  ny = (guint)a->shape[SV_ZARR_Y];
  nx = (guint)a->shape[SV_ZARR_X];
  nc = (guint)a->shape[SV_ZARR_C];
  if (options->channel >= 0 && (guint)options->channel >= nc)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s has %u channel%s (0 to %u), not channel %d", path, nc, nc == 1 ? "" : "s",
                   nc - 1, options->channel);
      return NULL;
    }
  if (options->channel >= 0)
    nc = 1;
  volume = sv_volume_new (nz, ny, nx, nc, error);
  if (volume == NULL)
    return NULL;

  /* One row of chunks at a time: each chunk is decoded once. */
  step = a->chunks[SV_ZARR_Z];
  plane = (gsize)ny * nx * nc;
  samples = g_try_malloc ((gsize)step * plane * a->item_bytes);
  if (samples == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "%s: no memory for a row of chunks", path);
      return NULL;
    }
  for (guint z0 = 0; z0 < nz; z0 += step)
    {
      guint z1 = MIN (z0 + step, nz);
      if (!sv__zarr_array_read (a, options->channel, z0, z1, samples, options->n_threads, error))
        return NULL;
      sv_tiff_samples_to_float (a->type, samples, (gsize)(z1 - z0) * plane,
                                volume->data + (gsize)z0 * plane);
    }
  memcpy (volume->spacing, a->spacing, sizeof volume->spacing);
  volume->spacing_from_file = a->spacing_from_file;
  volume->unit = g_strdup (a->unit);
  volume->source_type = a->type;
  return g_steal_pointer (&volume);
}

struct _SvZarrSlabs
{
  SvZarrArray *a;
  int channel;
  int n_threads;
  gsize slice_bytes;
  /* The last row of chunks read for part of its slices: a run's slabs are
   * thinner than chunks, and each row is then decoded once, not per slab. */
  guint8 *row;
  guint row_z0, row_z1; /* row_z1 == 0: none */
};

SvZarrSlabs *
sv__zarr_slabs_open (const char *path, int channel, int n_threads, GError **error)
{
  g_autoptr (SvZarrArray) a = sv__zarr_array_open (path, error);
  SvZarrSlabs *s;
  guint nc;

  if (a == NULL)
    return NULL;
  nc = (guint)a->shape[SV_ZARR_C];
  if (channel >= 0 && (guint)channel >= nc)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s has %u channel%s (0 to %u), not channel %d", path, nc, nc == 1 ? "" : "s",
                   nc - 1, channel);
      return NULL;
    }
  s = g_new0 (SvZarrSlabs, 1);
  s->channel = channel;
  s->n_threads = n_threads;
  s->slice_bytes = (gsize)a->shape[SV_ZARR_Y] * a->shape[SV_ZARR_X] * (channel >= 0 ? 1 : nc)
                   * a->item_bytes;
  s->a = g_steal_pointer (&a);
  return s;
}

const SvZarrArray *
sv__zarr_slabs_array (const SvZarrSlabs *s)
{
  return s->a;
}

gboolean
sv__zarr_slabs_read (SvZarrSlabs *s, guint z0, guint z1, void *samples, GError **error)
{
  const guint depth = s->a->chunks[SV_ZARR_Z], nz = (guint)s->a->shape[SV_ZARR_Z];
  guint8 *dst = samples;

  for (guint r0 = z0 - z0 % depth; r0 < z1; r0 += depth)
    {
      guint r1 = MIN (r0 + depth, nz), a = MAX (z0, r0), b = MIN (z1, r1);

      if (a == r0 && b == r1)
        {
          if (!sv__zarr_array_read (s->a, s->channel, a, b, dst + (gsize)(a - z0) * s->slice_bytes,
                                    s->n_threads, error))
            return FALSE;
          continue;
        }
      if (s->row_z1 == 0 || s->row_z0 != r0)
        {
          if (s->row == NULL)
            s->row = g_try_malloc ((gsize)depth * s->slice_bytes);
          if (s->row == NULL)
            {
              g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                           "%s: no memory for a row of chunks", s->a->name);
              return FALSE;
            }
          s->row_z1 = 0;
          if (!sv__zarr_array_read (s->a, s->channel, r0, r1, s->row, s->n_threads, error))
            return FALSE;
          s->row_z0 = r0;
          s->row_z1 = r1;
        }
      memcpy (dst + (gsize)(a - z0) * s->slice_bytes, s->row + (gsize)(a - r0) * s->slice_bytes,
              (gsize)(b - a) * s->slice_bytes);
    }
  return TRUE;
}

void
sv__zarr_slabs_free (SvZarrSlabs *s)
{
  if (s == NULL)
    return;
  sv__zarr_array_free (s->a);
  g_free (s->row);
  g_free (s);
}

/* Supervox engine: per-supervoxel statistics and adjacency, slab by slab.
 *
 * Two phases per slab. First every z slice is summed on its own into a
 * small table of its labels and pairs (any thread, raster order). Then
 * the slices' tables are merged into 64 shards of the whole table (a
 * label's shard is a hash of the label), each shard by one thread, slice
 * by slice in z order. The shard count does not depend on the threads,
 * so neither does any sum's order. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervoxel-table-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "io-tiff-private.h"


static void
key_map_init (KeyMap *m, gsize capacity)
{
  m->keys = g_new (guint64, capacity);
  m->values = g_new (guint32, capacity);
  memset (m->keys, 0xff, capacity * sizeof (guint64));
  m->mask = capacity - 1;
  m->n = 0;
}

static void
key_map_clear (KeyMap *m)
{
  g_clear_pointer (&m->keys, g_free);
  g_clear_pointer (&m->values, g_free);
}

static inline gsize
key_hash (guint64 key)
{
  return (gsize)((key * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15)) >> 20);
}

static void key_map_grow (KeyMap *m);

/* The index stored for `key`; a new key gets `next` and *added is set. */
static inline guint32
key_map_get (KeyMap *m, guint64 key, guint32 next, gboolean *added)
{
  gsize i = key_hash (key) & m->mask;

  for (;;)
    {
      if (m->keys[i] == key)
        {
          *added = FALSE;
          return m->values[i];
        }
      if (m->keys[i] == EMPTY_KEY)
        break;
      i = (i + 1) & m->mask;
    }
  m->keys[i] = key;
  m->values[i] = next;
  m->n++;
  *added = TRUE;
  if (m->n * 2 > m->mask + 1)
    key_map_grow (m);
  return next;
}

static void
key_map_grow (KeyMap *m)
{
  KeyMap old = *m;

  key_map_init (m, (old.mask + 1) * 2);
  for (gsize i = 0; i <= old.mask; i++)
    if (old.keys[i] != EMPTY_KEY)
      {
        gsize j = key_hash (old.keys[i]) & m->mask;
        while (m->keys[j] != EMPTY_KEY)
          j = (j + 1) & m->mask;
        m->keys[j] = old.keys[i];
        m->values[j] = old.values[i];
        m->n++;
      }
  key_map_clear (&old);
}

static inline guint64
label_key (gint32 label)
{
  return (guint32)label;
}

static inline guint
shard_of (guint64 key)
{
  return (guint)((key * G_GUINT64_CONSTANT (0xD6E8FEB86659FD93)) >> 58);
}

static void
bucket_init (Bucket *b, gsize capacity)
{
  key_map_init (&b->regions_map, capacity);
  key_map_init (&b->pairs_map, capacity);
  b->regions = g_array_new (FALSE, FALSE, sizeof (RegionAcc));
  b->values = g_array_new (FALSE, FALSE, sizeof (double));
  b->pairs = g_array_new (FALSE, FALSE, sizeof (PairAcc));
  b->pair_values = g_array_new (FALSE, FALSE, sizeof (double));
}

void
sv__supervoxel_bucket_clear (Bucket *b)
{
  key_map_clear (&b->regions_map);
  key_map_clear (&b->pairs_map);
  if (b->regions)
    g_array_free (b->regions, TRUE);
  if (b->values)
    g_array_free (b->values, TRUE);
  if (b->pairs)
    g_array_free (b->pairs, TRUE);
  if (b->pair_values)
    g_array_free (b->pair_values, TRUE);
  g_free (b->region_order);
  g_free (b->pair_order);
  memset (b, 0, sizeof *b);
}

/* Groups a slice's entries by shard (a counting sort, first-seen order
 * kept within a shard). */
static void
bucket_order_by_shard (Bucket *b)
{
  gsize count[N_SHARDS] = { 0 };

  b->region_order = g_new (guint32, MAX (b->regions->len, 1));
  for (guint i = 0; i < b->regions->len; i++)
    count[shard_of (label_key (g_array_index (b->regions, RegionAcc, i).label))]++;
  b->region_start[0] = 0;
  for (guint k = 0; k < N_SHARDS; k++)
    b->region_start[k + 1] = b->region_start[k] + count[k];
  memcpy (count, b->region_start, sizeof count);
  for (guint i = 0; i < b->regions->len; i++)
    b->region_order[count[shard_of (label_key (g_array_index (b->regions, RegionAcc, i).label))]++]
        = i;

  memset (count, 0, sizeof count);
  b->pair_order = g_new (guint32, MAX (b->pairs->len, 1));
  for (guint i = 0; i < b->pairs->len; i++)
    count[shard_of (g_array_index (b->pairs, PairAcc, i).key)]++;
  b->pair_start[0] = 0;
  for (guint k = 0; k < N_SHARDS; k++)
    b->pair_start[k + 1] = b->pair_start[k] + count[k];
  memcpy (count, b->pair_start, sizeof count);
  for (guint i = 0; i < b->pairs->len; i++)
    b->pair_order[count[shard_of (g_array_index (b->pairs, PairAcc, i).key)]++] = i;
}

gboolean
sv_supervoxel_table_image_type_supported (SvSampleType type)
{
  switch (type)
    {
    case SV_SAMPLE_U8:
    case SV_SAMPLE_U16:
    case SV_SAMPLE_U32:
    case SV_SAMPLE_I8:
    case SV_SAMPLE_I16:
    case SV_SAMPLE_I32:
    case SV_SAMPLE_F32:
    case SV_SAMPLE_F64:
      return TRUE;
    default:
      return FALSE;
    }
}

/* n samples of `type` as double: the file's own values. */
static void
samples_to_double (SvSampleType type, const void *src, gsize n, double *out)
{
#define SV_CONVERT(ctype)                                                                          \
  do                                                                                               \
    {                                                                                              \
      const ctype *s = src;                                                                        \
      for (gsize i = 0; i < n; i++)                                                                \
        out[i] = (double)s[i];                                                                     \
    }                                                                                              \
  while (0)
  switch (type)
    {
    case SV_SAMPLE_U8:
      SV_CONVERT (guint8);
      break;
    case SV_SAMPLE_I8:
      SV_CONVERT (gint8);
      break;
    case SV_SAMPLE_U16:
      SV_CONVERT (guint16);
      break;
    case SV_SAMPLE_I16:
      SV_CONVERT (gint16);
      break;
    case SV_SAMPLE_U32:
      SV_CONVERT (guint32);
      break;
    case SV_SAMPLE_I32:
      SV_CONVERT (gint32);
      break;
    case SV_SAMPLE_F32:
      SV_CONVERT (float);
      break;
    case SV_SAMPLE_F64:
      SV_CONVERT (double);
      break;
    default:
      g_assert_not_reached ();
    }
#undef SV_CONVERT
}

void
sv_supervoxel_table_options_init_defaults (SvSupervoxelTableOptions *options)
{
  memset (options, 0, sizeof *options);
}

SvSupervoxelTable *
sv_supervoxel_table_new (guint nz, guint ny, guint nx, guint nc, SvSampleType image_type,
                         const SvSupervoxelTableOptions *options)
{
  SvSupervoxelTable *t;

  g_return_val_if_fail (nc == 0 || sv_supervoxel_table_image_type_supported (image_type), NULL);

  t = g_new0 (SvSupervoxelTable, 1);
  t->nz = nz;
  t->ny = ny;
  t->nx = nx;
  t->nc = nc;
  t->image_type = image_type;
  t->sample_bytes = nc ? sv__sample_type_bytes (image_type) : 0;
  if (options)
    t->options = *options;
  else
    sv_supervoxel_table_options_init_defaults (&t->options);
  t->n_threads = sv__resolve_threads (t->options.n_threads);
  for (guint k = 0; k < N_SHARDS; k++)
    bucket_init (&t->shards[k], 1024);
  return t;
}

void
sv_supervoxel_table_free (SvSupervoxelTable *table)
{
  if (table == NULL)
    return;
  for (guint k = 0; k < N_SHARDS; k++)
    sv__supervoxel_bucket_clear (&table->shards[k]);
  g_free (table->prev_labels);
  g_free (table->prev_image);
  g_free (table->rows);
  g_free (table->row_values);
  g_free (table->pairs);
  g_free (table->pair_means);
  g_free (table);
}

/* ---- phase one: one slice ---------------------------------------------- */

typedef struct
{
  SvSupervoxelTable *t;
  const gint32 *labels;
  const guint8 *image;
  guint depth;
  Bucket *slices; /* one per slice of the slab */
  gint next;      /* the next slice or shard to take */
} SlabWork;

static inline void
add_voxel (Bucket *b, guint nc, gint32 label, guint z, guint y, guint x, const double *v,
           gint32 *last_label, guint32 *last_index)
{
  RegionAcc *r;
  double *cv;
  guint32 k;

  if (b->regions->len > 0 && label == *last_label)
    k = *last_index;
  else
    {
      gboolean added;
      k = key_map_get (&b->regions_map, label_key (label), b->regions->len, &added);
      if (added)
        {
          RegionAcc fresh = { .label = label, .lo = { z, y, x }, .hi = { z + 1, y + 1, x + 1 } };
          g_array_append_val (b->regions, fresh);
          g_array_set_size (b->values, b->values->len + (gsize)nc * SLICE_CH);
          cv = &g_array_index (b->values, double, (gsize)k * nc * SLICE_CH);
          for (guint c = 0; c < nc; c++)
            {
              /* The shift keeps the sum of squares away from cancellation. */
              cv[c * SLICE_CH + 0] = v[c];
              cv[c * SLICE_CH + 1] = 0.0;
              cv[c * SLICE_CH + 2] = 0.0;
              cv[c * SLICE_CH + 3] = v[c];
              cv[c * SLICE_CH + 4] = v[c];
            }
        }
      *last_label = label;
      *last_index = k;
    }
  r = &g_array_index (b->regions, RegionAcc, k);
  r->n++;
  r->sum[0] += z;
  r->sum[1] += y;
  r->sum[2] += x;
  r->lo[1] = MIN (r->lo[1], y);
  r->hi[1] = MAX (r->hi[1], y + 1);
  r->lo[2] = MIN (r->lo[2], x);
  r->hi[2] = MAX (r->hi[2], x + 1);
  cv = &g_array_index (b->values, double, (gsize)k * nc * SLICE_CH);
  for (guint c = 0; c < nc; c++, cv += SLICE_CH)
    {
      double d = v[c] - cv[0];
      cv[1] += d;
      cv[2] += d * d;
      cv[3] = MIN (cv[3], v[c]);
      cv[4] = MAX (cv[4], v[c]);
    }
}

static inline void
add_face (Bucket *b, guint nc, gint32 p, gint32 q, guint axis, const double *vp,
          const double *vq, guint64 *last_key, guint32 *last_index)
{
  gint32 lo = MIN (p, q), hi = MAX (p, q);
  guint64 key = ((guint64)(guint32)lo << 32) | (guint32)hi;
  PairAcc *pa;
  double *sums;
  guint32 k;

  if (b->pairs->len > 0 && key == *last_key)
    k = *last_index;
  else
    {
      gboolean added;
      k = key_map_get (&b->pairs_map, key, b->pairs->len, &added);
      if (added)
        {
          PairAcc fresh = { .key = key };
          g_array_append_val (b->pairs, fresh);
          /* Without an image there are no values (and no array to clear). */
          if (nc > 0)
            {
              g_array_set_size (b->pair_values, b->pair_values->len + nc);
              memset (&g_array_index (b->pair_values, double, (gsize)k * nc), 0,
                      nc * sizeof (double));
            }
        }
      *last_key = key;
      *last_index = k;
    }
  pa = &g_array_index (b->pairs, PairAcc, k);
  pa->faces[axis]++;
  sums = &g_array_index (b->pair_values, double, (gsize)k * nc);
  for (guint c = 0; c < nc; c++)
    sums[c] += vp[c] + vq[c];
}

static void
sum_slice (SvSupervoxelTable *t, const gint32 *labels, const gint32 *below, const guint8 *image,
           const guint8 *image_below, guint z, Bucket *b, double *rows)
{
  const guint nx = t->nx, nc = t->nc;
  const gsize row_samples = (gsize)nx * nc, row_bytes = row_samples * t->sample_bytes;
  const gboolean adjacency = t->options.adjacency, has_bg = t->options.has_background;
  const gint32 bg = t->options.background;
  double *cur = rows, *up = rows + row_samples, *down = rows + 2 * row_samples;
  gint32 last_label = 0;
  guint32 last_region = 0, last_pair = 0;
  guint64 last_key = 0;

  for (guint y = 0; y < t->ny; y++)
    {
      const gint32 *row = labels + (gsize)y * nx;
      const gint32 *row_up = y > 0 ? row - nx : NULL;
      const gint32 *row_down = below ? below + (gsize)y * nx : NULL;

      if (nc)
        {
          samples_to_double (t->image_type, image + y * row_bytes, row_samples, cur);
          if (row_down && adjacency)
            samples_to_double (t->image_type, image_below + y * row_bytes, row_samples, down);
        }
      for (guint x = 0; x < nx; x++)
        {
          gint32 l = row[x];
          const double *v = cur + (gsize)x * nc;

          if (has_bg && l == bg)
            continue;
          add_voxel (b, nc, l, z, y, x, v, &last_label, &last_region);
          if (!adjacency)
            continue;
          /* Each face is counted from the voxel after it in raster order. */
          if (x > 0 && row[x - 1] != l && !(has_bg && row[x - 1] == bg))
            add_face (b, nc, row[x - 1], l, 2, v - nc, v, &last_key, &last_pair);
          if (row_up && row_up[x] != l && !(has_bg && row_up[x] == bg))
            add_face (b, nc, row_up[x], l, 1, up + (gsize)x * nc, v, &last_key, &last_pair);
          if (row_down && row_down[x] != l && !(has_bg && row_down[x] == bg))
            add_face (b, nc, row_down[x], l, 0, down + (gsize)x * nc, v, &last_key, &last_pair);
        }
      {
        double *swap = up;
        up = cur;
        cur = swap;
      }
    }
}

static void
slice_work_cb (gpointer data, int thread)
{
  SlabWork *w = data;
  SvSupervoxelTable *t = w->t;
  const gsize slice = (gsize)t->ny * t->nx;
  const gsize slice_bytes = slice * t->nc * t->sample_bytes;
  g_autofree double *rows = g_new (double, 3 * (gsize)t->nx * MAX (t->nc, 1));
  gint s;

  (void)thread;
  while ((s = g_atomic_int_add (&w->next, 1)) < (gint)w->depth)
    {
      const gint32 *labels = w->labels + s * slice;
      const gint32 *below = s > 0 ? labels - slice : t->prev_labels;
      const guint8 *image = w->image ? w->image + s * slice_bytes : NULL;
      const guint8 *image_below = s > 0 ? (image ? image - slice_bytes : NULL) : t->prev_image;
      Bucket *b = &w->slices[s];

      bucket_init (b, 256);
      sum_slice (t, labels, below, image, image_below, t->z + (guint)s, b, rows);
      bucket_order_by_shard (b);
    }
}

/* ---- phase two: slices into shards, in z order ------------------------- */

static void
merge_region (Bucket *shard, guint nc, guint z, const RegionAcc *r, const double *cv)
{
  gboolean added;
  guint32 k = key_map_get (&shard->regions_map, label_key (r->label), shard->regions->len, &added);
  RegionAcc *g;
  double *gv;

  if (added)
    {
      RegionAcc fresh = { .label = r->label, .lo = { z, r->lo[1], r->lo[2] } };
      g_array_append_val (shard->regions, fresh);
      g_array_set_size (shard->values, shard->values->len + (gsize)nc * SHARD_CH);
      gv = &g_array_index (shard->values, double, (gsize)k * nc * SHARD_CH);
      for (guint c = 0; c < nc; c++)
        {
          gv[c * SHARD_CH + 0] = 0.0;
          gv[c * SHARD_CH + 1] = 0.0;
          gv[c * SHARD_CH + 2] = INFINITY;
          gv[c * SHARD_CH + 3] = -INFINITY;
        }
    }
  g = &g_array_index (shard->regions, RegionAcc, k);
  gv = &g_array_index (shard->values, double, (gsize)k * nc * SHARD_CH);
  for (guint c = 0; c < nc; c++, gv += SHARD_CH, cv += SLICE_CH)
    {
      double nb = (double)r->n, na = (double)g->n, n = na + nb;
      double mean_b = cv[0] + cv[1] / nb;
      double m2_b = MAX (cv[2] - cv[1] * cv[1] / nb, 0.0);
      double delta = mean_b - gv[0];

      /* Chan et al.'s update of mean and M2 for two parts. */
      if (g->n == 0)
        {
          gv[0] = mean_b;
          gv[1] = m2_b;
        }
      else
        {
          gv[0] += delta * nb / n;
          gv[1] += m2_b + delta * delta * na * nb / n;
        }
      gv[2] = MIN (gv[2], cv[3]);
      gv[3] = MAX (gv[3], cv[4]);
    }
  g->n += r->n;
  for (guint d = 0; d < 3; d++)
    g->sum[d] += r->sum[d];
  g->hi[0] = z + 1;
  for (guint d = 1; d < 3; d++)
    {
      g->lo[d] = MIN (g->lo[d], r->lo[d]);
      g->hi[d] = MAX (g->hi[d], r->hi[d]);
    }
}

static void
merge_pair (Bucket *shard, guint nc, const PairAcc *p, const double *sums)
{
  gboolean added;
  guint32 k = key_map_get (&shard->pairs_map, p->key, shard->pairs->len, &added);
  PairAcc *g;
  double *gs;

  if (added)
    {
      PairAcc fresh = { .key = p->key };
      g_array_append_val (shard->pairs, fresh);
      if (nc > 0)
        {
          g_array_set_size (shard->pair_values, shard->pair_values->len + nc);
          memset (&g_array_index (shard->pair_values, double, (gsize)k * nc), 0,
                  nc * sizeof (double));
        }
    }
  g = &g_array_index (shard->pairs, PairAcc, k);
  gs = &g_array_index (shard->pair_values, double, (gsize)k * nc);
  for (guint d = 0; d < 3; d++)
    g->faces[d] += p->faces[d];
  for (guint c = 0; c < nc; c++)
    gs[c] += sums[c];
}

static void
shard_work_cb (gpointer data, int thread)
{
  SlabWork *w = data;
  SvSupervoxelTable *t = w->t;
  const guint nc = t->nc;
  gint k;

  (void)thread;
  while ((k = g_atomic_int_add (&w->next, 1)) < N_SHARDS)
    {
      Bucket *shard = &t->shards[k];
      for (guint s = 0; s < w->depth; s++)
        {
          const Bucket *b = &w->slices[s];
          for (gsize j = b->region_start[k]; j < b->region_start[k + 1]; j++)
            {
              guint32 i = b->region_order[j];
              merge_region (shard, nc, t->z + s, &g_array_index (b->regions, RegionAcc, i),
                            &g_array_index (b->values, double, (gsize)i * nc * SLICE_CH));
            }
          for (gsize j = b->pair_start[k]; j < b->pair_start[k + 1]; j++)
            {
              guint32 i = b->pair_order[j];
              merge_pair (shard, nc, &g_array_index (b->pairs, PairAcc, i),
                          &g_array_index (b->pair_values, double, (gsize)i * nc));
            }
        }
    }
}

void
sv_supervoxel_table_add_slab (SvSupervoxelTable *table, const gint32 *labels, const void *image,
                              guint depth)
{
  const gsize slice = (gsize)table->ny * table->nx;
  const gsize slice_bytes = slice * table->nc * table->sample_bytes;
  SlabWork w = { table, labels, image, depth, NULL, 0 };

  g_return_if_fail (!table->finished);
  g_return_if_fail (table->z + depth <= table->nz);
  g_return_if_fail (table->nc == 0 || image != NULL);
  if (depth == 0)
    return;

  w.slices = g_new0 (Bucket, depth);
  sv__run_parallel (MIN (table->n_threads, (int)depth), slice_work_cb, &w);
  w.next = 0;
  sv__run_parallel (MIN (table->n_threads, N_SHARDS), shard_work_cb, &w);
  for (guint s = 0; s < depth; s++)
    sv__supervoxel_bucket_clear (&w.slices[s]);
  g_free (w.slices);

  /* The slab's last slice meets the next slab's first. */
  if (table->options.adjacency)
    {
      if (table->prev_labels == NULL)
        {
          table->prev_labels = g_new (gint32, slice);
          table->prev_image = table->nc ? g_malloc (slice_bytes) : NULL;
        }
      memcpy (table->prev_labels, labels + (depth - 1) * slice, slice * sizeof (gint32));
      if (table->nc)
        memcpy (table->prev_image, (const guint8 *)image + (depth - 1) * slice_bytes, slice_bytes);
    }
  table->z += depth;
}

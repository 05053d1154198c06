/* Supervox engine: the supervoxel table sorted by label and by pair, and
 * its rows (supervoxel-table.c sums them). */
#define G_LOG_DOMAIN "sv-engine"

#include "supervoxel-table-private.h"

#include <math.h>
#include <stdlib.h>

/* ---- the sorted table -------------------------------------------------- */

typedef struct
{
  guint64 key;
  guint shard;
  guint32 index;
} SortEntry;

static int
compare_label_entries (const void *a, const void *b)
{
  gint32 x = (gint32)((const SortEntry *)a)->key, y = (gint32)((const SortEntry *)b)->key;
  return (x > y) - (x < y);
}

static int
compare_pair_entries (const void *a, const void *b)
{
  guint64 ka = ((const SortEntry *)a)->key, kb = ((const SortEntry *)b)->key;
  gint32 a0 = (gint32)(ka >> 32), b0 = (gint32)(kb >> 32);
  gint32 a1 = (gint32)(guint32)ka, b1 = (gint32)(guint32)kb;
  if (a0 != b0)
    return (a0 > b0) - (a0 < b0);
  return (a1 > b1) - (a1 < b1);
}

void
sv_supervoxel_table_finish (SvSupervoxelTable *table)
{
  const guint nc = table->nc;
  SortEntry *entries;
  gsize n = 0;

  g_return_if_fail (!table->finished);
  table->finished = TRUE;

  for (guint k = 0; k < N_SHARDS; k++)
    n += table->shards[k].regions->len;
  entries = g_new (SortEntry, MAX (n, 1));
  n = 0;
  for (guint k = 0; k < N_SHARDS; k++)
    for (guint i = 0; i < table->shards[k].regions->len; i++)
      entries[n++] = (SortEntry){
        (guint32)g_array_index (table->shards[k].regions, RegionAcc, i).label, k, i
      };
  qsort (entries, n, sizeof *entries, compare_label_entries);
  table->n_rows = n;
  table->rows = g_new (RegionAcc, MAX (n, 1));
  table->row_values = g_new (double, MAX (n * nc * 4, 1));
  for (gsize i = 0; i < n; i++)
    {
      const Bucket *shard = &table->shards[entries[i].shard];
      const RegionAcc *r = &g_array_index (shard->regions, RegionAcc, entries[i].index);
      const double *gv
          = &g_array_index (shard->values, double, (gsize)entries[i].index * nc * SHARD_CH);
      double *out = table->row_values + i * nc * 4;

      table->rows[i] = *r;
      for (guint c = 0; c < nc; c++)
        {
          out[c] = gv[c * SHARD_CH + 0];
          out[nc + c] = sqrt (gv[c * SHARD_CH + 1] / (double)r->n);
          out[2 * nc + c] = gv[c * SHARD_CH + 2];
          out[3 * nc + c] = gv[c * SHARD_CH + 3];
        }
    }
  g_free (entries);

  n = 0;
  for (guint k = 0; k < N_SHARDS; k++)
    n += table->shards[k].pairs->len;
  entries = g_new (SortEntry, MAX (n, 1));
  n = 0;
  for (guint k = 0; k < N_SHARDS; k++)
    for (guint i = 0; i < table->shards[k].pairs->len; i++)
      entries[n++] = (SortEntry){ g_array_index (table->shards[k].pairs, PairAcc, i).key, k, i };
  qsort (entries, n, sizeof *entries, compare_pair_entries);
  table->n_pairs = n;
  table->pairs = g_new (PairAcc, MAX (n, 1));
  table->pair_means = g_new (double, MAX (n * nc, 1));
  for (gsize i = 0; i < n; i++)
    {
      const Bucket *shard = &table->shards[entries[i].shard];
      const PairAcc *p = &g_array_index (shard->pairs, PairAcc, entries[i].index);
      const double *sums = &g_array_index (shard->pair_values, double, (gsize)entries[i].index * nc);
      guint64 faces = p->faces[0] + p->faces[1] + p->faces[2];

      table->pairs[i] = *p;
      for (guint c = 0; c < nc; c++)
        table->pair_means[i * nc + c] = sums[c] / (2.0 * (double)faces);
    }
  g_free (entries);

  /* The shards are no longer needed. */
  for (guint k = 0; k < N_SHARDS; k++)
    sv__supervoxel_bucket_clear (&table->shards[k]);
  g_clear_pointer (&table->prev_labels, g_free);
  g_clear_pointer (&table->prev_image, g_free);
}

guint
sv_supervoxel_table_n_channels (const SvSupervoxelTable *table)
{
  return table->nc;
}

gsize
sv_supervoxel_table_n_rows (const SvSupervoxelTable *table)
{
  g_return_val_if_fail (table->finished, 0);
  return table->n_rows;
}

void
sv_supervoxel_table_get_row (const SvSupervoxelTable *table, gsize i, SvSupervoxelRow *row)
{
  const RegionAcc *r;
  const guint nc = table->nc;

  g_return_if_fail (table->finished && i < table->n_rows);
  r = &table->rows[i];
  row->label = r->label;
  row->n_voxels = r->n;
  for (guint d = 0; d < 3; d++)
    {
      row->centroid[d] = (double)r->sum[d] / (double)r->n;
      row->lo[d] = r->lo[d];
      row->hi[d] = r->hi[d];
    }
  if (nc)
    {
      const double *v = table->row_values + i * nc * 4;
      row->mean = v;
      row->std = v + nc;
      row->min = v + 2 * nc;
      row->max = v + 3 * nc;
    }
  else
    row->mean = row->std = row->min = row->max = NULL;
}

gsize
sv_supervoxel_table_n_pairs (const SvSupervoxelTable *table)
{
  g_return_val_if_fail (table->finished, 0);
  return table->n_pairs;
}

void
sv_supervoxel_table_get_pair (const SvSupervoxelTable *table, gsize i, SvSupervoxelPair *pair)
{
  const PairAcc *p;

  g_return_if_fail (table->finished && i < table->n_pairs);
  p = &table->pairs[i];
  pair->a = (gint32)(p->key >> 32);
  pair->b = (gint32)(guint32)p->key;
  memcpy (pair->faces, p->faces, sizeof pair->faces);
  pair->boundary_mean = table->nc ? table->pair_means + i * table->nc : NULL;
}

double
sv_supervoxel_pair_area (const SvSupervoxelPair *pair, const double spacing[3])
{
  /* A face normal to z spans y·x, and so on. */
  const double face_area[3]
      = { spacing[1] * spacing[2], spacing[0] * spacing[2], spacing[0] * spacing[1] };

  return (double)pair->faces[0] * face_area[0] + (double)pair->faces[1] * face_area[1]
         + (double)pair->faces[2] * face_area[2];
}

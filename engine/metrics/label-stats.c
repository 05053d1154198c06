/* Supervox engine: per-supervoxel statistics of a label volume. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-label-stats.h"

#include <math.h>
#include <stdlib.h>

#include "supervox/sv-error.h"

struct _SvLabelTable
{
  SvLabelStats *stats; /* sorted by label */
  gsize n;
};

/* Where each label's statistics accumulate while the volume is scanned. */
typedef struct
{
  gint32 min_label;
  guint32 *dense; /* label - min_label -> index + 1; 0: not seen; NULL when sparse */
  GHashTable *sparse;
  GArray *stats;
  double *sums; /* n × (nc + 3): intensity sums, then z, y, x sums */
  gsize sums_len;
  guint nc;
} Accumulator;

static gsize
slot_for (Accumulator *a, gint32 label)
{
  gsize index;

  if (a->dense)
    {
      guint32 *slot = a->dense + ((gint64)label - a->min_label);
      if (*slot)
        return *slot - 1;
      index = a->stats->len;
      *slot = (guint32)index + 1;
    }
  else
    {
      gpointer value;
      if (g_hash_table_lookup_extended (a->sparse, GINT_TO_POINTER (label), NULL, &value))
        return GPOINTER_TO_SIZE (value);
      index = a->stats->len;
      g_hash_table_insert (a->sparse, GINT_TO_POINTER (label), GSIZE_TO_POINTER (index));
    }
  {
    SvLabelStats s = { 0 };
    s.label = label;
    for (guint c = 0; c < SV_LABEL_STATS_MAX_CHANNELS; c++)
      {
        s.min[c] = INFINITY;
        s.max[c] = -INFINITY;
      }
    for (guint d = 0; d < 3; d++)
      s.lo[d] = G_MAXUINT;
    g_array_append_val (a->stats, s);
  }
  if ((index + 1) * (a->nc + 3) > a->sums_len)
    {
      gsize len = MAX (a->sums_len * 2, (index + 1) * (a->nc + 3));
      a->sums = g_renew (double, a->sums, len);
      for (gsize i = a->sums_len; i < len; i++)
        a->sums[i] = 0.0;
      a->sums_len = len;
    }
  return index;
}

static int
compare_stats (const void *a, const void *b)
{
  gint32 x = ((const SvLabelStats *)a)->label, y = ((const SvLabelStats *)b)->label;
  return (x > y) - (x < y);
}

SvLabelTable *
sv_label_table_new (const SvLabels *labels, const SvVolume *image, GError **error)
{
  gsize n = sv_labels_n_voxels (labels);
  Accumulator a = { 0 };
  SvLabelTable *table;
  gint32 lo = G_MAXINT32, hi = G_MININT32;
  gsize i = 0;

  g_return_val_if_fail (labels != NULL, NULL);
  if (image && (image->nz != labels->nz || image->ny != labels->ny || image->nx != labels->nx))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "labels are %u×%u×%u but the image is %u×%u×%u", labels->nz, labels->ny,
                   labels->nx, image->nz, image->ny, image->nx);
      return NULL;
    }
  a.nc = image ? MIN (image->nc, SV_LABEL_STATS_MAX_CHANNELS) : 0;
  for (gsize v = 0; v < n; v++)
    {
      lo = MIN (lo, labels->data[v]);
      hi = MAX (hi, labels->data[v]);
    }
  a.min_label = lo;
  /* A slot per value when the labels are dense (SLIC's are consecutive). */
  if (n && (guint64)((gint64)hi - lo) < MAX (n, 1u << 16))
    a.dense = g_new0 (guint32, (gsize)((gint64)hi - lo + 1));
  else
    a.sparse = g_hash_table_new (NULL, NULL);
  a.stats = g_array_new (FALSE, FALSE, sizeof (SvLabelStats));

  for (guint z = 0; z < labels->nz; z++)
    for (guint y = 0; y < labels->ny; y++)
      for (guint x = 0; x < labels->nx; x++, i++)
        {
          gsize k = slot_for (&a, labels->data[i]);
          SvLabelStats *s = &g_array_index (a.stats, SvLabelStats, k);
          double *sum = a.sums + k * (a.nc + 3);
          guint zyx[3] = { z, y, x };

          s->n_voxels++;
          for (guint c = 0; c < a.nc; c++)
            {
              double value = image->data[i * image->nc + c];
              sum[c] += value;
              s->min[c] = MIN (s->min[c], value);
              s->max[c] = MAX (s->max[c], value);
            }
          for (guint d = 0; d < 3; d++)
            {
              sum[a.nc + d] += zyx[d];
              s->lo[d] = MIN (s->lo[d], zyx[d]);
              s->hi[d] = MAX (s->hi[d], zyx[d]);
            }
        }

  for (gsize k = 0; k < a.stats->len; k++)
    {
      SvLabelStats *s = &g_array_index (a.stats, SvLabelStats, k);
      const double *sum = a.sums + k * (a.nc + 3);
      for (guint c = 0; c < SV_LABEL_STATS_MAX_CHANNELS; c++)
        if (c < a.nc)
          s->mean[c] = sum[c] / (double)s->n_voxels;
        else
          s->mean[c] = s->min[c] = s->max[c] = NAN;
      for (guint d = 0; d < 3; d++)
        s->centre[d] = sum[a.nc + d] / (double)s->n_voxels;
    }
  g_free (a.dense);
  g_clear_pointer (&a.sparse, g_hash_table_unref);
  g_free (a.sums);

  table = g_new0 (SvLabelTable, 1);
  table->n = a.stats->len;
  table->stats = (SvLabelStats *)g_array_free (a.stats, FALSE);
  qsort (table->stats, table->n, sizeof (SvLabelStats), compare_stats);
  return table;
}

void
sv_label_table_free (SvLabelTable *table)
{
  if (!table)
    return;
  g_free (table->stats);
  g_free (table);
}

gsize
sv_label_table_get_n_labels (const SvLabelTable *table)
{
  return table->n;
}

const SvLabelStats *
sv_label_table_get (const SvLabelTable *table, gsize i)
{
  g_return_val_if_fail (i < table->n, NULL);
  return &table->stats[i];
}

const SvLabelStats *
sv_label_table_lookup (const SvLabelTable *table, gint32 label)
{
  SvLabelStats key = { .label = label };
  return bsearch (&key, table->stats, table->n, sizeof (SvLabelStats), compare_stats);
}

void
sv_label_table_size_histogram (const SvLabelTable *table, gboolean skip_valid, gint32 skip,
                               guint n_bins, double *edges, guint64 *counts)
{
  guint64 smallest = G_MAXUINT64, largest = 0;
  double log_lo, log_hi;

  for (guint b = 0; b < n_bins; b++)
    counts[b] = 0;
  for (guint b = 0; b <= n_bins; b++)
    edges[b] = 0.0;
  for (gsize i = 0; i < table->n; i++)
    if (!skip_valid || table->stats[i].label != skip)
      {
        smallest = MIN (smallest, table->stats[i].n_voxels);
        largest = MAX (largest, table->stats[i].n_voxels);
      }
  if (!n_bins || largest == 0)
    return;
  log_lo = log ((double)smallest);
  log_hi = log ((double)largest);
  for (guint b = 0; b <= n_bins; b++)
    edges[b] = exp (log_lo + (log_hi - log_lo) * b / n_bins);
  edges[0] = (double)smallest;
  edges[n_bins] = (double)largest;
  for (gsize i = 0; i < table->n; i++)
    if (!skip_valid || table->stats[i].label != skip)
      {
        double t = log_hi > log_lo
                       ? (log ((double)table->stats[i].n_voxels) - log_lo) / (log_hi - log_lo)
                       : 0.0;
        counts[MIN ((guint)(t * n_bins), n_bins - 1)]++;
      }
}

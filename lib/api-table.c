/* libsupervox: the supervoxel table of host arrays (regionprops_table's
 * numbers) and its pairs of touching labels, as named columns. */
#define G_LOG_DOMAIN "sv-api"

#include "api-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-supervoxel-table.h"

struct _SupervoxTable
{
  SvSupervoxelTable *table;
  gboolean adjacency;
  double spacing[3]; /* z, y, x, for the pairs' face_area */
};

void
supervox_table_options_init (SupervoxTableOptions *options)
{
  if (options == NULL)
    return;
  memset (options, 0, sizeof *options);
  options->has_background = 1;
  for (int d = 0; d < 3; d++)
    options->spacing[d] = 1.0;
}

/* One element of an integer or float array as a double. */
static double
element_to_double (const char *p, SupervoxDtype dtype)
{
  switch (dtype)
    {
    case SUPERVOX_BOOL:
      return *(const guint8 *)p != 0;
    case SUPERVOX_UINT8:
      return *(const guint8 *)p;
    case SUPERVOX_UINT16:
      return *(const guint16 *)p;
    case SUPERVOX_UINT32:
      return *(const guint32 *)p;
    case SUPERVOX_UINT64:
      return (double)*(const guint64 *)p;
    case SUPERVOX_INT8:
      return *(const gint8 *)p;
    case SUPERVOX_INT16:
      return *(const gint16 *)p;
    case SUPERVOX_INT32:
      return *(const gint32 *)p;
    case SUPERVOX_INT64:
      return (double)*(const gint64 *)p;
    case SUPERVOX_FLOAT32:
      return *(const float *)p;
    case SUPERVOX_FLOAT64:
      return *(const double *)p;
    default:
      return 0.0;
    }
}

static gboolean
labels_to_int32 (const SupervoxArray *a, gint32 *out, GError **error)
{
  gsize i = 0;

  for (gint64 z = 0; z < a->shape[0]; z++)
    for (gint64 y = 0; y < a->shape[1]; y++)
      for (gint64 x = 0; x < a->shape[2]; x++, i++)
        {
          const char *p = (const char *)a->data + z * a->strides[0] + y * a->strides[1]
                          + x * a->strides[2];
          gint64 v;
          switch (a->dtype)
            {
            case SUPERVOX_UINT64:
              v = *(const guint64 *)p > G_MAXINT32 ? G_MAXINT64 : (gint64) * (const guint64 *)p;
              break;
            case SUPERVOX_INT64:
              v = *(const gint64 *)p;
              break;
            default:
              v = (gint64)element_to_double (p, a->dtype);
              break;
            }
          if (v < G_MININT32 || v > G_MAXINT32)
            {
              g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                           "labels must fit in int32; the label at (%" G_GINT64_FORMAT
                           ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") does not",
                           z, y, x);
              return FALSE;
            }
          out[i] = (gint32)v;
        }
  return TRUE;
}

int
supervox_table_new (const SupervoxArray *labels, const SupervoxArray *intensity,
                    const SupervoxTableOptions *options, SupervoxTable **table)
{
  GError *error = NULL;
  g_autofree gint32 *ids = NULL;
  g_autofree double *values = NULL;
  SupervoxTableOptions defaults;
  SvSupervoxelTableOptions engine_options;
  SvSupervoxelTable *t;
  guint nc = 0;
  gsize n;

  if (table == NULL)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM, "table is NULL");
      return sv_api_fail (error);
    }
  *table = NULL;
  if (options == NULL)
    {
      supervox_table_options_init (&defaults);
      options = &defaults;
    }
  if (!sv_api_array_check (labels, "labels", &error))
    return sv_api_fail (error);
  if (labels->shape[3] != 1 || labels->dtype == SUPERVOX_FLOAT16
      || labels->dtype == SUPERVOX_FLOAT32 || labels->dtype == SUPERVOX_FLOAT64)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "labels must be integers with one channel");
      return sv_api_fail (error);
    }
  if (intensity != NULL)
    {
      if (!sv_api_array_check (intensity, "intensity image", &error))
        return sv_api_fail (error);
      if (intensity->shape[0] != labels->shape[0] || intensity->shape[1] != labels->shape[1]
          || intensity->shape[2] != labels->shape[2])
        {
          g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                       "the intensity image is %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT
                       "×%" G_GINT64_FORMAT " but the labels are %" G_GINT64_FORMAT
                       "×%" G_GINT64_FORMAT "×%" G_GINT64_FORMAT ": they must have the same shape",
                       intensity->shape[0], intensity->shape[1], intensity->shape[2],
                       labels->shape[0], labels->shape[1], labels->shape[2]);
          return sv_api_fail (error);
        }
      if (intensity->dtype == SUPERVOX_FLOAT16)
        {
          g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "a float16 intensity image is not supported; convert it to float32");
          return sv_api_fail (error);
        }
      nc = (guint)intensity->shape[3];
    }

  n = sv_api_array_n_voxels (labels);
  ids = g_try_new (gint32, MAX (n, 1));
  if (nc)
    values = g_try_new (double, MAX (n * nc, 1));
  if (ids == NULL || (nc && values == NULL))
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "not enough memory for a copy of the labels and intensities");
      return sv_api_fail (error);
    }
  if (!labels_to_int32 (labels, ids, &error))
    return sv_api_fail (error);
  if (nc)
    {
      const gint64 *st = intensity->strides;
      gsize i = 0;
      for (gint64 z = 0; z < intensity->shape[0]; z++)
        for (gint64 y = 0; y < intensity->shape[1]; y++)
          for (gint64 x = 0; x < intensity->shape[2]; x++)
            for (guint c = 0; c < nc; c++)
              values[i++] = element_to_double ((const char *)intensity->data + z * st[0]
                                                   + y * st[1] + x * st[2] + c * st[3],
                                               intensity->dtype);
    }
  if (options->has_background
      && (options->background < G_MININT32 || options->background > G_MAXINT32))
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "background %" G_GINT64_FORMAT " is outside int32", options->background);
      return sv_api_fail (error);
    }
  for (int d = 0; d < 3; d++)
    if (!(options->spacing[d] > 0.0 && options->spacing[d] < INFINITY))
      {
        g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                     "spacing must be positive and finite; axis %d has %g", d, options->spacing[d]);
        return sv_api_fail (error);
      }

  sv_supervoxel_table_options_init_defaults (&engine_options);
  engine_options.has_background = options->has_background != 0;
  engine_options.background = (gint32)options->background;
  engine_options.n_threads = options->n_threads;
  engine_options.adjacency = options->adjacency != 0;
  t = sv_supervoxel_table_new ((guint)labels->shape[0], (guint)labels->shape[1],
                               (guint)labels->shape[2], nc, SV_SAMPLE_F64, &engine_options);
  sv_supervoxel_table_add_slab (t, ids, values, (guint)labels->shape[0]);
  sv_supervoxel_table_finish (t);
  *table = g_new0 (SupervoxTable, 1);
  (*table)->table = t;
  (*table)->adjacency = engine_options.adjacency;
  memcpy ((*table)->spacing, options->spacing, sizeof (*table)->spacing);
  return SUPERVOX_OK;
}

void
supervox_table_free (SupervoxTable *table)
{
  if (table == NULL)
    return;
  sv_supervoxel_table_free (table->table);
  g_free (table);
}

int64_t
supervox_table_n_rows (const SupervoxTable *table)
{
  return table ? (int64_t)sv_supervoxel_table_n_rows (table->table) : 0;
}

/* "bbox-4" -> "bbox" and 4; FALSE when the name has no "-N" suffix. */
static gboolean
split_index (const char *name, const char *prefix, guint *index)
{
  gsize len = strlen (prefix);
  char *end;
  guint64 v;

  if (strncmp (name, prefix, len) != 0 || name[len] != '-' || !g_ascii_isdigit (name[len + 1]))
    return FALSE;
  v = g_ascii_strtoull (name + len + 1, &end, 10);
  if (*end != '\0' || v > G_MAXUINT)
    return FALSE;
  *index = (guint)v;
  return TRUE;
}

int
supervox_table_column (const SupervoxTable *table, const char *name, double *out)
{
  static const char *const stats[4]
      = { "intensity_mean", "intensity_std", "intensity_min", "intensity_max" };
  GError *error = NULL;
  const SvSupervoxelTable *t;
  guint nc, index = 0;
  int kind = -1; /* 0 label, 1 voxels, 2 centroid, 3 bbox, 4… intensity */
  gsize n;

  if (table == NULL || name == NULL || out == NULL)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "table, name and out must not be NULL");
      return sv_api_fail (error);
    }
  t = table->table;
  nc = sv_supervoxel_table_n_channels (t);
  if (strcmp (name, "label") == 0)
    kind = 0;
  else if (strcmp (name, "voxels") == 0)
    kind = 1;
  else if (split_index (name, "centroid", &index) && index < 3)
    kind = 2;
  else if (split_index (name, "bbox", &index) && index < 6)
    kind = 3;
  else
    for (int k = 0; k < 4; k++)
      if (split_index (name, stats[k], &index) && index < nc)
        kind = 4 + k;
  if (kind < 0)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "no column named '%s' in this table", name);
      return sv_api_fail (error);
    }
  n = sv_supervoxel_table_n_rows (t);
  for (gsize i = 0; i < n; i++)
    {
      SvSupervoxelRow row;
      sv_supervoxel_table_get_row (t, i, &row);
      switch (kind)
        {
        case 0:
          out[i] = row.label;
          break;
        case 1:
          out[i] = (double)row.n_voxels;
          break;
        case 2:
          out[i] = row.centroid[index];
          break;
        case 3:
          out[i] = index < 3 ? row.lo[index] : row.hi[index - 3];
          break;
        case 4:
          out[i] = row.mean[index];
          break;
        case 5:
          out[i] = row.std[index];
          break;
        case 6:
          out[i] = row.min[index];
          break;
        default:
          out[i] = row.max[index];
          break;
        }
    }
  return SUPERVOX_OK;
}

int64_t
supervox_table_n_pairs (const SupervoxTable *table)
{
  return table ? (int64_t)sv_supervoxel_table_n_pairs (table->table) : 0;
}

int
supervox_table_pair_column (const SupervoxTable *table, const char *name, double *out)
{
  GError *error = NULL;
  const SvSupervoxelTable *t;
  guint index = 0;
  int kind = -1; /* 0 label-a, 1 label-b, 2 faces, 3 face_area, 4 boundary_mean */
  gsize n;

  if (table == NULL || name == NULL || out == NULL)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "table, name and out must not be NULL");
      return sv_api_fail (error);
    }
  if (!table->adjacency)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "this table has no pairs: make it with the adjacency option");
      return sv_api_fail (error);
    }
  t = table->table;
  if (strcmp (name, "label-a") == 0)
    kind = 0;
  else if (strcmp (name, "label-b") == 0)
    kind = 1;
  else if (strcmp (name, "faces") == 0)
    kind = 2;
  else if (strcmp (name, "face_area") == 0)
    kind = 3;
  else if (split_index (name, "boundary_mean", &index)
           && index < sv_supervoxel_table_n_channels (t))
    kind = 4;
  if (kind < 0)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "no pair column named '%s' in this table", name);
      return sv_api_fail (error);
    }
  n = sv_supervoxel_table_n_pairs (t);
  for (gsize i = 0; i < n; i++)
    {
      SvSupervoxelPair pair;
      sv_supervoxel_table_get_pair (t, i, &pair);
      switch (kind)
        {
        case 0:
          out[i] = pair.a;
          break;
        case 1:
          out[i] = pair.b;
          break;
        case 2:
          out[i] = (double)(pair.faces[0] + pair.faces[1] + pair.faces[2]);
          break;
        case 3:
          out[i] = sv_supervoxel_pair_area (&pair, table->spacing);
          break;
        default:
          out[i] = pair.boundary_mean[index];
          break;
        }
    }
  return SUPERVOX_OK;
}

/* Supervox engine: the supervoxel table and its pairs as CSV. Numbers are
 * written with a decimal point whatever the locale; integers in full,
 * others with 12 significant digits. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-supervoxel-table.h"

#include <errno.h>
#include <string.h>

#include "supervox/sv-error.h"

char *
sv_supervoxel_table_unit_suffix (const char *unit)
{
  GString *s;

  if (unit == NULL || unit[0] == '\0')
    return g_strdup ("px");
  if (g_str_equal (unit, "micron") || g_str_equal (unit, "microns") || g_str_equal (unit, "µm")
      || g_str_equal (unit, "\xce\xbcm") || g_str_equal (unit, "um")
      || g_str_equal (unit, "micrometer") || g_str_equal (unit, "micrometre"))
    return g_strdup ("um");
  if (g_str_equal (unit, "nanometer") || g_str_equal (unit, "nanometre"))
    return g_strdup ("nm");
  if (g_str_equal (unit, "millimeter") || g_str_equal (unit, "millimetre"))
    return g_strdup ("mm");
  if (g_str_equal (unit, "pixel") || g_str_equal (unit, "pixels"))
    return g_strdup ("px");
  /* A column name stays one word of letters and digits. */
  s = g_string_new (NULL);
  for (const char *p = unit; *p; p++)
    if (g_ascii_isalnum (*p))
      g_string_append_c (s, *p);
  if (s->len == 0)
    g_string_append (s, "unit");
  return g_string_free (s, FALSE);
}

static void
put_double (GString *line, double value)
{
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (line, g_ascii_formatd (buffer, sizeof buffer, "%.12g", value));
}

/* "mean" for one channel, "mean_c2" among several. */
static void
put_channel_name (GString *line, const char *name, guint c, guint nc)
{
  g_string_append_printf (line, ",%s", name);
  if (nc > 1)
    g_string_append_printf (line, "_c%u", c);
}

static gboolean
flush_line (GString *line, FILE *out, GError **error)
{
  g_string_append_c (line, '\n');
  if (fwrite (line->str, 1, line->len, out) != line->len)
    {
      int saved = errno;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "could not write the table: %s",
                   g_strerror (saved));
      return FALSE;
    }
  g_string_truncate (line, 0);
  return TRUE;
}

gboolean
sv_supervoxel_table_write_csv (const SvSupervoxelTable *table, const double spacing[3],
                               const char *unit, FILE *out, GError **error)
{
  g_autofree char *u = sv_supervoxel_table_unit_suffix (unit);
  g_autoptr (GString) line = g_string_new (NULL);
  const guint nc = sv_supervoxel_table_n_channels (table);
  const gsize n = sv_supervoxel_table_n_rows (table);
  const double voxel_volume = spacing[0] * spacing[1] * spacing[2];
  static const char *const stat_names[4] = { "mean", "std", "min", "max" };

  g_string_append_printf (line,
                          "label,voxels,volume_%s3,centroid_z,centroid_y,centroid_x,"
                          "centroid_z_%s,centroid_y_%s,centroid_x_%s,"
                          "bbox_min_z,bbox_min_y,bbox_min_x,bbox_max_z,bbox_max_y,bbox_max_x",
                          u, u, u, u);
  for (guint c = 0; c < nc; c++)
    for (guint k = 0; k < 4; k++)
      put_channel_name (line, stat_names[k], c, nc);
  if (!flush_line (line, out, error))
    return FALSE;

  for (gsize i = 0; i < n; i++)
    {
      SvSupervoxelRow row;
      const double *stats[4];

      sv_supervoxel_table_get_row (table, i, &row);
      g_string_append_printf (line, "%d,%" G_GUINT64_FORMAT ",", row.label, row.n_voxels);
      put_double (line, (double)row.n_voxels * voxel_volume);
      for (guint d = 0; d < 3; d++)
        {
          g_string_append_c (line, ',');
          put_double (line, row.centroid[d]);
        }
      for (guint d = 0; d < 3; d++)
        {
          g_string_append_c (line, ',');
          put_double (line, row.centroid[d] * spacing[d]);
        }
      g_string_append_printf (line, ",%u,%u,%u,%u,%u,%u", row.lo[0], row.lo[1], row.lo[2],
                              row.hi[0], row.hi[1], row.hi[2]);
      stats[0] = row.mean;
      stats[1] = row.std;
      stats[2] = row.min;
      stats[3] = row.max;
      for (guint c = 0; c < nc; c++)
        for (guint k = 0; k < 4; k++)
          {
            g_string_append_c (line, ',');
            put_double (line, stats[k][c]);
          }
      if (!flush_line (line, out, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
sv_supervoxel_table_write_adjacency_csv (const SvSupervoxelTable *table, const double spacing[3],
                                         const char *unit, FILE *out, GError **error)
{
  g_autofree char *u = sv_supervoxel_table_unit_suffix (unit);
  g_autoptr (GString) line = g_string_new (NULL);
  const guint nc = sv_supervoxel_table_n_channels (table);
  const gsize n = sv_supervoxel_table_n_pairs (table);

  g_string_append_printf (line, "a,b,faces,area_%s2", u);
  for (guint c = 0; c < nc; c++)
    put_channel_name (line, "boundary_mean", c, nc);
  if (!flush_line (line, out, error))
    return FALSE;
  for (gsize i = 0; i < n; i++)
    {
      SvSupervoxelPair pair;

      sv_supervoxel_table_get_pair (table, i, &pair);
      g_string_append_printf (line, "%d,%d,%" G_GUINT64_FORMAT ",", pair.a, pair.b,
                              pair.faces[0] + pair.faces[1] + pair.faces[2]);
      put_double (line, sv_supervoxel_pair_area (&pair, spacing));
      for (guint c = 0; c < nc; c++)
        {
          g_string_append_c (line, ',');
          put_double (line, pair.boundary_mean[c]);
        }
      if (!flush_line (line, out, error))
        return FALSE;
    }
  return TRUE;
}

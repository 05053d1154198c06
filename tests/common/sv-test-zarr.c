/* Supervox tests: OME-Zarr images written by hand. */
#include "sv-test-zarr.h"

#include <glib/gstdio.h>
#include <string.h>

#define CHUNK_SLICES 4

/* "[a, b, c]" of doubles that read back the same. */
static char *
scale_list (const double s[3], gboolean channel)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], c[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup_printf ("[%s%s, %s, %s]", channel ? "1.0, " : "",
                          g_ascii_dtostr (a, sizeof a, s[0]), g_ascii_dtostr (b, sizeof b, s[1]),
                          g_ascii_dtostr (c, sizeof c, s[2]));
}

static void
write_text (const char *folder, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (folder, name, NULL);
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (path, text, -1, &error));
  g_assert_no_error (error);
}

/* One level's array: .zarray and its chunks of CHUNK_SLICES slices (the
 * last one padded, as Zarr stores edge chunks whole). */
static void
write_level (const char *folder, const SvVolume *v)
{
  gboolean channel = v->nc > 1;
  guint depth = MIN (v->nz, CHUNK_SLICES);
  gsize plane = (gsize)v->ny * v->nx;
  g_autofree float *chunk = g_new0 (float, (gsize)depth *plane);
  g_autofree char *zarray = NULL;
  g_autofree char *channels = channel ? g_strdup_printf ("%u, ", v->nc) : g_strdup ("");
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  zarray
      = g_strdup_printf ("{\"zarr_format\": 2, \"shape\": [%s%u, %u, %u], "
                         "\"chunks\": [%s%u, %u, %u], \"dtype\": \"<f4\", "
                         "\"compressor\": null, \"fill_value\": 0.0, \"order\": \"C\", "
                         "\"filters\": null, \"dimension_separator\": \".\"}\n",
                         channels, v->nz, v->ny, v->nx, channel ? "1, " : "", depth, v->ny, v->nx);
  write_text (folder, ".zarray", zarray);
  for (guint c = 0; c < v->nc; c++)
    for (guint z0 = 0; z0 < v->nz; z0 += depth)
      {
        g_autofree char *key = channel ? g_strdup_printf ("%u.%u.0.0", c, z0 / depth)
                                       : g_strdup_printf ("%u.0.0", z0 / depth);
        g_autofree char *path = g_build_filename (folder, key, NULL);

        memset (chunk, 0, (gsize)depth * plane * sizeof (float));
        for (guint z = z0; z < MIN (z0 + depth, v->nz); z++)
          for (gsize i = 0; i < plane; i++)
            chunk[(z - z0) * plane + i] = v->data[((gsize)z * plane + i) * v->nc + c];
        g_assert_true (G_BYTE_ORDER == G_LITTLE_ENDIAN);
        g_assert_true (g_file_set_contents (
            path, (const char *)chunk, (gssize)((gsize)depth * plane * sizeof (float)), &error));
        g_assert_no_error (error);
      }
}

char *
sv_test_write_ome_zarr (const char *dir, const char *name, SvVolume *const *levels, guint n_levels,
                        const char *ngff_unit, const double outer[3])
{
  char *image = g_build_filename (dir, name, NULL);
  gboolean channel = levels[0]->nc > 1;
  g_autoptr (GString) attrs = g_string_new ("{\"multiscales\": [{\"version\": \"0.4\", ");
  g_autofree char *unit
      = ngff_unit != NULL ? g_strdup_printf (", \"unit\": \"%s\"", ngff_unit) : g_strdup ("");

  g_assert_cmpint (g_mkdir_with_parents (image, 0755), ==, 0);
  write_text (image, ".zgroup", "{\"zarr_format\": 2}\n");
  g_string_append (attrs, "\"axes\": [");
  if (channel)
    g_string_append (attrs, "{\"name\": \"c\", \"type\": \"channel\"}, ");
  g_string_append_printf (attrs,
                          "{\"name\": \"z\", \"type\": \"space\"%s}, "
                          "{\"name\": \"y\", \"type\": \"space\"%s}, "
                          "{\"name\": \"x\", \"type\": \"space\"%s}], \"datasets\": [",
                          unit, unit, unit);
  for (guint i = 0; i < n_levels; i++)
    {
      g_autofree char *folder = NULL;
      g_autofree char *level = g_strdup_printf ("%u", i);
      g_autofree char *scale = scale_list (levels[i]->spacing, channel);

      g_string_append_printf (attrs,
                              "%s{\"path\": \"%u\", \"coordinateTransformations\": "
                              "[{\"type\": \"scale\", \"scale\": %s}]}",
                              i == 0 ? "" : ", ", i, scale);
      folder = g_build_filename (image, level, NULL);
      write_level (folder, levels[i]);
    }
  g_string_append (attrs, "]");
  if (outer != NULL)
    {
      g_autofree char *scale = scale_list (outer, channel);
      g_string_append_printf (attrs,
                              ", \"coordinateTransformations\": [{\"type\": \"scale\", "
                              "\"scale\": %s}]",
                              scale);
    }
  g_string_append (attrs, ", \"name\": \"test\"}]}\n");
  write_text (image, ".zattrs", attrs->str);
  return image;
}

SvVolume *
sv_test_downsample (const SvVolume *v)
{
  g_autoptr (GError) error = NULL;
  guint fz = v->nz > 1 ? 2 : 1;
  guint nz = MAX (v->nz / fz, 1), ny = MAX (v->ny / 2, 1), nx = MAX (v->nx / 2, 1);
  SvVolume *d = sv_volume_new (nz, ny, nx, v->nc, &error);

  g_assert_no_error (error);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        for (guint c = 0; c < v->nc; c++)
          {
            double sum = 0.0;
            for (guint dz = 0; dz < fz; dz++)
              for (guint dy = 0; dy < 2; dy++)
                for (guint dx = 0; dx < 2; dx++)
                  sum += v->data[((((gsize)(z * fz + dz) * v->ny + (y * 2 + dy)) * v->nx
                                   + (x * 2 + dx))
                                  * v->nc)
                                 + c];
            d->data[(((gsize)z * ny + y) * nx + x) * v->nc + c] = (float)(sum / (fz * 4));
          }
  d->spacing[0] = v->spacing[0] * fz;
  d->spacing[1] = v->spacing[1] * 2;
  d->spacing[2] = v->spacing[2] * 2;
  d->unit = g_strdup (v->unit);
  return d;
}

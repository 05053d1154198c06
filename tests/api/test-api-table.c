/* libsupervox's table API from C: the pairs of touching labels of a tiny
 * hand-made volume, face by face, and the errors of the pair columns.
 * Links the shared library only, as another program would. */
#include <glib.h>
#include <string.h>

#include "supervox/supervox.h"

/* z, y, x = 2, 2, 3; label 0 is background:
 *
 *   z = 0   1 1 2      z = 1   1 0 2
 *           3 3 2              3 3 3
 *
 * (1, 2): one face across x. (1, 3): three across y. (2, 3): one across x,
 * one across y (z 1, x 2) and one across z (y 1, x 2). */
static const gint32 labels[12] = { 1, 1, 2, 3, 3, 2, 1, 0, 2, 3, 3, 3 };

/* Two channels of the voxel index i = z·6 + y·3 + x: i and i². */
static void
fill_intensity (guint16 intensity[12][2])
{
  for (int i = 0; i < 12; i++)
    {
      intensity[i][0] = (guint16)i;
      intensity[i][1] = (guint16)(i * i);
    }
}

static SupervoxArray
labels_array (void)
{
  SupervoxArray a = { labels, SUPERVOX_INT32, { 2, 2, 3, 1 }, { 24, 12, 4, 0 } };
  return a;
}

static SupervoxTable *
new_table (const SupervoxTableOptions *options, const SupervoxArray *intensity)
{
  SupervoxArray l = labels_array ();
  SupervoxTable *table = NULL;

  g_assert_cmpint (supervox_table_new (&l, intensity, options, &table), ==, SUPERVOX_OK);
  g_assert_nonnull (table);
  return table;
}

static void
assert_column (const SupervoxTable *table, const char *name, const double *expected)
{
  double out[3];

  g_assert_cmpint (supervox_table_n_pairs (table), ==, 3);
  g_assert_cmpint (supervox_table_pair_column (table, name, out), ==, SUPERVOX_OK);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat_with_epsilon (out[i], expected[i], 1e-12);
}

static void
test_pairs_by_hand (void)
{
  guint16 intensity[12][2];
  SupervoxArray image = { intensity, SUPERVOX_UINT16, { 2, 2, 3, 2 }, { 24, 12, 4, 2 } };
  SupervoxTableOptions options;
  SupervoxTable *table;

  fill_intensity (intensity);
  supervox_table_options_init (&options);
  g_assert_cmpint (options.adjacency, ==, 0);
  g_assert_cmpfloat (options.spacing[0], ==, 1.0);
  options.adjacency = 1;
  options.spacing[0] = 2.0;
  options.spacing[1] = 3.0;
  options.spacing[2] = 5.0;
  table = new_table (&options, &image);

  assert_column (table, "label-a", (const double[]){ 1, 1, 2 });
  assert_column (table, "label-b", (const double[]){ 2, 3, 3 });
  assert_column (table, "faces", (const double[]){ 1, 3, 3 });
  /* A face across x is z·y = 6, across y z·x = 10, across z y·x = 15. */
  assert_column (table, "face_area", (const double[]){ 6, 30, 6 + 10 + 15 });
  /* (1, 3): voxels 0|3, 1|4, 6|9; (2, 3): 4|5, 8|11, 5|11. */
  assert_column (table, "boundary_mean-0",
                 (const double[]){ (1 + 2) / 2.0, (0 + 3 + 1 + 4 + 6 + 9) / 6.0,
                                   (4 + 5 + 8 + 11 + 5 + 11) / 6.0 });
  assert_column (table, "boundary_mean-1",
                 (const double[]){ (1 + 4) / 2.0, (0 + 9 + 1 + 16 + 36 + 81) / 6.0,
                                   (16 + 25 + 64 + 121 + 25 + 121) / 6.0 });
  supervox_table_free (table);
}

/* Without a background every label touches: 0 meets 1 twice (across x
 * and z), 2 and 3 once each. */
static void
test_pairs_without_background (void)
{
  SupervoxTableOptions options;
  SupervoxTable *table;
  double a[6], b[6], faces[6];

  supervox_table_options_init (&options);
  options.adjacency = 1;
  options.has_background = 0;
  table = new_table (&options, NULL);
  g_assert_cmpint (supervox_table_n_pairs (table), ==, 6);
  g_assert_cmpint (supervox_table_pair_column (table, "label-a", a), ==, SUPERVOX_OK);
  g_assert_cmpint (supervox_table_pair_column (table, "label-b", b), ==, SUPERVOX_OK);
  g_assert_cmpint (supervox_table_pair_column (table, "faces", faces), ==, SUPERVOX_OK);
  for (int i = 0; i < 3; i++)
    {
      g_assert_cmpfloat (a[i], ==, 0);
      g_assert_cmpfloat (b[i], ==, i + 1);
      g_assert_cmpfloat (faces[i], ==, i == 0 ? 2 : 1);
    }
  g_assert_cmpfloat (a[3], ==, 1);
  g_assert_cmpfloat (b[5], ==, 3);
  supervox_table_free (table);
}

static void
test_pair_errors (void)
{
  SupervoxArray l = labels_array ();
  SupervoxTableOptions options;
  SupervoxTable *table;
  double out[3];

  /* Without the adjacency option there are no pairs to read. */
  table = new_table (NULL, NULL);
  g_assert_cmpint (supervox_table_n_pairs (table), ==, 0);
  g_assert_cmpint (supervox_table_pair_column (table, "label-a", out), ==,
                   SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (supervox_last_error (), "adjacency"));
  supervox_table_free (table);

  supervox_table_options_init (&options);
  options.adjacency = 1;
  table = new_table (&options, NULL);
  g_assert_cmpint (supervox_table_pair_column (table, "boundary_mean-0", out), ==,
                   SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (supervox_last_error (), "boundary_mean-0"));
  g_assert_cmpint (supervox_table_pair_column (table, "area", out), ==,
                   SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_cmpint (supervox_table_pair_column (table, NULL, out), ==, SUPERVOX_ERROR_INVALID_PARAM);
  supervox_table_free (table);

  options.spacing[1] = 0.0;
  table = (SupervoxTable *)&options; /* must be reset to NULL on failure */
  g_assert_cmpint (supervox_table_new (&l, NULL, &options, &table), ==,
                   SUPERVOX_ERROR_INVALID_PARAM);
  g_assert_null (table);
  g_assert_nonnull (strstr (supervox_last_error (), "spacing"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/api/table/pairs/by-hand", test_pairs_by_hand);
  g_test_add_func ("/api/table/pairs/without-background", test_pairs_without_background);
  g_test_add_func ("/api/table/pairs/errors", test_pair_errors);
  return g_test_run ();
}

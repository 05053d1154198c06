/* Tests of sv_partition_compare: the adjusted Rand index and the voxels
 * outside the mutual best matches of two label maps, on hand cases. */
#define G_LOG_DOMAIN "test-engine"

#include <glib.h>
#include <math.h>

#include "supervox/sv-metrics.h"
#include "supervox/sv-partition-compare.h"

#define N 6

static void
check (const gint32 *a, const gint32 *b, double ari, guint64 n_differing,
       const guint8 *expected_mask)
{
  SvPartitionDifference d, swapped;
  guint8 mask[N], mask_swapped[N];

  sv_partition_compare (a, b, N, &d, mask);
  g_assert_cmpfloat_with_epsilon (d.adjusted_rand, ari, 1e-12);
  g_assert_cmpuint (d.n_differing, ==, n_differing);
  g_assert_cmpmem (mask, N, expected_mask, N);
  /* The rule is symmetric. */
  sv_partition_compare (b, a, N, &swapped, mask_swapped);
  g_assert_cmpfloat_with_epsilon (swapped.adjusted_rand, ari, 1e-12);
  g_assert_cmpuint (swapped.n_differing, ==, n_differing);
  g_assert_cmpmem (mask_swapped, N, expected_mask, N);
  /* Without a mask: the same count. */
  sv_partition_compare (a, b, N, &d, NULL);
  g_assert_cmpuint (d.n_differing, ==, n_differing);
}

/* The same partition under other numbers: nothing differs. */
static void
test_renumbered (void)
{
  const gint32 a[N] = { 1, 1, 2, 2, 3, 3 }, b[N] = { 7, 7, -4, -4, 0, 0 };
  const guint8 none[N] = { 0 };
  SvPartitionDifference d;

  check (a, b, 1.0, 0, none);
  sv_partition_compare (a, b, N, &d, NULL);
  g_assert_cmpuint (d.n_labels_a, ==, 3);
  g_assert_cmpuint (d.n_labels_b, ==, 3);
}

/* Label 1 of a is split in two halves of b: the tie goes to the lower
 * label (5), so the voxels of 7 differ. ARI by hand: Σ C(n_ij,2) = 3,
 * Σ C(a_i,2) = 7, Σ C(b_j,2) = 3, C(6,2) = 15: (3 − 1.4) / (5 − 1.4). */
static void
test_split_tie (void)
{
  const gint32 a[N] = { 1, 1, 1, 1, 2, 2 }, b[N] = { 5, 5, 7, 7, 9, 9 };
  const guint8 mask[N] = { 0, 0, 1, 1, 0, 0 };

  check (a, b, 1.6 / 3.6, 2, mask);
  g_assert_cmpfloat_with_epsilon (sv_adjusted_rand_index (a, b, N), 1.6 / 3.6, 1e-12);
}

/* Labels 1 and 2 of a merged into 4 of b: the smaller (2) differs. */
static void
test_merge (void)
{
  const gint32 a[N] = { 1, 1, 1, 2, 2, 3 }, b[N] = { 4, 4, 4, 4, 4, 5 };
  const guint8 mask[N] = { 0, 0, 0, 1, 1, 0 };

  check (a, b, sv_adjusted_rand_index (a, b, N), 2, mask);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/partition-compare/renumbered-is-the-same", test_renumbered);
  g_test_add_func ("/engine/partition-compare/split-tie-to-lowest-label", test_split_tie);
  g_test_add_func ("/engine/partition-compare/merge-marks-the-smaller", test_merge);
  return g_test_run ();
}

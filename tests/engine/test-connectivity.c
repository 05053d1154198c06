/* Tests for connectivity enforcement: small cases worked out by hand, and
 * equality with scikit-image's _enforce_label_connectivity_cython. */
#include <string.h>

#include <glib/gstdio.h>

#include "supervox/sv-connectivity.h"

#define PYTHON "/usr/bin/python3"

static const SvConnectivityRule rules[] = { SV_CONNECTIVITY_RULE_CONNECTED,
                                             SV_CONNECTIVITY_RULE_LEGACY };

static void
check_labels (const gint32 *got, const gint32 *want, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (got[i] != want[i])
      g_error ("voxel %" G_GSIZE_FORMAT ": got %d, expected %d", i, got[i], want[i]);
}

static void
test_hand_relabel (void)
{
  const gint32 in[9] = { 7, 7, 2, 7, 2, 2, 9, 9, 2 };
  const gint32 want[9] = { 1, 1, 2, 1, 2, 2, 3, 3, 2 };
  gint32 out[9];

  for (gsize r = 0; r < G_N_ELEMENTS (rules); r++)
    {
      g_assert_cmpint (sv_connectivity_enforce (in, 1, 3, 3, 0, 100, 1, rules[r], out), ==, 3);
      check_labels (out, want, 9);
    }
}

static void
test_hand_split (void)
{
  const gint32 in[7] = { 5, 5, 5, 5, 5, 5, 5 };
  const gint32 want[7] = { 1, 1, 1, 2, 2, 2, 3 };
  gint32 out[7];

  /* Components stop growing at max_size = 3. */
  for (gsize r = 0; r < G_N_ELEMENTS (rules); r++)
    {
      g_assert_cmpint (sv_connectivity_enforce (in, 1, 1, 7, 0, 3, 1, rules[r], out), ==, 3);
      check_labels (out, want, 7);
    }
}

static void
test_hand_merge (void)
{
  const gint32 in[7] = { 5, 5, 5, 5, 5, 5, 5 };
  const gint32 want[7] = { 1, 1, 1, 2, 2, 2, 2 };
  gint32 out[7];

  /* The last piece (1 voxel < min_size 2) joins its neighbour's label. */
  for (gsize r = 0; r < G_N_ELEMENTS (rules); r++)
    {
      g_assert_cmpint (sv_connectivity_enforce (in, 1, 1, 7, 2, 3, 1, rules[r], out), ==, 2);
      check_labels (out, want, 7);
    }
}

static void
test_hand_background (void)
{
  /* start_label 0: background is -1 and stays so; isolated voxels of one
   * label across background become separate components. */
  const gint32 in[6] = { -1, 3, -1, 3, -1, 3 };
  const gint32 want[6] = { -1, 0, -1, 1, -1, 2 };
  gint32 out[6];

  for (gsize r = 0; r < G_N_ELEMENTS (rules); r++)
    {
      g_assert_cmpint (sv_connectivity_enforce (in, 1, 2, 3, 0, 10, 0, rules[r], out), ==, 3);
      check_labels (out, want, 6);
    }
}

static void
test_hand_no_room (void)
{
  /* With max_size <= 1 nothing is searched, every piece is small and sees
   * no known neighbour. Under the legacy rule all voxels keep start_label,
   * which is one label in four pieces; under the connected rule each
   * voxel is a label of its own. */
  const gint32 in[6] = { 1, 2, 3, 4, 0, 6 };
  const gint32 want_legacy[6] = { 1, 1, 1, 1, 0, 1 };
  const gint32 want[6] = { 1, 2, 3, 4, 0, 5 };
  gint32 out[6];

  for (gint64 max_size = -1; max_size <= 1; max_size++)
    {
      g_assert_cmpint (
          sv_connectivity_enforce (in, 1, 1, 6, 2, max_size, 1, SV_CONNECTIVITY_RULE_LEGACY, out),
          ==, 1);
      check_labels (out, want_legacy, 6);
      g_assert_cmpint (sv_connectivity_enforce (in, 1, 1, 6, 2, max_size, 1,
                                                SV_CONNECTIVITY_RULE_CONNECTED, out),
                       ==, 5);
      check_labels (out, want, 6);
    }
}

static void
test_hand_orphan (void)
{
  /* scikit-image #8295: the first piece is small and has no labelled
   * neighbour (background cuts it off). The legacy rule leaves the
   * counter at 1, so the large piece after the gap gets label 1 too: one
   * label in two pieces. The connected rule gives each its own. */
  const gint32 in[7] = { 5, 5, 0, 3, 3, 3, 3 };
  const gint32 want_legacy[7] = { 1, 1, 0, 1, 1, 1, 1 };
  const gint32 want[7] = { 1, 1, 0, 2, 2, 2, 2 };
  gint32 out[7];

  g_assert_cmpint (
      sv_connectivity_enforce (in, 1, 1, 7, 3, 100, 1, SV_CONNECTIVITY_RULE_LEGACY, out), ==, 1);
  check_labels (out, want_legacy, 7);
  g_assert_cmpint (
      sv_connectivity_enforce (in, 1, 1, 7, 3, 100, 1, SV_CONNECTIVITY_RULE_CONNECTED, out), ==, 2);
  check_labels (out, want, 7);
}

static void
test_hand_orphan_lone_voxel (void)
{
  /* The same with a lone voxel, in 3D: voxel (0,0,0) is cut off by
   * background on every side; the rest is one label. */
  gint32 in[8] = { 4, 0, 0, 2, 0, 2, 2, 2 };
  const gint32 want_legacy[8] = { 1, 0, 0, 1, 0, 1, 1, 1 };
  const gint32 want[8] = { 1, 0, 0, 2, 0, 2, 2, 2 };
  gint32 out[8];

  g_assert_cmpint (
      sv_connectivity_enforce (in, 2, 2, 2, 2, 100, 1, SV_CONNECTIVITY_RULE_LEGACY, out), ==, 1);
  check_labels (out, want_legacy, 8);
  g_assert_cmpint (
      sv_connectivity_enforce (in, 2, 2, 2, 2, 100, 1, SV_CONNECTIVITY_RULE_CONNECTED, out), ==, 2);
  check_labels (out, want, 8);
}

static void
test_sizes (void)
{
  gint64 lo = 0, hi = 0;

  /* 1000 / 7 = 142.857…; int() truncates. */
  sv_connectivity_sizes (1000, 7, 0.5, 3.0, &lo, &hi);
  g_assert_cmpint (lo, ==, 71);
  g_assert_cmpint (hi, ==, 428);
  sv_connectivity_sizes (10, 20, 0.5, 3.0, &lo, &hi);
  g_assert_cmpint (lo, ==, 0);
  g_assert_cmpint (hi, ==, 1);
}

/* ---- Against scikit-image ---------------------------------------------- */

typedef enum
{
  PATTERN_NOISE,
  PATTERN_RUNS,
  PATTERN_CHECKER,
  PATTERN_BLOCKS,
  PATTERN_SEEDS,
} Pattern;

typedef struct
{
  const char *name;
  guint nz, ny, nx;
  Pattern pattern;
  int n_labels;
  gint64 min_size, max_size;
  int start_label;
} ConnCase;

static const ConnCase conn_cases[] = {
  { "single voxel", 1, 1, 1, PATTERN_NOISE, 1, 0, 1, 1 },
  { "single voxel min 1", 1, 1, 1, PATTERN_NOISE, 1, 1, 3, 1 },
  { "single background voxel", 1, 1, 1, PATTERN_NOISE, 0, 0, 5, 1 },
  { "2x10x10 noise", 2, 10, 10, PATTERN_NOISE, 4, 3, 12, 1 },
  { "1000x1x1 runs", 1000, 1, 1, PATTERN_RUNS, 5, 5, 20, 1 },
  { "1x1x1000 runs", 1, 1, 1000, PATTERN_RUNS, 5, 5, 20, 0 },
  { "checkerboard", 4, 6, 7, PATTERN_CHECKER, 2, 2, 10, 1 },
  { "blocks, background 0", 8, 24, 24, PATTERN_BLOCKS, 6, 30, 200, 1 },
  { "blocks, background -1", 8, 24, 24, PATTERN_BLOCKS, 6, 30, 200, 0 },
  { "min above max", 5, 12, 12, PATTERN_BLOCKS, 4, 50, 10, 1 },
  { "max 1", 3, 5, 5, PATTERN_NOISE, 3, 2, 1, 1 },
  { "seeds", 12, 30, 30, PATTERN_SEEDS, 40, 100, 800, 1 },
  { "seeds, start 0", 12, 30, 30, PATTERN_SEEDS, 40, 100, 800, 0 },
  /* Components found first, then large ones cut and lone voxels merged. */
  { "seeds, cut and merged", 16, 40, 40, PATTERN_SEEDS, 30, 60, 250, 1 },
  { "seeds, min 1", 10, 32, 32, PATTERN_SEEDS, 20, 1, 300, 0 },
  { "seeds, max 2", 6, 20, 20, PATTERN_SEEDS, 10, 0, 2, 1 },
  { "blocks, lone voxels large", 8, 24, 24, PATTERN_BLOCKS, 6, 1, 200, 1 },
  /* Most voxels differ from their neighbours: the plain search. */
  { "noise, many labels", 6, 20, 20, PATTERN_NOISE, 50, 3, 20, 1 },
};

static gint32 *
make_labels (const ConnCase *cc, GRand *rand)
{
  const gsize n = (gsize)cc->nz * cc->ny * cc->nx;
  gint32 *l = g_new (gint32, n);
  const gint32 background = cc->start_label - 1;
  /* Labels drawn from background .. background + n_labels, so background
   * voxels occur too. */
  const gint32 lo = background, hi = background + cc->n_labels + 1;
  gint32 run_label = lo;
  int centres[64][3];

  for (int k = 0; k < cc->n_labels && k < 64; k++)
    {
      centres[k][0] = g_rand_int_range (rand, 0, (gint32)cc->nz);
      centres[k][1] = g_rand_int_range (rand, 0, (gint32)cc->ny);
      centres[k][2] = g_rand_int_range (rand, 0, (gint32)cc->nx);
    }

  for (guint z = 0; z < cc->nz; z++)
    for (guint y = 0; y < cc->ny; y++)
      for (guint x = 0; x < cc->nx; x++)
        {
          const gsize i = ((gsize)z * cc->ny + y) * cc->nx + x;
          switch (cc->pattern)
            {
            case PATTERN_NOISE:
              l[i] = cc->n_labels == 0 ? background : g_rand_int_range (rand, lo, hi);
              break;
            case PATTERN_RUNS:
              if (g_rand_int_range (rand, 0, 6) == 0)
                run_label = g_rand_int_range (rand, lo, hi);
              l[i] = run_label;
              break;
            case PATTERN_CHECKER:
              l[i] = cc->start_label + (gint32)((x + y + z) % 2);
              break;
            case PATTERN_BLOCKS:
              {
                /* Deterministic blocks 4x6x6 with a hashed label, plus 5 % noise. */
                const guint32 h = (z / 4) * 73856093u ^ (y / 6) * 19349663u ^ (x / 6) * 83492791u;
                l[i] = lo + (gint32)(h % (guint32)(cc->n_labels + 1));
                if (g_rand_int_range (rand, 0, 20) == 0)
                  l[i] = g_rand_int_range (rand, lo, hi);
                break;
              }
            case PATTERN_SEEDS:
              {
                /* Nearest seed (ties to the lowest), like a SLIC result, with noise. */
                gint64 best = G_MAXINT64;
                int arg = 0;
                for (int k = 0; k < cc->n_labels; k++)
                  {
                    const gint64 dz = (gint64)z - centres[k][0], dy = (gint64)y - centres[k][1],
                                 dx = (gint64)x - centres[k][2];
                    const gint64 d = 4 * dz * dz + dy * dy + dx * dx;
                    if (d < best)
                      {
                        best = d;
                        arg = k;
                      }
                  }
                l[i] = cc->start_label + arg;
                if (g_rand_int_range (rand, 0, 30) == 0)
                  l[i] = g_rand_int_range (rand, lo, hi);
                break;
              }
            }
        }
  return l;
}

static gint64
count_distinct (const gint32 *l, gsize n, gint32 background)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (gsize i = 0; i < n; i++)
    if (l[i] != background)
      g_hash_table_add (seen, GINT_TO_POINTER (l[i] + 1000));
  return g_hash_table_size (seen);
}

static char *
case_path (const char *dir, const char *what, gsize c)
{
  g_autofree char *name = g_strdup_printf ("%s-%" G_GSIZE_FORMAT ".raw", what, c);
  return g_build_filename (dir, name, NULL);
}

/* All cases go through one python process: importing scikit-image is the
 * slow part. */
static void
test_matches_skimage (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (2024);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sv-test-connectivity-XXXXXX", &error);
  g_assert_no_error (error);
  const gsize n_cases = G_N_ELEMENTS (conn_cases);
  g_autofree gint32 **ours = g_new0 (gint32 *, n_cases);
  g_autofree gint64 *n_labels = g_new0 (gint64, n_cases);
  g_autoptr (GString) script = g_string_new (
      "import sys, os\n"
      "try:\n"
      "    import numpy as np\n"
      "    from skimage.segmentation._slic import _enforce_label_connectivity_cython as f\n"
      "except ImportError:\n"
      "    sys.exit(77)\n"
      "d = sys.argv[1]\n"
      "def run(c, shape, lo, hi, start):\n"
      "    a = np.fromfile(os.path.join(d, 'in-%d.raw' % c), dtype=np.int32).reshape(shape)\n"
      "    a = np.ascontiguousarray(a, dtype=np.intp)\n"
      "    r = f(a, lo, hi, start_label=start)\n"
      "    np.ascontiguousarray(r, dtype=np.int32).tofile(os.path.join(d, 'out-%d.raw' % c))\n");

  for (gsize c = 0; c < n_cases; c++)
    {
      const ConnCase *cc = &conn_cases[c];
      const gsize n = (gsize)cc->nz * cc->ny * cc->nx;
      g_autofree gint32 *in = make_labels (cc, rand);
      g_autofree char *in_path = case_path (dir, "in", c);

      ours[c] = g_new (gint32, n);
      n_labels[c] = sv_connectivity_enforce (in, cc->nz, cc->ny, cc->nx, cc->min_size, cc->max_size,
                                             cc->start_label, SV_CONNECTIVITY_RULE_LEGACY, ours[c]);
      g_file_set_contents (in_path, (const char *)in, (gssize)(n * sizeof (gint32)), &error);
      g_assert_no_error (error);
      g_string_append_printf (script,
                              "run(%" G_GSIZE_FORMAT ", (%u, %u, %u), %" G_GINT64_FORMAT
                              ", %" G_GINT64_FORMAT ", %d)\n",
                              c, cc->nz, cc->ny, cc->nx, cc->min_size, cc->max_size,
                              cc->start_label);
    }

  gboolean skipped = FALSE;
  const char *argv[] = { PYTHON, "-c", script->str, dir, NULL };
  g_autofree char *err = NULL;
  int status = 0;
  if (!g_file_test (PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip (PYTHON " not found");
      skipped = TRUE;
    }
  else
    {
      g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                   NULL, NULL, &err, &status, &error));
      if (!g_spawn_check_wait_status (status, &error))
        {
          if (!g_error_matches (error, G_SPAWN_EXIT_ERROR, 77))
            g_error ("python failed: %s\n%s", error->message, err);
          g_test_skip ("scikit-image not installed for " PYTHON);
          skipped = TRUE;
        }
    }

  for (gsize c = 0; c < n_cases; c++)
    {
      const ConnCase *cc = &conn_cases[c];
      const gsize n = (gsize)cc->nz * cc->ny * cc->nx;
      g_autofree char *in_path = case_path (dir, "in", c);
      g_autofree char *out_path = case_path (dir, "out", c);

      if (!skipped)
        {
          char *ref_bytes = NULL;
          gsize ref_len = 0;
          g_file_get_contents (out_path, &ref_bytes, &ref_len, &error);
          g_assert_no_error (error);
          g_autofree gint32 *ref = (gint32 *)ref_bytes;
          g_assert_cmpuint (ref_len, ==, n * sizeof (gint32));

          g_test_message ("case %s: %" G_GINT64_FORMAT " labels", cc->name, n_labels[c]);
          check_labels (ours[c], ref, n);
          g_assert_cmpint (n_labels[c], ==, count_distinct (ref, n, cc->start_label - 1));
        }
      g_unlink (in_path);
      g_unlink (out_path);
      g_free (ours[c]);
    }
  g_rmdir (dir);
}

/* The blocky cases really exercise both rules: some component was split
 * (a label spans several outputs) and some was merged. */
static void
test_blocks_split_and_merge (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  const ConnCase *cc = &conn_cases[7];
  const gsize n = (gsize)cc->nz * cc->ny * cc->nx;
  g_autofree gint32 *in = make_labels (cc, rand);
  g_autofree gint32 *plain = g_new (gint32, n);
  g_autofree gint32 *sized = g_new (gint32, n);

  const gint64 n_plain
      = sv_connectivity_enforce (in, cc->nz, cc->ny, cc->nx, 0, (gint64)n, 1, rules[0], plain);
  const gint64 n_split
      = sv_connectivity_enforce (in, cc->nz, cc->ny, cc->nx, 0, cc->max_size, 1, rules[0], sized);
  const gint64 n_merged
      = sv_connectivity_enforce (in, cc->nz, cc->ny, cc->nx, cc->min_size, (gint64)n, 1, rules[0],
                                 sized);
  g_assert_cmpint (n_split, >, n_plain);
  g_assert_cmpint (n_merged, <, n_plain);
  g_assert_cmpint (n_plain, ==, count_distinct (plain, n, 0));
}

/* The components found on several threads, runs of slices joined at
 * their edges, and the small pieces searched on several threads give the
 * labels of one thread: for labels that wind across the runs' edges
 * (stripes tilted in z, with holes, a background slab and lone voxels),
 * both rules, and part counts that leave runs of one slice. */
static void
test_threads_same_labels (void)
{
  const guint nz = 67, ny = 128, nx = 130; /* above the parallel threshold */
  const gsize n = (gsize)nz * ny * nx;
  g_autofree gint32 *in = g_new (gint32, n);
  g_autofree gint32 *one = g_new (gint32, n);
  g_autofree gint32 *many = g_new (gint32, n);
  g_autoptr (GRand) rng = g_rand_new_with_seed (11);
  gsize v = 0;

  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++, v++)
        {
          gint32 l = (gint32)(((x + 3 * z) / 11 + (y + 2 * z) / 13) % 7);
          if (g_rand_int_range (rng, 0, 100) < 3)
            l = g_rand_int_range (rng, 0, 7); /* holes and lone voxels */
          if (z >= 30 && z < 33 && y < 64)
            l = -1; /* background */
          in[v] = l;
        }
  /* Minimum and maximum piece sizes: with components that the search
   * cuts; with none cut (the small pieces searched on every thread, under
   * the connected rule), small pieces few or many. */
  static const gint64 sizes[][2] = { { 40, 5000 }, { 40, G_MAXINT64 }, { 3000, G_MAXINT64 } };
  for (guint c = 0; c < G_N_ELEMENTS (sizes); c++)
    for (int rule = 0; rule < 2; rule++)
      {
        const SvConnectivityRule r
            = rule ? SV_CONNECTIVITY_RULE_LEGACY : SV_CONNECTIVITY_RULE_CONNECTED;
        const gint64 n_one
            = sv_connectivity_enforce (in, nz, ny, nx, sizes[c][0], sizes[c][1], 0, r, one);
        static const int threads[] = { 2, 3, 4, 7, 67 };

        g_assert_cmpint (n_one, >, 20);
        for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
          {
            const gint64 n_many = sv_connectivity_enforce_threads (
                in, nz, ny, nx, sizes[c][0], sizes[c][1], 0, r, many, threads[t]);
            g_assert_cmpint (n_many, ==, n_one);
            g_assert_true (memcmp (one, many, n * sizeof (gint32)) == 0);
          }
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/engine/connectivity/hand/relabel", test_hand_relabel);
  g_test_add_func ("/engine/connectivity/hand/split", test_hand_split);
  g_test_add_func ("/engine/connectivity/hand/merge", test_hand_merge);
  g_test_add_func ("/engine/connectivity/hand/background", test_hand_background);
  g_test_add_func ("/engine/connectivity/hand/no-room", test_hand_no_room);
  g_test_add_func ("/engine/connectivity/hand/orphan", test_hand_orphan);
  g_test_add_func ("/engine/connectivity/hand/orphan-lone-voxel", test_hand_orphan_lone_voxel);
  g_test_add_func ("/engine/connectivity/sizes", test_sizes);
  g_test_add_func ("/engine/connectivity/legacy-matches-skimage", test_matches_skimage);
  g_test_add_func ("/engine/connectivity/split-and-merge", test_blocks_split_and_merge);
  g_test_add_func ("/engine/connectivity/threads-same-labels", test_threads_same_labels);

  return g_test_run ();
}

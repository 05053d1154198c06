/* Tests for the superpixel metrics: hand-computed tiny cases, and numbers
 * computed independently with numpy/scipy on random volumes. */
#define G_LOG_DOMAIN "sv-test"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-metrics.h"
#include "rng.h"
#include "supervox/sv-synth.h"
#include "sv-test-python.h"

static SvLabels *
labels_from (guint nz, guint ny, guint nx, const gint32 *values)
{
  g_autoptr (GError) error = NULL;
  SvLabels *l = sv_labels_new (nz, ny, nx, &error);
  g_assert_no_error (error);
  memcpy (l->data, values, (gsize)nz * ny * nx * sizeof (gint32));
  return l;
}

static SvVolume *
image_from (guint nz, guint ny, guint nx, guint nc, const float *values)
{
  g_autoptr (GError) error = NULL;
  SvVolume *v = sv_volume_new (nz, ny, nx, nc, &error);
  g_assert_no_error (error);
  memcpy (v->data, values, (gsize)nz * ny * nx * nc * sizeof (float));
  return v;
}

/* 1×2×4, labels L and truth G:
 *   L: 1 1 2 2     G: 5 5 5 7
 *      1 1 2 2        5 5 7 7
 * Contingency: L1 = {G5: 4}, L2 = {G5: 1, G7: 3}.
 *   ASA = (4 + 3) / 8, UE = 1 / 8.
 * Truth boundary voxels (4-neighbour in 2D): (0,2) (0,3) (1,1) (1,2);
 * superpixel boundary: (0,1) (0,2) (1,1) (1,2). At r = 0, (0,3) misses:
 * 3/4; at r = 1 it has (0,2) next to it: 1.
 * ARI: Σ C(n_ij,2) = 6 + 0 + 3 = 9, Σ C(a,2) = 12, Σ C(b,2) = 10 + 3 = 13,
 * C(8,2) = 28, E = 156/28 = 39/7, max = 25/2 → (9 − 39/7)/(25/2 − 39/7) = 48/97.
 * Image I: 0 0 1 1 / 0 2 1 1 → superpixel means 0.5 and 1, μ = 0.75,
 * between = 4·0.0625 + 4·0.0625 = 0.5, total = 3·0.5625 + 1.5625 + 4·0.0625
 * = 3.5 → EV = 1/7.
 * Compactness (2D): each superpixel is a 2×2 square, area 4, perimeter 8
 * edges (the volume border counts) → 4π·4/64 = π/4. */
static void
test_hand_case (void)
{
  const gint32 l[] = { 1, 1, 2, 2, 1, 1, 2, 2 };
  const gint32 g[] = { 5, 5, 5, 7, 5, 5, 7, 7 };
  const float img[] = { 0, 0, 1, 1, 0, 2, 1, 1 };
  g_autoptr (SvLabels) labels = labels_from (1, 2, 4, l);
  g_autoptr (SvLabels) truth = labels_from (1, 2, 4, g);
  g_autoptr (SvVolume) image = image_from (1, 2, 4, 1, img);
  g_autoptr (GError) error = NULL;
  SvMetrics m;

  g_assert_true (sv_metrics_compute (labels, truth, image, 0, &m, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (m.n_labels, ==, 2);
  g_assert_cmpfloat (m.size_min, ==, 4.0);
  g_assert_cmpfloat (m.size_max, ==, 4.0);
  g_assert_cmpfloat (m.size_mean, ==, 4.0);
  g_assert_cmpfloat (m.size_median, ==, 4.0);
  g_assert_cmpfloat (m.size_std, ==, 0.0);
  g_assert_cmpfloat_with_epsilon (m.asa, 7.0 / 8.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (m.undersegmentation, 1.0 / 8.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (m.boundary_recall, 3.0 / 4.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (m.adjusted_rand, 48.0 / 97.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (m.explained_variation, 1.0 / 7.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (m.compactness, G_PI / 4.0, 1e-14);

  g_assert_true (sv_metrics_compute (labels, truth, image, 1, &m, &error));
  g_assert_cmpfloat (m.boundary_recall, ==, 1.0);

  g_assert_cmpfloat_with_epsilon (sv_adjusted_rand_index (l, g, 8), 48.0 / 97.0, 1e-14);
  /* Symmetric in its arguments. */
  g_assert_cmpfloat_with_epsilon (sv_adjusted_rand_index (g, l, 8), 48.0 / 97.0, 1e-14);
}

/* The same case along z (8×1×1 is not 2D; 2×1×4 with z as the short
 * axis): the same contingency, and boundary recall counts z-neighbours. */
static void
test_hand_case_3d (void)
{
  const gint32 l[] = { 1, 1, 2, 2, 1, 1, 2, 2 };
  const gint32 g[] = { 5, 5, 5, 7, 5, 5, 7, 7 };
  g_autoptr (SvLabels) labels = labels_from (2, 1, 4, l);
  g_autoptr (SvLabels) truth = labels_from (2, 1, 4, g);
  g_autoptr (GError) error = NULL;
  SvMetrics m;
  g_assert_true (sv_metrics_compute (labels, truth, NULL, 0, &m, &error));
  g_assert_cmpfloat_with_epsilon (m.asa, 7.0 / 8.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (m.boundary_recall, 3.0 / 4.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (m.adjusted_rand, 48.0 / 97.0, 1e-14);
  /* 3D now: each superpixel is 2×1×2, V = 4, faces = 2·(2 + 4 + 2) = 16,
   * Q = 36π·16/4096 = 9π/64. */
  g_assert_cmpfloat_with_epsilon (m.compactness, 9.0 * G_PI / 64.0, 1e-14);
  g_assert_true (isnan (m.explained_variation));
}

static void
test_compactness_cube (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) cube = sv_labels_new (3, 3, 3, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < 27; i++)
    cube->data[i] = 4;
  SvMetrics m;
  g_assert_true (sv_metrics_compute (cube, NULL, NULL, 1, &m, &error));
  /* V = 27, A = 54 faces: 36π·27²/54³ = π/6, the largest a voxel shape
   * can reach. */
  g_assert_cmpfloat_with_epsilon (m.compactness, G_PI / 6.0, 1e-14);
  g_assert_cmpuint (m.n_labels, ==, 1);
  g_assert_cmpfloat (m.size_mean, ==, 27.0);

  /* 4×4×4 in two slabs of 2×4×4: V = 32, A = 2(8 + 8 + 16) = 64 →
   * 36π·1024/262144 = 9π/64 for both. */
  g_autoptr (SvLabels) slabs = sv_labels_new (4, 4, 4, &error);
  for (gsize i = 0; i < 64; i++)
    slabs->data[i] = i < 32 ? 0 : 1;
  g_assert_true (sv_metrics_compute (slabs, NULL, NULL, 1, &m, &error));
  g_assert_cmpfloat_with_epsilon (m.compactness, 9.0 * G_PI / 64.0, 1e-14);
}

static void
test_size_statistics (void)
{
  /* Sizes 1, 2, 3 (labels -4, 0, 1000000000: scattered values take the
   * sort-based path), mean 2, median 2, population std sqrt(2/3). */
  const gint32 l[] = { 1000000000, -4, 0, 1000000000, -4, 1000000000 };
  g_autoptr (SvLabels) labels = labels_from (1, 1, 6, l);
  g_autoptr (GError) error = NULL;
  SvMetrics m;
  g_assert_true (sv_metrics_compute (labels, NULL, NULL, 0, &m, &error));
  g_assert_cmpuint (m.n_labels, ==, 3);
  g_assert_cmpfloat (m.size_min, ==, 1.0);
  g_assert_cmpfloat (m.size_max, ==, 3.0);
  g_assert_cmpfloat (m.size_mean, ==, 2.0);
  g_assert_cmpfloat (m.size_median, ==, 2.0);
  g_assert_cmpfloat_with_epsilon (m.size_std, sqrt (2.0 / 3.0), 1e-15);
  g_assert_true (isnan (m.asa));
  g_assert_true (isnan (m.undersegmentation));
  g_assert_true (isnan (m.boundary_recall));
  g_assert_true (isnan (m.adjusted_rand));
  g_assert_true (isnan (m.explained_variation));

  /* Even count: median is the mean of the middle two (sizes 1 and 3). */
  const gint32 l2[] = { 7, 8, 8, 8 };
  g_autoptr (SvLabels) labels2 = labels_from (1, 1, 4, l2);
  g_assert_true (sv_metrics_compute (labels2, NULL, NULL, 0, &m, &error));
  g_assert_cmpfloat (m.size_median, ==, 2.0);
  g_assert_cmpfloat (m.size_std, ==, 1.0);
}

/* Masked-out voxels (the background label) are no superpixel: left out of
 * the count, the sizes, compactness and explained variation. */
static void
test_background_left_out (void)
{
  const gint32 l[] = { 0, 0, 0, 1, 2, 2 };
  const float image[] = { 9, 9, 9, 1, 2, 4 };
  g_autoptr (SvLabels) labels = labels_from (1, 1, 6, l);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (1, 1, 6, 1, &error);
  SvMetrics m;

  g_assert_no_error (error);
  memcpy (v->data, image, sizeof image);
  g_assert_true (sv_metrics_compute_background (labels, NULL, v, 0, TRUE, 0, &m, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (m.n_labels, ==, 2);
  g_assert_cmpfloat (m.size_min, ==, 1.0);
  g_assert_cmpfloat (m.size_max, ==, 2.0);
  g_assert_cmpfloat (m.size_median, ==, 1.5);
  /* Inside: 1 | 2 4, mean 7/3; between (1 − 7/3)² + 2 (3 − 7/3)² = 24/9
   * of a total (1 − 7/3)² + (2 − 7/3)² + (4 − 7/3)² = 42/9. */
  g_assert_cmpfloat_with_epsilon (m.explained_variation, 24.0 / 42.0, 1e-12);
  /* Pixel 1: perimeter 4, Q = π/4; pixels 2: perimeter 6, Q = 8π/36;
   * weighted by size over the 3 pixels inside. */
  g_assert_cmpfloat_with_epsilon (m.compactness, (G_PI / 4 + 2 * 8 * G_PI / 36) / 3, 1e-12);

  /* Without a background the masked-out voxels count as a label. */
  g_assert_true (sv_metrics_compute (labels, NULL, v, 0, &m, &error));
  g_assert_cmpuint (m.n_labels, ==, 3);
  g_assert_cmpfloat (m.size_max, ==, 3.0);
  /* A background with no voxel changes nothing. */
  g_assert_true (sv_metrics_compute_background (labels, NULL, v, 0, TRUE, -1, &m, &error));
  g_assert_cmpuint (m.n_labels, ==, 3);
}

static void
test_ari_special_cases (void)
{
  const gint32 a[] = { 3, 3, 1, 1, 2, 2, 2, 9 };
  const gint32 same[] = { 0, 0, 5, 5, 6, 6, 6, -1 }; /* a relabelled */
  g_assert_cmpfloat_with_epsilon (sv_adjusted_rand_index (a, same, 8), 1.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (sv_adjusted_rand_index (a, a, 8), 1.0, 1e-15);

  /* One cluster against all singletons: index 0, expectation 0 → 0. */
  const gint32 one[] = { 0, 0, 0, 0 };
  const gint32 all[] = { 0, 1, 2, 3 };
  g_assert_cmpfloat (sv_adjusted_rand_index (one, all, 4), ==, 0.0);
  /* Identical trivial partitions: 1, as scikit-learn. */
  g_assert_cmpfloat (sv_adjusted_rand_index (one, one, 4), ==, 1.0);
  g_assert_cmpfloat (sv_adjusted_rand_index (all, all, 4), ==, 1.0);

  /* 2×2 contingency [[2, 1], [1, 2]] (n = 6): Σ C(n_ij,2) = 1 + 0 + 0 + 1
   * = 2; rows 3, 3 → 6; columns 3, 3 → 6; C(6,2) = 15; E = 36/15 = 2.4;
   * max = 6 → (2 − 2.4)/(6 − 2.4) = −1/9. */
  const gint32 x[] = { 0, 0, 0, 1, 1, 1 };
  const gint32 y[] = { 0, 0, 1, 0, 1, 1 };
  g_assert_cmpfloat_with_epsilon (sv_adjusted_rand_index (x, y, 6), -1.0 / 9.0, 1e-15);
}

static void
test_shape_mismatch (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) labels = sv_labels_new (10, 20, 30, &error);
  g_autoptr (SvLabels) truth = sv_labels_new (10, 20, 31, &error);
  g_autoptr (SvVolume) image = sv_volume_new (10, 21, 30, 1, &error);
  g_assert_no_error (error);
  SvMetrics m;
  g_assert_false (sv_metrics_compute (labels, truth, NULL, 1, &m, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
  g_assert_cmpstr (error->message, ==, "labels are 10×20×30 but truth is 10×20×31");
  g_clear_error (&error);
  g_assert_false (sv_metrics_compute (labels, NULL, image, 1, &m, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
  g_assert_cmpstr (error->message, ==, "labels are 10×20×30 but the image is 10×21×30");
}

static void
test_explained_variation_channels (void)
{
  /* Two channels: channel 0 as in the hand case (EV 1/7), channel 1 equal
   * to the superpixel means (EV 1); a constant image has no variance. */
  const gint32 l[] = { 1, 1, 2, 2, 1, 1, 2, 2 };
  const float img[] = { 0, 0.5f, 0, 0.5f, 1, 1, 1, 1, 0, 0.5f, 2, 0.5f, 1, 1, 1, 1 };
  g_autoptr (SvLabels) labels = labels_from (1, 2, 4, l);
  g_autoptr (SvVolume) image = image_from (1, 2, 4, 2, img);
  g_autoptr (GError) error = NULL;
  SvMetrics m;
  g_assert_true (sv_metrics_compute (labels, NULL, image, 0, &m, &error));
  g_assert_cmpfloat_with_epsilon (m.explained_variation, (1.0 / 7.0 + 1.0) / 2.0, 1e-14);

  const float flat[] = { 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f };
  g_autoptr (SvVolume) constant = image_from (1, 2, 4, 1, flat);
  g_assert_true (sv_metrics_compute (labels, NULL, constant, 0, &m, &error));
  g_assert_true (isnan (m.explained_variation));
}

/* On the phantom, the truth itself as superpixels is perfect. */
static void
test_truth_against_itself (void)
{
  SvSynthParams p;
  sv_synth_params_init_defaults (&p);
  p.nz = 16;
  p.ny = 32;
  p.nx = 32;
  p.n_cells = 12;
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) truth = NULL;
  g_autoptr (SvVolume) image = sv_synth_cells (&p, &truth, &error);
  g_assert_no_error (error);
  SvMetrics m;
  g_assert_true (sv_metrics_compute (truth, truth, image, 0, &m, &error));
  g_assert_cmpuint (m.n_labels, ==, 12);
  g_assert_cmpfloat (m.asa, ==, 1.0);
  g_assert_cmpfloat (m.undersegmentation, ==, 0.0);
  g_assert_cmpfloat (m.boundary_recall, ==, 1.0);
  g_assert_cmpfloat_with_epsilon (m.adjusted_rand, 1.0, 1e-12);
  g_assert_cmpfloat (m.explained_variation, >, 0.0);
  g_assert_cmpfloat (m.explained_variation, <, 1.0);

  /* Without nuclei, blur and noise each cell is flat: EV is exactly 1. */
  p.nucleus_radius = 0.0;
  p.blur_sigma = 0.0;
  p.noise_sigma = 0.0;
  g_autoptr (SvLabels) flat_truth = NULL;
  g_autoptr (SvVolume) flat = sv_synth_cells (&p, &flat_truth, &error);
  g_assert_no_error (error);
  SvMetrics mf;
  g_assert_true (sv_metrics_compute (flat_truth, NULL, flat, 0, &mf, &error));
  g_assert_cmpfloat_with_epsilon (mf.explained_variation, 1.0, 1e-12);
  g_assert_cmpfloat (m.compactness, >, 0.0);
  g_assert_cmpfloat (m.compactness, <, G_PI / 6.0);
}

/* Every metric again, written the obvious way with numpy and scipy; ARI
 * with sklearn when it is installed, else from the pair-count formula. */
static const char reference_script[]
    = "import sys, numpy as np, scipy.ndimage as ndi\n"
      "d = sys.argv[1]\n"
      "nz, ny, nx, r = (int(v) for v in open(d + '/shape').read().split())\n"
      "L = np.fromfile(d + '/labels.i32', dtype='<i4').reshape(nz, ny, nx)\n"
      "G = np.fromfile(d + '/truth.i32', dtype='<i4').reshape(nz, ny, nx)\n"
      "I = np.fromfile(d + '/image.f32', dtype='<f4').reshape(nz, ny, nx).astype(np.float64)\n"
      "N = L.size\n"
      "_, li = np.unique(L, return_inverse=True)\n"
      "_, gi = np.unique(G, return_inverse=True)\n"
      "li = li.reshape(L.shape); gi = gi.reshape(G.shape)\n"
      "C = np.zeros((li.max() + 1, gi.max() + 1), dtype=np.int64)\n"
      "np.add.at(C, (li.ravel(), gi.ravel()), 1)\n"
      "asa = C.max(axis=1).sum() / N\n"
      "try:\n"
      "    from sklearn.metrics import adjusted_rand_score\n"
      "    ari = adjusted_rand_score(G.ravel(), L.ravel())\n"
      "except ImportError:\n"
      "    c2 = lambda x: (x * (x - 1) // 2).sum()\n"
      "    sij, sa, sb, tot = c2(C), c2(C.sum(1)), c2(C.sum(0)), N * (N - 1) // 2\n"
      "    e = sa * sb / tot\n"
      "    ari = (sij - e) / (0.5 * (sa + sb) - e)\n"
      "def edges(X):\n"
      "    m = np.zeros(X.shape, bool)\n"
      "    for ax in range(3):\n"
      "        if X.shape[ax] < 2: continue\n"
      "        diff = np.diff(X, axis=ax) != 0\n"
      "        lo = [slice(None)] * 3; hi = [slice(None)] * 3\n"
      "        lo[ax] = slice(0, -1); hi[ax] = slice(1, None)\n"
      "        m[tuple(lo)] |= diff; m[tuple(hi)] |= diff\n"
      "    return m\n"
      "ge = edges(G)\n"
      "le = ndi.maximum_filter(edges(L).astype(np.uint8), size=2 * r + 1, mode='constant', cval=0) "
      "> 0\n"
      "br = (ge & le).sum() / ge.sum()\n"
      "sizes = np.bincount(li.ravel())\n"
      "means = np.bincount(li.ravel(), weights=I.ravel()) / sizes\n"
      "mu = I.mean()\n"
      "ev = (sizes * (means - mu) ** 2).sum() / ((I - mu) ** 2).sum()\n"
      "P = np.pad(li, 1, constant_values=-1)\n"
      "faces = np.zeros(len(sizes))\n"
      "inner = P[1:-1, 1:-1, 1:-1]\n"
      "axes = range(3) if nz > 1 else (1, 2)\n"
      "for ax in axes:\n"
      "    for sh in (-1, 1):\n"
      "        nb = np.roll(P, sh, axis=ax)[1:-1, 1:-1, 1:-1]\n"
      "        faces += np.bincount(inner.ravel(), weights=(nb != inner).ravel(), "
      "minlength=len(sizes))\n"
      "V = sizes.astype(np.float64)\n"
      "Q = 36 * np.pi * V ** 2 / faces ** 3 if nz > 1 else 4 * np.pi * V / faces ** 2\n"
      "co = (V * Q).sum() / N\n"
      "print(repr(asa), repr(1 - asa), repr(br), repr(ev), repr(co), repr(ari), len(sizes),\n"
      "      repr(float(np.median(sizes))), repr(float(sizes.std())))\n";

static void
write_file (const char *dir, const char *name, const void *data, gsize len)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_file_set_contents (path, data, (gssize)len, &error);
  g_assert_no_error (error);
}

static void
remove_file (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_unlink (path);
}

/* Superpixels: blocks of a jittered grid; truth: the phantom's cells. */
static void
check_against_python (guint nz, guint ny, guint nx, guint radius, guint64 seed)
{
  SvSynthParams p;
  sv_synth_params_init_defaults (&p);
  p.nz = nz;
  p.ny = ny;
  p.nx = nx;
  p.n_cells = 15;
  p.nucleus_radius = 2.0;
  p.seed = seed;
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) truth = NULL;
  g_autoptr (SvVolume) image = sv_synth_cells (&p, &truth, &error);
  g_assert_no_error (error);
  g_autoptr (SvLabels) labels = sv_labels_new (nz, ny, nx, &error);
  g_assert_no_error (error);
  SvRng rng;
  sv_rng_init (&rng, seed + 100);
  gsize n = (gsize)nz * ny * nx;
  for (gsize i = 0; i < n; i++)
    {
      guint z = i / ((gsize)ny * nx), y = i / nx % ny, x = i % nx;
      /* Blocks of 3×5×4 with one voxel in ten given to a random neighbour
       * label, so that boundaries are ragged and labels not connected. */
      gint32 block = (gint32)(((z / 3) * 100 + y / 5) * 100 + x / 4);
      if (sv_rng_below (&rng, 10) == 0)
        block += (gint32)sv_rng_below (&rng, 3);
      labels->data[i] = block - 5000;
    }

  SvMetrics m;
  g_assert_true (sv_metrics_compute (labels, truth, image, radius, &m, &error));
  g_assert_no_error (error);

  g_autofree char *dir = g_dir_make_tmp ("sv-metrics-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *shape = g_strdup_printf ("%u %u %u %u", nz, ny, nx, radius);
  write_file (dir, "shape", shape, strlen (shape));
  write_file (dir, "labels.i32", labels->data, n * sizeof (gint32));
  write_file (dir, "truth.i32", truth->data, n * sizeof (gint32));
  write_file (dir, "image.f32", image->data, n * sizeof (float));

  g_autofree char *out = sv_test_python_args (reference_script, dir);
  g_assert_nonnull (out);
  remove_file (dir, "shape");
  remove_file (dir, "labels.i32");
  remove_file (dir, "truth.i32");
  remove_file (dir, "image.f32");
  g_rmdir (dir);

  g_auto (GStrv) v = g_strsplit (g_strstrip (out), " ", -1);
  g_assert_cmpuint (g_strv_length (v), ==, 9);
  g_test_message ("%ux%ux%u r=%u: C asa %.17g br %.17g ev %.17g co %.17g ari %.17g; python %s", nz,
                  ny, nx, radius, m.asa, m.boundary_recall, m.explained_variation, m.compactness,
                  m.adjusted_rand, out);
  g_assert_cmpfloat_with_epsilon (m.asa, g_ascii_strtod (v[0], NULL), 1e-12);
  g_assert_cmpfloat_with_epsilon (m.undersegmentation, g_ascii_strtod (v[1], NULL), 1e-12);
  g_assert_cmpfloat_with_epsilon (m.boundary_recall, g_ascii_strtod (v[2], NULL), 1e-12);
  g_assert_cmpfloat_with_epsilon (m.explained_variation, g_ascii_strtod (v[3], NULL), 1e-9);
  g_assert_cmpfloat_with_epsilon (m.compactness, g_ascii_strtod (v[4], NULL), 1e-12);
  g_assert_cmpfloat_with_epsilon (m.adjusted_rand, g_ascii_strtod (v[5], NULL), 1e-12);
  g_assert_cmpuint (m.n_labels, ==, g_ascii_strtoull (v[6], NULL, 10));
  g_assert_cmpfloat (m.size_median, ==, g_ascii_strtod (v[7], NULL));
  g_assert_cmpfloat_with_epsilon (m.size_std, g_ascii_strtod (v[8], NULL), 1e-9);
  /* Keep the comparison honest: neither trivial. */
  g_assert_cmpfloat (m.adjusted_rand, >, 0.0);
  g_assert_cmpfloat (m.adjusted_rand, <, 0.9);
  if (radius == 0)
    g_assert_cmpfloat (m.boundary_recall, <, 1.0);
}

static void
test_matches_python (void)
{
  if (!sv_test_python_has ("numpy, scipy.ndimage"))
    {
      g_test_skip ("/usr/bin/python3 with numpy and scipy not available");
      return;
    }
  check_against_python (9, 23, 31, 0, 1);
  check_against_python (9, 23, 31, 1, 2);
  check_against_python (12, 17, 20, 2, 3);
  check_against_python (1, 60, 70, 1, 4); /* 2D */
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/metrics/hand-case", test_hand_case);
  g_test_add_func ("/engine/metrics/hand-case-3d", test_hand_case_3d);
  g_test_add_func ("/engine/metrics/compactness/cube", test_compactness_cube);
  g_test_add_func ("/engine/metrics/sizes", test_size_statistics);
  g_test_add_func ("/engine/metrics/background-left-out", test_background_left_out);
  g_test_add_func ("/engine/metrics/ari/special-cases", test_ari_special_cases);
  g_test_add_func ("/engine/metrics/shape-mismatch", test_shape_mismatch);
  g_test_add_func ("/engine/metrics/explained-variation/channels",
                   test_explained_variation_channels);
  g_test_add_func ("/engine/metrics/truth-against-itself", test_truth_against_itself);
  g_test_add_func ("/engine/metrics/matches-python", test_matches_python);
  return g_test_run ();
}

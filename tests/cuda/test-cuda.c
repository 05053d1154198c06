/* Tests of the CUDA backend: labels bit-identical to the CPU reference over
 * a matrix of shapes and parameters, determinism, memory hygiene,
 * cancellation and the slice/centre accessors. Every test skips with the
 * reason when no CUDA device is usable. */
#define G_LOG_DOMAIN "sv-test-cuda"

#include <math.h>
#include <string.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-error.h"
#include "sv-cuda.h"
#include "sv-test-cuda.h"

/* An ellipsoid mask that leaves the corners out. */
static guint8 *
make_mask (guint nz, guint ny, guint nx)
{
  guint8 *m = g_malloc ((gsize)nz * ny * nx);
  for (guint z = 0; z < nz; z++)
    for (guint y = 0; y < ny; y++)
      for (guint x = 0; x < nx; x++)
        {
          double dz = nz > 1 ? (z - (nz - 1) / 2.0) / (nz / 2.0) : 0.0;
          double dy = (y - (ny - 1) / 2.0) / (ny / 2.0);
          double dx = (x - (nx - 1) / 2.0) / (nx / 2.0);
          m[((gsize)z * ny + y) * nx + x] = dz * dz + dy * dy + dx * dx < 0.9;
        }
  return m;
}

typedef struct
{
  gint32 *labels;
  float *centres;
  gsize k;
  SvRunStats stats;
} Result;

static void
result_clear (Result *r)
{
  g_free (r->labels);
  g_free (r->centres);
  memset (r, 0, sizeof *r);
}

static void
run_on (SvBackend *backend, const SvVolume *v, const guint8 *mask, const SvSlicParams *p,
        int stop_after, Result *r)
{
  g_autoptr (GError) error = NULL;
  SvRunControl control = { 0 };
  gsize n = (gsize)v->nz * v->ny * v->nx;

  control.n_threads = 2;
  control.stop_after_iteration = stop_after;
  memset (r, 0, sizeof *r);
  g_assert_true (sv_backend_set_volume (backend, v, mask, &error));
  g_assert_no_error (error);
  g_assert_true (sv_backend_run (backend, p, &control, &r->stats, &error));
  g_assert_no_error (error);
  r->labels = g_new (gint32, MAX (n, 1));
  g_assert_true (sv_backend_get_labels (backend, r->labels, &error));
  g_assert_no_error (error);
  g_assert_true (sv_backend_get_centres (backend, NULL, &r->k, &error));
  g_assert_no_error (error);
  r->centres = g_new (float, MAX (r->k, 1) * 3);
  g_assert_true (sv_backend_get_centres (backend, r->centres, &r->k, &error));
  g_assert_no_error (error);
}

static void
run_backend (const char *name, const SvVolume *v, const guint8 *mask, const SvSlicParams *p,
             int stop_after, Result *r)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new (name, &error);
  g_assert_no_error (error);
  run_on (backend, v, mask, p, stop_after, r);
}

/* Asserts bit-identical labels, equal counts and identical centres. */
static void
assert_same (const SvVolume *v, const Result *cpu, const Result *gpu)
{
  gsize n = (gsize)v->nz * v->ny * v->nx;
  gsize n_diff = 0, first = 0;
  for (gsize i = 0; i < n; i++)
    if (cpu->labels[i] != gpu->labels[i] && n_diff++ == 0)
      first = i;
  if (n_diff > 0)
    g_error ("%" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
             " labels differ; first at voxel %" G_GSIZE_FORMAT ": cpu %d, cuda %d",
             n_diff, n, first, cpu->labels[first], gpu->labels[first]);
  g_assert_cmpuint (cpu->stats.n_clusters, ==, gpu->stats.n_clusters);
  g_assert_cmpuint (cpu->stats.n_labels, ==, gpu->stats.n_labels);
  g_assert_cmpuint (cpu->stats.iterations, ==, gpu->stats.iterations);
  g_assert_cmpuint (cpu->k, ==, gpu->k);
  for (gsize i = 0; i < cpu->k * 3; i++)
    if (!(isnan (cpu->centres[i]) && isnan (gpu->centres[i])))
      g_assert_true (memcmp (&cpu->centres[i], &gpu->centres[i], sizeof (float)) == 0);
}

typedef struct
{
  const char *name;
  guint nz, ny, nx, nc;
  gint64 n_segments;
  double compactness;
  int max_num_iter;
  double sigma[3];
  gboolean sigma_per_axis;
  double spacing[3];
  gboolean slic_zero;
  gboolean mask;
  int start_label;
  gboolean connectivity;
  int stop_after;
  SvConvert2Lab convert2lab;
} Case;

/* Spacing 0 means 1 on every axis (the default). */
/* clang-format off */
static const Case cases[] = {
  { "one-voxel", 1, 1, 1, 1, 100, 10, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "2x10x10", 2, 10, 10, 1, 100, 10, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "31-cube", 31, 31, 31, 1, 100, 10, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "32-cube-2-segments", 32, 32, 32, 1, 2, 10, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "64x1x1", 1, 1, 64, 1, 8, 10, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "odd", 7, 13, 29, 1, 40, 5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "2d-gray", 1, 97, 83, 1, 150, 0.3, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "2d-rgb-lab", 1, 64, 80, 3, 120, 10, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "2d-rgb-no-lab", 1, 64, 80, 3, 120, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1,
    SV_CONVERT2LAB_NO },
  { "3d-2-channels", 20, 24, 28, 2, 150, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "3d-3-channels", 16, 20, 24, 3, 100, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "3d-5-channels", 12, 20, 22, 5, 80, 1, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "spacing", 20, 30, 40, 1, 200, 0.5, 10, { 0 }, FALSE, { 2.0, 1.0, 0.5 }, FALSE, FALSE, 1, TRUE, -1 },
  { "sigma", 24, 28, 32, 1, 150, 0.2, 10, { 1.5 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "sigma-spacing", 24, 28, 32, 1, 150, 0.2, 10, { 1.5 }, FALSE, { 2.0, 1.0, 1.0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "sigma-per-axis", 24, 28, 32, 1, 150, 0.2, 10, { 0.5, 1.0, 2.0 }, TRUE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "slic-zero", 24, 28, 32, 1, 150, 10, 10, { 0 }, FALSE, { 0 }, TRUE, FALSE, 1, TRUE, -1 },
  { "slic-zero-rgb", 1, 60, 70, 3, 80, 10, 10, { 0 }, FALSE, { 0 }, TRUE, FALSE, 0, TRUE, -1 },
  { "mask", 24, 28, 32, 1, 150, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, TRUE, 1, TRUE, -1 },
  { "mask-start-0", 24, 28, 32, 1, 150, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, TRUE, 0, TRUE, -1 },
  { "mask-2d-no-connectivity", 1, 90, 70, 1, 100, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, TRUE, 1, FALSE, -1 },
  { "start-0", 24, 28, 32, 1, 150, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 0, TRUE, -1 },
  { "no-connectivity", 24, 28, 32, 1, 150, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, FALSE, -1 },
  { "no-connectivity-start-0", 24, 28, 32, 1, 150, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 0, FALSE, -1 },
  { "stop-after-0", 24, 28, 32, 1, 150, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, 0 },
  { "stop-after-1", 24, 28, 32, 1, 150, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, 1 },
  { "stop-after-3", 24, 28, 32, 1, 150, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 0, TRUE, 3 },
  { "zero-iterations", 10, 12, 14, 1, 20, 0.5, 0, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "more-segments-than-voxels", 3, 4, 5, 1, 1000, 10, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "low-compactness", 24, 28, 32, 1, 300, 0.01, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "sigma-short-axes", 3, 40, 5, 1, 20, 0.2, 10, { 3.0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "sigma-multichannel", 12, 20, 22, 2, 80, 0.5, 10, { 0.8, 1.6, 0.0 }, TRUE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "sigma-mask", 24, 28, 32, 1, 150, 0.2, 10, { 1.0 }, FALSE, { 0 }, FALSE, TRUE, 1, TRUE, -1 },
  { "sigma-2d-rgb-lab", 1, 64, 80, 3, 120, 10, 10, { 1.2 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "high-compactness", 24, 28, 32, 1, 300, 1000, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  /* A cluster per voxel or so: tiles meet more windows than their
   * candidate list holds and take the plain search (and its update). */
  { "dense-segments", 16, 20, 24, 1, 8000, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, FALSE, 1, TRUE, -1 },
  { "dense-segments-2-channels-mask", 16, 20, 24, 2, 6000, 0.5, 10, { 0 }, FALSE, { 0 }, FALSE, TRUE, 1, TRUE, -1 },
};
/* clang-format on */

static void
case_params (const Case *c, SvSlicParams *p)
{
  sv_slic_params_init_defaults (p);
  p->n_segments = c->n_segments;
  p->compactness = c->compactness;
  p->max_num_iter = c->max_num_iter;
  memcpy (p->sigma, c->sigma, sizeof p->sigma);
  p->sigma_per_axis = c->sigma_per_axis;
  if (c->spacing[0] > 0)
    memcpy (p->spacing, c->spacing, sizeof p->spacing);
  p->slic_zero = c->slic_zero;
  p->start_label = c->start_label;
  p->enforce_connectivity = c->connectivity;
  p->convert2lab = c->convert2lab;
}

static void
test_bit_identical (gconstpointer data)
{
  const Case *c = data;
  SvSlicParams p;
  Result cpu, gpu;

  if (!sv_test_need_cuda ())
    return;
  case_params (c, &p);
  g_autoptr (SvVolume) v = sv_test_blocky_volume (c->nz, c->ny, c->nx, c->nc, 17);
  g_autofree guint8 *mask = c->mask ? make_mask (c->nz, c->ny, c->nx) : NULL;
  run_backend ("cpu", v, mask, &p, c->stop_after, &cpu);
  run_backend ("cuda", v, mask, &p, c->stop_after, &gpu);
  assert_same (v, &cpu, &gpu);
  result_clear (&cpu);
  result_clear (&gpu);
}

/* Lab of a uint8 image (converted in float64 on the host, engine/slic/lab.c)
 * where colour decides the labels: the device runs on the same prepared
 * image. */
static void
test_lab_uint8_bit_identical (void)
{
  SvSlicParams p;
  Result cpu, gpu;

  if (!sv_test_need_cuda ())
    return;
  sv_slic_params_init_defaults (&p);
  p.n_segments = 120;
  p.compactness = 0.01;
  p.enforce_connectivity = FALSE;
  g_autoptr (SvVolume) v = sv_test_blocky_volume (1, 64, 80, 3, 19);
  for (gsize i = 0; i < sv_volume_n_voxels (v) * 3; i++)
    v->data[i] = (float)(rint (CLAMP (v->data[i], 0.0f, 1.0f) * 255.0) * (1.0 / 255.0));
  v->source_type = SV_SAMPLE_U8;
  run_backend ("cpu", v, NULL, &p, -1, &cpu);
  run_backend ("cuda", v, NULL, &p, -1, &gpu);
  assert_same (v, &cpu, &gpu);
  result_clear (&cpu);
  result_clear (&gpu);
}

/* The iteration hook on the device: every iteration's labels and centres
 * equal the CPU reference stopped after that iteration (what the window's
 * teaching snapshots and live iterations show). */
typedef struct
{
  gsize n;
  GPtrArray *labels;  /* gint32 *, by iteration − 1 */
  GPtrArray *centres; /* Result *, for the centres */
} HookSeen;

static void
hook_seen_cb (const SvIterationView *view, guint iteration, guint n_iterations,
              gpointer user_data)
{
  HookSeen *h = user_data;
  g_autoptr (GError) error = NULL;
  gint32 *labels = g_new (gint32, MAX (h->n, 1));
  Result *r = g_new0 (Result, 1);

  g_assert_cmpuint (iteration, ==, h->labels->len + 1);
  g_assert_true (sv_iteration_view_get_labels (view, labels, &error));
  g_assert_true (sv_iteration_view_get_centres (view, NULL, &r->k, &error));
  r->centres = g_new (float, MAX (r->k, 1) * 3);
  g_assert_true (sv_iteration_view_get_centres (view, r->centres, &r->k, &error));
  g_assert_no_error (error);
  g_ptr_array_add (h->labels, labels);
  g_ptr_array_add (h->centres, r);
}

static void
test_iteration_hook (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = NULL;
  g_autoptr (SvVolume) v = sv_test_blocky_volume (20, 30, 40, 1, 23);
  HookSeen h = { (gsize)20 * 30 * 40, g_ptr_array_new_with_free_func (g_free),
                 g_ptr_array_new () };
  SvRunControl control = { 0 };
  SvRunStats stats;
  SvSlicParams p;

  if (!sv_test_need_cuda ())
    return;
  sv_slic_params_init_defaults (&p);
  p.n_segments = 150;
  p.compactness = 0.2;
  p.max_num_iter = 6;
  control.stop_after_iteration = -1;
  control.iteration = hook_seen_cb;
  control.user_data = &h;
  backend = sv_backend_new ("cuda", &error);
  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (h.labels->len, ==, 6);
  for (guint i = 0; i < h.labels->len; i++)
    {
      Result cpu, gpu = { 0 };
      Result *seen = g_ptr_array_index (h.centres, i);

      run_backend ("cpu", v, NULL, &p, (int)i + 1, &cpu);
      gpu.labels = g_ptr_array_index (h.labels, i);
      gpu.centres = seen->centres;
      gpu.k = seen->k;
      gpu.stats = cpu.stats; /* the hook has no stats; labels and centres are compared */
      assert_same (v, &cpu, &gpu);
      result_clear (&cpu);
      g_free (seen->centres);
      g_free (seen);
    }
  g_ptr_array_unref (h.labels);
  g_ptr_array_unref (h.centres);
}

/* The same request ten times on one backend gives the same bits. */
static void
test_deterministic (void)
{
  SvSlicParams p;
  Result first, again;
  g_autoptr (GError) error = NULL;

  if (!sv_test_need_cuda ())
    return;
  sv_slic_params_init_defaults (&p);
  p.n_segments = 400;
  p.compactness = 0.3;
  g_autoptr (SvVolume) v = sv_test_blocky_volume (40, 44, 48, 1, 5);
  g_autoptr (SvBackend) backend = sv_backend_new ("cuda", &error);
  g_assert_no_error (error);
  run_on (backend, v, NULL, &p, -1, &first);
  for (int i = 0; i < 10; i++)
    {
      run_on (backend, v, NULL, &p, -1, &again);
      g_assert_true (memcmp (first.labels, again.labels, sizeof (gint32) * v->nz * v->ny * v->nx)
                     == 0);
      result_clear (&again);
    }
  result_clear (&first);
}

/* A compactness change reuses the prepared image and still matches the CPU;
 * a sigma change prepares again. */
static void
test_prepare_reuse (void)
{
  SvSlicParams p;
  g_autoptr (GError) error = NULL;
  SvRunStats stats;
  SvRunControl control = { 0 };
  Result cpu;

  if (!sv_test_need_cuda ())
    return;
  control.stop_after_iteration = -1;
  sv_slic_params_init_defaults (&p);
  p.n_segments = 200;
  p.sigma[0] = 1.0;
  p.compactness = 0.5;
  g_autoptr (SvVolume) v = sv_test_blocky_volume (20, 30, 40, 1, 9);
  g_autoptr (SvBackend) backend = sv_backend_new ("cuda", &error);
  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_false (stats.prepare_reused);
  p.compactness = 2.0;
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_no_error (error);
  g_assert_true (stats.prepare_reused);
  g_autofree gint32 *labels = g_new (gint32, 20 * 30 * 40);
  g_assert_true (sv_backend_get_labels (backend, labels, &error));
  run_backend ("cpu", v, NULL, &p, -1, &cpu);
  g_assert_true (memcmp (labels, cpu.labels, sizeof (gint32) * 20 * 30 * 40) == 0);
  result_clear (&cpu);
  p.sigma[0] = 2.0;
  g_assert_true (sv_backend_run (backend, &p, &control, &stats, &error));
  g_assert_false (stats.prepare_reused);
}

/* The device labels are an ability of the CUDA backend's table: there
 * after a run, with the volume's shape and the host copy's values' count;
 * none before a run and none on the CPU. */
static void
test_device_labels (void)
{
  SvSlicParams p;
  g_autoptr (GError) error = NULL;
  Result gpu;
  const guint nz = 9, ny = 13, nx = 17;
  guint shape[3] = { 0, 0, 0 };

  if (!sv_test_need_cuda ())
    return;
  sv_slic_params_init_defaults (&p);
  p.n_segments = 30;
  g_autoptr (SvVolume) v = sv_test_blocky_volume (nz, ny, nx, 1, 3);
  g_autoptr (SvBackend) backend = sv_backend_new ("cuda", &error);
  g_autoptr (SvBackend) cpu = sv_backend_new ("cpu", &error);
  g_assert_no_error (error);
  g_assert_null (sv_backend_get_device_labels (backend, NULL));
  run_on (backend, v, NULL, &p, -1, &gpu);
  g_assert_nonnull (sv_backend_get_device_labels (backend, shape));
  g_assert_cmpuint (shape[0], ==, nz);
  g_assert_cmpuint (shape[1], ==, ny);
  g_assert_cmpuint (shape[2], ==, nx);
  g_assert_nonnull (sv_backend_get_device_stream (backend));
  g_assert_null (sv_backend_get_device_labels (cpu, NULL));
  g_assert_null (sv_backend_get_device_stream (cpu));
  result_clear (&gpu);
}

static void
cancel_at_2_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  if (stage == SV_STAGE_ITERATE && iteration == 2)
    g_cancellable_cancel (G_CANCELLABLE (user_data));
}

/* A run cancelled between iterations fails with G_IO_ERROR_CANCELLED and
 * leaves the backend usable; NaN input fails like the CPU's. */
static void
test_cancel_and_errors (void)
{
  SvSlicParams p;
  g_autoptr (GError) error = NULL;
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  SvRunControl control = { 0 };
  Result cpu, gpu;

  if (!sv_test_need_cuda ())
    return;
  sv_slic_params_init_defaults (&p);
  p.n_segments = 100;
  g_autoptr (SvVolume) v = sv_test_blocky_volume (16, 20, 24, 1, 4);
  g_autoptr (SvBackend) backend = sv_backend_new ("cuda", &error);
  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  control.stop_after_iteration = -1;
  control.progress = cancel_at_2_cb;
  control.user_data = cancellable;
  control.cancellable = cancellable;
  g_assert_false (sv_backend_run (backend, &p, &control, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);

  g_autofree gint32 *labels = g_new (gint32, 16 * 20 * 24);
  g_assert_false (sv_backend_get_labels (backend, labels, &error));
  g_clear_error (&error);

  run_on (backend, v, NULL, &p, -1, &gpu);
  run_backend ("cpu", v, NULL, &p, -1, &cpu);
  assert_same (v, &cpu, &gpu);
  result_clear (&cpu);
  result_clear (&gpu);

  /* Non-finite input: the same error, word for word, as the CPU's. */
  v->data[5] = NAN;
  v->data[700] = INFINITY;
  v->data[701] = NAN;
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  control.progress = NULL;
  control.cancellable = NULL;
  g_assert_false (sv_backend_run (backend, &p, &control, NULL, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA);
  {
    g_autoptr (GError) cpu_error = NULL;
    g_autoptr (SvBackend) reference = sv_backend_new ("cpu", &cpu_error);
    g_assert_true (sv_backend_set_volume (reference, v, NULL, &cpu_error));
    g_assert_false (sv_backend_run (reference, &p, &control, NULL, &cpu_error));
    g_assert_cmpstr (error->message, ==, cpu_error->message);
  }
  g_clear_error (&error);

  /* Non-finite values outside the mask are allowed and ignored. */
  {
    g_autofree guint8 *mask = make_mask (16, 20, 24);
    g_assert_false (mask[5] || mask[700] || mask[701]);
    run_on (backend, v, mask, &p, -1, &gpu);
    run_backend ("cpu", v, mask, &p, -1, &cpu);
    assert_same (v, &cpu, &gpu);
    result_clear (&cpu);
    result_clear (&gpu);
  }
}

/* Many runs over random shapes and parameters, on fresh and reused
 * backends: every one matches the CPU. The same sequence runs twice and
 * device memory after the second round is where the first left it (the
 * first round also warms up what the runtime keeps for good: kernel local
 * memory, allocation pools). */
static void
random_round (GRand *rand)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) reused = sv_backend_new ("cuda", &error);
  g_assert_no_error (error);
  /* `-m slow` runs the 1 000 runs (two rounds of 500). */
  const int n_runs = g_test_slow () ? 500 : 24;
  g_test_message ("%d random runs in this round", n_runs);
  for (int i = 0; i < n_runs; i++)
    {
      SvSlicParams p;
      Result cpu, gpu;
      guint nz = g_rand_int_range (rand, 1, 24), ny = g_rand_int_range (rand, 1, 40),
            nx = g_rand_int_range (rand, 1, 40), nc = g_rand_int_range (rand, 1, 4);
      sv_slic_params_init_defaults (&p);
      p.n_segments = g_rand_int_range (rand, 1, 300);
      p.compactness = pow (10.0, g_rand_double_range (rand, -2, 2));
      p.max_num_iter = g_rand_int_range (rand, 0, 12);
      p.sigma[0] = g_rand_boolean (rand) ? g_rand_double_range (rand, 0, 2) : 0.0;
      p.slic_zero = g_rand_boolean (rand);
      p.enforce_connectivity = g_rand_int_range (rand, 0, 4) != 0;
      p.start_label = g_rand_int_range (rand, 0, 2);
      gboolean masked = g_rand_int_range (rand, 0, 4) == 0 && ny > 4 && nx > 4;
      g_autoptr (SvVolume) v = sv_test_blocky_volume (nz, ny, nx, nc, g_rand_int (rand));
      g_autofree guint8 *mask = masked ? make_mask (nz, ny, nx) : NULL;
      if (i % 2 == 0)
        run_on (reused, v, mask, &p, -1, &gpu);
      else
        run_backend ("cuda", v, mask, &p, -1, &gpu);
      run_backend ("cpu", v, mask, &p, -1, &cpu);
      assert_same (v, &cpu, &gpu);
      result_clear (&cpu);
      result_clear (&gpu);
    }
}

static void
test_memory_random_runs (void)
{
  g_autoptr (GError) error = NULL;
  gsize free_before = 0, free_after = 0;

  if (!sv_test_need_cuda ())
    return;
  {
    g_autoptr (GRand) rand = g_rand_new_with_seed (2024);
    random_round (rand);
  }
  g_assert_true (sv_cuda_mem_get_info (&free_before, NULL, &error));
  {
    g_autoptr (GRand) rand = g_rand_new_with_seed (2024);
    random_round (rand);
  }
  g_assert_true (sv_cuda_mem_get_info (&free_after, NULL, &error));
  g_assert_cmpuint (free_after, ==, free_before);
}

/* Too little device memory fails cleanly with NO_MEMORY and a message in
 * MiB; the backend is usable again once memory suffices. */
static void
test_out_of_memory (void)
{
  g_autoptr (GError) error = NULL;
  SvSlicParams p;
  Result cpu, gpu;

  if (!sv_test_need_cuda ())
    return;
  sv_slic_params_init_defaults (&p);
  p.n_segments = 200;
  g_autoptr (SvVolume) v = sv_test_blocky_volume (32, 40, 48, 1, 8);
  g_autoptr (SvBackend) backend = sv_backend_new ("cuda", &error);
  g_assert_no_error (error);
  g_setenv ("SV_CUDA_MEMORY_LIMIT_MIB", "16", TRUE);
  g_assert_false (sv_backend_set_volume (backend, v, NULL, &error));
  g_unsetenv ("SV_CUDA_MEMORY_LIMIT_MIB");
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "MiB of GPU memory"));
  g_assert_nonnull (strstr (error->message, "MiB free"));
  g_clear_error (&error);
  g_assert_false (sv_backend_run (backend, &p, NULL, NULL, &error));
  g_clear_error (&error);
  run_on (backend, v, NULL, &p, -1, &gpu);
  run_backend ("cpu", v, NULL, &p, -1, &cpu);
  assert_same (v, &cpu, &gpu);
  result_clear (&cpu);
  result_clear (&gpu);
}

/* Volumes large enough for the staged (pinned, multi-lane) host transfers,
 * 68 MiB in and out, several chunks per lane and a partial last one;
 * the second volume has the same shape, so the device buffers are reused. */
static void
test_large_transfers (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = NULL;
  SvSlicParams p;

  if (!sv_test_need_cuda ())
    return;
  backend = sv_backend_new ("cuda", &error);
  g_assert_no_error (error);
  sv_slic_params_init_defaults (&p);
  p.n_segments = 16000;
  p.compactness = 0.1;
  p.max_num_iter = 2;
  for (guint32 seed = 1; seed <= 2; seed++)
    {
      Result cpu, gpu;
      g_autoptr (SvVolume) v = sv_test_blocky_volume (70, 256, 1000, 1, seed);
      run_on (backend, v, NULL, &p, -1, &gpu);
      run_backend ("cpu", v, NULL, &p, -1, &cpu);
      assert_same (v, &cpu, &gpu);
      result_clear (&cpu);
      result_clear (&gpu);
    }
}

int
main (int argc, char **argv)
{
  /* Load every kernel when the context starts, so that the memory test sees
   * only allocations, not lazily loaded code. */
  g_setenv ("CUDA_MODULE_LOADING", "EAGER", TRUE);
  g_test_init (&argc, &argv, NULL);
  sv_backend_register (sv_backend_cuda_class ());

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/cuda/slic/bit-identical/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_bit_identical);
    }
  g_test_add_func ("/cuda/slic/lab-uint8-bit-identical", test_lab_uint8_bit_identical);
  g_test_add_func ("/cuda/slic/deterministic", test_deterministic);
  g_test_add_func ("/cuda/slic/iteration-hook", test_iteration_hook);
  g_test_add_func ("/cuda/slic/prepare-reuse", test_prepare_reuse);
  g_test_add_func ("/cuda/backend/device-labels", test_device_labels);
  g_test_add_func ("/cuda/backend/cancel-and-errors", test_cancel_and_errors);
  g_test_add_func ("/cuda/backend/memory-random-runs", test_memory_random_runs);
  g_test_add_func ("/cuda/backend/out-of-memory", test_out_of_memory);
  g_test_add_func ("/cuda/backend/large-transfers", test_large_transfers);
  return g_test_run ();
}

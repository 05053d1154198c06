/* Slow CUDA test (suite 'slow'): a 600³ binary_blobs-like volume with
 * 5 000 000 segments and compactness 0.5 gives the same labels on the CUDA
 * backend as on the CPU reference, compared by a 64-bit hash and counts.
 * Skips without a CUDA device. */
#define G_LOG_DOMAIN "sv-test-cuda"

#include <string.h>

#include "supervox/sv-backend.h"
#include "sv-cuda.h"
#include "supervox/sv-synth.h"

/* FNV-1a over the label bytes. */
static guint64
hash_labels (const gint32 *labels, gsize n)
{
  const guint8 *b = (const guint8 *)labels;
  guint64 h = 1469598103934665603ull;
  for (gsize i = 0; i < n * sizeof (gint32); i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static guint64
run_and_hash (const char *name, const SvVolume *v, const SvSlicParams *p, SvRunStats *stats)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) backend = sv_backend_new (name, &error);
  gsize n = (gsize)v->nz * v->ny * v->nx;
  gint64 t0 = g_get_monotonic_time ();

  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (backend, v, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sv_backend_run (backend, p, NULL, stats, &error));
  g_assert_no_error (error);
  g_autofree gint32 *labels = g_new (gint32, n);
  g_assert_true (sv_backend_get_labels (backend, labels, &error));
  g_assert_no_error (error);
  guint64 h = hash_labels (labels, n);
  g_test_message ("%s: %.2f s, K %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT
                  " labels, hash %016" G_GINT64_MODIFIER "x",
                  name, (g_get_monotonic_time () - t0) / 1e6, stats->n_clusters, stats->n_labels,
                  h);
  return h;
}

static void
test_large_blobs (void)
{
  g_autoptr (GError) error = NULL;
  SvSlicParams p;
  SvRunStats cpu_stats, gpu_stats;

  if (!sv_cuda_device_available (&error))
    {
      g_test_skip (error->message);
      return;
    }
  g_autoptr (SvVolume) v = sv_synth_blobs (600, 600, 600, 0.1, 0.5, 7, &error);
  g_assert_no_error (error);
  sv_slic_params_init_defaults (&p);
  p.n_segments = 5000000;
  p.compactness = 0.5;
  guint64 gpu = run_and_hash ("cuda", v, &p, &gpu_stats);
  guint64 cpu = run_and_hash ("cpu", v, &p, &cpu_stats);
  g_assert_cmpuint (cpu_stats.n_clusters, ==, gpu_stats.n_clusters);
  g_assert_cmpuint (cpu_stats.n_labels, ==, gpu_stats.n_labels);
  g_assert_cmphex (cpu, ==, gpu);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  sv_backend_register (sv_backend_cuda_class ());
  g_test_add_func ("/cuda/slic/large-blobs-matches-cpu", test_large_blobs);
  return g_test_run ();
}

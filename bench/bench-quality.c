/* Not a test: the time sv_quality_compute takes for a result of size³
 * voxels (a phantom from sv_synth_cells, block labels of about 1000
 * voxels each, numbered without gaps), with and without a pinned
 * reference to compare with.
 * bench-quality [size] [reps] [threads] (threads 0: every core). */
#include <stdlib.h>

#include "supervox/sv-quality.h"
#include "supervox/sv-synth.h"

static SvJobResult *
block_labels (guint n, guint side, guint shift, guint64 generation)
{
  SvLabels *labels = sv_labels_new (n, n, n, NULL);
  /* Numbered 1, 2, … without a gap, as a segmentation's labels are. */
  guint nb = (n - 1 + shift) / side + 1;
  gsize i = 0;

  for (guint z = 0; z < n; z++)
    for (guint y = 0; y < n; y++)
      for (guint x = 0; x < n; x++, i++)
        labels->data[i] = 1 + (gint32)((((z + shift) / side) * nb + (y + shift) / side) * nb
                                       + (x + shift) / side);
  return sv_job_result_new_for_labels (labels, generation, "bench", 0.0);
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int
main (int argc, char **argv)
{
  guint n = argc > 1 ? (guint)atoi (argv[1]) : 256;
  int reps = argc > 2 ? atoi (argv[2]) : 3;
  int threads = argc > 3 ? atoi (argv[3]) : 0;
  SvSynthParams sp;
  g_autoptr (GError) error = NULL;

  sv_synth_params_init_defaults (&sp);
  sp.nz = sp.ny = sp.nx = n;
  sp.blur_sigma = 0.0;
  g_autoptr (SvVolume) volume = sv_synth_cells (&sp, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (SvJobResult) result = block_labels (n, 10, 0, 1);
  g_autoptr (SvJobResult) reference = block_labels (n, 10, 3, 2);

  for (int with_ref = 0; with_ref < 2; with_ref++)
    {
      g_autofree double *t = g_new (double, reps);
      for (int r = 0; r < reps; r++)
        {
          gint64 start = g_get_monotonic_time ();
          g_autoptr (SvQuality) q = sv_quality_compute_threads (
              volume, result, NULL, with_ref ? reference : NULL, threads, &error);
          g_assert_no_error (error);
          t[r] = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
          if (r == 0)
            g_print ("%u^3 %s: %zu labels, EV %.17g, compactness %.17g, ARI %.17g\n", n,
                     with_ref ? "with a reference" : "alone", q->metrics.n_labels,
                     q->metrics.explained_variation, q->metrics.compactness, q->reference_ari);
        }
      qsort (t, reps, sizeof (double), compare_double);
      g_print ("%u^3 %s, threads %d: median %.3f s (min %.3f, max %.3f) over %d\n", n,
               with_ref ? "with a reference" : "alone", threads, t[reps / 2], t[0],
               t[reps - 1], reps);
    }
  return 0;
}

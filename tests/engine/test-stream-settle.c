/* Supervox tests: a streamed pass that reaches a fixed point (an iteration
 * gives back the clusters it started from, on every rank) skips the
 * iterations after it up to the run's last: the same file as running them
 * all (SV_STREAM_SETTLE=off), in one process and in ranks, with and
 * without a mask. */
#include <string.h>

#include <glib/gstdio.h>

#include "stream-cases.h"
#include "supervox/sv-params.h"
#include "supervox/sv-stream.h"
#include "sv-test-files.h"
#include "sv-test-ranks.h"

/* The run in `n_ranks` ranks (1: one process); rank 0's report. */
static SvStreamReport
run_in (guint n_ranks, const Job *job)
{
  g_autoptr (GError) error = NULL;
  g_autofree SvStreamReport *reports = g_new0 (SvStreamReport, n_ranks);
  SvStreamReport report = { 0 };

  if (n_ranks == 1)
    g_assert_true (rank_run (NULL, (gpointer)job, &report, &error));
  else
    {
      g_assert_true (sv_test_ranks_run (n_ranks, rank_run, (gpointer)job, reports, &error));
      report = reports[0];
      /* Every rank skipped alike. */
      for (guint r = 1; r < n_ranks; r++)
        g_assert_cmpuint (reports[r].iterations_settled, ==, report.iterations_settled);
    }
  g_assert_no_error (error);
  return report;
}

static void
test_settled (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_input (f, CASE_NZ, CASE_NY, CASE_NX);
  g_autofree char *every = g_build_filename (f->dir, "every.tif", NULL);
  g_autofree char *settled = g_build_filename (f->dir, "settled.tif", NULL);
  g_autofree guint8 *ball = g_new (guint8, (gsize)CASE_NZ * CASE_NY * CASE_NX);
  SvSlicParams params[4];
  guint n_settled = 0;

  make_cases (params, ball);
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    for (int masked = 0; masked < 2; masked++)
      for (guint n_ranks = 1; n_ranks <= 3; n_ranks += 2)
        {
          const guint8 *mask = masked ? ball : NULL;
          SvSlicParams long_run = params[p];
          Job job_every = { in, every, &long_run, mask, 3, 0, NULL };
          Job job_settled = { in, settled, &long_run, mask, 3, 0, NULL };
          SvStreamReport report;

          /* Long enough to settle: high compactness moves little. */
          long_run.max_num_iter = 40;
          long_run.compactness = 20;
          g_test_message ("params %u, mask %d, %u ranks", p, masked, n_ranks);
          g_setenv ("SV_STREAM_SETTLE", "off", TRUE);
          report = run_in (n_ranks, &job_every);
          g_unsetenv ("SV_STREAM_SETTLE");
          g_assert_cmpuint (report.iterations_settled, ==, 0);
          report = run_in (n_ranks, &job_settled);
          g_test_message ("  %u iterations settled", report.iterations_settled);
          n_settled += report.iterations_settled;
          sv_test_assert_same_file (every, settled);
          g_assert_cmpint (g_remove (every), ==, 0);
          g_assert_cmpint (g_remove (settled), ==, 0);
        }
  /* Some of the runs did settle. */
  g_assert_cmpuint (n_settled, >, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/engine/stream/settled-passes-skipped", Fixture, NULL, fixture_setup, test_settled,
              fixture_teardown);
  return g_test_run ();
}

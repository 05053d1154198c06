/* Supervox tests: a streamed run shared by ranks (SvStreamRanks) gives the
 * file of one process, byte for byte, however many ranks there are, and a
 * rank that fails stops them all. The ranks here are threads of this
 * process with a table written for the test, so that the engine's side is
 * checked without MPI; tests/cli/test-cli-mpi.c runs real MPI ranks. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <tiffio.h>

#include "stream-cases.h"
#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-io-zarr.h"
#include "supervox/sv-params.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-stream.h"
#include "sv-test-files.h"
#include "sv-test-ranks.h"
#include "supervox/sv-volume.h"


/* Runs the streamed SLIC in n ranks; returns rank 0's outcome and checks
 * that every rank had the same. *by_ranks (may be NULL): whether the ranks
 * ran the connectivity themselves, all of them alike. */
static gboolean
run_in_ranks_full (guint n, const char *input, const char *output, const SvSlicParams *params,
                   const guint8 *mask, guint slab_depth, guint64 memory_limit, gboolean *by_ranks,
                   GError **error)
{
  Job job = { input, output, params, mask, slab_depth, memory_limit, NULL };
  g_autofree SvStreamReport *reports = g_new0 (SvStreamReport, n);
  gboolean ok = sv_test_ranks_run (n, rank_run, &job, reports, error);

  for (guint r = 0; ok && r < n; r++)
    {
      g_assert_cmpint (reports[r].connect_by_ranks, ==, reports[0].connect_by_ranks);
      /* The ranks that ran the connectivity write their own pages. */
      g_assert_cmpint (reports[r].file_by_ranks, ==, reports[r].connect_by_ranks);
    }
  if (by_ranks != NULL)
    *by_ranks = reports[0].connect_by_ranks;
  return ok;
}

static gboolean
run_in_ranks (guint n, const char *input, const char *output, const SvSlicParams *params,
              const guint8 *mask, GError **error)
{
  return run_in_ranks_full (n, input, output, params, mask, 0, 0, NULL, error);
}

/* ---- tests ----------------------------------------------------------------- */

static void
test_identical (Fixture *f, gconstpointer data)
{
  static const guint n_ranks[] = { 2, 3, 4, 9 };
  g_autofree char *in = write_input (f, CASE_NZ, CASE_NY, CASE_NX);
  g_autofree char *one = g_build_filename (f->dir, "one.tif", NULL);
  g_autofree char *ranks = g_build_filename (f->dir, "ranks.tif", NULL);
  g_autofree guint8 *ball = g_new (guint8, (gsize)CASE_NZ * CASE_NY * CASE_NX);
  SvSlicParams params[4];

  make_cases (params, ball);
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    for (int masked = 0; masked < 2; masked++)
      {
        const guint8 *mask = masked ? ball : NULL;

        one_process (in, one, &params[p], mask);
        for (guint i = 0; i < G_N_ELEMENTS (n_ranks); i++)
          for (int all_sums = 0; all_sums < 2; all_sums++)
            {
              g_autoptr (GError) error = NULL;
              guint exchanges;

              /* The owners add the sums where the ranks' slabs reach, or
               * (SV_RANK_SUMS=all) every rank adds every cluster's. */
              g_test_message ("params %u, mask %d, %u ranks, all sums %d", p, masked, n_ranks[i],
                              all_sums);
              if (all_sums)
                g_setenv ("SV_RANK_SUMS", "all", TRUE);
              exchanges = sv_test_ranks_n_exchanges ();
              g_assert_true (run_in_ranks (n_ranks[i], in, ranks, &params[p], mask, &error));
              g_assert_no_error (error);
              g_unsetenv ("SV_RANK_SUMS");
              if (all_sums || params[p].max_num_iter == 0)
                g_assert_cmpuint (sv_test_ranks_n_exchanges (), ==, exchanges);
              else
                g_assert_cmpuint (sv_test_ranks_n_exchanges (), >, exchanges);
              sv_test_assert_same_file (one, ranks);
            }
      }
}

/* The stages a streamed run reports, in order. */
typedef struct
{
  GString *stages;
  guint last;
} StageLog;

static void
log_stage (SvStage stage, guint i, guint n, gpointer user_data)
{
  StageLog *log = user_data;
  static const char *const names[] = { "prepare", "iterate", "connect", "done" };

  g_assert_cmpint (stage, <, G_N_ELEMENTS (names));
  if (stage == SV_STAGE_ITERATE)
    {
      g_assert_cmpuint (i, ==, log->last + 1);
      g_assert_cmpuint (i, <=, n);
      log->last = i;
      if (i < n)
        return;
    }
  g_string_append_printf (log->stages, "%s%s", log->stages->len ? " " : "", names[stage]);
}

/* A streamed run reports every stage, as the in-memory pipeline does: the
 * preparation first, each iteration once and in order, then the
 * connectivity and the end. */
static void
test_stages (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_input (f, CASE_NZ, CASE_NY, CASE_NX);
  g_autofree char *out = g_build_filename (f->dir, "out.tif", NULL);
  g_autoptr (GError) error = NULL;
  StageLog log = { g_string_new (NULL), 0 };
  SvStreamOptions options;
  SvSlicParams params;

  sv_slic_params_init_defaults (&params);
  params.n_segments = 30;
  sv_stream_options_init_defaults (&options);
  options.slab_depth = 3;
  options.progress = log_stage;
  options.user_data = &log;
  g_assert_true (sv_stream_slic_run (in, out, &params, NULL, &options, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (log.last, ==, (guint)params.max_num_iter);
  g_assert_cmpstr (log.stages->str, ==, "prepare iterate connect done");
  g_string_free (log.stages, TRUE);
}

/* A volume deep enough that a rank's window (its slices, one label's
 * extent below and two above) leaves out the others' far slices: the
 * ranks' own connectivity (stream-pieces.c) cuts, joins and numbers the
 * pieces exactly as the one process does, with the splits of a small
 * max_size and the merges of a large min_size, masked and not, and over a
 * mask that leaves whole ranks empty; the legacy rule goes through rank 0
 * and gives the one process's file too. */
static void
test_pieces (Fixture *f, gconstpointer data)
{
  static const guint n_ranks[] = { 2, 3, 5 };
  const guint nz = 45, ny = 14, nx = 15;
  g_autofree char *in = write_input (f, nz, ny, nx);
  g_autofree char *one = g_build_filename (f->dir, "one.tif", NULL);
  g_autofree char *ranks = g_build_filename (f->dir, "ranks.tif", NULL);
  g_autofree guint8 *slab_mask = g_new0 (guint8, (gsize)nz * ny * nx);
  SvSlicParams params[3];

  /* Windows of most of these few slices: the ranks cut pieces only when
   * asked to (test_wide_labels has the default choice). */
  g_setenv ("SV_RANK_PIECES", "1", TRUE);
  /* Only slices 10 to 29, and a hole: ranks with nothing to label. */
  for (guint z = 10; z < 30; z++)
    for (gsize i = 0; i < (gsize)ny * nx; i++)
      slab_mask[(gsize)z * ny * nx + i] = !(z > 15 && z < 20 && i % nx > 4 && i % nx < 9);
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    {
      sv_slic_params_init_defaults (&params[p]);
      params[p].n_segments = 400;
    }
  params[1].compactness = 0.1;
  params[1].min_size_factor = 0.9;
  params[1].max_size_factor = 1.0;
  params[2].connectivity_rule = SV_CONNECTIVITY_RULE_LEGACY;
  params[2].compactness = 0.3;
  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    for (int masked = 0; masked < 2; masked++)
      {
        const guint8 *mask = masked ? slab_mask : NULL;

        one_process (in, one, &params[p], mask);
        for (guint i = 0; i < G_N_ELEMENTS (n_ranks); i++)
          {
            g_autoptr (GError) error = NULL;
            gboolean by_ranks = FALSE;

            g_test_message ("params %u, mask %d, %u ranks", p, masked, n_ranks[i]);
            g_assert_true (run_in_ranks_full (n_ranks[i], in, ranks, &params[p], mask, 3, 0,
                                              &by_ranks, &error));
            g_assert_no_error (error);
            g_assert_cmpint (by_ranks, ==,
                             params[p].connectivity_rule == SV_CONNECTIVITY_RULE_CONNECTED);
            sv_test_assert_same_file (one, ranks);
          }
      }
  /* A memory limit that a window of labels and pieces does not fit: every
   * rank goes back to rank 0's ring, with the same file. */
  {
    g_autoptr (GError) error = NULL;
    gboolean by_ranks = TRUE;

    one_process (in, one, &params[0], NULL);
    g_assert_true (run_in_ranks_full (2, in, ranks, &params[0], NULL, 3, 16 << 10, &by_ranks,
                                      &error));
    g_assert_no_error (error);
    g_assert_false (by_ranks);
    sv_test_assert_same_file (one, ranks);
  }
  /* The file written by every rank cannot take the output's name (a
   * folder has it): every rank fails with rank 0's one line, and no part
   * of the file is left beside it. */
  {
    g_autoptr (GError) error = NULL;
    g_autofree char *taken = g_build_filename (f->dir, "taken", NULL);
    g_autoptr (GDir) d = NULL;
    const char *entry;

    g_assert_cmpint (g_mkdir (taken, 0755), ==, 0);
    g_assert_false (run_in_ranks (3, in, taken, &params[0], NULL, &error));
    g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
    g_assert_nonnull (strstr (error->message, "rank 0: "));
    g_assert_nonnull (strstr (error->message, "cannot replace the file"));
    d = g_dir_open (f->dir, 0, NULL);
    while ((entry = g_dir_read_name (d)) != NULL)
      g_assert_false (g_str_has_prefix (entry, "taken."));
    g_rmdir (taken);
  }
  g_unsetenv ("SV_RANK_PIECES");
}

/* The last page's first strip no longer inflates: only the last rank
 * reads it, and every rank stops with its error; no file is left. */
static void
test_failing_rank (Fixture *f, gconstpointer data)
{
  g_autofree char *in = write_input (f, 8, 16, 16);
  g_autofree char *out = g_build_filename (f->dir, "out.tif", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) dir = NULL;
  guint64 *offsets = NULL, *counts = NULL;
  guint64 offset, count;
  SvSlicParams params;
  const char *name;
  TIFF *tif;
  FILE *file;

  tif = TIFFOpen (in, "r");
  g_assert_nonnull (tif);
  g_assert_true (TIFFSetDirectory (tif, 7));
  g_assert_true (TIFFGetField (tif, TIFFTAG_STRIPOFFSETS, &offsets));
  g_assert_true (TIFFGetField (tif, TIFFTAG_STRIPBYTECOUNTS, &counts));
  offset = offsets[0];
  count = counts[0];
  TIFFClose (tif);
  file = fopen (in, "r+b");
  g_assert_nonnull (file);
  g_assert_cmpint (fseek (file, (long)offset, SEEK_SET), ==, 0);
  for (guint64 i = 0; i < count; i++)
    fputc (0xA5, file);
  fclose (file);

  sv_slic_params_init_defaults (&params);
  params.n_segments = 20;
  g_assert_false (run_in_ranks (3, in, out, &params, NULL, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_true (g_str_has_prefix (error->message, "rank 2: "));
  dir = g_dir_open (f->dir, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_assert_cmpstr (name, ==, "in.tif");
}

static void
test_rank_range (void)
{
  guint z0, z1, next = 0;

  /* Contiguous, in rank order, covering every slice once. */
  for (guint r = 0; r < 5; r++)
    {
      sv_stream_rank_range (13, r, 5, &z0, &z1);
      g_assert_cmpuint (z0, ==, next);
      g_assert_cmpuint (z1 - z0, >=, 2);
      g_assert_cmpuint (z1 - z0, <=, 3);
      next = z1;
    }
  g_assert_cmpuint (next, ==, 13);
  sv_stream_rank_range (2, 0, 3, &z0, &z1);
  g_assert_cmpuint (z1 - z0, ==, 0);
}

/* An OME-Zarr store written by the ranks, each the chunk rows that start
 * in its slices (heads of rows sent to their owners): the one process's
 * store, file for file, for chunk rows that divide the ranks' slices or
 * not, and rows deeper than a rank's slices. */
static void
test_zarr_by_ranks (Fixture *f, gconstpointer data)
{
  static const guint depths[] = { 1, 4, 5, 64 };
  static const guint n_ranks[] = { 2, 3, 5 };
  g_autofree char *in = write_input (f, CASE_NZ, CASE_NY, CASE_NX);
  /* One name in two folders: the store's metadata holds its name. */
  g_autofree char *one_dir = g_build_filename (f->dir, "one", NULL);
  g_autofree char *ranks_dir = g_build_filename (f->dir, "ranks", NULL);
  g_autofree char *one = g_build_filename (one_dir, "labels.zarr", NULL);
  g_autofree char *ranks = g_build_filename (ranks_dir, "labels.zarr", NULL);
  SvSlicParams params[4];
  g_autofree guint8 *ball = g_new (guint8, (gsize)CASE_NZ * CASE_NY * CASE_NX);

  g_assert_cmpint (g_mkdir (one_dir, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (ranks_dir, 0700), ==, 0);

  make_cases (params, ball);
  g_setenv ("SV_RANK_PIECES", "1", TRUE);
  for (guint d = 0; d < G_N_ELEMENTS (depths); d++)
    {
      SvZarrWriteOptions zarr;
      SvStreamOptions options;
      g_autoptr (GError) error = NULL;

      sv_zarr_write_options_init_defaults (&zarr);
      zarr.chunks[0] = depths[d];
      zarr.chunks[1] = 7;
      sv_stream_options_init_defaults (&options);
      options.slab_depth = 3;
      options.write_options.zarr = &zarr;
      g_assert_true (sv_stream_slic_run (in, one, &params[0], NULL, &options, NULL, NULL, &error));
      g_assert_no_error (error);
      for (guint i = 0; i < G_N_ELEMENTS (n_ranks); i++)
        {
          Job job = { in, ranks, &params[0], NULL, 0, 0, &zarr };
          g_autofree SvStreamReport *reports = g_new0 (SvStreamReport, n_ranks[i]);

          g_test_message ("chunk rows of %u slices, %u ranks", depths[d], n_ranks[i]);
          g_assert_true (sv_test_ranks_run (n_ranks[i], rank_run, &job, reports, &error));
          g_assert_no_error (error);
          for (guint r = 0; r < n_ranks[i]; r++)
            g_assert_true (reports[r].file_by_ranks);
          sv_test_assert_same_tree (one, ranks);
          sv_test_remove_tree (ranks);
        }
      sv_test_remove_tree (one);
    }
  g_unsetenv ("SV_RANK_PIECES");
}

/* By default the ranks cut pieces only where that divides the work: with
 * labels that reach across most of the volume every rank's window would
 * hold nearly all of it, and rank 0 runs the rule after the gather
 * instead; with small labels in a deep volume each rank's window is a
 * share. The same file either way. */
static void
test_wide_labels (Fixture *f, gconstpointer data)
{
  static const struct
  {
    guint nz, n_ranks;
    gint64 n_segments;
    double compactness;
    gboolean by_ranks;
  } cases[] = {
    { 45, 3, 6, 0.01, FALSE },
    { 120, 4, 3000, 10.0, TRUE },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *in = write_input (f, cases[c].nz, 10, 11);
      g_autofree char *one = g_build_filename (f->dir, "one.tif", NULL);
      g_autofree char *ranks = g_build_filename (f->dir, "ranks.tif", NULL);
      g_autoptr (GError) error = NULL;
      gboolean by_ranks = !cases[c].by_ranks;
      SvSlicParams params;

      sv_slic_params_init_defaults (&params);
      params.n_segments = cases[c].n_segments;
      params.compactness = cases[c].compactness;
      one_process (in, one, &params, NULL);
      g_assert_true (run_in_ranks_full (cases[c].n_ranks, in, ranks, &params, NULL, 3, 0,
                                        &by_ranks, &error));
      g_assert_no_error (error);
      g_assert_cmpint (by_ranks, ==, cases[c].by_ranks);
      sv_test_assert_same_file (one, ranks);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/stream/ranks/range", test_rank_range);
  g_test_add ("/engine/stream/ranks/identical-to-one-process", Fixture, NULL, fixture_setup,
              test_identical, fixture_teardown);
  g_test_add ("/engine/stream/ranks/zarr-by-ranks", Fixture, NULL, fixture_setup,
              test_zarr_by_ranks, fixture_teardown);
  g_test_add ("/engine/stream/ranks/wide-labels-gathered", Fixture, NULL, fixture_setup,
              test_wide_labels, fixture_teardown);
  g_test_add ("/engine/stream/ranks/pieces-without-gatherer", Fixture, NULL, fixture_setup,
              test_pieces, fixture_teardown);
  g_test_add ("/engine/stream/stages-in-order", Fixture, NULL, fixture_setup, test_stages,
              fixture_teardown);
  g_test_add ("/engine/stream/ranks/failing-rank-stops-all", Fixture, NULL, fixture_setup,
              test_failing_rank, fixture_teardown);
  return g_test_run ();
}

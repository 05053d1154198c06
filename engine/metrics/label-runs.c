/* Supervox engine: each label's voxels as runs along x, in voxel order.
 *
 * Two passes over the dense labels, each thread a contiguous share of
 * rows: the first counts each label's runs in the share, the second puts
 * them where the counts say. A label's runs of share t follow those of
 * share t − 1, so they come in voxel order. */
#define G_LOG_DOMAIN "sv-engine"

#include "label-runs.h"

#include "metrics-threads.h"

typedef struct
{
  const guint32 *index; /* dense once shift is taken off */
  guint32 shift;
  gsize n_labels, n_rows;
  guint nx;
  int n_threads;
  guint64 *at;        /* n_threads × n_labels: runs counted, then where the next goes */
  guint64 *n_found;   /* n_threads */
  SvLabelRun *runs;
} RunsWork;

/* The runs of one row: each label once for every stretch of it. */
#define FOR_EACH_RUN(w, row, k, x0, x1, BODY)                                                     \
  do                                                                                               \
    {                                                                                              \
      const guint32 *line_ = (w)->index + (gsize)(row) * (w)->nx;                                  \
      for (guint x0 = 0, x1; x0 < (w)->nx; x0 = x1)                                                \
        {                                                                                          \
          const guint32 raw_ = line_[x0], k = raw_ - (w)->shift;                                   \
          for (x1 = x0 + 1; x1 < (w)->nx && line_[x1] == raw_; x1++)                               \
            ;                                                                                      \
          BODY;                                                                                    \
        }                                                                                          \
    }                                                                                              \
  while (0)

static void
count_cb (gpointer p, int t)
{
  RunsWork *w = p;
  guint64 *at = w->at + (gsize)t * w->n_labels;
  guint64 found = 0;
  gsize r0, r1;

  sv__metrics_share (w->n_rows, t, w->n_threads, &r0, &r1);
  for (gsize row = r0; row < r1; row++)
    FOR_EACH_RUN (w, row, k, x0, x1, {
      at[k]++;
      found++;
    });
  w->n_found[t] = found;
}

static void
place_cb (gpointer p, int t)
{
  RunsWork *w = p;
  guint64 *at = w->at + (gsize)t * w->n_labels;
  gsize r0, r1;

  sv__metrics_share (w->n_rows, t, w->n_threads, &r0, &r1);
  for (gsize row = r0; row < r1; row++)
    FOR_EACH_RUN (w, row, k, x0, x1,
                  w->runs[at[k]++] = ((SvLabelRun){ (guint32)row, x0, x1 }));
}

SvLabelRuns *
sv__label_runs_new (const guint32 *index, guint32 shift, gsize n_labels, guint nz, guint ny,
                    guint nx, int n_threads)
{
  const gsize n = (gsize)nz * ny * nx;
  RunsWork w = { index, shift, n_labels, (gsize)nz * ny, nx };
  g_autofree guint64 *n_found = NULL;
  SvLabelRuns *runs;
  guint64 total = 0;

  if (n == 0 || n_labels == 0 || w.n_rows > G_MAXUINT32)
    return NULL;
  w.n_threads = MAX (1, (int)MIN ((gsize)sv__metrics_threads (n_threads, n), w.n_rows));
  w.at = g_try_new0 (guint64, (gsize)w.n_threads * n_labels);
  w.n_found = n_found = g_new0 (guint64, w.n_threads);
  if (w.at == NULL)
    return NULL;
  sv__run_parallel (w.n_threads, count_cb, &w);
  for (int t = 0; t < w.n_threads; t++)
    total += n_found[t];
  runs = g_new0 (SvLabelRuns, 1);
  runs->n_labels = n_labels;
  runs->start = g_try_new (gsize, n_labels + 1);
  if (total > n / 4 || runs->start == NULL
      || (runs->runs = g_try_new (SvLabelRun, MAX (total, 1))) == NULL)
    {
      g_free (w.at);
      sv__label_runs_free (runs);
      return NULL;
    }
  /* Each label's runs after the labels before, share after share. */
  sv__metrics_place_counts (w.at, n_labels, w.n_threads, runs->start, n_threads);
  w.runs = runs->runs;
  sv__run_parallel (w.n_threads, place_cb, &w);
  g_free (w.at);
  return runs;
}

typedef struct
{
  const SvLabelRuns *runs;
  guint64 *sizes;
  int n_threads;
} SizesWork;

static void
sizes_cb (gpointer p, int t)
{
  SizesWork *w = p;
  gsize k0, k1;

  sv__metrics_share (w->runs->n_labels, t, w->n_threads, &k0, &k1);
  for (gsize k = k0; k < k1; k++)
    {
      guint64 size = 0;

      for (gsize r = w->runs->start[k]; r < w->runs->start[k + 1]; r++)
        size += w->runs->runs[r].x1 - w->runs->runs[r].x0;
      w->sizes[k] = size;
    }
}

void
sv__label_runs_sizes (const SvLabelRuns *runs, guint64 *sizes, int n_threads)
{
  SizesWork w = { runs, sizes };

  w.n_threads = (int)MIN ((gsize)sv__resolve_threads (n_threads), runs->n_labels / 4096 + 1);
  sv__run_parallel (w.n_threads, sizes_cb, &w);
}

void
sv__label_runs_free (SvLabelRuns *runs)
{
  if (runs == NULL)
    return;
  g_free (runs->start);
  g_free (runs->runs);
  g_free (runs);
}

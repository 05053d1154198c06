/* Supervox tests: the volume, parameter sets and one-process run that the
 * streamed ranks' and workers' tests compare against. */
#pragma once

#include "supervox/sv-io-zarr.h"
#include "supervox/sv-params.h"
#include "supervox/sv-stream.h"

G_BEGIN_DECLS

typedef struct
{
  char *dir;
} Fixture;

void fixture_setup (Fixture *f, gconstpointer data);
void fixture_teardown (Fixture *f, gconstpointer data);
/* Smooth structure, noise and steps, written as uint16 to DIR/in.tif. */
char *write_input (Fixture *f, guint nz, guint ny, guint nx);
/* The streamed run in one process, slabs of 3 slices. */
void one_process (const char *input, const char *output, const SvSlicParams *params,
                  const guint8 *mask);

#define CASE_NZ 7
#define CASE_NY 18
#define CASE_NX 20

/* The parameter sets and the ball mask (CASE_NZ × CASE_NY × CASE_NX) the
 * identity tests run: plain, smoothing, SLIC-zero, splits and merges. */
void make_cases (SvSlicParams params[4], guint8 *ball);

/* The streamed run a rank makes (an SvTestRankFunc; NULL ranks: one
 * process). */
typedef struct
{
  const char *input, *output;
  const SvSlicParams *params;
  const guint8 *mask;
  guint slab_depth; /* 0: 2 slices */
  guint64 memory_limit;
  const SvZarrWriteOptions *zarr; /* NULL: a TIFF */
} Job;

gboolean rank_run (const SvStreamRanks *ranks, gpointer user_data, SvStreamReport *report,
                   GError **error);

G_END_DECLS

/* Supervox GUI: one entry of the window's pin history (sv-window-pins.c):
 * labels kept to flip to and to compare with. Either a run pinned with P,
 * whose parameters can go back into the panel, or a label file opened with
 * Open Labels… (sv-window-labels.c), which has none. */
#pragma once

#include <glib.h>

#include "supervox/sv-job.h"
#include "supervox/sv-quality.h"

G_BEGIN_DECLS

typedef struct
{
  guint id;            /* 1, 2, … in the order pinned or opened: "pin 3" */
  char *path;          /* the label file; NULL for a pinned run */
  SvJobResult *result; /* the labels */
  SvQuality *quality;  /* their own numbers; NULL while they are computed */
  SvSlicParams params; /* a pinned run's parameters as the panel had them */
  char backend[16];    /* and its backend choice */
} SvPin;

/* A pinned run (a reference to `result` is taken) made with the panel's
 * `params` and `backend`. */
SvPin *sv_pin_new_run (guint id, SvJobResult *result, const SvSlicParams *params,
                       const char *backend);
/* An opened label file (`result` taken: sv_job_result_new_for_labels). */
SvPin *sv_pin_new_file (guint id, SvJobResult *result, const char *path);
void sv_pin_free (SvPin *pin);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvPin, sv_pin_free)

/* What the pin is called: "Pin 3", or the file's name ("labels.tif"). */
char *sv_pin_title (const SvPin *pin);
/* The same within a sentence: "pin 3", "labels.tif". */
char *sv_pin_name (const SvPin *pin);
/* Its first line of numbers: for a run "500 → 488 supervoxels ·
 * compactness 10" (segments asked for, supervoxels made, compactness), for
 * a file "488 supervoxels, read in 0.03 s"; superpixels when `planar`. */
char *sv_pin_summary (const SvPin *pin, gboolean planar);
/* Its second line, once its quality is known: "EV 0.873 · measured
 * compactness 0.412 · 0.52 s", with a ground truth also boundary recall
 * and achievable accuracy; "measuring…" before. */
char *sv_pin_measures (const SvPin *pin);

G_END_DECLS

/* supervox-cli: the supervoxel table and its pairs written as CSV files,
 * shared by `stats` and `slic --stats`. */
#pragma once

#include <glib.h>

#include "supervox/sv-volume.h"

G_BEGIN_DECLS

typedef struct
{
  const char *table_path;     /* the per-supervoxel CSV */
  const char *adjacency_path; /* the pairs CSV; NULL: none */
  gboolean has_background;
  gint32 background;
  int channel;      /* of the image; −1: every channel */
  guint slab_depth; /* 0: decide */
  int n_threads;    /* <= 0: all processors */
} SvCliStatsRequest;

/* The background of a label file: start_label − 1 as its sidecar
 * (labels.json) records it, else 0 as scikit-image's regionprops takes
 * it. *from_sidecar tells which. */
gint32 sv_cli_stats_background (const char *labels_path, gboolean *from_sidecar);

/* Computes the table of the label file `labels_path`, or of `labels` in
 * memory (then labels_path is NULL), with the image file `image_path` (may
 * be NULL), reading slab by slab, and writes the CSV files through
 * temporary names renamed at the end: on failure none is left. *n_rows
 * and *n_pairs (may be NULL) receive the counts. Errors name the file. */
gboolean sv_cli_stats_write (const SvCliStatsRequest *request, const char *labels_path,
                             const SvLabels *labels, const char *image_path, gsize *n_rows,
                             gsize *n_pairs, GError **error);

G_END_DECLS

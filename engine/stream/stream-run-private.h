/* Supervox engine: a streamed run's state, shared by stream-slic.c (the
 * passes) and stream-labels.c (the last assignment made labels, and the
 * label file). Not public API. */
#pragma once

#include "stream-private.h"

G_BEGIN_DECLS

typedef struct
{
  const SvSlicParams *params;
  const SvStreamOptions *options;
  SvStreamMask mask;
  SvStreamImage image;
  SvPrepared view; /* the image's shape and max_abs, no data */
  SvSlicContext ctx;
  SvSlabPlan plan;            /* the slabs and the backends that run their steps */
  SvBackend *own_cpu;         /* the CPU backend made when the caller gave none */
  /* The caller's backends (options->backends, or those awaited). */
  SvBackend *const *backends;
  guint n_backends;
  guint depth_chosen; /* the slab depth before the devices shared it out */
  const SvStreamRanks *ranks; /* NULL: one process */
  guint z_begin, z_end;       /* this rank's slices */
  SvClusters clusters;
  guint nz, ny, nx, nc, depth;
  gsize plane;
  const char *input; /* the image file (NULL: options->source) */
  const char *output;
  gint32 *nearest; /* depth slices */
  gint64 *sums;    /* a pass's centre sums, k·(4 + nc), made once */
  SvSpill *spill;
  SvStreamRoom room;     /* what is kept in host memory between passes */
  guint passes_done;     /* assignment passes over the slabs */
  gboolean keep_asked;   /* the workers were asked to keep the assignment */
  /* Under the owners' exchange this rank holds only the centres within
   * reach of its slices (stream-rank-sums.c). */
  gboolean centres_in_reach;
  /* Labels after the ranks' connectivity (stream-pieces.c), which left
   * nothing for rank 0 to do but copy them; −1 before or without it. */
  gint64 connected_labels;
} Run;

/* What the final pass learns about the labels. */
typedef struct
{
  gboolean negative; /* some label < 0: the file is int32 */
  gsize n_in;        /* mask-in voxels */
  gint64 n_distinct; /* distinct labels, background excluded */
  guint max_extent;  /* largest z extent of one label, in slices, minus one */
} LabelSummary;

/* Points the context's mask at slab [z0, z1) (a mask file is read a slab
 * at a time). */
gboolean sv__stream_run_mask_slab (Run *run, guint z0, guint z1, GError **error);

/* ---- stream-plan.c ---- */

/* The backends that run the slab steps and the slabs they share
 * (run->plan), with several workers' sums and first-pass readers. */
gboolean sv__stream_run_plan_workers (Run *run, const SvTiffReadOptions *read_options,
                                      GError **error);
void sv__stream_run_plan_clear (SvSlabPlan *plan);
/* Before a pass whose assignment is needed again: asks the workers, once,
 * to keep it in their own memory, all or none. */
gboolean sv__stream_run_try_keep (Run *run, GError **error);

/* ---- stream-rank-sums.c ---- */

/* The clusters [*b0, *b1) this rank's slabs can add to, from the centres
 * the next pass uses. */
void sv__stream_rank_band (const Run *run, gsize *b0, gsize *b1);
/* Clears what a rank adds to before a pass: its band [b0, b1) of `sums`
 * and the clusters it owns. */
void sv__stream_rank_sums_zero (const Run *run, gint64 *sums, gsize b0, gsize b1);
/* After a pass over band [b0, b1) of `sums` (cleared as above): the ranks'
 * sums added by the clusters' owners, and each rank given the centres
 * within reach of its slices (the others are dead on that rank).
 * FALSE (nothing done, every rank alike) when the ranks cannot exchange
 * (SV_RANK_SUMS=all asks for the sums over every cluster instead). */
gboolean sv__stream_rank_sums_apply (Run *run, gint64 *sums, gsize b0, gsize b1);
/* Every live centre to every rank, after the iterations: the fill of
 * voxels that no live window reached looks for the nearest live centre
 * however far it is. Does nothing unless run->centres_in_reach. */
void sv__stream_rank_centres_all (Run *run);

/* ---- stream-labels.c ---- */

/* The last assignment becomes labels: unreached voxels take the nearest
 * live centre, indices become labels (on the device that kept the
 * assignment, or through the spill file); *sum says what they add up to,
 * over every rank. */
gboolean sv__stream_run_final_labels (Run *run, gboolean iterated, LabelSummary *sum,
                                      GError **error);
/* Connectivity (or a copy) of the labels into the label file at `output`,
 * which carries the calibration sv_label_calibration gives for the
 * input's spacing and unit; stats->n_labels and the report's connectivity
 * fields are set. */
/* Every rank's labels to rank 0: into its device's kept labels when it
 * keeps them, else into its spill file (sv__stream_gather_labels). */
gboolean sv__stream_run_gather_labels (Run *run, GError **error);

gboolean sv__stream_run_write_labels (Run *run, const char *output, const double spacing[3],
                                      const char *unit, const LabelSummary *summary,
                                      SvRunStats *stats, SvStreamReport *report, GError **error);

/* ---- stream-pieces.c ---- */

/* Whether the ranks run the connectivity themselves (several ranks with
 * a broadcast, the connected rule, the labels in the spill, and every
 * rank's window within the memory limit); `extent`: LabelSummary.max_extent.
 * Every rank calls it at the same point and gets the same answer. */
gboolean sv__stream_pieces_applies (const Run *run, guint extent);
/* On every rank, after the final labels: the connected rule over the whole
 * volume, each rank relabelling its own slices in the spill (`extent`:
 * LabelSummary.max_extent). Returns the number of labels, −1 with `error`
 * set on every rank. */
gint64 sv__stream_pieces_connect (Run *run, guint extent, gint64 min_size, gint64 max_size,
                                  GError **error);

/* ---- stream-device-pieces.c ---- */

/* An output that the devices may write at once, each its own slices
 * (an OME-Zarr store's rows of chunks, or a TIFF's pages, which its
 * parts hand over in turn): `open` gives a part of it for the
 * slices from z0 on (z0 a multiple of `row_depth`) with its own sink's
 * data and, when the file takes compressed chunks, strips whose
 * user_data is that part; `close` finishes it (ok) or drops it. */
typedef struct
{
  guint row_depth;
  gpointer (*open) (guint z0, gpointer user_data, SvStripSink *strips, GError **error);
  gboolean (*close) (gpointer part, gboolean ok, GError **error);
  gpointer user_data;
} SvShareParts;

/* The connected rule shared by the run's devices, each numbering and
 * relabelling the pieces of the slices it kept, then handing them to
 * `sink` or compressed to `strips` (`source` and `device_source` read
 * another device's slices; `extent`: LabelSummary.max_extent): in z order,
 * or with `parts` (may be NULL) each device to a part of its own at once,
 * when the devices' slices begin at the parts' rows. Returns the number
 * of labels (*n_devices: the devices that shared it, *held: the most
 * slices one held at once), −1 when it does not apply (several workers
 * that keep the assignment on devices with these steps, one process,
 * room on every device; a store's compressed chunks only with parts;
 * nothing written), −2 with `error` set. SV_DEVICE_PIECES=0 turns it
 * off. */
gint64 sv__stream_device_pieces (Run *run, guint extent, gint64 min_size, gint64 max_size,
                                 SvSlabSource source, SvSlabDeviceSource device_source,
                                 SvSlabSink sink, const SvStripSink *strips,
                                 const SvShareParts *parts, gpointer user_data, guint *n_devices,
                                 guint *held, GError **error);

/* ---- stream-rank-file.c ---- */

/* Whether every rank writes its own pages of the label file (after the
 * ranks' own connectivity, into a TIFF). */
gboolean sv__stream_rank_file_applies (const Run *run);
/* On every rank: the label file at `output` from each rank's slices in
 * the spill, as sv__stream_run_write_labels would write it; every rank
 * gets the outcome. */
gboolean sv__stream_rank_file_write (Run *run, const char *output, const double spacing[3],
                                     const char *unit, const LabelSummary *summary,
                                     SvRunStats *stats, GError **error);

/* ---- stream-rank-zarr.c ---- */

/* The same for an OME-Zarr store: every rank writes the chunk rows that
 * start in its slices. */
gboolean sv__stream_rank_zarr_applies (const Run *run);
gboolean sv__stream_rank_zarr_write (Run *run, const char *output, const double spacing[3],
                                     const char *unit, const LabelSummary *summary,
                                     SvRunStats *stats, GError **error);

G_END_DECLS

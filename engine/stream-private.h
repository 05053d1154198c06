/* Supervox engine: what the streaming files share. Not public API
 * (engine/stream.h is). */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "supervox/sv-io-slab.h"
#include "supervox/sv-params.h"
#include "supervox/sv-prepare.h"
#include "supervox/sv-slic.h"
#include "supervox/sv-stream.h"

G_BEGIN_DECLS

/* A volume in a temporary file (stream-spill.c, below). */
typedef struct _SvSpill SvSpill;

/* ---- the prepared image, slab by slab (stream-image.c) ------------------ */

/* The image that sv_prepare would make, served a slab at a time: slices
 * are read in the file's type, converted (img_as_float), rescaled with the
 * global statistics, converted to Lab, and smoothed with `halo` slices read
 * beyond the slab on each side (the z kernel's radius), which reproduces
 * the whole-volume filter exactly because its axes are separable. */
typedef struct
{
  SvTiffSlabReader *reader;   /* borrowed */
  const SvStreamRanks *ranks; /* borrowed; NULL: one process */
  guint z_begin, z_end;       /* the slices this rank prepares */
  const guint8 *mask;         /* borrowed; NULL or nz·ny·nx bytes */
  guint nz, ny, nx, nc;
  gboolean lab;
  float sigma[3];
  guint halo;
  int n_threads;
  float shift, scale;
  gboolean divide;
  float max_abs;              /* as SvPrepared's */
  guint max_depth;            /* slices per slab, now */
  guint8 *raw;                /* (max_depth + 2 halo) slices in the file's type, or NULL */
  float *work;                /* the same slices as float32 */
  guint cached_z0, cached_z1; /* the slab `work` holds prepared; empty: z0 == z1 */
  guint cached_a;             /* first slice in `work` */
  guint64 passes;             /* statistics passes made */
  guint64 slices_read;        /* slices read from the image file */
  /* With smoothing, the prepared image as float32 after the statistics
   * passes, so that iterations read it instead of smoothing again. */
  SvSpill *prepared;
} SvStreamImage;

/* Opens the image and makes the two statistics passes (min/max for the
 * rescale, then max |value| of the prepared image) in slabs of scan_depth
 * slices, then sets up slabs of at most max_depth slices for the
 * iterations. With smoothing, the second pass keeps the prepared image in
 * a temporary file beside `beside`, which the iterations read without a
 * halo. With ranks, each rank passes over its own z range and the
 * statistics are combined as one pass over the whole volume would make
 * them. Errors as sv_prepare's. */
gboolean sv__stream_image_init (SvStreamImage *img, SvTiffSlabReader *reader, const guint8 *mask,
                                const SvSlicParams *params, guint scan_depth, guint max_depth,
                                int n_threads, const char *beside, const SvStreamRanks *ranks,
                                GError **error);
void sv__stream_image_clear (SvStreamImage *img);
/* Frees the slab buffers only. */
void sv__stream_image_clear_buffers (SvStreamImage *img);

/* The prepared values of slices [z0, z1) (z1 − z0 <= max_depth), channel
 * fastest; valid until the next call. */
const float *sv__stream_image_slab (SvStreamImage *img, guint z0, guint z1, GError **error);

/* Halo slices for sigma_z: the kernel radius, (int)(4σ + 0.5). */
guint sv__stream_halo (float sigma_z);

/* ---- volumes spilled to disk (stream-spill.c) ---------------------------- */

/* nz raw slices of slice_bytes in a temporary file beside the output,
 * named after `what`; removed when freed (and by the system if the process
 * dies: it is unlinked at once). */
SvSpill *sv__spill_new (const char *beside, const char *what, guint nz, gsize slice_bytes,
                        GError **error);
void sv__spill_free (SvSpill *spill);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvSpill, sv__spill_free)
gboolean sv__spill_write (SvSpill *spill, guint z0, guint z1, gconstpointer slices, GError **error);
gboolean sv__spill_read (SvSpill *spill, guint z0, guint z1, gpointer slices, GError **error);

/* ---- one pass over the slabs (stream-workers.c) ------------------------ */

typedef enum
{
  SV_SLAB_ASSIGN, /* assignment and sums (SvSlabSteps.assign_sum) */
  SV_SLAB_MAXIMA, /* SLIC-zero maxima from the kept assignment */
} SvSlabPassKind;

/* What a pass needs besides the clusters: the slabs of this rank, where
 * the image and the kept assignments are, and who runs the steps. */
typedef struct
{
  SvStreamImage *image;
  SvSpill *spill; /* the kept assignments, nz slices */
  SvBackend *const *workers;
  guint n_workers;
  guint z_begin, z_end, depth;
  gsize plane;
  GCancellable *cancellable;
} SvSlabPlan;

/* Runs the slab steps of one pass over every slab of `plan`: ASSIGN adds
 * the pass's sums to `sums` and, with `keep`, writes the assignments to
 * the spill file; MAXIMA reads them back and raises `maxima` (k). */
gboolean sv__slab_pass (const SvSlabPlan *plan, SvSlabPassKind kind, gboolean keep,
                        const SvSlicContext *ctx, const SvClusters *clusters, gint64 *sums,
                        float *maxima, GError **error);

/* ---- connectivity across slabs (stream-connectivity.c) ------------------- */

/* sv_connectivity_enforce over the labels in `spill` (nz slices of ny·nx
 * int32),
 * written to `writer`, holding `window` slices at once: window must be at
 * least the largest z extent of one input label plus 3 (a search that
 * starts in slice z stays inside its label's extent and looks one slice
 * further on each side). Checks `cancellable` (may be NULL) at each slice.
 * Returns the number of labels, or −1 with `error` set. */
gint64 sv__stream_connectivity (SvSpill *spill, guint nz, guint ny, guint nx, guint window,
                                gint64 min_size, gint64 max_size, int start_label,
                                SvTiffLabelWriter *writer, guint out_depth,
                                GCancellable *cancellable, GError **error);

/* ---- several processes (stream-ranks.c) --------------------------------- */

/* Hands every rank's labels (its slices of the nz-slice spill file) to
 * rank 0's spill file, `depth` slices per message through `buffer`, then
 * agrees. Without ranks it does nothing. */
gboolean sv__stream_gather_labels (const SvStreamRanks *ranks, SvSpill *spill, guint nz,
                                   gsize plane, gint32 *buffer, guint depth, GError **error);

G_END_DECLS

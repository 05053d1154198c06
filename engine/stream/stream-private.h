/* Supervox engine: what the streaming files share. Not public API
 * (engine/stream.h is). */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "supervox/sv-backend-class.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-params.h"
#include "supervox/sv-prepare.h"
#include "supervox/sv-seeds.h"
#include "supervox/sv-slic.h"
#include "supervox/sv-stream.h"

G_BEGIN_DECLS

/* A volume in a temporary file (stream-spill.c, below). */
typedef struct _SvSpill SvSpill;

/* ---- the mask, slab by slab (stream-mask.c) ------------------------------ */

/* A streamed run's mask: the caller's bytes (whole), or a mask file read a
 * slab at a time and converted as sv_tiff_read_mask converts it. */
typedef struct
{
  const guint8 *whole;      /* borrowed; or NULL */
  SvTiffSlabReader *reader; /* the mask file or the caller's; or NULL */
  gboolean own_reader;      /* the file's, opened here */
  char *name;               /* its display name */
  guint nz;
  gsize plane;
  guint8 *bytes; /* slices [z0, z1) of the file, capacity slices */
  guint8 *raw;   /* one slice in the file's type, when wider than a byte */
  guint capacity, z0, z1;
  guint64 slices_read;
} SvStreamMask;

/* Serves `whole` (may be NULL: no mask), or with a path the mask file, or
 * the caller's `source` (borrowed), which must be one sample of nz·ny·nx.
 * Errors name the mask. */
gboolean sv__stream_mask_open (SvStreamMask *m, const guint8 *whole, const char *path,
                               SvTiffSlabReader *source, const char *source_name, guint nz,
                               guint ny, guint nx, int n_threads, GError **error);
void sv__stream_mask_clear (SvStreamMask *m);

/* TRUE when there is a mask. */
static inline gboolean
sv__stream_mask_any (const SvStreamMask *m)
{
  return m != NULL && (m->whole != NULL || m->reader != NULL);
}

/* The mask over slices [z0, z1), addressed as the whole mask (p[z·ny·nx +
 * …] for z in the range); valid until a call for slices it does not hold.
 * NULL without a mask, or with `error` set when the file fails. */
const guint8 *sv__stream_mask_slab (SvStreamMask *m, guint z0, guint z1, GError **error);

/* maskSLIC's seeds (sv_seeds_mask) with a mask file read `depth` slices at
 * a time. */
gboolean sv__stream_mask_seeds (SvStreamMask *m, const guint shape[3], gint64 n_segments,
                                guint depth, SvSeeds *seeds, GError **error);

/* ---- reading the next slab ahead (stream-read-ahead.c) ------------------- */

typedef struct _SvReadAhead SvReadAhead;

/* A second buffer of `capacity` bytes for slabs of `reader`; NULL when
 * there is no memory for it. */
SvReadAhead *sv__read_ahead_new (SvTiffSlabReader *reader, gsize capacity);
void sv__read_ahead_free (SvReadAhead *ra);

/* Starts reading slices [z0, z1) on a thread (after the read under way);
 * nothing when they do not fit or no thread can start. */
void sv__read_ahead_start (SvReadAhead *ra, guint z0, guint z1);

/* Slices [z0, z1) into *buffer (capacity bytes): when they are the ones
 * read ahead, the buffers swap; otherwise they are read now. The reader is
 * the caller's again when this returns. */
gboolean sv__read_ahead_read (SvReadAhead *ra, guint z0, guint z1, guint8 **buffer, GError **error);

/* Reads that the thread had done when they were asked for. */
guint64 sv__read_ahead_hits (const SvReadAhead *ra);

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
  SvStreamMask *mask;         /* borrowed; NULL: no mask */
  guint nz, ny, nx, nc;
  gboolean lab;
  float sigma[3];
  guint halo;
  int n_threads;
  float shift, scale;
  gboolean divide;
  /* Lab of a source scikit-image computes in float64: rescale and Lab in
   * float64 (sv_rgb_to_lab_double) instead of shift, scale and divide. */
  gboolean lab64;
  SvRescale64 rescale64;
  float max_abs;              /* as SvPrepared's */
  guint max_depth;            /* slices per slab, now */
  guint8 *raw;                /* (max_depth + 2 halo) slices in the file's type, or NULL */
  gboolean read_ahead;        /* read the next slab while this one computes */
  SvReadAhead *ahead;         /* with raw, when read_ahead */
  guint64 slabs_read_ahead;   /* slabs the thread had read when they were asked for */
  float *work;                /* the same slices as float32 */
  guint cached_z0, cached_z1; /* the slab `work` holds prepared; empty: z0 == z1 */
  guint cached_a;             /* first slice in `work` */
  guint64 passes;             /* statistics passes made */
  guint64 slices_read;        /* slices read from the image file */
  guint64 slabs_read_by_workers; /* slabs the workers read with their own readers */
  /* With smoothing, the prepared image as float32 after the statistics
   * passes (prepared_full): its first slices in host memory, within the
   * keep budget, the others in a temporary file. Otherwise the slabs that
   * sv__stream_image_keep put in a temporary file. */
  SvSpill *prepared;
  gboolean prepared_full;
  const char *beside; /* where the temporary file goes (borrowed) */
  /* Kept slabs hold the file's samples, from which the prepared values
   * are computed again when they are read back (no Lab, no smoothing,
   * samples narrower than float32: sv__stream_kept_value_bytes); else
   * the prepared float32 values. */
  gboolean keep_samples;
  /* The iterations' slabs (slot i: z_begin + i·max_depth), kept after
   * their first pass so that none is prepared twice: in host memory while
   * keep_budget bytes last, the others in `prepared`. */
  guint8 **kept;
  guint8 *spilled; /* slot i is in `prepared` */
  guint n_slots;
  guint64 keep_budget; /* host bytes left for kept slabs */
  guint64 kept_bytes;  /* host bytes they hold */
  guint64 spilled_bytes;
  guint n_resident;     /* slabs a backend took into its own memory instead */
  guint raw_z0, raw_z1; /* the slices `raw` holds; empty: raw_z0 == raw_z1 */
} SvStreamImage;

/* Opens the image and makes the two statistics passes (min/max for the
 * rescale, then max |value| of the prepared image) in slabs of scan_depth
 * slices, then sets up slabs of at most max_depth slices for the
 * iterations. With smoothing, the second pass keeps the prepared image,
 * which the iterations read without a halo: as far as keep_budget bytes
 * go in host memory, the rest in a temporary file beside `beside`.
 * Without, keep_budget is what sv__stream_image_keep may hold in host
 * memory. With ranks, each rank passes over its own z range and the
 * statistics are combined as one pass over the whole volume would make
 * them. Errors as sv_prepare's. */
gboolean sv__stream_image_init (SvStreamImage *img, SvTiffSlabReader *reader, SvStreamMask *mask,
                                const SvSlicParams *params, guint scan_depth, guint max_depth,
                                int n_threads, gboolean read_ahead, guint64 keep_budget,
                                const char *beside, const SvStreamRanks *ranks, GError **error);
void sv__stream_image_clear (SvStreamImage *img);
/* Frees the slab buffers only. */
void sv__stream_image_clear_buffers (SvStreamImage *img);

/* The prepared values of slices [z0, z1) (z1 − z0 <= max_depth), channel
 * fastest; valid until the next call. */
const float *sv__stream_image_slab (SvStreamImage *img, guint z0, guint z1, GError **error);

/* How the iterations' slabs are made from the file's samples, when that
 * is all there is to it (integer samples, no Lab, no smoothing): a backend
 * may then take the samples and prepare them itself
 * (SvSlabSteps.take_samples). FALSE otherwise. */
gboolean sv__stream_image_samples_how (const SvStreamImage *img, SvSlabSamples *how);
/* TRUE when slab [z0, z1) is kept (in host memory or a temporary file)
 * or cached, so that sv__stream_image_slab would not read the file. */
gboolean sv__stream_image_has_slab (const SvStreamImage *img, guint z0, guint z1);
/* Slices [z0, z1) as the file holds them; valid until the next call.
 * sv__stream_image_slab for the same slab then converts them without
 * reading them again. */
const void *sv__stream_image_samples (SvStreamImage *img, guint z0, guint z1, GError **error);

/* Keeps slab [z0, z1), the one the last sv__stream_image_slab returned,
 * for the next passes (as its samples with keep_samples): in host memory
 * if the budget allows, else in the temporary file. Does nothing for a
 * slab already kept. */
gboolean sv__stream_image_keep (SvStreamImage *img, guint z0, guint z1, GError **error);

/* Halo slices for sigma_z: the kernel radius, (int)(4σ + 0.5). */
guint sv__stream_halo (float sigma_z);

/* Below this many values a slab is converted or scanned on one thread. */
#define SV_STREAM_PARALLEL_VALUES 8192

/* What stream-image.c shares with stream-statistics.c. */
/* Reads slices [a, b) into img->raw in the file's type. */
gboolean sv__stream_image_read_raw (SvStreamImage *img, guint a, guint b, GError **error);
/* Slices [a, b) into img->work as float32 (img_as_float); samples just
 * handed out (sv__stream_image_samples) are not read again. */
gboolean sv__stream_image_read_float (SvStreamImage *img, guint a, guint b, GError **error);
/* Bytes per sample of the file. */
gsize sv__stream_image_sample_bytes (const SvStreamImage *img);
/* Starts reading the slab after one ending at z1 (with `halo` slices each
 * side) on the read-ahead thread. */
void sv__stream_image_read_ahead_next (SvStreamImage *img, guint z1, guint halo);
/* The statistics passes (stream-statistics.c): img->shift, scale, divide
 * and max_abs, in slabs of img->max_depth slices. */
gboolean sv__stream_image_scan_statistics (SvStreamImage *img, GError **error);
/* Integer samples: never NaN or infinite, and img_as_float does not
 * decrease with them. */
gboolean sv__integer_samples (SvSampleType type);

/* ---- volumes spilled to disk (stream-spill.c) ---------------------------- */

/* nz raw slices of slice_bytes: slices [host_z0, host_z0 + host_slices)
 * in host memory (none when it cannot be had), the others in a temporary
 * file beside the output, named after `what`, opened now when there are
 * others; removed when freed (and by the system if the process dies: it
 * is unlinked at once). Threads may write different slices at once. */
SvSpill *sv__spill_new (const char *beside, const char *what, guint nz, gsize slice_bytes,
                        guint host_z0, guint host_slices, GError **error);
void sv__spill_free (SvSpill *spill);
/* Threads that large copies to and from host memory may take (<= 0: every
 * processor); one until set. */
void sv__spill_set_threads (SvSpill *spill, int n_threads);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvSpill, sv__spill_free)
gboolean sv__spill_write (SvSpill *spill, guint z0, guint z1, gconstpointer slices, GError **error);
gboolean sv__spill_read (SvSpill *spill, guint z0, guint z1, gpointer slices, GError **error);
/* Slices [z0, z1) where the host part holds them all, without a copy;
 * NULL otherwise. */
gconstpointer sv__spill_peek (const SvSpill *spill, guint z0, guint z1);
/* Bytes of the slices written to the file, and to the host part (0 for
 * NULL). */
guint64 sv__spill_file_bytes (const SvSpill *spill);
guint64 sv__spill_host_bytes (const SvSpill *spill);
/* sv__spill_read as an SvSlabSource (user_data: the spill). */
gboolean sv__spill_source (guint z0, guint z1, gint32 *labels, gpointer user_data, GError **error);

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
  SvStreamMask *mask; /* the run's mask, served a slab at a time */
  SvSpill *spill;     /* the kept assignments, nz slices */
  SvBackend *const *workers;
  guint n_workers;
  guint z_begin, z_end, depth;
  gsize plane;
  GCancellable *cancellable;
  /* Every worker keeps the assignment of the slabs it takes in its own
   * memory (SvSlabSteps.keep_assignment): no spill file for it. */
  gboolean assignment_kept;
  /* With several workers, each one's sums for a pass (k·(4 + nc)), made
   * once for the run; NULL with one worker, which adds into the pass's. */
  gint64 **worker_sums;
  /* Worker w's band of clusters in the last assignment pass, [2w, 2w + 1)
   * (NULL: not kept): SLIC-zero's maxima read that assignment's clusters,
   * whose centres have moved since. */
  gsize *assign_band;
  /* With several workers whose backends take the file's samples: each
   * one's own reader of the image and buffer of a slab, so that the first
   * pass reads and hands over slabs on every worker at once instead of in
   * turn under the pass's lock (sv__slab_plan_open_readers); NULL
   * otherwise, and after the first pass. */
  SvTiffSlabReader **readers;
  guint8 **raw;
} SvSlabPlan;

/* The worker that takes the slab-th slab: each takes a run of
 * neighbouring slabs, as even as their count allows, so that the clusters
 * it sums are a narrow band of cluster numbers (seeds are numbered z
 * first) and only that band of the sums comes back from it. */
static inline guint
sv__slab_plan_worker (const SvSlabPlan *plan, guint slab)
{
  const guint n_slabs = (plan->z_end - plan->z_begin + plan->depth - 1) / plan->depth;

  return (guint)((guint64)slab * plan->n_workers / MAX (n_slabs, 1));
}

/* The slices of the slabs that worker w takes: [z0, z1), empty when it
 * takes none. */
static inline void
sv__slab_plan_worker_slices (const SvSlabPlan *plan, guint w, guint *z0, guint *z1)
{
  const guint64 n_slabs = (plan->z_end - plan->z_begin + plan->depth - 1) / plan->depth;
  const guint64 n_workers = MAX (plan->n_workers, 1);
  /* The first slab whose worker (sv__slab_plan_worker) is w, and w + 1. */
  const guint64 first = ((guint64)w * n_slabs + n_workers - 1) / n_workers;
  const guint64 end = ((guint64)(w + 1) * n_slabs + n_workers - 1) / n_workers;

  *z0 = (guint)MIN (plan->z_begin + first * plan->depth, plan->z_end);
  *z1 = (guint)MIN (plan->z_begin + end * plan->depth, plan->z_end);
}

/* The worker that takes slab z0. */
static inline SvBackend *
sv__slab_plan_owner (const SvSlabPlan *plan, guint z0)
{
  return plan->workers[sv__slab_plan_worker (plan, (z0 - plan->z_begin) / plan->depth)];
}

/* Runs the slab steps of one pass over every slab of `plan`: ASSIGN adds
 * the pass's sums to `sums` and, with `keep`, writes the assignments to
 * the spill file; MAXIMA reads them back and raises `maxima` (k). */
gboolean sv__slab_pass (const SvSlabPlan *plan, SvSlabPassKind kind, gboolean keep,
                        const SvSlicContext *ctx, const SvClusters *clusters, gint64 *sums,
                        float *maxima, GError **error);
/* Gives each of the plan's several workers its own reader of the file at
 * `input` (read as `options` says, its share of their threads) and slab
 * buffer of `slab_bytes`, when the image's slabs are the file's samples
 * (sv__stream_image_samples_how), there is no mask and every worker's
 * backend takes samples; does nothing otherwise, or when a reader cannot
 * be opened or a buffer had (the pass then reads under its lock). */
void sv__slab_plan_open_readers (SvSlabPlan *plan, const char *input,
                                 const SvTiffReadOptions *options, gsize slab_bytes);
void sv__slab_plan_close_readers (SvSlabPlan *plan);

/* ---- connectivity across slabs (stream-connectivity.c) ------------------- */

/* sv_connectivity_enforce over the labels that `source` reads a slice at a
 * time (nz slices of ny·nx int32; sv__spill_source reads a spill file),
 * written to `writer`, holding `window` slices at once: window must be at
 * least the largest z extent of one input label plus 3 (a search that
 * starts in slice z stays inside its label's extent and looks one slice
 * further on each side). Checks `cancellable` (may be NULL) at each slice.
 * Returns the number of labels, or −1 with `error` set. */
gint64 sv__stream_connectivity (SvSlabSource source, gpointer source_data, guint nz, guint ny,
                                guint nx, guint window, gint64 min_size, gint64 max_size,
                                int start_label, SvConnectivityRule rule,
                                SvTiffLabelWriter *writer, guint out_depth,
                                GCancellable *cancellable, GError **error);

/* ---- slab sizes from the memory limit (stream-sizing.c) ----------------- */

/* What one slab of a streamed run holds at most, whatever the limit. */
#define SV_STREAM_SLAB_TARGET_BYTES (G_GUINT64_CONSTANT (4) << 30)

/* Slices of `per_slice` bytes that fit in `limit` (0: 1 GiB) beside
 * `fixed`: at least 1, at most nz and SV_STREAM_SLAB_TARGET_BYTES. */
guint sv__stream_depth_within (guint64 per_slice, guint64 fixed, guint64 limit, guint nz);

/* A streamed run's volume as its slabs are sized: the shape, one slice's
 * bytes in the file's sample type, a mask and whether it is read from a
 * file a slab at a time. */
typedef struct
{
  guint nz, ny, nx, nc;
  guint64 slice_bytes;
  gboolean mask, mask_file;
} SvStreamSlabShape;

/* Slices per slab of the iterations of such a volume under `limit` bytes
 * (0: 1 GiB): what sv__stream_choose_depth decides from the file, and the
 * run plan (run-plan.c) from the header. */
guint sv__stream_depth_for (const SvStreamSlabShape *shape, gint64 n_segments, guint64 limit);

/* Slices per slab of the iterations under `limit` bytes (0: 1 GiB); mask:
 * there is one, mask_file: read from a file a slab at a time. */
guint sv__stream_choose_depth (const SvTiffSlabReader *reader, gboolean mask, gboolean mask_file,
                               gint64 n_segments, guint64 limit);
/* The shape of the volume `reader` reads. */
SvStreamSlabShape sv__stream_reader_shape (const SvTiffSlabReader *reader, gboolean mask,
                                           gboolean mask_file);

/* Bytes per value of the prepared slabs kept between passes: the file's
 * sample (sample_bytes) when it is narrower than float32 and the prepared
 * value is computed from it alone (no Lab, no smoothing), else 4. */
guint sv__stream_kept_value_bytes (gsize sample_bytes, gboolean lab, gboolean smoothed);

/* What one process of a streamed run keeps between passes. */
typedef struct
{
  guint prepared_slices; /* the slices it prepares (its z range) */
  guint label_slices;    /* the labels it holds before connectivity (rank 0: all) */
  guint value_bytes;     /* sv__stream_kept_value_bytes */
  gboolean smoothed;     /* the prepared image is smoothed: one volume, slice by slice */
} SvStreamKept;

/* That of a run of `params` on a volume of nz slices of nc channels whose
 * samples have sample_bytes. */
void sv__stream_kept_for (const SvSlicParams *params, guint nz, guint nc, gsize sample_bytes,
                          guint prepared_slices, guint label_slices, SvStreamKept *kept);

/* Where it goes: host memory first, as far as the limit leaves beside the
 * iterations' slabs of `depth` slices (the prepared slabs, then the
 * labels), temporary files for the rest. */
typedef struct
{
  guint64 prepared_bytes, prepared_host;
  guint64 labels_bytes, labels_host;
  gboolean smoothed;
  guint64 left; /* what the limit leaves after all of that */
} SvStreamRoom;

/* The room under `limit` (0: 1 GiB). */
void sv__stream_room (const SvStreamSlabShape *shape, gint64 n_segments, guint depth, guint64 limit,
                      const SvStreamKept *kept, SvStreamRoom *room);
/* The same for the file `reader` reads. */
void sv__stream_run_room (const SvTiffSlabReader *reader, gboolean mask, gboolean mask_file,
                          const SvSlicParams *params, guint depth, guint64 limit,
                          guint prepared_slices, guint label_slices, SvStreamRoom *room);
/* What `limit` (0: 1 GiB) leaves the statistics passes, which fill the
 * smoothed image's part in memory as they go. */
guint64 sv__stream_room_scan_limit (const SvStreamRoom *room, guint64 limit);

/* The bytes of temporary files a room leaves. */
static inline guint64
sv__stream_room_file_bytes (const SvStreamRoom *room)
{
  return room->prepared_bytes - room->prepared_host + room->labels_bytes - room->labels_host;
}
/* Slices per slab of the statistics passes, with `halo` on each side. */
guint sv__stream_choose_scan_depth (const SvTiffSlabReader *reader, guint halo, guint64 limit);

/* ---- the last assignment as labels (stream-tally.c) --------------------- */

/* What the labels of a run's slabs add up to; zmin and zmax (k each, the
 * first and last slice of each cluster's voxels; G_MAXUINT and 0 for none)
 * are whole after sv__label_tally_finish. */
typedef struct
{
  gsize k;
  int n_threads;
  guint *zmin, *zmax; /* n_threads × k while tallying */
  gsize *n_in;        /* per thread */
  gboolean *negative; /* per thread */
} SvLabelTally;

/* Extents are k slice numbers per slot (a thread's, or a worker's
 * thread's): at most this many slots. */
#define SV_LABEL_TALLY_MAX_SLOTS 8
void sv__label_tally_init (SvLabelTally *tally, gsize k, int n_threads);
/* Turns slab [z0, z1)'s assignment (cluster index or −1) into labels
 * (index + start_label; start_label − 1 for −1), in place, and counts
 * them; mask is the whole volume's (or NULL). */
void sv__label_tally_slab (SvLabelTally *tally, guint z0, guint z1, gsize plane, const guint8 *mask,
                           int start_label, gint32 *nearest);
/* sv__label_tally_slab on the tally's slots [first_slot, first_slot +
 * n_slots) alone: callers that tally slabs at once each take slots of
 * their own. */
void sv__label_tally_slab_in (SvLabelTally *tally, int first_slot, int n_slots, guint z0, guint z1,
                              gsize plane, const guint8 *mask, int start_label, gint32 *nearest);
/* Merges the threads' counts: the mask-in voxels and whether a label is
 * negative; zmin and zmax then hold the k extents. */
void sv__label_tally_finish (SvLabelTally *tally, gsize *n_in, gboolean *negative);
/* Takes what a backend tallied over the labels it keeps
 * (SvSlabSteps.kept_tally), as if one thread had tallied every slab. */
gboolean sv__label_tally_from_backend (SvLabelTally *tally, SvBackend *backend, GError **error);
void sv__label_tally_clear (SvLabelTally *tally);

/* ---- several processes (stream-ranks.c) --------------------------------- */

/* Hands every rank's labels (its slices, read through `own`) to rank 0,
 * which puts them where its run keeps labels (`store`), `depth` slices per
 * message through `buffer`, then agrees. Ranks marked in `taken` (n_ranks
 * bytes, may be NULL) are skipped: rank 0 has their labels already. `ok`
 * FALSE (with `error` set) moves nothing and makes the ranks agree on the
 * failure. Without ranks it does nothing. */
gboolean sv__stream_gather_labels (const SvStreamRanks *ranks, const guint8 *taken, gboolean ok,
                                   SvSlabSource own, SvSlabSink store, gpointer user_data,
                                   guint nz, gsize plane, gint32 *buffer, guint depth,
                                   GError **error);

/* A streamed run whose awaited devices (SvStreamOptions.await_backends)
 * hold fewer slices a slab than the run chose fails in this domain, the
 * code being the slices they hold; sv_run_execute runs it again from the
 * start with that cap. */
#define SV__STREAM_SHALLOWER (sv__stream_shallower_quark ())
GQuark sv__stream_shallower_quark (void);

G_END_DECLS

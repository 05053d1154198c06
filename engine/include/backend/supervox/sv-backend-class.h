/* Supervox engine: what a compute backend implements.
 *
 * The SLIC run exists once, in slic-pipeline.c: it validates, seeds,
 * applies the teaching rule, times the stages, reports progress, honours
 * cancellation and computes the connectivity sizes. A backend only
 * implements the stages below on its own data (host memory for the CPU,
 * device memory for CUDA). Every stage receives the SvBackend; its private
 * state is sv_backend_get_priv (). Entries marked optional may be NULL. */
#pragma once

#include <glib.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-volume.h"
#include "supervox/sv-seeds.h"
#include "supervox/sv-prepare.h"
#include "supervox/sv-slic.h"

G_BEGIN_DECLS

/* The most bytes of an SvSlabSteps.export_kept handle. */
#define SV_KEPT_HANDLE_BYTES 128

/* One run as the pipeline hands it to the stages. */
typedef struct
{
  const SvSlicParams *params; /* the teaching rule already applied */
  const SvSeeds *seeds;
  SvSlicContext ctx;   /* ctx.ignore_colour is set per pass */
  SvClusters clusters; /* the seeds at start; the final ones after read_clusters */
  guint pass;          /* 0 …; maskSLIC's spatial-only pass is 0 of 2 */
  guint n_passes;
  guint iteration;           /* iterations done so far, all passes counted */
  GCancellable *cancellable; /* the run's (may be NULL), for stages that wait */
} SvSlicRun;

/* Where slab steps hand back a slab's assignment: nearest holds slices
 * [z0, z1) of nz*ny*nx. Returns FALSE with `error` set to stop the pass. */
typedef gboolean (*SvSlabSink) (guint z0, guint z1, const gint32 *nearest, gpointer user_data,
                                GError **error);
/* Where slab steps read slices [z0, z1) of a label volume into `labels`. */
typedef gboolean (*SvSlabSource) (guint z0, guint z1, gint32 *labels, gpointer user_data,
                                  GError **error);
/* Where slab steps may read slices [z0, z1) of a label volume straight
 * into `dst` in `target`'s own memory (another device's, over NVLink):
 * 1 when done, 0 when they cannot come that way (the caller reads them
 * through its SvSlabSource), −1 with `error` set. */
typedef int (*SvSlabDeviceSource) (guint z0, guint z1, SvBackend *target, gpointer dst,
                                   gpointer user_data, GError **error);

/* A label file that takes its strips compressed by whoever holds the
 * labels, with deflate of runs (sv-deflate-runs.h): strips of
 * rows_per_strip rows, a page's last one shorter. `append` takes slices
 * [z0, z1) as their strips in file order: their sizes, their bytes one
 * after the other, and the first of the slices with a negative label (−1:
 * none).
 *
 * With chunks[0] > 0 the file is an OME-Zarr store of chunks of chunks[0]
 * × chunks[1] × chunks[2] (z, y, x) labels instead, and rows_per_strip is
 * 0: `append` then takes whole rows of chunks (z0 a multiple of
 * chunks[0], z1 too or the volume's end) as their chunks in (z, y, x)
 * order, each the deflate of runs of its rows of chunks[2] labels, edge
 * chunks full size with 0 outside the volume (io-zarr-write-row.c); the
 * negative slice is then the first slice of a row with one. */
typedef struct
{
  guint rows_per_strip;
  gboolean (*append) (guint z0, guint z1, const guint64 *sizes, const guint8 *bytes,
                      gint64 negative_slice, gpointer user_data, GError **error);
  gpointer user_data;
  guint chunks[3];
} SvStripSink;

/* How a slab's samples, as the file holds them, become prepared values
 * when no Lab conversion or smoothing applies: img_as_float (v · (1 /
 * max) in double, clamped at −1 for signed types, then float32), then
 * (v − shift), divided by scale when `divide`, in float32. */
typedef struct
{
  SvSampleType type; /* an integer type */
  guint nc;
  float shift, scale;
  gboolean divide;
} SvSlabSamples;

/* The streamed run's stages (sv-stream.h): what one pass over the slabs
 * of an iteration does, on the backend's own memory. The run keeps the
 * whole-volume context (shape, global coordinates, the caller's host
 * mask) and hands the steps one z-slab at a time, [z0, z1), with its
 * prepared values (channel fastest, starting at slice z0). Sums are exact
 * integers, so a backend may queue slabs and add them in any order; what
 * it queued is complete when end_pass returns. One backend is used by one
 * thread at a time; several backends (devices) may run passes over
 * different slabs at once, each over its own share. */
typedef struct
{
  /* A pass starts: the clusters as the pass reads them (centres, alive
   * flags, SLIC-zero maxima; borrowed until end_pass) and the run's
   * context (ctx->ignore_colour set for maskSLIC's first pass). Only
   * clusters [k0, k1) can reach the slabs it will be given (as end_pass
   * says): a device need only hold those. A pass that fills unassigned
   * voxels gets every cluster, [0, k). */
  gboolean (*begin_pass) (SvBackend *backend, const SvSlicContext *ctx, const SvClusters *clusters,
                          gsize k0, gsize k1, GError **error);
  /* Assigns the slab's voxels and adds them to the pass's sums; when sink
   * is not NULL the slab's assignment goes to it, perhaps only by a later
   * call or end_pass (a device queues the slab and returns). `data` and
   * `mask` are read before the call returns. `mask` is the slab's mask
   * addressed as the whole volume's (mask[z·ny·nx + y·nx + x] for z in
   * [z0, z1)), NULL without one; the steps read the mask only from here,
   * since a mask file is served a slab at a time. */
  gboolean (*assign_sum) (SvBackend *backend, guint z0, guint z1, const float *data,
                          const guint8 *mask, SvSlabSink sink, gpointer sink_data, GError **error);
  /* SLIC-zero: raises the pass's maxima with the slab's values and its
   * assignment, against the pass's centres (the updated ones). */
  gboolean (*raise_maxima) (SvBackend *backend, guint z0, guint z1, const float *data,
                            const guint8 *mask, const gint32 *nearest, GError **error);
  /* Gives the slab's mask-in voxels that no window reached the nearest
   * live centre of the pass (sv__slic_fill_unassigned), in place. */
  gboolean (*fill_unassigned) (SvBackend *backend, guint z0, guint z1, const guint8 *mask,
                               gint32 *nearest, GError **error);
  /* Waits for what the pass queued (every sink called), then adds its sums
   * (k × (4 + nc), as sv__slic_sums_add) to `sums` and raises
   * `max_dist_colour` (k) to its maxima; either may be NULL. Only clusters
   * [k0, k1) can have reached the pass's slabs (their windows meet them):
   * only their sums and maxima need to come back. */
  gboolean (*end_pass) (SvBackend *backend, gint64 *sums, float *max_dist_colour, gsize k0,
                        gsize k1, GError **error);
  /* Frees what the passes hold; called once at the end of the run, also
   * after a failure or a cancel. */
  void (*release) (SvBackend *backend);
  /* Optional: the most device memory the steps held at once, in bytes. */
  guint64 (*peak_device_bytes) (SvBackend *backend);
  /* Optional: TRUE when the backend still holds slab [z0, z1)'s prepared
   * values (and mask) from an earlier pass, in its own memory; assign_sum
   * and raise_maxima then get data == NULL for that slab. */
  gboolean (*holds_slab) (SvBackend *backend, guint z0, guint z1);
  /* Optional: sv_connectivity_enforce over the whole nz·ny·nx label volume
   * in the backend's memory, at once or window by window: the labels come
   * from `source` and the result goes to `sink`, at most `depth` slices at
   * a time in z order. `extent` is the largest z extent of one label,
   * minus one (G_MAXUINT: not known), which bounds a window; with a
   * `device_source` (may be NULL) slices another device keeps come from it
   * before `source` is asked; with `strips` (may be NULL) the backend may
   * hand slabs to it compressed instead of to `sink` (an OME-Zarr
   * store's chunks only when compresses_chunks says so). Returns 1
   * when done (*n_labels set, *held: the most slices it held at once), 0
   * when it does not fit (nothing was written; the caller runs its own),
   * −1 with `error` set. The passes are over: a backend may free what
   * they kept. */
  int (*connect_volume) (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                         guint extent, gint64 min_size, gint64 max_size, int start_label,
                         SvConnectivityRule rule, SvSlabSource source,
                         SvSlabDeviceSource device_source, SvSlabSink sink, gpointer user_data,
                         const SvStripSink *strips, gint64 *n_labels, guint *held,
                         GError **error);

  /* ---- the assignment kept in the backend's memory (all optional) ----
   * A device that holds the whole volume's assignment saves taking every
   * slab of it to the host and back for SLIC-zero's maxima, the fill, the
   * label tally and the connectivity. */

  /* Keeps the assignment of slices [z0, z1) of a volume of nz slices of
   * `plane` voxels, for k clusters, in the backend's memory from the next
   * pass on; FALSE without an error when it does not fit; nz == 0 gives a
   * kept assignment back (another device could not keep its share). From
   * then on assign_sum gets no sink and writes it there, raise_maxima gets
   * nearest == NULL and reads it there, and connect_volume gets source ==
   * NULL and starts from it when this backend is the only worker and keeps
   * every slice (with several, each keeps the slices of the slabs it
   * takes, and the connectivity reads them through its source). The
   * slabs it is given all lie in [z0, z1); z0 == z1 for a worker that
   * takes none. */
  gboolean (*keep_assignment) (SvBackend *backend, guint nz, guint z0, guint z1, gsize plane,
                               gsize k, GError **error);
  /* In a pass (begin_pass: the final centres), with the assignment kept:
   * fill_unassigned on slab [z0, z1) of it, then its labels in place
   * (index + start_label, start_label − 1 for unassigned), tallied for
   * kept_tally. */
  gboolean (*label_kept_slab) (SvBackend *backend, guint z0, guint z1, const guint8 *mask,
                               int start_label, GError **error);
  /* After the pass of label_kept_slab: the mask-in voxels, whether a label
   * is negative, and each cluster's first and last slice (k each, lowered
   * and raised in place: G_MAXUINT and 0 leave a cluster with no voxel). */
  gboolean (*kept_tally) (SvBackend *backend, guint *zmin, guint *zmax, guint64 *n_in,
                          gboolean *negative, GError **error);
  /* Slices [z0, z1) of the kept labels into `labels` (an SvSlabSource). */
  gboolean (*read_kept) (SvBackend *backend, guint z0, guint z1, gint32 *labels, GError **error);
  /* Optional: slices [z0, z1) of labels made elsewhere (another MPI
   * rank's) into the kept labels, so that the connectivity finds the whole
   * volume there. */
  gboolean (*store_kept) (SvBackend *backend, guint z0, guint z1, const gint32 *labels,
                          GError **error);
  /* Optional: slices [z0, z1) of the kept labels straight into `dst` in
   * the memory of `target`, a backend of the same class or this one (an
   * SvSlabDeviceSource's 1, 0, −1). */
  int (*copy_kept_to) (SvBackend *backend, guint z0, guint z1, SvBackend *target, gpointer dst,
                       GError **error);
  /* Optional, for MPI ranks on one host: writes a handle of at most
   * SV_KEPT_HANDLE_BYTES bytes by which another process can read the kept
   * labels while this one waits; FALSE (no error) when there is none. */
  gboolean (*export_kept) (SvBackend *backend, guint8 *handle, GError **error);
  /* Optional: slices [z0, z1) of another process's kept labels, named by
   * its export_kept handle, into this backend's kept labels: 1 done, 0
   * when they cannot be reached from here (nothing copied), −1 with
   * `error` set. */
  int (*import_kept) (SvBackend *backend, const guint8 *handle, guint z0, guint z1,
                      GError **error);

  /* Optional: takes slab [z0, z1) as the file's samples (`raw`, channel
   * fastest) and prepares it in its own memory as `how` says, to hold it
   * from now on (holds_slab; with its mask, addressed as assign_sum's).
   * Returns 1 when it holds the slab, 0 when there is no room (nothing
   * kept: the run prepares the slab itself), −1 with `error` set. */
  int (*take_samples) (SvBackend *backend, guint z0, guint z1, const void *raw,
                       const SvSlabSamples *how, const guint8 *mask, GError **error);

  /* ---- the connectivity shared by several devices (all optional;
   * engine/stream/stream-device-pieces.c) ----
   * With the assignment kept on every worker's device, the first device
   * labels its kept slices (sv_connectivity_enforce's connected rule) and
   * hands them to the label file, while each other device numbers the
   * pieces that start in its own; then, in z order, each of those gets
   * its first label and the labels of its warm-up's pieces from the
   * devices before it, relabels its slices and hands them to the file. */

  /* Copies the slices of other devices that this one's pieces need (its
   * label `extent` below and above its kept slices, from `device_source`
   * when it can, else `source`) and plans its windows (*held: the most
   * slices one will hold): 1 when ready, 0 when there is no room (nothing
   * changed), −1 with `error` set. Every device prepares before any
   * numbers its pieces. */
  int (*pieces_prepare) (SvBackend *backend, guint nz, guint ny, guint nx, guint extent,
                         SvSlabSource source, SvSlabDeviceSource device_source,
                         gpointer user_data, guint *held, GError **error);
  /* The first device (its kept slices start the volume): labels them in
   * place and hands them, in z order, to `sink` or compressed to `strips`
   * (not a store's chunks), in slabs of at most `depth` slices;
   * *n_labels: how many labels. */
  gboolean (*pieces_label) (SvBackend *backend, gint64 min_size, gint64 max_size,
                            int start_label, guint depth, SvSlabSink sink, gpointer user_data,
                            const SvStripSink *strips, gint64 *n_labels, GError **error);
  /* Another device: numbers the pieces its windows cut, writing
   * start_label + its piece's number over each kept voxel (background
   * stays). `warm_starts` (gint64) receives the first voxels, over the
   * whole volume, of the pieces that start below its slices (its
   * warm-up's, numbered first), *n_new how many of its own pieces take a
   * new label. */
  gboolean (*pieces_number) (SvBackend *backend, gint64 min_size, gint64 max_size,
                             int start_label, GArray *warm_starts, gint64 *n_new,
                             GError **error);
  /* The final labels at `n` voxels (over the whole volume) of its kept
   * slices. */
  gboolean (*labels_at) (SvBackend *backend, const gint64 *voxels, gsize n, gint32 *labels,
                         GError **error);
  /* After pieces_number: its own pieces' new labels from first_label on
   * in raster order, its warm-up's pieces' labels from `warm_labels`, and
   * each piece number in the kept slices replaced by its label. */
  gboolean (*pieces_relabel) (SvBackend *backend, int first_label, const gint32 *warm_labels,
                              gsize n_warm, int start_label, GError **error);
  /* Hands the kept slices to `sink` in z order, slabs of at most `depth`
   * slices, or compressed to `strips` (not a store's chunks) when given. */
  gboolean (*emit_kept) (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                         SvSlabSink sink, gpointer user_data, const SvStripSink *strips,
                         GError **error);

  /* TRUE when connect_volume compresses an OME-Zarr store's chunks
   * (SvStripSink.chunks); a store is otherwise handed labels. */
  gboolean compresses_chunks;
} SvSlabSteps;

struct _SvBackendClass
{
  const char *name; /* "cpu", "cuda" */
  /* What the front ends say of it, in a sentence ("the GPU") and as a
   * title ("GPU (CUDA)"); NULL: the name. */
  const char *display_name;
  const char *title;
  /* It computes in a device's own memory: its failures are the device's
   * (sv_backend_error_is_device_failure) and the CPU can take over. */
  gboolean is_device;

  /* Sets the private state (sv_backend_set_priv), or fails with the reason
   * the backend cannot run here ("no CUDA device"). */
  gboolean (*create) (SvBackend *backend, GError **error);
  void (*destroy) (SvBackend *backend);
  /* The caller keeps `volume` and `mask` (may be NULL) alive and unchanged
   * until the next set_volume or destroy: a backend borrows them instead of
   * holding a second copy of a volume that can be gigabytes. */
  gboolean (*set_volume) (SvBackend *backend, const SvVolume *volume, const guint8 *mask,
                          GError **error);

  /* ---- the stages of a run, in the order the pipeline calls them ---- */

  /* Rescale, Lab and smoothing; *reused is TRUE when the last run's image
   * still holds for params. Returns the prepared image's description (shape
   * and max_abs are what the pipeline reads), owned by the backend. */
  const SvPrepared *(*prepare) (SvBackend *backend, const SvSlicParams *params, int n_threads,
                                gboolean *reused, GError **error);
  /* Takes run->clusters as the starting centres; every voxel unassigned. */
  gboolean (*start) (SvBackend *backend, const SvSlicRun *run, GError **error);
  /* Before each pass: SLIC-zero maxima start again at run->clusters'. */
  gboolean (*begin_pass) (SvBackend *backend, const SvSlicRun *run, GError **error);
  /* One iteration: assignment, then centre update (and SLIC-zero maxima). */
  gboolean (*iterate) (SvBackend *backend, SvSlicRun *run, GError **error);
  /* Optional: waits until the queued iterations are done (a device
   * backend), so that progress and cancellation mean what they say. */
  gboolean (*sync) (SvBackend *backend, GError **error);
  /* Labels from the assignment: voxels no window reached take the nearest
   * live centre when `fill` (after at least one iteration), then label =
   * index + start_label (start_label − 1 for unassigned voxels). */
  gboolean (*assignment_labels) (SvBackend *backend, const SvSlicRun *run, gboolean fill,
                                 GError **error);
  /* Connectivity on the labels with the pipeline's sizes; *n_labels
   * receives the number of final labels. */
  gboolean (*connect) (SvBackend *backend, const SvSlicRun *run, gint64 min_size, gint64 max_size,
                       gint64 *n_labels, GError **error);
  /* Without connectivity: the number of distinct labels (background out). */
  gboolean (*count_labels) (SvBackend *backend, const SvSlicRun *run, gint64 *n_labels,
                            GError **error);
  /* Optional: brings the current centres and alive flags into
   * run->clusters (a backend that iterates elsewhere than on them). */
  gboolean (*read_clusters) (SvBackend *backend, SvSlicRun *run, GError **error);
  /* The labels (nz*ny*nx) that a run stopped after the current iteration
   * would give, without changing the run's state. */
  gboolean (*snapshot_labels) (SvBackend *backend, const SvSlicRun *run, gint32 *labels,
                               GError **error);
  /* Optional: called once at the end of every run, ok or not (a device
   * backend drains its queue after a failure). */
  void (*finish) (SvBackend *backend, gboolean ok);

  /* ---- results ---- */

  /* The last run's labels, nz*ny*nx values. */
  gboolean (*get_labels) (SvBackend *backend, gint32 *labels, GError **error);
  /* Optional: hands the last run's host label buffer (g_free) to the
   * caller, who then holds the only copy; the backend forgets it. */
  gint32 *(*take_labels) (SvBackend *backend, GError **error);

  /* ---- optional abilities of a device backend ---- */

  /* The last run's label volume in device memory (see sv_backend_get_device_labels). */
  const gint32 *(*device_labels) (SvBackend *backend, guint shape_zyx[3]);
  /* The stream the backend's work is queued on (a cudaStream_t). */
  gpointer (*device_stream) (SvBackend *backend);

  /* Optional: the stages of a streamed run (sv-stream.h); a backend
   * without them cannot stream. */
  const SvSlabSteps *slab_steps;

  /* Optional, for a device, pure (no device call: the run plan sizes runs
   * with them): the device bytes the in-memory run of such a volume needs
   * at its peak, and the most slices a streamed run's slab may hold on a
   * device that lets it use `limit` bytes (at least 1). */
  guint64 (*in_memory_bytes) (guint nz, guint ny, guint nx, guint nc, gboolean mask);
  guint (*stream_max_depth) (guint64 limit, guint ny, guint nx, guint nc, gint64 n_segments,
                             gboolean mask);

  /* A device class's devices (NULL for the CPU): how many this machine
   * has (0 when none is usable), what device `device` has free, a backend
   * on device `device`, and the device memory a backend may use (0: what
   * is free), which its streamed slabs and connectivity keep within. */
  int (*device_count) (void);
  gboolean (*device_free_bytes) (int device, guint64 *free_bytes, GError **error);
  SvBackend *(*new_on_device) (int device, GError **error);
  void (*set_memory_limit) (SvBackend *backend, guint64 bytes);

  /* Optional: the backend's clock in microseconds (default
   * g_get_monotonic_time); test doubles simulate slow stages with it. */
  gint64 (*clock) (SvBackend *backend);
};


/* For a backend's own way of loading a volume (one in device memory): what
 * sv_backend_set_volume records, the shape (volume->data may be NULL: no
 * host copy) and a host mask (or NULL), for seeding. */
void sv_backend_set_loaded (SvBackend *backend, const SvVolume *volume, const guint8 *mask);

/* The private state of the backend's implementation. */
gpointer sv_backend_get_priv (SvBackend *backend);
void sv_backend_set_priv (SvBackend *backend, gpointer priv);

G_END_DECLS

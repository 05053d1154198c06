/* Supervox engine: SLIC on volumes larger than memory. The image stays in
 * its file and is read in z-slabs; the labels go to their file slab by
 * slab. The labels are byte for byte those of the in-memory run: every slab
 * step (smoothing with a halo, assignment, exact integer sums, the fill of
 * unreached voxels, the raster-order connectivity rule) computes what the
 * whole-volume step computes there. */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "sv-backend.h"
#include "sv-io.h"
#include "sv-io-slab.h"
#include "sv-params.h"

G_BEGIN_DECLS

/* Several processes (MPI ranks) sharing one streamed run: each rank
 * prepares and assigns only its z range (sv_stream_rank_range), the
 * statistics and the exact integer sums are combined through these
 * functions, and rank 0 receives the labels slab by slab in z order, runs
 * connectivity and writes the file. The engine stays free of MPI: the
 * caller implements the table (app/cli/slic-mpi.c). Every rank makes the
 * same calls in the same order; a rank that fails passes its error to the
 * next agree, so that every rank stops there. */
typedef struct
{
  guint rank, n_ranks;
  gpointer self;
  /* Each rank passes its outcome (`local`: NULL when it succeeded;
   * borrowed). Returns TRUE when every rank succeeded; otherwise sets
   * `error` on every rank to the first failed rank's error, naming it. */
  gboolean (*agree) (gpointer self, const GError *local, GError **error);
  /* Element-wise sums and maxima over the ranks, in place. */
  void (*sum_int64) (gpointer self, gint64 *values, gsize n);
  void (*max_int64) (gpointer self, gint64 *values, gsize n);
  void (*max_float) (gpointer self, float *values, gsize n);
  /* Every rank's `bytes` bytes, rank by rank, into `all` (n_ranks·bytes). */
  void (*gather) (gpointer self, gconstpointer mine, gsize bytes, gpointer all);
  /* Rank r > 0 sends n labels to rank 0, or (ok FALSE) a mark that it
   * failed and sends no more; rank 0 receives them from `from` in the
   * order they were sent. recv_labels returns FALSE on the mark. */
  void (*send_labels) (gpointer self, const gint32 *labels, gsize n, gboolean ok);
  gboolean (*recv_labels) (gpointer self, guint from, gint32 *labels, gsize n);
  /* Optional: `bytes` bytes of `data` from rank `root` to every rank. With
   * it the ranks run the connectivity themselves, each on its own slices,
   * and rank 0 only writes the file. */
  void (*broadcast) (gpointer self, guint root, gpointer data, gsize bytes);
  /* Optional: every rank sends send_bytes[r] bytes to each rank r (from
   * `send`, rank after rank) and receives recv_bytes[r] from each (into
   * `recv`, rank after rank); the counts agree pairwise and each is below
   * 2³¹. With it the ranks add their cluster sums only where their slabs
   * reach, not over every cluster each iteration. */
  void (*exchange) (gpointer self, gconstpointer send, const gsize *send_bytes, gpointer recv,
                    const gsize *recv_bytes);
} SvStreamRanks;

/* The slices [*z0, *z1) that `rank` of n_ranks owns: contiguous, in rank
 * order, as even as nz allows (empty when nz < n_ranks). */
void sv_stream_rank_range (guint nz, guint rank, guint n_ranks, guint *z0, guint *z1);

/* A step boundary: `ok` is this rank's outcome (with `error` set when
 * FALSE). Returns TRUE when every rank succeeded; otherwise every rank
 * gets the first failed rank's error. With ranks NULL it returns ok. */
gboolean sv_stream_ranks_agree (const SvStreamRanks *ranks, gboolean ok, GError **error);

typedef struct
{
  int channel;          /* −1: every channel, else only this one */
  int n_threads;        /* <= 0: all processors */
  guint slab_depth;     /* slices per slab; 0: from memory_limit */
  guint64 memory_limit; /* bytes the run may allocate (the mask is the caller's): its
                         * slabs when slab_depth is 0, and in what they leave what it
                         * keeps between passes, the rest in temporary files; 0: 1 GiB */
  SvTiffWriteOptions write_options;
  /* The spacing the run used, z, y, x, which the labels of a file with no
   * calibration carry (sv_label_calibration); NULL: ones. A calibrated
   * file's labels carry its own spacing and unit. */
  const double *label_spacing;
  SvProgressFunc progress;     /* may be NULL */
  /* After each iteration (may be NULL), as in memory (SvRunControl); its
   * view gives the centres and the backend's name, and no labels: those
   * are on disk until the run ends. */
  SvIterationHook iteration;
  gpointer user_data;         /* for progress and iteration */
  GCancellable *cancellable;  /* may be NULL */
  const SvStreamRanks *ranks; /* NULL: one process; else only rank 0 writes `output` */
  /* The backends that run the slab steps (SvSlabSteps), borrowed: slabs
   * go to them in turn, one worker thread each when there are several
   * (one per GPU), and their exact sums are added after each pass.
   * NULL: one CPU backend made for the run. */
  SvBackend *const *backends;
  guint n_backends;
  /* Or backends still opening (sv_run_devices_start): n_backends of them,
   * asked for once the statistics and seeds are done. The callback gives
   * them and the least free memory of their devices (0: not known), or
   * fails with the reason they cannot be had. NULL: `backends` as above. */
  gboolean (*await_backends) (gpointer data, SvBackend *const **backends,
                              guint64 *least_free, GError **error);
  gpointer await_data;
  /* With slab_depth 0: at most this many slices per slab (0: no cap), for
   * a device whose memory is smaller than the host's. */
  guint max_slab_depth;
  /* A mask file (one sample, the image's shape; nonzero = in) read slab by
   * slab like the image, instead of a mask in memory; NULL: none. */
  const char *mask_path;
  /* Or the mask from this reader (borrowed; one sample, the image's shape;
   * nonzero = in; sv_tiff_slab_reader_new_for_func): a mask the caller
   * serves slab by slab. */
  SvTiffSlabReader *mask_source;
  const char *mask_source_name; /* names it in messages; NULL: "the mask" */
  /* Read each slab when it is needed instead of on a thread while the
   * previous one computes (the environment's SV_STREAM_READ_AHEAD=off
   * does the same); the labels are the same either way. */
  gboolean no_read_ahead;
  /* The image from this reader (borrowed; sv_tiff_slab_reader_new_for_func)
   * instead of the file at `input`, which then only names it in messages;
   * channel is not applied to it. NULL: open `input`. */
  SvTiffSlabReader *source;
  /* The label file's last step, the sync of its data and its rename into
   * place, is left to the caller (SvStreamReport.finish), who can start
   * its next run meanwhile. A TIFF only, written by one process; an
   * OME-Zarr store finishes as before. */
  gboolean finish_later;
} SvStreamOptions;

/* One thread, a slab chosen from a memory limit of 1 GiB, the default codec. */
void sv_stream_options_init_defaults (SvStreamOptions *options);

/* What a streamed run did, besides SvRunStats. */
typedef struct
{
  guint slab_depth;           /* slices per slab */
  guint n_slabs;              /* slabs per pass */
  guint halo;                 /* slices read beyond a slab for smoothing */
  guint connect_window;       /* slices the connectivity pass held at once */
  guint64 image_passes;       /* passes over the image file */
  guint n_workers;            /* backends that ran the slab steps */
  guint64 device_peak_bytes;  /* the most device memory the steps held, summed over devices */
  /* Prepared slabs kept between iterations, in host memory and in a
   * temporary file: as the file's samples where that is exact (no Lab,
   * no smoothing, samples narrower than float32), else as float32. */
  guint64 kept_host_bytes;
  guint64 kept_file_bytes;
  /* The assignment and the labels before connectivity (int32), in host
   * memory and in a temporary file; none when a device kept them. */
  guint64 labels_host_bytes;
  guint64 labels_file_bytes;
  guint resident_slabs;       /* slabs the backends kept in their own memory between passes */
  gboolean connect_on_device; /* connectivity ran on a backend's device */
  guint connect_devices;      /* devices that ran it, each on its own slices */
  gboolean connect_by_ranks;  /* every rank ran it on its own slices (no gatherer) */
  gboolean file_by_ranks;     /* every rank wrote its own pages of the label file */
  gboolean labels_on_device;  /* the last assignment stayed on the device for the labels */
  /* Slices of the label file whose strips (a TIFF) or chunks (an OME-Zarr
   * store) a device compressed where it held the labels. */
  guint slices_compressed_on_device;
  double seconds_first_pass;  /* of seconds_iterate: the first pass (it prepares every slab) */
  double seconds_labels;      /* of seconds_iterate: the last assignment made labels */
  guint64 slabs_read_ahead;   /* slabs read on a thread while the one before computed */
  guint iterations_settled;   /* iterations not run: their pass had reached a fixed point */
  /* Slabs that several workers read at once, each with its own reader,
   * and handed to their devices as samples in the first pass. */
  guint64 slabs_read_by_workers;
  /* With finish_later and a run that succeeded: the label file to
   * complete or abort (the caller's); NULL when it was finished. */
  SvFileFinish *finish;
} SvStreamReport;

/* Runs SLIC on the TIFF at `input` and writes the labels to `output` (as
 * sv_tiff_write_labels_full would, through a temporary name: on failure no
 * file is left). mask (may be NULL) is nz·ny·nx bytes, nonzero = in; it is
 * the caller's and is held in memory; options->mask_path reads one from a
 * file slab by slab instead (not both). stats and report may be NULL. Errors
 * are those of the TIFF reader and writer, the parameters and the data
 * (NaN/inf), worded as the in-memory run words them. */
gboolean sv_stream_slic_run (const char *input, const char *output, const SvSlicParams *params,
                             const guint8 *mask, const SvStreamOptions *options, SvRunStats *stats,
                             SvStreamReport *report, GError **error);

/* The free bytes where a streamed run that writes `output` puts its
 * temporary files (the output's folder), as the system gives them to
 * this user; FALSE when they cannot be told. SV_TEST_DISK_FREE=SIZE
 * (bytes, or with K, M, G or T) stands in for what the disk says, so that
 * tests can run out of space on any disk (a test hook, read only here). */
gboolean sv_stream_temp_free (const char *output, guint64 *bytes);

/* Bytes the in-memory CPU run of a volume needs at its peak (image,
 * prepared copy, assignment, labels, mask), for choosing between the two. */
guint64 sv_stream_in_memory_bytes (guint nz, guint ny, guint nx, guint nc, gboolean mask);

G_END_DECLS

/* libsupervox: SLIC supervoxels with scikit-image's semantics, as a small C
 * API for other languages (Python's `supervox` package sits on it).
 *
 * Plain C, no GLib types. Arrays cross the boundary as pointer + dtype +
 * shape + byte strides, the __cuda_array_interface__ / DLPack vocabulary;
 * device pointers are used where they are, never copied through the host
 * behind the caller's back. Functions that can fail return a negative
 * SupervoxStatus and leave a message for supervox_last_error ().
 *
 * Thread safety: any number of threads may run at once; each run uses its
 * own backend instance. The last-error message is per thread.
 *
 * GPU memory: after a CUDA run the library keeps that run's backend (its
 * stream and device buffers, about 40 bytes per voxel) for the next run on
 * the same device, which then allocates nothing when the shape repeats;
 * supervox_cuda_release_cache gives that memory back.
 *
 * ABI: the soname changes with SUPERVOX_API_VERSION_MAJOR. Within one major
 * version, functions and enum values are only added, and the structs only
 * grow at their end: always fill a struct with its _init function first. */
#ifndef SUPERVOX_SUPERVOX_H
#define SUPERVOX_SUPERVOX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

#define SUPERVOX_API_VERSION_MAJOR 0
#define SUPERVOX_API_VERSION_MINOR 8

#if defined(__GNUC__)
#define SUPERVOX_EXPORT __attribute__ ((visibility ("default")))
#else
#define SUPERVOX_EXPORT
#endif

  typedef enum
  {
    SUPERVOX_OK = 0,
    SUPERVOX_ERROR_INVALID_ARGUMENT = -1, /* NULL pointer, unknown dtype, bad shape or strides */
    SUPERVOX_ERROR_INVALID_PARAM = -2,    /* a parameter out of range ("compactness must be > 0") */
    SUPERVOX_ERROR_INVALID_DATA = -3,     /* image and mask disagree, … */
    SUPERVOX_ERROR_NON_FINITE = -4,       /* NaN or ±inf among the voxels in use */
    SUPERVOX_ERROR_NO_MEMORY = -5,        /* host or device memory would not suffice */
    SUPERVOX_ERROR_BACKEND = -6,          /* no CUDA device, a CUDA error */
    SUPERVOX_ERROR_CANCELLED = -7,        /* the control's cancel flag was raised */
    SUPERVOX_ERROR_IO = -8,               /* a file could not be read or written */
  } SupervoxStatus;

  /* Element types, as NumPy names them. Integers are scaled as scikit-image's
   * img_as_float does (v / max of the type; signed clipped at −1), floats are
   * taken as they are, bool is 0 or 1. Computation is in float32, except the
   * rescale and Lab conversion of the types scikit-image computes in float64
   * (all but FLOAT32 and FLOAT16), which run in float64 and are rounded to
   * float32 once. */
  typedef enum
  {
    SUPERVOX_BOOL = 0,
    SUPERVOX_UINT8,
    SUPERVOX_UINT16,
    SUPERVOX_UINT32,
    SUPERVOX_UINT64,
    SUPERVOX_INT8,
    SUPERVOX_INT16,
    SUPERVOX_INT32,
    SUPERVOX_INT64,
    SUPERVOX_FLOAT16,
    SUPERVOX_FLOAT32,
    SUPERVOX_FLOAT64,
    SUPERVOX_N_DTYPES
  } SupervoxDtype;

  typedef enum
  {
    SUPERVOX_BACKEND_AUTO = 0, /* CUDA when a device is usable, else the CPU */
    SUPERVOX_BACKEND_CPU = 1,  /* the reference; host arrays only */
    SUPERVOX_BACKEND_CUDA = 2,
  } SupervoxBackend;

  typedef enum
  {
    SUPERVOX_CONVERT2LAB_AUTO = -1, /* Lab for a 2D image (nz == 1) with 3 channels */
    SUPERVOX_CONVERT2LAB_NO = 0,
    SUPERVOX_CONVERT2LAB_YES = 1, /* error unless 3 channels */
  } SupervoxConvert2Lab;

  /* What connectivity enforcement does with a piece below the minimum size
   * that touches no relabelled voxel (API 0.4). */
  typedef enum
  {
    /* It keeps a new label of its own: every label is one connected piece
     * (scikit-image PR #8334). */
    SUPERVOX_CONNECTIVITY_CONNECTED = 0,
    /* scikit-image <= 0.26 bit for bit: it keeps the next label without
     * using it up, so the next piece, wherever it lies, shares it. */
    SUPERVOX_CONNECTIVITY_LEGACY = 1,
  } SupervoxConnectivityRule;

  /* A strided 4-axis array in host or device memory, axes always in the order
   * z, y, x, channel. A 2D image has shape[0] == 1; a grey image shape[3] ==
   * 1; a mask has shape[3] == 1 (its values: nonzero = in). strides are in
   * bytes and may be negative or zero; data points at element (0, 0, 0, 0). */
  typedef struct
  {
    const void *data;
    SupervoxDtype dtype;
    int64_t shape[4];
    int64_t strides[4];
  } SupervoxArray;

  /* scikit-image's slic parameters (its names, its defaults). */
  typedef struct
  {
    int64_t n_segments;              /* 100; approximate number of seeds, >= 1 */
    double compactness;              /* 10; > 0 */
    int32_t max_num_iter;            /* 10; exactly this many iterations run */
    double sigma[3];                 /* 0; z, y, x Gaussian sigma in voxels */
    int32_t sigma_per_axis;          /* 0: sigma[0] is a scalar divided by spacing per
                                      * axis, as scikit-image does; 1: sigma[] as given */
    double spacing[3];               /* 1, 1, 1; z, y, x voxel size, > 0 */
    SupervoxConvert2Lab convert2lab; /* AUTO */
    int32_t enforce_connectivity;    /* 1 */
    double min_size_factor;          /* 0.5 */
    double max_size_factor;          /* 3 */
    int32_t slic_zero;               /* 0 */
    int32_t start_label;             /* 1; 0 or 1. Mask-out voxels get start_label − 1 */
    int32_t n_threads;               /* 0: all cores (CPU backend) */
    SupervoxConnectivityRule connectivity_rule; /* CONNECTED (API 0.4) */
  } SupervoxParams;

  /* Called at stage and iteration boundaries from the running thread.
   * stage: 0 prepare, 1 iterate, 2 connectivity, 3 done. */
  typedef void (*SupervoxProgressFunc) (int stage, int iteration, int n_iterations,
                                        void *user_data);

  /* Optional run control: progress and cancellation. */
  typedef struct
  {
    SupervoxProgressFunc progress; /* NULL: none */
    void *user_data;
    /* NULL, or a flag another thread may set to nonzero: the run stops at
     * the next iteration boundary with SUPERVOX_ERROR_CANCELLED. */
    const volatile int32_t *cancel;
  } SupervoxControl;

  /* What a run did. */
  typedef struct
  {
    int64_t n_clusters; /* seeds K */
    int64_t n_labels;   /* distinct labels, background excluded */
    int32_t iterations;
    SupervoxBackend backend; /* CPU or CUDA: the backend that computed it */
  } SupervoxRunInfo;

  /* The library version, "MAJOR.MINOR.PATCH"; static string. */
  SUPERVOX_EXPORT const char *supervox_version (void);

  /* SUPERVOX_API_VERSION_MAJOR * 1000 + SUPERVOX_API_VERSION_MINOR of the
   * loaded library (compare with the header's to detect a mismatch). */
  SUPERVOX_EXPORT int supervox_api_version (void);

  /* Fills params with scikit-image's defaults (see SupervoxParams). */
  SUPERVOX_EXPORT void supervox_params_init (SupervoxParams *params);

  /* 1 when a CUDA device is usable by this build, else 0 (the reason is then
   * in supervox_last_error). */
  SUPERVOX_EXPORT int supervox_cuda_available (void);

  /* Runs SLIC on a host image into `labels`, a caller-owned contiguous buffer
   * of shape[0]·shape[1]·shape[2] elements of label_dtype (SUPERVOX_INT32 or
   * SUPERVOX_INT64), z-major. `mask` may be NULL (shape z, y, x, 1 of the
   * image). The image is converted to float32 into a contiguous copy once (it
   * is never modified). backend AUTO runs on the GPU when there is one and
   * falls back to the CPU if the GPU fails; CPU never touches a GPU.
   * control and info may be NULL. Returns SUPERVOX_OK or a negative status. */
  SUPERVOX_EXPORT int supervox_slic (const SupervoxArray *image, const SupervoxArray *mask,
                                     const SupervoxParams *params, SupervoxBackend backend,
                                     void *labels, SupervoxDtype label_dtype,
                                     const SupervoxControl *control, SupervoxRunInfo *info);

  /* The same on device memory: image, mask (may be NULL) and labels
   * (contiguous, label_dtype) are device pointers. The run is ordered after
   * the work queued on `cuda_stream` (a cudaStream_t; NULL is the legacy
   * default stream) and the labels are written before the work queued on it
   * afterwards. It runs on the device that holds `image`, whichever device is
   * current (SUPERVOX_ERROR_INVALID_PARAM when `image` is host memory); the
   * calling thread's current device is left as it was. The volume is
   * converted on the device and never copied to the host. Two exceptions,
   * both small: the mask is copied to the host for seeding (maskSLIC's
   * k-means runs there), and an image converted to Lab takes the CUDA
   * backend's host Lab path. Fails with SUPERVOX_ERROR_BACKEND when the build
   * or the machine has no CUDA. */
  SUPERVOX_EXPORT int supervox_slic_device (const SupervoxArray *image, const SupervoxArray *mask,
                                            const SupervoxParams *params, void *labels,
                                            SupervoxDtype label_dtype, void *cuda_stream,
                                            const SupervoxControl *control, SupervoxRunInfo *info);

  /* What a file-to-file run did: the run's numbers, and whether it streamed
   * the volume slab by slab (1) or held it in memory (0). */
  typedef struct
  {
    int64_t n_clusters;
    int64_t n_labels;
    int32_t iterations;
    SupervoxBackend backend;
    int32_t streamed;
  } SupervoxFileInfo;

  /* SLIC from a TIFF file (a volume of pages, uint8/16/32 or float) into a
   * label TIFF (uint32; int32 when a label is −1), as `supervox-cli slic`
   * writes it. The volume is held in memory when its run fits in
   * memory_limit bytes (0: what the machine has free) and, with a GPU, in
   * the GPU's free memory; otherwise it streams slab by slab through the
   * GPU or the CPU, never held whole. Either way the file holds the same
   * bytes. mask: NULL, or a TIFF of the volume's z, y, x shape (nonzero =
   * in). params->spacing is used as given (the file's own spacing goes into
   * the label file only). backend as for supervox_slic: AUTO falls back to
   * the CPU when the GPU fails. The output appears whole or not at all (a
   * failed or cancelled run leaves no file). control and info may be NULL.
   * Returns SUPERVOX_OK or a negative status (SUPERVOX_ERROR_IO for a file
   * that cannot be read or written). API 0.7: an output ending in ".zarr"
   * is written as an OME-Zarr store instead of a TIFF. */
  SUPERVOX_EXPORT int supervox_slic_file (const char *input, const char *output, const char *mask,
                                          const SupervoxParams *params, SupervoxBackend backend,
                                          uint64_t memory_limit, const SupervoxControl *control,
                                          SupervoxFileInfo *info);

  /* API 0.7: fills slices [z0, z1) of `samples`: (z1 − z0)·ny·nx·channels
   * elements of the source's dtype, z-major, channel fastest (the layout
   * of a C-contiguous z, y, x, c array). Returns 0 on success; anything
   * else stops the run, with `message` (message_size bytes, "" on entry)
   * saying why when the function wrote one. Called from one thread at a
   * time, not necessarily the caller's. */
  typedef int (*SupervoxSlabReadFunc) (int64_t z0, int64_t z1, void *samples, void *user_data,
                                       char *message, size_t message_size);

  /* API 0.7: a volume the caller serves a z-slab at a time (a chunked array
   * larger than memory), for supervox_slic_source. */
  typedef struct
  {
    SupervoxDtype dtype; /* UINT8/16/32, INT8/16/32, FLOAT32 or FLOAT64 */
    int64_t shape[4];    /* z, y, x, channels; a 2D image has shape[0] == 1 */
    /* The calibration the label file carries, z, y, x (0: none, then
     * params->spacing without a unit, as supervox_slic_file does). */
    double spacing[3];
    const char *unit; /* of spacing ("µm"); NULL: none */
    const char *name; /* names the source in messages; NULL: "the slab source" */
    SupervoxSlabReadFunc read;
    void *user_data;
  } SupervoxSlabSource;

  /* Fills source with no read function, no calibration, shape zeros. */
  SUPERVOX_EXPORT void supervox_slab_source_init (SupervoxSlabSource *source);

  /* supervox_slic_file with the volume read slab by slab from `source`
   * instead of a file: the run always streams (the volume is never held
   * whole nor copied), within memory_limit bytes (0: what the machine has
   * free), with its temporary files beside `output`. The labels are
   * supervox_slic's on the same array, written as supervox_slic_file
   * writes them: a label TIFF, or an OME-Zarr store (Zarr v2, with
   * supervox-cli's default codec) when `output` ends in ".zarr". mask,
   * params, backend, control and info as for supervox_slic_file. A read
   * function that fails stops the run with SUPERVOX_ERROR_IO and the
   * message "NAME: slices Z0 to Z1 could not be read: MESSAGE" (Z1 the last slice asked for); no output
   * is left then. */
  SUPERVOX_EXPORT int supervox_slic_source (const SupervoxSlabSource *source, const char *output,
                                            const char *mask, const SupervoxParams *params,
                                            SupervoxBackend backend, uint64_t memory_limit,
                                            const SupervoxControl *control,
                                            SupervoxFileInfo *info);

  /* API 0.8: supervox_slic_source with the mask served slab by slab too:
   * `mask` (NULL: none) of the volume's z, y, x shape and one channel, any
   * source dtype, nonzero = in, read like the volume and never held whole.
   * Its read function's failure names the mask's source. */
  SUPERVOX_EXPORT int supervox_slic_sources (const SupervoxSlabSource *source,
                                             const SupervoxSlabSource *mask, const char *output,
                                             const SupervoxParams *params,
                                             SupervoxBackend backend, uint64_t memory_limit,
                                             const SupervoxControl *control,
                                             SupervoxFileInfo *info);

  /* Per-supervoxel statistics of a label array (API 0.5): what
   * scikit-image's regionprops_table gives, computed on all cores with the
   * same numbers for any thread count. */
  typedef struct _SupervoxTable SupervoxTable;

  typedef struct
  {
    int32_t has_background; /* 1: voxels equal to `background` are left out (default 1) */
    int64_t background;     /* 0 */
    int32_t n_threads;      /* 0: all cores */
    /* API 0.6: the pairs of touching labels. */
    int32_t adjacency; /* 1: also collect them (default 0) */
    double spacing[3]; /* 1, 1, 1; z, y, x voxel size for the pairs' face_area, > 0 */
  } SupervoxTableOptions;

  /* Fills options with the defaults above. */
  SUPERVOX_EXPORT void supervox_table_options_init (SupervoxTableOptions *options);

  /* The table of `labels` (host memory, any integer dtype, shape z, y, x, 1,
   * values within int32) and `intensity` (NULL, or host memory of the same
   * z, y, x with any number of channels; any dtype but FLOAT16, taken as
   * its values, not rescaled). options may be NULL (the defaults). On
   * success *table is a new table to free with supervox_table_free. */
  SUPERVOX_EXPORT int supervox_table_new (const SupervoxArray *labels,
                                          const SupervoxArray *intensity,
                                          const SupervoxTableOptions *options,
                                          SupervoxTable **table);
  SUPERVOX_EXPORT void supervox_table_free (SupervoxTable *table);

  /* Rows: one per label, in increasing label order. */
  SUPERVOX_EXPORT int64_t supervox_table_n_rows (const SupervoxTable *table);

  /* Copies a column (n_rows doubles) into `out`. Names: "label", "voxels",
   * "centroid-0" … "centroid-2" (mean voxel index z, y, x), "bbox-0" …
   * "bbox-5" (min z, y, x, then max z, y, x, half-open), and for channel
   * C of the intensity "intensity_mean-C", "intensity_std-C" (ddof 0),
   * "intensity_min-C", "intensity_max-C". An unknown name is
   * SUPERVOX_ERROR_INVALID_PARAM. */
  SUPERVOX_EXPORT int supervox_table_column (const SupervoxTable *table, const char *name,
                                             double *out);

  /* Pairs (API 0.6): with options->adjacency, one per pair of labels a < b
   * that share voxel faces (6-neighbourhood; background voxels touch
   * nothing), in increasing (a, b) order; 0 without. */
  SUPERVOX_EXPORT int64_t supervox_table_n_pairs (const SupervoxTable *table);

  /* Copies a pair column (n_pairs doubles) into `out`: the numbers of
   * `supervox-cli stats --adjacency`. Names: "label-a", "label-b", "faces"
   * (voxel faces shared), "face_area" (those faces' physical area from
   * options->spacing: a face between slices counts y·x, and so on), and for
   * channel C of the intensity "boundary_mean-C" (over every shared face,
   * the mean of the two voxels' values: Σ (I(p) + I(q)) / (2 · faces)). An
   * unknown name, or a table made without adjacency, is
   * SUPERVOX_ERROR_INVALID_PARAM. */
  SUPERVOX_EXPORT int supervox_table_pair_column (const SupervoxTable *table, const char *name,
                                                  double *out);

  /* Frees the GPU memory kept between CUDA runs (see the top of this file),
   * on every device. Runs in progress keep theirs until they end. Does
   * nothing in a build without CUDA. */
  SUPERVOX_EXPORT void supervox_cuda_release_cache (void);

  /* The message of this thread's last failure ("" when none); valid until
   * this thread's next supervox call. */
  SUPERVOX_EXPORT const char *supervox_last_error (void);

  /* A status's name, "SUPERVOX_ERROR_NO_MEMORY"; static string. */
  SUPERVOX_EXPORT const char *supervox_status_name (int status);

#ifdef __cplusplus
}
#endif

#endif /* SUPERVOX_SUPERVOX_H */

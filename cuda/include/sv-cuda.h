/* Supervox CUDA backend: the plain C interface the application sees.
 *
 * The backend implements the stages of SvBackendClass (supervox/sv-backend-class.h).
 * Applications register it at start-up with
 * sv_backend_register (sv_backend_cuda_class ()) when the build has
 * SV_HAVE_CUDA. Its device labels and stream are the optional abilities of
 * the backend table (sv_backend_get_device_labels,
 * sv_backend_get_device_stream); the functions below that take an SvBackend
 * expect one of this class. */
#pragma once

#include <glib.h>

#include "supervox/sv-backend.h"
#include "supervox/supervox.h"

G_BEGIN_DECLS

/* The CUDA backend's class, named "cuda". Its create fails with
 * SV_ENGINE_ERROR_BACKEND "no CUDA device: …" when no device is usable.
 * Before allocating, it checks free device memory and fails with
 * SV_ENGINE_ERROR_NO_MEMORY ("… needs X MiB of GPU memory, Y MiB free");
 * the environment variable SV_CUDA_MEMORY_LIMIT_MIB caps the free memory it
 * counts on (for a GPU shared with other work). */
const SvBackendClass *sv_backend_cuda_class (void);

/* Makes the CUDA class available to sv_backend_new and sv_backend_choose
 * ("cuda", and what "auto" tries); the front ends call it at start-up, and
 * it registers the class once however often it is called. */
void sv_cuda_register (void);

/* TRUE when a CUDA device is usable; otherwise FALSE with the reason
 * (SV_ENGINE_ERROR_BACKEND "no CUDA device: …"). */
gboolean sv_cuda_device_available (GError **error);

/* CUDA devices on this machine (0 when none can be used). */
int sv_cuda_device_count (void);

/* A CUDA backend on device `device` (0 …), made current on the calling
 * thread; its streamed-run steps make it current on theirs. Fails with
 * SV_ENGINE_ERROR_BACKEND when there is no such device. */
SvBackend *sv_cuda_backend_new_on_device (int device, GError **error);

/* Device bytes the in-memory run of such a volume needs at its peak, and
 * what one slice of a streamed run's slab holds on the device (its double
 * buffers), for choosing between the two and sizing the slabs. */
guint64 sv_cuda_in_memory_bytes (guint nz, guint ny, guint nx, guint nc, gboolean mask);
guint64 sv_cuda_stream_slice_bytes (guint ny, guint nx, guint nc, gboolean mask);
/* The most slices a streamed run's slab may hold on a device that lets it
 * use `limit` bytes (the clusters' buffers for n_segments counted first);
 * at least 1. */
guint sv_cuda_stream_max_depth (guint64 limit, guint ny, guint nx, guint nc, gint64 n_segments,
                                gboolean mask);

/* The device memory a streamed run's slab steps on this backend may hold
 * (0, the default: what the device has free). Under it, slabs stay on the
 * device after their first pass (they are not uploaded again), and the
 * connectivity runs on the device when the whole label volume and its
 * scratch fit. */
void sv_cuda_backend_set_memory_limit (SvBackend *backend, guint64 bytes);

/* Free and total memory of the current device, in bytes. */
gboolean sv_cuda_mem_get_info (gsize *free_bytes, gsize *total_bytes, GError **error);

/* The calling thread's current CUDA device, and making another current. */
gboolean sv_cuda_get_device (int *device, GError **error);
gboolean sv_cuda_set_device (int device, GError **error);

/* The device whose memory holds `pointer` (device or managed memory);
 * SV_ENGINE_ERROR_INVALID_PARAM "<what> is not in GPU memory" for host
 * memory. */
gboolean sv_cuda_pointer_device (const void *pointer, const char *what, int *device,
                                 GError **error);

/* Loads a volume that the caller holds in device memory (the C API's
 * device entry; image z, y, x, c and mask z, y, x, 1 of any dtype and byte
 * strides, see supervox/supervox.h), in place of sv_backend_set_volume. The
 * copy into the backend's buffers runs after the work queued on `stream` (a
 * cudaStream_t) and converts on the device; only the mask is copied to the
 * host, for seeding. The caller keeps both arrays alive until it returns.
 * Such a volume has no host copy, so a failed run is not rerun on the CPU.
 * source_type is the image's dtype as a sample type (SvVolume's
 * source_type), which decides the float type of a Lab conversion. */
gboolean sv_cuda_backend_set_volume_device (SvBackend *backend, const SupervoxArray *image,
                                            SvSampleType source_type, const SupervoxArray *mask,
                                            gpointer stream, GError **error);

/* Writes the last run's labels to `device_dst` (contiguous nz*ny*nx int64
 * when wide, else int32) and makes `stream` wait for it. */
gboolean sv_cuda_backend_store_labels_device (SvBackend *backend, void *device_dst, gboolean wide,
                                              gpointer stream, GError **error);

/* TRUE when the last run's connectivity step fell back to the sequential
 * rule on the host (volumes of 2³¹ − 3 voxels or more); FALSE when it ran
 * on the device. */
gboolean sv_cuda_backend_connectivity_on_host (SvBackend *backend);

/* Where the last run spent its time (benchmarks). Device stages are CUDA
 * event times summed over the iterations, in milliseconds; prepare and
 * connect are wall-clock times of the whole stage. */
typedef struct
{
  double prepare_ms;        /* host prepare + upload, or 0 when reused */
  double bin_ms;            /* binning centres into cells */
  double assign_ms;         /* assignment kernel */
  double update_ms;         /* exact sums + means */
  double slic_zero_ms;      /* SLIC-zero maxima */
  double labels_ms;         /* fill of unassigned voxels + labels */
  double connect_device_ms; /* device connectivity (events) */
  double connect_ms;        /* whole connectivity stage, wall clock */
  guint iterations;
  gboolean connectivity_on_host;
} SvCudaStageTimes;

/* Where a streamed run's slab steps spent their time on this backend's
 * device, summed over the passes: the host copying slabs into pinned
 * buffers, the uploads and the kernels (CUDA events), and the passes' wall
 * time. Uploads and kernels run on different streams: when they overlap,
 * overlap_ms says for how long. */
typedef struct
{
  double staging_ms;
  double upload_ms;
  double kernel_ms;
  double overlap_ms; /* uploads that ran while kernels did */
  double pass_ms;
  guint passes;
} SvCudaSlabTimes;

/* The last streamed run's times on this backend (zero before one). */
void sv_cuda_backend_get_slab_times (SvBackend *backend, SvCudaSlabTimes *times);

/* Turns per-stage event timing on or off; it synchronises after every
 * iteration, so leave it off outside benchmarks. */
gboolean sv_cuda_backend_set_profiling (SvBackend *backend, gboolean enable, GError **error);
void sv_cuda_backend_get_stage_times (SvBackend *backend, SvCudaStageTimes *times);

/* Device-to-device copy bandwidth in GB/s (bytes read + written per second)
 * over a copy of `bytes`, median of several after a warm-up. */
gboolean sv_cuda_copy_bandwidth (gsize bytes, double *gbytes_per_s, GError **error);

/* The current device's peak instruction issue, for compute floors: every
 * warp scheduler issues one warp instruction (warp_size lanes) a cycle at
 * the peak clock. Schedulers per SM come from the compute capability (4
 * from Maxwell on, 2 on sm_60); clock_hz is cudaDevAttrClockRate. */
typedef struct
{
  char name[256];
  int major, minor;
  int sms;
  int schedulers_per_sm;
  int warp_size;
  double clock_hz;
  double lane_instructions_per_s; /* warp_size · sms · schedulers_per_sm · clock_hz */
} SvCudaIssueRate;

gboolean sv_cuda_issue_rate (SvCudaIssueRate *rate, GError **error);

/* sv_connectivity_enforce on the device, for host arrays (tests and
 * benchmarks of the step alone): same arguments and result. *on_device
 * tells whether the device path applied or the sequential host rule ran. */
gboolean sv_cuda_connectivity_enforce (const gint32 *in, guint nz, guint ny, guint nx,
                                       gint64 min_size, gint64 max_size, int start_label,
                                       SvConnectivityRule rule, gint32 *out, gint64 *n_labels,
                                       gboolean *on_device, GError **error);

/* The same rule window by window, as the streamed run uses it past 2³¹
 * voxels: cores of `depth` slices, `extent` at least the z extent of every
 * label minus one (tests). */
gboolean sv_cuda_connectivity_enforce_windows (const gint32 *in, guint nz, guint ny, guint nx,
                                               gint64 min_size, gint64 max_size, int start_label,
                                               SvConnectivityRule rule, guint extent, guint depth, gint32 *out,
                                               gint64 *n_labels, GError **error);

/* The label file's strips of nz·ny·nx host labels compressed on `device`
 * (deflate of runs, as sv_tiff_label_writer_append_strips takes them):
 * strips of `rows` rows, each page's last one shorter. *sizes (one a
 * strip, in file order) and *bytes are the caller's to free;
 * *negative_slice is the first slice with a negative label, counted from
 * z_first (−1: none). Tests and benchmarks of the step alone. */
gboolean sv_cuda_compress_label_strips (int device, const gint32 *labels, guint nz, guint ny,
                                        guint nx, guint rows, guint z_first, guint64 **sizes,
                                        guint8 **bytes, gsize *n_bytes, gint64 *negative_slice,
                                        GError **error);

/* The same for an OME-Zarr store's chunks of `chunks` (z, y, x) labels
 * (zlib:runs, as sv_tiff_label_writer_append_chunks takes them): one size
 * a chunk in (z, y, x) order; *negative_chunk the first chunk with a
 * negative label (−1: none). */
gboolean sv_cuda_compress_label_chunks (int device, const gint32 *labels, guint nz, guint ny,
                                        guint nx, const guint chunks[3], guint64 **sizes,
                                        guint8 **bytes, gsize *n_bytes, gint64 *negative_chunk,
                                        GError **error);

G_END_DECLS

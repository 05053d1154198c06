/* Supervox CUDA backend: the backend's state, shared by the files that
 * implement it (backend-cuda.cu: the stages; backend-buffers.cu: device
 * buffers, pinned staging and the volume upload; backend-prepare.cu: the
 * prepare stage). C++ for nvcc only. */
#pragma once

#include "supervox/sv-backend-class.h"
#include "cuda-check.h"
#include "cuda-kernels.h"
#include "sv-cuda.h"

/* Staged host transfers: up to SV_STAGE_MAX_LANES host threads, each with
 * its own stream and two pinned chunks, copy pageable memory through pinned
 * memory so that the host copies overlap the DMA and each other. */
#define SV_STAGE_MAX_LANES 8
#define SV_STAGE_CHUNK ((size_t)4 << 20)
#define SV_STAGE_MIN_BYTES ((size_t)8 << 20)

/* The slab steps' streams and buffers (stream-steps.cu). */
typedef struct _SvCudaSlabs SvCudaSlabs;

typedef struct
{
  cudaStream_t stream;
  int device; /* the device the backend was made on */
  SvCudaSlabs *slabs; /* a streamed run's, or NULL */
  SvCudaSlabTimes slab_times; /* the last streamed run's */
  guint64 memory_limit;       /* sv_cuda_backend_set_memory_limit's; 0: what is free */

  /* The caller's volume and mask, borrowed (sv-backend.h): the host side reads
   * them for Lab (3 channels, converted on the host) and mask seeding. */
  const SvVolume *volume;
  gboolean have_volume;
  const guint8 *mask;
  /* Host copies made for a volume given in device memory: the mask always
   * (seeding runs on the host), the volume only when Lab needs it. */
  SvVolume *owned_volume;
  guint8 *owned_mask;
  SvSampleType source_type; /* a device volume's dtype, for owned_volume */
  guint nz, ny, nx, nc;
  gsize n;
  gsize n_mask_in;

  /* Per-volume device buffers. */
  float *d_raw;   /* the volume as given, n × nc */
  float *d_image; /* prepared image, n × nc */
  SvCudaScan *d_scan;
  unsigned int *d_max_abs;
  uint8_t *d_mask;    /* NULL without a mask */
  int32_t *d_nearest; /* assignment */
  int32_t *d_labels;  /* the last run's labels */

  /* Prepare cache: valid while sv_slic_params_same_prepare holds. */
  SvPrepared *prepared;
  SvSlicParams prepared_params;

  /* Per-cluster-count device buffers. */
  gsize k_cap;
  guint k_nc;
  gsize cell_cap;
  float *d_centres;
  uint8_t *d_alive;
  float *d_max_dist;
  unsigned long long *d_sums;
  uint8_t *d_used;
  int *d_cell_count;
  int *d_cell_start;
  int *d_cell_fill;
  int *d_cell_items;
  int *d_windows;
  void *d_scan_tmp;
  size_t scan_tmp_bytes;

  /* Connectivity scratch (parent aliases d_nearest), allocated on first use. */
  SvCudaConnScratch conn;
  gboolean conn_ready;

  /* Optional per-stage timing with CUDA events (benchmarks). */
  gboolean profiling;
  cudaEvent_t marks[6];
  SvCudaStageTimes times;

  /* Pinned staging for large host transfers, allocated on first use and
   * kept: see staged_copy. */
  gboolean stage_tried;
  int n_lanes;
  cudaStream_t lane_stream[SV_STAGE_MAX_LANES];
  void *lane_buf[SV_STAGE_MAX_LANES][2];
  cudaEvent_t lane_done[SV_STAGE_MAX_LANES][2];

  /* The run going on: the iteration constants from the pipeline's
   * context, and when the labels were done (for connect_ms). */
  SvCudaIter it;
  gint64 labels_done_us;

  /* The last run. */
  gboolean have_labels;
  gboolean connectivity_on_host;
} SvCudaBackend;

static inline SvCudaBackend *
sv__cuda_backend (SvBackend *backend)
{
  return (SvCudaBackend *)sv_backend_get_priv (backend);
}

/* ---- backend-cuda.cu ---- */

/* The iteration constants of a run over a volume of nz × ny × nx × nc
 * with k clusters, from the pipeline's context; every slice visited. */
void sv__cuda_iter_init (SvCudaIter *it, const SvSlicContext *ctx, guint nz, guint ny, guint nx,
                         guint nc, gsize k);

/* ---- stream-steps.cu ---- */

extern const SvSlabSteps sv__cuda_slab_steps;
void sv__cuda_slabs_free (SvCudaSlabs *slabs);

/* ---- connectivity.cu ---- */

/* Device bytes of sv__cuda_conn_scratch_alloc's scratch for n voxels. */
size_t sv__cuda_conn_scratch_bytes (gsize n);
/* Connectivity scratch for n voxels, with its own parent array. */
gboolean sv__cuda_conn_scratch_alloc (SvCudaConnScratch *s, gsize n, GError **error);
void sv__cuda_conn_scratch_free (SvCudaConnScratch *s);

/* ---- connectivity-window.cu ---- */

/* Slices [z0, z1) of input labels into device memory `d` (a load), or of
 * final labels out of it (a store), on the connectivity's stream. */
typedef gboolean (*SvCcSlices) (guint z0, guint z1, int32_t *d, gpointer user_data,
                                GError **error);
/* Device bytes of a window of `depth` core slices. */
guint64 sv__cuda_cc_window_bytes (guint nz, gsize plane, guint extent, guint depth);
/* The deepest core whose window fits `budget` bytes and int indices; 0
 * when not even one slice does. */
guint sv__cuda_cc_window_depth (guint nz, gsize plane, guint extent, guint64 budget);
/* The connectivity rule window by window (see there): inputs are loaded
 * once each in z order, final labels stored in z order. `extent` bounds
 * the z extent of every input label, minus one. */
gboolean sv__cuda_connectivity_windows (guint nz, guint ny, guint nx, guint extent, guint depth,
                                        gint64 min_size, gint64 max_size, int start_label,
                                        SvConnectivityRule rule, SvCcSlices load, SvCcSlices store, gpointer user_data,
                                        cudaStream_t stream, gint64 *n_labels, GError **error);

/* The pieces that windows numbered under the connected rule, in order of
 * their starts (a piece's number is its place): on the device, the
 * number of the earlier piece each small one joins (−1: a new label, as
 * for a large one); on the host, the first voxels (in the volume the
 * windows see) of the pieces that start before voxel `own_from`, the
 * warm-up's, which are the first `n_warm`. */
typedef struct
{
  gint64 own_from;
  int32_t *d_joins;
  gsize n, cap;
  GArray *warm_starts; /* gint64 */
} SvCcPieceTable;

/* Frees the table's device array (not the host one). */
void sv__cuda_piece_table_clear (SvCcPieceTable *table);

/* sv__cuda_connectivity_windows under the connected rule for the pieces
 * that start in slices [0, core_end) (slices up to core_end + extent are
 * loaded): their labels, and *n_labels the new ones. */
gboolean sv__cuda_connectivity_windows_to (guint nz, guint ny, guint nx, guint extent, guint depth,
                                           guint core_end, gint64 min_size, gint64 max_size,
                                           int start_label, SvCcSlices load, SvCcSlices store,
                                           gpointer user_data, cudaStream_t stream,
                                           gint64 *n_labels, GError **error);

/* sv__cuda_connectivity_windows under the connected rule, numbering
 * pieces instead of labelling them, for the pieces that start in slices
 * [0, core_end): each stored voxel holds start_label + its piece's number
 * and `table` (own_from and warm_starts set, the rest empty on entry)
 * receives the pieces. Slices up to
 * core_end + extent are loaded. */
gboolean sv__cuda_piece_windows (guint nz, guint ny, guint nx, guint extent, guint depth,
                                 guint core_end, gint64 min_size, gint64 max_size, int start_label,
                                 SvCcSlices load, SvCcSlices store, gpointer user_data,
                                 cudaStream_t stream, SvCcPieceTable *table, GError **error);

/* ---- backend-buffers.cu ---- */

void sv__cuda_free_k_buffers (SvCudaBackend *self);
void sv__cuda_free_volume_buffers (SvCudaBackend *self);
void sv__cuda_free_staging (SvCudaBackend *self);
/* Buffers for k clusters of nc channels and `cells` centre bins; reused
 * when large enough. */
gboolean sv__cuda_ensure_k_buffers (SvCudaBackend *self, gsize k, guint nc, gsize cells,
                                    GError **error);
/* Connectivity scratch, allocated on first use (parent aliases d_nearest). */
gboolean sv__cuda_ensure_conn_buffers (SvCudaBackend *self, GError **error);
/* A synchronous host ↔ device copy of pageable host memory (see there). */
cudaError_t sv__cuda_staged_copy (SvCudaBackend *self, void *dst, const void *src, size_t bytes,
                                  gboolean upload);
/* The caller's volume and mask are forgotten, and copies made for device
 * input are freed. */
void sv__cuda_forget_inputs (SvCudaBackend *self);
/* The host volume Lab conversion reads: the caller's, or for device input a
 * copy of the converted volume. */
gboolean sv__cuda_ensure_host_volume (SvCudaBackend *self, GError **error);
/* The set_volume stage: device buffers for the shape, the volume and mask
 * uploaded. */
gboolean sv__cuda_set_volume (SvCudaBackend *self, const SvVolume *volume, const guint8 *mask,
                              GError **error);

/* ---- backend-prepare.cu ---- */

/* Runs the prepare stage unless the cached image still holds. */
gboolean sv__cuda_ensure_prepared (SvCudaBackend *self, const SvSlicParams *params,
                                   int n_threads, gboolean *reused, GError **error);

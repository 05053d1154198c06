/* Supervox CUDA backend: the state of a streamed run's slab steps, shared
 * by stream-steps.cu (the passes) and stream-resident.cu (slabs kept on
 * the device, and connectivity over the whole label volume). C++ for nvcc
 * only. */
#pragma once

#include "backend-cuda-private.h"

#define SLAB_BUFFERS 2
/* Timing marks kept before they are read (a ring; the oldest is long done
 * when it is reused). */
#define SLAB_MARKS 64

/* When one slab's upload and kernels ran, on the device's clock. */
typedef struct
{
  cudaEvent_t up0, up1, k0, k1;
  gboolean used;
} SlabMarks;

struct _SvCudaSlabs
{
  int device;
  SvCudaBackend *owner; /* its staged copies (sv__cuda_staged_copy) */
  cudaStream_t compute, up, down;

  /* A pass: the run's context and the clusters it reads (borrowed). */
  SvSlicContext ctx;
  const SvClusters *clusters;
  SvCudaIter it;
  gboolean have_pass;

  /* Cluster buffers for the pass. */
  gsize k_cap;
  gsize cell_cap;
  guint nc;
  float *d_centres;
  uint8_t *d_alive;
  float *d_max_dist;
  unsigned long long *d_sums;
  /* The sums' way to the host, kept for the run: hundreds of MiB with
   * millions of clusters, pinned when it can be. */
  guint64 *h_sums;
  gsize h_sums_len;
  gboolean h_sums_pinned;
  /* A larger pinned h_sums being made on a thread of its own while the
   * pass runs (pinning hundreds of MB took a quarter of the first pass). */
  GThread *sums_pinning;
  guint64 *sums_pinned;
  gsize sums_pinned_len;
  int *d_cell_count, *d_cell_start, *d_cell_fill, *d_cell_items, *d_windows;
  void *d_scan_tmp;
  size_t scan_tmp_bytes;

  /* Slab buffers, double buffered, for up to `depth` slices each. */
  guint depth;
  gsize plane;
  float *d_image[SLAB_BUFFERS];
  int32_t *d_nearest[SLAB_BUFFERS];
  uint8_t *d_mask[SLAB_BUFFERS];
  float *h_image[SLAB_BUFFERS];
  int32_t *h_nearest[SLAB_BUFFERS];
  uint8_t *h_mask[SLAB_BUFFERS];
  cudaEvent_t uploaded[SLAB_BUFFERS], computed[SLAB_BUFFERS], downloaded[SLAB_BUFFERS];
  int next;

  /* A slab's assignment on its way down, for the sink. */
  gboolean pending[SLAB_BUFFERS];
  guint pz0[SLAB_BUFFERS], pz1[SLAB_BUFFERS];
  SvSlabSink sink[SLAB_BUFFERS];
  gpointer sink_data[SLAB_BUFFERS];

  /* The assignment, then labels, of slices [kept_z0, kept_z1) of a volume
   * of kept_nz slices kept on the device (stream-kept.cu), with the label
   * pass's tally; NULL when not kept. d_kept holds slice kept_z0 first
   * (sv__cuda_kept_at). */
  int32_t *d_kept;
  unsigned *d_zmin, *d_zmax;    /* tally_k each */
  unsigned long long *d_counts; /* mask-in voxels, a negative label */
  guint kept_nz, kept_z0, kept_z1;
  gsize kept_plane, tally_k;
  /* kept_nz flags: the slices whose labels this device made (each device
   * of a run keeps its own slabs' labels in its own d_kept). */
  guint8 *kept_mine;
  guint64 kept_bytes;
  gboolean tally_started;

  /* This device's share of the connectivity (stream-pieces.cu): the
   * other devices' slices [piece_z0, kept_z0) and [kept_z1, piece_z1) its
   * windows read, copied before any device numbers its pieces, and the
   * windows' core depth (0: not prepared). */
  int32_t *d_piece_head, *d_piece_tail;
  guint piece_z0, piece_z1, piece_core, piece_extent, piece_ny, piece_nx;
  guint64 piece_bytes;
  /* Its numbered pieces (the first piece_first_own the warm-up's) and each
   * own piece's place among those that take a new label. */
  SvCcPieceTable piece_table;
  gsize piece_first_own;
  int *d_piece_rank;

  /* Slabs kept on the device from their first pass (stream-resident.cu). */
  GArray *resident; /* SvCudaResident */
  guint64 limit;    /* device bytes the steps may hold; 0: what is free */

  /* Device bytes held now (k_bytes of them by the cluster buffers) and at most. */
  guint64 bytes, k_bytes, peak;

  /* Where the passes' time went (sv_cuda_backend_get_slab_times). */
  SlabMarks marks[SLAB_MARKS];
  guint n_marks;
  gint64 pass_start_us;
  cudaEvent_t pass_ref;      /* the pass's start on the device's clock */
  GArray *uploads, *kernels; /* the pass's intervals, ms after pass_ref */
  SvCudaSlabTimes times;
};

/* A slab's prepared values (and mask) kept on the device for the passes
 * after its first: as float32 (d_image), or as the file's samples when
 * they are narrower (d_raw, prepared into a slab buffer each pass by
 * `how`, the same operations: a uint8 slab holds a quarter of the bytes). */
typedef struct
{
  guint z0, z1;
  float *d_image;  /* NULL when d_raw holds it */
  void *d_raw;     /* NULL when d_image holds it */
  SvSlabSamples how;
  uint8_t *d_mask; /* NULL without a mask */
  guint64 bytes;
} SvCudaResident;

/* cudaMalloc that keeps count of the bytes held. */
template <typename T>
static inline cudaError_t
sv__slab_malloc (SvCudaSlabs *s, T **p, size_t bytes)
{
  cudaError_t err = cudaMalloc (p, MAX (bytes, 1));
  if (err == cudaSuccess)
    {
      s->bytes += MAX (bytes, 1);
      s->peak = MAX (s->peak, s->bytes);
    }
  return err;
}

/* Where a slab's values and mask are read from on the device, and where
 * they are uploaded to (NULL: nothing to upload). */
typedef struct
{
  const float *image;
  const uint8_t *mask;
  float *image_dst;
  uint8_t *mask_dst;
  gboolean resident; /* the destinations are a slab kept on the device */
} SlabPlace;

/* An upload or kernel interval, ms after the pass's start. */
typedef struct
{
  float from, to;
} Interval;

/* ---- stream-marks.cu ---- */

/* The marks for the next slab, in slab order (the oldest, reused, are
 * read first). */
SlabMarks *sv__slab_marks_next (SvCudaSlabs *s);
/* At the end of a pass: the marks not yet read, and the pass's overlap. */
void sv__slab_marks_read_pass (SvCudaSlabs *s);
/* The pinned sums buffer made while the pass ran, if one was, as h_sums
 * (stream-steps.cu). */
void sv__slab_sums_pinned_take (SvCudaSlabs *s);

/* ---- stream-resident.cu ---- */

/* The slab kept for [z0, z1), or NULL. */
const SvCudaResident *sv__cuda_resident_find (const SvCudaSlabs *s, guint z0, guint z1);
/* Keeps slab [z0, z1) on the device when it fits under the limit: *out is
 * its entry (to upload into), or NULL when there is no room. With
 * raw_bytes > 0 it holds that many bytes of samples instead of float32. */
gboolean sv__cuda_resident_add (SvCudaSlabs *s, guint z0, guint z1, gboolean mask,
                                gsize raw_bytes, const SvCudaResident **out, GError **error);
void sv__cuda_resident_clear (SvCudaSlabs *s);
gboolean sv__cuda_slab_holds (SvBackend *backend, guint z0, guint z1);
int sv__cuda_slab_connect_volume (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                                  guint extent, gint64 min_size, gint64 max_size, int start_label,
                                  SvConnectivityRule rule, SvSlabSource source,
                                  SvSlabDeviceSource device_source, SvSlabSink sink,
                                  gpointer user_data, const SvStripSink *strips,
                                  gint64 *n_labels, guint *held, GError **error);

/* Whether `bytes` more fit under the steps' limit (or in what the device
 * has free, less a reserve). */
gboolean sv__cuda_slabs_fit (const SvCudaSlabs *s, guint64 bytes);
/* Device bytes the connectivity may take: under the steps' limit, or what
 * the device has free, less a reserve. */
guint64 sv__cuda_connect_room (const SvCudaSlabs *s);

/* ---- stream-pieces.cu ---- */

void sv__cuda_pieces_clear (SvCudaSlabs *s);
int sv__cuda_slab_pieces_prepare (SvBackend *backend, guint nz, guint ny, guint nx, guint extent,
                                  SvSlabSource source, SvSlabDeviceSource device_source,
                                  gpointer user_data, guint *held, GError **error);
gboolean sv__cuda_slab_pieces_label (SvBackend *backend, gint64 min_size, gint64 max_size,
                                     int start_label, guint depth, SvSlabSink sink,
                                     gpointer user_data, const SvStripSink *strips,
                                     gint64 *n_labels, GError **error);
gboolean sv__cuda_slab_pieces_number (SvBackend *backend, gint64 min_size, gint64 max_size,
                                      int start_label, GArray *warm_starts, gint64 *n_new,
                                      GError **error);
gboolean sv__cuda_slab_labels_at (SvBackend *backend, const gint64 *voxels, gsize n,
                                  gint32 *labels, GError **error);
gboolean sv__cuda_slab_pieces_relabel (SvBackend *backend, int first_label,
                                       const gint32 *warm_labels, gsize n_warm, int start_label,
                                       GError **error);
gboolean sv__cuda_slab_emit_kept (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                                  SvSlabSink sink, gpointer user_data, const SvStripSink *strips,
                                  GError **error);

/* ---- stream-kept.cu ---- */

/* Whether the kept labels hold slices [z0, z1). */
static inline gboolean
sv__cuda_kept_has (const SvCudaSlabs *s, guint z0, guint z1)
{
  return s->d_kept != NULL && z0 >= s->kept_z0 && z1 <= s->kept_z1 && z0 <= z1;
}

/* Slice z of the kept labels (one of [kept_z0, kept_z1]). */
static inline int32_t *
sv__cuda_kept_at (const SvCudaSlabs *s, guint z)
{
  return s->d_kept + (gsize)(z - s->kept_z0) * s->kept_plane;
}

void sv__cuda_kept_clear (SvCudaSlabs *s);
gboolean sv__cuda_slab_keep_assignment (SvBackend *backend, guint nz, guint z0, guint z1,
                                        gsize plane, gsize k, GError **error);
gboolean sv__cuda_slab_label_kept_slab (SvBackend *backend, guint z0, guint z1, const guint8 *mask,
                                        int start_label, GError **error);
gboolean sv__cuda_slab_kept_tally (SvBackend *backend, guint *zmin, guint *zmax, guint64 *n_in,
                                   gboolean *negative, GError **error);
gboolean sv__cuda_slab_store_kept (SvBackend *backend, guint z0, guint z1, const gint32 *labels,
                                   GError **error);
gboolean sv__cuda_slab_read_kept (SvBackend *backend, guint z0, guint z1, gint32 *labels,
                                  GError **error);
int sv__cuda_slab_copy_kept_to (SvBackend *backend, guint z0, guint z1, SvBackend *target,
                                gpointer dst, GError **error);
gboolean sv__cuda_slab_export_kept (SvBackend *backend, guint8 *handle, GError **error);
int sv__cuda_slab_import_kept (SvBackend *backend, const guint8 *handle, guint z0, guint z1,
                               GError **error);

/* ---- stream-samples.cu ---- */

int sv__cuda_slab_take_samples (SvBackend *backend, guint z0, guint z1, const void *raw,
                                const SvSlabSamples *how, const guint8 *mask, GError **error);
/* A slab held as its samples, prepared into `dst` on the compute stream. */
gboolean sv__cuda_resident_prepare (SvCudaSlabs *s, const SvCudaResident *r, float *dst,
                                    GError **error);

/* ---- stream-buffers.cu ---- */

/* The backend's slab steps' state, made on first use on its device. */
SvCudaSlabs *sv__cuda_slabs_enter (SvBackend *backend, GError **error);
/* The pass's cluster buffers for k clusters of nc channels and `cells`
 * centre bins (kept when large enough). */
gboolean sv__slab_ensure_k_buffers (SvCudaSlabs *s, gsize k, guint nc, gsize cells, GError **error);
/* Buffer b's pinned host memory at *p (h_image, h_nearest or h_mask, of
 * `per_voxel` bytes a voxel), made when first needed. */
gboolean sv__slab_ensure_host (SvCudaSlabs *s, void *p, gsize per_voxel, GError **error);
/* Hands buffer b's kept assignment to its sink once it is on the host. */
gboolean sv__slab_deliver (SvCudaSlabs *s, int b, GError **error);
/* Where slab [z0, z1)'s values and mask are read (a slab kept on the
 * device in place; one it can keep goes up into its own buffers, once;
 * the others into buffer b). */
gboolean sv__slab_place (SvCudaSlabs *s, int b, guint z0, guint z1, const float *data,
                         const guint8 *mask, SlabPlace *p, GError **error);
/* The next slab buffer (for `depth` slices, with a mask buffer when
 * `mask`), free on the host; −1 with `error` set. */
int sv__slab_take_buffer (SvCudaSlabs *s, guint depth, gboolean mask, GError **error);
/* Queues slab [z0, z1)'s values and mask (to p's destinations) and, when
 * given, its assignment into buffer b's device memory, after the last
 * kernels that read that buffer; the compute stream waits for them. */
gboolean sv__slab_upload (SvCudaSlabs *s, int b, guint z0, guint z1, const float *data,
                          const guint8 *mask, const gint32 *nearest, const SlabPlace *p,
                          SlabMarks *m, GError **error);
/* memcpy to or from pinned memory, on several threads for large copies. */
void sv__staging_copy (void *dst, const void *src, size_t bytes);

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
 * after its first. */
typedef struct
{
  guint z0, z1;
  float *d_image;
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

/* ---- stream-resident.cu ---- */

/* The slab kept for [z0, z1), or NULL. */
const SvCudaResident *sv__cuda_resident_find (const SvCudaSlabs *s, guint z0, guint z1);
/* Keeps slab [z0, z1) on the device when it fits under the limit: *out is
 * its entry (to upload into), or NULL when there is no room. */
gboolean sv__cuda_resident_add (SvCudaSlabs *s, guint z0, guint z1, gboolean mask,
                                const SvCudaResident **out, GError **error);
void sv__cuda_resident_clear (SvCudaSlabs *s);
gboolean sv__cuda_slab_holds (SvBackend *backend, guint z0, guint z1);
int sv__cuda_slab_connect_volume (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                                  gint64 min_size, gint64 max_size, int start_label,
                                  SvSlabSource source, SvSlabSink sink, gpointer user_data,
                                  gint64 *n_labels, GError **error);

/* ---- stream-steps.cu ---- */

/* The backend's slab steps' state, made on first use on its device. */
SvCudaSlabs *sv__cuda_slabs_enter (SvBackend *backend, GError **error);

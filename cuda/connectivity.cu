/* Supervox CUDA backend: connectivity enforcement on the device, giving
 * exactly the labels of the CPU's sequential sv_connectivity_enforce
 * (scikit-image's raster-order BFS).
 *
 * Why this is exact. The sequential scan cuts every 6-connected same-label
 * component C into pieces: BFSs started, in raster order, at the first
 * voxel of C not yet taken, each stopping at max_size voxels. A BFS only
 * enters voxels of C, so the cut of C depends on C alone: when |C| <
 * max_size the piece is C itself, started at its raster-first voxel r(C)
 * (the union-find root); otherwise one thread block per such oversized
 * component replays the sequential cut with a level-synchronous BFS that
 * keeps the sequential queue order (connectivity-split.cu). Every voxel
 * then knows the start of its piece, a piece's start is its raster-first
 * voxel, and pieces are processed in order of their starts.
 *
 * The connected rule. A small piece P (below min_size) gets the final
 * label of the last neighbour seen by its BFS that was already labelled
 * (its piece starts before P); one thread per small piece replays its BFS
 * to find it. A piece that sees none takes a new label, as a piece of
 * min_size voxels or more ("large") does. Let B(P) be the number of such
 * new-label pieces that start before P (an exclusive scan): they get
 * start_label + B(P), and the small pieces follow their links to one
 * (starts strictly decrease, so chains end).
 *
 * The legacy rule. B(P) counts the large pieces only, and a small piece
 * takes the last labelled neighbour whose label differs from the current
 * counter start_label + B(P). Only an "orphan-rooted" piece of the same
 * counter segment carries the counter; connectivity-small.cu finds those
 * pieces by a parallel propagation, links every other small piece to its
 * neighbour and follows the links to a large or orphan-rooted piece.
 * min_size > max(max_size, 1) makes every piece small, hence every voxel
 * start_label.
 *
 * No step is sequential over the volume. Only volumes of 2³¹ − 3 voxels
 * or more are left to the host (*handled false). */
#define G_LOG_DOMAIN "sv-cuda"

#include <cub/device/device_scan.cuh>
#include <limits.h>

#include <string.h>

#include "backend-cuda-private.h"
#include "connectivity-private.cuh"
#include "supervox/sv-connectivity.h"
#include "cuda-check.h"
#include "sv-cuda.h"

#define SV_FULL_MASK 0xffffffffu

__device__ __forceinline__ int
find_root (const int *parent, int x)
{
  const volatile int *p = parent;
  int q = p[x];
  while (q != x)
    {
      x = q;
      q = p[x];
    }
  return x;
}

/* Links the larger root under the smaller, so every root ends as the
 * raster-first voxel of its component. */
__device__ void
unite (int *parent, int a, int b)
{
  for (;;)
    {
      a = find_root (parent, a);
      b = find_root (parent, b);
      if (a == b)
        return;
      if (a < b)
        {
          int t = a;
          a = b;
          b = t;
        }
      if (atomicCAS (&parent[a], a, b) == a)
        return;
    }
}

/* Each voxel starts linked to its −x neighbour when that has the same
 * label: the row runs are trees from the start, and the union step only
 * joins them across y and z. Links still point to lower indices, so roots
 * stay raster-first voxels. */
__global__ void
cc_init_kernel (int n, int nx, const int32_t *__restrict__ in, int background,
                int *__restrict__ parent)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int label = in[v];
  if (label == background)
    parent[v] = -1;
  else
    parent[v] = v % nx > 0 && in[v - 1] == label ? v - 1 : v;
}

__global__ void
cc_union_kernel (int nz, int ny, int nx, const int32_t *__restrict__ in, int background,
                 int *parent)
{
  long long n = (long long)nz * ny * nx;
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int label = in[v];
  if (label == background)
    return;
  int x = v % nx;
  int y = (v / nx) % ny;
  int z = v / (nx * ny);
  /* The ±x edges were made by the initial links. Along y and z, when the
   * −x neighbours on both sides carry the label too, their edge already
   * joins the same two row runs: one edge per pair of runs is enough. */
  bool left = x > 0 && in[v - 1] == label;
  if (y + 1 < ny && in[v + nx] == label && !(left && in[v + nx - 1] == label))
    unite (parent, v, v + nx);
  if (z + 1 < nz && in[v + nx * ny] == label && !(left && in[v + nx * ny - 1] == label))
    unite (parent, v, v + nx * ny);
}

__global__ void
cc_compress_size_kernel (int n, int *parent, int *__restrict__ size)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  int root = -1;
  if (v < n && parent[v] >= 0)
    {
      root = find_root (parent, v);
      parent[v] = root;
    }
  /* Neighbouring voxels mostly share a root: one atomic per group. */
  unsigned peers = __match_any_sync (SV_FULL_MASK, root);
  int leader = __ffs (peers) - 1;
  if (root >= 0 && (int)(threadIdx.x & 31) == leader)
    atomicAdd (&size[root], __popc (peers));
}

__global__ void
cc_classify_kernel (int n, const int *__restrict__ parent, const int *__restrict__ size,
                    long long min_size, long long max_size, int *__restrict__ big,
                    int *__restrict__ small_roots, int *__restrict__ small_offsets, int *counters)
{
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  bool small = false;
  int s = 0;
  if (v < n && parent[v] == v)
    {
      s = size[v];
      if (s >= max_size)
        atomicAdd (&counters[COUNTER_OVERSIZED], 1);
      small = s < min_size;
      big[v] = !small;
    }
  else if (v <= n)
    big[v] = 0;

  /* Millions of small pieces on noisy data: one atomic per warp, not per
   * piece, on the two list counters. */
  const unsigned int smalls = __ballot_sync (SV_FULL_MASK, small);
  if (smalls == 0)
    return;
  int queue_end = small ? s : 0;
  for (int d = 1; d < 32; d <<= 1)
    {
      int t = __shfl_up_sync (SV_FULL_MASK, queue_end, d);
      if (lane >= d)
        queue_end += t;
    }
  int first = 0, queue_first = 0;
  if (lane == 31)
    {
      first = atomicAdd (&counters[COUNTER_N_SMALL], __popc (smalls));
      queue_first = atomicAdd (&counters[COUNTER_QUEUE_USED], queue_end);
    }
  first = __shfl_sync (SV_FULL_MASK, first, 31);
  queue_first = __shfl_sync (SV_FULL_MASK, queue_first, 31);
  if (small)
    {
      const int i = first + __popc (smalls & ((1u << lane) - 1));
      small_roots[i] = v;
      small_offsets[i] = queue_first + queue_end - s;
    }
}

__global__ void
cc_final_kernel (int n, const int *__restrict__ parent, const int *__restrict__ link,
                 const int *__restrict__ rank, int base, int start_label, int32_t *__restrict__ out)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int r = parent[v];
  if (r < 0)
    return;
  out[v] = start_label + cc_piece_label (parent, link, rank, base, r);
}

/* In a window: voxels an earlier window settled take their encoded label
 * (cc_is_known), pieces that start at core_end or later drop out (they are
 * the next window's, maybe cut by its top). */
__global__ void
cc_window_mark_kernel (int n, const int32_t *__restrict__ known, int background, int start_label,
                       int core_end, int *__restrict__ parent)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int p = parent[v];
  if (p >= 0)
    {
      if (p >= core_end)
        parent[v] = -1;
      return;
    }
  int k = known[v];
  if (k != SV_CC_UNKNOWN && k != background)
    parent[v] = -2 - (k - start_label);
}

/* Pieces mode (SvCcWindow.pieces): every piece start is flagged for the
 * rank scan (flags[n] = 0). */
__global__ void
cc_piece_flags_kernel (int n, const int *__restrict__ parent, int *__restrict__ flags)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v > n)
    return;
  flags[v] = v < n && parent[v] == v;
}

/* Pieces mode: the window's table, a row per piece in order of starts. A
 * small piece's link names a voxel of the earlier piece it joins: a voxel
 * an earlier window settled (its number is its known label) or one of
 * this window's pieces. */
__global__ void
cc_piece_table_kernel (int n, const int *__restrict__ parent, const int *__restrict__ link,
                       const int *__restrict__ rank, int base, int *__restrict__ starts,
                       int *__restrict__ joins)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || parent[v] != v)
    return;
  const int i = rank[v], l = link[v];
  int j = -1;
  if (l <= -2)
    {
      const int q = parent[-l - 2];
      j = cc_is_known (q) ? cc_known_label (q) : base + rank[q];
    }
  starts[i] = v;
  joins[i] = j;
}

/* Pieces mode: each voxel takes its piece's number. */
__global__ void
cc_piece_final_kernel (int n, const int *__restrict__ parent, const int *__restrict__ rank,
                       int base, int start_label, int32_t *__restrict__ out)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int r = parent[v];
  if (r >= 0)
    out[v] = start_label + base + rank[r];
}

/* min_size > max(max_size, 1): every piece is small, the first keeps the
 * counter and no later one ever sees a label other than it. */
__global__ void
cc_uniform_kernel (long long n, int32_t *labels, int background, int start_label, int *counters)
{
  long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || labels[v] == background)
    return;
  labels[v] = start_label;
  if (counters[COUNTER_ANY] == 0)
    atomicExch (&counters[COUNTER_ANY], 1);
}

size_t
sv_cuda_connectivity_bytes (long long n)
{
  /* size/rank, link, queue, small roots and offsets, visited, counters. */
  return (size_t)(n + 1) * (5 * sizeof (int) + 1) + N_COUNTERS * sizeof (int);
}

cudaError_t
sv__cuda_cc_grow_scratch (SvCudaConnScratch *s, size_t bytes)
{
  cudaFree (s->scan_tmp);
  s->scan_tmp = NULL;
  s->scan_tmp_bytes = 0;
  cudaError_t err = cudaMalloc (&s->scan_tmp, bytes);
  if (err == cudaSuccess)
    s->scan_tmp_bytes = bytes;
  return err;
}

/* Makes s->scan_tmp large enough for an exclusive scan of n ints. */
static cudaError_t
grow_tmp (SvCudaConnScratch *s, const int *in, int *out, int n, cudaStream_t stream)
{
  size_t tmp = 0;
  cudaError_t err = cub::DeviceScan::ExclusiveSum (NULL, tmp, in, out, n, stream);
  if (err != cudaSuccess || tmp <= s->scan_tmp_bytes)
    return err;
  return sv__cuda_cc_grow_scratch (s, tmp);
}

cudaError_t
sv__cuda_cc_run (int32_t *labels, int nz, int ny, int nx, long long min_size, long long max_size,
                 int start_label, bool legacy, const SvCcWindow *window, SvCudaConnScratch *s,
                 cudaStream_t stream, int *n_large, bool *in_use)
{
  const long long n = (long long)nz * ny * nx;
  const int nn = (int)n;
  const int background = start_label - 1;
  const int base = window != NULL ? window->base : 0;
  int32_t *out = window != NULL ? window->known : labels;
  int h_counters[N_COUNTERS];

  SV_CUDA_TRY_RETURN (cudaMemsetAsync (s->counters, 0, N_COUNTERS * sizeof (int), stream));
  SV_CUDA_TRY_RETURN (cudaMemsetAsync (s->size, 0, (size_t)(n + 1) * sizeof (int), stream));
  cc_init_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (nn, nx, labels, background,
                                                                s->parent);
  SV_CUDA_TRY_RETURN (cudaGetLastError ());
  cc_union_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (nz, ny, nx, labels, background,
                                                                 s->parent);
  SV_CUDA_TRY_RETURN (cudaGetLastError ());
  cc_compress_size_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (nn, s->parent, s->size);
  SV_CUDA_TRY_RETURN (cudaGetLastError ());
  if (window != NULL)
    {
      cc_window_mark_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (
          nn, window->known, background, start_label, window->core_end, s->parent);
      SV_CUDA_TRY_RETURN (cudaGetLastError ());
    }
  cc_classify_kernel<<<sv_cc_grid (n + 1), SV_CC_BLOCK, 0, stream>>> (
      nn, s->parent, s->size, min_size, max_size, s->link, s->small_roots, s->small_offsets,
      s->counters);
  SV_CUDA_TRY_RETURN (cudaGetLastError ());
  SV_CUDA_TRY_RETURN (
      cudaMemcpyAsync (h_counters, s->counters, sizeof h_counters, cudaMemcpyDeviceToHost, stream));
  SV_CUDA_TRY_RETURN (cudaStreamSynchronize (stream));
  if (h_counters[COUNTER_OVERSIZED] > 0)
    {
      g_debug ("connectivity: %d oversized components", h_counters[COUNTER_OVERSIZED]);
      /* Cut the oversized components into their sequential pieces, then
       * classify the pieces again (no piece is oversized any more). */
      SV_CUDA_TRY_RETURN (sv__cuda_cc_split_oversized (labels, nz, ny, nx, max_size,
                                                       h_counters[COUNTER_OVERSIZED], s, stream));
      /* A cut component of the window's core may go on past it: its
       * pieces that start at core_end or later are the next window's,
       * which cuts what is left of it the same way (a BFS only walks the
       * voxels no earlier piece took). */
      if (window != NULL)
        {
          cc_window_mark_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (
              nn, window->known, background, start_label, window->core_end, s->parent);
          SV_CUDA_TRY_RETURN (cudaGetLastError ());
        }
      SV_CUDA_TRY_RETURN (cudaMemsetAsync (s->counters, 0, N_COUNTERS * sizeof (int), stream));
      cc_classify_kernel<<<sv_cc_grid (n + 1), SV_CC_BLOCK, 0, stream>>> (
          nn, s->parent, s->size, min_size, LLONG_MAX, s->link, s->small_roots, s->small_offsets,
          s->counters);
      SV_CUDA_TRY_RETURN (cudaGetLastError ());
      SV_CUDA_TRY_RETURN (cudaMemcpyAsync (h_counters, s->counters, sizeof h_counters,
                                           cudaMemcpyDeviceToHost, stream));
      SV_CUDA_TRY_RETURN (cudaStreamSynchronize (stream));
    }

  const int n_small = h_counters[COUNTER_N_SMALL];
  /* The connected rule knows which small pieces take a new label only
   * after their replays: they join the scan's flags. */
  const int *flags = s->link;
  if (!legacy && n_small > 0)
    {
      SV_CUDA_TRY_RETURN (
          sv__cuda_cc_link_small_connected (nz, ny, nx, n_small, max_size, s, stream));
      flags = s->queue;
    }
  /* Pieces mode numbers every piece: all starts are flagged. */
  const bool pieces = window != NULL && window->pieces;
  if (pieces)
    {
      cc_piece_flags_kernel<<<sv_cc_grid (n + 1), SV_CC_BLOCK, 0, stream>>> (nn, s->parent,
                                                                             s->queue);
      SV_CUDA_TRY_RETURN (cudaGetLastError ());
      flags = s->queue;
    }
  /* rank = exclusive scan of the new-label flags; the sizes are spent. */
  SV_CUDA_TRY_RETURN (grow_tmp (s, flags, s->size, nn + 1, stream));
  size_t tmp = s->scan_tmp_bytes;
  SV_CUDA_TRY_RETURN (
      cub::DeviceScan::ExclusiveSum (s->scan_tmp, tmp, flags, s->size, nn + 1, stream));

  if (pieces)
    {
      cc_piece_table_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (
          nn, s->parent, s->link, s->size, base, s->small_roots, s->small_offsets);
      SV_CUDA_TRY_RETURN (cudaGetLastError ());
      cc_piece_final_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (nn, s->parent, s->size,
                                                                           base, start_label, out);
      SV_CUDA_TRY_RETURN (cudaGetLastError ());
      SV_CUDA_TRY_RETURN (
          cudaMemcpyAsync (n_large, s->size + n, sizeof (int), cudaMemcpyDeviceToHost, stream));
      SV_CUDA_TRY_RETURN (cudaStreamSynchronize (stream));
      *in_use = false;
      return cudaSuccess;
    }
  if (legacy && n_small > 0)
    SV_CUDA_TRY_RETURN (sv__cuda_cc_link_small (
        nz, ny, nx, n_small, base, max_size, window != NULL && window->counter_in_use, s, stream));
  else if (n_small > 0)
    SV_CUDA_TRY_RETURN (sv__cuda_cc_settle_small (n_small, base, s, stream));

  cc_final_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (nn, s->parent, s->link, s->size,
                                                                 base, start_label, out);
  SV_CUDA_TRY_RETURN (cudaGetLastError ());
  SV_CUDA_TRY_RETURN (
      cudaMemcpyAsync (n_large, s->size + n, sizeof (int), cudaMemcpyDeviceToHost, stream));
  SV_CUDA_TRY_RETURN (
      cudaMemcpyAsync (h_counters, s->counters, sizeof h_counters, cudaMemcpyDeviceToHost, stream));
  SV_CUDA_TRY_RETURN (cudaStreamSynchronize (stream));
  *in_use = h_counters[COUNTER_IN_USE] != 0;
  return cudaSuccess;
}

cudaError_t
sv__cuda_cc_uniform (int32_t *labels, long long n, int start_label, SvCudaConnScratch *s,
                     cudaStream_t stream, bool *any)
{
  int h_any = 0;

  SV_CUDA_TRY_RETURN (cudaMemsetAsync (s->counters + COUNTER_ANY, 0, sizeof (int), stream));
  cc_uniform_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (n, labels, start_label - 1,
                                                                   start_label, s->counters);
  SV_CUDA_TRY_RETURN (cudaGetLastError ());
  SV_CUDA_TRY_RETURN (cudaMemcpyAsync (&h_any, s->counters + COUNTER_ANY, sizeof (int),
                                       cudaMemcpyDeviceToHost, stream));
  SV_CUDA_TRY_RETURN (cudaStreamSynchronize (stream));
  *any = h_any != 0;
  return cudaSuccess;
}

cudaError_t
sv_cuda_connectivity (int32_t *labels, int nz, int ny, int nx, long long min_size,
                      long long max_size, int start_label, SvConnectivityRule rule,
                      SvCudaConnScratch *s, cudaStream_t stream, long long *n_labels, bool *handled)
{
  const bool legacy = rule == SV_CONNECTIVITY_RULE_LEGACY;
  long long n = (long long)nz * ny * nx;
  int total = 0;
  bool in_use = false;

  *handled = false;
  if (n == 0 || n >= INT_MAX - 2)
    return cudaSuccess;
  if (legacy && min_size > max_size && min_size > 1)
    {
      bool any = false;
      SV_CUDA_TRY_RETURN (sv__cuda_cc_uniform (labels, n, start_label, s, stream, &any));
      *n_labels = any ? 1 : 0;
      *handled = true;
      return cudaSuccess;
    }
  SV_CUDA_TRY_RETURN (sv__cuda_cc_run (labels, nz, ny, nx, min_size, max_size, start_label, legacy,
                                       NULL, s, stream, &total, &in_use));
  *n_labels = (long long)total + (in_use ? 1 : 0);
  *handled = true;
  return cudaSuccess;
}
#undef TRY

size_t
sv__cuda_conn_scratch_bytes (gsize n)
{
  return sv_cuda_connectivity_bytes ((long long)n) + (n + 1) * sizeof (int);
}

gboolean
sv__cuda_conn_scratch_alloc (SvCudaConnScratch *s, gsize n, GError **error)
{
  memset (s, 0, sizeof *s);
  SV_CUDA_CHECK (cudaMalloc (&s->parent, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s->size, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s->link, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s->queue, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s->small_roots, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s->small_offsets, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s->visited, n + 1));
  SV_CUDA_CHECK (cudaMalloc (&s->counters, 16 * sizeof (int)));
  return TRUE;
out:
  sv__cuda_conn_scratch_free (s);
  return FALSE;
}

void
sv__cuda_conn_scratch_free (SvCudaConnScratch *s)
{
  cudaFree (s->parent);
  cudaFree (s->size);
  cudaFree (s->link);
  cudaFree (s->queue);
  cudaFree (s->small_roots);
  cudaFree (s->small_offsets);
  cudaFree (s->visited);
  cudaFree (s->counters);
  cudaFree (s->scan_tmp);
  memset (s, 0, sizeof *s);
}

gboolean
sv_cuda_connectivity_enforce (const gint32 *in, guint nz, guint ny, guint nx, gint64 min_size,
                              gint64 max_size, int start_label, SvConnectivityRule rule,
                              gint32 *out, gint64 *n_labels, gboolean *on_device, GError **error)
{
  gsize n = (gsize)nz * ny * nx;
  SvCudaConnScratch s;
  cudaStream_t stream = NULL;
  int32_t *d_labels = NULL;
  bool handled = false;
  long long count = 0;
  gboolean ok = FALSE;

  memset (&s, 0, sizeof s);
  *on_device = FALSE;
  if (n == 0)
    {
      *n_labels
          = sv_connectivity_enforce (in, nz, ny, nx, min_size, max_size, start_label, rule, out);
      return TRUE;
    }
  if (!sv__cuda_check_free (sv__cuda_conn_scratch_bytes (n) + n * sizeof (int),
                            "the connectivity step", error))
    return FALSE;
  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  SV_CUDA_CHECK (cudaMalloc (&d_labels, n * sizeof (int32_t)));
  if (!sv__cuda_conn_scratch_alloc (&s, n, error))
    goto out;
  SV_CUDA_CHECK (
      cudaMemcpyAsync (d_labels, in, n * sizeof (int32_t), cudaMemcpyHostToDevice, stream));
  SV_CUDA_CHECK (sv_cuda_connectivity (d_labels, (int)nz, (int)ny, (int)nx, min_size, max_size,
                                       start_label, rule, &s, stream, &count, &handled));
  if (handled)
    {
      SV_CUDA_CHECK (
          cudaMemcpyAsync (out, d_labels, n * sizeof (int32_t), cudaMemcpyDeviceToHost, stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (stream));
      *n_labels = count;
      *on_device = TRUE;
    }
  else
    *n_labels
        = sv_connectivity_enforce (in, nz, ny, nx, min_size, max_size, start_label, rule, out);
  ok = TRUE;
out:
  if (stream != NULL)
    cudaStreamSynchronize (stream);
  cudaFree (d_labels);
  sv__cuda_conn_scratch_free (&s);
  if (stream != NULL)
    cudaStreamDestroy (stream);
  return ok;
}

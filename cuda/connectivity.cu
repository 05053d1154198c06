/* Supervox CUDA backend: connectivity enforcement on the device, giving
 * exactly the labels of the CPU's sequential sv_connectivity_enforce
 * (scikit-image's raster-order BFS).
 *
 * Why this is exact: when no component reaches max_size, every BFS piece is
 * a whole 6-connected same-label component C, started at its raster-first
 * voxel r(C); pieces are processed in order of r. A piece with at least
 * min_size voxels takes the counter, which has advanced once per earlier
 * such piece: start_label + rank among those. A smaller piece takes the
 * final label of the last neighbour its BFS saw that was already labelled,
 * i.e. whose component starts before r(C); that neighbour is found by
 * replaying the piece's BFS (one thread per small piece, same neighbour
 * order), and its label is resolved by following such links to a large
 * piece (indices strictly decrease, so chains end). Two situations need the
 * sequential rule itself and are reported back so that the caller runs it:
 * a component of max_size voxels or more (split mid-BFS) and a small piece
 * with no labelled neighbour at all (the counter is then shared), as well
 * as min_size > max_size. */
#define G_LOG_DOMAIN "sv-cuda"

#include <cub/device/device_scan.cuh>
#include <limits.h>

#include <string.h>

#include "connectivity.h"
#include "cuda-check.h"
#include "cuda-kernels.h"
#include "sv-cuda.h"

#define SV_BLOCK 256
#define SV_FULL_MASK 0xffffffffu

enum
{
  COUNTER_N_SMALL,
  COUNTER_QUEUE_USED,
  COUNTER_OVERSIZED,
  COUNTER_ORPHAN,
  N_COUNTERS
};

static inline unsigned int
grid_for (long long n)
{
  return (unsigned int)((n + SV_BLOCK - 1) / SV_BLOCK);
}

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
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v > n)
    return;
  if (v == n || parent[v] != v)
    {
      big[v] = 0;
      return;
    }
  int s = size[v];
  if (s >= max_size)
    atomicExch (&counters[COUNTER_OVERSIZED], 1);
  if (s >= min_size)
    {
      big[v] = 1;
      return;
    }
  big[v] = 0;
  int i = atomicAdd (&counters[COUNTER_N_SMALL], 1);
  small_roots[i] = v;
  small_offsets[i] = atomicAdd (&counters[COUNTER_QUEUE_USED], s);
}

/* Replays the sequential BFS of one small component from its raster-first
 * voxel (neighbour order +x −x +y −y +z −z) and records, in link[root] as
 * −(n + 2), the last neighbour n that was already labelled at that point:
 * a voxel of a component that starts earlier. */
__global__ void
cc_small_bfs_kernel (int nz, int ny, int nx, const int32_t *__restrict__ in,
                     const int *__restrict__ parent, const int *__restrict__ small_roots,
                     const int *__restrict__ small_offsets, int *__restrict__ queue,
                     uint8_t *__restrict__ visited, int *__restrict__ link, int *counters)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= counters[COUNTER_N_SMALL])
    return;
  const int root = small_roots[i];
  int *q = queue + small_offsets[i];
  const int label = in[root];
  const int plane = nx * ny;
  int head = 0, tail = 1, last = -1;
  q[0] = root;
  visited[root] = 1;
  while (head < tail)
    {
      int idx = q[head++];
      int x = idx % nx, y = (idx / nx) % ny, z = idx / plane;
      int nb[6];
      bool ok[6];
      nb[0] = idx + 1;
      ok[0] = x + 1 < nx;
      nb[1] = idx - 1;
      ok[1] = x > 0;
      nb[2] = idx + nx;
      ok[2] = y + 1 < ny;
      nb[3] = idx - nx;
      ok[3] = y > 0;
      nb[4] = idx + plane;
      ok[4] = z + 1 < nz;
      nb[5] = idx - plane;
      ok[5] = z > 0;
      for (int j = 0; j < 6; j++)
        {
          if (!ok[j])
            continue;
          int m = nb[j];
          if (in[m] == label && !visited[m])
            {
              visited[m] = 1;
              q[tail++] = m;
            }
          else
            {
              int pm = parent[m];
              if (pm >= 0 && pm < root)
                last = m;
            }
        }
    }
  if (last < 0)
    atomicExch (&counters[COUNTER_ORPHAN], 1);
  link[root] = -(last + 2);
}

__global__ void
cc_final_kernel (int n, const int *__restrict__ parent, const int *__restrict__ link,
                 const int *__restrict__ rank, int start_label, int32_t *__restrict__ out)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int r = parent[v];
  if (r < 0)
    return;
  /* link[r] == 1 marks a large piece; ≤ −2 encodes the neighbour to follow. */
  while (link[r] != 1)
    r = parent[-link[r] - 2];
  out[v] = start_label + rank[r];
}

size_t
sv_cuda_connectivity_bytes (long long n)
{
  /* size/rank, link, queue, small roots and offsets, visited, counters. */
  return (size_t)(n + 1) * (5 * sizeof (int) + 1) + N_COUNTERS * sizeof (int);
}

cudaError_t
sv_cuda_connectivity (int32_t *labels, int nz, int ny, int nx, long long min_size,
                      long long max_size, int start_label, SvCudaConnScratch *s,
                      cudaStream_t stream, long long *n_labels, bool *handled)
{
  cudaError_t err;
  long long n = (long long)nz * ny * nx;
  int h_counters[N_COUNTERS];
  int total = 0;
  size_t tmp = 0;
  int background = start_label - 1;

  *handled = false;
  if (n == 0 || n >= INT_MAX - 2 || min_size > max_size)
    return cudaSuccess;
  int nn = (int)n;

#define TRY(x)                                                                                     \
  do                                                                                               \
    {                                                                                              \
      err = (x);                                                                                   \
      if (err != cudaSuccess)                                                                      \
        return err;                                                                                \
    }                                                                                              \
  while (0)

  TRY (cudaMemsetAsync (s->counters, 0, N_COUNTERS * sizeof (int), stream));
  TRY (cudaMemsetAsync (s->size, 0, (size_t)(n + 1) * sizeof (int), stream));
  cc_init_kernel<<<grid_for (n), SV_BLOCK, 0, stream>>> (nn, nx, labels, background, s->parent);
  TRY (cudaGetLastError ());
  cc_union_kernel<<<grid_for (n), SV_BLOCK, 0, stream>>> (nz, ny, nx, labels, background,
                                                            s->parent);
  TRY (cudaGetLastError ());
  cc_compress_size_kernel<<<grid_for (n), SV_BLOCK, 0, stream>>> (nn, s->parent, s->size);
  TRY (cudaGetLastError ());
  cc_classify_kernel<<<grid_for (n + 1), SV_BLOCK, 0, stream>>> (
      nn, s->parent, s->size, min_size, max_size, s->link, s->small_roots, s->small_offsets,
      s->counters);
  TRY (cudaGetLastError ());
  TRY (
      cudaMemcpyAsync (h_counters, s->counters, sizeof h_counters, cudaMemcpyDeviceToHost, stream));
  TRY (cudaStreamSynchronize (stream));
  if (h_counters[COUNTER_OVERSIZED])
    return cudaSuccess;

  /* rank = exclusive scan of the large-piece flags; the sizes are spent. */
  TRY (cub::DeviceScan::ExclusiveSum (NULL, tmp, s->link, s->size, nn + 1, stream));
  if (tmp > s->scan_tmp_bytes)
    {
      cudaFree (s->scan_tmp);
      s->scan_tmp = NULL;
      s->scan_tmp_bytes = 0;
      TRY (cudaMalloc (&s->scan_tmp, tmp));
      s->scan_tmp_bytes = tmp;
    }
  tmp = s->scan_tmp_bytes;
  TRY (cub::DeviceScan::ExclusiveSum (s->scan_tmp, tmp, s->link, s->size, nn + 1, stream));

  if (h_counters[COUNTER_N_SMALL] > 0)
    {
      TRY (cudaMemsetAsync (s->visited, 0, (size_t)n, stream));
      cc_small_bfs_kernel<<<(h_counters[COUNTER_N_SMALL] + 63) / 64, 64, 0, stream>>> (
          nz, ny, nx, labels, s->parent, s->small_roots, s->small_offsets, s->queue, s->visited,
          s->link, s->counters);
      TRY (cudaGetLastError ());
      TRY (cudaMemcpyAsync (h_counters, s->counters, sizeof h_counters, cudaMemcpyDeviceToHost,
                            stream));
      TRY (cudaStreamSynchronize (stream));
      if (h_counters[COUNTER_ORPHAN])
        return cudaSuccess;
    }

  cc_final_kernel<<<grid_for (n), SV_BLOCK, 0, stream>>> (nn, s->parent, s->link, s->size,
                                                            start_label, labels);
  TRY (cudaGetLastError ());
  TRY (cudaMemcpyAsync (&total, s->size + n, sizeof (int), cudaMemcpyDeviceToHost, stream));
  TRY (cudaStreamSynchronize (stream));
#undef TRY
  *n_labels = total;
  *handled = true;
  return cudaSuccess;
}

gboolean
sv_cuda_connectivity_enforce (const gint32 *in, guint nz, guint ny, guint nx, gint64 min_size,
                              gint64 max_size, int start_label, gint32 *out, gint64 *n_labels,
                              gboolean *on_device, GError **error)
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
      *n_labels = sv_connectivity_enforce (in, nz, ny, nx, min_size, max_size, start_label, out);
      return TRUE;
    }
  if (!sv__cuda_check_free (sv_cuda_connectivity_bytes ((long long)n) + 2 * n * sizeof (int),
                            "the connectivity step", error))
    return FALSE;
  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  SV_CUDA_CHECK (cudaMalloc (&d_labels, n * sizeof (int32_t)));
  SV_CUDA_CHECK (cudaMalloc (&s.parent, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s.size, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s.link, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s.queue, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s.small_roots, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s.small_offsets, (n + 1) * sizeof (int)));
  SV_CUDA_CHECK (cudaMalloc (&s.visited, n + 1));
  SV_CUDA_CHECK (cudaMalloc (&s.counters, 16 * sizeof (int)));
  SV_CUDA_CHECK (
      cudaMemcpyAsync (d_labels, in, n * sizeof (int32_t), cudaMemcpyHostToDevice, stream));
  SV_CUDA_CHECK (sv_cuda_connectivity (d_labels, (int)nz, (int)ny, (int)nx, min_size, max_size,
                                       start_label, &s, stream, &count, &handled));
  if (handled)
    {
      SV_CUDA_CHECK (
          cudaMemcpyAsync (out, d_labels, n * sizeof (int32_t), cudaMemcpyDeviceToHost, stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (stream));
      *n_labels = count;
      *on_device = TRUE;
    }
  else
    *n_labels = sv_connectivity_enforce (in, nz, ny, nx, min_size, max_size, start_label, out);
  ok = TRUE;
out:
  if (stream != NULL)
    cudaStreamSynchronize (stream);
  cudaFree (d_labels);
  cudaFree (s.parent);
  cudaFree (s.size);
  cudaFree (s.link);
  cudaFree (s.queue);
  cudaFree (s.small_roots);
  cudaFree (s.small_offsets);
  cudaFree (s.visited);
  cudaFree (s.counters);
  cudaFree (s.scan_tmp);
  if (stream != NULL)
    cudaStreamDestroy (stream);
  return ok;
}

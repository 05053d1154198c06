/* Supervox CUDA backend: connectivity enforcement on the device, giving
 * exactly the labels of the CPU's sequential sv_connectivity_enforce
 * (scikit-image's raster-order BFS).
 *
 * Why this is exact. The sequential scan cuts every 6-connected same-label
 * component C into pieces: BFSs started, in raster order, at the first
 * voxel of C not yet taken, each stopping at max_size voxels. A BFS only
 * enters voxels of C, so the cut of C depends on C alone: when |C| <
 * max_size the piece is C itself, started at its raster-first voxel r(C)
 * (the union-find root); otherwise one device thread per such oversized
 * component replays the sequential cut over C's voxels, listed in raster
 * order by a stable radix sort on the component index (same neighbour
 * order, same queue order, same early stop). Every voxel then knows the
 * start of its piece, a piece's start is its raster-first voxel, and pieces
 * are processed in order of their starts.
 *
 * Let B(P) be the number of pieces of min_size voxels or more ("large")
 * that start before P (an exclusive scan). A large piece gets start_label +
 * B(P). A small piece P gets the final label of the last neighbour seen by
 * its BFS that was already labelled (its piece starts before P) and whose
 * label differs from the current counter start_label + B(P); it is found by
 * replaying P's BFS (one thread per small piece) and followed through links
 * to a large piece (starts strictly decrease, so chains end). A label
 * equal to the counter can only belong to an "orphan": an earlier small
 * piece with no such neighbour, which kept the counter value, with no large
 * piece in between. If no small piece lacks an earlier neighbour there is
 * no orphan at all (the first orphan would have none), and the links are
 * exact. Otherwise the pieces whose last earlier neighbour starts after the
 * last large piece before them (same B), orphans included, are resolved by
 * one device thread in order of their starts, re-running their BFS and
 * testing every earlier neighbour's final label against the counter; the
 * other small pieces stay exact through their links, since a neighbour
 * with a smaller B never carries the counter. Cost of the rare paths: an
 * oversized component is cut by one thread in time proportional to its
 * voxels, and the sequential resolver's time is proportional to the voxels
 * of all suspect pieces, which, once any orphan exists, can be a large
 * share of the small pieces of a volume with many of them (masked volumes
 * with noisy fragments). min_size > max(max_size, 1)
 * makes every piece small, hence every voxel start_label. Only volumes of
 * 2³¹ − 3 voxels or more are left to the host (*handled false). */
#define G_LOG_DOMAIN "sv-cuda"

#include <cub/device/device_radix_sort.cuh>
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
  COUNTER_OVERSIZED, /* components of max_size voxels or more */
  COUNTER_ORPHAN,    /* small pieces with no earlier neighbour */
  COUNTER_COLLECT,   /* oversized components listed */
  COUNTER_SUSPECT,   /* small pieces resolved in sequence */
  COUNTER_IN_USE,    /* an orphan after the last large piece */
  COUNTER_ANY,       /* a voxel that is not background */
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

/* The 6 face neighbours of voxel idx in scikit-image's order (+x −x +y −y
 * +z −z) and whether each lies inside the volume. */
__device__ __forceinline__ void
cc_neighbours (int idx, int nx, int ny, int nz, int nb[6], bool ok[6])
{
  const int plane = nx * ny;
  const int x = idx % nx, y = (idx / nx) % ny, z = idx / plane;
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
    atomicAdd (&counters[COUNTER_OVERSIZED], 1);
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

/* Replays the sequential BFS of one small piece from its raster-first
 * voxel (neighbour order +x −x +y −y +z −z) and records, in link[root] as
 * −(n + 2), the last neighbour n that was already labelled at that point:
 * a voxel of a piece that starts earlier (−1: none, an orphan). */
__global__ void
cc_small_bfs_kernel (int nz, int ny, int nx, const int *__restrict__ parent,
                     const int *__restrict__ small_roots, const int *__restrict__ small_offsets, int *__restrict__ queue,
                     uint8_t *__restrict__ visited, int *__restrict__ link, int *counters)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= counters[COUNTER_N_SMALL])
    return;
  const int root = small_roots[i];
  int *q = queue + small_offsets[i];
  int head = 0, tail = 1, last = -1;
  q[0] = root;
  visited[root] = 1;
  while (head < tail)
    {
      int idx = q[head++];
      int nb[6];
      bool ok[6];
      cc_neighbours (idx, nx, ny, nz, nb, ok);
      for (int j = 0; j < 6; j++)
        {
          if (!ok[j])
            continue;
          int m = nb[j];
          /* The piece is the voxels whose piece start is root (for an
           * uncut component, the same-label voxels reached). */
          int pm = parent[m];
          if (pm == root)
            {
              if (!visited[m])
                {
                  visited[m] = 1;
                  q[tail++] = m;
                }
            }
          else if (pm >= 0 && pm < root)
            last = m;
        }
    }
  if (last < 0)
    atomicExch (&counters[COUNTER_ORPHAN], 1);
  link[root] = -(last + 2);
}

/* Final label, relative to start_label, of the piece starting at r: follow
 * neighbour links (≤ −2) to a large piece (1: its rank) or to a piece the
 * sequential resolver settled (≥ 2: the label + 2). */
__device__ __forceinline__ int
piece_label (const int *parent, const int *link, const int *rank, int r)
{
  int l = link[r];
  while (l <= -2)
    {
      r = parent[-l - 2];
      l = link[r];
    }
  return l == 1 ? rank[r] : l - 2;
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
  out[v] = start_label + piece_label (parent, link, rank, r);
}

/* min_size > max(max_size, 1): every piece is small, the first keeps the
 * counter and no later one ever sees a label other than it. */
__global__ void
cc_uniform_kernel (int n, int32_t *labels, int background, int start_label, int *counters)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || labels[v] == background)
    return;
  labels[v] = start_label;
  if (counters[COUNTER_ANY] == 0)
    atomicExch (&counters[COUNTER_ANY], 1);
}

/* Lists the roots of oversized components; index[root] = position. */
__global__ void
cc_collect_kernel (int n, const int *__restrict__ parent, const int *__restrict__ size,
                   long long max_size, int *__restrict__ roots, int *__restrict__ comp_size,
                   int *__restrict__ index, int *counters)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || parent[v] != v || size[v] < max_size)
    return;
  int i = atomicAdd (&counters[COUNTER_COLLECT], 1);
  roots[i] = v;
  comp_size[i] = size[v];
  index[v] = i;
}

/* Sort keys: the oversized component's position, or k for every other
 * voxel; values: the voxel itself. */
__global__ void
cc_key_kernel (int n, const int *__restrict__ parent, const int *__restrict__ size,
               long long max_size, const int *__restrict__ index, int k, int *__restrict__ keys,
               int *__restrict__ values)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int r = parent[v];
  keys[v] = r >= 0 && size[r] >= max_size ? index[r] : k;
  values[v] = v;
}

/* One thread per oversized component replays the sequential cut: scan its
 * voxels in raster order, start a BFS at each one not taken yet (neighbour
 * order +x −x +y −y +z −z), stop it at max_size voxels. Only voxels of the
 * component are read or written (a same-label face neighbour of a voxel of
 * C is in C), so the threads never touch each other's data. */
__global__ void
cc_split_kernel (int k, int nz, int ny, int nx, const int32_t *__restrict__ in,
                 const int *__restrict__ roots, const int *__restrict__ offsets,
                 const int *__restrict__ comp_size, const int *__restrict__ sorted,
                 int *__restrict__ queue, long long max_size, uint8_t *__restrict__ taken,
                 int *__restrict__ parent, int *__restrict__ size)
{
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= k)
    return;
  const int label = in[roots[c]];
  const int *list = sorted + offsets[c];
  int *q = queue + offsets[c];
  const int count = comp_size[c];
  int used = 0;
  for (int t = 0; t < count; t++)
    {
      const int start = list[t];
      if (taken[start])
        continue;
      int *p = q + used;
      long long n_piece = 1, head = 0;
      p[0] = start;
      taken[start] = 1;
      while (head < n_piece && n_piece < max_size)
        {
          int idx = p[head];
          int nb[6];
          bool ok[6];
          cc_neighbours (idx, nx, ny, nz, nb, ok);
          for (int j = 0; j < 6; j++)
            {
              int m = nb[j];
              if (ok[j] && in[m] == label && !taken[m])
                {
                  taken[m] = 1;
                  p[n_piece++] = m;
                  if (n_piece >= max_size)
                    break;
                }
            }
          head++;
        }
      for (long long j = 0; j < n_piece; j++)
        parent[p[j]] = start;
      size[start] = (int)n_piece;
      used += (int)n_piece;
    }
}

/* A small piece whose last earlier neighbour starts after the last large
 * piece before it (same rank), or that has none, may meet an orphan's
 * label and is resolved in sequence. */
__global__ void
cc_suspect_kernel (const int *__restrict__ parent, const int *__restrict__ link,
                   const int *__restrict__ rank, const int *__restrict__ small_roots,
                   int *__restrict__ keys, int *__restrict__ values, int *counters)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= counters[COUNTER_N_SMALL])
    return;
  int root = small_roots[i];
  int last = -link[root] - 2;
  if (last >= 0 && rank[parent[last]] != rank[root])
    return;
  int j = atomicAdd (&counters[COUNTER_SUSPECT], 1);
  keys[j] = root;
  values[j] = i;
}

/* One thread, the suspects in raster order of their starts: re-run each
 * one's BFS (marking with 2 over the replay's 1) and keep the last earlier
 * neighbour whose final label differs from the counter, exactly as the
 * sequential rule; with none the piece keeps the counter. Every piece a
 * label lookup reaches starts earlier, so it is final already. */
__global__ void
cc_resolve_kernel (int n_suspects, int nz, int ny, int nx, const int *__restrict__ parent,
                   int *link, const int *__restrict__ rank, const int *__restrict__ suspects,
                   const int *__restrict__ small_index, const int *__restrict__ small_offsets,
                   int *__restrict__ queue, uint8_t *__restrict__ visited, int n, int *counters)
{
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  const int total_large = rank[n];
  for (int t = 0; t < n_suspects; t++)
    {
      const int root = suspects[t];
      int *q = queue + small_offsets[small_index[t]];
      const int counter = rank[root];
      int head = 0, tail = 1, found = -1;
      q[0] = root;
      visited[root] = 2;
      while (head < tail)
        {
          int idx = q[head++];
          int nb[6];
          bool ok[6];
          cc_neighbours (idx, nx, ny, nz, nb, ok);
          for (int j = 0; j < 6; j++)
            {
              if (!ok[j])
                continue;
              int m = nb[j];
              int pm = parent[m];
              if (pm == root)
                {
                  if (visited[m] != 2)
                    {
                      visited[m] = 2;
                      q[tail++] = m;
                    }
                }
              else if (pm >= 0 && pm < root)
                {
                  int l = piece_label (parent, link, rank, pm);
                  if (l != counter)
                    found = l;
                }
            }
        }
      if (found < 0)
        {
          found = counter;
          if (counter == total_large)
            counters[COUNTER_IN_USE] = 1;
        }
      link[root] = found + 2;
    }
}

size_t
sv_cuda_connectivity_bytes (long long n)
{
  /* size/rank, link, queue, small roots and offsets, visited, counters. */
  return (size_t)(n + 1) * (5 * sizeof (int) + 1) + N_COUNTERS * sizeof (int);
}

/* Grows the owned cub scratch to at least `bytes`. */
static cudaError_t
grow_bytes (SvCudaConnScratch *s, size_t bytes)
{
  cudaFree (s->scan_tmp);
  s->scan_tmp = NULL;
  s->scan_tmp_bytes = 0;
  cudaError_t err = cudaMalloc (&s->scan_tmp, bytes);
  if (err == cudaSuccess)
    s->scan_tmp_bytes = bytes;
  return err;
}

#define TRY(x)                                                                                     \
  do                                                                                               \
    {                                                                                              \
      err = (x);                                                                                   \
      if (err != cudaSuccess)                                                                      \
        goto out;                                                                                  \
    }                                                                                              \
  while (0)

/* Makes s->scan_tmp large enough for an exclusive scan of n ints. */
static cudaError_t
grow_tmp (SvCudaConnScratch *s, const int *in, int *out, int n, cudaStream_t stream)
{
  size_t tmp = 0;
  cudaError_t err = cub::DeviceScan::ExclusiveSum (NULL, tmp, in, out, n, stream);
  if (err != cudaSuccess || tmp <= s->scan_tmp_bytes)
    return err;
  return grow_bytes (s, tmp);
}

/* Cuts the k oversized components into the pieces of the sequential rule:
 * parent[v] becomes the start of v's piece and size[start] its size. Uses
 * link, queue, small_roots, small_offsets and visited as scratch. */
static cudaError_t
split_oversized (const int32_t *labels, int nz, int ny, int nx, long long max_size, int k,
                 SvCudaConnScratch *s, cudaStream_t stream)
{
  cudaError_t err;
  int nn = nz * ny * nx;
  int *roots = NULL, *comp_size = NULL, *offsets = NULL;
  size_t tmp = 0;
  int end_bit = 1;
  while (end_bit < 31 && (1 << end_bit) <= k)
    end_bit++;
  cub::DoubleBuffer<int> keys (s->link, s->small_roots);
  cub::DoubleBuffer<int> values (s->small_offsets, s->queue);

  TRY (cudaMallocAsync (&roots, (size_t)k * sizeof (int), stream));
  TRY (cudaMallocAsync (&comp_size, (size_t)(k + 1) * sizeof (int), stream));
  TRY (cudaMallocAsync (&offsets, (size_t)(k + 1) * sizeof (int), stream));
  TRY (cudaMemsetAsync (comp_size, 0, (size_t)(k + 1) * sizeof (int), stream));
  cc_collect_kernel<<<grid_for (nn), SV_BLOCK, 0, stream>>> (
      nn, s->parent, s->size, max_size, roots, comp_size, s->queue, s->counters);
  TRY (cudaGetLastError ());
  cc_key_kernel<<<grid_for (nn), SV_BLOCK, 0, stream>>> (nn, s->parent, s->size, max_size,
                                                          s->queue, k, s->link, s->small_offsets);
  TRY (cudaGetLastError ());
  /* Stable: within a component the voxels stay in raster order. */
  TRY (cub::DeviceRadixSort::SortPairs (NULL, tmp, keys, values, nn, 0, end_bit, stream));
  if (tmp > s->scan_tmp_bytes)
    TRY (grow_bytes (s, tmp));
  tmp = s->scan_tmp_bytes;
  TRY (cub::DeviceRadixSort::SortPairs (s->scan_tmp, tmp, keys, values, nn, 0, end_bit, stream));
  tmp = 0;
  TRY (cub::DeviceScan::ExclusiveSum (NULL, tmp, comp_size, offsets, k + 1, stream));
  if (tmp > s->scan_tmp_bytes)
    TRY (grow_bytes (s, tmp));
  tmp = s->scan_tmp_bytes;
  TRY (cub::DeviceScan::ExclusiveSum (s->scan_tmp, tmp, comp_size, offsets, k + 1, stream));
  TRY (cudaMemsetAsync (s->visited, 0, (size_t)nn, stream));
  cc_split_kernel<<<(k + 31) / 32, 32, 0, stream>>> (
      k, nz, ny, nx, labels, roots, offsets, comp_size, values.Current (), values.Alternate (),
      max_size, s->visited, s->parent, s->size);
  TRY (cudaGetLastError ());
out:
  cudaFreeAsync (roots, stream);
  cudaFreeAsync (comp_size, stream);
  cudaFreeAsync (offsets, stream);
  return err;
}

/* Settles, in raster order of their starts, the small pieces that may meet
 * an orphan's label (see the header comment). */
static cudaError_t
resolve_orphans (int nz, int ny, int nx, int n_small, SvCudaConnScratch *s, cudaStream_t stream)
{
  cudaError_t err;
  int nn = nz * ny * nx;
  int *buf = NULL;
  int n_suspects = 0;
  size_t tmp = 0;

  TRY (cudaMallocAsync (&buf, (size_t)n_small * 4 * sizeof (int), stream));
  {
    cub::DoubleBuffer<int> keys (buf, buf + n_small);
    cub::DoubleBuffer<int> values (buf + 2 * n_small, buf + 3 * n_small);
    cc_suspect_kernel<<<(n_small + SV_BLOCK - 1) / SV_BLOCK, SV_BLOCK, 0, stream>>> (
        s->parent, s->link, s->size, s->small_roots, keys.Current (), values.Current (),
        s->counters);
    TRY (cudaGetLastError ());
    TRY (cudaMemcpyAsync (&n_suspects, s->counters + COUNTER_SUSPECT, sizeof (int),
                          cudaMemcpyDeviceToHost, stream));
    TRY (cudaStreamSynchronize (stream));
    TRY (cub::DeviceRadixSort::SortPairs (NULL, tmp, keys, values, n_suspects, 0, 32, stream));
    if (tmp > s->scan_tmp_bytes)
      TRY (grow_bytes (s, tmp));
    tmp = s->scan_tmp_bytes;
    TRY (cub::DeviceRadixSort::SortPairs (s->scan_tmp, tmp, keys, values, n_suspects, 0, 32,
                                          stream));
    cc_resolve_kernel<<<1, 1, 0, stream>>> (n_suspects, nz, ny, nx, s->parent, s->link, s->size,
                                            keys.Current (), values.Current (), s->small_offsets,
                                            s->queue, s->visited, nn, s->counters);
    TRY (cudaGetLastError ());
  }
out:
  cudaFreeAsync (buf, stream);
  return err;
}
#undef TRY

cudaError_t
sv_cuda_connectivity (int32_t *labels, int nz, int ny, int nx, long long min_size,
                      long long max_size, int start_label, SvCudaConnScratch *s,
                      cudaStream_t stream, long long *n_labels, bool *handled)
{
  cudaError_t err;
  long long n = (long long)nz * ny * nx;
  int h_counters[N_COUNTERS];
  int total = 0;
  int background = start_label - 1;

  *handled = false;
  if (n == 0 || n >= INT_MAX - 2)
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
  if (min_size > max_size && min_size > 1)
    {
      cc_uniform_kernel<<<grid_for (n), SV_BLOCK, 0, stream>>> (nn, labels, background,
                                                                 start_label, s->counters);
      TRY (cudaGetLastError ());
      TRY (cudaMemcpyAsync (h_counters, s->counters, sizeof h_counters, cudaMemcpyDeviceToHost,
                            stream));
      TRY (cudaStreamSynchronize (stream));
      *n_labels = h_counters[COUNTER_ANY];
      *handled = true;
      return cudaSuccess;
    }

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
  if (h_counters[COUNTER_OVERSIZED] > 0)
    {
      /* Cut the oversized components into their sequential pieces, then
       * classify the pieces again (no piece is oversized any more). */
      TRY (split_oversized (labels, nz, ny, nx, max_size, h_counters[COUNTER_OVERSIZED], s,
                            stream));
      TRY (cudaMemsetAsync (s->counters, 0, N_COUNTERS * sizeof (int), stream));
      cc_classify_kernel<<<grid_for (n + 1), SV_BLOCK, 0, stream>>> (
          nn, s->parent, s->size, min_size, LLONG_MAX, s->link, s->small_roots, s->small_offsets,
          s->counters);
      TRY (cudaGetLastError ());
      TRY (cudaMemcpyAsync (h_counters, s->counters, sizeof h_counters, cudaMemcpyDeviceToHost,
                            stream));
      TRY (cudaStreamSynchronize (stream));
    }

  /* rank = exclusive scan of the large-piece flags; the sizes are spent. */
  TRY (grow_tmp (s, s->link, s->size, nn + 1, stream));
  size_t tmp = s->scan_tmp_bytes;
  TRY (cub::DeviceScan::ExclusiveSum (s->scan_tmp, tmp, s->link, s->size, nn + 1, stream));

  if (h_counters[COUNTER_N_SMALL] > 0)
    {
      int n_small = h_counters[COUNTER_N_SMALL];
      TRY (cudaMemsetAsync (s->visited, 0, (size_t)n, stream));
      cc_small_bfs_kernel<<<(n_small + 63) / 64, 64, 0, stream>>> (
          nz, ny, nx, s->parent, s->small_roots, s->small_offsets, s->queue, s->visited, s->link,
          s->counters);
      TRY (cudaGetLastError ());
      TRY (cudaMemcpyAsync (h_counters, s->counters, sizeof h_counters, cudaMemcpyDeviceToHost,
                            stream));
      TRY (cudaStreamSynchronize (stream));
      if (h_counters[COUNTER_ORPHAN])
        TRY (resolve_orphans (nz, ny, nx, n_small, s, stream));
    }

  cc_final_kernel<<<grid_for (n), SV_BLOCK, 0, stream>>> (nn, s->parent, s->link, s->size,
                                                            start_label, labels);
  TRY (cudaGetLastError ());
  TRY (cudaMemcpyAsync (&total, s->size + n, sizeof (int), cudaMemcpyDeviceToHost, stream));
  TRY (
      cudaMemcpyAsync (h_counters, s->counters, sizeof h_counters, cudaMemcpyDeviceToHost, stream));
  TRY (cudaStreamSynchronize (stream));
#undef TRY
  *n_labels = (long long)total + (h_counters[COUNTER_IN_USE] ? 1 : 0);
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

/* Supervox CUDA backend: the labels of the small pieces of the
 * connectivity step, all in parallel.
 *
 * Under the connected rule a small piece takes the final label of the
 * last neighbour its BFS sees that belongs to an earlier piece; a piece
 * that sees none takes a new label, as a large piece does, so it counts
 * in the rank scan. No earlier piece carries the counter's label there.
 *
 * Under the legacy rule a small piece P takes the final label of the last neighbour its BFS sees
 * that belongs to an earlier piece Q (Q < P: started before P) and whose
 * label differs from the counter start_label + rank(P). Only a piece of
 * the same counter segment (rank(Q) = rank(P), no large piece between)
 * whose label is the counter can fail that test: an "orphan-rooted" piece.
 * A piece is orphan-rooted exactly when every earlier neighbour is an
 * orphan-rooted small piece of its own segment (with no earlier neighbour
 * at all, it is an orphan). Orphans only start at the volume's first voxel
 * or next to background, so such pieces are few; the rest get the flag
 * "reached" by a voxel-parallel propagation that runs until no flag
 * changes (flags only rise, so rounds may read each other's writes).
 * Then every reached piece whose last earlier neighbour is orphan-rooted
 * replays its BFS to find the last one that is not; the others keep the
 * neighbour the first replay found. */
#define G_LOG_DOMAIN "sv-cuda"

#include <glib.h>

#include "connectivity-private.cuh"
#include "cuda-check.h"

enum
{
  FLAG_REACHED = 1, /* not orphan-rooted: some earlier neighbour's label differs */
  FLAG_REPLAYED = 2 /* voxel visited by the second replay */
};

/* Whether earlier piece q can give its label to piece r (of rank seg):
 * anything but an orphan-rooted small piece of the same segment. A voxel
 * an earlier window settled gives its label unless it is the counter's. */
__device__ __forceinline__ bool
cc_gives_label (const int *rank, const volatile uint8_t *flag, int q, int seg, int base)
{
  if (cc_is_known (q))
    return cc_known_label (q) != base + seg;
  return cc_is_large (rank, q) || rank[q] != seg || (flag[q] & FLAG_REACHED);
}

/* Replays the sequential BFS of the small piece that starts at root
 * (neighbour order +x −x +y −y +z −z; queue q), marking its voxels with
 * `bit` in marks, and returns the last neighbour already labelled at that
 * point (a voxel of an earlier piece; with `giving`, one that gives its
 * label to a piece of segment seg, marks being the flags), −1 when none.
 * Like the sequential search it stops looking once the queue holds
 * max_size voxels (a piece cut at max_size below min_size). Only this
 * thread writes the bytes of the piece's own voxels; others read just the
 * REACHED bit of them, which stays. */
__device__ int
cc_replay_piece (int root, int nz, int ny, int nx, const int *parent, int *q, uint8_t *marks,
                 uint8_t bit, long long max_size, bool giving, const int *rank, int seg, int base)
{
  int head = 0, tail = 1, last = -1;
  q[0] = root;
  marks[root] |= bit;
  if (tail >= max_size)
    return last;
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
              if (!(marks[m] & bit))
                {
                  marks[m] |= bit;
                  q[tail++] = m;
                  if (tail >= max_size)
                    return last;
                }
            }
          else if (cc_is_earlier (pm, root)
                   && (!giving || cc_gives_label (rank, marks, pm, seg, base)))
            last = m;
        }
    }
  return last;
}

/* Replays the sequential BFS of one small piece from its raster-first
 * voxel (neighbour order +x −x +y −y +z −z) and records, in link[root] as
 * −(n + 2), the last neighbour n that was already labelled at that point:
 * a voxel of a piece that starts earlier (−1: none, an orphan). */
__global__ void
cc_small_bfs_kernel (int nz, int ny, int nx, long long max_size, const int *__restrict__ parent,
                     const int *__restrict__ small_roots, const int *__restrict__ small_offsets,
                     int *__restrict__ queue, uint8_t *__restrict__ visited, int *__restrict__ link,
                     int *counters)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= counters[COUNTER_N_SMALL])
    return;
  const int root = small_roots[i];
  const int last = cc_replay_piece (root, nz, ny, nx, parent, queue + small_offsets[i], visited, 1,
                                    max_size, false, NULL, 0, 0);
  if (last < 0)
    atomicExch (&counters[COUNTER_ORPHAN], 1);
  link[root] = -(last + 2);
}

/* Voxels per thread of a propagation round: a block covers a run of
 * consecutive rows, so that chains of pieces along x and y settle inside
 * one launch. */
#define REACH_PER_THREAD 16

/* Whether voxel v, of unreached small piece r, has an earlier neighbour
 * whose piece gives a label; if so marks r reached. */
__device__ __forceinline__ bool
cc_try_reach (int v, int r, int nz, int ny, int nx, const int *parent, const int *rank, int base,
              volatile uint8_t *f)
{
  int nb[6];
  bool ok[6];
  cc_neighbours (v, nx, ny, nz, nb, ok);
  const int seg = rank[r];
  for (int j = 0; j < 6; j++)
    {
      if (!ok[j])
        continue;
      const int q = parent[nb[j]];
      if (cc_is_earlier (q, r) && cc_gives_label (rank, f, q, seg, base))
        {
          f[r] = FLAG_REACHED;
          return true;
        }
    }
  return false;
}

/* One round of the propagation: a voxel of a small piece not yet reached
 * marks its piece reached when one of its earlier neighbours gives a
 * label. Flags only rise, so a block repeats its own voxels until nothing
 * changes in it before it ends; the host repeats rounds until no block
 * changed anything. */
__global__ void
cc_reach_kernel (int n, int nz, int ny, int nx, const int *__restrict__ parent,
                 const int *__restrict__ rank, int base, uint8_t *flag, int *counters)
{
  volatile uint8_t *f = flag;
  const long long first = (long long)blockIdx.x * blockDim.x * REACH_PER_THREAD + threadIdx.x;
  unsigned int pending = 0;
  for (int k = 0; k < REACH_PER_THREAD; k++)
    {
      const long long v = first + (long long)k * blockDim.x;
      if (v >= n)
        break;
      const int r = parent[v];
      if (r >= 0 && !cc_is_large (rank, r) && !(f[r] & FLAG_REACHED))
        pending |= 1u << k;
    }
  bool changed = false;
  for (;;)
    {
      bool hit = false;
      for (int k = 0; k < REACH_PER_THREAD; k++)
        {
          if (!(pending & (1u << k)))
            continue;
          const int v = (int)(first + (long long)k * blockDim.x);
          const int r = parent[v];
          if ((f[r] & FLAG_REACHED) || cc_try_reach (v, r, nz, ny, nx, parent, rank, base, f))
            {
              pending &= ~(1u << k);
              hit = true;
            }
        }
      changed |= hit;
      if (!__syncthreads_or (hit))
        break;
    }
  if (changed)
    counters[COUNTER_CHANGED] = 1;
}

/* Per small piece: an unreached one keeps the counter (settled); a reached
 * one whose first-replay neighbour cannot give its label is listed for a
 * second replay. */
__global__ void
cc_classify_small_kernel (const int *__restrict__ parent, int *__restrict__ link,
                          const int *__restrict__ rank, const uint8_t *__restrict__ flag,
                          const int *__restrict__ small_roots, int total_large, int base,
                          int *__restrict__ replay, int *counters)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= counters[COUNTER_N_SMALL])
    return;
  const int r = small_roots[i];
  const int seg = rank[r];
  if (!(flag[r] & FLAG_REACHED))
    {
      link[r] = base + seg + 2;
      if (seg == total_large)
        counters[COUNTER_IN_USE] = 1;
      return;
    }
  const int q = parent[-link[r] - 2];
  if (!cc_gives_label (rank, flag, q, seg, base))
    replay[atomicAdd (&counters[COUNTER_LISTED], 1)] = i;
}

/* Replays the BFS of a listed piece and links it to the last earlier
 * neighbour that gives a label (one exists: the piece was reached). */
__global__ void
cc_replay_kernel (int n_replay, int nz, int ny, int nx, long long max_size,
                  const int *__restrict__ replay, const int *__restrict__ parent,
                  int *__restrict__ link, const int *__restrict__ rank, int base, uint8_t *flag,
                  const int *__restrict__ small_roots, const int *__restrict__ small_offsets,
                  int *__restrict__ queue)
{
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n_replay)
    return;
  const int i = replay[t];
  const int root = small_roots[i];
  link[root] = -(cc_replay_piece (root, nz, ny, nx, parent, queue + small_offsets[i], flag,
                                  FLAG_REPLAYED, max_size, true, rank, rank[root], base)
                 + 2);
}

/* The connected rule: a small piece whose BFS saw no earlier neighbour
 * (link −1) takes a new label as a large piece does (link 1); flags[v]
 * marks the starts of both, for the rank scan (flags[n] = 0). */
__global__ void
cc_new_label_flags_kernel (int n, int *__restrict__ link, int *__restrict__ flags)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v > n)
    return;
  const int l = v < n ? link[v] : 0;
  if (l == -1)
    link[v] = 1;
  flags[v] = l == 1 || l == -1;
}

/* Follows every small piece's links to its label and settles it, so that
 * the per-voxel pass does one lookup. */
__global__ void
cc_settle_kernel (const int *__restrict__ parent, int *link, const int *__restrict__ rank, int base,
                  const int *__restrict__ small_roots, const int *counters)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= counters[COUNTER_N_SMALL])
    return;
  const int r = small_roots[i];
  const int l = cc_piece_label (parent, link, rank, base, r);
  ((volatile int *)link)[r] = l + 2;
}

/* Reads one device counter (synchronising the stream). */
static cudaError_t
read_counter (const int *counters, int which, int *value, cudaStream_t stream)
{
  cudaError_t err
      = cudaMemcpyAsync (value, counters + which, sizeof (int), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess)
    err = cudaStreamSynchronize (stream);
  return err;
}

/* Flags every small piece that is not orphan-rooted, then links the
 * reached pieces whose first-replay neighbour is orphan-rooted anew. */
static cudaError_t
resolve_orphans (int nz, int ny, int nx, int n_small, int base, long long max_size,
                 SvCudaConnScratch *s, cudaStream_t stream)
{
  cudaError_t err;
  const int nn = nz * ny * nx;
  int *list = NULL;
  int n_list = 0, changed = 0, total_large = 0, rounds = 0;

  SV_CUDA_TRY (cudaMemsetAsync (s->visited, 0, (size_t)nn, stream));
  do
    {
      SV_CUDA_TRY (cudaMemsetAsync (s->counters + COUNTER_CHANGED, 0, sizeof (int), stream));
      cc_reach_kernel<<<(unsigned int)((nn + SV_CC_BLOCK * REACH_PER_THREAD - 1)
                                       / (SV_CC_BLOCK * REACH_PER_THREAD)),
                        SV_CC_BLOCK, 0, stream>>> (nn, nz, ny, nx, s->parent, s->size, base,
                                                     s->visited, s->counters);
      SV_CUDA_TRY (cudaGetLastError ());
      SV_CUDA_TRY (read_counter (s->counters, COUNTER_CHANGED, &changed, stream));
      rounds++;
    }
  while (changed);

  SV_CUDA_TRY (cudaMallocAsync (&list, (size_t)n_small * sizeof (int), stream));
  SV_CUDA_TRY (
      cudaMemcpyAsync (&total_large, s->size + nn, sizeof (int), cudaMemcpyDeviceToHost, stream));
  SV_CUDA_TRY (cudaStreamSynchronize (stream));
  SV_CUDA_TRY (cudaMemsetAsync (s->counters + COUNTER_LISTED, 0, sizeof (int), stream));
  cc_classify_small_kernel<<<sv_cc_grid (n_small), SV_CC_BLOCK, 0, stream>>> (
      s->parent, s->link, s->size, s->visited, s->small_roots, total_large, base, list,
      s->counters);
  SV_CUDA_TRY (cudaGetLastError ());
  SV_CUDA_TRY (read_counter (s->counters, COUNTER_LISTED, &n_list, stream));
  g_debug ("connectivity: %d small pieces, orphan-rooted ones found in %d rounds, %d replayed",
           n_small, rounds, n_list);
  if (n_list > 0)
    {
      cc_replay_kernel<<<(n_list + 63) / 64, 64, 0, stream>>> (
          n_list, nz, ny, nx, max_size, list, s->parent, s->link, s->size, base, s->visited,
          s->small_roots, s->small_offsets, s->queue);
      SV_CUDA_TRY (cudaGetLastError ());
    }
out:
  cudaFreeAsync (list, stream);
  return err;
}

/* The first replay of every small piece: link[root] = −(last + 2). */
static cudaError_t
link_to_last_neighbour (int nz, int ny, int nx, int n_small, long long max_size,
                        SvCudaConnScratch *s, cudaStream_t stream)
{
  cudaError_t err;

  SV_CUDA_TRY (cudaMemsetAsync (s->visited, 0, (size_t)nz * ny * nx, stream));
  cc_small_bfs_kernel<<<(n_small + 63) / 64, 64, 0, stream>>> (
      nz, ny, nx, max_size, s->parent, s->small_roots, s->small_offsets, s->queue, s->visited,
      s->link, s->counters);
  SV_CUDA_TRY (cudaGetLastError ());
out:
  return err;
}

cudaError_t
sv__cuda_cc_settle_small (int n_small, int base, SvCudaConnScratch *s, cudaStream_t stream)
{
  cc_settle_kernel<<<sv_cc_grid (n_small), SV_CC_BLOCK, 0, stream>>> (
      s->parent, s->link, s->size, base, s->small_roots, s->counters);
  return cudaGetLastError ();
}

cudaError_t
sv__cuda_cc_link_small (int nz, int ny, int nx, int n_small, int base, long long max_size,
                        bool counter_in_use, SvCudaConnScratch *s, cudaStream_t stream)
{
  cudaError_t err;
  int orphan = 0;

  SV_CUDA_TRY (link_to_last_neighbour (nz, ny, nx, n_small, max_size, s, stream));
  SV_CUDA_TRY (read_counter (s->counters, COUNTER_ORPHAN, &orphan, stream));
  /* Without an orphan no piece is orphan-rooted (the first one would be an
   * orphan, or next to an earlier window's voxel of the counter's label)
   * and the first replay's links are exact. */
  if (orphan || counter_in_use)
    SV_CUDA_TRY (resolve_orphans (nz, ny, nx, n_small, base, max_size, s, stream));
  SV_CUDA_TRY (sv__cuda_cc_settle_small (n_small, base, s, stream));
out:
  return err;
}

cudaError_t
sv__cuda_cc_link_small_connected (int nz, int ny, int nx, int n_small, long long max_size,
                                  SvCudaConnScratch *s, cudaStream_t stream)
{
  cudaError_t err;
  const int n = nz * ny * nx;

  SV_CUDA_TRY (link_to_last_neighbour (nz, ny, nx, n_small, max_size, s, stream));
  /* The replays are done with the queue: it takes the scan's flags. */
  cc_new_label_flags_kernel<<<sv_cc_grid ((long long)n + 1), SV_CC_BLOCK, 0, stream>>> (
      n, s->link, s->queue);
  SV_CUDA_TRY (cudaGetLastError ());
out:
  return err;
}

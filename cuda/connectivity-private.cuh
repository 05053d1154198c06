/* Supervox CUDA backend: what the connectivity step's files share (the
 * driver in connectivity.cu, the cut of oversized components in
 * connectivity-split.cu, the labels of small pieces in
 * connectivity-small.cu). See connectivity.cu for why the result equals
 * the sequential rule. */
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda-kernels.h"

#define SV_CC_BLOCK 256

enum
{
  COUNTER_N_SMALL,
  COUNTER_QUEUE_USED,
  COUNTER_OVERSIZED, /* components of max_size voxels or more */
  COUNTER_ORPHAN,    /* small pieces with no earlier neighbour */
  COUNTER_COLLECT,   /* oversized components listed */
  COUNTER_LISTED,    /* entries of a work list */
  COUNTER_IN_USE,    /* an orphan after the last large piece */
  COUNTER_ANY,       /* a voxel that is not background */
  COUNTER_CHANGED,   /* a round of the orphan propagation changed a flag */
  N_COUNTERS
};

static inline unsigned int
sv_cc_grid (long long n)
{
  return (unsigned int)((n + SV_CC_BLOCK - 1) / SV_CC_BLOCK);
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

/* rank[r] counts the large pieces that start before r (an exclusive scan
 * of the large-piece flags), so r starts a large piece exactly when the
 * count steps after it. */
__device__ __forceinline__ bool
cc_is_large (const int *rank, int r)
{
  return rank[r + 1] != rank[r];
}

/* In a window of a larger volume (connectivity-window.cu), a voxel whose
 * final label an earlier window settled has parent −2 − (label −
 * start_label): it belongs to a piece that starts before every piece of
 * the window. Background is −1; a piece's voxels hold its start (≥ 0). */
__device__ __forceinline__ bool
cc_is_known (int p)
{
  return p <= -2;
}

__device__ __forceinline__ int
cc_known_label (int p)
{
  return -2 - p;
}

/* Whether a neighbour whose parent is p belongs to a piece that starts
 * before the piece starting at root (and so is labelled when root's BFS
 * runs). */
__device__ __forceinline__ bool
cc_is_earlier (int p, int root)
{
  return cc_is_known (p) || (p >= 0 && p < root);
}

/* Final label, relative to start_label, of the piece starting at r: follow
 * neighbour links (≤ −2: −(neighbour + 2)) to a large piece (1: base plus
 * its rank), to a settled piece (≥ 2: the label + 2) or to a voxel an
 * earlier window settled. `base` counts the large pieces of earlier
 * windows (0 for a whole volume). Links are read volatile because other
 * threads settle them concurrently; either value leads to the same label. */
__device__ __forceinline__ int
cc_piece_label (const int *parent, const int *link, const int *rank, int base, int r)
{
  const volatile int *lv = link;
  int l = lv[r];
  while (l <= -2)
    {
      r = parent[-l - 2];
      if (cc_is_known (r))
        return cc_known_label (r);
      l = lv[r];
    }
  return l == 1 ? base + rank[r] : l - 2;
}

/* Marks a voxel of a window whose final label is not known yet (memset
 * byte 0x80: below every label). */
#define SV_CC_UNKNOWN ((int32_t)0x80808080)

/* A window of a larger volume (connectivity-window.cu). `known` holds the
 * final labels that earlier windows settled (SV_CC_UNKNOWN elsewhere; the
 * window's input labels are background there) and receives the labels of
 * the window's pieces; pieces that start at voxel core_end or later are
 * left for the next window. */
typedef struct
{
  int32_t *known;
  int core_end;
  int base;            /* large pieces of earlier windows */
  bool counter_in_use; /* a settled voxel carries the counter's label base */
  /* Pieces instead of labels (the connected rule only): every piece
   * starting in the core is numbered base + its rank among them, known
   * voxels hold such numbers, and the window's table goes to
   * s->small_roots (each piece's start, window voxel) and
   * s->small_offsets (the number of the earlier piece a small one joins,
   * −1 for one that takes a new label), in order of the pieces' starts;
   * *n_large is their count. */
  bool pieces;
} SvCcWindow;

/* The connectivity rule on nz·ny·nx labels (in place when window is
 * NULL); under the legacy rule for min_size ≤ max(max_size, 1) only.
 * *n_large receives the number of pieces that take a new label (large
 * ones; under the connected rule small ones with no earlier neighbour
 * too), *in_use whether, under the legacy rule, a small piece after the
 * last of them keeps the counter's label. */
cudaError_t sv__cuda_cc_run (int32_t *labels, int nz, int ny, int nx, long long min_size,
                             long long max_size, int start_label, bool legacy,
                             const SvCcWindow *window, SvCudaConnScratch *s, cudaStream_t stream,
                             int *n_large, bool *in_use);

/* Under the legacy rule with min_size > max(max_size, 1): every piece is
 * small, the first keeps the counter and no later one sees another label,
 * so every voxel but background takes start_label (in place); *any: some
 * voxel did. */
cudaError_t sv__cuda_cc_uniform (int32_t *labels, long long n, int start_label,
                                 SvCudaConnScratch *s, cudaStream_t stream, bool *any);

/* Grows s->scan_tmp (cub scratch) to at least `bytes`. */
cudaError_t sv__cuda_cc_grow_scratch (SvCudaConnScratch *s, size_t bytes);

/* Cuts the k oversized components into the pieces of the sequential rule:
 * parent[v] becomes the start of v's piece and size[start] its size. Uses
 * link, queue, small_roots, small_offsets and visited as scratch. */
cudaError_t sv__cuda_cc_split_oversized (const int32_t *labels, int nz, int ny, int nx,
                                         long long max_size, int k, SvCudaConnScratch *s,
                                         cudaStream_t stream);

/* The legacy rule: gives every small piece its link (see connectivity.cu)
 * and settles it: link[r] ≥ 2 for every small piece start r afterwards.
 * rank is s->size; `base` as for cc_piece_label; `counter_in_use`: a
 * voxel an earlier window settled carries the counter's label base (so a
 * piece next to it can be orphan-rooted without an orphan). */
cudaError_t sv__cuda_cc_link_small (int nz, int ny, int nx, int n_small, int base,
                                    long long max_size, bool counter_in_use, SvCudaConnScratch *s,
                                    cudaStream_t stream);

/* The connected rule, before the rank scan: links every small piece to
 * the last earlier neighbour its BFS sees (one thread per piece), and
 * turns the pieces that see none into new-label pieces (link 1, as large
 * ones) with their flags in s->queue[0 .. n], the scan's input; link holds
 * the large-piece flags on entry. */
cudaError_t sv__cuda_cc_link_small_connected (int nz, int ny, int nx, int n_small,
                                              long long max_size, SvCudaConnScratch *s,
                                              cudaStream_t stream);

/* Follows every small piece's links to its label and settles it (link
 * ≥ 2), so that the per-voxel pass does one lookup. */
cudaError_t sv__cuda_cc_settle_small (int n_small, int base, SvCudaConnScratch *s,
                                      cudaStream_t stream);

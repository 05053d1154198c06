/* Supervox CUDA backend: the SLIC iteration kernels (binning, assignment,
 * exact update, SLIC-zero maxima).
 *
 * All arithmetic that decides labels goes through supervox/sv-slic-arith.h, the
 * functions the CPU reference uses, compiled with --fmad=false so that the
 * float32 results are bit-identical. Order independence comes from
 * sv_arith_better (lexicographic (distance, index) minimum) and from integer
 * sums, so thread scheduling cannot change a label. */
#include <limits.h>
#include <math.h>

#include "cuda-kernels.h"
#include "supervox/sv-slic-arith.h"

#define SV_BLOCK 256
#define SV_FULL_MASK 0xffffffffu

static inline unsigned int
grid_for (long long n, int block)
{
  return (unsigned int)((n + block - 1) / block);
}

/* The slab's voxels: [first, end) in whole-volume indices. */
__host__ __device__ static inline long long
slab_first (const SvCudaIter &it)
{
  return (long long)it.z_begin * sv_cuda_plane (it);
}

__host__ __device__ static inline long long
slab_voxels (const SvCudaIter &it)
{
  return (long long)(it.z_end - it.z_begin) * sv_cuda_plane (it);
}

/* Where element 0 of the whole volume would be for an array that holds the
 * slab's slices (`per_voxel` elements each): the kernels index it with
 * global voxel indices and touch only the slab's. NULL stays NULL. */
template <typename T>
static inline T *
volume_base (T *slab, const SvCudaIter &it, int per_voxel)
{
  if (slab == NULL)
    return NULL;
  return (T *)((uintptr_t)slab - (uintptr_t)(slab_first (it) * per_voxel * (long long)sizeof (T)));
}

__device__ __forceinline__ int
cell_index (const SvCudaIter &it, const float *c)
{
  int cz = sv_arith_cell_of (c[0], it.wstep[0], it.ncell[0]);
  int cy = sv_arith_cell_of (c[1], it.wstep[1], it.ncell[1]);
  int cx = sv_arith_cell_of (c[2], it.wstep[2], it.ncell[2]);
  return (cz * it.ncell[1] + cy) * it.ncell[2] + cx;
}

__global__ void
bin_count_kernel (SvCudaIter it, const float *__restrict__ centres,
                  const uint8_t *__restrict__ alive, int *__restrict__ cell_count)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= it.k || !alive[k])
    return;
  atomicAdd (&cell_count[cell_index (it, centres + (size_t)k * (3 + it.nc))], 1);
}

__global__ void
bin_fill_kernel (SvCudaIter it, const float *__restrict__ centres,
                 const uint8_t *__restrict__ alive, const int *__restrict__ cell_start,
                 int *__restrict__ cell_fill, int *__restrict__ cell_items)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= it.k || !alive[k])
    return;
  int cell = cell_index (it, centres + (size_t)k * (3 + it.nc));
  /* The order inside a cell is arbitrary; the assignment does not depend on it. */
  int slot = atomicAdd (&cell_fill[cell], 1);
  cell_items[cell_start[cell] + slot] = k;
}

cudaError_t
sv_cuda_bin_count (const SvCudaIter &it, const float *centres, const uint8_t *alive,
                   int *cell_count, cudaStream_t stream)
{
  if (it.k == 0)
    return cudaSuccess;
  bin_count_kernel<<<grid_for (it.k, SV_BLOCK), SV_BLOCK, 0, stream>>> (it, centres, alive,
                                                                          cell_count);
  return cudaGetLastError ();
}

cudaError_t
sv_cuda_bin_fill (const SvCudaIter &it, const float *centres, const uint8_t *alive,
                  const int *cell_start, int *cell_fill, int *cell_items, cudaStream_t stream)
{
  if (it.k == 0)
    return cudaSuccess;
  bin_fill_kernel<<<grid_for (it.k, SV_BLOCK), SV_BLOCK, 0, stream>>> (
      it, centres, alive, cell_start, cell_fill, cell_items);
  return cudaGetLastError ();
}

/* Range of centre cells that can hold a cluster whose window contains p:
 * such a centre has floor (c) in [p − 2s − 1, p + 2s + 1]. */
__device__ __forceinline__ void
cell_range (int p, int step, int ncell, int *lo, int *hi)
{
  int a = p - 2 * step - 1;
  int b = p + 2 * step + 1;
  *lo = a < 0 ? 0 : a / step;
  *hi = b / step;
  if (*hi > ncell - 1)
    *hi = ncell - 1;
}

/* The assignment of one voxel against the centre bins in global memory:
 * the plain path, used when a tile's candidate list would not fit in shared
 * memory. */
template <int NC>
__device__ int
assign_voxel (const SvCudaIter &it, const float *__restrict__ image,
              const float *__restrict__ centres, const float *__restrict__ max_dist_colour,
              const int *__restrict__ cell_start, const int *__restrict__ cell_items, long long v,
              int z, int y, int x, int32_t *__restrict__ nearest)
{
  const int nc = NC > 0 ? NC : it.nc;
  const int stride = 3 + nc;
  const float fz = (float)z, fy = (float)y, fx = (float)x;
  const float *pix = image + v * nc;
  float val[NC > 0 ? NC : 1];
  if (NC > 0)
    for (int c = 0; c < NC; c++)
      val[c] = pix[c];

  int z0, z1, y0, y1, x0, x1;
  cell_range (z, it.wstep[0], it.ncell[0], &z0, &z1);
  cell_range (y, it.wstep[1], it.ncell[1], &y0, &y1);
  cell_range (x, it.wstep[2], it.ncell[2], &x0, &x1);

  /* best_k = −1 as on the CPU: only a finite distance can win. */
  float best_d = INFINITY;
  int best_k = -1;
  for (int cz = z0; cz <= z1; cz++)
    for (int cy = y0; cy <= y1; cy++)
      {
        /* Cells of a row are contiguous in x: one [i0, i1) range covers them. */
        int row = (cz * it.ncell[1] + cy) * it.ncell[2];
        int i0 = cell_start[row + x0];
        int i1 = cell_start[row + x1 + 1];
        for (int i = i0; i < i1; i++)
          {
            int k = cell_items[i];
            const float *cen = centres + (size_t)k * stride;
            float ccz = cen[0], ccy = cen[1], ccx = cen[2];
            int lo, hi;
            sv_arith_window (ccz, it.wstep[0], it.nz, &lo, &hi);
            if (z < lo || z >= hi)
              continue;
            sv_arith_window (ccy, it.wstep[1], it.ny, &lo, &hi);
            if (y < lo || y >= hi)
              continue;
            sv_arith_window (ccx, it.wstep[2], it.nx, &lo, &hi);
            if (x < lo || x >= hi)
              continue;
            float d = sv_arith_spatial (ccz, ccy, ccx, fz, fy, fx, it.sz, it.sy, it.sx,
                                        it.spatial_weight);
            /* Exact pruning: the colour term is >= 0 and float addition is
             * monotonic, so this cluster cannot beat the best one. */
            if (!sv_arith_better (d, k, best_d, best_k))
              continue;
            if (!it.ignore_colour)
              {
                float colour = 0.0f;
                if (NC > 0)
                  for (int c = 0; c < NC; c++)
                    colour = colour + sv_arith_colour_term (val[c], it.ratio, cen[3 + c]);
                else
                  for (int c = 0; c < nc; c++)
                    colour = colour + sv_arith_colour_term (pix[c], it.ratio, cen[3 + c]);
                d = sv_arith_distance (d, colour, it.slic_zero, max_dist_colour[k]);
              }
            if (sv_arith_better (d, k, best_d, best_k))
              {
                best_d = d;
                best_k = k;
              }
          }
      }
  nearest[v] = best_k;
  return best_k;
}

/* Update sums by tiles. A block sums the voxels of its tile, which meet a
 * handful of clusters, into a small table in shared memory keyed by
 * cluster, and adds each cluster's totals to global memory once. Runs of
 * equal labels within a row of a warp are summed first: their count and
 * coordinate sums follow from their first and last voxel, and only the
 * colour needs the warp's shuffles. A cluster that finds the table full adds
 * its run straight to global memory: the totals are integers, so any split
 * gives the same sums. The assignment adds its voxels this way as it writes
 * them (no second pass over the volume); the update kernel below does the
 * same for callers that only have labels. */
#define ACC_SLOTS 128
#define ACC_ROW 16 /* lanes per run segment: a warp holds whole rows of 16 or 32 x */
#define ACC_MAX_FIELDS 8 /* 4 + nc with nc <= 4; more channels take the raster kernel */

struct AccTable
{
  int *key;                /* ACC_SLOTS clusters, -1 free */
  unsigned long long *sum; /* ACC_SLOTS × fields */
  int fields;
};

__device__ __forceinline__ long long
warp_run_sum (long long value, int lane, int seg_start)
{
  for (int off = 1; off < 32; off <<= 1)
    {
      long long other = __shfl_up_sync (SV_FULL_MASK, value, off);
      if (lane - off >= seg_start)
        value += other;
    }
  return value;
}

__device__ __forceinline__ void
acc_clear (AccTable t, int tid, int n_threads)
{
  for (int i = tid; i < ACC_SLOTS; i += n_threads)
    t.key[i] = -1;
  for (int i = tid; i < ACC_SLOTS * t.fields; i += n_threads)
    t.sum[i] = 0;
}

/* One voxel per lane, lanes in rows of consecutive x (ACC_ROW lanes or a
 * multiple); k < 0 adds nothing. Every lane of the warp must call it. */
__device__ __forceinline__ void
acc_add (const SvCudaIter &it, AccTable t, unsigned long long *__restrict__ sums,
         const float *__restrict__ image, int k, long long v, int x, int y, int z, int lane)
{
  const int prev = __shfl_up_sync (SV_FULL_MASK, k, 1);
  const int next = __shfl_down_sync (SV_FULL_MASK, k, 1);
  const bool head = lane % ACC_ROW == 0 || prev != k;
  const bool tail = lane % ACC_ROW == ACC_ROW - 1 || next != k;
  const unsigned heads = __ballot_sync (SV_FULL_MASK, head);
  const unsigned below = heads & (lane == 31 ? 0xffffffffu : ((2u << lane) - 1u));
  const int seg_start = 31 - __clz (below);

  /* The slot of this run's cluster, found by the run's last lane. */
  int slot = -1;
  if (tail && k >= 0)
    {
      int h = (int)(((unsigned)k * 2654435761u) >> 25) & (ACC_SLOTS - 1);
      for (int probe = 0; probe < ACC_SLOTS; probe++)
        {
          int old = atomicCAS (&t.key[h], -1, k);
          if (old == -1 || old == k)
            {
              slot = h;
              break;
            }
          h = (h + 1) & (ACC_SLOTS - 1);
        }
    }
  unsigned long long *dst
      = slot >= 0 ? t.sum + (size_t)slot * t.fields : sums + (size_t)(k >= 0 ? k : 0) * t.fields;
  if (tail && k >= 0)
    {
      const long long count = lane - seg_start + 1;
      const long long first_x = x - (count - 1);
      atomicAdd (dst + 0, (unsigned long long)count);
      atomicAdd (dst + 1, (unsigned long long)(count * z));
      atomicAdd (dst + 2, (unsigned long long)(count * y));
      atomicAdd (dst + 3, (unsigned long long)(count * first_x + count * (count - 1) / 2));
    }
  for (int c = 0; c < it.nc; c++)
    {
      long long value = 0;
      if (k >= 0)
        value = sv_arith_colour_fixed (image[v * it.nc + c] * it.ratio, it.colour_shift);
      value = warp_run_sum (value, lane, seg_start);
      if (tail && k >= 0)
        atomicAdd (dst + 4 + c, (unsigned long long)value);
    }
}

__device__ __forceinline__ void
acc_flush (AccTable t, unsigned long long *__restrict__ sums, int tid, int n_threads)
{
  for (int i = tid; i < ACC_SLOTS * t.fields; i += n_threads)
    {
      const int k = t.key[i / t.fields];
      if (k >= 0 && t.sum[i] != 0)
        atomicAdd (sums + (size_t)k * t.fields + i % t.fields, t.sum[i]);
    }
}

/* Tiles of the tiled assignment: TILE_VOXELS voxels per block of
 * TILE_THREADS threads; a 3D tile is 8 × 8 × 16 (z, y, x), a 2D one 32 × 32.
 * A compact tile meets fewer windows and spans a narrower value range, which
 * tightens the colour part of the candidates' lower bounds. */
#ifndef TILE_THREADS
#define TILE_THREADS 256
#endif
#define TILE_VOXELS 1024
#ifndef TILE_3D_Z
#define TILE_3D_Z 8
#define TILE_3D_Y 8
#define TILE_3D_X 16
#endif
#define MAX_CAND 512
#define CAND_NC 4

struct TileCandidate
{
  float bound; /* lower bound of the float32 distance over the tile */
  int k;
};

#define TILE_WARPS (TILE_THREADS / 32)
static_assert (TILE_3D_Z * TILE_3D_Y * TILE_3D_X == TILE_VOXELS
                   && (TILE_THREADS / TILE_3D_X) % TILE_3D_Y == 0 && TILE_VOXELS % TILE_THREADS == 0,
               "a 3D tile holds TILE_VOXELS voxels and a thread's voxels differ in z alone");
static_assert (TILE_THREADS / (TILE_3D_X * TILE_3D_Y) * (TILE_VOXELS / TILE_THREADS) == TILE_3D_Z,
               "a 3D tile's threads take runs of VPT slices that cover its depth");

/* Lower bound of the float32 colour sum of a centre over every value of a
 * tile, from the tile's per-channel value range. Exact by monotonicity
 * alone: value·ratio, the difference and the square are each rounded
 * monotonically, so the float32 term of any value in [lo, hi] is at least
 * the float32 term at the interval's point nearest the centre (0 inside). */
template <int NC>
__device__ __forceinline__ float
colour_lower_bound (const float *vlo, const float *vhi, float ratio, const float *centre)
{
  float colour = 0.0f;
  for (int c = 0; c < NC; c++)
    {
      float lo = vlo[c] * ratio - centre[c];
      float hi = vhi[c] * ratio - centre[c];
      float m = lo > 0.0f ? lo * lo : (hi < 0.0f ? hi * hi : 0.0f);
      colour = colour + m;
    }
  return colour;
}

/* The assignment by tiles, as the CPU reference does it: a block gathers
 * the live clusters whose window meets its tile, sorts them by a lower
 * bound of their spatial term over the tile and, per voxel, stops as soon
 * as no remaining cluster can beat the best distance. The winner is the
 * lexicographic (distance, index) minimum either way, so the labels equal
 * the plain search's bit for bit. */
template <int NC, bool D3>
__global__ void
__launch_bounds__ (TILE_THREADS)
    assign_tiled_kernel (SvCudaIter it, int tz, int ty, int tx, int ntile_y, int ntile_x,
                         const float *__restrict__ image, const uint8_t *__restrict__ mask,
                         const float *__restrict__ centres,
                         const float *__restrict__ max_dist_colour, const int *__restrict__ windows,
                         const int *__restrict__ cell_start, const int *__restrict__ cell_items,
                         int32_t *__restrict__ nearest, unsigned long long *__restrict__ sums)
{
  __shared__ TileCandidate cand[MAX_CAND];
  /* The sorted list: centre and bound; window low corner and cluster;
   * window high corner and SLIC-zero maximum; colours. */
  __shared__ float4 s_geo[MAX_CAND];
  /* The windows of the sorted list; once the search is done, the same
   * memory holds the tile's update table. */
  __shared__ int4 s_window[2 * MAX_CAND];
  int4 *const s_lo = s_window, *const s_hi = s_window + MAX_CAND;
  static_assert (ACC_SLOTS * (ACC_MAX_FIELDS * sizeof (unsigned long long) + sizeof (int))
                     <= sizeof (int4) * 2 * MAX_CAND,
                 "the update table fits in the windows' memory");
  const AccTable table = { (int *)(s_window + ACC_SLOTS * ACC_MAX_FIELDS / 2),
                           (unsigned long long *)s_window, 4 + (NC > 0 ? NC : 1) };
  __shared__ float s_col[MAX_CAND][NC > 0 && NC <= CAND_NC ? NC : 1];
  __shared__ float s_vlo[TILE_WARPS][CAND_NC], s_vhi[TILE_WARPS][CAND_NC];
  __shared__ unsigned int s_upper; /* float bits, >= 0 */
  __shared__ int n_cand, n_look;

  const int nc = NC > 0 ? NC : it.nc;
  const int stride = 3 + nc;
  const int tid = threadIdx.x;
  int tile = blockIdx.x;
  const int bx = tile % ntile_x;
  tile /= ntile_x;
  const int by = tile % ntile_y;
  const int bz = tile / ntile_y;
  const int t0[3] = { it.z_begin + bz * tz, by * ty, bx * tx };
  const int t1[3]
      = { min (t0[0] + tz, it.z_end), min (t0[1] + ty, it.ny), min (t0[2] + tx, it.nx) };

  if (tid == 0)
    {
      n_cand = 0;
      s_upper = __float_as_uint (INFINITY);
    }
  __syncthreads ();

  /* Gather: every bin that can hold a cluster whose window meets the tile. */
  int c0[3], c1[3], nce[3];
  for (int a = 0; a < 3; a++)
    {
      int ws = it.wstep[a];
      int lo = t0[a] - 2 * ws - 1;
      c0[a] = lo < 0 ? 0 : lo / ws;
      c1[a] = min ((t1[a] + 2 * ws) / ws, it.ncell[a] - 1);
      nce[a] = c1[a] - c0[a] + 1;
    }
  /* One thread per bin: a bin holds about one cluster, so every thread
   * makes a couple of dependent loads instead of a few threads walking
   * whole rows. */
  const int n_cells = nce[0] * nce[1] * nce[2];
  for (int ci = tid; ci < n_cells; ci += TILE_THREADS)
    {
      int cx = c0[2] + ci % nce[2], rest = ci / nce[2];
      int cy = c0[1] + rest % nce[1], cz = c0[0] + rest / nce[1];
      int cell = (cz * it.ncell[1] + cy) * it.ncell[2] + cx;
      for (int i = cell_start[cell]; i < cell_start[cell + 1]; i++)
        {
          int k = cell_items[i];
          const int *w = windows + (size_t)k * 6;
          bool meets = true;
          for (int a = 0; a < 3; a++)
            meets = meets && max (t0[a], w[a]) < min (t1[a], w[3 + a]);
          if (!meets)
            continue;
          int slot = atomicAdd (&n_cand, 1);
          if (slot < MAX_CAND)
            cand[slot].k = k;
        }
    }
  __syncthreads ();
  const int n = n_cand;
  const bool tiled = n <= MAX_CAND && (NC > 0 ? NC <= CAND_NC : false);

  const int tile_voxels = tz * ty * tx;
  const bool colour_bound = tiled && !it.ignore_colour;
  constexpr int NCB = NC > 0 && NC <= CAND_NC ? NC : 1;
  if (colour_bound)
    {
      /* The tile's per-channel value range (masked-out voxels included:
       * a wider range is still a valid bound). */
      float lo[NCB], hi[NCB];
      for (int c = 0; c < NCB; c++)
        {
          lo[c] = INFINITY;
          hi[c] = -INFINITY;
        }
      for (int vi = tid; vi < tile_voxels; vi += TILE_THREADS)
        {
          int x = t0[2] + vi % tx, y = t0[1] + (vi / tx) % ty, z = t0[0] + vi / (tx * ty);
          if (x >= t1[2] || y >= t1[1] || z >= t1[0])
            continue;
          long long v = ((long long)z * it.ny + y) * it.nx + x;
          for (int c = 0; c < NCB; c++)
            {
              float val = image[v * NCB + c];
              lo[c] = fminf (lo[c], val);
              hi[c] = fmaxf (hi[c], val);
            }
        }
      for (int c = 0; c < NCB; c++)
        for (int off = 16; off > 0; off >>= 1)
          {
            lo[c] = fminf (lo[c], __shfl_xor_sync (SV_FULL_MASK, lo[c], off));
            hi[c] = fmaxf (hi[c], __shfl_xor_sync (SV_FULL_MASK, hi[c], off));
          }
      if ((tid & 31) == 0)
        for (int c = 0; c < NCB; c++)
          {
            s_vlo[tid >> 5][c] = lo[c];
            s_vhi[tid >> 5][c] = hi[c];
          }
      __syncthreads ();
      if (tid == 0)
        for (int c = 0; c < NCB; c++)
          for (int wi = 1; wi < TILE_WARPS; wi++)
            {
              s_vlo[0][c] = fminf (s_vlo[0][c], s_vlo[wi][c]);
              s_vhi[0][c] = fmaxf (s_vhi[0][c], s_vhi[wi][c]);
            }
      __syncthreads ();
    }

  if (tiled)
    {
      /* Bounds, as the CPU computes them: the exact spatial term's minimum
       * over the part of the tile inside the window, made a safe lower
       * bound of the float32 term; then the colour term's lower bound over
       * the tile's value range is added with the same float32 operations
       * as the distance itself, which keeps it a lower bound. */
      for (int j = tid; j < n; j += TILE_THREADS)
        {
          int k = cand[j].k;
          const float *c = centres + (size_t)k * stride;
          const int *w = windows + (size_t)k * 6;
          const float sp[3] = { it.sz, it.sy, it.sx };
          double bound = 0.0;
          for (int a = 0; a < 3; a++)
            {
              int a0 = max (t0[a], w[a]), a1 = min (t1[a], w[3 + a]) - 1;
              double g = (double)sp[a] * sv_arith_axis_gap (c[a], a0, a1);
              bound += g * g;
            }
          bound = bound * (double)it.spatial_weight * (1.0 - 1e-6) - 1e-30;
          float fb = (float)bound;
          if ((double)fb > bound)
            fb = nextafterf (fb, -INFINITY);
          float mdc = max_dist_colour[k];
          if (colour_bound)
            {
              float col = colour_lower_bound<NCB> (s_vlo[0], s_vhi[0], it.ratio, c + 3);
              float b = sv_arith_distance (fb, col, it.slic_zero, mdc);
              /* A NaN (SLIC-zero with a zero maximum) keeps the spatial bound. */
              if (b >= fb)
                fb = b;
            }
          cand[j].bound = fb;

          /* A cluster whose window holds the whole tile bounds every
           * voxel's best distance from above (the CPU reference's
           * covering bound, with its margin for float32 rounding). */
          bool covers = true;
          for (int a = 0; a < 3; a++)
            covers = covers && w[a] <= t0[a] && t1[a] <= w[3 + a];
          if (covers)
            {
              double sp_max = 0.0, col_max = 0.0;
              for (int a = 0; a < 3; a++)
                {
                  double g = (double)sp[a] * fmax (fabs ((double)c[a] - t0[a]),
                                                   fabs ((double)c[a] - (t1[a] - 1)));
                  sp_max += g * g;
                }
              sp_max *= (double)it.spatial_weight;
              if (!it.ignore_colour)
                {
                  for (int ch = 0; ch < NCB; ch++)
                    {
                      double lo = (double)s_vlo[0][ch] * it.ratio - c[3 + ch];
                      double hi = (double)s_vhi[0][ch] * it.ratio - c[3 + ch];
                      double g = fmax (fabs (lo), fabs (hi));
                      col_max += g * g;
                    }
                  if (it.slic_zero)
                    col_max /= (double)mdc;
                }
              double upper = (sp_max + col_max) * (1.0 + 1e-5) + 1e-30;
              if (upper < 1e38)
                {
                  float fu = (float)upper;
                  if ((double)fu < upper)
                    fu = nextafterf (fu, INFINITY);
                  atomicMin (&s_upper, __float_as_uint (fu));
                }
            }
        }
      /* Pad to a power of two and sort by (bound, k): bitonic sort. */
      int m = 1;
      while (m < n)
        m <<= 1;
      for (int j = n + tid; j < m; j += TILE_THREADS)
        {
          cand[j].bound = INFINITY;
          cand[j].k = INT_MAX;
        }
      __syncthreads ();
      for (int size = 2; size <= m; size <<= 1)
        for (int step = size >> 1; step > 0; step >>= 1)
          {
            for (int i = tid; i < m; i += TILE_THREADS)
              {
                int j = i ^ step;
                if (j > i)
                  {
                    TileCandidate a = cand[i], b = cand[j];
                    bool a_after = a.bound > b.bound || (a.bound == b.bound && a.k > b.k);
                    bool up = (i & size) == 0;
                    if (a_after == up)
                      {
                        cand[i] = b;
                        cand[j] = a;
                      }
                  }
              }
            __syncthreads ();
          }
      /* Every voxel's best distance is at most the covering bound, so a
       * candidate whose lower bound exceeds it is never looked at: the
       * sorted list is cut there. */
      if (tid == 0)
        n_look = n;
      __syncthreads ();
      {
        float upper = __uint_as_float (s_upper);
        for (int j = tid; j < n; j += TILE_THREADS)
          if (cand[j].bound > upper && (j == 0 || !(cand[j - 1].bound > upper)))
            n_look = j;
      }
      __syncthreads ();
      /* Centres, windows and colours of the sorted list in shared memory,
       * packed so that one candidate takes three 16-byte loads. */
      for (int j = tid; j < n_look; j += TILE_THREADS)
        {
          int k = cand[j].k;
          const float *c = centres + (size_t)k * stride;
          const int *w = windows + (size_t)k * 6;
          s_geo[j] = make_float4 (c[0], c[1], c[2], cand[j].bound);
          s_lo[j] = make_int4 (w[0], w[1], w[2], k);
          s_hi[j] = make_int4 (w[3], w[4], w[5], __float_as_int (max_dist_colour[k]));
          for (int ch = 0; ch < NCB; ch++)
            s_col[j][ch] = c[3 + ch];
        }
      __syncthreads ();

      /* Each thread takes VPT voxels of the tile and reads each candidate
       * once for all of them. A voxel skips a candidate whose bound exceeds
       * its best distance (every later one has a larger bound, so this is
       * the single-voxel search's early exit), and the thread stops when
       * that holds for all its voxels. A bound equal to a best distance
       * could still tie and win on a lower index. */
      constexpr int VPT = TILE_VOXELS / TILE_THREADS;
      /* A thread's voxels share x. In 3D they are VPT neighbours in z with
       * one y, so that a warp covers a compact 16 × 2 × VPT block (the
       * fewer distinct candidates its lanes need, the fewer it walks) and
       * the y and x parts of a candidate's spatial term are the same for
       * all of them. In 2D (tz = 1) voxel r is TILE_THREADS / tx rows
       * further on in y. */
      const int rows = TILE_THREADS / tx;
      const int dz = D3 ? 1 : 0, dy = D3 ? 0 : rows;
      const int x = t0[2] + tid % tx, y0 = t0[1] + (tid / tx) % ty;
      const int z0 = D3 ? t0[0] + (tid / (tx * ty)) * VPT : t0[0];
      float bd[VPT], val[VPT][NCB];
      int bk[VPT];
      unsigned on = 0;
      float worst = -INFINITY;
#pragma unroll
      for (int r = 0; r < VPT; r++)
        {
          int y = y0 + r * dy, z = z0 + r * dz;
          bd[r] = INFINITY;
          bk[r] = -1;
          for (int c = 0; c < NCB; c++)
            val[r][c] = 0.0f;
          if (x >= t1[2] || y >= t1[1] || z >= t1[0])
            continue;
          long long v = ((long long)z * it.ny + y) * it.nx + x;
          if (mask != NULL && mask[v] == 0)
            {
              nearest[v] = -1;
              continue;
            }
          on |= 1u << r;
          for (int c = 0; c < NCB; c++)
            /* sv_arith_colour_term's value·ratio, rounded as there: once
             * per voxel instead of once per candidate. */
            val[r][c] = image[v * NCB + c] * it.ratio;
          worst = INFINITY;
        }
      const float fx = (float)x;
      const float z_lo = (float)z0, z_hi = (float)(z0 + (VPT - 1) * dz);
      const float y_lo = (float)y0, y_hi = (float)(y0 + (VPT - 1) * dy);
      for (int j = 0; j < n_look; j++)
        {
          const float4 g = s_geo[j];
          if (g.w > worst)
            break;
          const int4 lo = s_lo[j], hi = s_hi[j];
          if (x < lo.z || x >= hi.z || (D3 && (y0 < lo.y || y0 >= hi.y)))
            continue;
          /* The spatial term at the point of the thread's column nearest
           * the centre is at most every voxel's (each float step rounds
           * monotonically), and the distance is at least its spatial term:
           * a cluster that cannot beat any of the thread's best distances
           * is skipped without looking at each voxel. */
          if (sv_arith_spatial (g.x, g.y, g.z, fminf (fmaxf (g.x, z_lo), z_hi),
                                fminf (fmaxf (g.y, y_lo), y_hi), fx, it.sz, it.sy, it.sx,
                                it.spatial_weight)
              > worst)
            continue;
          float cc[NCB];
          for (int c = 0; c < NCB; c++)
            cc[c] = s_col[j][c];
          const float mdc = __int_as_float (hi.w);
          /* sv_arith_spatial's y and x squares, the same for every voxel of
           * the thread in 3D (each float step as there, so the sum below
           * is its value bit for bit). */
          float ddy = it.sy * (g.y - (float)y0), ddx = it.sx * (g.z - fx);
          ddy = ddy * ddy;
          ddx = ddx * ddx;
          worst = -INFINITY;
#pragma unroll
          for (int r = 0; r < VPT; r++)
            {
              const int y = y0 + r * dy, z = z0 + r * dz;
              if ((on >> r & 1u) && !(g.w > bd[r]) && z >= lo.x && z < hi.x
                  && (D3 || (y >= lo.y && y < hi.y)))
                {
                  float d;
                  if (D3)
                    {
                      float ddz = it.sz * (g.x - (float)z);
                      ddz = ddz * ddz;
                      d = ((ddz + ddy) + ddx) * it.spatial_weight;
                    }
                  else
                    d = sv_arith_spatial (g.x, g.y, g.z, (float)z, (float)y, fx, it.sz, it.sy,
                                          it.sx, it.spatial_weight);
                  if (sv_arith_better (d, lo.w, bd[r], bk[r]))
                    {
                      if (!it.ignore_colour)
                        {
                          float colour = 0.0f;
                          for (int c = 0; c < NCB; c++)
                            {
                              const float t = val[r][c] - cc[c];
                              colour = colour + t * t;
                            }
                          d = sv_arith_distance (d, colour, it.slic_zero, mdc);
                        }
                      if (sv_arith_better (d, lo.w, bd[r], bk[r]))
                        {
                          bd[r] = d;
                          bk[r] = lo.w;
                        }
                    }
                }
              if (on >> r & 1u)
                worst = fmaxf (worst, bd[r]);
            }
        }
#pragma unroll
      for (int r = 0; r < VPT; r++)
        if (on >> r & 1u)
          nearest[((long long)(z0 + r * dz) * it.ny + (y0 + r * dy)) * it.nx + x] = bk[r];
      if (sums == NULL)
        return;
      __syncthreads (); /* the windows' memory becomes the update table */
      acc_clear (table, tid, TILE_THREADS);
      __syncthreads ();
#pragma unroll
      for (int r = 0; r < VPT; r++)
        {
          const int y = y0 + r * dy, z = z0 + r * dz;
          acc_add (it, table, sums, image, (on >> r & 1u) ? bk[r] : -1,
                   ((long long)z * it.ny + y) * it.nx + x, x, y, z, tid & 31);
        }
      __syncthreads ();
      acc_flush (table, sums, tid, TILE_THREADS);
      return;
    }

  /* Too many candidates, or channels beyond CAND_NC: the plain search.
   * Every thread makes the same number of steps (tiles are never cut,
   * only clipped), so the whole warp reaches the update's shuffles. */
  const bool accumulate = sums != NULL && NC > 0 && NC <= CAND_NC;
  if (accumulate)
    acc_clear (table, tid, TILE_THREADS);
  __syncthreads ();
  for (int vi = tid; vi < tile_voxels; vi += TILE_THREADS)
    {
      int x = t0[2] + vi % tx, y = t0[1] + (vi / tx) % ty, z = t0[0] + vi / (tx * ty);
      long long v = ((long long)z * it.ny + y) * it.nx + x;
      int k = -1;
      if (x < t1[2] && y < t1[1] && z < t1[0])
        {
          if (mask != NULL && mask[v] == 0)
            nearest[v] = -1;
          else
            k = assign_voxel<NC> (it, image, centres, max_dist_colour, cell_start, cell_items, v,
                                  z, y, x, nearest);
        }
      if (accumulate)
        acc_add (it, table, sums, image, k, v, x, y, z, tid & 31);
    }
  if (accumulate)
    {
      __syncthreads ();
      acc_flush (table, sums, tid, TILE_THREADS);
    }
}

__global__ void
windows_kernel (SvCudaIter it, const float *__restrict__ centres, const uint8_t *__restrict__ alive,
                int *__restrict__ windows)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= it.k || !alive[k])
    return;
  const float *c = centres + (size_t)k * (3 + it.nc);
  int *w = windows + (size_t)k * 6;
  sv_arith_window (c[0], it.wstep[0], it.nz, &w[0], &w[3]);
  sv_arith_window (c[1], it.wstep[1], it.ny, &w[1], &w[4]);
  sv_arith_window (c[2], it.wstep[2], it.nx, &w[2], &w[5]);
}

template <int NC>
static void
launch_tiled (const SvCudaIter &it, const float *image, const uint8_t *mask, const float *centres,
              const float *max_dist_colour, const int *windows, const int *cell_start,
              const int *cell_items, int32_t *nearest, unsigned long long *sums,
              cudaStream_t stream)
{
  int tz, ty, tx;
  if (it.nz == 1)
    {
      tz = 1;
      ty = 32;
      tx = 32;
    }
  else
    {
      tz = TILE_3D_Z;
      ty = TILE_3D_Y;
      tx = TILE_3D_X;
    }
  int ntz = (it.z_end - it.z_begin + tz - 1) / tz, nty = (it.ny + ty - 1) / ty, ntx = (it.nx + tx - 1) / tx;
  long long blocks = (long long)ntz * nty * ntx;
  if (tz > 1)
    assign_tiled_kernel<NC, true><<<(unsigned int)blocks, TILE_THREADS, 0, stream>>> (
        it, tz, ty, tx, nty, ntx, image, mask, centres, max_dist_colour, windows, cell_start,
        cell_items, nearest, sums);
  else
    assign_tiled_kernel<NC, false><<<(unsigned int)blocks, TILE_THREADS, 0, stream>>> (
        it, tz, ty, tx, nty, ntx, image, mask, centres, max_dist_colour, windows, cell_start,
        cell_items, nearest, sums);
}

cudaError_t
sv_cuda_assign (const SvCudaIter &it, const float *image, const uint8_t *mask, const float *centres,
                const float *max_dist_colour, const uint8_t *alive, int *windows,
                const int *cell_start, const int *cell_items, int32_t *nearest,
                unsigned long long *sums, cudaStream_t stream)
{
  if (slab_voxels (it) == 0)
    return cudaSuccess;
  image = volume_base (image, it, it.nc);
  mask = volume_base (mask, it, 1);
  nearest = volume_base (nearest, it, 1);
  if (it.k > 0)
    windows_kernel<<<grid_for (it.k, SV_BLOCK), SV_BLOCK, 0, stream>>> (it, centres, alive,
                                                                          windows);
  switch (it.nc)
    {
    case 1:
      launch_tiled<1> (it, image, mask, centres, max_dist_colour, windows, cell_start, cell_items,
                       nearest, sums, stream);
      break;
    case 2:
      launch_tiled<2> (it, image, mask, centres, max_dist_colour, windows, cell_start, cell_items,
                       nearest, sums, stream);
      break;
    case 3:
      launch_tiled<3> (it, image, mask, centres, max_dist_colour, windows, cell_start, cell_items,
                       nearest, sums, stream);
      break;
    case 4:
      launch_tiled<4> (it, image, mask, centres, max_dist_colour, windows, cell_start, cell_items,
                       nearest, sums, stream);
      break;
    default:
      /* More channels than the tiles' update table holds: sums in a pass of
       * their own. */
      launch_tiled<0> (it, image, mask, centres, max_dist_colour, windows, cell_start, cell_items,
                       nearest, NULL, stream);
      if (sums != NULL)
        return sv_cuda_accumulate (it, image, nearest, sums, stream);
      break;
    }
  return cudaGetLastError ();
}

/* Warp-level segmented sum of consecutive lanes with the same cluster, so
 * that one atomic per run of equal labels reaches global memory. Integer
 * addition is exact, so any grouping gives the same totals. */
__device__ __forceinline__ void
warp_add (unsigned long long *sums, int k, long long value, int lane, int seg_start, bool tail)
{
  value = warp_run_sum (value, lane, seg_start);
  if (tail && k >= 0)
    atomicAdd (sums, (unsigned long long)value);
}

__global__ void
accumulate_kernel (SvCudaIter it, const float *__restrict__ image,
                   const int32_t *__restrict__ nearest, unsigned long long *__restrict__ sums)
{
  /* Every lane of the warp takes part in the shuffles, also past the end. */
  const long long v_end = slab_first (it) + slab_voxels (it);
  long long v = slab_first (it) + (long long)blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int k = v < v_end ? nearest[v] : -1;
  int prev = __shfl_up_sync (SV_FULL_MASK, k, 1);
  int next = __shfl_down_sync (SV_FULL_MASK, k, 1);
  bool head = lane == 0 || prev != k;
  bool tail = lane == 31 || next != k;
  unsigned heads = __ballot_sync (SV_FULL_MASK, head);
  unsigned below = heads & (lane == 31 ? 0xffffffffu : ((2u << lane) - 1u));
  int seg_start = 31 - __clz (below);

  int x = 0, y = 0, z = 0;
  if (k >= 0)
    {
      /* 32-bit division where the index fits: 64-bit division is a long
       * instruction sequence on the device. */
      if (v_end <= 0xffffffffLL)
        {
          unsigned int u = (unsigned int)v, t = u / (unsigned int)it.nx;
          x = (int)(u - t * (unsigned int)it.nx);
          y = (int)(t % (unsigned int)it.ny);
          z = (int)(t / (unsigned int)it.ny);
        }
      else
        {
          x = (int)(v % it.nx);
          long long t = v / it.nx;
          y = (int)(t % it.ny);
          z = (int)(t / it.ny);
        }
    }
  const int stride = 4 + it.nc;
  unsigned long long *s = sums + (size_t)(k >= 0 ? k : 0) * stride;
  warp_add (s + 0, k, k >= 0 ? 1 : 0, lane, seg_start, tail);
  warp_add (s + 1, k, z, lane, seg_start, tail);
  warp_add (s + 2, k, y, lane, seg_start, tail);
  warp_add (s + 3, k, x, lane, seg_start, tail);
  for (int c = 0; c < it.nc; c++)
    {
      long long f = 0;
      if (k >= 0)
        f = sv_arith_colour_fixed (image[v * it.nc + c] * it.ratio, it.colour_shift);
      warp_add (s + 4 + c, k, f, lane, seg_start, tail);
    }
}

cudaError_t
sv_cuda_accumulate (const SvCudaIter &it, const float *image, const int32_t *nearest,
                    unsigned long long *sums, cudaStream_t stream)
{
  if (slab_voxels (it) == 0)
    return cudaSuccess;
  accumulate_kernel<<<grid_for (slab_voxels (it), SV_BLOCK), SV_BLOCK, 0, stream>>> (
      it, volume_base (image, it, it.nc), volume_base (nearest, it, 1), sums);
  return cudaGetLastError ();
}

__global__ void
finalize_kernel (SvCudaIter it, const unsigned long long *__restrict__ sums,
                 float *__restrict__ centres, uint8_t *__restrict__ alive)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= it.k || !alive[k])
    return;
  const unsigned long long *s = sums + (size_t)k * (4 + it.nc);
  int64_t count = (int64_t)s[0];
  if (count == 0)
    {
      /* Dead for the rest of the run: never binned, never wins again. */
      alive[k] = 0;
      return;
    }
  float *c = centres + (size_t)k * (3 + it.nc);
  c[0] = sv_arith_coord_mean ((int64_t)s[1], count);
  c[1] = sv_arith_coord_mean ((int64_t)s[2], count);
  c[2] = sv_arith_coord_mean ((int64_t)s[3], count);
  for (int j = 0; j < it.nc; j++)
    c[3 + j] = sv_arith_colour_mean ((int64_t)s[4 + j], it.colour_shift, count);
}

cudaError_t
sv_cuda_finalize (const SvCudaIter &it, const unsigned long long *sums, float *centres,
                  uint8_t *alive, cudaStream_t stream)
{
  if (it.k == 0)
    return cudaSuccess;
  finalize_kernel<<<grid_for (it.k, SV_BLOCK), SV_BLOCK, 0, stream>>> (it, sums, centres, alive);
  return cudaGetLastError ();
}

__global__ void
slic_zero_max_kernel (SvCudaIter it, const float *__restrict__ image,
                      const int32_t *__restrict__ nearest, const float *__restrict__ centres,
                      float *__restrict__ max_dist_colour)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= slab_voxels (it))
    return;
  long long v = slab_first (it) + i;
  int k = nearest[v];
  if (k < 0)
    return;
  const float *cen = centres + (size_t)k * (3 + it.nc);
  const float *pix = image + v * it.nc;
  float colour = 0.0f;
  for (int c = 0; c < it.nc; c++)
    colour = colour + sv_arith_colour_term (pix[c], it.ratio, cen[3 + c]);
  /* Distances are >= 0, where the integer order of the bit patterns is the
   * float order; atomicMax only raises. */
  if (colour > max_dist_colour[k])
    atomicMax ((unsigned int *)&max_dist_colour[k], __float_as_uint (colour));
}

cudaError_t
sv_cuda_slic_zero_max (const SvCudaIter &it, const float *image, const int32_t *nearest,
                       const float *centres, float *max_dist_colour, cudaStream_t stream)
{
  if (slab_voxels (it) == 0)
    return cudaSuccess;
  slic_zero_max_kernel<<<grid_for (slab_voxels (it), SV_BLOCK), SV_BLOCK, 0, stream>>> (
      it, volume_base (image, it, it.nc), volume_base (nearest, it, 1), centres, max_dist_colour);
  return cudaGetLastError ();
}

__global__ void
labels_kernel (long long n, const int32_t *__restrict__ nearest, int start_label,
               int32_t *__restrict__ labels, uint8_t *__restrict__ used)
{
  long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  int k = nearest[v];
  labels[v] = k + start_label;
  if (used != NULL && k >= 0)
    used[k] = 1;
}

cudaError_t
sv_cuda_labels_from_nearest (long long n, const int32_t *nearest, int start_label, int32_t *labels,
                             uint8_t *used, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  labels_kernel<<<grid_for (n, SV_BLOCK), SV_BLOCK, 0, stream>>> (n, nearest, start_label, labels,
                                                                    used);
  return cudaGetLastError ();
}

/* Voxels that no live window reached take the live cluster with the
 * smallest spatial term over all clusters (ties to the lowest index), as
 * the CPU reference does after the last iteration. Such voxels are rare, so
 * the brute-force loop costs little. */
__global__ void
fill_unassigned_kernel (SvCudaIter it, const uint8_t *__restrict__ mask,
                        const float *__restrict__ centres, const uint8_t *__restrict__ alive,
                        int32_t *__restrict__ nearest)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= slab_voxels (it))
    return;
  long long v = slab_first (it) + i;
  if (nearest[v] >= 0 || (mask != NULL && mask[v] == 0))
    return;
  int x = (int)(v % it.nx);
  long long t = v / it.nx;
  int y = (int)(t % it.ny);
  int z = (int)(t / it.ny);
  float best_d = INFINITY;
  int best_k = -1;
  for (int k = 0; k < it.k; k++)
    {
      if (!alive[k])
        continue;
      const float *c = centres + (size_t)k * (3 + it.nc);
      float s = sv_arith_spatial (c[0], c[1], c[2], (float)z, (float)y, (float)x, it.sz, it.sy,
                                  it.sx, it.spatial_weight);
      if (sv_arith_better (s, k, best_d, best_k))
        {
          best_d = s;
          best_k = k;
        }
    }
  nearest[v] = best_k;
}

cudaError_t
sv_cuda_fill_unassigned (const SvCudaIter &it, const uint8_t *mask, const float *centres,
                         const uint8_t *alive, int32_t *nearest, cudaStream_t stream)
{
  if (slab_voxels (it) == 0)
    return cudaSuccess;
  fill_unassigned_kernel<<<grid_for (slab_voxels (it), SV_BLOCK), SV_BLOCK, 0, stream>>> (
      it, volume_base (mask, it, 1), centres, alive, volume_base (nearest, it, 1));
  return cudaGetLastError ();
}

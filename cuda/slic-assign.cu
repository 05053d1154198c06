/* Supervox CUDA backend: the SLIC assignment by tiles, with the update's
 * sums of the voxels it assigns.
 *
 * All arithmetic that decides labels goes through supervox/sv-slic-arith.h, the
 * functions the CPU reference uses, compiled with --fmad=false so that the
 * float32 results are bit-identical; ties go to the lower cluster index
 * (sv_arith_better), so the order of the candidates cannot change a label. */
#include "slic-assign-plain.cuh"
#include "slic-tile-candidates.cuh"
#include "slic-tile-sums.cuh"

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
#ifndef WARP_3D_X
#define WARP_3D_X 8
#endif
#define MAX_CAND 512
#define CAND_NC 4

#define TILE_WARPS (TILE_THREADS / 32)
static_assert (TILE_3D_Z * TILE_3D_Y * TILE_3D_X == TILE_VOXELS
                   && (TILE_THREADS / TILE_3D_X) % TILE_3D_Y == 0 && TILE_VOXELS % TILE_THREADS == 0,
               "a 3D tile holds TILE_VOXELS voxels and a thread's voxels differ in z alone");
static_assert (TILE_THREADS / (TILE_3D_X * TILE_3D_Y) * (TILE_VOXELS / TILE_THREADS) == TILE_3D_Z,
               "a 3D tile's threads take runs of VPT slices that cover its depth");

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
  /* The candidates that can win somewhere in the tile, sorted. */
  __shared__ TileCandidate look[MAX_CAND];
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
      n_look = 0;
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
      __syncthreads ();
      /* Every voxel's best distance is at most the covering bound, so a
       * candidate whose lower bound exceeds it is never looked at. The cut
       * comes before the sort, which then has fewer to order, and a list
       * of up to 64 is sorted by one warp without the block's barriers.
       * The sort orders by (bound, k), so the order in which the cut
       * gathers them does not matter. */
      {
        const float upper = __uint_as_float (s_upper);
        for (int j = tid; j < n; j += TILE_THREADS)
          if (!(cand[j].bound > upper))
            look[atomicAdd (&n_look, 1)] = cand[j];
      }
      __syncthreads ();
      int m = 1;
      while (m < n_look)
        m <<= 1;
      for (int j = n_look + tid; j < m; j += TILE_THREADS)
        {
          look[j].bound = INFINITY;
          look[j].k = INT_MAX;
        }
      __syncthreads ();
      if (m <= 64)
        {
          if (tid < 32)
            for (int size = 2; size <= m; size <<= 1)
              for (int step = size >> 1; step > 0; step >>= 1)
                {
                  bitonic_step (look, m, size, step, tid, 32);
                  __syncwarp ();
                }
        }
      else
        for (int size = 2; size <= m; size <<= 1)
          for (int step = size >> 1; step > 0; step >>= 1)
            {
              bitonic_step (look, m, size, step, tid, TILE_THREADS);
              __syncthreads ();
            }
      __syncthreads ();
      /* Centres, windows and colours of the sorted list in shared memory,
       * packed so that one candidate takes three 16-byte loads. */
      for (int j = tid; j < n_look; j += TILE_THREADS)
        {
          int k = look[j].k;
          const float *c = centres + (size_t)k * stride;
          const int *w = windows + (size_t)k * 6;
          s_geo[j] = make_float4 (c[0], c[1], c[2], look[j].bound);
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
      /* In 3D a warp's lanes are WARP_3D_X columns in x by WY rows in y
       * (8 × 4 × VPT voxels: warps of 16 × 2 × VPT took 3 % longer), and
       * the tile's warps are laid out in x, then y, then runs of VPT
       * slices. */
      constexpr int WX = WARP_3D_X, WY = 32 / WX, NWX = TILE_3D_X / WX, NWY = TILE_3D_Y / WY;
      static_assert (TILE_3D_X % WX == 0 && TILE_3D_Y % WY == 0
                         && NWX * NWY * (TILE_3D_Z / VPT) == TILE_WARPS,
                     "a 3D tile's warps are WX × 32 / WX columns that cover it");
      const int lane = tid & 31, warp = tid >> 5;
      const int x = D3 ? t0[2] + warp % NWX * WX + lane % WX : t0[2] + tid % tx;
      const int y0 = D3 ? t0[1] + warp / NWX % NWY * WY + lane / WX : t0[1] + (tid / tx) % ty;
      const int z0 = D3 ? t0[0] + warp / (NWX * NWY) * VPT : t0[0];
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
      /* The range of the thread's own values, for the colour part of its
       * bound (as the tile's, over fewer values). */
      float lane_lo[NCB], lane_hi[NCB];
      for (int c = 0; c < NCB; c++)
        {
          lane_lo[c] = INFINITY;
          lane_hi[c] = -INFINITY;
#pragma unroll
          for (int r = 0; r < VPT; r++)
            if (on >> r & 1u)
              {
                lane_lo[c] = fminf (lane_lo[c], val[r][c]);
                lane_hi[c] = fmaxf (lane_hi[c], val[r][c]);
              }
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
          const float near
              = sv_arith_spatial (g.x, g.y, g.z, fminf (fmaxf (g.x, z_lo), z_hi),
                                  fminf (fmaxf (g.y, y_lo), y_hi), fx, it.sz, it.sy, it.sx,
                                  it.spatial_weight);
          if (near > worst)
            continue;
          float cc[NCB];
          for (int c = 0; c < NCB; c++)
            cc[c] = s_col[j][c];
          const float mdc = __int_as_float (hi.w);
          /* The same bound with the colour term over the thread's values
           * (monotone as colour_lower_bound's; a NaN never skips): at
           * compactness 0.01 to 0.1 the colour decides, and this skips 10
           * to 17 % of the walk; above, it costs about 1 %. */
          if (!it.ignore_colour
              && sv_arith_distance (near, colour_lower_bound<NCB> (lane_lo, lane_hi, 1.0f, cc),
                                    it.slic_zero, mdc)
                     > worst)
            continue;
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
          acc_add<D3 ? WX : ACC_ROW> (it, table, sums, image, (on >> r & 1u) ? bk[r] : -1,
                                      ((long long)z * it.ny + y) * it.nx + x, x, y, z, lane);
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
  int k = it.band0 + blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= it.band1 || !alive[k])
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
  if (it.band1 > it.band0)
    windows_kernel<<<grid_for (it.band1 - it.band0, SV_BLOCK), SV_BLOCK, 0, stream>>> (
        it, centres, alive, windows);
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

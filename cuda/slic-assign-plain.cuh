/* Supervox CUDA backend: the assignment of one voxel against the centre
 * bins, the tiled assignment's fallback (slic-assign.cu). */
#pragma once

#include "slic-kernels-common.cuh"

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

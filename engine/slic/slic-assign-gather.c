/* Supervox engine: the CPU assignment's candidates for one tile: the
 * live clusters whose window meets it, each with a lower bound of its
 * spatial term over the tile, in (nearly) the order of that bound. */
#define G_LOG_DOMAIN "sv-engine"

#include "slic-assign-private.h"

/* Per channel minimum and maximum of the tile's values. */
static void
tile_value_range (const SvPrepared *im, const int t0[3], const int t1[3], float *vmin, float *vmax)
{
  const guint nc = im->nc;
  const int len = t1[2] - t0[2];

  if (nc == 1)
    {
      /* One channel: four values per step. */
      SvLanesF lo = { INFINITY, INFINITY, INFINITY, INFINITY };
      SvLanesF hi = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
      float lo_s = INFINITY, hi_s = -INFINITY;

      for (int z = t0[0]; z < t1[0]; z++)
        for (int y = t0[1]; y < t1[1]; y++)
          {
            const float *row = im->data + ((gsize)z * im->ny + y) * im->nx + t0[2];
            int i = 0;
            for (; i + 4 <= len; i += 4)
              {
                SvLanesF v;
                memcpy (&v, row + i, sizeof v);
                lo = lanes_select (v < lo, v, lo);
                hi = lanes_select (v > hi, v, hi);
              }
            for (; i < len; i++)
              {
                lo_s = row[i] < lo_s ? row[i] : lo_s;
                hi_s = row[i] > hi_s ? row[i] : hi_s;
              }
          }
      for (int l = 0; l < 4; l++)
        {
          lo_s = lo[l] < lo_s ? lo[l] : lo_s;
          hi_s = hi[l] > hi_s ? hi[l] : hi_s;
        }
      vmin[0] = lo_s;
      vmax[0] = hi_s;
      return;
    }

  for (guint c = 0; c < nc; c++)
    {
      vmin[c] = INFINITY;
      vmax[c] = -INFINITY;
    }
  for (int z = t0[0]; z < t1[0]; z++)
    for (int y = t0[1]; y < t1[1]; y++)
      {
        const float *row = im->data + (((gsize)z * im->ny + y) * im->nx + t0[2]) * nc;
        for (guint c = 0; c < nc; c++)
          {
            float lo = vmin[c], hi = vmax[c];
            for (int i = 0; i < len; i++)
              {
                float v = row[(gsize)i * nc + c];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
              }
            vmin[c] = lo;
            vmax[c] = hi;
          }
      }
}

/* Sorts keys[0..n) by bound: insertion sort of runs of 8, then bottom-up
 * merges through scratch (n entries). */
void
sv__assign_sort_keys (SortKey *keys, SortKey *scratch, int n)
{
  const int run = 8;
  SortKey *src = keys, *dst = scratch;

  for (int r = 0; r < n; r += run)
    {
      int end = MIN (r + run, n);
      for (int i = r + 1; i < end; i++)
        {
          SortKey t = keys[i];
          int j = i;
          while (j > r && keys[j - 1].bound > t.bound)
            {
              keys[j] = keys[j - 1];
              j--;
            }
          keys[j] = t;
        }
    }
  for (int width = run; width < n; width *= 2)
    {
      for (int lo = 0; lo < n; lo += 2 * width)
        {
          int mid = MIN (lo + width, n), hi = MIN (lo + 2 * width, n);
          int a = lo, b = mid, o = lo;
          while (a < mid && b < hi)
            dst[o++] = src[b].bound < src[a].bound ? src[b++] : src[a++];
          while (a < mid)
            dst[o++] = src[a++];
          while (b < hi)
            dst[o++] = src[b++];
        }
      {
        SortKey *t = src;
        src = dst;
        dst = t;
      }
    }
  if (src != keys)
    memcpy (keys, src, (gsize)n * sizeof *keys);
}

/* The largest distance, spatial plus colour, that cluster k can have at any
 * voxel of the tile when its window holds the whole tile (with a margin for
 * float32 rounding); infinity otherwise. Every voxel's best distance is at
 * most this. */
static double
covering_upper (const AssignJob *job, guint k, const int t0[3], const int t1[3], const float *vmin,
                const float *vmax)
{
  const SvSlicContext *ctx = job->ctx;
  const SvClusters *cl = job->clusters;
  const int *w = job->window + 6 * (gsize)k;
  const float *c = cl->centres + k * (3 + cl->nc);
  double g, sp = 0.0, col = 0.0;

  for (int a = 0; a < 3; a++)
    if (w[a] > t0[a] || t1[a] > w[3 + a])
      return INFINITY;
  for (int a = 0; a < 3; a++)
    {
      g = (double)ctx->spacing[a] * MAX (fabs (c[a] - t0[a]), fabs (c[a] - (t1[a] - 1)));
      sp += g * g;
    }
  sp *= (double)ctx->spatial_weight;
  if (!ctx->ignore_colour)
    {
      for (guint ch = 0; ch < cl->nc; ch++)
        {
          double lo = (double)vmin[ch] * ctx->ratio - c[3 + ch];
          double hi = (double)vmax[ch] * ctx->ratio - c[3 + ch];
          g = MAX (fabs (lo), fabs (hi));
          col += g * g;
        }
      if (ctx->slic_zero)
        col /= (double)cl->max_dist_colour[k];
    }
  return (sp + col) * (1.0 + 1e-5) + 1e-30;
}

/* Doubles a thread's candidate list (64 at first). */
static void
candidate_list_grow (CandidateList *list)
{
  list->capacity = MAX (2 * list->capacity, 64);
  list->items = g_renew (Candidate, list->items, list->capacity);
  list->sorted = g_renew (Candidate, list->sorted, list->capacity);
  list->sorted_cz = g_renew (float, list->sorted_cz, list->capacity + 8);
  list->sorted_cy = g_renew (float, list->sorted_cy, list->capacity + 8);
  list->keys = g_renew (SortKey, list->keys, list->capacity);
  list->scratch = g_renew (SortKey, list->scratch, list->capacity);
  list->bucket = g_renew (gint32, list->bucket, list->capacity);
}

int
sv__assign_gather (const AssignJob *job, const int t0[3], const int t1[3], CandidateList *list,
                   float *vrange)
{
  const SvSlicContext *ctx = job->ctx;
  const SvClusters *cl = job->clusters;
  const guint nc = cl->nc;
  const gsize nf = 3 + nc;
  const float *vmin = vrange, *vmax = vrange + nc;
  int c0[3], c1[3], n = 0;
  double upper = INFINITY;
  float upper_f;
  Candidate *cand = list->items;

  for (int a = 0; a < 3; a++)
    {
      int ws = ctx->window_step[a];
      c0[a] = CLAMP (floor_div (t0[a] - 2 * ws - 1, ws), 0, job->ncell[a] - 1);
      c1[a] = CLAMP (floor_div (t1[a] + 2 * ws, ws), 0, job->ncell[a] - 1);
    }
  if (!ctx->ignore_colour)
    tile_value_range (ctx->image, t0, t1, vrange, vrange + nc);

  /* First the clusters centred in the tile's own cells: they usually cover
   * the tile and give a small upper bound, which then narrows the cells
   * worth scanning: a cluster whose centre lies more than `reach` voxels
   * off the tile along an axis has a lower bound above it. */
  {
    int n0[3], n1[3];
    for (int a = 0; a < 3; a++)
      {
        n0[a] = CLAMP (floor_div (t0[a], ctx->window_step[a]), 0, job->ncell[a] - 1);
        n1[a] = CLAMP (floor_div (t1[a] - 1, ctx->window_step[a]), 0, job->ncell[a] - 1);
      }
    for (int cz = n0[0]; cz <= n1[0]; cz++)
      for (int cy = n0[1]; cy <= n1[1]; cy++)
        for (int cx = n0[2]; cx <= n1[2]; cx++)
          {
            gsize cell = ((gsize)cz * job->ncell[1] + cy) * job->ncell[2] + cx;
            for (guint i = job->cell_start[cell]; i < job->cell_start[cell + 1]; i++)
              upper = MIN (upper, covering_upper (job, job->cell_items[i], t0, t1, vmin, vmax));
          }
    if (upper < INFINITY)
      for (int a = 0; a < 3; a++)
        {
          double reach = sqrt ((upper + 1e-30) / ((double)ctx->spatial_weight * (1.0 - 1e-6)))
                         / (double)ctx->spacing[a];
          if (reach < 1e9)
            {
              int r = (int)ceil (reach) + 1;
              int ws = ctx->window_step[a];
              c0[a] = MAX (c0[a], CLAMP (floor_div (t0[a] - r, ws), 0, job->ncell[a] - 1));
              c1[a] = MIN (c1[a], CLAMP (floor_div (t1[a] - 1 + r, ws), 0, job->ncell[a] - 1));
            }
        }
  }

  /* `upper` as a float not below it. */
  {
    float u = (float)upper;
    upper_f = (double)u < upper ? nextafterf (u, INFINITY) : u;
  }

  /* Each row of cells along x holds its clusters at consecutive places of
   * the bins; four at a time, the box where the window meets the tile and
   * the spatial term at the box's voxel nearest the centre, made of the
   * distance's own float32 operations (the coordinate clamped into the
   * box, so a centre within it along an axis gives c − c = 0): rounding
   * being monotone, no voxel of the box has a smaller term. */
  for (int cz = c0[0]; cz <= c1[0]; cz++)
    for (int cy = c0[1]; cy <= c1[1]; cy++)
      {
        const gsize row = ((gsize)cz * job->ncell[1] + cy) * job->ncell[2];
        const guint i_end = job->cell_start[row + c1[2] + 1];

        for (guint i = job->cell_start[row + c0[2]]; i < i_end; i += 4)
          {
            SvLanesF bound = { 0 };
            SvLanesI keep = { -1, -1, -1, -1 };
            float bounds[4];
            gint32 kept[4];

            for (int a = 0; a < 3; a++)
              {
                SvLanesF c, e, d;
                SvLanesI lo, hi, a0, a1;
                memcpy (&c, job->csr_centre[a] + i, sizeof c);
                memcpy (&lo, job->csr_lo[a] + i, sizeof lo);
                memcpy (&hi, job->csr_hi[a] + i, sizeof hi);
                a0 = lanes_max_i (lo, (SvLanesI){ 0 } + t0[a]);
                a1 = lanes_min_i (hi, (SvLanesI){ 0 } + t1[a]) - 1;
                keep &= a0 <= a1;
                e = lanes_select (c < __builtin_convertvector (a0, SvLanesF),
                                  __builtin_convertvector (a0, SvLanesF),
                                  lanes_select (c > __builtin_convertvector (a1, SvLanesF),
                                                __builtin_convertvector (a1, SvLanesF), c));
                d = ctx->spacing[a] * (c - e);
                d = d * d;
                /* ((dz² + dy²) + dx²), the distance's order */
                bound = a == 0 ? d : bound + d;
              }
            bound = bound * ctx->spatial_weight;
            /* No voxel of the tile ends with a best distance above
             * `upper`, so a cluster above it would never be looked at. */
            keep &= bound <= upper_f;
            for (int l = 0; l < 4; l++)
              keep[l] &= i + (guint)l < i_end ? -1 : 0;
            memcpy (bounds, &bound, sizeof bounds);
            memcpy (kept, &keep, sizeof kept);

            for (int l = 0; l < 4; l++)
              {
                guint k;
                const int *w;
                const float *c;
                Candidate *p;

                if (!kept[l])
                  continue;
                k = job->cell_items[i + l];
                w = job->window + 6 * (gsize)k;
                c = cl->centres + k * nf;
                if ((gsize)n == list->capacity)
                  {
                    candidate_list_grow (list);
                    cand = list->items;
                  }
                p = &cand[n++];
                p->bound = bounds[l];
                p->cz = c[0];
                p->cy = c[1];
                p->cx = c[2];
                p->mdc = cl->max_dist_colour[k];
                p->k = (gint32)k;
                for (int a = 0; a < 3; a++)
                  {
                    p->lo[a] = w[a];
                    p->hi[a] = w[3 + a];
                  }
                p->covers_zy = w[0] <= t0[0] && t1[0] <= w[3] && w[1] <= t0[1] && t1[1] <= w[4];
                p->covers_x = w[2] <= t0[2] && t1[2] <= w[5];
                p->colour = c + 3;
              }
          }
      }

  return n;
}

#define BOUND_BUCKETS_MAX 128

/* Orders the gathered candidates by their spatial lower bound into
 * list->sorted, nearly: a counting sort into about one bucket per
 * candidate of the bounds' range. The bucket of a bound never decreases
 * with it (monotone float32 steps, then truncation), so every bound of a
 * bucket is at least every bound of the buckets before; each candidate's
 * `key`, its bucket's smallest bound, then never decreases along the
 * order and never exceeds its own bound, which is all the walk's stop
 * needs. The order within a bucket does not matter: the winner is the
 * lexicographic minimum in any visiting order. */
void
sv__assign_order_by_bound (CandidateList *list, int n)
{
  const int n_buckets = CLAMP (n, 1, BOUND_BUCKETS_MAX);
  int start[BOUND_BUCKETS_MAX + 1] = { 0 };
  float key[BOUND_BUCKETS_MAX];
  float lo = INFINITY, hi = -INFINITY, scale;
  gint32 *bucket;

  if (list->capacity == 0)
    candidate_list_grow (list); /* the padding below, even for none */
  bucket = list->bucket;

  for (int i = 0; i < n; i++)
    {
      lo = MIN (lo, list->items[i].bound);
      hi = MAX (hi, list->items[i].bound);
    }
  scale = hi > lo ? (float)n_buckets / (hi - lo) : 0.0f;
  for (int b = 0; b < n_buckets; b++)
    key[b] = INFINITY;
  for (int i = 0; i < n; i++)
    {
      const float bound = list->items[i].bound;
      const float f = (bound - lo) * scale;
      const int b = f < (float)n_buckets ? (int)f : n_buckets - 1;
      bucket[i] = b;
      start[b + 1]++;
      key[b] = MIN (key[b], bound);
    }
  for (int b = 0; b < n_buckets; b++)
    start[b + 1] += start[b];
  for (int i = 0; i < n; i++)
    {
      const int o = start[bucket[i]]++;
      list->sorted[o] = list->items[i];
      list->sorted[o].key = key[bucket[i]];
      list->sorted_cz[o] = list->items[i].cz;
      list->sorted_cy[o] = list->items[i].cy;
    }
  /* A block past the end reads these; its lanes are never taken. */
  for (int i = n; i < n + 8; i++)
    list->sorted_cz[i] = list->sorted_cy[i] = 0.0f;
}

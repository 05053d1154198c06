/* Supervox engine: the assignment's search over one tile, written once for
 * any lane count. slic-assign.c includes it once per vector width: LANES
 * floats of a row per vector, SV_LANES_FN (name) giving each instance its
 * own names.
 * Every lane does exactly the scalar float32 operations of sv_arith_spatial,
 * sv_arith_colour_term, sv_arith_distance and sv_arith_better, in the same
 * order (element-wise IEEE operations, no contraction), so every width gives
 * the same labels bit for bit. Not a public header. */

typedef float SV_LANES_FN (F) __attribute__ ((vector_size (LANES * sizeof (float))));
typedef gint32 SV_LANES_FN (I) __attribute__ ((vector_size (LANES * sizeof (gint32))));

static inline SV_LANES_FN (F)
    SV_LANES_FN (select) (SV_LANES_FN (I) take, SV_LANES_FN (F) a, SV_LANES_FN (F) b)
{
  return (SV_LANES_FN (F)) ((take & (SV_LANES_FN (I))a) | (~take & (SV_LANES_FN (I))b));
}

/* The largest lane, by halving (no NaN reaches here). */
static inline float
SV_LANES_FN (hmax) (SV_LANES_FN (F) a)
{
  SV_LANES_FN (F) b;
#if LANES == 8
  b = __builtin_shufflevector (a, a, 4, 5, 6, 7, 0, 1, 2, 3);
  a = SV_LANES_FN (select) (a > b, a, b);
  b = __builtin_shufflevector (a, a, 2, 3, 0, 1, 6, 7, 4, 5);
  a = SV_LANES_FN (select) (a > b, a, b);
  b = __builtin_shufflevector (a, a, 1, 0, 3, 2, 5, 4, 7, 6);
#elif LANES == 4
  b = __builtin_shufflevector (a, a, 2, 3, 0, 1);
  a = SV_LANES_FN (select) (a > b, a, b);
  b = __builtin_shufflevector (a, a, 1, 0, 3, 2);
#else
#error "hmax is written out for 4 and 8 lanes"
#endif
  a = SV_LANES_FN (select) (a > b, a, b);
  return a[0];
}

/* One bit per lane of a comparison's result (all bits of a lane set or
 * none), lane 0 the lowest. */
static inline unsigned
SV_LANES_FN (lane_bits) (SV_LANES_FN (I) m)
{
#if LANES == 8
  const SV_LANES_FN (I) w = { 1, 2, 4, 8, 16, 32, 64, 128 };
  m &= w;
  m |= __builtin_shufflevector (m, m, 4, 5, 6, 7, 0, 1, 2, 3);
  m |= __builtin_shufflevector (m, m, 2, 3, 0, 1, 6, 7, 4, 5);
  m |= __builtin_shufflevector (m, m, 1, 0, 3, 2, 5, 4, 7, 6);
#else
  const SV_LANES_FN (I) w = { 1, 2, 4, 8 };
  m &= w;
  m |= __builtin_shufflevector (m, m, 2, 3, 0, 1);
  m |= __builtin_shufflevector (m, m, 1, 0, 3, 2);
#endif
  return (unsigned)m[0];
}

/* Candidate p at the row's lanes (dzy: its z and y terms, done once for
 * all lanes): the distance in sv_arith's order, taken where it is smaller
 * than the lane's best or ties it with a lower cluster, within p's x
 * range. Both walks of the tile search evaluate through here. */
static inline void
SV_LANES_FN (evaluate) (const Candidate *p, float dzy, SV_LANES_FN (F) fx, SV_LANES_FN (I) xi,
                        float sx, float sw, float ratio, const SV_LANES_FN (F) *vals, guint nc,
                        gboolean ignore_colour, gboolean slic_zero, SV_LANES_FN (F) *best_d,
                        SV_LANES_FN (I) *best_k)
{
  SV_LANES_FN (F) dx, s, d;
  SV_LANES_FN (I) take;

  dx = sx * (p->cx - fx);
  dx = dx * dx;
  s = (dzy + dx) * sw;
  if (ignore_colour)
    d = s;
  else
    {
      SV_LANES_FN (F) colour = { 0 };
      for (guint c = 0; c < nc; c++)
        {
          SV_LANES_FN (F) t = vals[c] * ratio - p->colour[c];
          colour = colour + t * t;
        }
      if (slic_zero)
        colour = colour / p->mdc;
      d = s + colour;
    }
  take = (d < *best_d) | ((d == *best_d) & (p->k < *best_k));
  if (!p->covers_x)
    take &= (xi >= p->lo[2]) & (xi < p->hi[2]);
  *best_d = SV_LANES_FN (select) (take, d, *best_d);
  *best_k = (take & p->k) | (~take & *best_k);
}

/* What a row's walk compares candidates' spatial bounds with: the largest
 * best distance of its lanes; or, when every candidate has the same colour
 * term at each lane (`same`, that term per lane in `colour`), the largest
 * over the lanes of best − colour, widened so that a spatial term above it
 * gives a distance above the lane's best after the float32 addition:
 * with m = fl(fl(b·(1 + 2^-16)) + 2^-120) (the 2^-120 for a subnormal
 * product), a bound lb > fl(m − C) has lb + C > b·(1 + 2^-16)(1 − 2^-24)²,
 * so fl(lb + C) > b·(1 + 2^-16)(1 − 2^-24)³ > b (a negative fl(m − C)
 * means C > b already). Inactive lanes (−inf) never count. */
static inline float
SV_LANES_FN (row_reach) (SV_LANES_FN (F) best_d, gboolean same, SV_LANES_FN (F) colour)
{
  if (same)
    best_d = ((best_d * (1.0f + 0x1p-16f)) + 0x1p-120f) - colour;
  return SV_LANES_FN (hmax) (best_d);
}

/* The search over one tile; returns the distances computed (lanes). nc is
 * a compile-time constant in the specialised callers so the colour loop
 * unrolls.
 *
 * A row of LANES voxels walks the candidates in order of their bound over
 * the tile and stops where that bound exceeds the row's largest best
 * distance. With few candidates (high compactness) it takes them one at a
 * time and tightens that largest distance after each. With many (low
 * compactness, where the colour term keeps the best distances high and
 * the rows evaluate many candidates) it takes them LANES at a time: one
 * vector gives the spatial term of their z and y offsets, which no lane's
 * distance undercuts, and only those of the block within the row's
 * largest best distance at the block's start, an upper bound still, are
 * evaluated, one after the other with no test between them that waits on
 * the previous one's maximum (a chain of shuffles); the maximum is taken
 * once per block. */
static inline gint64
SV_LANES_FN (assign_tile) (const AssignJob *job, const int t0[3], const int t1[3],
                           const CandidateList *list, int n_cand, guint nc)
{
  const Candidate *cand = list->sorted;
  const SvSlicContext *ctx = job->ctx;
  const SvPrepared *im = ctx->image;
  const gsize ny = im->ny, nx = im->nx;
  const float sz = ctx->spacing[0], sy = ctx->spacing[1], sx = ctx->spacing[2];
  const float sw = ctx->spatial_weight, ratio = ctx->ratio;
  const int slic_zero = ctx->slic_zero, ignore_colour = ctx->ignore_colour;
  const guint8 *mask = ctx->mask;
  SV_LANES_FN (F) val[16];
  g_autofree SV_LANES_FN (F) *val_heap = nc > 16 ? g_new (SV_LANES_FN (F), nc) : NULL;
  SV_LANES_FN (F) *vals = val_heap != NULL ? val_heap : val;
  SV_LANES_FN (I) lane_index;
  const float *same_colour = job->same_colour;
  const gboolean same = same_colour != NULL && !ignore_colour;
  gint64 evaluated = 0;

  for (int l = 0; l < LANES; l++)
    lane_index[l] = l;

  for (int z = t0[0]; z < t1[0]; z++)
    for (int y = t0[1]; y < t1[1]; y++)
      for (int x0 = t0[2]; x0 < t1[2]; x0 += LANES)
        {
          const gsize v0 = ((gsize)z * ny + (gsize)y) * nx + (gsize)x0;
          const int width = MIN (LANES, t1[2] - x0);
          const float fz = (float)z, fy = (float)y;
          SV_LANES_FN (F) fx, best_d = (SV_LANES_FN (F)){ 0 } + INFINITY;
          SV_LANES_FN (I) xi, best_k = (SV_LANES_FN (I)){ 0 } - 1;
          SV_LANES_FN (F) same_term = { 0 };
          /* Every lane's best distance, or with one colour for all, see
           * row_reach. */
          float row_max = INFINITY;
          int n_active = LANES;

          for (int l = 0; l < LANES; l++)
            {
              /* x0 + l is exact in float32 (dimensions are far below 2^24). */
              fx[l] = (float)(x0 + l);
              xi[l] = x0 + l;
            }

          if (width == LANES && mask == NULL && nc == 1)
            {
              memcpy (&vals[0], im->data + v0, sizeof (SV_LANES_FN (F)));
            }
          else
            {
              n_active = 0;
              for (guint c = 0; c < nc; c++)
                vals[c] = (SV_LANES_FN (F)){ 0 };
              for (int l = 0; l < LANES; l++)
                {
                  gboolean active = l < width && (mask == NULL || mask[v0 + l]);
                  /* Inactive lanes start at -inf: they never take a cluster
                   * and never hold the row's largest best distance. */
                  best_d[l] = active ? INFINITY : -INFINITY;
                  n_active += active;
                  for (guint c = 0; c < nc && l < width; c++)
                    vals[c][l] = im->data[(v0 + l) * nc + c];
                }
            }

          if (same)
            {
              /* The colour term every candidate has, in the distance's
               * order. */
              for (guint c = 0; c < nc; c++)
                {
                  SV_LANES_FN (F) t = vals[c] * ratio - same_colour[c];
                  same_term = same_term + t * t;
                }
              if (slic_zero)
                same_term = same_term / job->same_max_dist_colour;
            }

          if (n_cand < job->block_walk_min)
            {
              for (int j = 0; j < n_cand && n_active > 0; j++)
                {
                  const Candidate *p = &cand[j];
                  float dz, dy, dzy;

                  /* Ordered by key (order_by_bound): nothing further can beat
                   * any lane. A bound equal to a best distance could still
                   * tie and win on a lower index. */
                  if (p->key > row_max)
                    break;
                  if (p->bound > row_max)
                    continue;
                  if (!p->covers_zy
                      && (z < p->lo[0] || z >= p->hi[0] || y < p->lo[1] || y >= p->hi[1]
                          || x0 + width <= p->lo[2] || x0 >= p->hi[2]))
                    continue;
                  dz = sz * (p->cz - fz);
                  dy = sy * (p->cy - fy);
                  dz = dz * dz;
                  dy = dy * dy;
                  dzy = dz + dy;
                  /* fl(dzy·w) <= ((dzy + dx²)·w) for every lane: monotone rounding. */
                  if (dzy * sw > row_max)
                    continue;
                  evaluated++;
                  SV_LANES_FN (evaluate) (p, dzy, fx, xi, sx, sw, ratio, vals, nc, ignore_colour,
                                          slic_zero, &best_d, &best_k);
                  row_max = SV_LANES_FN (row_reach) (best_d, same, same_term);
                }
            }
          else
            {
              for (int j0 = 0; j0 < n_cand && n_active > 0; j0 += LANES)
                {
                  SV_LANES_FN (F) bz, by, bdzy, bdzy_w;
                  float dzy_a[LANES];
                  unsigned bits;
                  gboolean done = FALSE;

                  /* As above, ordered by key. */
                  if (cand[j0].key > row_max)
                    break;
                  memcpy (&bz, list->sorted_cz + j0, sizeof bz);
                  memcpy (&by, list->sorted_cy + j0, sizeof by);
                  bz = sz * (bz - fz);
                  by = sy * (by - fy);
                  bz = bz * bz;
                  by = by * by;
                  bdzy = bz + by;
                  /* fl(dzy·w) <= ((dzy + dx²)·w) for every lane: monotone
                   * rounding. */
                  bdzy_w = bdzy * sw;
                  bits = SV_LANES_FN (lane_bits) ((bdzy_w <= row_max) & (lane_index < n_cand - j0));
                  if (bits == 0)
                    continue;
                  memcpy (dzy_a, &bdzy, sizeof dzy_a);
                  while (bits != 0)
                    {
                      const int l = __builtin_ctz (bits);
                      const Candidate *p = &cand[j0 + l];
                      const float dzy = dzy_a[l];

                      bits &= bits - 1;
                      if (p->key > row_max)
                        {
                          done = TRUE;
                          break;
                        }
                      if (p->bound > row_max)
                        continue;
                      if (!p->covers_zy
                          && (z < p->lo[0] || z >= p->hi[0] || y < p->lo[1] || y >= p->hi[1]
                              || x0 + width <= p->lo[2] || x0 >= p->hi[2]))
                        continue;
                      evaluated++;
                      SV_LANES_FN (evaluate) (p, dzy, fx, xi, sx, sw, ratio, vals, nc,
                                              ignore_colour, slic_zero, &best_d, &best_k);
                    }
                  row_max = SV_LANES_FN (row_reach) (best_d, same, same_term);
                  if (done)
                    break;
                }
            }

          if (width == LANES)
            memcpy (job->nearest + v0, &best_k, sizeof best_k);
          else
            for (int l = 0; l < width; l++)
              job->nearest[v0 + l] = best_k[l];
        }
  return evaluated * LANES;
}

/* assign_tile with nc fixed at compile time for the common counts. */
static gint64
SV_LANES_FN (assign_tile_nc) (const AssignJob *job, const int t0[3], const int t1[3],
                              const CandidateList *list, int n_cand, guint nc)
{
  switch (nc)
    {
    case 1:
      return SV_LANES_FN (assign_tile) (job, t0, t1, list, n_cand, 1);
    case 3:
      return SV_LANES_FN (assign_tile) (job, t0, t1, list, n_cand, 3);
    default:
      return SV_LANES_FN (assign_tile) (job, t0, t1, list, n_cand, nc);
    }
}

/* The smallest lane, by halving (no NaN reaches here). */
static inline float
SV_LANES_FN (hmin) (SV_LANES_FN (F) a)
{
  SV_LANES_FN (F) b;
#if LANES == 8
  b = __builtin_shufflevector (a, a, 4, 5, 6, 7, 0, 1, 2, 3);
  a = SV_LANES_FN (select) (a < b, a, b);
  b = __builtin_shufflevector (a, a, 2, 3, 0, 1, 6, 7, 4, 5);
  a = SV_LANES_FN (select) (a < b, a, b);
  b = __builtin_shufflevector (a, a, 1, 0, 3, 2, 5, 4, 7, 6);
#else
  b = __builtin_shufflevector (a, a, 2, 3, 0, 1);
  a = SV_LANES_FN (select) (a < b, a, b);
  b = __builtin_shufflevector (a, a, 1, 0, 3, 2);
#endif
  a = SV_LANES_FN (select) (a < b, a, b);
  return a[0];
}

/* The index of the lexicographic (distance, index) minimum over the lanes,
 * by halving. */
static inline gint32
SV_LANES_FN (lex_argmin) (SV_LANES_FN (F) d, SV_LANES_FN (I) k)
{
  SV_LANES_FN (F) d2;
  SV_LANES_FN (I) k2, take;
#define SV_LEX_STEP(...)                                                                           \
  d2 = __builtin_shufflevector (d, d, __VA_ARGS__);                                                \
  k2 = __builtin_shufflevector (k, k, __VA_ARGS__);                                                \
  take = (d2 < d) | ((d2 == d) & (k2 < k));                                                        \
  d = SV_LANES_FN (select) (take, d2, d);                                                          \
  k = (take & k2) | (~take & k);
#if LANES == 8
  SV_LEX_STEP (4, 5, 6, 7, 0, 1, 2, 3)
  SV_LEX_STEP (2, 3, 0, 1, 6, 7, 4, 5)
  SV_LEX_STEP (1, 0, 3, 2, 5, 4, 7, 6)
#else
  SV_LEX_STEP (2, 3, 0, 1)
  SV_LEX_STEP (1, 0, 3, 2)
#endif
#undef SV_LEX_STEP
  return k[0];
}

/* LANES candidates from index i of the colour order against one voxel, each
 * lane keeping its own lexicographic (distance, index) minimum. */
static inline void
SV_LANES_FN (colour_block) (const ColourOrder *co, int i, const float *vr, guint nc,
                            const SV_LANES_FN (F) * fp, const SV_LANES_FN (I) * ip, const float *sp,
                            float sw, SV_LANES_FN (F) * best_d, SV_LANES_FN (I) * best_k)
{
  const gsize total = co->total;
  SV_LANES_FN (F) cz, cy, cx, dz, dy, dx, s, d, colour = { 0 };
  SV_LANES_FN (I) m, k, take;

  memcpy (&cz, co->cz + i, sizeof cz);
  memcpy (&cy, co->cy + i, sizeof cy);
  memcpy (&cx, co->cx + i, sizeof cx);
  memcpy (&k, co->k + i, sizeof k);
  dz = sp[0] * (cz - fp[0]);
  dy = sp[1] * (cy - fp[1]);
  dx = sp[2] * (cx - fp[2]);
  dz = dz * dz;
  dy = dy * dy;
  dx = dx * dx;
  s = ((dz + dy) + dx) * sw;
  for (guint c = 0; c < nc; c++)
    {
      SV_LANES_FN (F) centre, t;
      memcpy (&centre, co->colour + c * total + i, sizeof centre);
      t = vr[c] - centre;
      colour = colour + t * t;
    }
  d = s + colour;
  take = (d < *best_d) | ((d == *best_d) & (k < *best_k));
  /* The voxel's bits (ip[0]) all set in the window's tile mask. */
  memcpy (&m, co->window_bits + i, sizeof m);
  take &= (m & ip[0]) == ip[0];
  *best_d = SV_LANES_FN (select) (take, d, *best_d);
  *best_k = (take & k) | (~take & *best_k);
}

/* The search over one tile with the candidates in order of their first
 * colour channel, for colour-dominated distances (low compactness): each
 * voxel starts at the candidates whose colour is nearest its own and walks
 * outwards on both sides while the colour term alone, which is monotone
 * along the order, can still reach its best distance. Same float32
 * operations per distance as assign_tile. Not for SLIC-zero or the
 * spatial-only pass. Returns the distances computed (lanes). */
static inline gint64
SV_LANES_FN (assign_tile_colour) (const AssignJob *job, const int t0[3], const int t1[3],
                                  ColourOrder *co, guint nc)
{
  const SvSlicContext *ctx = job->ctx;
  const SvPrepared *im = ctx->image;
  const gsize ny = im->ny, nx = im->nx;
  const float sp[3] = { ctx->spacing[0], ctx->spacing[1], ctx->spacing[2] };
  const float sw = ctx->spatial_weight, ratio = ctx->ratio;
  const guint8 *mask = ctx->mask;
  const int total = (int)co->total, first = co->pad, n = co->n;
  const float *key = co->colour;
  float vr_stack[16];
  g_autofree float *vr_heap = nc > 16 ? g_new (float, nc) : NULL;
  float *vr = vr_heap != NULL ? vr_heap : vr_stack;
  gint64 blocks = 0;

  for (int z = t0[0]; z < t1[0]; z++)
    for (int y = t0[1]; y < t1[1]; y++)
      {
        const float fz = (float)z, fy = (float)y;
        const gsize row = ((gsize)z * ny + (gsize)y) * nx;

        SV_LANES_FN (F) fp[3];
        SV_LANES_FN (I) ip[1];
        const guint32 row_bits = co->bit_z[z - t0[0]] | co->bit_y[y - t0[1]];

        fp[0] = (SV_LANES_FN (F)){ 0 } + fz;
        fp[1] = (SV_LANES_FN (F)){ 0 } + fy;
        for (int x = t0[2]; x < t1[2]; x++)
          {
            const gsize v = row + (gsize)x;
            SV_LANES_FN (F) best_d;
            SV_LANES_FN (I) best_k;
            int left, right;
            float bd;
            gint32 k;

            if (mask != NULL && !mask[v])
              {
                job->nearest[v] = -1;
                continue;
              }
            for (guint c = 0; c < nc; c++)
              vr[c] = im->data[v * nc + c] * ratio;
            /* x is exact in float32 (dimensions are far below 2^24). */
            fp[2] = (SV_LANES_FN (F)){ 0 } + (float)x;
            ip[0] = (SV_LANES_FN (I)){ 0 } + (gint32)(row_bits | co->bit_x[x - t0[2]]);
            best_d = (SV_LANES_FN (F)){ 0 } + INFINITY;
            best_k = (SV_LANES_FN (I)){ 0 } - 1;

            /* The first candidate whose colour is not below the voxel's:
             * a guess from the tile's bucket table, then exact. */
            {
              float f = (vr[0] - co->key_min) * co->key_scale;
              int p = co->bucket[f > 0.0f ? (f < (float)COLOUR_BUCKETS ? (int)f : COLOUR_BUCKETS)
                                          : 0];
              while (p > first && key[p - 1] >= vr[0])
                p--;
              while (p < first + n && key[p] < vr[0])
                p++;
              left = p - LANES / 2;
            }
            right = left + LANES;
            blocks++;
            SV_LANES_FN (colour_block) (co, left, vr, nc, fp, ip, sp, sw, &best_d, &best_k);

            /* Below `left` the colours are below the voxel's, from `right`
             * on not below it, so the float32 colour term only grows
             * outwards; every distance is at least its first channel's
             * term. A side stops once that term exceeds the best distance
             * so far (equal could still tie and win on a lower index).
             * Blocks may overlap at the ends: a minimum does not mind. */
            for (;;)
              {
                gboolean go_left = FALSE, go_right = FALSE;
                bd = SV_LANES_FN (hmin) (best_d);
                if (left > 0)
                  {
                    float t = vr[0] - key[left - 1];
                    go_left = t * t <= bd;
                  }
                if (right < total)
                  {
                    float t = vr[0] - key[right];
                    go_right = t * t <= bd;
                  }
                if (!go_left && !go_right)
                  break;
                blocks += go_left + go_right;
                if (go_left)
                  {
                    left = MAX (left - LANES, 0);
                    SV_LANES_FN (colour_block) (co, left, vr, nc, fp, ip, sp, sw, &best_d, &best_k);
                  }
                if (go_right)
                  {
                    int i = MIN (right, total - LANES);
                    SV_LANES_FN (colour_block) (co, i, vr, nc, fp, ip, sp, sw, &best_d, &best_k);
                    right = i + LANES;
                  }
              }

            k = SV_LANES_FN (lex_argmin) (best_d, best_k);
            job->nearest[v] = k;
          }
      }
  return blocks * LANES;
}

/* assign_tile_colour with nc fixed at compile time for the common counts. */
static gint64
SV_LANES_FN (assign_tile_colour_nc) (const AssignJob *job, const int t0[3], const int t1[3],
                                     ColourOrder *co, guint nc)
{
  switch (nc)
    {
    case 1:
      return SV_LANES_FN (assign_tile_colour) (job, t0, t1, co, 1);
    case 3:
      return SV_LANES_FN (assign_tile_colour) (job, t0, t1, co, 3);
    default:
      return SV_LANES_FN (assign_tile_colour) (job, t0, t1, co, nc);
    }
}

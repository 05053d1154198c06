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

/* The search over one tile. nc is a compile-time constant in the
 * specialised callers so the colour loop unrolls. */
static inline void
SV_LANES_FN (assign_tile) (const AssignJob *job, const int t0[3], const int t1[3],
                           const Candidate *cand, int n_cand, guint nc)
{
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

  for (int z = t0[0]; z < t1[0]; z++)
    for (int y = t0[1]; y < t1[1]; y++)
      for (int x0 = t0[2]; x0 < t1[2]; x0 += LANES)
        {
          const gsize v0 = ((gsize)z * ny + (gsize)y) * nx + (gsize)x0;
          const int width = MIN (LANES, t1[2] - x0);
          const float fz = (float)z, fy = (float)y;
          SV_LANES_FN (F) fx, best_d;
          SV_LANES_FN (I) xi, best_k;
          float row_max = INFINITY;
          int n_active = LANES;

          for (int l = 0; l < LANES; l++)
            {
              /* x0 + l is exact in float32 (dimensions are far below 2^24). */
              fx[l] = (float)(x0 + l);
              xi[l] = x0 + l;
              best_d[l] = INFINITY;
              best_k[l] = -1;
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

          for (int j = 0; j < n_cand && n_active > 0; j++)
            {
              const Candidate *p = &cand[j];
              float dz, dy, dzy;
              SV_LANES_FN (F) dx, s, d;
              SV_LANES_FN (I) take;

              /* Ordered by bound: nothing further can beat any lane. A bound
               * equal to a best distance could still tie and win on a lower
               * index. */
              if (p->bound > row_max)
                break;
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
              take = (d < best_d) | ((d == best_d) & (p->k < best_k));
              if (!p->covers_x)
                take &= (xi >= p->lo[2]) & (xi < p->hi[2]);
              best_d = SV_LANES_FN (select) (take, d, best_d);
              best_k = (take & p->k) | (~take & best_k);
              row_max = SV_LANES_FN (hmax) (best_d);
            }

          if (width == LANES)
            memcpy (job->nearest + v0, &best_k, sizeof best_k);
          else
            for (int l = 0; l < width; l++)
              job->nearest[v0 + l] = best_k[l];
        }
}

/* assign_tile with nc fixed at compile time for the common counts. */
static void
SV_LANES_FN (assign_tile_nc) (const AssignJob *job, const int t0[3], const int t1[3],
                              const Candidate *cand, int n_cand, guint nc)
{
  switch (nc)
    {
    case 1:
      SV_LANES_FN (assign_tile) (job, t0, t1, cand, n_cand, 1);
      break;
    case 3:
      SV_LANES_FN (assign_tile) (job, t0, t1, cand, n_cand, 3);
      break;
    default:
      SV_LANES_FN (assign_tile) (job, t0, t1, cand, n_cand, nc);
      break;
    }
}

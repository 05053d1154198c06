/* Supervox CUDA backend: the device connectivity rule over a volume too
 * large for one pass (2³¹ voxels or more, or more than the device has
 * room for), window by window in z, with exactly the labels of the whole
 * volume's rule.
 *
 * Why a window is enough. Every piece lies inside one input label, whose
 * voxels span at most E + 1 slices (E: the caller's `extent`, the largest
 * z extent of one label minus one). A window takes the pieces that start
 * in its core, slices [a, b): they lie in [a, b + E), their BFS neighbours
 * in [a − 1, b + E]; a neighbour in slice b + E starts at b or later, so
 * the window holds slices [a − 1, b + E). Slice a − 1 and every voxel of a
 * piece that started before a are settled by earlier windows: they enter
 * as known final labels (cc_is_known), never as voxels of a piece.
 * Pieces that start at b or later drop out of the window: whole components
 * that start there, and the later pieces of a component cut at max_size
 * (the next window cuts what is left of it: the sequential BFS of such a
 * piece only walks voxels that no earlier piece took, which are the
 * components of the unsettled voxels). What ties the windows together is the counter:
 * `base` large pieces before the window, and whether a small piece after
 * the last of them kept the counter's label (then a neighbour of that
 * label does not give it, as inside one volume).
 *
 * Each input slice is loaded once; the slices [b − 1, b + E) move to the
 * front of the buffers for the next window. */
#define G_LOG_DOMAIN "sv-cuda"

#include <limits.h>
#include <string.h>

#include "backend-cuda-private.h"
#include "connectivity-private.cuh"
#include "cuda-check.h"
#include "sv-cuda.h"

/* Known labels stay as they are and leave the input (background there);
 * background voxels are settled as background. */
__global__ void
cc_window_prep_kernel (long long n, int32_t *__restrict__ in, int32_t *__restrict__ known,
                       int background)
{
  long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  if (known[v] != SV_CC_UNKNOWN)
    in[v] = background;
  else if (in[v] == background)
    known[v] = background;
}

/* Moves `count` values from buf + from to buf (from > 0), in copies that
 * do not overlap. */
static cudaError_t
move_down (int32_t *buf, size_t from, size_t count, cudaStream_t stream)
{
  for (size_t done = 0; done < count;)
    {
      size_t c = MIN (from, count - done);
      cudaError_t err = cudaMemcpyAsync (buf + done, buf + from + done, c * sizeof (int32_t),
                                         cudaMemcpyDeviceToDevice, stream);
      if (err != cudaSuccess)
        return err;
      done += c;
    }
  return cudaSuccess;
}

static guint64
window_slices (guint depth, guint extent, guint nz)
{
  return MIN ((guint64)depth + extent + 1, (guint64)nz);
}

guint64
sv__cuda_cc_window_bytes (guint nz, gsize plane, guint extent, guint depth)
{
  const guint64 n = window_slices (depth, extent, nz) * plane;
  /* Scratch, the input and the known labels. */
  return sv__cuda_conn_scratch_bytes (n) + 2 * n * sizeof (int32_t);
}

guint
sv__cuda_cc_window_depth (guint nz, gsize plane, guint extent, guint64 budget)
{
  guint lo = 0, hi = nz;

  if (plane == 0 || nz == 0)
    return 0;
  /* The largest core whose window indexes in int and fits the budget. */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo + 1) / 2;
      if (window_slices (mid, extent, nz) * plane < (guint64)INT_MAX - 2
          && sv__cuda_cc_window_bytes (nz, plane, extent, mid) <= budget)
        lo = mid;
      else
        hi = mid - 1;
    }
  return lo;
}

/* How many of the window's n sorted piece starts lie below `limit`. */
__global__ void
cc_count_below_kernel (const int *__restrict__ starts, int n, long long limit, int *count)
{
  int lo = 0, hi = n;
  while (lo < hi)
    {
      const int mid = lo + (hi - lo) / 2;
      if ((long long)starts[mid] < limit)
        lo = mid + 1;
      else
        hi = mid;
    }
  *count = lo;
}

void
sv__cuda_piece_table_clear (SvCcPieceTable *table)
{
  cudaFree (table->d_joins);
  table->d_joins = NULL;
  table->n = table->cap = 0;
}

/* A window's table rows (s->small_roots: starts, window voxels from w0;
 * s->small_offsets: joins): the joins stay on the device, the warm-up's
 * starts go to the host. */
static gboolean
append_pieces (SvCcPieceTable *table, SvCudaConnScratch *s, int n_pieces, guint w0, gsize plane,
               cudaStream_t stream, GError **error)
{
  const long long limit = table->own_from - (long long)w0 * (long long)plane;
  int n_warm = 0;

  if (table->n + (gsize)n_pieces > table->cap)
    {
      const gsize cap = MAX (table->n + (gsize)n_pieces, 2 * table->cap);
      int32_t *grown = NULL;

      SV_CUDA_CHECK (cudaMalloc (&grown, MAX (cap, 1) * sizeof (int32_t)));
      if (table->n > 0)
        SV_CUDA_CHECK (cudaMemcpyAsync (grown, table->d_joins, table->n * sizeof (int32_t),
                                        cudaMemcpyDeviceToDevice, stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (stream));
      cudaFree (table->d_joins);
      table->d_joins = grown;
      table->cap = cap;
    }
  SV_CUDA_CHECK (cudaMemcpyAsync (table->d_joins + table->n, s->small_offsets,
                                  (gsize)n_pieces * sizeof (int32_t), cudaMemcpyDeviceToDevice,
                                  stream));
  if (limit > 0 && n_pieces > 0)
    {
      /* The counters are free once the window's rule is done. */
      cc_count_below_kernel<<<1, 1, 0, stream>>> (s->small_roots, n_pieces, limit, s->counters);
      SV_CUDA_CHECK (cudaGetLastError ());
      SV_CUDA_CHECK (
          cudaMemcpyAsync (&n_warm, s->counters, sizeof (int), cudaMemcpyDeviceToHost, stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (stream));
    }
  if (n_warm > 0)
    {
      g_autofree gint32 *starts = g_try_new (gint32, n_warm);
      const guint at = table->warm_starts->len;

      if (starts == NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                       "not enough memory for a table of %d pieces", n_warm);
          return FALSE;
        }
      SV_CUDA_CHECK (cudaMemcpyAsync (starts, s->small_roots, (gsize)n_warm * sizeof (gint32),
                                      cudaMemcpyDeviceToHost, stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (stream));
      g_array_set_size (table->warm_starts, at + (guint)n_warm);
      for (int i = 0; i < n_warm; i++)
        g_array_index (table->warm_starts, gint64, at + (guint)i)
            = (gint64)w0 * (gint64)plane + starts[i];
    }
  table->n += (gsize)n_pieces;
  return TRUE;
out:
  return FALSE;
}

/* The windows whose cores cover [0, core_end); with `table`, pieces
 * (connected rule) instead of labels. */
static gboolean
run_windows (guint nz, guint ny, guint nx, guint extent, guint depth, guint core_end,
             gint64 min_size, gint64 max_size, int start_label, SvConnectivityRule rule,
             SvCcSlices load, SvCcSlices store, gpointer user_data, cudaStream_t stream,
             SvCcPieceTable *table, gint64 *n_labels, GError **error)
{
  const gsize plane = (gsize)ny * nx;
  const guint cap = (guint)window_slices (depth, extent, nz);
  const int background = start_label - 1;
  const bool legacy = rule == SV_CONNECTIVITY_RULE_LEGACY;
  SvCudaConnScratch s;
  int32_t *d_in = NULL, *d_known = NULL;
  gint64 base = 0;
  bool in_use = false;
  guint w0 = 0, loaded = 0;
  gboolean ok = FALSE;

  memset (&s, 0, sizeof s);
  g_return_val_if_fail (depth > 0 && (guint64)cap * plane < (guint64)INT_MAX - 2, FALSE);
  SV_CUDA_CHECK (cudaMalloc (&d_in, cap * plane * sizeof (int32_t)));
  SV_CUDA_CHECK (cudaMalloc (&d_known, cap * plane * sizeof (int32_t)));
  if (!sv__cuda_conn_scratch_alloc (&s, cap * plane, error))
    goto out;

  if (legacy && min_size > max_size && min_size > 1 && table == NULL)
    {
      /* Every voxel but background takes start_label: no window needed. */
      bool any = false;
      for (guint z0 = 0; z0 < nz; z0 += cap)
        {
          const guint z1 = MIN (z0 + cap, nz);
          bool some = false;
          if (!load (z0, z1, d_in, user_data, error))
            goto out;
          SV_CUDA_CHECK (sv__cuda_cc_uniform (d_in, (long long)(z1 - z0) * plane, start_label, &s,
                                              stream, &some));
          if (!store (z0, z1, d_in, user_data, error))
            goto out;
          any |= some;
        }
      *n_labels = any ? 1 : 0;
      ok = TRUE;
      goto out;
    }

  for (guint a = 0, b; a < core_end; a = b)
    {
      const guint first = a > 0 ? a - 1 : 0;
      b = MIN (a + depth, core_end);
      const guint top = (guint)MIN ((guint64)b + extent, (guint64)nz);
      int n_large = 0;
      bool now_in_use = false;

      if (first > w0 && loaded > first)
        {
          SV_CUDA_CHECK (move_down (d_in, (first - w0) * plane, (loaded - first) * plane, stream));
          SV_CUDA_CHECK (
              move_down (d_known, (first - w0) * plane, (loaded - first) * plane, stream));
        }
      w0 = first;
      if (top > loaded)
        {
          /* A load may copy on another stream: the moves, which read
           * where it writes, come first. */
          SV_CUDA_CHECK (cudaStreamSynchronize (stream));
          if (!load (loaded, top, d_in + (loaded - w0) * plane, user_data, error))
            goto out;
          SV_CUDA_CHECK (cudaMemsetAsync (d_known + (loaded - w0) * plane, 0x80,
                                          (top - loaded) * plane * sizeof (int32_t), stream));
          loaded = top;
        }
      const gint64 t_rule = g_get_monotonic_time ();
      const long long n = (long long)(top - w0) * plane;
      cc_window_prep_kernel<<<sv_cc_grid (n), SV_CC_BLOCK, 0, stream>>> (n, d_in, d_known,
                                                                           background);
      SV_CUDA_CHECK (cudaGetLastError ());
      const SvCcWindow window
          = { d_known, (int)((b - w0) * plane), (int)base, in_use, table != NULL };
      SV_CUDA_CHECK (sv__cuda_cc_run (d_in, (int)(top - w0), (int)ny, (int)nx, min_size, max_size,
                                      start_label, legacy, &window, &s, stream, &n_large,
                                      &now_in_use));
      const gint64 t_table = g_get_monotonic_time ();
      if (table != NULL
          && (base + n_large >= G_MAXINT32 - 2
              || !append_pieces (table, &s, n_large, w0, plane, stream, error)))
        {
          if (base + n_large >= G_MAXINT32 - 2)
            g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                         "connectivity: more than %d pieces on one device", G_MAXINT32 - 3);
          goto out;
        }
      if (!store (a, b, d_known + (a - w0) * plane, user_data, error))
        goto out;
      g_debug ("connectivity window of slices %u to %u: rule %.3f s, %d %s, table and store "
               "%.3f s",
               a, b, (t_table - t_rule) / 1e6, n_large, table != NULL ? "pieces" : "new labels",
               (g_get_monotonic_time () - t_table) / 1e6);
      base += n_large;
      in_use = now_in_use || (in_use && n_large == 0);
    }
  *n_labels = base + (in_use ? 1 : 0);
  ok = TRUE;
out:
  cudaStreamSynchronize (stream);
  sv__cuda_conn_scratch_free (&s);
  cudaFree (d_in);
  cudaFree (d_known);
  return ok;
}

gboolean
sv__cuda_connectivity_windows (guint nz, guint ny, guint nx, guint extent, guint depth,
                               gint64 min_size, gint64 max_size, int start_label,
                               SvConnectivityRule rule, SvCcSlices load, SvCcSlices store,
                               gpointer user_data, cudaStream_t stream, gint64 *n_labels,
                               GError **error)
{
  return run_windows (nz, ny, nx, extent, depth, nz, min_size, max_size, start_label, rule, load,
                      store, user_data, stream, NULL, n_labels, error);
}

gboolean
sv__cuda_connectivity_windows_to (guint nz, guint ny, guint nx, guint extent, guint depth,
                                  guint core_end, gint64 min_size, gint64 max_size,
                                  int start_label, SvCcSlices load, SvCcSlices store,
                                  gpointer user_data, cudaStream_t stream, gint64 *n_labels,
                                  GError **error)
{
  return run_windows (nz, ny, nx, extent, depth, core_end, min_size, max_size, start_label,
                      SV_CONNECTIVITY_RULE_CONNECTED, load, store, user_data, stream, NULL,
                      n_labels, error);
}

gboolean
sv__cuda_piece_windows (guint nz, guint ny, guint nx, guint extent, guint depth, guint core_end,
                        gint64 min_size, gint64 max_size, int start_label, SvCcSlices load,
                        SvCcSlices store, gpointer user_data, cudaStream_t stream,
                        SvCcPieceTable *table, GError **error)
{
  gint64 n_pieces = 0;

  return run_windows (nz, ny, nx, extent, depth, core_end, min_size, max_size, start_label,
                      SV_CONNECTIVITY_RULE_CONNECTED, load, store, user_data, stream, table,
                      &n_pieces, error);
}

/* The test entry: the whole volume on the device, windows of `depth`. */
typedef struct
{
  const int32_t *d_all;
  int32_t *d_out;
  gsize plane;
  cudaStream_t stream;
} DeviceVolume;

static gboolean
load_device (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
{
  DeviceVolume *v = (DeviceVolume *)user_data;
  SV_CUDA_CHECK (cudaMemcpyAsync (d, v->d_all + (gsize)z0 * v->plane,
                                  (gsize)(z1 - z0) * v->plane * sizeof (int32_t),
                                  cudaMemcpyDeviceToDevice, v->stream));
  return TRUE;
out:
  return FALSE;
}

static gboolean
store_device (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error)
{
  DeviceVolume *v = (DeviceVolume *)user_data;
  SV_CUDA_CHECK (cudaMemcpyAsync (v->d_out + (gsize)z0 * v->plane, d,
                                  (gsize)(z1 - z0) * v->plane * sizeof (int32_t),
                                  cudaMemcpyDeviceToDevice, v->stream));
  return TRUE;
out:
  return FALSE;
}

gboolean
sv_cuda_connectivity_enforce_windows (const gint32 *in, guint nz, guint ny, guint nx,
                                      gint64 min_size, gint64 max_size, int start_label,
                                      SvConnectivityRule rule, guint extent, guint depth,
                                      gint32 *out, gint64 *n_labels, GError **error)
{
  const gsize plane = (gsize)ny * nx, n = (gsize)nz * plane;
  DeviceVolume v = { NULL, NULL, plane, NULL };
  int32_t *d_all = NULL;
  gboolean ok = FALSE;

  g_return_val_if_fail (n > 0 && depth > 0, FALSE);
  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&v.stream, cudaStreamNonBlocking));
  SV_CUDA_CHECK (cudaMalloc (&d_all, n * sizeof (int32_t)));
  SV_CUDA_CHECK (cudaMalloc (&v.d_out, n * sizeof (int32_t)));
  SV_CUDA_CHECK (
      cudaMemcpyAsync (d_all, in, n * sizeof (int32_t), cudaMemcpyHostToDevice, v.stream));
  v.d_all = d_all;
  if (!sv__cuda_connectivity_windows (nz, ny, nx, extent, depth, min_size, max_size, start_label,
                                      rule, load_device, store_device, &v, v.stream, n_labels, error))
    goto out;
  SV_CUDA_CHECK (
      cudaMemcpyAsync (out, v.d_out, n * sizeof (int32_t), cudaMemcpyDeviceToHost, v.stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (v.stream));
  ok = TRUE;
out:
  if (v.stream != NULL)
    {
      cudaStreamSynchronize (v.stream);
      cudaStreamDestroy (v.stream);
    }
  cudaFree (d_all);
  cudaFree (v.d_out);
  return ok;
}

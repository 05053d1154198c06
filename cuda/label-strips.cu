/* Supervox CUDA backend: label strips compressed where the labels are.
 *
 * The host's encoder (io-tiff-deflate-runs.c) cuts each row into runs
 * and literals on its own (no token crosses a row), so a thread takes a
 * row and a block a strip:
 *   1. count: each row's symbols into the strip's counts, the row's share
 *      of the Adler-32, and whether a label is negative;
 *   2. the host builds each strip's code from its counts
 *      (sv_deflate_runs_codes, the host encoder's own function);
 *   3. size: each row's bits under that code, their offsets in the strip
 *      and the strip's bytes; the host adds up where the strips go;
 *   4. write: every row's bits at its offset (words shared with the
 *      neighbouring rows are or-ed in), the strip's zlib header, block
 *      header, end of block and Adler-32 by its first thread.
 * The rows' symbols come from the rule every encoder shares
 * (sv-deflate-runs.h), so the strips are the host's bytes. */
#define G_LOG_DOMAIN "sv-cuda"

#include "label-strips.h"

#include <climits>
#include <string.h>

#include "cuda-check.h"
#include "sv-cuda.h"
#include "supervox/sv-deflate-runs.h"

#define STRIP_THREADS 64

/* Where the strips of a slab lie. */
typedef struct
{
  uint32_t ny, nx, rows, per_page;
  uint32_t dist_symbol[2];
  int up_ok;
} StripShape;

struct _SvCudaStripEncoder
{
  SvCudaBackend *owner;
  /* Device: per strip and per row of the largest slab so far. */
  gsize strip_cap, row_cap, out_cap;
  uint32_t *d_freq;
  SvRunsCode *d_codes;
  uint64_t *d_strip_bits, *d_offsets;
  uint32_t *d_adler;
  uint32_t *d_row_bits;
  ulonglong2 *d_row_adler;
  unsigned long long *d_negative;
  uint32_t *d_out;
  /* A store's chunks gathered from slices, one after the other. */
  int32_t *d_chunks;
  gsize chunks_cap;
  /* Host. */
  uint32_t *h_freq;
  SvRunsCode *h_codes;
  guint64 *h_offsets;
  uint64_t *h_strip_bits;
};

__device__ static void
strip_rows (const StripShape &sh, unsigned s, unsigned *z, unsigned *y0, unsigned *y1)
{
  const unsigned k = s % sh.per_page;

  *z = s / sh.per_page;
  *y0 = k * sh.rows;
  *y1 = min (*y0 + sh.rows, sh.ny);
}

/* The setup of the size and write kernels' block: its strip's first label
 * and number of rows, the index of its first row among all strips' rows,
 * and its code's literal/length table copied into shared `litlen`. */
__device__ static const uint32_t *
strip_of_block (const uint32_t *labels, const StripShape &sh, const SvRunsCode *code,
                uint32_t *litlen, unsigned *n_rows, size_t *row_first)
{
  unsigned z, y0, y1;

  strip_rows (sh, blockIdx.x, &z, &y0, &y1);
  *n_rows = y1 - y0;
  *row_first = (size_t)blockIdx.x * sh.rows;
  for (unsigned i = threadIdx.x; i < SV_RUNS_N_LITLEN; i += blockDim.x)
    litlen[i] = code->litlen[i];
  __syncthreads ();
  return labels + ((size_t)z * sh.ny + y0) * sh.nx;
}

/* Row r of a strip as symbols: literal(v) for a literal sample, match(bytes,
 * up) for a run; the host encoder's tokens, one row at a time. */
template <typename Literal, typename Match>
__device__ static void
row_symbols (const uint32_t *strip, size_t r, size_t nx, bool up_ok, Literal literal, Match match)
{
  const size_t end = (r + 1) * nx;

  for (size_t i = r * nx; i < end;)
    {
      size_t left, up, run;

      sv_runs_at_u32 (strip, i, end, nx, i > 0, up_ok && i >= nx, &left, &up);
      run = left > up ? left : up;
      if (run == 0)
        {
          literal (strip[i]);
          i++;
          continue;
        }
      match (run * 4, up > left ? 1 : 0);
      i += run;
    }
}

__global__ static void
count_kernel (const uint32_t *labels, StripShape sh, guint z_first, uint32_t *freq,
              ulonglong2 *row_adler, uint32_t *strip_adler, unsigned long long *negative)
{
  __shared__ uint32_t counts[SV_RUNS_N_SYMBOLS];
  const unsigned s = blockIdx.x;
  unsigned z, y0, y1;

  strip_rows (sh, s, &z, &y0, &y1);
  const uint32_t *strip = labels + ((size_t)z * sh.ny + y0) * sh.nx;
  const size_t row_first = (size_t)s * sh.rows;

  for (unsigned i = threadIdx.x; i < SV_RUNS_N_SYMBOLS; i += blockDim.x)
    counts[i] = 0;
  __syncthreads ();
  for (unsigned r = threadIdx.x; r < y1 - y0; r += blockDim.x)
    {
      const uint32_t *row = strip + (size_t)r * sh.nx;
      const unsigned long long row_bytes = 4ull * sh.nx;
      unsigned long long a = 0, b = 0;
      bool below_zero = false;

      row_symbols (
          strip, r, sh.nx, sh.up_ok,
          [&] (uint32_t v) {
            for (int k = 0; k < 4; k++)
              atomicAdd (&counts[(v >> (8 * k)) & 0xff], 1u);
          },
          [&] (size_t bytes, int up) {
            for (size_t rest = bytes; rest > 0;)
              {
                const size_t take = sv_runs_piece (rest);
                atomicAdd (&counts[257 + sv_runs_length_index ((unsigned)take)], 1u);
                atomicAdd (&counts[SV_RUNS_N_LITLEN + sh.dist_symbol[up]], 1u);
                rest -= take;
              }
          });
      /* The row's share of the Adler-32: its bytes' sum, and each byte
       * weighted by the bytes from it to the row's end. */
      for (unsigned x = 0; x < sh.nx; x++)
        {
          const uint32_t v = row[x];
          below_zero |= (int32_t)v < 0;
          for (int k = 0; k < 4; k++)
            {
              const unsigned long long byte = (v >> (8 * k)) & 0xff;
              a += byte;
              b += byte * (row_bytes - (4ull * x + k));
            }
          if ((x & 1023) == 1023)
            {
              a %= SV_RUNS_ADLER_MOD;
              b %= SV_RUNS_ADLER_MOD;
            }
        }
      row_adler[row_first + r] = make_ulonglong2 (a % SV_RUNS_ADLER_MOD, b % SV_RUNS_ADLER_MOD);
      if (below_zero)
        atomicMin (negative, (unsigned long long)(z_first + z));
    }
  __syncthreads ();
  for (unsigned i = threadIdx.x; i < SV_RUNS_N_SYMBOLS; i += blockDim.x)
    freq[(size_t)s * SV_RUNS_N_SYMBOLS + i] = counts[i];
  if (threadIdx.x == 0)
    {
      const unsigned long long row_bytes = (4ull * sh.nx) % SV_RUNS_ADLER_MOD;
      unsigned long long a = 1, b = 0;

      for (unsigned r = 0; r < y1 - y0; r++)
        {
          const ulonglong2 p = row_adler[row_first + r];
          b = (b + row_bytes * a + p.y) % SV_RUNS_ADLER_MOD;
          a = (a + p.x) % SV_RUNS_ADLER_MOD;
        }
      strip_adler[s] = (uint32_t)((b << 16) | a);
    }
}

/* The bits a match of `bytes` bytes takes under `code`. */
__device__ static unsigned
match_bits (const uint32_t *litlen, const SvRunsCode *code, size_t bytes, int up)
{
  unsigned bits = 0;

  for (size_t rest = bytes; rest > 0;)
    {
      const size_t take = sv_runs_piece (rest);
      const unsigned li = sv_runs_length_index ((unsigned)take);
      bits += SV_RUNS_CODE_LENGTH (litlen[257 + li]) + sv_runs_length_extra (li)
              + code->dist_bits[up];
      rest -= take;
    }
  return bits;
}

__global__ static void
size_kernel (const uint32_t *labels, StripShape sh, const SvRunsCode *codes, uint32_t *row_bits,
             uint64_t *strip_bits)
{
  __shared__ uint32_t litlen[SV_RUNS_N_LITLEN];
  const unsigned s = blockIdx.x;
  const SvRunsCode *code = &codes[s];
  unsigned n_rows;
  size_t row_first;
  const uint32_t *strip = strip_of_block (labels, sh, code, litlen, &n_rows, &row_first);

  for (unsigned r = threadIdx.x; r < n_rows; r += blockDim.x)
    {
      unsigned bits = 0;

      row_symbols (
          strip, r, sh.nx, sh.up_ok,
          [&] (uint32_t v) {
            for (int k = 0; k < 4; k++)
              bits += SV_RUNS_CODE_LENGTH (litlen[(v >> (8 * k)) & 0xff]);
          },
          [&] (size_t bytes, int up) { bits += match_bits (litlen, code, bytes, up); });
      row_bits[row_first + r] = bits;
    }
  __syncthreads ();
  /* The rows' offsets after the zlib and block headers, in row order. */
  if (threadIdx.x == 0)
    {
      uint64_t at = 16 + code->header_bits;

      for (unsigned r = 0; r < n_rows; r++)
        {
          const uint32_t bits = row_bits[row_first + r];
          row_bits[row_first + r] = (uint32_t)(at - 16 - code->header_bits);
          at += bits;
        }
      strip_bits[s] = at + SV_RUNS_CODE_LENGTH (litlen[SV_RUNS_END_OF_BLOCK]);
    }
}

/* Bits into a zeroed stream of 32-bit words, least significant first,
 * from bit `at` on; the words at either end may be shared with another
 * writer, so every word is or-ed in. */
typedef struct
{
  uint32_t *words;
  uint64_t at;
  uint64_t pending;
  unsigned n;
} BitOut;

__device__ static BitOut
bits_at (uint32_t *words, uint64_t at)
{
  BitOut o;

  o.words = words;
  o.at = at;
  o.pending = 0;
  o.n = 0;
  return o;
}

__device__ static void
bits_flush (BitOut *o, unsigned n)
{
  const uint64_t w = o->at >> 5;
  const unsigned shift = (unsigned)(o->at & 31);
  const uint64_t v = (o->pending & ((n == 64 ? 0 : (1ull << n)) - 1)) << shift;

  if ((uint32_t)v != 0)
    atomicOr (&o->words[w], (uint32_t)v);
  if ((uint32_t)(v >> 32) != 0)
    atomicOr (&o->words[w + 1], (uint32_t)(v >> 32));
  o->at += n;
  o->pending >>= n;
  o->n -= n;
}

__device__ static void
bits_put (BitOut *o, uint32_t bits, unsigned n)
{
  o->pending |= (uint64_t)bits << o->n;
  o->n += n;
  if (o->n >= 32)
    bits_flush (o, 32);
}

__device__ static void
bits_end (BitOut *o)
{
  if (o->n > 0)
    bits_flush (o, o->n);
}

__global__ static void
write_kernel (const uint32_t *labels, StripShape sh, const SvRunsCode *codes,
              const uint32_t *row_start, const uint64_t *strip_bits, const uint64_t *offsets,
              const uint32_t *strip_adler, uint32_t *out)
{
  __shared__ uint32_t litlen[SV_RUNS_N_LITLEN];
  const unsigned s = blockIdx.x;
  const SvRunsCode *code = &codes[s];
  const uint64_t base = offsets[s] * 8;
  unsigned n_rows;
  size_t row_first;
  const uint32_t *strip = strip_of_block (labels, sh, code, litlen, &n_rows, &row_first);

  for (unsigned r = threadIdx.x; r < n_rows; r += blockDim.x)
    {
      BitOut o = bits_at (out, base + 16 + code->header_bits + row_start[row_first + r]);

      row_symbols (
          strip, r, sh.nx, sh.up_ok,
          [&] (uint32_t v) {
            for (int k = 0; k < 4; k++)
              {
                const uint32_t c = litlen[(v >> (8 * k)) & 0xff];
                bits_put (&o, SV_RUNS_CODE_BITS (c), SV_RUNS_CODE_LENGTH (c));
              }
          },
          [&] (size_t bytes, int up) {
            for (size_t rest = bytes; rest > 0;)
              {
                const size_t take = sv_runs_piece (rest);
                const unsigned li = sv_runs_length_index ((unsigned)take);
                const uint32_t c = litlen[257 + li];
                bits_put (&o,
                          SV_RUNS_CODE_BITS (c)
                              | ((uint32_t)(take - sv_runs_length_base (li))
                                 << SV_RUNS_CODE_LENGTH (c)),
                          SV_RUNS_CODE_LENGTH (c) + sv_runs_length_extra (li));
                bits_put (&o, code->dist[up], code->dist_bits[up]);
                rest -= take;
              }
          });
      bits_end (&o);
    }
  if (threadIdx.x == 0)
    {
      const uint32_t eob = litlen[SV_RUNS_END_OF_BLOCK];
      const uint64_t end_bits = strip_bits[s];
      const uint32_t adler = strip_adler[s];
      BitOut o = bits_at (out, base);

      /* zlib's header (RFC 1950), then the block's. */
      bits_put (&o, 0x78, 8);
      bits_put (&o, 0x01, 8);
      for (unsigned b = 0; b < code->header_bits; b += 8)
        bits_put (&o, code->header[b / 8], min (8u, code->header_bits - b));
      bits_end (&o);
      o = bits_at (out, base + end_bits - SV_RUNS_CODE_LENGTH (eob));
      bits_put (&o, SV_RUNS_CODE_BITS (eob), SV_RUNS_CODE_LENGTH (eob));
      bits_end (&o);
      /* Zero bits to the byte, then the Adler-32 most significant byte
       * first. */
      o = bits_at (out, base + (end_bits + 7) / 8 * 8);
      for (int k = 3; k >= 0; k--)
        bits_put (&o, (adler >> (8 * k)) & 0xff, 8);
      bits_end (&o);
    }
}

SvCudaStripEncoder *
sv__cuda_strip_encoder_new (SvCudaBackend *owner)
{
  SvCudaStripEncoder *e = g_new0 (SvCudaStripEncoder, 1);

  e->owner = owner;
  return e;
}

static void
free_device (SvCudaStripEncoder *e)
{
  sv_cuda_clear (&e->d_freq);
  sv_cuda_clear (&e->d_codes);
  sv_cuda_clear (&e->d_strip_bits);
  sv_cuda_clear (&e->d_offsets);
  sv_cuda_clear (&e->d_adler);
  sv_cuda_clear (&e->d_row_bits);
  sv_cuda_clear (&e->d_row_adler);
  sv_cuda_clear (&e->d_negative);
  e->strip_cap = e->row_cap = 0;
}

void
sv__cuda_strip_encoder_free (SvCudaStripEncoder *e)
{
  if (e == NULL)
    return;
  free_device (e);
  sv_cuda_clear (&e->d_out);
  sv_cuda_clear (&e->d_chunks);
  g_free (e->h_freq);
  g_free (e->h_codes);
  g_free (e->h_offsets);
  g_free (e->h_strip_bits);
  g_free (e);
}

/* Buffers for n_strips strips of n_rows rows in all: 1, 0 when the device
 * has no room (the caller sends labels), −1 on another CUDA error. */
static int
ensure_buffers (SvCudaStripEncoder *e, gsize n_strips, gsize n_rows, GError **error)
{
  cudaError_t err = cudaSuccess;

  if (n_strips <= e->strip_cap && n_rows <= e->row_cap)
    return 1;
  free_device (e);
#define ALLOC(p, n)                                                                                \
  if ((err = cudaMalloc (&(p), (n) * sizeof *(p))) != cudaSuccess)                                 \
    goto out;
  ALLOC (e->d_freq, n_strips * SV_RUNS_N_SYMBOLS);
  ALLOC (e->d_codes, n_strips);
  ALLOC (e->d_strip_bits, n_strips);
  ALLOC (e->d_offsets, n_strips);
  ALLOC (e->d_adler, n_strips);
  ALLOC (e->d_row_bits, n_rows);
  ALLOC (e->d_row_adler, n_rows);
  ALLOC (e->d_negative, 1);
#undef ALLOC
  e->strip_cap = n_strips;
  e->row_cap = n_rows;
  e->h_freq = g_renew (uint32_t, e->h_freq, n_strips * SV_RUNS_N_SYMBOLS);
  e->h_codes = g_renew (SvRunsCode, e->h_codes, n_strips);
  e->h_offsets = g_renew (guint64, e->h_offsets, n_strips);
  e->h_strip_bits = g_renew (uint64_t, e->h_strip_bits, n_strips);
  return 1;
out:
  free_device (e);
  (void)cudaGetLastError ();
  if (err == cudaErrorMemoryAllocation)
    return 0;
  sv_cuda_set_error (error, err, "the label strips' buffers");
  return -1;
}

int
sv__cuda_strip_encode (SvCudaStripEncoder *e, const int32_t *d_labels, guint depth, guint ny,
                       guint nx, guint rows, guint z_first, cudaStream_t stream, guint64 *sizes,
                       guint8 *out, gsize capacity, gsize *n_bytes, gint64 *negative_slice,
                       GError **error)
{
  const guint per_page = (ny + rows - 1) / rows;
  const gsize n_strips = (gsize)depth * per_page, n_rows = n_strips * rows;
  const gsize row_bytes = (gsize)nx * 4;
  StripShape sh;
  guint64 total = 0;
  unsigned long long negative = ULLONG_MAX;
  uint32_t distance[2];
  unsigned dist_symbol[2];
  int room;

  g_return_val_if_fail (rows > 0 && depth > 0 && (guint64)n_strips < G_MAXUINT32, -1);
  room = ensure_buffers (e, n_strips, n_rows, error);
  if (room <= 0)
    return room;
  sv_deflate_runs_distances (row_bytes, 4, distance, dist_symbol);
  sh.ny = ny;
  sh.nx = nx;
  sh.rows = rows;
  sh.per_page = per_page;
  sh.dist_symbol[0] = dist_symbol[0];
  sh.dist_symbol[1] = dist_symbol[1];
  sh.up_ok = row_bytes <= SV_RUNS_WINDOW;

  /* 1. counts; 2. codes on the host. */
  const gint64 t0 = g_get_monotonic_time ();
  gint64 t_count, t_codes, t_size, t_write;
  SV_CUDA_CHECK (cudaMemcpyAsync (e->d_negative, &negative, sizeof negative,
                                  cudaMemcpyHostToDevice, stream));
  count_kernel<<<(unsigned)n_strips, STRIP_THREADS, 0, stream>>> (
      (const uint32_t *)d_labels, sh, z_first, e->d_freq, e->d_row_adler, e->d_adler,
      e->d_negative);
  SV_CUDA_CHECK (cudaGetLastError ());
  SV_CUDA_CHECK (cudaMemcpyAsync (e->h_freq, e->d_freq,
                                  n_strips * SV_RUNS_N_SYMBOLS * sizeof (uint32_t),
                                  cudaMemcpyDeviceToHost, stream));
  SV_CUDA_CHECK (cudaMemcpyAsync (&negative, e->d_negative, sizeof negative,
                                  cudaMemcpyDeviceToHost, stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (stream));
  t_count = g_get_monotonic_time ();
  sv_deflate_runs_codes (n_strips, e->h_freq, row_bytes, 4, e->h_codes, 0);
  t_codes = g_get_monotonic_time ();

  /* 3. sizes, and where the strips go. */
  SV_CUDA_CHECK (cudaMemcpyAsync (e->d_codes, e->h_codes, n_strips * sizeof (SvRunsCode),
                                  cudaMemcpyHostToDevice, stream));
  size_kernel<<<(unsigned)n_strips, STRIP_THREADS, 0, stream>>> (
      (const uint32_t *)d_labels, sh, e->d_codes, e->d_row_bits, e->d_strip_bits);
  SV_CUDA_CHECK (cudaGetLastError ());
  SV_CUDA_CHECK (cudaMemcpyAsync (e->h_strip_bits, e->d_strip_bits, n_strips * sizeof (uint64_t),
                                  cudaMemcpyDeviceToHost, stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (stream));
  t_size = g_get_monotonic_time ();
  for (gsize s = 0; s < n_strips; s++)
    {
      e->h_offsets[s] = total;
      sizes[s] = (e->h_strip_bits[s] + 7) / 8 + 4;
      total += sizes[s];
    }
  if (total > capacity)
    return 0;
  /* Whole words, and one more for a write that ends at a word's edge. */
  if ((total + 8) / 4 > e->out_cap)
    {
      const gsize words = (total + 8) / 4 + (total + 8) / 16;
      cudaError_t err;

      sv_cuda_clear (&e->d_out);
      e->out_cap = 0;
      err = cudaMalloc (&e->d_out, words * 4);
      if (err == cudaErrorMemoryAllocation)
        {
          (void)cudaGetLastError ();
          return 0;
        }
      SV_CUDA_CHECK (err);
      e->out_cap = words;
    }
  /* 4. the bits. */
  SV_CUDA_CHECK (cudaMemcpyAsync (e->d_offsets, e->h_offsets, n_strips * sizeof (uint64_t),
                                  cudaMemcpyHostToDevice, stream));
  SV_CUDA_CHECK (cudaMemsetAsync (e->d_out, 0, (total + 8) / 4 * 4, stream));
  write_kernel<<<(unsigned)n_strips, STRIP_THREADS, 0, stream>>> (
      (const uint32_t *)d_labels, sh, e->d_codes, e->d_row_bits, e->d_strip_bits, e->d_offsets,
      e->d_adler, e->d_out);
  SV_CUDA_CHECK (cudaGetLastError ());
  SV_CUDA_CHECK (cudaStreamSynchronize (stream));
  t_write = g_get_monotonic_time ();
  if (e->owner != NULL)
    SV_CUDA_CHECK (sv__cuda_staged_copy (e->owner, out, e->d_out, total, FALSE));
  else
    SV_CUDA_CHECK (cudaMemcpy (out, e->d_out, total, cudaMemcpyDeviceToHost));
  g_debug ("strips of %u slices (%zu strips, %" G_GUINT64_FORMAT " bytes): count %.1f ms, codes "
           "%.1f ms, size %.1f ms, write %.1f ms, copy %.1f ms",
           depth, n_strips, total, (t_count - t0) / 1e3, (t_codes - t_count) / 1e3,
           (t_size - t_codes) / 1e3, (t_write - t_size) / 1e3,
           (g_get_monotonic_time () - t_write) / 1e3);
  *n_bytes = total;
  *negative_slice = negative == ULLONG_MAX ? -1 : (gint64)negative;
  return 1;
out:
  return -1;
}

/* Chunk after chunk of `shape`'s rows of chunks, each its cz·cy·cx
 * labels in (z, y, x) order, 0 outside the depth·ny·nx slices. */
typedef struct
{
  uint32_t depth, ny, nx;
  uint32_t cz, cy, cx;
  uint32_t ky, kx; /* chunks across y and x */
} ChunkShape;

/* Blocks along y take chunks, along x a chunk's labels, with 32-bit index
 * arithmetic inside a chunk (the caller keeps a chunk under 2³² labels). */
__global__ static void
gather_chunks_kernel (const int32_t *labels, ChunkShape sh, uint32_t n_chunks, int32_t *chunks)
{
  const uint32_t chunk_plane = sh.cy * sh.cx, chunk_size = sh.cz * chunk_plane;
  const uint32_t per_row = sh.ky * sh.kx;

  for (uint32_t c = blockIdx.y; c < n_chunks; c += gridDim.y)
    {
      const uint32_t kz = c / per_row, rest = c - kz * per_row;
      const uint32_t ky = rest / sh.kx, kx = rest - ky * sh.kx;
      int32_t *out = chunks + (size_t)c * chunk_size;

      for (uint32_t w = blockIdx.x * blockDim.x + threadIdx.x; w < chunk_size;
           w += gridDim.x * blockDim.x)
        {
          const uint32_t zz = w / chunk_plane, r = w - zz * chunk_plane;
          const uint32_t yy = r / sh.cx, xx = r - yy * sh.cx;
          const uint32_t z = kz * sh.cz + zz, y = ky * sh.cy + yy, x = kx * sh.cx + xx;

          out[w] = z < sh.depth && y < sh.ny && x < sh.nx
                       ? labels[((size_t)z * sh.ny + y) * sh.nx + x]
                       : 0;
        }
    }
}

int
sv__cuda_chunk_encode (SvCudaStripEncoder *e, const int32_t *d_labels, guint depth, guint ny,
                       guint nx, const guint chunks[3], cudaStream_t stream, guint64 *sizes,
                       guint8 *out, gsize capacity, gsize *n_bytes, gint64 *negative_chunk,
                       GError **error)
{
  ChunkShape sh = { depth, ny, nx, chunks[0], chunks[1], chunks[2],
                    (ny + chunks[1] - 1) / chunks[1], (nx + chunks[2] - 1) / chunks[2] };
  const gsize n_chunks = sv__cuda_chunk_count (depth, ny, nx, chunks);
  const gsize rows = (gsize)sh.cz * sh.cy, n = n_chunks * rows * sh.cx;

  g_return_val_if_fail (depth > 0 && sh.cz > 0 && sh.cy > 0 && sh.cx > 0, -1);
  if (rows * sh.cx >= G_MAXUINT32 || n_chunks >= G_MAXUINT32)
    return 0;
  if (n > e->chunks_cap)
    {
      cudaError_t err;

      sv_cuda_clear (&e->d_chunks);
      e->chunks_cap = 0;
      err = cudaMalloc (&e->d_chunks, n * sizeof (int32_t));
      if (err == cudaErrorMemoryAllocation)
        {
          (void)cudaGetLastError ();
          return 0;
        }
      SV_CUDA_CHECK (err);
      e->chunks_cap = n;
    }
  {
    const dim3 grid ((unsigned)MIN ((rows * sh.cx + 255) / 256, (gsize)1024),
                     (unsigned)MIN (n_chunks, (gsize)65535));
    gather_chunks_kernel<<<grid, 256, 0, stream>>> (d_labels, sh, (uint32_t)n_chunks,
                                                    e->d_chunks);
  }
  SV_CUDA_CHECK (cudaGetLastError ());
  /* Each chunk a page of one strip: its rows of cx labels. */
  return sv__cuda_strip_encode (e, e->d_chunks, (guint)n_chunks, (guint)rows, sh.cx, (guint)rows,
                                0, stream, sizes, out, capacity, n_bytes, negative_chunk, error);
out:
  return -1;
}

/* nz·ny·nx host labels compressed on `device`: as strips of `rows` rows,
 * or with `chunks` as a store's chunks of that shape. */
static gboolean
compress_on_device (int device, const gint32 *labels, guint nz, guint ny, guint nx, guint rows,
                    guint z_first, const guint *chunks, guint64 **sizes, guint8 **bytes,
                    gsize *n_bytes, gint64 *negative, GError **error)
{
  const gsize n = (gsize)nz * ny * nx;
  const gsize n_pieces = chunks != NULL ? sv__cuda_chunk_count (nz, ny, nx, chunks)
                                        : (gsize)nz * ((ny + rows - 1) / rows);
  const gsize padded = chunks != NULL ? n_pieces * chunks[0] * chunks[1] * chunks[2] : n;
  /* Deflate's worst case: every byte a literal of 15 bits, a piece's
   * header and trailer. */
  const gsize capacity = 2 * padded * sizeof (gint32) + n_pieces * (SV_RUNS_HEADER_BYTES + 16);
  SvCudaStripEncoder *e = NULL;
  int32_t *d_labels = NULL;
  cudaStream_t stream = NULL;
  gboolean ok = FALSE;
  int done;

  g_return_val_if_fail (n > 0 && (rows > 0 || chunks != NULL), FALSE);
  *sizes = g_new (guint64, n_pieces);
  *bytes = (guint8 *)g_malloc (capacity);
  SV_CUDA_CHECK (cudaSetDevice (device));
  SV_CUDA_CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  SV_CUDA_CHECK (cudaMalloc (&d_labels, n * sizeof (int32_t)));
  SV_CUDA_CHECK (cudaMemcpy (d_labels, labels, n * sizeof (int32_t), cudaMemcpyHostToDevice));
  e = sv__cuda_strip_encoder_new (NULL);
  done = chunks != NULL
             ? sv__cuda_chunk_encode (e, d_labels, nz, ny, nx, chunks, stream, *sizes, *bytes,
                                      capacity, n_bytes, negative, error)
             : sv__cuda_strip_encode (e, d_labels, nz, ny, nx, rows, z_first, stream, *sizes,
                                      *bytes, capacity, n_bytes, negative, error);
  if (done == 0)
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                 "not enough GPU memory to compress %u slices of labels", nz);
  ok = done > 0;
out:
  if (!ok)
    {
      g_clear_pointer (sizes, g_free);
      g_clear_pointer (bytes, g_free);
    }
  sv__cuda_strip_encoder_free (e);
  cudaFree (d_labels);
  if (stream != NULL)
    cudaStreamDestroy (stream);
  return ok;
}

gboolean
sv_cuda_compress_label_strips (int device, const gint32 *labels, guint nz, guint ny, guint nx,
                               guint rows, guint z_first, guint64 **sizes, guint8 **bytes,
                               gsize *n_bytes, gint64 *negative_slice, GError **error)
{
  return compress_on_device (device, labels, nz, ny, nx, rows, z_first, NULL, sizes, bytes,
                             n_bytes, negative_slice, error);
}

gboolean
sv_cuda_compress_label_chunks (int device, const gint32 *labels, guint nz, guint ny, guint nx,
                               const guint chunks[3], guint64 **sizes, guint8 **bytes,
                               gsize *n_bytes, gint64 *negative_chunk, GError **error)
{
  return compress_on_device (device, labels, nz, ny, nx, 0, 0, chunks, sizes, bytes, n_bytes,
                             negative_chunk, error);
}

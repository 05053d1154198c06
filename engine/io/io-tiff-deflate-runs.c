/* Supervox engine: a deflate encoder for label strips that writes runs.
 *
 * A label strip is mostly repeats: a sample equal to the one before it
 * (runs along x) or to the one a row above (the same supervoxel in the
 * next row). A general matcher (libdeflate's level 6) finds those repeats
 * too, but searches hash chains to do it, about 80–190 MB/s a core on
 * SLIC labels: at 2048³ the label file took longer than the segmentation.
 * This encoder looks only where the repeats are: at each sample it
 * measures the run of samples equal to their left neighbour and the run
 * equal to the row above, takes the longer as matches (distance one sample
 * or one row) and a sample that starts neither as literals. The runs are
 * found once, as tokens; a dynamic Huffman code is built from their counts
 * and they are written as one deflate block, in the zlib wrapper of TIFF's
 * Adobe deflate (tif_zip.c), so every TIFF reader decodes the strip.
 *
 * The stream depends only on the strip's bytes and shape: the same file
 * for any number of threads, writer or device. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include <libdeflate.h>

#include "internal.h"
#include "io-tiff-private.h"
#include "supervox/sv-deflate-runs.h"

#define WINDOW SV_RUNS_WINDOW
#define MIN_MATCH SV_RUNS_MIN_MATCH
#define N_LITLEN SV_RUNS_N_LITLEN
#define N_DIST SV_RUNS_N_DIST
#define N_CODELEN 19
#define MAX_BITS 15

/* A token: a run of literal samples (TOKEN_MATCH clear) or of samples
 * copied from the left or from the row above, the count above the flags. */
#define TOKEN_MATCH 1u
#define TOKEN_UP 2u
#define TOKEN_SHIFT 2

typedef struct
{
  guint8 *out;
  guint64 bits; /* pending bits, least significant first */
  guint n_bits;
} BitWriter;

/* A code with its extra bits, ready to write (least significant first). */
typedef struct
{
  guint32 bits;
  guint8 n_bits;
} Code;

static const guint32 distance_base[30]
    = { 1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
        193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
static const guint8 distance_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                           6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
/* The order in which the code length code's lengths are sent. */
static const guint8 codelen_order[N_CODELEN]
    = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

static guint32
reverse_bits (guint32 code, guint n)
{
  guint32 r = 0;

  for (guint i = 0; i < n; i++, code >>= 1)
    r = (r << 1) | (code & 1);
  return r;
}

static inline void
put (BitWriter *w, guint32 bits, guint n_bits)
{
  w->bits |= (guint64)bits << w->n_bits;
  w->n_bits += n_bits;
  if (w->n_bits >= 32)
    {
      const guint32 word = (guint32)w->bits;
      w->out[0] = (guint8)word;
      w->out[1] = (guint8)(word >> 8);
      w->out[2] = (guint8)(word >> 16);
      w->out[3] = (guint8)(word >> 24);
      w->out += 4;
      w->bits >>= 32;
      w->n_bits -= 32;
    }
}

static inline void
put_code (BitWriter *w, Code c)
{
  put (w, c.bits, c.n_bits);
}

/* ------------------------------------------------------------------------ */
/* The runs */

typedef struct
{
  const guint8 *in;
  gsize n;        /* samples */
  gsize row;      /* samples a row */
  guint size;     /* bytes a sample */
  gboolean up_ok; /* the row above is within deflate's window */
} Strip;

static inline gboolean
same (const guint8 *in, gsize j, gsize k, guint size)
{
  switch (size)
    {
    case 4:
      return ((const guint32 *)(const void *)in)[j] == ((const guint32 *)(const void *)in)[k];
    case 2:
      return ((const guint16 *)(const void *)in)[j] == ((const guint16 *)(const void *)in)[k];
    case 1:
      return in[j] == in[k];
    default:
      return memcmp (in + j * size, in + k * size, size) == 0;
    }
}

/* The runs from sample i on, up to `end` (the end of its row), equal to
 * the sample before (*left) and to the one a row above (*up), walked
 * together until both end. Labels (4 bytes) take the rule every encoder
 * shares (sv-deflate-runs.h). */
static inline void
runs_at (const Strip *st, gsize i, gsize end, gsize *left, gsize *up)
{
  const guint8 *in = st->in;
  const guint size = st->size;
  const gsize row = st->row;
  gboolean l_open = i > 0, u_open = st->up_ok && i >= row;
  gsize j = i;

  if (size == 4)
    {
      sv_runs_at_u32 ((const uint32_t *)(const void *)in, i, end, row, l_open, u_open, left, up);
      return;
    }
  *left = *up = 0;
  while (j < end && (l_open || u_open))
    {
      if (l_open && !same (in, j, j - 1, size))
        {
          l_open = FALSE;
          *left = j - i;
        }
      if (u_open && !same (in, j, j - row, size))
        {
          u_open = FALSE;
          *up = j - i;
        }
      j++;
    }
  if (l_open)
    *left = j - i;
  if (u_open)
    *up = j - i;
}

typedef struct
{
  guint32 *data;
  gsize len, size;
} Tokens;

/* Room for the most tokens a strip can make: one per sample, and one
 * more per row for a row's closing literals. */
static gboolean
tokens_reserve (Tokens *t, gsize n)
{
  guint32 *data;

  if (n <= t->size)
    return TRUE;
  data = g_try_renew (guint32, t->data, n);
  if (data == NULL)
    return FALSE;
  t->data = data;
  t->size = n;
  return TRUE;
}

static inline void
tokens_push (Tokens *t, guint32 token)
{
  t->data[t->len++] = token;
}

/* The strip as tokens, row by row (no token crosses a row, so that rows
 * can be coded apart): at each sample the longer of its two runs (the
 * shorter distance on a tie) when it covers a match's 3 bytes, else a
 * literal sample (consecutive ones in one token). */
static gboolean
strip_tokens (const Strip *st, Tokens *t)
{
  const guint min_samples = (MIN_MATCH + st->size - 1) / st->size;

  t->len = 0;
  if (!tokens_reserve (t, st->n + st->n / MAX (st->row, 1) + 1))
    return FALSE;
  for (gsize r0 = 0; r0 < st->n; r0 += st->row)
    {
      const gsize end = MIN (r0 + st->row, st->n);
      gsize literals = 0;

      for (gsize i = r0; i < end;)
        {
          gsize left, up, run;

          runs_at (st, i, end, &left, &up);
          run = MAX (left, up);
          if (run < min_samples)
            {
              literals++;
              i++;
              continue;
            }
          if (literals > 0)
            tokens_push (t, (guint32)literals << TOKEN_SHIFT);
          literals = 0;
          tokens_push (t, ((guint32)run << TOKEN_SHIFT) | TOKEN_MATCH | (up > left ? TOKEN_UP : 0));
          i += run;
        }
      if (literals > 0)
        tokens_push (t, (guint32)literals << TOKEN_SHIFT);
    }
  return TRUE;
}

/* A match of `bytes` bytes as pieces (sv_runs_piece); runs `body` with
 * every piece's length in `take`. */
#define FOR_EACH_PIECE(bytes, take, body)                                                          \
  for (gsize rest_ = (bytes); rest_ > 0;)                                                          \
    {                                                                                              \
      const gsize take = sv_runs_piece (rest_);                                                    \
      body;                                                                                        \
      rest_ -= take;                                                                               \
    }

/* ------------------------------------------------------------------------ */
/* Dynamic codes */

/* Code lengths of a Huffman code for `freq` no longer than max_len:
 * two-queue construction over the used symbols in (frequency, symbol)
 * order; when a code comes out too long the frequencies are halved
 * (rounding up) and it is built again. At least two symbols get a code,
 * so that every decoder accepts the table. */
static void
huffman_lengths (const guint32 *freq_in, guint n, guint max_len, guint8 *lengths)
{
  guint32 freq[N_LITLEN];
  guint sym[N_LITLEN], parent[2 * N_LITLEN], depth[2 * N_LITLEN];
  guint64 weight[2 * N_LITLEN];
  guint used = 0;

  memcpy (freq, freq_in, n * sizeof *freq);
  for (guint s = 0; s < n; s++)
    used += freq[s] > 0;
  for (guint s = 0; s < n && used < 2; s++)
    if (freq[s] == 0)
      {
        freq[s] = 1;
        used++;
      }
  for (;;)
    {
      guint m = 0, leaf = 0, inner, next, deepest = 0;

      for (guint s = 0; s < n; s++)
        {
          guint j;

          lengths[s] = 0;
          if (freq[s] == 0)
            continue;
          /* Insertion into (frequency, symbol) order; n is at most 286. */
          for (j = m++; j > 0 && freq[sym[j - 1]] > freq[s]; j--)
            sym[j] = sym[j - 1];
          sym[j] = s;
        }
      for (guint i = 0; i < m; i++)
        weight[i] = freq[sym[i]];
      inner = next = m;
      while (next < 2 * m - 1)
        {
          guint pick[2];
          for (guint k = 0; k < 2; k++)
            pick[k]
                = leaf < m && (inner >= next || weight[leaf] <= weight[inner]) ? leaf++ : inner++;
          weight[next] = weight[pick[0]] + weight[pick[1]];
          parent[pick[0]] = parent[pick[1]] = next;
          next++;
        }
      /* Parents come after their children. */
      depth[2 * m - 2] = 0;
      for (guint i = 2 * m - 2; i-- > 0;)
        depth[i] = depth[parent[i]] + 1;
      for (guint i = 0; i < m; i++)
        {
          lengths[sym[i]] = (guint8)depth[i];
          deepest = MAX (deepest, depth[i]);
        }
      if (deepest <= max_len)
        return;
      for (guint s = 0; s < n; s++)
        if (freq[s] > 0)
          freq[s] = (freq[s] + 1) / 2;
    }
}

/* The canonical codes of RFC 1951 3.2.2, reversed for writing. */
static void
canonical_codes (const guint8 *lengths, guint n, Code *codes)
{
  guint count[MAX_BITS + 1] = { 0 }, next[MAX_BITS + 1] = { 0 };
  guint code = 0;

  for (guint s = 0; s < n; s++)
    count[lengths[s]]++;
  count[0] = 0;
  for (guint bits = 1; bits <= MAX_BITS; bits++)
    {
      code = (code + count[bits - 1]) << 1;
      next[bits] = code;
    }
  for (guint s = 0; s < n; s++)
    codes[s] = lengths[s] == 0
                   ? (Code){ 0, 0 }
                   : (Code){ reverse_bits (next[lengths[s]]++, lengths[s]), lengths[s] };
}

/* Run-length tokens of the code lengths (RFC 1951 3.2.7): symbol in the
 * low 5 bits, its extra value above. */
static guint
codelen_tokens (const guint8 *lengths, guint n, guint16 *tokens, guint32 *freq)
{
  guint count = 0;

  for (guint i = 0; i < n;)
    {
      const guint8 v = lengths[i];
      guint run = 1;

      while (i + run < n && lengths[i + run] == v)
        run++;
      i += run;
      if (v == 0)
        {
          while (run >= 11)
            {
              const guint take = MIN (run, 138);
              tokens[count++] = (guint16)(18 | ((take - 11) << 5));
              run -= take;
            }
          if (run >= 3)
            {
              tokens[count++] = (guint16)(17 | ((run - 3) << 5));
              run = 0;
            }
        }
      else
        {
          tokens[count++] = v;
          run--;
          while (run >= 3)
            {
              const guint take = MIN (run, 6);
              tokens[count++] = (guint16)(16 | ((take - 3) << 5));
              run -= take;
            }
        }
      for (; run > 0; run--)
        tokens[count++] = v;
    }
  for (guint t = 0; t < count; t++)
    freq[tokens[t] & 31]++;
  return count;
}

/* The block header: BFINAL and BTYPE, the sizes of the tables, the code
 * length code and the two tables' lengths through it. */
static void
put_header (BitWriter *w, const guint8 *litlen_len, const guint8 *dist_len)
{
  static const guint8 extra_bits[3] = { 2, 3, 7 };
  guint8 lengths[N_LITLEN + N_DIST], codelen_len[N_CODELEN];
  guint16 tokens[N_LITLEN + N_DIST];
  guint32 freq[N_CODELEN] = { 0 };
  Code codelen[N_CODELEN];
  guint hlit = N_LITLEN, hdist = N_DIST, hclen = N_CODELEN, n_tokens;

  while (hlit > 257 && litlen_len[hlit - 1] == 0)
    hlit--;
  while (hdist > 1 && dist_len[hdist - 1] == 0)
    hdist--;
  memcpy (lengths, litlen_len, hlit);
  memcpy (lengths + hlit, dist_len, hdist);
  n_tokens = codelen_tokens (lengths, hlit + hdist, tokens, freq);
  huffman_lengths (freq, N_CODELEN, 7, codelen_len);
  canonical_codes (codelen_len, N_CODELEN, codelen);
  while (hclen > 4 && codelen_len[codelen_order[hclen - 1]] == 0)
    hclen--;
  /* One final block (BFINAL 1) with dynamic codes (BTYPE 10). */
  put (w, 1 | (2 << 1), 3);
  put (w, hlit - 257, 5);
  put (w, hdist - 1, 5);
  put (w, hclen - 4, 4);
  for (guint i = 0; i < hclen; i++)
    put (w, codelen_len[codelen_order[i]], 3);
  for (guint t = 0; t < n_tokens; t++)
    {
      const guint s = tokens[t] & 31;
      put_code (w, codelen[s]);
      if (s >= 16)
        put (w, (guint32)(tokens[t] >> 5), extra_bits[s - 16]);
    }
}

static guint
distance_symbol (guint32 distance)
{
  guint i = 29;

  while (distance_base[i] > distance)
    i--;
  return i;
}

void
sv_deflate_runs_distances (size_t row_bytes, unsigned sample_bytes, uint32_t distance[2],
                           unsigned dist_symbol[2])
{
  distance[0] = sample_bytes;
  /* Samples a row above are out of deflate's reach in very wide rows. */
  distance[1] = row_bytes <= WINDOW && row_bytes >= sample_bytes ? (guint32)row_bytes
                                                                  : sample_bytes;
  for (guint d = 0; d < 2; d++)
    dist_symbol[d] = distance_symbol (distance[d]);
}

void
sv_deflate_runs_code (const uint32_t *freq, size_t row_bytes, unsigned sample_bytes,
                      SvRunsCode *code)
{
  guint32 litlen_freq[N_LITLEN];
  guint8 litlen_len[N_LITLEN], dist_len[N_DIST];
  Code litlen[N_LITLEN], dist[N_DIST];
  guint32 distance[2];
  guint dist_sym[2];
  BitWriter w;
  guint n_bits;

  memcpy (litlen_freq, freq, sizeof litlen_freq);
  litlen_freq[SV_RUNS_END_OF_BLOCK] = 1;
  huffman_lengths (litlen_freq, N_LITLEN, MAX_BITS, litlen_len);
  huffman_lengths (freq + N_LITLEN, N_DIST, MAX_BITS, dist_len);
  canonical_codes (litlen_len, N_LITLEN, litlen);
  canonical_codes (dist_len, N_DIST, dist);
  for (guint s = 0; s < N_LITLEN; s++)
    code->litlen[s] = litlen[s].bits | ((guint32)litlen[s].n_bits << 16);
  sv_deflate_runs_distances (row_bytes, sample_bytes, distance, dist_sym);
  for (guint d = 0; d < 2; d++)
    {
      const Code c = dist[dist_sym[d]];
      code->dist[d] = c.bits | ((distance[d] - distance_base[dist_sym[d]]) << c.n_bits);
      code->dist_bits[d] = c.n_bits + distance_extra[dist_sym[d]];
    }
  memset (code->header, 0, sizeof code->header);
  w = (BitWriter){ code->header, 0, 0 };
  put_header (&w, litlen_len, dist_len);
  n_bits = (guint)(w.out - code->header) * 8 + w.n_bits;
  for (; w.n_bits > 0; w.bits >>= 8)
    {
      *w.out++ = (guint8)w.bits;
      w.n_bits = w.n_bits > 8 ? w.n_bits - 8 : 0;
    }
  code->header_bits = n_bits;
}

typedef struct
{
  gsize n;
  const uint32_t *freq;
  gsize row_bytes;
  guint sample_bytes, n_threads;
  SvRunsCode *codes;
} CodesJob;

static void
codes_cb (gpointer data, int thread)
{
  const CodesJob *job = data;

  for (gsize s = (gsize)thread; s < job->n; s += job->n_threads)
    sv_deflate_runs_code (job->freq + s * SV_RUNS_N_SYMBOLS, job->row_bytes, job->sample_bytes,
                          &job->codes[s]);
}

void
sv_deflate_runs_codes (size_t n, const uint32_t *freq, size_t row_bytes, unsigned sample_bytes,
                       SvRunsCode *codes, int n_threads)
{
  CodesJob job = { n, freq, row_bytes, sample_bytes, 1, codes };

  /* A code takes tens of microseconds: threads only for many. */
  job.n_threads = (guint)MIN ((gsize)sv__resolve_threads (n_threads), MAX (n / 64, 1));
  sv__run_parallel ((int)job.n_threads, codes_cb, &job);
}

/* ------------------------------------------------------------------------ */

struct _SvTiffRunsCoder
{
  Tokens tokens;
};

SvTiffRunsCoder *
sv__tiff_runs_coder_new (void)
{
  return g_new0 (SvTiffRunsCoder, 1);
}

void
sv__tiff_runs_coder_free (SvTiffRunsCoder *coder)
{
  if (coder == NULL)
    return;
  g_free (coder->tokens.data);
  g_free (coder);
}

gsize
sv__tiff_deflate_runs_bound (gsize in_len)
{
  /* Literals of a dynamic code take up to 15 bits: twice the input, the
   * header (under 300 bytes), the zlib wrapper and slack. */
  return 2 * in_len + 512;
}

gsize
sv__tiff_deflate_runs (SvTiffRunsCoder *coder, const guint8 *in, gsize in_len, gsize row_bytes,
                       guint sample_bytes, guint8 *out)
{
  guint32 freq[SV_RUNS_N_SYMBOLS] = { 0 };
  guint32 *const dist_freq = freq + N_LITLEN;
  SvRunsCode code;
  const Tokens *t = &coder->tokens;
  guint32 distance[2], adler;
  guint dist_sym[2];
  BitWriter w = { out + 2, 0, 0 };
  Strip st;

  g_return_val_if_fail (sample_bytes > 0 && in_len % sample_bytes == 0, 0);
  st.in = in;
  st.size = sample_bytes;
  st.n = in_len / sample_bytes;
  st.row = row_bytes / sample_bytes;
  st.up_ok = row_bytes <= WINDOW && st.row > 0;
  sv_deflate_runs_distances (row_bytes, sample_bytes, distance, dist_sym);
  if (!strip_tokens (&st, &coder->tokens))
    return 0;

  /* The symbols' counts, their code. */
  for (gsize k = 0, i = 0; k < t->len; k++)
    {
      const guint32 token = t->data[k];
      const gsize count = token >> TOKEN_SHIFT;

      if (token & TOKEN_MATCH)
        {
          const guint d = (token & TOKEN_UP) != 0;
          FOR_EACH_PIECE (count * sample_bytes, take, {
            freq[257 + sv_runs_length_index ((guint)take)]++;
            dist_freq[dist_sym[d]]++;
          });
        }
      else
        for (gsize b = i * sample_bytes; b < (i + count) * sample_bytes; b++)
          freq[in[b]]++;
      i += count;
    }
  sv_deflate_runs_code (freq, row_bytes, sample_bytes, &code);

  /* zlib: deflate, 32 KiB window, "fastest" (RFC 1950); the check bits
   * make 0x7801 a multiple of 31. */
  out[0] = 0x78;
  out[1] = 0x01;
  for (guint b = 0; b < code.header_bits; b += 8)
    put (&w, code.header[b / 8], MIN (8, code.header_bits - b));
  for (gsize k = 0, i = 0; k < t->len; k++)
    {
      const guint32 token = t->data[k];
      const gsize count = token >> TOKEN_SHIFT;

      if (token & TOKEN_MATCH)
        {
          const guint d = (token & TOKEN_UP) != 0;
          FOR_EACH_PIECE (count * sample_bytes, take, {
            const guint li = sv_runs_length_index ((guint)take);
            const guint32 lc = code.litlen[257 + li];
            put (&w,
                 SV_RUNS_CODE_BITS (lc)
                     | ((guint32)(take - sv_runs_length_base (li)) << SV_RUNS_CODE_LENGTH (lc)),
                 SV_RUNS_CODE_LENGTH (lc) + sv_runs_length_extra (li));
            put (&w, code.dist[d], code.dist_bits[d]);
          });
        }
      else
        for (gsize b = i * sample_bytes; b < (i + count) * sample_bytes; b++)
          put (&w, SV_RUNS_CODE_BITS (code.litlen[in[b]]), SV_RUNS_CODE_LENGTH (code.litlen[in[b]]));
      i += count;
    }
  put (&w, SV_RUNS_CODE_BITS (code.litlen[SV_RUNS_END_OF_BLOCK]),
       SV_RUNS_CODE_LENGTH (code.litlen[SV_RUNS_END_OF_BLOCK]));
  while (w.n_bits > 0)
    {
      *w.out++ = (guint8)w.bits;
      w.bits >>= 8;
      w.n_bits = w.n_bits > 8 ? w.n_bits - 8 : 0;
    }
  adler = libdeflate_adler32 (1, in, in_len);
  w.out[0] = (guint8)(adler >> 24);
  w.out[1] = (guint8)(adler >> 16);
  w.out[2] = (guint8)(adler >> 8);
  w.out[3] = (guint8)adler;
  return (gsize)(w.out + 4 - out);
}

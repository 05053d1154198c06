/* Supervox engine: deflate of runs (io-tiff-deflate-runs.c), the label
 * file's codec, as every encoder of it writes it: the rule that cuts a
 * row of 32-bit labels into runs and literals, the match pieces, and the
 * block's code built from a strip's symbol counts. A device that holds
 * the labels compresses their strips with these and gives the same bytes
 * as the host's encoder.
 *
 * A strip is one deflate block with dynamic codes in a zlib wrapper:
 * 0x78 0x01, the block's header (BFINAL, BTYPE 2, the tables), the rows'
 * symbols, end of block, zero bits to a byte, then the Adler-32 of the
 * strip's bytes, most significant byte first. Bits go least significant
 * first. The header is valid C11 and CUDA C++. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#ifdef __CUDACC__
#define SV_RUNS_HD __host__ __device__ __forceinline__
#else
#define SV_RUNS_HD static inline
#endif

G_BEGIN_DECLS

#define SV_RUNS_N_LITLEN 286
#define SV_RUNS_N_DIST 30
#define SV_RUNS_N_SYMBOLS (SV_RUNS_N_LITLEN + SV_RUNS_N_DIST)
#define SV_RUNS_END_OF_BLOCK 256
#define SV_RUNS_MIN_MATCH 3u
#define SV_RUNS_MAX_MATCH 258u
/* Deflate's window: a row above is reachable when a row is no longer. */
#define SV_RUNS_WINDOW 32768u
/* The most bits of a block header: BFINAL and BTYPE (3), the sizes (14),
 * the code length code (19 · 3) and 316 code lengths of at most 7 + 7. */
#define SV_RUNS_HEADER_BYTES 576
#define SV_RUNS_ADLER_MOD 65521u

/* The runs from sample i on, up to `end` (the end of its row), of 32-bit
 * samples equal to the one before (*left; only when `left_open`) and to
 * the one a row of `row` samples above (*up; only when `up_open`), walked
 * together until both end. `in` and i are the strip's. */
SV_RUNS_HD void
sv_runs_at_u32 (const uint32_t *in, size_t i, size_t end, size_t row, int left_open, int up_open,
                size_t *left, size_t *up)
{
  size_t j = i;

  *left = *up = 0;
  while (j < end && (left_open || up_open))
    {
      if (left_open && in[j] != in[j - 1])
        {
          left_open = 0;
          *left = j - i;
        }
      if (up_open && in[j] != in[j - row])
        {
          up_open = 0;
          *up = j - i;
        }
      j++;
    }
  if (left_open)
    *left = j - i;
  if (up_open)
    *up = j - i;
}

/* floor(log2 (x)) for x > 0. */
SV_RUNS_HD unsigned
sv_runs_log2 (uint32_t x)
{
#ifdef __CUDA_ARCH__
  return 31u - (unsigned)__clz (x);
#else
  return 31u - (unsigned)__builtin_clz (x);
#endif
}

/* RFC 1951 3.2.5: the length symbol of a match of `len` bytes (3–258), as
 * an index 0–28 of symbols 257–285, its base length and extra bits. */
SV_RUNS_HD unsigned
sv_runs_length_index (unsigned len)
{
  const unsigned x = len - 3;
  unsigned e;

  if (len == SV_RUNS_MAX_MATCH)
    return 28;
  if (x < 8)
    return x;
  e = sv_runs_log2 (x) - 2;
  return 4 * e + (x >> e);
}

SV_RUNS_HD unsigned
sv_runs_length_extra (unsigned index)
{
  return index < 8 || index == 28 ? 0 : (index - 8) / 4 + 1;
}

SV_RUNS_HD unsigned
sv_runs_length_base (unsigned index)
{
  unsigned e;

  if (index == 28)
    return SV_RUNS_MAX_MATCH;
  if (index < 8)
    return index + 3;
  e = (index - 8) / 4 + 1;
  return 3 + ((4 + ((index - 8) & 3)) << e);
}

/* The next piece of a match with `rest` bytes left: at most 258 bytes,
 * and never leaving 1 or 2 (deflate's shortest match is 3). */
SV_RUNS_HD size_t
sv_runs_piece (size_t rest)
{
  if (rest <= SV_RUNS_MAX_MATCH)
    return rest;
  return rest - SV_RUNS_MAX_MATCH < SV_RUNS_MIN_MATCH ? rest - SV_RUNS_MIN_MATCH
                                                      : SV_RUNS_MAX_MATCH;
}

/* A strip's code: what its symbols are written with. */
typedef struct
{
  /* Reversed codes, the length in bits above bit 16; 0 for an unused
   * symbol. */
  uint32_t litlen[SV_RUNS_N_LITLEN];
  /* The two distances' codes with their extra bits (a sample to the left,
   * a row above), and their lengths. */
  uint32_t dist[2];
  uint32_t dist_bits[2];
  /* BFINAL, BTYPE and the tables, header_bits bits from header[0]'s least
   * significant bit on. */
  uint32_t header_bits;
  uint8_t header[SV_RUNS_HEADER_BYTES];
} SvRunsCode;

#define SV_RUNS_CODE_BITS(c) ((c)&0xffffu)
#define SV_RUNS_CODE_LENGTH(c) ((c) >> 16)

/* The deflate distance of a match to the left and to the row above:
 * `sample_bytes` and `row_bytes`, or `sample_bytes` twice when a row is
 * wider than the window. (io-tiff-deflate-runs.c) */
void sv_deflate_runs_distances (size_t row_bytes, unsigned sample_bytes, uint32_t distance[2],
                                unsigned dist_symbol[2]);

/* The code of a strip from its symbols' counts: `freq` holds the 286
 * literal/length counts then the 30 distance counts, end of block not
 * counted (it is added here). (io-tiff-deflate-runs.c) */
void sv_deflate_runs_code (const uint32_t *freq, size_t row_bytes, unsigned sample_bytes,
                           SvRunsCode *code);

/* sv_deflate_runs_code of n strips, SV_RUNS_N_SYMBOLS counts each, on
 * n_threads threads (0: every core). */
void sv_deflate_runs_codes (size_t n, const uint32_t *freq, size_t row_bytes,
                            unsigned sample_bytes, SvRunsCode *codes, int n_threads);

G_END_DECLS

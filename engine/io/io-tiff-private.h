/* Supervox engine: what the TIFF reader, writer, metadata and codec files
 * share. Not public API (supervox/sv-io.h is). */
#pragma once

#include <glib.h>
#include <tiffio.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-io-slab.h"

G_BEGIN_DECLS

/* ---- deflate of runs, for label strips (io-tiff-deflate-runs.c) -------- */

typedef struct _SvTiffRunsCoder SvTiffRunsCoder;

SvTiffRunsCoder *sv__tiff_runs_coder_new (void);
void sv__tiff_runs_coder_free (SvTiffRunsCoder *coder);
/* The most bytes sv__tiff_deflate_runs writes for in_len bytes. */
gsize sv__tiff_deflate_runs_bound (gsize in_len);
/* A zlib stream of `in` (rows of row_bytes, samples of sample_bytes, which
 * divides in_len) made of runs along the row and from the row above;
 * returns its length, 0 without memory. */
gsize sv__tiff_deflate_runs (SvTiffRunsCoder *coder, const guint8 *in, gsize in_len,
                             gsize row_bytes, guint sample_bytes, guint8 *out);

/* ---- libtiff messages (io-tiff-common.c) -------------------------------- */

typedef struct
{
  const char *name;  /* file name for debug output */
  char *first_error; /* first libtiff error since the last reset, owned */
} SvTiffMessages;

/* Open options that fold libtiff's errors into `msgs` instead of stderr. */
TIFFOpenOptions *sv__tiff_options_new (SvTiffMessages *msgs);
void sv__tiff_messages_reset (SvTiffMessages *msgs);
/* The captured libtiff message, or `fallback` when libtiff said nothing. */
const char *sv__tiff_messages_text (const SvTiffMessages *msgs, const char *fallback);

/* Reads exactly `len` bytes at `offset` of `fd` (pread: any thread);
 * FALSE if the file is shorter or cannot be read. */
gboolean sv__tiff_read_at (int fd, guint64 offset, void *buf, gsize len);

/* ---- sample types and codec names (io-tiff-common.c) -------------------- */

guint sv__sample_type_bytes (SvSampleType type);
gboolean sv__sample_type_is_float (SvSampleType type);
/* Maps TIFF's BitsPerSample + SampleFormat; FALSE for layouts we do not read. */
gboolean sv__sample_type_from_tiff (guint16 bps, guint16 format, SvSampleType *out);
const char *sv__sample_format_words (guint16 format);
/* "none", "deflate", "zstd", ... for a TIFF compression tag (owned). */
char *sv__tiff_compression_name (guint16 compression);
/* Decoded bytes one stored byte can yield at most; 0 when unknown. */
guint64 sv__tiff_compression_max_ratio (guint16 compression);

/* The level the writer uses for `options` (0 for codecs without levels).
 * (io-tiff-options.c) */
int sv__tiff_write_options_level (const SvTiffWriteOptions *options);

/* ---- strip and tile codecs (io-tiff-codec.c) ----------------------------- */

/* One thread's decoder and encoder state, reused across strips. */
typedef struct _SvTiffCodec SvTiffCodec;

SvTiffCodec *sv__tiff_codec_new (void);
void sv__tiff_codec_free (SvTiffCodec *codec);

/* TRUE when sv__tiff_codec_decode handles this compression itself. */
gboolean sv__tiff_codec_can_decode (guint16 compression);

/* Decompresses `in` into exactly `out_len` bytes of `out`; FALSE when the
 * data is corrupt or decodes to another size (libtiff then has its say). */
gboolean sv__tiff_codec_decode (SvTiffCodec *codec, guint16 compression, const guint8 *in,
                                gsize in_len, guint8 *out, gsize out_len);

/* The codec's output buffer, at least `size` bytes (valid until the next
 * call); NULL without memory. */
guint8 *sv__tiff_codec_buffer (SvTiffCodec *codec, gsize size);

/* Compresses `in`; returns the compressed bytes (owned by the codec, valid
 * until the next call) and their count, or NULL on failure. */
/* Deflate of runs (SV_TIFF_COMPRESSION_DEFLATE_RUNS) of rows of row_bytes
 * and samples of sample_bytes. */
const guint8 *sv__tiff_codec_encode_runs (SvTiffCodec *codec, const guint8 *in, gsize in_len,
                                          gsize row_bytes, guint sample_bytes, gsize *out_len);
const guint8 *sv__tiff_codec_encode (SvTiffCodec *codec, SvTiffCompression compression, int level,
                                     const guint8 *in, gsize in_len, gsize *out_len);

/* Undoes TIFF predictor 2 (horizontal differencing) or 3 (floating point)
 * on `rows` rows of `width` pixels of `stride` interleaved samples of
 * `bytes` bytes each, in place. FALSE for a layout libtiff must handle. */
gboolean sv__tiff_predictor_undo (SvTiffCodec *codec, guint16 predictor, guint8 *data, gsize rows,
                                  gsize width, guint stride, guint bytes);

/* Applies horizontal differencing (predictor 2) in place, same layout. */
void sv__tiff_predictor_apply (guint8 *data, gsize rows, gsize width, guint stride, guint bytes);

/* ---- reader (io-tiff-open.c, io-tiff-decode.c) --------------------------- */

/* How one page stores its pixels. */
typedef struct
{
  guint32 width, height;
  guint16 spp, bps, format, planar, photometric, compression, predictor, fillorder;
  gboolean tiled;
  guint32 tile_width, tile_height, rows_per_strip;
  guint32 subfile_type;
} SvPageLayout;

/* A page used as (part of) a z slice. */
typedef struct
{
  tdir_t dir;
  guint number; /* 1-based page number in the file, for messages */
  guint z, c;   /* its slice and, in ImageJ hyperstacks, its channel */
  SvPageLayout layout;
  guint32 n_chunks; /* strips or tiles */
  guint64 *offsets; /* n_chunks file offsets, owned */
  guint64 *counts;  /* n_chunks stored byte counts, owned */
  gboolean fast;    /* pread + our codec; else libtiff decodes it */
} SvTiffPage;

typedef struct
{
  char *path;
  SvTiffMessages msgs;
  TIFFOpenOptions *opts;
  TIFF *tif;
  int fd; /* our own descriptor for directory bytes and strip data */
  guint64 file_size;
  gboolean big_endian;
  gboolean bigtiff;

  SvPageLayout first; /* layout of the first page used */
  guint first_page;   /* its 1-based page number */
  SvSampleType type;
  GArray *pages; /* SvTiffPage of every full-resolution page */
  gboolean any_tiled;
  guint16 compression; /* of the first page */

  /* The volume: nz slices of nc channels. Pages carry either all channels
   * (nc == first.spp) or, in ImageJ hyperstacks, one each (spp 1,
   * channels_in_pages == nc, page p is slice p / nc, channel p % nc). */
  guint nz, nc;
  guint channels_in_pages;
  char *note; /* how an ambiguous header was read; owned */

  double spacing[3]; /* z, y, x */
  gboolean spacing_from_file;
  char *unit;
} SvTiffReader;

void sv__tiff_reader_free (SvTiffReader *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvTiffReader, sv__tiff_reader_free)

/* Opens `path` and checks every page before any voxel buffer exists. */
SvTiffReader *sv__tiff_reader_open (const char *path, GError **error);

/* Sets `error` to "<file>: <message>". */
void sv__tiff_reader_error (SvTiffReader *r, GError **error, SvEngineError code, const char *fmt,
                            ...) G_GNUC_PRINTF (4, 5);

static inline SvTiffPage *
sv__tiff_reader_page (SvTiffReader *r, guint i)
{
  return &g_array_index (r->pages, SvTiffPage, i);
}

/* Called once per page with its samples (ny*nx*spp, channel fastest, file
 * type). Called from several threads at once, for different pages. */
typedef gboolean (*SvPageFunc) (SvTiffReader *r, const SvTiffPage *page, const void *samples,
                                gsize n, gpointer user_data, GError **error);

/* Decodes the pages for which `want` (may be NULL: all) is TRUE on
 * n_threads threads and calls `func` on each. On failure the error is the
 * one of the first failing page. */
gboolean sv__tiff_reader_for_each_page (SvTiffReader *r, const gboolean *want, int n_threads,
                                        SvPageFunc func, gpointer user_data, GError **error);

/* img_as_float of n samples read at samples[i · is], written at
 * out[i · os]. (io-tiff-read.c) */
void sv__tiff_convert_to_float (SvSampleType type, const void *samples, gsize n, gsize is,
                                float *out, gsize os);

/* ---- writer (io-tiff-write.c) ------------------------------------------- */

/* Fills `rows` rows from y0 of slice z, row after row, in file format.
 * Called from the encoding threads, for different strips at once. */
typedef void (*SvFillRows) (guint z, guint y0, guint rows, guint8 *dst, gpointer user_data);

/* One file's layout, codec and source of rows. */
typedef struct
{
  guint nz, ny, nx, nc;
  guint16 bps, format;
  gboolean predictor; /* horizontal differencing */
  SvTiffCompression compression;
  int level;
  int n_threads;
  const double *spacing; /* z, y, x */
  const char *unit;
  SvFillRows fill;
  gpointer user_data;
} SvTiffWriteJob;

/* Copies n labels into a strip's rows (uint32 and int32 share the bit
 * pattern of labels >= 0) and returns whether one was negative: the label
 * writers' check rides on the copy, on the threads that fill strips. */
static inline gboolean
sv__tiff_copy_labels (guint8 *dst, const gint32 *src, gsize n)
{
  gint32 *out = (gint32 *)(void *)dst;
  gint32 any = 0;

  for (gsize i = 0; i < n; i++)
    {
      out[i] = src[i];
      any |= src[i];
    }
  return any < 0;
}

/* A label file's job: nz·ny·nx 32-bit labels (int32 with negative ones,
 * else uint32), no predictor unless `options` asks, `spacing` and `unit`
 * borrowed, rows from `fill`. */
void sv__tiff_label_job_init (SvTiffWriteJob *job, guint nz, guint ny, guint nx, gboolean negative,
                              const SvTiffWriteOptions *options, const double *spacing,
                              const char *unit, SvFillRows fill, gpointer user_data);

/* Whether a file of raw_bytes uncompressed bytes is written as BigTIFF
 * (or SV_TIFF_FORCE_BIGTIFF=1 asks for it). */
gboolean sv__tiff_wants_bigtiff (guint64 raw_bytes);

/* The job's codec fields from `options` (NULL: defaults); auto_predictor is
 * what SV_TIFF_PREDICTOR_AUTO means for this kind of file. */
void sv__tiff_write_job_set_codec (SvTiffWriteJob *job, const SvTiffWriteOptions *options,
                                   gboolean auto_predictor);

/* ---- pages and strips of a written file (io-tiff-pages.c) --------------- */

/* How a page is cut into strips: pages up to 1 MiB are one strip, larger
 * ones strips of about 512 KiB, the last one shorter. Strips are numbered
 * over the whole file, page after page. */
typedef struct
{
  gsize row_bytes;
  guint32 rows_per_strip, strips_per_page;
  gsize strip_bytes; /* of a full strip */
} SvStripGeometry;

void sv__tiff_strip_geometry (const SvTiffWriteJob *job, SvStripGeometry *g);

guint16 sv__tiff_compression_tag (SvTiffCompression compression);

/* Sets page z's tags; `description` (ImageJ's) goes on the first page. */
void sv__tiff_set_page_fields (TIFF *tif, const SvTiffWriteJob *job, guint32 rows_per_strip,
                               guint z, const char *description);

/* Fills strip `strip` from the job's source into `raw` (strip_bytes);
 * returns its bytes and (rows_out may be NULL) its rows. */
gsize sv__tiff_strip_fill (const SvTiffWriteJob *job, const SvStripGeometry *g, guint64 strip,
                           guint8 *raw, guint *rows_out);

/* Fills, predicts and compresses one strip: the bytes that go to the file
 * (`raw` itself or the codec's buffer, valid until the codec's next call)
 * and their count in `len`; NULL when the codec fails. LZW goes through
 * libtiff's own encoder, which makes the bytes libtiff would write. */
const guint8 *sv__tiff_strip_encode (const SvTiffWriteJob *job, const SvStripGeometry *g,
                                     SvTiffCodec *codec, guint64 strip, guint8 *raw, gsize *len);

/* A TIFF written into memory (libtiff's client I/O); bigtiff as "w8". */
typedef struct _SvTiffMemFile SvTiffMemFile;
TIFF *sv__tiff_open_memory (SvTiffMemFile **file, gboolean bigtiff, TIFFOpenOptions *opts);
const guint8 *sv__tiff_memory_bytes (const SvTiffMemFile *file, gsize *size);
void sv__tiff_memory_free (SvTiffMemFile *file);

/* ---- the layout of a written file (io-tiff-layout.c) --------------------- */

/* Where libtiff puts header, strips and directories, and what the
 * directories hold; see io-tiff-layout.c. The four steps of writing a file
 * that several writers share (threads now; MPI ranks or devices later):
 * compress strips → sizes (sv__tiff_strip_encode), sizes → offsets
 * (sv__tiff_layout_place_*), strips written at their offsets
 * (sv__tiff_write_at), directories and header (sv__tiff_layout_directory,
 * sv__tiff_layout_header). */
typedef struct _SvTiffLayout SvTiffLayout;

/* The layout of the job's file; NULL with `problem` when libtiff's own
 * directories for it do not have the expected layout. */
SvTiffLayout *sv__tiff_layout_new (const SvTiffWriteJob *job, gboolean bigtiff, char **problem);
void sv__tiff_layout_free (SvTiffLayout *layout);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvTiffLayout, sv__tiff_layout_free)

gboolean sv__tiff_layout_is_bigtiff (const SvTiffLayout *layout);
/* Bytes of the header: the first strip's offset. */
gsize sv__tiff_layout_header_size (const SvTiffLayout *layout);
/* Bytes of page z's directory with its values. */
gsize sv__tiff_layout_directory_size (const SvTiffLayout *layout, guint z);

/* Offsets from sizes, a running cursor (the end of what is placed, first
 * the header size). A strip goes at the cursor. */
guint64 sv__tiff_layout_place_strip (guint64 *cursor, guint64 size);
/* Page z's directory goes at the next even offset; FALSE when a classic
 * TIFF would pass 4 GiB. */
gboolean sv__tiff_layout_place_directory (const SvTiffLayout *layout, guint z, guint64 *cursor,
                                          guint64 *directory);
/* Both for a whole page: its strips' sizes to their offsets. */
gboolean sv__tiff_layout_place_page (const SvTiffLayout *layout, guint z, const guint64 *sizes,
                                     guint64 *offsets, guint64 *cursor, guint64 *directory);

/* The parity of page z's first strip offset, the same in every file of
 * this layout. A writer of pages [z0, z1) alone (an MPI rank, a device)
 * places them from a cursor of this parity: its extent (end − parity) is
 * all that the writers after it need to know (an exclusive scan), and its
 * offsets move by (true offset of its first strip − parity), an even
 * number, so its directories stay where libtiff puts them. */
guint sv__tiff_layout_strip_parity (const SvTiffLayout *layout, guint z);

/* The header, pointing at the first directory (header_size bytes). */
void sv__tiff_layout_header (const SvTiffLayout *layout, guint64 first_directory, guint8 *out);
/* Page z's directory at `directory` (directory_size bytes), with its
 * strips' offsets and sizes and `next` (the next page's directory, 0 for
 * the last). FALSE when a size does not fit the type libtiff chose. */
gboolean sv__tiff_layout_directory (const SvTiffLayout *layout, guint z, const guint64 *offsets,
                                    const guint64 *sizes, guint64 directory, guint64 next,
                                    guint8 *out);

/* Writes all of `data` at `offset` (pwrite: any thread); FALSE with errno
 * (ENOSPC for a write that made no progress). (io-tiff-strip-writer.c) */
gboolean sv__tiff_write_at (int fd, guint64 offset, const void *data, gsize len, int *saved_errno);

/* ---- writers ------------------------------------------------------------ */

/* Strips compressed and written at their offsets by a pool of the job's
 * threads (io-tiff-strip-writer.c); takes `layout`. The pages come in
 * order; each call returns when its pages are in the file, directories
 * included. */
typedef struct _SvTiffStripWriter SvTiffStripWriter;
SvTiffStripWriter *sv__tiff_strip_writer_new (int fd, const SvTiffWriteJob *job,
                                              SvTiffLayout *layout, char **problem);
gboolean sv__tiff_strip_writer_pages (SvTiffStripWriter *writer, guint z0, guint z1,
                                      char **problem);
/* Pages [z0, z1) from strips compressed elsewhere: `sizes` (strips a
 * page each, in file order) and their bytes one after the other, placed
 * and written from the caller's thread, a page's strips in one write
 * (they lie one after the other in the file too). */
gboolean sv__tiff_strip_writer_put_strips (SvTiffStripWriter *writer, guint z0, guint z1,
                                           const guint64 *sizes, const guint8 *bytes,
                                           char **problem);
/* put_strips in two steps: the pages placed (their offsets and
 * directories, at once), then written from any thread while later pages
 * are placed and written by others. The placed pieces (opaque) point
 * into `bytes`, which must stay until they are written or dropped. */
GArray *sv__tiff_strip_writer_place_strips (SvTiffStripWriter *writer, guint z0, guint z1,
                                            const guint64 *sizes, const guint8 *bytes,
                                            char **problem);
gboolean sv__tiff_strip_writer_write_placed (SvTiffStripWriter *writer, GArray *placed,
                                             char **problem);
void sv__tiff_strip_writer_drop_placed (GArray *placed);
void sv__tiff_strip_writer_free (SvTiffStripWriter *writer);

/* Writeback of a file's pages asked for on a thread of its own every
 * 256 MiB written (io-writeback.c), so that the writer never waits for
 * the disk before its final fsync. Free before the file closes. */
typedef struct _SvWriteback SvWriteback;
SvWriteback *sv__writeback_new (int fd);
void sv__writeback_written (SvWriteback *wb, guint64 bytes);
/* The requests made so far. */
guint sv__writeback_requests (SvWriteback *wb);
void sv__writeback_free (SvWriteback *wb);

/* Pages [z0, z1) through libtiff in order (io-tiff-write-libtiff.c). */
gboolean sv__tiff_write_pages_libtiff (TIFF *tif, const SvTiffWriteJob *job, guint z0, guint z1,
                                       SvTiffMessages *msgs, char **problem);

/* A file on its way to `path`: written under a temporary name beside it,
 * pages in order (all at once or slab after slab: the bytes are the same),
 * renamed at the end. Any failure, and abort, removes the temporary file;
 * each function frees what it holds when it fails or finishes. The strip
 * writer writes it, or libtiff (`tif`) when SV_TIFF_WRITER=libtiff or the
 * layout is not the known one. (io-tiff-write.c) */
typedef struct
{
  char *path;
  char *tmp_path;
  SvTiffMessages msgs;
  TIFFOpenOptions *opts;
  int fd;
  SvTiffStripWriter *strips;
  TIFF *tif;
} SvTiffOutput;

gboolean sv__tiff_output_begin (SvTiffOutput *out, const char *path, const SvTiffWriteJob *job,
                                GError **error);
/* Writes pages [z0, z1); job->fill is called for their rows only. */
gboolean sv__tiff_output_pages (SvTiffOutput *out, const SvTiffWriteJob *job, guint z0, guint z1,
                                GError **error);
/* Pages [z0, z1) from strips compressed elsewhere (the strip writer
 * only): sv__tiff_strip_writer_put_strips. */
gboolean sv__tiff_output_strips (SvTiffOutput *out, guint z0, guint z1, const guint64 *sizes,
                                 const guint8 *bytes, GError **error);
/* The same in two steps (sv__tiff_strip_writer_place_strips), for
 * writers on several threads: a failure leaves the file to
 * sv__tiff_output_abort, once no thread writes any more. */
GArray *sv__tiff_output_place_strips (SvTiffOutput *out, guint z0, guint z1, const guint64 *sizes,
                                      const guint8 *bytes, GError **error);
gboolean sv__tiff_output_write_placed (SvTiffOutput *out, GArray *placed, GError **error);
gboolean sv__tiff_output_finish (SvTiffOutput *out, GError **error);
/* The same without the sync and the rename, which *later is left with
 * (io-file-finish.c). */
gboolean sv__tiff_output_finish_later (SvTiffOutput *out, SvFileFinish **later, GError **error);
/* Takes the fd (open on the written file) and both paths. */
SvFileFinish *sv__file_finish_new (int fd, char *tmp_path, char *path);
void sv__tiff_output_abort (SvTiffOutput *out);

/* ---- metadata (io-tiff-metadata.c) --------------------------------------- */

/* Reads spacing and the slice/channel layout from ImageJ or OME-XML
 * metadata in the current (first) directory; sets r->nz, r->nc, the pages'
 * z and c, and r->note. */
gboolean sv__tiff_read_metadata (SvTiffReader *r, GError **error);

/* The ImageJ description for a stack of nz pages ("ImageJ=...\n"). */
char *sv__imagej_description (guint nz, const double spacing[3], const char *unit);

/* A writer of the same OME-Zarr store's or TIFF's slices from z0 on (for
 * a store, the start of a row of chunks: sv__tiff_label_writer_share_depth),
 * for another thread while `writer` goes on: several devices write their
 * own slices at once. Once finish_share has synced (a store) or written
 * (a TIFF) them, its slices count towards writer's finish. A TIFF's
 * share holds at most `held_bytes` of strips until its turn
 * (sv__tiff_share_new). Each is freed with sv_tiff_label_writer_free,
 * which leaves the file to its writer. */
SvTiffLabelWriter *sv__tiff_label_writer_new_share (SvTiffLabelWriter *writer, guint z0,
                                                    guint64 held_bytes, GError **error);
gboolean sv__tiff_label_writer_finish_share (SvTiffLabelWriter *share, GError **error);
/* The slices of a row of chunks where a share may begin; 1 for a TIFF
 * from the strip writer (its shares take turns: io-tiff-share.c); 0 when
 * there can be no shares. */
guint sv__tiff_label_writer_share_depth (SvTiffLabelWriter *writer);
/* The TIFF's next slices into the file, from the thread whose turn it is
 * (the public appends less the turns). */
gboolean sv__tiff_label_writer_put (SvTiffLabelWriter *w, const gint32 *labels, guint depth,
                                    GError **error);
gboolean sv__tiff_label_writer_put_strips (SvTiffLabelWriter *w, guint depth,
                                           const guint64 *sizes, const guint8 *bytes,
                                           gint64 negative_slice, GError **error);
/* put_strips in two steps (sv__tiff_output_place_strips): a share places
 * its slices in its turn and writes them after it. */
GArray *sv__tiff_label_writer_place_strips (SvTiffLabelWriter *w, guint depth,
                                            const guint64 *sizes, const guint8 *bytes,
                                            gint64 negative_slice, GError **error);
gboolean sv__tiff_label_writer_write_placed (SvTiffLabelWriter *w, GArray *placed,
                                             GError **error);

/* ---- a label TIFF's later slices from other threads (io-tiff-share.c) --- */

/* The writer's place in its file, which its shares wait on. */
typedef struct _SvTiffTurns SvTiffTurns;
SvTiffTurns *sv__tiff_turns_new (void);
void sv__tiff_turns_free (SvTiffTurns *turns);
/* The file now takes slice z_next. */
void sv__tiff_turns_advance (SvTiffTurns *turns, guint z_next);

/* Slices [z0, …) of `owner`'s file, appended by another thread: strips
 * are held (at most `held_bytes`, and an eighth of the memory free) until
 * the slices before z0 are placed in the file, labels wait for that.
 * Freed unfinished, it fails the shares after it. */
typedef struct _SvTiffShare SvTiffShare;
SvTiffShare *sv__tiff_share_new (SvTiffLabelWriter *owner, SvTiffTurns *turns, const char *path,
                                 guint z0, guint strips_per_page, guint64 held_bytes);
gboolean sv__tiff_share_append (SvTiffShare *s, const gint32 *labels, guint depth, GError **error);
gboolean sv__tiff_share_append_strips (SvTiffShare *s, guint depth, const guint64 *sizes,
                                       const guint8 *bytes, gint64 negative_slice, GError **error);
/* Waits for its turn and writes what it holds. */
gboolean sv__tiff_share_finish (SvTiffShare *s, GError **error);
void sv__tiff_share_free (SvTiffShare *s);

G_END_DECLS

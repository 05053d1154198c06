/* Supervox engine: TIFF stacks a z-slab at a time, for volumes larger than
 * memory: a reader of page ranges in the file's sample type and a label
 * writer that appends slabs and finishes with the file the in-memory
 * writer (sv_tiff_write_labels_full) makes of the same labels. */
#pragma once

#include <glib.h>

#include "sv-io.h"
#include "sv-volume.h"

G_BEGIN_DECLS

typedef struct _SvTiffSlabReader SvTiffSlabReader;

/* What a slab reader serves: the volume's shape, sample type and spacing,
 * as sv_tiff_read_volume_full would load them (nc is 1 when one channel was
 * chosen). */
typedef struct
{
  guint nz, ny, nx, nc;
  SvSampleType sample_type;
  double spacing[3]; /* z, y, x; 1 when unknown */
  gboolean spacing_from_file;
  const char *unit; /* owned by the reader; may be NULL */
  const char *note; /* as sv_tiff_read_volume_full's note; may be NULL */
} SvTiffSlabInfo;

/* Opens `path` and checks its pages (no voxel is read). options as for
 * sv_tiff_read_volume_full (NULL: defaults); the same errors. */
SvTiffSlabReader *sv_tiff_slab_reader_open (const char *path, const SvTiffReadOptions *options,
                                            GError **error);
/* Fills slices [z0, z1) of `samples` ((z1 − z0) slice bytes, z-major,
 * channel fastest, in the source's sample type); FALSE with an error
 * that says what went wrong. */
typedef gboolean (*SvSlabReadFunc) (guint z0, guint z1, void *samples, gpointer user_data,
                                    GError **error);

/* A reader whose slabs come from `read` instead of a file: an array the
 * caller holds out of core (a Zarr or Dask array behind the C API). info
 * gives the shape, sample type and calibration (copied; note ignored);
 * `read` is called from one thread at a time, not always the caller's. */
SvTiffSlabReader *sv_tiff_slab_reader_new_for_func (const SvTiffSlabInfo *info, SvSlabReadFunc read,
                                                    gpointer user_data);
void sv_tiff_slab_reader_free (SvTiffSlabReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvTiffSlabReader, sv_tiff_slab_reader_free)

const SvTiffSlabInfo *sv_tiff_slab_reader_info (const SvTiffSlabReader *reader);

/* Bytes of one slice in the file's sample type: ny·nx·nc samples. */
gsize sv_tiff_slab_reader_slice_bytes (const SvTiffSlabReader *reader);

/* Reads slices [z0, z1) into `samples` ((z1 − z0) slice bytes, z-major,
 * channel fastest) in the file's sample type, decoding only their pages.
 * Errors name the file and the page, as the whole-volume reader's do. */
gboolean sv_tiff_slab_reader_read (SvTiffSlabReader *reader, guint z0, guint z1, void *samples,
                                   GError **error);

/* img_as_float of n samples of `type`, exactly as the whole-volume reader
 * converts them. */
void sv_tiff_samples_to_float (SvSampleType type, const void *samples, gsize n, float *out);

/* A mask's bytes from n samples of `type`, as sv_tiff_read_mask makes
 * them: 1 where the sample is nonzero (−0.0 is zero, NaN is not). `out`
 * may be `samples` when the type has one byte. */
void sv_tiff_samples_to_mask (SvSampleType type, const void *samples, gsize n, guint8 *out);

typedef struct _SvTiffLabelWriter SvTiffLabelWriter;

/* Starts a label file of nz·ny·nx labels under a temporary name beside
 * `path`. `negative`: some label will be below 0 (the file is then int32,
 * as the in-memory writer decides from the labels). spacing (z, y, x) and
 * unit (may be NULL) as in SvLabels; options NULL: the defaults. */
SvTiffLabelWriter *sv_tiff_label_writer_new (const char *path, guint nz, guint ny, guint nx,
                                             gboolean negative, const double spacing[3],
                                             const char *unit, const SvTiffWriteOptions *options,
                                             GError **error);

/* Appends the next `depth` slices (depth·ny·nx labels, z-major). A negative
 * label in a file started without `negative` is an error. */
gboolean sv_tiff_label_writer_append (SvTiffLabelWriter *writer, const gint32 *labels, guint depth,
                                      GError **error);

/* Rows a strip when the file takes its strips compressed by whoever holds
 * the labels (deflate of runs, sv-deflate-runs.h: a TIFF whose codec is
 * deflate:runs without a predictor); 0 when it takes labels only. A
 * page's last strip may hold fewer rows. */
guint sv_tiff_label_writer_strip_rows (SvTiffLabelWriter *writer);

/* Appends the next `depth` slices as their strips, compressed: `sizes`
 * (depth · strips a page, in file order) and their bytes one after the
 * other. negative_slice: the first of these slices with a negative label
 * (−1: none), an error in a file started without `negative`. The bytes
 * must be what the file's own encoder makes of those labels; the file is
 * then the same bytes as with sv_tiff_label_writer_append. */
gboolean sv_tiff_label_writer_append_strips (SvTiffLabelWriter *writer, guint depth,
                                             const guint64 *sizes, const guint8 *bytes,
                                             gint64 negative_slice, GError **error);

/* For an OME-Zarr store whose codec is zlib:runs (the deflate of runs
 * along a chunk's rows of chunks[2] labels): TRUE and the chunk shape (z,
 * y, x) in `chunks`, as the store takes its chunks compressed by whoever
 * holds the labels; FALSE otherwise. */
gboolean sv_tiff_label_writer_chunk_shape (SvTiffLabelWriter *writer, guint chunks[3]);

/* Appends the next `depth` slices, whole rows of chunks (depth a multiple
 * of chunks[0], or the rest of the volume), as their chunks compressed:
 * `sizes` (one a chunk, in (z, y, x) order) and their bytes one after the
 * other, each what the store's encoder makes of the chunk (edge chunks
 * full size, 0 outside the volume). negative_slice as in
 * sv_tiff_label_writer_append_strips. The store is then the same files as
 * with sv_tiff_label_writer_append. */
gboolean sv_tiff_label_writer_append_chunks (SvTiffLabelWriter *writer, guint depth,
                                             const guint64 *sizes, const guint8 *bytes,
                                             gint64 negative_slice, GError **error);

/* After all nz slices: flushes, syncs and renames the file to its path. */
gboolean sv_tiff_label_writer_finish (SvTiffLabelWriter *writer, GError **error);

/* A label file written whole, its data not yet synced and the file not yet
 * under its name: whoever holds it completes it (the sync and the rename)
 * or aborts it (the file removed), once. */
typedef struct _SvFileFinish SvFileFinish;

/* FALSE, with the file removed, when the disk refuses. Frees `finish`. */
gboolean sv_file_finish_complete (SvFileFinish *finish, GError **error);
void sv_file_finish_abort (SvFileFinish *finish);

/* As sv_tiff_label_writer_finish, but leaves the sync and the rename to
 * *later; *later is NULL when the writer finished at once (an OME-Zarr
 * store). */
gboolean sv_tiff_label_writer_finish_later (SvTiffLabelWriter *writer, SvFileFinish **later,
                                            GError **error);

/* Frees the writer; an unfinished file is removed. */
void sv_tiff_label_writer_free (SvTiffLabelWriter *writer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvTiffLabelWriter, sv_tiff_label_writer_free)

/* The pages [z0, z1) of a label file that several writers share, one
 * writer each (MPI ranks; io-tiff-part-writer.c): the same options and
 * shape for every writer. Append the slices in order (compressed on all
 * threads and kept, about a tenth of the labels), exchange the extents,
 * then write at the offsets they give. Together the writers make the
 * bytes sv_tiff_label_writer_* make. */
typedef struct _SvTiffPartWriter SvTiffPartWriter;

SvTiffPartWriter *sv_tiff_part_writer_new (guint nz, guint ny, guint nx, gboolean negative,
                                           const double spacing[3], const char *unit,
                                           const SvTiffWriteOptions *options, guint z0, guint z1,
                                           GError **error);
gboolean sv_tiff_part_writer_append (SvTiffPartWriter *w, const gint32 *labels, guint depth,
                                     GError **error);
/* After the last append: where this writer's offsets were placed from,
 * how far they reach from there, and its first directory from there. The
 * writers in z order: the first's origin is where the file's pages begin,
 * each next one's pages begin where the one before ends (begin + extent). */
void sv_tiff_part_writer_extent (const SvTiffPartWriter *w, guint64 *origin, guint64 *extent,
                                 guint64 *first_directory);
/* Writes the strips and directories into `fd` with the pages beginning
 * at `begin`; the last page's directory links to next_directory (the next
 * writer's first, or 0). The writer of slice 0 writes the header too. */
gboolean sv_tiff_part_writer_write (SvTiffPartWriter *w, int fd, guint64 begin,
                                    guint64 next_directory, GError **error);
void sv_tiff_part_writer_free (SvTiffPartWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvTiffPartWriter, sv_tiff_part_writer_free)

G_END_DECLS

/* Supervox engine: what the Zarr reader, codecs and writer share. */
#pragma once

#include <glib.h>

#include "supervox/sv-io-zarr.h"
#include "supervox/sv-io.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

/* The axes an array may have, in the order NGFF 0.4 allows them. */
enum
{
  SV_ZARR_T,
  SV_ZARR_C,
  SV_ZARR_Z,
  SV_ZARR_Y,
  SV_ZARR_X,
  SV_ZARR_N_AXES
};

/* One Zarr v2 array, its axes mapped onto t, c, z, y, x: an axis the
 * array lacks has size 1 and chunk 1, which keeps C order's layout. */
typedef struct
{
  char *folder;     /* the array's folder */
  char *name;       /* the store as the user named it, for messages */
  guint64 shape[SV_ZARR_N_AXES];
  guint chunks[SV_ZARR_N_AXES];
  gboolean present[SV_ZARR_N_AXES]; /* the array has this axis (its chunk keys name it) */
  SvSampleType type;
  guint item_bytes;
  gboolean swap; /* big-endian samples */
  SvZarrCompressor compressor;
  guint8 fill[8]; /* fill_value as one sample of `type`, native byte order */
  char separator; /* '.' or '/' between chunk indices */
  double spacing[3]; /* z, y, x */
  gboolean spacing_from_file;
  char *unit; /* as the TIFF reader names it ("µm"); may be NULL */
} SvZarrArray;

/* Opens the array of an OME-Zarr image (level 0), of one of its levels'
 * folders (with the image's axes and that level's scale) or a plain
 * array. Errors name the store and say what is wrong in it. */
SvZarrArray *sv__zarr_array_open (const char *path, GError **error);
void sv__zarr_array_free (SvZarrArray *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvZarrArray, sv__zarr_array_free)

/* The file of the chunk at chunk indices idx (t, c, z, y, x). */
char *sv__zarr_chunk_path (const SvZarrArray *a, const guint64 idx[SV_ZARR_N_AXES]);

/* Decodes one chunk into exactly out_size bytes. FALSE with a few words
 * on why ("zstd: corrupted block", "12 bytes, not 4096") in *why
 * (static or owned by the caller: free with g_free). */
gboolean sv__zarr_chunk_decode (SvZarrCompressor compressor, const guint8 *in, gsize in_size,
                                guint8 *out, gsize out_size, char **why);

/* What the workers of a row of chunks share: the first error, which ends
 * the row for every worker. */
typedef struct
{
  gint failed;
  GMutex lock;
  GError *error;
} SvZarrRowOutcome;

/* A worker's error (taken); the others stop at their next chunk. */
void sv__zarr_row_fail (SvZarrRowOutcome *outcome, GError *error);

/* A worker's chunk encoder for these options: its codec's state and an
 * output buffer for chunks of at most chunk_bytes (rows of row_bytes, for
 * the runs of zlib:runs), kept from chunk to chunk; NULL without memory
 * for them. */
typedef struct _SvZarrEncoder SvZarrEncoder;
SvZarrEncoder *sv__zarr_encoder_new (const SvZarrWriteOptions *options, gsize chunk_bytes,
                                     gsize row_bytes);
void sv__zarr_encoder_free (SvZarrEncoder *encoder);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvZarrEncoder, sv__zarr_encoder_free)
/* Encodes `size` bytes of samples of item_bytes: the bytes (the encoder's,
 * or `in` itself without a codec, valid until the next call) and their
 * number in *out_size, or NULL with *why (g_free) saying what failed:
 * memory, most likely. */
const guint8 *sv__zarr_encoder_run (SvZarrEncoder *encoder, guint item_bytes, const guint8 *in,
                                    gsize size, gsize *out_size, char **why);

/* The "compressor" object of .zarray for these options (json-glib's
 * JsonNode; NULL node content for none). */
struct _JsonNode *sv__zarr_compressor_json (const SvZarrWriteOptions *options);

/* Reads slices [z0, z1) of channel `channel` (−1: every channel) into
 * samples (z-major, channel fastest, native byte order), decoding chunks
 * on n_threads threads. A missing chunk is fill_value. */
gboolean sv__zarr_array_read (const SvZarrArray *a, int channel, guint z0, guint z1, void *samples,
                              int n_threads, GError **error);

/* A slab reader's Zarr side: slices [z0, z1) of one channel (−1: every
 * channel) as sv__zarr_array_read gives them. One thread at a time. */
typedef struct _SvZarrSlabs SvZarrSlabs;
SvZarrSlabs *sv__zarr_slabs_open (const char *path, int channel, int n_threads, GError **error);
const SvZarrArray *sv__zarr_slabs_array (const SvZarrSlabs *s);
gboolean sv__zarr_slabs_read (SvZarrSlabs *s, guint z0, guint z1, void *samples, GError **error);
void sv__zarr_slabs_free (SvZarrSlabs *s);

/* sv_tiff_read_volume_full for a Zarr folder. */
SvVolume *sv__zarr_read_volume (const char *path, const SvTiffReadOptions *options,
                                GError **error);

/* The unit NGFF names with UDUNITS ("micrometer") as the TIFF reader
 * names it ("µm"), and back; NULL when there is no match. */
const char *sv__zarr_unit_from_ngff (const char *ngff);
const char *sv__zarr_unit_to_ngff (const char *unit);

typedef struct _SvZarrLabelWriter SvZarrLabelWriter;

/* The label writer's three steps for a store (sv-io-slab.h). */
SvZarrLabelWriter *sv__zarr_label_writer_new (const char *path, guint nz, guint ny, guint nx,
                                              gboolean negative, const double spacing[3],
                                              const char *unit, const SvTiffWriteOptions *options,
                                              GError **error);
gboolean sv__zarr_label_writer_append (SvZarrLabelWriter *w, const gint32 *labels, guint depth,
                                       GError **error);
gboolean sv__zarr_label_writer_finish (SvZarrLabelWriter *w, GError **error);
/* The chunk shape when the store's chunks may come compressed by whoever
 * holds the labels (zlib:runs), and such rows of chunks
 * (sv_tiff_label_writer_append_chunks; io-zarr-write-row.c). */
gboolean sv__zarr_label_writer_chunk_shape (const SvZarrLabelWriter *w, guint chunks[3]);
gboolean sv__zarr_label_writer_append_chunks (SvZarrLabelWriter *w, guint depth,
                                              const guint64 *sizes, const guint8 *bytes,
                                              gint64 negative_slice, GError **error);

void sv__zarr_label_writer_free (SvZarrLabelWriter *w);

/* Several writers of one store (MPI ranks, stream-rank-zarr.c): the first
 * starts it (sv__zarr_label_writer_new) and names its folder (the store
 * while it is written); each other writes chunk rows from slice z0 on, the
 * start of a row, into that folder (no metadata; the folder stays when it
 * is freed) and syncs them (finish_part); once all are done the first
 * puts the store in place (finish_store, whatever rows it wrote itself).
 * chunk_depth: the slices of a chunk row any writer of that shape uses. */
guint sv__zarr_label_chunk_depth (guint nz, guint ny, guint nx, const SvTiffWriteOptions *options);
const char *sv__zarr_label_writer_folder (const SvZarrLabelWriter *w);
SvZarrLabelWriter *sv__zarr_label_writer_new_part (const char *path, const char *folder, guint nz,
                                                   guint ny, guint nx, gboolean negative,
                                                   const SvTiffWriteOptions *options, guint z0,
                                                   GError **error);
gboolean sv__zarr_label_writer_finish_part (SvZarrLabelWriter *w, GError **error);
/* A part of `owner`'s store in this process, from z0 (the start of a row)
 * on, for another thread while `owner` goes on: once its finish_part
 * synced them, its slices count towards owner's finish, which then wants
 * its own rows and its shares' to make the volume. */
SvZarrLabelWriter *sv__zarr_label_writer_new_share (SvZarrLabelWriter *owner, guint z0,
                                                    GError **error);
/* The slices of the writer's rows of chunks. */
guint sv__zarr_label_writer_row_depth (const SvZarrLabelWriter *w);
gboolean sv__zarr_label_writer_finish_store (SvZarrLabelWriter *w, GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvZarrLabelWriter, sv__zarr_label_writer_free)

/* sv_tiff_write_labels_full when options->zarr is set: the slab writer
 * fed the whole volume as one slab. */
gboolean sv__tiff_write_labels_zarr (const char *path, const SvLabels *labels, gboolean negative,
                                     const SvTiffWriteOptions *options, GError **error);

G_END_DECLS

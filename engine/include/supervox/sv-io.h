/* Supervox engine: TIFF input and output through libtiff.
 *
 * Strips and tiles are read with pread and decoded (deflate, zstd,
 * horizontal and floating-point predictors) on worker threads; other codecs
 * (LZW, PackBits, JPEG, ...) are read through libtiff's own. Written strips
 * are encoded (LZW by libtiff's encoder) and written at their offsets on
 * worker threads, byte for byte as libtiff lays out the file. */
#pragma once

#include <glib.h>

#include "sv-volume.h"

G_BEGIN_DECLS

/* What a file holds, read from its header without loading the voxels
 * (value range excepted, see sv_tiff_info). */
typedef struct
{
  guint nz, ny, nx, nc;
  SvSampleType sample_type;
  gboolean bigtiff;
  gboolean tiled;
  char *compression; /* "none", "deflate", "lzw", ... owned */
  double spacing[3]; /* z, y, x; 1 when unknown */
  gboolean spacing_from_file;
  char *unit;                  /* owned, may be NULL */
  double value_min, value_max; /* raw sample values, over all voxels */
  char *note;                  /* how an ambiguous header was read; owned, usually NULL */
} SvTiffInfo;

void sv_tiff_info_clear (SvTiffInfo *info);

/* Reads header, spacing and value range of `path`. */
gboolean sv_tiff_info (const char *path, SvTiffInfo *info, GError **error);

/* How to read a volume. */
typedef struct
{
  int channel;   /* -1: every channel; else keep only this one (counted from 0) */
  int n_threads; /* decoding threads; <= 0: all processors */
} SvTiffReadOptions;

/* Every channel, all processors. */
void sv_tiff_read_options_init_defaults (SvTiffReadOptions *options);

/* Reads a multi-page TIFF (one page per z) as float32 after img_as_float.
 * 8/16/32-bit signed/unsigned, float32/64, 1 or 3 samples (contiguous or
 * planar), strips or tiles, any compression libtiff decodes, BigTIFF.
 * ImageJ hyperstacks with channels in pages (channels=C, C fastest) become
 * volumes of C channels. Spacing comes from ImageJ metadata (spacing=,
 * unit=, X/Y resolution) or OME-XML PhysicalSize{X,Y,Z}. Errors
 * (SV_ENGINE_ERROR_IO / _FORMAT) name the file and the problem; nothing is
 * allocated from a size the file cannot back. Same as
 * sv_tiff_read_volume_full with the default options and no note. */
SvVolume *sv_tiff_read_volume (const char *path, GError **error);

/* sv_tiff_read_volume with options (NULL: defaults). A channel that the
 * file does not have is SV_ENGINE_ERROR_INVALID_PARAM. `note` (may be NULL)
 * receives a sentence for the user when the file's header was ambiguous and
 * had to be interpreted (owned by the caller; NULL when there is none). */
SvVolume *sv_tiff_read_volume_full (const char *path, const SvTiffReadOptions *options, char **note,
                                    GError **error);

/* Reads an integer label or mask TIFF (one sample per pixel) into gint32.
 * Float files or values outside gint32 are an error. */
SvLabels *sv_tiff_read_labels (const char *path, GError **error);

/* Reads a mask: any one-sample TIFF, nonzero = inside. Returns nz*ny*nx
 * bytes (0 or 1) and the shape through the out arguments. */
guint8 *sv_tiff_read_mask (const char *path, guint *nz, guint *ny, guint *nx, GError **error);

/* Codecs the writers use. */
typedef enum
{
  SV_TIFF_COMPRESSION_NONE,
  SV_TIFF_COMPRESSION_DEFLATE, /* zlib stream, TIFF's Adobe deflate (8) */
  SV_TIFF_COMPRESSION_ZSTD,    /* one zstd frame per strip (50000) */
  SV_TIFF_COMPRESSION_LZW,     /* libtiff's encoder, on every thread */
  /* "deflate:runs": a zlib stream like DEFLATE's (every reader decodes
   * it) made of runs along x and repeats of the row above; for labels,
   * several times faster than level 6 and about a third larger. */
  SV_TIFF_COMPRESSION_DEFLATE_RUNS,
} SvTiffCompression;

typedef enum
{
  SV_TIFF_PREDICTOR_AUTO, /* horizontal for 8/16-bit integers, else none */
  SV_TIFF_PREDICTOR_NONE,
  SV_TIFF_PREDICTOR_HORIZONTAL, /* TIFF predictor 2; integer samples only */
} SvTiffPredictor;

typedef struct
{
  SvTiffCompression compression;
  int level; /* deflate 1–12, zstd 1–22; 0: the codec's default */
  SvTiffPredictor predictor;
  int n_threads; /* encoding threads; <= 0: all processors */
  /* Not NULL: the label writers write an OME-Zarr store with these
   * options (sv-io-zarr.h) instead of a TIFF; borrowed. */
  const struct _SvZarrWriteOptions *zarr;
} SvTiffWriteOptions;

/* The default codec of label files: deflate of runs ("deflate:runs"),
 * predictor AUTO, all processors. */
void sv_tiff_write_options_init_defaults (SvTiffWriteOptions *options);

/* Parses "none", "deflate", "zstd" or "lzw", each but none and lzw with an
 * optional ":LEVEL" ("zstd:3"), and "deflate:runs", into
 * options->compression and ->level; other fields are left alone. Errors
 * (SV_ENGINE_ERROR_INVALID_PARAM) name the accepted values. */
gboolean sv_tiff_write_options_parse (SvTiffWriteOptions *options, const char *text,
                                      GError **error);

/* "deflate:1", "zstd:3", "lzw", "none": what sv_tiff_write_options_parse
 * reads back, with the level the writer uses. Free with g_free. */
char *sv_tiff_write_options_to_string (const SvTiffWriteOptions *options);

/* Writes labels as uint32 (int32 when any label is negative), one page per
 * z, BigTIFF above 4 GiB, with ImageJ spacing metadata. Written to a
 * temporary name beside `path` and renamed on success: a failure leaves no
 * partial file. `options` NULL: the defaults; AUTO means no predictor here,
 * because ImageJ undoes it wrongly on 32-bit integers. */
gboolean sv_tiff_write_labels_full (const char *path, const SvLabels *labels,
                                    const SvTiffWriteOptions *options, GError **error);

/* sv_tiff_write_labels_full with the default options. */
gboolean sv_tiff_write_labels (const char *path, const SvLabels *labels, GError **error);

/* Writes a volume's float data as `as` (SV_SAMPLE_F32, _U8 or _U16; integer
 * types scale [0,1] to the full range), same conventions as above. */
gboolean sv_tiff_write_volume_full (const char *path, const SvVolume *volume, SvSampleType as,
                                    const SvTiffWriteOptions *options, GError **error);

/* sv_tiff_write_volume_full with the default options. */
gboolean sv_tiff_write_volume (const char *path, const SvVolume *volume, SvSampleType as,
                               GError **error);

G_END_DECLS

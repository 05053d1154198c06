/* Supervox engine: OME-Zarr images (NGFF 0.4 on Zarr v2) and plain Zarr
 * v2 arrays, in and out.
 *
 * A Zarr store is a folder, so the TIFF readers' entry points take it too:
 * sv_tiff_read_volume_full and sv_tiff_slab_reader_open hand a folder to
 * the Zarr reader, and everything that reads slabs (the streamed run, the
 * slice cache) reads chunks. The label writers write a store instead of a
 * TIFF when SvTiffWriteOptions.zarr is set. The container (.zgroup,
 * .zarray, .zattrs) is JSON read and written with json-glib; chunks go
 * through blosc, zstd, or zlib and gzip (libdeflate), or raw. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A chunk codec, as Zarr v2's "compressor" names it. */
typedef enum
{
  SV_ZARR_COMPRESSOR_NONE,
  SV_ZARR_COMPRESSOR_ZLIB,
  SV_ZARR_COMPRESSOR_GZIP,
  SV_ZARR_COMPRESSOR_ZSTD,
  SV_ZARR_COMPRESSOR_BLOSC,
} SvZarrCompressor;

/* How the label writers write a store. */
typedef struct _SvZarrWriteOptions
{
  SvZarrCompressor compressor;
  int level;            /* zlib/gzip 1–9, zstd 1–22, blosc 1–9; 0: the codec's default */
  /* zlib only: deflate of runs, the label TIFF's codec (runs of labels
   * equal to the left or to the row above, found without a search), at
   * the TIFF writer's pace; the chunks are plain zlib streams. */
  gboolean runs;
  char blosc_cname[8];  /* blosc's inner codec: "zstd", "lz4", "lz4hc", "zlib", "blosclz" */
  /* blosc's filter: 0 none, 1 byte shuffle, 2 bit shuffle; −1 the inner
   * codec's default (none for zstd, byte shuffle for the others). */
  int blosc_shuffle;
  guint chunks[3];      /* z, y, x; 0: 64, and fewer slices when a row of chunks is large */
  /* FALSE: `path` is a new OME-Zarr image holding the labels. TRUE: `path`
   * is IMAGE.zarr/labels/NAME, a label image of the OME-Zarr image
   * IMAGE.zarr ("image-label" metadata, NAME added to labels/.zattrs). */
  gboolean image_label;
} SvZarrWriteOptions;

/* blosc with zstd inside, level 1, no shuffle: every Zarr reader
 * (zarr-python, Fiji's n5-zarr, neuroglancer, napari) decodes it. On
 * label volumes it encodes four to five times faster than level 5 with
 * byte shuffle, the default before, for files about as large (zstd finds
 * the repeats of whole 4-byte labels better than those of shuffled bytes),
 * and smaller than the TIFF writer's default. */
void sv_zarr_write_options_init_defaults (SvZarrWriteOptions *options);

/* Parses "none", "zlib[:L|:runs]" (or "deflate[…]"), "gzip[:L]", "zstd[:L]" or
 * "blosc[:CNAME][:L][:SHUFFLE]" ("blosc:lz4:5", "blosc:zstd:3:shuffle"),
 * SHUFFLE one of noshuffle, shuffle, bitshuffle. Other fields are left
 * alone. Errors (SV_ENGINE_ERROR_INVALID_PARAM) name the accepted values. */
gboolean sv_zarr_write_options_parse (SvZarrWriteOptions *options, const char *text,
                                      GError **error);

/* What sv_zarr_write_options_parse reads back, with the level the writer
 * uses and blosc's filter where it is not the inner codec's default
 * ("zstd:3", "zlib:runs", "blosc:zstd:1", "blosc:lz4:5:noshuffle", "none"). Free with
 * g_free. */
char *sv_zarr_write_options_to_string (const SvZarrWriteOptions *options);

/* TRUE when `path` is a folder holding a Zarr v2 array or group (.zarray,
 * .zgroup or .zattrs). */
gboolean sv_zarr_is_store (const char *path);

/* TRUE when `path` is an OME-Zarr image: a group with NGFF multiscales. */
gboolean sv_zarr_is_ome_image (const char *path);

/* The folder of resolution level `level` (0: the finest) of the OME-Zarr
 * image at `path`, e.g. "cells.zarr/1" (free with g_free). Opening that
 * folder reads the level's array with the image's axes and that level's
 * scale. A level the image does not have is SV_ENGINE_ERROR_INVALID_PARAM;
 * a plain array is SV_ENGINE_ERROR_FORMAT unless level is 0 (it is then
 * `path` itself). */
char *sv_zarr_level_path (const char *path, guint level, GError **error);

/* One resolution level of an OME-Zarr image, as its array and the
 * image's multiscales describe it. */
typedef struct
{
  guint level;       /* 0: the finest */
  char *path;        /* the level's folder, as sv_zarr_level_path gives it */
  guint shape[3];    /* z, y, x */
  guint channels;    /* the c axis's length; 1 without one */
  double spacing[3]; /* z, y, x: the level's scale times the image's; 1 without one */
  char *unit;        /* as the TIFF reader names it ("µm"); NULL: none */
  /* The store gives a scale for this level. */
  gboolean spacing_from_file;
} SvZarrLevel;

void sv_zarr_level_free (SvZarrLevel *level);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvZarrLevel, sv_zarr_level_free)

/* Every resolution level of the OME-Zarr image at `path`, finest first:
 * a GPtrArray of SvZarrLevel (g_ptr_array_unref frees them). Reads each
 * level's .zarray and the image's .zattrs, no chunk. A plain array, or
 * a level that cannot be opened, fails as opening it would
 * (SV_ENGINE_ERROR_FORMAT, _IO). */
GPtrArray *sv_zarr_list_levels (const char *path, GError **error);

G_END_DECLS

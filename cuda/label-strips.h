/* Supervox CUDA backend: the label file's strips compressed on the device
 * that holds the labels (deflate of runs, sv-deflate-runs.h), the same
 * bytes as the host's encoder. C++ for nvcc only. */
#pragma once

#include <cuda_runtime.h>
#include <glib.h>
#include <stdint.h>

#include "backend-cuda-private.h"

/* Buffers kept from slab to slab, on the device and the host. */
typedef struct _SvCudaStripEncoder SvCudaStripEncoder;

SvCudaStripEncoder *sv__cuda_strip_encoder_new (SvCudaBackend *owner);
void sv__cuda_strip_encoder_free (SvCudaStripEncoder *encoder);

/* Compresses the `depth` slices of ny·nx labels at d_labels (device
 * memory of the encoder's device) into strips of `rows` rows, each page's
 * last one shorter: their sizes into `sizes` (depth · strips a page, in
 * file order) and their bytes one after the other into `out` (host
 * memory of `capacity` bytes); *n_bytes their total; *negative_slice the
 * first slice with a negative label, counted from z_first (−1: none).
 * Returns 1 when done, 0 when the device has no memory for it or `out` no
 * room (the caller sends labels instead), −1 with `error` set. */
int sv__cuda_strip_encode (SvCudaStripEncoder *encoder, const int32_t *d_labels, guint depth,
                           guint ny, guint nx, guint rows, guint z_first, cudaStream_t stream,
                           guint64 *sizes, guint8 *out, gsize capacity, gsize *n_bytes,
                           gint64 *negative_slice, GError **error);

/* Compresses slices [0, depth) of ny·nx labels at d_labels as an OME-Zarr
 * store's chunks of chunks[0] × chunks[1] × chunks[2] (z, y, x) labels:
 * ceil(depth / chunks[0]) rows of them, edge chunks full size with 0
 * outside the slices, each one strip of the deflate of runs over its rows
 * of chunks[2] labels (the store's zlib:runs, io-zarr-write-row.c). Sizes
 * a chunk in (z, y, x) order; *negative_chunk the first chunk with a
 * negative label (−1: none). Returns as sv__cuda_strip_encode. */
static inline gsize
sv__cuda_chunk_count (guint depth, guint ny, guint nx, const guint chunks[3])
{
  return (gsize)((depth + chunks[0] - 1) / chunks[0]) * ((ny + chunks[1] - 1) / chunks[1])
         * ((nx + chunks[2] - 1) / chunks[2]);
}
int sv__cuda_chunk_encode (SvCudaStripEncoder *encoder, const int32_t *d_labels, guint depth,
                           guint ny, guint nx, const guint chunks[3], cudaStream_t stream,
                           guint64 *sizes, guint8 *out, gsize capacity, gsize *n_bytes,
                           gint64 *negative_chunk, GError **error);

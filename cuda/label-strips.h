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
 * last one shorter. On success *sizes and *bytes hold the strips in file
 * order (the encoder's, valid until its next call) and *negative_slice
 * the first slice with a negative label, counted from z_first (−1: none).
 * Returns 1 when done, 0 when the device has no memory for it (nothing
 * is set; the caller sends labels instead), −1 with `error` set. */
int sv__cuda_strip_encode (SvCudaStripEncoder *encoder, const int32_t *d_labels, guint depth,
                           guint ny, guint nx, guint rows, guint z_first, cudaStream_t stream,
                           const guint64 **sizes, const guint8 **bytes, gint64 *negative_slice,
                           GError **error);

/* Supervox CUDA backend: kernels for arrays the caller holds in device
 * memory (internal, C++). Launchers enqueue on `stream` and return the
 * launch status. */
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "supervox/supervox.h"

/* image (z, y, x, c; any dtype and strides) → out, n·nc float32, c fastest,
 * scaled as img_as_float (engine/api-array.c's element_to_float). */
cudaError_t sv_cuda_gather_volume (const SupervoxArray *image, float *out, cudaStream_t stream);

/* mask (z, y, x, 1) → out, n bytes, 1 where any byte of the element is
 * nonzero. */
cudaError_t sv_cuda_gather_mask (const SupervoxArray *mask, uint8_t *out, cudaStream_t stream);

/* n int32 labels → dst as int64 (wide) or int32, contiguous. */
cudaError_t sv_cuda_store_labels (const int32_t *labels, long long n, void *dst, int wide,
                                  cudaStream_t stream);

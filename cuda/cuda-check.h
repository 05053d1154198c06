/* Supervox CUDA backend: the one family of CUDA error macros.
 *
 * - SV_CUDA_CHECK: glue code that reports a GError. It sets `error` (a
 *   GError ** in scope) from cudaGetErrorString and jumps to the
 *   function's `out:` label, where everything allocated so far is
 *   released. Kernel launches are followed by
 *   SV_CUDA_CHECK (cudaGetLastError ()).
 * - SV_CUDA_TRY: device-side steps that return a cudaError_t (the
 *   connectivity's stages). It keeps the error in `err` (a cudaError_t in
 *   scope) and jumps to `out:`.
 * - SV_CUDA_TRY_RETURN: the same for a step with nothing to release: it
 *   returns the error at once.
 * A cudaError_t becomes a GError once, where the glue code calls such a
 * step (SV_CUDA_CHECK). */
#pragma once

#include <cuda_runtime.h>
#include <glib.h>

#include "supervox/sv-error.h"

/* Sets `error` for a failed CUDA call: out-of-memory becomes
 * SV_ENGINE_ERROR_NO_MEMORY, everything else SV_ENGINE_ERROR_BACKEND. The
 * message names the step and CUDA's own description. */
static inline void
sv_cuda_set_error (GError **error, cudaError_t err, const char *what)
{
  g_set_error (error, SV_ENGINE_ERROR,
               err == cudaErrorMemoryAllocation ? SV_ENGINE_ERROR_NO_MEMORY
                                                : SV_ENGINE_ERROR_BACKEND,
               "CUDA error in %s: %s", what, cudaGetErrorString (err));
}

/* Frees device memory and clears the pointer, like g_clear_pointer. */
template <typename T>
static inline void
sv_cuda_clear (T **pointer)
{
  cudaFree (*pointer);
  *pointer = NULL;
}

#define SV_CUDA_CHECK(call)                                                                        \
  do                                                                                               \
    {                                                                                              \
      cudaError_t sv__err = (call);                                                                \
      if (sv__err != cudaSuccess)                                                                  \
        {                                                                                          \
          sv_cuda_set_error (error, sv__err, #call);                                               \
          goto out;                                                                                \
        }                                                                                          \
    }                                                                                              \
  while (0)

/* Fails with SV_ENGINE_ERROR_NO_MEMORY ("… needs X MiB of GPU memory, Y MiB
 * free") when `bytes` more would not fit on the device next to a small
 * reserve; `what` names the consumer. */
gboolean sv__cuda_check_free (size_t bytes, const char *what, GError **error);

#define SV_CUDA_TRY(call)                                                                          \
  do                                                                                               \
    {                                                                                              \
      err = (call);                                                                                \
      if (err != cudaSuccess)                                                                      \
        goto out;                                                                                  \
    }                                                                                              \
  while (0)

#define SV_CUDA_TRY_RETURN(call)                                                                   \
  do                                                                                               \
    {                                                                                              \
      cudaError_t sv__err = (call);                                                                \
      if (sv__err != cudaSuccess)                                                                  \
        return sv__err;                                                                            \
    }                                                                                              \
  while (0)

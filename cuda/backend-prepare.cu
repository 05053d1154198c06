/* Supervox CUDA backend: the prepare stage. Rescale and smoothing run on
 * the device with the CPU reference's taps; 2D colour images that need Lab
 * run the CPU's sv_prepare on the host and upload the result. */
#define G_LOG_DOMAIN "sv-cuda"

#include <string.h>

#include "backend-cuda-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-run-plan.h"

/* Taps 0 … radius of the CPU's symmetric kernel (engine/slic/gaussian.c), so
 * that both backends smooth with identical weights. */
static double *
gaussian_taps (float sigma, int *radius_out)
{
  double *w = sv_gaussian_kernel (sigma, radius_out);
  double *taps = g_new (double, *radius_out + 1);

  memcpy (taps, w + *radius_out, (*radius_out + 1) * sizeof (double));
  g_free (w);
  return taps;
}

/* The CPU's message for non-finite input (engine/slic/prepare.c). */
static void
set_non_finite_error (SvCudaBackend *self, const SvCudaScan *scan, GError **error)
{
  sv_set_non_finite_error (error, (gsize)scan->n_nan, (gsize)scan->n_inf,
                           (gsize)scan->first_bad, self->ny, self->nx);
}

/* Rescale and smoothing on the device, from d_raw into d_image. */
static gboolean
prepare_on_device (SvCudaBackend *self, const SvSlicParams *params, SvPrepared **out_prepared,
                   GError **error)
{
  SvCudaScan scan;
  float sigma[3];
  float shift = 0.0f, scale = 1.0f;
  int divide = 0;
  long long n = (long long)self->n;
  int nc = (int)self->nc;
  int dims[3] = { (int)self->nz, (int)self->ny, (int)self->nx };
  float *d_tmp = NULL;
  double *d_taps = NULL;
  double *taps = NULL;
  unsigned int max_bits = 0;
  float max_abs = 0.0f;
  gsize values = self->n * self->nc;
  SvPrepared *prepared = NULL;
  gboolean ok = FALSE;

  if (values > 0)
    SV_CUDA_CHECK (cudaMemcpyAsync (self->d_image, self->d_raw, values * sizeof (float),
                                    cudaMemcpyDeviceToDevice, self->stream));
  SV_CUDA_CHECK (
      sv_cuda_rescale_scan (self->d_image, n, nc, self->d_mask, self->d_scan, self->stream));
  SV_CUDA_CHECK (
      cudaMemcpyAsync (&scan, self->d_scan, sizeof scan, cudaMemcpyDeviceToHost, self->stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  if (values > 0 && scan.n_nan + scan.n_inf > 0)
    {
      set_non_finite_error (self, &scan, error);
      goto out;
    }
  if (scan.any_in)
    {
      float lo = sv_cuda_key_to_float (scan.min_key), hi = sv_cuda_key_to_float (scan.max_key);
      shift = lo;
      /* max(v − min) is (max − min) rounded once: float rounding is monotonic. */
      scale = hi - lo;
      divide = scale != 0.0f;
    }
  SV_CUDA_CHECK (sv_cuda_rescale_apply (self->d_image, n, nc, self->d_mask, shift, scale, divide,
                                        self->stream));

  sv_slic_params_effective_sigma (params, sigma);
  for (int axis = 0; axis < 3 && values > 0; axis++)
    {
      int radius = 0;
      float *swap = NULL;
      /* scipy skips axes with sigma <= 1e-15 (compared in double). */
      if (!((double)sigma[axis] > 1e-15))
        continue;
      if (d_tmp == NULL)
        {
          if (!sv__cuda_check_free (values * sizeof (float), "smoothing", error))
            goto out;
          SV_CUDA_CHECK (cudaMalloc (&d_tmp, values * sizeof (float)));
        }
      g_clear_pointer (&taps, g_free);
      taps = gaussian_taps (sigma[axis], &radius);
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
      cudaFree (d_taps);
      d_taps = NULL;
      SV_CUDA_CHECK (cudaMalloc (&d_taps, (radius + 1) * sizeof (double)));
      SV_CUDA_CHECK (cudaMemcpyAsync (d_taps, taps, (radius + 1) * sizeof (double),
                                      cudaMemcpyHostToDevice, self->stream));
      SV_CUDA_CHECK (sv_cuda_gaussian_axis (self->d_image, d_tmp, dims, nc, axis, d_taps, radius,
                                            self->stream));
      swap = self->d_image;
      self->d_image = d_tmp;
      d_tmp = swap;
    }

  SV_CUDA_CHECK (
      sv_cuda_max_abs (self->d_image, n, nc, self->d_mask, self->d_max_abs, self->stream));
  SV_CUDA_CHECK (cudaMemcpyAsync (&max_bits, self->d_max_abs, sizeof max_bits,
                                  cudaMemcpyDeviceToHost, self->stream));
  SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
  memcpy (&max_abs, &max_bits, sizeof max_abs);

  /* The engine's context only reads the shape and max_abs. */
  prepared = g_new0 (SvPrepared, 1);
  prepared->nz = self->nz;
  prepared->ny = self->ny;
  prepared->nx = self->nx;
  prepared->nc = self->nc;
  prepared->max_abs = max_abs;
  prepared->is_lab = FALSE;
  *out_prepared = prepared;
  ok = TRUE;
out:
  cudaStreamSynchronize (self->stream);
  cudaFree (d_tmp);
  cudaFree (d_taps);
  g_free (taps);
  return ok;
}

/* Runs the prepare stage unless the cached image still holds. Rescale and
 * smoothing run on the device; 2D colour images that need Lab run the CPU
 * reference's sv_prepare on the host (exactly its bits: rgb2lab uses libm's
 * pow) and upload the result. */
gboolean
sv__cuda_ensure_prepared (SvCudaBackend *self, const SvSlicParams *params, int n_threads, gboolean *reused,
                 GError **error)
{
  SvPrepared *prepared = NULL;
  gboolean lab;

  if (self->prepared != NULL && sv_slic_params_same_prepare (&self->prepared_params, params))
    {
      *reused = TRUE;
      return TRUE;
    }
  *reused = FALSE;
  g_clear_pointer (&self->prepared, sv_prepared_free);

  if (!sv_run_lab_applies (params->convert2lab, self->nz, self->nc, &lab, error))
    return FALSE;
  if (!lab)
    {
      if (!prepare_on_device (self, params, &prepared, error))
        return FALSE;
      self->prepared = prepared;
      self->prepared_params = *params;
      return TRUE;
    }

  if (!sv__cuda_ensure_host_volume (self, error))
    return FALSE;
  prepared = sv_prepare (self->volume, self->mask, params, n_threads, error);
  if (prepared == NULL)
    return FALSE;
  if (self->n > 0)
    {
      SV_CUDA_CHECK (cudaMemcpyAsync (self->d_image, prepared->data,
                                      self->n * self->nc * sizeof (float), cudaMemcpyHostToDevice,
                                      self->stream));
      SV_CUDA_CHECK (cudaStreamSynchronize (self->stream));
    }
  g_clear_pointer (&prepared->data, g_free);
  self->prepared = prepared;
  self->prepared_params = *params;
  return TRUE;

out:
  sv_prepared_free (prepared);
  return FALSE;
}

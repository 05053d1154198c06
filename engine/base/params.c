/* Supervox engine: SLIC parameters in scikit-image's vocabulary. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-params.h"

#include <math.h>

#include "supervox/sv-error.h"

void
sv_slic_params_init_defaults (SvSlicParams *params)
{
  g_return_if_fail (params != NULL);

  *params = (SvSlicParams){
    .n_segments = 100,
    .compactness = 10.0,
    .max_num_iter = 10,
    .sigma = { 0.0, 0.0, 0.0 },
    .sigma_per_axis = FALSE,
    .spacing = { 1.0, 1.0, 1.0 },
    .convert2lab = SV_CONVERT2LAB_AUTO,
    .enforce_connectivity = TRUE,
    .min_size_factor = 0.5,
    .max_size_factor = 3.0,
    .slic_zero = FALSE,
    .start_label = 1,
    .connectivity_rule = SV_CONNECTIVITY_RULE_CONNECTED,
  };
}

static const char *const axis_names[3] = { "z", "y", "x" };

static gboolean fail (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
fail (GError **error, const char *format, ...)
{
  va_list args;

  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM, message);
  return FALSE;
}

gboolean
sv_slic_params_validate (const SvSlicParams *params, GError **error)
{
  g_return_val_if_fail (params != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (params->n_segments < 1)
    return fail (error, "n_segments must be at least 1, got %" G_GINT64_FORMAT, params->n_segments);
  /* !(x > 0) also rejects NaN. */
  if (!(params->compactness > 0.0) || isinf (params->compactness))
    return fail (error, "compactness must be > 0 and finite, got %g", params->compactness);
  if (params->max_num_iter < 0)
    return fail (error, "max_num_iter must be >= 0, got %d", params->max_num_iter);

  for (int a = 0; a < 3; a++)
    if (!(params->spacing[a] > 0.0) || isinf (params->spacing[a]))
      return fail (error, "spacing must be > 0 on every axis, got %g on %s", params->spacing[a],
                   axis_names[a]);

  for (int a = 0; a < (params->sigma_per_axis ? 3 : 1); a++)
    if (!(params->sigma[a] >= 0.0) || isinf (params->sigma[a]))
      {
        if (params->sigma_per_axis)
          return fail (error, "sigma must be >= 0, got %g on %s", params->sigma[a], axis_names[a]);
        return fail (error, "sigma must be >= 0, got %g", params->sigma[a]);
      }

  if (params->convert2lab != SV_CONVERT2LAB_AUTO && params->convert2lab != SV_CONVERT2LAB_YES
      && params->convert2lab != SV_CONVERT2LAB_NO)
    return fail (error, "convert2lab must be auto, yes or no");

  /* scikit-image does not require min_size_factor < max_size_factor; only
   * values that make no sense as a size are refused. */
  if (!(params->min_size_factor >= 0.0) || isinf (params->min_size_factor))
    return fail (error, "min_size_factor must be >= 0, got %g", params->min_size_factor);
  if (!(params->max_size_factor >= 0.0) || isinf (params->max_size_factor))
    return fail (error, "max_size_factor must be >= 0, got %g", params->max_size_factor);

  if (params->start_label != 0 && params->start_label != 1)
    return fail (error, "start_label must be 0 or 1, got %d", params->start_label);

  if (params->connectivity_rule != SV_CONNECTIVITY_RULE_CONNECTED
      && params->connectivity_rule != SV_CONNECTIVITY_RULE_LEGACY)
    return fail (error, "connectivity_rule must be connected or legacy");

  return TRUE;
}

void
sv_slic_params_effective_sigma (const SvSlicParams *params, float sigma_zyx[3])
{
  g_return_if_fail (params != NULL && sigma_zyx != NULL);

  for (int a = 0; a < 3; a++)
    {
      if (params->sigma_per_axis)
        {
          sigma_zyx[a] = (float)params->sigma[a];
        }
      else
        {
          /* scikit-image: np.array([s, s, s], float32) / spacing (float32). */
          float s = (float)params->sigma[0];
          float sp = (float)params->spacing[a];
          sigma_zyx[a] = s / sp;
        }
    }
}

gboolean
sv_slic_params_same_prepare (const SvSlicParams *a, const SvSlicParams *b)
{
  float sa[3], sb[3];

  g_return_val_if_fail (a != NULL && b != NULL, FALSE);

  if (a->convert2lab != b->convert2lab)
    return FALSE;
  /* What smoothing applies is the effective per-axis sigma, so a scalar and
   * an equal per-axis list, or any spacing with sigma 0, share one image. */
  sv_slic_params_effective_sigma (a, sa);
  sv_slic_params_effective_sigma (b, sb);
  for (int i = 0; i < 3; i++)
    if (sa[i] != sb[i])
      return FALSE;
  return TRUE;
}

double
sv_round_significant (double value, int digits)
{
  const int exponent = (int)floor (log10 (value)) - (digits - 1);

  /* Powers of ten from 1 to 1e22 are exact doubles; their inverses are
   * not, so scale by multiplying up and dividing back. */
  if (exponent < 0)
    {
      const double scale = pow (10.0, -exponent);
      return isfinite (scale) ? round (value * scale) / scale : value;
    }
  return round (value / pow (10.0, exponent)) * pow (10.0, exponent);
}

double
sv_spacing_relative (double value, double finest)
{
  return sv_round_significant (value / finest, 6);
}

void
sv_spacing_relative_to_finest (const double in[3], double out[3])
{
  const double finest = MIN (MIN (in[0], in[1]), in[2]);

  for (int a = 0; a < 3; a++)
    out[a] = sv_spacing_relative (in[a], finest);
}

void
sv_slic_params_apply_teaching (const SvSlicParams *params, int stop_after_iteration,
                               SvSlicParams *out)
{
  *out = *params;
  if (stop_after_iteration < 0)
    return;
  out->max_num_iter = MIN (out->max_num_iter, stop_after_iteration);
  out->enforce_connectivity = FALSE;
}

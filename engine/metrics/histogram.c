/* Supervox engine: the intensity histogram of a volume. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-histogram.h"

#include <math.h>

SvHistogram *
sv_histogram_new (const SvVolume *volume, guint n_bins)
{
  return sv_histogram_new_channel (volume, -1, n_bins);
}

SvHistogram *
sv_histogram_new_channel (const SvVolume *volume, int channel, guint n_bins)
{
  SvHistogram *h;
  gsize n, first, step;

  g_return_val_if_fail (volume != NULL && n_bins > 0, NULL);
  g_return_val_if_fail (channel < (int)volume->nc, NULL);
  /* Every value, or every nc-th from the channel's first. */
  first = channel < 0 ? 0 : (gsize)channel;
  step = channel < 0 ? 1 : volume->nc;
  n = sv_volume_n_voxels (volume) * (channel < 0 ? volume->nc : 1);
  h = g_new0 (SvHistogram, 1);
  h->n_bins = n_bins;
  h->counts = g_new0 (guint64, n_bins);
  h->n_values = n;
  h->min = G_MAXDOUBLE;
  h->max = -G_MAXDOUBLE;
  for (gsize i = 0; i < n; i++)
    {
      float v = volume->data[first + i * step];
      if (isfinite (v))
        {
          h->min = MIN (h->min, v);
          h->max = MAX (h->max, v);
        }
    }
  for (gsize i = 0; i < n; i++)
    {
      float v = volume->data[first + i * step];
      if (isfinite (v))
        {
          guint b = h->max > h->min ? (guint)((v - h->min) / (h->max - h->min) * n_bins) : 0;
          h->counts[MIN (b, n_bins - 1)]++;
        }
    }
  return h;
}

void
sv_histogram_free (SvHistogram *h)
{
  if (!h)
    return;
  g_free (h->counts);
  g_free (h);
}

void
sv_histogram_saturated_window (const SvHistogram *h, double fraction, double *low, double *high)
{
  guint64 threshold, count;
  guint lo, hi;

  if (!(h->max > h->min))
    {
      /* One value (a 1×1×1 volume, a blank stack): mid grey, not the black
       * that a black point equal to the value would give. */
      double v = h->min > h->max ? 0.0 : h->min;
      *low = v - 0.5;
      *high = v + 0.5;
      return;
    }
  threshold = (guint64)(h->n_values * fraction / 2);
  for (lo = 0, count = 0; lo < h->n_bins - 1 && (count += h->counts[lo]) <= threshold; lo++)
    ;
  for (hi = h->n_bins - 1, count = 0; hi > lo && (count += h->counts[hi]) <= threshold; hi--)
    ;
  *low = h->min + (h->max - h->min) * lo / h->n_bins;
  *high = h->min + (h->max - h->min) * (hi + 1) / h->n_bins;
}

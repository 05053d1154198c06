/* Supervox engine: the intensity histogram of a volume, and the window
 * that saturates a given fraction of it (Fiji's Auto contrast). */
#pragma once

#include <glib.h>

#include "sv-volume.h"

G_BEGIN_DECLS

typedef struct
{
  double min, max;  /* of the finite values; min > max when there are none */
  guint n_bins;     /* bin i holds [min + i·w, min + (i+1)·w), w = (max − min) / n_bins */
  guint64 *counts;  /* n_bins, owned; the maximum falls into the last bin */
  guint64 n_values; /* every value of every channel, finite or not */
} SvHistogram;

/* Histogram of every channel's finite values in n_bins (> 0) bins between
 * their minimum and maximum. One value (or none) puts everything in bin 0.
 * Single-threaded, one pass for the range and one for the counts. */
SvHistogram *sv_histogram_new (const SvVolume *volume, guint n_bins);
/* The same over one channel (counted from 0; -1: every channel, as
 * sv_histogram_new), as Fiji's B&C shows each channel of a composite. */
SvHistogram *sv_histogram_new_channel (const SvVolume *volume, int channel, guint n_bins);
void sv_histogram_free (SvHistogram *histogram);

/* The window [low, high] at bin edges that leaves about `fraction` of all
 * values outside, half below and half above (Fiji's Auto uses 0.0035). A
 * histogram of one value gives [value − 0.5, value + 0.5]. */
void sv_histogram_saturated_window (const SvHistogram *histogram, double fraction, double *low,
                                    double *high);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvHistogram, sv_histogram_free)

G_END_DECLS

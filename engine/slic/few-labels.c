/* Supervox engine: advice when a run gives far fewer labels than segments
 * asked for. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-few-labels.h"

#include <string.h>

gboolean
sv_few_labels_hint (const SvSlicParams *p, gsize n_labels, gsize n_voxels, gboolean masked,
                    SvFewLabelsHint *hint)
{
  const double smallest = MIN (MIN (p->spacing[0], p->spacing[1]), p->spacing[2]);

  g_return_val_if_fail (p != NULL && hint != NULL, FALSE);
  memset (hint, 0, sizeof *hint);
  if ((double)n_labels >= 0.05 * (double)p->n_segments)
    return FALSE;

  if (smallest < 0.5)
    hint->reasons |= SV_FEW_LABELS_SMALL_SPACING;
  else if (p->compactness < 0.05)
    hint->reasons |= SV_FEW_LABELS_LOW_COMPACTNESS;
  if ((double)p->n_segments > (double)n_voxels / 8.0)
    hint->reasons |= SV_FEW_LABELS_FEW_VOXELS;
  if (masked)
    hint->reasons |= SV_FEW_LABELS_MASKED;

  /* Distances count more against intensity either way. */
  hint->tries |= SV_FEW_LABELS_TRY_COMPACTNESS;
  hint->compactness = sv_round_significant (p->compactness * 10.0, 3);
  /* Spacing whose finest axis is 1 is relative already. */
  if (smallest > 0 && smallest != 1.0)
    {
      hint->tries |= SV_FEW_LABELS_TRY_RELATIVE_SPACING;
      sv_spacing_relative_to_finest (p->spacing, hint->spacing);
    }
  if (p->enforce_connectivity)
    hint->tries |= SV_FEW_LABELS_TRY_NO_CONNECTIVITY;
  return TRUE;
}

/* Supervox engine: far fewer labels than segments asked for, why that
 * happens and what to try, from the run's parameters alone, so that the
 * window and supervox-cli give the same advice in their own words. */
#pragma once

#include <glib.h>

#include "sv-params.h"

G_BEGIN_DECLS

/* Why a run gave few labels. */
typedef enum
{
  SV_FEW_LABELS_SMALL_SPACING = 1 << 0,   /* an axis's spacing is under 0.5 */
  SV_FEW_LABELS_LOW_COMPACTNESS = 1 << 1, /* compactness under 0.05 */
  SV_FEW_LABELS_FEW_VOXELS = 1 << 2,      /* fewer than 8 voxels per segment asked for */
  SV_FEW_LABELS_MASKED = 1 << 3,          /* only the mask's voxels are segmented */
} SvFewLabelsReason;

/* What to try; only what would change the run. */
typedef enum
{
  SV_FEW_LABELS_TRY_COMPACTNESS = 1 << 0,      /* `compactness`, ten times the run's */
  SV_FEW_LABELS_TRY_RELATIVE_SPACING = 1 << 1, /* `spacing`: the run's over its finest axis */
  SV_FEW_LABELS_TRY_NO_CONNECTIVITY = 1 << 2,  /* the raw clusters (connectivity is on) */
} SvFewLabelsTry;

typedef struct
{
  guint reasons; /* SvFewLabelsReason */
  guint tries;   /* SvFewLabelsTry */
  double compactness;
  double spacing[3];
} SvFewLabelsHint;

/* TRUE when a finished run of `params` over `n_voxels` voxels (`masked`:
 * with a mask) gave far fewer labels than asked for (under 5 % of
 * n_segments), with why and what to try in `hint`. A suggestion that is
 * already in effect is left out: spacing already relative to its finest
 * axis, connectivity already off. */
gboolean sv_few_labels_hint (const SvSlicParams *params, gsize n_labels, gsize n_voxels,
                             gboolean masked, SvFewLabelsHint *hint);

G_END_DECLS

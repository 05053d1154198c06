/* Tests of the advice for far fewer labels than asked for: when it comes,
 * the reasons, and that it offers only what would change the run. */
#include "supervox/sv-few-labels.h"

static void
params_for (SvSlicParams *p, double compactness, double spacing, gboolean connectivity)
{
  sv_slic_params_init_defaults (p);
  p->n_segments = 400;
  p->compactness = compactness;
  p->spacing[0] = p->spacing[1] = p->spacing[2] = spacing;
  p->enforce_connectivity = connectivity;
}

/* 5 % of the segments asked for is enough: no advice. */
static void
test_enough (void)
{
  SvFewLabelsHint hint;
  SvSlicParams p;

  params_for (&p, 0.001, 1.0, TRUE);
  g_assert_false (sv_few_labels_hint (&p, 20, 100000, FALSE, &hint));
  g_assert_true (sv_few_labels_hint (&p, 19, 100000, FALSE, &hint));
}

static void
test_tries_follow_params (void)
{
  static const struct
  {
    double compactness, spacing;
    gboolean connectivity, masked;
    gsize n_voxels;
    guint reasons, tries;
    double suggested_compactness, suggested_spacing;
  } cases[] = {
    /* Spacing already relative: not offered again. */
    { 0.001, 1.0, TRUE, FALSE, 100000, SV_FEW_LABELS_LOW_COMPACTNESS,
      SV_FEW_LABELS_TRY_COMPACTNESS | SV_FEW_LABELS_TRY_NO_CONNECTIVITY, 0.01, 0 },
    /* Connectivity already off: not offered again. */
    { 0.001, 1.0, FALSE, FALSE, 100000, SV_FEW_LABELS_LOW_COMPACTNESS,
      SV_FEW_LABELS_TRY_COMPACTNESS, 0.01, 0 },
    /* An EM stack in µm: small spacing, relative spacing offered. */
    { 0.1, 0.004, TRUE, FALSE, 100000, SV_FEW_LABELS_SMALL_SPACING,
      SV_FEW_LABELS_TRY_COMPACTNESS | SV_FEW_LABELS_TRY_RELATIVE_SPACING
          | SV_FEW_LABELS_TRY_NO_CONNECTIVITY,
      1.0, 1.0 },
    /* Few voxels and a mask say so. */
    { 10, 2.0, TRUE, TRUE, 1000, SV_FEW_LABELS_FEW_VOXELS | SV_FEW_LABELS_MASKED,
      SV_FEW_LABELS_TRY_COMPACTNESS | SV_FEW_LABELS_TRY_RELATIVE_SPACING
          | SV_FEW_LABELS_TRY_NO_CONNECTIVITY,
      100, 1.0 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      SvFewLabelsHint hint;
      SvSlicParams p;

      params_for (&p, cases[i].compactness, cases[i].spacing, cases[i].connectivity);
      g_assert_true (sv_few_labels_hint (&p, 3, cases[i].n_voxels, cases[i].masked, &hint));
      g_assert_cmphex (hint.reasons, ==, cases[i].reasons);
      g_assert_cmphex (hint.tries, ==, cases[i].tries);
      g_assert_cmpfloat (hint.compactness, ==, cases[i].suggested_compactness);
      if (hint.tries & SV_FEW_LABELS_TRY_RELATIVE_SPACING)
        for (int a = 0; a < 3; a++)
          g_assert_cmpfloat (hint.spacing[a], ==, cases[i].suggested_spacing);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/few-labels/enough", test_enough);
  g_test_add_func ("/engine/few-labels/tries-follow-params", test_tries_follow_params);
  return g_test_run ();
}

/* Tests for SLIC parameters: defaults, validation messages, effective
 * sigma, prepare-cache key, JSON and command-line spelling. */
#include <math.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-params.h"

#define PYTHON "/usr/bin/python3"

static void
test_defaults (void)
{
  SvSlicParams p;
  g_autoptr (GError) error = NULL;

  memset (&p, 0xab, sizeof p);
  sv_slic_params_init_defaults (&p);
  g_assert_cmpint (p.n_segments, ==, 100);
  g_assert_cmpfloat (p.compactness, ==, 10.0);
  g_assert_cmpint (p.max_num_iter, ==, 10);
  g_assert_cmpfloat (p.sigma[0], ==, 0.0);
  g_assert_false (p.sigma_per_axis);
  for (int a = 0; a < 3; a++)
    g_assert_cmpfloat (p.spacing[a], ==, 1.0);
  g_assert_cmpint (p.convert2lab, ==, SV_CONVERT2LAB_AUTO);
  g_assert_true (p.enforce_connectivity);
  g_assert_cmpfloat (p.min_size_factor, ==, 0.5);
  g_assert_cmpfloat (p.max_size_factor, ==, 3.0);
  g_assert_false (p.slic_zero);
  g_assert_cmpint (p.start_label, ==, 1);
  g_assert_true (sv_slic_params_validate (&p, &error));
  g_assert_no_error (error);
}

typedef void (*Mutate) (SvSlicParams *p);

static void
m_segments (SvSlicParams *p)
{
  p->n_segments = 0;
}
static void
m_compact_neg (SvSlicParams *p)
{
  p->compactness = -1;
}
static void
m_compact_nan (SvSlicParams *p)
{
  p->compactness = NAN;
}
static void
m_compact_zero (SvSlicParams *p)
{
  p->compactness = 0;
}
static void
m_iter (SvSlicParams *p)
{
  p->max_num_iter = -3;
}
static void
m_spacing (SvSlicParams *p)
{
  p->spacing[1] = 0;
}
static void
m_spacing_nan (SvSlicParams *p)
{
  p->spacing[2] = NAN;
}
static void
m_sigma (SvSlicParams *p)
{
  p->sigma[0] = -0.5;
}
static void
m_sigma_axis (SvSlicParams *p)
{
  p->sigma_per_axis = TRUE;
  p->sigma[0] = 1;
  p->sigma[1] = 1;
  p->sigma[2] = -2;
}
static void
m_start (SvSlicParams *p)
{
  p->start_label = 2;
}
static void
m_min_factor (SvSlicParams *p)
{
  p->min_size_factor = -0.1;
}
static void
m_max_factor (SvSlicParams *p)
{
  p->max_size_factor = NAN;
}

static const struct
{
  Mutate mutate;
  const char *message;
} invalid_cases[] = {
  { m_segments, "n_segments must be at least 1, got 0" },
  { m_compact_neg, "compactness must be > 0" },
  { m_compact_nan, "compactness must be > 0" },
  { m_compact_zero, "compactness must be > 0" },
  { m_iter, "max_num_iter must be >= 0, got -3" },
  { m_spacing, "spacing must be > 0 on every axis, got 0 on y" },
  { m_spacing_nan, "spacing must be > 0 on every axis" },
  { m_sigma, "sigma must be >= 0, got -0.5" },
  { m_sigma_axis, "sigma must be >= 0, got -2 on x" },
  { m_start, "start_label must be 0 or 1, got 2" },
  { m_min_factor, "min_size_factor must be >= 0" },
  { m_max_factor, "max_size_factor must be >= 0" },
};

static void
test_validate_messages (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (invalid_cases); i++)
    {
      SvSlicParams p;
      g_autoptr (GError) error = NULL;

      sv_slic_params_init_defaults (&p);
      invalid_cases[i].mutate (&p);
      g_assert_false (sv_slic_params_validate (&p, &error));
      g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
      g_test_message ("%s", error->message);
      g_assert_true (g_str_has_prefix (error->message, invalid_cases[i].message));
    }
}

static void
test_validate_accepts (void)
{
  SvSlicParams p;
  g_autoptr (GError) error = NULL;

  sv_slic_params_init_defaults (&p);
  /* scikit-image does not require min_size_factor < max_size_factor. */
  p.min_size_factor = 5.0;
  p.max_size_factor = 0.0;
  p.start_label = 0;
  p.max_num_iter = 0;
  p.n_segments = 1;
  p.sigma_per_axis = TRUE;
  p.sigma[0] = 0.0;
  p.sigma[1] = 2.0;
  p.sigma[2] = 0.5;
  p.compactness = 1e-6;
  g_assert_true (sv_slic_params_validate (&p, &error));
  g_assert_no_error (error);
}

static void
test_effective_sigma (void)
{
  SvSlicParams p;
  float s[3];
  /* volatile: the expected value is one float32 division, not folded. */
  volatile float one = 1.0f, three = 3.0f, five = 5.0f, sp = (float)0.3;

  sv_slic_params_init_defaults (&p);
  p.sigma[0] = 1.0;
  p.spacing[0] = 5.0;
  p.spacing[1] = 0.3;
  p.spacing[2] = 1.0;
  sv_slic_params_effective_sigma (&p, s);
  g_assert_cmpfloat (s[0], ==, one / five);
  g_assert_cmpfloat (s[1], ==, one / sp);
  g_assert_cmpfloat (s[2], ==, 1.0f);

  p.sigma[0] = 3.0;
  sv_slic_params_effective_sigma (&p, s);
  g_assert_cmpfloat (s[0], ==, three / five);

  p.sigma_per_axis = TRUE;
  p.sigma[0] = 0.0;
  p.sigma[1] = 0.1;
  p.sigma[2] = 2.0;
  sv_slic_params_effective_sigma (&p, s);
  g_assert_cmpfloat (s[0], ==, 0.0f);
  g_assert_cmpfloat (s[1], ==, 0.1f);
  g_assert_cmpfloat (s[2], ==, 2.0f);
}

static void
test_same_prepare (void)
{
  SvSlicParams a, b;

  sv_slic_params_init_defaults (&a);
  b = a;
  b.compactness = 0.01;
  b.n_segments = 5000;
  b.max_num_iter = 3;
  b.slic_zero = TRUE;
  b.enforce_connectivity = FALSE;
  g_assert_true (sv_slic_params_same_prepare (&a, &b));

  /* Spacing only matters through a nonzero scalar sigma. */
  b = a;
  b.spacing[0] = 4.0;
  g_assert_true (sv_slic_params_same_prepare (&a, &b));
  a.sigma[0] = b.sigma[0] = 1.0;
  g_assert_false (sv_slic_params_same_prepare (&a, &b));

  b = a;
  b.sigma[0] = 1.5;
  g_assert_false (sv_slic_params_same_prepare (&a, &b));

  /* sigma 1 scalar with unit spacing smooths exactly like [1, 1, 1]. */
  b = a;
  b.sigma_per_axis = TRUE;
  b.sigma[1] = b.sigma[2] = 1.0;
  g_assert_true (sv_slic_params_same_prepare (&a, &b));

  b = a;
  b.convert2lab = SV_CONVERT2LAB_NO;
  g_assert_false (sv_slic_params_same_prepare (&a, &b));
}

static void
odd_params (SvSlicParams *p)
{
  sv_slic_params_init_defaults (p);
  p->n_segments = 1234567;
  p->compactness = 0.1 + 0.2;
  p->max_num_iter = 7;
  p->sigma_per_axis = TRUE;
  p->sigma[0] = 0.0;
  p->sigma[1] = 1.0 / 3.0;
  p->sigma[2] = 2.5e-7;
  p->spacing[0] = 2.9;
  p->spacing[1] = 0.1;
  p->spacing[2] = 1e30;
  p->convert2lab = SV_CONVERT2LAB_NO;
  p->enforce_connectivity = FALSE;
  p->min_size_factor = 0.05;
  p->max_size_factor = 12.0 / 7.0;
  p->slic_zero = TRUE;
  p->start_label = 0;
  p->connectivity_rule = SV_CONNECTIVITY_RULE_LEGACY;
}

static char *
double_hex (double v)
{
  guint8 b[8];
  GString *s = g_string_new (NULL);
  guint64 bits;
  memcpy (&bits, &v, 8);
  for (int i = 0; i < 8; i++)
    b[i] = (guint8)(bits >> (8 * i));
  for (int i = 0; i < 8; i++)
    g_string_append_printf (s, "%02x", b[i]);
  return g_string_free (s, FALSE);
}

/* What python's json.loads must give back, every number as the hex of its
 * little-endian double, so equality is bitwise. */
static char *
expected_from_python (const SvSlicParams *p)
{
  GString *s = g_string_new (NULL);
  const double nums[] = { (double)p->n_segments, p->compactness,     p->max_num_iter,
                          p->min_size_factor,    p->max_size_factor, p->start_label };
  for (gsize i = 0; i < G_N_ELEMENTS (nums); i++)
    {
      g_autofree char *h = double_hex (nums[i]);
      g_string_append_printf (s, "%s ", h);
    }
  for (int a = 0; a < 3; a++)
    {
      g_autofree char *h = double_hex (p->spacing[a]);
      g_string_append_printf (s, "%s ", h);
    }
  if (p->sigma_per_axis)
    for (int a = 0; a < 3; a++)
      {
        g_autofree char *h = double_hex (p->sigma[a]);
        g_string_append_printf (s, "%s ", h);
      }
  else
    {
      g_autofree char *h = double_hex (p->sigma[0]);
      g_string_append_printf (s, "%s ", h);
    }
  g_string_append_printf (s, "%s %s %s %s\n",
                          p->convert2lab == SV_CONVERT2LAB_AUTO  ? "None"
                          : p->convert2lab == SV_CONVERT2LAB_YES ? "True"
                                                                 : "False",
                          p->enforce_connectivity ? "True" : "False",
                          p->slic_zero ? "True" : "False",
                          p->connectivity_rule == SV_CONNECTIVITY_RULE_LEGACY ? "legacy"
                                                                               : "connected");
  return g_string_free (s, FALSE);
}

static const char json_script[]
    = "import sys, json, struct\n"
      "o = json.loads(sys.argv[1])\n"
      "keys = {'n_segments', 'compactness', 'max_num_iter', 'sigma', 'spacing', 'convert2lab',\n"
      "        'enforce_connectivity', 'min_size_factor', 'max_size_factor', 'slic_zero',\n"
      "        'start_label', 'connectivity_rule'}\n"
      "assert set(o) == keys, sorted(set(o) ^ keys)\n"
      "assert all(isinstance(o[k], int) for k in ('n_segments', 'max_num_iter', 'start_label'))\n"
      "h = lambda v: struct.pack('<d', float(v)).hex()\n"
      "out = [h(o[k]) for k in ('n_segments', 'compactness', 'max_num_iter',\n"
      "                          'min_size_factor', 'max_size_factor', 'start_label')]\n"
      "out += [h(v) for v in o['spacing']]\n"
      "out += [h(v) for v in (o['sigma'] if isinstance(o['sigma'], list) else [o['sigma']])]\n"
      "print(' '.join(out), o['convert2lab'], o['enforce_connectivity'], o['slic_zero'],\n"
      "      o['connectivity_rule'])\n";

static void
check_json (const SvSlicParams *p)
{
  g_autofree char *json = sv_slic_params_to_json (p);
  g_autofree char *expected = expected_from_python (p);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;
  const char *argv[] = { PYTHON, "-c", json_script, json, NULL };

  g_test_message ("%s", json);
  g_assert_true (json[0] == '{' && json[strlen (json) - 1] == '}');
  if (!g_file_test (PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip (PYTHON " not found");
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, &error));
  if (!g_spawn_check_wait_status (status, &error))
    g_error ("json.loads rejected %s: %s", json, err);
  g_assert_cmpstr (out, ==, expected);
}

static void
test_json (void)
{
  SvSlicParams p;

  sv_slic_params_init_defaults (&p);
  check_json (&p);
  g_autofree char *json = sv_slic_params_to_json (&p);
  g_assert_nonnull (strstr (json, "\"convert2lab\": null"));
  g_assert_nonnull (strstr (json, "\"sigma\": 0,"));

  odd_params (&p);
  check_json (&p);
  p.convert2lab = SV_CONVERT2LAB_YES;
  check_json (&p);
}

static void
test_cli_defaults (void)
{
  SvSlicParams p;
  g_autoptr (GString) cmd = g_string_new ("supervox-cli slic in.tif -o out.tif");

  sv_slic_params_init_defaults (&p);
  sv_slic_params_append_cli (&p, cmd);
  g_assert_cmpstr (cmd->str, ==,
                   "supervox-cli slic in.tif -o out.tif --n-segments 100 --compactness 10"
                   " --max-num-iter 10 --sigma 0 --spacing 1,1,1 --enforce-connectivity"
                   " --min-size-factor 0.5 --max-size-factor 3 --start-label 1"
                   " --connectivity-rule connected");
}

/* Odd values are written with the digits they need and no more (0.1, not
 * 0.10000000000000001); that the real CLI reads them back is
 * /cli/slic/append-cli-flags-reproduce-params. */
static void
test_cli_exact_numbers (void)
{
  SvSlicParams p;
  g_autoptr (GString) cmd = g_string_new (NULL);

  odd_params (&p);
  sv_slic_params_append_cli (&p, cmd);
  g_test_message ("%s", cmd->str);
  g_assert_cmpstr (cmd->str, ==,
                   " --n-segments 1234567 --compactness 0.30000000000000004 --max-num-iter 7"
                   " --sigma 0,0.3333333333333333,2.5e-07"
                   " --spacing 2.9,0.1,1e+30"
                   " --no-enforce-connectivity --min-size-factor 0.05"
                   " --max-size-factor 1.7142857142857142 --slic-zero --start-label 0"
                   " --connectivity-rule legacy --no-convert2lab");
}

/* The shortest text that reads back as the same double, spelled as
 * Python's repr spells it for these. */
static void
test_format_double (void)
{
  static const struct
  {
    double value;
    const char *text;
  } cases[] = {
    { 0.2, "0.2" },
    { 0.1 + 0.2, "0.30000000000000004" },
    { 1.0 / 3.0, "0.3333333333333333" },
    { 12.0 / 7.0, "1.7142857142857142" },
    { 0.0001, "0.0001" },
    { 1e-5, "1e-05" },
    { 40.0 / 4.0, "10" },
    { -2.5e-7, "-2.5e-07" },
    { 1e30, "1e+30" },
    { 0.0, "0" },
  };
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  guint64 state = 0x9e3779b97f4a7c15u;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    g_assert_cmpstr (sv_format_double (buf, cases[i].value), ==, cases[i].text);
  /* Any bit pattern of a finite double reads back as itself. */
  for (guint i = 0; i < 100000; i++)
    {
      double v;

      state = state * 6364136223846793005u + 1442695040888963407u;
      memcpy (&v, &state, sizeof v);
      if (!isfinite (v))
        continue;
      g_assert_true (g_ascii_strtod (sv_format_double (buf, v), NULL) == v);
    }
}

/* Rounded values are the doubles nearest their decimals, so commands
 * spell them as a person would: the window's slider (three digits) and
 * its relative spacing (six). */
static void
test_round_significant (void)
{
  static const struct
  {
    double value;
    int digits;
    const char *text;
  } cases[] = {
    { 0.5704, 3, "0.57" },     { 0.29, 3, "0.29" },     { 0.0123456, 3, "0.0123" },
    { 123456.0, 3, "123000" }, { 1.2 / 0.9, 6, "1.33333" }, { 40.0 / 4.0, 6, "10" },
    { 2.0 / 3.0, 6, "0.666667" },
  };
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  const double mri[3] = { 1.2, 0.9, 0.9 };
  double relative[3];

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    g_assert_cmpstr (sv_format_double (buf, sv_round_significant (cases[i].value, cases[i].digits)),
                     ==, cases[i].text);
  sv_spacing_relative_to_finest (mri, relative);
  g_assert_cmpstr (sv_format_double (buf, relative[0]), ==, "1.33333");
  g_assert_true (relative[1] == 1.0 && relative[2] == 1.0);
}

/* Presets: every parameter goes into the key file and comes back, per-axis
 * sigma and convert2lab included. */
static void
test_keyfile_round_trip (void)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  SvSlicParams p, back;

  sv_slic_params_init_defaults (&p);
  p.n_segments = 12345678901;
  p.compactness = 0.1 + 0.2;
  p.max_num_iter = 7;
  p.sigma_per_axis = TRUE;
  p.sigma[0] = 0.5;
  p.sigma[1] = 1.0 / 3.0;
  p.sigma[2] = 2.0;
  p.spacing[0] = 3.25;
  p.convert2lab = SV_CONVERT2LAB_NO;
  p.enforce_connectivity = FALSE;
  p.min_size_factor = 0.125;
  p.max_size_factor = 6.5;
  p.slic_zero = TRUE;
  p.start_label = 0;
  p.connectivity_rule = SV_CONNECTIVITY_RULE_LEGACY;
  sv_slic_params_to_keyfile (&p, kf, "slic");
  sv_slic_params_init_defaults (&back);
  g_assert_true (sv_slic_params_from_keyfile (&back, kf, "slic", &error));
  g_assert_no_error (error);
  /* Field by field through the JSON (every field, doubles to the last
   * bit): a byte compare would also compare the struct's padding. */
  {
    g_autofree char *want = sv_slic_params_to_json (&p);
    g_autofree char *got = sv_slic_params_to_json (&back);
    g_assert_cmpstr (got, ==, want);
  }
  g_assert_cmpint (back.n_segments, ==, p.n_segments);
  g_assert_true (back.compactness == p.compactness && back.sigma[1] == p.sigma[1]);
  /* Written as a person would type them. */
  {
    g_autofree char *spacing = g_key_file_get_value (kf, "slic", "spacing", NULL);
    g_autofree char *sigma = g_key_file_get_value (kf, "slic", "sigma", NULL);
    g_assert_cmpstr (spacing, ==, "3.25;1;1;");
    g_assert_cmpstr (sigma, ==, "0.5;0.3333333333333333;2;");
  }
}

/* A preset of an earlier version (scalar sigma, no convert2lab) reads as
 * it did; a bad value is the key file's error. */
static void
test_keyfile_old_and_bad (void)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  SvSlicParams p, want;

  g_assert_true (g_key_file_load_from_data (kf,
                                            "[slic]\nn_segments=50\nsigma=1.5\n"
                                            "spacing=2;1;1;\nslic_zero=true\nbackend=cpu\n",
                                            -1, G_KEY_FILE_NONE, &error));
  sv_slic_params_init_defaults (&p);
  sv_slic_params_init_defaults (&want);
  want.n_segments = 50;
  want.sigma[0] = 1.5;
  want.spacing[0] = 2.0;
  want.slic_zero = TRUE;
  g_assert_true (sv_slic_params_from_keyfile (&p, kf, "slic", &error));
  g_assert_no_error (error);
  {
    /* Through the JSON: a byte compare would also compare padding. */
    g_autofree char *got = sv_slic_params_to_json (&p);
    g_autofree char *expected = sv_slic_params_to_json (&want);
    g_assert_cmpstr (got, ==, expected);
  }

  g_key_file_set_string (kf, "slic", "compactness", "soft");
  g_assert_false (sv_slic_params_from_keyfile (&p, kf, "slic", &error));
  g_assert_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE);
  g_clear_error (&error);

  g_key_file_set_string (kf, "slic", "compactness", "5");
  g_key_file_set_string (kf, "slic", "connectivity_rule", "legacy");
  g_assert_true (sv_slic_params_from_keyfile (&p, kf, "slic", &error));
  g_assert_cmpint (p.connectivity_rule, ==, SV_CONNECTIVITY_RULE_LEGACY);
  g_key_file_set_string (kf, "slic", "connectivity_rule", "fixed");
  g_assert_false (sv_slic_params_from_keyfile (&p, kf, "slic", &error));
  g_assert_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "connected/legacy"));
}

/* The table covers SvSlicParams: changing the field behind each row
 * changes the JSON under that row's key, and every key is in the JSON. */
static void
test_fields_cover_params (void)
{
  guint n = 0;
  const SvParamField *fields = sv_slic_param_fields (&n);
  SvSlicParams base;
  g_autofree char *base_json = NULL;

  sv_slic_params_init_defaults (&base);
  base_json = sv_slic_params_to_json (&base);
  g_assert_cmpuint (n, ==, 12);
  for (guint i = 0; i < n; i++)
    {
      SvSlicParams p = base;
      g_autofree char *key = g_strdup_printf ("\"%s\": ", fields[i].name);
      g_autofree char *json = NULL;
      char *at = (char *)&p + fields[i].offset;

      g_assert_nonnull (strstr (base_json, key));
      switch (fields[i].type)
        {
        case SV_PARAM_INT64:
          *(gint64 *)at += 1;
          break;
        case SV_PARAM_INT:
          *(int *)at += 1;
          break;
        case SV_PARAM_DOUBLE:
        case SV_PARAM_SIGMA:
        case SV_PARAM_TRIPLE:
          *(double *)at += 1.0;
          break;
        case SV_PARAM_BOOL:
          *(gboolean *)at = !*(gboolean *)at;
          break;
        case SV_PARAM_CONVERT2LAB:
          *(SvConvert2Lab *)at = SV_CONVERT2LAB_NO;
          break;
        case SV_PARAM_WORD:
          *(int *)at = !*(int *)at;
          break;
        }
      json = sv_slic_params_to_json (&p);
      g_assert_cmpstr (json, !=, base_json);
    }
}

static const SvParamField *
field_named (const char *name)
{
  guint n = 0;
  const SvParamField *fields = sv_slic_param_fields (&n);

  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (fields[i].name, name) == 0)
      return &fields[i];
  g_assert_not_reached ();
}

/* Reading a value as supervox-cli spells it: each row's bound, with the
 * option in the message. */
static void
test_parse (void)
{
  static const struct
  {
    const char *name, *text, *message; /* NULL message: accepted */
  } cases[] = {
    { "n_segments", "250", NULL },
    { "n_segments", "0", "--n-segments must be >= 1, got 0" },
    { "n_segments", "2.5", "--n-segments expects a whole number, got '2.5'" },
    { "compactness", "0.01", NULL },
    { "compactness", "0", "--compactness must be > 0, got 0" },
    { "compactness", "inf", "--compactness expects a finite number, got 'inf'" },
    { "max_num_iter", "0", NULL },
    { "max_num_iter", "-1", "--max-num-iter must be >= 0, got -1" },
    { "min_size_factor", "0", NULL },
    { "min_size_factor", "-0.5", "--min-size-factor must be >= 0, got -0.5" },
    { "max_size_factor", "0", "--max-size-factor must be > 0, got 0" },
    { "start_label", "0", NULL },
    { "start_label", "01", "--start-label must be 0 or 1, got 01" },
    { "start_label", "2", "--start-label must be 0 or 1, got 2" },
    { "connectivity_rule", "legacy", NULL },
    { "connectivity_rule", "connected", NULL },
    { "connectivity_rule", "Legacy",
      "--connectivity-rule must be connected or legacy, got 'Legacy'" },
  };
  SvSlicParams p;

  sv_slic_params_init_defaults (&p);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      gboolean ok = sv_slic_param_parse (field_named (cases[i].name), cases[i].text, &p, &error);

      if (cases[i].message == NULL)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
        }
      else
        {
          g_assert_false (ok);
          g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
          g_assert_cmpstr (error->message, ==, cases[i].message);
        }
    }
  g_assert_cmpint (p.n_segments, ==, 250);
  g_assert_cmpfloat (p.compactness, ==, 0.01);
  g_assert_cmpint (p.max_num_iter, ==, 0);
  g_assert_cmpfloat (p.min_size_factor, ==, 0.0);
  g_assert_cmpint (p.start_label, ==, 0);
}

/* The list rows (sigma, spacing) as supervox-cli spells them: values in
 * the order given, the table's words, counts and bounds. */
static void
test_parse_list (void)
{
  static const struct
  {
    const char *name, *text;
    guint n;             /* values read */
    int word;            /* -1: numbers */
    double first;        /* values[0] */
    const char *message; /* NULL: accepted */
  } cases[] = {
    { "sigma", "1.5", 1, -1, 1.5, NULL },
    { "sigma", "0,2,3", 3, -1, 0, NULL },
    { "sigma", "2,1", 2, -1, 2, NULL },
    { "sigma", "-1", 0, -1, 0, "--sigma must be >= 0, got -1" },
    { "sigma", "file", 0, -1, 0, "--sigma expects finite numbers separated by commas, got 'file'" },
    { "spacing", "4,1,1", 3, -1, 4, NULL },
    { "spacing", "0.5,0.5", 2, -1, 0.5, NULL },
    { "spacing", "file", 0, 0, 0, NULL },
    { "spacing", "file-relative", 0, 1, 0, NULL },
    { "spacing", "2", 0, -1, 0,
      "--spacing expects z,y,x (or y,x for a 2D image), 'file' or 'file-relative', got 2" },
    { "spacing", "1,0,1", 0, -1, 0, "--spacing must be > 0 on every axis, got 1,0,1" },
    { "spacing", "1,1,1,1", 0, -1, 0, "--spacing takes at most 3 values, got 4 ('1,1,1,1')" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      double values[3] = { -7, -7, -7 };
      guint n = 99;
      int word = 99;
      gboolean ok = sv_slic_param_parse_list (field_named (cases[i].name), cases[i].text, values,
                                              &n, &word, &error);

      if (cases[i].message == NULL)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
          g_assert_cmpuint (n, ==, cases[i].n);
          g_assert_cmpint (word, ==, cases[i].word);
          if (n > 0)
            g_assert_cmpfloat (values[0], ==, cases[i].first);
        }
      else
        {
          g_assert_false (ok);
          g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM);
          g_assert_cmpstr (error->message, ==, cases[i].message);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/engine/params/defaults", test_defaults);
  g_test_add_func ("/engine/params/validate/messages", test_validate_messages);
  g_test_add_func ("/engine/params/validate/accepts", test_validate_accepts);
  g_test_add_func ("/engine/params/effective-sigma", test_effective_sigma);
  g_test_add_func ("/engine/params/same-prepare", test_same_prepare);
  g_test_add_func ("/engine/params/json", test_json);
  g_test_add_func ("/engine/params/cli/defaults", test_cli_defaults);
  g_test_add_func ("/engine/params/cli/exact-numbers", test_cli_exact_numbers);
  g_test_add_func ("/engine/params/format-double", test_format_double);
  g_test_add_func ("/engine/params/round-significant", test_round_significant);
  g_test_add_func ("/engine/params/keyfile/round-trip", test_keyfile_round_trip);
  g_test_add_func ("/engine/params/keyfile/old-and-bad", test_keyfile_old_and_bad);
  g_test_add_func ("/engine/params/fields-cover-params", test_fields_cover_params);
  g_test_add_func ("/engine/params/parse", test_parse);
  g_test_add_func ("/engine/params/parse-list", test_parse_list);

  return g_test_run ();
}

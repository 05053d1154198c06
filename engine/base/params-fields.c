/* Supervox engine: the SLIC parameters described once, as a table, and the
 * writers and readers that walk it (JSON, supervox-cli options, presets). */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "supervox/sv-params.h"

#include "supervox/sv-error.h"

#define NUMBER(name, option, type, member, bound, min, max, arg, help)                             \
  {                                                                                                \
    name, option, type, offsetof (SvSlicParams, member), SV_PARAM_FLAG_NONE, bound, min, max, arg, \
        help, NULL                                                                                 \
  }
#define SWITCH(name, option, type, member, flags, help, help_no)                                   \
  {                                                                                                \
    name, option, type, offsetof (SvSlicParams, member), flags, SV_PARAM_BOUND_NONE, 0, 0, NULL,   \
        help, help_no                                                                              \
  }

#define WORD(name, option, member, arg, help)                                                      \
  {                                                                                                \
    name, option, SV_PARAM_WORD, offsetof (SvSlicParams, member), SV_PARAM_FLAG_NONE,              \
        SV_PARAM_BOUND_NONE, 0, 0, arg, help, NULL                                                 \
  }

static const SvParamField fields[] = {
  NUMBER ("n_segments", "n-segments", SV_PARAM_INT64, n_segments, SV_PARAM_BOUND_AT_LEAST, 1,
          G_MAXINT64, "N", "Approximate number of supervoxels (default 100)"),
  NUMBER ("compactness", "compactness", SV_PARAM_DOUBLE, compactness, SV_PARAM_BOUND_ABOVE, 0, 0,
          "C", "Intensity vs. space balance, > 0 (default 10)"),
  NUMBER ("max_num_iter", "max-num-iter", SV_PARAM_INT, max_num_iter, SV_PARAM_BOUND_AT_LEAST, 0,
          G_MAXINT32, "N", "Iterations (default 10)"),
  NUMBER ("sigma", "sigma", SV_PARAM_SIGMA, sigma, SV_PARAM_BOUND_AT_LEAST, 0, 0, "S|Z,Y,X",
          "Gaussian pre-smoothing: one value (divided by spacing) or z,y,x (y,x in 2D)"),
  NUMBER ("spacing", "spacing", SV_PARAM_TRIPLE, spacing, SV_PARAM_BOUND_ABOVE, 0, 0,
          "Z,Y,X|file|file-relative",
          "Voxel size z,y,x (y,x in 2D); 'file' for the file's ImageJ/OME spacing; 'file-relative' "
          "for it divided by its finest axis, ones when the file has none (default ones, as "
          "scikit-image; the window's default is file-relative)"),
  SWITCH ("convert2lab", "convert2lab", SV_PARAM_CONVERT2LAB, convert2lab, SV_PARAM_FLAG_NEGATABLE,
          "Convert RGB to CIELAB (default for 3-channel 2D images)", "Never convert to CIELAB"),
  SWITCH ("enforce_connectivity", "enforce-connectivity", SV_PARAM_BOOL, enforce_connectivity,
          SV_PARAM_FLAG_NEGATABLE, "Relabel connected components (default)",
          "Keep the raw SLIC labels"),
  NUMBER ("min_size_factor", "min-size-factor", SV_PARAM_DOUBLE, min_size_factor,
          SV_PARAM_BOUND_AT_LEAST, 0, 0, "F",
          "Merge components smaller than this x N/K voxels (default 0.5)"),
  NUMBER ("max_size_factor", "max-size-factor", SV_PARAM_DOUBLE, max_size_factor,
          SV_PARAM_BOUND_ABOVE, 0, 0, "F",
          "Split components larger than this x N/K voxels (default 3)"),
  SWITCH ("slic_zero", "slic-zero", SV_PARAM_BOOL, slic_zero, SV_PARAM_FLAG_NONE,
          "SLIC-zero (SLICO)", NULL),
  NUMBER ("start_label", "start-label", SV_PARAM_INT, start_label, SV_PARAM_BOUND_AT_LEAST, 0, 1,
          "0|1", "First label, 0 or 1 (default 1)"),
  WORD ("connectivity_rule", "connectivity-rule", connectivity_rule, "connected|legacy",
        "A small piece that touches no labelled voxel: 'connected' gives it a label of its own, "
        "so every label is one piece (default); 'legacy' reuses the next label as "
        "scikit-image <= 0.26 does"),
};

const SvParamField *
sv_slic_param_fields (guint *n_fields)
{
  *n_fields = G_N_ELEMENTS (fields);
  return fields;
}

#define MEMBER(params, field, type) ((type *)((char *)(params) + (field)->offset))
#define CMEMBER(params, field, type) ((const type *)((const char *)(params) + (field)->offset))

/* The word of an SV_PARAM_WORD field for its value: the value-th entry of
 * the field's `arg`, "connected|legacy". */
static char *
word_of (const SvParamField *f, int value)
{
  g_auto (GStrv) words = g_strsplit (f->arg, "|", -1);

  if (value < 0 || (guint)value >= g_strv_length (words))
    return g_strdup ("?");
  return g_strdup (words[value]);
}

/* The value of `text` among an SV_PARAM_WORD field's words, or -1. */
static int
word_index (const SvParamField *f, const char *text)
{
  g_auto (GStrv) words = g_strsplit (f->arg, "|", -1);

  for (guint i = 0; words[i] != NULL; i++)
    if (g_strcmp0 (words[i], text) == 0)
      return (int)i;
  return -1;
}

char *
sv_format_double (char buf[G_ASCII_DTOSTR_BUF_SIZE], double value)
{
  /* %.17g always reads back exactly; fewer digits do for most values a
   * person typed, and read better. */
  static const char *const formats[] = { "%.15g", "%.16g" };

  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_ascii_formatd (buf, G_ASCII_DTOSTR_BUF_SIZE, formats[i], value);
      if (g_ascii_strtod (buf, NULL) == value)
        return buf;
    }
  return g_ascii_formatd (buf, G_ASCII_DTOSTR_BUF_SIZE, "%.17g", value);
}

/* JSON has no NaN/inf, but validated parameters never hold them. */
static void
append_number (GString *s, double v)
{
  if (isfinite (v))
    {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append (s, sv_format_double (buf, v));
    }
  else
    {
      g_string_append (s, "null");
    }
}

static void
append_triple (GString *s, const double v[3], const char *open, const char *sep, const char *close)
{
  g_string_append (s, open);
  for (int i = 0; i < 3; i++)
    {
      if (i > 0)
        g_string_append (s, sep);
      append_number (s, v[i]);
    }
  g_string_append (s, close);
}

static void
append_json_value (GString *s, const SvSlicParams *p, const SvParamField *f)
{
  switch (f->type)
    {
    case SV_PARAM_INT64:
      g_string_append_printf (s, "%" G_GINT64_FORMAT, *CMEMBER (p, f, gint64));
      break;
    case SV_PARAM_INT:
      g_string_append_printf (s, "%d", *CMEMBER (p, f, int));
      break;
    case SV_PARAM_DOUBLE:
      append_number (s, *CMEMBER (p, f, double));
      break;
    case SV_PARAM_BOOL:
      g_string_append (s, *CMEMBER (p, f, gboolean) ? "true" : "false");
      break;
    case SV_PARAM_SIGMA:
      if (p->sigma_per_axis)
        append_triple (s, p->sigma, "[", ", ", "]");
      else
        append_number (s, p->sigma[0]);
      break;
    case SV_PARAM_TRIPLE:
      append_triple (s, CMEMBER (p, f, double), "[", ", ", "]");
      break;
    case SV_PARAM_CONVERT2LAB:
      switch (*CMEMBER (p, f, SvConvert2Lab))
        {
        case SV_CONVERT2LAB_YES:
          g_string_append (s, "true");
          break;
        case SV_CONVERT2LAB_NO:
          g_string_append (s, "false");
          break;
        case SV_CONVERT2LAB_AUTO:
        default:
          g_string_append (s, "null");
          break;
        }
      break;
    case SV_PARAM_WORD:
      {
        g_autofree char *word = word_of (f, *CMEMBER (p, f, int));
        g_string_append_printf (s, "\"%s\"", word);
      }
      break;
    }
}

char *
sv_slic_params_to_json (const SvSlicParams *params)
{
  GString *s;

  g_return_val_if_fail (params != NULL, NULL);
  s = g_string_new ("{");
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      g_string_append_printf (s, "%s\"%s\": ", i > 0 ? ", " : "", fields[i].name);
      append_json_value (s, params, &fields[i]);
    }
  g_string_append (s, "}");
  return g_string_free (s, FALSE);
}

static void
append_option (GString *command, const SvSlicParams *p, const SvParamField *f)
{
  gboolean on;

  switch (f->type)
    {
    case SV_PARAM_BOOL:
      on = *CMEMBER (p, f, gboolean);
      if (on || (f->flags & SV_PARAM_FLAG_NEGATABLE))
        g_string_append_printf (command, " --%s%s", on ? "" : "no-", f->option);
      return;
    case SV_PARAM_CONVERT2LAB:
      /* auto is the default and has no option. */
      if (*CMEMBER (p, f, SvConvert2Lab) != SV_CONVERT2LAB_AUTO)
        g_string_append_printf (command, " --%s%s",
                                *CMEMBER (p, f, SvConvert2Lab) == SV_CONVERT2LAB_YES ? "" : "no-",
                                f->option);
      return;
    case SV_PARAM_SIGMA:
      g_string_append_printf (command, " --%s ", f->option);
      if (p->sigma_per_axis)
        append_triple (command, p->sigma, "", ",", "");
      else
        append_number (command, p->sigma[0]);
      return;
    case SV_PARAM_TRIPLE:
      g_string_append_printf (command, " --%s ", f->option);
      append_triple (command, CMEMBER (p, f, double), "", ",", "");
      return;
    case SV_PARAM_INT64:
    case SV_PARAM_INT:
    case SV_PARAM_DOUBLE:
      g_string_append_printf (command, " --%s ", f->option);
      append_json_value (command, p, f);
      return;
    case SV_PARAM_WORD:
      {
        g_autofree char *word = word_of (f, *CMEMBER (p, f, int));
        g_string_append_printf (command, " --%s %s", f->option, word);
      }
      return;
    }
}

void
sv_slic_params_append_cli (const SvSlicParams *params, GString *command)
{
  g_return_if_fail (params != NULL && command != NULL);

  /* convert2lab goes last, where commands have always had it, so that a
   * copied command stays the same text. */
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (fields[i].type != SV_PARAM_CONVERT2LAB)
      append_option (command, params, &fields[i]);
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (fields[i].type == SV_PARAM_CONVERT2LAB)
      append_option (command, params, &fields[i]);
}

static void
append_python_value (GString *call, const SvSlicParams *p, const SvParamField *f, guint nz,
                     guint nc)
{
  SvConvert2Lab lab;

  switch (f->type)
    {
    case SV_PARAM_BOOL:
      g_string_append (call, *CMEMBER (p, f, gboolean) ? "True" : "False");
      return;
    case SV_PARAM_CONVERT2LAB:
      lab = *CMEMBER (p, f, SvConvert2Lab);
      if (lab == SV_CONVERT2LAB_AUTO && (nz == 0 || nc == 0))
        g_string_append (call, "None");
      else if (lab == SV_CONVERT2LAB_AUTO)
        /* supervox.slic's None follows scikit-image (any 3-channel image);
         * the engine's auto converts 2D images only. */
        g_string_append (call, nz == 1 && nc == 3 ? "True" : "False");
      else
        g_string_append (call, lab == SV_CONVERT2LAB_YES ? "True" : "False");
      return;
    case SV_PARAM_SIGMA:
      if (p->sigma_per_axis)
        append_triple (call, p->sigma, "[", ", ", "]");
      else
        append_number (call, p->sigma[0]);
      return;
    case SV_PARAM_TRIPLE:
      append_triple (call, CMEMBER (p, f, double), "[", ", ", "]");
      return;
    case SV_PARAM_INT64:
    case SV_PARAM_INT:
    case SV_PARAM_DOUBLE:
      append_json_value (call, p, f);
      return;
    case SV_PARAM_WORD:
      {
        g_autofree char *word = word_of (f, *CMEMBER (p, f, int));
        g_string_append_printf (call, "'%s'", word);
      }
      return;
    }
}

void
sv_slic_params_append_python (const SvSlicParams *params, guint nz, guint nc, GString *call)
{
  g_return_if_fail (params != NULL && call != NULL);

  /* The table's names are scikit-image's, which supervox.slic takes. */
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      g_string_append_printf (call, ", %s=", fields[i].name);
      append_python_value (call, params, &fields[i], nz, nc);
    }
}

static const char *const convert2lab_words[] = { "auto", "yes", "no" };

/* g_key_file_set_double{,_list} write %.17g; a preset reads better with
 * the shortest text, and reads back the same. */
static void
keyfile_set_numbers (GKeyFile *kf, const char *group, const char *key, const double *v, guint n,
                     gboolean list)
{
  g_autoptr (GString) text = g_string_new (NULL);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  for (guint i = 0; i < n; i++)
    {
      g_string_append (text, sv_format_double (buf, v[i]));
      if (list)
        g_string_append_c (text, ';');
    }
  g_key_file_set_value (kf, group, key, text->str);
}

void
sv_slic_params_to_keyfile (const SvSlicParams *p, GKeyFile *kf, const char *group)
{
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const SvParamField *f = &fields[i];
      switch (f->type)
        {
        case SV_PARAM_INT64:
          g_key_file_set_int64 (kf, group, f->name, *CMEMBER (p, f, gint64));
          break;
        case SV_PARAM_INT:
          g_key_file_set_integer (kf, group, f->name, *CMEMBER (p, f, int));
          break;
        case SV_PARAM_DOUBLE:
          keyfile_set_numbers (kf, group, f->name, CMEMBER (p, f, double), 1, FALSE);
          break;
        case SV_PARAM_BOOL:
          g_key_file_set_boolean (kf, group, f->name, *CMEMBER (p, f, gboolean));
          break;
        case SV_PARAM_SIGMA:
          /* A scalar is one number, per axis a list of three. */
          if (p->sigma_per_axis)
            keyfile_set_numbers (kf, group, f->name, p->sigma, 3, TRUE);
          else
            keyfile_set_numbers (kf, group, f->name, p->sigma, 1, FALSE);
          break;
        case SV_PARAM_TRIPLE:
          keyfile_set_numbers (kf, group, f->name, CMEMBER (p, f, double), 3, TRUE);
          break;
        case SV_PARAM_CONVERT2LAB:
          g_key_file_set_string (kf, group, f->name,
                                 convert2lab_words[*CMEMBER (p, f, SvConvert2Lab)]);
          break;
        case SV_PARAM_WORD:
          {
            g_autofree char *word = word_of (f, *CMEMBER (p, f, int));
            g_key_file_set_string (kf, group, f->name, word);
          }
          break;
        }
    }
}

static gboolean
read_field (SvSlicParams *p, GKeyFile *kf, const char *group, const SvParamField *f, GError **error)
{
  GError *local = NULL;
  g_autofree double *list = NULL;
  g_autofree char *word = NULL;
  gsize n = 0;

  switch (f->type)
    {
    case SV_PARAM_INT64:
      *MEMBER (p, f, gint64) = g_key_file_get_int64 (kf, group, f->name, &local);
      break;
    case SV_PARAM_INT:
      *MEMBER (p, f, int) = g_key_file_get_integer (kf, group, f->name, &local);
      break;
    case SV_PARAM_DOUBLE:
      *MEMBER (p, f, double) = g_key_file_get_double (kf, group, f->name, &local);
      break;
    case SV_PARAM_BOOL:
      *MEMBER (p, f, gboolean) = g_key_file_get_boolean (kf, group, f->name, &local);
      break;
    case SV_PARAM_SIGMA:
      list = g_key_file_get_double_list (kf, group, f->name, &n, &local);
      if (local == NULL && n == 3)
        {
          memcpy (p->sigma, list, sizeof p->sigma);
          p->sigma_per_axis = TRUE;
        }
      else if (local == NULL && n == 1)
        {
          p->sigma[0] = list[0];
          p->sigma_per_axis = FALSE;
        }
      else if (local == NULL)
        g_set_error (&local, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                     "key %s holds %" G_GSIZE_FORMAT " values: one or three (z, y, x)", f->name, n);
      break;
    case SV_PARAM_TRIPLE:
      /* Anything but three values leaves the parameter as it was. */
      list = g_key_file_get_double_list (kf, group, f->name, &n, NULL);
      if (list != NULL && n == 3)
        memcpy (MEMBER (p, f, double), list, 3 * sizeof (double));
      break;
    case SV_PARAM_CONVERT2LAB:
      word = g_key_file_get_string (kf, group, f->name, &local);
      for (guint w = 0; local == NULL && w < G_N_ELEMENTS (convert2lab_words); w++)
        if (g_strcmp0 (word, convert2lab_words[w]) == 0)
          {
            *MEMBER (p, f, SvConvert2Lab) = (SvConvert2Lab)w;
            return TRUE;
          }
      if (local == NULL)
        g_set_error (&local, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                     "key %s is \"%s\": auto, yes or no", f->name, word);
      break;
    case SV_PARAM_WORD:
      word = g_key_file_get_string (kf, group, f->name, &local);
      if (local == NULL && word_index (f, word) >= 0)
        {
          *MEMBER (p, f, int) = word_index (f, word);
          return TRUE;
        }
      if (local == NULL)
        {
          g_autofree char *choices = g_strdelimit (g_strdup (f->arg), "|", '/');
          g_set_error (&local, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                       "key %s is \"%s\": one of %s", f->name, word, choices);
        }
      break;
    }
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_slic_params_from_keyfile (SvSlicParams *params, GKeyFile *keyfile, const char *group,
                             GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (g_key_file_has_key (keyfile, group, fields[i].name, NULL)
        && !read_field (params, keyfile, group, &fields[i], error))
      return FALSE;
  return TRUE;
}

gboolean
sv_parse_double (const char *option, const char *text, double *value, GError **error)
{
  char *end = NULL;
  double v;

  if (text == NULL || *text == '\0')
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s expects a number, got an empty value", option);
      return FALSE;
    }
  errno = 0;
  v = g_ascii_strtod (text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !isfinite (v))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s expects a finite number, got '%s'", option, text);
      return FALSE;
    }
  *value = v;
  return TRUE;
}

gboolean
sv_parse_int64 (const char *option, const char *text, gint64 min, gint64 max, gint64 *value,
                GError **error)
{
  char *end = NULL;
  gint64 v;

  if (text == NULL || *text == '\0')
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s expects a whole number, got an empty value", option);
      return FALSE;
    }
  errno = 0;
  v = g_ascii_strtoll (text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s expects a whole number, got '%s'", option, text);
      return FALSE;
    }
  if (v < min || v > max)
    {
      if (max == G_MAXINT64 || max == G_MAXINT32)
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                     "%s must be >= %" G_GINT64_FORMAT ", got %" G_GINT64_FORMAT, option, min, v);
      else
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                     "%s must be between %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                     ", got %" G_GINT64_FORMAT,
                     option, min, max, v);
      return FALSE;
    }
  *value = v;
  return TRUE;
}

gboolean
sv_parse_double_list (const char *option, const char *text, double *values, guint max_values,
                      guint *n_values, GError **error)
{
  g_auto (GStrv) parts = NULL;
  guint n;

  if (text == NULL || *text == '\0')
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s expects a number or a list like z,y,x, got an empty value", option);
      return FALSE;
    }
  parts = g_strsplit (text, ",", -1);
  n = g_strv_length (parts);
  if (n > max_values)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s takes at most %u values, got %u ('%s')", option, max_values, n, text);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    {
      char *end = NULL;
      const char *part = g_strstrip (parts[i]);
      double v;

      errno = 0;
      v = g_ascii_strtod (part, &end);
      if (*part == '\0' || end == part || *end != '\0' || errno == ERANGE || !isfinite (v))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "%s expects finite numbers separated by commas, got '%s'", option, text);
          return FALSE;
        }
      values[i] = v;
    }
  *n_values = n;
  return TRUE;
}

/* A parameter of two values (start_label) takes exactly their spelling. */
static gboolean
parse_choice (const SvParamField *f, const char *option, const char *text, gint64 *value,
              GError **error)
{
  for (gint64 v = (gint64)f->min; v <= f->max; v++)
    {
      char spelled[32];
      g_snprintf (spelled, sizeof spelled, "%" G_GINT64_FORMAT, v);
      if (g_strcmp0 (text, spelled) == 0)
        {
          *value = v;
          return TRUE;
        }
    }
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
               "%s must be %" G_GINT64_FORMAT " or %" G_GINT64_FORMAT ", got %s", option,
               (gint64)f->min, f->max, text);
  return FALSE;
}

gboolean
sv_slic_param_parse (const SvParamField *f, const char *text, SvSlicParams *params, GError **error)
{
  g_autofree char *option = g_strconcat ("--", f->option, NULL);
  gint64 whole = 0;
  double real = 0;

  switch (f->type)
    {
    case SV_PARAM_INT64:
    case SV_PARAM_INT:
      if (f->max == (gint64)f->min + 1
              ? !parse_choice (f, option, text, &whole, error)
              : !sv_parse_int64 (option, text, (gint64)f->min, f->max, &whole, error))
        return FALSE;
      if (f->type == SV_PARAM_INT64)
        *MEMBER (params, f, gint64) = whole;
      else
        *MEMBER (params, f, int) = (int)whole;
      return TRUE;
    case SV_PARAM_DOUBLE:
      if (!sv_parse_double (option, text, &real, error))
        return FALSE;
      if ((f->bound == SV_PARAM_BOUND_ABOVE && !(real > f->min))
          || (f->bound == SV_PARAM_BOUND_AT_LEAST && real < f->min))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "%s must be %s %g, got %s", option,
                       f->bound == SV_PARAM_BOUND_ABOVE ? ">" : ">=", f->min, text);
          return FALSE;
        }
      *MEMBER (params, f, double) = real;
      return TRUE;
    case SV_PARAM_WORD:
      whole = word_index (f, text);
      if (whole < 0)
        {
          g_auto (GStrv) words = g_strsplit (f->arg, "|", -1);
          g_autofree char *listed = g_strjoinv (" or ", words);
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "%s must be %s, got '%s'", option, listed, text);
          return FALSE;
        }
      *MEMBER (params, f, int) = (int)whole;
      return TRUE;
    case SV_PARAM_BOOL:
    case SV_PARAM_SIGMA:
    case SV_PARAM_TRIPLE:
    case SV_PARAM_CONVERT2LAB:
      break;
    }
  g_return_val_if_reached (FALSE);
}

/* The words a list parameter takes instead of numbers: the entries of its
 * placeholder that are spelled in lower case ("Z,Y,X|file|file-relative"). */
static GStrv
field_words (const SvParamField *f)
{
  g_auto (GStrv) forms = g_strsplit (f->arg != NULL ? f->arg : "", "|", -1);
  g_autoptr (GStrvBuilder) words = g_strv_builder_new ();

  for (guint i = 0; forms[i] != NULL; i++)
    if (g_ascii_islower (forms[i][0]))
      g_strv_builder_add (words, forms[i]);
  return g_strv_builder_end (words);
}

gboolean
sv_slic_param_parse_list (const SvParamField *f, const char *text, double values[3],
                          guint *n_values, int *word, GError **error)
{
  g_autofree char *option = g_strconcat ("--", f->option, NULL);
  g_auto (GStrv) words = field_words (f);
  /* A triple may leave out z (a 2D image); sigma may be one value. */
  const guint least = f->type == SV_PARAM_TRIPLE ? 2 : 1;

  g_return_val_if_fail (f->type == SV_PARAM_SIGMA || f->type == SV_PARAM_TRIPLE, FALSE);
  *word = -1;
  *n_values = 0;
  for (guint i = 0; words[i] != NULL; i++)
    if (g_strcmp0 (text, words[i]) == 0)
      {
        *word = (int)i;
        return TRUE;
      }
  if (!sv_parse_double_list (option, text, values, 3, n_values, error))
    return FALSE;
  if (*n_values < least)
    {
      g_autoptr (GString) also = g_string_new (NULL);
      guint n = g_strv_length (words);
      for (guint i = 0; i < n; i++)
        g_string_append_printf (also, "%s'%s'",
                                i == 0       ? ", "
                                : i + 1 == n ? " or "
                                             : ", ",
                                words[i]);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s expects z,y,x (or y,x for a 2D image)%s, got %s", option, also->str, text);
      return FALSE;
    }
  for (guint i = 0; i < *n_values; i++)
    if ((f->bound == SV_PARAM_BOUND_ABOVE && !(values[i] > f->min))
        || (f->bound == SV_PARAM_BOUND_AT_LEAST && values[i] < f->min))
      {
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                     "%s must be %s %g%s, got %s", option,
                     f->bound == SV_PARAM_BOUND_ABOVE ? ">" : ">=", f->min,
                     f->type == SV_PARAM_TRIPLE ? " on every axis" : "", text);
        return FALSE;
      }
  return TRUE;
}

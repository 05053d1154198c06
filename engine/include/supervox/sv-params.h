/* Supervox engine: SLIC parameters in scikit-image's vocabulary. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  SV_CONVERT2LAB_AUTO, /* Lab when the image is 2D with 3 channels */
  SV_CONVERT2LAB_YES,  /* error unless 3 channels */
  SV_CONVERT2LAB_NO,
} SvConvert2Lab;

/* What the connectivity step does with a piece below the minimum size that
 * touches no relabelled voxel (its search finds no label to join). */
typedef enum
{
  /* It keeps a new label of its own and the counter moves on, so every
   * label is one connected piece (scikit-image PR #8334, issue #8295). */
  SV_CONNECTIVITY_RULE_CONNECTED,
  /* scikit-image <= 0.26: it keeps the counter's label without advancing
   * it, and the next piece, wherever it lies, gets the same label. */
  SV_CONNECTIVITY_RULE_LEGACY,
} SvConnectivityRule;

typedef struct
{
  gint64 n_segments;         /* approximate number of seeds, >= 1 */
  double compactness;        /* > 0 */
  int max_num_iter;          /* >= 0; exactly this many iterations run */
  double sigma[3];           /* z, y, x Gaussian sigma */
  gboolean sigma_per_axis;   /* FALSE: sigma[0] is a scalar, divided by spacing per axis
                              * (sigma[1], sigma[2] ignored); TRUE: used as given */
  double spacing[3];         /* z, y, x voxel size; all > 0; z is 1 for 2D */
  SvConvert2Lab convert2lab;
  gboolean enforce_connectivity;
  double min_size_factor;    /* default 0.5 */
  double max_size_factor;    /* default 3.0 */
  gboolean slic_zero;
  int start_label;           /* 0 or 1 */
  SvConnectivityRule connectivity_rule; /* default CONNECTED */
} SvSlicParams;

/* scikit-image's defaults: 100 segments, compactness 10, 10 iterations,
 * sigma 0, unit spacing, convert2lab auto, connectivity on, 0.5 / 3.0,
 * no SLIC-zero, start_label 1; the connected connectivity rule. */
void sv_slic_params_init_defaults (SvSlicParams *params);

/* Checks ranges; errors are SV_ENGINE_ERROR_INVALID_PARAM with a message
 * that names the parameter and the rule ("compactness must be > 0, got -1"). */
gboolean sv_slic_params_validate (const SvSlicParams *params, GError **error);

/* The sigma actually applied per axis (z, y, x), in voxels: a scalar sigma
 * divided by spacing in float32 as scikit-image does, or the per-axis list. */
void sv_slic_params_effective_sigma (const SvSlicParams *params, float sigma_zyx[3]);

/* TRUE when a and b give the same prepared image (rescale, Lab, smoothing),
 * so a run may reuse it: compares sigma, spacing (when sigma is scalar) and
 * convert2lab. */
gboolean sv_slic_params_same_prepare (const SvSlicParams *a, const SvSlicParams *b);

/* Teaching mode: the state after stop_after_iteration iterations, before
 * connectivity, is a run with at most that many iterations and no
 * connectivity; out receives those parameters (params when
 * stop_after_iteration < 0). out may be params. */
void sv_slic_params_apply_teaching (const SvSlicParams *params, int stop_after_iteration,
                                    SvSlicParams *out);

/* ---- the parameters described once (params-fields.c) ----
 * Every writer and reader of SvSlicParams walks this table: the JSON
 * object and the sidecar, the supervox-cli options of a command and their
 * parsing (sv_slic_param_parse, sv_slic_param_parse_list), --help, the
 * window's presets. A new parameter is one row here and its field in
 * SvSlicParams; what the table cannot say stays apart: its check across
 * fields in sv_slic_params_validate, its widget in the window's panel, and
 * its field in the C API's fixed-layout SupervoxParams. */

typedef enum
{
  SV_PARAM_INT64,       /* gint64 */
  SV_PARAM_INT,         /* int */
  SV_PARAM_DOUBLE,      /* double */
  SV_PARAM_BOOL,        /* gboolean */
  SV_PARAM_SIGMA,       /* sigma[3] + sigma_per_axis: a scalar or z, y, x */
  SV_PARAM_TRIPLE,      /* double[3], z, y, x */
  SV_PARAM_CONVERT2LAB, /* SvConvert2Lab: auto (null), yes (true), no (false) */
  SV_PARAM_WORD,        /* an enum stored as int: the index of one of the words of `arg`
                         * ("connected|legacy"), written as that word */
} SvParamType;

typedef enum
{
  SV_PARAM_FLAG_NONE = 0,
  /* A boolean with a --no- option; without it the option is written only
   * when TRUE. */
  SV_PARAM_FLAG_NEGATABLE = 1 << 0,
} SvParamFlags;

/* What a number read from text must satisfy (sv_slic_param_parse). */
typedef enum
{
  SV_PARAM_BOUND_NONE,
  SV_PARAM_BOUND_AT_LEAST, /* value >= min (whole numbers: min <= value <= max) */
  SV_PARAM_BOUND_ABOVE,    /* value > min */
} SvParamBound;

typedef struct
{
  const char *name;   /* scikit-image's: the JSON and preset key */
  const char *option; /* supervox-cli's, without "--" */
  SvParamType type;
  gsize offset;       /* of the field in SvSlicParams */
  SvParamFlags flags;
  SvParamBound bound;
  double min;         /* the bound's limit */
  gint64 max;         /* whole numbers: the largest value */
  const char *arg;    /* the value's placeholder in --help ("N"); NULL for switches */
  const char *help;   /* one line of --help */
  const char *help_no; /* the --no- option's line (SV_PARAM_FLAG_NEGATABLE) */
} SvParamField;

/* The table, in the order of the JSON object; *n_fields receives its size. */
const SvParamField *sv_slic_param_fields (guint *n_fields);

/* Reads a whole-number, a real or a word parameter (SV_PARAM_INT64, _INT,
 * _DOUBLE, _WORD) from text as supervox-cli spells it, checks its bound and stores it;
 * errors are SV_ENGINE_ERROR_INVALID_PARAM naming the option
 * ("--compactness must be > 0, got -1"). */
gboolean sv_slic_param_parse (const SvParamField *field, const char *text, SvSlicParams *params,
                              GError **error);

/* Reads a list parameter (SV_PARAM_SIGMA, SV_PARAM_TRIPLE) as supervox-cli
 * spells it: one of the field's words (the lower-case forms of its `arg`,
 * *word receives the index; spacing's "file", "file-relative"), or 1 to 3
 * comma-separated values (a triple at least 2: y,x for a 2D image), each
 * within the field's bound, into values[0 .. *n_values) in the order given
 * (*word is -1). How fewer than three values fill z, y, x depends on the
 * image and is the front end's rule. Errors as sv_slic_param_parse. */
gboolean sv_slic_param_parse_list (const SvParamField *field, const char *text, double values[3],
                                   guint *n_values, int *word, GError **error);

/* `value` as the shortest decimal text that reads back as the same double
 * ("0.2", not "0.20000000000000001"), in the C locale, into buf; returns
 * buf. Commands, sidecars and presets write numbers with it, so that a
 * copied command reproduces the run bit for bit and still reads well. */
char *sv_format_double (char buf[G_ASCII_DTOSTR_BUF_SIZE], double value);

/* A finite number, or a whole number within [min, max], read from text;
 * messages name `option` ("--threads expects a whole number, got 'x'"). */
gboolean sv_parse_double (const char *option, const char *text, double *value, GError **error);
gboolean sv_parse_int64 (const char *option, const char *text, gint64 min, gint64 max,
                         gint64 *value, GError **error);
/* A comma-separated list of 1..max_values finite numbers ("2,1,1");
 * *n_values receives the count. */
gboolean sv_parse_double_list (const char *option, const char *text, double *values,
                               guint max_values, guint *n_values, GError **error);

/* One JSON object with every parameter (keys are scikit-image's names).
 * Free with g_free. */
char *sv_slic_params_to_json (const SvSlicParams *params);

/* Appends the supervox-cli options that reproduce these parameters bit for
 * bit (every parameter spelled out) to `command`. */
void sv_slic_params_append_cli (const SvSlicParams *params, GString *command);

/* Appends the same parameters as keyword arguments of supervox.slic
 * (Python; ", n_segments=100, compactness=10, …"), each one spelled out.
 * convert2lab "auto" is resolved as the engine resolves it for a volume of
 * nz slices and nc channels (Lab for nz 1 and nc 3) and written as True or
 * False; nz or nc 0 writes None. */
void sv_slic_params_append_python (const SvSlicParams *params, guint nz, guint nc, GString *call);

/* Writes every parameter into `group` of a key file under its JSON name. */
void sv_slic_params_to_keyfile (const SvSlicParams *params, GKeyFile *keyfile,
                                const char *group);

/* Reads the parameters that `group` of a key file has into params (the
 * others keep their values); fails with the key file's error on a value of
 * the wrong type. Does not validate. */
gboolean sv_slic_params_from_keyfile (SvSlicParams *params, GKeyFile *keyfile, const char *group,
                                      GError **error);

/* Voxel spacing relative to the finest axis, as the window uses a file's
 * spacing by default (so that a stack in µm and the same stack in nm give
 * the same run): out[a] = in[a] / min(in), rounded to six significant
 * digits so that 0.03 / 0.01 is 3. in[] must be > 0. */
void sv_spacing_relative_to_finest (const double in[3], double out[3]);

/* The same rounding for one value: value / finest to six digits. */
double sv_spacing_relative (double value, double finest);

/* `value` (> 0) rounded to `digits` significant decimal digits, as the
 * double nearest that decimal (570 / 1000, not 570 * 0.001, which is
 * 0.5700000000000001), so that it prints as it reads ("0.57"). */
double sv_round_significant (double value, int digits);

G_END_DECLS

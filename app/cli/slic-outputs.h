/* supervox-cli slic: where each input's labels go (-o as one file, a folder
 * or a name template) and the checks, made before anything is computed,
 * that no output overwrites an input or another output. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  SV_CLI_OUTPUT_FILE,     /* -o OUT.tif: exactly one input */
  SV_CLI_OUTPUT_FOLDER,   /* -o DIR/ or an existing folder: DIR/{stem}.tif */
  SV_CLI_OUTPUT_TEMPLATE, /* -o 'out/{stem}_labels.tif' */
} SvCliOutputKind;

/* What -o means: a template when it holds '{', a folder when it ends in
 * '/' or names an existing folder, else one file. */
SvCliOutputKind sv_cli_output_kind (const char *output);

/* The label file of each input (NULL-terminated; g_strfreev), -o expanded
 * for each. Placeholders: {stem} (file name without its extension, and
 * without ".ome" before it), {name} (file name), {dir} (the input's
 * folder, "." for a bare name), {index} (position from 1, zero-padded to
 * the width of the count). Fails on an unknown or unclosed placeholder,
 * and on several inputs with one plain file name. */
char **sv_cli_slic_output_names (const char *const *inputs, const char *output, GError **error);

/* Refuses two inputs whose labels or sidecars would be the same file, and
 * an output or sidecar that is one of the inputs or the mask (may be
 * NULL). Compares normalised paths and, for files that exist, their
 * identity on disk (links). */
gboolean sv_cli_slic_check_outputs (const char *const *inputs, const char *const *outputs,
                                    const char *mask, GError **error);

/* Creates the folders that the outputs go into (not for the plain file
 * form, where a missing folder is a typo), then checks that each output
 * can be written (sv_cli_check_output). */
gboolean sv_cli_slic_prepare_outputs (const char *const *outputs, SvCliOutputKind kind,
                                      GError **error);

G_END_DECLS

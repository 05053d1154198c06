/* Supervox engine: a small streaming JSON writer (objects, arrays, scalars),
 * compact (no spaces), for the sidecar and the CLI's --json output. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SvJsonWriter SvJsonWriter;

SvJsonWriter *sv_json_writer_new (void);
void sv_json_writer_free (SvJsonWriter *writer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvJsonWriter, sv_json_writer_free)

/* Containers. Inside an object, call sv_json_writer_key before each value. */
void sv_json_writer_begin_object (SvJsonWriter *writer);
void sv_json_writer_end_object (SvJsonWriter *writer);
void sv_json_writer_begin_array (SvJsonWriter *writer);
void sv_json_writer_end_array (SvJsonWriter *writer);
void sv_json_writer_key (SvJsonWriter *writer, const char *key);

/* Values. A NULL string is written as null; NaN and ±inf as null. */
void sv_json_writer_string (SvJsonWriter *writer, const char *value);
void sv_json_writer_int (SvJsonWriter *writer, gint64 value);
void sv_json_writer_double (SvJsonWriter *writer, double value);
/* A duration in seconds, rounded to the microsecond ("0.001746"). */
void sv_json_writer_seconds (SvJsonWriter *writer, double value);
void sv_json_writer_bool (SvJsonWriter *writer, gboolean value);
void sv_json_writer_null (SvJsonWriter *writer);
/* Inserts text that is already valid JSON (e.g. sv_slic_params_to_json). */
void sv_json_writer_raw (SvJsonWriter *writer, const char *json);

/* The document so far; owned by the writer. */
const char *sv_json_writer_get (SvJsonWriter *writer);

/* Appends `value` as a JSON string literal (quotes and escapes) to `out`. */
void sv_json_append_string (GString *out, const char *value);

G_END_DECLS

#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-json-writer.h"

#include <math.h>
#include <string.h>

#include "supervox/sv-params.h"

struct _SvJsonWriter
{
  GString *out;
  /* One entry per open container: TRUE until its first member is written. */
  GArray *first;
  gboolean after_key;
};

SvJsonWriter *
sv_json_writer_new (void)
{
  SvJsonWriter *writer = g_new0 (SvJsonWriter, 1);

  writer->out = g_string_new (NULL);
  writer->first = g_array_new (FALSE, FALSE, sizeof (gboolean));
  return writer;
}

void
sv_json_writer_free (SvJsonWriter *writer)
{
  if (writer == NULL)
    return;
  g_string_free (writer->out, TRUE);
  g_array_unref (writer->first);
  g_free (writer);
}

/* Writes the comma that separates this value from the previous member. */
static void
before_value (SvJsonWriter *writer)
{
  gboolean *first;

  if (writer->after_key)
    {
      writer->after_key = FALSE;
      return;
    }
  if (writer->first->len == 0)
    return;
  first = &g_array_index (writer->first, gboolean, writer->first->len - 1);
  if (!*first)
    g_string_append_c (writer->out, ',');
  *first = FALSE;
}

static void
push (SvJsonWriter *writer, char open)
{
  gboolean first = TRUE;

  before_value (writer);
  g_string_append_c (writer->out, open);
  g_array_append_val (writer->first, first);
}

static void
pop (SvJsonWriter *writer, char close)
{
  g_return_if_fail (writer->first->len > 0);
  g_array_set_size (writer->first, writer->first->len - 1);
  g_string_append_c (writer->out, close);
}

void
sv_json_writer_begin_object (SvJsonWriter *writer)
{
  push (writer, '{');
}

void
sv_json_writer_end_object (SvJsonWriter *writer)
{
  pop (writer, '}');
}

void
sv_json_writer_begin_array (SvJsonWriter *writer)
{
  push (writer, '[');
}

void
sv_json_writer_end_array (SvJsonWriter *writer)
{
  pop (writer, ']');
}

void
sv_json_append_string (GString *out, const char *value)
{
  g_string_append_c (out, '"');
  for (const guchar *p = (const guchar *)value; *p != '\0'; p++)
    {
      switch (*p)
        {
        case '"':
          g_string_append (out, "\\\"");
          break;
        case '\\':
          g_string_append (out, "\\\\");
          break;
        case '\n':
          g_string_append (out, "\\n");
          break;
        case '\r':
          g_string_append (out, "\\r");
          break;
        case '\t':
          g_string_append (out, "\\t");
          break;
        default:
          if (*p < 0x20)
            g_string_append_printf (out, "\\u%04x", *p);
          else
            g_string_append_c (out, (char)*p);
        }
    }
  g_string_append_c (out, '"');
}

void
sv_json_writer_key (SvJsonWriter *writer, const char *key)
{
  before_value (writer);
  sv_json_append_string (writer->out, key);
  g_string_append_c (writer->out, ':');
  writer->after_key = TRUE;
}

void
sv_json_writer_string (SvJsonWriter *writer, const char *value)
{
  if (value == NULL)
    {
      sv_json_writer_null (writer);
      return;
    }
  before_value (writer);
  /* File names need not be UTF-8; JSON must be. */
  if (g_utf8_validate (value, -1, NULL))
    sv_json_append_string (writer->out, value);
  else
    {
      g_autofree char *valid = g_utf8_make_valid (value, -1);
      sv_json_append_string (writer->out, valid);
    }
}

void
sv_json_writer_int (SvJsonWriter *writer, gint64 value)
{
  before_value (writer);
  g_string_append_printf (writer->out, "%" G_GINT64_FORMAT, value);
}

void
sv_json_writer_double (SvJsonWriter *writer, double value)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (value))
    {
      sv_json_writer_null (writer);
      return;
    }
  before_value (writer);
  g_string_append (writer->out, sv_format_double (buf, value));
}

void
sv_json_writer_seconds (SvJsonWriter *writer, double value)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  gsize len;

  if (!isfinite (value))
    {
      sv_json_writer_null (writer);
      return;
    }
  before_value (writer);
  /* Clock readings carry no more than microseconds; the binary remainder
   * (0.0017459999999118736) is noise. */
  g_ascii_formatd (buf, sizeof buf, "%.6f", value);
  len = strlen (buf);
  while (len > 2 && buf[len - 1] == '0' && buf[len - 2] != '.')
    buf[--len] = '\0';
  g_string_append (writer->out, buf);
}

void
sv_json_writer_bool (SvJsonWriter *writer, gboolean value)
{
  before_value (writer);
  g_string_append (writer->out, value ? "true" : "false");
}

void
sv_json_writer_null (SvJsonWriter *writer)
{
  before_value (writer);
  g_string_append (writer->out, "null");
}

void
sv_json_writer_raw (SvJsonWriter *writer, const char *json)
{
  before_value (writer);
  g_string_append (writer->out, json);
}

const char *
sv_json_writer_get (SvJsonWriter *writer)
{
  return writer->out->str;
}

/* Supervox GUI: one entry of the window's pin history and its words. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-pin.h"

#include <math.h>

#include "sv-element-words.h"

SvPin *
sv_pin_new_run (guint id, SvJobResult *result, const SvSlicParams *params, const char *backend)
{
  SvPin *pin = g_new0 (SvPin, 1);

  pin->id = id;
  pin->result = sv_job_result_ref (result);
  pin->params = *params;
  g_strlcpy (pin->backend, backend, sizeof pin->backend);
  return pin;
}

SvPin *
sv_pin_new_file (guint id, SvJobResult *result, const char *path)
{
  SvPin *pin = g_new0 (SvPin, 1);

  pin->id = id;
  pin->result = result;
  pin->path = g_strdup (path);
  pin->params = result->params;
  return pin;
}

void
sv_pin_free (SvPin *pin)
{
  if (!pin)
    return;
  g_clear_pointer (&pin->result, sv_job_result_unref);
  g_clear_pointer (&pin->quality, sv_quality_unref);
  g_free (pin->path);
  g_free (pin);
}

char *
sv_pin_title (const SvPin *pin)
{
  return pin->path ? g_path_get_basename (pin->path) : g_strdup_printf ("Pin %u", pin->id);
}

char *
sv_pin_name (const SvPin *pin)
{
  return pin->path ? g_path_get_basename (pin->path) : g_strdup_printf ("pin %u", pin->id);
}

char *
sv_pin_summary (const SvPin *pin, gboolean planar)
{
  const SvElementWords *words = sv_element_words (planar);
  gsize n = pin->result->stats.n_labels;
  g_autofree char *count = sv_format_count (n);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (pin->path)
    return g_strdup_printf ("%s %s, read in %.2f s", count,
                            n == 1 ? words->supervoxel : words->supervoxels,
                            pin->result->seconds_total);
  return g_strdup_printf ("%" G_GINT64_FORMAT " → %s %s · compactness %s", pin->params.n_segments,
                          count, n == 1 ? words->supervoxel : words->supervoxels,
                          sv_format_double (buf, pin->params.compactness));
}

char *
sv_pin_measures (const SvPin *pin)
{
  const SvQuality *q = pin->quality;
  GString *s;

  if (!q)
    return g_strdup ("measuring…");
  s = g_string_new (NULL);
  g_string_append_printf (s, "EV %.3f · measured compactness %.3f", q->metrics.explained_variation,
                          q->metrics.compactness);
  if (q->has_truth)
    g_string_append_printf (s, " · recall %.3f · accuracy %.3f", q->metrics.boundary_recall,
                            q->metrics.asa);
  if (!pin->path)
    g_string_append_printf (s, " · %.2f s", pin->result->seconds_total);
  return g_string_free (s, FALSE);
}

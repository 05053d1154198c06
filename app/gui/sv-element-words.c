/* Supervox GUI: voxels or pixels. */
#define G_LOG_DOMAIN "sv-element-words"

#include "sv-element-words.h"

#include <string.h>

static const SvElementWords volume_words
    = { "voxel", "voxels", "supervoxel", "supervoxels", "voxels" };
static const SvElementWords planar_words = { "pixel", "pixels", "superpixel", "superpixels", "px" };

const SvElementWords *
sv_element_words (gboolean planar)
{
  return planar ? &planar_words : &volume_words;
}

char *
sv_format_count (guint64 n)
{
  g_autofree char *digits = g_strdup_printf ("%" G_GUINT64_FORMAT, n);
  gsize len = strlen (digits);
  GString *s;

  if (len < 5)
    return g_steal_pointer (&digits);
  s = g_string_new (NULL);
  for (gsize i = 0; i < len; i++)
    {
      if (i > 0 && (len - i) % 3 == 0)
        g_string_append (s, "\u202f");
      g_string_append_c (s, digits[i]);
    }
  return g_string_free (s, FALSE);
}

char *
sv_format_count_short (guint64 n)
{
  static const char *const units[] = { "", "k", "M", "G", "T" };
  double v = (double)n;
  guint u = 0;

  if (n < 100000)
    return sv_format_count (n);
  /* 999 500 is "1.00 M", not "1000 k". */
  while (v >= 999.5 && u + 1 < G_N_ELEMENTS (units))
    {
      v /= 1000;
      u++;
    }
  return g_strdup_printf ("%.*f\u202f%s", v < 9.995 ? 2 : v < 99.95 ? 1 : 0, v, units[u]);
}

char *
sv_element_count (guint64 n, const char *one, const char *many)
{
  g_autofree char *number = sv_format_count (n);
  return g_strdup_printf ("%s %s", number, n == 1 ? one : many);
}

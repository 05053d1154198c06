/* Supervox engine: the process's resident memory and the system's
 * available memory, from /proc. */
#define G_LOG_DOMAIN "sv-engine"

#include <stdarg.h>
#include "supervox/sv-memory.h"

#include "supervox/sv-error.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

guint64
sv_memory_resident (void)
{
  g_autofree char *text = NULL;
  guint64 pages_total, pages_resident;
  long page = sysconf (_SC_PAGESIZE);

  if (page <= 0 || !g_file_get_contents ("/proc/self/statm", &text, NULL, NULL)
      || sscanf (text, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT, &pages_total, &pages_resident)
             != 2)
    return 0;
  return pages_resident * (guint64)page;
}

guint64
sv_memory_available (void)
{
  g_autofree char *text = NULL;
  const char *line;
  guint64 kib;

  if (!g_file_get_contents ("/proc/meminfo", &text, NULL, NULL))
    return 0;
  line = strstr (text, "MemAvailable:");
  if (line == NULL || sscanf (line, "MemAvailable: %" G_GUINT64_FORMAT, &kib) != 1)
    return 0;
  return kib * 1024;
}

gboolean
sv_parse_size (const char *option, const char *text, guint64 *bytes, GError **error)
{
  static const char units[] = "KMGT";
  char *end = NULL;
  double value, scale = 1.0;

  errno = 0;
  value = g_ascii_strtod (text, &end);
  if (end != text && *end != '\0')
    {
      const char *u = strchr (units, g_ascii_toupper (*end));
      if (u != NULL)
        {
          scale = ldexp (1.0, 10 * (int)(u - units + 1));
          end++;
          if (*end == 'i')
            end++;
        }
      if (*end == 'B' || *end == 'b')
        end++;
    }
  if (end == text || *end != '\0' || errno != 0 || !(value > 0) || !isfinite (value)
      || value * scale >= 0x1p63)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s must be a size such as 512M or 2G, got %s", option, text);
      return FALSE;
    }
  *bytes = (guint64)(value * scale);
  return TRUE;
}

static void
set_no_memory (GError **error, guint64 bytes, const char *what, va_list args)
{
  g_autofree char *thing = g_strdup_vprintf (what, args);
  g_autofree char *size = bytes > 0 ? g_format_size (bytes) : NULL;

  if (size != NULL)
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                 "not enough memory for %s (%s)", thing, size);
  else
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY, "not enough memory for %s",
                 thing);
}

gpointer
sv_try_alloc_n (gsize n, gsize size, gboolean zero, GError **error, const char *what, ...)
{
  gpointer p = NULL;
  va_list args;

  n = MAX (n, 1);
  size = MAX (size, 1);
  if (n <= G_MAXSIZE / size)
    p = zero ? g_try_malloc0_n (n, size) : g_try_malloc_n (n, size);
  if (p != NULL)
    return p;
  va_start (args, what);
  set_no_memory (error, n <= G_MAXSIZE / size ? (guint64)n * size : G_MAXUINT64, what, args);
  va_end (args);
  return NULL;
}

void
sv_set_no_memory (GError **error, const char *what, ...)
{
  va_list args;

  va_start (args, what);
  set_no_memory (error, 0, what, args);
  va_end (args);
}

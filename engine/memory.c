/* Supervox engine: the process's resident memory and the system's
 * available memory, from /proc. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-memory.h"

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

/* bench-write: time to write one label file, per codec, number of threads
 * and writer (not a test; bench/bench-write.py runs it, see
 * bench/README.md).
 *
 * Reads a label TIFF, then writes it again and again as supervox-cli does
 * (sv_tiff_write_labels_full: threads, temporary file, fsync, rename), in
 * memory and slab by slab (the streamed run's SvTiffLabelWriter), with the
 * strip writer (strips compressed and written at their offsets by every
 * thread) and with libtiff's in-order writer (SV_TIFF_WRITER=libtiff: the
 * same compression threads, one thread handing strips to libtiff). Checks
 * that every file holds the same bytes as the first one of its codec and
 * prints one JSON object. */
#define G_LOG_DOMAIN "sv-bench"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <glib/gstdio.h>

#include "supervox/sv-io-slab.h"
#include "supervox/sv-io.h"

static double
now (void)
{
  return (double)g_get_monotonic_time () / G_USEC_PER_SEC;
}

/* CPU seconds of the whole process, all threads. */
static double
cpu_now (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec
         + ru.ru_stime.tv_usec * 1e-6;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
median (double *v, guint n)
{
  qsort (v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Writes `l` slab after slab, as a streamed run's writer does. */
static gboolean
write_slabs (const char *path, const SvLabels *l, guint depth, const SvTiffWriteOptions *o,
             GError **error)
{
  g_autoptr (SvTiffLabelWriter) w
      = sv_tiff_label_writer_new (path, l->nz, l->ny, l->nx, FALSE, l->spacing, l->unit, o, error);
  const gsize plane = (gsize)l->ny * l->nx;

  if (w == NULL)
    return FALSE;
  for (guint z0 = 0; z0 < l->nz; z0 += depth)
    if (!sv_tiff_label_writer_append (w, l->data + z0 * plane, MIN (depth, l->nz - z0), error))
      return FALSE;
  return sv_tiff_label_writer_finish (w, error);
}

static gboolean
same_bytes (const char *a, const char *b)
{
  g_autofree char *x = NULL, *y = NULL;
  gsize nx, ny;

  return g_file_get_contents (a, &x, &nx, NULL) && g_file_get_contents (b, &y, &ny, NULL)
         && nx == ny && memcmp (x, y, nx) == 0;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (SvLabels) labels = NULL;
  g_autoptr (GString) json = g_string_new (NULL);
  g_autofree char *labels_path = NULL, *dir = NULL, *codecs_text = NULL, *threads_text = NULL;
  g_auto (GStrv) codecs = NULL;
  g_auto (GStrv) threads = NULL;
  gint repeats = 3, depth = 32;
  const char *const writers[] = { "libtiff", "strips" };
  const char *const modes[] = { "memory", "slabs" };
  GOptionEntry entries[] = {
    { "labels", 0, 0, G_OPTION_ARG_FILENAME, &labels_path, "Label TIFF to write again", "FILE" },
    { "codecs", 0, 0, G_OPTION_ARG_STRING, &codecs_text,
      "Codecs, comma-separated (default none,deflate,zstd)", "LIST" },
    { "threads", 0, 0, G_OPTION_ARG_STRING, &threads_text,
      "Thread counts, comma-separated (default 1,2)", "LIST" },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &repeats, "Writes per case; medians (default 3)", "R" },
    { "slab-depth", 0, 0, G_OPTION_ARG_INT, &depth, "Slices per slab (default 32)", "D" },
    { "dir", 0, 0, G_OPTION_ARG_FILENAME, &dir, "Folder for the files (default /tmp)", "DIR" },
    { NULL }
  };
  gboolean first = TRUE;

  context = g_option_context_new ("- label file write time per codec, threads and writer");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || labels_path == NULL)
    {
      fprintf (stderr, "bench-write: %s\n", error ? error->message : "--labels FILE is needed");
      return 1;
    }
  codecs = g_strsplit (codecs_text ? codecs_text : "none,deflate,zstd", ",", -1);
  threads = g_strsplit (threads_text ? threads_text : "1,2", ",", -1);
  repeats = MAX (repeats, 1);
  depth = MAX (depth, 1);
  if (dir == NULL)
    dir = g_strdup (g_get_tmp_dir ());
  labels = sv_tiff_read_labels (labels_path, &error);
  if (labels == NULL)
    goto fail;

  g_string_append_printf (json, "{\"shape\":[%u,%u,%u],\"repeats\":%d,\"slab_depth\":%d,\"rows\":[",
                          labels->nz, labels->ny, labels->nx, repeats, depth);
  for (guint c = 0; codecs[c] != NULL; c++)
    {
      g_autofree char *first_file = g_build_filename (dir, "bench-write-first.tif", NULL);
      gboolean have_first = FALSE;

      for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
        for (guint w = 0; w < G_N_ELEMENTS (writers); w++)
          for (guint t = 0; threads[t] != NULL; t++)
            {
              g_autofree char *path = g_build_filename (dir, "bench-write.tif", NULL);
              g_autofree double *s = g_new (double, repeats);
              g_autofree double *cpu = g_new (double, repeats);
              SvTiffWriteOptions o;
              GStatBuf st;

              sv_tiff_write_options_init_defaults (&o);
              if (!sv_tiff_write_options_parse (&o, codecs[c], &error))
                goto fail;
              o.n_threads = atoi (threads[t]);
              g_setenv ("SV_TIFF_WRITER", writers[w], TRUE);
              for (gint r = 0; r < repeats; r++)
                {
                  double t0 = now (), c0 = cpu_now ();
                  gboolean ok = m == 0 ? sv_tiff_write_labels_full (path, labels, &o, &error)
                                       : write_slabs (path, labels, (guint)depth, &o, &error);
                  s[r] = now () - t0;
                  cpu[r] = cpu_now () - c0;
                  if (!ok)
                    goto fail;
                }
              if (!have_first)
                have_first = g_rename (path, first_file) == 0;
              else if (!same_bytes (first_file, path))
                g_error ("%s %s %s threads %s: not the same bytes", codecs[c], modes[m], writers[w],
                         threads[t]);
              g_stat (have_first ? first_file : path, &st);
              fprintf (stderr, "%-10s %-7s %-8s %2s threads: %.3f s\n", codecs[c], modes[m],
                       writers[w], threads[t], median (s, (guint)repeats));
              g_string_append_printf (
                  json,
                  "%s{\"codec\":\"%s\",\"mode\":\"%s\",\"writer\":\"%s\",\"threads\":%s,"
                  "\"seconds\":%.6f,\"cpu_seconds\":%.6f,\"file_bytes\":%" G_GINT64_FORMAT
                  ",\"runs\":[",
                  first ? "" : ",", codecs[c], modes[m], writers[w], threads[t],
                  median (s, (guint)repeats), median (cpu, (guint)repeats), (gint64)st.st_size);
              for (gint r = 0; r < repeats; r++)
                g_string_append_printf (json, "%s%.6f", r ? "," : "", s[r]);
              g_string_append (json, "]}");
              first = FALSE;
              g_unlink (path);
            }
      g_unlink (first_file);
    }
  g_string_append (json, "]}\n");
  fputs (json->str, stdout);
  return 0;

fail:
  fprintf (stderr, "bench-write: %s\n", error ? error->message : "failed");
  return 1;
}

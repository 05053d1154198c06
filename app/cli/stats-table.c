/* supervox-cli: the supervoxel table and its pairs as CSV files, each
 * written under a temporary name beside it and renamed once both are
 * complete. */
#define G_LOG_DOMAIN "sv-cli"

#include "stats-table.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli-common.h"
#include "supervox/sv-error.h"
#include "supervox/sv-sidecar.h"
#include "supervox/sv-supervoxel-table.h"

gint32
sv_cli_stats_background (const char *labels_path, gboolean *from_sidecar)
{
  g_autofree char *sidecar = sv_sidecar_path (labels_path);
  g_autofree char *text = NULL;
  g_autoptr (GRegex) regex = NULL;
  g_autoptr (GMatchInfo) match = NULL;
  gint32 background = 0;

  *from_sidecar = FALSE;
  if (!g_file_get_contents (sidecar, &text, NULL, NULL))
    return 0;
  /* The sidecar records the run's parameters under scikit-image's names. */
  regex = g_regex_new ("\"start_label\"\\s*:\\s*(-?[0-9]+)", 0, 0, NULL);
  if (g_regex_match (regex, text, 0, &match))
    {
      g_autofree char *value = g_match_info_fetch (match, 1);
      background = (gint32)g_ascii_strtoll (value, NULL, 10) - 1;
      *from_sidecar = TRUE;
    }
  return background;
}

typedef gboolean (*WriteFunc) (const SvSupervoxelTable *table, const double spacing[3],
                               const char *unit, FILE *out, GError **error);

/* Writes one CSV to a new temporary file beside `path`; returns its name. */
static char *
write_temp (const char *path, WriteFunc write, const SvSupervoxelTable *table,
            const SvSupervoxelTableSource *source, GError **error)
{
  g_autofree char *tmp = g_strconcat (path, ".tmp-XXXXXX", NULL);
  g_autoptr (GError) local = NULL;
  FILE *out;
  int fd, problem = 0;
  mode_t mask;

  fd = g_mkstemp_full (tmp, O_WRONLY, 0600);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot create: %s", path,
                   g_strerror (saved));
      return NULL;
    }
  /* mkstemp creates 0600; give the table the usual permissions. */
  mask = umask (0);
  umask (mask);
  fchmod (fd, 0666 & ~mask);
  out = fdopen (fd, "w");
  if (out == NULL)
    {
      problem = errno;
      close (fd);
    }
  else
    {
      if (!write (table, source->spacing, source->unit, out, &local))
        problem = EIO;
      else if (fflush (out) != 0 || fsync (fileno (out)) != 0)
        problem = errno;
      if (fclose (out) != 0 && problem == 0)
        problem = errno;
    }
  if (problem != 0)
    {
      g_unlink (tmp);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot write: %s", path,
                   local ? local->message : g_strerror (problem));
      return NULL;
    }
  return g_steal_pointer (&tmp);
}

gboolean
sv_cli_stats_write (const SvCliStatsRequest *request, const char *labels_path,
                    const SvLabels *labels, const char *image_path, gsize *n_rows, gsize *n_pairs,
                    GError **error)
{
  g_autoptr (SvSupervoxelTable) table = NULL;
  g_autofree char *table_tmp = NULL;
  g_autofree char *pairs_tmp = NULL;
  SvSupervoxelTableOptions options;
  SvSupervoxelTableSource source = { 0 };
  gboolean ok = FALSE;

  sv_supervoxel_table_options_init_defaults (&options);
  options.has_background = request->has_background;
  options.background = request->background;
  options.adjacency = request->adjacency_path != NULL;
  options.n_threads = request->n_threads;
  table = sv_supervoxel_table_new_from_files (labels_path, labels, image_path, request->channel,
                                              request->slab_depth, &options, &source, error);
  if (table == NULL)
    goto out;
  table_tmp = write_temp (request->table_path, sv_supervoxel_table_write_csv, table, &source,
                          error);
  if (table_tmp == NULL)
    goto out;
  if (request->adjacency_path)
    {
      pairs_tmp = write_temp (request->adjacency_path, sv_supervoxel_table_write_adjacency_csv,
                              table, &source, error);
      if (pairs_tmp == NULL)
        goto out;
    }
  /* Both are complete: now they take their names. */
  if (pairs_tmp && !sv_cli_commit_temp (pairs_tmp, request->adjacency_path, error))
    {
      g_clear_pointer (&pairs_tmp, g_free);
      goto out;
    }
  g_clear_pointer (&pairs_tmp, g_free);
  if (!sv_cli_commit_temp (table_tmp, request->table_path, error))
    {
      g_clear_pointer (&table_tmp, g_free);
      if (request->adjacency_path)
        g_unlink (request->adjacency_path);
      goto out;
    }
  g_clear_pointer (&table_tmp, g_free);
  if (n_rows)
    *n_rows = sv_supervoxel_table_n_rows (table);
  if (n_pairs)
    *n_pairs = sv_supervoxel_table_n_pairs (table);
  ok = TRUE;
out:
  if (table_tmp)
    g_unlink (table_tmp);
  if (pairs_tmp)
    g_unlink (pairs_tmp);
  sv_supervoxel_table_source_clear (&source);
  return ok;
}

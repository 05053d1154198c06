/* Supervox GUI: the main window's "Export Table…": the per-supervoxel CSV
 * that supervox-cli stats writes (engine/supervoxel-table*.c), for the
 * labels on screen and the intensities of the file open, in its own
 * sample values, with the calibration the exported labels carry. So the
 * table equals `supervox-cli stats LABELS.tif --image INPUT.tif` for the
 * labels Export Labels writes. Computed on a worker thread and written
 * under a temporary name, renamed once complete: a failure leaves no file. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "supervox/sv-error.h"
#include "supervox/sv-supervoxel-table.h"

typedef struct
{
  char *path;          /* the CSV */
  SvJobResult *result; /* holds the labels (NULL out of core) */
  SvLabels labels;     /* the result's labels with the export's calibration */
  char *labels_path;   /* out of core: the run's label file */
  char *image_path;    /* the TIFF open, or NULL */
  float *image;        /* else the volume's values as the file holds them, or NULL */
  guint nc;
  double spacing[3];
  char *unit;
  SvSupervoxelTableOptions options;
  gsize n_rows;
} TableExport;

static void
table_export_free (TableExport *t)
{
  g_free (t->path);
  g_clear_pointer (&t->result, sv_job_result_unref);
  g_free (t->labels_path);
  g_free (t->image_path);
  g_free (t->image);
  g_free (t->unit);
  g_free (t);
}

static gboolean
is_tiff (const char *path)
{
  g_autofree char *lower = g_ascii_strdown (path, -1);
  return g_str_has_suffix (lower, ".tif") || g_str_has_suffix (lower, ".tiff")
         || g_str_has_suffix (lower, ".btf") || g_str_has_suffix (lower, ".tf8");
}

/* The table of labels and an image both in memory (the sample, a photo). */
static SvSupervoxelTable *
table_from_memory (TableExport *t)
{
  const SvLabels *l = &t->labels;
  SvSupervoxelTable *table = sv_supervoxel_table_new (l->nz, l->ny, l->nx, t->image ? t->nc : 0,
                                                      SV_SAMPLE_F32, &t->options);
  gsize slice = (gsize)l->ny * l->nx;

  for (guint z = 0; z < l->nz; z++)
    sv_supervoxel_table_add_slab (table, l->data + z * slice,
                                  t->image ? t->image + z * slice * t->nc : NULL, 1);
  sv_supervoxel_table_finish (table);
  return table;
}

static void
table_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  TableExport *t = data;
  g_autoptr (SvSupervoxelTable) table = NULL;
  g_autofree char *tmp = NULL;
  SvSupervoxelTableSource from = { 0 };
  GError *error = NULL;
  FILE *out = NULL;
  int fd, problem = 0;

  if (t->image_path || t->labels_path)
    {
      table
          = sv_supervoxel_table_new_from_files (t->labels_path, t->labels_path ? NULL : &t->labels,
                                                t->image_path, -1, 0, &t->options, &from, &error);
      if (!table)
        {
          g_task_return_error (task, error);
          return;
        }
      memcpy (t->spacing, from.spacing, sizeof t->spacing);
      g_free (t->unit);
      t->unit = g_strdup (from.unit);
      sv_supervoxel_table_source_clear (&from);
    }
  else
    table = table_from_memory (t);

  tmp = g_strconcat (t->path, ".tmp-XXXXXX", NULL);
  fd = g_mkstemp (tmp);
  if (fd < 0 || !(out = fdopen (fd, "w")))
    {
      int saved = errno;
      if (fd >= 0)
        {
          close (fd);
          g_unlink (tmp);
        }
      g_task_return_new_error (task, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot create: %s",
                               t->path, g_strerror (saved));
      return;
    }
  if (!sv_supervoxel_table_write_csv (table, t->spacing, t->unit, out, &error))
    problem = EIO;
  else if (fflush (out) != 0)
    problem = errno;
  if (fclose (out) != 0 && problem == 0)
    problem = errno;
  if (problem == 0 && g_rename (tmp, t->path) != 0)
    problem = errno;
  if (problem != 0)
    {
      g_unlink (tmp);
      g_task_return_new_error (task, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot write: %s",
                               t->path, error ? error->message : g_strerror (problem));
      g_clear_error (&error);
      return;
    }
  t->n_rows = sv_supervoxel_table_n_rows (table);
  g_task_return_boolean (task, TRUE);
}

static void
table_done_cb (GObject *source, GAsyncResult *res, gpointer user_data)
{
  SvWindow *self = SV_WINDOW (source);
  TableExport *t = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;

  self->exporting_table = FALSE;
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      sv_window_show_error (self, "Cannot export the table", error);
      return;
    }
  {
    g_autofree char *text = g_strdup_printf (
        "table of %" G_GSIZE_FORMAT " %s saved to %s", t->n_rows,
        self->volume && self->volume->nz == 1 ? "superpixels" : "supervoxels", t->path);
    sv_window_show_toast (self, text);
  }
}

gboolean
sv_window_export_table (SvWindow *self, const char *path, GError **error)
{
  g_autoptr (GTask) task = NULL;
  TableExport *t;
  SvJobResult *r = sv_window_shown_result (self);

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (self->exporting_table)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "a table is being written: wait for it to finish");
      return FALSE;
    }
  /* The pinned labels are a finished run; the live ones must be one. */
  if (!(self->showing_pinned && self->pinned) && !sv_window_check_exportable (self, error))
    return FALSE;

  t = g_new0 (TableExport, 1);
  t->path = g_strdup (path);
  sv_supervoxel_table_options_init_defaults (&t->options);
  t->options.has_background = TRUE;
  if (self->ooc)
    {
      /* The run's label file carries the calibration the export copies. */
      t->labels_path = g_strdup (self->ooc->labels_path);
      t->image_path = g_strdup (self->ooc->path);
      t->options.background = self->ooc->labels_params.start_label - 1;
    }
  else
    {
      const SvLabels *host = sv_job_result_get_labels (r, error);
      const SvVolume *v = self->volume;

      if (host == NULL)
        {
          table_export_free (t);
          return FALSE;
        }
      t->result = sv_job_result_ref (r);
      /* As Export Labels writes them (the label file's calibration). */
      t->labels = *host;
      t->labels.unit = (char *)sv_label_calibration (v->spacing, v->unit, r->params.spacing,
                                                     t->labels.spacing);
      memcpy (t->spacing, t->labels.spacing, sizeof t->spacing);
      t->unit = g_strdup (t->labels.unit);
      /* Masked-out voxels are the background, as supervox-cli stats
       * reads it from the labels' sidecar. */
      t->options.background = r->params.start_label - 1;
      if (self->volume_path && is_tiff (self->volume_path))
        t->image_path = g_strdup (self->volume_path);
      else
        {
          /* A photo or the sample: the values as the file holds them. */
          double scale = sv_window_intensity_scale (v);
          gsize n = sv_volume_n_voxels (v) * v->nc;

          t->nc = v->nc;
          t->image = g_try_new (float, n);
          if (!t->image)
            {
              g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                                   "not enough memory for a copy of the image's values");
              table_export_free (t);
              return FALSE;
            }
          for (gsize i = 0; i < n; i++)
            t->image[i] = scale > 0 ? (float)round (v->data[i] * scale) : v->data[i];
        }
    }
  self->exporting_table = TRUE;
  task = g_task_new (self, NULL, table_done_cb, NULL);
  g_task_set_task_data (task, t, (GDestroyNotify)table_export_free);
  g_task_run_in_thread (task, table_thread);
  return TRUE;
}

gboolean
sv_window_is_exporting_table (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  return self->exporting_table;
}

static void
table_chosen (SvWindow *self, GFile *file, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);

  if (path && !sv_window_export_table (self, path, &error))
    sv_window_show_error (self, "Cannot export the table", error);
}

static void
export_table_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.csv", NULL };
  SvWindow *self = SV_WINDOW (widget);
  g_autoptr (GError) error = NULL;
  g_autofree char *labels_name = NULL, *stem = NULL, *initial = NULL;
  gsize len;

  /* Why not, before any dialog. */
  if (!(self->showing_pinned && self->pinned) && !sv_window_check_exportable (self, &error))
    {
      sv_window_show_error (self, "Cannot export the table", error);
      return;
    }
  /* brain-labels.tif gives brain-labels.csv, as supervox-cli stats' examples. */
  labels_name = sv_window_default_export_name (self);
  len = strlen (labels_name);
  stem = g_strndup (labels_name, len > 4 ? len - 4 : len);
  initial = g_strconcat (stem, ".csv", NULL);
  sv_window_choose_file (self, "Export Table", TRUE, "CSV (one row per supervoxel)", patterns,
                         initial, table_chosen, NULL);
}

void
sv_window_class_add_table_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.export-table", NULL, export_table_action);
}

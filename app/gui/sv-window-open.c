/* Supervox GUI: the main window's opening of files: volumes read on a
 * worker thread ("Loading… n %", Stop drops them), masks, recent files and
 * the sample. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include "supervox/sv-io-zarr.h"
#include "sv-tiff-chooser.h"

#include <math.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-run-plan.h"
#include "sv-image-pixbuf.h"

void
sv_window_rebuild_recent_menu (SvWindow *self)
{
  GtkRecentManager *manager = gtk_recent_manager_get_default ();
  GList *items = gtk_recent_manager_get_items (manager);
  guint n = 0;

  g_menu_remove_all (self->recent_section);
  for (GList *l = items; l && n < 8; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      g_autoptr (GMenuItem) item = NULL;
      if (!gtk_recent_info_has_application (info, g_get_application_name ()))
        continue;
      item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);
      g_menu_item_set_action_and_target (item, "win.open-recent", "s",
                                         gtk_recent_info_get_uri (info));
      g_menu_append_item (self->recent_section, item);
      n++;
    }
  g_list_free_full (items, (GDestroyNotify)gtk_recent_info_unref);
}

/* ---- opening a file on a worker thread ---- */

#define LOAD_CHUNK (4 << 20)
#define LOAD_TICK_MS 100

/* Shared by the reader thread and the main thread. */
typedef struct
{
  GFile *file;
  char *path;
  /* An OME-Zarr image: its folder (path is then its level's), the level
   * asked for, its levels as listed, and whether the image is the one
   * shown (a pick in "Level"). */
  char *image;
  guint level;
  GPtrArray *levels;
  gboolean same_image;
  gint percent;     /* atomic: 0..100 while reading, -1 while decoding */
  SvWindowOoc *ooc; /* set instead of a volume when it opens out of core */
  double seconds;   /* reading and decoding, set by the reader */
} Load;

static void
load_free (gpointer data)
{
  Load *load = data;

  g_object_unref (load->file);
  sv_window_ooc_free (load->ooc);
  g_free (load->path);
  g_free (load->image);
  g_clear_pointer (&load->levels, g_ptr_array_unref);
  g_free (load);
}

/* Reads the file once through the page cache, in chunks, for the percentage
 * and for Stop; then the reader decodes it from memory speed. */
static gboolean
read_ahead (Load *load, GCancellable *cancellable, GError **error)
{
  g_autoptr (GFileInputStream) in = g_file_read (load->file, cancellable, error);
  g_autoptr (GFileInfo) info = NULL;
  g_autofree guint8 *buffer = NULL;
  goffset size, done = 0;
  gssize n;

  if (!in)
    return FALSE;
  info = g_file_input_stream_query_info (in, G_FILE_ATTRIBUTE_STANDARD_SIZE, cancellable, NULL);
  size = info ? g_file_info_get_size (info) : 0;
  buffer = g_malloc (LOAD_CHUNK);
  while ((n = g_input_stream_read (G_INPUT_STREAM (in), buffer, LOAD_CHUNK, cancellable, error))
         > 0)
    {
      done += n;
      if (size > 0)
        g_atomic_int_set (&load->percent, (gint)MIN (done * 100 / size, 100));
    }
  return n == 0;
}

static void
load_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Load *load = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *lower = g_ascii_strdown (load->path, -1);
  gint64 start = g_get_monotonic_time ();
  /* A Zarr folder (an OME-Zarr image opens at its finest level, or the
   * level asked for) is read by the engine's readers as a TIFF is. */
  const gboolean zarr = sv_zarr_is_store (load->path);
  gboolean tiff = zarr || g_str_has_suffix (lower, ".tif") || g_str_has_suffix (lower, ".tiff")
                  || g_str_has_suffix (lower, ".btf") || g_str_has_suffix (lower, ".tf8");
  guint64 budget = sv_window_memory_budget ();
  SvVolume *volume;

  if (zarr && sv_zarr_is_ome_image (load->path))
    {
      char *level = sv_zarr_level_path (load->path, load->level, &error);

      if (level == NULL)
        {
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
      /* The levels for "Level"; a broken coarser one leaves it out, not
       * the image. */
      load->levels = sv_zarr_list_levels (load->path, NULL);
      load->image = load->path;
      load->path = level;
    }

  /* Larger than the budget: its slices are read when they are shown. */
  if (tiff && sv_window_ooc_wanted (load->path, budget))
    {
      load->ooc = sv_window_ooc_new (load->path, budget, &error);
      if (load->ooc == NULL)
        g_task_return_error (task, g_steal_pointer (&error));
      else
        g_task_return_pointer (task, NULL, NULL);
      return;
    }
  /* A folder of chunks has no one file to read ahead. */
  if (!zarr && !read_ahead (load, cancellable, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_atomic_int_set (&load->percent, -1);
  if (tiff)
    volume = sv_tiff_read_volume (load->path, &error);
  else
    volume = sv_image_read_pixbuf (load->path, &error);
  load->seconds = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  if (!volume)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, volume, (GDestroyNotify)sv_volume_free);
}

static void
show_loading (SvWindow *self, Load *load)
{
  gint percent = g_atomic_int_get (&load->percent);
  g_autofree char *text = NULL;

  if (percent >= 0)
    text = g_strdup_printf ("Loading… %d %%", percent);
  else
    text = g_strdup ("Loading… decoding");
  gtk_progress_bar_set_fraction (self->progress_bar, percent >= 0 ? percent / 100.0 : 1.0);
  gtk_progress_bar_set_text (self->progress_bar, text);
}

static gboolean
load_tick_cb (gpointer data)
{
  GTask *task = data;
  SvWindow *self = g_task_get_source_object (task);

  if (!self->loading || g_task_get_cancellable (task) != self->load_cancellable)
    return G_SOURCE_REMOVE;
  show_loading (self, g_task_get_task_data (task));
  return G_SOURCE_CONTINUE;
}

/* Shows the volume read from `file`. */
static void
open_volume (SvWindow *self, SvVolume *volume, GFile *file, const char *path)
{
  g_autofree char *base = g_file_get_basename (file);
  g_autofree char *uri = g_file_get_uri (file);

  g_free (self->volume_path);
  self->volume_path = g_strdup (path);
  sv_window_set_volume (self, volume, base);
  gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
  sv_window_rebuild_recent_menu (self);
}

static void
load_done_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  SvWindow *self = SV_WINDOW (source);
  GTask *task = G_TASK (res);
  Load *load = g_task_get_task_data (task);
  g_autoptr (GError) error = NULL;
  SvVolume *volume;
  SvLevelPlace place;

  /* Stopped, or replaced by a newer load: its volume is dropped. */
  if (g_task_get_cancellable (task) != self->load_cancellable
      || g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    return;
  self->loading = FALSE;
  g_clear_object (&self->load_cancellable);
  volume = g_task_propagate_pointer (task, &error);
  if (load->same_image && (volume || load->ooc))
    sv_window_levels_leave (self, &place);
  if (!volume && load->ooc)
    {
      g_autofree char *base = g_file_get_basename (load->file);
      g_autofree char *uri = g_file_get_uri (load->file);
      g_free (self->volume_path);
      self->volume_path = g_strdup (load->path);
      sv_window_ooc_show (self, g_steal_pointer (&load->ooc), base);
      sv_window_levels_opened (self, load->image, load->level, g_steal_pointer (&load->levels),
                               load->same_image ? &place : NULL);
      gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
      sv_window_rebuild_recent_menu (self);
      return;
    }
  if (!volume)
    {
      g_autofree char *base = g_file_get_basename (load->file);
      g_autofree char *primary = g_strdup_printf ("Cannot open “%s”", base);
      gtk_progress_bar_set_fraction (self->progress_bar, 0.0);
      gtk_progress_bar_set_text (self->progress_bar, "");
      sv_window_show_error (self, primary, error);
      sv_window_levels_show (self);
      /* Something to look at behind the dialog when nothing was open. */
      if (!self->volume)
        sv_window_load_sample (self, SAMPLE_NZ, SAMPLE_NY, SAMPLE_NX, NULL);
      return;
    }
  open_volume (self, volume, load->file, load->path);
  sv_window_levels_opened (self, load->image, load->level, g_steal_pointer (&load->levels),
                           load->same_image ? &place : NULL);
  self->load_seconds = load->seconds;
}

/* Reads `file` (level `level` of an OME-Zarr image) on a worker thread;
 * `same_image`: it is the image shown, at another level. */
static gboolean
start_load (SvWindow *self, GFile *file, guint level, gboolean same_image)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GTask) task = NULL;
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *base = g_file_get_basename (file);
  Load *load;

  if (!path)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s is not a local file",
                   base ? base : "the file");
      sv_window_show_error (self, "Cannot open the file", error);
      return FALSE;
    }

  sv_window_cancel_loading (self);
  load = g_new0 (Load, 1);
  load->file = g_object_ref (file);
  load->path = g_steal_pointer (&path);
  load->level = level;
  load->same_image = same_image;
  if (same_image)
    sv_window_levels_asked (self, level);
  self->loading = TRUE;
  self->load_cancellable = g_cancellable_new ();
  task = g_task_new (self, self->load_cancellable, load_done_cb, NULL);
  g_task_set_task_data (task, load, load_free);
  /* Stop answers at once; a reader still decoding finishes on its own and
   * its volume is freed unseen. */
  g_task_set_return_on_cancel (task, TRUE);
  g_task_set_name (task, "sv-window load");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", TRUE);
  show_loading (self, load);
  g_timeout_add_full (G_PRIORITY_DEFAULT, LOAD_TICK_MS, load_tick_cb, g_object_ref (task),
                      g_object_unref);
  g_task_run_in_thread (task, load_thread);
  return TRUE;
}

gboolean
sv_window_open_file (SvWindow *self, GFile *file)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  return start_load (self, file, 0, FALSE);
}

gboolean
sv_window_open_level (SvWindow *self, guint level)
{
  g_autoptr (GFile) file = NULL;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (self->zarr_image == NULL)
    return FALSE;
  file = g_file_new_for_path (self->zarr_image);
  return start_load (self, file, level, TRUE);
}

static void
open_chosen (SvWindow *self, GFile *file, gpointer data)
{
  sv_window_open_file (self, file);
}

static void
zarr_chosen (GListModel *files, gpointer data)
{
  g_autoptr (GFile) folder = g_list_model_get_item (files, 0);

  if (folder != NULL)
    sv_window_open_file (SV_WINDOW (data), folder);
}

/* An OME-Zarr image (or a plain Zarr array) is a folder: the chooser
 * picks folders. */
static void
open_zarr_action (GtkWidget *widget, const char *name, GVariant *param)
{
  sv_tiff_chooser_run (GTK_WINDOW (widget), "Open OME-Zarr Folder", TRUE, zarr_chosen, widget);
}

static void
open_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", "*.TIF",  "*.TIFF", "*.png",
                                          "*.PNG", "*.jpg",  "*.jpeg", "*.JPG",  NULL };

  sv_window_choose_file (SV_WINDOW (widget), "Open Volume", FALSE, "TIFF, PNG and JPEG images",
                         patterns, NULL, open_chosen, NULL);
}

gboolean
sv_window_open_mask (SvWindow *self, GFile *file)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *base = g_file_get_basename (file);
  g_autofree char *primary
      = g_strdup_printf ("Cannot use “%s” as a mask", base ? base : "the file");
  g_autofree guint8 *mask = NULL;
  const SvVolume *v = self->volume;
  guint nz = 0, ny = 0, nx = 0;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (!v)
    g_set_error_literal (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                         "open a volume first");
  else if (!path)
    g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s is not a local file",
                 base ? base : "the file");
  else if ((mask = sv_tiff_read_mask (path, &nz, &ny, &nx, &error)))
    sv_run_check_mask (NULL, (const guint[3]){ nz, ny, nx }, NULL,
                       (const guint[3]){ v->nz, v->ny, v->nx }, &error);
  if (error)
    {
      sv_window_show_error (self, primary, error);
      return FALSE;
    }

  /* The job borrows the mask: stop it before the old mask goes. */
  sv_window_stop_job (self);
  g_free (self->mask);
  self->mask = g_steal_pointer (&mask);
  g_free (self->mask_path);
  self->mask_path = g_steal_pointer (&path);
  sv_window_nonfinite_mask_replaced (self);
  sv_window_start_job (self);
  return TRUE;
}

static void
open_mask_chosen (SvWindow *self, GFile *file, gpointer data)
{
  sv_window_open_mask (self, file);
}

static void
open_mask_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", "*.TIF", "*.TIFF", NULL };

  sv_window_choose_file (SV_WINDOW (widget), "Open Mask", FALSE, "TIFF masks (nonzero = inside)",
                         patterns, NULL, open_mask_chosen, NULL);
}

static void
open_recent_action (GtkWidget *widget, const char *name, GVariant *param)
{
  g_autoptr (GFile) file = g_file_new_for_uri (g_variant_get_string (param, NULL));
  sv_window_open_file (SV_WINDOW (widget), file);
}

static void
open_sample_action (GtkWidget *widget, const char *name, GVariant *param)
{
  g_autoptr (GError) error = NULL;
  SvWindow *self = SV_WINDOW (widget);

  if (!sv_window_load_sample (self, SAMPLE_NZ, SAMPLE_NY, SAMPLE_NX, &error))
    sv_window_show_error (self, "Cannot make the sample", error);
}

/* Quotes a path for the shell only when it needs quoting. */

void
sv_window_cancel_loading (SvWindow *self)
{
  gboolean was_loading = self->loading;

  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->loading = FALSE;
  /* A level asked for and dropped: "Level" names the one shown. */
  if (was_loading && self->zarr_levels != NULL)
    sv_window_levels_show (self);
}

void
sv_window_class_add_open_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "win.open-sample", NULL, open_sample_action);
  gtk_widget_class_install_action (widget_class, "win.open-mask", NULL, open_mask_action);
  gtk_widget_class_install_action (widget_class, "win.open-zarr", NULL, open_zarr_action);
}

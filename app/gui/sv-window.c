/* Supervox GUI: the main window. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window.h"

#include <math.h>
#include <string.h>

#include "error.h"
#include "grid.h"
#include "io.h"
#include "slic-arith.h"
#include "sv-application.h"
#include "sv-config.h"
#include "sv-image-pixbuf.h"
#include "synth.h"

#if SV_HAVE_CUDA
#include "sv-cuda-gl.h"
#endif

/* The bundled sample's shape and seed. */
#define SAMPLE_NZ 48
#define SAMPLE_NY 160
#define SAMPLE_NX 160

struct _SvWindow
{
  GtkApplicationWindow parent_instance;

  GtkLabel *title_label;
  GtkGrid *views_grid;
  SvSliceView *xy_view, *xz_view, *yz_view;
  SvParamsPanel *params_panel;
  GtkLabel *progress_label, *result_label, *hover_label, *path_label;
  GMenu *recent_section;

  SvVolume *volume;
  char *volume_name;
  char *volume_path;    /* NULL for the sample */
  guint8 *mask;         /* NULL, or nz*ny*nx bytes (1 inside) for the volume; the job borrows it */
  char *mask_path;
  SvSynthParams sample; /* how the sample was made, for "Copy as command" */
  SvJob *job;
  SvJobResult *result;
  guint64 generation;
  SvDisplay display;
  gboolean orthogonal;
  guint cursor_zyx[3];
  gboolean hover_valid;
  guint hover_zyx[3];
  SvSliceView *active_view;
  guint play_source;
  GtkWindow *error_dialog; /* weak */
#if SV_HAVE_CUDA
  SvCudaLabelsPool *cuda_labels; /* the published device labels, for interop */
#endif
};

G_DEFINE_FINAL_TYPE (SvWindow, sv_window, GTK_TYPE_APPLICATION_WINDOW)

enum
{
  PROP_0,
  PROP_ORTHOGONAL,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gboolean
verbose (SvWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  return SV_IS_APPLICATION (app) && sv_application_get_verbose (SV_APPLICATION (app));
}

static SvSliceView *
views (SvWindow *self, guint i)
{
  SvSliceView *v[3] = { self->xy_view, self->xz_view, self->yz_view };
  return v[i];
}

/* ---- the engine job ---- */

static void
submit (SvWindow *self)
{
  SvJobRequest request;

  if (!self->job)
    return;
  sv_job_request_init (&request);
  sv_params_panel_get_params (self->params_panel, &request.params);
  g_strlcpy (request.backend, sv_params_panel_get_backend (self->params_panel),
             sizeof request.backend);
  request.stop_after_iteration = sv_params_panel_get_stop_after_iteration (self->params_panel);
  request.generation = ++self->generation;
  sv_job_submit (self->job, &request);
  gtk_label_set_text (self->progress_label, "starting…");
}

static const char *
stage_name (SvStage stage)
{
  switch (stage)
    {
    case SV_STAGE_PREPARE:
      return "preparing";
    case SV_STAGE_ITERATE:
      return "iteration";
    case SV_STAGE_CONNECT:
      return "connectivity";
    case SV_STAGE_DONE:
    default:
      return "done";
    }
}

static void
job_progress_cb (guint64 generation, SvStage stage, guint iteration, guint n_iterations,
                 gpointer user_data)
{
  SvWindow *self = user_data;
  g_autofree char *text = NULL;

  if (stage == SV_STAGE_ITERATE)
    text = g_strdup_printf ("iteration %u of %u", iteration, n_iterations);
  else
    text = g_strdup (stage_name (stage));
  gtk_label_set_text (self->progress_label, text);
}

static void update_hover_status (SvWindow *self);
static void update_search_window (SvWindow *self);

static void
job_result_cb (SvJobResult *result, gpointer user_data)
{
  SvWindow *self = user_data;
  g_autofree char *progress = NULL;
  g_autofree char *text = NULL;

  g_clear_pointer (&self->result, sv_job_result_unref);
  self->result = sv_job_result_ref (result);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_result (views (self, i), result);

  if (result->stop_after_iteration >= 0)
    progress = g_strdup_printf ("iteration %u of %d", result->stats.iterations,
                                result->params.max_num_iter);
  else
    progress = g_strdup_printf ("iteration %u of %u", result->stats.iterations,
                                result->stats.iterations);
  gtk_label_set_text (self->progress_label, progress);
  text = g_strdup_printf ("%.2f s · %" G_GSIZE_FORMAT " labels · %s", result->seconds_total,
                          result->stats.n_labels, result->backend_name);
  gtk_label_set_text (self->result_label, text);
  gtk_label_set_text (self->path_label, sv_slice_view_get_label_path (self->xy_view));
  if (verbose (self))
    g_message (
        "generation %" G_GUINT64_FORMAT ": %" G_GSIZE_FORMAT
        " labels, %u iterations, %.3f s (prepare %.3f%s, iterate %.3f, connect %.3f) on %s; %s",
        result->generation, result->stats.n_labels, result->stats.iterations, result->seconds_total,
        result->stats.seconds_prepare, result->stats.prepare_reused ? " reused" : "",
        result->stats.seconds_iterate, result->stats.seconds_connect, result->backend_name,
        sv_slice_view_get_label_path (self->xy_view));
  if (result->fallback_message)
    {
      GtkWidget *dialog;
      G_GNUC_BEGIN_IGNORE_DEPRECATIONS
      dialog = gtk_message_dialog_new (GTK_WINDOW (self), GTK_DIALOG_DESTROY_WITH_PARENT,
                                       GTK_MESSAGE_WARNING, GTK_BUTTONS_CLOSE, "%s",
                                       result->fallback_message);
      G_GNUC_END_IGNORE_DEPRECATIONS
      g_signal_connect (dialog, "response", G_CALLBACK (gtk_window_destroy), NULL);
      gtk_window_present (GTK_WINDOW (dialog));
    }
  update_hover_status (self);
  update_search_window (self);
}

static void
job_error_cb (guint64 generation, const GError *error, gpointer user_data)
{
  SvWindow *self = user_data;

  gtk_label_set_text (self->progress_label, "failed");
  gtk_label_set_text (self->result_label, error->message);
}

static const SvJobCallbacks job_callbacks = { job_progress_cb, job_result_cb, job_error_cb };

#if SV_HAVE_CUDA
/* Worker thread, after a run: a CUDA result also carries a snapshot of its
 * labels on the device, in a buffer no shown result uses, when a view can
 * take them through CUDA–GL interop. */
static void
publish_cuda_labels (SvBackend *backend, SvJobResult *result, gpointer user_data)
{
  SvCudaLabelsPool *pool = user_data;
  g_autoptr (GError) error = NULL;
  SvCudaLabels *labels;

  if (g_strcmp0 (sv_backend_get_name (backend), "cuda") != 0
      || !sv_slice_view_cuda_interop_active ())
    return;
  labels = sv_cuda_labels_publish (pool, sv_backend_get_instance (backend), &error);
  if (!labels)
    {
      /* Both buffers still shown, or no device memory: the host path draws this result. */
      if (error)
        g_debug ("labels stay on the host path: %s", error->message);
      return;
    }
  result->device_data = labels;
  result->device_data_free = (GDestroyNotify)sv_cuda_labels_unref;
}
#endif

/* ---- status ---- */

static void
update_hover_status (SvWindow *self)
{
  g_autofree char *text = NULL;
  const SvVolume *v = self->volume;
  const guint *p = self->hover_zyx;
  gsize idx;
  GString *s;

  if (!self->hover_valid || !v)
    {
      gtk_label_set_text (self->hover_label, "");
      return;
    }
  idx = ((gsize)p[0] * v->ny + p[1]) * v->nx + p[2];
  s = g_string_new (NULL);
  g_string_append_printf (s, "x %u  y %u  z %u  ·  ", p[2], p[1], p[0]);
  if (v->nc == 1)
    g_string_append_printf (s, "I %.4g", v->data[idx]);
  else
    {
      g_string_append (s, "I");
      for (guint c = 0; c < v->nc; c++)
        g_string_append_printf (s, " %.3g", v->data[idx * v->nc + c]);
    }
  if (self->result)
    g_string_append_printf (s, "  ·  label %d", self->result->labels->data[idx]);
  text = g_string_free (s, FALSE);
  gtk_label_set_text (self->hover_label, text);
}

/* Teaching mode: the search window of the centre whose cluster holds the
 * voxel under the cursor. */
static void
update_search_window (SvWindow *self)
{
  SvJobResult *r = self->result;
  const SvVolume *v = self->volume;
  guint shape[3], start[3], step[3];
  int lo[3], hi[3];
  gsize k;
  const float *c;
  gint32 label;

  if (!r || !v || r->stop_after_iteration < 0 || !self->hover_valid || !r->n_centres)
    {
      for (guint i = 0; i < 3; i++)
        sv_slice_view_set_search_window (views (self, i), FALSE, NULL, NULL);
      return;
    }
  label = r->labels->data[((gsize)self->hover_zyx[0] * v->ny + self->hover_zyx[1]) * v->nx
                          + self->hover_zyx[2]];
  k = (gsize)(label - r->params.start_label);
  if (label < r->params.start_label || k >= r->n_centres || isnan (r->centres[k * 3]))
    {
      for (guint i = 0; i < 3; i++)
        sv_slice_view_set_search_window (views (self, i), FALSE, NULL, NULL);
      return;
    }
  shape[0] = v->nz;
  shape[1] = v->ny;
  shape[2] = v->nx;
  /* The window steps are regular_grid(shape, K), as the iterations use them. */
  sv_regular_grid (shape, (double)r->n_centres, start, step);
  c = r->centres + k * 3;
  for (guint a = 0; a < 3; a++)
    sv_arith_window (c[a], (int)step[a], (int)shape[a], &lo[a], &hi[a]);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_search_window (views (self, i), TRUE, lo, hi);
}

static void
hover_cb (SvSliceView *view, int z, int y, int x, SvWindow *self)
{
  self->active_view = view;
  self->hover_valid = z >= 0;
  if (self->hover_valid)
    {
      self->hover_zyx[0] = (guint)z;
      self->hover_zyx[1] = (guint)y;
      self->hover_zyx[2] = (guint)x;
    }
  update_hover_status (self);
  update_search_window (self);
}

static void
update_crosshairs (SvWindow *self)
{
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_crosshair (views (self, i), self->orthogonal, self->cursor_zyx[0],
                                 self->cursor_zyx[1], self->cursor_zyx[2]);
}

static void
pick_cb (SvSliceView *view, int z, int y, int x, SvWindow *self)
{
  self->cursor_zyx[0] = (guint)z;
  self->cursor_zyx[1] = (guint)y;
  self->cursor_zyx[2] = (guint)x;
  if (self->orthogonal)
    {
      sv_slice_view_set_slice (self->xy_view, (guint)z);
      sv_slice_view_set_slice (self->xz_view, (guint)y);
      sv_slice_view_set_slice (self->yz_view, (guint)x);
    }
  update_crosshairs (self);
}

static void
slice_notify_cb (SvSliceView *view, GParamSpec *pspec, SvWindow *self)
{
  /* Each view's slice is one coordinate of the shared cursor. */
  guint axis_to_zyx[3] = { 0, 1, 2 };
  self->cursor_zyx[axis_to_zyx[sv_slice_view_get_axis (view)]] = sv_slice_view_get_slice (view);
  update_crosshairs (self);
}

/* ---- volume ---- */

static void
auto_contrast (SvWindow *self)
{
  const SvVolume *v = self->volume;
  gsize n = sv_volume_n_voxels (v);
  float vmin = G_MAXFLOAT, vmax = -G_MAXFLOAT;
  guint bins = 4096;
  g_autofree guint64 *hist = g_new0 (guint64, bins);
  guint64 threshold, count;
  guint lo, hi;

  for (gsize i = 0; i < n * v->nc; i++)
    if (isfinite (v->data[i]))
      {
        vmin = MIN (vmin, v->data[i]);
        vmax = MAX (vmax, v->data[i]);
      }
  if (!(vmax > vmin))
    {
      sv_params_panel_set_intensity_range (self->params_panel, vmin, vmin + 1.0);
      return;
    }
  for (gsize i = 0; i < n * v->nc; i++)
    if (isfinite (v->data[i]))
      hist[MIN ((guint)((v->data[i] - vmin) / (vmax - vmin) * bins), bins - 1)]++;
  /* 0.35 % saturated in all, half on each side, as Fiji's Auto. */
  threshold = (guint64)(n * v->nc * 0.0035 / 2);
  for (lo = 0, count = 0; lo < bins - 1 && (count += hist[lo]) <= threshold; lo++)
    ;
  for (hi = bins - 1, count = 0; hi > lo && (count += hist[hi]) <= threshold; hi--)
    ;
  sv_params_panel_set_window (self->params_panel, vmin + (vmax - vmin) * lo / bins,
                              vmin + (vmax - vmin) * (hi + 1) / bins);
}

/* A job for the volume (and mask) shown, and its first request. */
static void
start_job (SvWindow *self)
{
  g_clear_pointer (&self->job, sv_job_free);
  self->job = sv_job_new (self->volume, self->mask, &job_callbacks, self);
#if SV_HAVE_CUDA
  if (!self->cuda_labels)
    self->cuda_labels = sv_cuda_labels_pool_new ();
  sv_job_set_result_hook (self->job, publish_cuda_labels, self->cuda_labels);
#endif
  submit (self);
}

void
sv_window_set_volume (SvWindow *self, SvVolume *volume, const char *name)
{
  float vmin = G_MAXFLOAT, vmax = -G_MAXFLOAT;
  g_autofree char *title = NULL;

  g_return_if_fail (SV_IS_WINDOW (self));
  g_return_if_fail (volume != NULL);

  /* The job borrows the volume: stop it before the volume goes. */
  g_clear_pointer (&self->job, sv_job_free);
  g_clear_pointer (&self->result, sv_job_result_unref);
  /* A mask belongs to the volume it was opened for. */
  g_clear_pointer (&self->mask, g_free);
  g_clear_pointer (&self->mask_path, g_free);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_volume (views (self, i), volume);
  g_clear_pointer (&self->volume, sv_volume_free);
  self->volume = volume;
  g_free (self->volume_name);
  self->volume_name = g_strdup (name);
  self->hover_valid = FALSE;
  self->cursor_zyx[0] = volume->nz / 2;
  self->cursor_zyx[1] = volume->ny / 2;
  self->cursor_zyx[2] = volume->nx / 2;
  update_crosshairs (self);

  title = g_strdup_printf ("%s — %u×%u×%u%s", name, volume->nz, volume->ny, volume->nx,
                           volume->nc == 3 ? " RGB" : "");
  gtk_label_set_text (self->title_label, title);
  gtk_window_set_title (GTK_WINDOW (self), title);
  gtk_label_set_text (self->result_label, "");
  gtk_label_set_text (self->hover_label, "");
  gtk_label_set_text (self->path_label, sv_slice_view_get_label_path (self->xy_view));
  if (verbose (self))
    g_message ("%s: %s", name, sv_slice_view_get_label_path (self->xy_view));

  sv_params_panel_set_spacing (self->params_panel, volume->spacing);
  for (gsize i = 0; i < sv_volume_n_voxels (volume) * volume->nc; i++)
    {
      vmin = MIN (vmin, volume->data[i]);
      vmax = MAX (vmax, volume->data[i]);
    }
  sv_params_panel_set_intensity_range (self->params_panel, vmin, vmax);
  auto_contrast (self);

  start_job (self);
}

gboolean
sv_window_load_sample (SvWindow *self, guint nz, guint ny, guint nx, GError **error)
{
  SvSynthParams params;
  SvVolume *volume;

  sv_synth_params_init_defaults (&params);
  params.nz = nz;
  params.ny = ny;
  params.nx = nx;
  params.n_cells = MAX (4, (guint)((double)nz * ny * nx / (24.0 * 24 * 24)));
  params.nucleus_radius = MAX (1.5, MIN (MIN (nz, ny), nx) / 14.0);
  volume = sv_synth_cells (&params, NULL, error);
  if (!volume)
    return FALSE;
  g_clear_pointer (&self->volume_path, g_free);
  sv_window_set_volume (self, volume, "Sample: cells and nuclei");
  self->sample = params;
  return TRUE;
}

static void
error_dialog_response_cb (GtkDialog *dialog, int response, SvWindow *self)
{
  gtk_window_destroy (GTK_WINDOW (dialog));
}

static void
show_error (SvWindow *self, const char *primary, const GError *error)
{
  GtkWidget *dialog;
  g_autofree char *line = g_strdup (error->message);
  char *nl = strchr (line, '\n');

  if (nl)
    *nl = '\0';
  if (self->error_dialog)
    gtk_window_destroy (self->error_dialog);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  dialog = gtk_message_dialog_new (GTK_WINDOW (self),
                                   GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                   GTK_MESSAGE_ERROR, GTK_BUTTONS_CLOSE, "%s", primary);
  gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog), "%s", line);
  G_GNUC_END_IGNORE_DEPRECATIONS
  g_signal_connect (dialog, "response", G_CALLBACK (error_dialog_response_cb), self);
  self->error_dialog = GTK_WINDOW (dialog);
  g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *)&self->error_dialog);
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
rebuild_recent_menu (SvWindow *self)
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

gboolean
sv_window_open_file (SvWindow *self, GFile *file)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *base = g_file_get_basename (file);
  g_autofree char *lower = NULL;
  g_autofree char *uri = NULL;
  SvVolume *volume;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (!path)
    {
      g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s is not a local file",
                   base ? base : "the file");
      show_error (self, "Cannot open the file", error);
      return FALSE;
    }
  lower = g_ascii_strdown (path, -1);
  if (g_str_has_suffix (lower, ".tif") || g_str_has_suffix (lower, ".tiff")
      || g_str_has_suffix (lower, ".btf") || g_str_has_suffix (lower, ".tf8"))
    volume = sv_tiff_read_volume (path, &error);
  else
    volume = sv_image_read_pixbuf (path, &error);
  if (!volume)
    {
      g_autofree char *primary = g_strdup_printf ("Cannot open “%s”", base);
      show_error (self, primary, error);
      return FALSE;
    }
  g_free (self->volume_path);
  self->volume_path = g_strdup (path);
  if (volume->nz == 1 && volume->nc == 3)
    {
      /* Colour images are clustered in Lab, where scikit-image's default
       * compactness of 10 is the sensible start. */
      SvSlicParams p;
      sv_params_panel_get_params (self->params_panel, &p);
      if (p.compactness < 1.0)
        {
          g_clear_pointer (&self->job, sv_job_free);
          sv_params_panel_set_compactness (self->params_panel, 10.0);
        }
    }
  sv_window_set_volume (self, volume, base);
  uri = g_file_get_uri (file);
  gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
  rebuild_recent_menu (self);
  return TRUE;
}

/* ---- panel ---- */

static void
display_changed_cb (SvWindow *self)
{
  sv_params_panel_get_display (self->params_panel, &self->display);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_display (views (self, i), &self->display);
}

static void
params_changed_cb (SvWindow *self)
{
  /* Teaching mode also decides whether centres are drawn. */
  display_changed_cb (self);
  submit (self);
}

/* ---- actions ---- */

/* What to do with the file the user picked. */
typedef void (*FileChosenFunc) (SvWindow *self, GFile *file, gpointer data);

typedef struct
{
  SvWindow *self; /* a reference while the dialog is up */
  FileChosenFunc func;
  gpointer data;
} ChooseData;

static void
choose_data_free (gpointer p)
{
  ChooseData *c = p;
  g_object_unref (c->self);
  g_free (c);
}

#if GTK_CHECK_VERSION(4, 10, 0)
static void
file_dialog_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  ChooseData *c = user_data;
  GtkFileDialog *dialog = GTK_FILE_DIALOG (source);
  g_autoptr (GFile) file = NULL;

  if (g_object_get_data (source, "save"))
    file = gtk_file_dialog_save_finish (dialog, result, NULL);
  else
    file = gtk_file_dialog_open_finish (dialog, result, NULL);
  if (file)
    c->func (c->self, file, c->data);
  choose_data_free (c);
}
#else
static void
native_response_cb (GtkNativeDialog *dialog, int response, ChooseData *c)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (file)
        c->func (c->self, file, c->data);
    }
  g_object_unref (dialog);
}
#endif

/* Asks for a file to open or save: GtkFileDialog on GTK 4.10 and later,
 * GtkFileChooserNative before (Debian 12 has GTK 4.8). */
static void
choose_file (SvWindow *self, const char *title, gboolean save, const char *filter_name,
             const char *const *patterns, const char *initial_name, FileChosenFunc func,
             gpointer data)
{
  ChooseData *c = g_new0 (ChooseData, 1);
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();

  c->self = g_object_ref (self);
  c->func = func;
  c->data = data;
  gtk_file_filter_set_name (filter, filter_name);
  for (guint i = 0; patterns[i]; i++)
    gtk_file_filter_add_pattern (filter, patterns[i]);

#if GTK_CHECK_VERSION(4, 10, 0)
  {
    g_autoptr (GtkFileDialog) dialog = gtk_file_dialog_new ();
    g_autoptr (GListStore) filters = g_list_store_new (GTK_TYPE_FILE_FILTER);

    g_list_store_append (filters, filter);
    gtk_file_dialog_set_title (dialog, title);
    gtk_file_dialog_set_modal (dialog, TRUE);
    gtk_file_dialog_set_filters (dialog, G_LIST_MODEL (filters));
    if (save)
      {
        g_object_set_data (G_OBJECT (dialog), "save", GINT_TO_POINTER (1));
        if (initial_name)
          gtk_file_dialog_set_initial_name (dialog, initial_name);
        gtk_file_dialog_save (dialog, GTK_WINDOW (self), NULL, file_dialog_done_cb, c);
      }
    else
      gtk_file_dialog_open (dialog, GTK_WINDOW (self), NULL, file_dialog_done_cb, c);
  }
#else
  {
    GtkFileChooserNative *chooser = gtk_file_chooser_native_new (
        title, GTK_WINDOW (self),
        save ? GTK_FILE_CHOOSER_ACTION_SAVE : GTK_FILE_CHOOSER_ACTION_OPEN,
        save ? "_Save" : "_Open", "_Cancel");

    gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
    if (save && initial_name)
      gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), initial_name);
    gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
    g_object_set_data_full (G_OBJECT (chooser), "sv-choose", c, choose_data_free);
    g_signal_connect (chooser, "response", G_CALLBACK (native_response_cb), c);
    gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
  }
#endif
}

static void
open_chosen (SvWindow *self, GFile *file, gpointer data)
{
  sv_window_open_file (self, file);
}

static void
open_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", "*.TIF",  "*.TIFF", "*.png",
                                          "*.PNG", "*.jpg",  "*.jpeg", "*.JPG",  NULL };

  choose_file (SV_WINDOW (widget), "Open Volume", FALSE, "TIFF, PNG and JPEG images", patterns,
               NULL, open_chosen, NULL);
}

gboolean
sv_window_open_mask (SvWindow *self, GFile *file)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *base = g_file_get_basename (file);
  g_autofree char *primary = g_strdup_printf ("Cannot use “%s” as a mask", base ? base : "the file");
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
  else if ((mask = sv_tiff_read_mask (path, &nz, &ny, &nx, &error))
           && (nz != v->nz || ny != v->ny || nx != v->nx))
    g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                 "the mask is %u×%u×%u (z×y×x) but the volume is %u×%u×%u", nz, ny, nx, v->nz,
                 v->ny, v->nx);
  if (error)
    {
      show_error (self, primary, error);
      return FALSE;
    }

  /* The job borrows the mask: stop it before the old mask goes. */
  g_clear_pointer (&self->job, sv_job_free);
  g_free (self->mask);
  self->mask = g_steal_pointer (&mask);
  g_free (self->mask_path);
  self->mask_path = g_steal_pointer (&path);
  start_job (self);
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

  choose_file (SV_WINDOW (widget), "Open Mask", FALSE, "TIFF masks (nonzero = inside)", patterns,
               NULL, open_mask_chosen, NULL);
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
    show_error (self, "Cannot make the sample", error);
}

/* Quotes a path for the shell only when it needs quoting. */
static char *
shell_word (const char *path)
{
  for (const char *c = path; *c; c++)
    if (!g_ascii_isalnum (*c) && !strchr ("/._-+,:@%", *c))
      return g_shell_quote (path);
  return g_strdup (path);
}

char *
sv_window_build_command (SvWindow *self)
{
  GString *cmd = g_string_new ("supervox-cli slic ");
  g_autofree char *in = NULL;
  SvSlicParams params;

  if (self->result)
    {
      params = self->result->params;
      /* Teaching mode shows the state after n iterations without
       * connectivity (SvRunControl): the same as a full run with those. */
      if (self->result->stop_after_iteration >= 0)
        {
          params.max_num_iter = MIN (params.max_num_iter, self->result->stop_after_iteration);
          params.enforce_connectivity = FALSE;
        }
    }
  else
    sv_params_panel_get_params (self->params_panel, &params);
  if (!self->volume_path)
    {
      /* The sample is made again, byte for byte, by the CLI. */
      g_string_printf (cmd,
                       "supervox-cli synth -o sample.tif --shape %u,%u,%u --cells %u "
                       "--nucleus-radius %.17g --blur %.17g --noise %.17g --seed %" G_GUINT64_FORMAT
                       " && supervox-cli slic ",
                       self->sample.nz, self->sample.ny, self->sample.nx, self->sample.n_cells,
                       self->sample.nucleus_radius, self->sample.blur_sigma,
                       self->sample.noise_sigma, self->sample.seed);
    }
  in = shell_word (self->volume_path ? self->volume_path : "sample.tif");
  g_string_append_printf (cmd, "%s -o labels.tif", in);
  if (self->mask_path)
    {
      g_autofree char *mask = shell_word (self->mask_path);
      g_string_append_printf (cmd, " --mask %s", mask);
    }
  sv_slic_params_append_cli (&params, cmd);
  /* The backend that made the labels on screen: "auto" could pick another
   * one on the machine the line runs on, or after a fallback here. */
  g_string_append_printf (cmd, " --backend %s",
                          self->result ? self->result->backend_name
                                       : sv_params_panel_get_backend (self->params_panel));
  return g_string_free (cmd, FALSE);
}

static void
copy_command_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  g_autofree char *cmd = sv_window_build_command (self);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), cmd);
  gtk_label_set_text (self->result_label, "command copied");
  if (verbose (self))
    g_message ("%s", cmd);
}

static char *
with_extension (const char *path, const char *ext)
{
  const char *dot = strrchr (path, '.');
  const char *slash = strrchr (path, '/');

  if (dot && (!slash || dot > slash))
    {
      g_autofree char *stem = g_strndup (path, (gsize)(dot - path));
      return g_strconcat (stem, ext, NULL);
    }
  return g_strconcat (path, ext, NULL);
}

gboolean
sv_window_export_labels (SvWindow *self, const char *path, GError **error)
{
  g_autofree char *params_json = NULL;
  g_autofree char *json_path = NULL;
  g_autofree char *json = NULL;
  SvJobResult *r = self->result;

  if (!r)
    {
      g_set_error_literal (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "no labels yet: wait for the segmentation to finish");
      return FALSE;
    }
  if (!sv_tiff_write_labels (path, r->labels, error))
    return FALSE;
  params_json = sv_slic_params_to_json (&r->params);
  json = g_strdup_printf ("{\"program\": \"supervox\", \"version\": \"%s\", \"backend\": \"%s\", "
                          "\"n_labels\": %" G_GSIZE_FORMAT ", \"params\": %s}\n",
                          SV_VERSION, r->backend_name, r->stats.n_labels, params_json);
  json_path = with_extension (path, ".json");
  return g_file_set_contents (json_path, json, -1, error);
}

static void
export_chosen (SvWindow *self, GFile *file, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);

  if (path && !sv_window_export_labels (self, path, &error))
    show_error (self, "Cannot export the labels", error);
}

static void
export_labels_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", NULL };

  choose_file (SV_WINDOW (widget), "Export Labels", TRUE, "TIFF", patterns, "labels.tif",
               export_chosen, NULL);
}

static void
screenshot_captured_cb (SvSliceView *view, GdkTexture *texture, gpointer user_data)
{
  char *path = user_data;

  if (!gdk_texture_save_to_png (texture, path))
    g_warning ("could not write %s", path);
  g_free (path);
}

static void
screenshot_chosen (SvWindow *self, GFile *file, gpointer data)
{
  if (g_file_peek_path (file))
    sv_slice_view_capture (self->active_view, screenshot_captured_cb,
                           g_strdup (g_file_peek_path (file)));
}

static void
screenshot_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.png", NULL };

  choose_file (SV_WINDOW (widget), "Save Screenshot", TRUE, "PNG", patterns, "supervox.png",
               screenshot_chosen, NULL);
}

gboolean
sv_window_save_preset (SvWindow *self, const char *path, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  SvSlicParams p;

  sv_params_panel_get_params (self->params_panel, &p);
  g_key_file_set_int64 (kf, "slic", "n_segments", p.n_segments);
  g_key_file_set_double (kf, "slic", "compactness", p.compactness);
  g_key_file_set_integer (kf, "slic", "max_num_iter", p.max_num_iter);
  g_key_file_set_double (kf, "slic", "sigma", p.sigma[0]);
  g_key_file_set_double_list (kf, "slic", "spacing", p.spacing, 3);
  g_key_file_set_boolean (kf, "slic", "enforce_connectivity", p.enforce_connectivity);
  g_key_file_set_double (kf, "slic", "min_size_factor", p.min_size_factor);
  g_key_file_set_double (kf, "slic", "max_size_factor", p.max_size_factor);
  g_key_file_set_boolean (kf, "slic", "slic_zero", p.slic_zero);
  g_key_file_set_integer (kf, "slic", "start_label", p.start_label);
  g_key_file_set_string (kf, "slic", "backend", sv_params_panel_get_backend (self->params_panel));
  return g_key_file_save_to_file (kf, path, error);
}

gboolean
sv_window_load_preset (SvWindow *self, const char *path, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree double *spacing = NULL;
  g_autofree char *backend = NULL;
  g_autoptr (GError) local = NULL;
  gsize n = 0;
  SvSlicParams p;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, error))
    return FALSE;
  sv_params_panel_get_params (self->params_panel, &p);
#define GET(field, getter, key)                                                                    \
  do                                                                                               \
    {                                                                                              \
      if (g_key_file_has_key (kf, "slic", key, NULL))                                              \
        {                                                                                          \
          p.field = getter (kf, "slic", key, &local);                                              \
          if (local)                                                                               \
            {                                                                                      \
              g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ", path);          \
              return FALSE;                                                                        \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
  while (0)
  GET (n_segments, g_key_file_get_int64, "n_segments");
  GET (compactness, g_key_file_get_double, "compactness");
  GET (max_num_iter, g_key_file_get_integer, "max_num_iter");
  GET (sigma[0], g_key_file_get_double, "sigma");
  GET (enforce_connectivity, g_key_file_get_boolean, "enforce_connectivity");
  GET (min_size_factor, g_key_file_get_double, "min_size_factor");
  GET (max_size_factor, g_key_file_get_double, "max_size_factor");
  GET (slic_zero, g_key_file_get_boolean, "slic_zero");
  GET (start_label, g_key_file_get_integer, "start_label");
#undef GET
  spacing = g_key_file_get_double_list (kf, "slic", "spacing", &n, NULL);
  if (spacing && n == 3)
    memcpy (p.spacing, spacing, sizeof p.spacing);
  if (!sv_slic_params_validate (&p, error))
    {
      g_prefix_error (error, "%s: ", path);
      return FALSE;
    }
  backend = g_key_file_get_string (kf, "slic", "backend", NULL);
  if (backend)
    sv_params_panel_set_backend (self->params_panel, backend);
  sv_params_panel_set_params (self->params_panel, &p);
  return TRUE;
}

static void
preset_chosen (SvWindow *self, GFile *file, gpointer data)
{
  gboolean save = GPOINTER_TO_INT (data);
  g_autoptr (GError) error = NULL;
  const char *path = g_file_peek_path (file);
  gboolean ok;

  if (!path)
    return;
  ok = save ? sv_window_save_preset (self, path, &error)
            : sv_window_load_preset (self, path, &error);
  if (!ok)
    show_error (self, save ? "Cannot save the preset" : "Cannot load the preset", error);
}

static void
preset_action (GtkWidget *widget, const char *name, GVariant *param)
{
  gboolean save = g_str_equal (name, "win.save-preset");
  static const char *const patterns[] = { "*.svpreset", "*.ini", NULL };

  choose_file (SV_WINDOW (widget), save ? "Save Preset" : "Load Preset", save, "Supervox presets",
               patterns, save ? "preset.svpreset" : NULL, preset_chosen, GINT_TO_POINTER (save));
}

static void
slice_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  int delta = g_str_equal (name, "win.slice-next") ? 1 : -1;

  sv_slice_view_step_slice (self->active_view, delta);
}

static void
zoom_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);

  for (guint i = 0; i < 3; i++)
    {
      if (g_str_equal (name, "win.zoom-fit"))
        sv_slice_view_zoom_fit (views (self, i));
      else
        sv_slice_view_zoom_one (views (self, i));
    }
}

static void
auto_contrast_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  if (self->volume)
    auto_contrast (self);
}

static void
overlay_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  const char *mode = g_variant_get_string (param, NULL);

  sv_params_panel_set_overlay (self->params_panel, g_str_equal (mode, "filled") ? SV_OVERLAY_FILLED
                                                   : g_str_equal (mode, "off")
                                                       ? SV_OVERLAY_OFF
                                                       : SV_OVERLAY_BOUNDARIES);
}

static void
cycle_overlay_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  sv_params_panel_set_overlay (self->params_panel, (self->display.overlay + 1) % 3);
}

static void
set_orthogonal (SvWindow *self, gboolean orthogonal)
{
  if (self->orthogonal == orthogonal)
    return;
  self->orthogonal = orthogonal;
  gtk_widget_set_visible (GTK_WIDGET (self->xz_view), self->orthogonal);
  gtk_widget_set_visible (GTK_WIDGET (self->yz_view), self->orthogonal);
  if (self->orthogonal)
    {
      sv_slice_view_set_slice (self->xy_view, self->cursor_zyx[0]);
      sv_slice_view_set_slice (self->xz_view, self->cursor_zyx[1]);
      sv_slice_view_set_slice (self->yz_view, self->cursor_zyx[2]);
    }
  update_crosshairs (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ORTHOGONAL]);
}

static void
teach_step (SvWindow *self, int delta)
{
  SvSlicParams p;
  int it = sv_params_panel_get_stop_after_iteration (self->params_panel);

  sv_params_panel_get_params (self->params_panel, &p);
  if (it < 0)
    {
      sv_params_panel_set_teaching (self->params_panel, TRUE);
      it = 0;
      delta = MAX (delta, 0);
    }
  sv_params_panel_set_iteration (self->params_panel, CLAMP (it + delta, 0, p.max_num_iter));
}

static gboolean
play_tick_cb (gpointer data)
{
  SvWindow *self = data;
  SvSlicParams p;

  /* Advance only once the last step is on screen. */
  if (self->job && sv_job_is_busy (self->job))
    return G_SOURCE_CONTINUE;
  sv_params_panel_get_params (self->params_panel, &p);
  if (sv_params_panel_get_stop_after_iteration (self->params_panel) >= p.max_num_iter)
    {
      self->play_source = 0;
      return G_SOURCE_REMOVE;
    }
  teach_step (self, 1);
  return G_SOURCE_CONTINUE;
}

static void
teach_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);

  if (g_str_equal (name, "win.teach-step"))
    teach_step (self, 1);
  else if (g_str_equal (name, "win.teach-back"))
    teach_step (self, -1);
  else if (self->play_source)
    g_clear_handle_id (&self->play_source, g_source_remove);
  else
    {
      if (sv_params_panel_get_stop_after_iteration (self->params_panel) < 0)
        teach_step (self, 0);
      self->play_source = g_timeout_add (600, play_tick_cb, self);
    }
}

static gboolean
drop_cb (GtkDropTarget *target, const GValue *value, double x, double y, SvWindow *self)
{
  GSList *files;

  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  files = gdk_file_list_get_files (g_value_get_boxed (value));
  if (!files)
    return FALSE;
  sv_window_open_file (self, files->data);
  g_slist_free (files);
  return TRUE;
}

/* ---- accessors ---- */

const SvVolume *
sv_window_get_volume (SvWindow *self)
{
  return self->volume;
}

SvJobResult *
sv_window_get_result (SvWindow *self)
{
  return self->result;
}

guint64
sv_window_get_generation (SvWindow *self)
{
  return self->generation;
}

SvParamsPanel *
sv_window_get_params_panel (SvWindow *self)
{
  return self->params_panel;
}

SvSliceView *
sv_window_get_slice_view (SvWindow *self, SvAxis axis)
{
  return views (self, axis == SV_AXIS_XY ? 0 : axis == SV_AXIS_XZ ? 1 : 2);
}

GtkWindow *
sv_window_get_error_dialog (SvWindow *self)
{
  return self->error_dialog;
}

const char *
sv_window_get_hover_text (SvWindow *self)
{
  return gtk_label_get_text (self->hover_label);
}

GtkWidget *
sv_window_new (GtkApplication *application)
{
  return g_object_new (SV_TYPE_WINDOW, "application", application, NULL);
}

static void
sv_window_dispose (GObject *object)
{
  SvWindow *self = SV_WINDOW (object);

  g_clear_handle_id (&self->play_source, g_source_remove);
  /* The worker borrows the volume and calls back into the window. */
  g_clear_pointer (&self->job, sv_job_free);
  g_clear_pointer (&self->result, sv_job_result_unref);
#if SV_HAVE_CUDA
  /* Buffers still held by the views' results go with those results. */
  g_clear_pointer (&self->cuda_labels, sv_cuda_labels_pool_free);
#endif
  if (self->error_dialog)
    gtk_window_destroy (self->error_dialog);
  gtk_widget_dispose_template (GTK_WIDGET (self), SV_TYPE_WINDOW);
  G_OBJECT_CLASS (sv_window_parent_class)->dispose (object);
}

static void
sv_window_finalize (GObject *object)
{
  SvWindow *self = SV_WINDOW (object);

  g_clear_pointer (&self->volume, sv_volume_free);
  g_free (self->volume_name);
  g_free (self->volume_path);
  g_free (self->mask);
  g_free (self->mask_path);
  G_OBJECT_CLASS (sv_window_parent_class)->finalize (object);
}

static void
sv_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SvWindow *self = SV_WINDOW (object);

  switch (prop_id)
    {
    case PROP_ORTHOGONAL:
      g_value_set_boolean (value, self->orthogonal);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_window_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  SvWindow *self = SV_WINDOW (object);

  switch (prop_id)
    {
    case PROP_ORTHOGONAL:
      set_orthogonal (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_window_class_init (SvWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sv_window_dispose;
  object_class->finalize = sv_window_finalize;
  object_class->get_property = sv_window_get_property;
  object_class->set_property = sv_window_set_property;

  /* XY, XZ and YZ views linked by a crosshair. */
  properties[PROP_ORTHOGONAL]
      = g_param_spec_boolean ("orthogonal", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (SV_TYPE_SLICE_VIEW);
  g_type_ensure (SV_TYPE_PARAMS_PANEL);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-window.ui");
  gtk_widget_class_bind_template_child (widget_class, SvWindow, title_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, views_grid);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, xy_view);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, xz_view);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, yz_view);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, params_panel);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, progress_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, result_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, hover_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, path_label);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, recent_section);
  gtk_widget_class_bind_template_callback (widget_class, params_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, display_changed_cb);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "win.open-sample", NULL, open_sample_action);
  gtk_widget_class_install_action (widget_class, "win.open-mask", NULL, open_mask_action);
  gtk_widget_class_install_action (widget_class, "win.export-labels", NULL, export_labels_action);
  gtk_widget_class_install_action (widget_class, "win.screenshot", NULL, screenshot_action);
  gtk_widget_class_install_action (widget_class, "win.copy-command", NULL, copy_command_action);
  gtk_widget_class_install_action (widget_class, "win.save-preset", NULL, preset_action);
  gtk_widget_class_install_action (widget_class, "win.load-preset", NULL, preset_action);
  gtk_widget_class_install_action (widget_class, "win.slice-next", NULL, slice_action);
  gtk_widget_class_install_action (widget_class, "win.slice-prev", NULL, slice_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-one", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.auto-contrast", NULL, auto_contrast_action);
  gtk_widget_class_install_action (widget_class, "win.overlay", "s", overlay_action);
  gtk_widget_class_install_action (widget_class, "win.cycle-overlay", NULL, cycle_overlay_action);
  gtk_widget_class_install_property_action (widget_class, "win.orthogonal", "orthogonal");
  gtk_widget_class_install_action (widget_class, "win.teach-step", NULL, teach_action);
  gtk_widget_class_install_action (widget_class, "win.teach-back", NULL, teach_action);
  gtk_widget_class_install_action (widget_class, "win.teach-play", NULL, teach_action);

  /* Arrow keys move slices only while the pointer/focus is in the views, so
   * that sliders and spin buttons keep their own arrows. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Down, 0, "win.slice-next", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Up, 0, "win.slice-prev", NULL);
}

static void
sv_window_init (SvWindow *self)
{
  GtkDropTarget *drop;
  GtkEventController *keys;
  GtkShortcutController *sc;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->active_view = self->xy_view;
  sv_display_init_defaults (&self->display);

  for (guint i = 0; i < 3; i++)
    {
      g_signal_connect (views (self, i), "hover", G_CALLBACK (hover_cb), self);
      g_signal_connect (views (self, i), "pick", G_CALLBACK (pick_cb), self);
      g_signal_connect (views (self, i), "notify::slice", G_CALLBACK (slice_notify_cb), self);
    }

  /* The recent-files section lives in the template's menu. */
  rebuild_recent_menu (self);

  drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (drop_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  sc = GTK_SHORTCUT_CONTROLLER (gtk_shortcut_controller_new ());
  gtk_shortcut_controller_add_shortcut (sc,
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Up, 0),
                                                          gtk_named_action_new ("win.slice-next")));
  gtk_shortcut_controller_add_shortcut (sc,
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Right, 0),
                                                          gtk_named_action_new ("win.slice-next")));
  gtk_shortcut_controller_add_shortcut (sc,
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Down, 0),
                                                          gtk_named_action_new ("win.slice-prev")));
  gtk_shortcut_controller_add_shortcut (sc,
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Left, 0),
                                                          gtk_named_action_new ("win.slice-prev")));
  keys = GTK_EVENT_CONTROLLER (sc);
  gtk_widget_add_controller (GTK_WIDGET (self->views_grid), keys);
}

/* Supervox GUI: the main window's quality numbers: each exact result's
 * quality is computed by the engine on a worker thread of its own
 * (quality.h) and shown in the quality panel; a ground truth opened beside
 * the volume adds boundary recall, undersegmentation error and achievable
 * accuracy; with a pin (sv-window-pins.c) the panel shows the differences
 * between the live and the pinned result. In teaching mode the worker also
 * follows the iterations' convergence, plotted with the step shown. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include "supervox/sv-error.h"
#include "supervox/sv-io.h"

SvJobResult *
sv_window_shown_result (SvWindow *self)
{
  return self->showing_pinned && self->pinned ? self->pinned->result : self->result;
}

SvQuality *
sv_window_shown_quality (SvWindow *self)
{
  SvJobResult *shown = sv_window_shown_result (self);

  if (self->showing_pinned && self->pinned)
    return self->pinned->quality;
  if (shown && self->quality && self->quality->generation == shown->generation)
    return self->quality;
  return NULL;
}

/* The panel shows the shown result's numbers, and the other's differences. */
void
sv_window_quality_update_panel (SvWindow *self)
{
  SvJobResult *shown = sv_window_shown_result (self);
  SvQuality *q = sv_window_shown_quality (self);
  gboolean flipped = self->showing_pinned && self->pinned;
  SvQuality *other = NULL;
  SvJobResult *other_result = NULL;

  if (self->pinned && self->pinned->quality)
    {
      other = flipped ? (self->quality && self->result
                                 && self->quality->generation == self->result->generation
                             ? self->quality
                             : NULL)
                      : self->pinned->quality;
      other_result = other ? (flipped ? self->result : self->pinned->result) : NULL;
    }
  sv_window_pins_update (self);
  if (q)
    sv_quality_panel_set (self->quality_panel, q, shown, other, other_result, flipped);
  if (!shown)
    sv_quality_panel_set_state (self->quality_panel, NULL);
  else if (self->stopped && shown->in_progress_iteration > 0 && !flipped)
    {
      g_autofree char *text = g_strdup_printf (
          q ? "stopped after iteration %u of %d: the numbers are these clusters', before the "
              "connectivity step"
            : "stopped after iteration %u of %d: measuring these clusters…",
          shown->in_progress_iteration, shown->params.max_num_iter);
      sv_quality_panel_set_state (self->quality_panel, text);
    }
  else if (self->stopped && shown->preview_factor > 1 && !flipped)
    sv_quality_panel_set_state (self->quality_panel,
                                "stopped on a preview: the numbers are the last exact result's");
  else if (shown->preview_factor > 1)
    sv_quality_panel_set_state (self->quality_panel,
                                "preview on screen: the numbers are the last exact result's");
  else if (shown->in_progress_iteration > 0)
    sv_quality_panel_set_state (self->quality_panel,
                                "run still going: the numbers are the last exact result's");
  else if (!q)
    sv_quality_panel_set_state (self->quality_panel, "computing…");
  else if (flipped)
    {
      g_autofree char *title = sv_pin_title (self->pinned);
      g_autofree char *text = g_strdup_printf ("%s (C flips to the live labels)", title);
      sv_quality_panel_set_state (self->quality_panel, text);
    }
  else if (shown->region)
    {
      const guint *o = shown->region_offset, *n = shown->region_shape;
      g_autofree char *text
          = g_strdup_printf ("the region x %u–%u · y %u–%u · z %u–%u only", o[2], o[2] + n[2] - 1,
                             o[1], o[1] + n[1] - 1, o[0], o[0] + n[0] - 1);
      sv_quality_panel_set_state (self->quality_panel, text);
    }
  else
    sv_quality_panel_set_state (self->quality_panel, NULL);
}

static void
quality_done_cb (SvQuality *quality, gpointer user_data)
{
  SvWindow *self = user_data;

  /* A pin's own numbers, or an older analysis than the one shown still on
   * its way. */
  if (sv_window_pins_take_quality (self, quality)
      || (self->quality && self->quality->generation > quality->generation))
    {
      sv_window_quality_update_panel (self);
      return;
    }
  g_clear_pointer (&self->quality, sv_quality_unref);
  self->quality = sv_quality_ref (quality);
  if (sv_window_verbose (self))
    g_message ("quality of generation %" G_GUINT64_FORMAT ": %" G_GSIZE_FORMAT
               " labels, EV %.4f, compactness %.4f in %.3f s",
               quality->generation, quality->metrics.n_labels, quality->metrics.explained_variation,
               quality->metrics.compactness, quality->seconds);
  sv_window_quality_update_panel (self);
  sv_window_update_selection (self);
}

static void
quality_failed_cb (guint64 generation, const GError *error, gpointer user_data)
{
  SvWindow *self = user_data;
  g_autofree char *text = g_strdup_printf ("no numbers: %s", error->message);

  sv_quality_panel_set_state (self->quality_panel, text);
}

/* The teaching step on screen, 0 outside teaching mode. */
static int
teaching_step (SvWindow *self)
{
  SvJobResult *shown = sv_window_shown_result (self);
  return shown && shown->stop_after_iteration >= 0 ? shown->stop_after_iteration : 0;
}

static void
converged_cb (SvConvergence *convergence, gpointer user_data)
{
  SvWindow *self = user_data;
  g_autofree char *key = sv_slic_params_to_json (&convergence->params);

  /* Parameters changed since it was asked for: a newer one is coming. */
  if (g_strcmp0 (key, self->convergence_key) != 0)
    return;
  g_clear_pointer (&self->convergence, sv_convergence_unref);
  self->convergence = sv_convergence_ref (convergence);
  /* Step 0 too: the plot shows the whole run to come. */
  if (sv_window_shown_result (self) && sv_window_shown_result (self)->stop_after_iteration >= 0)
    sv_quality_panel_set_convergence (self->quality_panel, convergence, teaching_step (self));
  sv_window_teach_update (self);
}

/* Teaching mode: the convergence plot for the parameters of the step shown,
 * asked for once per set of parameters. */
static void
update_convergence (SvWindow *self, gboolean ask_again)
{
  SvJobResult *shown = sv_window_shown_result (self);
  g_autofree char *key = NULL;

  if (!shown || shown->stop_after_iteration < 0)
    {
      sv_quality_panel_set_convergence (self->quality_panel, NULL, 0);
      return;
    }
  key = sv_slic_params_to_json (&shown->params);
  if (ask_again || g_strcmp0 (key, self->convergence_key) != 0)
    {
      g_clear_pointer (&self->convergence, sv_convergence_unref);
      g_free (self->convergence_key);
      self->convergence_key = g_steal_pointer (&key);
      if (self->quality_worker)
        sv_quality_worker_request_convergence (self->quality_worker, &shown->params);
    }
  sv_quality_panel_set_convergence (self->quality_panel, self->convergence, teaching_step (self));
  sv_window_teach_update (self);
}

static const SvQualityCallbacks quality_callbacks
    = { quality_done_cb, quality_failed_cb, converged_cb };

/* Something on screen shows the live result's numbers. */
static gboolean
quality_wanted (SvWindow *self)
{
  GtkWidget *page;

  if (self->selection_valid)
    return TRUE;
  if (self->pinned && self->pin_list && sv_pin_list_get_highlight_differences (self->pin_list))
    return TRUE;
  page = gtk_notebook_get_nth_page (self->side_notebook,
                                    gtk_notebook_get_current_page (self->side_notebook));
  return page
         && (gtk_widget_is_ancestor (GTK_WIDGET (self->quality_panel), page)
             || page == GTK_WIDGET (self->quality_panel)
             || (self->pin_list
                 && (page == GTK_WIDGET (self->pin_list)
                     || gtk_widget_is_ancestor (GTK_WIDGET (self->pin_list), page))));
}

/* The live result, handed to the worker (once per generation). */
static void
submit (SvWindow *self, SvJobResult *result)
{
  self->quality_asked_generation = result->generation;
  self->quality_submissions++;
  sv_quality_worker_submit (self->quality_worker, result);
}

static void
drop_after_paint (SvWindow *self)
{
  if (self->frame_clock != NULL)
    g_clear_signal_handler (&self->quality_paint_handler, self->frame_clock);
  self->quality_paint_handler = 0;
  g_clear_pointer (&self->quality_after_paint, sv_job_result_unref);
}

static void
after_paint_cb (GdkFrameClock *clock, SvWindow *self)
{
  g_autoptr (SvJobResult) result = g_steal_pointer (&self->quality_after_paint);

  drop_after_paint (self);
  if (result != NULL && self->quality_worker != NULL)
    submit (self, result);
}

/* A new result's quality starts once the frame that draws the result is
 * painted: its host copy of the labels and its threads on every core
 * would otherwise share the device and the cores with that frame (at 256³
 * on the GPU machine the overlay came 60 ms after its result instead of
 * in the next frame). SV_GUI_QUALITY_AT_ONCE=1 starts it at once, as
 * before, to measure that. */
static void
submit_after_paint (SvWindow *self, SvJobResult *result)
{
  if (self->frame_clock == NULL || !gtk_widget_get_mapped (GTK_WIDGET (self))
      || g_strcmp0 (g_getenv ("SV_GUI_QUALITY_AT_ONCE"), "1") == 0)
    {
      submit (self, result);
      return;
    }
  g_clear_pointer (&self->quality_after_paint, sv_job_result_unref);
  self->quality_after_paint = sv_job_result_ref (result);
  /* Asked for: sv_window_quality_ensure does not hand it over twice. */
  self->quality_asked_generation = result->generation;
  if (self->quality_paint_handler == 0)
    self->quality_paint_handler = g_signal_connect (self->frame_clock, "after-paint",
                                                    G_CALLBACK (after_paint_cb), self);
  gdk_frame_clock_request_phase (self->frame_clock, GDK_FRAME_CLOCK_PHASE_PAINT);
}

/* The live result the panel measures: a final one, or a stopped run's
 * iteration. */
static gboolean
measurable (SvWindow *self, SvJobResult *result)
{
  return result
         && (sv_job_result_is_final (result)
             || (self->stopped && result->in_progress_iteration > 0
                 && result->preview_factor <= 1));
}

void
sv_window_quality_ensure (SvWindow *self)
{
  SvJobResult *r = self->result;

  if (!self->quality_worker || !measurable (self, r) || !quality_wanted (self))
    return;
  if ((self->quality && self->quality->generation == r->generation)
      || self->quality_asked_generation == r->generation)
    return;
  submit (self, r);
  sv_window_quality_update_panel (self);
}

static void
side_page_cb (GtkNotebook *notebook, GParamSpec *pspec, SvWindow *self)
{
  sv_window_quality_ensure (self);
}

void
sv_window_quality_init (SvWindow *self)
{
  g_signal_connect_object (self->side_notebook, "notify::page", G_CALLBACK (side_page_cb), self,
                           0);
}

guint
sv_window_get_quality_submissions (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), 0);
  return self->quality_submissions;
}

void
sv_window_quality_start (SvWindow *self)
{
  sv_window_quality_stop (self);
  self->quality_worker
      = sv_quality_worker_new (sv_window_job_volume (self), sv_window_job_mask (self),
                               sv_window_job_truth (self), &quality_callbacks, self);
  sv_window_pins_start_worker (self);
  /* A new worker: what the old one was asked is not coming. */
  self->quality_asked_generation = 0;
  if (self->result && sv_job_result_is_final (self->result) && quality_wanted (self))
    submit (self, self->result);
  /* Another mask changes the iterations too. */
  update_convergence (self, TRUE);
}

void
sv_window_quality_unrealize (SvWindow *self)
{
  g_autoptr (SvJobResult) result = g_steal_pointer (&self->quality_after_paint);

  drop_after_paint (self);
  if (result != NULL && self->quality_worker != NULL)
    submit (self, result);
}

void
sv_window_quality_stop (SvWindow *self)
{
  drop_after_paint (self);
  g_clear_pointer (&self->quality_worker, sv_quality_worker_free);
}

void
sv_window_quality_forget (SvWindow *self)
{
  sv_window_quality_stop (self);
  g_clear_pointer (&self->quality, sv_quality_unref);
  g_clear_pointer (&self->truth, sv_labels_free);
  g_clear_pointer (&self->truth_path, g_free);
  sv_window_pins_forget (self);
  g_clear_pointer (&self->convergence, sv_convergence_unref);
  g_clear_pointer (&self->convergence_key, g_free);
  self->selection_valid = FALSE;
  sv_quality_panel_set (self->quality_panel, NULL, NULL, NULL, NULL, FALSE);
  sv_quality_panel_set_state (self->quality_panel, NULL);
  sv_window_update_selection (self);
}

void
sv_window_quality_stopped (SvWindow *self)
{
  /* No final result follows a stopped run: its last iteration is what the
   * views show, so that is what the panel measures. */
  if (self->quality_worker && self->result && self->result->in_progress_iteration > 0
      && self->result->preview_factor <= 1 && quality_wanted (self))
    submit (self, self->result);
  sv_window_quality_update_panel (self);
}

void
sv_window_quality_result (SvWindow *self, SvJobResult *result)
{
  if (self->quality_worker && sv_job_result_is_final (result) && quality_wanted (self))
    submit_after_paint (self, result);
  /* Flipped to the pinned result: the views keep showing it. */
  if (self->showing_pinned && self->pinned)
    for (guint i = 0; i < 3; i++)
      sv_slice_view_set_result (sv_window_view (self, i), self->pinned->result);
  sv_window_quality_update_panel (self);
  update_convergence (self, FALSE);
  sv_window_update_selection (self);
}

/* ---- ground truth ---- */

static void
read_truth_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GError *error = NULL;
  SvLabels *truth = sv_tiff_read_labels (data, &error);

  if (truth)
    g_task_return_pointer (task, truth, (GDestroyNotify)sv_labels_free);
  else
    g_task_return_error (task, error);
}

static void
truth_read_cb (GObject *source, GAsyncResult *res, gpointer user_data)
{
  SvWindow *self = SV_WINDOW (source);
  g_autofree char *path = g_strdup (g_task_get_task_data (G_TASK (res)));
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) truth = g_task_propagate_pointer (G_TASK (res), &error);
  const SvVolume *v = self->volume;

  /* The window was closed while the file was read. */
  if (!self->quality_panel)
    return;

  if (truth && !v)
    g_set_error_literal (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                         "open a volume first");
  else if (truth && (truth->nz != v->nz || truth->ny != v->ny || truth->nx != v->nx))
    g_set_error (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                 "the ground truth is %u×%u×%u (z×y×x) but the volume is %u×%u×%u", truth->nz,
                 truth->ny, truth->nx, v->nz, v->ny, v->nx);
  if (error)
    {
      sv_window_show_error (self, "Cannot use this ground truth", error);
      return;
    }
  /* The worker borrows the truth: a new one needs a new worker. */
  sv_window_quality_stop (self);
  g_clear_pointer (&self->truth, sv_labels_free);
  self->truth = g_steal_pointer (&truth);
  g_free (self->truth_path);
  self->truth_path = g_steal_pointer (&path);
  g_clear_pointer (&self->quality, sv_quality_unref);
  /* The pins' numbers against the new truth too (the worker computes them
   * first). */
  sv_window_pins_forget_quality (self);
  sv_window_quality_start (self);
  sv_window_quality_update_panel (self);
  gtk_notebook_set_current_page (
      self->side_notebook,
      gtk_notebook_page_num (self->side_notebook, GTK_WIDGET (self->quality_panel)));
}

gboolean
sv_window_open_ground_truth (SvWindow *self, GFile *file)
{
  g_autoptr (GTask) task = NULL;
  char *path;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  path = g_file_get_path (file);
  if (!path)
    {
      g_autoptr (GError) error = g_error_new_literal (SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                                                      "the ground truth is not a local file");
      sv_window_show_error (self, "Cannot open the ground truth", error);
      return FALSE;
    }
  task = g_task_new (self, NULL, truth_read_cb, NULL);
  g_task_set_task_data (task, path, g_free);
  g_task_run_in_thread (task, read_truth_thread);
  return TRUE;
}

static void
truth_chosen (SvWindow *self, GFile *file, gpointer data)
{
  sv_window_open_ground_truth (self, file);
}

static void
open_truth_action (GtkWidget *widget, const char *name, GVariant *param)
{
  static const char *const patterns[] = { "*.tif", "*.tiff", NULL };

  sv_window_choose_file (SV_WINDOW (widget), "Open Ground Truth", FALSE,
                         "Label TIFFs (one value per segment)", patterns, NULL, truth_chosen, NULL);
}

gboolean
sv_window_has_ground_truth (SvWindow *self)
{
  return self->truth != NULL;
}

SvQualityPanel *
sv_window_get_quality_panel (SvWindow *self)
{
  return self->quality_panel;
}

void
sv_window_class_add_quality_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_child (widget_class, SvWindow, quality_panel);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, side_notebook);
  gtk_widget_class_install_action (widget_class, "win.open-truth", NULL, open_truth_action);
  sv_window_class_add_pin_actions (widget_class);
  sv_window_class_add_labels_actions (widget_class);
}

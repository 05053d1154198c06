/* Supervox GUI: the main window's engine job: requests, live previews while
 * a slider moves, progress, results and Stop.
 *
 * Live updates: changes that come less than LIVE_GAP_US apart, or while a
 * pointer button is held in the panel, are a drag. During a drag the window
 * asks for the exact result when the last runs say it takes at most
 * LIVE_EXACT_SECONDS, and otherwise for a coarse preview of about
 * LIVE_PREVIEW_SECONDS (a downsampled volume: engine/slic/preview.h). Requests
 * are coalesced by the job: the newest wins, and a run about to finish is
 * not cancelled, so labels keep arriving while the slider moves. On release,
 * or once the slider rests for LIVE_GAP_US, the exact result is computed;
 * the status bar says which of the two is on screen. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <math.h>
#include <string.h>

#include "supervox/sv-few-labels.h"
#include "sv-element-words.h"

#define LIVE_GAP_US (250 * 1000)
#define LIVE_EXACT_SECONDS 0.15
#define LIVE_PREVIEW_SECONDS 0.08
/* Before any run has timed the volume: previews above this many voxels. */
#define LIVE_PREVIEW_VOXELS (1u << 20)
#define STATUS_TICK_MS 200

static void update_progress (SvWindow *self);

static void
fill_request (SvWindow *self, SvJobRequest *request)
{
  sv_job_request_init (request);
  sv_params_panel_get_params (self->params_panel, &request->params);
  g_strlcpy (request->backend, sv_params_panel_get_backend (self->params_panel),
             sizeof request->backend);
  request->stop_after_iteration = sv_params_panel_get_stop_after_iteration (self->params_panel);
  sv_window_region_adjust (self, &request->params);
}

static gboolean
status_tick_cb (gpointer data)
{
  SvWindow *self = data;

  update_progress (self);
  if (self->job && self->done_generation < self->generation && !self->stopped)
    return G_SOURCE_CONTINUE;
  self->status_source = 0;
  return G_SOURCE_REMOVE;
}

static void
post (SvWindow *self, SvJobRequest *request)
{
  request->generation = ++self->generation;
  self->last_request_preview = request->preview_seconds > 0;
  self->stopped = FALSE;
  self->submit_us = g_get_monotonic_time ();
  self->run_stage = SV_STAGE_PREPARE;
  self->run_iteration = 0;
  self->run_n_iterations = (guint)MAX (request->params.max_num_iter, 0);
  self->run_teaching_step = request->stop_after_iteration;
  sv_job_submit (self->job, request);
  sv_window_frame_await (self, request);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", TRUE);
  if (!self->status_source)
    self->status_source = g_timeout_add (STATUS_TICK_MS, status_tick_cb, self);
  update_progress (self);
}

void
sv_window_submit (SvWindow *self)
{
  SvJobRequest request;

  if (self->ooc)
    {
      sv_window_ooc_submit (self);
      return;
    }
  if (!self->job)
    return;
  g_clear_handle_id (&self->settle_source, g_source_remove);
  fill_request (self, &request);
  post (self, &request);
}

static gboolean
settle_cb (gpointer data)
{
  SvWindow *self = data;

  /* Resting counts as letting go, also with the button still held (and
   * should a release never reach the panel, the exact result still comes). */
  self->settle_source = 0;
  if (self->last_request_preview)
    sv_window_submit (self);
  return G_SOURCE_REMOVE;
}

void
sv_window_params_changed (SvWindow *self)
{
  gint64 now = g_get_monotonic_time ();
  gboolean live
      = self->dragging || (self->last_change_us && now - self->last_change_us < LIVE_GAP_US);
  SvJobRequest request;
  double exact;

  self->last_change_us = now;
  /* Another channel to segment: a new job on its copy, which submits. */
  if (sv_window_channel_sync (self))
    return;
  if (self->ooc)
    {
      /* No previews out of core: each change is a streamed run. */
      sv_window_ooc_submit (self);
      return;
    }
  if (!self->job)
    return;
  fill_request (self, &request);
  if (!live || request.stop_after_iteration >= 0)
    {
      sv_window_submit (self);
      return;
    }

  exact = sv_job_estimate_seconds (self->job, &request);
  if (exact < 0)
    exact = sv_volume_n_voxels (self->volume) >= LIVE_PREVIEW_VOXELS ? G_MAXDOUBLE : 0.0;
  if (exact > LIVE_EXACT_SECONDS)
    request.preview_seconds = LIVE_PREVIEW_SECONDS;
  post (self, &request);
  g_clear_handle_id (&self->settle_source, g_source_remove);
  if (request.preview_seconds > 0)
    self->settle_source = g_timeout_add (LIVE_GAP_US / 1000, settle_cb, self);
}

void
sv_window_set_dragging (SvWindow *self, gboolean dragging)
{
  if (self->dragging == dragging)
    return;
  self->dragging = dragging;
  /* Released: the exact result now, not after the settle delay. */
  if (!dragging && self->last_request_preview && self->job)
    sv_window_submit (self);
}

gboolean
sv_window_is_settled (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (self->ooc)
    return sv_window_ooc_check_exportable (self, NULL);
  return self->result && self->result->generation == self->generation
         && sv_job_result_is_final (self->result) && !self->settle_source;
}

gboolean
sv_window_is_busy (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  /* Until the newest request's result (or error) is here, not merely
   * until the worker is idle: its delivery may still be queued. */
  return self->loading || sv_window_ooc_busy (self)
         || (self->job && !self->stopped && self->done_generation < self->generation);
}

void
sv_window_stop (SvWindow *self)
{
  g_return_if_fail (SV_IS_WINDOW (self));

  g_clear_handle_id (&self->settle_source, g_source_remove);
  sv_window_cancel_loading (self);
  if (self->job)
    sv_job_cancel (self->job);
  if (self->ooc)
    sv_window_ooc_stop (self);
  self->stopped = TRUE;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", FALSE);
  update_progress (self);
  /* Every part of the window says the same: the status line and the
   * quality panel describe the labels left on screen. */
  if (self->job && !self->run_error)
    sv_window_update_result_text (self);
  sv_window_quality_stopped (self);
}

/* ---- progress ---- */

/* The progress bar: the stage, iteration k of n, and the time left when
 * the last runs allow an estimate. */
static void
update_progress (SvWindow *self)
{
  g_autofree char *text = NULL;
  g_autofree char *left_text = NULL;
  /* Busy until the newest request's result is here: the worker may be idle
   * while its progress and result still wait on the main loop. */
  gboolean busy = self->job && self->done_generation < self->generation;
  double left, elapsed, fraction;

  if (self->loading)
    return;
  if (self->stopped)
    {
      gtk_progress_bar_set_fraction (self->progress_bar, 0.0);
      gtk_progress_bar_set_text (self->progress_bar, "stopped");
      return;
    }
  if (!busy)
    {
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", FALSE);
      gtk_progress_bar_set_fraction (self->progress_bar, self->result ? 1.0 : 0.0);
      gtk_progress_bar_set_text (self->progress_bar, self->result ? "done" : "");
      return;
    }

  switch (self->run_stage)
    {
    case SV_STAGE_PREPARE:
      text = g_strdup ("preparing");
      break;
    case SV_STAGE_ITERATE:
      /* Teaching mode: the step asked for, not the iterations run to get there. */
      if (self->run_teaching_step >= 0)
        text = g_strdup_printf ("teaching step %d of %u", self->run_teaching_step,
                                self->run_n_iterations);
      else
        text = g_strdup_printf ("iteration %u of %u", self->run_iteration, self->run_n_iterations);
      break;
    case SV_STAGE_CONNECT:
      text = g_strdup ("connectivity");
      break;
    case SV_STAGE_DONE:
    default:
      text = g_strdup ("finishing");
      break;
    }
  left = sv_job_get_seconds_left (self->job);
  elapsed = (double)(g_get_monotonic_time () - self->submit_us) / G_USEC_PER_SEC;
  if (left >= 0)
    {
      fraction = elapsed / MAX (elapsed + left, 1e-6);
      left_text = g_strdup_printf ("%s · about %.1f s left", text, left);
    }
  else
    fraction = self->run_n_iterations ? (double)self->run_iteration / self->run_n_iterations : 0.0;
  if (self->last_request_preview)
    {
      g_autofree char *p = g_strdup_printf ("preview: %s", left_text ? left_text : text);
      g_free (left_text);
      left_text = g_steal_pointer (&p);
    }
  gtk_progress_bar_set_fraction (self->progress_bar, CLAMP (fraction, 0.0, 1.0));
  gtk_progress_bar_set_text (self->progress_bar, left_text ? left_text : text);
}

static void
job_progress_cb (guint64 generation, SvStage stage, guint iteration, guint n_iterations,
                 gpointer user_data)
{
  SvWindow *self = user_data;

  self->run_stage = stage;
  self->run_iteration = iteration;
  if (n_iterations)
    self->run_n_iterations = n_iterations;
  update_progress (self);
}

/* ---- results ---- */

/* The pinned run's parameters in words: segments and compactness, and
 * what else differs from the live run's. */
static void
append_pinned_params (GString *s, const SvSlicParams *p, const SvSlicParams *live)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append_printf (s, "%" G_GINT64_FORMAT " segments, compactness %s", p->n_segments,
                          sv_format_double (buf, p->compactness));
  if (!live)
    return;
  if (p->max_num_iter != live->max_num_iter)
    g_string_append_printf (s, ", %d iterations", p->max_num_iter);
  if (p->sigma_per_axis != live->sigma_per_axis
      || memcmp (p->sigma, live->sigma, sizeof p->sigma) != 0)
    {
      g_string_append_printf (s, ", sigma %s", sv_format_double (buf, p->sigma[0]));
      if (p->sigma_per_axis)
        {
          g_string_append_printf (s, ",%s", sv_format_double (buf, p->sigma[1]));
          g_string_append_printf (s, ",%s", sv_format_double (buf, p->sigma[2]));
        }
    }
  if (memcmp (p->spacing, live->spacing, sizeof p->spacing) != 0)
    {
      g_string_append_printf (s, ", spacing %s", sv_format_double (buf, p->spacing[0]));
      g_string_append_printf (s, ",%s", sv_format_double (buf, p->spacing[1]));
      g_string_append_printf (s, ",%s", sv_format_double (buf, p->spacing[2]));
    }
  if (p->enforce_connectivity != live->enforce_connectivity)
    g_string_append (s, p->enforce_connectivity ? ", connectivity on" : ", connectivity off");
  if (p->slic_zero != live->slic_zero)
    g_string_append (s, p->slic_zero ? ", SLIC-zero" : ", no SLIC-zero");
}

/* What the status bar says about the labels on screen, in words: which
 * result it is, how many supervoxels, how long and where they were computed,
 * and how they reach the screen. After Stop it says so, and whether the
 * labels are an unfinished run's iteration or an earlier complete result.
 * The pinned labels, while flipped to, are described as the pin: its name
 * ("pin 2", a label file's), count and parameters; a region's run says so
 * and the region's size. */
static char *
result_text (SvWindow *self, SvJobResult *result)
{
  GString *s = g_string_new (NULL);
  const SvBackendClass *ran = sv_backend_class_lookup (result->backend_name);
  gboolean stopped = self->stopped && result->generation <= self->generation;
  gboolean older = result->generation < self->generation;
  const SvElementWords *words = sv_element_words (self->volume && self->volume->nz == 1);

  if (result->region)
    {
      const guint *n = result->region_shape;
      if (n[0] == 1 && self->volume && self->volume->nz == 1)
        g_string_append_printf (s, "region preview %u×%u %s · ", n[1], n[2], words->count_unit);
      else
        g_string_append_printf (s, "region preview %u×%u×%u %s · ", n[0], n[1], n[2],
                                words->count_unit);
    }
  if (self->showing_pinned && self->pinned && result == self->pinned->result)
    {
      g_autofree char *name = sv_pin_name (self->pinned);
      g_string_append_printf (s, "%s · %" G_GSIZE_FORMAT " %s", name, result->stats.n_labels,
                              result->stats.n_labels == 1 ? words->supervoxel : words->supervoxels);
      /* A label file has no parameters. */
      if (!self->pinned->path)
        {
          g_string_append (s, " · ");
          append_pinned_params (s, &self->pinned->params,
                                self->result ? &self->result->params : NULL);
        }
      g_string_append (s, " · C: the live labels");
      return g_string_free (s, FALSE);
    }

  if (stopped && result->in_progress_iteration > 0)
    g_string_append_printf (s, "stopped after iteration %u of %d", result->in_progress_iteration,
                            result->params.max_num_iter);
  else if (stopped && older)
    g_string_append (s, "stopped · shown: ");
  if (result->preview_factor > 1)
    g_string_append_printf (s, "preview at 1/%u scale", result->preview_factor);
  else if (result->in_progress_iteration > 0)
    {
      if (!stopped)
        g_string_append_printf (s, "iteration %u of %d, still running",
                                result->in_progress_iteration, result->params.max_num_iter);
    }
  else if (result->stop_after_iteration >= 0)
    g_string_append_printf (s, "teaching step %u of %d", result->stats.iterations,
                            result->params.max_num_iter);
  else
    g_string_append (s, "exact");
  /* Step 0 has assigned no voxel yet: its clusters are the seeds. */
  if (result->stop_after_iteration == 0)
    g_string_append_printf (s, " · %" G_GSIZE_FORMAT " clusters seeded on a grid",
                            result->n_centres);
  else
    g_string_append_printf (s, " · %" G_GSIZE_FORMAT " %s", result->stats.n_labels,
                            result->stop_after_iteration >= 0 || result->in_progress_iteration > 0
                                ? "clusters"
                            : result->stats.n_labels == 1 ? words->supervoxel
                                                          : words->supervoxels);
  /* Where it was computed: "on the GPU". */
  g_string_append_printf (s, " in %.2f s %s%s", result->seconds_total, ran != NULL ? "on " : "",
                          sv_backend_class_display_name (ran, result->backend_name));
  if (!stopped && result->preview_factor > 1)
    g_string_append (s, " · exact result on release");
  return g_string_free (s, FALSE);
}

void
sv_window_update_result_text (SvWindow *self)
{
  g_autofree char *text = NULL;
  SvJobResult *shown = sv_window_shown_result (self);

  if (!shown)
    return;
  text = result_text (self, shown);
  sv_window_set_status (self, self->result_label, text);
  if (self->stopped && shown == self->result)
    {
      g_autofree char *tip = g_strdup_printf ("%s\nStopped: change a value to run again.", text);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->result_label), tip);
    }
  else
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->result_label), text);
}

/* Far fewer labels than asked for: why that happens and what to try, of
 * what the panel does not do already. */
static void
check_label_count (SvWindow *self, SvJobResult *result)
{
  const SvSlicParams *p = &result->params;
  g_autofree char *text = NULL;
  g_autoptr (GPtrArray) tries = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GString) why = g_string_new (NULL);
  g_autoptr (GString) try = g_string_new (NULL);
  SvFewLabelsHint hint;

  /* Previews, iterations of a run still going and teaching steps are not
   * what a run gives. */
  if (!sv_job_result_is_final (result) || result->stop_after_iteration >= 0)
    return;
  if (!sv_few_labels_hint (p, result->stats.n_labels, sv_volume_n_voxels (self->volume),
                           self->mask != NULL, &hint))
    {
      gtk_revealer_set_reveal_child (self->warning_revealer, FALSE);
      return;
    }
  if (hint.reasons & SV_FEW_LABELS_SMALL_SPACING)
    g_string_append_printf (why,
                            "The spacing is small (%g, %g, %g): distances count little against "
                            "intensity, so the clusters follow intensity into thin pieces that "
                            "the connectivity step merges away. ",
                            p->spacing[0], p->spacing[1], p->spacing[2]);
  else if (hint.reasons & SV_FEW_LABELS_LOW_COMPACTNESS)
    g_string_append (why,
                     "The compactness is low: distances count little against intensity, so "
                     "the clusters break into pieces that the connectivity step merges away. ");
  if (hint.reasons & SV_FEW_LABELS_FEW_VOXELS)
    g_string_append (why, "There are few voxels for each segment asked for. ");
  if (hint.reasons & SV_FEW_LABELS_MASKED)
    g_string_append (why, "Only voxels inside the mask are segmented. ");
  if (hint.tries & SV_FEW_LABELS_TRY_RELATIVE_SPACING)
    g_ptr_array_add (tries, g_strdup ("spacing relative to the finest axis"));
  if (hint.tries & SV_FEW_LABELS_TRY_COMPACTNESS)
    g_ptr_array_add (tries, g_strdup_printf ("a compactness ten times higher (%g)",
                                             hint.compactness));
  if (hint.tries & SV_FEW_LABELS_TRY_NO_CONNECTIVITY)
    g_ptr_array_add (tries,
                     g_strdup ("turning off “Enforce connectivity” to see the raw clusters"));
  for (guint i = 0; i < tries->len; i++)
    g_string_append_printf (try, "%s%s",
                            i == 0               ? ""
                            : i + 1 == tries->len ? (tries->len > 2 ? ", or " : " or ")
                                                  : ", ",
                            (const char *)tries->pdata[i]);
  text = g_strdup_printf (
      "Only %" G_GSIZE_FORMAT " %s for the %" G_GINT64_FORMAT " asked for. %sTry %s.",
      result->stats.n_labels,
      result->stats.n_labels == 1 ? sv_element_words (self->volume->nz == 1)->supervoxel
                                  : sv_element_words (self->volume->nz == 1)->supervoxels,
      p->n_segments, why->str, try->str);
  gtk_label_set_text (self->warning_label, text);
  gtk_revealer_set_reveal_child (self->warning_revealer, TRUE);
}

/* Whether the result ran on the backend the panel asks for (auto takes
 * whichever ran). */
static gboolean
ran_as_asked (SvWindow *self, const SvJobResult *result)
{
  SvBackendChoice asked;

  if (!sv_backend_choose (sv_params_panel_get_backend (self->params_panel), &asked, NULL)
      || asked.is_auto)
    return TRUE;
  return sv_backend_class_lookup (result->backend_name) == sv_backend_resolve (&asked, 0);
}
static void
job_result_cb (SvJobResult *result, gpointer user_data)
{
  SvWindow *self = user_data;

  sv_window_region_tag (self, result);
  /* The job is new for each channel: its results are of the channel now. */
  self->result_channel = self->segment_channel;
  g_clear_pointer (&self->result, sv_job_result_unref);
  self->result = sv_job_result_ref (result);
  g_clear_pointer (&self->run_error, g_free);
  /* An iteration of a run still going leaves its progress bar running. */
  if (result->in_progress_iteration == 0)
    self->done_generation = MAX (self->done_generation, result->generation);
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_result (sv_window_view (self, i), result);

  sv_window_update_result_text (self);
  update_progress (self);
  sv_window_update_path_status (self);
  if (sv_window_verbose (self))
    g_message (
        "generation %" G_GUINT64_FORMAT ": %s, %" G_GSIZE_FORMAT
        " labels, %u iterations, %.3f s (prepare %.3f%s, iterate %.3f, connect %.3f) on %s; %s",
        result->generation,
        result->preview_factor > 1         ? "preview"
        : result->in_progress_iteration > 0 ? "an iteration of a run still going"
                                            : "exact",
        result->stats.n_labels, result->stats.iterations, result->seconds_total,
        result->stats.seconds_prepare, result->stats.prepare_reused ? " reused" : "",
        result->stats.seconds_iterate, result->stats.seconds_connect, result->backend_name,
        sv_slice_view_get_label_path (self->xy_view));
  check_label_count (self, result);
  /* The dropdown shows what ran, not what was asked for. */
  if (sv_job_result_is_final (result)
      && (result->fallback_message || !ran_as_asked (self, result)))
    sv_params_panel_show_backend_ran (self->params_panel, result->backend_name,
                                      result->fallback_message
                                          ? result->fallback_message
                                          : "The GPU failed earlier; every run goes to the CPU.");
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
  sv_window_update_hover_status (self);
  sv_window_update_search_window (self);
  sv_window_quality_result (self, result);
}

static void
job_error_cb (guint64 generation, const GError *error, gpointer user_data)
{
  SvWindow *self = user_data;

  self->done_generation = MAX (self->done_generation, generation);
  /* Export says why it cannot go on until a newer run succeeds. */
  if (!self->result || generation > self->result->generation)
    {
      g_free (self->run_error);
      self->run_error = g_strdup (error->message);
    }
  gtk_progress_bar_set_text (self->progress_bar, "failed");
  sv_window_set_status (self, self->result_label, error->message);
}

static const SvJobCallbacks job_callbacks = { job_progress_cb, job_result_cb, job_error_cb };

#if SV_HAVE_CUDA
/* Worker thread, after a run: a result of a backend with device labels
 * keeps them on the device, in a buffer no shown result uses, when a view
 * can take them through CUDA–GL interop; the host copy is made only when
 * something needs it (export, quality, the 3D view). */
static void
publish_cuda_labels (SvBackend *backend, SvJobResult *result, gpointer user_data)
{
  SvCudaLabelsPool *pool = user_data;
  g_autoptr (GError) error = NULL;

  if (sv_backend_get_device_labels (backend, NULL) == NULL
      || !sv_slice_view_cuda_interop_active ())
    return;
  /* Both buffers still held, or no device memory: the host path draws this result. */
  if (!sv_cuda_labels_attach (pool, backend, result, &error) && error)
    g_debug ("labels stay on the host path: %s", error->message);
}
#endif

void
sv_window_start_job (SvWindow *self)
{
  g_clear_pointer (&self->job, sv_job_free);
  sv_window_quality_stop (self);
  sv_window_region_prepare (self);
  self->job
      = sv_job_new (sv_window_job_volume (self), sv_window_job_mask (self), &job_callbacks, self);
#if SV_HAVE_CUDA
  if (!self->cuda_labels)
    self->cuda_labels = sv_cuda_labels_pool_new ();
  /* A region's labels are drawn from memory: they stay with the job. */
  if (!self->region_volume)
    sv_job_set_result_hook (self->job, publish_cuda_labels, self->cuda_labels);
#endif
  sv_window_quality_start (self);
  sv_window_submit (self);
}

void
sv_window_stop_job (SvWindow *self)
{
  g_clear_handle_id (&self->settle_source, g_source_remove);
  g_clear_handle_id (&self->status_source, g_source_remove);
  g_clear_pointer (&self->job, sv_job_free);
  sv_window_quality_stop (self);
}

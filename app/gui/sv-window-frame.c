/* Supervox GUI: a changed value and its result in the same frame.
 *
 * A change (a slider moved, a value typed) is drawn in the next frame,
 * and its run's result used to be drawn in the frame after: the result
 * reached the main thread while that frame was painted, or while its
 * buffer swap waited for the display. When the last runs say that this
 * request takes less than a part of a frame, the frame's update phase
 * waits for its result (at most that part) and delivers it there, before
 * the frame is laid out and painted: the frame that shows the new value
 * shows its segmentation too. The part is the display's refresh interval
 * less a margin: a result the frame waits for is drawn in it, at most a
 * paint's time late, where the next frame would draw it a whole interval
 * later. On the GPU machine's window (256³, a 10–12 ms run, paints of
 * 6 ms) a wait of 10 ms drew results 33 ms after the change, one of 15 ms
 * 20 ms after it. SV_GUI_SAME_FRAME_MS sets the part instead (0: never
 * wait; tests give a slow machine more). */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

/* A refresh interval the frame clock does not know yet: 60 Hz. */
#define REFRESH_US 16667
/* For the delivery and the rest of the frame's update. */
#define MARGIN_US 1000

static gint64
budget_us (GdkFrameClock *clock)
{
  const char *ms = g_getenv ("SV_GUI_SAME_FRAME_MS");
  gint64 refresh = 0;

  if (ms != NULL && *ms != '\0')
    return (gint64)(g_ascii_strtod (ms, NULL) * 1000.0);
  gdk_frame_clock_get_refresh_info (clock, gdk_frame_clock_get_frame_time (clock), &refresh,
                                    NULL);
  if (refresh <= 0)
    refresh = REFRESH_US;
  return MAX (refresh - MARGIN_US, 0);
}

static void
frame_update_cb (GdkFrameClock *clock, SvWindow *self)
{
  const guint64 generation = self->await_generation;

  self->await_generation = 0;
  if (generation == 0 || generation <= self->done_generation || self->job == NULL)
    return;
  sv_job_deliver_when_ready (self->job, generation, self->await_us);
}

void
sv_window_frame_await (SvWindow *self, const SvJobRequest *request)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));
  gint64 budget;
  double seconds;

  self->await_generation = 0;
  if (clock == NULL || self->job == NULL || (budget = budget_us (clock)) <= 0)
    return;
  seconds = sv_job_estimate_seconds (self->job, request);
  /* Nothing comparable has run yet, or it takes longer. */
  if (seconds < 0 || seconds * 1e6 > (double)budget)
    return;
  self->await_generation = request->generation;
  self->await_us = budget;
  gdk_frame_clock_request_phase (clock, GDK_FRAME_CLOCK_PHASE_UPDATE);
}

gint64
sv_window_get_frame_wait_us (SvWindow *self)
{
  return self->frame_clock != NULL ? budget_us (self->frame_clock) : -1;
}

static void
realize_cb (GtkWidget *widget, SvWindow *self)
{
  self->frame_clock = g_object_ref (gtk_widget_get_frame_clock (widget));
  self->frame_update_handler
      = g_signal_connect (self->frame_clock, "update", G_CALLBACK (frame_update_cb), self);
}

static void
unrealize_cb (GtkWidget *widget, SvWindow *self)
{
  if (self->frame_clock == NULL)
    return;
  /* A quality waiting for a paint goes to the worker now: none is coming. */
  sv_window_quality_unrealize (self);
  g_clear_signal_handler (&self->frame_update_handler, self->frame_clock);
  g_clear_object (&self->frame_clock);
  self->await_generation = 0;
}

void
sv_window_frame_init (SvWindow *self)
{
  g_signal_connect (self, "realize", G_CALLBACK (realize_cb), self);
  g_signal_connect (self, "unrealize", G_CALLBACK (unrealize_cb), self);
}

/* Benchmark of the Supervox window (not a test): main-thread frame times
 * while a job runs, slider change → new overlay latency, overlay updates per
 * second while the compactness slider is dragged (on the bundled sample and
 * on a bigger volume) and the time from release to the exact result, and
 * memory with a 512³ volume open and segmented. --backend picks where SLIC
 * runs (cpu by default); with CUDA the slider → overlay time is also taken
 * with the host copy every run used to make (SV_JOB_HOST_LABELS=always).
 * Run under Xvfb with software GL; see
 * bench/README.md. */
#define G_LOG_DOMAIN "bench-gui"

#include <epoxy/gl.h>
#include <gtk/gtk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "supervox/sv-params.h"
#include "sv-application.h"
#include "sv-params-panel.h"
#include "sv-slice-view.h"
#include "sv-window.h"
#include "supervox/sv-synth.h"

#define STALL_INTERVAL_MS 1

typedef enum
{
  DRIVE_NONE,
  DRIVE_SLICE,       /* the slice slider: redraws only */
  DRIVE_COMPACTNESS, /* the compactness slider: a new job request each frame */
} DriveMode;

typedef struct
{
  double interval_ms; /* since the previous frame's start */
  double update_ms;   /* frame clock "update": tick callbacks (our slider change) */
  double tick_ms;     /* our tick callback alone: slider change → job submit */
  double layout_ms;
  double paint_ms;  /* snapshot + GSK render on llvmpipe, our GL area handler included */
  double ours_ms;   /* our GL area render handler on the CPU (slice copy, uploads, GL calls) */
  double finish_ms; /* glFinish after it: llvmpipe executing our draw */
} Frame;

typedef struct
{
  SvWindow *window;
  SvSliceView *view;
  GtkGLArea *area;
  gulong view_handler, wrapper_handler;

  /* the frame being timed */
  gint64 t_start, t_update, t_layout, t_prev_start;
  double tick_ms, ours_ms, finish_ms;
  GArray *frames; /* Frame, while recording */

  /* the stall probe */
  gint64 t_probe;
  gint64 gtk_render_us; /* paint time outside our handler's CPU side, summed */
  gint64 gtk_render_at_probe;
  gint64 cpu_at_probe;             /* main thread CPU time, µs */
  GArray *stalls_raw, *stalls_own; /* double ms, while recording */
  GArray *stalls_cpu;              /* main thread CPU ms during each probe gap */

  /* slider driving */
  int driving; /* DriveMode */
  guint n_changes;

  /* latency: the generation to wait for on screen */
  guint64 target;
  gboolean drawn_pending;
  gint64 t_drawn;

  /* live drag: overlays drawn while the slider moves */
  guint64 last_drawn_generation;
  gboolean counting;
  guint n_drawn, n_drawn_preview;
  double preview_seconds_sum; /* the worker's time of the previews drawn */
  guint preview_factor;       /* of the last one */
  GArray *drawn_at;           /* gint64 µs of each new overlay drawn, while counting */
  guint64 exact_target;       /* after release: the exact result to wait for */
  gint64 t_exact_drawn;
} Bench;

static gint64
now_us (void)
{
  return g_get_monotonic_time ();
}

/* CPU time this thread used: a gap with little of it was the scheduler
 * giving the core to other threads (the job, llvmpipe), not our code. */
static gint64
thread_cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64)ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

/* ---- frame clock phases ---- */

static void
before_paint_cb (GdkFrameClock *clock, Bench *b)
{
  b->t_prev_start = b->t_start;
  b->t_start = now_us ();
  b->tick_ms = 0;
  b->ours_ms = 0;
  b->finish_ms = 0;
}

static void
update_cb (GdkFrameClock *clock, Bench *b)
{
  b->t_update = now_us ();
}

static void
layout_cb (GdkFrameClock *clock, Bench *b)
{
  b->t_layout = now_us ();
}

/* Connected after GTK's own paint handler: the surface has been drawn. */
static void
paint_cb (GdkFrameClock *clock, Bench *b)
{
  gint64 t = now_us ();
  Frame f;

  f.interval_ms = b->t_prev_start ? (b->t_start - b->t_prev_start) / 1000.0 : 0;
  f.update_ms = (b->t_update - b->t_start) / 1000.0;
  f.tick_ms = b->tick_ms;
  f.layout_ms = (b->t_layout - b->t_update) / 1000.0;
  f.paint_ms = (t - b->t_layout) / 1000.0;
  f.ours_ms = b->ours_ms;
  f.finish_ms = b->finish_ms;
  b->gtk_render_us += (gint64)((f.paint_ms - f.ours_ms) * 1000.0);
  if (b->frames && b->t_prev_start)
    g_array_append_val (b->frames, f);
}

static void
after_paint_cb (GdkFrameClock *clock, Bench *b)
{
  if (b->drawn_pending && !b->t_drawn)
    b->t_drawn = now_us ();
}

/* ---- our GL handler, timed ---- */

/* Runs the view's own render handler (blocked otherwise) and then waits
 * for GL to finish, so that llvmpipe executing our draw is timed apart from
 * our own CPU work. */
static gboolean
render_wrapper_cb (GtkGLArea *area, GdkGLContext *context, Bench *b)
{
  gboolean handled = FALSE;
  gint64 t0 = now_us (), t1;
  SvJobResult *r;

  g_signal_handler_block (area, b->wrapper_handler);
  g_signal_handler_unblock (area, b->view_handler);
  g_signal_emit_by_name (area, "render", context, &handled);
  g_signal_handler_block (area, b->view_handler);
  g_signal_handler_unblock (area, b->wrapper_handler);
  t1 = now_us ();
  glFinish ();
  b->ours_ms += (t1 - t0) / 1000.0;
  b->finish_ms += (now_us () - t1) / 1000.0;

  r = sv_slice_view_get_result (b->view);
  if (b->target && r && r->generation == b->target)
    b->drawn_pending = TRUE;
  if (r && r->generation != b->last_drawn_generation)
    {
      gint64 t = now_us ();
      b->last_drawn_generation = r->generation;
      if (b->counting)
        {
          b->n_drawn++;
          b->n_drawn_preview += r->preview_factor > 1;
          if (r->preview_factor > 1)
            {
              b->preview_seconds_sum += r->seconds_total;
              b->preview_factor = r->preview_factor;
            }
          g_array_append_val (b->drawn_at, t);
        }
      if (b->exact_target && !b->t_exact_drawn && r->generation >= b->exact_target
          && r->preview_factor == 1)
        b->t_exact_drawn = t;
    }
  return handled;
}

/* ---- the stall probe ---- */

/* A high-priority 1 ms timeout: how late it runs is how long the main
 * thread was busy. The GTK/llvmpipe part of frames that ran in between is
 * taken out for the "own" figure. */
static gboolean
probe_cb (gpointer data)
{
  Bench *b = data;
  gint64 t = now_us (), cpu = thread_cpu_us ();

  if (b->t_probe && b->stalls_raw)
    {
      double raw = (t - b->t_probe) / 1000.0 - STALL_INTERVAL_MS;
      double own = raw - (b->gtk_render_us - b->gtk_render_at_probe) / 1000.0;
      double cpu_ms = (cpu - b->cpu_at_probe) / 1000.0;
      g_array_append_val (b->stalls_raw, raw);
      g_array_append_val (b->stalls_own, own);
      g_array_append_val (b->stalls_cpu, cpu_ms);
    }
  b->t_probe = t;
  b->cpu_at_probe = cpu;
  b->gtk_render_at_probe = b->gtk_render_us;
  return G_SOURCE_CONTINUE;
}

/* ---- slider ---- */

static gboolean
drive_tick_cb (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  Bench *b = data;
  gint64 t0;

  if (b->driving == DRIVE_NONE)
    return G_SOURCE_CONTINUE;
  t0 = now_us ();
  /* What dragging a slider does: one value per frame. */
  if (b->driving == DRIVE_SLICE)
    sv_slice_view_set_slice (b->view, b->n_changes++ % sv_slice_view_get_n_slices (b->view));
  else
    sv_params_panel_set_compactness (sv_window_get_params_panel (b->window),
                                     0.05 + 0.01 * (b->n_changes++ % 97));
  b->tick_ms += (now_us () - t0) / 1000.0;
  return G_SOURCE_CONTINUE;
}

/* ---- helpers ---- */

static gboolean
set_flag (gpointer data)
{
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop for `seconds`. */
static void
run_for (double seconds)
{
  gboolean done = FALSE;

  g_timeout_add ((guint)(seconds * 1000), set_flag, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

static gboolean
result_current (SvWindow *w)
{
  SvJobResult *r = sv_window_get_result (w);
  return r && r->generation == sv_window_get_generation (w);
}

static void
wait_result (SvWindow *w, double limit_s)
{
  gint64 end = now_us () + (gint64)(limit_s * G_USEC_PER_SEC);
  while (!result_current (w))
    {
      if (now_us () > end)
        g_error ("no result within %.0f s", limit_s);
      g_main_context_iteration (NULL, TRUE);
    }
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct
{
  double median, p95, max;
} Stats;

static Stats
stats_of (const double *v, guint n)
{
  g_autofree double *s = g_memdup2 (v, sizeof (double) * MAX (n, 1));
  Stats st = { 0, 0, 0 };

  if (n == 0)
    return st;
  qsort (s, n, sizeof (double), cmp_double);
  st.median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  st.p95 = s[MIN (n - 1, (guint)ceil (0.95 * n) - 1)];
  st.max = s[n - 1];
  return st;
}

static Stats
frame_stats (GArray *frames, gsize offset)
{
  g_autofree double *v = g_new (double, MAX (frames->len, 1));
  for (guint i = 0; i < frames->len; i++)
    v[i] = *(double *)((char *)&g_array_index (frames, Frame, i) + offset);
  return stats_of (v, frames->len);
}

static Stats
frame_own_stats (GArray *frames)
{
  /* Our per-frame work: tick + layout + our GL handler. */
  g_autofree double *v = g_new (double, MAX (frames->len, 1));
  for (guint i = 0; i < frames->len; i++)
    {
      Frame *f = &g_array_index (frames, Frame, i);
      v[i] = f->tick_ms + f->layout_ms + f->ours_ms;
    }
  return stats_of (v, frames->len);
}

/* VmRSS and VmHWM of this process, MiB. */
static void
read_mem (double *rss, double *hwm)
{
  g_autofree char *status = NULL;
  const char *p;

  *rss = *hwm = -1;
  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return;
  if ((p = strstr (status, "VmRSS:")))
    *rss = g_ascii_strtod (p + 6, NULL) / 1024.0;
  if ((p = strstr (status, "VmHWM:")))
    *hwm = g_ascii_strtod (p + 6, NULL) / 1024.0;
}

/* Resets VmHWM to the current RSS (Linux 4.0+), so that each phase's peak
 * is its own. */
static gboolean
reset_hwm (void)
{
  FILE *f = fopen ("/proc/self/clear_refs", "w");
  gboolean ok;

  if (!f)
    return FALSE;
  ok = fputs ("5", f) >= 0;
  return fclose (f) == 0 && ok;
}

typedef struct
{
  gint64 t0;
  double last_rss;
  GString *steps;
} RssTrace;

/* Every 100 ms: notes the RSS whenever it moved by 64 MiB or more, so that
 * each buffer of the job shows as a step. */
static gboolean
rss_trace_cb (gpointer data)
{
  RssTrace *tr = data;
  double rss, hwm;

  read_mem (&rss, &hwm);
  if (fabs (rss - tr->last_rss) >= 64)
    {
      g_string_append_printf (tr->steps, " %.1fs:%.0f", (g_get_monotonic_time () - tr->t0) / 1e6,
                              rss);
      tr->last_rss = rss;
    }
  return G_SOURCE_CONTINUE;
}

static SvVolume *
make_cells (guint n, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  SvSynthParams sp;
  SvVolume *v;

  sv_synth_params_init_defaults (&sp);
  sp.nz = sp.ny = sp.nx = n;
  sp.seed = seed;
  v = sv_synth_cells (&sp, NULL, &error);
  if (!v)
    g_error ("synth: %s", error->message);
  return v;
}

static void
print_stats_row (const char *name, Stats s)
{
  printf ("  %-46s %8.2f %8.2f %8.2f\n", name, s.median, s.p95, s.max);
}

static void
json_stats (GString *j, const char *name, Stats s)
{
  g_string_append_printf (j, "\"%s\": {\"median\": %.3f, \"p95\": %.3f, \"max\": %.3f}, ", name,
                          s.median, s.p95, s.max);
}

static void
recording_start (Bench *b)
{
  b->frames = g_array_new (FALSE, FALSE, sizeof (Frame));
  b->stalls_raw = g_array_new (FALSE, FALSE, sizeof (double));
  b->stalls_own = g_array_new (FALSE, FALSE, sizeof (double));
  b->stalls_cpu = g_array_new (FALSE, FALSE, sizeof (double));
  b->t_probe = 0;
}

/* Prints the frames and stalls recorded since recording_start, and adds
 * them to the JSON line under keys starting with `prefix`. */
static void
recording_report (Bench *b, const char *tag, const char *prefix, GString *json, char *what)
{
  GArray *frames = g_steal_pointer (&b->frames);
  GArray *raw = g_steal_pointer (&b->stalls_raw);
  GArray *own = g_steal_pointer (&b->stalls_own);
  GArray *cpu = g_steal_pointer (&b->stalls_cpu);
  double worst_cpu = 0;
  Stats sr = stats_of ((double *)raw->data, raw->len);
  Stats so = stats_of ((double *)own->data, own->len);
  Stats s;
  guint over = 0;
  char key[64];

#define ROW(label, key_suffix, value)                                                              \
  do                                                                                               \
    {                                                                                              \
      s = (value);                                                                                 \
      print_stats_row (label, s);                                                                  \
      g_snprintf (key, sizeof key, "%s_%s", prefix, key_suffix);                                   \
      json_stats (json, key, s);                                                                   \
    }                                                                                              \
  while (0)

  for (guint i = 0; i < own->len; i++)
    if (g_array_index (own, double, i) > 16.0)
      {
        over++;
        worst_cpu = MAX (worst_cpu, g_array_index (cpu, double, i));
      }
  printf ("\n(%s) %u frames: %s\n", tag, frames->len, what);
  printf ("  %-46s %8s %8s %8s\n", "ms", "median", "p95", "max");
  ROW ("frame interval", "frame_interval_ms",
       frame_stats (frames, G_STRUCT_OFFSET (Frame, interval_ms)));
  ROW ("paint phase (GTK + GSK on llvmpipe, with ours)", "paint_ms",
       frame_stats (frames, G_STRUCT_OFFSET (Frame, paint_ms)));
  ROW ("  our GL area handler, CPU side", "our_render_ms",
       frame_stats (frames, G_STRUCT_OFFSET (Frame, ours_ms)));
  ROW ("  llvmpipe executing our draw (glFinish)", "our_draw_glfinish_ms",
       frame_stats (frames, G_STRUCT_OFFSET (Frame, finish_ms)));
  ROW ("update phase (tick callbacks)", "update_ms",
       frame_stats (frames, G_STRUCT_OFFSET (Frame, update_ms)));
  ROW ("  our slider change (→ job submit)", "tick_ms",
       frame_stats (frames, G_STRUCT_OFFSET (Frame, tick_ms)));
  ROW ("layout phase", "layout_ms", frame_stats (frames, G_STRUCT_OFFSET (Frame, layout_ms)));
  ROW ("our per-frame work (tick + layout + GL CPU side)", "own_frame_ms",
       frame_own_stats (frames));
  ROW ("main-loop stall, all (1 ms probe lateness)", "stall_all_ms", sr);
  ROW ("main-loop stall, GTK/llvmpipe render taken out", "stall_own_ms", so);
#undef ROW
  printf ("  own stalls over 16 ms: %u of %u probes; the most main-thread CPU time used in "
          "one of them: %.2f ms\n",
          over, own->len, worst_cpu);
  g_string_append_printf (json,
                          "\"%s_frames\": %u, \"%s_own_stalls_over_16ms\": %u, "
                          "\"%s_max_cpu_in_own_stall_over_16ms\": %.3f, ",
                          prefix, frames->len, prefix, over, prefix, worst_cpu);
  g_array_unref (frames);
  g_array_unref (raw);
  g_array_unref (own);
  g_array_unref (cpu);
  g_free (what);
}

static gboolean
settled (gpointer data)
{
  return sv_window_is_settled (data);
}

static void
wait_settled (SvWindow *w, double limit_s)
{
  gint64 end = now_us () + (gint64)(limit_s * G_USEC_PER_SEC);
  while (!settled (w))
    {
      if (now_us () > end)
        g_error ("no exact result within %.0f s", limit_s);
      g_main_context_iteration (NULL, TRUE);
    }
}

/* (d) Drags the compactness slider for `seconds` (one value per frame, the
 * pointer held as a real drag holds it), then releases it: overlays drawn
 * per second during the drag, how many were previews, the longest time
 * without a new one, and release → exact result drawn. */
static void
live_drag (Bench *b, const char *tag, const char *what, double seconds, GString *json)
{
  SvParamsPanel *panel = sv_window_get_params_panel (b->window);
  SvJobResult *r = sv_window_get_result (b->window);
  const SvVolume *v = sv_window_get_volume (b->window);
  double exact_s = r->seconds_total, max_gap = 0, rate, release_ms;
  gint64 t0, t_release;
  guint64 gen_before = sv_window_get_generation (b->window);
  guint n_changes;

  b->drawn_at = g_array_new (FALSE, FALSE, sizeof (gint64));
  b->n_drawn = b->n_drawn_preview = 0;
  b->preview_seconds_sum = 0;
  b->preview_factor = 0;
  b->n_changes = 0;
  g_object_set (panel, "dragging", TRUE, NULL);
  t0 = now_us ();
  b->counting = TRUE;
  b->driving = DRIVE_COMPACTNESS;
  run_for (seconds);
  b->driving = DRIVE_NONE;
  b->counting = FALSE;
  n_changes = b->n_changes;
  t_release = now_us ();
  b->t_exact_drawn = 0;
  g_object_set (panel, "dragging", FALSE, NULL);
  b->exact_target = sv_window_get_generation (b->window);
  while (!b->t_exact_drawn)
    g_main_context_iteration (NULL, TRUE);
  b->exact_target = 0;

  for (guint i = 0; i <= b->drawn_at->len; i++)
    {
      gint64 a = i == 0 ? t0 : g_array_index (b->drawn_at, gint64, i - 1);
      gint64 z = i == b->drawn_at->len ? t_release : g_array_index (b->drawn_at, gint64, i);
      max_gap = MAX (max_gap, (z - a) / 1000.0);
    }
  rate = b->n_drawn / seconds;
  release_ms = (b->t_exact_drawn - t_release) / 1000.0;
  printf ("\n(%s) live drag of the compactness slider, %s: %u×%u×%u, %s backend\n", tag, what,
          v->nz, v->ny, v->nx, sv_window_get_result (b->window)->backend_name);
  printf ("  exact run before the drag %.3f s; %u slider changes in %.1f s, %" G_GUINT64_FORMAT
          " requests\n",
          exact_s, n_changes, seconds, sv_window_get_generation (b->window) - gen_before);
  printf ("  overlays drawn during the drag: %u (%.1f per second), %u of them previews (%s)\n",
          b->n_drawn, rate, b->n_drawn_preview, sv_window_get_result_text (b->window));
  if (b->n_drawn_preview)
    printf ("  previews at 1/%u scale (the last), %.3f s each on the worker on average\n",
            b->preview_factor, b->preview_seconds_sum / b->n_drawn_preview);
  printf ("  longest time without a new overlay: %.0f ms\n", max_gap);
  printf ("  release → exact result drawn: %.0f ms (exact run %.3f s)\n", release_ms,
          sv_window_get_result (b->window)->seconds_total);
  g_string_append_printf (
      json,
      "\"%s\": {\"shape\": [%u, %u, %u], \"exact_s\": %.3f, \"drag_s\": %.1f, "
      "\"changes\": %u, \"overlays\": %u, \"overlays_per_s\": %.2f, "
      "\"previews\": %u, \"max_gap_ms\": %.0f, \"release_to_exact_ms\": %.0f}, ",
      tag, v->nz, v->ny, v->nx, exact_s, seconds, n_changes, b->n_drawn, rate, b->n_drawn_preview,
      max_gap, release_ms);
  g_clear_pointer (&b->drawn_at, g_array_unref);
}

/* (c): `trials` slider changes, each timed until its result is drawn. */
static void
latency_trials (Bench *b, int trials, int size, const char *tag, const char *what, GString *json)
{
  g_autofree double *lat_result = g_new (double, MAX (trials, 1));
  g_autofree double *lat_drawn = g_new (double, MAX (trials, 1));
  g_autofree double *lat_job = g_new (double, MAX (trials, 1));
  g_autofree double *frame_wait = g_new (double, MAX (trials, 1));
  g_autofree char *key = NULL;
  SvJobResult *r;
  Stats s;

  for (int i = 0; i < trials; i++)
    {
      SvParamsPanel *panel = sv_window_get_params_panel (b->window);
      gint64 t0, t_result = 0;

      run_for (0.3);
      b->t_drawn = 0;
      b->drawn_pending = FALSE;
      /* What the window's frame may wait for a quick result now
       * (sv-window-frame.c). */
      frame_wait[i] = sv_window_get_frame_wait_us (b->window) / 1000.0;
      t0 = now_us ();
      sv_params_panel_set_compactness (panel, 0.2 + 0.1 * i);
      b->target = sv_window_get_generation (b->window);
      while (!b->t_drawn)
        {
          g_main_context_iteration (NULL, TRUE);
          if (!t_result && result_current (b->window))
            t_result = now_us ();
        }
      lat_result[i] = (t_result - t0) / 1000.0;
      lat_drawn[i] = (b->t_drawn - t0) / 1000.0;
      lat_job[i] = sv_window_get_result (b->window)->seconds_total * 1000.0;
      b->target = 0;
    }
  r = sv_window_get_result (b->window);
  printf ("\n(c%s) slider change → new overlay, %d trials, %s backend, %d³%s; the last result's "
          "labels %s\n",
          tag, trials, r->backend_name, size, what,
          sv_job_result_has_host_labels (r) ? "in host memory" : "on the device only");
  printf ("  %-46s %8s %8s %8s\n", "ms", "median", "p95", "max");
  print_stats_row ("job on the worker (seconds_total)", s = stats_of (lat_job, trials));
  json_stats (json, key = g_strdup_printf ("latency%s_job_ms", tag), s);
  g_free (key);
  print_stats_row ("change → result on the main thread", s = stats_of (lat_result, trials));
  json_stats (json, key = g_strdup_printf ("latency%s_result_ms", tag), s);
  g_free (key);
  print_stats_row ("change → result drawn (after-paint)", s = stats_of (lat_drawn, trials));
  print_stats_row ("the frame's wait for a quick result", stats_of (frame_wait, trials));
  json_stats (json, key = g_strdup_printf ("latency%s_drawn_ms", tag), s);
}

int
main (int argc, char **argv)
{
  double seconds = 4.0, drag_seconds = 3.0;
  int size = 128, mem_size = 512, trials = 5, mem_iters = 3, live_size = 256;
  gboolean orthogonal = FALSE;
  g_autofree char *backend = NULL;
  GOptionEntry entries[] = {
    { "seconds", 0, 0, G_OPTION_ARG_DOUBLE, &seconds, "Slider drive time (default 4)", "S" },
    { "size", 0, 0, G_OPTION_ARG_INT, &size, "Volume edge for frames and latency (128)", "N" },
    { "trials", 0, 0, G_OPTION_ARG_INT, &trials, "Latency trials (5)", "N" },
    { "memory-size", 0, 0, G_OPTION_ARG_INT, &mem_size, "Volume edge for memory, 0 to skip (512)",
      "N" },
    { "memory-iters", 0, 0, G_OPTION_ARG_INT, &mem_iters, "SLIC iterations for the memory run (3)",
      "N" },
    { "backend", 0, 0, G_OPTION_ARG_STRING, &backend, "cpu (default), cuda or auto", "NAME" },
    { "drag-seconds", 0, 0, G_OPTION_ARG_DOUBLE, &drag_seconds, "Live drag time (default 3)", "S" },
    { "orthogonal", 0, 0, G_OPTION_ARG_NONE, &orthogonal,
      "The orthogonal layout: XY, XZ, YZ and the 3D view", NULL },
    { "live-size", 0, 0, G_OPTION_ARG_INT, &live_size,
      "Volume edge for the second live drag, 0 to skip (256)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("- Supervox GUI benchmark");
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) json = g_string_new ("{\"bench\": \"gui\", ");
  Bench b = { 0 };
  GdkFrameClock *clock;
  guint probe, tick;
  guint64 gen_before;
  const char *renderer_name;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  if (!backend)
    backend = g_strdup ("cpu");
  if (!g_str_equal (backend, "cpu") && !g_str_equal (backend, "cuda")
      && !g_str_equal (backend, "auto"))
    {
      g_printerr ("--backend must be cpu, cuda or auto, got %s\n", backend);
      return 2;
    }
  gtk_init ();
  /* As the application does at start-up: without it "cuda" falls back to the CPU. */
  sv_application_register_backends ();

  b.window = SV_WINDOW (sv_window_new (NULL));
  if (orthogonal)
    g_object_set (b.window, "orthogonal", TRUE, NULL);
  b.view = sv_window_get_slice_view (b.window, SV_AXIS_XY);
  b.area = sv_slice_view_get_gl_area (b.view);
  gtk_window_present (GTK_WINDOW (b.window));
  while (!gtk_widget_get_mapped (GTK_WIDGET (b.area)))
    g_main_context_iteration (NULL, TRUE);

  b.view_handler
      = g_signal_handler_find (b.area, G_SIGNAL_MATCH_ID | G_SIGNAL_MATCH_DATA,
                               g_signal_lookup ("render", GTK_TYPE_GL_AREA), 0, NULL, NULL, b.view);
  if (!b.view_handler)
    g_error ("the view's render handler was not found");
  b.wrapper_handler = g_signal_connect (b.area, "render", G_CALLBACK (render_wrapper_cb), &b);
  g_signal_handler_block (b.area, b.view_handler);

  clock = gtk_widget_get_frame_clock (GTK_WIDGET (b.window));
  g_signal_connect (clock, "before-paint", G_CALLBACK (before_paint_cb), &b);
  g_signal_connect (clock, "update", G_CALLBACK (update_cb), &b);
  g_signal_connect (clock, "layout", G_CALLBACK (layout_cb), &b);
  g_signal_connect (clock, "paint", G_CALLBACK (paint_cb), &b);
  g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &b);
  probe = g_timeout_add_full (G_PRIORITY_HIGH, STALL_INTERVAL_MS, probe_cb, &b, NULL);
  tick = gtk_widget_add_tick_callback (GTK_WIDGET (b.window), drive_tick_cb, &b, NULL);

  /* ---- (a) frames while a CPU job runs ---- */
  sv_window_set_volume (b.window, make_cells ((guint)size, 1), "bench");
  {
    SvParamsPanel *panel = sv_window_get_params_panel (b.window);
    sv_params_panel_set_backend (panel, backend);
  }
  wait_result (b.window, 120);
  run_for (0.5);
  gtk_gl_area_make_current (b.area);
  renderer_name = (const char *)glGetString (GL_RENDERER);
  printf ("Supervox GUI benchmark: %d³ float32, window %d×%d, XY view %d×%d, GL renderer %s\n",
          size, gtk_widget_get_width (GTK_WIDGET (b.window)),
          gtk_widget_get_height (GTK_WIDGET (b.window)), gtk_widget_get_width (GTK_WIDGET (b.area)),
          gtk_widget_get_height (GTK_WIDGET (b.area)), renderer_name ? renderer_name : "?");
  g_string_append_printf (json, "\"size\": %d, \"gl_renderer\": \"%s\", \"view\": [%d, %d], ", size,
                          renderer_name ? renderer_name : "?",
                          gtk_widget_get_width (GTK_WIDGET (b.area)),
                          gtk_widget_get_height (GTK_WIDGET (b.area)));

  /* (a0) for comparison: scrolling slices every frame, no job running. */
  recording_start (&b);
  b.driving = DRIVE_SLICE;
  run_for (MIN (seconds, 2.0));
  b.driving = DRIVE_NONE;
  recording_report (
      &b, "a0", "idle", json,
      g_strdup_printf ("slice changes every frame for %.1f s, no job running", MIN (seconds, 2.0)));

  /* (a) compactness slider every frame: the job restarts each frame. */
  recording_start (&b);
  gen_before = sv_window_get_generation (b.window);
  b.n_changes = 0;
  b.driving = DRIVE_COMPACTNESS;
  run_for (seconds);
  b.driving = DRIVE_NONE;
  /* Then let the last change's result land and be drawn, still recording. */
  wait_result (b.window, 120);
  run_for (0.3);
  recording_report (
      &b, "a", "job", json,
      g_strdup_printf ("compactness changes every frame for %.1f s (%u changes, %" G_GUINT64_FORMAT
                       " job requests), then until the last "
                       "result was drawn",
                       seconds, b.n_changes, sv_window_get_generation (b.window) - gen_before));

  /* ---- (c) slider change → new overlay on screen ---- */
  latency_trials (&b, trials, size, "", "", json);
  /* (c_host) the same with the host copy every CUDA run made before the
   * labels stayed on the device (the job's SV_JOB_HOST_LABELS=always). */
  if (g_str_equal (sv_window_get_result (b.window)->backend_name, "cuda"))
    {
      g_setenv ("SV_JOB_HOST_LABELS", "always", TRUE);
      latency_trials (&b, trials, size, "_host", ", labels copied to the host after every run",
                      json);
      g_unsetenv ("SV_JOB_HOST_LABELS");
    }

  /* ---- (d) live drags: the bundled sample, then a bigger volume ---- */
  if (drag_seconds > 0)
    {
      if (!sv_window_load_sample (b.window, 48, 160, 160, &error))
        g_error ("sample: %s", error->message);
      wait_settled (b.window, 600);
      run_for (0.5);
      live_drag (&b, "d_sample", "the bundled sample", drag_seconds, json);
      if (live_size > 0)
        {
          sv_window_set_volume (b.window, make_cells ((guint)live_size, 3), "bench live");
          wait_settled (b.window, 600);
          run_for (0.5);
          live_drag (&b, "d_large", "a bigger volume", drag_seconds, json);
        }
    }

  g_source_remove (probe);
  gtk_widget_remove_tick_callback (GTK_WIDGET (b.window), tick);

  /* ---- (b) memory with a big volume open and segmented ---- */
  if (mem_size > 0)
    {
      double rss0, hwm0, rss1, hwm1, rss2, hwm2, rss3, hwm3;
      double vol_mib = (double)mem_size * mem_size * mem_size * 4 / (1024.0 * 1024.0);
      double slice_mib = (double)mem_size * mem_size * 4 / (1024.0 * 1024.0);
      gint64 t0, t1, t2;
      SvVolume *big;
      SvSlicParams p;
      gboolean hwm_reset;
      RssTrace tr = { 0 };
      guint trace;

      read_mem (&rss0, &hwm0);
      hwm_reset = reset_hwm ();
      t0 = now_us ();
      big = make_cells ((guint)mem_size, 2);
      t1 = now_us ();
      read_mem (&rss1, &hwm1);
      reset_hwm ();
      tr.t0 = now_us ();
      tr.last_rss = rss1;
      tr.steps = g_string_new (NULL);
      trace = g_timeout_add (100, rss_trace_cb, &tr);
      /* Fewer iterations keep the run short: memory does not depend on them. */
      sv_params_panel_get_params (sv_window_get_params_panel (b.window), &p);
      p.max_num_iter = mem_iters;
      sv_params_panel_set_params (sv_window_get_params_panel (b.window), &p);
      sv_window_set_volume (b.window, big, "bench big");
      wait_result (b.window, 600);
      b.t_drawn = 0;
      b.drawn_pending = FALSE;
      b.target = sv_window_get_generation (b.window);
      gtk_gl_area_queue_render (b.area);
      while (!b.t_drawn)
        g_main_context_iteration (NULL, TRUE);
      t2 = now_us ();
      g_source_remove (trace);
      read_mem (&rss2, &hwm2);
      run_for (1.0);
      read_mem (&rss3, &hwm3);

      printf ("\n(b) memory, %d³ float32 (%.0f MiB), CPU backend, %d iterations%s\n", mem_size,
              vol_mib, mem_iters,
              hwm_reset ? "" : " (VmHWM could not be reset: peaks are cumulative)");
      printf (
          "  synth %.1f s, open + segment + draw %.1f s (job %.1f s: prepare %.1f, iterate %.1f, "
          "connect %.1f)\n",
          (t1 - t0) / 1e6, (t2 - t1) / 1e6, sv_window_get_result (b.window)->seconds_total,
          sv_window_get_result (b.window)->stats.seconds_prepare,
          sv_window_get_result (b.window)->stats.seconds_iterate,
          sv_window_get_result (b.window)->stats.seconds_connect);
      printf ("  %-46s %9s %9s\n", "MiB", "VmRSS", "VmHWM");
      printf ("  %-46s %9.0f %9.0f\n", "before (window up, small volume)", rss0, hwm0);
      printf ("  %-46s %9.0f %9.0f\n", "volume generated (peak: synth)", rss1, hwm1);
      printf ("  %-46s %9.0f %9.0f\n", "segmented and drawn (peak: open + job)", rss2, hwm2);
      printf ("  %-46s %9.0f %9.0f\n", "1 s later", rss3, hwm3);
      printf ("  RSS steps while opening and segmenting (s since open: MiB):%s\n", tr.steps->str);
      printf ("  theoretical minimum above the baseline: volume %.0f + labels %.0f + prepared %.0f "
              "+ display %.0f = %.0f MiB\n",
              vol_mib, vol_mib, vol_mib, 3 * slice_mib, 3 * vol_mib + 3 * slice_mib);
      printf ("  measured above the baseline: steady %.0f MiB, peak %.0f MiB\n", rss3 - rss0,
              hwm2 - rss0);
      g_string_append_printf (json,
                              "\"memory\": {\"size\": %d, \"iters\": %d, \"rss_before_mib\": %.0f, "
                              "\"rss_generated_mib\": %.0f, \"hwm_synth_mib\": %.0f, "
                              "\"rss_segmented_mib\": %.0f, \"hwm_segment_mib\": %.0f, "
                              "\"rss_settled_mib\": %.0f, \"min_above_baseline_mib\": %.0f, "
                              "\"synth_s\": %.2f, \"open_segment_draw_s\": %.2f, "
                              "\"rss_steps\": \"%s\"}, ",
                              mem_size, mem_iters, rss0, rss1, hwm1, rss2, hwm2, rss3,
                              3 * vol_mib + 3 * slice_mib, (t1 - t0) / 1e6, (t2 - t1) / 1e6,
                              g_strstrip (tr.steps->str));
      g_string_free (tr.steps, TRUE);
    }

  g_string_truncate (json, json->len - 2);
  g_string_append (json, "}");
  printf ("\n%s\n", json->str);
  fflush (stdout);
  gtk_window_destroy (GTK_WINDOW (b.window));
  return 0;
}

/* Supervox GUI: the main window's instance struct and the functions its
 * files share. One type spread over files by concern:
 *   sv-window.c          the type, the volume, hover and crosshair status
 *   sv-window-job.c      the engine job: live requests while dragging,
 *                        progress, results, Stop
 *   sv-window-files.c    opening (on a worker thread), masks, export,
 *                        screenshots, presets, file choosers, error dialogs
 *   sv-window-actions.c  view and teaching actions, "Copy as command" */
#pragma once

#include "sv-window.h"

#include "sv-config.h"
#include "synth.h"

#if SV_HAVE_CUDA
#include "sv-cuda-gl.h"
#endif

G_BEGIN_DECLS

/* The bundled sample's shape. */
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
  char *volume_path; /* NULL for the sample */
  guint8 *mask;      /* NULL, or nz*ny*nx bytes (1 inside) for the volume; the job borrows it */
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

/* sv-window.c */
SvSliceView *sv_window_view (SvWindow *self, guint i); /* 0 XY, 1 XZ, 2 YZ */
gboolean sv_window_verbose (SvWindow *self);
void sv_window_update_hover_status (SvWindow *self);
void sv_window_update_search_window (SvWindow *self);
void sv_window_auto_contrast (SvWindow *self);

/* sv-window-job.c */
void sv_window_submit (SvWindow *self);
/* A new job for the volume (and mask) shown, and its first request. */
void sv_window_start_job (SvWindow *self);

/* sv-window-files.c */
typedef void (*SvFileChosenFunc) (SvWindow *self, GFile *file, gpointer data);
void sv_window_show_error (SvWindow *self, const char *primary, const GError *error);
void sv_window_rebuild_recent_menu (SvWindow *self);
void sv_window_class_add_file_actions (GtkWidgetClass *widget_class);

/* sv-window-actions.c */
void sv_window_class_add_view_actions (GtkWidgetClass *widget_class);

G_END_DECLS

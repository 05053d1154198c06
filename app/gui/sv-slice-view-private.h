/* Supervox GUI: one slice view's instance struct and what its files
 * share:
 *   sv-slice-view.c        the type, slices, what a frame shows
 *   sv-slice-view-frame.c  what a frame shows: slices, centres, overlays
 *   sv-slice-view-gl.c     GL drawing and CUDA–GL interop
 *   sv-slice-view-input.c  pointer, hover, pick, wheel, pan and zoom
 *   sv-slice-view-soft.c   the software path when GL cannot be had
 *   sv-slice-view-difference.c  the voxels where two results differ */
#pragma once

#include "sv-slice-view.h"

#include <epoxy/gl.h>

#include "sv-config.h"
#include "sv-scale-bar.h"

#if SV_HAVE_CUDA
#include "sv-cuda-gl.h"
#endif

G_BEGIN_DECLS

struct _SvSliceView
{
  GtkWidget parent_instance;

  GtkGLArea *gl_area;
  GtkDrawingArea *soft_area; /* shown instead of GL when GL cannot be had */
  SvScaleBar *scale_bar;
  GtkScale *slice_scale;
  GtkLabel *title;
  GtkAdjustment *slice_adjustment;

  SvAxis axis;
  const SvVolume *volume;
  SvJobResult *result;
  SvSliceImageFunc image_source; /* sv_slice_view_set_source; NULL: the volume's data */
  SvSliceLabelsFunc label_source;
  gpointer source_data;
  SvDisplay display;
  SvRenderer *renderer;
  char *gl_error;

  gboolean image_dirty, labels_dirty, points_dirty;
  float *image_buf;
  gint32 *label_buf;

  double shared_fit;   /* logical pixels per unit of spacing shared by the views; 0: own fit */
  double zoom;         /* relative to fit */
  double pan_x, pan_y; /* logical pixels */
  double drag_pan_x, drag_pan_y;

  double pointer_x, pointer_y;
  gboolean pointer_inside;
  gboolean hover_valid;
  guint hover_zyx[3];
  gboolean cross_valid;
  guint cross_zyx[3];
  gboolean window_valid;
  int window_lo[3], window_hi[3];
  gboolean selected_valid, selected_only;
  gint32 selected;
  gboolean region_valid, drawing_region;
  guint region_lo[3], region_hi[3]; /* the region box, z y x, hi exclusive */
  GBytes *difference; /* nz·ny·nx bytes to highlight, or NULL (sv-slice-view-difference.c) */
  guint8 *difference_buf;
  gboolean difference_dirty;
  gboolean soft_has_difference;

  /* The software path (sv-slice-view-soft.c). */
  gboolean soft;
  char *gl_off_reason;
  gboolean soft_has_labels;
  SvCentreMark *soft_marks;
  gsize n_soft_marks;

  SvCaptureFunc capture_func;
  gpointer capture_data;

#if SV_HAVE_CUDA
  /* Interop path: a pixel buffer registered with CUDA, made in realize when
   * GL runs on a CUDA device, grown in render when a slice needs more. */
  gboolean cuda_gl;
  GLuint label_pbo;
  gsize label_pbo_bytes;
  SvCudaGlBuffer *cuda_buffer;
  gboolean interop_failed; /* after a failure this view keeps the host path */
#endif
};

/* The slice's horizontal (u), vertical (v) and normal (w) axes as indices
 * into z, y, x. */
void sv_slice_view_axis_dims (SvAxis axis, int *u, int *v, int *w);
/* Where the slice lands, in logical pixels, and its texel size. */
gboolean sv_slice_view_slice_rect (SvSliceView *self, double *x0, double *y0, double *x1,
                                   double *y1, guint *tw, guint *th);
/* The slice's intensities and labels into image_buf and label_buf. */
void sv_slice_view_extract_image (SvSliceView *self, guint tw, guint th);
void sv_slice_view_extract_labels (SvSliceView *self, guint tw, guint th);
/* With a label source: its labels into label_buf; FALSE when it has none. */
gboolean sv_slice_view_source_labels (SvSliceView *self, guint tw, guint th);
/* Everything of the frame but the textures, at `scale` device pixels per
 * logical one, for the slice rectangle (x0, y0)–(x1, y1). */
void sv_slice_view_fill_frame (SvSliceView *self, int scale, double x0, double y0, double x1,
                               double y1, SvRenderFrame *f);
/* Asks for a new frame on whichever path draws. */
void sv_slice_view_queue_frame (SvSliceView *self);
void sv_slice_view_emit_hover (SvSliceView *self, int z, int y, int x);
/* Emits "hover" when the voxel under the pointer changed (the pointer
 * moved, or the slice under it). */
void sv_slice_view_update_hover (SvSliceView *self);
void sv_slice_view_emit_pick (SvSliceView *self, int z, int y, int x);
void sv_slice_view_emit_resize (SvSliceView *self, int width, int height);
void sv_slice_view_emit_region (SvSliceView *self, const guint lo[3], const guint hi[3]);
void sv_slice_view_emit_zoom (SvSliceView *self, double factor, const double zyx[3]);

/* Template callbacks (sv-slice-view-gl.c). */
void sv_slice_view_gl_realize_cb (GtkGLArea *area, SvSliceView *self);
void sv_slice_view_gl_unrealize_cb (GtkGLArea *area, SvSliceView *self);
gboolean sv_slice_view_gl_render_cb (GtkGLArea *area, GdkGLContext *context, SvSliceView *self);

/* Template callbacks (sv-slice-view-input.c). */
void sv_slice_view_motion_cb (GtkEventControllerMotion *motion, double x, double y,
                              SvSliceView *self);
void sv_slice_view_leave_cb (GtkEventControllerMotion *motion, SvSliceView *self);
gboolean sv_slice_view_scroll_cb (GtkEventControllerScroll *scroll, double dx, double dy,
                                  SvSliceView *self);
void sv_slice_view_drag_begin_cb (GtkGestureDrag *drag, double x, double y, SvSliceView *self);
void sv_slice_view_drag_update_cb (GtkGestureDrag *drag, double dx, double dy, SvSliceView *self);
void sv_slice_view_drag_end_cb (GtkGestureDrag *drag, double dx, double dy, SvSliceView *self);
void sv_slice_view_click_cb (GtkGestureClick *click, int n_press, double x, double y,
                             SvSliceView *self);

/* sv-slice-view-difference.c: the slice of the highlighted voxels into
 * difference_buf; FALSE when there are none for this volume. */
gboolean sv_slice_view_extract_difference (SvSliceView *self, guint tw, guint th);
void sv_slice_view_difference_finalize (SvSliceView *self);

/* sv-slice-view-soft.c: draws with sv_soft_render from now on; `why` is
 * said once per process. */
void sv_slice_view_soft_enable (SvSliceView *self, const char *why);
void sv_slice_view_soft_init (SvSliceView *self);
void sv_slice_view_soft_finalize (SvSliceView *self);

G_END_DECLS

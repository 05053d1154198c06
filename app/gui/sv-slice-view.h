/* Supervox GUI: one slice view (XY, XZ or YZ) of the open volume, drawn with
 * OpenGL, with its slice slider. */
#pragma once

#include <gtk/gtk.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-job.h"
#include "sv-centre-marks.h"
#include "sv-renderer.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

#define SV_TYPE_SLICE_VIEW (sv_slice_view_get_type ())
G_DECLARE_FINAL_TYPE (SvSliceView, sv_slice_view, SV, SLICE_VIEW, GtkWidget)

/* Receives a capture of the GL view (RGBA, device pixels); texture is borrowed. */
typedef void (*SvCaptureFunc) (SvSliceView *view, GdkTexture *texture, gpointer user_data);

GtkWidget *sv_slice_view_new (SvAxis axis);
SvAxis sv_slice_view_get_axis (SvSliceView *view);
void sv_slice_view_set_axis (SvSliceView *view, SvAxis axis);

/* The volume shown; borrowed, it must outlive the view or be replaced first.
 * Resets the slice to the middle and the zoom to fit. */
void sv_slice_view_set_volume (SvSliceView *view, const SvVolume *volume);
/* The labels shown (a reference is taken); NULL shows none. */
void sv_slice_view_set_result (SvSliceView *view, SvJobResult *result);
SvJobResult *sv_slice_view_get_result (SvSliceView *view);
/* Slices from elsewhere than the volume's data and a result: an XY view of
 * a volume larger than memory. `image` fills slice z as ny·nx texels of
 * sv_display_texel_channels (nc) values (the first channels), `labels` fills
 * ny·nx labels or returns FALSE when there are none. The volume given to
 * sv_slice_view_set_volume then only carries the shape (its data is NULL).
 * NULL functions: the volume's data and the result, as before. */
typedef void (*SvSliceImageFunc) (guint z, float *out, gpointer data);
typedef gboolean (*SvSliceLabelsFunc) (guint z, gint32 *out, gpointer data);
void sv_slice_view_set_source (SvSliceView *view, SvSliceImageFunc image, SvSliceLabelsFunc labels,
                               gpointer data);
/* The source's labels changed: the slice is read again. */
void sv_slice_view_source_changed (SvSliceView *view);
/* Copied. */
void sv_slice_view_set_display (SvSliceView *view, const SvDisplay *display);

guint sv_slice_view_get_slice (SvSliceView *view);
void sv_slice_view_set_slice (SvSliceView *view, guint slice);
/* Moves by delta slices, clamped. */
void sv_slice_view_step_slice (SvSliceView *view, int delta);
guint sv_slice_view_get_n_slices (SvSliceView *view);

/* Crosshair through voxel (z, y, x), as the other views' slices. */
void sv_slice_view_set_crosshair (SvSliceView *view, gboolean show, guint z, guint y, guint x);
/* A search window in voxel coordinates, [lo, hi) per axis z, y, x. */
void sv_slice_view_set_search_window (SvSliceView *view, gboolean show, const int lo[3],
                                      const int hi[3]);

/* The region preview's box in voxels, [lo, hi) per axis z, y, x. A
 * Shift-drag in the view draws one along its two axes and emits "region". */
void sv_slice_view_set_region (SvSliceView *view, gboolean show, const guint lo[3],
                               const guint hi[3]);

/* The picked supervoxel, tinted; with `only` everything else is dimmed
 * and drawn without overlay. */
void sv_slice_view_set_selection (SvSliceView *view, gboolean valid, gint32 label, gboolean only);

/* The voxels to highlight in red: nz·ny·nx bytes of the volume, nonzero
 * where the labels shown differ from the ones compared with (a reference
 * is taken; NULL highlights none; bytes of another size are not drawn). */
void sv_slice_view_set_difference (SvSliceView *view, GBytes *difference);
/* TRUE while the view has bytes to highlight. */
gboolean sv_slice_view_get_difference_shown (SvSliceView *view);

/* The slice's own fit: logical pixels per unit of spacing that fit it into
 * the view (0 before the view has a size or a volume). */
double sv_slice_view_get_fit_scale (SvSliceView *view);
/* A fit shared by the views, so that one voxel has one size in all of them
 * and rows and columns line up (the orthogonal layout); 0: the own fit. */
void sv_slice_view_set_shared_fit (SvSliceView *view, double scale);
/* Logical pixels per unit of spacing now drawn: fit × zoom. */
double sv_slice_view_get_scale (SvSliceView *view);
/* The slider's text for a slice: "25 / 48" (counted from 1). */
char *sv_slice_view_format_slice (SvSliceView *view, guint slice);

void sv_slice_view_zoom_fit (SvSliceView *view);
/* One screen pixel per voxel along the horizontal axis. */
void sv_slice_view_zoom_one (SvSliceView *view);
/* Multiplies the zoom by factor keeping the view point (x, y) in place. */
void sv_slice_view_zoom_at (SvSliceView *view, double factor, double x, double y);
/* Multiplies the zoom by factor keeping the voxel point zyx (z, y, x in
 * voxels, fractional: 2.5 is the middle of voxel 2) where it is on screen,
 * as a Ctrl+wheel over that point in another view does ("zoom" signal). */
void sv_slice_view_zoom_about (SvSliceView *view, double factor, const double zyx[3]);
/* Draws at `scale` logical pixels per unit of spacing, the pan kept. */
void sv_slice_view_set_scale (SvSliceView *view, double scale);
/* Takes ref's zoom (the two views must share one fit) and its pan along
 * an axis that both show on the same side, so that rows and columns line
 * up with ref's; along its other axis the voxel point zyx (as for
 * sv_slice_view_zoom_about) stays where the fit puts it. */
void sv_slice_view_follow (SvSliceView *view, SvSliceView *ref, const double zyx[3]);
/* TRUE while the pointer is over the view's drawing area. */
gboolean sv_slice_view_has_pointer (SvSliceView *view);

/* How the current result's labels reach GL, in words: "drawn from the GPU"
 * when they go from the device into GL through a registered pixel buffer (a
 * CUDA result, GL on the CUDA device; CUDA–GL interop), "drawn from memory"
 * when they are uploaded from the host, "drawn without OpenGL" on the
 * software path. */
const char *sv_slice_view_get_label_path (SvSliceView *view);

/* TRUE when this view draws without OpenGL (GL could not be had, or
 * SV_GL=off): slices and overlays computed on the CPU. */
gboolean sv_slice_view_is_software (SvSliceView *view);
/* Why GL is off ("OpenGL is off (…): drawn in software"), or NULL. */
const char *sv_slice_view_get_gl_off_reason (SvSliceView *view);

/* TRUE while some realized slice view has GL on a CUDA device, so that
 * publishing CUDA labels for interop is worth it. Any thread. */
gboolean sv_slice_view_cuda_interop_active (void);

/* Asks the next render to read the framebuffer back and call func. */
void sv_slice_view_capture (SvSliceView *view, SvCaptureFunc func, gpointer user_data);

/* The voxel (z, y, x) under the GL area's point (x, y) in logical pixels;
 * FALSE outside the slice. XY shows x across, XZ x across and z down, YZ
 * z across and y down (rows line up with XY's beside it, as in Fiji). */
gboolean sv_slice_view_pixel_to_voxel (SvSliceView *view, double x, double y, guint zyx[3]);

/* The scale bar's text ("10 µm"), NULL when none is drawn. */
const char *sv_slice_view_get_scale_bar_text (SvSliceView *view);

/* The GtkGLArea inside (tests and screenshots). */
GtkGLArea *sv_slice_view_get_gl_area (SvSliceView *view);

/* Teaching mode's centre marks as this view draws them on its slice now
 * (g_free; NULL with *n = 0 outside teaching mode or without centres). */
SvCentreMark *sv_slice_view_collect_centre_marks (SvSliceView *view, gsize *n);

G_END_DECLS

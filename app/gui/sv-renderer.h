/* Supervox GUI: the OpenGL drawing of one slice view (no GTK widgets here;
 * every function needs the view's GL context current). */
#pragma once

#include <glib.h>

#include "sv-centre-marks.h"

G_BEGIN_DECLS

typedef enum
{
  SV_OVERLAY_BOUNDARIES,
  SV_OVERLAY_FILLED,
  SV_OVERLAY_OFF,
} SvOverlayMode;

typedef enum
{
  SV_COLORMAP_GREY,
  SV_COLORMAP_INVERTED,
  SV_COLORMAP_VIRIDIS, /* perceptually uniform; single-channel images only */
} SvColormap;

/* The most channels a composite shows (Fiji's composite of 2 or 3
 * fluorescence channels); texels carry at most this many. */
#define SV_DISPLAY_MAX_CHANNELS 3

/* One channel of a composite: windowed on its own, then added in its
 * colour. */
typedef struct
{
  float low, high; /* this channel's window: low → nothing, high → the full colour */
  float colour[3]; /* at full intensity; zeros hide the channel */
} SvChannelDisplay;

/* How slices and labels look; shared by every view of a window. */
typedef struct
{
  float low, high; /* intensity window: low → black, high → white */
  float gamma;     /* > 0 */
  SvOverlayMode overlay;
  float boundary[4];     /* colour and opacity */
  int thickness;         /* boundary width in device pixels, 1..3 */
  float fill_opacity;    /* 0..1 */
  guint32 shuffle;       /* changes every label colour when changed */
  gboolean show_centres; /* teaching mode: centres as points */
  SvColormap colormap;
  /* 2 or 3: a composite of that many channels, each with its own window
   * and colour (low, high and colormap are then unused; gamma applies to
   * each). 0: one window over grey, or over a photo's red, green and blue. */
  guint n_channels;
  SvChannelDisplay channels[SV_DISPLAY_MAX_CHANNELS];
} SvDisplay;

void sv_display_init_defaults (SvDisplay *display);

/* Floats per texel for `nc` channels: 1, or up to SV_DISPLAY_MAX_CHANNELS
 * (the first three of a hyperstack with more). */
guint sv_display_texel_channels (guint nc);

/* Where and what to draw, in device pixels with the origin at the top left. */
typedef struct
{
  int width, height;    /* framebuffer size */
  float x0, y0, x1, y1; /* where the slice lands */
  gboolean hover_valid;
  gint32 hover_label;
  gboolean background_valid; /* labels equal to `background` are not coloured */
  gint32 background;
  gboolean crosshair; /* lines through (cross_u, cross_v), in texels */
  float cross_u, cross_v;
  gboolean window_valid; /* a search window [u0,u1)×[v0,v1), in texels */
  float window_u0, window_v0, window_u1, window_v1;
  gboolean region_valid; /* the region preview's box [u0,u1)×[v0,v1), in texels */
  float region_u0, region_v0, region_u1, region_v1;
  gboolean selected_valid; /* a picked supervoxel, tinted */
  gint32 selected;
  gboolean selected_only; /* everything else dimmed and bare */
} SvRenderFrame;

/* Teaching mode's centres on their slice, in device pixels (those of
 * nearby slices are smaller: sv_centre_mark_size). */
#define SV_CENTRE_MIN_PX 7.0f
#define SV_CENTRE_MAX_PX 24.0f

typedef struct _SvRenderer SvRenderer;

/* Compiles the vertex and fragment shaders of those names from the
 * GResource's shaders/ and links them; 0 with an error saying why. */
guint sv_renderer_link_program (const char *vert, const char *frag, GError **error);

/* Compiles the shaders from the GResource and makes the GL objects. */
SvRenderer *sv_renderer_new (GError **error);
/* Deletes the GL objects. */
void sv_renderer_free (SvRenderer *renderer);

/* Uploads a width × height slice with nc (1 to 3) floats per texel. */
void sv_renderer_set_image (SvRenderer *renderer, const float *data, guint width, guint height,
                            guint nc);
/* Uploads a label slice (host path: glTexSubImage2D); NULL drops the labels. */
void sv_renderer_set_labels (SvRenderer *renderer, const gint32 *labels, guint width, guint height);
/* Uploads a label slice from the GL pixel buffer `pixel_buffer` (width ×
 * height gint32 from offset 0, written by CUDA on the interop path): the
 * labels never pass through host memory. */
void sv_renderer_set_labels_from_buffer (SvRenderer *renderer, guint pixel_buffer, guint width,
                                         guint height);
/* The voxels of the slice to highlight in red (width × height bytes,
 * nonzero: where the labels shown differ from the ones compared with); NULL
 * drops them. */
void sv_renderer_set_difference (SvRenderer *renderer, const guint8 *difference, guint width,
                                 guint height);
/* Teaching's centre marks (copied), drawn in this order when
 * display->show_centres. */
void sv_renderer_set_centre_marks (SvRenderer *renderer, const SvCentreMark *marks, gsize n);

/* Draws the frame into the current framebuffer. */
void sv_renderer_draw (SvRenderer *renderer, const SvDisplay *display, const SvRenderFrame *frame);

G_END_DECLS

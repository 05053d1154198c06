/* Supervox GUI: the 3D view in the orthogonal layout's fourth quadrant:
 * the volume ray-marched on the GPU (maximum intensity projection with the
 * slices' window, gamma and colormap), the selected supervoxel tinted, the
 * three orthogonal planes outlined; drag to rotate, wheel to zoom. Volumes
 * above 256³ voxels are shown from every 2nd, 3rd … voxel. */
#pragma once

#include <gtk/gtk.h>

#include "supervox/sv-job.h"
#include "sv-renderer.h"
#include "sv-slice-view.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

#define SV_TYPE_VOLUME_VIEW (sv_volume_view_get_type ())
G_DECLARE_FINAL_TYPE (SvVolumeView, sv_volume_view, SV, VOLUME_VIEW, GtkGLArea)

GtkWidget *sv_volume_view_new (void);
/* The volume shown (borrowed, as the slice views borrow it). */
void sv_volume_view_set_volume (SvVolumeView *view, const SvVolume *volume);
/* The labels whose selected supervoxel is tinted (a reference is taken;
 * a region's or a preview's labels are not used). */
void sv_volume_view_set_result (SvVolumeView *view, SvJobResult *result);
void sv_volume_view_set_selection (SvVolumeView *view, gboolean valid, gint32 label);
void sv_volume_view_set_display (SvVolumeView *view, const SvDisplay *display);
/* The orthogonal planes through voxel (z, y, x). */
void sv_volume_view_set_planes (SvVolumeView *view, guint z, guint y, guint x);
/* Turns the view by the given degrees (about the vertical, then the
 * horizontal axis), as a drag does. */
void sv_volume_view_rotate (SvVolumeView *view, double yaw_degrees, double pitch_degrees);
/* Receives a capture of the view (RGBA, device pixels); texture borrowed. */
typedef void (*SvVolumeCaptureFunc) (SvVolumeView *view, GdkTexture *texture, gpointer user_data);
/* Asks the next frame to be read back. */
void sv_volume_view_capture (SvVolumeView *view, SvVolumeCaptureFunc func, gpointer user_data);

G_END_DECLS

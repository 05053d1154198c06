/* Supervox: photos (PNG, JPEG and the other formats GdkPixbuf reads) as
 * volumes, shared by the GUI and the CLI so that both see the same floats. */
#pragma once

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib.h>

#include "supervox/sv-io.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

/* Converts a pixbuf to a one-slice volume (nz = 1): one channel when every
 * pixel has R = G = B, else three (RGB); alpha is dropped. Samples go from
 * uint8 to float32 as scikit-image's img_as_float does (v / 255 in double,
 * then cast). `name` (the file, for messages) may be NULL. */
SvVolume *sv_image_pixbuf_to_volume (GdkPixbuf *pixbuf, const char *name, GError **error);

/* Reads `path` with GdkPixbuf and converts it as above. Errors are
 * SV_ENGINE_ERROR_FORMAT, one line: "PATH: not an image supervox can read: ...". */
SvVolume *sv_image_read_pixbuf (const char *path, GError **error);

/* Fills `info` for a photo: shape 1×h×w, uint8, channels as the volume
 * would have them, spacing 1 (not in the file), value range of the kept
 * samples, `compression` the GdkPixbuf format name ("png", "jpeg"). */
gboolean sv_image_pixbuf_info (const char *path, SvTiffInfo *info, GError **error);

/* TRUE when `path` should be read through GdkPixbuf rather than libtiff:
 * its first bytes are a PNG or JPEG signature, or, when they are not a TIFF
 * header, its name ends in .png, .jpg or .jpeg (any case). A TIFF always
 * answers FALSE. */
gboolean sv_image_is_photo (const char *path);

G_END_DECLS

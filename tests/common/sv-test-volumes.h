/* Supervox tests: volumes made for tests. */
#pragma once

#include "supervox/sv-volume.h"

G_BEGIN_DECLS

/* A volume with smooth structure, noise and steps (a fixed seed), so that
 * segments are irregular and connectivity splits and merges. */
SvVolume *sv_test_textured_volume (guint nz, guint ny, guint nx, guint nc);

G_END_DECLS

/* Supervox tests: volumes made for tests. */
#pragma once

#include "supervox/sv-io.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

/* A volume with smooth structure, noise and steps (a fixed seed), so that
 * segments are irregular and connectivity splits and merges. */
SvVolume *sv_test_textured_volume (guint nz, guint ny, guint nx, guint nc);

/* *vol made a float32 volume over `data` (not owned), spacing 1. */
void sv_test_wrap_volume (SvVolume *vol, float *data, guint nz, guint ny, guint nx, guint nc);

/* Writes v to dir/name as a TIFF of sample type `as`; the path (g_free). */
char *sv_test_write_volume (const char *dir, const char *name, const SvVolume *v, SvSampleType as);

/* supervox-cli slic options that a streamed run must reproduce byte for
 * byte on such a volume (plain, no connectivity, smoothing with a halo,
 * SLIC-zero from label 0, splits and merges across slabs); NULL-ended. */
extern const char *const sv_test_stream_param_sets[];

G_END_DECLS

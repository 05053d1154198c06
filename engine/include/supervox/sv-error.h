/* Supervox engine: error domain shared by every engine module. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SV_ENGINE_ERROR (sv_engine_error_quark ())

typedef enum
{
  SV_ENGINE_ERROR_IO,            /* a file could not be opened, read or written */
  SV_ENGINE_ERROR_FORMAT,        /* the file is not a TIFF we can read, or is corrupt */
  SV_ENGINE_ERROR_INVALID_DATA,  /* NaN/inf voxels, shapes that do not match, ... */
  SV_ENGINE_ERROR_INVALID_PARAM, /* a parameter out of range */
  SV_ENGINE_ERROR_NO_MEMORY,     /* host or device memory would not suffice */
  SV_ENGINE_ERROR_BACKEND,       /* a backend failed (CUDA error, no device) */
  SV_ENGINE_ERROR_NO_SPACE,      /* the disk would not hold a streamed run's temporary files */
} SvEngineError;

GQuark sv_engine_error_quark (void);

G_END_DECLS

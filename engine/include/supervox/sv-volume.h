/* Supervox engine: voxel volumes and label volumes in host memory. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The sample format a volume had in its file (or in the caller's array:
 * the last four come from arrays only). Values are always held as float32
 * after scikit-image's img_as_float (0.16 and later): unsigned
 * v * (1 / max), signed max(v * (1 / max), -1), computed in double; bool
 * 0 or 1; floats as they are. */
typedef enum
{
  SV_SAMPLE_U8,
  SV_SAMPLE_U16,
  SV_SAMPLE_U32,
  SV_SAMPLE_I8,
  SV_SAMPLE_I16,
  SV_SAMPLE_I32,
  SV_SAMPLE_F32,
  SV_SAMPLE_F64,
  SV_SAMPLE_BOOL,
  SV_SAMPLE_U64,
  SV_SAMPLE_I64,
  SV_SAMPLE_F16,
} SvSampleType;

/* A Z×Y×X volume with nc channels, stored z-major with the channel fastest:
 * data[((z * ny + y) * nx + x) * nc + c]. A 2D image has nz == 1. */
typedef struct
{
  guint nz, ny, nx, nc;
  float *data;             /* owned, nz*ny*nx*nc floats */
  double spacing[3];       /* z, y, x voxel size in `unit`; 1.0 when the file says nothing */
  gboolean spacing_from_file;
  char *unit;              /* e.g. "micron"; NULL when unknown; owned */
  SvSampleType source_type;
} SvVolume;

/* Allocates a zero-filled volume; fails with SV_ENGINE_ERROR_NO_MEMORY when
 * the size overflows or cannot be allocated. Spacing starts at 1. */
SvVolume *sv_volume_new (guint nz, guint ny, guint nx, guint nc, GError **error);
void sv_volume_free (SvVolume *volume);
gsize sv_volume_n_voxels (const SvVolume *volume);
const char *sv_sample_type_to_string (SvSampleType type);

/* A copy of one channel (counted from 0) of `volume`, with its spacing,
 * unit and sample type: the volume the TIFF reader gives for that channel
 * (SvTiffReadOptions.channel), value for value. A channel the volume does
 * not have is SV_ENGINE_ERROR_INVALID_PARAM ("has 2 channels (0 to 1), not
 * channel 2"). */
SvVolume *sv_volume_extract_channel (const SvVolume *volume, guint channel, GError **error);

/* TRUE when scikit-image's slic computes a source of this type in float64
 * (img_as_float, then _supported_float_type): every type but float32 and
 * float16, which it computes in float32. */
gboolean sv_sample_type_float64 (SvSampleType type);

/* The float64 value img_as_float gives the sample whose float32 rounding
 * is `value`: exact for 8- and 16-bit integers (float32 tells them apart)
 * and bool; for wider integers and float64, and for a value that is no
 * sample of the type (a preview's average), `value` itself. */
double sv_sample_to_double (SvSampleType type, float value);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvVolume, sv_volume_free)

/* Labels, z-major like SvVolume. Masked-out voxels hold start_label - 1
 * (so -1 is possible with start_label 0). */
typedef struct
{
  guint nz, ny, nx;
  gint32 *data; /* owned */
  double spacing[3];
  char *unit;   /* unit of `spacing`, e.g. "micron"; NULL when unknown; owned */
} SvLabels;

SvLabels *sv_labels_new (guint nz, guint ny, guint nx, GError **error);
void sv_labels_free (SvLabels *labels);
gsize sv_labels_n_voxels (const SvLabels *labels);

/* The spacing (z, y, x, into `spacing`) and unit that labels computed from
 * an input carry, the same for every front end: a calibrated input's own
 * (its ImageJ or OME spacing in a unit of length), whatever spacing
 * weighed the distances, so that the labels overlay the image in Fiji and
 * napari; an uncalibrated input's (no unit, or ImageJ's "pixel")
 * `run_spacing`, the spacing the run used (NULL: ones), with no unit.
 * Returns the unit: input_unit or NULL, borrowed. */
const char *sv_label_calibration (const double input_spacing[3], const char *input_unit,
                                  const double *run_spacing, double spacing[3]);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvLabels, sv_labels_free)

G_END_DECLS

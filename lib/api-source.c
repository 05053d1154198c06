/* libsupervox: SLIC on a volume the caller serves slab by slab
 * (supervox_slic_source): its read function becomes the engine's slab
 * reader, and the streamed run of supervox_slic_file pulls from it. */
#define G_LOG_DOMAIN "supervox"

#include "api-private.h"

#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"

/* What a source's read function says when it fails. */
#define SV_SOURCE_MESSAGE_BYTES 1024

typedef struct
{
  const SupervoxSlabSource *source;
  const char *name;
} SourceRead;

static gboolean
source_read_cb (guint z0, guint z1, void *samples, gpointer user_data, GError **error)
{
  const SourceRead *sr = user_data;
  char message[SV_SOURCE_MESSAGE_BYTES] = "";
  int status;

  status = sr->source->read (z0, z1, samples, sr->source->user_data, message, sizeof message);
  if (status == 0)
    return TRUE;
  message[sizeof message - 1] = '\0';
  if (message[0] == '\0')
    g_snprintf (message, sizeof message, "the read function returned %d", status);
  if (z1 - z0 == 1)
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: slice %u could not be read: %s",
                 sr->name, z0, message);
  else
    g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                 "%s: slices %u to %u could not be read: %s", sr->name, z0, z1 - 1, message);
  return FALSE;
}

/* The source's header as a slab reader's; FALSE for a source the streamed
 * run cannot read. */
static gboolean
source_info (const SupervoxSlabSource *source, const char *name, SvTiffSlabInfo *info,
             GError **error)
{
  static const SupervoxDtype streamed[]
      = { SUPERVOX_UINT8, SUPERVOX_UINT16, SUPERVOX_UINT32, SUPERVOX_INT8,
          SUPERVOX_INT16, SUPERVOX_INT32,  SUPERVOX_FLOAT32, SUPERVOX_FLOAT64 };
  gboolean known = FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (streamed); i++)
    known = known || source->dtype == streamed[i];
  if (!known)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s: a slab source holds uint8, uint16, uint32, int8, int16, int32, float32 "
                   "or float64 samples (dtype code %d)",
                   name, (int)source->dtype);
      return FALSE;
    }
  for (guint a = 0; a < 4; a++)
    if (source->shape[a] < 1 || source->shape[a] > G_MAXINT32)
      {
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                     "%s: the shape is %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT "×%" G_GINT64_FORMAT
                     "×%" G_GINT64_FORMAT "; every axis needs 1 to 2³¹−1 elements",
                     name, source->shape[0], source->shape[1], source->shape[2],
                     source->shape[3]);
        return FALSE;
      }
  memset (info, 0, sizeof *info);
  info->nz = (guint)source->shape[0];
  info->ny = (guint)source->shape[1];
  info->nx = (guint)source->shape[2];
  info->nc = (guint)source->shape[3];
  info->sample_type = sv_api_sample_type (source->dtype);
  info->spacing_from_file
      = source->spacing[0] > 0 && source->spacing[1] > 0 && source->spacing[2] > 0;
  for (guint a = 0; a < 3; a++)
    info->spacing[a] = info->spacing_from_file ? source->spacing[a] : 1;
  info->unit = info->spacing_from_file ? source->unit : NULL;
  return TRUE;
}

void
supervox_slab_source_init (SupervoxSlabSource *source)
{
  if (source != NULL)
    memset (source, 0, sizeof *source);
}

/* A source as the engine's slab reader; NULL with `error` for one the run
 * cannot read. */
static SvTiffSlabReader *
source_reader (const SupervoxSlabSource *source, const char *fallback_name, SourceRead *sr,
               GError **error)
{
  SvTiffSlabInfo header;

  if (source->read == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s has no read function", fallback_name);
      return NULL;
    }
  sr->source = source;
  sr->name = source->name != NULL ? source->name : fallback_name;
  if (!source_info (source, sr->name, &header, error))
    return NULL;
  return sv_tiff_slab_reader_new_for_func (&header, source_read_cb, sr);
}

int
supervox_slic_sources (const SupervoxSlabSource *source, const SupervoxSlabSource *mask,
                       const char *output, const SupervoxParams *params, SupervoxBackend backend,
                       uint64_t memory_limit, const SupervoxControl *control,
                       SupervoxFileInfo *info)
{
  g_autoptr (SvTiffSlabReader) reader = NULL;
  g_autoptr (SvTiffSlabReader) mask_reader = NULL;
  GError *error = NULL;
  SourceRead sr, mask_sr;

  if (source == NULL)
    {
      g_set_error_literal (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "no slab source");
      sv_api_fail (error);
      return SUPERVOX_ERROR_INVALID_ARGUMENT;
    }
  reader = source_reader (source, "the slab source", &sr, &error);
  if (reader != NULL && mask != NULL)
    mask_reader = source_reader (mask, "the mask's slab source", &mask_sr, &error);
  if (reader == NULL || (mask != NULL && mask_reader == NULL))
    {
      sv_api_fail (error);
      return SUPERVOX_ERROR_INVALID_ARGUMENT;
    }
  return sv_api_slic_to_file (sr.name, reader, output, NULL, mask_reader,
                              mask != NULL ? mask_sr.name : NULL, params, backend, memory_limit,
                              control, info);
}

int
supervox_slic_source (const SupervoxSlabSource *source, const char *output, const char *mask,
                      const SupervoxParams *params, SupervoxBackend backend,
                      uint64_t memory_limit, const SupervoxControl *control,
                      SupervoxFileInfo *info)
{
  g_autoptr (SvTiffSlabReader) reader = NULL;
  GError *error = NULL;
  SourceRead sr;

  if (source == NULL)
    {
      g_set_error_literal (&error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "no slab source");
      sv_api_fail (error);
      return SUPERVOX_ERROR_INVALID_ARGUMENT;
    }
  reader = source_reader (source, "the slab source", &sr, &error);
  if (reader == NULL)
    {
      sv_api_fail (error);
      return SUPERVOX_ERROR_INVALID_ARGUMENT;
    }
  return sv_api_slic_to_file (sr.name, reader, output, mask, NULL, NULL, params, backend,
                              memory_limit, control, info);
}

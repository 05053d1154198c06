/* supervox-cli slic --mask: read once for the whole batch, and then held
 * for the in-memory runs or read slab by slab by the streamed ones. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-mask.h"

#include <string.h>

#include "cli-common.h"
#include "slic-stream.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io.h"
#include "supervox/sv-io-slab.h"

/* The shape of --mask from its header; every input must have it. */
static gboolean
read_mask_shape (const char *path, guint shape[3], GError **error)
{
  g_autoptr (SvTiffSlabReader) reader = NULL;
  const SvTiffSlabInfo *info;

  if (!sv_cli_check_input (path, error))
    return FALSE;
  reader = sv_tiff_slab_reader_open (path, NULL, error);
  if (reader == NULL)
    return FALSE;
  info = sv_tiff_slab_reader_info (reader);
  if (info->nc != 1)
    {
      g_autofree char *name = g_filename_display_name (path);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: a mask file must have one sample per pixel, not %u", name, info->nc);
      return FALSE;
    }
  shape[0] = info->nz;
  shape[1] = info->ny;
  shape[2] = info->nx;
  return TRUE;
}

/* When every input streams the mask is read slab by slab with the image:
 * held whole, it would cost as much as an 8-bit image. */
static gboolean
mask_streams (const char *const *inputs, const SvCliSlicContext *ctx)
{
  for (guint i = 0; inputs[i] != NULL; i++)
    if (!sv_cli_slic_would_stream (inputs[i], ctx))
      return FALSE;
  return TRUE;
}

/* Reads --mask once for the whole batch; every input must have its shape. */
static guint8 *
read_mask (const char *path, guint shape[3], GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree guint8 *mask = NULL;

  mask = sv_tiff_read_mask (path, &shape[0], &shape[1], &shape[2], &local);
  if (mask == NULL)
    {
      if (strstr (local->message, path) == NULL)
        g_prefix_error (&local, "%s: ", path);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  if (memchr (mask, 1, (gsize)shape[0] * shape[1] * shape[2]) == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                   "%s: the mask is empty: no voxel is inside it", path);
      return NULL;
    }
  return g_steal_pointer (&mask);
}

gboolean
sv_cli_slic_context_read_mask (SvCliSlicContext *ctx, const char *path, const char *const *inputs,
                               gboolean streamed, guint8 **mask, GError **error)
{
  *mask = NULL;
  ctx->mask_path = path;
  if (!read_mask_shape (path, ctx->mask_shape, error))
    return FALSE;
  ctx->mask_streamed = streamed || mask_streams (inputs, ctx);
  if (!ctx->mask_streamed && (*mask = read_mask (path, ctx->mask_shape, error)) == NULL)
    return FALSE;
  return TRUE;
}

/* Supervox engine: the supervoxel table of a label TIFF (or of labels in
 * memory) and an image TIFF, both read a z-slab at a time. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-memory.h"
#include "supervox/sv-supervoxel-table.h"

#include <string.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"

/* About this many voxels per slab when the caller does not say. */
#define SV_TABLE_SLAB_VOXELS (64u << 20)

void
sv_supervoxel_table_source_clear (SvSupervoxelTableSource *source)
{
  g_clear_pointer (&source->unit, g_free);
}

static gboolean
label_type_ok (const char *path, SvSampleType type, GError **error)
{
  switch (type)
    {
    case SV_SAMPLE_U8:
    case SV_SAMPLE_U16:
    case SV_SAMPLE_U32:
    case SV_SAMPLE_I8:
    case SV_SAMPLE_I16:
    case SV_SAMPLE_I32:
      return TRUE;
    default:
      {
        g_autofree char *name = g_filename_display_name (path);
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                     "%s: holds %s samples, not integer labels", name,
                     sv_sample_type_to_string (type));
        return FALSE;
      }
    }
}

/* n label samples of `type` as gint32; a uint32 above 2³¹−1 is an error. */
static gboolean
labels_from_samples (const char *path, SvSampleType type, const void *samples, gsize n,
                     gint32 *out, GError **error)
{
#define SV_LABELS(ctype)                                                                           \
  do                                                                                               \
    {                                                                                              \
      const ctype *s = samples;                                                                    \
      for (gsize i = 0; i < n; i++)                                                                \
        out[i] = (gint32)s[i];                                                                     \
    }                                                                                              \
  while (0)
  switch (type)
    {
    case SV_SAMPLE_U8:
      SV_LABELS (guint8);
      break;
    case SV_SAMPLE_I8:
      SV_LABELS (gint8);
      break;
    case SV_SAMPLE_U16:
      SV_LABELS (guint16);
      break;
    case SV_SAMPLE_I16:
      SV_LABELS (gint16);
      break;
    case SV_SAMPLE_I32:
      if (out != samples)
        memcpy (out, samples, n * sizeof (gint32));
      break;
    case SV_SAMPLE_U32:
      {
        const guint32 *s = samples;
        for (gsize i = 0; i < n; i++)
          {
            if (s[i] > G_MAXINT32)
              {
                g_autofree char *name = g_filename_display_name (path);
                g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                             "%s: label %u is above the largest supported (2147483647)", name,
                             s[i]);
                return FALSE;
              }
            out[i] = (gint32)s[i];
          }
      }
      break;
    default:
      g_assert_not_reached ();
    }
#undef SV_LABELS
  return TRUE;
}

SvSupervoxelTable *
sv_supervoxel_table_new_from_files (const char *labels_path, const SvLabels *labels,
                                    const char *image_path, int channel, guint slab_depth,
                                    const SvSupervoxelTableOptions *options,
                                    SvSupervoxelTableSource *source, GError **error)
{
  g_autoptr (SvTiffSlabReader) label_reader = NULL;
  g_autoptr (SvTiffSlabReader) image_reader = NULL;
  g_autoptr (SvSupervoxelTable) table = NULL;
  g_autofree gint32 *slab_labels = NULL;
  g_autofree guint8 *slab_samples = NULL;
  g_autofree guint8 *slab_image = NULL;
  const SvTiffSlabInfo *li = NULL, *ii = NULL;
  SvTiffReadOptions read_options;
  guint nz, ny, nx, nc = 0;
  SvSampleType label_type = SV_SAMPLE_I32, image_type = SV_SAMPLE_F64;
  gsize slice;

  g_return_val_if_fail ((labels_path == NULL) != (labels == NULL), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  sv_tiff_read_options_init_defaults (&read_options);
  if (options)
    read_options.n_threads = options->n_threads;
  if (labels_path)
    {
      label_reader = sv_tiff_slab_reader_open (labels_path, &read_options, error);
      if (label_reader == NULL)
        return NULL;
      li = sv_tiff_slab_reader_info (label_reader);
      if (li->nc != 1)
        {
          g_autofree char *name = g_filename_display_name (labels_path);
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                       "%s: a label file must have one sample per pixel, not %u", name, li->nc);
          return NULL;
        }
      if (!label_type_ok (labels_path, li->sample_type, error))
        return NULL;
      label_type = li->sample_type;
      nz = li->nz;
      ny = li->ny;
      nx = li->nx;
    }
  else
    {
      nz = labels->nz;
      ny = labels->ny;
      nx = labels->nx;
    }

  if (image_path)
    {
      read_options.channel = channel;
      image_reader = sv_tiff_slab_reader_open (image_path, &read_options, error);
      if (image_reader == NULL)
        return NULL;
      ii = sv_tiff_slab_reader_info (image_reader);
      if (ii->nz != nz || ii->ny != ny || ii->nx != nx)
        {
          g_autofree char *name = g_filename_display_name (image_path);
          g_autofree char *lname
              = labels_path ? g_filename_display_name (labels_path) : g_strdup ("the labels");
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                       "%s is %u×%u×%u (z×y×x) but %s is %u×%u×%u: they must have the same shape",
                       name, ii->nz, ii->ny, ii->nx, lname, nz, ny, nx);
          return NULL;
        }
      if (!sv_supervoxel_table_image_type_supported (ii->sample_type))
        {
          g_autofree char *name = g_filename_display_name (image_path);
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                       "%s: %s samples are not supported for statistics", name,
                       sv_sample_type_to_string (ii->sample_type));
          return NULL;
        }
      nc = ii->nc;
      image_type = ii->sample_type;
    }

  slice = (gsize)ny * nx;
  if (slab_depth == 0)
    slab_depth = (guint)MAX (SV_TABLE_SLAB_VOXELS / MAX (slice, 1), 1);
  slab_depth = MIN (slab_depth, MAX (nz, 1));

  if (source)
    {
      memset (source, 0, sizeof *source);
      source->shape[0] = nz;
      source->shape[1] = ny;
      source->shape[2] = nx;
      source->nc = nc;
      source->image_type = image_type;
      source->slab_depth = slab_depth;
      /* The label file's calibration first (slic writes the run's there). */
      if (li && li->spacing_from_file)
        {
          memcpy (source->spacing, li->spacing, sizeof source->spacing);
          source->unit = g_strdup (li->unit);
        }
      else if (labels && (labels->unit || labels->spacing[0] != 1.0 || labels->spacing[1] != 1.0
                          || labels->spacing[2] != 1.0))
        {
          memcpy (source->spacing, labels->spacing, sizeof source->spacing);
          source->unit = g_strdup (labels->unit);
        }
      else if (ii && ii->spacing_from_file)
        {
          memcpy (source->spacing, ii->spacing, sizeof source->spacing);
          source->unit = g_strdup (ii->unit);
        }
      else
        source->spacing[0] = source->spacing[1] = source->spacing[2] = 1.0;
    }

  table = sv_supervoxel_table_new (nz, ny, nx, nc, image_type, options);
  if (label_reader)
    {
      slab_labels = g_try_new (gint32, slice * slab_depth);
      slab_samples = g_try_malloc (sv_tiff_slab_reader_slice_bytes (label_reader) * slab_depth);
    }
  if (image_reader)
    slab_image = g_try_malloc (sv_tiff_slab_reader_slice_bytes (image_reader) * slab_depth);
  if ((label_reader && (slab_labels == NULL || slab_samples == NULL))
      || (image_reader && slab_image == NULL))
    {
      sv_set_no_memory (error, "slabs of %u slices of %u×%u voxels", slab_depth, ny, nx);
      return NULL;
    }

  for (guint z0 = 0; z0 < nz; z0 += slab_depth)
    {
      guint z1 = MIN (z0 + slab_depth, nz);
      const gint32 *slab;

      if (label_reader)
        {
          if (!sv_tiff_slab_reader_read (label_reader, z0, z1, slab_samples, error)
              || !labels_from_samples (labels_path, label_type, slab_samples,
                                       slice * (z1 - z0), slab_labels, error))
            return NULL;
          slab = slab_labels;
        }
      else
        slab = labels->data + (gsize)z0 * slice;
      if (image_reader && !sv_tiff_slab_reader_read (image_reader, z0, z1, slab_image, error))
        return NULL;
      sv_supervoxel_table_add_slab (table, slab, slab_image, z1 - z0);
    }
  sv_supervoxel_table_finish (table);
  return g_steal_pointer (&table);
}

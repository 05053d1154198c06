/* Supervox engine: how large a streamed run's slabs are, and what host
 * memory is left for the prepared slabs it keeps, from the memory limit
 * (stream-slic.c). */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include "internal.h"

/* Slices per slab of the iterations that fit in `limit` bytes beside what
 * does not depend on the slab: seeding's coverage map and the connectivity
 * window. The window is
 * the largest z extent of a label plus 3, known only at the end; labels
 * span about two grid steps (at most four), which is what is set aside. */
static void
iteration_bytes (const SvStreamSlabShape *s, gint64 n_segments, guint64 *per_slice,
                 guint64 *fixed)
{
  const guint64 plane = (guint64)s->ny * s->nx;
  const guint shape[3] = { s->nz, s->ny, s->nx };
  guint start[3], step[3];
  guint64 window;

  /* The slice in the file's type twice (one being read ahead) and as
   * float32, its assignment and its labels. */
  *per_slice = 2 * s->slice_bytes + plane * s->nc * 4 + plane * 8 + (s->mask_file ? plane : 0);
  sv_regular_grid (shape, (double)n_segments, start, step);
  window = MIN (2 * (guint64)step[0] + 3, (guint64)s->nz);
  /* maskSLIC seeding's map of covered voxels (the mask is the caller's);
   * with a mask file, seeding holds a slab of it, its map and its counts,
   * less than the slab's image. */
  *fixed = (s->mask && !s->mask_file ? plane * s->nz : 0) + window * plane * 8;
  /* The label writer's strips and codecs and the steps' scratch. */
  *fixed += 6 << 20;
}

static SvStreamSlabShape
reader_shape (const SvTiffSlabReader *reader, gboolean mask, gboolean mask_file)
{
  const SvTiffSlabInfo *info = sv_tiff_slab_reader_info (reader);

  return (SvStreamSlabShape){ info->nz, info->ny, info->nx, info->nc,
                              sv_tiff_slab_reader_slice_bytes (reader), mask, mask_file };
}

guint
sv__stream_depth_within (guint64 per_slice, guint64 fixed, guint64 limit, guint nz)
{
  guint64 depth;

  if (limit == 0)
    limit = G_GUINT64_CONSTANT (1) << 30;
  depth = limit > fixed ? (limit - fixed) / MAX (per_slice, 1) : 1;
  /* A larger slab gains nothing (a 2048³ run with 1 GiB float32 slabs
   * overlaps 90 % of its copies) and multiplies what is held at once: the
   * slab buffers, their pinned copies, the slabs being read ahead. With a
   * limit of all the memory a machine has, slabs of half the volume
   * would leave no room for the rest. */
  depth = MIN (depth, MAX (SV_STREAM_SLAB_TARGET_BYTES / MAX (per_slice, 1), 1));
  return (guint)CLAMP (depth, 1, MAX (nz, 1));
}

guint
sv__stream_depth_for (const SvStreamSlabShape *shape, gint64 n_segments, guint64 limit)
{
  guint64 per_slice, fixed;

  iteration_bytes (shape, n_segments, &per_slice, &fixed);
  return sv__stream_depth_within (per_slice, fixed, limit, shape->nz);
}

guint
sv__stream_choose_depth (const SvTiffSlabReader *reader, gboolean mask, gboolean mask_file,
                         gint64 n_segments, guint64 limit)
{
  const SvStreamSlabShape shape = reader_shape (reader, mask, mask_file);

  return sv__stream_depth_for (&shape, n_segments, limit);
}

/* Host bytes left under the limit for prepared slabs kept between
 * iterations, beside what the iterations' slabs of `depth` slices hold. */
guint64
sv__stream_keep_budget (const SvTiffSlabReader *reader, gboolean mask, gboolean mask_file,
                        gint64 n_segments, guint depth, guint64 limit)
{
  const SvStreamSlabShape shape = reader_shape (reader, mask, mask_file);
  guint64 per_slice, fixed, used;

  iteration_bytes (&shape, n_segments, &per_slice, &fixed);
  if (limit == 0)
    limit = G_GUINT64_CONSTANT (1) << 30;
  used = fixed + (guint64)depth * per_slice;
  return limit > used ? limit - used : 0;
}

/* Slices per slab of the statistics passes, which hold nothing else: the
 * slice in the file's type (twice, with the one read ahead) and as
 * float32, and the halo. */
guint
sv__stream_choose_scan_depth (const SvTiffSlabReader *reader, guint halo, guint64 limit)
{
  const SvTiffSlabInfo *info = sv_tiff_slab_reader_info (reader);
  const guint64 per_slice
      = 2 * sv_tiff_slab_reader_slice_bytes (reader) + (guint64)info->ny * info->nx * info->nc * 4;
  const guint64 fixed = 2 * halo * per_slice + (6 << 20);

  return sv__stream_depth_within (per_slice, fixed, limit, info->nz);
}

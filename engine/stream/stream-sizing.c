/* Supervox engine: how large a streamed run's slabs are, and what host
 * memory is left for what it keeps between passes (the prepared slabs,
 * the labels before connectivity), from the memory limit; the rest goes
 * to temporary files. The run (stream-slic.c) and its plan (run-plan.c)
 * both ask here, so that the plan's estimate is what the run does. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include "internal.h"
#include "supervox/sv-run-plan.h"

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

SvStreamSlabShape
sv__stream_reader_shape (const SvTiffSlabReader *reader, gboolean mask, gboolean mask_file)
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
  const SvStreamSlabShape shape = sv__stream_reader_shape (reader, mask, mask_file);

  return sv__stream_depth_for (&shape, n_segments, limit);
}

guint
sv__stream_kept_value_bytes (gsize sample_bytes, gboolean lab, gboolean smoothed)
{
  /* Without Lab and smoothing a prepared value is (sample − shift) / scale
   * in float32, the same however often it is computed; a uint8 sample is
   * a quarter of it. Otherwise the float32 values are kept. */
  return !lab && !smoothed && sample_bytes < sizeof (float) ? (guint)sample_bytes
                                                            : (guint)sizeof (float);
}

void
sv__stream_kept_for (const SvSlicParams *params, guint nz, guint nc, gsize sample_bytes,
                     guint prepared_slices, guint label_slices, SvStreamKept *kept)
{
  float sigma[3];
  gboolean lab = FALSE;

  sv_slic_params_effective_sigma (params, sigma);
  /* A Lab rule that fails stops the run before anything is kept. */
  if (!sv_run_lab_applies (params->convert2lab, nz, nc, &lab, NULL))
    lab = FALSE;
  kept->smoothed = sigma[0] > 0 || sigma[1] > 0 || sigma[2] > 0;
  kept->value_bytes = sv__stream_kept_value_bytes (sample_bytes, lab, kept->smoothed);
  kept->prepared_slices = prepared_slices;
  kept->label_slices = label_slices;
}

void
sv__stream_room (const SvStreamSlabShape *shape, gint64 n_segments, guint depth, guint64 limit,
                 const SvStreamKept *kept, SvStreamRoom *room)
{
  const gsize plane = (gsize)shape->ny * shape->nx;
  const guint64 prepared_slice = (guint64)plane * shape->nc * kept->value_bytes;
  const guint64 label_slice = (guint64)plane * sizeof (gint32);
  guint64 per_slice, fixed, used, left;

  iteration_bytes (shape, n_segments, &per_slice, &fixed);
  if (limit == 0)
    limit = G_GUINT64_CONSTANT (1) << 30;
  depth = MAX (depth, 1);
  used = fixed + (guint64)depth * per_slice;
  left = limit > used ? limit - used : 0;

  room->prepared_bytes = kept->prepared_slices * prepared_slice;
  room->labels_bytes = kept->label_slices * label_slice;
  room->prepared_host = 0;
  /* The prepared slabs first: every iteration reads them, the labels are
   * read twice. The smoothed image is one volume, held slice by slice;
   * the others are held slab by slab, in z order, while they fit. */
  if (kept->smoothed)
    room->prepared_host
        = MIN (kept->prepared_slices, left / MAX (prepared_slice, 1)) * prepared_slice;
  else
    for (guint s0 = 0; s0 < kept->prepared_slices; s0 += depth)
      {
        const guint64 bytes = MIN (depth, kept->prepared_slices - s0) * prepared_slice;

        if (bytes <= left - room->prepared_host)
          room->prepared_host += bytes;
      }
  left -= room->prepared_host;
  room->labels_host = MIN (kept->label_slices, left / MAX (label_slice, 1)) * label_slice;
  room->left = left - room->labels_host;
  room->smoothed = kept->smoothed;
}

void
sv__stream_run_room (const SvTiffSlabReader *reader, gboolean mask, gboolean mask_file,
                     const SvSlicParams *params, guint depth, guint64 limit, guint prepared_slices,
                     guint label_slices, SvStreamRoom *room)
{
  const SvStreamSlabShape shape = sv__stream_reader_shape (reader, mask, mask_file);
  const gsize values = (gsize)shape.ny * shape.nx * shape.nc;
  SvStreamKept kept;

  sv__stream_kept_for (params, shape.nz, shape.nc, shape.slice_bytes / MAX (values, 1),
                       prepared_slices, label_slices, &kept);
  sv__stream_room (&shape, params->n_segments, depth, limit, &kept, room);
}

guint64
sv__stream_room_scan_limit (const SvStreamRoom *room, guint64 limit)
{
  if (limit == 0)
    limit = G_GUINT64_CONSTANT (1) << 30;
  if (!room->smoothed)
    return limit;
  return limit > room->prepared_host ? limit - room->prepared_host : 1;
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

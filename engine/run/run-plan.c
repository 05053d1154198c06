/* Supervox engine: the plan of one run (sv-run-plan.h): in memory or
 * streamed, on which backend, the slabs, and the reason in words; the Lab
 * rule and the mask's shape check that every way of running shares. */
#define G_LOG_DOMAIN "sv-engine"

#include "supervox/sv-run-plan.h"

#include <string.h>

#include "io-tiff-private.h"
#include "stream-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-stream.h"

gboolean
sv_run_lab_applies (SvConvert2Lab convert2lab, guint nz, guint nc, gboolean *lab, GError **error)
{
  if (convert2lab == SV_CONVERT2LAB_YES && nc != 3)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "Lab colorspace conversion requires a RGB image (3 channels); "
                   "this image has %u channel%s",
                   nc, nc == 1 ? "" : "s");
      return FALSE;
    }
  *lab = convert2lab == SV_CONVERT2LAB_YES
         || (convert2lab == SV_CONVERT2LAB_AUTO && nz == 1 && nc == 3);
  return TRUE;
}

void
sv_run_source_from_header (SvRunSource *source, const SvTiffSlabInfo *info)
{
  memset (source, 0, sizeof *source);
  source->nz = info->nz;
  source->ny = info->ny;
  source->nx = info->nx;
  source->nc = info->nc;
  source->sample_type = info->sample_type;
  source->from_file = TRUE;
}

void
sv_run_source_from_volume (SvRunSource *source, const SvVolume *volume, gboolean mask)
{
  memset (source, 0, sizeof *source);
  source->nz = volume->nz;
  source->ny = volume->ny;
  source->nx = volume->nx;
  source->nc = volume->nc;
  source->sample_type = volume->source_type;
  source->mask = mask;
}

/* z×y×x, or y×x for a 2D image, as the front ends print shapes. */
static void
format_shape (char *out, gsize size, const guint zyx[3])
{
  if (zyx[0] == 1)
    g_snprintf (out, size, "%u×%u", zyx[1], zyx[2]);
  else
    g_snprintf (out, size, "%u×%u×%u", zyx[0], zyx[1], zyx[2]);
}

gboolean
sv_run_check_mask (const char *mask_name, const guint mask_zyx[3], const char *image_name,
                   const guint image_zyx[3], GError **error)
{
  char ms[64], is[64];

  if (mask_zyx[0] == image_zyx[0] && mask_zyx[1] == image_zyx[1] && mask_zyx[2] == image_zyx[2])
    return TRUE;
  format_shape (ms, sizeof ms, mask_zyx);
  format_shape (is, sizeof is, image_zyx);
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
               "%s%sthe mask is %s but the image%s%s is %s", mask_name ? mask_name : "",
               mask_name ? ": " : "", ms, image_name ? " " : "", image_name ? image_name : "", is);
  return FALSE;
}

/* Bytes as "9.1 GiB", with a plain space (the reason goes to logs and
 * sidecars as well as to the screen). */
static void
format_bytes (char *out, gsize size, guint64 bytes)
{
  static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
  double value = (double)bytes;
  guint u = 0;

  while (value >= 1024.0 && u + 1 < G_N_ELEMENTS (units))
    {
      value /= 1024.0;
      u++;
    }
  if (u == 0)
    g_snprintf (out, size, "%" G_GUINT64_FORMAT " bytes", bytes);
  else
    g_snprintf (out, size, "%.1f %s", value, units[u]);
}

/* Whether the run goes to the device, and on how many. */
static void
plan_backend (const SvRunBudgets *b, SvRunPlan *plan)
{
  const SvBackendChoice *c = &b->backend;

  /* A device named is used (or fails when opened); auto takes one only
   * when one is there. */
  plan->backend = sv_backend_resolve (c, b->n_devices);
  /* A device that this build lacks fails where it is opened. */
  if (plan->backend == NULL)
    plan->backend = sv_backend_cpu_class ();
  plan->on_device = plan->backend != sv_backend_cpu_class ();
  plan->falls_back = plan->on_device && c->is_auto;
  plan->n_workers = plan->on_device && b->devices_listed ? MAX (b->n_devices, 1) : 1;
}

/* The streamed run's slabs: the host's limit, the device's cap, the depth. */
static void
plan_slabs (const SvRunSource *s, const SvSlicParams *params, const SvRunBudgets *b,
            SvRunPlan *plan)
{
  const SvBackendClass *device = plan->backend;
  SvStreamSlabShape shape = { s->nz, s->ny, s->nx, s->nc, 0, s->mask, s->mask_from_file };

  /* The limit is the process's: what it holds already is not there for slabs. */
  if (b->host_bytes > 0)
    plan->memory_limit = b->host_bytes > b->host_held ? b->host_bytes - b->host_held : 1;
  if (plan->on_device && b->n_devices > 0 && device->stream_max_depth != NULL
      && !(b->devices_opening && b->device_bytes == 0))
    plan->max_slab_depth = device->stream_max_depth (b->device_bytes, s->ny, s->nx, s->nc,
                                                     params->n_segments,
                                                     s->mask && !s->mask_from_file);
  if (b->slab_depth > 0)
    {
      plan->slab_depth = MIN (b->slab_depth, MAX (s->nz, 1));
      return;
    }
  shape.slice_bytes = (guint64)s->ny * s->nx * s->nc * sv__sample_type_bytes (s->sample_type);
  plan->slab_depth = sv__stream_depth_for (&shape, params->n_segments, plan->memory_limit);
  if (plan->max_slab_depth > 0)
    plan->slab_depth = MIN (plan->slab_depth, plan->max_slab_depth);
}

/* In memory or streamed, and why. */
static SvRunMode
choose_mode (const SvRunSource *s, const SvRunBudgets *b, const SvRunPlan *plan, char *why,
             gsize size)
{
  const SvBackendClass *device = plan->backend;
  char need[32], allowed[32];

  format_bytes (need, sizeof need, plan->in_memory_bytes);
  format_bytes (allowed, sizeof allowed, b->host_bytes);
  if (!s->from_file)
    {
      g_snprintf (why, size, "in memory: the image is not a file read in slabs");
      return SV_RUN_IN_MEMORY;
    }
  if (s->stays_in_file)
    {
      g_snprintf (why, size, "streamed: the image stays in its file");
      return SV_RUN_STREAMED;
    }
  if (b->slab_depth > 0)
    {
      g_snprintf (why, size, "streamed: slabs of %u slices asked for", b->slab_depth);
      return SV_RUN_STREAMED;
    }
  if (b->n_ranks > 0)
    {
      g_snprintf (why, size, "streamed: across %u MPI ranks", b->n_ranks);
      return SV_RUN_STREAMED;
    }
  if (s->mask_from_file)
    {
      g_snprintf (why, size, "streamed: the mask is read slab by slab");
      return SV_RUN_STREAMED;
    }
  if (b->host_bytes > 0 && plan->in_memory_bytes > b->host_bytes)
    {
      g_snprintf (why, size, "streamed: the run needs %s, %s allowed", need, allowed);
      return SV_RUN_STREAMED;
    }
  if (plan->on_device && b->devices_listed)
    {
      g_snprintf (why, size, "streamed: the slabs go to %u listed GPU%s", plan->n_workers,
                  plan->n_workers == 1 ? "" : "s");
      return SV_RUN_STREAMED;
    }
  if (plan->on_device && b->n_devices > 0 && device->in_memory_bytes != NULL)
    {
      const guint64 on_device
          = device->in_memory_bytes (s->nz, s->ny, s->nx, s->nc, s->mask && !s->mask_from_file);

      if (on_device > b->device_bytes)
        {
          char device_need[32], device_allowed[32];

          format_bytes (device_need, sizeof device_need, on_device);
          format_bytes (device_allowed, sizeof device_allowed, b->device_bytes);
          g_snprintf (why, size, "streamed: the run needs %s on the GPU, %s there", device_need,
                      device_allowed);
          return SV_RUN_STREAMED;
        }
    }
  if (b->host_bytes > 0)
    g_snprintf (why, size, "in memory: the run needs %s, %s allowed", need, allowed);
  else
    g_snprintf (why, size, "in memory: the run needs %s, no limit", need);
  return SV_RUN_IN_MEMORY;
}

/* The bytes of temporary files a streamed run writes at most when its
 * memory limit is `limit`: what it keeps between passes beyond what the
 * limit holds beside its slabs, as the run itself decides it
 * (sv__stream_room). Under mpirun, rank 0's: its slabs and every rank's
 * labels. */
static guint64
temp_bytes_at (const SvRunSource *s, const SvSlicParams *params, const SvRunBudgets *b,
               const SvRunPlan *plan, guint64 limit)
{
  const gsize sample_bytes = sv__sample_type_bytes (s->sample_type);
  SvStreamSlabShape shape = { s->nz, s->ny, s->nx, s->nc, 0, s->mask, s->mask_from_file };
  guint depth = plan->slab_depth, z0 = 0, z1 = s->nz;
  SvStreamKept kept;
  SvStreamRoom room;

  shape.slice_bytes = (guint64)s->ny * s->nx * s->nc * sample_bytes;
  /* Slabs sized from the limit grow with it, as plan_slabs sizes them. */
  if (b->slab_depth == 0)
    {
      depth = sv__stream_depth_for (&shape, params->n_segments, limit);
      if (plan->max_slab_depth > 0)
        depth = MIN (depth, plan->max_slab_depth);
    }
  if (b->n_ranks > 1)
    sv_stream_rank_range (s->nz, 0, b->n_ranks, &z0, &z1);
  sv__stream_kept_for (params, s->nz, s->nc, sample_bytes, z1 - z0, s->nz, &kept);
  sv__stream_room (&shape, params->n_segments, depth, limit, &kept, &room);
  return sv__stream_room_file_bytes (&room);
}

/* Fails when the temporary files would not fit where they go, saying how
 * much memory would let them: the least limit found under which they
 * fit (the bytes kept shrink by whole slices and slabs as it grows). */
static gboolean
check_temp_space (const SvRunSource *s, const SvSlicParams *params, const SvRunBudgets *b,
                  const SvRunPlan *plan, GError **error)
{
  const guint64 limit = plan->memory_limit > 0 ? plan->memory_limit : G_GUINT64_CONSTANT (1) << 30;
  char need[32], free_there[32], short_by[32], enough[32], now[32];
  guint64 lo = limit, hi;

  if (!b->temp_measured || plan->temp_bytes <= b->temp_free)
    return TRUE;
  /* With room for everything kept beside the slabs, nothing is spilled. */
  hi = limit + plan->temp_bytes;
  while (temp_bytes_at (s, params, b, plan, hi) > b->temp_free && hi < G_MAXUINT64 / 2)
    hi *= 2;
  while (hi - lo > 1)
    {
      const guint64 mid = lo + (hi - lo) / 2;

      if (temp_bytes_at (s, params, b, plan, mid) <= b->temp_free)
        hi = mid;
      else
        lo = mid;
    }
  format_bytes (need, sizeof need, plan->temp_bytes);
  format_bytes (free_there, sizeof free_there, b->temp_free);
  format_bytes (short_by, sizeof short_by, plan->temp_bytes - b->temp_free);
  /* In the caller's terms: what the process holds comes on top. */
  format_bytes (enough, sizeof enough, hi + b->host_held);
  format_bytes (now, sizeof now, b->host_bytes > 0 ? b->host_bytes : limit);
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_SPACE,
               "the streamed run needs %s of temporary files beside %s but only %s is free "
               "there: free %s more there, or raise %s to at least %s (now %s)",
               need, b->output_name != NULL ? b->output_name : "the output", free_there, short_by,
               b->limit_name != NULL ? b->limit_name : "the memory limit", enough, now);
  return FALSE;
}

gboolean
sv_run_plan (const SvRunSource *source, const SvSlicParams *params, const SvRunBudgets *budgets,
             SvRunPlan *plan, GError **error)
{
  g_return_val_if_fail (source != NULL && params != NULL && budgets != NULL && plan != NULL,
                        FALSE);

  memset (plan, 0, sizeof *plan);
  if (!sv_run_lab_applies (params->convert2lab, source->nz, source->nc, &plan->lab, error))
    return FALSE;
  plan_backend (budgets, plan);
  plan->in_memory_bytes
      = sv_stream_in_memory_bytes (source->nz, source->ny, source->nx, source->nc, source->mask)
        + budgets->host_held;
  plan->mode = choose_mode (source, budgets, plan, plan->reason, sizeof plan->reason);
  if (plan->mode != SV_RUN_STREAMED)
    {
      plan->n_workers = 1;
      return TRUE;
    }
  plan_slabs (source, params, budgets, plan);
  plan->temp_bytes
      = temp_bytes_at (source, params, budgets, plan,
                       plan->memory_limit > 0 ? plan->memory_limit : G_GUINT64_CONSTANT (1) << 30);
  if (plan->temp_bytes > 0)
    {
      char temp[32];

      format_bytes (temp, sizeof temp, plan->temp_bytes);
      g_strlcat (plan->reason, "; ", sizeof plan->reason);
      g_strlcat (plan->reason, temp, sizeof plan->reason);
      g_strlcat (plan->reason, " in temporary files", sizeof plan->reason);
    }
  else
    g_strlcat (plan->reason, "; no temporary files", sizeof plan->reason);
  return check_temp_space (source, params, budgets, plan, error);
}

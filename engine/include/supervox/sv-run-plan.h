/* Supervox engine: how one SLIC run goes, decided in one place. From what
 * is run (the source), with what (the parameters) and what the machine
 * lets it use (the budgets, measured by the caller), sv_run_plan says
 * whether the run is in memory or streamed, on which backend, with how
 * many workers and slices per slab, and why, in words. It is pure: no
 * file, no device, no clock; the front ends measure and then ask. */
#pragma once

#include <glib.h>

#include "sv-backend.h"
#include "sv-io-slab.h"
#include "sv-params.h"
#include "sv-volume.h"

G_BEGIN_DECLS

/* What is run. */
typedef struct
{
  guint nz, ny, nx, nc;     /* the image as the run sees it (one channel with --channel) */
  SvSampleType sample_type; /* as stored: a streamed slab holds it twice */
  gboolean from_file;       /* a file the streamed run can read slab by slab; FALSE: an
                             * array or a photo, which run in memory */
  gboolean mask;            /* a mask goes with the image */
  gboolean mask_from_file;  /* read slab by slab from its file, never whole: streams */
  /* The image stays in its file whatever the sizes: the window holds it
   * out of core, or an earlier plan chose to stream it. */
  gboolean stays_in_file;
} SvRunSource;

/* A TIFF's header (sv_tiff_slab_reader_info) as a source read from its
 * file, without a mask. */
void sv_run_source_from_header (SvRunSource *source, const SvTiffSlabInfo *info);

/* A volume in memory (an array, a photo, a file read whole) as a source
 * that runs in memory, with or without a mask. */
void sv_run_source_from_volume (SvRunSource *source, const SvVolume *volume, gboolean mask);

/* What the machine lets the run use, as the caller measured it. */
typedef struct
{
  SvBackendChoice backend; /* what the user asked for (sv_backend_choose) */
  guint64 host_bytes;      /* host memory the run may use (a limit, or what is free); 0: no limit */
  guint64 host_held;       /* what the process holds already, out of host_bytes */
  guint n_devices;         /* usable devices of backend.device */
  guint64 device_bytes;    /* what one device lets a run use (a limit, or what it has free) */
  gboolean devices_listed; /* devices were listed (--devices): the slabs go to each */
  /* The devices are still opening (sv_run_devices_start): device_bytes is
   * their limit, or 0 for what they will have free, which the run learns
   * before its first pass and checks its slabs against. */
  gboolean devices_opening;
  guint n_ranks;           /* processes sharing the run under mpirun; 0: not under mpirun */
  guint slab_depth;        /* slices per slab asked for (--slab-depth); 0: decide */
  /* The free bytes where a streamed run's temporary files go, beside the
   * output (sv_stream_temp_free), when temp_measured; else no check. */
  guint64 temp_free;
  gboolean temp_measured;
  const char *output_name; /* the output, for the message; NULL: "the output" */
  const char *limit_name;  /* the caller's name of host_bytes ("--memory-limit"); NULL:
                            * "the memory limit" */
} SvRunBudgets;

typedef enum
{
  SV_RUN_IN_MEMORY,
  SV_RUN_STREAMED,
} SvRunMode;

typedef struct
{
  SvRunMode mode;
  /* What "auto" resolved to: the device class when asked for or when auto
   * finds a device, else the CPU's. */
  const SvBackendClass *backend;
  gboolean on_device;       /* backend is a device's */
  gboolean falls_back;      /* under auto a device failure reruns on the CPU */
  gboolean lab;             /* the image is converted to Lab (sv_run_lab_applies) */
  guint n_workers;          /* backends that run the slab steps (devices), or 1 */
  guint64 in_memory_bytes;  /* host bytes the in-memory run needs, the process's own included */
  guint64 memory_limit;     /* streamed: host bytes the slabs may use (0: the stream's default) */
  guint slab_depth;         /* streamed: slices per slab (asked for, or from memory_limit) */
  guint max_slab_depth;     /* streamed on a device: the most slices one holds; 0: no cap */
  /* Streamed: what the run keeps between passes (the prepared slabs, the
   * labels before connectivity) and does not hold in memory_limit, in
   * temporary files beside the output; at most this (a device that keeps
   * slabs or labels leaves less). */
  guint64 temp_bytes;
  /* why, in words: "streamed: the run needs 9.1 GiB, 4.0 GiB allowed; 1.2 GiB
   * in temporary files" */
  char reason[224];
} SvRunPlan;

/* Plans a run of `params` on `source` within `budgets`. Fails on the Lab
 * rule's error (sv_run_lab_applies), and for a streamed run whose
 * temporary files need more than budgets->temp_free with
 * SV_ENGINE_ERROR_NO_SPACE: "the streamed run needs 212.0 GiB of
 * temporary files beside OUT but only 180.0 GiB is free there: free 32.0
 * GiB more there, or raise the memory limit to at least 40.5 GiB (now
 * 8.0 GiB)"; the plan is
 * filled all the same then (mode, temp_bytes). Every other source has a
 * plan. */
gboolean sv_run_plan (const SvRunSource *source, const SvSlicParams *params,
                      const SvRunBudgets *budgets, SvRunPlan *plan, GError **error);

/* The Lab rule, as scikit-image applies it: convert2lab yes converts and
 * needs 3 channels (SV_ENGINE_ERROR_INVALID_PARAM otherwise), auto
 * converts a 2D image (nz == 1) of 3 channels, no never. */
gboolean sv_run_lab_applies (SvConvert2Lab convert2lab, guint nz, guint nc, gboolean *lab,
                             GError **error);

/* The mask's shape against the image's (z, y, x): equal, or
 * SV_ENGINE_ERROR_INVALID_DATA "MASK: the mask is 6×20×23 but the image
 * IMAGE is 6×20×24". mask_name and image_name (file names, or NULL for
 * none) name them. */
gboolean sv_run_check_mask (const char *mask_name, const guint mask_zyx[3], const char *image_name,
                            const guint image_zyx[3], GError **error);

G_END_DECLS

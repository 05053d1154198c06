/* Supervox engine: a planned run (sv-run-plan.h) carried out. Whatever
 * the front end (supervox-cli, the C API, the window), a run goes through
 * sv_run_execute: in memory on one backend, or streamed slab by slab
 * through the devices of the plan; a device that fails hands the run to
 * the CPU under the one rule of sv_run_execute; one report comes back,
 * which the front ends show and write into the sidecar. */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "sv-backend.h"
#include "sv-io.h"
#include "sv-params.h"
#include "sv-run-plan.h"
#include "sv-stream.h"
#include "sv-volume.h"

G_BEGIN_DECLS

typedef struct _SvRunDevicesOpening SvRunDevicesOpening;

/* The devices one front end's runs may use, kept from run to run (a
 * batch opens them once), and what became of them. */
typedef struct
{
  const SvBackendClass *klass; /* the device class; NULL: none in this build */
  char *list;                  /* "0,1" or "all" as the user gave it; NULL: one device */
  int local_rank;              /* under mpirun: this process's rank on its host; −1: none */
  guint64 memory_limit;        /* what each may use; 0: what it has free */
  SvBackend **backends;        /* one per listed device, opened on first use */
  guint n_backends;
  /* A device failed (a device error, not a lack of memory) in this
   * process: it is not tried again, the CPU runs from then on. */
  gboolean broken;
  /* The devices the CUDA driver was narrowed to (0: not narrowed). */
  guint n_visible;
  /* Being opened on a thread of their own (sv_run_devices_start); NULL:
   * not, or joined. */
  SvRunDevicesOpening *opening;
} SvRunDevices;

void sv_run_devices_init (SvRunDevices *devices, const SvBackendClass *klass, const char *list,
                          int local_rank, guint64 memory_limit);
void sv_run_devices_clear (SvRunDevices *devices);

/* Sets CUDA_VISIBLE_DEVICES to the devices this run uses, renumbering
 * the list to match, so that the driver's start enumerates only them
 * (seconds on a machine of several GPUs). Only for a front end that owns
 * its process, before anything in it starts the CUDA driver: a driver
 * already started would take the renumbered list as other GPUs. FALSE
 * (and nothing changed) for "all", a list that names a GPU the machine
 * lacks (opening the devices says so), or when what the driver would see
 * is not known. */
gboolean sv_run_devices_show_only_used (SvRunDevices *devices);

/* How many devices one run of `voxels` gains from: each device added
 * costs its start (0.2–0.3 s: the driver's enumeration and a context)
 * and the steps that do not divide, and the passes it shares save about
 * that much only past about 1.5·10⁹ voxels a device (four H100 or H200:
 * a 1024³ run took 0.97× and 0.72× one device's time on two and four,
 * 2048³ 1.34× and 1.53× faster). At least 1. */
guint sv_run_devices_worth (guint64 voxels);

/* "all" made the list of the GPUs the driver would show, at most `most`
 * of them (0: every one): "0,1,…". Before anything starts the driver, so
 * that the list can be narrowed and opened early as a list the user gave.
 * FALSE (nothing changed) for another list, or when the GPUs cannot be
 * counted without the driver. `n_all` is how many there are. */
gboolean sv_run_devices_all_to_list (SvRunDevices *devices, guint most, guint *n_all);

/* The devices' part of the budgets: how many are usable and what one lets
 * a run use, unless `choice` asks for the CPU (which touches no device).
 * A list that names no device of this machine still counts, so that the
 * run goes to the devices and opening them says what is wrong. */
void sv_run_devices_measure (const SvRunDevices *devices, const SvBackendChoice *choice,
                             SvRunBudgets *budgets);

/* Starts opening the listed devices on a thread of their own: the CUDA
 * driver's start and the devices' contexts (1.4 s with four GPUs, 0.3 s
 * with one) then go on while the first run reads its file's statistics
 * and places its seeds. Runs planned meanwhile go without the devices'
 * free memory (SvRunBudgets.devices_opening); a streamed run waits for
 * the devices before its first pass, and in the rare case that their
 * memory holds fewer slices a slab than it chose, sv_run_execute runs it
 * again from the start with slabs they hold. For a front end that owns
 * its process (supervox-cli), with the driver narrowed to the listed
 * devices (sv_run_devices_show_only_used), a device class named (not
 * auto, which must know before it plans whether a device is there) and
 * no MPI ranks. FALSE (nothing started) otherwise, or with
 * SV_DEVICES_EARLY=0 (for measuring). */
gboolean sv_run_devices_start (SvRunDevices *devices, const SvBackendChoice *choice);

/* The distinct devices `devices` lists, in the order first listed: for a
 * front end that gives each device runs of its own (a batch's files, one
 * device a file). Narrowed (sv_run_devices_show_only_used), they are
 * known without starting the driver; otherwise the class is asked for its
 * count. NULL when the list cannot be read against it (opening the
 * devices then says why). */
GArray *sv_run_devices_distinct (const SvRunDevices *devices);

/* `some` set up as the `n` devices `numbers` of `all` (of
 * sv_run_devices_distinct), with `all`'s class, memory limit and
 * narrowing, nothing opened: its runs drive those devices alone. */
void sv_run_devices_init_some (SvRunDevices *some, const SvRunDevices *all, const int *numbers,
                               guint n);

/* Opens the listed devices' backends (once), within memory_limit.
 * SV_ENGINE_ERROR_INVALID_PARAM "--devices must list GPUs from 0 to 1, or
 * say all; got 5" for a list this machine cannot satisfy. */
gboolean sv_run_devices_open (SvRunDevices *devices, GError **error);

/* What is run and where the labels go. */
typedef struct
{
  const SvRunPlan *plan;
  const SvSlicParams *params; /* validated, the axes resolved */
  /* In memory (plan->mode SV_RUN_IN_MEMORY): the volume and its mask
   * (NULL or nz·ny·nx bytes), borrowed, and the backend that runs them
   * (borrowed; NULL: a CPU backend made for the run). */
  const SvVolume *volume;
  const guint8 *mask;
  SvBackend *backend;
  /* The backend may keep the volume it holds when it is this one (the
   * window's job runs one volume many times); FALSE loads it every run
   * (an array may reuse an earlier one's address). */
  gboolean reuse_loaded;
  /* Streamed: the image file, the label file it writes, and the stream's
   * options (threads, channel, codec, ranks, a mask in memory or its
   * file, progress); the plan's memory and slab depth and the devices
   * are filled in by sv_run_execute. */
  const char *input;
  const char *output;
  const SvStreamOptions *stream;
  /* In memory: the progress, the cancellable and the threads. */
  const SvRunControl *control;
  SvRunDevices *devices; /* may be NULL: no device */
} SvRunJobSpec;

/* What a run did. */
typedef struct
{
  SvRunStats stats;
  SvStreamReport stream; /* streamed runs */
  gboolean streamed;
  const SvBackendClass *ran_on; /* the class whose steps computed the labels */
  guint n_devices;              /* streamed: the devices that ran the slab steps; 0: the CPU */
  /* In memory: a backend made for the run (the CPU's, after a device
   * failure or with spec->backend NULL), which holds the labels; owned. */
  SvBackend *own_backend;
  GError *device_error; /* the device failure the CPU took over from, or NULL (owned) */
} SvRunReport;

void sv_run_report_clear (SvRunReport *report);

/* Runs `spec` as its plan says. Under auto (plan->falls_back) a device
 * failure (sv_backend_error_is_device_failure: not bad data, not a
 * cancel) runs the same job again on the CPU, with report->device_error
 * set; a device error that is not a lack of memory marks the devices
 * broken, so that later runs go to the CPU at once. MPI ranks never fall
 * back alone: they stop together with the error. In memory the labels
 * stay in the backend (sv_run_report_backend): sv_backend_take_labels. Streamed, they are in
 * spec->output. */
gboolean sv_run_execute (const SvRunJobSpec *spec, SvRunReport *report, GError **error);

/* The backend that holds an in-memory run's labels. */
SvBackend *sv_run_report_backend (const SvRunReport *report, const SvRunJobSpec *spec);

G_END_DECLS

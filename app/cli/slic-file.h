/* supervox-cli slic: one input's way from file to labels, as three steps
 * (load, compute, write) that a batch runs on three threads. */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-io.h"
#include "supervox/sv-params.h"
#include "supervox/sv-run-execute.h"
#include "supervox/sv-stream.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

/* What the command line asked for, before a volume's shape is known. */
typedef struct
{
  SvSlicParams params;
  double sigma[3];
  guint n_sigma; /* 0: not given, 1: scalar */
  double spacing[3];
  guint n_spacing; /* 0: not given or "file" */
  gboolean spacing_from_file;
  gboolean spacing_relative; /* file-relative: the window's default */
  int n_threads;
} SvCliSlicRequest;

typedef struct _SvCliSlicFile SvCliSlicFile;

/* Called from the compute step with the run's progress (iteration i of n;
 * n == 0 when the run is between stages or done). */
typedef void (*SvCliSlicProgressFunc) (const SvCliSlicFile *file, guint iteration,
                                       guint n_iterations, gpointer user_data);

/* What every file of one command shares. The compute step is the only one
 * that touches the backends, always from the same thread. */
typedef struct
{
  const SvCliSlicRequest *request;
  const char *backend_name; /* "cpu", "cuda" or "auto", as asked */
  SvBackendChoice backend_choice; /* the same, read by the engine */
  const char *mask_path;    /* NULL without --mask */
  const guint8 *mask;       /* mask_shape[0..2] = z, y, x; NULL when mask_streamed */
  guint mask_shape[3];
  gboolean mask_streamed;           /* every input streams: the mask is read slab by slab */
  int channel;                      /* --channel, or −1 for every channel */
  SvTiffWriteOptions write_options; /* --compression */
  const char *compression;          /* the same as a string, for the sidecar */
  gboolean quiet;                   /* --json: no notes on stderr */
  GCancellable *cancellable;
  SvCliSlicProgressFunc progress;
  gpointer progress_data;

  guint64 memory_limit;        /* --memory-limit in bytes; 0: what the system has free */
  guint slab_depth;            /* --slab-depth: stream in slabs of this many slices; 0: decide */
  const SvStreamRanks *ranks;  /* under mpirun: every file streams across the ranks */
  /* The GPUs: --devices ("0,1", "all"; NULL: the local rank's) and
   * --device-memory-limit, their backends for streamed runs, kept for the
   * batch, and whether one failed (the CPU from then on). */
  SvRunDevices devices;

  SvBackend *backend; /* the in-memory runs', one for the whole batch */

  const char *stats_path; /* --stats: the supervoxel table, written after the labels; NULL: none */

  /* A streamed file's label file is left with its sync and rename to do
   * (SvCliSlicFile.finish), which the batch's write step completes on its
   * own thread while the next file computes. */
  gboolean finish_later;
} SvCliSlicContext;

/* Opens the backend asked for (ctx->backend_choice) as ctx->backend. auto
 * without a usable GPU is the CPU; cuda without one is an error. */
gboolean sv_cli_slic_context_open_backend (SvCliSlicContext *ctx, GError **error);

/* One input. The steps fill it in turn; `error` holds the first failure,
 * already naming the file it is about. */
struct _SvCliSlicFile
{
  guint index; /* position in the list of inputs, from 0 */
  char *input;
  /* The OME-Zarr image `input` is level zarr_level of (--zarr-level), for
   * the sidecar's command; NULL: none asked for. */
  char *zarr_image;
  guint zarr_level;
  char *output;
  char *sidecar;

  SvVolume *volume;                   /* from load until compute is done with it */
  gboolean streaming;                 /* not loaded: computed from its file in slabs */
  gboolean streamed;                  /* its labels are in `output` already */
  guint64 memory_limit;               /* the limit the choice was made with */
  guint slab_depth;                   /* slices per slab when streamed */
  guint64 temp_planned;               /* the temporary files' bytes the plan allowed for */
  guint64 temp_bytes;                 /* what the streamed run wrote to them */
  guint connect_window;               /* slices the streamed connectivity held */
  guint n_devices;                    /* GPUs that ran the streamed slab steps; 0: the CPU */
  guint64 device_peak_bytes;          /* the most device memory they held */
  guint resident_slabs;               /* slabs kept on them between iterations */
  gboolean connect_on_device;         /* the streamed connectivity ran on a device */
  guint connect_devices;              /* on this many devices, each its own slices */
  gboolean labels_on_device;          /* the last assignment stayed on the device */
  guint slices_compressed_on_device;  /* the label file's, compressed where the labels were */
  const SvCliSlicContext *stream_ctx; /* for progress while streaming */
  SvLabels *labels;                   /* from compute until write */
  SvFileFinish *finish;               /* streamed with finish_later: its label file's last step */

  /* The volume's description for the sidecar, kept after it is freed. */
  guint shape[3];
  guint nc;
  SvSampleType source_type;
  char *unit;

  SvSlicParams params; /* as resolved for this volume */
  SvRunStats stats;
  const char *backend; /* name of the backend that computed it */
  double t_start;      /* monotonic seconds when its load began */
  double seconds[6];   /* load, prepare, iterate, connect, write, total */
  char *json;          /* the result object, once written */
  /* One-line remarks on the run (char *, owned): on stderr beside its
   * result, and the sidecar's "notes". */
  GPtrArray *notes;
  GError *error;
};

SvCliSlicFile *sv_cli_slic_file_new (guint index, const char *input, const char *output);
void sv_cli_slic_file_free (SvCliSlicFile *file);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvCliSlicFile, sv_cli_slic_file_free)

/* Resolves sigma and spacing for `volume` (its header: shape, spacing);
 * a remark for the user (file-relative on a file with no spacing) goes to
 * `notes` (char *). */
gboolean sv_cli_slic_resolve_axes (const SvCliSlicRequest *r, const char *input,
                                   const SvVolume *volume, SvSlicParams *p, GPtrArray *notes,
                                   GError **error);

/* After a run: the note (unless --json) that the device failed and the
 * CPU ran the file, and the files after it when the device is out. */
void sv_cli_slic_note_fallback (const SvCliSlicFile *file, const SvCliSlicContext *ctx,
                                const SvRunPlan *plan, const SvRunReport *report);

/* Propagates `local`, prefixed with `path` unless it names it already. */
void sv_cli_slic_propagate_naming (GError **error, GError *local, const char *path);

/* Reads file->input into file->volume and checks it against the mask's
 * shape. Any thread. */
gboolean sv_cli_slic_file_load (SvCliSlicFile *file, const SvCliSlicContext *ctx, GError **error);

/* Runs SLIC on file->volume with ctx's backend, falling back to the CPU for
 * this file when auto's GPU fails; leaves file->labels and frees the
 * volume. Fails with G_IO_ERROR_CANCELLED when ctx->cancellable fires. */
gboolean sv_cli_slic_file_compute (SvCliSlicFile *file, SvCliSlicContext *ctx, GError **error);

/* Prints a written file's result on stdout: its JSON object (`json`; its
 * notes are in it) or one line, `how` after its backend (" with 4 MPI
 * ranks" or ""), with its notes on stderr. */
void sv_cli_slic_file_print_result (const SvCliSlicFile *file, gboolean json, const char *how);

/* Writes file->labels to file->output and the sidecar beside it, each
 * through a temporary name: on failure neither is left. Sets file->json to
 * the result object (the sidecar's text without its newline). Any thread. */
gboolean sv_cli_slic_file_write (SvCliSlicFile *file, const SvCliSlicContext *ctx, GError **error);

G_END_DECLS

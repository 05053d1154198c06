/* Supervox engine: the worker thread that runs SLIC for one open volume.
 *
 * The GUI posts requests (parameters, backend name, generation number); a
 * newer request replaces a pending one (the newest wins). The running one is
 * cancelled at its next iteration boundary unless it is about to finish:
 * when, from the last runs' time per stage, it will be done within two
 * frames, or before the new request could be and within a second, it runs
 * to the end and its result is delivered before the new one starts. So a slider dragged over a
 * run that takes a few frames still shows results while it moves.
 *
 * A request may ask for a coarse preview (preview_seconds > 0): SLIC on a
 * downsampled copy of the volume (engine/slic/preview.h), sized from the last
 * runs' timings so that it takes about that long, with labels drawn at full
 * size. Progress and results are queued as idle sources on the thread-default
 * GMainContext of the thread that created the job (never with
 * g_main_context_invoke, which would run them at once on the worker when
 * nobody owns the default context), so the callbacks run on the thread that
 * iterates that context. Plain C + GLib: no GObject here. */
#pragma once

#include <glib.h>

#include "sv-backend.h"
#include "sv-params.h"
#include "sv-stream.h"
#include "sv-volume.h"

G_BEGIN_DECLS

typedef struct _SvJob SvJob;

/* What the caller asks for. */
typedef struct
{
  SvSlicParams params;
  char backend[16];         /* "cpu", "cuda" or "auto" */
  guint64 generation;       /* increasing; results carry it back */
  int stop_after_iteration; /* < 0: full run; n >= 0: teaching mode (see SvRunControl) */
  double preview_seconds;   /* 0: the exact result; > 0: a coarse preview taking about this long */
  /* A streamed job's (sv_job_new_streamed): the channel segmented (−1:
   * all) and the host memory the run may use (0: the stream's default). */
  int channel;
  guint64 memory_limit;
} SvJobRequest;

/* Fills a request with default parameters, backend "auto", generation 0,
 * stop_after_iteration -1, preview_seconds 0. */
void sv_job_request_init (SvJobRequest *request);

/* Where a result's labels are when a result hook left them in device
 * memory (device_data) instead of the host: a device backend's reader. Both
 * may be called from any thread, also after the backend ran again. */
typedef struct
{
  /* Copies all labels (labels_shape, z-major) into host memory `labels`. */
  gboolean (*download) (gpointer device_data, gint32 *labels, GError **error);
  /* The one label at z-major index `index`. */
  gboolean (*read) (gpointer device_data, gsize index, gint32 *label, GError **error);
} SvDeviceLabelsReader;

/* One finished run. Immutable once delivered and reference counted, so the
 * renderer can keep showing it while the worker writes the next run into a
 * fresh buffer: nobody ever sees a half-written label volume. The labels
 * are read through sv_job_result_get_labels: a CUDA run in the window
 * leaves them on the device, and the host copy is made on first use. */
typedef struct
{
  guint64 generation;
  SvSlicParams params;
  int stop_after_iteration;
  /* nz, ny, nx of the labels; a preview's are coarse (see sv_job_result_label_at) */
  guint labels_shape[3];
  float *centres; /* n_centres × 3: z, y, x (NaN for dead clusters) */
  gsize n_centres;
  SvRunStats stats;       /* of the run that made the labels (the preview's for a preview) */
  guint preview_factor;   /* 1: exact; f > 1: a preview computed f× coarser per axis */
  double seconds_total;   /* wall time of the request on the worker */
  char *backend_name;     /* the backend that produced the labels */
  char *fallback_message; /* non-NULL once per job: why CUDA failed and the CPU ran */
  gboolean from_snapshot; /* a teaching step copied from an earlier run's snapshots */
  /* > 0: the labels after this iteration of a run that is still going (no
   * connectivity yet); the run's final result, of the same generation,
   * follows. Long exact runs show their iterations this way. */
  guint in_progress_iteration;
  /* Backend-specific data a result hook attached (the CUDA labels published
   * for GL interop), freed with device_data_free; NULL when none. */
  gpointer device_data;
  GDestroyNotify device_data_free;
  /* Set by the hook when device_data holds the labels: the job then makes
   * no host copy, and sv_job_result_get_labels fetches one on first use. */
  const SvDeviceLabelsReader *device_labels;
  /* A run on a box of the volume (the window's region preview, set by the
   * caller on delivery): the labels cover region_shape voxels from
   * region_offset (z, y, x); voxels outside read as start_label − 1, as
   * masked-out ones do. FALSE for a run on the whole volume. */
  gboolean region;
  guint region_offset[3];
  guint region_shape[3];
  /* A streamed job's result: the label file the run wrote (owned by the
   * result: it is removed when the last reference goes) and what the
   * streamed run did. NULL for an in-memory result. */
  char *labels_path;
  SvStreamReport stream;
  guint64 temp_planned; /* the bytes of temporary files its plan allowed for */
} SvJobResult;

/* The labels in host memory (labels_shape, the result's spacing). When they
 * are still on the device, the first call copies them (blocking, on the
 * calling thread; every thread then shares that one copy). NULL with
 * `error` set when the copy fails. The result owns them. */
const SvLabels *sv_job_result_get_labels (const SvJobResult *result, GError **error);

/* TRUE once the labels are in host memory (no copy is made by asking). */
gboolean sv_job_result_has_host_labels (const SvJobResult *result);

/* The z-major index into the labels of voxel (z, y, x) of the volume, or
 * FALSE for a voxel outside a region's box. A preview's labels are of the
 * downsampled shape, ceil(n / preview_factor) per axis (axes of one voxel
 * stay one), so a voxel takes the label of the block that holds it. */
static inline gboolean
sv_job_result_label_index (const SvJobResult *result, guint z, guint y, guint x, gsize *index)
{
  const guint *n = result->labels_shape;
  guint f = result->preview_factor > 1 ? result->preview_factor : 1;

  if (result->region)
    {
      const guint *o = result->region_offset, *s = result->region_shape;
      if (z < o[0] || y < o[1] || x < o[2] || z - o[0] >= s[0] || y - o[1] >= s[1]
          || x - o[2] >= s[2])
        return FALSE;
      z -= o[0];
      y -= o[1];
      x -= o[2];
    }
  *index = ((gsize)(z / f) * n[1] + y / f) * n[2] + x / f;
  return TRUE;
}

/* The label of voxel (z, y, x) of the volume from the host labels (copied
 * from the device on first use; start_label − 1 when that fails). */
static inline gint32
sv_job_result_label_at (const SvJobResult *result, guint z, guint y, guint x)
{
  const SvLabels *l = sv_job_result_get_labels (result, NULL);
  gsize i;

  if (l == NULL || !sv_job_result_label_index (result, z, y, x, &i))
    return result->params.start_label - 1;
  return l->data[i];
}

/* The same label read without a host copy of the volume: one voxel read
 * from the device while the labels are there (the hover probe). */
gint32 sv_job_result_probe_label (const SvJobResult *result, guint z, guint y, guint x);

/* TRUE when the result's labels belong to a volume of nz × ny × nx (a
 * region's: to a volume that holds the region). */
static inline gboolean
sv_job_result_fits (const SvJobResult *result, guint nz, guint ny, guint nx)
{
  const guint *l = result->labels_shape;
  guint f = result->preview_factor > 1 ? result->preview_factor : 1;

  if (result->region)
    {
      const guint *o = result->region_offset, *s = result->region_shape;
      if (o[0] + s[0] > nz || o[1] + s[1] > ny || o[2] + s[2] > nx)
        return FALSE;
      nz = s[0];
      ny = s[1];
      nx = s[2];
    }
  return l[0] == (nz + f - 1) / f && l[1] == (ny + f - 1) / f && l[2] == (nx + f - 1) / f;
}

/* TRUE for a request's finished exact labels: not a preview, not an
 * iteration of a run still going. */
static inline gboolean
sv_job_result_is_final (const SvJobResult *result)
{
  return result->preview_factor <= 1 && result->in_progress_iteration == 0;
}

SvJobResult *sv_job_result_ref (SvJobResult *result);
void sv_job_result_unref (SvJobResult *result);

/* A result that no run made: the labels of a label file (taken), so that
 * they are shown and measured as a run's are. `generation` must be none of
 * the job's. Label 0 is the background, as in label images of other tools
 * (params.start_label 1); params.n_segments is 0 (no size was asked for);
 * stats.n_labels counts the other distinct labels; backend_name is
 * `source` ("from the file"); seconds_total is `seconds` (reading it). */
SvJobResult *sv_job_result_new_for_labels (SvLabels *labels, guint64 generation, const char *source,
                                           double seconds);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvJobResult, sv_job_result_unref)

/* Callbacks, all called on the job's main context. */
typedef struct
{
  /* stage and iteration i of n of the request `generation`. */
  void (*progress) (guint64 generation, SvStage stage, guint iteration, guint n_iterations,
                    gpointer user_data);
  /* A finished run; `result` is borrowed (take a reference to keep it).
   * Results arrive in increasing generation order; a run that was allowed
   * to finish although a newer request came is delivered too (it is the
   * newest result there is). Nothing arrives for cancelled requests. */
  void (*result) (SvJobResult *result, gpointer user_data);
  /* A run that failed for another reason than cancellation. */
  void (*error) (guint64 generation, const GError *error, gpointer user_data);
} SvJobCallbacks;

/* Called on the worker thread after a successful exact run (not for
 * previews), before the result is delivered and before the job copies the
 * labels to the host, while `backend` still holds that run's state: it may
 * set result->device_data (the GUI publishes the CUDA labels for GL interop
 * this way, so the engine needs no CUDA headers), and with
 * result->device_labels leave the labels there (no host copy until asked).
 * SV_JOB_HOST_LABELS=always in the environment copies them at once anyway
 * (to measure what leaving them saves). */
typedef void (*SvJobResultHook) (SvBackend *backend, SvJobResult *result, gpointer user_data);

/* Installs (or with NULL removes) the result hook; user_data must stay
 * valid until the hook is replaced or the job is freed. */
void sv_job_set_result_hook (SvJob *job, SvJobResultHook hook, gpointer user_data);

/* Starts the worker thread for `volume` (and `mask`, NULL or nz*ny*nx bytes).
 * Both are borrowed and must stay valid until sv_job_free returns. Callbacks
 * go to the thread-default main context of the calling thread. */
SvJob *sv_job_new (const SvVolume *volume, const guint8 *mask, const SvJobCallbacks *callbacks,
                   gpointer user_data);

/* A job whose runs stream the image at `input` (a TIFF or a Zarr folder)
 * slab by slab, never held in memory, into label files in `scratch_dir`,
 * planned and executed as supervox-cli plans and executes them
 * (sv_run_plan, sv_run_execute), with the same newest-wins rule, progress
 * and delivery as sv_job_new. Its results carry labels_path instead of
 * labels; previews and teaching steps are not offered (a request asking
 * for them runs exact). */
SvJob *sv_job_new_streamed (const char *input, const char *scratch_dir,
                            const SvJobCallbacks *callbacks, gpointer user_data);

/* Posts a request: it replaces any pending one and cancels the running one
 * unless that is about to finish (see above). Never blocks on a run. */
void sv_job_submit (SvJob *job, const SvJobRequest *request);

/* On the main context: waits at most timeout_us for the final result (or
 * the error) of request `generation` or a newer one, then delivers here,
 * in order, everything that is waiting to be delivered (the callbacks
 * run before this returns). For a frame that would show a changed value:
 * with a run shorter than the frame, it shows the run's result too. TRUE
 * when the result came. */
gboolean sv_job_deliver_when_ready (SvJob *job, guint64 generation, gint64 timeout_us);

/* Cancels the running and pending requests: nothing more is delivered for
 * them, also not what was already queued on the main context. */
void sv_job_cancel (SvJob *job);

/* Seconds `request` would take on this job's worker, from the last runs'
 * time per stage (no prepare when the last run's can be reused); negative
 * when nothing comparable has run yet. */
double sv_job_estimate_seconds (SvJob *job, const SvJobRequest *request);

/* Estimated seconds until the running request is done; negative when idle
 * or unknown. */
double sv_job_get_seconds_left (SvJob *job);

/* The generation of the newest request submitted (0 before any). */
guint64 sv_job_get_latest_generation (SvJob *job);

/* TRUE while a request is pending or running. */
gboolean sv_job_is_busy (SvJob *job);

/* Cancels, joins the thread and frees the job. No callback runs after this
 * returns, even for deliveries already queued on the main context. */
void sv_job_free (SvJob *job);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvJob, sv_job_free)

G_END_DECLS

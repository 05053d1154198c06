/* Supervox tests: a pretend device whose slab steps keep the last
 * assignment in their own memory (SvSlabSteps.keep_assignment) and
 * prepare slabs from the file's samples themselves (take_samples), as the
 * CUDA backend does on its device. It is host memory behind the CPU's
 * slab steps, so that the streamed run's paths for such a device run in
 * CI (test-stream-kept.c, test-stream-kept-ranks.c). */
#pragma once

#include "supervox/sv-backend-class.h"
#include "supervox/sv-io-zarr.h"
#include "supervox/sv-params.h"

G_BEGIN_DECLS

/* How much room the pretend devices say they have, and what they did. */
typedef struct
{
  gboolean room_for_slabs, room_for_labels, room_for_connectivity;
  gboolean only_first_keeps; /* the second device has no room for labels */
  gsize plane;
  gint samples_taken; /* atomic: the workers take slabs at once */
  /* Atomic: the devices label, connect and give back at once. */
  gint label_slabs, connected, given_back;
  gint strip_slabs; /* slabs of the label file handed over compressed (atomic) */
  gint chunk_rows;  /* rows of an OME-Zarr store's chunks handed over compressed (atomic) */
  gint stored;       /* slices of other ranks' labels stored (atomic: ranks are threads) */
  gint imported;     /* slices read from another rank's device (rank 0's thread alone) */
  guint unreachable; /* the index of a device whose labels import cannot reach, or G_MAXUINT */
  /* When > 1: the devices that hand their last assignment to the host
   * each wait at their first such slab (five seconds at most) until this
   * many are in at once; `spill_met` counts those that saw them all. */
  gint spill_meet;
  gint spill_arrived, spill_met; /* atomic */
  guint run;                     /* set apart by each run, so that each meets once */
  gint host_fills[4];            /* slabs of host-held labels each device filled (atomic) */
  gint failing_share; /* the index of a device whose share of the connectivity fails, or −1 */
  /* When > 1: the devices that write their own parts of a store
   * (emit_kept) each wait (five seconds at most) until this many are in
   * at once; `emit_met` counts those that saw them all. */
  gint emit_meet;
  gint emit_arrived, emit_met; /* atomic */
  /* The index of a device whose slices fail to reach the file after its
   * first row of chunks, or −1. */
  gint failing_emit;
} PretendDevice;

extern PretendDevice device;

/* Registers the class "keeping-device": the CPU's slab steps beneath. */
void keeping_device_register (void);
/* The order in which the pretend device `backend` was made (0 …). */
guint keeping_device_index (SvBackend *backend);
/* Whether the pretend device `backend` keeps an assignment now. */
gboolean keeping_device_keeps_labels (SvBackend *backend);
/* How many slices the pretend device `backend` last kept the labels of
 * (0 before it kept any). */
guint keeping_device_kept_slices (SvBackend *backend);
/* Whether the devices hand out handles to their kept labels
 * (export_kept, import_kept), as devices of ranks on one host do. */
void keeping_device_share_handles (gboolean share);
/* An SvStreamOptions progress function that cancels (user_data: the
 * GCancellable) once the connectivity begins. */
void cancel_at_connect (SvStage stage, guint iteration, guint n_iterations, gpointer user_data);

typedef struct
{
  char *dir;
} Fixture;

void fixture_setup (Fixture *f, gconstpointer data);
void fixture_teardown (Fixture *f, gconstpointer data);
/* Parameter sets: plain, SLIC-zero from label 0, a mask (two passes),
 * no connectivity, and splits and merges across slabs. */
void make_params (SvSlicParams params[5]);
/* n pretend devices. */
void keeping_devices_new (SvBackend **keepers, guint n);
/* Two stores of one name in folders "cpu" and `side` of the fixture's
 * folder, for the CPU's run and the devices'. */
void keeping_store_paths (Fixture *f, const char *side, char **cpu_out, char **out);
/* A store of `codec` in chunks of 4 × 8 × 16. */
void keeping_small_chunks (SvZarrWriteOptions *zarr, const char *codec);

G_END_DECLS

/* Supervox engine: the JSON sidecar written next to a label TIFF.
 *
 * One schema for every front end: supervox-cli slic writes it (and prints
 * it with --json), the window writes it on export. Keys in this order:
 * input, output, mask, shape, channels, channel, compression, sample_type,
 * spacing_unit, n_labels, n_clusters, iterations, backend, [mode,
 * memory_limit_bytes, peak_memory_bytes, [slab_depth, connectivity_window,
 * temporary_bytes_planned, temporary_bytes],
 * [devices, peak_device_memory_bytes, resident_slabs, connectivity_on_device,
 * connectivity_devices, labels_on_device, slices_compressed_on_device],
 * [mpi_ranks]],
 * threads,
 * seconds {load, prepare, iterate, connect, write, total}, params (the
 * scikit-image names of sv_slic_params_to_json), command, version,
 * program when the writer names itself, and notes when the run has any.
 *
 * The window's export and supervox-cli running its "Copy as command" line
 * write the same label file and the same sidecar but for what says how and
 * where each ran: output and the command's -o (the file each wrote),
 * seconds, threads, program (the window's), mode, memory_limit_bytes and
 * peak_memory_bytes (supervox-cli's), and notes (supervox-cli's remarks). */
#pragma once

#include <glib.h>

#include "sv-params.h"
#include "sv-volume.h"

G_BEGIN_DECLS

typedef enum
{
  SV_SIDECAR_LOAD,
  SV_SIDECAR_PREPARE,
  SV_SIDECAR_ITERATE,
  SV_SIDECAR_CONNECT,
  SV_SIDECAR_WRITE,
  SV_SIDECAR_TOTAL,
  SV_SIDECAR_N_STAGES,
} SvSidecarStage;

typedef struct
{
  const char *input;        /* the input file */
  const char *output;       /* the label TIFF */
  const char *mask;         /* NULL: none (null) */
  guint shape[3];           /* z, y, x */
  guint channels;           /* the input's */
  int channel;              /* the channel used; < 0: all (null) */
  const char *compression;  /* "deflate:6", … */
  SvSampleType sample_type; /* the input's sample format */
  const char *spacing_unit; /* NULL: unknown (null) */
  gsize n_labels;
  gsize n_clusters;
  guint iterations;
  const char *backend; /* "cpu", "cuda" */
  /* How the run held the volume: "in-memory" or "streaming" (z-slabs from
   * the file); NULL leaves out these keys (the window). */
  const char *mode;
  guint64 memory_limit_bytes;
  guint64 peak_memory_bytes;
  guint slab_depth;          /* streaming: slices per slab, else 0 (left out) */
  guint connectivity_window; /* streaming: slices the connectivity held */
  /* streaming: the bytes of temporary files the plan allowed for (what
   * the memory limit does not hold), and those the run wrote */
  guint64 temporary_bytes_planned;
  guint64 temporary_bytes;
  guint mpi_ranks;           /* ranks the z range was split across; 0: no MPI (left out) */
  guint devices;             /* GPUs a streamed run spread its slabs over; 0: none (left out) */
  guint64 peak_device_memory_bytes; /* with devices: the most the slab steps held, all devices */
  guint resident_slabs;             /* with devices: slabs kept on them between iterations */
  gboolean connectivity_on_device;  /* with devices: the connectivity ran on one */
  guint connectivity_devices;       /* with devices: on this many, each its own slices */
  gboolean labels_on_device;        /* with devices: the last assignment stayed on one */
  /* with devices: slices of the label file whose strips or chunks the
   * device holding the labels compressed */
  guint slices_compressed_on_device;
  int threads;
  double seconds[SV_SIDECAR_N_STAGES];
  const SvSlicParams *params;
  const char *command; /* the supervox-cli line that reproduces the labels */
  const char *program; /* NULL: not written; else who wrote it ("supervox") */
  /* One-line remarks on the run (supervox-cli's on stderr: a fallback it
   * took, advice on few labels); none: the key is left out. */
  const char *const *notes;
  guint n_notes;
} SvSidecar;

/* What a supervox-cli slic line that reproduces some labels names. */
typedef struct
{
  const char *input;
  /* A batch's inputs, in order (NULL-terminated), named instead of
   * `input`; NULL: `input` alone. */
  const char *const *inputs;
  const char *output;
  const char *mask; /* NULL: none */
  const SvSlicParams *params;
  int channel;             /* < 0: all channels (no option) */
  const char *compression; /* NULL: no option */
  const char *backend;     /* NULL: no option */
  /* TRUE: the input is an OME-Zarr image read at resolution level
   * zarr_level (--zarr-level N); FALSE: no option. */
  gboolean zarr_image;
  guint zarr_level;
  /* A supervox-cli line that makes the input first (the window's sample);
   * NULL: none. */
  const char *before;
  /* The input's z, y, x size and channels, for the Python code (its reader
   * checks the file against them); 0: unknown. */
  guint shape[3];
  guint channels;
} SvSlicCommand;

/* Appends "[BEFORE && ]supervox-cli slic IN… -o OUT [--mask M] <every
 * parameter> [--zarr-level L] [--channel N] [--compression C] [--backend
 * B]" to line, file names quoted for a POSIX shell where they need it.
 * Both front ends write their "command" with it. */
void sv_slic_command_append (const SvSlicCommand *command, GString *line);

/* Appends Python code that computes the same labels with the supervox
 * package, bit for bit: the input (and mask) read with tifffile as z, y, x,
 * channel, as the TIFF reader reads them (an OME-Zarr image's level with
 * zarr-python), then labels = supervox.slic (…)
 * with every parameter spelled out and the backend named. Needs
 * command->shape and ->channels; output and compression are not used (the
 * labels stay in the variable `labels`). */
void sv_slic_python_append (const SvSlicCommand *command, GString *code);

/* A file name as one word of a POSIX shell: as it is when it holds only
 * safe characters, else quoted. Free with g_free. */
char *sv_shell_word (const char *path);

/* The sidecar beside a label file, as supervox-cli and the window name
 * it: labels.tif or labels.tiff -> labels.json, other names + ".json".
 * Free with g_free. */
char *sv_sidecar_path (const char *labels_path);

/* The sidecar as one JSON object, without a newline. Free with g_free. */
char *sv_sidecar_to_json (const SvSidecar *sidecar);

G_END_DECLS

/* Benchmark (not a test) of the streamed run on the GPU against the
 * in-memory one, both end to end, file in and file out: the in-memory run
 * reads the whole TIFF, runs on the CUDA backend and writes the labels;
 * the streamed run reads slabs, runs the CUDA slab steps and writes the
 * labels slab by slab. Prints a table with the stage times, the slab
 * steps' staging, upload and kernel times and the copy/compute overlap
 * achieved, checks that both label files hold the same bytes, and with
 * --json writes the numbers.
 *
 *   bench-stream IN.tif --n-segments N [--slab-depth D] [--devices 0,0] [--backend cpu]
 *                [--device-limit MIB] [--compression CODEC[:LEVEL]] [--reps R]
 *                [--no-in-memory] [--json out.json]
 *
 * --device-limit caps the device memory of the streamed run's steps
 * (default: what the device has free): slabs kept on the device between
 * iterations and the connectivity on the device both fit under it.
 *
 * Overlap: the share of the upload time during which the device also ran
 * the assignment kernels (CUDA events on both streams). --compression
 * writes both label files with another codec than the default deflate:6
 * (the label file's compression is most of the connectivity stage past a
 * few GiB of labels). --backend cpu runs both sides on the CPU backend
 * (the reference) instead: the streamed side then has no slab times. */
#define G_LOG_DOMAIN "sv-bench"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-io.h"
#include "supervox/sv-stream.h"
#include "sv-cuda.h"

typedef struct
{
  double load, prepare, iterate, connect, write, total;
} Times;

/* Both runs' label files. */
static SvTiffWriteOptions write_options;
/* "cuda" or "cpu", for both runs. */
static const char *backend_name = "cuda";

static double
seconds_since (gint64 t0)
{
  return (double)(g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
}

static gboolean
run_in_memory (const char *in, const char *out, const SvSlicParams *params, Times *t,
               GError **error)
{
  gint64 t0 = g_get_monotonic_time (), t1;
  g_autoptr (SvVolume) volume = NULL;
  g_autoptr (SvLabels) labels = NULL;
  SvBackend *backend = NULL;
  SvRunStats stats;
  gboolean ok = FALSE;

  volume = sv_tiff_read_volume (in, error);
  if (volume == NULL)
    return FALSE;
  t->load = seconds_since (t0);
  backend = sv_backend_new (backend_name, error);
  if (backend == NULL || !sv_backend_set_volume (backend, volume, NULL, error)
      || !sv_backend_run (backend, params, NULL, &stats, error))
    goto out;
  labels = sv_labels_new (volume->nz, volume->ny, volume->nx, error);
  if (labels == NULL || !sv_backend_get_labels (backend, labels->data, error))
    goto out;
  memcpy (labels->spacing, volume->spacing, sizeof labels->spacing);
  t1 = g_get_monotonic_time ();
  if (!sv_tiff_write_labels_full (out, labels, &write_options, error))
    goto out;
  t->write = seconds_since (t1);
  t->prepare = stats.seconds_prepare;
  t->iterate = stats.seconds_iterate;
  t->connect = stats.seconds_connect;
  t->total = seconds_since (t0);
  ok = TRUE;
out:
  sv_backend_free (backend);
  return ok;
}

static gboolean
run_streamed (const char *in, const char *out, const SvSlicParams *params, guint depth,
              SvBackend **backends, guint n_backends, Times *t, SvStreamReport *report,
              SvCudaSlabTimes *slab, GError **error)
{
  gint64 t0 = g_get_monotonic_time ();
  SvStreamOptions options;
  SvRunStats stats;

  sv_stream_options_init_defaults (&options);
  options.n_threads = 0;
  options.write_options = write_options;
  options.slab_depth = depth;
  /* Host memory is plenty here: slabs bounded by the device. */
  options.memory_limit = G_GUINT64_CONSTANT (16) << 30;
  options.backends = backends;
  options.n_backends = n_backends;
  if (!sv_stream_slic_run (in, out, params, NULL, &options, &stats, report, error))
    return FALSE;
  t->load = 0;
  t->prepare = stats.seconds_prepare;
  t->iterate = stats.seconds_iterate;
  t->connect = stats.seconds_connect;
  t->total = seconds_since (t0);
  t->write = 0;
  memset (slab, 0, sizeof *slab);
  for (guint i = 0; i < n_backends; i++)
    {
      SvCudaSlabTimes one;
      sv_cuda_backend_get_slab_times (backends[i], &one);
      slab->staging_ms += one.staging_ms;
      slab->upload_ms += one.upload_ms;
      slab->kernel_ms += one.kernel_ms;
      slab->overlap_ms += one.overlap_ms;
      slab->pass_ms = MAX (slab->pass_ms, one.pass_ms);
      slab->passes = MAX (slab->passes, one.passes);
    }
  return TRUE;
}

static gboolean
same_bytes (const char *a, const char *b)
{
  g_autofree char *x = NULL, *y = NULL;
  gsize nx = 0, ny = 0;

  return g_file_get_contents (a, &x, &nx, NULL) && g_file_get_contents (b, &y, &ny, NULL)
         && nx == ny && memcmp (x, y, nx) == 0;
}

/* The run with the smallest total of `reps`. */
static void
keep_best (Times *best, const Times *t, int rep)
{
  if (rep == 0 || t->total < best->total)
    *best = *t;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *devices = NULL, *json_path = NULL, *compression = NULL, *codec = NULL;
  g_autofree char *backend_option = NULL;
  gint64 n_segments = 0;
  gint depth = 0, reps = 1, device_limit_mib = 0;
  double compactness = 0.0;
  gboolean no_in_memory = FALSE, slic_zero = FALSE, keep_labels = FALSE;
  GOptionEntry entries[] = {
    { "n-segments", 0, 0, G_OPTION_ARG_INT64, &n_segments, "Segments", "N" },
    { "compactness", 0, 0, G_OPTION_ARG_DOUBLE, &compactness, "Compactness (default 10)", "C" },
    { "slic-zero", 0, 0, G_OPTION_ARG_NONE, &slic_zero, "SLIC-zero", NULL },
    { "slab-depth", 0, 0, G_OPTION_ARG_INT, &depth, "Slices per slab (0: from 1 GiB)", "D" },
    { "devices", 0, 0, G_OPTION_ARG_STRING, &devices, "GPUs, e.g. 0 or 0,0", "LIST" },
    { "device-limit", 0, 0, G_OPTION_ARG_INT, &device_limit_mib,
      "Device memory of the slab steps in MiB (0: what is free)", "MIB" },
    { "backend", 0, 0, G_OPTION_ARG_STRING, &backend_option, "cuda (default) or cpu", "NAME" },
    { "compression", 0, 0, G_OPTION_ARG_STRING, &compression,
      "Codec of the label files (default deflate:6)", "CODEC[:LEVEL]" },
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Runs of each; the fastest counts", "R" },
    { "no-in-memory", 0, 0, G_OPTION_ARG_NONE, &no_in_memory, "Only the streamed run", NULL },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write the numbers here", "FILE" },
    { "keep-labels", 0, 0, G_OPTION_ARG_NONE, &keep_labels,
      "Leave the streamed labels in bench-stream-labels.tif beside the input", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("IN.tif");
  g_auto (GStrv) device_list = NULL;
  g_autofree SvBackend **backends = NULL;
  g_autofree char *dir = NULL, *out_memory = NULL, *out_stream = NULL;
  guint n_backends;
  SvSlicParams params;
  Times memory = { 0 }, streamed = { 0 };
  SvStreamReport report = { 0 };
  SvCudaSlabTimes slab = { 0 };
  double overlap = 0.0, ratio = 0.0;
  gboolean identical = FALSE;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2)
    {
      fprintf (stderr, "bench-stream: %s\n", error != NULL ? error->message : "one input TIFF");
      return 1;
    }
  sv_tiff_write_options_init_defaults (&write_options);
  write_options.n_threads = 0;
  if (compression != NULL && !sv_tiff_write_options_parse (&write_options, compression, &error))
    {
      fprintf (stderr, "bench-stream: %s\n", error->message);
      return 1;
    }
  codec = sv_tiff_write_options_to_string (&write_options);
  sv_backend_register (sv_backend_cuda_class ());
  sv_slic_params_init_defaults (&params);
  if (n_segments > 0)
    params.n_segments = n_segments;
  if (compactness > 0)
    params.compactness = compactness;
  params.slic_zero = slic_zero;

  if (backend_option != NULL && strcmp (backend_option, "cpu") == 0)
    backend_name = "cpu";
  else if (backend_option != NULL && strcmp (backend_option, "cuda") != 0)
    {
      fprintf (stderr, "bench-stream: --backend is cuda or cpu, got %s\n", backend_option);
      return 1;
    }
  device_list = g_strsplit (devices != NULL ? devices : "0", ",", -1);
  /* The CPU's streamed run makes its own backend. */
  n_backends = strcmp (backend_name, "cpu") == 0 ? 0 : g_strv_length (device_list);
  backends = g_new0 (SvBackend *, n_backends);
  for (guint i = 0; i < n_backends; i++)
    if ((backends[i] = sv_cuda_backend_new_on_device (atoi (device_list[i]), &error)) == NULL)
      {
        fprintf (stderr, "bench-stream: %s\n", error->message);
        return 1;
      }
    else
      sv_cuda_backend_set_memory_limit (backends[i], (guint64)device_limit_mib << 20);

  dir = g_path_get_dirname (argv[1]);
  out_memory = g_build_filename (dir, "bench-memory-labels.tif", NULL);
  out_stream = g_build_filename (dir, "bench-stream-labels.tif", NULL);
  for (int r = 0; r < MAX (reps, 1); r++)
    {
      Times t = { 0 };

      if (!no_in_memory)
        {
          if (!run_in_memory (argv[1], out_memory, &params, &t, &error))
            {
              fprintf (stderr, "bench-stream: in memory: %s\n", error->message);
              return 1;
            }
          keep_best (&memory, &t, r);
        }
      if (!run_streamed (argv[1], out_stream, &params, (guint)depth, backends, n_backends, &t,
                         &report, &slab, &error))
        {
          fprintf (stderr, "bench-stream: streamed: %s\n", error->message);
          return 1;
        }
      keep_best (&streamed, &t, r);
    }
  if (!no_in_memory)
    {
      identical = same_bytes (out_memory, out_stream);
      ratio = streamed.total / memory.total;
    }
  if (slab.upload_ms > 0)
    overlap = slab.overlap_ms / slab.upload_ms;

  printf ("%-10s %8s %8s %8s %8s %8s %8s\n", "run", "load", "prepare", "iterate", "connect",
          "write", "total");
  if (!no_in_memory)
    printf ("%-10s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", "in-memory", memory.load, memory.prepare,
            memory.iterate, memory.connect, memory.write, memory.total);
  printf ("%-10s %8s %8.2f %8.2f %8.2f %8s %8.2f\n", "streamed", "-", streamed.prepare,
          streamed.iterate, streamed.connect, "-", streamed.total);
  printf ("slabs: %u of %u slices on %u device(s); %u passes: staging %.0f ms, upload %.0f ms, "
          "kernels %.0f ms, pass wall %.0f ms; uploads overlapped by kernels %.0f %%; "
          "device peak %.1f MiB\n",
          report.n_slabs, report.slab_depth, n_backends, slab.passes, slab.staging_ms,
          slab.upload_ms, slab.kernel_ms, slab.pass_ms, 100.0 * overlap,
          report.device_peak_bytes / 1048576.0);
  printf ("prepared slabs: %u kept on the device, %.0f MiB in host memory, %.0f MiB in a file; "
          "last assignment on the %s; connectivity on the %s (%u slices at once); labels %s\n",
          report.resident_slabs, report.kept_host_bytes / 1048576.0,
          report.kept_file_bytes / 1048576.0, report.labels_on_device ? "device" : "host",
          report.connect_on_device ? "device" : "host", report.connect_window, codec);
  printf ("labels before connectivity: %.0f MiB in host memory, %.0f MiB in a file\n",
          report.labels_host_bytes / 1048576.0, report.labels_file_bytes / 1048576.0);
  printf ("of iterate: first pass (prepares every slab) %.3f s, labels from the last "
          "assignment %.3f s\n",
          report.seconds_first_pass, report.seconds_labels);
  if (!no_in_memory)
    printf ("streamed / in-memory: %.2f×; labels identical: %s\n", ratio, identical ? "yes" : "NO");

  if (json_path != NULL)
    {
      g_autofree char *text = g_strdup_printf (
          "{\"input\":\"%s\",\"n_segments\":%" G_GINT64_FORMAT ",\"compactness\":%g,"
          "\"slic_zero\":%s,\"backend\":\"%s\",\"devices\":%u,"
          "\"in_memory\":{\"load\":%.3f,\"prepare\":%.3f,\"iterate\":%.3f,\"connect\":%.3f,"
          "\"write\":%.3f,\"total\":%.3f},"
          "\"streamed\":{\"prepare\":%.3f,\"iterate\":%.3f,\"connect\":%.3f,\"total\":%.3f,"
          "\"slab_depth\":%u,\"n_slabs\":%u,\"passes\":%u,\"staging_ms\":%.1f,"
          "\"upload_ms\":%.1f,\"kernel_ms\":%.1f,\"pass_ms\":%.1f,\"overlap\":%.3f,"
          "\"device_peak_bytes\":%" G_GUINT64_FORMAT ",\"device_limit_mib\":%d,"
          "\"resident_slabs\":%u,\"kept_host_bytes\":%" G_GUINT64_FORMAT ","
          "\"kept_file_bytes\":%" G_GUINT64_FORMAT ",\"connect_on_device\":%s,"
          "\"labels_on_device\":%s,\"first_pass\":%.3f,\"labels\":%.3f,"
          "\"connect_window\":%u,\"compression\":\"%s\"},"
          "\"ratio\":%.3f,\"identical\":%s}\n",
          argv[1], params.n_segments, params.compactness, params.slic_zero ? "true" : "false",
          backend_name, n_backends, memory.load, memory.prepare, memory.iterate, memory.connect,
          memory.write, memory.total, streamed.prepare, streamed.iterate, streamed.connect,
          streamed.total, report.slab_depth, report.n_slabs, slab.passes, slab.staging_ms,
          slab.upload_ms, slab.kernel_ms, slab.pass_ms, overlap, report.device_peak_bytes,
          device_limit_mib, report.resident_slabs, report.kept_host_bytes, report.kept_file_bytes,
          report.connect_on_device ? "true" : "false", report.labels_on_device ? "true" : "false",
          report.seconds_first_pass, report.seconds_labels, report.connect_window, codec, ratio,
          identical ? "true" : "false");
      if (!g_file_set_contents (json_path, text, -1, &error))
        {
          fprintf (stderr, "bench-stream: %s\n", error->message);
          return 1;
        }
    }
  for (guint i = 0; i < n_backends; i++)
    sv_backend_free (backends[i]);
  g_unlink (out_memory);
  if (!keep_labels)
    g_unlink (out_stream);
  return no_in_memory || identical ? 0 : 2;
}

/* Benchmark of the CUDA backend: per-stage device times (CUDA events,
 * median of several runs after a warm-up) and end to end (host float32 in →
 * host labels out) for cubes with ~1000-voxel supervoxels, 10 iterations and
 * connectivity; the device-to-device copy bandwidth and a floor (bytes
 * moved / bandwidth) next to the kernel times; and the live-slider case
 * (volume resident, compactness changed → new labels). Prints a table and,
 * with --json FILE, writes the numbers as JSON.
 *
 *   bench-cuda [--sizes 256,500,1024] [--reps 5] [--json out.json] */
#define G_LOG_DOMAIN "sv-bench"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "sv-cuda.h"

/* One lane of structure per axis (tables of sines, cheap to evaluate) and a
 * hashed noise: smooth blobs with boundaries for SLIC to find. */
static SvVolume *
make_volume (guint n, GError **error)
{
  SvVolume *v = sv_volume_new (n, n, n, 1, error);
  if (v == NULL)
    return NULL;
  g_autofree float *s = g_new (float, n);
  for (guint i = 0; i < n; i++)
    s[i] = (float)sin (i * 0.11);
  gsize idx = 0;
  for (guint z = 0; z < n; z++)
    for (guint y = 0; y < n; y++)
      {
        const float szy = s[z] * s[(y * 7u) % n];
        const guint cell = (z / 37u + y / 41u) % 3u;
        for (guint x = 0; x < n; x++, idx++)
          {
            guint32 h = (guint32)idx * 2654435761u;
            h ^= h >> 15;
            v->data[idx] = 0.5f + 0.3f * szy * s[(x * 3u) % n]
                           + 0.15f * (float)((cell + x / 43u) % 3u)
                           + 0.05f * (float)(h & 1023u) / 1024.0f;
          }
      }
  return v;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

typedef struct
{
  guint n;
  gsize k;
  gsize n_labels;
  double e2e_ms, set_volume_ms, run_ms, download_ms;
  double prepare_ms, bin_ms, assign_ms, update_ms, labels_ms, connect_ms, connect_device_ms;
  double floor_assign_ms, floor_update_ms, floor_connect_ms;
  gboolean connectivity_on_host;
  double slider_ms, slider_slice_ms;
} Row;

static gboolean
bench_size (guint n, int reps, double gbps, Row *row, GError **error)
{
  SvSlicParams p;
  SvRunControl control = { 0 };
  SvRunStats stats;
  SvCudaStageTimes t;
  gsize nv = (gsize)n * n * n;
  double *e2e = g_new (double, reps), *setv = g_new (double, reps), *run = g_new (double, reps),
         *down = g_new (double, reps), *prep = g_new (double, reps), *bin = g_new (double, reps),
         *assign = g_new (double, reps), *update = g_new (double, reps),
         *labels_t = g_new (double, reps), *conn = g_new (double, reps),
         *connd = g_new (double, reps), *slider = g_new (double, reps),
         *slider_slice = g_new (double, reps);
  gboolean ok = FALSE;
  g_autofree gint32 *labels = NULL;
  g_autofree gint32 *slice = NULL;
  g_autoptr (SvVolume) v = NULL;
  const SvBackendClass *klass = sv_backend_cuda_class ();
  gpointer self = NULL;

  memset (row, 0, sizeof *row);
  row->n = n;
  fprintf (stderr, "%u³: making the volume…\n", n);
  v = make_volume (n, error);
  if (v == NULL)
    goto out;
  labels = g_try_new (gint32, nv);
  slice = g_new (gint32, (gsize)n * n);
  if (labels == NULL)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "no memory for labels");
      goto out;
    }
  sv_slic_params_init_defaults (&p);
  p.n_segments = (gint64)(nv / 1000);
  p.compactness = 0.1;
  p.max_num_iter = 10;
  control.stop_after_iteration = -1;

  /* The class is used directly: the profiling calls need the instance. */
  self = klass->create (error);
  if (self == NULL)
    goto out;
  if (!sv_cuda_backend_set_profiling (self, TRUE, error))
    goto out;

  /* End to end: host volume in, host labels out; warm-up first. */
  for (int r = -1; r < reps; r++)
    {
      double t0 = now_ms (), t1, t2, t3;
      if (!klass->set_volume (self, v, NULL, error))
        goto out;
      t1 = now_ms ();
      if (!klass->run (self, &p, &control, &stats, error))
        goto out;
      t2 = now_ms ();
      if (!klass->get_labels (self, labels, error))
        goto out;
      t3 = now_ms ();
      sv_cuda_backend_get_stage_times (self, &t);
      fprintf (stderr, "  run %d: %.1f ms end to end\n", r, t3 - t0);
      if (r < 0)
        continue;
      e2e[r] = t3 - t0;
      setv[r] = t1 - t0;
      run[r] = t2 - t1;
      down[r] = t3 - t2;
      prep[r] = t.prepare_ms;
      bin[r] = t.bin_ms / t.iterations;
      assign[r] = t.assign_ms / t.iterations;
      update[r] = t.update_ms / t.iterations;
      labels_t[r] = t.labels_ms;
      conn[r] = t.connect_ms;
      connd[r] = t.connect_device_ms;
      row->connectivity_on_host |= t.connectivity_on_host;
    }
  row->k = stats.n_clusters;
  row->n_labels = stats.n_labels;

  /* Live slider: the volume stays resident, compactness changes. */
  for (int r = -1; r < reps; r++)
    {
      double t0, t1, t2;
      p.compactness = 0.1 * pow (1.5, r + 2);
      t0 = now_ms ();
      if (!klass->run (self, &p, &control, &stats, error))
        goto out;
      t1 = now_ms ();
      if (!klass->get_slice (self, SV_AXIS_XY, n / 2, slice, error))
        goto out;
      t2 = now_ms ();
      g_assert (stats.prepare_reused);
      if (r < 0)
        continue;
      slider[r] = t1 - t0;
      slider_slice[r] = t2 - t0;
    }

  row->e2e_ms = median (e2e, reps);
  row->set_volume_ms = median (setv, reps);
  row->run_ms = median (run, reps);
  row->download_ms = median (down, reps);
  row->prepare_ms = median (prep, reps);
  row->bin_ms = median (bin, reps);
  row->assign_ms = median (assign, reps);
  row->update_ms = median (update, reps);
  row->labels_ms = median (labels_t, reps);
  row->connect_ms = median (conn, reps);
  row->connect_device_ms = median (connd, reps);
  row->slider_ms = median (slider, reps);
  row->slider_slice_ms = median (slider_slice, reps);
  /* Floors: assignment reads the image and writes the assignment (8 B per
   * voxel); the update reads both (8 B); connectivity reads the labels
   * about 4 times and reads/writes parents, sizes and labels (~28 B). */
  row->floor_assign_ms = 8.0 * nv / (gbps * 1e9) * 1e3;
  row->floor_update_ms = 8.0 * nv / (gbps * 1e9) * 1e3;
  row->floor_connect_ms = 28.0 * nv / (gbps * 1e9) * 1e3;
  ok = TRUE;
out:
  g_free (e2e);
  g_free (setv);
  g_free (run);
  g_free (down);
  g_free (prep);
  g_free (bin);
  g_free (assign);
  g_free (update);
  g_free (labels_t);
  g_free (conn);
  g_free (connd);
  g_free (slider);
  g_free (slider_slice);
  if (self != NULL)
    klass->destroy (self);
  return ok;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *sizes = g_strdup ("256,500,1024");
  g_autofree char *json_path = NULL;
  int reps = 5;
  double gbps = 0.0;
  GOptionEntry entries[] = {
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes, "cube sides, comma separated", "LIST" },
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "timed runs per case (median)", "N" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "write the results as JSON", "FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("— CUDA backend benchmark");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  reps = MAX (reps, 1);
  if (!sv_cuda_copy_bandwidth ((gsize)1 << 30, &gbps, &error))
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }

  g_auto (GStrv) list = g_strsplit (sizes, ",", -1);
  guint n_rows = g_strv_length (list);
  g_autofree Row *rows = g_new0 (Row, n_rows);
  for (guint i = 0; i < n_rows; i++)
    if (!bench_size ((guint)g_ascii_strtoull (list[i], NULL, 10), reps, gbps, &rows[i], &error))
      {
        fprintf (stderr, "%s\n", error->message);
        return 1;
      }

  printf ("device-to-device copy bandwidth: %.0f GB/s (read + write)\n", gbps);
  printf (
      "median of %d runs after a warm-up; per-iteration kernel times; floor = bytes/bandwidth\n",
      reps);
  printf ("%6s %8s %8s | %9s %9s %9s %9s | %9s %9s %9s | %9s %9s %9s | %9s %9s | %9s %s\n", "side",
          "K", "labels", "e2e ms", "upload", "run", "download", "prepare", "bin/it", "assign/it",
          "floor", "update/it", "floor", "connect", "floor", "slider ms", "connectivity");
  for (guint i = 0; i < n_rows; i++)
    {
      const Row *r = &rows[i];
      printf ("%6u %8zu %8zu | %9.1f %9.1f %9.1f %9.1f | %9.1f %9.3f %9.3f | %9.3f %9.3f %9.3f | "
              "%9.1f %9.3f | %9.1f %s\n",
              r->n, r->k, r->n_labels, r->e2e_ms, r->set_volume_ms, r->run_ms, r->download_ms,
              r->prepare_ms, r->bin_ms, r->assign_ms, r->floor_assign_ms, r->update_ms,
              r->floor_update_ms, r->connect_ms, r->floor_connect_ms, r->slider_ms,
              r->connectivity_on_host ? "host fallback" : "device");
      printf ("%6s conn dev %.3f ms; slider run + XY slice %.1f ms; labels %.3f ms\n", "",
              r->connect_device_ms, r->slider_slice_ms, r->labels_ms);
    }

  if (json_path != NULL)
    {
      g_autoptr (GString) j = g_string_new ("{\n");
      g_string_append_printf (
          j, "  \"copy_bandwidth_gbps\": %.1f,\n  \"reps\": %d,\n  \"rows\": [\n", gbps, reps);
      for (guint i = 0; i < n_rows; i++)
        {
          const Row *r = &rows[i];
          g_string_append_printf (
              j,
              "    {\"side\": %u, \"k\": %zu, \"n_labels\": %zu, \"e2e_ms\": %.3f, "
              "\"upload_ms\": %.3f, \"run_ms\": %.3f, \"download_ms\": %.3f, "
              "\"prepare_ms\": %.3f, \"bin_ms_per_iter\": %.4f, \"assign_ms_per_iter\": %.4f, "
              "\"assign_floor_ms\": %.4f, \"update_ms_per_iter\": %.4f, \"update_floor_ms\": %.4f, "
              "\"labels_ms\": %.4f, \"connect_ms\": %.3f, \"connect_device_ms\": %.4f, "
              "\"connect_floor_ms\": %.4f, \"connectivity_on_host\": %s, "
              "\"slider_run_ms\": %.3f, \"slider_run_and_slice_ms\": %.3f}%s\n",
              r->n, r->k, r->n_labels, r->e2e_ms, r->set_volume_ms, r->run_ms, r->download_ms,
              r->prepare_ms, r->bin_ms, r->assign_ms, r->floor_assign_ms, r->update_ms,
              r->floor_update_ms, r->labels_ms, r->connect_ms, r->connect_device_ms,
              r->floor_connect_ms, r->connectivity_on_host ? "true" : "false", r->slider_ms,
              r->slider_slice_ms, i + 1 < n_rows ? "," : "");
        }
      g_string_append (j, "  ]\n}\n");
      if (!g_file_set_contents (json_path, j->str, j->len, &error))
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
    }
  return 0;
}

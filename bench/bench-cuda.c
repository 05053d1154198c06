/* Benchmark of the CUDA backend: per-stage device times (CUDA events,
 * median of several runs after a warm-up) and end to end (host float32 in →
 * host labels out) for cubes with ~1000-voxel supervoxels, 10 iterations and
 * connectivity, at each compactness asked for; the device-to-device copy
 * bandwidth and a floor (bytes moved / bandwidth) next to the kernel times; a compute floor of the
 * assignment (the distances the exact rule needs, counted by one CPU run of
 * the same volume and parameters, × instructions per distance ÷ the
 * device's peak issue rate); and the live-slider case
 * (volume resident, compactness changed → new labels). Prints a table and,
 * with --json FILE, writes the numbers as JSON. With --peer-sizes, the same
 * run times scikit-image's slic (python3 from PATH) on the same volumes with
 * the same parameters and prints the ratio and the agreement of the labels.
 *
 *   bench-cuda [--sizes 256,500,1024] [--compactness 0.01,0.1,1,10] [--reps 5]
 *              [--peer-sizes 128,256] [--no-compute-floor] [--json out.json] */
#define G_LOG_DOMAIN "sv-bench"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-metrics.h"
#include "sv-cuda-gl.h"
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
  double compactness;
  gsize k;
  gsize n_labels;
  double e2e_ms, set_volume_ms, run_ms, download_ms;
  double prepare_ms, bin_ms, assign_ms, update_ms, labels_ms, connect_ms, connect_device_ms;
  double floor_assign_ms, floor_update_ms, floor_connect_ms;
  /* Compute floor of the assignment (NaN when not counted). */
  double floor_evaluations, floor_compute_assign_ms, floor_count_s;
  int instructions_per_evaluation;
  int cpu_labels_equal; /* the counting CPU run's labels = CUDA's; -1: not counted */
  gboolean connectivity_on_host;
  double slider_ms, slider_publish_ms;
} Row;

/* Lane instructions of one distance evaluation in the assignment kernel:
 * the SASS of sv-slic-arith.h's functions in a candidate loop, compiled
 * with --fmad=false for sm_90 (nvcc 13.0, cuobjdump -sass). The spatial
 * term 12 (3 FADD c − p, 3 FMUL by the spacing, 3 FMUL squares, 2 FADD,
 * 1 FMUL by the weight); per channel 3 (FADD I·ratio − C, with I·ratio
 * the voxel's, computed once; FMUL square; FADD into the sum); the
 * distance 1 (FADD; SLIC-zero's division is not counted); sv_arith_better
 * 7 (FSETP ==, FSETP < with the OR, the 64-bit index compare as two ISETP
 * and a SHF sign extension, SEL and FSEL). Loads, window tests and loop
 * control are left out: a floor. 23 for one channel. */
static int
instructions_per_evaluation (guint nc)
{
  return 12 + 3 * (int)nc + 1 + 7;
}

/* The assignment's compute floor for `row`: one CPU run of the same volume
 * and parameters with floor counting on (the CPU reference computes the
 * same centres as the CUDA backend, bit for bit: its labels are compared
 * with `cuda_labels`), the mean count per iteration × instructions per
 * evaluation ÷ the device's lane instructions per second. */
static gboolean
compute_floor (const SvVolume *v, const SvSlicParams *p, guint cuda_iterations,
               const gint32 *cuda_labels, const SvCudaIssueRate *rate, Row *row, GError **error)
{
  const gsize nv = sv_volume_n_voxels (v);
  SvRunControl control = { .n_threads = 0, .stop_after_iteration = -1 };
  SvRunStats stats;
  const gint64 *counts;
  guint n_counts = 0;
  gint64 sum = 0;
  double t0;
  g_autofree gint32 *cpu_labels = NULL;
  g_autoptr (SvBackend) cpu = sv_backend_new ("cpu", error);

  if (cpu == NULL)
    return FALSE;
  fprintf (stderr, "%u³: counting the floor's evaluations on the CPU…\n", row->n);
  sv_backend_cpu_set_floor_counting (cpu, TRUE);
  t0 = now_ms ();
  if (!sv_backend_set_volume (cpu, v, NULL, error)
      || !sv_backend_run (cpu, p, &control, &stats, error))
    return FALSE;
  row->floor_count_s = (now_ms () - t0) / 1e3;
  counts = sv_backend_cpu_get_floor_counts (cpu, &n_counts);
  if (n_counts == 0 || n_counts != cuda_iterations)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   "the CPU run counted %u iterations, the CUDA run ran %u", n_counts,
                   cuda_iterations);
      return FALSE;
    }
  for (guint i = 0; i < n_counts; i++)
    sum += counts[i];
  cpu_labels = sv_backend_take_labels (cpu, nv, error);
  if (cpu_labels == NULL)
    return FALSE;
  row->cpu_labels_equal = memcmp (cpu_labels, cuda_labels, nv * sizeof (gint32)) == 0;
  row->floor_evaluations = (double)sum / n_counts;
  row->instructions_per_evaluation = instructions_per_evaluation (v->nc);
  row->floor_compute_assign_ms = row->floor_evaluations * row->instructions_per_evaluation
                                 / rate->lane_instructions_per_s * 1e3;
  return TRUE;
}

static gboolean
bench_case (const SvVolume *v, double compactness, int reps, double gbps,
            const SvCudaIssueRate *rate, Row *row, GError **error)
{
  const guint n = (guint)v->nz;
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
         *slider_publish = g_new (double, reps);
  gboolean ok = FALSE;
  g_autofree gint32 *labels = NULL;
  g_autoptr (SvBackend) self = NULL;
  g_autoptr (SvCudaLabelsPool) pool = sv_cuda_labels_pool_new ();

  memset (row, 0, sizeof *row);
  row->n = n;
  row->compactness = compactness;
  row->floor_evaluations = row->floor_compute_assign_ms = row->floor_count_s = NAN;
  row->cpu_labels_equal = -1;
  fprintf (stderr, "%u³, compactness %g\n", n, compactness);
  labels = g_try_new (gint32, nv);
  if (labels == NULL)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "no memory for labels");
      goto out;
    }
  sv_slic_params_init_defaults (&p);
  p.n_segments = (gint64)(nv / 1000);
  p.compactness = compactness;
  p.max_num_iter = 10;
  control.stop_after_iteration = -1;

  self = sv_backend_new ("cuda", error);
  if (self == NULL)
    goto out;
  if (!sv_cuda_backend_set_profiling (self, TRUE, error))
    goto out;

  /* End to end: host volume in, host labels out; warm-up first. */
  for (int r = -1; r < reps; r++)
    {
      double t0 = now_ms (), t1, t2, t3;
      if (!sv_backend_set_volume (self, v, NULL, error))
        goto out;
      t1 = now_ms ();
      if (!sv_backend_run (self, &p, &control, &stats, error))
        goto out;
      t2 = now_ms ();
      if (!sv_backend_get_labels (self, labels, error))
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
  /* Before the slider changes the compactness: the parameters just timed. */
  if (rate != NULL && !compute_floor (v, &p, t.iterations, labels, rate, row, error))
    goto out;

  /* Live slider: the volume stays resident, compactness changes. */
  for (int r = -1; r < reps; r++)
    {
      double t0, t1, t2;
      g_autoptr (SvCudaLabels) published = NULL;
      p.compactness = compactness * pow (1.5, r + 2);
      t0 = now_ms ();
      if (!sv_backend_run (self, &p, &control, &stats, error))
        goto out;
      t1 = now_ms ();
      /* The window's path: the labels published on the device for a view. */
      published = sv_cuda_labels_publish (pool, self, error);
      if (published == NULL || !sv_cuda_labels_wait (published, error))
        goto out;
      t2 = now_ms ();
      g_assert (stats.prepare_reused);
      if (r < 0)
        continue;
      slider[r] = t1 - t0;
      slider_publish[r] = t2 - t0;
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
  row->slider_publish_ms = median (slider_publish, reps);
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
  g_free (slider_publish);
  return ok;
}


/* scikit-image side of --peer-sizes: loads the raw float32 volume, runs slic
 * with the benchmark's parameters (median of 3 runs, 1 when a run takes more
 * than 20 s), writes the labels as raw int32 and, when a run is cheap (≤ 20
 * s), the labels of a run without connectivity too. Prints key=value lines. */
static const char peer_script[] =
    "import sys, time\n"
    "try:\n"
    "    import numpy as np\n"
    "    import skimage\n"
    "    from skimage.segmentation import slic\n"
    "except Exception as e:\n"
    "    print('error=cannot import numpy/scikit-image: %s' % e)\n"
    "    sys.exit(3)\n"
    "d, n = sys.argv[1], int(sys.argv[2])\n"
    "img = np.fromfile(d + '/volume.f32', dtype=np.float32).reshape(n, n, n)\n"
    "kw = dict(n_segments=n ** 3 // 1000, compactness=0.1, max_num_iter=10, sigma=0,\n"
    "          channel_axis=None, enforce_connectivity=True, start_label=1)\n"
    "times = []\n"
    "for i in range(3):\n"
    "    t0 = time.perf_counter()\n"
    "    lab = slic(img, **kw)\n"
    "    times.append(time.perf_counter() - t0)\n"
    "    print('  scikit-image %d³ run %d: %.2f s' % (n, i, times[-1]), file=sys.stderr, flush=True)\n"
    "    if times[0] > 20:\n"
    "        break\n"
    "np.ascontiguousarray(lab, dtype=np.int32).tofile(d + '/labels.i32')\n"
    "noconn = times[0] <= 20\n"
    "if noconn:\n"
    "    kw['enforce_connectivity'] = False\n"
    "    lab0 = slic(img, **kw)\n"
    "    np.ascontiguousarray(lab0, dtype=np.int32).tofile(d + '/labels-noconn.i32')\n"
    "print('version=%s' % skimage.__version__)\n"
    "print('seconds=%.6f' % float(np.median(times)))\n"
    "print('runs=%d' % len(times))\n"
    "print('n_labels=%d' % len(np.unique(lab)))\n"
    "print('noconn=%d' % int(noconn))\n";

typedef struct
{
  guint n;
  gboolean done;    /* FALSE: scikit-image could not be run (reason printed) */
  char version[32];
  double sk_s;      /* median seconds */
  int sk_runs;
  gsize sk_n_labels;
  double ours_e2e_ms;
  gsize ours_n_labels;
  double ari;       /* adjusted Rand index, both with connectivity */
  double equal_noconn; /* fraction of equal voxels without connectivity; NaN if not run */
} PeerRow;

/* Our end to end (median of reps after a warm-up) and labels for the peer
 * volume, with connectivity; then one run without it into labels_noconn. */
static gboolean
ours_for_peer (const SvVolume *v, int reps, gint32 *labels, gint32 *labels_noconn,
               PeerRow *row, GError **error)
{
  gsize nv = sv_volume_n_voxels (v);
  SvSlicParams p;
  SvRunControl control = { 0 };
  SvRunStats stats;
  gboolean ok = FALSE;
  g_autofree double *e2e = g_new (double, reps);
  g_autoptr (SvBackend) self = sv_backend_new ("cuda", error);

  if (self == NULL)
    return FALSE;
  sv_slic_params_init_defaults (&p);
  p.n_segments = (gint64)(nv / 1000);
  p.compactness = 0.1;
  p.max_num_iter = 10;
  control.stop_after_iteration = -1;
  for (int r = -1; r < reps; r++)
    {
      double t0 = now_ms ();
      if (!sv_backend_set_volume (self, v, NULL, error)
          || !sv_backend_run (self, &p, &control, &stats, error)
          || !sv_backend_get_labels (self, labels, error))
        goto out;
      if (r >= 0)
        e2e[r] = now_ms () - t0;
    }
  row->ours_e2e_ms = median (e2e, reps);
  row->ours_n_labels = stats.n_labels;
  p.enforce_connectivity = FALSE;
  if (!sv_backend_run (self, &p, &control, &stats, error)
      || !sv_backend_get_labels (self, labels_noconn, error))
    goto out;
  ok = TRUE;
out:
  return ok;
}

static gboolean
read_raw (const char *path, gpointer dst, gsize size, GError **error)
{
  g_autofree char *buf = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &buf, &len, error))
    return FALSE;
  if (len != size)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: %zu bytes, expected %zu", path,
                   len, size);
      return FALSE;
    }
  memcpy (dst, buf, size);
  return TRUE;
}

/* Times scikit-image on the n³ benchmark volume and compares it with ours.
 * Returns FALSE only on our own errors; when python3 or scikit-image is
 * missing or fails, says so on stdout and leaves row->done FALSE. */
static gboolean
peer_size (guint n, int reps, PeerRow *row, GError **error)
{
  gsize nv = (gsize)n * n * n;
  g_autoptr (SvVolume) v = NULL;
  g_autofree gint32 *ours = NULL, *ours0 = NULL, *theirs = NULL;
  g_autofree char *dir = NULL, *vol_path = NULL, *lab_path = NULL, *lab0_path = NULL;
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autofree char *out = NULL, *n_str = g_strdup_printf ("%u", n);
  g_auto (GStrv) lines = NULL;
  gboolean have_noconn = FALSE, ok = FALSE;
  int status = 0;

  memset (row, 0, sizeof *row);
  row->n = n;
  row->equal_noconn = NAN;
  row->ari = NAN;
  if (python == NULL)
    {
      printf ("peer %u³: python3 not found on PATH, scikit-image not timed\n", n);
      return TRUE;
    }
  fprintf (stderr, "peer %u³: making the volume…\n", n);
  v = make_volume (n, error);
  if (v == NULL)
    return FALSE;
  ours = g_new (gint32, nv);
  ours0 = g_new (gint32, nv);
  theirs = g_new (gint32, nv);
  if (!ours_for_peer (v, reps, ours, ours0, row, error))
    return FALSE;

  dir = g_dir_make_tmp ("sv-peer-XXXXXX", error);
  if (dir == NULL)
    return FALSE;
  vol_path = g_build_filename (dir, "volume.f32", NULL);
  lab_path = g_build_filename (dir, "labels.i32", NULL);
  lab0_path = g_build_filename (dir, "labels-noconn.i32", NULL);
  if (!g_file_set_contents (vol_path, (const char *)v->data, (gssize)(nv * sizeof (float)), error))
    goto out;

  {
    char *argv[] = { python, "-c", (char *)peer_script, dir, n_str, NULL };
    g_autoptr (GError) spawn_error = NULL;
    /* Our binaries may run with LD_LIBRARY_PATH on bundled libraries (an
     * older libstdc++, zlib…) that python's extensions must not pick up. */
    g_auto (GStrv) envp = g_environ_unsetenv (g_get_environ (), "LD_LIBRARY_PATH");
    fprintf (stderr, "peer %u³: running scikit-image (%s)…\n", n, python);
    /* stderr goes through: the script reports each run as it finishes. */
    if (!g_spawn_sync (NULL, argv, envp, G_SPAWN_CHILD_INHERITS_STDERR, NULL, NULL, &out, NULL,
                       &status, &spawn_error))
      {
        printf ("peer %u³: cannot run %s: %s\n", n, python, spawn_error->message);
        ok = TRUE;
        goto out;
      }
    if (!g_spawn_check_wait_status (status, NULL))
      {
        g_strchomp (out);
        printf ("peer %u³: scikit-image not timed (%s exited with status %d): %s\n", n, python,
                status, out);
        ok = TRUE;
        goto out;
      }
  }
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *l = lines[i];
      if (g_str_has_prefix (l, "version="))
        g_strlcpy (row->version, l + 8, sizeof row->version);
      else if (g_str_has_prefix (l, "seconds="))
        row->sk_s = g_ascii_strtod (l + 8, NULL);
      else if (g_str_has_prefix (l, "runs="))
        row->sk_runs = (int)g_ascii_strtoll (l + 5, NULL, 10);
      else if (g_str_has_prefix (l, "n_labels="))
        row->sk_n_labels = g_ascii_strtoull (l + 9, NULL, 10);
      else if (g_str_has_prefix (l, "noconn="))
        have_noconn = g_ascii_strtoll (l + 7, NULL, 10) != 0;
    }
  if (!read_raw (lab_path, theirs, nv * sizeof (gint32), error))
    goto out;
  row->ari = sv_adjusted_rand_index (ours, theirs, nv);
  if (have_noconn)
    {
      gsize equal = 0;
      if (!read_raw (lab0_path, theirs, nv * sizeof (gint32), error))
        goto out;
      for (gsize i = 0; i < nv; i++)
        equal += ours0[i] == theirs[i];
      row->equal_noconn = (double)equal / (double)nv;
    }
  row->done = TRUE;
  ok = TRUE;
out:
  g_remove (vol_path);
  g_remove (lab_path);
  g_remove (lab0_path);
  g_rmdir (dir);
  return ok;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *sizes = g_strdup ("256,500,1024");
  g_autofree char *compactness = g_strdup ("0.1");
  g_autofree char *json_path = NULL;
  g_autofree char *peer_sizes = NULL;
  int reps = 5;
  double gbps = 0.0;
  gboolean no_compute_floor = FALSE;
  SvCudaIssueRate rate;
  GOptionEntry entries[] = {
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes, "cube sides, comma separated", "LIST" },
    { "compactness", 0, 0, G_OPTION_ARG_STRING, &compactness,
      "compactness values, comma separated (default 0.1)", "LIST" },
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "timed runs per case (median)", "N" },
    { "peer-sizes", 0, 0, G_OPTION_ARG_STRING, &peer_sizes,
      "also time scikit-image (python3 from PATH) on these cube sides", "LIST" },
    { "no-compute-floor", 0, 0, G_OPTION_ARG_NONE, &no_compute_floor,
      "skip the CPU run that counts the assignment's compute floor", NULL },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "write the results as JSON", "FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("— CUDA backend benchmark");
  g_option_context_add_main_entries (ctx, entries, NULL);
  sv_backend_register (sv_backend_cuda_class ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  reps = MAX (reps, 1);
  if (!sv_cuda_copy_bandwidth ((gsize)1 << 30, &gbps, &error)
      || !sv_cuda_issue_rate (&rate, &error))
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }

  g_auto (GStrv) list = g_strsplit (sizes, ",", -1);
  g_auto (GStrv) clist = g_strsplit (compactness, ",", -1);
  const guint n_sizes = sizes[0] != '\0' ? g_strv_length (list) : 0;
  const guint n_c = compactness[0] != '\0' ? g_strv_length (clist) : 0;
  guint n_rows = 0;
  g_autofree Row *rows = g_new0 (Row, MAX (n_sizes * n_c, 1));
  for (guint i = 0; i < n_sizes; i++)
    {
      const guint n = (guint)g_ascii_strtoull (list[i], NULL, 10);
      g_autoptr (SvVolume) v = NULL;

      fprintf (stderr, "%u³: making the volume…\n", n);
      v = make_volume (n, &error);
      for (guint c = 0; v != NULL && c < n_c; c++)
        {
          const double cv = g_ascii_strtod (clist[c], NULL);

          if (!(cv > 0.0))
            {
              fprintf (stderr, "--compactness wants positive numbers; got %s\n", clist[c]);
              return 1;
            }
          if (!bench_case (v, cv, reps, gbps, no_compute_floor ? NULL : &rate, &rows[n_rows++],
                           &error))
            break;
        }
      if (error != NULL)
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
    }

  g_auto (GStrv) plist = g_strsplit (peer_sizes != NULL ? peer_sizes : "", ",", -1);
  guint n_peer = peer_sizes != NULL && peer_sizes[0] != '\0' ? g_strv_length (plist) : 0;
  g_autofree PeerRow *peer = g_new0 (PeerRow, MAX (n_peer, 1));
  for (guint i = 0; i < n_peer; i++)
    if (!peer_size ((guint)g_ascii_strtoull (plist[i], NULL, 10), reps, &peer[i], &error))
      {
        fprintf (stderr, "%s\n", error->message);
        return 1;
      }

  printf ("device-to-device copy bandwidth: %.0f GB/s (read + write)\n", gbps);
  printf ("peak issue (%s, sm_%d%d): %d lanes × %d SMs × %d schedulers × %.3f GHz = %.2f T lane "
          "instructions/s\n",
          rate.name, rate.major, rate.minor, rate.warp_size, rate.sms, rate.schedulers_per_sm,
          rate.clock_hz * 1e-9, rate.lane_instructions_per_s * 1e-12);
  printf (
      "median of %d runs after a warm-up; per-iteration kernel times; floor = bytes/bandwidth;\n"
      "compute floor = distances the exact rule needs per iteration (counted by a CPU run) × "
      "%d instructions ÷ peak issue\n",
      reps, instructions_per_evaluation (1));
  printf ("%6s %6s %8s %8s | %9s %9s %9s %9s | %9s %9s %9s %9s %23s %20s | %9s %9s | %9s %9s | "
          "%9s %s\n",
          "side", "C", "K", "labels", "e2e ms", "upload", "run", "download", "prepare", "bin/it",
          "assign/it", "floor", "compute floor assign/it", "assign/compute floor", "update/it",
          "floor", "connect", "floor", "slider ms", "connectivity");
  for (guint i = 0; i < n_rows; i++)
    {
      const Row *r = &rows[i];
      g_autofree char *cfloor = r->cpu_labels_equal < 0
                                    ? g_strdup ("-")
                                    : g_strdup_printf ("%.3f", r->floor_compute_assign_ms);
      g_autofree char *cratio
          = r->cpu_labels_equal < 0
                ? g_strdup ("-")
                : g_strdup_printf ("%.1fx", r->assign_ms / r->floor_compute_assign_ms);
      printf ("%6u %6g %8zu %8zu | %9.1f %9.1f %9.1f %9.1f | %9.1f %9.3f %9.3f %9.3f %23s %20s | "
              "%9.3f %9.3f | %9.1f %9.3f | %9.1f %s\n",
              r->n, r->compactness, r->k, r->n_labels, r->e2e_ms, r->set_volume_ms, r->run_ms,
              r->download_ms, r->prepare_ms, r->bin_ms, r->assign_ms, r->floor_assign_ms, cfloor,
              cratio,
              r->update_ms, r->floor_update_ms, r->connect_ms, r->floor_connect_ms, r->slider_ms,
              r->connectivity_on_host ? "host fallback" : "device");
      if (r->cpu_labels_equal >= 0)
        printf ("%6s compute floor: %.0f evaluations/it (%.2f a voxel), exact, counted in %.1f s "
                "on the CPU; its labels %s the CUDA run's\n",
                "", r->floor_evaluations, r->floor_evaluations / ((double)r->n * r->n * r->n),
                r->floor_count_s, r->cpu_labels_equal ? "equal" : "DIFFER FROM");
      printf ("%6s conn dev %.3f ms; slider run + labels published %.1f ms; labels %.3f ms\n", "",
              r->connect_device_ms, r->slider_publish_ms, r->labels_ms);
    }

  if (n_peer > 0)
    {
      printf ("\nscikit-image slic on the same volumes, same parameters (n_segments N/1000, "
              "compactness 0.1, 10 iterations, sigma 0, connectivity), median of its runs;\n"
              "ours = CUDA end to end, median of %d; ARI = adjusted Rand index of the two "
              "label maps; equal = voxels with the same label, both without connectivity\n",
              reps);
      printf ("%6s %10s %12s %5s %10s | %12s %10s | %9s | %8s %8s\n", "side", "skimage", "skimage s",
              "runs", "labels", "ours e2e ms", "labels", "ratio", "ARI", "equal");
      for (guint i = 0; i < n_peer; i++)
        {
          const PeerRow *r = &peer[i];
          if (!r->done)
            {
              printf ("%6u (scikit-image not run, see above)\n", r->n);
              continue;
            }
          printf ("%6u %10s %12.3f %5d %10zu | %12.1f %10zu | %8.0fx | %8.5f %8.5f\n", r->n,
                  r->version, r->sk_s, r->sk_runs, r->sk_n_labels, r->ours_e2e_ms,
                  r->ours_n_labels, r->sk_s * 1e3 / r->ours_e2e_ms, r->ari, r->equal_noconn);
        }
    }

  if (json_path != NULL)
    {
      g_autoptr (GString) j = g_string_new ("{\n");
      g_string_append_printf (j, "  \"copy_bandwidth_gbps\": %.1f,\n  \"reps\": %d,\n", gbps, reps);
      g_string_append_printf (
          j,
          "  \"issue_rate\": {\"device\": \"%s\", \"compute_capability\": \"%d.%d\", "
          "\"sms\": %d, \"schedulers_per_sm\": %d, \"warp_size\": %d, \"clock_ghz\": %.4f, "
          "\"lane_instructions_per_s\": %.6g},\n  \"rows\": [\n",
          rate.name, rate.major, rate.minor, rate.sms, rate.schedulers_per_sm, rate.warp_size,
          rate.clock_hz * 1e-9, rate.lane_instructions_per_s);
      for (guint i = 0; i < n_rows; i++)
        {
          const Row *r = &rows[i];
          g_autofree char *compute = NULL;
          if (r->cpu_labels_equal < 0)
            compute = g_strdup ("\"assign_compute_floor_ms\": null, \"assign_over_compute_floor\": "
                                "null, \"floor_evaluations_per_iter\": null");
          else
            compute = g_strdup_printf (
                "\"assign_compute_floor_ms\": %.4f, \"assign_over_compute_floor\": %.3f, "
                "\"floor_evaluations_per_iter\": %.1f, \"instructions_per_evaluation\": %d, "
                "\"floor_count_s\": %.2f, \"cpu_labels_equal\": %s",
                r->floor_compute_assign_ms, r->assign_ms / r->floor_compute_assign_ms,
                r->floor_evaluations, r->instructions_per_evaluation, r->floor_count_s,
                r->cpu_labels_equal ? "true" : "false");
          g_string_append_printf (
              j,
              "    {\"side\": %u, \"compactness\": %g, \"k\": %zu, \"n_labels\": %zu, "
              "\"e2e_ms\": %.3f, \"upload_ms\": %.3f, \"run_ms\": %.3f, \"download_ms\": %.3f, "
              "\"prepare_ms\": %.3f, \"bin_ms_per_iter\": %.4f, \"assign_ms_per_iter\": %.4f, "
              "\"assign_floor_ms\": %.4f, %s, "
              "\"update_ms_per_iter\": %.4f, \"update_floor_ms\": %.4f, "
              "\"labels_ms\": %.4f, \"connect_ms\": %.3f, \"connect_device_ms\": %.4f, "
              "\"connect_floor_ms\": %.4f, \"connectivity_on_host\": %s, "
              "\"slider_run_ms\": %.3f, \"slider_run_and_publish_ms\": %.3f}%s\n",
              r->n, r->compactness, r->k, r->n_labels, r->e2e_ms, r->set_volume_ms, r->run_ms,
              r->download_ms, r->prepare_ms, r->bin_ms, r->assign_ms, r->floor_assign_ms, compute,
              r->update_ms, r->floor_update_ms, r->labels_ms, r->connect_ms, r->connect_device_ms,
              r->floor_connect_ms, r->connectivity_on_host ? "true" : "false", r->slider_ms,
              r->slider_publish_ms, i + 1 < n_rows ? "," : "");
        }
      g_string_append (j, "  ],\n  \"peer\": [\n");
      for (guint i = 0; i < n_peer; i++)
        {
          const PeerRow *r = &peer[i];
          g_autofree char *eq = isnan (r->equal_noconn)
                                    ? g_strdup ("null")
                                    : g_strdup_printf ("%.6f", r->equal_noconn);
          if (!r->done)
            g_string_append_printf (j, "    {\"side\": %u, \"skimage_run\": false}", r->n);
          else
            g_string_append_printf (
                j,
                "    {\"side\": %u, \"skimage_run\": true, \"skimage_version\": \"%s\", "
                "\"skimage_s\": %.4f, \"skimage_runs\": %d, \"skimage_n_labels\": %zu, "
                "\"ours_e2e_ms\": %.3f, \"ours_n_labels\": %zu, \"ratio\": %.1f, "
                "\"adjusted_rand\": %.6f, \"equal_fraction_no_connectivity\": %s}",
                r->n, r->version, r->sk_s, r->sk_runs, r->sk_n_labels, r->ours_e2e_ms,
                r->ours_n_labels, r->sk_s * 1e3 / r->ours_e2e_ms, r->ari, eq);
          g_string_append (j, i + 1 < n_peer ? ",\n" : "\n");
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

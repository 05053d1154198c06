/* Tests of a CUDA job's labels staying on the device (sv-job.h,
 * sv-cuda-gl.h): the window's result hook leaves them in a published device
 * buffer, the host copy is made only when asked, and single voxels are read
 * on the device. What comes back must equal the CPU reference byte for
 * byte, also after later runs. Every test skips with the reason where there
 * is no CUDA device. */
#define G_LOG_DOMAIN "sv-test-cuda-labels"

#include <math.h>
#include <string.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-error.h"
#include "supervox/sv-job.h"
#include "sv-cuda-gl.h"
#include "sv-cuda.h"
#include "sv-test-cuda.h"

#define NZ 19
#define NY 41
#define NX 36

static SvVolume *
make_volume (guint32 seed)
{
  return sv_test_blocky_volume (NZ, NY, NX, 1, seed);
}

/* Different runs: the labels of each are told apart. */
static void
params_of_run (guint run, SvSlicParams *p)
{
  sv_slic_params_init_defaults (p);
  p->n_segments = 30 + 25 * run;
  p->compactness = 0.05 + 0.1 * run;
}

static gint32 *
cpu_labels (const SvVolume *v, const SvSlicParams *p)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) cpu = sv_backend_new ("cpu", &error);
  gint32 *labels = g_new (gint32, sv_volume_n_voxels (v));

  g_assert_no_error (error);
  g_assert_true (sv_backend_set_volume (cpu, v, NULL, &error));
  g_assert_true (sv_backend_run (cpu, p, NULL, NULL, &error));
  g_assert_true (sv_backend_get_labels (cpu, labels, &error));
  g_assert_no_error (error);
  return labels;
}

typedef struct
{
  SvCudaLabelsPool *pool;
  SvJobResult *last;
} Seen;

/* The window's hook (sv-window-job.c) without its question whether a view
 * uses interop. */
static void
keep_on_device (SvBackend *backend, SvJobResult *result, gpointer user_data)
{
  Seen *s = user_data;
  g_autoptr (GError) error = NULL;

  if (sv_backend_get_device_labels (backend, NULL) == NULL)
    return;
  if (!sv_cuda_labels_attach (s->pool, backend, result, &error))
    g_assert_no_error (error);
}

static void
on_result (SvJobResult *result, gpointer user_data)
{
  Seen *s = user_data;

  g_clear_pointer (&s->last, sv_job_result_unref);
  s->last = sv_job_result_ref (result);
}

static void
on_progress (guint64 generation, SvStage stage, guint i, guint n, gpointer user_data)
{
}

static void
on_error (guint64 generation, const GError *error, gpointer user_data)
{
  g_error ("job failed: %s", error->message);
}

static const SvJobCallbacks callbacks = { on_progress, on_result, on_error };

/* Runs `run` on the job to its end and returns its result. */
static SvJobResult *
run_job (SvJob *job, Seen *s, guint run)
{
  SvJobRequest request;

  sv_job_request_init (&request);
  g_strlcpy (request.backend, "cuda", sizeof request.backend);
  params_of_run (run, &request.params);
  request.generation = run + 1;
  sv_job_submit (job, &request);
  while (!s->last || s->last->generation < request.generation)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpstr (s->last->backend_name, ==, "cuda");
  return sv_job_result_ref (s->last);
}

/* Voxels probed: corners, the centre and a fixed random sample. */
#define N_PROBES 64

static void
probe_voxels (const SvJobResult *r, guint zyx[N_PROBES][3], gint32 *labels)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);

  for (guint i = 0; i < N_PROBES; i++)
    {
      if (i < 8)
        {
          zyx[i][0] = i & 1 ? NZ - 1 : 0;
          zyx[i][1] = i & 2 ? NY - 1 : 0;
          zyx[i][2] = i & 4 ? NX - 1 : 0;
        }
      else
        {
          zyx[i][0] = (guint)g_rand_int_range (rand, 0, NZ);
          zyx[i][1] = (guint)g_rand_int_range (rand, 0, NY);
          zyx[i][2] = (guint)g_rand_int_range (rand, 0, NX);
        }
      labels[i] = sv_job_result_probe_label (r, zyx[i][0], zyx[i][1], zyx[i][2]);
    }
}

static gpointer
fetch_thread (gpointer data)
{
  g_autoptr (GError) error = NULL;
  const SvLabels *l = sv_job_result_get_labels (data, &error);

  g_assert_no_error (error);
  return (gpointer)l;
}

static void
test_labels_stay_on_device (void)
{
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (SvJobResult) first = NULL;
  g_autoptr (SvJobResult) second = NULL;
  g_autoptr (SvJobResult) third = NULL;
  g_autoptr (SvJobResult) fourth = NULL;
  g_autoptr (GError) error = NULL;
  const gsize n = (gsize)NZ * NY * NX;
  SvJobResult *results[4];
  guint zyx[N_PROBES][3];
  gint32 probed[N_PROBES];
  Seen s = { 0 };
  const SvLabels *l;
  GThread *thread;
  SvJob *job;

  if (!sv_test_need_cuda ())
    return;
  v = make_volume (5);
  s.pool = sv_cuda_labels_pool_new ();
  job = sv_job_new (v, NULL, &callbacks, &s);
  sv_job_set_result_hook (job, keep_on_device, &s);

  /* The labels stay on the device, and probing a voxel does not bring them over. */
  first = run_job (job, &s, 0);
  g_assert_nonnull (first->device_labels);
  g_assert_false (sv_job_result_has_host_labels (first));
  probe_voxels (first, zyx, probed);
  g_assert_false (sv_job_result_has_host_labels (first));

  /* More runs while the first result is held: the second and third take
   * the pool's other buffers; the fourth finds all three held and gets
   * host labels (the path the window then draws from memory). */
  second = run_job (job, &s, 1);
  g_assert_nonnull (second->device_labels);
  g_assert_false (sv_job_result_has_host_labels (second));
  third = run_job (job, &s, 2);
  g_assert_nonnull (third->device_labels);
  fourth = run_job (job, &s, 3);
  g_assert_null (fourth->device_labels);
  g_assert_true (sv_job_result_has_host_labels (fourth));
  sv_job_free (job);
  g_clear_pointer (&s.last, sv_job_result_unref);

  /* The first result's labels are the CPU's, untouched by the later runs;
   * the second's are fetched on another thread (as the quality worker does). */
  thread = g_thread_new ("fetch", fetch_thread, second);
  l = sv_job_result_get_labels (first, &error);
  g_assert_no_error (error);
  g_assert_true (g_thread_join (thread) == sv_job_result_get_labels (second, NULL));
  g_assert_true (sv_job_result_has_host_labels (first));
  g_assert_true (sv_job_result_get_labels (first, NULL) == l);
  g_assert_cmpuint (l->nz, ==, NZ);
  g_assert_cmpuint (l->ny, ==, NY);
  g_assert_cmpuint (l->nx, ==, NX);
  for (guint i = 0; i < N_PROBES; i++)
    g_assert_cmpint (probed[i], ==, l->data[((gsize)zyx[i][0] * NY + zyx[i][1]) * NX + zyx[i][2]]);

  results[0] = first;
  results[1] = second;
  results[2] = third;
  results[3] = fourth;
  for (guint run = 0; run < 4; run++)
    {
      SvSlicParams p;
      g_autofree gint32 *expected = NULL;

      params_of_run (run, &p);
      expected = cpu_labels (v, &p);
      l = sv_job_result_get_labels (results[run], &error);
      g_assert_no_error (error);
      g_assert_cmpmem (l->data, n * sizeof (gint32), expected, n * sizeof (gint32));
      /* Probes after the host copy read it. */
      g_assert_cmpint (sv_job_result_probe_label (results[run], NZ / 2, NY / 3, NX - 2), ==,
                       expected[((gsize)(NZ / 2) * NY + NY / 3) * NX + NX - 2]);
    }
  sv_cuda_labels_pool_free (s.pool);
}

/* Probes of every voxel of a result still on the device equal the host
 * copy made afterwards. */
static void
test_probe_every_voxel (void)
{
  g_autoptr (SvVolume) v = NULL;
  g_autoptr (SvJobResult) r = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree gint32 *probed = NULL;
  const SvLabels *l;
  Seen s = { 0 };
  SvJob *job;
  gsize i = 0;

  if (!sv_test_need_cuda ())
    return;
  v = make_volume (9);
  s.pool = sv_cuda_labels_pool_new ();
  job = sv_job_new (v, NULL, &callbacks, &s);
  sv_job_set_result_hook (job, keep_on_device, &s);
  r = run_job (job, &s, 1);
  sv_job_free (job);
  g_clear_pointer (&s.last, sv_job_result_unref);

  probed = g_new (gint32, (gsize)NZ * NY * NX);
  for (guint z = 0; z < NZ; z++)
    for (guint y = 0; y < NY; y++)
      for (guint x = 0; x < NX; x++)
        probed[i++] = sv_job_result_probe_label (r, z, y, x);
  g_assert_false (sv_job_result_has_host_labels (r));
  l = sv_job_result_get_labels (r, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (probed, i * sizeof (gint32), l->data, i * sizeof (gint32));
  sv_cuda_labels_pool_free (s.pool);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  sv_backend_register (sv_backend_cuda_class ());
  g_test_add_func ("/cuda/job/labels-stay-on-device", test_labels_stay_on_device);
  g_test_add_func ("/cuda/job/probe-every-voxel", test_probe_every_voxel);
  return g_test_run ();
}

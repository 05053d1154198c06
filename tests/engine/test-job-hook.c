/* Tests of the job's result hook (supervox/sv-job.h): the way the GUI attaches
 * backend-specific data, such as the CUDA labels published for GL interop,
 * to a result without the engine knowing about it. */
#define G_LOG_DOMAIN "test-job-hook"

#include <string.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-error.h"
#include "supervox/sv-job.h"

typedef struct
{
  GThread *main_thread;
  gint hook_calls;          /* atomic */
  gint hook_on_main;        /* atomic */
  gint data_freed;          /* atomic */
  SvJobResult *last;
} Seen;

/* What the hook attaches: the first label of the backend's last run, read
 * through the backend while it still holds that run. */
typedef struct
{
  Seen *seen;
  gint32 first_label;
} Attached;

static void
attached_free (gpointer data)
{
  Attached *a = data;
  g_atomic_int_inc (&a->seen->data_freed);
  g_free (a);
}

static void
hook (SvBackend *backend, SvJobResult *result, gpointer user_data)
{
  Seen *s = user_data;
  Attached *a = g_new0 (Attached, 1);
  g_autofree gint32 *labels = NULL;
  g_autoptr (GError) error = NULL;

  g_atomic_int_inc (&s->hook_calls);
  if (g_thread_self () == s->main_thread)
    g_atomic_int_inc (&s->hook_on_main);
  g_assert_cmpstr (sv_backend_get_name (backend), ==, result->backend_name);
  /* The hook comes before the job takes the labels: the backend still
   * holds them, so a hook may keep them where they are (on the device). */
  g_assert_false (sv_job_result_has_host_labels (result));
  labels = g_new (gint32, (gsize)result->labels_shape[0] * result->labels_shape[1]
                              * result->labels_shape[2]);
  g_assert_true (sv_backend_get_labels (backend, labels, &error));
  g_assert_no_error (error);
  a->seen = s;
  a->first_label = labels[0];
  result->device_data = a;
  result->device_data_free = attached_free;
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

static void
test_hook_attaches_data (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) v = sv_volume_new (4, 20, 24, 1, &error);
  SvJobRequest request;
  Seen s = { 0 };
  SvJob *job;

  g_assert_no_error (error);
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = (float)((i / 7) % 3) * 0.4f;
  s.main_thread = g_thread_self ();
  job = sv_job_new (v, NULL, &callbacks, &s);
  sv_job_set_result_hook (job, hook, &s);

  for (guint64 g = 1; g <= 3; g++)
    {
      sv_job_request_init (&request);
      g_strlcpy (request.backend, "cpu", sizeof request.backend);
      request.params.n_segments = 6 * (gint64)g;
      request.generation = g;
      sv_job_submit (job, &request);
      while (!s.last || s.last->generation < g)
        g_main_context_iteration (NULL, TRUE);
      g_assert_nonnull (s.last->device_data);
      /* Without device_labels the job took the backend's labels after the hook. */
      g_assert_true (sv_job_result_has_host_labels (s.last));
      g_assert_cmpint (((Attached *)s.last->device_data)->first_label, ==,
                       sv_job_result_get_labels (s.last, NULL)->data[0]);
    }
  sv_job_free (job);

  g_assert_cmpint (g_atomic_int_get (&s.hook_calls), ==, 3);
  g_assert_cmpint (g_atomic_int_get (&s.hook_on_main), ==, 0);
  /* The two earlier results are gone, and their data with them. */
  g_assert_cmpint (g_atomic_int_get (&s.data_freed), ==, 2);
  g_clear_pointer (&s.last, sv_job_result_unref);
  g_assert_cmpint (g_atomic_int_get (&s.data_freed), ==, 3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/job/result-hook/attaches-data-on-worker", test_hook_attaches_data);
  return g_test_run ();
}

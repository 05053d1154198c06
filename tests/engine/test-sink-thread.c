/* Tests of the slab sink on its own thread: the sink sees every slab in
 * the order pushed, with its contents, on one thread other than the
 * caller's, while the caller goes on (the first slab waits for the
 * caller's third); a sink that fails stops taking
 * slabs, the caller's next take or the finish reports its error once,
 * and the caller's own error wins over it. */
#define G_LOG_DOMAIN "sv-test"

#include <gio/gio.h>

#include "supervox/sv-error.h"
#include "supervox/sv-sink-thread.h"

typedef struct
{
  GThread *caller;
  GArray *seen;  /* z0, z1, first value of each slab */
  guint fail_at; /* fail on the slab starting here (G_MAXUINT: never) */
  gint slow_us;  /* time the sink takes per slab */
  guint n_calls;
  gboolean wait_first; /* the first slab waits for the caller's third */
  gint pushed;         /* slabs the caller has pushed (atomic) */
  gboolean overlapped; /* the caller pushed more while the sink had the first */
} Recorder;

static gboolean
record (guint z0, guint z1, const gint32 *labels, gpointer user_data, GError **error)
{
  Recorder *r = user_data;

  g_assert_true (g_thread_self () != r->caller);
  r->n_calls++;
  if (z0 == r->fail_at)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "disk full at slice %u", z0);
      return FALSE;
    }
  g_usleep (r->slow_us);
  /* The first slab waits (up to 10 s) for the caller to push two more. */
  for (int i = 0; r->wait_first && z0 == 0 && i < 10000 && !r->overlapped; i++)
    {
      r->overlapped = g_atomic_int_get (&r->pushed) >= 3;
      g_usleep (1000);
    }
  /* Every value of the slab is its first slice's number. */
  for (gsize i = 0; i < (gsize)(z1 - z0) * 6; i++)
    g_assert_cmpint (labels[i], ==, (gint32)z0);
  g_array_append_val (r->seen, z0);
  g_array_append_val (r->seen, z1);
  return TRUE;
}

static void
fill (gint32 *buffer, guint z0, guint z1)
{
  for (gsize i = 0; i < (gsize)(z1 - z0) * 6; i++)
    buffer[i] = (gint32)z0;
}

static void
test_in_order (void)
{
  Recorder r
      = { g_thread_self (), g_array_new (FALSE, FALSE, sizeof (guint)), G_MAXUINT, 200, 0, TRUE };
  g_autoptr (GError) error = NULL;
  SvSinkThread *t = sv_sink_thread_new (record, &r, 4 * 6, 3);
  guint z0 = 0;

  g_assert_nonnull (t);
  /* Slabs of 1 to 4 slices of 6 values. */
  for (guint i = 0; i < 40; i++)
    {
      guint z1 = z0 + 1 + i % 4;
      gint32 *buffer = sv_sink_thread_take (t, &error);
      g_assert_no_error (error);
      fill (buffer, z0, z1);
      sv_sink_thread_push (t, z0, z1, buffer);
      g_atomic_int_inc (&r.pushed);
      z0 = z1;
    }
  g_assert_true (sv_sink_thread_finish (t, TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (r.overlapped);
  g_assert_cmpuint (r.seen->len, ==, 80);
  for (guint i = 0, z = 0; i < 40; i++)
    {
      g_assert_cmpuint (g_array_index (r.seen, guint, 2 * i), ==, z);
      z = g_array_index (r.seen, guint, 2 * i + 1);
      g_assert_cmpuint (z - g_array_index (r.seen, guint, 2 * i), ==, 1 + i % 4);
    }
  g_array_unref (r.seen);
}

static void
test_sink_fails (void)
{
  Recorder r = { g_thread_self (), g_array_new (FALSE, FALSE, sizeof (guint)), 6, 0 };
  g_autoptr (GError) error = NULL;
  SvSinkThread *t = sv_sink_thread_new (record, &r, 2 * 6, 2);
  guint pushed = 0;

  g_assert_nonnull (t);
  for (guint z0 = 0; z0 < 40; z0 += 2)
    {
      gint32 *buffer = sv_sink_thread_take (t, &error);
      if (buffer == NULL)
        break;
      fill (buffer, z0, z0 + 2);
      sv_sink_thread_push (t, z0, z0 + 2, buffer);
      pushed++;
    }
  /* The take after the failure says why; nothing after it was written. */
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
  g_assert_cmpstr (error->message, ==, "disk full at slice 6");
  g_assert_cmpuint (pushed, <, 20);
  g_clear_error (&error);
  g_assert_false (sv_sink_thread_finish (t, TRUE, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
  g_assert_cmpuint (r.n_calls, ==, 4);
  g_assert_cmpuint (r.seen->len, ==, 6);
  g_array_unref (r.seen);
}

static void
test_caller_error_wins (void)
{
  Recorder r = { g_thread_self (), g_array_new (FALSE, FALSE, sizeof (guint)), 0, 0 };
  g_autoptr (GError) error = NULL;
  SvSinkThread *t = sv_sink_thread_new (record, &r, 6, 2);
  gint32 *buffer = sv_sink_thread_take (t, &error);

  g_assert_no_error (error);
  fill (buffer, 0, 1);
  sv_sink_thread_push (t, 0, 1, buffer);
  g_set_error (&error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
  g_assert_false (sv_sink_thread_finish (t, FALSE, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_array_unref (r.seen);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/sink-thread/in-order", test_in_order);
  g_test_add_func ("/engine/sink-thread/sink-fails", test_sink_fails);
  g_test_add_func ("/engine/sink-thread/caller-error-wins", test_caller_error_wins);
  return g_test_run ();
}

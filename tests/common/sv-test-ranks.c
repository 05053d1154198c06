/* Supervox tests: MPI ranks as threads of one process (SvStreamRanks
 * with a table written for the tests), so that the engine's side of a
 * run shared by ranks is checked without MPI; tests/cli/test-cli-mpi.c
 * runs real MPI ranks. */
#include "sv-test-ranks.h"

#include <string.h>

#include "supervox/sv-error.h"

typedef struct
{
  guint n;
  GMutex lock;
  GCond cond;
  guint arrived;
  guint64 generation;
  gconstpointer *slots;  /* each rank's buffer during a collective */
  GAsyncQueue **mailbox; /* labels from rank r to rank 0 */
} Team;

typedef struct
{
  gboolean ok;
  gint32 *labels;
  gsize n;
} Letter;

typedef struct
{
  Team *team;
  SvStreamRanks ranks;
  SvTestRankRun run;
  gpointer user_data;
  gboolean ok;
  SvStreamReport report;
  GError *error;
} Member;

/* Every rank waits here until all have arrived. */
static void
team_sync (Team *t)
{
  guint64 generation;

  g_mutex_lock (&t->lock);
  generation = t->generation;
  if (++t->arrived == t->n)
    {
      t->arrived = 0;
      t->generation++;
      g_cond_broadcast (&t->cond);
    }
  else
    while (generation == t->generation)
      g_cond_wait (&t->cond, &t->lock);
  g_mutex_unlock (&t->lock);
}

static gboolean
team_agree (gpointer self, const GError *local, GError **error)
{
  Member *m = self;
  Team *t = m->team;
  const GError *first = NULL;
  guint first_rank = 0;

  t->slots[m->ranks.rank] = local;
  team_sync (t);
  for (guint r = 0; r < t->n && first == NULL; r++)
    if (t->slots[r] != NULL)
      {
        first = t->slots[r];
        first_rank = r;
      }
  if (first != NULL)
    g_set_error (error, SV_ENGINE_ERROR, first->code, "rank %u: %s", first_rank, first->message);
  team_sync (t);
  return first == NULL;
}

/* An element-wise reduction: every rank reads all buffers, then writes its
 * own once all have read. */
#define TEAM_REDUCE(name, type, combine)                                                           \
  static void name (gpointer self, type *values, gsize n)                                          \
  {                                                                                                \
    Member *m = self;                                                                              \
    Team *t = m->team;                                                                             \
    g_autofree type *result = g_new (type, MAX (n, 1));                                            \
                                                                                                   \
    t->slots[m->ranks.rank] = values;                                                              \
    team_sync (t);                                                                                 \
    for (gsize i = 0; i < n; i++)                                                                  \
      {                                                                                            \
        result[i] = ((const type *)t->slots[0])[i];                                                \
        for (guint r = 1; r < t->n; r++)                                                           \
          {                                                                                        \
            type v = ((const type *)t->slots[r])[i];                                               \
            result[i] = combine;                                                                   \
          }                                                                                        \
      }                                                                                            \
    team_sync (t);                                                                                 \
    memcpy (values, result, n * sizeof (type));                                                    \
  }

TEAM_REDUCE (team_sum_int64, gint64, result[i] + v)
TEAM_REDUCE (team_max_int64, gint64, MAX (result[i], v))
TEAM_REDUCE (team_max_float, float, MAX (result[i], v))

static void
team_gather (gpointer self, gconstpointer mine, gsize bytes, gpointer all)
{
  Member *m = self;
  Team *t = m->team;

  t->slots[m->ranks.rank] = mine;
  team_sync (t);
  for (guint r = 0; r < t->n; r++)
    memcpy ((guint8 *)all + r * bytes, t->slots[r], bytes);
  team_sync (t);
}

static void
team_send_labels (gpointer self, const gint32 *labels, gsize n, gboolean ok)
{
  Member *m = self;
  Letter *letter = g_new0 (Letter, 1);

  letter->ok = ok;
  letter->n = n;
  letter->labels = ok ? g_memdup2 (labels, n * sizeof *labels) : NULL;
  g_async_queue_push (m->team->mailbox[m->ranks.rank], letter);
}

/* Every rank copies the root's bytes once all have arrived. */
static void
team_broadcast (gpointer self, guint root, gpointer data, gsize bytes)
{
  Member *m = self;
  Team *t = m->team;

  t->slots[m->ranks.rank] = data;
  team_sync (t);
  if (m->ranks.rank != root)
    memcpy (data, t->slots[root], bytes);
  team_sync (t);
}

/* Each rank publishes its send buffer and counts; every rank then copies
 * its part out of every other's. */
typedef struct
{
  gconstpointer send;
  const gsize *send_bytes;
} Outbox;

static gint exchanges;

guint
sv_test_ranks_n_exchanges (void)
{
  return (guint)g_atomic_int_get (&exchanges);
}

static void
team_exchange (gpointer self, gconstpointer send, const gsize *send_bytes, gpointer recv,
               const gsize *recv_bytes)
{
  Member *m = self;
  Team *t = m->team;
  const Outbox mine = { send, send_bytes };
  gsize at = 0;

  if (m->ranks.rank == 0)
    g_atomic_int_inc (&exchanges);
  t->slots[m->ranks.rank] = &mine;
  team_sync (t);
  for (guint r = 0; r < t->n; r++)
    {
      const Outbox *from = t->slots[r];
      gsize offset = 0;

      for (guint q = 0; q < m->ranks.rank; q++)
        offset += from->send_bytes[q];
      g_assert_cmpuint (from->send_bytes[m->ranks.rank], ==, recv_bytes[r]);
      memcpy ((guint8 *)recv + at, (const guint8 *)from->send + offset, recv_bytes[r]);
      at += recv_bytes[r];
    }
  team_sync (t);
}

static gboolean
team_recv_labels (gpointer self, guint from, gint32 *labels, gsize n)
{
  Member *m = self;
  Letter *letter = g_async_queue_pop (m->team->mailbox[from]);
  gboolean ok = letter->ok;

  if (ok)
    {
      g_assert_cmpuint (letter->n, ==, n);
      memcpy (labels, letter->labels, n * sizeof *labels);
    }
  g_free (letter->labels);
  g_free (letter);
  return ok;
}

static gpointer
member_main (gpointer data)
{
  Member *m = data;

  m->ok = m->run (&m->ranks, m->user_data, &m->report, &m->error);
  return NULL;
}

gboolean
sv_test_ranks_run (guint n, SvTestRankRun run, gpointer user_data, SvStreamReport *reports,
                   GError **error)
{
  Team team = { .n = n };
  g_autofree Member *members = g_new0 (Member, n);
  g_autofree GThread **threads = g_new (GThread *, n);
  gboolean ok;

  g_mutex_init (&team.lock);
  g_cond_init (&team.cond);
  team.slots = g_new0 (gconstpointer, n);
  team.mailbox = g_new (GAsyncQueue *, n);
  for (guint r = 0; r < n; r++)
    {
      team.mailbox[r] = g_async_queue_new ();
      members[r] = (Member){ .team = &team, .run = run, .user_data = user_data };
      members[r].ranks = (SvStreamRanks){
        .rank = r,
        .n_ranks = n,
        .self = &members[r],
        .agree = team_agree,
        .sum_int64 = team_sum_int64,
        .max_int64 = team_max_int64,
        .max_float = team_max_float,
        .gather = team_gather,
        .send_labels = team_send_labels,
        .recv_labels = team_recv_labels,
        .broadcast = team_broadcast,
        .exchange = team_exchange,
      };
    }
  for (guint r = 0; r < n; r++)
    threads[r] = g_thread_new ("rank", member_main, &members[r]);
  for (guint r = 0; r < n; r++)
    g_thread_join (threads[r]);
  ok = members[0].ok;
  for (guint r = 0; r < n; r++)
    {
      /* The ranks agree: the same outcome and message everywhere, and no
       * message left unread. */
      g_assert_cmpint (members[r].ok, ==, ok);
      if (!ok)
        g_assert_cmpstr (members[r].error->message, ==, members[0].error->message);
      if (r > 0)
        g_clear_error (&members[r].error);
      if (reports != NULL)
        reports[r] = members[r].report;
      g_assert_cmpint (g_async_queue_length (team.mailbox[r]), ==, 0);
      g_async_queue_unref (team.mailbox[r]);
    }
  if (!ok)
    g_propagate_error (error, members[0].error);
  g_free (team.slots);
  g_free (team.mailbox);
  g_mutex_clear (&team.lock);
  g_cond_clear (&team.cond);
  return ok;
}

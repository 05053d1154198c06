/* Supervox engine: a streamed run shared by several processes (MPI ranks,
 * through the caller's SvStreamRanks table). Each rank owns a contiguous
 * z range; the points where the ranks meet are here: agreeing on success
 * at each step boundary, so that a rank that fails stops every rank at the
 * same place instead of leaving them waiting, and handing the labels to
 * rank 0 in z order, so that connectivity and numbering run there over the
 * whole volume exactly as in one process. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

void
sv_stream_rank_range (guint nz, guint rank, guint n_ranks, guint *z0, guint *z1)
{
  g_return_if_fail (n_ranks > 0 && rank < n_ranks);

  *z0 = (guint)((guint64)nz * rank / n_ranks);
  *z1 = (guint)((guint64)nz * (rank + 1) / n_ranks);
}

gboolean
sv_stream_ranks_agree (const SvStreamRanks *ranks, gboolean ok, GError **error)
{
  g_autoptr (GError) combined = NULL;

  if (ranks == NULL || ranks->n_ranks <= 1)
    return ok;
  g_return_val_if_fail (ok || error == NULL || *error != NULL, FALSE);
  if (ranks->agree (ranks->self, ok || error == NULL ? NULL : *error, &combined))
    return TRUE;
  if (error != NULL)
    {
      g_clear_error (error);
      g_propagate_error (error, g_steal_pointer (&combined));
    }
  return FALSE;
}

/* Rank 0: receives rank r's slices [z0, z1) and hands them to `store`;
 * after a failure it goes on receiving (and dropping) so that no sender
 * is left blocked. */
static gboolean
receive_range (const SvStreamRanks *ranks, guint r, SvSlabSink store, gpointer user_data, guint z0,
               guint z1, gsize plane, gint32 *buffer, guint depth, gboolean ok, GError **error)
{
  for (guint a = z0; a < z1; a += depth)
    {
      guint b = MIN (a + depth, z1);

      if (!ranks->recv_labels (ranks->self, r, buffer, (gsize)(b - a) * plane))
        return ok;
      if (ok && !store (a, b, buffer, user_data, error))
        ok = FALSE;
    }
  return ok;
}

gboolean
sv__stream_gather_labels (const SvStreamRanks *ranks, const guint8 *taken, gboolean ok,
                          SvSlabSource own, SvSlabSink store, gpointer user_data, guint nz,
                          gsize plane, gint32 *buffer, guint depth, GError **error)
{
  guint z0, z1;

  if (ranks == NULL || ranks->n_ranks <= 1)
    return ok;
  if (ok && ranks->rank == 0)
    {
      /* Rank 0's own slices are where its run keeps them already. */
      for (guint r = 1; r < ranks->n_ranks; r++)
        {
          if (taken != NULL && taken[r])
            continue;
          sv_stream_rank_range (nz, r, ranks->n_ranks, &z0, &z1);
          ok = receive_range (ranks, r, store, user_data, z0, z1, plane, buffer, depth, ok, error);
        }
    }
  else if (ok && (taken == NULL || !taken[ranks->rank]))
    {
      sv_stream_rank_range (nz, ranks->rank, ranks->n_ranks, &z0, &z1);
      for (guint a = z0; a < z1; a += depth)
        {
          guint b = MIN (a + depth, z1);

          if (!own (a, b, buffer, user_data, error))
            {
              ranks->send_labels (ranks->self, NULL, 0, FALSE);
              ok = FALSE;
              break;
            }
          ranks->send_labels (ranks->self, buffer, (gsize)(b - a) * plane, TRUE);
        }
    }
  return sv_stream_ranks_agree (ranks, ok, error);
}

/* Supervox engine: the ranks' cluster sums added where their slabs reach.
 *
 * A rank's slabs add to the sums of a band of clusters only: those whose
 * centre lies within a window's reach of its slices (seeds are numbered z
 * first, so the band is a run of cluster numbers). Adding every cluster's
 * sums over all ranks each iteration (8.6 M clusters at 2048³: 345 MB in
 * an MPI_Allreduce) moved mostly zeros. Instead each rank owns an equal
 * run of cluster numbers: every rank sends the part of its band that
 * another owns to that owner (SvStreamRanks.exchange), each owner adds
 * what it receives to its own part, makes those clusters' centres, and
 * the ranks share the centres they made (SvStreamRanks.gather). Every
 * rank then holds every centre, the same as after adding all sums
 * everywhere: a centre is a function of its cluster's exact integer sums
 * alone. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "internal.h"
#include "stream-run-private.h"

/* Owner r's clusters: [k·r/n, k·(r+1)/n). */
static void
owned (gsize k, guint r, guint n, gsize *k0, gsize *k1)
{
  *k0 = (gsize)((guint64)k * r / n);
  *k1 = (gsize)((guint64)k * (r + 1) / n);
}

void
sv__stream_rank_band (const Run *run, gsize *b0, gsize *b1)
{
  const SvClusters *clusters = &run->clusters;
  const gsize nf = 3 + clusters->nc;
  /* As a slab's worker bounds its band (stream-workers.c), over all of
   * this rank's slices. */
  const double reach = 2.0 * run->ctx.window_step[0] + 2.0;
  const double zlo = run->z_begin, zhi = run->z_end;

  *b0 = *b1 = 0;
  for (gsize k = 0; k < clusters->k; k++)
    {
      const double cz = clusters->centres[k * nf];

      if (!clusters->alive[k] || cz + reach < zlo || cz - reach >= zhi)
        continue;
      if (*b1 == 0)
        *b0 = k;
      *b1 = k + 1;
    }
}

gboolean
sv__stream_rank_sums_apply (Run *run, gint64 *sums, gsize b0, gsize b1)
{
  const SvStreamRanks *ranks = run->ranks;
  SvClusters *clusters = &run->clusters;
  const guint n = ranks->n_ranks, me = ranks->rank;
  const gsize k = clusters->k, ns = 4 + clusters->nc, nf = 3 + clusters->nc;
  const gsize sum_bytes = ns * sizeof (gint64);
  /* A cluster's centre and whether it lives, as the ranks share them. */
  const gsize centre_bytes = nf * sizeof (float) + 1;
  const gsize most_owned = (k + n - 1) / n;
  gint64 mine[2] = { (gint64)b0, (gint64)b1 };
  g_autofree gint64 *bands = NULL;
  g_autofree gsize *send_bytes = NULL, *recv_bytes = NULL;
  g_autofree guint8 *send = NULL, *recv = NULL, *shared = NULL;
  gsize o0, o1, total_send = 0, total_recv = 0, at;
  guint64 largest = 0;

  if (ranks->exchange == NULL || ranks->gather == NULL || k == 0
      || g_strcmp0 (g_getenv ("SV_RANK_SUMS"), "all") == 0)
    return FALSE;
  bands = g_new (gint64, 2 * (gsize)n);
  ranks->gather (ranks->self, mine, sizeof mine, bands);
  /* Every rank sees every band, so each decides alike whether the
   * messages fit MPI's int counts. */
  for (guint s = 0; s < n; s++)
    {
      guint64 out = 0;

      for (guint t = 0; t < n; t++)
        {
          gsize t0, t1;

          owned (k, t, n, &t0, &t1);
          if (t != s)
            out += (guint64)MAX ((gint64)MIN ((gsize)bands[2 * s + 1], t1)
                                     - (gint64)MAX ((gsize)bands[2 * s], t0),
                                 0)
                   * sum_bytes;
        }
      largest = MAX (largest, out);
    }
  if (largest >= (guint64)G_MAXINT32 || (guint64)most_owned * centre_bytes >= (guint64)G_MAXINT32)
    return FALSE;

  owned (k, me, n, &o0, &o1);
  send_bytes = g_new0 (gsize, n);
  recv_bytes = g_new0 (gsize, n);
  for (guint t = 0; t < n; t++)
    {
      gsize t0, t1;

      owned (k, t, n, &t0, &t1);
      if (t != me && MIN (b1, t1) > MAX (b0, t0))
        send_bytes[t] = (MIN (b1, t1) - MAX (b0, t0)) * sum_bytes;
      if (t != me && MIN ((gsize)bands[2 * t + 1], o1) > MAX ((gsize)bands[2 * t], o0))
        recv_bytes[t]
            = (MIN ((gsize)bands[2 * t + 1], o1) - MAX ((gsize)bands[2 * t], o0)) * sum_bytes;
      total_send += send_bytes[t];
      total_recv += recv_bytes[t];
    }
  send = g_malloc (MAX (total_send, 1));
  recv = g_malloc (MAX (total_recv, 1));
  at = 0;
  for (guint t = 0; t < n; t++)
    {
      gsize t0, t1;

      owned (k, t, n, &t0, &t1);
      if (send_bytes[t] > 0)
        memcpy (send + at, sums + MAX (b0, t0) * ns, send_bytes[t]);
      at += send_bytes[t];
    }
  ranks->exchange (ranks->self, send, send_bytes, recv, recv_bytes);
  /* Exact integers: the order the ranks' parts are added in does not
   * matter. */
  at = 0;
  for (guint s = 0; s < n; s++)
    {
      const gint64 *part = (const gint64 *)(const void *)(recv + at);
      const gsize first = MAX ((gsize)bands[2 * s], o0);

      for (gsize i = 0; i < recv_bytes[s] / sizeof (gint64); i++)
        sums[first * ns + i] += part[i];
      at += recv_bytes[s];
    }
  sv__slic_centres_from_sums_range (&run->ctx, sums, clusters, o0, o1);

  /* The centres each owner made, to every rank. */
  g_clear_pointer (&send, g_free);
  send = g_malloc0 (MAX (most_owned * centre_bytes, 1));
  for (gsize c = o0; c < o1; c++)
    {
      memcpy (send + (c - o0) * centre_bytes, clusters->centres + c * nf, nf * sizeof (float));
      send[(c - o0) * centre_bytes + nf * sizeof (float)] = clusters->alive[c];
    }
  shared = g_malloc (MAX ((gsize)n * most_owned * centre_bytes, 1));
  ranks->gather (ranks->self, send, MAX (most_owned * centre_bytes, 1), shared);
  for (guint s = 0; s < n; s++)
    {
      gsize s0, s1;
      const guint8 *from = shared + (gsize)s * MAX (most_owned * centre_bytes, 1);

      owned (k, s, n, &s0, &s1);
      for (gsize c = s0; c < s1; c++)
        {
          memcpy (clusters->centres + c * nf, from + (c - s0) * centre_bytes, nf * sizeof (float));
          clusters->alive[c] = from[(c - s0) * centre_bytes + nf * sizeof (float)];
        }
    }
  return TRUE;
}

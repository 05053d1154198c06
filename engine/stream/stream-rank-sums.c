/* Supervox engine: the ranks' cluster sums added where their slabs reach.
 *
 * A rank's slabs add to the sums of a band of clusters only: those whose
 * centre lies within a window's reach of its slices (seeds are numbered z
 * first, so the band is a run of cluster numbers). Adding every cluster's
 * sums over all ranks each iteration (8.6 M clusters at 2048³: 345 MB in
 * an MPI_Allreduce) moved mostly zeros. Instead each rank owns an equal
 * run of cluster numbers: every rank sends the part of its band that
 * another owns to that owner (SvStreamRanks.exchange), each owner adds
 * what it receives to its own part and makes those clusters' centres.
 *
 * An owner then sends each rank the centres within reach of that rank's
 * slices, and nothing else: a rank holds fresh centres for its own
 * clusters and for every cluster that can reach its slices, and marks the
 * rest dead here. A cluster out of reach cannot take a voxel of the
 * rank's slices nor enter its band, so the rank's labels and sums are
 * those of a run that knows every centre; a centre is a function of its
 * cluster's exact integer sums alone. (Sharing every centre with every
 * rank cost 0.1–0.3 s an iteration at 2048³ on four ranks, all of it
 * copying.) */
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

/* The live clusters of [k0, k1) whose centre is within reach of the
 * slices [z0, z1): [*b0, *b1), empty as 0, 0. As a slab's worker bounds its
 * band (stream-workers.c). */
static void
band_of (const Run *run, guint z0, guint z1, gsize k0, gsize k1, gsize *b0, gsize *b1)
{
  const SvClusters *clusters = &run->clusters;
  const gsize nf = 3 + clusters->nc;
  const double reach = 2.0 * run->ctx.window_step[0] + 2.0;
  const double zlo = z0, zhi = z1;

  *b0 = *b1 = 0;
  for (gsize k = k0; k < k1; k++)
    {
      const double cz = clusters->centres[k * nf];

      if (!clusters->alive[k] || cz + reach < zlo || cz - reach >= zhi)
        continue;
      if (*b1 == 0)
        *b0 = k;
      *b1 = k + 1;
    }
}

void
sv__stream_rank_band (const Run *run, gsize *b0, gsize *b1)
{
  band_of (run, run->z_begin, run->z_end, 0, run->clusters.k, b0, b1);
}

void
sv__stream_rank_sums_zero (const Run *run, gint64 *sums, gsize b0, gsize b1)
{
  const gsize ns = 4 + run->clusters.nc;
  const int n_threads = run->options->n_threads;
  gsize o0, o1;

  owned (run->clusters.k, run->ranks->rank, run->ranks->n_ranks, &o0, &o1);
  if (b0 < b1)
    sv__clear_parallel (sums + b0 * ns, (b1 - b0) * ns * sizeof (gint64), n_threads);
  sv__clear_parallel (sums + o0 * ns, (o1 - o0) * ns * sizeof (gint64), n_threads);
}

/* The centres an owner made go to the ranks within whose reach they lie
 * (the run of them, from the first to the last), and every rank marks dead
 * here the clusters it neither owns nor received. */
static void
share_centres (Run *run, gsize o0, gsize o1)
{
  const SvStreamRanks *ranks = run->ranks;
  SvClusters *clusters = &run->clusters;
  const guint n = ranks->n_ranks, me = ranks->rank;
  const gsize nf = 3 + clusters->nc, centre_bytes = nf * sizeof (float) + 1;
  g_autofree gint64 *runs = g_new (gint64, 2 * (gsize)n);
  g_autofree gint64 *all_runs = g_new (gint64, 2 * (gsize)n * n);
  g_autofree gsize *send_bytes = g_new0 (gsize, n), *recv_bytes = g_new0 (gsize, n);
  g_autofree guint8 *send = NULL, *recv = NULL;
  gsize total_send = 0, total_recv = 0, at = 0;

  for (guint t = 0; t < n; t++)
    {
      guint z0, z1;
      gsize r0 = 0, r1 = 0;

      sv_stream_rank_range (run->nz, t, n, &z0, &z1);
      if (t != me)
        band_of (run, z0, z1, o0, o1, &r0, &r1);
      runs[2 * t] = (gint64)r0;
      runs[2 * t + 1] = (gint64)r1;
      send_bytes[t] = (r1 - r0) * centre_bytes;
      total_send += send_bytes[t];
    }
  ranks->gather (ranks->self, runs, 2 * (gsize)n * sizeof (gint64), all_runs);
  for (guint s = 0; s < n; s++)
    {
      recv_bytes[s] = (gsize)(all_runs[2 * ((gsize)s * n + me) + 1]
                              - all_runs[2 * ((gsize)s * n + me)])
                      * centre_bytes;
      total_recv += recv_bytes[s];
    }
  /* A run's centres, then its live marks: two copies a run. */
  send = g_malloc (MAX (total_send, 1));
  recv = g_malloc (MAX (total_recv, 1));
  for (guint t = 0; t < n; t++)
    {
      const gsize r0 = (gsize)runs[2 * t], count = (gsize)runs[2 * t + 1] - r0;

      memcpy (send + at, clusters->centres + r0 * nf, count * nf * sizeof (float));
      memcpy (send + at + count * nf * sizeof (float), clusters->alive + r0, count);
      at += send_bytes[t];
    }
  ranks->exchange (ranks->self, send, send_bytes, recv, recv_bytes);
  memset (clusters->alive, 0, o0);
  memset (clusters->alive + o1, 0, clusters->k - o1);
  at = 0;
  for (guint s = 0; s < n; s++)
    {
      const gsize r0 = (gsize)all_runs[2 * ((gsize)s * n + me)];
      const gsize count = recv_bytes[s] / centre_bytes;

      memcpy (clusters->centres + r0 * nf, recv + at, count * nf * sizeof (float));
      memcpy (clusters->alive + r0, recv + at + count * nf * sizeof (float), count);
      at += recv_bytes[s];
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
  const gint64 t_start = g_get_monotonic_time ();
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
  const gint64 t_add = g_get_monotonic_time ();
  sv__slic_centres_from_sums_range (&run->ctx, sums, clusters, o0, o1);

  const gint64 t_centres = g_get_monotonic_time ();
  share_centres (run, o0, o1);
  run->centres_in_reach = TRUE;
  g_debug ("ranks' sums: exchange and add %.1f ms, centres %.1f ms, shared %.1f ms",
           (t_add - t_start) / 1e3, (t_centres - t_add) / 1e3,
           (g_get_monotonic_time () - t_centres) / 1e3);
  return TRUE;
}

void
sv__stream_rank_centres_all (Run *run)
{
  const SvStreamRanks *ranks = run->ranks;
  SvClusters *clusters = &run->clusters;
  const guint n = ranks != NULL ? ranks->n_ranks : 1;
  const gsize k = clusters->k, nf = 3 + clusters->nc;
  const gsize centre_bytes = nf * sizeof (float) + 1, most_owned = (k + n - 1) / n;
  const gsize part = MAX (most_owned * centre_bytes, 1);
  g_autofree guint8 *mine = NULL, *all = NULL;
  gsize o0, o1;

  if (!run->centres_in_reach)
    return;
  owned (k, ranks->rank, n, &o0, &o1);
  mine = g_malloc0 (part);
  all = g_malloc (part * n);
  for (gsize c = o0; c < o1; c++)
    {
      memcpy (mine + (c - o0) * centre_bytes, clusters->centres + c * nf, nf * sizeof (float));
      mine[(c - o0) * centre_bytes + nf * sizeof (float)] = clusters->alive[c];
    }
  ranks->gather (ranks->self, mine, part, all);
  for (guint s = 0; s < n; s++)
    {
      gsize s0, s1;

      owned (k, s, n, &s0, &s1);
      for (gsize c = s0; c < s1; c++)
        {
          const guint8 *from = all + (gsize)s * part + (c - s0) * centre_bytes;

          memcpy (clusters->centres + c * nf, from, nf * sizeof (float));
          clusters->alive[c] = from[nf * sizeof (float)];
        }
    }
  run->centres_in_reach = FALSE;
}

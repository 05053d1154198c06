/* Supervox engine: the connectivity rule shared by the devices that kept
 * the labels, with no device gathering the volume: each numbers the
 * pieces that start in its own slices, the host numbers every device's
 * pieces in raster order from a table (first voxel, and for a small piece
 * the earlier piece it joins), and each device relabels its slices and
 * hands them to the label file in turn. The labels are
 * sv_connectivity_enforce's connected rule over the whole volume, bit for
 * bit.
 *
 * Why a device's pieces are exact (stream-pieces.c says it for ranks):
 * the sequential rule cuts each 6-connected component of one input label
 * into pieces that depend on that component alone, and a component spans
 * at most E + 1 slices (E: the label extent). A device with slices
 * [a, b) runs the rule over the volume from a0 = a − 1 − E on, up to the
 * pieces that start before b (which read slices up to b + E). Every
 * component that reaches [a, b), and every component that a BFS from
 * there touches (slices a − 1 on), starts at a0 or later, so it is cut as
 * in the whole volume, with the same first voxels; components cut short
 * at a0 touch neither. A small piece there names the earlier piece it
 * joins by number, and the number by its first voxel. The host numbers
 * the pieces that start in each device's slices in raster order: a new
 * label for one that joins none, else the label of the piece it joins,
 * which starts earlier and so is numbered already. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "backend-private.h"
#include "internal.h"
#include "stream-run-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-memory.h"

typedef struct
{
  SvBackend *backend;
  guint z0, z1;            /* its kept slices */
  GArray *starts, *joins;  /* its windows' pieces (gint64, gint32) */
  guint first_own;         /* the first that starts in [z0, z1) */
  gint64 n_new;            /* own pieces that take a new label */
  gint64 first_label;      /* the first of those labels */
  gint32 *map;             /* piece number → label */
  guint8 *pending;         /* an own piece's label is its warm-up piece's */
  gboolean broken;         /* a piece joins one that is not before it */
  gint64 usec;             /* its pieces' time */
  GError *error;
} Share;

typedef struct
{
  Share *shares;
  guint n;
  gint64 min_size, max_size;
  int start_label;
  gsize plane;
} Job;

/* The workers' kept slices, those that have any: NULL when the shared
 * rule does not apply (nothing done). */
static Share *
shares_of (const Run *run, guint *n_shares)
{
  const SvSlabPlan *plan = &run->plan;
  Share *shares = g_new0 (Share, MAX (plan->n_workers, 1));
  guint n = 0;

  for (guint w = 0; w < plan->n_workers; w++)
    {
      const SvSlabSteps *steps = plan->workers[w]->klass->slab_steps;
      guint z0, z1;

      if (steps == NULL || steps->pieces_prepare == NULL || steps->pieces_number == NULL
          || steps->pieces_relabel == NULL || steps->emit_kept == NULL)
        {
          g_free (shares);
          return NULL;
        }
      sv__slab_plan_worker_slices (plan, w, &z0, &z1);
      if (z0 >= z1)
        continue;
      shares[n].backend = plan->workers[w];
      shares[n].z0 = z0;
      shares[n].z1 = z1;
      n++;
    }
  *n_shares = n;
  return shares;
}

static void
number_share (gpointer data, int thread)
{
  Job *job = data;
  Share *share = &job->shares[thread];
  const SvSlabSteps *steps = share->backend->klass->slab_steps;
  const gint64 t0 = g_get_monotonic_time ();

  share->starts = g_array_new (FALSE, FALSE, sizeof (gint64));
  share->joins = g_array_new (FALSE, FALSE, sizeof (gint32));
  steps->pieces_number (share->backend, job->min_size, job->max_size, job->start_label,
                        share->starts, share->joins, &share->error);
  share->usec = g_get_monotonic_time () - t0;
}

static void
relabel_share (gpointer data, int thread)
{
  Job *job = data;
  Share *share = &job->shares[thread];

  share->backend->klass->slab_steps->pieces_relabel (share->backend, share->map,
                                                     share->starts->len, job->start_label,
                                                     &share->error);
}

/* The first error of the shares, moved to `error`; TRUE when none. */
static gboolean
shares_ok (Job *job, GError **error)
{
  gboolean ok = TRUE;

  for (guint i = 0; i < job->n; i++)
    if (job->shares[i].error != NULL)
      {
        if (ok)
          g_propagate_error (error, g_steal_pointer (&job->shares[i].error));
        g_clear_error (&job->shares[i].error);
        ok = FALSE;
      }
  return ok;
}

/* The place of `start` among a share's own pieces, or −1. */
static gint64
find_own (const Share *share, gint64 start)
{
  const gint64 *starts = (const gint64 *)share->starts->data;
  gint64 lo = share->first_own, hi = share->starts->len;

  while (lo < hi)
    {
      const gint64 mid = lo + (hi - lo) / 2;

      if (starts[mid] == start)
        return mid;
      if (starts[mid] < start)
        lo = mid + 1;
      else
        hi = mid;
    }
  return -1;
}

/* A share's own pieces from its first slice on (the table is in raster
 * order), and how many of them take a new label. */
static void
count_share (gpointer data, int thread)
{
  Job *job = data;
  Share *share = &job->shares[thread];
  const gint64 *starts = (const gint64 *)share->starts->data;
  const gint32 *joins = (const gint32 *)share->joins->data;
  const gint64 own_from = (gint64)share->z0 * (gint64)job->plane;
  guint lo = 0, hi = share->starts->len;

  while (lo < hi)
    {
      const guint mid = lo + (hi - lo) / 2;

      if (starts[mid] < own_from)
        lo = mid + 1;
      else
        hi = mid;
    }
  share->first_own = lo;
  share->n_new = 0;
  for (guint p = lo; p < share->starts->len; p++)
    share->n_new += joins[p] < 0;
  share->map = g_try_new (gint32, MAX (share->starts->len, 1));
  share->pending = g_try_new0 (guint8, MAX (share->starts->len, 1));
}

/* A share's own pieces in raster order: a new label from its offset, or
 * the label of the piece it joins; one of the warm-up's stays pending
 * (its place in map) until the earlier shares are numbered. */
static void
label_share (gpointer data, int thread)
{
  Job *job = data;
  Share *share = &job->shares[thread];
  const gint32 *joins = (const gint32 *)share->joins->data;
  gint64 next = share->first_label;

  for (guint p = share->first_own; p < share->starts->len; p++)
    {
      const gint32 j = joins[p];

      if (j < 0)
        share->map[p] = (gint32)next++;
      else if ((guint)j >= p)
        {
          share->broken = TRUE;
          return;
        }
      else if ((guint)j >= share->first_own)
        {
          share->map[p] = share->map[j];
          share->pending[p] = share->pending[j];
        }
      else
        {
          share->map[p] = j;
          share->pending[p] = 1;
        }
    }
}

/* The pending pieces take their warm-up piece's label. */
static void
settle_share (gpointer data, int thread)
{
  Share *share = &((Job *)data)->shares[thread];

  for (guint p = share->first_own; p < share->starts->len; p++)
    if (share->pending[p])
      share->map[p] = share->map[share->map[p]];
}

/* Numbers every share's own pieces in raster order, in each share's map
 * (piece number → label): the number of labels, −1 with `error` set.
 * The shares count their new labels and number their own pieces at once;
 * only the warm-up pieces, a few slices' worth, are found in the earlier
 * shares one share after another. */
static gint64
number_all (Job *job, GError **error)
{
  gint64 counter = 0;

  sv__run_parallel ((int)job->n, count_share, job);
  for (guint i = 0; i < job->n; i++)
    {
      Share *share = &job->shares[i];

      if (share->map == NULL || share->pending == NULL)
        {
          sv_set_no_memory (error, "the labels of %u pieces", share->starts->len);
          return -1;
        }
      share->first_label = job->start_label + counter;
      counter += share->n_new;
    }
  if (counter > (gint64)G_MAXINT32 - job->start_label)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "connectivity: more labels than an int32 holds");
      return -1;
    }
  sv__run_parallel ((int)job->n, label_share, job);
  for (guint i = 0; i < job->n; i++)
    {
      Share *share = &job->shares[i];
      const gint64 *starts = (const gint64 *)share->starts->data;

      if (share->broken)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                       "connectivity: a piece joins one that is not before it");
          return -1;
        }
      /* A warm-up piece is an earlier share's own (one cut short at the
       * warm-up's bottom has no voxel in this share's slices: any label
       * does). Those shares' labels are final here. */
      for (guint w = 0; w < share->first_own; w++)
        {
          gint32 label = job->start_label - 1;

          for (guint e = i; e-- > 0;)
            {
              const Share *earlier = &job->shares[e];
              const gint64 q = find_own (earlier, starts[w]);

              if (q < 0)
                continue;
              label = earlier->pending[q] ? earlier->map[earlier->map[q]] : earlier->map[q];
              break;
            }
          share->map[w] = label;
        }
    }
  sv__run_parallel ((int)job->n, settle_share, job);
  return counter;
}

static void
shares_free (Share *shares, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      if (shares[i].starts != NULL)
        g_array_free (shares[i].starts, TRUE);
      if (shares[i].joins != NULL)
        g_array_free (shares[i].joins, TRUE);
      g_free (shares[i].map);
      g_free (shares[i].pending);
      g_clear_error (&shares[i].error);
    }
  g_free (shares);
}

gint64
sv__stream_device_pieces (Run *run, guint extent, gint64 min_size, gint64 max_size,
                          SvSlabSource source, SvSlabDeviceSource device_source, SvSlabSink sink,
                          const SvStripSink *strips, gpointer user_data, guint *n_devices,
                          guint *held, GError **error)
{
  const char *forced = g_getenv ("SV_DEVICE_PIECES");
  Job job = { NULL, 0, min_size, max_size, run->params->start_label, run->plane };
  gint64 n_labels = -2;
  gint64 t0 = g_get_monotonic_time (), t1, t2, t3;

  *n_devices = 0;
  *held = 0;
  /* Not yet the default: at 2048³ on two devices the pieces' tables
   * (150 M pieces) cost more on the host than the one device's rule, and
   * the label file's writes, which the one device overlaps with its
   * windows, start only after every share is numbered. */
  if (forced == NULL || forced[0] != '1' || run->plan.n_workers < 2
      || !run->plan.assignment_kept || extent == G_MAXUINT
      || run->params->connectivity_rule != SV_CONNECTIVITY_RULE_CONNECTED
      || (run->ranks != NULL && run->ranks->n_ranks > 1) || run->z_begin != 0
      || run->z_end != run->nz || (strips != NULL && strips->chunks[0] > 0))
    return -1;
  job.shares = shares_of (run, &job.n);
  if (job.shares == NULL || job.n < 2)
    {
      shares_free (job.shares, job.n);
      return -1;
    }
  /* Every device copies what it reads of the others before any writes
   * over its own. */
  for (guint i = 0; i < job.n; i++)
    {
      SvBackend *backend = job.shares[i].backend;
      guint share_held = 0;
      int ready = backend->klass->slab_steps->pieces_prepare (backend, run->nz, run->ny, run->nx,
                                                              extent, source, device_source,
                                                              user_data, &share_held, error);

      *held = MAX (*held, share_held);
      if (ready <= 0)
        {
          shares_free (job.shares, job.n);
          return ready < 0 ? -2 : -1;
        }
    }
  t1 = g_get_monotonic_time ();
  sv__run_parallel ((int)job.n, number_share, &job);
  if (!shares_ok (&job, error))
    goto out;
  t2 = g_get_monotonic_time ();
  n_labels = number_all (&job, error);
  if (n_labels < 0)
    {
      n_labels = -2;
      goto out;
    }
  t3 = g_get_monotonic_time ();
  sv__run_parallel ((int)job.n, relabel_share, &job);
  if (!shares_ok (&job, error))
    {
      n_labels = -2;
      goto out;
    }
  g_debug ("connectivity on %u devices: copies %.3f s, pieces %.3f s, numbering %.3f s, "
           "relabelling %.3f s",
           job.n, (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6,
           (g_get_monotonic_time () - t3) / 1e6);
  for (guint i = 0; i < job.n; i++)
    g_debug ("connectivity share %u: slices %u to %u, %u pieces (%u of the warm-up) in %.3f s", i,
             job.shares[i].z0, job.shares[i].z1, job.shares[i].starts->len,
             job.shares[i].first_own, job.shares[i].usec / 1e6);
  /* The label file takes the slices in z order. */
  for (guint i = 0; i < job.n; i++)
    {
      SvBackend *backend = job.shares[i].backend;

      if (!backend->klass->slab_steps->emit_kept (backend, run->nz, run->ny, run->nx, run->depth,
                                                  sink, user_data, strips, error))
        {
          n_labels = -2;
          goto out;
        }
    }
  *n_devices = job.n;
out:
  shares_free (job.shares, job.n);
  return n_labels;
}

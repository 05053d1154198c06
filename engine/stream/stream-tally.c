/* Supervox engine: the streamed run's last assignment turned into labels,
 * slab by slab, with what the rest of the run needs to know about them
 * (stream-slic.c): the mask-in voxels, whether a label is negative, and
 * the slices each cluster's voxels reach. Threads take shares of a slab's
 * voxels, each with its own extents, merged at the end: minima and maxima
 * of slice numbers do not depend on who saw them. */
#define G_LOG_DOMAIN "sv-engine"

#include "stream-private.h"

#include <string.h>

#include "backend-private.h"
#include "internal.h"

/* Below this many voxels a slab is tallied on one thread. */
#define SV_TALLY_PARALLEL_VOXELS 65536

void
sv__label_tally_init (SvLabelTally *t, gsize k, int n_threads)
{
  memset (t, 0, sizeof *t);
  t->k = k;
  t->n_threads = CLAMP (sv__resolve_threads (n_threads), 1, SV_LABEL_TALLY_MAX_SLOTS);
  t->zmin = g_new (guint, MAX (k, 1) * t->n_threads);
  t->zmax = g_new0 (guint, MAX (k, 1) * t->n_threads);
  /* Every byte 0xff: G_MAXUINT, no label seen. */
  memset (t->zmin, 0xff, MAX (k, 1) * t->n_threads * sizeof (guint));
  t->n_in = g_new0 (gsize, t->n_threads);
  t->negative = g_new0 (gboolean, t->n_threads);
}

typedef struct
{
  SvLabelTally *t;
  guint z0;
  gsize n, plane;
  const guint8 *mask; /* the slab's, or NULL */
  int start_label, n_threads;
  gint32 *nearest;
  int first_slot; /* the shares' extents are slots first_slot … */
} TallyJob;

static void
tally_share (gpointer data, int share)
{
  const TallyJob *job = data;
  SvLabelTally *t = job->t;
  const gsize lo = job->n * (gsize)share / (gsize)job->n_threads;
  const gsize hi = job->n * (gsize)(share + 1) / (gsize)job->n_threads;
  const int slot = job->first_slot + share;
  guint *zmin = t->zmin + (gsize)slot * t->k, *zmax = t->zmax + (gsize)slot * t->k;
  gsize n_in = 0;
  gboolean negative = FALSE;

  for (gsize i = lo; i < hi; i++)
    {
      const gint32 c = job->nearest[i];
      const guint z = job->z0 + (guint)(i / job->plane);

      if (job->mask == NULL || job->mask[i])
        n_in++;
      if (c >= 0)
        {
          zmin[c] = MIN (zmin[c], z);
          zmax[c] = MAX (zmax[c], z);
        }
      job->nearest[i] = c < 0 ? job->start_label - 1 : c + job->start_label;
      negative |= job->nearest[i] < 0;
    }
  t->n_in[slot] += n_in;
  t->negative[slot] |= negative;
}

void
sv__label_tally_slab_in (SvLabelTally *t, int first_slot, int n_slots, guint z0, guint z1,
                         gsize plane, const guint8 *mask, int start_label, gint32 *nearest)
{
  TallyJob job = { t, z0, (gsize)(z1 - z0) * plane, plane, NULL, start_label, 1, nearest,
                   first_slot };

  g_return_if_fail (first_slot >= 0 && n_slots >= 1 && first_slot + n_slots <= t->n_threads);
  job.mask = mask != NULL ? mask + (gsize)z0 * plane : NULL;
  job.n_threads = job.n >= SV_TALLY_PARALLEL_VOXELS ? n_slots : 1;
  sv__run_parallel (job.n_threads, tally_share, &job);
}

void
sv__label_tally_slab (SvLabelTally *t, guint z0, guint z1, gsize plane, const guint8 *mask,
                      int start_label, gint32 *nearest)
{
  sv__label_tally_slab_in (t, 0, t->n_threads, z0, z1, plane, mask, start_label, nearest);
}

void
sv__label_tally_finish (SvLabelTally *t, gsize *n_in, gboolean *negative)
{
  *n_in = 0;
  *negative = FALSE;
  for (int s = 0; s < t->n_threads; s++)
    {
      *n_in += t->n_in[s];
      *negative |= t->negative[s];
    }
  for (int s = 1; s < t->n_threads; s++)
    for (gsize c = 0; c < t->k; c++)
      {
        t->zmin[c] = MIN (t->zmin[c], t->zmin[(gsize)s * t->k + c]);
        t->zmax[c] = MAX (t->zmax[c], t->zmax[(gsize)s * t->k + c]);
      }
}

gboolean
sv__label_tally_from_backend (SvLabelTally *t, SvBackend *backend, GError **error)
{
  const SvSlabSteps *steps = backend->klass->slab_steps;
  guint64 n_in = 0;
  gboolean negative = FALSE;

  if (!steps->kept_tally (backend, t->zmin, t->zmax, &n_in, &negative, error))
    return FALSE;
  t->n_in[0] += (gsize)n_in;
  t->negative[0] |= negative;
  return TRUE;
}

void
sv__label_tally_clear (SvLabelTally *t)
{
  g_clear_pointer (&t->zmin, g_free);
  g_clear_pointer (&t->zmax, g_free);
  g_clear_pointer (&t->n_in, g_free);
  g_clear_pointer (&t->negative, g_free);
}

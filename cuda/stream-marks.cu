/* Supervox CUDA backend: where a streamed run's passes spent their time
 * on the device (sv_cuda_backend_get_slab_times): each slab's upload and
 * kernels are bracketed by CUDA events, read back a pass later at the
 * latest, and the pass's upload intervals are matched against its kernel
 * intervals for the copy/compute overlap. */
#define G_LOG_DOMAIN "sv-cuda"

#include "stream-steps-private.h"

/* How long uploads ran while kernels did: each stream's intervals are in
 * time order and do not overlap one another. */
static double
overlap_ms (GArray *uploads, GArray *kernels)
{
  double both = 0.0;
  guint k = 0;

  for (guint u = 0; u < uploads->len; u++)
    {
      const Interval *up = &g_array_index (uploads, Interval, u);

      while (k < kernels->len && g_array_index (kernels, Interval, k).to <= up->from)
        k++;
      for (guint j = k; j < kernels->len; j++)
        {
          const Interval *kn = &g_array_index (kernels, Interval, j);
          if (kn->from >= up->to)
            break;
          both += MIN (up->to, kn->to) - MAX (up->from, kn->from);
        }
    }
  return both;
}

/* Adds a slab's upload and kernel times and intervals; its marks are
 * then free. */
static void
read_marks (SvCudaSlabs *s, SlabMarks *m)
{
  Interval up, k;

  if (!m->used)
    return;
  m->used = FALSE;
  if (cudaEventSynchronize (m->k1) != cudaSuccess
      || cudaEventElapsedTime (&up.from, s->pass_ref, m->up0) != cudaSuccess
      || cudaEventElapsedTime (&up.to, s->pass_ref, m->up1) != cudaSuccess
      || cudaEventElapsedTime (&k.from, s->pass_ref, m->k0) != cudaSuccess
      || cudaEventElapsedTime (&k.to, s->pass_ref, m->k1) != cudaSuccess)
    return;
  s->times.upload_ms += up.to - up.from;
  s->times.kernel_ms += k.to - k.from;
  g_array_append_val (s->uploads, up);
  g_array_append_val (s->kernels, k);
}

/* The marks for the next slab, in slab order. */
SlabMarks *
sv__slab_marks_next (SvCudaSlabs *s)
{
  SlabMarks *m = &s->marks[s->n_marks++ % SLAB_MARKS];

  read_marks (s, m);
  m->used = TRUE;
  return m;
}

/* At the end of a pass: the marks not yet read, in slab order, and the
 * pass's overlap. */
void
sv__slab_marks_read_pass (SvCudaSlabs *s)
{
  for (guint i = 0; i < SLAB_MARKS; i++)
    read_marks (s, &s->marks[(s->n_marks + i) % SLAB_MARKS]);
  s->times.overlap_ms += overlap_ms (s->uploads, s->kernels);
  g_array_set_size (s->uploads, 0);
  g_array_set_size (s->kernels, 0);
}

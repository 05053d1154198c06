/* Supervox CUDA backend: a streamed run's assignment kept on the device.
 *
 * When the whole volume's assignment fits beside the kept slabs, the
 * assignment kernels write it into one device volume instead of handing
 * each slab to the host: SLIC-zero's maxima read it there, the fill and
 * the labels are made there with the run's tally (mask-in voxels, a
 * negative label, each cluster's first and last slice), and the device
 * connectivity (stream-resident.cu) starts from it. Without it the last
 * assignment went to a spill file, came back for the fill, went again and
 * came back once more for the connectivity: a round trip of the whole
 * label volume three times through host memory. */
#define G_LOG_DOMAIN "sv-cuda"

#include <string.h>

#include "stream-steps-private.h"
#include "supervox/sv-error.h"

#define KEPT_BLOCK 256

/* Labels of one slab in place (index + start_label, and start_label − 1
 * for −1), with the tally: mask-in voxels and a negative label counted per
 * warp, each cluster's slices lowered and raised once per warp and slice
 * (lanes with the same cluster and slice agree first, so that the atomics
 * do not queue on one address for every voxel). `nearest` and `mask` hold
 * the slab's n voxels, whose first is voxel `first` of the volume. */
__global__ void
kept_label_kernel (long long first, long long n, long long plane, const uint8_t *__restrict__ mask,
                   int32_t *__restrict__ nearest, int start_label, unsigned *__restrict__ zmin,
                   unsigned *__restrict__ zmax, unsigned long long *__restrict__ counts)
{
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const bool valid = i < n;
  const int c = valid ? nearest[i] : -1;
  const bool in = valid && (mask == NULL || mask[i] != 0);
  const int label = c + start_label;
  const unsigned z = (unsigned)((first + i) / plane);
  const unsigned lane = threadIdx.x & 31;
  const unsigned in_lanes = __ballot_sync (0xffffffffu, in);
  const unsigned negative_lanes = __ballot_sync (0xffffffffu, valid && label < 0);
  const unsigned long long key
      = valid && c >= 0 ? ((unsigned long long)z << 32) | (unsigned)c : ~0ull;
  const unsigned peers = __match_any_sync (0xffffffffu, key);

  if (valid)
    nearest[i] = label;
  if (lane == 0 && in_lanes != 0)
    atomicAdd (&counts[0], (unsigned long long)__popc (in_lanes));
  if (lane == 0 && negative_lanes != 0)
    counts[1] = 1;
  if (key != ~0ull && lane == (unsigned)(__ffs (peers) - 1))
    {
      atomicMin (&zmin[c], z);
      atomicMax (&zmax[c], z);
    }
}

void
sv__cuda_kept_clear (SvCudaSlabs *s)
{
  /* Kernels of a pass may still use them. */
  cudaStreamSynchronize (s->compute);
  sv_cuda_clear (&s->d_kept);
  sv_cuda_clear (&s->d_zmin);
  sv_cuda_clear (&s->d_zmax);
  sv_cuda_clear (&s->d_counts);
  g_clear_pointer (&s->kept_mine, g_free);
  s->bytes -= s->kept_bytes;
  s->kept_bytes = 0;
  s->kept_nz = s->kept_z0 = s->kept_z1 = 0;
  s->tally_k = 0;
  s->tally_started = FALSE;
}

gboolean
sv__cuda_slab_keep_assignment (SvBackend *backend, guint nz, guint z0, guint z1, gsize plane,
                               gsize k, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  guint64 before;
  /* A device that takes no slab still keeps (and tallies nothing): one
   * slice, so that d_kept says so. */
  const guint slices = MAX (z1 - z0, 1);

  if (s == NULL)
    return FALSE;
  if (nz == 0)
    {
      sv__cuda_kept_clear (s);
      return TRUE;
    }
  g_return_val_if_fail (z0 <= z1 && z1 <= nz, FALSE);
  if (s->d_kept != NULL)
    return s->kept_nz == nz && s->kept_z0 == z0 && s->kept_z1 == z1 && s->kept_plane == plane
           && s->tally_k >= MAX (k, 1);
  k = MAX (k, 1);
  if (!sv__cuda_slabs_fit (s, (guint64)slices * plane * sizeof (int32_t)
                                  + 2 * k * sizeof (unsigned) + 2 * sizeof (unsigned long long)))
    return FALSE;
  s->kept_plane = plane;
  before = s->bytes;
  s->kept_nz = nz;
  s->kept_z0 = z0;
  s->kept_z1 = z1;
  s->tally_k = k;
  if (sv__slab_malloc (s, &s->d_kept, (gsize)slices * s->kept_plane * sizeof (int32_t))
          != cudaSuccess
      || sv__slab_malloc (s, &s->d_zmin, k * sizeof (unsigned)) != cudaSuccess
      || sv__slab_malloc (s, &s->d_zmax, k * sizeof (unsigned)) != cudaSuccess
      || sv__slab_malloc (s, &s->d_counts, 2 * sizeof (unsigned long long)) != cudaSuccess)
    {
      /* No room after all: the assignment goes to the host as before. */
      cudaGetLastError ();
      s->kept_bytes = s->bytes - before;
      sv__cuda_kept_clear (s);
      return FALSE;
    }
  s->kept_bytes = s->bytes - before;
  s->kept_mine = g_new0 (guint8, nz);
  return TRUE;
}

gboolean
sv__cuda_slab_label_kept_slab (SvBackend *backend, guint z0, guint z1, const guint8 *mask,
                               int start_label, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const SvCudaResident *r;
  const long long first = (long long)z0 * (long long)(s != NULL ? s->kept_plane : 0);
  const long long n = (long long)(z1 - z0) * (long long)(s != NULL ? s->kept_plane : 0);
  SlabPlace p = { NULL, NULL, NULL, NULL, FALSE };
  SvCudaIter it;
  SlabMarks *m;
  int b;

  if (s == NULL)
    return FALSE;
  g_return_val_if_fail (sv__cuda_kept_has (s, z0, z1) && s->have_pass, FALSE);
  if (!s->tally_started)
    {
      SV_CUDA_CHECK (cudaMemsetAsync (s->d_zmin, 0xff, s->tally_k * sizeof (unsigned), s->compute));
      SV_CUDA_CHECK (cudaMemsetAsync (s->d_zmax, 0, s->tally_k * sizeof (unsigned), s->compute));
      SV_CUDA_CHECK (cudaMemsetAsync (s->d_counts, 0, 2 * sizeof (unsigned long long), s->compute));
      s->tally_started = TRUE;
    }
  if ((b = sv__slab_take_buffer (s, z1 - z0, mask != NULL, error)) < 0)
    return FALSE;
  /* The mask of a slab kept on the device is read there; the others go
   * up into buffer b. */
  r = sv__cuda_resident_find (s, z0, z1);
  if (mask != NULL && r != NULL && r->d_mask != NULL)
    p.mask = r->d_mask;
  else if (mask != NULL)
    p.mask = p.mask_dst = s->d_mask[b];
  m = sv__slab_marks_next (s);
  if (!sv__slab_upload (s, b, z0, z1, NULL, mask, NULL, &p, m, error))
    return FALSE;
  it = s->it;
  it.z_begin = (int)z0;
  it.z_end = (int)z1;
  if (s->clusters->k > 0)
    SV_CUDA_CHECK (sv_cuda_fill_unassigned (it, p.mask, s->d_centres, s->d_alive, sv__cuda_kept_at (s, z0),
                                            s->compute));
  memset (s->kept_mine + z0, 1, z1 - z0);
  if (n > 0)
    {
      kept_label_kernel<<<(unsigned)((n + KEPT_BLOCK - 1) / KEPT_BLOCK), KEPT_BLOCK, 0,
                          s->compute>>> (first, n, (long long)s->kept_plane, p.mask,
                                           sv__cuda_kept_at (s, z0), start_label, s->d_zmin, s->d_zmax,
                                           s->d_counts);
      SV_CUDA_CHECK (cudaGetLastError ());
    }
  SV_CUDA_CHECK (cudaEventRecord (m->k1, s->compute));
  SV_CUDA_CHECK (cudaEventRecord (s->computed[b], s->compute));
  return TRUE;
out:
  return FALSE;
}

gboolean
sv__cuda_slab_kept_tally (SvBackend *backend, guint *zmin, guint *zmax, guint64 *n_in,
                          gboolean *negative, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const gsize k = s != NULL && s->clusters != NULL ? s->clusters->k : 0;
  g_autofree unsigned *lo = g_new (unsigned, MAX (k, 1));
  g_autofree unsigned *hi = g_new (unsigned, MAX (k, 1));
  unsigned long long counts[2] = { 0, 0 };

  if (s == NULL)
    return FALSE;
  g_return_val_if_fail (s->d_kept != NULL, FALSE);
  /* A device that took no slab of the volume tallied nothing. */
  *n_in = 0;
  *negative = FALSE;
  if (!s->tally_started)
    return TRUE;
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  SV_CUDA_CHECK (cudaMemcpy (counts, s->d_counts, sizeof counts, cudaMemcpyDeviceToHost));
  if (k > 0)
    {
      SV_CUDA_CHECK (cudaMemcpy (lo, s->d_zmin, k * sizeof (unsigned), cudaMemcpyDeviceToHost));
      SV_CUDA_CHECK (cudaMemcpy (hi, s->d_zmax, k * sizeof (unsigned), cudaMemcpyDeviceToHost));
    }
  for (gsize c = 0; c < k; c++)
    {
      zmin[c] = MIN (zmin[c], lo[c]);
      zmax[c] = MAX (zmax[c], hi[c]);
    }
  *n_in = counts[0];
  *negative = counts[1] != 0;
  s->tally_started = FALSE;
  return TRUE;
out:
  return FALSE;
}

gboolean
sv__cuda_slab_read_kept (SvBackend *backend, guint z0, guint z1, gint32 *labels, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const gsize n = (gsize)(z1 - z0) * (s != NULL ? s->kept_plane : 0);

  if (s == NULL)
    return FALSE;
  g_return_val_if_fail (sv__cuda_kept_has (s, z0, z1), FALSE);
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  SV_CUDA_CHECK (sv__cuda_staged_copy (s->owner, labels, sv__cuda_kept_at (s, z0),
                                       n * sizeof (int32_t), FALSE));
  return TRUE;
out:
  return FALSE;
}

gboolean
sv__cuda_slab_store_kept (SvBackend *backend, guint z0, guint z1, const gint32 *labels,
                          GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  const gsize n = (gsize)(z1 - z0) * (s != NULL ? s->kept_plane : 0);

  if (s == NULL)
    return FALSE;
  g_return_val_if_fail (sv__cuda_kept_has (s, z0, z1), FALSE);
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  SV_CUDA_CHECK (sv__cuda_staged_copy (s->owner, sv__cuda_kept_at (s, z0), labels,
                                       n * sizeof (int32_t), TRUE));
  return TRUE;
out:
  return FALSE;
}

/* Lets the current device (`to`) read device `from`'s memory, once per
 * process: peer access belongs to the context and outlives a run, and
 * asking twice is an error the runtime reports. */
static cudaError_t
enable_peer (int to, int from)
{
  static GMutex lock;
  static guint64 asked[64]; /* bit `from` of asked[to] */
  cudaError_t err = cudaSuccess;
  int can = 0;

  if (to == from || to < 0 || to >= 64 || from < 0 || from >= 64)
    return cudaSuccess;
  g_mutex_lock (&lock);
  if (!(asked[to] & ((guint64)1 << from)))
    {
      asked[to] |= (guint64)1 << from;
      err = cudaDeviceCanAccessPeer (&can, to, from);
      if (err == cudaSuccess && can)
        err = cudaDeviceEnablePeerAccess (from, 0);
    }
  g_mutex_unlock (&lock);
  return err;
}

/* Slices [z0, z1) of the kept labels into `dst` on the target backend's
 * device, on its compute stream: over NVLink (or PCIe peer to peer) where
 * the two devices reach each other, else the runtime stages the copy. The
 * labels of other devices went down to the host and up again before:
 * 24 GiB at 2048³ on four devices. */
int
sv__cuda_slab_copy_kept_to (SvBackend *backend, guint z0, guint z1, SvBackend *target,
                            gpointer dst, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  SvCudaBackend *into = sv__cuda_backend (target);
  SvCudaSlabs *t = into != NULL ? into->slabs : NULL;
  const gsize n = (gsize)(z1 - z0) * (s != NULL ? s->kept_plane : 0);

  if (s == NULL)
    return -1;
  if (t == NULL || !sv__cuda_kept_has (s, z0, z1))
    return 0;
  /* The kept labels are final once this device's work is done. */
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  SV_CUDA_CHECK (cudaSetDevice (t->device));
  SV_CUDA_CHECK (enable_peer (t->device, s->device));
  SV_CUDA_CHECK (cudaMemcpyPeerAsync (dst, t->device, sv__cuda_kept_at (s, z0),
                                      s->device, n * sizeof (int32_t), t->compute));
  return 1;
out:
  return -1;
}

/* What another process needs to read the kept labels: the allocation's
 * IPC handle, its shape to check against its own, and the slices it
 * holds, from its first. */
typedef struct
{
  cudaIpcMemHandle_t memory;
  guint64 plane;
  guint32 nz, z0, z1;
} KeptHandle;

static_assert (sizeof (KeptHandle) <= SV_KEPT_HANDLE_BYTES, "the kept labels' handle fits");

gboolean
sv__cuda_slab_export_kept (SvBackend *backend, guint8 *handle, GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  KeptHandle h;

  if (s == NULL || s->d_kept == NULL)
    return FALSE;
  memset (&h, 0, sizeof h);
  /* The labels are final once this device's work is done. */
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  SV_CUDA_CHECK (cudaIpcGetMemHandle (&h.memory, s->d_kept));
  h.plane = s->kept_plane;
  h.nz = s->kept_nz;
  h.z0 = s->kept_z0;
  h.z1 = s->kept_z1;
  memset (handle, 0, SV_KEPT_HANDLE_BYTES);
  memcpy (handle, &h, sizeof h);
  return TRUE;
out:
  return FALSE;
}

/* Slices [z0, z1) of another process's kept labels, device to device (over
 * NVLink where the two devices have it), instead of through both hosts'
 * memory and MPI. A handle this process cannot open (another host, no
 * IPC in this container) leaves the copy to the caller. */
int
sv__cuda_slab_import_kept (SvBackend *backend, const guint8 *handle, guint z0, guint z1,
                           GError **error)
{
  SvCudaSlabs *s = sv__cuda_slabs_enter (backend, error);
  KeptHandle h;
  int32_t *theirs = NULL;
  cudaError_t err;

  if (s == NULL)
    return -1;
  memcpy (&h, handle, sizeof h);
  if (!sv__cuda_kept_has (s, z0, z1) || h.plane != s->kept_plane || h.nz != s->kept_nz
      || z0 < h.z0 || z1 > h.z1)
    return 0;
  err = cudaIpcOpenMemHandle ((void **)&theirs, h.memory, cudaIpcMemLazyEnablePeerAccess);
  if (err != cudaSuccess)
    {
      g_debug ("device %d cannot open another process's labels: %s", s->device,
               cudaGetErrorString (err));
      cudaGetLastError ();
      return 0;
    }
  SV_CUDA_CHECK (cudaMemcpyAsync (sv__cuda_kept_at (s, z0), theirs + (gsize)(z0 - h.z0) * h.plane,
                                  (gsize)(z1 - z0) * s->kept_plane * sizeof (int32_t),
                                  cudaMemcpyDefault, s->compute));
  SV_CUDA_CHECK (cudaStreamSynchronize (s->compute));
  SV_CUDA_CHECK (cudaIpcCloseMemHandle (theirs));
  return 1;
out:
  if (theirs != NULL)
    cudaIpcCloseMemHandle (theirs);
  return -1;
}

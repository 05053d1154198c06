/* Supervox tests: the pretend device that keeps the assignment
 * (keeping-device.h). */
#include "keeping-device-private.h"

#include <glib/gstdio.h>
#include <string.h>

#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-stream.h"
#include "backend-private.h"
#include "io-tiff-private.h"
#include "sv-test-files.h"
#include "sv-test-ranks.h"
#include "sv-test-volumes.h"

PretendDevice device;

static const SvSlabSteps *const cpu = &sv__slab_steps_cpu;
static guint n_made;

Keeper *
keeper_of (SvBackend *backend)
{
  return sv_backend_get_priv (backend);
}

static gboolean
keeping_create (SvBackend *backend, GError **error)
{
  Keeper *kp = g_new0 (Keeper, 1);

  kp->index = n_made++;
  kp->slabs = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  sv_backend_set_priv (backend, kp);
  return TRUE;
}

static void
keeper_drop (Keeper *kp)
{
  g_clear_pointer (&kp->kept, g_free);
  g_clear_pointer (&kp->labelled, g_free);
  g_clear_pointer (&kp->zmin, g_free);
  g_clear_pointer (&kp->zmax, g_free);
  keeping_pieces_drop (kp);
}

static void
keeping_destroy (SvBackend *backend)
{
  Keeper *kp = keeper_of (backend);

  keeper_drop (kp);
  g_hash_table_unref (kp->slabs);
  g_free (kp);
}

static int
keeping_take_samples (SvBackend *backend, guint z0, guint z1, const void *raw,
                      const SvSlabSamples *how, const guint8 *mask, GError **error)
{
  const gsize n = (gsize)(z1 - z0) * device.plane * how->nc;
  float *values;

  if (!device.room_for_slabs)
    return 0;
  values = g_new (float, MAX (n, 1));
  sv_tiff_samples_to_float (how->type, raw, n, values);
  for (gsize i = 0; i < n; i++)
    {
      float v = values[i] - how->shift;
      if (how->divide)
        v = v / how->scale;
      values[i] = v;
    }
  g_hash_table_insert (keeper_of (backend)->slabs, GUINT_TO_POINTER (z0), values);
  /* The workers of a first pass hand slabs over at once. */
  g_atomic_int_inc (&device.samples_taken);
  return 1;
}

static gboolean
keeping_holds_slab (SvBackend *backend, guint z0, guint z1)
{
  return g_hash_table_contains (keeper_of (backend)->slabs, GUINT_TO_POINTER (z0));
}

/* The slab's values: the caller's, or those the device holds. */
static const float *
slab_values (SvBackend *backend, guint z0, const float *data)
{
  GHashTable *slabs = keeper_of (backend)->slabs;

  if (data != NULL)
    return data;
  g_assert_true (g_hash_table_contains (slabs, GUINT_TO_POINTER (z0)));
  return g_hash_table_lookup (slabs, GUINT_TO_POINTER (z0));
}

gint32 *
kept_at (Keeper *kp, guint z0, guint z1)
{
  g_assert_nonnull (kp->kept);
  g_assert_cmpuint (z0, >=, kp->z0);
  g_assert_cmpuint (z1, <=, kp->z1);
  return kp->kept + (gsize)(z0 - kp->z0) * device.plane;
}

static gboolean
keeping_keep (SvBackend *backend, guint nz, guint z0, guint z1, gsize plane, gsize k,
              GError **error)
{
  Keeper *kp = keeper_of (backend);

  if (nz == 0)
    {
      g_assert_nonnull (kp->kept);
      keeper_drop (kp);
      device.given_back++;
      return TRUE;
    }
  if (!device.room_for_labels || (device.only_first_keeps && kp->index % 2 == 1))
    return FALSE;
  g_assert_null (kp->kept);
  g_assert_cmpuint (z0, <=, z1);
  g_assert_cmpuint (z1, <=, nz);
  kp->kept = g_new (gint32, MAX ((gsize)(z1 - z0) * plane, 1));
  kp->z0 = z0;
  kp->z1 = z1;
  kp->last_kept = z1 - z0;
  kp->labelled = g_new0 (guint8, nz);
  g_assert_cmpuint (device.plane, ==, plane);
  kp->k = k;
  kp->zmin = g_new (guint, MAX (k, 1));
  kp->zmax = g_new (guint, MAX (k, 1));
  return TRUE;
}

static gboolean
copy_to_kept (guint z0, guint z1, const gint32 *nearest, gpointer user_data, GError **error)
{
  memcpy (kept_at (user_data, z0, z1), nearest,
          (gsize)(z1 - z0) * device.plane * sizeof (gint32));
  return TRUE;
}

static gboolean
keeping_assign_sum (SvBackend *backend, guint z0, guint z1, const float *data, const guint8 *mask,
                    SvSlabSink sink, gpointer sink_data, GError **error)
{
  Keeper *kp = keeper_of (backend);

  data = slab_values (backend, z0, data);
  if (sink != NULL && device.spill_meet > 1 && kp->met_in_run != device.run)
    {
      /* A pass that takes the devices in turn never has them all in. */
      const gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

      kp->met_in_run = device.run;
      g_atomic_int_inc (&device.spill_arrived);
      while (g_atomic_int_get (&device.spill_arrived) < device.spill_meet
             && g_get_monotonic_time () < until)
        g_usleep (1000);
      if (g_atomic_int_get (&device.spill_arrived) >= device.spill_meet)
        g_atomic_int_inc (&device.spill_met);
    }
  if (kp->kept == NULL)
    return cpu->assign_sum (backend, z0, z1, data, mask, sink, sink_data, error);
  /* A kept assignment is never handed to the host. */
  g_assert_null (sink);
  return cpu->assign_sum (backend, z0, z1, data, mask, copy_to_kept, kp, error);
}

static gboolean
keeping_raise_maxima (SvBackend *backend, guint z0, guint z1, const float *data, const guint8 *mask,
                      const gint32 *nearest, GError **error)
{
  Keeper *kp = keeper_of (backend);

  g_assert_true ((nearest == NULL) == (kp->kept != NULL));
  if (nearest == NULL)
    nearest = kept_at (kp, z0, z1);
  return cpu->raise_maxima (backend, z0, z1, slab_values (backend, z0, data), mask, nearest, error);
}

static gboolean
keeping_label_kept_slab (SvBackend *backend, guint z0, guint z1, const guint8 *mask,
                         int start_label, GError **error)
{
  Keeper *kp = keeper_of (backend);
  gint32 *slab;

  slab = kept_at (kp, z0, z1);
  memset (kp->labelled + z0, 1, z1 - z0);
  device.label_slabs++;
  if (!kp->tallying)
    {
      for (gsize c = 0; c < kp->k; c++)
        {
          kp->zmin[c] = G_MAXUINT;
          kp->zmax[c] = 0;
        }
      kp->n_in = 0;
      kp->negative = FALSE;
      kp->tallying = TRUE;
    }
  if (!cpu->fill_unassigned (backend, z0, z1, mask, slab, error))
    return FALSE;
  for (gsize i = 0; i < (gsize)(z1 - z0) * device.plane; i++)
    {
      const gint32 c = slab[i];
      const guint z = z0 + (guint)(i / device.plane);

      kp->n_in += mask == NULL || mask[(gsize)z0 * device.plane + i] != 0;
      if (c >= 0)
        {
          kp->zmin[c] = MIN (kp->zmin[c], z);
          kp->zmax[c] = MAX (kp->zmax[c], z);
        }
      slab[i] = c + start_label;
      kp->negative |= slab[i] < 0;
    }
  return TRUE;
}

static gboolean
keeping_kept_tally (SvBackend *backend, guint *zmin, guint *zmax, guint64 *n_in, gboolean *negative,
                    GError **error)
{
  Keeper *kp = keeper_of (backend);

  /* A device that kept no slab of the volume tallied nothing. */
  for (gsize c = 0; kp->tallying && c < kp->k; c++)
    {
      zmin[c] = MIN (zmin[c], kp->zmin[c]);
      zmax[c] = MAX (zmax[c], kp->zmax[c]);
    }
  *n_in = kp->tallying ? kp->n_in : 0;
  *negative = kp->tallying && kp->negative;
  kp->tallying = FALSE;
  return TRUE;
}

static gboolean
keeping_read_kept (SvBackend *backend, guint z0, guint z1, gint32 *labels, GError **error)
{
  /* Only slices whose labels this device made. */
  for (guint z = z0; z < z1; z++)
    g_assert_true (keeper_of (backend)->labelled[z]);
  memcpy (labels, kept_at (keeper_of (backend), z0, z1),
          (gsize)(z1 - z0) * device.plane * sizeof (gint32));
  return TRUE;
}

/* Another rank's labels, for rank 0's connectivity. */
static gboolean
keeping_store_kept (SvBackend *backend, guint z0, guint z1, const gint32 *labels, GError **error)
{
  Keeper *kp = keeper_of (backend);

  memcpy (kept_at (kp, z0, z1), labels,
          (gsize)(z1 - z0) * device.plane * sizeof (gint32));
  memset (kp->labelled + z0, 1, z1 - z0);
  g_atomic_int_add (&device.stored, (gint)(z1 - z0));
  return TRUE;
}

/* A pretend device's handle for other ranks: its Keeper, as the threads
 * that play ranks share memory. */
static gboolean
keeping_export_kept (SvBackend *backend, guint8 *handle, GError **error)
{
  Keeper *kp = keeper_of (backend);

  if (kp->kept == NULL)
    return FALSE;
  memset (handle, 0, SV_KEPT_HANDLE_BYTES);
  memcpy (handle, &kp, sizeof kp);
  return TRUE;
}

static int
keeping_import_kept (SvBackend *backend, const guint8 *handle, guint z0, guint z1, GError **error)
{
  Keeper *kp = keeper_of (backend), *from;

  memcpy (&from, handle, sizeof from);
  g_assert_true (from != kp && from->kept != NULL && kp->kept != NULL);
  if (from->index == device.unreachable)
    return 0;
  for (guint z = z0; z < z1; z++)
    g_assert_true (from->labelled[z]);
  memcpy (kept_at (kp, z0, z1), kept_at (from, z0, z1),
          (gsize)(z1 - z0) * device.plane * sizeof (gint32));
  memset (kp->labelled + z0, 1, z1 - z0);
  device.imported += (gint)(z1 - z0);
  return 1;
}

/* The largest z extent of one label, minus one (background out). */
static guint
label_extent (const gint32 *labels, guint nz, gsize plane, int start_label)
{
  g_autoptr (GHashTable) first = g_hash_table_new (NULL, NULL);
  guint extent = 0;

  for (gsize i = 0; i < nz * plane; i++)
    {
      gpointer z0;
      if (labels[i] == start_label - 1)
        continue;
      if (!g_hash_table_lookup_extended (first, GINT_TO_POINTER (labels[i]), NULL, &z0))
        g_hash_table_insert (first, GINT_TO_POINTER (labels[i]), GUINT_TO_POINTER (i / plane));
      else
        extent = MAX (extent, (guint)(i / plane) - GPOINTER_TO_UINT (z0));
    }
  return extent;
}

/* Slices [z0, z1) of a label volume (`labels`: slice z0 first) as a
 * device that compresses the label file's strips hands them over: each
 * strip's bytes from deflate of runs, in file order. */
static gboolean
append_as_strips (const SvStripSink *strips, const gint32 *labels, guint z0, guint z1, guint ny,
                  guint nx, GError **error)
{
  const guint rows = strips->rows_per_strip, per_page = (ny + rows - 1) / rows;
  const gsize n = (gsize)(z1 - z0) * per_page;
  g_autofree guint64 *sizes = g_new (guint64, n);
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  SvTiffRunsCoder *coder = sv__tiff_runs_coder_new ();
  gint64 negative = -1;
  gboolean ok;

  for (guint z = z0; z < z1; z++)
    for (guint k = 0; k < per_page; k++)
      {
        const guint y0 = k * rows, y1 = MIN (y0 + rows, ny);
        const gint32 *strip = labels + ((gsize)(z - z0) * ny + y0) * nx;
        const gsize len = (gsize)(y1 - y0) * nx * sizeof (gint32);
        guint8 *out = g_malloc (sv__tiff_deflate_runs_bound (len));
        const gsize size = sv__tiff_deflate_runs (coder, (const guint8 *)strip, len,
                                                  nx * sizeof (gint32), 4, out);

        g_assert_cmpuint (size, >, 0);
        for (gsize i = 0; i < (gsize)(y1 - y0) * nx; i++)
          if (strip[i] < 0 && negative < 0)
            negative = z;
        sizes[(gsize)(z - z0) * per_page + k] = size;
        g_byte_array_append (bytes, out, (guint)size);
        g_free (out);
      }
  sv__tiff_runs_coder_free (coder);
  ok = strips->append (z0, z1, sizes, bytes->data, negative, strips->user_data, error);
  device.strip_slabs++;
  return ok;
}

/* Slices [z0, z1) of `labels`, whole rows of chunks, as a device that
 * compresses an OME-Zarr store's chunks hands them over: each chunk
 * gathered (0 outside the volume) and deflated as runs of its rows. */
static gboolean
append_as_chunks (const SvStripSink *strips, const gint32 *labels, guint nz, guint z0, guint z1,
                  guint ny, guint nx, GError **error)
{
  const guint cz = strips->chunks[0], cy = strips->chunks[1], cx = strips->chunks[2];
  const gsize chunk_bytes = (gsize)cz * cy * cx * sizeof (gint32);
  const guint ky = (ny + cy - 1) / cy, kx = (nx + cx - 1) / cx;
  const gsize n = (gsize)((z1 - z0 + cz - 1) / cz) * ky * kx;
  g_autofree guint64 *sizes = g_new (guint64, n);
  g_autofree gint32 *chunk = g_new (gint32, (gsize)cz * cy * cx);
  g_autofree guint8 *out = g_malloc (sv__tiff_deflate_runs_bound (chunk_bytes));
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  SvTiffRunsCoder *coder = sv__tiff_runs_coder_new ();
  gint64 negative = -1;
  gboolean ok;

  g_assert_cmpuint (z0 % cz, ==, 0);
  g_assert_true (z1 % cz == 0 || z1 == nz);
  for (gsize i = 0; i < n; i++)
    {
      const guint gz0 = z0 + (guint)(i / ((gsize)ky * kx)) * cz;
      const guint gy0 = (guint)(i / kx % ky) * cy, gx0 = (guint)(i % kx) * cx;

      for (guint z = 0; z < cz; z++)
        for (guint y = 0; y < cy; y++)
          for (guint x = 0; x < cx; x++)
            {
              const guint gz = gz0 + z, gy = gy0 + y, gx = gx0 + x;
              const gint32 v = gz < z1 && gy < ny && gx < nx
                                   ? labels[((gsize)gz * ny + gy) * nx + gx]
                                   : 0;

              chunk[((gsize)z * cy + y) * cx + x] = v;
              if (v < 0 && negative < 0)
                negative = gz0;
            }
      sizes[i] = sv__tiff_deflate_runs (coder, (const guint8 *)chunk, chunk_bytes,
                                        cx * sizeof (gint32), sizeof (gint32), out);
      g_assert_cmpuint (sizes[i], >, 0);
      g_byte_array_append (bytes, out, (guint)sizes[i]);
    }
  sv__tiff_runs_coder_free (coder);
  ok = strips->append (z0, z1, sizes, bytes->data, negative, strips->user_data, error);
  device.chunk_rows += (z1 - z0 + cz - 1) / cz;
  return ok;
}

gboolean
keeping_emit (const gint32 *labels, guint z0, guint z1, guint ny, guint nx, guint depth,
              SvSlabSink sink, gpointer user_data, const SvStripSink *strips, GError **error)
{
  const gsize plane = (gsize)ny * nx;

  /* Every other slab of the volume compressed, when the file takes
   * strips: both kinds make one file. */
  for (guint c0 = z0, c1; c0 < z1; c0 = c1)
    {
      c1 = MIN ((c0 / depth + 1) * depth, z1);
      if (strips != NULL && (c0 / depth) % 2 == 0
              ? !append_as_strips (strips, labels + (gsize)(c0 - z0) * plane, c0, c1, ny, nx,
                                   error)
              : !sink (c0, c1, labels + (gsize)(c0 - z0) * plane, user_data, error))
        return FALSE;
    }
  return TRUE;
}

static int
keeping_connect_volume (SvBackend *backend, guint nz, guint ny, guint nx, guint depth, guint extent,
                        gint64 min_size, gint64 max_size, int start_label, SvConnectivityRule rule,
                        SvSlabSource source, SvSlabDeviceSource device_source, SvSlabSink sink,
                        gpointer user_data, const SvStripSink *strips, gint64 *n_labels,
                        guint *held, GError **error)
{
  Keeper *kp = keeper_of (backend);
  const gsize plane = (gsize)ny * nx;
  g_autofree gint32 *in = NULL, *out = NULL;

  /* Its own labels when it kept them all, else through the source. */
  g_assert_true (source != NULL || kp->kept != NULL);
  if (!device.room_for_connectivity)
    return 0;
  if (source == NULL)
    in = g_memdup2 (kept_at (kp, 0, nz), nz * plane * sizeof (gint32));
  else
    {
      /* Ranges that cross slabs, and so devices when there are several. */
      in = g_new (gint32, nz * plane);
      for (guint z0 = 0, z1; z0 < nz; z0 = z1)
        {
          z1 = MIN (z0 + (z0 == 0 ? 1 : depth), nz);
          if (!source (z0, z1, in + z0 * plane, user_data, error))
            return -1;
        }
    }
  /* The extent a device's windows rely on: exactly the labels' own. */
  g_assert_cmpuint (extent, ==, label_extent (in, nz, plane, start_label));
  out = g_new (gint32, nz * plane);
  *n_labels = sv_connectivity_enforce (in, nz, ny, nx, min_size, max_size, start_label, rule, out);
  *held = nz;
  device.connected++;
  /* Every other row of a store's chunks compressed: both kinds make one
   * store. */
  if (strips != NULL && strips->chunks[0] > 0)
    {
      const guint cz = strips->chunks[0];

      g_assert_cmpuint (strips->rows_per_strip, ==, 0);
      for (guint z0 = 0; z0 < nz; z0 += cz)
        if ((z0 / cz) % 2 == 0
                ? !append_as_chunks (strips, out, nz, z0, MIN (z0 + cz, nz), ny, nx, error)
                : !sink (z0, MIN (z0 + cz, nz), out + (gsize)z0 * ny * nx, user_data, error))
          return -1;
      return 1;
    }
  /* Every other slab compressed, when the file takes strips: both kinds
   * make one file. */
  for (guint z0 = 0; z0 < nz; z0 += depth)
    if (strips != NULL && (z0 / depth) % 2 == 0
            ? !append_as_strips (strips, out + (gsize)z0 * ny * nx, z0, MIN (z0 + depth, nz), ny,
                                 nx, error)
            : !sink (z0, MIN (z0 + depth, nz), out + (gsize)z0 * ny * nx, user_data, error))
      return -1;
  return 1;
}

void
cancel_at_connect (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  if (stage == SV_STAGE_CONNECT)
    g_cancellable_cancel (user_data);
}

static void
keeping_release (SvBackend *backend)
{
  Keeper *kp = keeper_of (backend);

  cpu->release (backend);
  g_hash_table_remove_all (kp->slabs);
  keeper_drop (kp);
  kp->tallying = FALSE;
}

/* The fill of labels the host holds, counted per device. */
static gboolean
keeping_fill_unassigned (SvBackend *backend, guint z0, guint z1, const guint8 *mask,
                         gint32 *nearest, GError **error)
{
  const guint index = keeper_of (backend)->index;

  if (index < G_N_ELEMENTS (device.host_fills))
    g_atomic_int_inc (&device.host_fills[index]);
  return cpu->fill_unassigned (backend, z0, z1, mask, nearest, error);
}

static const SvSlabSteps keeping_steps = {
  .begin_pass = NULL, /* set in main: the CPU's */
  .assign_sum = keeping_assign_sum,
  .raise_maxima = keeping_raise_maxima,
  .fill_unassigned = NULL,
  .end_pass = NULL,
  .release = keeping_release,
  .connect_volume = keeping_connect_volume,
  .keep_assignment = keeping_keep,
  .label_kept_slab = keeping_label_kept_slab,
  .kept_tally = keeping_kept_tally,
  .read_kept = keeping_read_kept,
  .store_kept = keeping_store_kept,
  .holds_slab = keeping_holds_slab,
  .take_samples = keeping_take_samples,
  .pieces_prepare = keeping_pieces_prepare,
  .pieces_label = keeping_pieces_label,
  .pieces_number = keeping_pieces_number,
  .labels_at = keeping_labels_at,
  .pieces_relabel = keeping_pieces_relabel,
  .emit_kept = keeping_emit_kept,
  .compresses_chunks = TRUE,
};

static SvSlabSteps steps;

static const SvBackendClass keeping_class = {
  .name = "keeping-device",
  .create = keeping_create,
  .destroy = keeping_destroy,
  .slab_steps = &steps,
};

void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-stream-kept");
}

void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

void
make_params (SvSlicParams params[5])
{
  for (guint p = 0; p < 5; p++)
    {
      sv_slic_params_init_defaults (&params[p]);
      params[p].n_segments = 40;
    }
  params[1].slic_zero = TRUE;
  params[1].compactness = 0.05;
  params[1].start_label = 0;
  params[3].enforce_connectivity = FALSE;
  params[4].compactness = 1;
  params[4].min_size_factor = 0.9;
  params[4].max_size_factor = 1.0;
}

void
keeping_device_register (void)
{
  steps = keeping_steps;
  steps.begin_pass = cpu->begin_pass;
  steps.fill_unassigned = keeping_fill_unassigned;
  steps.end_pass = cpu->end_pass;
  sv_backend_register (&keeping_class);
}

guint
keeping_device_index (SvBackend *backend)
{
  return keeper_of (backend)->index;
}

gboolean
keeping_device_keeps_labels (SvBackend *backend)
{
  return keeper_of (backend)->kept != NULL;
}

guint
keeping_device_kept_slices (SvBackend *backend)
{
  return keeper_of (backend)->last_kept;
}

void
keeping_device_share_handles (gboolean share)
{
  steps.export_kept = share ? keeping_export_kept : NULL;
  steps.import_kept = share ? keeping_import_kept : NULL;
}

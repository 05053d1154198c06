/* Supervox tests: the pretend device that keeps the assignment
 * (keeping-device.h). */
#include "keeping-device-private.h"

#include <glib/gstdio.h>
#include <string.h>

#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io-zarr.h"
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
      g_atomic_int_inc (&device.given_back);
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
  g_atomic_int_inc (&device.label_slabs);
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
  device.failing_share = -1;
  device.failing_emit = -1;
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

/* n pretend devices. */
void
keeping_devices_new (SvBackend **keepers, guint n)
{
  for (guint w = 0; w < n; w++)
    {
      g_autoptr (GError) error = NULL;

      keepers[w] = sv_backend_new ("keeping-device", &error);
      g_assert_no_error (error);
    }
}

/* Two stores of one name in folders "cpu" and `side` of the fixture's
 * folder (the store's metadata names it), for the CPU's run and the
 * devices'. */
void
keeping_store_paths (Fixture *f, const char *side, char **cpu_out, char **out)
{
  g_autofree char *cpu_dir = g_build_filename (f->dir, "cpu", NULL);
  g_autofree char *dir = g_build_filename (f->dir, side, NULL);

  g_assert_cmpint (g_mkdir (cpu_dir, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  *cpu_out = g_build_filename (cpu_dir, "labels.zarr", NULL);
  *out = g_build_filename (dir, "labels.zarr", NULL);
}

/* A store of `codec` in chunks of 4 × 8 × 16. */
void
keeping_small_chunks (SvZarrWriteOptions *zarr, const char *codec)
{
  g_autoptr (GError) error = NULL;

  sv_zarr_write_options_init_defaults (zarr);
  g_assert_true (sv_zarr_write_options_parse (zarr, codec, &error));
  g_assert_no_error (error);
  zarr->chunks[0] = 4;
  zarr->chunks[1] = 8;
  zarr->chunks[2] = 16;
}

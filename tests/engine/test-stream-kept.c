/* Supervox engine tests: a streamed run whose slab steps keep the last
 * assignment in their own memory (SvSlabSteps.keep_assignment) and
 * prepare slabs from the file's samples themselves (take_samples), as the
 * CUDA backend does on its device. The device here is host memory behind
 * the CPU's slab steps, so that the run's other paths (SLIC-zero's maxima,
 * the fill, the tally and the connectivity reading the kept assignment,
 * or taking it back to the host when the connectivity does not fit; slabs
 * held from their samples, or prepared by the host when there is no room)
 * run in CI; the labels must be the CPU's streamed ones byte for byte. */
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

/* How much room the pretend devices say they have, and what they did. */
static struct
{
  gboolean room_for_slabs, room_for_labels, room_for_connectivity;
  gboolean only_first_keeps; /* the second device has no room for labels */
  gsize plane;
  guint samples_taken, label_slabs, connected, given_back;
  guint strip_slabs; /* slabs of the label file handed over compressed */
  gint stored;       /* slices of other ranks' labels stored (atomic: ranks are threads) */
  gint imported;     /* slices read from another rank's device (rank 0's thread alone) */
  guint unreachable; /* the index of a device whose labels import cannot reach, or G_MAXUINT */
} device;

/* What one pretend device holds (the backend's private state). */
typedef struct
{
  guint index;       /* in the order made */
  GHashTable *slabs; /* z0 → the slab's prepared values, from its samples */
  gint32 *kept;      /* nz·plane, or NULL */
  guint8 *labelled;  /* nz: the slices it made labels of */
  gsize k;
  guint *zmin, *zmax;
  guint64 n_in;
  gboolean negative, tallying;
} Keeper;

static const SvSlabSteps *const cpu = &sv__slab_steps_cpu;
static guint n_made;

static Keeper *
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
  device.samples_taken++;
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

static gboolean
keeping_keep (SvBackend *backend, guint nz, gsize plane, gsize k, GError **error)
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
  kp->kept = g_new (gint32, (gsize)nz * plane);
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
  memcpy (((Keeper *)user_data)->kept + (gsize)z0 * device.plane, nearest,
          (gsize)(z1 - z0) * device.plane * sizeof (gint32));
  return TRUE;
}

static gboolean
keeping_assign_sum (SvBackend *backend, guint z0, guint z1, const float *data, const guint8 *mask,
                    SvSlabSink sink, gpointer sink_data, GError **error)
{
  Keeper *kp = keeper_of (backend);

  data = slab_values (backend, z0, data);
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
    nearest = kp->kept + (gsize)z0 * device.plane;
  return cpu->raise_maxima (backend, z0, z1, slab_values (backend, z0, data), mask, nearest, error);
}

static gboolean
keeping_label_kept_slab (SvBackend *backend, guint z0, guint z1, const guint8 *mask,
                         int start_label, GError **error)
{
  Keeper *kp = keeper_of (backend);
  gint32 *slab;

  g_assert_nonnull (kp->kept);
  slab = kp->kept + (gsize)z0 * device.plane;
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
  memcpy (labels, keeper_of (backend)->kept + (gsize)z0 * device.plane,
          (gsize)(z1 - z0) * device.plane * sizeof (gint32));
  return TRUE;
}

/* Another rank's labels, for rank 0's connectivity. */
static gboolean
keeping_store_kept (SvBackend *backend, guint z0, guint z1, const gint32 *labels, GError **error)
{
  Keeper *kp = keeper_of (backend);

  g_assert_nonnull (kp->kept);
  memcpy (kp->kept + (gsize)z0 * device.plane, labels,
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
  memcpy (kp->kept + (gsize)z0 * device.plane, from->kept + (gsize)z0 * device.plane,
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

/* Slices [z0, z1) of `labels` as a device that compresses the label
 * file's strips hands them over: each strip's bytes from deflate of runs,
 * in file order. */
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
        const gint32 *strip = labels + ((gsize)z * ny + y0) * nx;
        const gsize len = (gsize)(y1 - y0) * nx * sizeof (gint32);
        guint8 *out = g_malloc (sv__tiff_deflate_runs_bound (len));
        const gsize size
            = sv__tiff_deflate_runs (coder, (const guint8 *)strip, len, nx * sizeof (gint32), 4, out);

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

static int
keeping_connect_volume (SvBackend *backend, guint nz, guint ny, guint nx, guint depth, guint extent,
                        gint64 min_size, gint64 max_size, int start_label,
                        SvConnectivityRule rule, SvSlabSource source,
                        SvSlabDeviceSource device_source, SvSlabSink sink, gpointer user_data,
                        const SvStripSink *strips, gint64 *n_labels, guint *held, GError **error)
{
  Keeper *kp = keeper_of (backend);
  const gsize plane = (gsize)ny * nx;
  g_autofree gint32 *in = NULL, *out = NULL;

  /* Its own labels when it kept them all, else through the source. */
  g_assert_true (source != NULL || kp->kept != NULL);
  if (!device.room_for_connectivity)
    return 0;
  if (source == NULL)
    in = g_memdup2 (kp->kept, nz * plane * sizeof (gint32));
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
  *n_labels
      = sv_connectivity_enforce (in, nz, ny, nx, min_size, max_size, start_label, rule, out);
  *held = nz;
  device.connected++;
  /* Every other slab compressed, when the file takes strips: both kinds
   * make one file. */
  for (guint z0 = 0; z0 < nz; z0 += depth)
    if (strips != NULL && (z0 / depth) % 2 == 0
            ? !append_as_strips (strips, out, z0, MIN (z0 + depth, nz), ny, nx, error)
            : !sink (z0, MIN (z0 + depth, nz), out + (gsize)z0 * ny * nx, user_data, error))
      return -1;
  return 1;
}

static void
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
};

static SvSlabSteps steps;

static const SvBackendClass keeping_class = {
  .name = "keeping-device",
  .create = keeping_create,
  .destroy = keeping_destroy,
  .slab_steps = &steps,
};

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-stream-kept");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

/* Parameter sets: plain, SLIC-zero from label 0, a mask (two passes),
 * no connectivity, and splits and merges across slabs. */
static void
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

static void
test_kept_assignment (Fixture *f, gconstpointer data)
{
  static const struct
  {
    gboolean slabs, labels, connectivity, only_first;
  } rooms[] = {
    { TRUE, TRUE, TRUE, FALSE },    { FALSE, TRUE, TRUE, FALSE }, { TRUE, TRUE, FALSE, FALSE },
    { FALSE, FALSE, FALSE, FALSE }, { TRUE, TRUE, TRUE, TRUE },
  };
  g_autoptr (SvVolume) v = sv_test_textured_volume (23, 19, 21, 1);
  g_autofree char *in = NULL;
  g_autofree char *cpu_out = g_build_filename (f->dir, "cpu.tif", NULL);
  g_autofree char *out = g_build_filename (f->dir, "kept.tif", NULL);
  g_autofree guint8 *ball = g_new (guint8, (gsize)23 * 19 * 21);
  g_autoptr (GError) error = NULL;
  SvBackend *keepers[2];
  SvSlicParams params[5];

  /* Away from 0 and 1, so that the rescale's shift and scale both count. */
  for (gsize i = 0; i < sv_volume_n_voxels (v); i++)
    v->data[i] = 0.25f + 0.5f * v->data[i];
  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U16);
  for (guint z = 0; z < 23; z++)
    for (guint y = 0; y < 19; y++)
      for (guint x = 0; x < 21; x++)
        ball[((gsize)z * 19 + y) * 21 + x]
            = (z - 11.0) * (z - 11.0) + (y - 9.0) * (y - 9.0) + (x - 10.0) * (x - 10.0) < 90;
  make_params (params);
  for (guint w = 0; w < 2; w++)
    {
      keepers[w] = sv_backend_new ("keeping-device", &error);
      g_assert_no_error (error);
    }

  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    {
      const guint8 *mask = p == 2 ? ball : NULL;
      SvStreamOptions options;

      sv_stream_options_init_defaults (&options);
      options.slab_depth = 4;
      g_assert_true (
          sv_stream_slic_run (in, cpu_out, &params[p], mask, &options, NULL, NULL, &error));
      g_assert_no_error (error);
      for (guint n_workers = 1; n_workers <= 2; n_workers++)
        for (guint r = 0; r < G_N_ELEMENTS (rooms); r++)
          {
            /* Kept only when every device has room for its share. */
            const gboolean kept = rooms[r].labels && (!rooms[r].only_first || n_workers == 1);
            SvStreamReport report;

            g_test_message ("params %u, %u devices, room for slabs %d, labels %d (only the "
                            "first %d), connectivity %d",
                            p, n_workers, rooms[r].slabs, rooms[r].labels, rooms[r].only_first,
                            rooms[r].connectivity);
            device.room_for_slabs = rooms[r].slabs;
            device.room_for_labels = rooms[r].labels;
            device.room_for_connectivity = rooms[r].connectivity;
            device.only_first_keeps = rooms[r].only_first;
            device.plane = 19 * 21;
            device.samples_taken = device.label_slabs = device.connected = device.given_back = 0;
            device.strip_slabs = 0;
            options.backends = keepers;
            options.n_backends = n_workers;
            g_assert_true (
                sv_stream_slic_run (in, out, &params[p], mask, &options, NULL, &report, &error));
            g_assert_no_error (error);
            sv_test_assert_same_file (cpu_out, out);
            g_assert_cmpint (report.labels_on_device, ==, kept);
            g_assert_cmpuint (device.label_slabs, ==, kept ? 6 : 0);
            /* The first device's share is given back when the second has
             * no room. */
            g_assert_cmpuint (device.given_back, ==, rooms[r].labels && !kept ? 1 : 0);
            /* With room the first device runs the connectivity, on its
             * own labels or on what the source reads from the others or
             * the spill file. */
            g_assert_cmpint (report.connect_on_device, ==,
                             rooms[r].connectivity && params[p].enforce_connectivity);
            g_assert_cmpuint (device.connected, ==, report.connect_on_device ? 1 : 0);
            /* The label file (deflate of runs, the default) takes its
             * strips compressed on the device: three of the six slabs. */
            g_assert_cmpuint (device.strip_slabs, ==, report.connect_on_device ? 3 : 0);
            /* Six slabs, each taken once from its samples when there is
             * room. */
            g_assert_cmpuint (device.samples_taken, ==, rooms[r].slabs ? 6 : 0);
            g_assert_cmpuint (report.resident_slabs, ==, rooms[r].slabs ? 6 : 0);
            /* The statistics pass and the first pass read the file; every
             * slab is kept after that, on the devices or by the host. */
            g_assert_cmpuint (report.image_passes, ==, 2);
            for (guint w = 0; w < 2; w++)
              g_assert_null (keeper_of (keepers[w])->kept);
            g_assert_cmpint (g_remove (out), ==, 0);
          }
    }
  /* One slab for two devices: the second keeps an assignment it never
   * writes, and tallies nothing. */
  {
    SvStreamOptions options;
    SvStreamReport report;

    sv_stream_options_init_defaults (&options);
    options.slab_depth = 23;
    g_assert_true (
        sv_stream_slic_run (in, cpu_out, &params[1], NULL, &options, NULL, NULL, &error));
    g_assert_no_error (error);
    device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
    device.only_first_keeps = FALSE;
    device.label_slabs = 0;
    options.backends = keepers;
    options.n_backends = 2;
    g_assert_true (sv_stream_slic_run (in, out, &params[1], NULL, &options, NULL, &report, &error));
    g_assert_no_error (error);
    sv_test_assert_same_file (cpu_out, out);
    g_assert_true (report.labels_on_device);
    g_assert_cmpuint (device.label_slabs, ==, 1);
  }
  /* A cancel once the connectivity has begun ends the device's at its next
   * slab: no file. */
  {
    g_autoptr (GCancellable) cancel = g_cancellable_new ();
    SvStreamOptions options;

    g_assert_cmpint (g_remove (out), ==, 0);
    sv_stream_options_init_defaults (&options);
    options.slab_depth = 4;
    options.backends = keepers;
    options.n_backends = 1;
    options.cancellable = cancel;
    options.progress = cancel_at_connect;
    options.user_data = cancel;
    device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
    device.connected = 0;
    g_assert_false (sv_stream_slic_run (in, out, &params[0], NULL, &options, NULL, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error (&error);
    g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    g_assert_cmpuint (device.connected, ==, 1);
  }
  for (guint w = 0; w < 2; w++)
    sv_backend_free (keepers[w]);
}

/* What every rank runs: its own pretend device. */
typedef struct
{
  const char *in, *out;
  const SvSlicParams *params;
  const guint8 *mask;
  SvBackend **devices;
} RanksJob;

static gboolean
rank_on_device (const SvStreamRanks *ranks, gpointer user_data, SvStreamReport *report,
                GError **error)
{
  const RanksJob *job = user_data;
  SvStreamOptions options;

  sv_stream_options_init_defaults (&options);
  options.ranks = ranks;
  options.slab_depth = 3;
  options.backends = &job->devices[ranks->rank];
  options.n_backends = 1;
  return sv_stream_slic_run (job->in, job->out, job->params, job->mask, &options, NULL, report,
                             error);
}

/* Ranks with a device each keep their labels there; rank 0's device takes
 * the others' labels and runs the connectivity on the whole volume: the
 * file of one process on the CPU, byte for byte. */
static void
test_ranks_keep_on_devices (Fixture *f, gconstpointer data)
{
  g_autoptr (SvVolume) v = sv_test_textured_volume (23, 19, 21, 1);
  g_autofree char *in = NULL;
  g_autofree char *cpu_out = g_build_filename (f->dir, "cpu.tif", NULL);
  g_autofree char *out = g_build_filename (f->dir, "ranks.tif", NULL);
  g_autofree guint8 *ball = g_new (guint8, (gsize)23 * 19 * 21);
  g_autoptr (GError) error = NULL;
  SvSlicParams params[5];

  in = sv_test_write_volume (f->dir, "in.tif", v, SV_SAMPLE_U8);
  for (gsize i = 0; i < (gsize)23 * 19 * 21; i++)
    ball[i] = (i * 7919) % 13 != 0;
  make_params (params);
  device.room_for_slabs = device.room_for_labels = device.room_for_connectivity = TRUE;
  device.only_first_keeps = FALSE;
  device.plane = 19 * 21;
  /* Rank 0's device takes the others' labels through the host (no
   * handles), from their devices, or from all but the last rank's. */
  for (guint way = 0; way < 3; way++)
    for (guint p = 0; p < 4; p++)
      for (guint n = 2; n <= 3; n++)
        {
          const guint8 *mask = p == 2 ? ball : NULL;
          g_autofree SvStreamReport *reports = g_new0 (SvStreamReport, n);
          g_autofree SvBackend **devices = g_new (SvBackend *, n);
          RanksJob job = { in, out, &params[p], mask, devices };
          SvStreamOptions options;
          guint z0, z1, last0, last1;

          g_test_message ("params %u, %u ranks, way %u", p, n, way);
          steps.export_kept = way > 0 ? keeping_export_kept : NULL;
          steps.import_kept = way > 0 ? keeping_import_kept : NULL;
          sv_stream_options_init_defaults (&options);
          g_assert_true (
              sv_stream_slic_run (in, cpu_out, &params[p], mask, &options, NULL, NULL, &error));
          g_assert_no_error (error);
          for (guint r = 0; r < n; r++)
            {
              devices[r] = sv_backend_new ("keeping-device", &error);
              g_assert_no_error (error);
            }
          device.unreachable = way == 2 ? keeper_of (devices[n - 1])->index : G_MAXUINT;
          device.stored = device.imported = 0;
          device.connected = 0;
          g_assert_true (sv_test_ranks_run (n, rank_on_device, &job, reports, &error));
          g_assert_no_error (error);
          sv_test_assert_same_file (cpu_out, out);
          for (guint r = 0; r < n; r++)
            g_assert_true (reports[r].labels_on_device);
          /* Rank 0's device took every other rank's slices, each once. */
          sv_stream_rank_range (23, 0, n, &z0, &z1);
          sv_stream_rank_range (23, n - 1, n, &last0, &last1);
          g_assert_cmpint (device.stored + device.imported, ==, 23 - (gint)(z1 - z0));
          g_assert_cmpint (device.stored, ==,
                           way == 0   ? 23 - (gint)(z1 - z0)
                           : way == 1 ? 0
                                      : (gint)(last1 - last0));
          g_assert_cmpint (reports[0].connect_on_device, ==, params[p].enforce_connectivity);
          g_assert_cmpuint (device.connected, ==, params[p].enforce_connectivity ? 1 : 0);
          for (guint r = 0; r < n; r++)
            sv_backend_free (devices[r]);
          g_assert_cmpint (g_remove (out), ==, 0);
        }
  steps.export_kept = NULL;
  steps.import_kept = NULL;
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  steps = keeping_steps;
  steps.begin_pass = cpu->begin_pass;
  steps.fill_unassigned = cpu->fill_unassigned;
  steps.end_pass = cpu->end_pass;
  sv_backend_register (&keeping_class);
  g_test_add ("/engine/stream/kept/identical-to-cpu", Fixture, NULL, fixture_setup,
              test_kept_assignment, fixture_teardown);
  g_test_add ("/engine/stream/kept/ranks-keep-on-devices", Fixture, NULL, fixture_setup,
              test_ranks_keep_on_devices, fixture_teardown);
  return g_test_run ();
}

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
#include "sv-test-files.h"
#include "sv-test-volumes.h"

/* What the pretend device holds, and how much room it says it has. */
static struct
{
  gboolean room_for_slabs, room_for_labels, room_for_connectivity;
  GHashTable *slabs; /* z0 → the slab's prepared values, from its samples */
  guint samples_taken;
  gint32 *kept; /* nz·plane, or NULL */
  guint nz;
  gsize plane, k;
  guint *zmin, *zmax;
  guint64 n_in;
  gboolean negative;
  guint label_slabs, connected;
} device;

static const SvSlabSteps *const cpu = &sv__slab_steps_cpu;

static gboolean
keeping_create (SvBackend *backend, GError **error)
{
  return TRUE;
}

static void
keeping_destroy (SvBackend *backend)
{
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
  g_hash_table_insert (device.slabs, GUINT_TO_POINTER (z0), values);
  device.samples_taken++;
  return 1;
}

static gboolean
keeping_holds_slab (SvBackend *backend, guint z0, guint z1)
{
  return g_hash_table_contains (device.slabs, GUINT_TO_POINTER (z0));
}

/* The slab's values: the caller's, or those it holds. */
static const float *
slab_values (guint z0, const float *data)
{
  if (data != NULL)
    return data;
  g_assert_true (g_hash_table_contains (device.slabs, GUINT_TO_POINTER (z0)));
  return g_hash_table_lookup (device.slabs, GUINT_TO_POINTER (z0));
}

static gboolean
keeping_keep (SvBackend *backend, guint nz, gsize plane, gsize k, GError **error)
{
  if (!device.room_for_labels)
    return FALSE;
  g_assert_null (device.kept);
  device.kept = g_new (gint32, (gsize)nz * plane);
  device.nz = nz;
  g_assert_cmpuint (device.plane, ==, plane);
  device.k = k;
  device.zmin = g_new (guint, MAX (k, 1));
  device.zmax = g_new (guint, MAX (k, 1));
  return TRUE;
}

static gboolean
copy_to_kept (guint z0, guint z1, const gint32 *nearest, gpointer user_data, GError **error)
{
  memcpy (device.kept + (gsize)z0 * device.plane, nearest,
          (gsize)(z1 - z0) * device.plane * sizeof (gint32));
  return TRUE;
}

static gboolean
keeping_assign_sum (SvBackend *backend, guint z0, guint z1, const float *data, const guint8 *mask,
                    SvSlabSink sink, gpointer sink_data, GError **error)
{
  data = slab_values (z0, data);
  if (device.kept == NULL)
    return cpu->assign_sum (backend, z0, z1, data, mask, sink, sink_data, error);
  /* A kept assignment is never handed to the host. */
  g_assert_null (sink);
  return cpu->assign_sum (backend, z0, z1, data, mask, copy_to_kept, NULL, error);
}

static gboolean
keeping_raise_maxima (SvBackend *backend, guint z0, guint z1, const float *data, const guint8 *mask,
                      const gint32 *nearest, GError **error)
{
  g_assert_true ((nearest == NULL) == (device.kept != NULL));
  if (nearest == NULL)
    nearest = device.kept + (gsize)z0 * device.plane;
  return cpu->raise_maxima (backend, z0, z1, slab_values (z0, data), mask, nearest, error);
}

static gboolean
keeping_label_kept_slab (SvBackend *backend, guint z0, guint z1, const guint8 *mask,
                         int start_label, GError **error)
{
  gint32 *slab = device.kept + (gsize)z0 * device.plane;

  g_assert_nonnull (device.kept);
  if (device.label_slabs++ == 0)
    {
      for (gsize c = 0; c < device.k; c++)
        {
          device.zmin[c] = G_MAXUINT;
          device.zmax[c] = 0;
        }
      device.n_in = 0;
      device.negative = FALSE;
    }
  if (!cpu->fill_unassigned (backend, z0, z1, mask, slab, error))
    return FALSE;
  for (gsize i = 0; i < (gsize)(z1 - z0) * device.plane; i++)
    {
      const gint32 c = slab[i];
      const guint z = z0 + (guint)(i / device.plane);

      device.n_in += mask == NULL || mask[(gsize)z0 * device.plane + i] != 0;
      if (c >= 0)
        {
          device.zmin[c] = MIN (device.zmin[c], z);
          device.zmax[c] = MAX (device.zmax[c], z);
        }
      slab[i] = c + start_label;
      device.negative |= slab[i] < 0;
    }
  return TRUE;
}

static gboolean
keeping_kept_tally (SvBackend *backend, guint *zmin, guint *zmax, guint64 *n_in, gboolean *negative,
                    GError **error)
{
  for (gsize c = 0; c < device.k; c++)
    {
      zmin[c] = MIN (zmin[c], device.zmin[c]);
      zmax[c] = MAX (zmax[c], device.zmax[c]);
    }
  *n_in = device.n_in;
  *negative = device.negative;
  return TRUE;
}

static gboolean
keeping_read_kept (SvBackend *backend, guint z0, guint z1, gint32 *labels, GError **error)
{
  memcpy (labels, device.kept + (gsize)z0 * device.plane,
          (gsize)(z1 - z0) * device.plane * sizeof (gint32));
  return TRUE;
}

static int
keeping_connect_volume (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                        gint64 min_size, gint64 max_size, int start_label, SvSlabSource source,
                        SvSlabSink sink, gpointer user_data, gint64 *n_labels, GError **error)
{
  g_autofree gint32 *out = NULL;

  /* Only labels it keeps, and only with room. */
  g_assert_true ((source == NULL) == (device.kept != NULL));
  if (source != NULL || !device.room_for_connectivity)
    return 0;
  out = g_new (gint32, (gsize)nz * ny * nx);
  *n_labels
      = sv_connectivity_enforce (device.kept, nz, ny, nx, min_size, max_size, start_label, out);
  device.connected++;
  for (guint z0 = 0; z0 < nz; z0 += depth)
    if (!sink (z0, MIN (z0 + depth, nz), out + (gsize)z0 * ny * nx, user_data, error))
      return -1;
  return 1;
}

static void
keeping_release (SvBackend *backend)
{
  cpu->release (backend);
  g_hash_table_remove_all (device.slabs);
  g_clear_pointer (&device.kept, g_free);
  g_clear_pointer (&device.zmin, g_free);
  g_clear_pointer (&device.zmax, g_free);
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
    gboolean slabs, labels, connectivity;
  } rooms[] = {
    { TRUE, TRUE, TRUE },
    { FALSE, TRUE, TRUE },
    { TRUE, TRUE, FALSE },
    { FALSE, FALSE, FALSE },
  };
  g_autoptr (SvVolume) v = sv_test_textured_volume (23, 19, 21, 1);
  g_autofree char *in = NULL;
  g_autofree char *cpu_out = g_build_filename (f->dir, "cpu.tif", NULL);
  g_autofree char *out = g_build_filename (f->dir, "kept.tif", NULL);
  g_autofree guint8 *ball = g_new (guint8, (gsize)23 * 19 * 21);
  g_autoptr (GError) error = NULL;
  g_autoptr (SvBackend) keeper = NULL;
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
  sv_backend_register (&keeping_class);
  keeper = sv_backend_new ("keeping-device", &error);
  g_assert_no_error (error);

  for (guint p = 0; p < G_N_ELEMENTS (params); p++)
    {
      const guint8 *mask = p == 2 ? ball : NULL;
      SvStreamOptions options;

      sv_stream_options_init_defaults (&options);
      options.slab_depth = 4;
      g_assert_true (
          sv_stream_slic_run (in, cpu_out, &params[p], mask, &options, NULL, NULL, &error));
      g_assert_no_error (error);
      for (guint r = 0; r < G_N_ELEMENTS (rooms); r++)
        {
          SvStreamReport report;

          g_test_message ("params %u, room for slabs %d, labels %d, connectivity %d", p,
                          rooms[r].slabs, rooms[r].labels, rooms[r].connectivity);
          device.room_for_slabs = rooms[r].slabs;
          device.plane = 19 * 21;
          device.samples_taken = 0;
          device.room_for_labels = rooms[r].labels;
          device.room_for_connectivity = rooms[r].connectivity;
          device.label_slabs = device.connected = 0;
          options.backends = &keeper;
          options.n_backends = 1;
          g_assert_true (
              sv_stream_slic_run (in, out, &params[p], mask, &options, NULL, &report, &error));
          g_assert_no_error (error);
          sv_test_assert_same_file (cpu_out, out);
          g_assert_cmpint (report.labels_on_device, ==, rooms[r].labels);
          g_assert_cmpuint (device.label_slabs, ==, rooms[r].labels ? 6 : 0);
          g_assert_cmpint (report.connect_on_device, ==,
                           rooms[r].labels && rooms[r].connectivity
                               && params[p].enforce_connectivity);
          g_assert_cmpuint (device.connected, ==, report.connect_on_device ? 1 : 0);
          /* Six slabs, each taken once from its samples when there is room. */
          g_assert_cmpuint (device.samples_taken, ==, rooms[r].slabs ? 6 : 0);
          g_assert_cmpuint (report.resident_slabs, ==, rooms[r].slabs ? 6 : 0);
          /* The statistics pass and the first pass read the file; every
           * slab is kept after that, on the device or by the host. */
          g_assert_cmpuint (report.image_passes, ==, 2);
          g_assert_null (device.kept);
          g_assert_cmpint (g_remove (out), ==, 0);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  device.slabs = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  steps = keeping_steps;
  steps.begin_pass = cpu->begin_pass;
  steps.fill_unassigned = cpu->fill_unassigned;
  steps.end_pass = cpu->end_pass;
  g_test_add ("/engine/stream/kept/identical-to-cpu", Fixture, NULL, fixture_setup,
              test_kept_assignment, fixture_teardown);
  return g_test_run ();
}

/* Supervox tests: the pretend device's connectivity on one device
 * (SvSlabSteps.connect_volume) and the label file's strips or store
 * chunks it hands over compressed. */
#include "keeping-device-private.h"

#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"
#include "io-tiff-private.h"

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
  g_atomic_int_inc (&device.strip_slabs);
  return ok;
}

/* Slices [z0, z1) of `labels` (slice z0 first), whole rows of chunks, as a device that
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
                                   ? labels[((gsize)(gz - z0) * ny + gy) * nx + gx]
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
  g_atomic_int_add (&device.chunk_rows, (gint)((z1 - z0 + cz - 1) / cz));
  return ok;
}

gboolean
keeping_emit (const gint32 *labels, guint nz, guint z0, guint z1, guint ny, guint nx, guint depth,
              SvSlabSink sink, gpointer user_data, const SvStripSink *strips, GError **error)
{
  const gsize plane = (gsize)ny * nx;

  /* Every other row of a store's chunks compressed: both kinds make one
   * store. */
  if (strips != NULL && strips->chunks[0] > 0)
    {
      const guint cz = strips->chunks[0];

      for (guint c0 = z0, c1; c0 < z1; c0 = c1)
        {
          c1 = MIN (c0 + cz, z1);
          if ((c0 / cz) % 2 == 0
                  ? !append_as_chunks (strips, labels + (gsize)(c0 - z0) * plane, nz, c0, c1, ny,
                                       nx, error)
                  : !sink (c0, c1, labels + (gsize)(c0 - z0) * plane, user_data, error))
            return FALSE;
        }
      return TRUE;
    }
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

int
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
  g_atomic_int_inc (&device.connected);
  /* Every other row of a store's chunks compressed: both kinds make one
   * store. */
  if (strips != NULL && strips->chunks[0] > 0)
    {
      const guint cz = strips->chunks[0];

      g_assert_cmpuint (strips->rows_per_strip, ==, 0);
      for (guint z0 = 0; z0 < nz; z0 += cz)
        if ((z0 / cz) % 2 == 0
                ? !append_as_chunks (strips, out + (gsize)z0 * ny * nx, nz, z0, MIN (z0 + cz, nz),
                                     ny, nx, error)
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

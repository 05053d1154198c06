/* Supervox tests: the pretend device's share of the connectivity when
 * several keep the labels (SvSlabSteps.pieces_prepare and the steps after
 * it), done the plain way on the host: the sequential rule over its
 * slices and the warm-up below them, recording pieces instead of labels.
 * The engine's part (stream-device-pieces.c: who labels, who numbers, the
 * offsets, the warm-up's labels, the file's order) runs as with the GPU. */
#include "keeping-device-private.h"

#include <string.h>

#include "supervox/sv-connectivity.h"
#include "supervox/sv-error.h"

#define UNSET (-2)
#define MASKED (-1)

typedef struct
{
  gint64 start; /* first voxel, over the whole volume */
  gint64 size;
  gint32 joins; /* the last earlier piece its BFS met, or −1 */
} Piece;

struct _KeeperPieces
{
  guint w0, w1, ny, nx; /* the slices its rule reads: [a − 1 − E, b + E) */
  guint nz;
  gint32 *in;           /* their labels; the others' copied first */
  GArray *pieces;       /* Piece, numbered in raster order */
  guint n_warm;         /* those that start below its slices */
};

void
keeping_pieces_drop (Keeper *kp)
{
  if (kp->pieces == NULL)
    return;
  g_free (kp->pieces->in);
  if (kp->pieces->pieces != NULL)
    g_array_free (kp->pieces->pieces, TRUE);
  g_clear_pointer (&kp->pieces, g_free);
}

int
keeping_pieces_prepare (SvBackend *backend, guint nz, guint ny, guint nx, guint extent,
                        SvSlabSource source, SvSlabDeviceSource device_source, gpointer user_data,
                        guint *held, GError **error)
{
  Keeper *kp = keeper_of (backend);
  const gsize plane = (gsize)ny * nx;
  KeeperPieces *p;

  if (!device.room_for_connectivity || kp->kept == NULL)
    return 0;
  keeping_pieces_drop (kp);
  p = kp->pieces = g_new0 (KeeperPieces, 1);
  p->w0 = (guint)MAX ((gint64)kp->z0 - 1 - (gint64)extent, 0);
  p->w1 = (guint)MIN ((guint64)kp->z1 + extent, (guint64)nz);
  p->ny = ny;
  p->nx = nx;
  p->nz = nz;
  p->in = g_new (gint32, MAX ((gsize)(p->w1 - p->w0) * plane, 1));
  /* The others' slices now, before any writes over its own. */
  if ((kp->z0 > p->w0 && !source (p->w0, kp->z0, p->in, user_data, error))
      || (p->w1 > kp->z1
          && !source (kp->z1, p->w1, p->in + (gsize)(kp->z1 - p->w0) * plane, user_data, error)))
    {
      keeping_pieces_drop (kp);
      return -1;
    }
  *held = p->w1 - p->w0;
  return 1;
}

/* Its own slices' labels into the window, as they are now. */
static void
take_own (Keeper *kp)
{
  KeeperPieces *p = kp->pieces;
  const gsize plane = (gsize)p->ny * p->nx;

  memcpy (p->in + (gsize)(kp->z0 - p->w0) * plane, kp->kept,
          (gsize)(kp->z1 - kp->z0) * plane * sizeof (gint32));
}

gboolean
keeping_pieces_label (SvBackend *backend, gint64 min_size, gint64 max_size, int start_label,
                      guint depth, SvSlabSink sink, gpointer user_data, const SvStripSink *strips,
                      gint64 *n_labels, GError **error)
{
  Keeper *kp = keeper_of (backend);
  KeeperPieces *p = kp->pieces;
  const gsize plane = (gsize)p->ny * p->nx, n_own = (gsize)(kp->z1 - kp->z0) * plane;
  g_autofree gint32 *out = g_new (gint32, MAX ((gsize)(p->w1 - p->w0) * plane, 1));
  gint32 top = start_label - 1;
  gboolean ok;

  /* Its slices start the volume: the rule over them and the extent
   * above gives their final labels. */
  g_assert_cmpuint (p->w0, ==, 0);
  g_assert_cmpuint (kp->z0, ==, 0);
  take_own (kp);
  sv_connectivity_enforce (p->in, p->w1 - p->w0, p->ny, p->nx, min_size, max_size, start_label,
                           SV_CONNECTIVITY_RULE_CONNECTED, out);
  memcpy (kp->kept, out, n_own * sizeof (gint32));
  /* Every new label of a piece that starts in its slices has a voxel
   * there, in raster order: the largest is the count. */
  for (gsize i = 0; i < n_own; i++)
    top = MAX (top, out[i]);
  *n_labels = (gint64)top - start_label + 1;
  g_atomic_int_inc (&device.connected);
  ok = keeping_emit (kp->kept, p->nz, kp->z0, kp->z1, p->ny, p->nx, depth, sink, user_data,
                     strips, error);
  keeping_pieces_drop (kp);
  return ok;
}

/* The sequential rule over the window, step by step (BFS over +x −x +y
 * −y +z −z through voxels of one label, capped at max_size), recording
 * pieces; *piece_of receives each voxel's. */
static void
cut_pieces (KeeperPieces *p, gint32 mask_label, gint64 max_size, gint32 *piece_of)
{
  const guint nz = p->w1 - p->w0, ny = p->ny, nx = p->nx;
  const gsize plane = (gsize)ny * nx, n = (gsize)nz * plane;
  g_autofree gsize *queue = g_new (gsize, MAX (n, 1));

  for (gsize i = 0; i < n; i++)
    piece_of[i] = p->in[i] == mask_label ? MASKED : UNSET;
  for (gsize v = 0; v < n; v++)
    {
      const gint32 label = p->in[v], id = (gint32)p->pieces->len;
      gint64 size = 1, visited = 0;
      gint32 joins = -1;
      Piece piece;

      if (piece_of[v] != UNSET)
        continue;
      piece_of[v] = id;
      queue[0] = v;
      while (visited < size && size < max_size)
        {
          const gsize q = queue[visited];
          const guint z = (guint)(q / plane), y = (guint)(q % plane / nx), x = (guint)(q % nx);
          const gsize nb[6] = { q + 1, q - 1, q + nx, q - nx, q + plane, q - plane };
          const gboolean inside[6] = { x + 1 < nx, x > 0, y + 1 < ny, y > 0, z + 1 < nz, z > 0 };

          for (int k = 0; k < 6 && size < max_size; k++)
            {
              if (!inside[k])
                continue;
              if (p->in[nb[k]] == label && piece_of[nb[k]] == UNSET)
                {
                  piece_of[nb[k]] = id;
                  queue[size++] = nb[k];
                }
              else if (piece_of[nb[k]] >= 0 && piece_of[nb[k]] != id)
                joins = piece_of[nb[k]];
            }
          visited++;
        }
      piece.start = (gint64)p->w0 * (gint64)plane + (gint64)v;
      piece.size = size;
      piece.joins = joins;
      g_array_append_val (p->pieces, piece);
    }
}

gboolean
keeping_pieces_number (SvBackend *backend, gint64 min_size, gint64 max_size, int start_label,
                       GArray *warm_starts, gint64 *n_new, GError **error)
{
  Keeper *kp = keeper_of (backend);
  KeeperPieces *p = kp->pieces;
  const gsize plane = (gsize)p->ny * p->nx;
  const gint64 own_from = (gint64)kp->z0 * (gint64)plane, own_to = (gint64)kp->z1 * (gint64)plane;
  g_autofree gint32 *piece_of = NULL;

  if (device.failing_share == (gint)kp->index)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "pretend device %u: no room for its pieces' table", kp->index);
      return FALSE;
    }
  piece_of = g_new (gint32, MAX ((gsize)(p->w1 - p->w0) * plane, 1));
  take_own (kp);
  p->pieces = g_array_new (FALSE, FALSE, sizeof (Piece));
  cut_pieces (p, start_label - 1, max_size, piece_of);
  *n_new = 0;
  p->n_warm = 0;
  for (guint i = 0; i < p->pieces->len; i++)
    {
      Piece *piece = &g_array_index (p->pieces, Piece, i);

      /* Only a small piece joins the one it met. */
      if (piece->size >= min_size)
        piece->joins = -1;
      if (piece->start < own_from)
        {
          g_array_append_val (warm_starts, piece->start);
          p->n_warm++;
        }
      else if (piece->start < own_to)
        *n_new += piece->joins < 0;
    }
  /* Its own slices hold their pieces' numbers until the labels come. */
  for (gsize i = 0; i < (gsize)(kp->z1 - kp->z0) * plane; i++)
    {
      const gint32 id = piece_of[(gsize)(kp->z0 - p->w0) * plane + i];
      kp->kept[i] = id == MASKED ? start_label - 1 : start_label + id;
    }
  return TRUE;
}

gboolean
keeping_labels_at (SvBackend *backend, const gint64 *voxels, gsize n, gint32 *labels,
                   GError **error)
{
  Keeper *kp = keeper_of (backend);
  const gint64 from = (gint64)kp->z0 * (gint64)device.plane;

  for (gsize i = 0; i < n; i++)
    {
      g_assert_cmpint (voxels[i], >=, from);
      g_assert_cmpint (voxels[i], <, (gint64)kp->z1 * (gint64)device.plane);
      labels[i] = kp->kept[voxels[i] - from];
    }
  return TRUE;
}

gboolean
keeping_pieces_relabel (SvBackend *backend, int first_label, const gint32 *warm_labels,
                        gsize n_warm, int start_label, GError **error)
{
  Keeper *kp = keeper_of (backend);
  KeeperPieces *p = kp->pieces;
  const gsize plane = (gsize)p->ny * p->nx;
  g_autofree gint32 *label = g_new (gint32, MAX (p->pieces->len, 1));
  gint64 next = first_label;

  g_assert_cmpuint (n_warm, ==, p->n_warm);
  for (guint i = 0; i < p->pieces->len; i++)
    {
      const Piece *piece = &g_array_index (p->pieces, Piece, i);

      if (i < p->n_warm)
        label[i] = warm_labels[i];
      else if (piece->joins < 0)
        label[i] = (gint32)next++;
      else
        label[i] = label[piece->joins];
    }
  for (gsize i = 0; i < (gsize)(kp->z1 - kp->z0) * plane; i++)
    if (kp->kept[i] != start_label - 1)
      kp->kept[i] = label[kp->kept[i] - start_label];
  keeping_pieces_drop (kp);
  return TRUE;
}

gboolean
keeping_emit_kept (SvBackend *backend, guint nz, guint ny, guint nx, guint depth, SvSlabSink sink,
                   gpointer user_data, const SvStripSink *strips, GError **error)
{
  Keeper *kp = keeper_of (backend);

  /* Later shares that write parts of a store at once meet here. */
  if (device.emit_meet > 1)
    {
      const gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

      g_atomic_int_inc (&device.emit_arrived);
      while (g_atomic_int_get (&device.emit_arrived) < device.emit_meet
             && g_get_monotonic_time () < until)
        g_usleep (1000);
      if (g_atomic_int_get (&device.emit_arrived) >= device.emit_meet)
        g_atomic_int_inc (&device.emit_met);
    }
  if (device.failing_emit == (gint)kp->index)
    {
      const guint row = strips != NULL && strips->chunks[0] > 0 ? strips->chunks[0] : depth;

      if (!keeping_emit (kp->kept, nz, kp->z0, MIN (kp->z0 + row, kp->z1), ny, nx, depth, sink,
                         user_data, strips, error))
        return FALSE;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "pretend device %u: its labels cannot be copied", kp->index);
      return FALSE;
    }
  return keeping_emit (kp->kept, nz, kp->z0, kp->z1, ny, nx, depth, sink, user_data, strips,
                       error);
}

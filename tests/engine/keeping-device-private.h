/* Supervox tests: the pretend device's state, shared by keeping-device.c
 * (the passes and the kept assignment) and keeping-device-pieces.c (its
 * share of the connectivity when several keep the labels). */
#pragma once

#include "keeping-device.h"

#include "supervox/sv-backend-class.h"

G_BEGIN_DECLS

typedef struct _KeeperPieces KeeperPieces;

/* What one pretend device holds (the backend's private state). */
typedef struct
{
  guint index;       /* in the order made */
  GHashTable *slabs; /* z0 → the slab's prepared values, from its samples */
  gint32 *kept;      /* (z1 − z0)·plane from slice z0, or NULL */
  guint z0, z1;      /* the slices it keeps */
  guint last_kept;   /* z1 − z0 of the last keep, 0 before one */
  guint8 *labelled;  /* nz: the slices it made labels of */
  gsize k;
  guint *zmin, *zmax;
  guint64 n_in;
  gboolean negative, tallying;
  guint met_in_run; /* device.run when it last waited for the others */
  KeeperPieces *pieces; /* its share of the connectivity, between steps */
} Keeper;

Keeper *keeper_of (SvBackend *backend);
/* Slices [z0, z1) of the kept labels, which must hold them. */
gint32 *kept_at (Keeper *kp, guint z0, guint z1);
/* Slices [z0, z1) of labels (slice z0 first, of nz) to the label file in
 * slabs of `depth`, every other one (counted over the volume) compressed
 * when the file takes strips; for a store that takes chunks, rows of
 * them from z0 (a row's start), every other row compressed
 * (keeping-device-connect.c). */
gboolean keeping_emit (const gint32 *labels, guint nz, guint z0, guint z1, guint ny, guint nx,
                       guint depth, SvSlabSink sink, gpointer user_data,
                       const SvStripSink *strips, GError **error);

/* ---- keeping-device-connect.c ---- */

int keeping_connect_volume (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                            guint extent, gint64 min_size, gint64 max_size, int start_label,
                            SvConnectivityRule rule, SvSlabSource source,
                            SvSlabDeviceSource device_source, SvSlabSink sink, gpointer user_data,
                            const SvStripSink *strips, gint64 *n_labels, guint *held,
                            GError **error);

/* ---- keeping-device-pieces.c: the slab steps of the shared rule ---- */

void keeping_pieces_drop (Keeper *kp);
int keeping_pieces_prepare (SvBackend *backend, guint nz, guint ny, guint nx, guint extent,
                            SvSlabSource source, SvSlabDeviceSource device_source,
                            gpointer user_data, guint *held, GError **error);
gboolean keeping_pieces_label (SvBackend *backend, gint64 min_size, gint64 max_size,
                               int start_label, guint depth, SvSlabSink sink, gpointer user_data,
                               const SvStripSink *strips, gint64 *n_labels, GError **error);
gboolean keeping_pieces_number (SvBackend *backend, gint64 min_size, gint64 max_size,
                                int start_label, GArray *warm_starts, gint64 *n_new,
                                GError **error);
gboolean keeping_labels_at (SvBackend *backend, const gint64 *voxels, gsize n, gint32 *labels,
                            GError **error);
gboolean keeping_pieces_relabel (SvBackend *backend, int first_label, const gint32 *warm_labels,
                                 gsize n_warm, int start_label, GError **error);
gboolean keeping_emit_kept (SvBackend *backend, guint nz, guint ny, guint nx, guint depth,
                            SvSlabSink sink, gpointer user_data, const SvStripSink *strips,
                            GError **error);

G_END_DECLS

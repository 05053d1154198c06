/* Supervox CUDA backend: where a device's connectivity reads its input
 * labels and sends its result: the kept labels, another device's or the
 * run's source in; the run's sink out, as labels or as the label file's
 * strips (or an OME-Zarr store's chunks) compressed on the device, handed
 * to the file on a thread of its own. Shared by stream-resident.cu (one
 * device connects the whole volume) and stream-pieces.cu (each device
 * its own slices). C++ for nvcc only. */
#pragma once

#include "stream-steps-private.h"
#include "supervox/sv-sink-thread.h"
#include "label-strips.h"

/* With strips, the sink thread's buffers hold records of slabs, each a
 * head and then its strips, compressed here (sizes, then bytes), or its
 * labels when the device had no room to compress them. The strips of
 * many slabs fit in one buffer (a buffer holds a slab's labels): the
 * device goes on to the next window while the file takes them. */
typedef struct
{
  guint32 strips;
  guint32 n_strips;
  guint64 n_bytes;
  gint64 negative_slice;
  guint32 z0, z1; /* the slab's slices */
  guint32 last;   /* no record follows in the buffer */
} SlabHead;
#define SLAB_HEAD_VALUES 10
G_STATIC_ASSERT (sizeof (SlabHead) <= SLAB_HEAD_VALUES * sizeof (gint32));

/* Where the connectivity's input comes from and its output goes: the
 * kept labels or the run's source, the run's sink, through host memory of
 * the run's slab size copied through the backend's pinned lanes. The sink
 * runs on a thread of its own when it can (the label file's compression
 * and writing go on while the device works on the next window). */
typedef struct
{
  SvCudaSlabs *s;
  SvBackend *backend;
  SvSlabSource source;
  SvSlabDeviceSource device_source;
  SvSlabSink sink;
  gpointer user_data;
  gint32 *host;
  guint depth;
  gsize plane;
  SvSinkThread *sink_thread;
  /* The label file's strips compressed here, when it takes them. */
  const SvStripSink *strips;
  SvCudaStripEncoder *encoder;
  guint ny, nx;
  /* The slab on its way out when there is no sink thread. */
  gint32 *own;
  /* With strips and a sink thread: the buffer being filled with slabs'
   * strips (NULL: none), its bytes used and the slices it holds. */
  gint32 *pack;
  gsize pack_used;
  guint pack_z0, pack_z1;
  SlabHead *pack_last;
  /* A store's chunks: a record is whole rows of them (chunks[0] slices each), and
   * slabs that do not end at a row's end leave their slices here until it
   * is whole. */
  guint nz;
  int32_t *d_row;
  guint row_z0, row_fill;
} LabelRoute;

/* Opens a route for a volume of nz·ny·nx labels, slabs of up to `depth`
 * slices: `source` and `device_source` (may be NULL: the kept labels are
 * the input), `sink`, `strips` (may be NULL) and, for a store's chunks,
 * d_row (a row of chunks' slices on the device, or NULL). Starts the
 * sink's thread when it can. FALSE with `error` set when the host memory
 * for a slab cannot be had. */
gboolean sv__label_route_open (LabelRoute *r, SvCudaSlabs *s, SvBackend *backend, guint nz,
                               guint ny, guint nx, guint depth, SvSlabSource source,
                               SvSlabDeviceSource device_source, SvSlabSink sink,
                               gpointer user_data, const SvStripSink *strips, int32_t *d_row,
                               GError **error);
/* Slices [z0, z1) of the input labels into `d` on the route's device (an
 * SvCcSlices). */
gboolean sv__label_route_load (guint z0, guint z1, int32_t *d, gpointer user_data, GError **error);
/* Slices [z0, z1) of the result, at `d` on the device, to the sink (an
 * SvCcSlices): they must come in z order. */
gboolean sv__label_route_store (guint z0, guint z1, int32_t *d, gpointer user_data,
                                GError **error);
/* Sends what is left to the sink when `ok`, waits for its thread and
 * frees the route: FALSE (with `error` set) when it or `ok` failed. */
gboolean sv__label_route_close (LabelRoute *r, gboolean ok, GError **error);

/* Supervox CUDA–GL interop: the visible label slice goes from the device
 * label volume into an OpenGL pixel buffer without a host copy.
 *
 * Plain C for the GUI: GL objects travel as their names (guint), CUDA
 * streams and events as gpointer. Two parts:
 *
 * - Published labels (SvCudaLabels): after a CUDA run the worker thread
 *   copies the backend's device labels into one of three device buffers owned
 *   by an SvCudaLabelsPool and hands it out with the result, which then
 *   holds its labels there (host copy on first use, single voxels read on
 *   the device). A buffer is reference counted; the worker only ever writes
 *   a buffer nobody else holds, so a running job never races the renderer
 *   nor a result still held.
 * - A registered pixel buffer (SvCudaGlBuffer): on render, the main thread
 *   maps it, a kernel copies one XY/XZ/YZ slice of published labels into it
 *   (on the buffer's own stream, after the labels' ready event), and unmaps;
 *   GL then uploads the label texture from it with glTexSubImage2D.
 *
 * Functions that touch a GL buffer need the GL context current. */
#pragma once

#include <glib.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-job.h"

G_BEGIN_DECLS

/* TRUE when the current GL context runs on a CUDA device, so that interop
 * can be used; FALSE with the reason otherwise (no CUDA device, or GL on
 * another GPU or in software: Xvfb, llvmpipe, hybrid laptops, remote
 * desktops). Needs a current GL context. */
gboolean sv_cuda_gl_usable (GError **error);

/* ---- published device labels ---- */

typedef struct _SvCudaLabels SvCudaLabels;
typedef struct _SvCudaLabelsPool SvCudaLabelsPool;

/* A pool of three device label buffers. Thread-safe. */
SvCudaLabelsPool *sv_cuda_labels_pool_new (void);
/* Drops the pool's own references; buffers still held elsewhere live until
 * their last sv_cuda_labels_unref. */
void sv_cuda_labels_pool_free (SvCudaLabelsPool *pool);

/* Copies the last run's device labels of a backend that has them
 * (sv_backend_get_device_labels) into a pool buffer that nobody holds, device to device on the
 * backend's stream, and records the copy's ready event. Does not wait for the copy. Returns a new
 * reference, or NULL with `error` set when CUDA fails, and NULL without an error when all buffers
 * are still held (the caller then keeps the host path for this result). Called on the thread that
 * runs the backend. */
SvCudaLabels *sv_cuda_labels_publish (SvCudaLabelsPool *pool, SvBackend *backend,
                                      GError **error);

SvCudaLabels *sv_cuda_labels_ref (SvCudaLabels *labels);
/* Releases a reference; the device memory goes with the last one. */
void sv_cuda_labels_unref (SvCudaLabels *labels);

/* The device label volume (nz*ny*nx gint32, z-major) and its shape. The
 * contents are complete once the ready event (a cudaEvent_t) has fired. */
const gint32 *sv_cuda_labels_get_data (SvCudaLabels *labels, guint shape_zyx[3]);
gpointer sv_cuda_labels_get_ready_event (SvCudaLabels *labels);
/* Waits on the host until the labels' copy is complete (benchmarks). */
gboolean sv_cuda_labels_wait (SvCudaLabels *labels, GError **error);

/* Copies all labels (shape_zyx, z-major) into host memory `out`, or the one
 * label at z-major `index` into *label, after the labels' ready event. Any
 * thread; waits only for that copy, not for work on the backend's stream. */
gboolean sv_cuda_labels_download (SvCudaLabels *labels, gint32 *out, GError **error);
gboolean sv_cuda_labels_read (SvCudaLabels *labels, gsize index, gint32 *label, GError **error);

/* For a job's result hook: publishes the backend's device labels (as
 * sv_cuda_labels_publish) and leaves them with `result` as its labels
 * (device_data, device_labels), so the job makes no host copy; the host
 * copy is made by sv_job_result_get_labels on first use. FALSE with
 * `error` when CUDA fails, FALSE without when all pool buffers are still
 * held: the result then gets host labels as before. */
gboolean sv_cuda_labels_attach (SvCudaLabelsPool *pool, SvBackend *backend, SvJobResult *result,
                                GError **error);

/* ---- a GL pixel buffer registered with CUDA ---- */

typedef struct _SvCudaGlBuffer SvCudaGlBuffer;

/* Registers the GL buffer object `gl_buffer` (its storage allocated with
 * glBufferData, at least one slice of gint32) for write-discard access and
 * creates the stream the slice copies run on. Context current. */
SvCudaGlBuffer *sv_cuda_gl_buffer_register (guint gl_buffer, GError **error);
/* Unregisters the buffer (the GL object itself stays). Context current. */
void sv_cuda_gl_buffer_unregister (SvCudaGlBuffer *buffer);

/* Maps the buffer, copies slice `index` along `axis` of the device label
 * volume `device_labels` (shape nz, ny, nx) into it as the host path's
 * sv_labels_get_slice lays it out (XY: ny rows of nx; XZ: nz rows of nx;
 * YZ: nz rows of ny), and unmaps. The copy runs on `stream` (a cudaStream_t;
 * NULL for the buffer's own) after `ready_event` (a cudaEvent_t, may be
 * NULL); unmapping orders later GL commands after it, so the caller can
 * upload from the buffer at once. Fails when the slice does not fit the
 * buffer or CUDA fails. Context current. */
gboolean sv_cuda_gl_buffer_copy_slice (SvCudaGlBuffer *buffer, const gint32 *device_labels,
                                       const guint shape_zyx[3], SvAxis axis, guint index,
                                       gpointer stream, gpointer ready_event, GError **error);

/* The same for published labels: waits for their ready event on the
 * buffer's stream. */
gboolean sv_cuda_gl_buffer_copy_labels_slice (SvCudaGlBuffer *buffer, SvCudaLabels *labels,
                                              SvAxis axis, guint index, GError **error);
/* The same slice with its rows and columns swapped: YZ with z across, as
 * the window shows it beside XY (ny rows of nz). */
gboolean sv_cuda_gl_buffer_copy_labels_slice_transposed (SvCudaGlBuffer *buffer,
                                                         SvCudaLabels *labels, SvAxis axis,
                                                         guint index, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvCudaLabelsPool, sv_cuda_labels_pool_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SvCudaLabels, sv_cuda_labels_unref)

G_END_DECLS

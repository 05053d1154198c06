/* Supervox engine: the OME-Zarr label writer's state, shared by
 * io-zarr-write.c (the store, its metadata and slabs) and
 * io-zarr-write-row.c (a row of chunks written by every worker). Not
 * public API. */
#pragma once

#include "io-zarr-private.h"

G_BEGIN_DECLS

/* Chunk files synced and closed on threads of their own while the writer
 * goes on (io-zarr-sync.c). */
typedef struct _SvZarrSyncer SvZarrSyncer;
SvZarrSyncer *sv__zarr_syncer_new (void);
/* Takes the written file `fd` (closed once synced); waits while many are
 * pending. */
void sv__zarr_syncer_take (SvZarrSyncer *syncer, int fd, const char *path);
/* Waits for every file taken and frees the syncer; FALSE with the first
 * failure (its file named) in `error`. NULL: nothing to wait for. */
gboolean sv__zarr_syncer_finish (SvZarrSyncer *syncer, GError **error);

struct _SvZarrLabelWriter
{
  char *path;  /* the store when finished */
  char *tmp;   /* the store while it is written */
  char *image; /* with image_label: the OME-Zarr image */
  SvZarrWriteOptions zarr;
  int n_threads;
  guint nz, ny, nx;
  guint chunks[3];
  gboolean negative;
  gint32 *row; /* chunks[0] slices */
  guint row_z0, row_fill;
  /* While a row is written from the caller's slices (an append that holds
   * all of it): those, else NULL and the row is `row`. */
  const gint32 *row_src;
  gboolean open;
  gboolean part; /* rows in another writer's store: its folder is not ours */
  /* Each worker's chunk and encoder (n_workers), kept from row to row:
   * made anew for every chunk, their pages were most of a store's time. */
  gint32 **chunk;
  SvZarrEncoder **encoder;
  int n_workers;
  /* Where the chunk files go to be synced; NULL: each is synced by the
   * worker that wrote it (SV_ZARR_SYNC=each, for measuring). */
  SvZarrSyncer *syncer;
  /* A share (sv__zarr_label_writer_new_share): the writer whose store it
   * writes from slice share_z0 on. The store's writer: the slices its
   * finished shares wrote (atomic). */
  SvZarrLabelWriter *owner;
  guint share_z0;
  gint share_slices;
};

/* A writer's shape, codec and, with `row`, its row buffer (else taken
 * when a row must be gathered: sv__zarr_writer_row_alloc); no folder yet.
 * NULL with `error` without memory for the row. */
SvZarrLabelWriter *sv__zarr_writer_new (const char *path, guint nz, guint ny, guint nx,
                                        gboolean negative, const SvZarrWriteOptions *zarr,
                                        int n_threads, gboolean row, GError **error);
gboolean sv__zarr_writer_row_alloc (SvZarrLabelWriter *w, GError **error);
/* fsync of a folder and every folder in it. */
void sv__zarr_sync_folder (const char *folder);

/* A chunk's key in the store: 0/kz/ky/kx (NGFF's "/" separator: its
 * readers, napari's among them, expect nested chunk folders). */
char *sv__zarr_chunk_key (guint kz, guint ky, guint kx);
/* The folders of rows kz0 … kz0 + n_rows − 1 and of their y, before
 * their chunks are written at once. */
gboolean sv__zarr_row_folders (SvZarrLabelWriter *w, guint kz0, guint n_rows, GError **error);
/* Writes the chunks of the row held (row_fill slices from row_z0) on the
 * writer's threads, and starts the next row. */
gboolean sv__zarr_row_flush (SvZarrLabelWriter *w, GError **error);
/* Frees the workers' chunks and encoders. */
void sv__zarr_row_clear (SvZarrLabelWriter *w);
/* Writes `size` bytes to a new file at `path`, which reaches the disk
 * before this returns, or before `syncer` finishes. */
gboolean sv__zarr_write_bytes (const char *path, const void *data, gsize size,
                               SvZarrSyncer *syncer, GError **error);

G_END_DECLS

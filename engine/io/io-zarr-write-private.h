/* Supervox engine: the OME-Zarr label writer's state, shared by
 * io-zarr-write.c (the store, its metadata and slabs) and
 * io-zarr-write-row.c (a row of chunks written by every worker). Not
 * public API. */
#pragma once

#include "io-zarr-private.h"

G_BEGIN_DECLS

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
};

/* Writes the chunks of the row held (row_fill slices from row_z0) on the
 * writer's threads, and starts the next row. */
gboolean sv__zarr_row_flush (SvZarrLabelWriter *w, GError **error);
/* Frees the workers' chunks and encoders. */
void sv__zarr_row_clear (SvZarrLabelWriter *w);
/* Writes `size` bytes to a new file at `path`. */
gboolean sv__zarr_write_bytes (const char *path, const void *data, gsize size, GError **error);

G_END_DECLS

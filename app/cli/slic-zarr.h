/* supervox-cli slic: OME-Zarr inputs and outputs — the options that pick a
 * level of an input image and write the labels as a store, beside the
 * image or as an image of their own. */
#pragma once

#include <glib.h>

#include "supervox/sv-io-zarr.h"
#include "supervox/sv-io.h"

G_BEGIN_DECLS

/* The Zarr options of one command, as given. */
typedef struct
{
  const char *output_format; /* --output-format tiff|zarr; NULL: from -o's extension */
  const char *labels_name;   /* --zarr-labels NAME: labels/NAME of the (one) input image */
  const char *level;         /* --zarr-level N; NULL: 0, the finest */
  const char *chunks;        /* --zarr-chunks Z,Y,X; NULL: the writer's */
  SvZarrWriteOptions write;  /* what SvTiffWriteOptions.zarr points at */
  gboolean zarr_output;      /* the labels are written as a store */
  guint level_index;
  char *made_labels; /* labels/ made for this run, removed if it stays empty */
} SvCliSlicZarr;

/* Reads the options: decides whether the labels are a store (--output-format,
 * a -o ending in .zarr, or --zarr-labels), and then parses --compression as
 * a Zarr codec and --zarr-chunks as its chunk shape into z->write, whose name for the sidecar goes to
 * *compression (owned). With --zarr-labels, *output (NULL: not given)
 * becomes the input's labels/NAME. */
gboolean sv_cli_slic_zarr_setup (SvCliSlicZarr *z, const char *const *inputs, char **output,
                                 const char *compression_text, char **compression, GError **error);

/* Fails early when the labels/ group of the OME-Zarr image `input` cannot
 * be written. A missing labels/ is made as an empty folder (a streamed
 * run keeps its temporary files beside the output); the writer gives it
 * its metadata when the run ends. */
gboolean sv_cli_slic_zarr_check_labels (SvCliSlicZarr *z, const char *input, GError **error);

/* After the run: an empty labels/ made for it goes (the run failed). */
void sv_cli_slic_zarr_done (SvCliSlicZarr *z);

/* The path to read for `input`: its --zarr-level's folder for an OME-Zarr
 * image, else `input` itself (owned). */
char *sv_cli_slic_zarr_input (const SvCliSlicZarr *z, const char *input, GError **error);

G_END_DECLS

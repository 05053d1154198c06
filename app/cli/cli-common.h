/* supervox-cli: helpers shared by the subcommands (option values, one-line
 * errors, output paths, timing). */
#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "supervox/sv-io.h"
#include "supervox/sv-volume.h"

G_BEGIN_DECLS

#define SV_CLI_PROGRAM "supervox-cli"

/* Prints "supervox-cli: <message>" as one line on stderr. Newlines inside
 * the message are replaced by spaces so that the error stays one line. */
void sv_cli_error (const char *format, ...) G_GNUC_PRINTF (1, 2);

/* Prints a GError as one line ("supervox-cli: <message>"). */
void sv_cli_report (const GError *error);

/* Prints a note on stderr (one line, same prefix). */
void sv_cli_note (const char *format, ...) G_GNUC_PRINTF (1, 2);

/* From now on errors and notes are kept instead of printed: on MPI ranks
 * other than 0, whose failures rank 0 reports. sv_cli_held_message is the
 * last one (NULL if none). */
void sv_cli_hold_messages (void);
const char *sv_cli_held_message (void);
/* Prints them again from now on: a rank that runs files of its own. */
void sv_cli_release_messages (void);

/* Parses the subcommand's options. On a GOptionContext error prints one line
 * naming the problem and pointing at --help, and returns FALSE. `command` is
 * the subcommand's name. */
gboolean sv_cli_parse_options (GOptionContext *context, const char *command, int *argc,
                               char ***argv);

/* Parses a finite number; `option` ("--compactness") names it in the error. */
gboolean sv_cli_parse_double (const char *option, const char *text, double *value, GError **error);

/* Parses a whole number within [min, max]. */
gboolean sv_cli_parse_int64 (const char *option, const char *text, gint64 min, gint64 max,
                             gint64 *value, GError **error);

/* Parses a comma-separated list of exactly 3 positive integers ("64,128,128"). */
gboolean sv_cli_parse_shape (const char *option, const char *text, guint shape[3], GError **error);

/* TRUE when `path` ends in .zarr (a trailing '/' aside): one Zarr store. */
gboolean sv_cli_names_zarr_store (const char *path);

/* Fails early, before any work, when `path` cannot be created: the folder
 * does not exist, is not a folder or is not writable, or `path` is a folder. */
gboolean sv_cli_check_output (const char *path, GError **error);

/* TRUE when a and b name the same existing file. */
gboolean sv_cli_same_file (const char *a, const char *b);

/* Writes `contents` to a new temporary file beside `path`; returns its name
 * (the caller renames it over `path` or unlinks it). */
char *sv_cli_write_temp_beside (const char *path, const char *contents, GError **error);

/* Renames `tmp` to `path`; on failure removes `tmp`. */
gboolean sv_cli_commit_temp (const char *tmp, const char *path, GError **error);

/* Threads a command runs by default (>= 1): the online processors, or
 * what sv_cli_set_n_cores set (under mpirun, a rank's share of its
 * host's cores: slic-mpi.c). */
int sv_cli_n_cores (void);
void sv_cli_set_n_cores (int n);

/* Seconds on the monotonic clock. */
double sv_cli_now (void);

/* Formats a shape as "Z×Y×X" (2D images as "Y×X"). */
char *sv_cli_format_shape (guint nz, guint ny, guint nx);

G_END_DECLS

G_BEGIN_DECLS

/* Reports an engine error about `path` as one line, adding "path: " in front
 * when the message does not name the file already. */
void sv_cli_report_file (const char *path, const GError *error);

/* Fails with "PATH: no such file" / "PATH: is a folder" before the engine
 * is asked to read it. */
gboolean sv_cli_check_input (const char *path, GError **error);

/* Reads an input image: a PNG or JPEG photo through GdkPixbuf (converted
 * exactly as the GUI converts it) when built with it, anything else as a
 * TIFF through libtiff. */
SvVolume *sv_cli_read_volume (const char *path, GError **error);

/* sv_cli_read_volume keeping only `channel` (counted from 0; -1: all).
 * Prints the reader's note on an ambiguous header (sv_cli_note). */
SvVolume *sv_cli_read_volume_channel (const char *path, int channel, GError **error);

/* Help text and parser of --compression, shared by the commands that write
 * TIFFs. `text` NULL gives the defaults. */
#define SV_CLI_COMPRESSION_HELP                                                                    \
  "Codec of the written TIFF: none, deflate, zstd or lzw, deflate and zstd with an optional "      \
  ":LEVEL, or deflate:runs (the default for labels: deflate made of runs, several times faster "   \
  "than deflate:6 and about a third larger; images default to deflate:6; Fiji and tifffile "       \
  "without imagecodecs read only none, deflate and lzw)"
gboolean sv_cli_parse_compression (const char *text, SvTiffWriteOptions *options, GError **error);

/* Parses --channel: a channel number from 0; `text` NULL gives -1 (all). */
gboolean sv_cli_parse_channel (const char *text, int *channel, GError **error);

/* What `info` prints, for a TIFF or a photo; *is_photo says which. */
gboolean sv_cli_read_info (const char *path, SvTiffInfo *info, gboolean *is_photo, GError **error);

/* The subcommands: each parses its own options (argv[0] is its name) and
 * returns the process exit status. */
int sv_cli_cmd_slic (int argc, char **argv);
int sv_cli_cmd_connect (int argc, char **argv);
int sv_cli_cmd_info (int argc, char **argv);
int sv_cli_cmd_synth (int argc, char **argv);
int sv_cli_cmd_eval (int argc, char **argv);
int sv_cli_cmd_stats (int argc, char **argv);

G_END_DECLS

G_BEGIN_DECLS

/* Turns SIGINT, SIGTERM and SIGHUP into cancellation of the returned
 * cancellable: the signals are blocked in every thread and one watcher
 * thread waits for them, so that a job is never killed half-way through
 * writing a file. A second signal ends the process at once (exit 130).
 * Call before any other thread starts. The cancellable lives until exit. */
GCancellable *sv_cli_watch_interrupts (void);

/* TRUE (after printing "interrupted") when an interrupt arrived. */
gboolean sv_cli_interrupted (GCancellable *cancellable);

G_END_DECLS

#define G_LOG_DOMAIN "sv-cli"

#include "cli-common.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io-zarr.h"
#include "supervox/sv-params.h"
#include "sv-config.h"
#if SV_HAVE_PIXBUF
#include "sv-image-pixbuf.h"
#endif

/* The last message when messages are held (MPI ranks other than 0). */
static gboolean messages_held;
static char *held_message;

void
sv_cli_hold_messages (void)
{
  messages_held = TRUE;
}

void
sv_cli_release_messages (void)
{
  messages_held = FALSE;
}

const char *
sv_cli_held_message (void)
{
  return held_message;
}

static void
print_one_line (const char *message)
{
  g_autofree char *line = g_strdup (message);

  /* A caller's script reads exactly one line per failure. */
  g_strdelimit (line, "\r\n", ' ');
  g_strchomp (line);
  if (messages_held)
    {
      g_free (held_message);
      held_message = g_steal_pointer (&line);
      return;
    }
  fprintf (stderr, "%s: %s\n", SV_CLI_PROGRAM, line);
  fflush (stderr);
}

void
sv_cli_error (const char *format, ...)
{
  va_list args;
  g_autofree char *message = NULL;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  print_one_line (message);
}

void
sv_cli_note (const char *format, ...)
{
  va_list args;
  g_autofree char *message = NULL;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  print_one_line (message);
}

void
sv_cli_report (const GError *error)
{
  print_one_line (error != NULL ? error->message : "unknown error");
}

gboolean
sv_cli_parse_options (GOptionContext *context, const char *command, int *argc, char ***argv)
{
  g_autoptr (GError) error = NULL;

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      sv_cli_error ("%s: %s (try '%s %s --help')", command, error->message, SV_CLI_PROGRAM,
                    command);
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_cli_parse_double (const char *option, const char *text, double *value, GError **error)
{
  return sv_parse_double (option, text, value, error);
}

gboolean
sv_cli_parse_int64 (const char *option, const char *text, gint64 min, gint64 max, gint64 *value,
                    GError **error)
{
  return sv_parse_int64 (option, text, min, max, value, error);
}

gboolean
sv_cli_parse_shape (const char *option, const char *text, guint shape[3], GError **error)
{
  g_auto (GStrv) parts = NULL;

  parts = g_strsplit (text != NULL ? text : "", ",", -1);
  if (g_strv_length (parts) != 3)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s expects three sizes z,y,x, got '%s'", option, text != NULL ? text : "");
      return FALSE;
    }
  for (guint i = 0; i < 3; i++)
    {
      char *end = NULL;
      const char *part = g_strstrip (parts[i]);
      guint64 v;

      errno = 0;
      v = g_ascii_strtoull (part, &end, 10);
      if (*part == '\0' || *part == '-' || end == part || *end != '\0' || errno == ERANGE || v < 1
          || v > G_MAXINT32)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "%s expects three sizes >= 1 like 64,128,128, got '%s'", option, text);
          return FALSE;
        }
      shape[i] = (guint)v;
    }
  return TRUE;
}

gboolean
sv_cli_names_zarr_store (const char *path)
{
  gsize len = strlen (path);

  while (len > 1 && path[len - 1] == G_DIR_SEPARATOR)
    len--;
  return len > 5 && g_ascii_strncasecmp (path + len - 5, ".zarr", 5) == 0;
}

gboolean
sv_cli_check_output (const char *path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);

  if (*path == '\0' || g_str_has_suffix (path, G_DIR_SEPARATOR_S))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: not a file name", path);
      return FALSE;
    }
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !sv_zarr_is_store (path))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: is a folder", path);
      return FALSE;
    }
  if (!g_file_test (dir, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                   "%s: cannot write: folder %s does not exist", path, dir);
      return FALSE;
    }
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                   "%s: cannot write: %s is not a folder", path, dir);
      return FALSE;
    }
  /* The outputs are written to a temporary name in the folder and renamed,
   * so the folder itself must be writable, even when the file exists. */
  if (g_access (dir, W_OK | X_OK) != 0)
    {
      int saved = errno;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot write to folder %s: %s",
                   path, dir, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_cli_same_file (const char *a, const char *b)
{
  GStatBuf sa, sb;

  if (g_stat (a, &sa) != 0 || g_stat (b, &sb) != 0)
    return FALSE;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

char *
sv_cli_write_temp_beside (const char *path, const char *contents, GError **error)
{
  g_autofree char *tmp = g_strconcat (path, ".tmp-XXXXXX", NULL);
  gsize len = strlen (contents);
  gsize done = 0;
  int fd;

  fd = g_mkstemp_full (tmp, O_WRONLY, 0666 & ~0022);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot create: %s", path,
                   g_strerror (saved));
      return NULL;
    }
  while (done < len)
    {
      gssize n = write (fd, contents + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = errno;
          close (fd);
          g_unlink (tmp);
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot write: %s", path,
                       g_strerror (saved));
          return NULL;
        }
      done += (gsize)n;
    }
  /* mkstemp creates 0600; give the sidecar the usual permissions. */
  {
    mode_t mask = umask (0);
    umask (mask);
    fchmod (fd, 0666 & ~mask);
  }
  if (fsync (fd) != 0 || close (fd) != 0)
    {
      int saved = errno;
      g_unlink (tmp);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot write: %s", path,
                   g_strerror (saved));
      return NULL;
    }
  return g_steal_pointer (&tmp);
}

gboolean
sv_cli_commit_temp (const char *tmp, const char *path, GError **error)
{
  if (g_rename (tmp, path) != 0)
    {
      int saved = errno;
      g_unlink (tmp);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot write: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static int cores_share;

void
sv_cli_set_n_cores (int n)
{
  cores_share = n;
}

int
sv_cli_n_cores (void)
{
  long n = cores_share > 0 ? cores_share : sysconf (_SC_NPROCESSORS_ONLN);
  return n >= 1 ? (int)MIN (n, 1024) : 1;
}

double
sv_cli_now (void)
{
  return (double)g_get_monotonic_time () / G_USEC_PER_SEC;
}

char *
sv_cli_format_shape (guint nz, guint ny, guint nx)
{
  if (nz == 1)
    return g_strdup_printf ("%u×%u", ny, nx);
  return g_strdup_printf ("%u×%u×%u", nz, ny, nx);
}

void
sv_cli_report_file (const char *path, const GError *error)
{
  const char *message = error != NULL ? error->message : "unknown error";

  if (strstr (message, path) != NULL)
    sv_cli_error ("%s", message);
  else
    sv_cli_error ("%s: %s", path, message);
}

gboolean
sv_cli_check_input (const char *path, GError **error)
{
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: no such file", path);
      return FALSE;
    }
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !sv_zarr_is_store (path))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                   "%s: is a folder, not a TIFF file or Zarr store", path);
      return FALSE;
    }
  return TRUE;
}

static gpointer
watch_signals_thread (gpointer data)
{
  GCancellable *cancellable = data;
  sigset_t set;
  int sig = 0;

  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGHUP);
  if (sigwait (&set, &sig) != 0)
    return NULL;
  g_cancellable_cancel (cancellable);
  /* The main thread stops at the next safe point and cleans up; a second
   * interrupt means the user does not want to wait. */
  if (sigwait (&set, &sig) == 0)
    _exit (130);
  return NULL;
}

GCancellable *
sv_cli_watch_interrupts (void)
{
  static GCancellable *cancellable;
  sigset_t set;

  if (cancellable != NULL)
    return cancellable;
  cancellable = g_cancellable_new ();
  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGHUP);
  pthread_sigmask (SIG_BLOCK, &set, NULL);
  g_thread_unref (g_thread_new ("sv-cli-signals", watch_signals_thread, cancellable));
  return cancellable;
}

gboolean
sv_cli_interrupted (GCancellable *cancellable)
{
  if (cancellable == NULL || !g_cancellable_is_cancelled (cancellable))
    return FALSE;
  sv_cli_error ("interrupted; no output written");
  return TRUE;
}

gboolean
sv_cli_parse_compression (const char *text, SvTiffWriteOptions *options, GError **error)
{
  g_autoptr (GError) local = NULL;

  sv_tiff_write_options_init_defaults (options);
  if (text == NULL)
    return TRUE;
  if (!sv_tiff_write_options_parse (options, text, &local))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM, "--%s", local->message);
      return FALSE;
    }
  return TRUE;
}

gboolean
sv_cli_parse_channel (const char *text, int *channel, GError **error)
{
  gint64 v;

  *channel = -1;
  if (text == NULL)
    return TRUE;
  if (!sv_cli_parse_int64 ("--channel", text, 0, 4095, &v, error))
    return FALSE;
  *channel = (int)v;
  return TRUE;
}

#if SV_HAVE_PIXBUF
/* Keeps one channel of a photo (the TIFF reader does it while reading). */
static SvVolume *
volume_pick_channel (SvVolume *volume, int channel, const char *path, GError **error)
{
  g_autoptr (SvVolume) in = volume;
  g_autoptr (GError) local = NULL;
  SvVolume *out = sv_volume_extract_channel (in, (guint)channel, &local);

  if (out == NULL)
    g_set_error (error, local->domain, local->code, "%s: %s", path, local->message);
  return out;
}
#endif

SvVolume *
sv_cli_read_volume_channel (const char *path, int channel, GError **error)
{
  SvTiffReadOptions options;
  g_autofree char *note = NULL;
  SvVolume *volume;

#if SV_HAVE_PIXBUF
  if (sv_image_is_photo (path))
    {
      volume = sv_image_read_pixbuf (path, error);
      if (volume == NULL || channel < 0)
        return volume;
      return volume_pick_channel (volume, channel, path, error);
    }
#endif
  sv_tiff_read_options_init_defaults (&options);
  options.channel = channel;
  volume = sv_tiff_read_volume_full (path, &options, &note, error);
  if (note != NULL)
    sv_cli_note ("%s", note);
  return volume;
}

SvVolume *
sv_cli_read_volume (const char *path, GError **error)
{
#if SV_HAVE_PIXBUF
  if (sv_image_is_photo (path))
    return sv_image_read_pixbuf (path, error);
#endif
  return sv_tiff_read_volume (path, error);
}

gboolean
sv_cli_read_info (const char *path, SvTiffInfo *info, gboolean *is_photo, GError **error)
{
  *is_photo = FALSE;
#if SV_HAVE_PIXBUF
  if (sv_image_is_photo (path))
    {
      *is_photo = TRUE;
      return sv_image_pixbuf_info (path, info, error);
    }
#endif
  return sv_tiff_info (path, info, error);
}

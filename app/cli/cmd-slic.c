/* supervox-cli slic: the batch job. Loads a TIFF, runs SLIC on the chosen
 * backend, writes a uint32 label TIFF and its JSON sidecar. */
#define G_LOG_DOMAIN "sv-cli"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "backend.h"
#include "cli-common.h"
#include "error.h"
#include "io.h"
#include "json-writer.h"
#include "params.h"
#include "sv-config.h"
#include "volume.h"

#if SV_HAVE_CUDA && defined(SV_CLI_WITH_CUDA)
#define SV_CLI_CUDA 1
#else
#define SV_CLI_CUDA 0
#endif

typedef struct
{
  char *output;
  char *n_segments;
  char *compactness;
  char *max_num_iter;
  char *sigma;
  char *spacing;
  char *min_size_factor;
  char *max_size_factor;
  char *start_label;
  char *mask;
  char *backend;
  char *threads;
  char *compression;
  char *channel;
  gboolean enforce_connectivity;
  gboolean slic_zero;
  gboolean convert2lab;
  gboolean no_convert2lab;
  gboolean json;
  char **inputs;
} SlicOptions;

static void
slic_options_clear (SlicOptions *o)
{
  g_free (o->output);
  g_free (o->n_segments);
  g_free (o->compactness);
  g_free (o->max_num_iter);
  g_free (o->sigma);
  g_free (o->spacing);
  g_free (o->min_size_factor);
  g_free (o->max_size_factor);
  g_free (o->start_label);
  g_free (o->mask);
  g_free (o->backend);
  g_free (o->threads);
  g_free (o->compression);
  g_free (o->channel);
  g_strfreev (o->inputs);
}

/* What the command line asked for, before the volume's shape is known. */
typedef struct
{
  SvSlicParams params;
  double sigma[3];
  guint n_sigma; /* 0: not given, 1: scalar */
  double spacing[3];
  guint n_spacing; /* 0: not given or "file" */
  gboolean spacing_from_file;
  int n_threads;
} SlicRequest;

static gboolean
parse_request (const SlicOptions *o, SlicRequest *r, GError **error)
{
  SvSlicParams *p = &r->params;
  gint64 v;

  sv_slic_params_init_defaults (p);
  r->n_threads = sv_cli_n_cores ();

  if (o->n_segments != NULL)
    {
      if (!sv_cli_parse_int64 ("--n-segments", o->n_segments, 1, G_MAXINT64, &v, error))
        return FALSE;
      p->n_segments = v;
    }
  if (o->compactness != NULL)
    {
      if (!sv_cli_parse_double ("--compactness", o->compactness, &p->compactness, error))
        return FALSE;
      if (!(p->compactness > 0))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--compactness must be > 0, got %s", o->compactness);
          return FALSE;
        }
    }
  if (o->max_num_iter != NULL)
    {
      if (!sv_cli_parse_int64 ("--max-num-iter", o->max_num_iter, 0, G_MAXINT32, &v, error))
        return FALSE;
      p->max_num_iter = (int)v;
    }
  if (o->sigma != NULL)
    {
      if (!sv_cli_parse_double_list ("--sigma", o->sigma, r->sigma, 3, &r->n_sigma, error))
        return FALSE;
      for (guint i = 0; i < r->n_sigma; i++)
        if (r->sigma[i] < 0)
          {
            g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                         "--sigma must be >= 0, got %s", o->sigma);
            return FALSE;
          }
    }
  if (o->spacing != NULL)
    {
      if (g_strcmp0 (o->spacing, "file") == 0)
        r->spacing_from_file = TRUE;
      else
        {
          if (!sv_cli_parse_double_list ("--spacing", o->spacing, r->spacing, 3, &r->n_spacing,
                                         error))
            return FALSE;
          if (r->n_spacing < 2)
            {
              g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "--spacing expects z,y,x (or y,x for a 2D image) or 'file', got %s",
                           o->spacing);
              return FALSE;
            }
          for (guint i = 0; i < r->n_spacing; i++)
            if (!(r->spacing[i] > 0))
              {
                g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                             "--spacing must be > 0 on every axis, got %s", o->spacing);
                return FALSE;
              }
        }
    }
  if (o->min_size_factor != NULL)
    {
      if (!sv_cli_parse_double ("--min-size-factor", o->min_size_factor, &p->min_size_factor,
                                error))
        return FALSE;
      if (p->min_size_factor < 0)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--min-size-factor must be >= 0, got %s", o->min_size_factor);
          return FALSE;
        }
    }
  if (o->max_size_factor != NULL)
    {
      if (!sv_cli_parse_double ("--max-size-factor", o->max_size_factor, &p->max_size_factor,
                                error))
        return FALSE;
      if (!(p->max_size_factor > 0))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--max-size-factor must be > 0, got %s", o->max_size_factor);
          return FALSE;
        }
    }
  if (o->start_label != NULL)
    {
      if (g_strcmp0 (o->start_label, "0") == 0)
        p->start_label = 0;
      else if (g_strcmp0 (o->start_label, "1") == 0)
        p->start_label = 1;
      else
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--start-label must be 0 or 1, got %s", o->start_label);
          return FALSE;
        }
    }
  if (o->threads != NULL)
    {
      if (!sv_cli_parse_int64 ("--threads", o->threads, 1, 4096, &v, error))
        return FALSE;
      r->n_threads = (int)v;
    }
  if (o->convert2lab && o->no_convert2lab)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "--convert2lab and --no-convert2lab cannot be used together");
      return FALSE;
    }
  p->convert2lab = o->convert2lab      ? SV_CONVERT2LAB_YES
                   : o->no_convert2lab ? SV_CONVERT2LAB_NO
                                       : SV_CONVERT2LAB_AUTO;
  p->enforce_connectivity = o->enforce_connectivity;
  p->slic_zero = o->slic_zero;
  return TRUE;
}

/* Applies sigma and spacing now that the image's dimensionality is known:
 * a 2D image (one page) takes y,x lists (z is then 1 for spacing and 0 for
 * sigma) or z,y,x as scikit-image tolerates; a 3D volume needs z,y,x. */
static gboolean
resolve_axes (SlicRequest *r, const char *input, const SvVolume *volume, GError **error)
{
  SvSlicParams *p = &r->params;
  gboolean is_2d = volume->nz == 1;

  if (r->spacing_from_file)
    {
      if (!volume->spacing_from_file)
        {
          g_set_error (
              error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
              "%s: no voxel spacing in the file (ImageJ or OME metadata) for --spacing file",
              input);
          return FALSE;
        }
      for (int i = 0; i < 3; i++)
        p->spacing[i] = volume->spacing[i];
      if (is_2d)
        p->spacing[0] = 1.0;
      for (int i = 0; i < 3; i++)
        if (!(p->spacing[i] > 0))
          {
            g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_DATA,
                         "%s: the file's voxel spacing %g,%g,%g is not > 0", input,
                         volume->spacing[0], volume->spacing[1], volume->spacing[2]);
            return FALSE;
          }
    }
  else if (r->n_spacing == 3)
    memcpy (p->spacing, r->spacing, sizeof p->spacing);
  else if (r->n_spacing == 2)
    {
      if (!is_2d)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "--spacing needs 3 values z,y,x for a 3D volume (%u slices), got 2",
                       volume->nz);
          return FALSE;
        }
      p->spacing[0] = 1.0;
      p->spacing[1] = r->spacing[0];
      p->spacing[2] = r->spacing[1];
    }

  if (r->n_sigma == 1)
    {
      p->sigma_per_axis = FALSE;
      p->sigma[0] = p->sigma[1] = p->sigma[2] = r->sigma[0];
    }
  else if (r->n_sigma == 3)
    {
      p->sigma_per_axis = TRUE;
      memcpy (p->sigma, r->sigma, sizeof p->sigma);
    }
  else if (r->n_sigma == 2)
    {
      if (!is_2d)
        {
          g_set_error (
              error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
              "--sigma needs one value or 3 values z,y,x for a 3D volume (%u slices), got 2",
              volume->nz);
          return FALSE;
        }
      p->sigma_per_axis = TRUE;
      p->sigma[0] = 0.0;
      p->sigma[1] = r->sigma[0];
      p->sigma[2] = r->sigma[1];
    }
  return TRUE;
}

typedef struct
{
  gboolean tty;
  gboolean shown;
} Progress;

static void
progress_cb (SvStage stage, guint iteration, guint n_iterations, gpointer user_data)
{
  Progress *progress = user_data;

  if (!progress->tty)
    return;
  if (stage == SV_STAGE_ITERATE && n_iterations > 0)
    {
      fprintf (stderr, "\r%s: iteration %u/%u", SV_CLI_PROGRAM, iteration, n_iterations);
      fflush (stderr);
      progress->shown = TRUE;
    }
  else if (progress->shown)
    {
      /* Clear the progress line so that later messages start clean. */
      fprintf (stderr, "\r\033[K");
      fflush (stderr);
      progress->shown = FALSE;
    }
}

static SvBackend *
open_backend (const char *name, GError **error)
{
  if (g_strcmp0 (name, "cpu") == 0)
    return sv_backend_new ("cpu", error);

#if SV_CLI_CUDA
  {
    g_autoptr (GError) local = NULL;
    SvBackend *backend = sv_backend_new ("cuda", &local);

    if (backend != NULL)
      return backend;
    if (g_strcmp0 (name, "cuda") == 0)
      {
        /* The backend's own message may already say it. */
        if (g_str_has_prefix (local->message, "no CUDA device"))
          g_propagate_error (error, g_steal_pointer (&local));
        else
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND, "no CUDA device: %s",
                       local->message);
        return NULL;
      }
    /* auto without a usable GPU is the ordinary case on most machines: the
     * CPU reference runs, and the summary line and the sidecar name it. */
    return sv_backend_new ("cpu", error);
  }
#else
  if (g_strcmp0 (name, "cuda") == 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
                   "no CUDA device: this build of %s has no CUDA backend", SV_CLI_PROGRAM);
      return NULL;
    }
  return sv_backend_new ("cpu", error);
#endif
}

static void
write_result_json (SvJsonWriter *w, const char *input, const char *output, const char *mask,
                   const SvVolume *volume, const SvSlicParams *params, const SvRunStats *stats,
                   const char *backend, int n_threads, const double seconds[6],
                   const char *compression, int channel)
{
  static const char *const stage_names[]
      = { "load", "prepare", "iterate", "connect", "write", "total" };
  g_autofree char *params_json = sv_slic_params_to_json (params);
  g_autoptr (GString) command = g_string_new (SV_CLI_PROGRAM " slic ");

  g_string_append (command, input);
  g_string_append (command, " -o ");
  g_string_append (command, output);
  g_string_append_c (command, ' ');
  sv_slic_params_append_cli (params, command);
  if (mask != NULL)
    g_string_append_printf (command, " --mask %s", mask);
  if (channel >= 0)
    g_string_append_printf (command, " --channel %d", channel);
  g_string_append_printf (command, " --compression %s", compression);

  sv_json_writer_begin_object (w);
  sv_json_writer_key (w, "input");
  sv_json_writer_string (w, input);
  sv_json_writer_key (w, "output");
  sv_json_writer_string (w, output);
  sv_json_writer_key (w, "mask");
  sv_json_writer_string (w, mask);
  sv_json_writer_key (w, "shape");
  sv_json_writer_begin_array (w);
  sv_json_writer_int (w, volume->nz);
  sv_json_writer_int (w, volume->ny);
  sv_json_writer_int (w, volume->nx);
  sv_json_writer_end_array (w);
  sv_json_writer_key (w, "channels");
  sv_json_writer_int (w, volume->nc);
  sv_json_writer_key (w, "channel");
  if (channel >= 0)
    sv_json_writer_int (w, channel);
  else
    sv_json_writer_null (w);
  sv_json_writer_key (w, "compression");
  sv_json_writer_string (w, compression);
  sv_json_writer_key (w, "sample_type");
  sv_json_writer_string (w, sv_sample_type_to_string (volume->source_type));
  sv_json_writer_key (w, "spacing_unit");
  sv_json_writer_string (w, volume->unit);
  sv_json_writer_key (w, "n_labels");
  sv_json_writer_int (w, (gint64)stats->n_labels);
  sv_json_writer_key (w, "n_clusters");
  sv_json_writer_int (w, (gint64)stats->n_clusters);
  sv_json_writer_key (w, "iterations");
  sv_json_writer_int (w, stats->iterations);
  sv_json_writer_key (w, "backend");
  sv_json_writer_string (w, backend);
  sv_json_writer_key (w, "threads");
  sv_json_writer_int (w, n_threads);
  sv_json_writer_key (w, "seconds");
  sv_json_writer_begin_object (w);
  for (guint i = 0; i < G_N_ELEMENTS (stage_names); i++)
    {
      sv_json_writer_key (w, stage_names[i]);
      sv_json_writer_seconds (w, seconds[i]);
    }
  sv_json_writer_end_object (w);
  sv_json_writer_key (w, "params");
  sv_json_writer_raw (w, params_json);
  sv_json_writer_key (w, "command");
  sv_json_writer_string (w, command->str);
  sv_json_writer_key (w, "version");
  sv_json_writer_string (w, SV_VERSION);
  sv_json_writer_end_object (w);
}

static int
run_slic (SlicOptions *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvVolume) volume = NULL;
  g_autoptr (SvLabels) labels = NULL;
  g_autoptr (SvBackend) backend = NULL;
  g_autoptr (SvJsonWriter) json = NULL;
  g_autofree guint8 *mask = NULL;
  g_autofree char *sidecar = NULL;
  g_autofree char *sidecar_tmp = NULL;
  const char *input;
  const char *backend_name;
  SlicRequest request = { 0 };
  SvTiffWriteOptions write_options;
  g_autofree char *compression = NULL;
  int channel = -1;
  SvRunControl control = { 0 };
  SvRunStats stats = { 0 };
  Progress progress = { 0 };
  double seconds[6] = { 0 };
  double t_start = sv_cli_now (), t;
  GCancellable *interrupt = NULL;

  if (o->inputs == NULL || o->inputs[0] == NULL)
    {
      sv_cli_error ("slic: missing input file (try '%s slic --help')", SV_CLI_PROGRAM);
      return 1;
    }
  if (o->inputs[1] != NULL)
    {
      sv_cli_error ("slic: expected one input file, got %u (try '%s slic --help')",
                    g_strv_length (o->inputs), SV_CLI_PROGRAM);
      return 1;
    }
  input = o->inputs[0];
  if (o->output == NULL)
    {
      sv_cli_error ("slic: missing -o OUT.tif (try '%s slic --help')", SV_CLI_PROGRAM);
      return 1;
    }

  backend_name = o->backend != NULL ? o->backend : "auto";
  if (g_strcmp0 (backend_name, "cpu") != 0 && g_strcmp0 (backend_name, "cuda") != 0
      && g_strcmp0 (backend_name, "auto") != 0)
    {
      sv_cli_error ("--backend must be cpu, cuda or auto, got %s", backend_name);
      return 1;
    }
  if (!parse_request (o, &request, &error)
      || !sv_cli_parse_compression (o->compression, &write_options, &error)
      || !sv_cli_parse_channel (o->channel, &channel, &error))
    {
      sv_cli_report (error);
      return 1;
    }

  sidecar = sv_cli_sidecar_path (o->output);
  if (!sv_cli_check_input (input, &error)
      || (o->mask != NULL && !sv_cli_check_input (o->mask, &error))
      || !sv_cli_check_output (o->output, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  if (g_strcmp0 (sidecar, o->output) == 0 || sv_cli_same_file (input, o->output)
      || sv_cli_same_file (input, sidecar)
      || (o->mask != NULL
          && (sv_cli_same_file (o->mask, o->output) || sv_cli_same_file (o->mask, sidecar))))
    {
      sv_cli_error ("%s: the output would overwrite an input file", o->output);
      return 1;
    }

  interrupt = sv_cli_watch_interrupts ();
  backend = open_backend (backend_name, &error);
  if (backend == NULL)
    {
      sv_cli_report (error);
      return 1;
    }

  /* Load */
  t = sv_cli_now ();
  volume = sv_cli_read_volume_channel (input, channel, &error);
  if (volume == NULL)
    {
      sv_cli_report_file (input, error);
      return 1;
    }
  if (o->mask != NULL)
    {
      guint mz = 0, my = 0, mx = 0;

      mask = sv_tiff_read_mask (o->mask, &mz, &my, &mx, &error);
      if (mask == NULL)
        {
          sv_cli_report_file (o->mask, error);
          return 1;
        }
      if (mz != volume->nz || my != volume->ny || mx != volume->nx)
        {
          g_autofree char *ms = sv_cli_format_shape (mz, my, mx);
          g_autofree char *vs = sv_cli_format_shape (volume->nz, volume->ny, volume->nx);
          sv_cli_error ("%s: mask is %s but the image %s is %s", o->mask, ms, input, vs);
          return 1;
        }
      if (memchr (mask, 1, sv_volume_n_voxels (volume)) == NULL)
        {
          sv_cli_error ("%s: the mask is empty: no voxel is inside it", o->mask);
          return 1;
        }
    }
  seconds[0] = sv_cli_now () - t;
  if (sv_cli_interrupted (interrupt))
    return 130;

  if (!resolve_axes (&request, input, volume, &error)
      || !sv_slic_params_validate (&request.params, &error))
    {
      sv_cli_report (error);
      return 1;
    }

  progress.tty = isatty (STDERR_FILENO);
  control.n_threads = request.n_threads;
  control.stop_after_iteration = -1;
  control.progress = progress_cb;
  control.user_data = &progress;
  control.cancellable = interrupt;

  if (!sv_backend_set_volume (backend, volume, mask, &error)
      || !sv_backend_run (backend, &request.params, &control, &stats, &error))
    {
      progress_cb (SV_STAGE_DONE, 0, 0, &progress);
      if (sv_cli_interrupted (interrupt))
        return 130;
      /* A CUDA failure (out of memory, launch error) under auto reruns on
       * the reference backend. */
      if (g_strcmp0 (backend_name, "auto") == 0
          && g_strcmp0 (sv_backend_get_name (backend), "cpu") != 0
          && g_error_matches (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND))
        {
          if (!o->json)
            sv_cli_note ("CUDA backend failed (%s); running on the CPU", error->message);
          g_clear_error (&error);
          g_clear_pointer (&backend, sv_backend_free);
          memset (&stats, 0, sizeof stats);
          backend = sv_backend_new ("cpu", &error);
          if (backend == NULL || !sv_backend_set_volume (backend, volume, mask, &error)
              || !sv_backend_run (backend, &request.params, &control, &stats, &error))
            {
              progress_cb (SV_STAGE_DONE, 0, 0, &progress);
              if (sv_cli_interrupted (interrupt))
                return 130;
              sv_cli_report_file (input, error);
              return 1;
            }
        }
      else
        {
          sv_cli_report_file (input, error);
          return 1;
        }
    }
  progress_cb (SV_STAGE_DONE, 0, 0, &progress);
  seconds[1] = stats.seconds_prepare;
  seconds[2] = stats.seconds_iterate;
  seconds[3] = stats.seconds_connect;

  labels = sv_labels_new (volume->nz, volume->ny, volume->nx, &error);
  if (labels == NULL || !sv_backend_get_labels (backend, labels->data, &error))
    {
      sv_cli_report (error);
      return 1;
    }
  /* The labels carry the spacing the run used, so that Fiji and napari
   * overlay them on the image; the unit is the file's when the numbers are. */
  if (request.n_spacing > 0)
    memcpy (labels->spacing, request.params.spacing, sizeof labels->spacing);
  else
    {
      memcpy (labels->spacing, volume->spacing, sizeof labels->spacing);
      labels->unit = g_strdup (volume->unit);
    }

  /* Write: labels first (atomic in the engine), then the sidecar through a
   * temporary name; if the sidecar fails the labels go too. */
  t = sv_cli_now ();
  write_options.n_threads = request.n_threads;
  if (!sv_tiff_write_labels_full (o->output, labels, &write_options, &error))
    {
      sv_cli_report_file (o->output, error);
      return 1;
    }
  seconds[4] = sv_cli_now () - t;
  seconds[5] = sv_cli_now () - t_start;

  json = sv_json_writer_new ();
  compression = sv_tiff_write_options_to_string (&write_options);
  write_result_json (json, input, o->output, o->mask, volume, &request.params, &stats,
                     sv_backend_get_name (backend), request.n_threads, seconds, compression,
                     channel);
  {
    g_autofree char *text = g_strconcat (sv_json_writer_get (json), "\n", NULL);

    sidecar_tmp = sv_cli_write_temp_beside (sidecar, text, &error);
    if (sidecar_tmp == NULL || !sv_cli_commit_temp (sidecar_tmp, sidecar, &error))
      {
        g_unlink (o->output);
        sv_cli_report (error);
        return 1;
      }
  }
  /* An interrupt during writing takes effect now: both files go. */
  if (sv_cli_interrupted (interrupt))
    {
      g_unlink (o->output);
      g_unlink (sidecar);
      return 130;
    }

  if (o->json)
    printf ("%s\n", sv_json_writer_get (json));
  else
    {
      g_autofree char *shape = sv_cli_format_shape (volume->nz, volume->ny, volume->nx);
      printf ("%s: %s, %" G_GSIZE_FORMAT " labels (%" G_GSIZE_FORMAT
              " clusters) on %s in %.2f s -> %s\n",
              input, shape, stats.n_labels, stats.n_clusters, sv_backend_get_name (backend),
              seconds[5], o->output);
    }
  fflush (stdout);
  return 0;
}

int
sv_cli_cmd_slic (int argc, char **argv)
{
  SlicOptions o = { .enforce_connectivity = TRUE };
  g_autoptr (GOptionContext) context = NULL;
  int status;
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output, "Label TIFF to write (uint32)",
      "OUT.tif" },
    { "n-segments", 0, 0, G_OPTION_ARG_STRING, &o.n_segments,
      "Approximate number of supervoxels (default 100)", "N" },
    { "compactness", 0, 0, G_OPTION_ARG_STRING, &o.compactness,
      "Intensity vs. space balance, > 0 (default 10)", "C" },
    { "max-num-iter", 0, 0, G_OPTION_ARG_STRING, &o.max_num_iter, "Iterations (default 10)", "N" },
    { "sigma", 0, 0, G_OPTION_ARG_STRING, &o.sigma,
      "Gaussian pre-smoothing: one value (divided by spacing) or z,y,x (y,x in 2D)", "S|Z,Y,X" },
    { "spacing", 0, 0, G_OPTION_ARG_STRING, &o.spacing,
      "Voxel size z,y,x (y,x in 2D), or 'file' for the file's ImageJ/OME spacing (default ones)",
      "Z,Y,X|file" },
    { "enforce-connectivity", 0, 0, G_OPTION_ARG_NONE, &o.enforce_connectivity,
      "Relabel connected components (default)", NULL },
    { "no-enforce-connectivity", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE,
      &o.enforce_connectivity, "Keep the raw SLIC labels", NULL },
    { "min-size-factor", 0, 0, G_OPTION_ARG_STRING, &o.min_size_factor,
      "Merge components smaller than this x N/K voxels (default 0.5)", "F" },
    { "max-size-factor", 0, 0, G_OPTION_ARG_STRING, &o.max_size_factor,
      "Split components larger than this x N/K voxels (default 3)", "F" },
    { "slic-zero", 0, 0, G_OPTION_ARG_NONE, &o.slic_zero, "SLIC-zero (SLICO)", NULL },
    { "start-label", 0, 0, G_OPTION_ARG_STRING, &o.start_label, "First label, 0 or 1 (default 1)",
      "0|1" },
    { "mask", 0, 0, G_OPTION_ARG_FILENAME, &o.mask,
      "Only voxels where MASK.tif is nonzero are segmented", "MASK.tif" },
    { "convert2lab", 0, 0, G_OPTION_ARG_NONE, &o.convert2lab,
      "Convert RGB to CIELAB (default for 3-channel 2D images)", NULL },
    { "no-convert2lab", 0, 0, G_OPTION_ARG_NONE, &o.no_convert2lab, "Never convert to CIELAB",
      NULL },
    { "backend", 0, 0, G_OPTION_ARG_STRING, &o.backend, "cpu, cuda or auto (default auto)",
      "NAME" },
    { "threads", 0, 0, G_OPTION_ARG_STRING, &o.threads, "CPU threads (default: all cores)", "N" },
    { "channel", 0, 0, G_OPTION_ARG_STRING, &o.channel,
      "Segment only this channel of a multichannel image, counted from 0 (default: all)", "N" },
    { "compression", 0, 0, G_OPTION_ARG_STRING, &o.compression, SV_CLI_COMPRESSION_HELP,
      "CODEC[:LEVEL]" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "Print one JSON object with the results", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.inputs, NULL, NULL },
    { NULL }
  };

  context = g_option_context_new ("IN.tif -o OUT.tif");
  g_option_context_set_summary (
      context, "Computes SLIC supervoxels (scikit-image's algorithm and parameters) and writes a\n"
               "uint32 label TIFF plus OUT.json with the parameters, backend and timings."
#if SV_HAVE_PIXBUF
               "\nIN may also be a PNG or JPEG photo, read as the GUI reads it."
#endif
  );
  g_option_context_add_main_entries (context, entries, NULL);
  if (!sv_cli_parse_options (context, "slic", &argc, &argv))
    status = 1;
  else
    status = run_slic (&o);
  slic_options_clear (&o);
  return status;
}

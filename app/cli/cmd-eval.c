/* supervox-cli eval: superpixel quality metrics (supervox/sv-metrics.h), or the
 * adjusted Rand index between two label files. */
#define G_LOG_DOMAIN "sv-cli"

#include <math.h>
#include <stdio.h>

#include "cli-common.h"
#include "supervox/sv-io.h"
#include "supervox/sv-json-writer.h"
#include "supervox/sv-metrics.h"

typedef struct
{
  char *truth;
  char *image;
  char *compare;
  char *radius;
  gboolean json;
  char **inputs;
} EvalOptions;

static SvLabels *
load_labels (const char *path, GError **error)
{
  if (!sv_cli_check_input (path, error))
    return NULL;
  return sv_tiff_read_labels (path, error);
}

static gboolean
same_shape (const char *a_path, const SvLabels *a, const char *b_path, guint nz, guint ny, guint nx)
{
  if (a->nz == nz && a->ny == ny && a->nx == nx)
    return TRUE;
  {
    g_autofree char *as = sv_cli_format_shape (a->nz, a->ny, a->nx);
    g_autofree char *bs = sv_cli_format_shape (nz, ny, nx);
    sv_cli_error ("%s: is %s but %s is %s", b_path, bs, a_path, as);
  }
  return FALSE;
}

static void
print_metric (const char *name, double value)
{
  if (isnan (value))
    printf ("%-20s -\n", name);
  else
    printf ("%-20s %.6g\n", name, value);
}

static int
run_compare (const EvalOptions *o, const char *a_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) a = NULL;
  g_autoptr (SvLabels) b = NULL;
  double ari;

  a = load_labels (a_path, &error);
  if (a == NULL)
    {
      sv_cli_report_file (a_path, error);
      return 1;
    }
  b = load_labels (o->compare, &error);
  if (b == NULL)
    {
      sv_cli_report_file (o->compare, error);
      return 1;
    }
  if (!same_shape (a_path, a, o->compare, b->nz, b->ny, b->nx))
    return 1;
  ari = sv_adjusted_rand_index (a->data, b->data, sv_labels_n_voxels (a));
  if (o->json)
    {
      g_autoptr (SvJsonWriter) w = sv_json_writer_new ();
      sv_json_writer_begin_object (w);
      sv_json_writer_key (w, "labels");
      sv_json_writer_string (w, a_path);
      sv_json_writer_key (w, "compare");
      sv_json_writer_string (w, o->compare);
      sv_json_writer_key (w, "adjusted_rand");
      sv_json_writer_double (w, ari);
      sv_json_writer_end_object (w);
      printf ("%s\n", sv_json_writer_get (w));
    }
  else
    printf ("adjusted_rand %.6f\n", ari);
  return 0;
}

static int
run_eval (EvalOptions *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SvLabels) labels = NULL;
  g_autoptr (SvLabels) truth = NULL;
  g_autoptr (SvVolume) image = NULL;
  SvMetrics m = { 0 };
  gint64 radius = 2;
  const char *path;

  if (o->inputs == NULL || o->inputs[0] == NULL)
    {
      sv_cli_error ("eval: missing label file (try '%s eval --help')", SV_CLI_PROGRAM);
      return 1;
    }
  if (o->inputs[1] != NULL)
    {
      sv_cli_error ("eval: expected one label file, got %u (try '%s eval --help')",
                    g_strv_length (o->inputs), SV_CLI_PROGRAM);
      return 1;
    }
  path = o->inputs[0];
  if (o->compare != NULL)
    {
      if (o->truth != NULL || o->image != NULL)
        {
          sv_cli_error ("eval: --compare cannot be combined with --truth or --image");
          return 1;
        }
      return run_compare (o, path);
    }
  if (o->truth == NULL && o->image == NULL)
    {
      sv_cli_error ("eval: missing --truth GT.tif, --image VOL.tif or --compare B.tif (try '%s "
                    "eval --help')",
                    SV_CLI_PROGRAM);
      return 1;
    }
  if (o->radius != NULL && !sv_cli_parse_int64 ("--radius", o->radius, 0, 1000, &radius, &error))
    {
      sv_cli_report (error);
      return 1;
    }

  labels = load_labels (path, &error);
  if (labels == NULL)
    {
      sv_cli_report_file (path, error);
      return 1;
    }
  if (o->truth != NULL)
    {
      truth = load_labels (o->truth, &error);
      if (truth == NULL)
        {
          sv_cli_report_file (o->truth, error);
          return 1;
        }
      if (!same_shape (path, labels, o->truth, truth->nz, truth->ny, truth->nx))
        return 1;
    }
  if (o->image != NULL)
    {
      if (!sv_cli_check_input (o->image, &error)
          || (image = sv_cli_read_volume (o->image, &error)) == NULL)
        {
          sv_cli_report_file (o->image, error);
          return 1;
        }
      if (!same_shape (path, labels, o->image, image->nz, image->ny, image->nx))
        return 1;
    }
  if (!sv_metrics_compute (labels, truth, image, (guint)radius, &m, &error))
    {
      sv_cli_report_file (path, error);
      return 1;
    }

  {
    const struct
    {
      const char *name;
      double value;
    } rows[] = {
      { "size_min", m.size_min },
      { "size_max", m.size_max },
      { "size_mean", m.size_mean },
      { "size_median", m.size_median },
      { "size_std", m.size_std },
      { "asa", m.asa },
      { "undersegmentation", m.undersegmentation },
      { "boundary_recall", m.boundary_recall },
      { "explained_variation", m.explained_variation },
      { "compactness", m.compactness },
      { "adjusted_rand", m.adjusted_rand },
    };

    if (o->json)
      {
        g_autoptr (SvJsonWriter) w = sv_json_writer_new ();
        sv_json_writer_begin_object (w);
        sv_json_writer_key (w, "labels");
        sv_json_writer_string (w, path);
        sv_json_writer_key (w, "truth");
        sv_json_writer_string (w, o->truth);
        sv_json_writer_key (w, "image");
        sv_json_writer_string (w, o->image);
        sv_json_writer_key (w, "boundary_radius");
        sv_json_writer_int (w, radius);
        sv_json_writer_key (w, "n_labels");
        sv_json_writer_int (w, (gint64)m.n_labels);
        for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
          {
            sv_json_writer_key (w, rows[i].name);
            sv_json_writer_double (w, rows[i].value);
          }
        sv_json_writer_end_object (w);
        printf ("%s\n", sv_json_writer_get (w));
      }
    else
      {
        printf ("%-20s %" G_GSIZE_FORMAT "\n", "n_labels", m.n_labels);
        for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
          print_metric (rows[i].name, rows[i].value);
      }
  }
  return 0;
}

int
sv_cli_cmd_eval (int argc, char **argv)
{
  EvalOptions o = { 0 };
  g_autoptr (GOptionContext) context = NULL;
  int status;
  const GOptionEntry entries[]
      = { { "truth", 0, 0, G_OPTION_ARG_FILENAME, &o.truth, "Ground-truth labels", "GT.tif" },
          { "image", 0, 0, G_OPTION_ARG_FILENAME, &o.image,
            "Intensity volume or photo (for explained variation)", "VOL.tif" },
          { "radius", 0, 0, G_OPTION_ARG_STRING, &o.radius,
            "Boundary recall tolerance in voxels (default 2)", "R" },
          { "compare", 0, 0, G_OPTION_ARG_FILENAME, &o.compare,
            "Print the adjusted Rand index between LABELS.tif and B.tif", "B.tif" },
          { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "Print one JSON object", NULL },
          { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.inputs, NULL, NULL },
          { NULL } };

  context = g_option_context_new ("LABELS.tif --truth GT.tif [--image VOL.tif]");
  g_option_context_set_summary (
      context, "Superpixel quality: sizes, achievable segmentation accuracy, undersegmentation,\n"
               "boundary recall, explained variation, compactness, adjusted Rand index.\n"
               "With --compare B.tif: the adjusted Rand index between two label files.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!sv_cli_parse_options (context, "eval", &argc, &argv))
    status = 1;
  else
    status = run_eval (&o);
  g_free (o.truth);
  g_free (o.image);
  g_free (o.compare);
  g_free (o.radius);
  g_strfreev (o.inputs);
  return status;
}

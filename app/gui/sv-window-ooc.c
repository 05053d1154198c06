/* Supervox GUI: the main window with a volume larger than its memory
 * budget: opening it as a slice cache, the XY view fed from that cache,
 * the hovered voxel, the contrast from a sampled histogram, the tools that
 * are off, and the status bar's words. The runs are in
 * sv-window-ooc-run.c. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <glib/gstdio.h>
#include <string.h>

#include "supervox/sv-io-slab.h"
#include "supervox/sv-run-plan.h"

/* The contrast histogram's sample, as float32, and its bins. */
#define SAMPLE_BYTES (64u << 20)
#define CONTRAST_BINS 4096

/* Actions that need the whole volume in memory (Run on Whole Volume is
 * off already: there is no region). */
static const char *const off_actions[]
    = { "win.open-mask",  "win.teach-step", "win.teach-back",  "win.teach-play",
        "win.open-truth", "win.pin",        "win.flip-pinned", "win.open-labels" };

gboolean
sv_window_ooc_wanted (const char *path, guint64 budget)
{
  g_autoptr (SvTiffSlabReader) reader = NULL;
  SvRunSource source;
  SvRunBudgets budgets = { 0 };
  SvSlicParams params;
  SvRunPlan plan;

  /* A file the reader refuses is for the in-memory reader to report on. */
  reader = budget > 0 ? sv_tiff_slab_reader_open (path, NULL, NULL) : NULL;
  if (reader == NULL)
    return FALSE;
  sv_run_source_from_header (&source, sv_tiff_slab_reader_info (reader));
  /* Whether the volume fits is the host's question: the window's job
   * holds it there, whichever backend runs (budgets.backend: the CPU). */
  budgets.host_bytes = budget;
  sv_slic_params_init_defaults (&params);
  /* The default parameters apply no Lab rule that could fail. */
  params.convert2lab = SV_CONVERT2LAB_NO;
  if (!sv_run_plan (&source, &params, &budgets, &plan, NULL))
    return FALSE;
  g_debug ("%s: %s", path, plan.reason);
  return plan.mode == SV_RUN_STREAMED;
}

SvWindowOoc *
sv_window_ooc_new (const char *path, guint64 budget, GError **error)
{
  g_autoptr (SvSliceCache) image = NULL;
  const SvTiffSlabInfo *info;
  SvWindowOoc *ooc;
  gint64 start = g_get_monotonic_time ();

  image = sv_slice_cache_new (path, NULL, budget / SV_OOC_CACHE_SHARE, error);
  if (image == NULL)
    return NULL;
  info = sv_slice_cache_info (image);
  ooc = g_new0 (SvWindowOoc, 1);
  ooc->path = g_strdup (path);
  ooc->budget = budget;
  ooc->shape = g_new0 (SvVolume, 1);
  ooc->shape->nz = info->nz;
  ooc->shape->ny = info->ny;
  ooc->shape->nx = info->nx;
  ooc->shape->nc = info->nc;
  memcpy (ooc->shape->spacing, info->spacing, sizeof info->spacing);
  ooc->shape->spacing_from_file = info->spacing_from_file;
  ooc->shape->unit = g_strdup (info->unit);
  ooc->shape->source_type = info->sample_type;
  ooc->slice = g_new (float, (gsize)info->ny * info->nx * info->nc);
  ooc->image = g_steal_pointer (&image);
  ooc->open_seconds = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  return ooc;
}

/* The job stops (its thread joined; a run being cancelled removes its own
 * temporary file), the labels shown go with their result, and the scratch
 * folder, empty then, goes too. */
static void
remove_scratch (SvWindowOoc *ooc)
{
  g_clear_pointer (&ooc->job, sv_job_free);
  g_clear_pointer (&ooc->labels_result, sv_job_result_unref);
  ooc->labels_path = NULL;
  if (ooc->scratch_dir)
    g_rmdir (ooc->scratch_dir);
}

void
sv_window_ooc_free (SvWindowOoc *ooc)
{
  if (ooc == NULL)
    return;
  g_clear_pointer (&ooc->labels, sv_slice_cache_free);
  remove_scratch (ooc);
  g_free (ooc->scratch_dir);
  g_free (ooc->error);
  sv_slice_cache_free (ooc->image);
  g_free (ooc->shape->unit);
  g_free (ooc->shape);
  g_free (ooc->slice);
  g_free (ooc->raw);
  g_free (ooc->path);
  g_free (ooc);
}

/* The XY view's slice z: its first channels, as many as a texel holds. */
static void
image_source (guint z, float *out, gpointer data)
{
  SvWindowOoc *ooc = data;
  const SvVolume *v = ooc->shape;
  guint nc = sv_display_texel_channels (v->nc);
  gsize n = (gsize)v->ny * v->nx;
  g_autoptr (GError) error = NULL;

  if (!sv_slice_cache_read_float (ooc->image, z, ooc->slice, &error))
    {
      /* A page that cannot be read shows black and says why once. */
      g_warning ("%s", error->message);
      memset (out, 0, n * nc * sizeof (float));
      return;
    }
  for (gsize i = 0; i < n; i++)
    for (guint c = 0; c < nc; c++)
      out[i * nc + c] = ooc->slice[i * v->nc + c];
}

static gboolean
label_source (guint z, gint32 *out, gpointer data)
{
  g_autoptr (GError) error = NULL;

  if (sv_window_ooc_read_labels (data, z, out, &error))
    return TRUE;
  if (error)
    g_warning ("%s", error->message);
  return FALSE;
}

/* The views and tools that need the whole volume: off, or back on. */
static void
set_tools (SvWindow *self, gboolean on)
{
  GtkWidget *others[] = { GTK_WIDGET (self->xz_view), GTK_WIDGET (self->yz_view),
                          GTK_WIDGET (self->volume_view), GTK_WIDGET (self->quality_panel) };

  for (guint i = 0; i < G_N_ELEMENTS (others); i++)
    {
      gtk_widget_set_sensitive (others[i], on);
      gtk_widget_set_tooltip_text (others[i], on ? NULL : SV_OOC_OFF_REASON);
    }
  for (guint i = 0; i < G_N_ELEMENTS (off_actions); i++)
    gtk_widget_action_set_enabled (GTK_WIDGET (self), off_actions[i], on);
}

void
sv_window_ooc_show (SvWindow *self, SvWindowOoc *ooc, const char *name)
{
  const SvVolume *v = ooc->shape;
  g_autoptr (GError) error = NULL;
  g_autofree char *title = NULL;
  SvHistogram *h;

  sv_window_forget_volume (self);
  for (guint i = 1; i < 3; i++)
    sv_slice_view_set_volume (sv_window_view (self, i), NULL);
  sv_volume_view_set_volume (self->volume_view, NULL);
  sv_slice_view_set_volume (self->xy_view, v);
  g_clear_pointer (&self->volume, sv_volume_free);
  self->ooc = ooc;
  sv_slice_view_set_source (self->xy_view, image_source, label_source, ooc);
  set_tools (self, FALSE);
  g_free (self->volume_name);
  self->volume_name = g_strdup (name);
  self->hover_valid = FALSE;
  self->load_seconds = ooc->open_seconds;

  title = g_strdup_printf ("%s — %u×%u×%u%s (out of core)", name, v->nz, v->ny, v->nx,
                           sv_window_channel_words (v));
  gtk_label_set_text (self->title_label, title);
  gtk_window_set_title (GTK_WINDOW (self), title);
  sv_window_set_status (self, self->result_label, NULL);
  gtk_label_set_text (self->hover_label, "");
  sv_window_update_path_status (self);

  sv_params_panel_set_file_spacing (self->params_panel, v->spacing, v->unit);
  sv_params_panel_set_file (self->params_panel, (const guint[]){ v->nz, v->ny, v->nx }, v->nc);
  sv_params_panel_set_intensity_scale (self->params_panel, sv_window_intensity_scale (v));
  /* Contrast from a sample of the slices: reading them all would take as
   * long as a pass of SLIC. */
  h = sv_slice_cache_sample_histogram (ooc->image, CONTRAST_BINS, SAMPLE_BYTES, &error);
  if (h == NULL)
    g_warning ("%s", error->message);
  else
    {
      sv_params_panel_set_intensity_range (self->params_panel, h->min, h->max);
      sv_window_contrast_set_sampled (self, v, h);
      sv_window_auto_contrast (self);
    }
  sv_window_update_memory_status (self);
  sv_window_ooc_submit (self);
}

void
sv_window_ooc_close (SvWindow *self)
{
  if (self->ooc == NULL)
    return;
  sv_window_ooc_stop (self);
  g_clear_handle_id (&self->ooc->tick_source, g_source_remove);
  sv_slice_view_set_source (self->xy_view, NULL, NULL, NULL);
  sv_slice_view_set_volume (self->xy_view, NULL);
  set_tools (self, TRUE);
  g_clear_pointer (&self->ooc, sv_window_ooc_free);
}

void
sv_window_ooc_update_hover (SvWindow *self)
{
  SvWindowOoc *ooc = self->ooc;
  const SvVolume *v = ooc->shape;
  const guint *p = self->hover_zyx;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  GString *s;
  gsize idx;

  if (!self->hover_valid)
    {
      gtk_label_set_text (self->hover_label, "");
      return;
    }
  if (!sv_slice_cache_read_float (ooc->image, p[0], ooc->slice, &error))
    {
      gtk_label_set_text (self->hover_label, error->message);
      return;
    }
  idx = (gsize)p[1] * v->nx + p[2];
  s = g_string_new (NULL);
  g_string_append_printf (s, "x %u  y %u  z %u  ·  I", p[2], p[1], p[0]);
  for (guint c = 0; c < v->nc; c++)
    {
      g_autofree char *value
          = sv_params_panel_format_intensity (self->params_panel, ooc->slice[idx * v->nc + c]);
      g_string_append_printf (s, " %s", value);
    }
  if (ooc->labels)
    {
      gint32 *row = g_new (gint32, (gsize)v->ny * v->nx);
      if (sv_window_ooc_read_labels (ooc, p[0], row, NULL))
        g_string_append_printf (s, "  ·  label %d", row[idx]);
      g_free (row);
    }
  text = g_string_free (s, FALSE);
  gtk_label_set_text (self->hover_label, text);
}

char *
sv_window_ooc_memory_words (SvWindow *self)
{
  SvWindowOoc *ooc = self->ooc;
  g_autofree char *budget = NULL;
  g_autofree char *image = NULL;
  g_autofree char *labels = NULL;

  if (ooc == NULL)
    return g_strdup ("");
  budget = g_format_size_full (ooc->budget, G_FORMAT_SIZE_IEC_UNITS);
  image = g_format_size_full (sv_slice_cache_bytes (ooc->image), G_FORMAT_SIZE_IEC_UNITS);
  labels = g_format_size_full (ooc->labels ? sv_slice_cache_bytes (ooc->labels) : 0,
                               G_FORMAT_SIZE_IEC_UNITS);
  return g_strdup_printf (" · out of core (budget %s): slices %s, labels %s", budget, image,
                          labels);
}

gboolean
sv_window_is_out_of_core (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  return self->ooc != NULL;
}

const char *
sv_window_get_scratch_dir (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), NULL);
  return self->ooc ? self->ooc->scratch_dir : NULL;
}

gboolean
sv_window_read_label_slice (SvWindow *self, guint z, gint32 *out, GError **error)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  if (self->ooc == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no volume out of core");
      return FALSE;
    }
  return sv_window_ooc_read_labels (self->ooc, z, out, error);
}

void
sv_window_get_cache_bytes (SvWindow *self, guint64 *image, guint64 *image_budget)
{
  g_return_if_fail (SV_IS_WINDOW (self) && self->ooc != NULL);
  *image = sv_slice_cache_bytes (self->ooc->image);
  *image_budget = sv_slice_cache_budget (self->ooc->image);
}

/* Supervox GUI: the main window's pin history. P pins the exact labels on
 * screen with the panel's parameters, newest first, up to SV_PINS_MAX (a
 * label file opened with Open Labels… is a pin too, sv-window-labels.c).
 * One pin at a time is the pinned one: the live labels are compared with
 * it (the quality worker's reference: the adjusted Rand index and the
 * voxels that differ, which the views can highlight), and C flips the
 * views between it and the live labels. The Pins tab (sv-pin-list.c) lists
 * them: a click on a row compares with that pin, Show flips to it, Restore
 * puts its parameters back into the panel (a new run), the cross removes
 * it. */
#define G_LOG_DOMAIN "sv-window"

#include "sv-window-private.h"

#include <string.h>

#include "sv-element-words.h"

static SvPin *
find_pin (SvWindow *self, guint id)
{
  for (guint i = 0; self->pins && i < self->pins->len; i++)
    if (((SvPin *)self->pins->pdata[i])->id == id)
      return self->pins->pdata[i];
  return NULL;
}

guint
sv_window_pins_next_id (SvWindow *self)
{
  return ++self->last_pin_id;
}

/* The views show the pinned labels or the live ones, as showing_pinned
 * says, and the selection and the status line follow. */
static void
show_labels (SvWindow *self)
{
  SvJobResult *shown = sv_window_shown_result (self);

  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_result (sv_window_view (self, i), shown);
  sv_window_quality_update_panel (self);
  sv_window_update_selection (self);
  sv_window_update_result_text (self);
}

/* The live labels are compared with `pin` (NULL: none) from now on. */
static void
set_pinned (SvWindow *self, SvPin *pin)
{
  gboolean measured;

  if (!pin)
    self->showing_pinned = FALSE;
  if (pin == self->pinned)
    return;
  self->pinned = pin;
  if (!self->quality_worker)
    return;
  sv_quality_worker_set_reference (self->quality_worker, pin ? pin->result : NULL,
                                   pin && !pin->quality);
  /* The live labels' comparison with this pin: measured again (not
   * against themselves: that says nothing). */
  measured = self->result
             && (sv_job_result_is_final (self->result)
                 || (self->quality && self->quality->generation == self->result->generation));
  if (pin && measured && pin->result != self->result)
    sv_quality_worker_submit (self->quality_worker, self->result);
}

void
sv_window_pins_add (SvWindow *self, SvPin *pin)
{
  if (!self->pins)
    self->pins = g_ptr_array_new_with_free_func ((GDestroyNotify)sv_pin_free);
  g_ptr_array_insert (self->pins, 0, pin);
  set_pinned (self, pin);
  /* The oldest goes; the new one is the pinned one. */
  while (self->pins->len > SV_PINS_MAX)
    g_ptr_array_remove_index (self->pins, self->pins->len - 1);
  self->showing_pinned = FALSE;
  show_labels (self);
}

gboolean
sv_window_pins_take_quality (SvWindow *self, SvQuality *quality)
{
  gboolean of_pin = FALSE;

  for (guint i = 0; self->pins && i < self->pins->len; i++)
    {
      SvPin *pin = self->pins->pdata[i];
      if (pin->result->generation != quality->generation)
        continue;
      of_pin = TRUE;
      if (!pin->quality)
        pin->quality = sv_quality_ref (quality);
    }
  return of_pin && !(self->result && self->result->generation == quality->generation);
}

void
sv_window_pins_start_worker (SvWindow *self)
{
  if (!self->quality_worker)
    return;
  if (self->pinned)
    sv_quality_worker_set_reference (self->quality_worker, self->pinned->result, FALSE);
  for (guint i = 0; self->pins && i < self->pins->len; i++)
    {
      SvPin *pin = self->pins->pdata[i];
      if (!pin->quality)
        sv_quality_worker_analyse (self->quality_worker, pin->result);
    }
}

void
sv_window_pins_forget_quality (SvWindow *self)
{
  for (guint i = 0; self->pins && i < self->pins->len; i++)
    g_clear_pointer (&((SvPin *)self->pins->pdata[i])->quality, sv_quality_unref);
}

void
sv_window_pins_forget (SvWindow *self)
{
  self->pinned = NULL;
  self->showing_pinned = FALSE;
  g_clear_pointer (&self->pins, g_ptr_array_unref);
  sv_window_pins_update (self);
}

/* The live labels' analysis that compared them with the pinned ones, or
 * NULL while it is computed. */
static SvQuality *
comparison (SvWindow *self)
{
  SvQuality *q = self->quality;

  if (!self->pinned || !q || !self->result || q->generation != self->result->generation
      || !q->reference_difference || q->reference_generation != self->pinned->result->generation)
    return NULL;
  return q;
}

/* The line above the pins: the live labels against the pinned ones. */
static char *
comparison_text (SvWindow *self, SvQuality *c, gboolean planar)
{
  const SvElementWords *words = sv_element_words (planar);
  g_autofree char *name = NULL;

  if (!self->pinned)
    return g_strdup ("Nothing pinned: P pins the labels shown, Open Labels… (main menu) adds a "
                     "label file.");
  name = sv_pin_name (self->pinned);
  if (c)
    {
      gsize n = g_bytes_get_size (c->reference_difference);
      g_autofree char *count = sv_format_count (c->reference_differing);
      return g_strdup_printf ("Live labels against %s: ARI %.4f · %s %s differ (%.2f %%)", name,
                              c->reference_ari, count,
                              c->reference_differing == 1 ? words->voxel : words->voxels,
                              n ? 100.0 * (double)c->reference_differing / (double)n : 0.0);
    }
  if (!self->result)
    return g_strdup_printf ("Live labels against %s: none yet.", name);
  if (self->pinned->result == self->result)
    return g_strdup_printf ("%s holds the live labels: change a value to compare.", name);
  if (memcmp (self->pinned->result->labels_shape, self->result->labels_shape,
              sizeof self->result->labels_shape)
          != 0
      || self->pinned->result->region != self->result->region)
    return g_strdup_printf ("%s and the live labels cover different regions: nothing to compare.",
                            name);
  return g_strdup_printf ("Live labels against %s: measuring…", name);
}

void
sv_window_pins_update (SvWindow *self)
{
  SvPinList *list = self->pin_list;
  guint n = self->pins ? self->pins->len : 0;
  g_autofree SvPinRow *rows = g_new0 (SvPinRow, MAX (n, 1));
  gboolean planar = self->volume && self->volume->nz == 1;
  SvQuality *c = comparison (self);
  gboolean highlight = sv_pin_list_get_highlight_differences (list);
  g_autofree char *line = comparison_text (self, c, planar);

  for (guint i = 0; i < n; i++)
    {
      SvPin *pin = self->pins->pdata[i];
      rows[i].id = pin->id;
      rows[i].title = sv_pin_title (pin);
      rows[i].summary = sv_pin_summary (pin, planar);
      rows[i].measures = sv_pin_measures (pin);
      rows[i].restorable = pin->path == NULL;
    }
  sv_pin_list_set (list, rows, n, self->pinned ? self->pinned->id : 0,
                   self->showing_pinned && self->pinned ? self->pinned->id : 0);
  sv_pin_list_set_comparison (list, line);
  for (guint i = 0; i < n; i++)
    {
      g_free ((char *)rows[i].title);
      g_free ((char *)rows[i].summary);
      g_free ((char *)rows[i].measures);
    }
  /* The differing voxels are the same either way round: the live
   * analysis's bytes serve the pinned labels on screen too. */
  for (guint i = 0; i < 3; i++)
    sv_slice_view_set_difference (sv_window_view (self, i),
                                  highlight && c ? c->reference_difference : NULL);
}

void
sv_window_pins_show_tab (SvWindow *self)
{
  /* The tab's page is the scrolled window around the list. */
  GtkWidget *page = GTK_WIDGET (self->pin_list);

  while (page && gtk_notebook_page_num (self->side_notebook, page) < 0)
    page = gtk_widget_get_parent (page);
  gtk_notebook_set_current_page (self->side_notebook,
                                 gtk_notebook_page_num (self->side_notebook, page));
}

SvPinList *
sv_window_get_pin_list (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), NULL);
  return self->pin_list;
}

gboolean
sv_window_get_comparison (SvWindow *self, double *ari, guint64 *n_differing)
{
  SvQuality *c;

  g_return_val_if_fail (SV_IS_WINDOW (self), FALSE);
  c = comparison (self);
  if (!c)
    return FALSE;
  if (ari)
    *ari = c->reference_ari;
  if (n_differing)
    *n_differing = c->reference_differing;
  return TRUE;
}

guint
sv_window_get_n_pins (SvWindow *self)
{
  g_return_val_if_fail (SV_IS_WINDOW (self), 0);
  return self->pins ? self->pins->len : 0;
}

/* ---- P, C and the list's buttons ---- */

void
sv_window_pin (SvWindow *self)
{
  SvSlicParams params;
  g_autofree char *name = NULL, *text = NULL;
  SvPin *pin;

  g_return_if_fail (SV_IS_WINDOW (self));
  if (!self->result || !sv_job_result_is_final (self->result))
    {
      sv_window_show_toast (self, self->stopped
                                      ? "nothing to pin: the run was stopped; change a value "
                                        "to run again"
                                      : "nothing to pin: wait for the exact result");
      return;
    }
  /* The panel's values made the labels on screen once they are settled;
   * before, the result's own (a region's segments are its share). */
  if (sv_window_is_settled (self))
    sv_params_panel_get_params (self->params_panel, &params);
  else
    params = self->result->params;
  pin = sv_pin_new_run (sv_window_pins_next_id (self), self->result, &params,
                        sv_params_panel_get_backend (self->params_panel));
  if (self->quality && self->quality->generation == self->result->generation)
    pin->quality = sv_quality_ref (self->quality);
  sv_window_pins_add (self, pin);
  name = sv_pin_name (pin);
  text = g_strdup_printf ("pinned: %s · C flips between it and the live labels", name);
  sv_window_show_toast (self, text);
}

void
sv_window_flip_pinned (SvWindow *self)
{
  g_autofree char *name = NULL, *text = NULL;

  g_return_if_fail (SV_IS_WINDOW (self));
  if (!self->pinned)
    {
      sv_window_show_toast (self, "nothing pinned: P pins the labels shown");
      return;
    }
  self->showing_pinned = !self->showing_pinned;
  name = sv_pin_name (self->pinned);
  text = self->showing_pinned ? g_strdup_printf ("%s shown (C: the live labels)", name)
                              : g_strdup_printf ("live labels shown (C: %s)", name);
  sv_window_show_toast (self, text);
  show_labels (self);
}

gboolean
sv_window_get_showing_pinned (SvWindow *self)
{
  return self->showing_pinned && self->pinned;
}

static void
pin_action (GtkWidget *widget, const char *name, GVariant *param)
{
  sv_window_pin (SV_WINDOW (widget));
}

static void
flip_action (GtkWidget *widget, const char *name, GVariant *param)
{
  sv_window_flip_pinned (SV_WINDOW (widget));
}

/* Show: the views flip to that pin; on the pin shown, back to live. */
static void
show_pin_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  SvPin *pin = find_pin (self, g_variant_get_uint32 (param));

  if (!pin)
    return;
  if (pin == self->pinned && self->showing_pinned)
    {
      sv_window_flip_pinned (self);
      return;
    }
  set_pinned (self, pin);
  self->showing_pinned = FALSE;
  sv_window_flip_pinned (self);
}

/* A click on a row: the live labels are compared with that pin; while a
 * pin is shown, that one is. */
static void
compare_pin_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  SvPin *pin = find_pin (self, g_variant_get_uint32 (param));

  if (!pin || pin == self->pinned)
    return;
  set_pinned (self, pin);
  show_labels (self);
}

/* Restore: the pin's parameters back into the panel, which runs them;
 * the views show the live labels again. */
static void
restore_pin_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  SvPin *pin = find_pin (self, g_variant_get_uint32 (param));
  g_autofree char *pin_name = NULL, *text = NULL;

  if (!pin || pin->path)
    return;
  pin_name = sv_pin_name (pin);
  if (self->showing_pinned)
    {
      self->showing_pinned = FALSE;
      show_labels (self);
    }
  sv_params_panel_set_backend (self->params_panel, pin->backend);
  sv_params_panel_set_params (self->params_panel, &pin->params);
  text = g_strdup_printf ("the parameters of %s are back in the panel", pin_name);
  sv_window_show_toast (self, text);
}

/* The cross: the pin goes; when it was the pinned one, the newest left is. */
static void
remove_pin_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SvWindow *self = SV_WINDOW (widget);
  SvPin *pin = find_pin (self, g_variant_get_uint32 (param));

  if (!pin)
    return;
  if (pin == self->pinned)
    {
      self->showing_pinned = FALSE;
      set_pinned (self, NULL);
      g_ptr_array_remove (self->pins, pin);
      set_pinned (self, self->pins->len ? self->pins->pdata[0] : NULL);
    }
  else
    g_ptr_array_remove (self->pins, pin);
  show_labels (self);
}

static void
highlight_cb (SvPinList *list, GParamSpec *pspec, SvWindow *self)
{
  /* The differing voxels come with the live result's quality. */
  sv_window_quality_ensure (self);
  sv_window_pins_update (self);
}

void
sv_window_pins_init (SvWindow *self)
{
  g_signal_connect (self->pin_list, "notify::highlight-differences", G_CALLBACK (highlight_cb),
                    self);
  sv_window_pins_update (self);
}

void
sv_window_class_add_pin_actions (GtkWidgetClass *widget_class)
{
  g_type_ensure (SV_TYPE_PIN_LIST);
  gtk_widget_class_bind_template_child (widget_class, SvWindow, pin_list);
  gtk_widget_class_install_action (widget_class, "win.pin", NULL, pin_action);
  gtk_widget_class_install_action (widget_class, "win.flip-pinned", NULL, flip_action);
  gtk_widget_class_install_action (widget_class, "win.show-pin", "u", show_pin_action);
  gtk_widget_class_install_action (widget_class, "win.compare-pin", "u", compare_pin_action);
  gtk_widget_class_install_action (widget_class, "win.restore-pin", "u", restore_pin_action);
  gtk_widget_class_install_action (widget_class, "win.remove-pin", "u", remove_pin_action);
}

/* Supervox GUI: the pin history in the quality panel. */
#define G_LOG_DOMAIN "sv-pin-list"

#include "sv-pin-list.h"

struct _SvPinList
{
  GtkWidget parent_instance;

  GtkLabel *comparison_label;
  GtkCheckButton *highlight_check;
  GtkListBox *list_box;
  GPtrArray *rows; /* GtkListBoxRow, newest first */
};

G_DEFINE_FINAL_TYPE (SvPinList, sv_pin_list, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_HIGHLIGHT_DIFFERENCES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* What a row holds, found again by name. */
typedef struct
{
  guint id;
  GtkLabel *title, *summary, *measures;
  GtkButton *show, *restore, *remove;
} RowParts;

static GtkWidget *
small_button (const char *label, const char *icon, const char *tooltip)
{
  GtkWidget *button
      = icon ? gtk_button_new_from_icon_name (icon) : gtk_button_new_with_label (label);

  gtk_widget_set_tooltip_text (button, tooltip);
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (button, "flat");
  return button;
}

static GtkLabel *
line_label (gboolean dim)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 0.0f);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_widget_add_css_class (label, "numeric");
  if (dim)
    gtk_widget_add_css_class (label, "dim-label");
  return GTK_LABEL (label);
}

static GtkWidget *
row_new (guint id)
{
  GtkWidget *row = gtk_list_box_row_new ();
  GtkWidget *grid = gtk_grid_new ();
  RowParts *parts = g_new0 (RowParts, 1);

  parts->id = id;
  parts->title = line_label (FALSE);
  gtk_label_set_wrap (parts->title, FALSE);
  gtk_label_set_ellipsize (parts->title, PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_set_hexpand (GTK_WIDGET (parts->title), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (parts->title), "heading");
  parts->summary = line_label (FALSE);
  parts->measures = line_label (TRUE);
  parts->show = GTK_BUTTON (small_button ("Show", NULL, NULL));
  parts->restore = GTK_BUTTON (
      small_button ("Restore", NULL, "Put this pin's parameters back into the panel"));
  parts->remove = GTK_BUTTON (small_button (NULL, "window-close-symbolic", "Remove this pin"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (parts->show), "win.show-pin");
  gtk_actionable_set_action_target (GTK_ACTIONABLE (parts->show), "u", id);
  gtk_actionable_set_action_target (GTK_ACTIONABLE (parts->restore), "u", id);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (parts->remove), "win.remove-pin");
  gtk_actionable_set_action_target (GTK_ACTIONABLE (parts->remove), "u", id);

  gtk_grid_set_column_spacing (GTK_GRID (grid), 2);
  gtk_widget_set_margin_start (grid, 6);
  gtk_widget_set_margin_end (grid, 2);
  gtk_widget_set_margin_top (grid, 2);
  gtk_widget_set_margin_bottom (grid, 4);
  gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (parts->title), 0, 0, 1, 1);
  gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (parts->show), 1, 0, 1, 1);
  gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (parts->restore), 2, 0, 1, 1);
  gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (parts->remove), 3, 0, 1, 1);
  gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (parts->summary), 0, 1, 4, 1);
  gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (parts->measures), 0, 2, 4, 1);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), grid);
  g_object_set_data_full (G_OBJECT (row), "sv-pin-row", parts, g_free);
  return row;
}

static RowParts *
row_parts (GtkWidget *row)
{
  return g_object_get_data (G_OBJECT (row), "sv-pin-row");
}

static void
row_update (GtkWidget *row, const SvPinRow *r, gboolean shown)
{
  RowParts *parts = row_parts (row);

  gtk_label_set_text (parts->title, r->title);
  gtk_widget_set_tooltip_text (GTK_WIDGET (parts->title), r->title);
  gtk_label_set_text (parts->summary, r->summary);
  gtk_label_set_text (parts->measures, r->measures);
  gtk_button_set_label (parts->show, shown ? "Live" : "Show");
  gtk_widget_set_tooltip_text (GTK_WIDGET (parts->show),
                               shown ? "Show the live labels again (C)"
                                     : "Show these labels in the views (C flips back)");
  /* A label file has no parameters to put back. */
  gtk_actionable_set_action_name (GTK_ACTIONABLE (parts->restore),
                                  r->restorable ? "win.restore-pin" : NULL);
  gtk_widget_set_visible (GTK_WIDGET (parts->restore), r->restorable);
}

void
sv_pin_list_set (SvPinList *self, const SvPinRow *rows, guint n_rows, guint compared, guint shown)
{
  gboolean same = n_rows == self->rows->len;

  g_return_if_fail (SV_IS_PIN_LIST (self));
  for (guint i = 0; same && i < n_rows; i++)
    same = row_parts (self->rows->pdata[i])->id == rows[i].id;
  /* The same pins: their rows stay, so that a click on one is not lost. */
  if (!same)
    {
      for (guint i = 0; i < self->rows->len; i++)
        gtk_list_box_remove (self->list_box, self->rows->pdata[i]);
      g_ptr_array_set_size (self->rows, 0);
      for (guint i = 0; i < n_rows; i++)
        {
          GtkWidget *row = row_new (rows[i].id);
          g_ptr_array_add (self->rows, row);
          gtk_list_box_append (self->list_box, row);
        }
    }
  gtk_list_box_unselect_all (self->list_box);
  for (guint i = 0; i < n_rows; i++)
    {
      row_update (self->rows->pdata[i], &rows[i], rows[i].id == shown);
      if (rows[i].id == compared)
        gtk_list_box_select_row (self->list_box, self->rows->pdata[i]);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->list_box), n_rows > 0);
}

void
sv_pin_list_set_comparison (SvPinList *self, const char *text)
{
  g_return_if_fail (SV_IS_PIN_LIST (self));
  gtk_label_set_text (self->comparison_label, text);
}

const char *
sv_pin_list_get_comparison (SvPinList *self)
{
  g_return_val_if_fail (SV_IS_PIN_LIST (self), NULL);
  return gtk_label_get_text (self->comparison_label);
}

gboolean
sv_pin_list_get_highlight_differences (SvPinList *self)
{
  g_return_val_if_fail (SV_IS_PIN_LIST (self), FALSE);
  return gtk_check_button_get_active (self->highlight_check);
}

void
sv_pin_list_set_highlight_differences (SvPinList *self, gboolean highlight)
{
  g_return_if_fail (SV_IS_PIN_LIST (self));
  gtk_check_button_set_active (self->highlight_check, highlight);
}

GtkWidget *
sv_pin_list_get_highlight_check (SvPinList *self)
{
  g_return_val_if_fail (SV_IS_PIN_LIST (self), NULL);
  return GTK_WIDGET (self->highlight_check);
}

static void
highlight_toggled_cb (SvPinList *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HIGHLIGHT_DIFFERENCES]);
}

static void
sv_pin_list_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_HIGHLIGHT_DIFFERENCES:
      g_value_set_boolean (value, sv_pin_list_get_highlight_differences (SV_PIN_LIST (object)));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sv_pin_list_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_HIGHLIGHT_DIFFERENCES:
      sv_pin_list_set_highlight_differences (SV_PIN_LIST (object), g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

guint
sv_pin_list_get_n_rows (SvPinList *self)
{
  g_return_val_if_fail (SV_IS_PIN_LIST (self), 0);
  return self->rows->len;
}

GtkWidget *
sv_pin_list_get_row (SvPinList *self, guint i)
{
  g_return_val_if_fail (SV_IS_PIN_LIST (self), NULL);
  return i < self->rows->len ? self->rows->pdata[i] : NULL;
}

const char *
sv_pin_list_get_text (SvPinList *self, guint i, const char *part)
{
  RowParts *parts;

  g_return_val_if_fail (SV_IS_PIN_LIST (self), NULL);
  if (i >= self->rows->len)
    return NULL;
  parts = row_parts (self->rows->pdata[i]);
  if (g_strcmp0 (part, "title") == 0)
    return gtk_label_get_text (parts->title);
  if (g_strcmp0 (part, "summary") == 0)
    return gtk_label_get_text (parts->summary);
  if (g_strcmp0 (part, "measures") == 0)
    return gtk_label_get_text (parts->measures);
  return NULL;
}

GtkWidget *
sv_pin_list_get_button (SvPinList *self, guint i, const char *which)
{
  RowParts *parts;

  g_return_val_if_fail (SV_IS_PIN_LIST (self), NULL);
  if (i >= self->rows->len)
    return NULL;
  parts = row_parts (self->rows->pdata[i]);
  if (g_strcmp0 (which, "show") == 0)
    return GTK_WIDGET (parts->show);
  if (g_strcmp0 (which, "restore") == 0)
    return GTK_WIDGET (parts->restore);
  if (g_strcmp0 (which, "remove") == 0)
    return GTK_WIDGET (parts->remove);
  return NULL;
}

/* A click on a row: compare the live labels with that pin. */
static void
row_activated_cb (SvPinList *self, GtkListBoxRow *row, GtkListBox *box)
{
  RowParts *parts = row_parts (GTK_WIDGET (row));

  gtk_widget_activate_action (GTK_WIDGET (self), "win.compare-pin", "u", parts->id);
}

GtkWidget *
sv_pin_list_new (void)
{
  return g_object_new (SV_TYPE_PIN_LIST, NULL);
}

static void
sv_pin_list_dispose (GObject *object)
{
  SvPinList *self = SV_PIN_LIST (object);

  g_clear_pointer (&self->rows, g_ptr_array_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), SV_TYPE_PIN_LIST);
  /* The template's unnamed top child too. */
  for (GtkWidget *child; (child = gtk_widget_get_first_child (GTK_WIDGET (object)));)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (sv_pin_list_parent_class)->dispose (object);
}

static void
sv_pin_list_class_init (SvPinListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sv_pin_list_dispose;
  object_class->get_property = sv_pin_list_get_property;
  object_class->set_property = sv_pin_list_set_property;
  properties[PROP_HIGHLIGHT_DIFFERENCES]
      = g_param_spec_boolean ("highlight-differences", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/supervox/Supervox/ui/sv-pin-list.ui");
  gtk_widget_class_bind_template_child (widget_class, SvPinList, comparison_label);
  gtk_widget_class_bind_template_child (widget_class, SvPinList, highlight_check);
  gtk_widget_class_bind_template_child (widget_class, SvPinList, list_box);
  gtk_widget_class_bind_template_callback (widget_class, row_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, highlight_toggled_cb);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "sv-pin-list");
}

static void
sv_pin_list_init (SvPinList *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->rows = g_ptr_array_new ();
}

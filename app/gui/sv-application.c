/* Supervox GUI: the application. */
#define G_LOG_DOMAIN "sv-application"

#include "sv-application.h"

#include "supervox/sv-backend.h"
#include "supervox/sv-memory.h"
#include "sv-config.h"
#include "sv-window.h"

#if SV_HAVE_CUDA
#include "sv-cuda.h"
#endif

struct _SvApplication
{
  GtkApplication parent_instance;
  gboolean verbose;
};

G_DEFINE_FINAL_TYPE (SvApplication, sv_application, GTK_TYPE_APPLICATION)

void
sv_application_register_backends (void)
{
#if SV_HAVE_CUDA
  sv_cuda_register ();
#endif
}

gboolean
sv_application_get_verbose (SvApplication *self)
{
  return self->verbose;
}

void
sv_application_set_verbose (SvApplication *self, gboolean verbose)
{
  self->verbose = verbose;
}

static SvWindow *
new_window (SvApplication *self)
{
  return SV_WINDOW (sv_window_new (GTK_APPLICATION (self)));
}

static void
sv_application_activate (GApplication *app)
{
  g_autoptr (GError) error = NULL;
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));

  if (!window)
    {
      window = GTK_WINDOW (new_window (SV_APPLICATION (app)));
      gtk_window_present (window);
      if (!sv_window_load_sample (SV_WINDOW (window), 48, 160, 160, &error))
        g_warning ("cannot make the sample: %s", error->message);
      return;
    }
  gtk_window_present (window);
}

static void
sv_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  for (int i = 0; i < n_files; i++)
    {
      SvWindow *window = new_window (SV_APPLICATION (app));
      gtk_window_present (GTK_WINDOW (window));
      if (!sv_window_open_file (window, files[i]))
        {
          /* Keep something to look at behind the error dialog. */
          g_autoptr (GError) error = NULL;
          if (!sv_window_load_sample (window, 48, 160, 160, &error))
            g_warning ("cannot make the sample: %s", error->message);
        }
    }
}

static int
sv_application_handle_local_options (GApplication *app, GVariantDict *options)
{
  SvApplication *self = SV_APPLICATION (app);
  const char *limit = NULL;

  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("supervox %s\n", SV_VERSION);
      return 0;
    }
  if (g_variant_dict_contains (options, "verbose"))
    self->verbose = TRUE;
  if (g_variant_dict_lookup (options, "memory-limit", "&s", &limit))
    {
      g_autoptr (GError) error = NULL;
      guint64 bytes;

      if (!sv_parse_size ("--memory-limit", limit, &bytes, &error))
        {
          g_printerr ("supervox: %s\n", error->message);
          return 1;
        }
      /* The windows read it from there, as the tests set it. */
      g_setenv ("SV_MEMORY_LIMIT", limit, TRUE);
    }
  return -1;
}

static void
quit_action (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  g_application_quit (G_APPLICATION (user_data));
}

GtkWindow *
sv_application_show_about (GtkWindow *parent)
{
  static const char *authors[] = { "The Supervox developers", NULL };
  GdkDisplay *display
      = parent ? gtk_widget_get_display (GTK_WIDGET (parent)) : gdk_display_get_default ();
  GtkIconTheme *theme = gtk_icon_theme_get_for_display (display);
  GtkWidget *dialog;

  /* The icon lives in the GResource (ui/supervox.gresource.xml), found also
   * when the app is not installed. */
  if (!gtk_icon_theme_has_icon (theme, "org.supervox.Supervox"))
    gtk_icon_theme_add_resource_path (theme, "/org/supervox/Supervox/icons");
  dialog = g_object_new (GTK_TYPE_ABOUT_DIALOG, "program-name", "Supervox", "version", SV_VERSION,
                         "comments", "Live SLIC supervoxels for 3D microscopy, EM and CT volumes",
                         "logo-icon-name", "org.supervox.Supervox", "license-type",
                         GTK_LICENSE_MIT_X11, "authors", authors, "transient-for", parent, "modal",
                         parent != NULL, "destroy-with-parent", TRUE, NULL);
  gtk_window_present (GTK_WINDOW (dialog));
  return GTK_WINDOW (dialog);
}

static void
about_action (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  sv_application_show_about (gtk_application_get_active_window (GTK_APPLICATION (user_data)));
}

static const GActionEntry app_actions[] = {
  { "quit", quit_action, NULL, NULL, NULL, { 0 } },
  { "about", about_action, NULL, NULL, NULL, { 0 } },
};

static void
sv_application_startup (GApplication *app)
{
  static const struct
  {
    const char *action;
    const char *accels[3];
  } accels[] = {
    { "app.quit", { "<Control>q", NULL } },
    { "win.open", { "<Control>o", NULL } },
    { "win.export-labels", { "<Control>e", NULL } },
    { "win.screenshot", { "<Control><Shift>s", NULL } },
    { "win.copy-command", { "<Control><Shift>c", NULL } },
    { "win.copy-python", { "<Control><Shift>y", NULL } },
    { "win.save-preset", { "<Control>s", NULL } },
    { "win.load-preset", { "<Control>l", NULL } },
    { "win.zoom-fit", { "<Control>0", NULL } },
    { "win.zoom-one", { "<Control>1", NULL } },
    { "win.auto-contrast", { "<Control><Shift>a", NULL } },
    { "win.cycle-overlay", { "<Control>b", NULL } },
    { "win.orthogonal", { "<Control>t", NULL } },
    /* [ and ] rather than , and .: the shortcuts window draws those two alike. */
    { "win.teach-step", { "<Control>bracketright", NULL } },
    { "win.teach-back", { "<Control>bracketleft", NULL } },
    { "win.teach-play", { "<Control>space", NULL } },
  };

  G_APPLICATION_CLASS (sv_application_parent_class)->startup (app);
  sv_application_register_backends ();
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions),
                                   app);
  for (guint i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (app), accels[i].action,
                                           accels[i].accels);
  gtk_window_set_default_icon_name ("org.supervox.Supervox");
}

static void
sv_application_class_init (SvApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  app_class->activate = sv_application_activate;
  app_class->open = sv_application_open;
  app_class->startup = sv_application_startup;
  app_class->handle_local_options = sv_application_handle_local_options;
}

static void
sv_application_init (SvApplication *self)
{
  static const GOptionEntry entries[]
      = { { "verbose", 'v', 0, G_OPTION_ARG_NONE, NULL,
            "Print timings and how labels reach the GPU", NULL },
          { "version", 0, 0, G_OPTION_ARG_NONE, NULL, "Print the version and exit", NULL },
          { "memory-limit", 0, 0, G_OPTION_ARG_STRING, NULL,
            "Open volumes whose segmentation needs more memory out of core, slices read "
            "from the file (default: what the system has available)",
            "SIZE" },
          { NULL } };

  g_application_add_main_option_entries (G_APPLICATION (self), entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), "[FILE…]");
}

SvApplication *
sv_application_new (void)
{
  return g_object_new (SV_TYPE_APPLICATION, "application-id", "org.supervox.Supervox", "flags",
                       G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE, NULL);
}

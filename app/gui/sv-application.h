/* Supervox GUI: the application: actions, accelerators, command line. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SV_TYPE_APPLICATION (sv_application_get_type ())
G_DECLARE_FINAL_TYPE (SvApplication, sv_application, SV, APPLICATION, GtkApplication)

SvApplication *sv_application_new (void);

/* TRUE with --verbose: timings and the label render path are printed. */
gboolean sv_application_get_verbose (SvApplication *app);
void sv_application_set_verbose (SvApplication *app, gboolean verbose);

/* The About dialog, transient for `parent` (may be NULL), shown; its logo
 * is the app's icon (org.supervox.Supervox, from the GResource). */
GtkWindow *sv_application_show_about (GtkWindow *parent);

/* Registers the CUDA backend when it was built; called once at start-up. */
void sv_application_register_backends (void);

G_END_DECLS

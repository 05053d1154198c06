/* Supervox: the GTK application's entry point. */
#define G_LOG_DOMAIN "supervox"

#include "sv-application.h"

int
main (int argc, char **argv)
{
  g_autoptr (SvApplication) app = sv_application_new ();

  g_set_application_name ("Supervox");
  return g_application_run (G_APPLICATION (app), argc, argv);
}

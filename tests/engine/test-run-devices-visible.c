/* Tests for narrowing what the CUDA driver enumerates to a run's devices
 * (sv_run_devices_show_only_used): the variable it sets, the list renumbered
 * to match, and the lists it leaves alone. No driver is started: the class
 * is a stand-in whose count a test sets. */
#include <string.h>

#include "supervox/sv-backend-class.h"
#include "supervox/sv-error.h"
#include "supervox/sv-run-execute.h"

static int fake_count;

static int
fake_device_count (void)
{
  return fake_count;
}

static const SvBackendClass fake_device_class = {
  .name = "cuda",
  .device_count = fake_device_count,
};

typedef struct
{
  const char *visible; /* CUDA_VISIBLE_DEVICES before; NULL: unset */
  const char *list;    /* --devices; NULL: one device */
  int local_rank;
  gboolean narrowed;
  const char *visible_after; /* what the driver is shown */
  const char *list_after;
  guint n_visible;
} Case;

static void
test_table (void)
{
  static const Case cases[] = {
    /* The listed devices only, in the listed order, renumbered. */
    { "3,5,7", "2,0", -1, TRUE, "7,3", "0,1", 2 },
    { "0,1,2,3", "1", -1, TRUE, "1", "0", 1 },
    { "0,1,2,3", "0,1,2,3", -1, TRUE, "0,1,2,3", "0,1,2,3", 4 },
    /* Names as the user's variable gives them (UUIDs, MIG instances). */
    { "GPU-aa,GPU-bb,GPU-cc", "2", -1, TRUE, "GPU-cc", "0", 1 },
    /* One GPU driven twice is shown once. */
    { "4,5", "0,0", -1, TRUE, "4", "0,0", 1 },
    { "4,5,6", "1,2,1", -1, TRUE, "5,6", "0,1,0", 2 },
    /* Under mpirun, the local rank's device, modulo the count. */
    { "0,1,2,3", NULL, 2, TRUE, "2", NULL, 1 },
    { "0,1", NULL, 3, TRUE, "1", NULL, 1 },
    { "6,7", NULL, -1, TRUE, "6", NULL, 1 },
    /* An empty entry ends what the driver would see. */
    { "1,,2", "0", -1, TRUE, "1", "0", 1 },
    { "1,,2", "1", -1, FALSE, "1,,2", "1", 0 },
    /* Left alone: every device, a device the machine lacks, a list that
     * does not parse; opening the devices says what is wrong. */
    { "0,1", "all", -1, FALSE, "0,1", "all", 0 },
    { "0,1", "2", -1, FALSE, "0,1", "2", 0 },
    { "0,1", "0,x", -1, FALSE, "0,1", "0,x", 0 },
    { "0,1", "-1", -1, FALSE, "0,1", "-1", 0 },
    { "", "0", -1, FALSE, "", "0", 0 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Case *c = &cases[i];
      SvRunDevices devices;

      g_test_message ("case %u: %s=%s --devices %s rank %d", i, "CUDA_VISIBLE_DEVICES",
                      c->visible, c->list, c->local_rank);
      g_setenv ("CUDA_VISIBLE_DEVICES", c->visible, TRUE);
      sv_run_devices_init (&devices, &fake_device_class, c->list, c->local_rank, 0);
      g_assert_cmpint (sv_run_devices_show_only_used (&devices), ==, c->narrowed);
      g_assert_cmpstr (g_getenv ("CUDA_VISIBLE_DEVICES"), ==, c->visible_after);
      g_assert_cmpstr (devices.list, ==, c->list_after);
      g_assert_cmpuint (devices.n_visible, ==, c->n_visible);
      /* Once narrowed, never again: the numbers are the narrowed ones. */
      g_assert_false (sv_run_devices_show_only_used (&devices));
      g_assert_cmpstr (g_getenv ("CUDA_VISIBLE_DEVICES"), ==, c->visible_after);
      sv_run_devices_clear (&devices);
    }
}

/* Without a device class (a build without CUDA, or --backend cpu) the
 * variable is not touched. */
static void
test_no_class (void)
{
  SvRunDevices devices;

  g_setenv ("CUDA_VISIBLE_DEVICES", "0,1", TRUE);
  sv_run_devices_init (&devices, NULL, "1", -1, 0);
  g_assert_false (sv_run_devices_show_only_used (&devices));
  g_assert_cmpstr (g_getenv ("CUDA_VISIBLE_DEVICES"), ==, "0,1");
  g_assert_cmpstr (devices.list, ==, "1");
  sv_run_devices_clear (&devices);
}

/* Shown three devices, a driver that can use two of them: opening says
 * so in one line instead of opening other GPUs. */
static void
test_fewer_usable (void)
{
  g_autoptr (GError) error = NULL;
  SvRunDevices devices;

  g_setenv ("CUDA_VISIBLE_DEVICES", "0,1,2,3", TRUE);
  sv_run_devices_init (&devices, &fake_device_class, "3,1,2", -1, 0);
  g_assert_true (sv_run_devices_show_only_used (&devices));
  g_assert_cmpstr (g_getenv ("CUDA_VISIBLE_DEVICES"), ==, "3,1,2");
  fake_count = 2;
  g_assert_false (sv_run_devices_open (&devices, &error));
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND);
  g_assert_cmpstr (error->message, ==,
                   "CUDA can use 2 of the 3 GPUs asked for (CUDA_VISIBLE_DEVICES=3,1,2)");
  g_assert_cmpuint (devices.n_backends, ==, 0);
  sv_run_devices_clear (&devices);
}

/* Without the variable, the kernel driver's list of GPUs counts them; a
 * machine without one (as here) is left alone. */
static void
test_unset (void)
{
  SvRunDevices devices;
  guint n = 0;

  g_unsetenv ("CUDA_VISIBLE_DEVICES");
  {
    g_autoptr (GDir) dir = g_dir_open ("/proc/driver/nvidia/gpus", 0, NULL);

    while (dir != NULL && g_dir_read_name (dir) != NULL)
      n++;
  }
  sv_run_devices_init (&devices, &fake_device_class, "0", -1, 0);
  g_assert_cmpint (sv_run_devices_show_only_used (&devices), ==, n > 0);
  if (n > 0)
    g_assert_cmpstr (g_getenv ("CUDA_VISIBLE_DEVICES"), ==, "0");
  else
    g_assert_null (g_getenv ("CUDA_VISIBLE_DEVICES"));
  sv_run_devices_clear (&devices);
}

/* --devices all made a list before the driver starts: every GPU it
 * would see, or as many as a run's size gains from, then narrowed and
 * renumbered as a list the user gave. */
static void
test_all_to_list (void)
{
  static const struct
  {
    const char *visible;
    guint most;
    const char *list_after;
    const char *visible_after;
    guint n_all;
  } cases[] = {
    { "0,1,2,3", 0, "0,1,2,3", "0,1,2,3", 4 },
    { "0,1,2,3", 1, "0", "0", 4 },
    { "4,5,6", 2, "0,1", "4,5", 3 },
    { "4,5", 9, "0,1", "4,5", 2 },
    { "GPU-aa", 0, "0", "GPU-aa", 1 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      SvRunDevices devices;
      guint n_all;

      g_setenv ("CUDA_VISIBLE_DEVICES", cases[i].visible, TRUE);
      sv_run_devices_init (&devices, &fake_device_class, "all", -1, 0);
      g_assert_true (sv_run_devices_all_to_list (&devices, cases[i].most, &n_all));
      g_assert_cmpuint (n_all, ==, cases[i].n_all);
      g_assert_cmpstr (devices.list, ==, cases[i].list_after);
      g_assert_true (sv_run_devices_show_only_used (&devices));
      g_assert_cmpstr (g_getenv ("CUDA_VISIBLE_DEVICES"), ==, cases[i].visible_after);
      sv_run_devices_clear (&devices);
    }
  /* Lists, and GPUs that cannot be counted, are left as they are. */
  {
    SvRunDevices devices;
    guint n_all;

    g_setenv ("CUDA_VISIBLE_DEVICES", "0,1", TRUE);
    sv_run_devices_init (&devices, &fake_device_class, "1", -1, 0);
    g_assert_false (sv_run_devices_all_to_list (&devices, 0, &n_all));
    g_assert_cmpstr (devices.list, ==, "1");
    sv_run_devices_clear (&devices);
    g_setenv ("CUDA_VISIBLE_DEVICES", "", TRUE);
    sv_run_devices_init (&devices, &fake_device_class, "all", -1, 0);
    g_assert_false (sv_run_devices_all_to_list (&devices, 0, &n_all));
    g_assert_cmpstr (devices.list, ==, "all");
    sv_run_devices_clear (&devices);
  }
  /* The devices a run's size gains from. */
  g_assert_cmpuint (sv_run_devices_worth (0), ==, 1);
  g_assert_cmpuint (sv_run_devices_worth ((guint64)1024 * 1024 * 1024), ==, 1);
  g_assert_cmpuint (sv_run_devices_worth ((guint64)1536 * 1536 * 1536), ==, 2);
  g_assert_cmpuint (sv_run_devices_worth ((guint64)2048 * 2048 * 2048), ==, 5);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/run-devices/visible/table", test_table);
  g_test_add_func ("/engine/run-devices/visible/no-class", test_no_class);
  g_test_add_func ("/engine/run-devices/visible/fewer-usable", test_fewer_usable);
  g_test_add_func ("/engine/run-devices/visible/unset", test_unset);
  g_test_add_func ("/engine/run-devices/visible/all-to-list", test_all_to_list);
  return g_test_run ();
}

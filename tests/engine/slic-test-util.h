/* Helpers shared by the SLIC tests: arrays computed by /usr/bin/python3
 * (numpy, scikit-image) and runs of the CPU backend. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "supervox/sv-backend.h"
#include "supervox/sv-error.h"
#include "supervox/sv-params.h"
#include "supervox/sv-volume.h"

/* Runs `code` in /usr/bin/python3 with numpy as np, os, product and
 * save(name, array, dtype) defined; save writes raw arrays into a temporary
 * directory. Returns the directory (free with py_done) or NULL and marks the
 * test skipped when python or scikit-image is missing. */
static inline char *
py_run (const char *code)
{
  static const char prelude[]
      = "import numpy as np, os, sys\n"
        "from itertools import product\n"
        "out = sys.argv[1]\n"
        "def save(name, a, dt='float32'):\n"
        "    np.ascontiguousarray(a, dtype=dt).tofile(os.path.join(out, name))\n";
  g_autofree char *script = g_strconcat (prelude, code, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *err = NULL;
  char *dir = g_dir_make_tmp ("sv-test-XXXXXX", &error);
  int status = 0;

  g_assert_no_error (error);
  {
    const char *argv[] = { "/usr/bin/python3", "-c", script, dir, NULL };
    if (!g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                       &err, &status, &error)
        || !g_spawn_check_wait_status (status, NULL))
      {
        if (err != NULL && strstr (err, "ModuleNotFoundError") != NULL)
          {
            g_test_skip_printf ("python3 with numpy/scikit-image is needed: %s", err);
            g_rmdir (dir);
            g_free (dir);
            return NULL;
          }
        g_error ("python failed: %s\n%s", error ? error->message : "", err ? err : "");
      }
  }
  return dir;
}

/* Reads dir/name, which must hold exactly n_bytes. */
static inline gpointer
py_load (const char *dir, const char *name, gsize n_bytes)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  char *contents = NULL;
  gsize length = 0;

  g_file_get_contents (path, &contents, &length, &error);
  g_assert_no_error (error);
  if (length != n_bytes)
    g_error ("%s: %" G_GSIZE_FORMAT " bytes, expected %" G_GSIZE_FORMAT, name, length, n_bytes);
  return contents;
}

static inline void
py_done (char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  if (d != NULL)
    g_dir_close (d);
  g_rmdir (dir);
  g_free (dir);
}

/* A volume over data (not copied; the struct does not own it). */
static inline SvVolume
test_volume (float *data, guint nz, guint ny, guint nx, guint nc)
{
  SvVolume v;

  memset (&v, 0, sizeof v);
  v.nz = nz;
  v.ny = ny;
  v.nx = nx;
  v.nc = nc;
  v.data = data;
  v.spacing[0] = v.spacing[1] = v.spacing[2] = 1.0;
  v.source_type = SV_SAMPLE_F32;
  return v;
}

/* The whole pipeline on the CPU backend; returns nz*ny*nx labels or NULL
 * with error set. */
static inline gint32 *
run_cpu (const SvVolume *volume, const guint8 *mask, const SvSlicParams *params, int n_threads,
         GError **error)
{
  g_autoptr (SvBackend) backend = sv_backend_new ("cpu", error);
  SvRunControl control = { .n_threads = n_threads, .stop_after_iteration = -1 };
  SvRunStats stats;
  g_autofree gint32 *labels = NULL;

  if (backend == NULL || !sv_backend_set_volume (backend, volume, mask, error)
      || !sv_backend_run (backend, params, &control, &stats, error))
    return NULL;
  labels = g_new (gint32, (gsize)volume->nz * volume->ny * volume->nx);
  if (!sv_backend_get_labels (backend, labels, error))
    return NULL;
  return g_steal_pointer (&labels);
}

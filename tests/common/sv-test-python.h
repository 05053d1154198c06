/* Supervox tests: running scikit-image, numpy and scipy as reference
 * implementations through Debian's /usr/bin/python3. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* TRUE when /usr/bin/python3 can import every module of `modules`, a
 * comma-separated import list such as "numpy, scipy.ndimage". */
gboolean sv_test_python_has (const char *modules);

/* Runs `/usr/bin/python3 -c script args…` (args NULL-terminated, may be
 * NULL) and returns its stdout (free with g_free). When python3 or a module
 * the script imports is missing, marks the test skipped and returns NULL;
 * any other failure fails the test with python's stderr. */
char *sv_test_python (const char *script, const char *const *args);

/* Python source to put before a script that reads or writes TIFFs with
 * tifffile: without imagecodecs (Debian has none), it teaches tifffile
 * zstd (through python3-zstandard), LZW and the floating-point predictor,
 * written here in plain Python and NumPy from the TIFF specification, so
 * that files of every codec can be checked by a second implementation. */
extern const char sv_test_tifffile_prelude[];

#define sv_test_python_args(script, ...) \
  sv_test_python ((script), (const char *const[]){ __VA_ARGS__, NULL })

G_END_DECLS

/* Supervox tests: temporary folders and file comparison. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Removes `path`: a file, or a folder with everything in it (folders made
 * read-only by a test are made writable first). Missing paths are fine. */
void sv_test_remove_tree (const char *path);

/* A new empty folder in the temporary directory, named from `prefix`
 * ("sv-test-cli" gives sv-test-cli-XXXXXX); fails the test otherwise. */
char *sv_test_make_dir (const char *prefix);

/* Fails the test unless files a and b hold the same bytes. */
void sv_test_assert_same_file (const char *a, const char *b);

/* Every file under folder `a` is under folder `b` at the same relative
 * path with the same bytes, and the other way round (an OME-Zarr store). */
void sv_test_assert_same_tree (const char *a, const char *b);

G_END_DECLS

/* Supervox tests: temporary folders. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Removes `path`: a file, or a folder with everything in it (folders made
 * read-only by a test are made writable first). Missing paths are fine. */
void sv_test_remove_tree (const char *path);

G_END_DECLS

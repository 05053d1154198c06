/* Supervox engine tests: the streamed run's spill of volumes it needs
 * again (stream-spill.c), in host memory and a temporary file. */
#include <string.h>

#include "stream-private.h"
#include "sv-test-files.h"

/* A spill whose host part takes copies of 64 MiB and more on several
 * threads gives back exactly what was written, across the host part's
 * edges and through the file beyond them, read in other ranges than
 * written. */
static void
test_spill_threads (void)
{
  g_autofree char *dir = sv_test_make_dir ("sv-test-stream-spill");
  const guint nz = 40;
  const gsize plane = 1u << 20; /* 4 MiB slices of int32 */
  g_autofree char *beside = g_build_filename (dir, "labels.tif", NULL);
  g_autofree gint32 *in = g_new (gint32, (gsize)nz * plane);
  g_autofree gint32 *back = g_new0 (gint32, (gsize)nz * plane);
  g_autoptr (GError) error = NULL;

  for (gsize i = 0; i < (gsize)nz * plane; i++)
    in[i] = (gint32)(i * 2654435761u >> 3);
  for (int threads = 1; threads <= 4; threads += 3)
    {
      /* Slices 3 to 36 in host memory (34 slices, 136 MiB), the rest in the file. */
      g_autoptr (SvSpill) spill
          = sv__spill_new (beside, "labels", nz, plane * sizeof (gint32), 3, 34, &error);

      g_assert_no_error (error);
      sv__spill_set_threads (spill, threads);
      /* Written in two ranges that each cross an edge of the host part. */
      g_assert_true (sv__spill_write (spill, 0, 21, in, &error));
      g_assert_true (sv__spill_write (spill, 21, nz, in + (gsize)21 * plane, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (sv__spill_host_bytes (spill), ==, (guint64)34 * plane * sizeof (gint32));
      g_assert_cmpuint (sv__spill_file_bytes (spill), ==, (guint64)6 * plane * sizeof (gint32));
      memset (back, 0, (gsize)nz * plane * sizeof (gint32));
      g_assert_true (sv__spill_read (spill, 0, 17, back, &error));
      g_assert_true (sv__spill_read (spill, 17, nz, back + (gsize)17 * plane, &error));
      g_assert_no_error (error);
      g_assert_true (memcmp (in, back, (gsize)nz * plane * sizeof (gint32)) == 0);
    }
  sv_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/stream/spill/copies-on-threads", test_spill_threads);
  return g_test_run ();
}

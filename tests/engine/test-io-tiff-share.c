/* Tests for a label TIFF's shares (engine/io/io-tiff-share.c): threads
 * that hand their own slices to one writer at once, as the devices that
 * shared the connectivity do, make the single writer's file byte for
 * byte, whatever order they come in and however much each may hold; a
 * share that fails leaves the ones before it alone, ends the ones after
 * it with one line, and no file. */
#define G_LOG_DOMAIN "sv-test-io-tiff-share"

#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "io-tiff-private.h"
#include "supervox/sv-error.h"
#include "supervox/sv-io-slab.h"
#include "supervox/sv-io.h"
#include "sv-test-files.h"

enum
{
  NZ = 24,
  NY = 37,
  NX = 29,
  N_SHARES = 4 /* the first is the writer itself */
};

typedef struct
{
  char *dir;
  gint32 *labels;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = sv_test_make_dir ("sv-test-io-tiff-share");
  f->labels = g_new (gint32, (gsize)NZ * NY * NX);
  /* Blocks of labels that run along x and repeat along y, as a label
   * volume's do, with a few stray voxels. */
  for (guint z = 0; z < NZ; z++)
    for (guint y = 0; y < NY; y++)
      for (guint x = 0; x < NX; x++)
        f->labels[((gsize)z * NY + y) * NX + x]
            = (gint32)((z / 5) * 100 + (y / 7) * 10 + x / 6) + ((x * 7 + y * 3 + z) % 41 == 0);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_unsetenv ("SV_TIFF_SHARE_BYTES");
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->labels);
}

static SvTiffLabelWriter *
new_writer (const char *path)
{
  static const double spacing[3] = { 1.0, 1.0, 1.0 };
  g_autoptr (GError) error = NULL;
  SvTiffWriteOptions options;
  SvTiffLabelWriter *w;

  sv_tiff_write_options_init_defaults (&options);
  w = sv_tiff_label_writer_new (path, NZ, NY, NX, FALSE, spacing, NULL, &options, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sv_tiff_label_writer_strip_rows (w), >, 0);
  g_assert_cmpuint (sv__tiff_label_writer_share_depth (w), ==, 1);
  return w;
}

/* Slices [z0, z1) as strips compressed by the caller, as a device hands
 * them over. */
static gboolean
append_strips (SvTiffLabelWriter *w, guint rows, const gint32 *labels, guint z0, guint z1,
               GError **error)
{
  const guint per_page = (NY + rows - 1) / rows;
  g_autofree guint64 *sizes = g_new (guint64, (gsize)(z1 - z0) * per_page);
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  SvTiffRunsCoder *coder = sv__tiff_runs_coder_new ();

  for (guint z = z0; z < z1; z++)
    for (guint k = 0; k < per_page; k++)
      {
        const guint y0 = k * rows, y1 = MIN (y0 + rows, NY);
        const gsize len = (gsize)(y1 - y0) * NX * sizeof (gint32);
        g_autofree guint8 *out = g_malloc (sv__tiff_deflate_runs_bound (len));
        const gint32 *strip = labels + ((gsize)z * NY + y0) * NX;
        const gsize size = sv__tiff_deflate_runs (coder, (const guint8 *)strip, len,
                                                  NX * sizeof (gint32), 4, out);

        sizes[(gsize)(z - z0) * per_page + k] = size;
        g_byte_array_append (bytes, out, (guint)size);
      }
  sv__tiff_runs_coder_free (coder);
  return sv_tiff_label_writer_append_strips (w, z1 - z0, sizes, bytes->data, -1, error);
}

typedef struct
{
  SvTiffLabelWriter *share;
  const gint32 *labels;
  guint rows, z0, z1;
  gboolean fail;    /* stops after its first slice, unfinished */
  gint64 delay_us;  /* before it starts */
  GError *error;
} ShareJob;

/* A share's slices, in pieces of 1, 2 and 3 slices, every third piece as
 * labels for the owner's pool to compress. */
static gpointer
run_share (gpointer data)
{
  ShareJob *job = data;
  guint step = 1;

  g_usleep ((gulong)job->delay_us);
  for (guint z = job->z0; z < job->z1; z += step, step = step % 3 + 1)
    {
      const guint z1 = job->fail ? z + 1 : MIN (z + step, job->z1);
      const gboolean ok
          = step == 3 ? sv_tiff_label_writer_append (
                            job->share, job->labels + (gsize)z * NY * NX, z1 - z, &job->error)
                      : append_strips (job->share, job->rows, job->labels, z, z1, &job->error);

      if (!ok || job->fail)
        return NULL;
    }
  sv__tiff_label_writer_finish_share (job->share, &job->error);
  return NULL;
}

/* The writer takes slices [0, 6) itself; shares [6, 11), [11, 19) and
 * [19, 24) come from threads, the later ones first. */
static void
write_with_shares (Fixture *f, const char *path, gint failing, GError **shares_errors)
{
  static const guint starts[N_SHARES + 1] = { 0, 6, 11, 19, NZ };
  g_autoptr (SvTiffLabelWriter) w = new_writer (path);
  g_autoptr (GError) error = NULL;
  ShareJob jobs[N_SHARES];
  GThread *threads[N_SHARES];
  gboolean all_ok = TRUE;

  g_assert_true (sv_tiff_label_writer_append (w, f->labels, starts[1], &error));
  g_assert_no_error (error);
  for (guint s = 1; s < N_SHARES; s++)
    {
      jobs[s] = (ShareJob){ NULL, f->labels, sv_tiff_label_writer_strip_rows (w), starts[s],
                            starts[s + 1], (gint)s == failing, (gint64)(N_SHARES - s) * 20000,
                            NULL };
      jobs[s].share = sv__tiff_label_writer_new_share (w, starts[s], G_MAXUINT64, &error);
      g_assert_no_error (error);
      threads[s] = g_thread_new ("share", run_share, &jobs[s]);
    }
  for (guint s = 1; s < N_SHARES; s++)
    {
      g_thread_join (threads[s]);
      sv_tiff_label_writer_free (jobs[s].share);
      all_ok = all_ok && jobs[s].error == NULL;
      shares_errors[s] = jobs[s].error;
    }
  if (all_ok)
    {
      g_assert_true (sv_tiff_label_writer_finish (w, &error));
      g_assert_no_error (error);
    }
}

static void
test_same_as_one_writer (Fixture *f, gconstpointer data)
{
  g_autofree char *one = g_build_filename (f->dir, "one.tif", NULL);
  g_autofree char *shared = g_build_filename (f->dir, "shared.tif", NULL);
  static const char *const held[] = { NULL, "0", "300", "100000000" };
  g_autoptr (GError) error = NULL;

  {
    g_autoptr (SvTiffLabelWriter) w = new_writer (one);

    g_assert_true (sv_tiff_label_writer_append (w, f->labels, NZ, &error));
    g_assert_true (sv_tiff_label_writer_finish (w, &error));
    g_assert_no_error (error);
  }
  for (guint h = 0; h < G_N_ELEMENTS (held); h++)
    {
      GError *errors[N_SHARES] = { NULL };

      g_test_message ("shares hold %s bytes", held[h] != NULL ? held[h] : "the default");
      if (held[h] != NULL)
        g_setenv ("SV_TIFF_SHARE_BYTES", held[h], TRUE);
      write_with_shares (f, shared, -1, errors);
      for (guint s = 1; s < N_SHARES; s++)
        g_assert_no_error (errors[s]);
      sv_test_assert_same_file (one, shared);
      g_assert_cmpint (g_remove (shared), ==, 0);
    }
}

/* The second of three shares stops after a slice without finishing: the
 * first writes all of its own, the third gets one line, and no file is
 * left. */
static void
test_failing_share (Fixture *f, gconstpointer data)
{
  g_autofree char *shared = g_build_filename (f->dir, "shared.tif", NULL);
  g_autoptr (GDir) listing = NULL;
  g_autoptr (GError) error = NULL;
  GError *errors[N_SHARES] = { NULL };
  const char *name;

  g_setenv ("SV_TIFF_SHARE_BYTES", "300", TRUE);
  write_with_shares (f, shared, 2, errors);
  g_assert_no_error (errors[1]);
  g_assert_no_error (errors[2]);
  g_assert_error (errors[3], SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO);
  g_assert_nonnull (strstr (errors[3]->message, "did not reach the file"));
  g_assert_null (strchr (errors[3]->message, '\n'));
  g_clear_error (&errors[3]);
  listing = g_dir_open (f->dir, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (listing)) != NULL)
    g_error ("left behind: %s", name);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/io/tiff-share/same-as-one-writer", Fixture, NULL, fixture_setup,
              test_same_as_one_writer, fixture_teardown);
  g_test_add ("/io/tiff-share/failing-share", Fixture, NULL, fixture_setup, test_failing_share,
              fixture_teardown);
  return g_test_run ();
}

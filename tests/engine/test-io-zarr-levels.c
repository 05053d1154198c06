/* Tests for engine/io/io-zarr-levels.c: an OME-Zarr image's resolution
 * levels listed with their shapes and the spacing their scales give, on
 * stores written here by hand (tests/common/sv-test-zarr.c), and each
 * level read back as the listing describes it. */
#define G_LOG_DOMAIN "sv-test-io"

#include <glib.h>
#include <glib/gstdio.h>

#include "supervox/sv-error.h"
#include "supervox/sv-io-zarr.h"
#include "supervox/sv-io.h"
#include "sv-test-files.h"
#include "sv-test-volumes.h"
#include "sv-test-zarr.h"

#define N_LEVELS 3

typedef struct
{
  char *dir;
  SvVolume *levels[N_LEVELS];
} Fixture;

/* A pyramid of 16×40×36 voxels of 2×0.5×0.5, each level half the last. */
static void
fixture_setup (Fixture *f, gconstpointer data)
{
  guint nc = GPOINTER_TO_UINT (data);

  f->dir = sv_test_make_dir ("sv-test-zarr-levels");
  f->levels[0] = sv_test_textured_volume (16, 40, 36, nc);
  f->levels[0]->spacing[0] = 2.0;
  f->levels[0]->spacing[1] = f->levels[0]->spacing[2] = 0.5;
  for (guint i = 1; i < N_LEVELS; i++)
    f->levels[i] = sv_test_downsample (f->levels[i - 1]);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  for (guint i = 0; i < N_LEVELS; i++)
    sv_volume_free (f->levels[i]);
  sv_test_remove_tree (f->dir);
  g_free (f->dir);
}

/* Each level's shape, its scale times the multiscale's, its unit in the
 * TIFF reader's words and its folder; reading that folder gives the
 * level's voxels with the spacing listed. */
static void
test_shapes_and_scales (Fixture *f, gconstpointer data)
{
  static const guint shapes[N_LEVELS][3] = { { 16, 40, 36 }, { 8, 20, 18 }, { 4, 10, 9 } };
  static const double outer[3] = { 1.0, 3.0, 3.0 };
  g_autofree char *image
      = sv_test_write_ome_zarr (f->dir, "cells.zarr", f->levels, N_LEVELS, "micrometer", outer);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) levels = sv_zarr_list_levels (image, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (levels->len, ==, N_LEVELS);
  for (guint i = 0; i < N_LEVELS; i++)
    {
      const SvZarrLevel *l = g_ptr_array_index (levels, i);
      g_autofree char *folder = g_strdup_printf ("%u", i);
      g_autofree char *path = g_build_filename (image, folder, NULL);
      g_autoptr (SvVolume) back = NULL;
      /* 2×0.5×0.5 at level 0, doubling; y and x times the outer 3. */
      double want[3] = { 2.0 * (1 << i), 1.5 * (1 << i), 1.5 * (1 << i) };

      g_assert_cmpuint (l->level, ==, i);
      g_assert_cmpstr (l->path, ==, path);
      g_assert_cmpuint (l->shape[0], ==, shapes[i][0]);
      g_assert_cmpuint (l->shape[1], ==, shapes[i][1]);
      g_assert_cmpuint (l->shape[2], ==, shapes[i][2]);
      g_assert_cmpuint (l->channels, ==, GPOINTER_TO_UINT (data));
      g_assert_true (l->spacing_from_file);
      for (int a = 0; a < 3; a++)
        g_assert_cmpfloat (l->spacing[a], ==, want[a]);
      g_assert_cmpstr (l->unit, ==, "µm");

      back = sv_tiff_read_volume (l->path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (back->nz, ==, l->shape[0]);
      g_assert_cmpuint (back->ny, ==, l->shape[1]);
      g_assert_cmpuint (back->nx, ==, l->shape[2]);
      g_assert_cmpuint (back->nc, ==, l->channels);
      for (int a = 0; a < 3; a++)
        g_assert_cmpfloat (back->spacing[a], ==, l->spacing[a]);
      g_assert_cmpstr (back->unit, ==, l->unit);
      g_assert_cmpmem (back->data, sv_volume_n_voxels (back) * back->nc * sizeof (float),
                       f->levels[i]->data,
                       sv_volume_n_voxels (f->levels[i]) * f->levels[i]->nc * sizeof (float));
    }
}

/* A store without units or an outer scale: the levels' own scales. */
static void
test_one_level_no_unit (Fixture *f, gconstpointer data)
{
  g_autofree char *image = sv_test_write_ome_zarr (f->dir, "one.zarr", f->levels, 1, NULL, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) levels = sv_zarr_list_levels (image, &error);
  const SvZarrLevel *l;

  g_assert_no_error (error);
  g_assert_cmpuint (levels->len, ==, 1);
  l = g_ptr_array_index (levels, 0);
  g_assert_cmpuint (l->shape[0], ==, 16);
  g_assert_cmpfloat (l->spacing[0], ==, 2.0);
  g_assert_cmpfloat (l->spacing[2], ==, 0.5);
  g_assert_null (l->unit);
}

/* A level's folder is a plain array: it has no levels of its own. A
 * level whose array is gone fails naming its folder. */
static void
test_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *image
      = sv_test_write_ome_zarr (f->dir, "cells.zarr", f->levels, N_LEVELS, "micrometer", NULL);
  g_autofree char *level1 = g_build_filename (image, "1", NULL);
  g_autofree char *zarray2_folder = g_build_filename (image, "2", NULL);
  g_autofree char *zarray2 = g_build_filename (zarray2_folder, ".zarray", NULL);
  g_autoptr (GError) error = NULL;
  GPtrArray *levels;

  levels = sv_zarr_list_levels (level1, &error);
  g_assert_null (levels);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT);
  g_assert_nonnull (g_strstr_len (error->message, -1, "not an OME-Zarr image"));
  g_clear_error (&error);

  g_assert_cmpint (g_remove (zarray2), ==, 0);
  levels = sv_zarr_list_levels (image, &error);
  g_assert_null (levels);
  g_assert_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT);
  g_assert_true (g_str_has_prefix (error->message, zarray2_folder));
  g_assert_nonnull (g_strstr_len (error->message, -1, "neither a Zarr array (no .zarray)"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/engine/io/zarr/levels/shapes-and-scales", Fixture, GUINT_TO_POINTER (1),
              fixture_setup, test_shapes_and_scales, fixture_teardown);
  g_test_add ("/engine/io/zarr/levels/shapes-and-scales-of-channels", Fixture, GUINT_TO_POINTER (2),
              fixture_setup, test_shapes_and_scales, fixture_teardown);
  g_test_add ("/engine/io/zarr/levels/one-level-without-unit", Fixture, GUINT_TO_POINTER (1),
              fixture_setup, test_one_level_no_unit, fixture_teardown);
  g_test_add ("/engine/io/zarr/levels/plain-array-and-missing-level-refused", Fixture,
              GUINT_TO_POINTER (1), fixture_setup, test_refused, fixture_teardown);
  return g_test_run ();
}

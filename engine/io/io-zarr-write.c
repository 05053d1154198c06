/* Supervox engine: labels as an OME-Zarr image (NGFF 0.4, one level, uint32
 * or int32 chunks), written a slab at a time. Slices gather into a row of
 * chunks; a full row is compressed on worker threads and its chunks
 * written at once, so a streamed run writes as it goes. Everything goes
 * into a temporary folder beside the store, renamed at the end: a failed
 * or interrupted run leaves no store. As a label image of an OME-Zarr
 * image (IMAGE.zarr/labels/NAME) it also gets "image-label" metadata and
 * its name in labels/.zattrs. */
#define G_LOG_DOMAIN "sv-engine"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "internal.h"
#include "io-zarr-write-private.h"
#include "supervox/sv-error.h"

/* A row of chunks is held whole before it is written; past this many
 * bytes the chunks get fewer slices. */
#define SV_ZARR_ROW_BYTES (256u << 20)
#define SV_ZARR_CHUNK 64u


/* Removes a folder and what it holds (a store is four levels deep). */
static void
remove_tree (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

gboolean
sv__zarr_write_bytes (const char *path, const void *data, gsize size, SvZarrSyncer *syncer,
                      GError **error)
{
  int fd = g_open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  const guint8 *p = data;
  int saved = 0;

  if (fd < 0)
    saved = errno;
  while (fd >= 0 && size > 0)
    {
      ssize_t n = write (fd, p, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          saved = n < 0 ? errno : ENOSPC;
          break;
        }
      p += n;
      size -= (gsize)n;
    }
  /* Each file reaches the disk before its store appears under its name:
   * its own data alone (the workers write chunks at once). syncfs, here
   * before, also waited for whatever else the file system held unwritten:
   * 1.5 GB written just before made a 64 MiB store take 0.85 s, not 0.11.
   * With a syncer that happens on its threads. */
  if (fd >= 0 && saved == 0 && syncer != NULL)
    {
      sv__zarr_syncer_take (syncer, fd, path);
      return TRUE;
    }
  if (fd >= 0 && saved == 0 && fdatasync (fd) != 0 && errno != EINVAL && errno != EROFS)
    saved = errno;
  if (fd >= 0 && close (fd) != 0 && saved == 0)
    saved = errno;
  if (saved != 0)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "cannot write %s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static gboolean
write_json (const char *folder, const char *name, JsonNode *root, GError **error)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autofree char *path = g_build_filename (folder, name, NULL);
  g_autofree char *text = NULL;
  gsize len;

  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 2);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, &len);
  return sv__zarr_write_bytes (path, text, len, NULL, error);
}

static JsonNode *
zgroup_json (void)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "zarr_format");
  json_builder_add_int_value (b, 2);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

static void
add_uint_list (JsonBuilder *b, const char *member, const guint *v, guint n)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    json_builder_add_int_value (b, v[i]);
  json_builder_end_array (b);
}

static JsonNode *
zarray_json (const SvZarrLabelWriter *w)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const guint shape[3] = { w->nz, w->ny, w->nx };

  json_builder_begin_object (b);
  add_uint_list (b, "chunks", w->chunks, 3);
  json_builder_set_member_name (b, "compressor");
  json_builder_add_value (b, sv__zarr_compressor_json (&w->zarr));
  json_builder_set_member_name (b, "dimension_separator");
  json_builder_add_string_value (b, "/");
  json_builder_set_member_name (b, "dtype");
  json_builder_add_string_value (b, w->negative ? "<i4" : "<u4");
  json_builder_set_member_name (b, "fill_value");
  json_builder_add_int_value (b, 0);
  json_builder_set_member_name (b, "filters");
  json_builder_add_null_value (b);
  json_builder_set_member_name (b, "order");
  json_builder_add_string_value (b, "C");
  add_uint_list (b, "shape", shape, 3);
  json_builder_set_member_name (b, "zarr_format");
  json_builder_add_int_value (b, 2);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* NGFF 0.4 multiscales of one level, "0", with the labels' calibration;
 * "image-label" when they belong to an image. */
static JsonNode *
zattrs_json (const SvZarrLabelWriter *w, const char *name, const double spacing[3],
             const char *unit)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const char *ngff_unit = sv__zarr_unit_to_ngff (unit);
  static const char *const axes[3] = { "z", "y", "x" };

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "multiscales");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "version");
  json_builder_add_string_value (b, "0.4");
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, name);
  json_builder_set_member_name (b, "axes");
  json_builder_begin_array (b);
  for (guint i = 0; i < 3; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, axes[i]);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, "space");
      if (ngff_unit != NULL)
        {
          json_builder_set_member_name (b, "unit");
          json_builder_add_string_value (b, ngff_unit);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "datasets");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "path");
  json_builder_add_string_value (b, "0");
  json_builder_set_member_name (b, "coordinateTransformations");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "type");
  json_builder_add_string_value (b, "scale");
  json_builder_set_member_name (b, "scale");
  json_builder_begin_array (b);
  for (guint i = 0; i < 3; i++)
    json_builder_add_double_value (b, spacing[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_end_array (b);
  if (w->zarr.image_label)
    {
      json_builder_set_member_name (b, "image-label");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "version");
      json_builder_add_string_value (b, "0.4");
      json_builder_set_member_name (b, "source");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "image");
      json_builder_add_string_value (b, "../../");
      json_builder_end_object (b);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

static void
chunks_of (const SvZarrWriteOptions *zarr, guint nz, guint ny, guint nx, guint chunks[3])
{
  for (guint i = 0; i < 3; i++)
    chunks[i] = MIN (zarr->chunks[i] > 0 ? zarr->chunks[i] : SV_ZARR_CHUNK,
                     i == 0 ? nz : i == 1 ? ny : nx);
  if (zarr->chunks[0] == 0)
    chunks[0] = CLAMP (SV_ZARR_ROW_BYTES / ((gsize)ny * nx * sizeof (gint32)), 1, chunks[0]);
}

guint
sv__zarr_label_chunk_depth (guint nz, guint ny, guint nx, const SvTiffWriteOptions *options)
{
  guint chunks[3];

  chunks_of (options->zarr, nz, ny, nx, chunks);
  return MAX (chunks[0], 1);
}

const char *
sv__zarr_label_writer_folder (const SvZarrLabelWriter *w)
{
  return w->tmp;
}

/* A writer's shape, codec and, with `row`, row buffer (a part's comes when
 * a row must be gathered: its appends usually hold whole rows); NULL with
 * `error` without memory for a row. */
SvZarrLabelWriter *
sv__zarr_writer_new (const char *path, guint nz, guint ny, guint nx, gboolean negative,
                     const SvZarrWriteOptions *zarr, int n_threads, gboolean row, GError **error)
{
  g_autoptr (SvZarrLabelWriter) w = g_new0 (SvZarrLabelWriter, 1);
  gsize len;

  w->path = g_strdup (path);
  len = strlen (w->path);
  while (len > 1 && w->path[len - 1] == G_DIR_SEPARATOR)
    w->path[--len] = '\0';
  w->zarr = *zarr;
  w->n_threads = n_threads;
  if (g_strcmp0 (g_getenv ("SV_ZARR_SYNC"), "each") != 0)
    w->syncer = sv__zarr_syncer_new ();
  w->nz = nz;
  w->ny = ny;
  w->nx = nx;
  w->negative = negative;
  chunks_of (&w->zarr, nz, ny, nx, w->chunks);
  if (row && !sv__zarr_writer_row_alloc (w, error))
    return NULL;
  return g_steal_pointer (&w);
}

gboolean
sv__zarr_writer_row_alloc (SvZarrLabelWriter *w, GError **error)
{
  if (w->row == NULL)
    w->row = g_try_malloc ((gsize)w->chunks[0] * w->ny * w->nx * sizeof (gint32));
  if (w->row == NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_NO_MEMORY,
                   "%s: no memory for a row of chunks", w->path);
      return FALSE;
    }
  return TRUE;
}

/* The store's folders reach the disk (their entries: the files did as
 * they were written) before the store appears under its name. */
void
sv__zarr_sync_folder (const char *folder)
{
  g_autoptr (GDir) dir = g_dir_open (folder, 0, NULL);
  const char *name;
  int fd;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (folder, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        sv__zarr_sync_folder (child);
    }
  fd = g_open (folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd >= 0)
    {
      (void)fsync (fd);
      close (fd);
    }
}

SvZarrLabelWriter *
sv__zarr_label_writer_new (const char *path, guint nz, guint ny, guint nx, gboolean negative,
                           const double spacing[3], const char *unit,
                           const SvTiffWriteOptions *options, GError **error)
{
  g_autoptr (SvZarrLabelWriter) w
      = sv__zarr_writer_new (path, nz, ny, nx, negative, options->zarr, options->n_threads, TRUE,
                             error);
  g_autoptr (JsonNode) zgroup = zgroup_json ();
  g_autoptr (JsonNode) zattrs = NULL;
  g_autoptr (JsonNode) zarray = NULL;
  g_autofree char *array = NULL;
  g_autofree char *name = NULL;
  g_autofree char *tmp = NULL;

  if (w == NULL)
    return NULL;
  name = g_path_get_basename (w->path);

  if (w->zarr.image_label)
    {
      g_autofree char *labels = g_path_get_dirname (w->path);
      g_autofree char *labels_name = g_path_get_basename (labels);

      w->image = g_path_get_dirname (labels);
      if (!g_str_equal (labels_name, "labels") || !sv_zarr_is_ome_image (w->image))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                       "%s: labels of an image go to IMAGE.zarr/labels/NAME of an OME-Zarr image",
                       path);
          return NULL;
        }
      /* Beside labels/, so that labels/ changes only when the run ends. */
      tmp = g_strdup_printf ("%s" G_DIR_SEPARATOR_S ".%s.XXXXXX", w->image, name);
    }
  else
    tmp = g_strdup_printf ("%s.XXXXXX", w->path);
  if (g_mkdtemp_full (tmp, 0777) == NULL)
    {
      int saved = errno;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot create a folder: %s",
                   path, g_strerror (saved));
      return NULL;
    }
  w->tmp = g_steal_pointer (&tmp);
  w->open = TRUE;

  array = g_build_filename (w->tmp, "0", NULL);
  zattrs = zattrs_json (w, name, spacing, unit);
  zarray = zarray_json (w);
  if (g_mkdir (array, 0777) != 0)
    {
      int saved = errno;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot create a folder: %s",
                   path, g_strerror (saved));
      return NULL;
    }
  if (!write_json (w->tmp, ".zgroup", zgroup, error) || !write_json (w->tmp, ".zattrs", zattrs, error)
      || !write_json (array, ".zarray", zarray, error))
    return NULL;
  return g_steal_pointer (&w);
}

/* Slices into the row, on the writer's threads (a row of a 2048² volume
 * is a GiB). */
static void
copy_slices (const SvZarrLabelWriter *w, gint32 *dst, const gint32 *src, gsize n)
{
  sv__copy_parallel (dst, src, n * sizeof (gint32),
                     (int)MIN ((gsize)sv__resolve_threads (w->n_threads), n / (1 << 20) + 1));
}

gboolean
sv__zarr_label_writer_append (SvZarrLabelWriter *w, const gint32 *labels, guint depth,
                              GError **error)
{
  const gsize plane = (gsize)w->ny * w->nx;

  g_return_val_if_fail (w->open && w->row_z0 + w->row_fill + depth <= w->nz, FALSE);

  /* Negative labels in a store for labels >= 0 are found as the row's
   * chunks are gathered (io-zarr-write-row.c). */
  while (depth > 0)
    {
      guint take = MIN (depth, w->chunks[0] - w->row_fill);
      /* A whole row in the caller's slices is written from them: the copy
       * into the row took a third of an in-memory run's write. */
      const gboolean whole = w->row_fill == 0
                             && (take == w->chunks[0] || w->row_z0 + take == w->nz);

      if (whole)
        w->row_src = labels;
      else if (!sv__zarr_writer_row_alloc (w, error))
        return FALSE;
      else
        copy_slices (w, w->row + w->row_fill * plane, labels, take * plane);
      w->row_fill += take;
      labels += take * plane;
      depth -= take;
      if ((w->row_fill == w->chunks[0] || w->row_z0 + w->row_fill == w->nz)
          && !sv__zarr_row_flush (w, error))
        {
          w->row_src = NULL;
          return FALSE;
        }
      w->row_src = NULL;
    }
  return TRUE;
}

/* Puts folder `from` at `to`; an older store there is replaced, anything
 * else there is an error. */
static gboolean
replace_folder (const char *from, const char *to, GError **error)
{
  g_autofree char *old = NULL;

  if (g_file_test (to, G_FILE_TEST_EXISTS))
    {
      if (!sv_zarr_is_store (to))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO,
                       "%s: already exists and is no Zarr store; not replaced", to);
          return FALSE;
        }
      old = g_strdup_printf ("%s.old.XXXXXX", to);
      if (g_mkdtemp_full (old, 0700) == NULL || g_rmdir (old) != 0 || g_rename (to, old) != 0)
        {
          int saved = errno;
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot replace it: %s", to,
                       g_strerror (saved));
          return FALSE;
        }
    }
  if (g_rename (from, to) != 0)
    {
      int saved = errno;
      if (old != NULL)
        g_rename (old, to);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot write it: %s", to,
                   g_strerror (saved));
      return FALSE;
    }
  if (old != NULL)
    remove_tree (old);
  return TRUE;
}

/* labels/.zattrs lists every label image of the image; `name` joins it. */
static gboolean
register_label (const char *labels, const char *name, GError **error)
{
  g_autofree char *attrs_path = g_build_filename (labels, ".zattrs", NULL);
  g_autofree char *text = NULL;
  g_autofree char *tmp = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autoptr (JsonNode) zgroup = zgroup_json ();
  JsonObject *o;
  JsonArray *list;
  gboolean listed = FALSE;

  if (g_file_get_contents (attrs_path, &text, NULL, NULL)
      && json_parser_load_from_data (parser, text, -1, NULL)
      && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    root = json_node_copy (json_parser_get_root (parser));
  else
    root = json_node_init_object (json_node_alloc (), json_object_new ());
  o = json_node_get_object (root);
  if (!json_object_has_member (o, "labels")
      || !JSON_NODE_HOLDS_ARRAY (json_object_get_member (o, "labels")))
    json_object_set_array_member (o, "labels", json_array_new ());
  list = json_object_get_array_member (o, "labels");
  for (guint i = 0; i < json_array_get_length (list); i++)
    listed = listed || g_strcmp0 (json_array_get_string_element (list, i), name) == 0;
  if (!listed)
    json_array_add_string_element (list, name);

  /* Through a temporary name, so that readers see the old list or the new. */
  tmp = g_strdup_printf (".zattrs.%u.tmp", (guint)getpid ());
  if (!write_json (labels, tmp, root, error))
    return FALSE;
  {
    g_autofree char *tmp_path = g_build_filename (labels, tmp, NULL);
    g_autofree char *zgroup_path = g_build_filename (labels, ".zgroup", NULL);

    if (g_rename (tmp_path, attrs_path) != 0)
      {
        int saved = errno;
        g_unlink (tmp_path);
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "cannot write %s: %s", attrs_path,
                     g_strerror (saved));
        return FALSE;
      }
    if (!g_file_test (zgroup_path, G_FILE_TEST_EXISTS))
      return write_json (labels, ".zgroup", zgroup, error);
  }
  return TRUE;
}

gboolean
sv__zarr_label_writer_finish (SvZarrLabelWriter *w, GError **error)
{
  /* Its rows, then those of the shares that began after them. */
  g_return_val_if_fail (w->open && w->row_fill == 0
                            && w->row_z0 + (guint)g_atomic_int_get (&w->share_slices) == w->nz,
                        FALSE);

  return sv__zarr_label_writer_finish_store (w, error);
}

gboolean
sv__zarr_label_writer_finish_store (SvZarrLabelWriter *w, GError **error)
{
  g_return_val_if_fail (w->open && !w->part && w->row_fill == 0, FALSE);

  if (!sv__zarr_syncer_finish (g_steal_pointer (&w->syncer), error))
    return FALSE;
  sv__zarr_sync_folder (w->tmp);
  if (w->zarr.image_label)
    {
      g_autofree char *labels = g_path_get_dirname (w->path);
      g_autofree char *name = g_path_get_basename (w->path);

      if (!g_file_test (labels, G_FILE_TEST_IS_DIR) && g_mkdir (labels, 0777) != 0)
        {
          int saved = errno;
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot create it: %s",
                       labels, g_strerror (saved));
          return FALSE;
        }
      if (!replace_folder (w->tmp, w->path, error))
        return FALSE;
      w->open = FALSE;
      return register_label (labels, name, error);
    }
  if (!replace_folder (w->tmp, w->path, error))
    return FALSE;
  w->open = FALSE;
  return TRUE;
}

void
sv__zarr_label_writer_free (SvZarrLabelWriter *w)
{
  if (w == NULL)
    return;
  /* Its files are closed before they go. */
  sv__zarr_syncer_finish (g_steal_pointer (&w->syncer), NULL);
  if (w->open && w->tmp != NULL && !w->part)
    remove_tree (w->tmp);
  g_free (w->path);
  g_free (w->tmp);
  g_free (w->image);
  g_free (w->row);
  sv__zarr_row_clear (w);
  g_free (w);
}

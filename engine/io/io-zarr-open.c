/* Supervox engine: opening a Zarr v2 array — its .zarray, and when it is
 * (a level of) an OME-Zarr image, the NGFF 0.4 multiscales in the image's
 * .zattrs: the axes, their units and the level's scale. */
#define G_LOG_DOMAIN "sv-engine"

#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "io-zarr-private.h"
#include "supervox/sv-error.h"

static gboolean
has_file (const char *folder, const char *name)
{
  g_autofree char *p = g_build_filename (folder, name, NULL);
  return g_file_test (p, G_FILE_TEST_IS_REGULAR);
}

gboolean
sv_zarr_is_store (const char *path)
{
  return g_file_test (path, G_FILE_TEST_IS_DIR)
         && (has_file (path, ".zarray") || has_file (path, ".zgroup")
             || has_file (path, ".zattrs"));
}

/* The JSON object in folder/name, or NULL: missing (error untouched when
 * `optional`) or not an object (an error naming `store`). */
static JsonNode *
read_json (const char *store, const char *folder, const char *name, gboolean optional,
           GError **error)
{
  g_autofree char *path = g_build_filename (folder, name, NULL);
  g_autofree char *text = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  gsize len;

  if (!g_file_get_contents (path, &text, &len, &local))
    {
      if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        {
          if (!optional)
            g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                         "%s: %s is missing, so this is no Zarr array", store, path);
        }
      else
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: cannot read %s: %s", store,
                     name, local->message);
      return NULL;
    }
  if (!json_parser_load_from_data (parser, text, (gssize)len, &local)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT, "%s: %s is not a JSON object%s%s",
                   store, name, local != NULL ? ": " : "", local != NULL ? local->message : "");
      return NULL;
    }
  return json_node_copy (json_parser_get_root (parser));
}

/* The first NGFF multiscale of a group's .zattrs, or NULL. */
static JsonObject *
first_multiscale (JsonNode *attrs)
{
  JsonObject *o = attrs != NULL ? json_node_get_object (attrs) : NULL;
  JsonArray *ms;

  if (o == NULL || !json_object_has_member (o, "multiscales"))
    return NULL;
  if (!JSON_NODE_HOLDS_ARRAY (json_object_get_member (o, "multiscales")))
    return NULL;
  ms = json_object_get_array_member (o, "multiscales");
  if (json_array_get_length (ms) == 0 || !JSON_NODE_HOLDS_OBJECT (json_array_get_element (ms, 0)))
    return NULL;
  return json_array_get_object_element (ms, 0);
}

static JsonArray *
datasets_of (JsonObject *ms)
{
  if (ms == NULL || !json_object_has_member (ms, "datasets")
      || !JSON_NODE_HOLDS_ARRAY (json_object_get_member (ms, "datasets")))
    return NULL;
  return json_object_get_array_member (ms, "datasets");
}

static const char *
dataset_path (JsonArray *datasets, guint i)
{
  JsonNode *n = json_array_get_element (datasets, i);
  JsonObject *d = JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;

  if (d == NULL || !json_object_has_member (d, "path"))
    return NULL;
  return json_object_get_string_member_with_default (d, "path", NULL);
}

gboolean
sv_zarr_is_ome_image (const char *path)
{
  g_autoptr (JsonNode) attrs = read_json (path, path, ".zattrs", TRUE, NULL);
  return datasets_of (first_multiscale (attrs)) != NULL;
}

char *
sv_zarr_level_path (const char *path, guint level, GError **error)
{
  g_autoptr (JsonNode) attrs = NULL;
  g_autoptr (GError) local = NULL;
  JsonArray *datasets;
  const char *p;

  attrs = read_json (path, path, ".zattrs", TRUE, &local);
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  datasets = datasets_of (first_multiscale (attrs));
  if (datasets == NULL)
    {
      if (level == 0 && has_file (path, ".zarray"))
        return g_strdup (path);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: not an OME-Zarr image (no multiscales in .zattrs), so it has no level %u",
                   path, level);
      return NULL;
    }
  if (level >= json_array_get_length (datasets))
    {
      guint n = json_array_get_length (datasets);
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                   "%s has %u resolution level%s (0 to %u), not level %u", path, n,
                   n == 1 ? "" : "s", n - 1, level);
      return NULL;
    }
  p = dataset_path (datasets, level);
  if (p == NULL || *p == '\0' || strstr (p, "..") != NULL)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: level %u of the multiscales has no usable path", path, level);
      return NULL;
    }
  return g_build_filename (path, p, NULL);
}

void
sv__zarr_array_free (SvZarrArray *a)
{
  if (a == NULL)
    return;
  g_free (a->folder);
  g_free (a->name);
  g_free (a->unit);
  g_free (a);
}

char *
sv__zarr_chunk_path (const SvZarrArray *a, const guint64 idx[SV_ZARR_N_AXES])
{
  GString *key = g_string_new (NULL);
  char *path;

  for (int k = 0; k < SV_ZARR_N_AXES; k++)
    if (a->present[k])
      {
        if (key->len > 0)
          g_string_append_c (key, a->separator);
        g_string_append_printf (key, "%" G_GUINT64_FORMAT, idx[k]);
      }
  if (key->len == 0)
    g_string_append_c (key, '0');
  path = g_build_filename (a->folder, key->str, NULL);
  g_string_free (key, TRUE);
  return path;
}

static const struct
{
  const char *ngff;
  const char *tiff;
} units[] = {
  { "micrometer", "µm" }, { "nanometer", "nm" }, { "millimeter", "mm" },
  { "centimeter", "cm" }, { "meter", "m" },      { "angstrom", "Å" },
  { "picometer", "pm" },
};

const char *
sv__zarr_unit_from_ngff (const char *ngff)
{
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_equal (ngff, units[i].ngff))
      return units[i].tiff;
  return NULL;
}

const char *
sv__zarr_unit_to_ngff (const char *unit)
{
  if (unit == NULL)
    return NULL;
  if (g_str_equal (unit, "micron") || g_str_equal (unit, "um") || g_str_equal (unit, "\u03bcm"))
    return "micrometer";
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_equal (unit, units[i].tiff) || g_str_equal (unit, units[i].ngff))
      return units[i].ngff;
  return NULL;
}

static gboolean
parse_dtype (SvZarrArray *a, const char *dtype, GError **error)
{
  static const struct
  {
    char kind;
    guint bytes;
    SvSampleType type;
  } types[] = {
    { 'u', 1, SV_SAMPLE_U8 },  { 'u', 2, SV_SAMPLE_U16 }, { 'u', 4, SV_SAMPLE_U32 },
    { 'i', 1, SV_SAMPLE_I8 },  { 'i', 2, SV_SAMPLE_I16 }, { 'i', 4, SV_SAMPLE_I32 },
    { 'f', 4, SV_SAMPLE_F32 }, { 'f', 8, SV_SAMPLE_F64 },
  };

  if (dtype != NULL && strlen (dtype) == 3 && strchr ("<>|", dtype[0]) != NULL)
    for (guint i = 0; i < G_N_ELEMENTS (types); i++)
      if (dtype[1] == types[i].kind && dtype[2] - '0' == (int)types[i].bytes)
        {
          a->type = types[i].type;
          a->item_bytes = types[i].bytes;
          a->swap = dtype[0] == '>' && types[i].bytes > 1;
          return TRUE;
        }
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
               "%s: samples of type %s cannot be read (uint8, uint16, uint32, int8, int16, int32, "
               "float32 or float64)",
               a->name, dtype != NULL ? dtype : "(none)");
  return FALSE;
}

static gboolean
parse_compressor (SvZarrArray *a, JsonObject *zarray, GError **error)
{
  JsonNode *node = json_object_get_member (zarray, "compressor");
  const char *id;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      a->compressor = SV_ZARR_COMPRESSOR_NONE;
      return TRUE;
    }
  id = JSON_NODE_HOLDS_OBJECT (node)
           ? json_object_get_string_member_with_default (json_node_get_object (node), "id", "")
           : "";
  if (g_str_equal (id, "blosc"))
    a->compressor = SV_ZARR_COMPRESSOR_BLOSC;
  else if (g_str_equal (id, "zstd"))
    a->compressor = SV_ZARR_COMPRESSOR_ZSTD;
  else if (g_str_equal (id, "zlib"))
    a->compressor = SV_ZARR_COMPRESSOR_ZLIB;
  else if (g_str_equal (id, "gzip"))
    a->compressor = SV_ZARR_COMPRESSOR_GZIP;
  else
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: chunks compressed with '%s' cannot be read (blosc, zstd, zlib, gzip or "
                   "none)",
                   a->name, id);
      return FALSE;
    }
  return TRUE;
}

/* fill_value as one native sample: a number, "NaN", "Infinity",
 * "-Infinity", or null (0 here: the spec leaves it undefined). */
static gboolean
parse_fill (SvZarrArray *a, JsonObject *zarray, GError **error)
{
  JsonNode *node = json_object_get_member (zarray, "fill_value");
  double v = 0;

  memset (a->fill, 0, sizeof a->fill);
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      const char *s = json_node_get_string (node);
      v = g_str_equal (s, "NaN")         ? NAN
          : g_str_equal (s, "Infinity")  ? INFINITY
          : g_str_equal (s, "-Infinity") ? -INFINITY
                                         : 0;
      if (v == 0)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                       "%s: .zarray has fill_value \"%s\", which is not a number", a->name, s);
          return FALSE;
        }
    }
  else if (JSON_NODE_HOLDS_VALUE (node))
    v = json_node_get_value_type (node) == G_TYPE_INT64 ? (double)json_node_get_int (node)
                                                        : json_node_get_double (node);
  switch (a->type)
    {
#define SV_FILL(ctype)                                                                             \
  {                                                                                                \
    ctype x = (ctype)v;                                                                            \
    memcpy (a->fill, &x, sizeof x);                                                                \
  }                                                                                                \
  break
    case SV_SAMPLE_U8:
      SV_FILL (guint8);
    case SV_SAMPLE_U16:
      SV_FILL (guint16);
    case SV_SAMPLE_U32:
      SV_FILL (guint32);
    case SV_SAMPLE_I8:
      SV_FILL (gint8);
    case SV_SAMPLE_I16:
      SV_FILL (gint16);
    case SV_SAMPLE_I32:
      SV_FILL (gint32);
    case SV_SAMPLE_F32:
      SV_FILL (float);
    default:
      SV_FILL (double);
#undef SV_FILL
    }
  return TRUE;
}

/* A JSON array of n positive integers. */
static gboolean
uint_list (JsonObject *o, const char *member, guint64 *out, guint *n)
{
  JsonNode *node = json_object_get_member (o, member);
  JsonArray *arr;

  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return FALSE;
  arr = json_node_get_array (node);
  *n = json_array_get_length (arr);
  if (*n > SV_ZARR_N_AXES)
    return FALSE;
  for (guint i = 0; i < *n; i++)
    {
      JsonNode *e = json_array_get_element (arr, i);
      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_INT64
          || json_node_get_int (e) < 0)
        return FALSE;
      out[i] = (guint64)json_node_get_int (e);
    }
  return TRUE;
}

/* Which of t, c, z, y, x each of the ndim dimensions is: from NGFF axes
 * (objects, or 0.3's names), else the NGFF order's last ndim. Fills
 * map[i] and, for space axes, the unit. */
static gboolean
map_axes (SvZarrArray *a, JsonObject *ms, guint ndim, int map[SV_ZARR_N_AXES],
          const char **unit, GError **error)
{
  JsonArray *axes = NULL;
  guint n_space = 0;

  *unit = NULL;
  if (ms != NULL && json_object_has_member (ms, "axes")
      && JSON_NODE_HOLDS_ARRAY (json_object_get_member (ms, "axes")))
    axes = json_object_get_array_member (ms, "axes");
  if (axes == NULL)
    {
      if (ndim < 2)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                       "%s: a %u-dimensional array is no image (z,y,x or y,x)", a->name, ndim);
          return FALSE;
        }
      for (guint i = 0; i < ndim; i++)
        map[i] = SV_ZARR_N_AXES - (int)ndim + (int)i;
      return TRUE;
    }
  if (json_array_get_length (axes) != ndim)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: the multiscales name %u axes but the array has %u dimensions", a->name,
                   json_array_get_length (axes), ndim);
      return FALSE;
    }
  for (guint i = 0; i < ndim; i++)
    if (JSON_NODE_HOLDS_OBJECT (json_array_get_element (axes, i)))
      {
        JsonObject *ax = json_array_get_object_element (axes, i);
        const char *type = json_object_get_string_member_with_default (ax, "type", "");
        n_space += g_str_equal (type, "space")
                   || (type[0] == '\0'
                       && strchr ("zyx", json_object_get_string_member_with_default (ax, "name",
                                                                                     "?")[0]));
      }
    else
      n_space += strchr ("zyx", json_array_get_string_element (axes, i)[0]) != NULL;
  for (guint i = 0, space = 0; i < ndim; i++)
    {
      JsonNode *e = json_array_get_element (axes, i);
      const char *name = "", *type = "";
      int k = -1;

      if (JSON_NODE_HOLDS_OBJECT (e))
        {
          JsonObject *ax = json_node_get_object (e);
          name = json_object_get_string_member_with_default (ax, "name", "");
          type = json_object_get_string_member_with_default (ax, "type", "");
          if (g_str_equal (type, "space") || (type[0] == '\0' && strchr ("zyx", name[0])))
            {
              const char *u = json_object_get_string_member_with_default (ax, "unit", NULL);
              if (u != NULL && (*unit == NULL || strchr ("x", name[0])))
                *unit = u;
            }
        }
      else if (JSON_NODE_HOLDS_VALUE (e))
        name = json_node_get_string (e);
      if (g_str_equal (type, "time") || (type[0] == '\0' && g_str_equal (name, "t")))
        k = SV_ZARR_T;
      else if (g_str_equal (type, "channel") || (type[0] == '\0' && g_str_equal (name, "c")))
        k = SV_ZARR_C;
      else if (g_str_equal (type, "space") || (type[0] == '\0' && strchr ("zyx", name[0])))
        /* Space axes are the last ones, z, y, x. */
        k = SV_ZARR_X - (int)(n_space - 1 - space++);
      if (k < 0 || (n_space > 3) || (i > 0 && k <= map[i - 1]))
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                       "%s: axes must be (t,) (c,) (z,) y, x in that order as NGFF 0.4 has them; "
                       "axis %u is '%s'%s%s",
                       a->name, i, name, type[0] ? " of type " : "", type);
          return FALSE;
        }
      map[i] = k;
    }
  if (n_space < 2)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: the image has %u space axis; y and x are needed", a->name, n_space);
      return FALSE;
    }
  return TRUE;
}

/* The "scale" of a list of coordinateTransformations, or FALSE. */
static gboolean
scale_of (JsonObject *o, guint ndim, double *scale)
{
  JsonArray *list;

  if (o == NULL || !json_object_has_member (o, "coordinateTransformations")
      || !JSON_NODE_HOLDS_ARRAY (json_object_get_member (o, "coordinateTransformations")))
    return FALSE;
  list = json_object_get_array_member (o, "coordinateTransformations");
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonNode *t = json_array_get_element (list, i);
      JsonObject *to = JSON_NODE_HOLDS_OBJECT (t) ? json_node_get_object (t) : NULL;
      JsonArray *s;

      if (to == NULL
          || !g_str_equal (json_object_get_string_member_with_default (to, "type", ""), "scale")
          || !json_object_has_member (to, "scale")
          || !JSON_NODE_HOLDS_ARRAY (json_object_get_member (to, "scale")))
        continue;
      s = json_object_get_array_member (to, "scale");
      if (json_array_get_length (s) != ndim)
        return FALSE;
      for (guint k = 0; k < ndim; k++)
        scale[k] = json_array_get_double_element (s, k);
      return TRUE;
    }
  return FALSE;
}

static gboolean
parse_zarray (SvZarrArray *a, JsonObject *zarray, JsonObject *ms, JsonObject *dataset,
              GError **error)
{
  guint64 shape[SV_ZARR_N_AXES], chunks[SV_ZARR_N_AXES];
  int map[SV_ZARR_N_AXES];
  guint ndim = 0, nchunks = 0;
  const char *order = json_object_get_string_member_with_default (zarray, "order", "C");
  const char *sep = json_object_get_string_member_with_default (zarray, "dimension_separator", ".");
  JsonNode *filters = json_object_get_member (zarray, "filters");
  const char *unit = NULL;
  double scale[SV_ZARR_N_AXES], outer[SV_ZARR_N_AXES];

  if (json_object_get_int_member_with_default (zarray, "zarr_format", 0) != 2)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: .zarray is not Zarr format 2 (zarr_format)", a->name);
      return FALSE;
    }
  if (!uint_list (zarray, "shape", shape, &ndim) || !uint_list (zarray, "chunks", chunks, &nchunks)
      || nchunks != ndim)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: .zarray needs a shape and chunks of up to 5 dimensions each", a->name);
      return FALSE;
    }
  for (guint i = 0; i < ndim; i++)
    if (chunks[i] == 0 || chunks[i] > G_MAXUINT32 || shape[i] == 0 || shape[i] > G_MAXUINT32)
      {
        g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                     "%s: .zarray has an empty or oversized dimension %u (shape %" G_GUINT64_FORMAT
                     ", chunk %" G_GUINT64_FORMAT ")",
                     a->name, i, shape[i], chunks[i]);
        return FALSE;
      }
  if (!g_str_equal (order, "C"))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: chunks in order \"%s\" cannot be read, only C order", a->name, order);
      return FALSE;
    }
  if (filters != NULL && !JSON_NODE_HOLDS_NULL (filters)
      && !(JSON_NODE_HOLDS_ARRAY (filters) && json_array_get_length (json_node_get_array (filters)) == 0))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: arrays with Zarr filters cannot be read", a->name);
      return FALSE;
    }
  if (!g_str_equal (sep, ".") && !g_str_equal (sep, "/"))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: unknown dimension_separator \"%s\"", a->name, sep);
      return FALSE;
    }
  a->separator = sep[0];
  if (!parse_dtype (a, json_object_get_string_member_with_default (zarray, "dtype", NULL), error)
      || !parse_compressor (a, zarray, error) || !parse_fill (a, zarray, error)
      || !map_axes (a, ms, ndim, map, &unit, error))
    return FALSE;

  for (int k = 0; k < SV_ZARR_N_AXES; k++)
    {
      a->shape[k] = 1;
      a->chunks[k] = 1;
    }
  for (guint i = 0; i < ndim; i++)
    {
      a->shape[map[i]] = shape[i];
      a->chunks[map[i]] = (guint)chunks[i];
      a->present[map[i]] = TRUE;
    }
  if (a->shape[SV_ZARR_T] > 1)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: a time series of %" G_GUINT64_FORMAT
                   " time points; Supervox segments one volume (t = 1)",
                   a->name, a->shape[SV_ZARR_T]);
      return FALSE;
    }

  a->spacing[0] = a->spacing[1] = a->spacing[2] = 1.0;
  if (scale_of (dataset, ndim, scale))
    {
      if (scale_of (ms, ndim, outer))
        for (guint i = 0; i < ndim; i++)
          scale[i] *= outer[i];
      for (guint i = 0; i < ndim; i++)
        if (map[i] >= SV_ZARR_Z)
          a->spacing[map[i] - SV_ZARR_Z] = scale[i];
      a->spacing_from_file = TRUE;
    }
  if (unit != NULL)
    {
      const char *u = sv__zarr_unit_from_ngff (unit);
      a->unit = g_strdup (u != NULL ? u : unit);
    }
  return TRUE;
}

SvZarrArray *
sv__zarr_array_open (const char *path, GError **error)
{
  g_autoptr (SvZarrArray) a = g_new0 (SvZarrArray, 1);
  g_autoptr (JsonNode) attrs = NULL;
  g_autoptr (JsonNode) zarray = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree char *trimmed = g_strdup (path);
  JsonObject *ms = NULL, *dataset = NULL;
  JsonArray *datasets;
  gsize len = strlen (trimmed);

  while (len > 1 && trimmed[len - 1] == G_DIR_SEPARATOR)
    trimmed[--len] = '\0';
  a->name = g_strdup (path);
  if (!g_file_test (trimmed, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_IO, "%s: no such Zarr folder", path);
      return NULL;
    }

  if (has_file (trimmed, ".zarray"))
    {
      /* A level's folder: the image around it has the axes and scale. */
      g_autofree char *parent = g_path_get_dirname (trimmed);
      g_autofree char *base = g_path_get_basename (trimmed);

      a->folder = g_strdup (trimmed);
      attrs = read_json (path, parent, ".zattrs", TRUE, NULL);
      ms = first_multiscale (attrs);
      datasets = datasets_of (ms);
      for (guint i = 0; datasets != NULL && i < json_array_get_length (datasets); i++)
        if (g_strcmp0 (dataset_path (datasets, i), base) == 0)
          dataset = json_array_get_object_element (datasets, i);
      if (dataset == NULL)
        ms = NULL;
    }
  else
    {
      attrs = read_json (path, trimmed, ".zattrs", TRUE, &local);
      if (local != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      ms = first_multiscale (attrs);
      datasets = datasets_of (ms);
      if (datasets == NULL || json_array_get_length (datasets) == 0
          || dataset_path (datasets, 0) == NULL)
        {
          g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                       "%s: neither a Zarr array (no .zarray) nor an OME-Zarr image (no "
                       "multiscales in .zattrs)",
                       path);
          return NULL;
        }
      dataset = json_array_get_object_element (datasets, 0);
      a->folder = g_build_filename (trimmed, dataset_path (datasets, 0), NULL);
    }

  zarray = read_json (path, a->folder, ".zarray", FALSE, error);
  if (zarray == NULL)
    return NULL;
  if (!parse_zarray (a, json_node_get_object (zarray), ms, dataset, error))
    return NULL;
  return g_steal_pointer (&a);
}

/* Supervox engine: where everything goes in a written TIFF, so that strips
 * can be written at their offsets by whoever compressed them and the file
 * is still byte for byte the one libtiff makes when it is handed the same
 * strips in order (TIFFWriteRawStrip, TIFFWriteDirectory).
 *
 * libtiff's layout: the header (8 bytes, BigTIFF 16); then page after
 * page, its strips back to back from the end of the file, then its
 * directory at the next even offset, the directory's entries first and the
 * values too long for an entry after them (each at an even offset); every
 * directory points to the next one, the header to the first. So a page's
 * offsets are a prefix sum of the strips' compressed sizes and of the
 * directories' lengths, which depend only on the tags.
 *
 * The directories themselves are libtiff's: a template file of one or two
 * pages with the real tags and one-byte strips is written in memory, and
 * each real directory is its template moved to its offset, with the strip
 * offsets, byte counts and link filled in. Anything in the template that
 * does not fit this layout fails the template, and the caller then lets
 * libtiff write the file itself. */
#define G_LOG_DOMAIN "sv-engine"

#include <string.h>

#include "io-tiff-private.h"

/* Where a strip array's values are in a directory block. */
typedef struct
{
  guint16 type; /* SHORT, LONG or LONG8, as libtiff chose */
  gsize pos;
} StripArray;

/* One kind of page's directory as libtiff wrote it in the template. */
typedef struct
{
  guint8 *block; /* the entries and their outside values */
  gsize len;
  guint64 template_offset;
  GArray *moved; /* gsize: positions of entries' offset fields */
  StripArray offsets, counts;
  gsize next_pos; /* the link to the next directory */
} DirTemplate;

struct _SvTiffLayout
{
  gboolean bigtiff, big_endian;
  guint8 header[16];
  gsize header_size;
  guint32 strips_per_page;
  guint nz;
  /* [0]: the first page's (it has the description); [1]: every other's. */
  DirTemplate dirs[2];
};

/* ------------------------------------------------------------------------ */
/* Bytes in the file's order */

static guint64
get_uint (const SvTiffLayout *l, const guint8 *p, guint bytes)
{
  guint64 v = 0;

  for (guint i = 0; i < bytes; i++)
    v |= (guint64)p[l->big_endian ? bytes - 1 - i : i] << (8 * i);
  return v;
}

static void
put_uint (const SvTiffLayout *l, guint8 *p, guint bytes, guint64 v)
{
  for (guint i = 0; i < bytes; i++)
    p[l->big_endian ? bytes - 1 - i : i] = (guint8)(v >> (8 * i));
}

static guint
type_bytes (guint16 type)
{
  switch (type)
    {
    case TIFF_BYTE:
    case TIFF_ASCII:
    case TIFF_SBYTE:
    case TIFF_UNDEFINED:
      return 1;
    case TIFF_SHORT:
    case TIFF_SSHORT:
      return 2;
    case TIFF_LONG:
    case TIFF_SLONG:
    case TIFF_FLOAT:
    case TIFF_IFD:
      return 4;
    case TIFF_RATIONAL:
    case TIFF_SRATIONAL:
    case TIFF_DOUBLE:
    case TIFF_LONG8:
    case TIFF_SLONG8:
    case TIFF_IFD8:
      return 8;
    default:
      return 0;
    }
}

/* ------------------------------------------------------------------------ */
/* The template */

static void
dir_template_clear (DirTemplate *d)
{
  g_clear_pointer (&d->block, g_free);
  g_clear_pointer (&d->moved, g_array_unref);
}

/* Reads the directory at `offset` of the template file; FALSE (with
 * `problem`) when it is not laid out as the header comment says. */
static gboolean
read_dir_template (SvTiffLayout *l, const guint8 *file, gsize size, guint64 offset, DirTemplate *d,
                   guint64 *next, char **problem)
{
  const guint count_bytes = l->bigtiff ? 8 : 2, entry_bytes = l->bigtiff ? 20 : 12;
  const guint value_bytes = l->bigtiff ? 8 : 4;
  guint64 n, end;
  gsize dir_size;

  if (offset % 2 != 0 || offset + count_bytes > size)
    goto bad;
  n = get_uint (l, file + offset, count_bytes);
  dir_size = count_bytes + n * entry_bytes + value_bytes;
  if (n == 0 || n > 1000 || offset + dir_size > size)
    goto bad;
  end = offset + dir_size;
  d->template_offset = offset;
  d->moved = g_array_new (FALSE, FALSE, sizeof (gsize));
  d->offsets.type = d->counts.type = 0;
  for (guint64 i = 0; i < n; i++)
    {
      const guint8 *e = file + offset + count_bytes + i * entry_bytes;
      guint16 tag = (guint16)get_uint (l, e, 2), type = (guint16)get_uint (l, e + 2, 2);
      guint64 count = get_uint (l, e + 4, value_bytes);
      gsize field = (gsize)(e + 4 + value_bytes - (file + offset));
      guint tb = type_bytes (type);
      guint64 data_len = count * tb, pos = field;

      if (tb == 0 || count > size)
        goto bad;
      if (data_len > value_bytes)
        {
          guint64 at = get_uint (l, e + 4 + value_bytes, value_bytes);
          /* Values live after the entries, inside the template. */
          if (at < offset + dir_size || at + data_len > size)
            goto bad;
          end = MAX (end, at + data_len);
          pos = at - offset;
          g_array_append_val (d->moved, field);
        }
      if (tag == TIFFTAG_STRIPOFFSETS || tag == TIFFTAG_STRIPBYTECOUNTS)
        {
          StripArray *a = tag == TIFFTAG_STRIPOFFSETS ? &d->offsets : &d->counts;
          if (count != l->strips_per_page
              || (type != TIFF_SHORT && type != TIFF_LONG && type != TIFF_LONG8))
            goto bad;
          a->type = type;
          a->pos = (gsize)pos;
        }
    }
  if (d->offsets.type == 0 || d->counts.type == 0)
    goto bad;
  d->next_pos = dir_size - value_bytes;
  d->len = (gsize)(end - offset);
  d->block = g_memdup2 (file + offset, d->len);
  *next = get_uint (l, file + offset + d->next_pos, value_bytes);
  return TRUE;

bad:
  *problem = g_strdup_printf (
      "libtiff's directory at %" G_GUINT64_FORMAT " is not laid out as expected", offset);
  return FALSE;
}

static guint64
array_value (const SvTiffLayout *l, const DirTemplate *d, const StripArray *a, guint32 k)
{
  guint tb = type_bytes (a->type);
  return get_uint (l, d->block + a->pos + (gsize)k * tb, tb);
}

/* The template's strips must be where the prefix sum puts them: page p's
 * from `start`, one byte each, its directory at the next even offset. */
static gboolean
check_strips (const SvTiffLayout *l, const DirTemplate *d, guint64 start, char **problem)
{
  for (guint32 k = 0; k < l->strips_per_page; k++)
    if (array_value (l, d, &d->offsets, k) != start + k || array_value (l, d, &d->counts, k) != 1)
      {
        *problem = g_strdup ("libtiff does not place strips back to back");
        return FALSE;
      }
  if (d->template_offset != ((start + l->strips_per_page + 1) & ~G_GUINT64_CONSTANT (1)))
    {
      *problem = g_strdup ("libtiff does not place a directory right after its strips");
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_template (SvTiffLayout *l, const guint8 *file, gsize size, guint n_pages, char **problem)
{
  guint64 offset, start;

  l->header_size = l->bigtiff ? 16 : 8;
  if (size < l->header_size)
    {
      *problem = g_strdup ("libtiff wrote no header");
      return FALSE;
    }
  l->big_endian = file[0] == 'M';
  memcpy (l->header, file, l->header_size);
  offset = get_uint (l, file + l->header_size - (l->bigtiff ? 8 : 4), l->bigtiff ? 8 : 4);
  start = l->header_size;
  for (guint p = 0; p < n_pages; p++)
    {
      DirTemplate *d = &l->dirs[p];
      guint64 next;

      if (!read_dir_template (l, file, size, offset, d, &next, problem)
          || !check_strips (l, d, start, problem))
        return FALSE;
      start = offset + d->len;
      offset = next;
    }
  if (offset != 0 || start != size)
    {
      *problem = g_strdup ("libtiff wrote more than the pages' directories");
      return FALSE;
    }
  return TRUE;
}

SvTiffLayout *
sv__tiff_layout_new (const SvTiffWriteJob *job, gboolean bigtiff, char **problem)
{
  g_autoptr (SvTiffLayout) l = g_new0 (SvTiffLayout, 1);
  g_autofree char *description = sv__imagej_description (job->nz, job->spacing, job->unit);
  SvTiffMessages msgs = { .name = "template" };
  TIFFOpenOptions *opts = sv__tiff_options_new (&msgs);
  SvTiffMemFile *file = NULL;
  SvStripGeometry g;
  const guint n_pages = MIN (job->nz, 2);
  const guint8 byte = 0;
  gboolean ok;
  TIFF *tif;

  sv__tiff_strip_geometry (job, &g);
  l->bigtiff = bigtiff;
  l->strips_per_page = g.strips_per_page;
  l->nz = job->nz;
  tif = sv__tiff_open_memory (&file, bigtiff, opts);
  ok = tif != NULL;
  for (guint z = 0; ok && z < n_pages; z++)
    {
      sv__tiff_set_page_fields (tif, job, g.rows_per_strip, z, description);
      for (guint32 k = 0; ok && k < g.strips_per_page; k++)
        ok = TIFFWriteRawStrip (tif, k, (void *)&byte, 1) == 1;
      ok = ok && TIFFWriteDirectory (tif);
    }
  if (tif != NULL)
    TIFFClose (tif);
  if (!ok)
    *problem = g_strdup_printf ("cannot make the directory template: %s",
                                sv__tiff_messages_text (&msgs, "libtiff failed"));
  else
    {
      gsize size;
      const guint8 *bytes = sv__tiff_memory_bytes (file, &size);
      ok = read_template (l, bytes, size, n_pages, problem);
    }
  sv__tiff_memory_free (file);
  TIFFOpenOptionsFree (opts);
  g_free (msgs.first_error);
  return ok ? g_steal_pointer (&l) : NULL;
}

void
sv__tiff_layout_free (SvTiffLayout *layout)
{
  if (layout == NULL)
    return;
  dir_template_clear (&layout->dirs[0]);
  dir_template_clear (&layout->dirs[1]);
  g_free (layout);
}

/* ------------------------------------------------------------------------ */
/* Offsets from sizes */

static const DirTemplate *
dir_of (const SvTiffLayout *l, guint z)
{
  return &l->dirs[z == 0 ? 0 : 1];
}

gsize
sv__tiff_layout_header_size (const SvTiffLayout *layout)
{
  return layout->header_size;
}

gboolean
sv__tiff_layout_is_bigtiff (const SvTiffLayout *layout)
{
  return layout->bigtiff;
}

gsize
sv__tiff_layout_directory_size (const SvTiffLayout *layout, guint z)
{
  return dir_of (layout, z)->len;
}

guint64
sv__tiff_layout_place_strip (guint64 *cursor, guint64 size)
{
  guint64 offset = *cursor;

  *cursor += size;
  return offset;
}

gboolean
sv__tiff_layout_place_directory (const SvTiffLayout *layout, guint z, guint64 *cursor,
                                 guint64 *directory)
{
  guint64 at = (*cursor + 1) & ~G_GUINT64_CONSTANT (1);
  guint64 end = at + dir_of (layout, z)->len;

  /* Classic TIFF offsets are 32-bit; libtiff fails such a file too. */
  if (!layout->bigtiff && end > G_MAXUINT32)
    return FALSE;
  *directory = at;
  *cursor = end;
  return TRUE;
}

guint
sv__tiff_layout_strip_parity (const SvTiffLayout *layout, guint z)
{
  /* Directories start at even offsets: what follows one has its length's
   * parity. */
  return (guint)((z == 0 ? layout->header_size : dir_of (layout, z - 1)->len) % 2);
}

gboolean
sv__tiff_layout_place_page (const SvTiffLayout *layout, guint z, const guint64 *sizes,
                            guint64 *offsets, guint64 *cursor, guint64 *directory)
{
  for (guint32 k = 0; k < layout->strips_per_page; k++)
    offsets[k] = sv__tiff_layout_place_strip (cursor, sizes[k]);
  return sv__tiff_layout_place_directory (layout, z, cursor, directory);
}

/* ------------------------------------------------------------------------ */
/* Header and directories */

void
sv__tiff_layout_header (const SvTiffLayout *layout, guint64 first_directory, guint8 *out)
{
  guint bytes = layout->bigtiff ? 8 : 4;

  memcpy (out, layout->header, layout->header_size);
  put_uint (layout, out + layout->header_size - bytes, bytes, first_directory);
}

static gboolean
put_array (const SvTiffLayout *l, guint8 *block, const StripArray *a, const guint64 *values)
{
  guint tb = type_bytes (a->type);
  guint64 max = tb == 8 ? G_MAXUINT64 : (G_GUINT64_CONSTANT (1) << (8 * tb)) - 1;

  for (guint32 k = 0; k < l->strips_per_page; k++)
    {
      if (values[k] > max)
        return FALSE;
      put_uint (l, block + a->pos + (gsize)k * tb, tb, values[k]);
    }
  return TRUE;
}

gboolean
sv__tiff_layout_directory (const SvTiffLayout *layout, guint z, const guint64 *offsets,
                           const guint64 *sizes, guint64 directory, guint64 next, guint8 *out)
{
  const DirTemplate *d = dir_of (layout, z);
  guint bytes = layout->bigtiff ? 8 : 4;

  memcpy (out, d->block, d->len);
  for (guint i = 0; i < d->moved->len; i++)
    {
      gsize field = g_array_index (d->moved, gsize, i);
      guint64 at = get_uint (layout, out + field, bytes) - d->template_offset + directory;
      put_uint (layout, out + field, bytes, at);
    }
  put_uint (layout, out + d->next_pos, bytes, next);
  return put_array (layout, out, &d->offsets, offsets)
         && put_array (layout, out, &d->counts, sizes);
}

/* Supervox engine: TIFF metadata: voxel spacing and the slice/channel
 * layout from ImageJ descriptions and OME-XML, and the ImageJ description
 * the writer puts on its files. */
#define G_LOG_DOMAIN "sv-engine"

#include <math.h>
#include <string.h>

#include "io-tiff-private.h"
#include "supervox/sv-params.h"

/* ------------------------------------------------------------------------ */
/* Spacing metadata */

typedef struct
{
  gboolean is_imagej;
  double spacing; /* z; 0 when absent */
  char *unit;
  char *mode; /* "grayscale", "composite", "color"; NULL when absent */
  guint channels, slices, frames, images;
} SvImageJInfo;

/* ImageJ writes non-ASCII characters as \uXXXX (µm is "\u00B5m"). */
static char *
imagej_unescape (const char *s)
{
  GString *out = g_string_new (NULL);

  while (*s)
    {
      if (s[0] == '\\' && s[1] == 'u' && g_ascii_isxdigit (s[2]) && g_ascii_isxdigit (s[3])
          && g_ascii_isxdigit (s[4]) && g_ascii_isxdigit (s[5]))
        {
          char hex[5] = { s[2], s[3], s[4], s[5], 0 };
          g_string_append_unichar (out, (gunichar)g_ascii_strtoull (hex, NULL, 16));
          s += 6;
        }
      else
        g_string_append_c (out, *s++);
    }
  return g_string_free (out, FALSE);
}

static void
imagej_parse (const char *description, SvImageJInfo *ij)
{
  g_auto (GStrv) lines = NULL;

  memset (ij, 0, sizeof *ij);
  if (description == NULL || !g_str_has_prefix (description, "ImageJ="))
    return;
  ij->is_imagej = TRUE;
  lines = g_strsplit (description, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      char *eq = strchr (lines[i], '=');
      const char *value;
      if (eq == NULL)
        continue;
      *eq = '\0';
      value = eq + 1;
      if (g_str_equal (lines[i], "spacing"))
        ij->spacing = g_ascii_strtod (value, NULL);
      else if (g_str_equal (lines[i], "unit") && value[0] != '\0')
        {
          g_free (ij->unit);
          ij->unit = imagej_unescape (value);
        }
      else if (g_str_equal (lines[i], "mode"))
        {
          g_free (ij->mode);
          ij->mode = g_strdup (value);
        }
      else if (g_str_equal (lines[i], "channels"))
        ij->channels = (guint)g_ascii_strtoull (value, NULL, 10);
      else if (g_str_equal (lines[i], "slices"))
        ij->slices = (guint)g_ascii_strtoull (value, NULL, 10);
      else if (g_str_equal (lines[i], "frames"))
        ij->frames = (guint)g_ascii_strtoull (value, NULL, 10);
      else if (g_str_equal (lines[i], "images"))
        ij->images = (guint)g_ascii_strtoull (value, NULL, 10);
    }
}

typedef struct
{
  gboolean found;
  double size[3]; /* z, y, x; 0 when absent */
  char *unit[3];
  guint size_c, size_z, size_t;
} SvOmeInfo;

static void
ome_start_element (GMarkupParseContext *context, const char *element, const char **names,
                   const char **values, gpointer user_data, GError **error)
{
  SvOmeInfo *ome = user_data;
  const char *local = strrchr (element, ':');

  local = local ? local + 1 : element;
  if (ome->found || !g_str_equal (local, "Pixels"))
    return;
  ome->found = TRUE;
  for (guint i = 0; names[i]; i++)
    {
      static const char *const size_keys[3] = { "PhysicalSizeZ", "PhysicalSizeY", "PhysicalSizeX" };
      static const char *const unit_keys[3]
          = { "PhysicalSizeZUnit", "PhysicalSizeYUnit", "PhysicalSizeXUnit" };
      for (guint a = 0; a < 3; a++)
        {
          if (g_str_equal (names[i], size_keys[a]))
            ome->size[a] = g_ascii_strtod (values[i], NULL);
          else if (g_str_equal (names[i], unit_keys[a]))
            ome->unit[a] = g_strdup (values[i]);
        }
      if (g_str_equal (names[i], "SizeC"))
        ome->size_c = (guint)g_ascii_strtoull (values[i], NULL, 10);
      else if (g_str_equal (names[i], "SizeZ"))
        ome->size_z = (guint)g_ascii_strtoull (values[i], NULL, 10);
      else if (g_str_equal (names[i], "SizeT"))
        ome->size_t = (guint)g_ascii_strtoull (values[i], NULL, 10);
    }
}

static void
ome_info_clear (SvOmeInfo *ome)
{
  for (guint a = 0; a < 3; a++)
    g_free (ome->unit[a]);
  memset (ome, 0, sizeof *ome);
}

static void
ome_parse (const char *description, SvOmeInfo *ome)
{
  static const GMarkupParser parser = { .start_element = ome_start_element };
  g_autoptr (GMarkupParseContext) context = NULL;

  memset (ome, 0, sizeof *ome);
  if (description == NULL || strstr (description, "<OME") == NULL)
    return;
  context = g_markup_parse_context_new (&parser, G_MARKUP_IGNORE_QUALIFIED, ome, NULL);
  /* A parse error after the Pixels element does not matter; before it we
   * simply have no metadata. */
  g_markup_parse_context_parse (context, description, -1, NULL);
}

/* Metres per unit, for putting OME sizes in different units on one scale. */
static double
unit_in_metres (const char *unit)
{
  static const struct
  {
    const char *name;
    double metres;
  } units[] = {
    { "m", 1.0 },        { "cm", 1e-2 }, { "mm", 1e-3 },     { "µm", 1e-6 },
    { "\u03bcm", 1e-6 }, { "um", 1e-6 }, { "micron", 1e-6 }, { "microns", 1e-6 },
    { "nm", 1e-9 },      { "Å", 1e-10 }, { "pm", 1e-12 },
  };

  if (unit == NULL)
    return 0.0;
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_equal (unit, units[i].name))
      return units[i].metres;
  return 0.0;
}

/* libtiff holds X/YResolution as float; 1/resolution then carries float
 * precision only. Rounding to 6 significant digits gives back the value a
 * user typed (0.3 µm rather than 0.30000000675). */
static double
spacing_from_resolution (float resolution)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (!(resolution > 0.0f) || !isfinite (resolution))
    return 0.0;
  g_ascii_formatd (buf, sizeof buf, "%.6g", 1.0 / (double)resolution);
  return g_ascii_strtod (buf, NULL);
}

/* Lays the pages out as slices and channels from an ImageJ header.
 *
 * ImageJ hyperstacks store channels, slices and frames as pages, channels
 * fastest. Channels become the volume's channels (last axis, as
 * scikit-image's channel_axis=-1); a time series without slices is
 * accepted as a 2D+t volume (frames become z, as SLIC treats them); slices
 * and frames together are refused, as reading them as z would silently mix
 * time points into one volume. */
static gboolean
imagej_layout (SvTiffReader *r, const SvImageJInfo *ij, guint n_pages, GError **error)
{
  guint spp = r->first.spp;

  if (ij->frames > 1 && ij->slices > 1)
    {
      sv__tiff_reader_error (
          r, error, SV_ENGINE_ERROR_FORMAT,
          "ImageJ time series of 3D stacks are not supported (slices=%u, frames=%u)", ij->slices,
          ij->frames);
      return FALSE;
    }
  if (ij->images > n_pages)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "the ImageJ header announces %u images but the file has %u pages "
                             "(ImageJ's single-index stacks over 4 GiB are not supported)",
                             ij->images, n_pages);
      return FALSE;
    }
  if (ij->channels <= 1 || ij->channels == spp)
    return TRUE;
  if (spp != 1)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "ImageJ hyperstacks of %u-sample pages with channels=%u are not "
                             "supported",
                             spp, ij->channels);
      return FALSE;
    }
  /* tifffile's imwrite(imagej=True) labels a plain 3D array this way
   * ("images=N channels=N", no slices, mode=grayscale); that is a z-stack
   * far more often than N channels of one 2D image. */
  if (ij->slices <= 1 && ij->frames <= 1 && ij->channels == n_pages
      && (ij->mode == NULL || g_str_equal (ij->mode, "grayscale")))
    {
      r->note = g_strdup_printf (
          "%s: the ImageJ header says %u channels and no slices (as tifffile writes a plain 3D "
          "array); read as %u z slices",
          r->path, ij->channels, n_pages);
      return TRUE;
    }
  if (n_pages % ij->channels != 0)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "the ImageJ header says channels=%u but the file has %u pages, not "
                             "a multiple of %u",
                             ij->channels, n_pages, ij->channels);
      return FALSE;
    }
  r->channels_in_pages = ij->channels;
  r->nc = ij->channels;
  r->nz = n_pages / ij->channels;
  for (guint i = 0; i < n_pages; i++)
    {
      SvTiffPage *page = sv__tiff_reader_page (r, i);
      page->z = i / ij->channels;
      page->c = i % ij->channels;
    }
  return TRUE;
}

static void
imagej_spacing (SvTiffReader *r, SvImageJInfo *ij)
{
  float xres = 0.0f, yres = 0.0f;

  if (TIFFGetField (r->tif, TIFFTAG_XRESOLUTION, &xres))
    r->spacing[2] = spacing_from_resolution (xres);
  if (TIFFGetField (r->tif, TIFFTAG_YRESOLUTION, &yres))
    r->spacing[1] = spacing_from_resolution (yres);
  if (r->spacing[2] <= 0.0)
    r->spacing[2] = 1.0;
  if (r->spacing[1] <= 0.0)
    r->spacing[1] = 1.0;
  if (ij->spacing > 0.0 && isfinite (ij->spacing))
    r->spacing[0] = ij->spacing;
  r->unit = g_steal_pointer (&ij->unit);
  r->spacing_from_file
      = r->unit != NULL || ij->spacing > 0.0 || r->spacing[1] != 1.0 || r->spacing[2] != 1.0;
}

static gboolean
ome_spacing (SvTiffReader *r, const SvOmeInfo *ome, GError **error)
{
  if (ome->size_c > 1 && ome->size_c != r->first.spp)
    {
      sv__tiff_reader_error (r, error, SV_ENGINE_ERROR_FORMAT,
                             "multi-channel OME-TIFF files are not supported (SizeC=%u); save "
                             "one channel per file",
                             ome->size_c);
      return FALSE;
    }
  if (ome->size_z > 1 && ome->size_t > 1)
    {
      sv__tiff_reader_error (
          r, error, SV_ENGINE_ERROR_FORMAT,
          "OME-TIFF time series of 3D stacks are not supported (SizeZ=%u, SizeT=%u)", ome->size_z,
          ome->size_t);
      return FALSE;
    }
  {
    /* OME's default unit is the micrometre; all axes go to X's unit. */
    const char *ref_unit = ome->unit[2] ? ome->unit[2] : "µm";
    double ref = unit_in_metres (ref_unit);
    for (guint a = 0; a < 3; a++)
      {
        double size = ome->size[a];
        const char *u = ome->unit[a] ? ome->unit[a] : "µm";
        if (!(size > 0.0) || !isfinite (size))
          continue;
        if (!g_str_equal (u, ref_unit) && ref > 0.0 && unit_in_metres (u) > 0.0)
          size *= unit_in_metres (u) / ref;
        r->spacing[a] = size;
        r->spacing_from_file = TRUE;
      }
    if (r->spacing_from_file)
      r->unit = g_strdup (ref_unit);
  }
  return TRUE;
}

gboolean
sv__tiff_read_metadata (SvTiffReader *r, GError **error)
{
  const char *description = NULL;
  guint n_pages = r->pages->len;
  SvImageJInfo ij;
  SvOmeInfo ome;
  gboolean ok = TRUE;

  r->spacing[0] = r->spacing[1] = r->spacing[2] = 1.0;
  r->spacing_from_file = FALSE;
  /* Plain stacks: one page per slice, every channel in the page. */
  r->nz = n_pages;
  r->nc = r->first.spp;
  r->channels_in_pages = 1;
  for (guint i = 0; i < n_pages; i++)
    {
      SvTiffPage *page = sv__tiff_reader_page (r, i);
      page->z = i;
      page->c = 0;
    }

  if (!TIFFGetField (r->tif, TIFFTAG_IMAGEDESCRIPTION, &description))
    description = NULL;
  imagej_parse (description, &ij);
  ome_parse (description, &ome);

  if (ij.is_imagej)
    {
      ok = imagej_layout (r, &ij, n_pages, error);
      if (ok)
        imagej_spacing (r, &ij);
    }
  else if (ome.found)
    ok = ome_spacing (r, &ome, error);

  g_free (ij.unit);
  g_free (ij.mode);
  ome_info_clear (&ome);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Writing */

/* ImageJ reads its description as ASCII with \uXXXX escapes; spellings of
 * the micrometre become ImageJ's own "micron". */
static char *
imagej_unit (const char *unit)
{
  GString *out;

  if (g_str_equal (unit, "µm") || g_str_equal (unit, "\u03bcm") || g_str_equal (unit, "um"))
    return g_strdup ("micron");
  out = g_string_new (NULL);
  for (const char *p = unit; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (c == '\n' || c == '\r' || c == '=')
        continue;
      if (c < 0x80)
        g_string_append_c (out, (char)c);
      else if (c <= 0xFFFF)
        g_string_append_printf (out, "\\u%04X", c);
    }
  return g_string_free (out, FALSE);
}

char *
sv__imagej_description (guint nz, const double spacing[3], const char *unit)
{
  GString *d = g_string_new ("ImageJ=1.11a\n");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (nz > 1)
    {
      g_string_append_printf (d, "images=%u\nslices=%u\n", nz, nz);
      /* Shortest exact decimal, with ".0" on whole numbers as Java prints
       * doubles, so readers see a float. */
      sv_format_double (buf, spacing[0]);
      g_string_append_printf (d, "spacing=%s%s\n", buf, strpbrk (buf, ".eEn") ? "" : ".0");
    }
  if (unit != NULL && unit[0] != '\0')
    {
      g_autofree char *ij_unit = imagej_unit (unit);
      g_string_append_printf (d, "unit=%s\n", ij_unit);
    }
  if (nz > 1)
    g_string_append (d, "loop=false\n");
  return g_string_free (d, FALSE);
}

/* Supervox: photos through GdkPixbuf, converted as the GUI always has. */
#define G_LOG_DOMAIN "sv-image"

#include "sv-image-pixbuf.h"

#include <stdio.h>
#include <string.h>

#include "supervox/sv-error.h"

/* TRUE when every pixel has R = G = B (the first three bytes of each). */
static gboolean
pixbuf_is_grey (const guint8 *pixels, int w, int h, int stride, int nch)
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        const guint8 *p = pixels + (gsize)y * stride + (gsize)x * nch;
        if (p[0] != p[1] || p[1] != p[2])
          return FALSE;
      }
  return TRUE;
}

SvVolume *
sv_image_pixbuf_to_volume (GdkPixbuf *pixbuf, const char *name, GError **error)
{
  g_autoptr (SvVolume) volume = NULL;
  const guint8 *pixels;
  int w, h, stride, nch;
  gboolean grey;

  g_return_val_if_fail (GDK_IS_PIXBUF (pixbuf), NULL);
  w = gdk_pixbuf_get_width (pixbuf);
  h = gdk_pixbuf_get_height (pixbuf);
  stride = gdk_pixbuf_get_rowstride (pixbuf);
  nch = gdk_pixbuf_get_n_channels (pixbuf);
  pixels = gdk_pixbuf_read_pixels (pixbuf);
  if (gdk_pixbuf_get_bits_per_sample (pixbuf) != 8 || nch < 3)
    {
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT, "%s: unsupported pixel layout",
                   name ? name : "the image");
      return NULL;
    }
  grey = pixbuf_is_grey (pixels, w, h, stride, nch);
  volume = sv_volume_new (1, (guint)h, (guint)w, grey ? 1 : 3, error);
  if (!volume)
    return NULL;
  volume->source_type = SV_SAMPLE_U8;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        const guint8 *p = pixels + (gsize)y * stride + (gsize)x * nch;
        float *out = volume->data + ((gsize)y * w + x) * volume->nc;
        /* img_as_float: the division in double, one rounding to float. */
        for (guint c = 0; c < volume->nc; c++)
          out[c] = (float)(p[c] * (1.0 / 255.0));
      }
  return g_steal_pointer (&volume);
}

static GdkPixbuf *
load_pixbuf (const char *path, GError **error)
{
  g_autoptr (GError) local = NULL;
  GdkPixbuf *pixbuf;

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  pixbuf = gdk_pixbuf_new_from_file (path, &local);
  G_GNUC_END_IGNORE_DEPRECATIONS
  if (!pixbuf)
    {
      const char *why = local ? local->message : "unknown error";
      const char *named = strstr (why, path);

      /* GdkPixbuf's messages quote the file ("Failed to load image “PATH”:
       * why"); ours names it in front, so keep only the why. */
      if (named && strstr (named + strlen (path), ": "))
        why = strstr (named + strlen (path), ": ") + 2;
      g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_FORMAT,
                   "%s: not an image supervox can read: %s", path, why);
      return NULL;
    }
  return pixbuf;
}

SvVolume *
sv_image_read_pixbuf (const char *path, GError **error)
{
  g_autoptr (GdkPixbuf) pixbuf = load_pixbuf (path, error);

  if (!pixbuf)
    return NULL;
  return sv_image_pixbuf_to_volume (pixbuf, path, error);
}

gboolean
sv_image_pixbuf_info (const char *path, SvTiffInfo *info, GError **error)
{
  g_autoptr (GdkPixbuf) pixbuf = load_pixbuf (path, error);
  g_autoptr (SvVolume) volume = NULL;
  GdkPixbufFormat *format;
  const guint8 *pixels;
  guint8 lo = 255, hi = 0;
  int w, h, stride, nch;

  if (!pixbuf)
    return FALSE;
  /* The channel count is the conversion's (grey or RGB). */
  volume = sv_image_pixbuf_to_volume (pixbuf, path, error);
  if (!volume)
    return FALSE;
  w = gdk_pixbuf_get_width (pixbuf);
  h = gdk_pixbuf_get_height (pixbuf);
  stride = gdk_pixbuf_get_rowstride (pixbuf);
  nch = gdk_pixbuf_get_n_channels (pixbuf);
  pixels = gdk_pixbuf_read_pixels (pixbuf);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (guint c = 0; c < volume->nc; c++)
        {
          guint8 v = pixels[(gsize)y * stride + (gsize)x * nch + c];
          lo = MIN (lo, v);
          hi = MAX (hi, v);
        }
  format = gdk_pixbuf_get_file_info (path, NULL, NULL);

  memset (info, 0, sizeof *info);
  info->nz = 1;
  info->ny = (guint)h;
  info->nx = (guint)w;
  info->nc = volume->nc;
  info->sample_type = SV_SAMPLE_U8;
  /* gdk_pixbuf_format_get_name returns a new string. */
  info->compression = format ? gdk_pixbuf_format_get_name (format) : g_strdup ("unknown");
  for (int i = 0; i < 3; i++)
    info->spacing[i] = 1.0;
  info->value_min = lo;
  info->value_max = hi;
  return TRUE;
}

gboolean
sv_image_is_photo (const char *path)
{
  static const guint8 png_magic[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  static const guint8 jpeg_magic[3] = { 0xff, 0xd8, 0xff };
  guint8 head[8] = { 0 };
  size_t n = 0;
  FILE *fp = fopen (path, "rb");
  g_autofree char *lower = NULL;

  if (fp)
    {
      n = fread (head, 1, sizeof head, fp);
      fclose (fp);
    }
  if (n >= 4
      && ((head[0] == 'I' && head[1] == 'I' && (head[2] == 42 || head[2] == 43) && head[3] == 0)
          || (head[0] == 'M' && head[1] == 'M' && head[2] == 0 && (head[3] == 42 || head[3] == 43))))
    return FALSE;
  if (n >= sizeof png_magic && memcmp (head, png_magic, sizeof png_magic) == 0)
    return TRUE;
  if (n >= sizeof jpeg_magic && memcmp (head, jpeg_magic, sizeof jpeg_magic) == 0)
    return TRUE;
  /* A damaged photo still gets the photo reader's message. */
  lower = g_ascii_strdown (path, -1);
  return g_str_has_suffix (lower, ".png") || g_str_has_suffix (lower, ".jpg")
         || g_str_has_suffix (lower, ".jpeg");
}

/* Supervox GUI: the slice view's drawing on the CPU (no OpenGL). Each step
 * follows shaders/slice.frag and sv-renderer.c, so that both paths show the
 * same picture. */
#define G_LOG_DOMAIN "sv-soft-renderer"

#include "sv-soft-renderer.h"

#include <math.h>

static guint32
hash_label (guint32 x)
{
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

static float
fractf (float x)
{
  return x - floorf (x);
}

static void
label_colour (guint32 label, guint32 shuffle, float rgb[3])
{
  guint32 h = hash_label (label ^ shuffle);
  float hue = (float)(h & 0xffffu) / 65535.0f;
  float sat = 0.55f + 0.4f * (float)((h >> 16) & 0xffu) / 255.0f;
  float val = 0.75f + 0.25f * (float)(h >> 24) / 255.0f;
  const float offset[3] = { 1.0f, 2.0f / 3.0f, 1.0f / 3.0f };

  for (guint i = 0; i < 3; i++)
    {
      float p = fabsf (fractf (hue + offset[i]) * 6.0f - 3.0f);
      float c = CLAMP (p - 1.0f, 0.0f, 1.0f);
      rgb[i] = val * (1.0f + (c - 1.0f) * sat);
    }
}

static void
viridis (float t, float rgb[3])
{
  static const double c[7][3] = {
    { 0.2777273272234177, 0.005407344544966578, 0.3340998053353061 },
    { 0.1050930431085774, 1.404613529898575, 1.384590162594685 },
    { -0.3308618287255563, 0.214847559468213, 0.09509516302823659 },
    { -4.634230498983486, -5.799100973351585, -19.33244095627987 },
    { 6.228269936347081, 14.17993336680509, 56.69055260068105 },
    { 4.776384997670288, -13.74514537774601, -65.35303263337234 },
    { -5.435455855934631, 4.645852612178535, 26.3124352495832 },
  };

  for (guint i = 0; i < 3; i++)
    {
      double v = c[6][i];
      for (int k = 5; k >= 0; k--)
        v = c[k][i] + t * v;
      rgb[i] = (float)CLAMP (v, 0.0, 1.0);
    }
}

static void
mix (float c[3], const float with[3], float amount)
{
  for (guint i = 0; i < 3; i++)
    c[i] += (with[i] - c[i]) * amount;
}

typedef struct
{
  const gint32 *labels;
  int w, h;
  const guint8 *difference; /* or NULL */
} LabelSlice;

static guint32
label_at (const LabelSlice *s, float u, float v)
{
  int i = CLAMP ((int)floorf (u), 0, s->w - 1);
  int j = CLAMP ((int)floorf (v), 0, s->h - 1);
  return (guint32)s->labels[(gsize)j * s->w + i];
}

/* A value through the window [low, high] and gamma; a zero range (black
 * point = white point) gives mid grey for the value itself. */
static float
windowed (float x, float low, float high, float gamma)
{
  if (high > low)
    x = CLAMP ((x - low) / (high - low), 0.0f, 1.0f);
  else
    x = 0.5f + 0.5f * (x > low ? 1.0f : x < low ? -1.0f : 0.0f);
  return powf (x, 1.0f / gamma);
}

/* One texel's colour, as the fragment shader computes it. */
static void
shade (const SvDisplay *d, const SvRenderFrame *f, const float *image, guint nc,
       const LabelSlice *ls, float u, float v, float tpx_u, float tpx_v, float c[3])
{
  int i = CLAMP ((int)floorf (u), 0, ls->w - 1), j = CLAMP ((int)floorf (v), 0, ls->h - 1);
  const float *px = image + ((gsize)j * ls->w + i) * nc;
  float gamma = d->gamma > 0 ? d->gamma : 1.0f;
  gboolean different = FALSE;

  if (d->n_channels >= 2)
    {
      /* A composite: each channel through its own window, in its colour. */
      c[0] = c[1] = c[2] = 0.0f;
      for (guint k = 0; k < MIN (d->n_channels, nc); k++)
        {
          const SvChannelDisplay *ch = &d->channels[k];
          float t = windowed (px[k], ch->low, ch->high, gamma);
          for (guint a = 0; a < 3; a++)
            c[a] += t * ch->colour[a];
        }
      for (guint a = 0; a < 3; a++)
        c[a] = MIN (c[a], 1.0f);
    }
  else
    {
      for (guint k = 0; k < 3; k++)
        c[k] = windowed (px[nc == 3 ? k : 0], d->low, d->high, gamma);
      if (d->colormap == SV_COLORMAP_INVERTED)
        for (guint k = 0; k < 3; k++)
          c[k] = 1.0f - c[k];
      else if (d->colormap == SV_COLORMAP_VIRIDIS && nc == 1)
        viridis (c[0], c);
    }
  /* NaN or ±inf in the file: magenta, as the shader draws it. */
  for (guint k = 0; k < nc; k++)
    if (!isfinite (px[k]))
      {
        c[0] = 1.0f, c[1] = 0.0f, c[2] = 1.0f;
        break;
      }

  if (ls->difference)
    different = ls->difference[(gsize)j * ls->w + i] != 0;
  if (ls->labels && d->overlay != SV_OVERLAY_OFF)
    {
      guint32 l = label_at (ls, u, v);
      gboolean background = f->background_valid && l == (guint32)f->background;
      gboolean selected = f->selected_valid && l == (guint32)f->selected;
      gboolean edge = FALSE;

      if (f->selected_valid && f->selected_only && !selected)
        {
          for (guint k = 0; k < 3; k++)
            c[k] *= 0.25f;
          return;
        }
      for (int k = 1; k <= CLAMP (d->thickness, 1, 3); k++)
        if (label_at (ls, u + k * tpx_u, v) != l || label_at (ls, u, v + k * tpx_v) != l)
          edge = TRUE;
      if (d->overlay == SV_OVERLAY_FILLED && !background)
        {
          float lc[3];
          label_colour (l, d->shuffle, lc);
          mix (c, lc, d->fill_opacity);
        }
      if (f->hover_valid && l == (guint32)f->hover_label && !background)
        mix (c, (const float[]){ 1.0f, 0.95f, 0.3f }, 0.35f);
      if (selected)
        mix (c, (const float[]){ 0.2f, 0.9f, 1.0f }, 0.45f);
      if (edge)
        {
          if (d->overlay == SV_OVERLAY_BOUNDARIES)
            mix (c, d->boundary, d->boundary[3]);
          else
            mix (c, (const float[]){ 0.0f, 0.0f, 0.0f }, 0.6f);
        }
    }
  if (different)
    mix (c, (const float[]){ 1.0f, 0.15f, 0.1f }, 0.55f);
}

static guint32
pack (const float c[3])
{
  guint32 r = (guint32)lrintf (CLAMP (c[0], 0.0f, 1.0f) * 255.0f);
  guint32 g = (guint32)lrintf (CLAMP (c[1], 0.0f, 1.0f) * 255.0f);
  guint32 b = (guint32)lrintf (CLAMP (c[2], 0.0f, 1.0f) * 255.0f);
  return 0xff000000u | r << 16 | g << 8 | b;
}

void
sv_soft_render (cairo_surface_t *surface, const SvDisplay *d, const SvRenderFrame *f,
                const float *image, guint width, guint height, guint nc, const gint32 *labels,
                const guint8 *difference, const SvCentreMark *marks, gsize n_marks)
{
  const float clear[3] = { 0.12f, 0.12f, 0.13f };
  guint8 *data;
  int stride, W, H;
  float su, sv;
  LabelSlice ls = { labels, (int)width, (int)height, difference };
  cairo_t *cr;

  cairo_surface_flush (surface);
  data = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);
  W = cairo_image_surface_get_width (surface);
  H = cairo_image_surface_get_height (surface);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      ((guint32 *)(data + (gsize)y * stride))[x] = pack (clear);
  if (!image || width == 0 || f->x1 <= f->x0 || f->y1 <= f->y0)
    {
      cairo_surface_mark_dirty (surface);
      return;
    }
  su = (f->x1 - f->x0) / (float)width;
  sv = (f->y1 - f->y0) / (float)height;

  /* Pixel centres inside the slice's rectangle, as the rasteriser picks them. */
  for (int y = MAX (0, (int)ceilf (f->y0 - 0.5f)); y < MIN (H, (int)ceilf (f->y1 - 0.5f)); y++)
    {
      guint32 *row = (guint32 *)(data + (gsize)y * stride);
      float v = (y + 0.5f - f->y0) / sv;
      for (int x = MAX (0, (int)ceilf (f->x0 - 0.5f)); x < MIN (W, (int)ceilf (f->x1 - 0.5f)); x++)
        {
          float c[3];
          shade (d, f, image, nc, &ls, (x + 0.5f - f->x0) / su, v, 1.0f / su, 1.0f / sv, c);
          row[x] = pack (c);
        }
    }
  cairo_surface_mark_dirty (surface);

  /* Overlays in texel coordinates, as draw_shape places them. */
  cr = cairo_create (surface);
  cairo_translate (cr, f->x0, f->y0);
  cairo_scale (cr, su, sv);
  if (f->window_valid)
    {
      cairo_set_source_rgba (cr, 0.3, 0.9, 1.0, 0.9);
      cairo_rectangle (cr, f->window_u0, f->window_v0, f->window_u1 - f->window_u0,
                       f->window_v1 - f->window_v0);
      cairo_save (cr);
      cairo_identity_matrix (cr);
      cairo_set_line_width (cr, 1.0);
      cairo_stroke (cr);
      cairo_restore (cr);
    }
  if (f->region_valid)
    {
      cairo_set_source_rgba (cr, 1.0, 0.55, 0.1, 0.95);
      cairo_rectangle (cr, f->region_u0, f->region_v0, f->region_u1 - f->region_u0,
                       f->region_v1 - f->region_v0);
      cairo_save (cr);
      cairo_identity_matrix (cr);
      cairo_set_line_width (cr, 1.0);
      cairo_stroke (cr);
      cairo_restore (cr);
    }
  if (d->show_centres && n_marks)
    {
      float size = CLAMP (0.6f * MIN (su, sv), SV_CENTRE_MIN_PX, SV_CENTRE_MAX_PX);
      /* As draw_centre_marks: every rim, then the marks, nearest last. */
      for (guint pass = 0; pass < 2; pass++)
        for (gsize k = 0; k < n_marks; k++)
          {
            double a = sv_centre_mark_alpha (marks[k].strength);
            double s = sv_centre_mark_size (marks[k].strength, size) + (pass ? 0.0 : 2.0);
            if (pass)
              cairo_set_source_rgba (cr, 1.0, 0.2, 0.3, a);
            else
              cairo_set_source_rgba (cr, 0.0, 0.0, 0.0, 0.8 * a);
            cairo_rectangle (cr, marks[k].u - s / 2 / su, marks[k].v - s / 2 / sv, s / su, s / sv);
            cairo_fill (cr);
          }
    }
  if (f->crosshair)
    {
      cairo_set_source_rgba (cr, 0.2, 1.0, 0.4, 0.6);
      cairo_move_to (cr, 0, f->cross_v);
      cairo_line_to (cr, width, f->cross_v);
      cairo_move_to (cr, f->cross_u, 0);
      cairo_line_to (cr, f->cross_u, height);
      cairo_save (cr);
      cairo_identity_matrix (cr);
      cairo_set_line_width (cr, 1.0);
      cairo_stroke (cr);
      cairo_restore (cr);
    }
  cairo_destroy (cr);
}

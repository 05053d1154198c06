#version 330 core
// Intensity slice with window/level and gamma, then the label overlay:
// boundaries where a neighbour (u_thickness device pixels away) has another
// label, or filled hashed label colours, plus the label under the cursor
// and the selected one, then the voxels where two results differ. The
// colormap (grey, inverted, viridis) maps the windowed intensity; a
// composite adds each channel, windowed on its own, in its colour, as
// Fiji's composite does. sv-soft-renderer.c draws the same without GL.
in vec2 v_texel;
out vec4 frag_colour;

uniform sampler2D u_image;
uniform usampler2D u_labels;
uniform int u_channels;
uniform float u_low;
uniform float u_high;
uniform float u_gamma;
uniform int u_has_labels;
uniform int u_mode;            // 0 boundaries, 1 filled, 2 off
uniform vec4 u_boundary;       // rgb + opacity
uniform float u_fill_opacity;
uniform uint u_shuffle;
uniform int u_thickness;       // device pixels, 1..3
uniform vec2 u_texel_per_px;   // texels per device pixel along x and y
uniform int u_hover_valid;
uniform uint u_hover;
uniform int u_background_valid;
uniform uint u_background;
uniform int u_colormap;        // 0 grey, 1 inverted, 2 viridis
uniform int u_selected_valid;
uniform uint u_selected;
uniform int u_selected_only;   // dim and leave bare everything outside the selection
uniform usampler2D u_difference;
uniform int u_has_difference;  // 1: u_difference marks voxels to highlight
uniform int u_composite;          // 2 or 3: channels added in their colours; 0: grey or RGB
uniform vec2 u_channel_window[3]; // each channel's black and white point
uniform vec3 u_channel_colour[3]; // each channel's colour at its white point

// Viridis as a degree-6 polynomial fit (matplotlib's table within 0.3 %).
vec3 viridis (float t)
{
  const vec3 c0 = vec3 (0.2777273272234177, 0.005407344544966578, 0.3340998053353061);
  const vec3 c1 = vec3 (0.1050930431085774, 1.404613529898575, 1.384590162594685);
  const vec3 c2 = vec3 (-0.3308618287255563, 0.214847559468213, 0.09509516302823659);
  const vec3 c3 = vec3 (-4.634230498983486, -5.799100973351585, -19.33244095627987);
  const vec3 c4 = vec3 (6.228269936347081, 14.17993336680509, 56.69055260068105);
  const vec3 c5 = vec3 (4.776384997670288, -13.74514537774601, -65.35303263337234);
  const vec3 c6 = vec3 (-5.435455855934631, 4.645852612178535, 26.3124352495832);
  return c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * (c5 + t * c6)))));
}

uint hash_label (uint x)
{
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}

vec3 hsv_to_rgb (vec3 c)
{
  vec3 p = abs (fract (c.xxx + vec3 (1.0, 2.0 / 3.0, 1.0 / 3.0)) * 6.0 - 3.0);
  return c.z * mix (vec3 (1.0), clamp (p - 1.0, 0.0, 1.0), c.y);
}

vec3 label_colour (uint label)
{
  uint h = hash_label (label ^ u_shuffle);
  float hue = float (h & 0xffffu) / 65535.0;
  float sat = 0.55 + 0.4 * float ((h >> 16u) & 0xffu) / 255.0;
  float val = 0.75 + 0.25 * float (h >> 24u) / 255.0;
  return hsv_to_rgb (vec3 (hue, sat, val));
}

// One channel of a composite through its own window and the gamma.
float windowed (float x, vec2 window)
{
  float t = window.y > window.x ? clamp ((x - window.x) / (window.y - window.x), 0.0, 1.0)
                                : 0.5 + 0.5 * sign (x - window.x);
  return pow (t, 1.0 / u_gamma);
}

uint label_at (vec2 texel)
{
  ivec2 size = textureSize (u_labels, 0);
  ivec2 i = clamp (ivec2 (floor (texel)), ivec2 (0), size - 1);
  return texelFetch (u_labels, i, 0).r;
}

void main ()
{
  ivec2 size = textureSize (u_image, 0);
  vec3 v = texture (u_image, v_texel / vec2 (size)).rgb;
  if (u_channels == 1)
    v = v.rrr;
  // A zero range (black point = white point): the value itself is mid grey.
  if (u_high > u_low)
    v = clamp ((v - vec3 (u_low)) / (u_high - u_low), 0.0, 1.0);
  else
    v = vec3 (0.5) + 0.5 * sign (v - vec3 (u_low));
  v = pow (v, vec3 (1.0 / u_gamma));
  if (u_colormap == 1)
    v = vec3 (1.0) - v;
  else if (u_colormap == 2 && u_channels == 1)
    v = clamp (viridis (v.r), 0.0, 1.0);
  vec3 c = v;
  if (u_composite > 0)
    {
      vec4 raw = texture (u_image, v_texel / vec2 (size));
      c = vec3 (0.0);
      for (int k = 0; k < u_composite; k++)
        c += windowed (raw[k], u_channel_window[k]) * u_channel_colour[k];
      c = min (c, vec3 (1.0));
    }
  // NaN or ±inf in the file: magenta, whatever the window and colormap
  // (exponent bits all set; isnan may be folded away by a compiler).
  uvec3 bits = floatBitsToUint (texture (u_image, v_texel / vec2 (size)).rgb);
  if (u_channels == 1)
    bits = bits.rrr;
  if (any (equal (bits & uvec3 (0x7f800000u), uvec3 (0x7f800000u))))
    c = vec3 (1.0, 0.0, 1.0);

  if (u_has_labels != 0 && u_mode != 2)
    {
      uint l = label_at (v_texel);
      bool background = u_background_valid != 0 && l == u_background;
      bool edge = false;
      for (int k = 1; k <= u_thickness; k++)
        {
          vec2 d = float (k) * u_texel_per_px;
          if (label_at (v_texel + vec2 (d.x, 0.0)) != l
              || label_at (v_texel + vec2 (0.0, d.y)) != l)
            edge = true;
        }
      bool selected = u_selected_valid != 0 && l == u_selected;
      if (u_selected_valid != 0 && u_selected_only != 0 && !selected)
        {
          frag_colour = vec4 (c * 0.25, 1.0);
          return;
        }
      if (u_mode == 1 && !background)
        c = mix (c, label_colour (l), u_fill_opacity);
      if (u_hover_valid != 0 && l == u_hover && !background)
        c = mix (c, vec3 (1.0, 0.95, 0.3), 0.35);
      if (selected)
        c = mix (c, vec3 (0.2, 0.9, 1.0), 0.45);
      if (edge)
        c = mix (c, u_mode == 0 ? u_boundary.rgb : vec3 (0.0), u_mode == 0 ? u_boundary.a : 0.6);
    }
  // Where the labels shown and the ones compared with differ: red, over
  // whatever overlay (also none).
  if (u_has_difference != 0)
    {
      ivec2 ds = textureSize (u_difference, 0);
      if (texelFetch (u_difference, clamp (ivec2 (floor (v_texel)), ivec2 (0), ds - 1), 0).r != 0u)
        c = mix (c, vec3 (1.0, 0.15, 0.1), 0.55);
    }
  frag_colour = vec4 (c, 1.0);
}

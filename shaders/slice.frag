#version 330 core
// Intensity slice with window/level and gamma, then the label overlay:
// boundaries where a neighbour (u_thickness device pixels away) has another
// label, or filled hashed label colours, plus the label under the cursor.
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
  vec3 c = v;

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
      if (u_mode == 1 && !background)
        c = mix (c, label_colour (l), u_fill_opacity);
      if (u_hover_valid != 0 && l == u_hover && !background)
        c = mix (c, vec3 (1.0, 0.95, 0.3), 0.35);
      if (edge)
        c = mix (c, u_mode == 0 ? u_boundary.rgb : vec3 (0.0), u_mode == 0 ? u_boundary.a : 0.6);
    }
  frag_colour = vec4 (c, 1.0);
}

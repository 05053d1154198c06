#version 330 core
// The 3D view: rays through the volume's box, maximum intensity
// projection of the windowed intensity (gamma and colormap as the slices
// have them), the selected supervoxel tinted where a ray first meets it.
in vec2 v_ndc;
out vec4 frag_colour;

uniform sampler3D u_image;   // x, y, z texture coordinates
uniform usampler3D u_labels;
uniform mat4 u_inverse_view; // eye to box space
uniform float u_aspect;
uniform float u_tan_half_fov;
uniform vec3 u_half_extent; // half the box's size (longest axis 0.5)
uniform float u_low;
uniform float u_high;
uniform float u_gamma;
uniform int u_colormap;
uniform int u_selected_valid;
uniform uint u_selected;
uniform int u_steps;

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

void main ()
{
  vec3 origin = (u_inverse_view * vec4 (0.0, 0.0, 0.0, 1.0)).xyz;
  vec3 dir = normalize ((u_inverse_view
                         * vec4 (v_ndc.x * u_tan_half_fov * u_aspect, v_ndc.y * u_tan_half_fov,
                                 -1.0, 0.0)).xyz);
  // Slab test against the box [-e, e].
  vec3 inv = 1.0 / dir;
  vec3 t0 = (-u_half_extent - origin) * inv;
  vec3 t1 = (u_half_extent - origin) * inv;
  vec3 tmin = min (t0, t1), tmax = max (t0, t1);
  float near = max (max (tmin.x, tmin.y), max (tmin.z, 0.0));
  float far = min (min (tmax.x, tmax.y), tmax.z);
  vec3 background = vec3 (0.12, 0.12, 0.13);
  if (far <= near)
    {
      frag_colour = vec4 (background, 1.0);
      return;
    }

  float best = 0.0;
  bool hit = false;
  float dt = (far - near) / float (u_steps);
  for (int i = 0; i < u_steps; i++)
    {
      vec3 p = origin + dir * (near + (float (i) + 0.5) * dt);
      vec3 tc = p / (2.0 * u_half_extent) + 0.5;
      float v = texture (u_image, tc).r;
      v = u_high > u_low ? clamp ((v - u_low) / (u_high - u_low), 0.0, 1.0) : 0.5;
      best = max (best, v);
      if (u_selected_valid != 0 && !hit)
        {
          ivec3 size = textureSize (u_labels, 0);
          ivec3 idx = clamp (ivec3 (tc * vec3 (size)), ivec3 (0), size - 1);
          hit = texelFetch (u_labels, idx, 0).r == u_selected;
        }
    }
  float g = pow (best, 1.0 / u_gamma);
  vec3 c = vec3 (g);
  if (u_colormap == 1)
    c = vec3 (1.0) - c;
  else if (u_colormap == 2)
    c = clamp (viridis (g), 0.0, 1.0);
  if (hit)
    c = mix (c, vec3 (0.2, 0.9, 1.0), 0.6);
  frag_colour = vec4 (c, 1.0);
}

#version 330 core
// Points and lines drawn over the slice, given in texel coordinates.
layout (location = 0) in vec2 a_texel;
// Centre marks: size (times u_point_size) and opacity; (1, 1) for the rest.
layout (location = 1) in vec2 a_size_alpha;

uniform mat4 u_projection;  // texel coordinates to clip space
uniform float u_point_size;
uniform float u_point_rim;  // added to every point: the dark rim under a mark

out float v_alpha;

void main ()
{
  gl_PointSize = u_point_size * a_size_alpha.x + u_point_rim;
  v_alpha = a_size_alpha.y;
  gl_Position = u_projection * vec4 (a_texel, 0.0, 1.0);
}

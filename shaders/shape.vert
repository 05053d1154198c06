#version 330 core
// Points and lines drawn over the slice, given in texel coordinates.
layout (location = 0) in vec2 a_texel;

uniform mat4 u_projection;  // texel coordinates to clip space
uniform float u_point_size;

void main ()
{
  gl_PointSize = u_point_size;
  gl_Position = u_projection * vec4 (a_texel, 0.0, 1.0);
}
